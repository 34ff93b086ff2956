// The podtopo command line: one entry point, one file per command family.
//
// The contract is ../shared/DESIGN.md "The CLI contract": exit status 0 when all is well,
// 3 when at least one pod was rejected (admit), 1 for bad input (a message on stderr naming
// the file and the field; nothing written). Each command family registers itself on the
// CLI11 app through an Add*Commands function and reports its exit status through Context.
#ifndef PODTOPO_CLI_CLI_H_
#define PODTOPO_CLI_CLI_H_

#include <iosfwd>
#include <string>

#include "absl/status/status.h"

namespace CLI {
class App;
}

namespace podtopo::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;
inline constexpr int kExitRejected = 3;

// What a command needs from its surroundings.
struct Context {
  std::ostream* out;
  std::ostream* err;
  int exit_code = kExitOk;

  // Prints "podtopo: <message>" on stderr and sets the bad-input exit status.
  void Fail(const absl::Status& status);
  void Fail(const std::string& message);
};

// Runs the CLI with the given arguments; returns the process exit status.
int Run(int argc, char** argv, std::ostream& out, std::ostream& err);

// Runs the node agent as a program of its own, `podtopo-agent [FLAGS]`: the flags and the
// behaviour of `podtopo agent [FLAGS]` (docs/agent.md). The DaemonSet runs it: it links only
// what the agent uses and the system allocator, so it stays small (docs/agent.md, "Memory").
int RunAgentProgram(int argc, char** argv, std::ostream& out, std::ostream& err);

// Parses argv into `app` (whose callbacks run the command) and returns the exit status:
// help and --version print on ctx.out (0), a flag CLI11 refuses prints on ctx.err (1),
// otherwise ctx.exit_code as the command left it.
int ParseAndRun(CLI::App& app, int argc, char** argv, Context& ctx);

// Command families (one .cc each).
void AddTopologyCommands(CLI::App& app, Context& ctx);
void AddDebugCommands(CLI::App& app, Context& ctx);
void AddAdmitCommands(CLI::App& app, Context& ctx);
void AddDemoCommand(CLI::App& app, Context& ctx);
void AddExplainCommand(CLI::App& app, Context& ctx);
void AddLintCommand(CLI::App& app, Context& ctx);
void AddStateCommands(CLI::App& app, Context& ctx);
void AddServeCommand(CLI::App& app, Context& ctx);
void AddClientCommands(CLI::App& app, Context& ctx);
void AddCompareCommand(CLI::App& app, Context& ctx);
void AddAgentCommand(CLI::App& app, Context& ctx);
void AddNriCommand(CLI::App& app, Context& ctx);
void AddVerifyCommand(CLI::App& app, Context& ctx);
void AddProbeCommand(CLI::App& app, Context& ctx);
void AddExtenderCommand(CLI::App& app, Context& ctx);

}  // namespace podtopo::cli

#endif  // PODTOPO_CLI_CLI_H_
