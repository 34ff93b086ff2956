// Helpers shared by podtopo's unit tests: where ../shared and the repository are, loading
// the kubelet's vector tables, and turning case names into GoogleTest parameter names.
#ifndef PODTOPO_TESTING_TESTING_H_
#define PODTOPO_TESTING_TESTING_H_

#include <functional>
#include <string>

#include "nlohmann/json.hpp"

namespace podtopo::testing {

// Absolute path of ../shared (the kubelet vectors and hwloc fixtures).
std::string SharedDir();
// Absolute path of the repository root.
std::string SourceDir();
// A fresh empty directory under the system temp dir, removed by the caller (or left for
// inspection on failure).
std::string MakeTempDir(const std::string& prefix);
// Parses ../shared/vectors/<name>; aborts the test binary with a message when missing.
nlohmann::json LoadVectors(const std::string& name);
// Maps an arbitrary case name onto [A-Za-z0-9_] so GoogleTest accepts it, keeping it
// readable ("Requested less than already allocated" -> "Requested_less_than_already_allocated").
// `index` is appended to keep names unique.
std::string TestName(const std::string& name, size_t index);

// What a command printed and how it ended.
struct CommandResult {
  int exit_code = -1;  // -1 when it did not exit normally (signal)
  std::string out;
  std::string err;
};
// Runs `command` through /bin/sh with `stdin_text` on its standard input and captures its
// standard output and error (tests that drive the built podtopo binary).
CommandResult RunCommand(const std::string& command, const std::string& stdin_text = "");
// The bytes of the file at `path`; "" when it cannot be read.
std::string ReadFileOrEmpty(const std::string& path);
// Runs `fn` with `stdin_text` on this process's standard input (file descriptor 0, read from a
// temporary file), then gives the original standard input back. False, without running `fn`,
// when standard input could not be replaced.
bool WithStdin(const std::string& stdin_text, const std::function<void()>& fn);

}  // namespace podtopo::testing

#endif  // PODTOPO_TESTING_TESTING_H_
