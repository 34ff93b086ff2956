#include "cli/cli.h"

#include <ostream>

#include "CLI/CLI.hpp"

namespace podtopo::cli {

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
  return ParseAndRun(app, argc, argv, ctx);
}

}  // namespace podtopo::cli
