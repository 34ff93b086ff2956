// podtopo compare (see ../shared/DESIGN.md "Contract additions"): the same pods on the same
// nodes under two or more kubelet configurations, through compare/compare.h.
#include <algorithm>
#include <iterator>
#include <ostream>
#include <sstream>
#include <utility>

#include "CLI/CLI.hpp"
#include "api/pod_gates.h"
#include "cli/cli.h"
#include "cli/node_flags.h"
#include "compare/compare.h"
#include "compare/fleet.h"
#include "render/compare_render.h"

namespace podtopo::cli {

void AddCompareCommand(CLI::App& app, Context& ctx) {
  struct CompareOpts {
    std::vector<std::string> files;
    std::vector<std::string> nodes;
    std::vector<std::string> configs;
    std::vector<std::string> kubelet_versions;
    std::string place;
    bool capacity = false;
    int threads = 0;
    bool strict = false;
    std::string output = "table";
  };
  auto o = std::make_shared<CompareOpts>();
  CLI::App* cc = app.add_subcommand(
      "compare",
      "Run the same pods on the same nodes under two or more kubelet configurations and say "
      "what changes");
  cc->add_option("pods", o->files, "pod manifests (several documents or a List; - = stdin)")
      ->required();
  cc->add_option("--node", o->nodes,
                 "[NAME=]SPEC, [NAME=]SPEC*COUNT or a directory of node files; repeatable "
                 "(default: preset:demo)");
  cc->add_option("--config", o->configs, "KubeletConfiguration file; two or more")->required();
  cc->add_option("--kubelet-version", o->kubelet_versions,
                 fmt::format("the kubelet version of each --config, in order (once: every "
                             "configuration's): {} (default: {}, the newest released). The same "
                             "file twice with two versions compares an upgrade",
                             kubelet::KnownKubeletVersions(),
                             kubelet::DefaultKubeletVersion().name));
  cc->add_option("--place", o->place,
                 "first-fit: pods without spec.nodeName go to the first node that admits them "
                 "(needed with several nodes)")
      ->check(CLI::IsMember({"first-fit"}));
  cc->add_flag("--capacity", o->capacity,
               "also count how many replicas of each workload fit on an empty node of each "
               "shape, under each configuration");
  cc->add_option("--threads", o->threads, "threads for the nodes (default: one per CPU)")
      ->check(CLI::Range(0, 1024));
  cc->add_option("-o,--output", o->output, "table | json | html | svg")
      ->check(CLI::IsMember({"table", "json", "html", "svg"}))
      ->capture_default_str();
  AddStrictFlag(cc, o->strict);
  cc->callback([o, &ctx] {
    if (o->configs.size() < 2) {
      return ctx.Fail("compare: give --config at least twice (the configurations to compare)");
    }
    auto fleet = compare::LoadFleet(o->nodes.empty() ? std::vector<std::string>{"preset:demo"}
                                                     : o->nodes);
    if (!fleet.ok()) return ctx.Fail(fleet.status());
    compare::CompareRequest req;
    req.fleet = std::move(*fleet);
    req.placement =
        o->place == "first-fit" ? compare::Placement::kFirstFit : compare::Placement::kByNodeName;
    req.threads = o->threads;
    std::vector<std::string> node_names;
    for (const auto& n : req.fleet) node_names.push_back(n.name);
    // The pods are defaulted with each configuration's pod gates (api/pod_gates.h); each file
    // is parsed once, and configurations with the same gates share one list of pods.
    const std::vector<std::string>& versions = o->kubelet_versions;
    if (versions.size() > 1 && versions.size() != o->configs.size()) {
      return ctx.Fail(fmt::format(
          "--kubelet-version: given {} times for {} --config files: give it once (for every "
          "configuration) or once per --config, in the same order",
          versions.size(), o->configs.size()));
    }
    std::vector<config::KubeletConfig> configs;
    for (size_t i = 0; i < o->configs.size(); ++i) {
      const std::string none;
      const std::string& version =
          versions.empty() ? none : versions.size() == 1 ? versions[0] : versions[i];
      std::optional<config::KubeletConfig> cfg = LoadConfigFlag(o->configs[i], &version, ctx);
      if (!cfg.has_value()) return;
      configs.push_back(std::move(*cfg));
    }
    auto pods = LoadPodsUnderConfigs(o->files, configs, o->strict, ctx, node_names);
    if (!pods.has_value()) return;
    for (size_t i = 0; i < configs.size(); ++i) {
      req.configs.push_back({o->configs[i], std::move(configs[i]), (*pods)[i]});
    }
    auto result = compare::Compare(req);
    if (!result.ok()) return ctx.Fail(result.status());
    std::optional<std::vector<compare::CapacityRow>> capacity;
    if (o->capacity) {
      auto rows = compare::Capacity(req);
      if (!rows.ok()) return ctx.Fail(rows.status());
      capacity = std::move(*rows);
    }
    const auto* cap = capacity.has_value() ? &*capacity : nullptr;
    if (o->output == "json") {
      *ctx.out << RenderCompareJson(*result, cap);
    } else if (o->output == "html") {
      *ctx.out << RenderCompareHtml(*result, BuildCompareChart(*result), cap);
    } else if (o->output == "svg") {
      *ctx.out << RenderCompareSvg(BuildCompareChart(*result));
    } else {
      *ctx.out << RenderCompareTable(*result, cap);
    }
  });
}

}  // namespace podtopo::cli
