// Tests that run the CLI in process: cli::Run with captured output, as the binary would run
// with these arguments (no "podtopo" argument needed).
#ifndef PODTOPO_CLI_CLI_TESTING_H_
#define PODTOPO_CLI_CLI_TESTING_H_

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace podtopo::cli {

// What a command printed and its exit status.
struct CliResult {
  int code = 0;
  std::string out;
  std::string err;
};

inline CliResult RunCli(std::vector<std::string> args) {
  args.insert(args.begin(), "podtopo");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  CliResult r;
  r.code = Run(static_cast<int>(argv.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace podtopo::cli

#endif  // PODTOPO_CLI_CLI_TESTING_H_
