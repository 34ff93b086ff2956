#include "cli/cli.h"

#include <ostream>

#include "CLI/CLI.hpp"

namespace podtopo::cli {

void Context::Fail(const absl::Status& status) { Fail(std::string(status.message())); }

void Context::Fail(const std::string& message) {
  *err << "podtopo: " << message << "\n";
  exit_code = kExitBadInput;
}

int Run(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app{
      "podtopo: the kubelet's Topology, CPU and Memory Managers (v1.37, KEP-5526 pod-level "
      "resource managers) — predict, explain, draw and enforce what a kubelet decides."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "podtopo 0.1.0 (kubelet v1.37 semantics)");
  Context ctx{&out, &err};
  AddTopologyCommands(app, ctx);
  AddDebugCommands(app, ctx);
  AddAdmitCommands(app, ctx);
  AddDemoCommand(app, ctx);
  AddExplainCommand(app, ctx);
  AddLintCommand(app, ctx);
  AddStateCommands(app, ctx);
  AddServeCommand(app, ctx);
  AddClientCommands(app, ctx);
  AddCompareCommand(app, ctx);
  AddAgentCommand(app, ctx);
  AddNriCommand(app, ctx);
  AddVerifyCommand(app, ctx);
  AddProbeCommand(app, ctx);
  AddExtenderCommand(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp& e) {
    out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    // Subcommand help: CLI11 raises CallForHelp from the subcommand too.
    err << "podtopo: " << e.what() << "\n";
    return kExitBadInput;
  }
  return ctx.exit_code;
}

}  // namespace podtopo::cli
