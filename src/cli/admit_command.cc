// podtopo admit / remove / show (see ../shared/DESIGN.md "The CLI contract").
#include <ostream>

#include "CLI/CLI.hpp"
#include "cli/cli.h"
#include "cli/node_flags.h"
#include "util/format.h"

namespace podtopo::cli {

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
  admit->flags.Add(ac);
  ac->callback([admit, &ctx] {
    std::vector<Pod> pods;
    if (!LoadAllPods(admit->files, &pods, ctx)) return;
    auto node = admit->flags.CreateNode(ctx);
    if (node == nullptr) return;
    std::vector<PodAllocation> results;
    bool rejected = false;
    for (const auto& pod : pods) {
      auto r = node->Admit(pod);
      if (!r.ok()) return ctx.Fail(r.status());
      rejected |= !r->admitted;
      results.push_back(std::move(*r));
    }
    PrintAllocations(results, *node, admit->flags.output, ctx);
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
    auto node = remove->flags.CreateNode(ctx);
    if (node == nullptr) return;
    std::vector<PodAllocation> removed;
    for (const auto& key : remove->names) {
      auto slash = key.find('/');
      std::string ns = slash == std::string::npos ? "default" : key.substr(0, slash);
      std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
      auto r = node->Remove(ns, name);
      if (!r.ok()) return ctx.Fail(r.status());
      removed.push_back(std::move(*r));
    }
    PrintAllocations(node->AdmittedPods(), *node, remove->flags.output, ctx);
  });

  auto show = std::make_shared<NodeFlags>();
  CLI::App* sc = app.add_subcommand("show", "Show the admitted pods and the node's CPU pools");
  show->Add(sc);
  sc->callback([show, &ctx] {
    auto node = show->CreateNode(ctx);
    if (node == nullptr) return;
    PrintAllocations(node->AdmittedPods(), *node, show->output, ctx);
  });
}

}  // namespace podtopo::cli
