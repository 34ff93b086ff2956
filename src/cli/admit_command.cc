// podtopo admit / remove / show (see ../shared/DESIGN.md "The CLI contract").
#include <ostream>

#include "CLI/CLI.hpp"
#include "cli/cli.h"
#include "cli/node_flags.h"
#include "render/node_picture.h"
#include "util/format.h"

namespace podtopo::cli {
namespace {

// -o for admit and show: NodeFlags' formats plus the pictures (svg, html).
void AddOutputOption(CLI::App* cmd, std::string& output) {
  cmd->add_option("-o,--output", output, "table | wide | json | yaml | svg | html")
      ->check(CLI::IsMember({"table", "wide", "json", "yaml", "svg", "html"}))
      ->capture_default_str();
}

// PrintAllocations, or the picture of the node with `pods` for svg and html.
void Print(const std::vector<PodAllocation>& pods, const Node& node, const std::string& format,
           Context& ctx) {
  if (format == "svg") {
    *ctx.out << RenderSvg(BuildNodePicture(node, pods));
  } else if (format == "html") {
    *ctx.out << RenderHtml(BuildNodePicture(node, pods));
  } else {
    PrintAllocations(pods, node, format, ctx);
  }
}

}  // namespace

void AddAdmitCommands(CLI::App& app, Context& ctx) {
  struct AdmitOpts {
    NodeFlags flags;
    std::vector<std::string> files;
  };
  auto admit = std::make_shared<AdmitOpts>();
  CLI::App* ac = app.add_subcommand(
      "admit", "Admit pods in order, as a kubelet receiving them (exit 3 if any is rejected)");
  ac->add_option("pods", admit->files, "pod manifests (several documents or a List; - = stdin)")
      ->required();
  admit->flags.Add(ac, /*with_output=*/false);
  AddStrictFlag(ac, admit->flags.strict);
  AddOutputOption(ac, admit->flags.output);
  ac->callback([admit, &ctx] {
    auto node = admit->flags.CreateNode(StateDirUse::kCreate, ctx);
    if (node == nullptr) return;
    // Only -o wide shows the admissions' traces (the explanation under the table).
    node->set_tracing(admit->flags.output == "wide");
    std::vector<Pod> pods;
    if (!LoadAllPods(admit->files, node->config(), admit->flags.strict, &pods, ctx)) return;
    std::vector<PodAllocation> results;
    bool rejected = false;
    for (const auto& pod : pods) {
      auto r = AdmitPod(*node, pod, ctx);
      if (!r.ok()) return ctx.Fail(r.status());
      rejected |= !r->admitted;
      results.push_back(std::move(*r));
    }
    if (admit->flags.output == "svg" || admit->flags.output == "html") {
      // The picture is of the node: every admitted pod (also those a --state-dir already
      // held), then the rejected ones, which appear in the legend only.
      std::vector<PodAllocation> drawn = node->AdmittedPods();
      for (const auto& r : results) {
        if (!r.admitted) drawn.push_back(r);
      }
      Print(drawn, *node, admit->flags.output, ctx);
    } else {
      Print(results, *node, admit->flags.output, ctx);
    }
    if (rejected) ctx.exit_code = kExitRejected;
  });

  struct RemoveOpts {
    NodeFlags flags;
    std::vector<std::string> names;
  };
  auto remove = std::make_shared<RemoveOpts>();
  CLI::App* rc = app.add_subcommand("remove", "Remove admitted pods and release their resources");
  rc->add_option("pods", remove->names, "NAMESPACE/NAME of admitted pods")->required();
  remove->flags.Add(rc);
  rc->callback([remove, &ctx] {
    if (remove->flags.state_dir.empty()) {
      return ctx.Fail("remove: --state-dir is required (without it no pod is admitted)");
    }
    auto node = remove->flags.CreateNode(StateDirUse::kExisting, ctx);
    if (node == nullptr) return;
    // All or nothing: Node::Remove checks every name before it releases any.
    std::vector<Node::PodName> names;
    for (const auto& key : remove->names) {
      auto slash = key.find('/');
      names.push_back({slash == std::string::npos ? "default" : key.substr(0, slash),
                       slash == std::string::npos ? key : key.substr(slash + 1)});
    }
    if (auto r = node->Remove(names); !r.ok()) return ctx.Fail(r.status());
    PrintAllocations(node->AdmittedPods(), *node, remove->flags.output, ctx);
  });

  auto show = std::make_shared<NodeFlags>();
  CLI::App* sc = app.add_subcommand("show", "Show the admitted pods and the node's CPU pools");
  show->Add(sc, /*with_output=*/false);
  AddOutputOption(sc, show->output);
  sc->callback([show, &ctx] {
    auto node = show->CreateNode(StateDirUse::kExisting, ctx, /*read_only=*/true);
    if (node == nullptr) return;
    Print(node->AdmittedPods(), *node, show->output, ctx);
  });
}

}  // namespace podtopo::cli
