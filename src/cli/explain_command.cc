// podtopo explain POD.yaml... [--node SPEC] [--config FILE] [--state-dir DIR] [-o text|json]
//
// Explains what `podtopo admit` WOULD do with the pods, in order, on the node (and the state
// dir's pods): QoS class, each container's CPU pool and why, the hints, the merged hint, and for
// a rejection the NUMA masks tried, the rule that decided and the smallest change that fits.
// The state dir is read, never written. Exit status: 0, 3 when a pod would be rejected, 1 on
// bad input.
#include <ostream>

#include "CLI/CLI.hpp"
#include "cli/cli.h"
#include "cli/node_flags.h"
#include "explain/explain.h"

namespace podtopo::cli {

void AddExplainCommand(CLI::App& app, Context& ctx) {
  struct ExplainOpts {
    NodeFlags flags;
    std::vector<std::string> files;
    std::string output = "text";
  };
  auto opts = std::make_shared<ExplainOpts>();
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "Explain what admit would do with the pods (in order) and why; never writes the state dir "
      "(exit 3 if any would be rejected)");
  cmd->add_option("pods", opts->files, "pod manifests (several documents or a List; - = stdin)")
      ->required();
  opts->flags.Add(cmd, /*with_output=*/false);
  AddStrictFlag(cmd, opts->flags.strict);
  cmd->add_option("-o,--output", opts->output, "text | json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([opts, &ctx] {
    // CreateNode loads and validates the node, the configuration and the state dir (it reads,
    // it does not write); explain then runs on read-only copies of it.
    auto node = opts->flags.CreateNode(StateDirUse::kExisting, ctx, /*read_only=*/true);
    if (node == nullptr) return;
    std::vector<Pod> pods;
    if (!LoadAllPods(opts->files, node->config(), opts->flags.strict, &pods, ctx)) return;
    explain::Scenario scenario{node->topology(), node->config(), opts->flags.state_dir};
    node.reset();
    auto explained = explain::ExplainPods(scenario, pods);
    if (!explained.ok()) return ctx.Fail(explained.status());
    bool rejected = false;
    for (const auto& e : *explained) rejected |= !e.admitted;
    if (opts->output == "json") {
      *ctx.out << explain::RenderJson(*explained);
    } else {
      for (size_t i = 0; i < explained->size(); ++i) {
        if (i) *ctx.out << "\n";
        *ctx.out << explain::RenderText((*explained)[i]);
      }
    }
    if (rejected) ctx.exit_code = kExitRejected;
  });
}

}  // namespace podtopo::cli
