// podtopo debug take-cpus ... and podtopo debug merge-hints ... (see ../shared/DESIGN.md).
#include <iostream>
#include <iterator>
#include <ostream>

#include "CLI/CLI.hpp"
#include "cli/cli.h"
#include "cpumanager/static_policy.h"
#include "topology/node_source.h"
#include "topologymanager/merge_json.h"
#include "util/file.h"
#include "util/format.h"

namespace podtopo::cli {
namespace {

// NAME=VALUE pairs into a map; an entry without '=' is an error naming it.
bool ParsePairs(const std::vector<std::string>& pairs, const char* flag,
                std::map<std::string, std::string>* out, Context& ctx) {
  for (const auto& p : pairs) {
    auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      ctx.Fail(fmt::format("{} {}: expected NAME=VALUE", flag, p));
      return false;
    }
    (*out)[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return true;
}

}  // namespace

void AddDebugCommands(CLI::App& app, Context& ctx) {
  CLI::App* debug = app.add_subcommand("debug", "Ask one manager's algorithm directly");
  debug->require_subcommand(1);

  struct TakeOpts {
    std::string node = "preset:demo";
    std::string available;
    int count = 0;
    std::vector<std::string> options;
    std::string numa_affinity;
    bool numa_affinity_set = false;
  };
  auto take = std::make_shared<TakeOpts>();
  CLI::App* tc = debug->add_subcommand(
      "take-cpus", "Print the CPUs the static policy's takeByTopology takes from a free set");
  tc->add_option("--node", take->node, "node spec")->capture_default_str();
  tc->add_option("--available", take->available, "free CPUs, Linux list format (0-3,8)")
      ->required();
  tc->add_option("--count", take->count, "number of CPUs to take")->required();
  tc->add_option("--cpu-option", take->options,
                 "cpuManagerPolicyOptions entry NAME=VALUE (repeatable)");
  tc->add_option("--numa-affinity", take->numa_affinity,
                 "NUMA ids of the container's hint (0,1): allocate as allocateCPUs does");
  tc->callback([take, &ctx] {
    auto node = LoadNode(take->node);
    if (!node.ok()) return ctx.Fail(node.status());
    auto available = CpuSet::Parse(take->available);
    if (!available.ok()) {
      return ctx.Fail(fmt::format("--available {}: {}", take->available,
                                  available.status().message()));
    }
    if (take->count < 0) return ctx.Fail(fmt::format("--count {}: must be >= 0", take->count));
    std::map<std::string, std::string> options;
    if (!ParsePairs(take->options, "--cpu-option", &options, ctx)) return;
    std::optional<std::vector<int>> affinity;
    if (!take->numa_affinity.empty()) {
      auto ids = CpuSet::Parse(take->numa_affinity);
      if (!ids.ok()) {
        return ctx.Fail(fmt::format("--numa-affinity {}: {}", take->numa_affinity,
                                    ids.status().message()));
      }
      affinity = ids->List();
    }
    auto cpus = cpumanager::DebugTakeCpus(node->cpus, *available, take->count, options, affinity);
    if (!cpus.ok()) {
      *ctx.err << cpus.status().message() << "\n";
      ctx.exit_code = kExitBadInput;
      return;
    }
    *ctx.out << cpus->String() << "\n";
  });

  struct MergeOpts {
    std::string policy;
    std::vector<std::string> options;
    std::string input = "-";
  };
  auto merge = std::make_shared<MergeOpts>();
  CLI::App* mc = debug->add_subcommand(
      "merge-hints", "Merge hint providers' hints as the Topology Manager does (JSON on stdin)");
  mc->add_option("--policy", merge->policy,
                 "none | best-effort | restricted | single-numa-node (overrides stdin)");
  mc->add_option("--option", merge->options,
                 "topologyManagerPolicyOptions entry NAME=VALUE (repeatable, overrides stdin)");
  mc->add_option("-f,--file", merge->input, "read the request from FILE instead of stdin");
  mc->callback([merge, &ctx] {
    topologymanager::MergeOverrides overrides;
    if (!merge->policy.empty()) overrides.policy = merge->policy;
    if (!ParsePairs(merge->options, "--option", &overrides.options, ctx)) return;
    auto text = ReadFile(merge->input);
    if (!text.ok()) return ctx.Fail(text.status());
    auto out = topologymanager::MergeHintsJson(*text, overrides);
    if (!out.ok()) return ctx.Fail(out.status());
    *ctx.out << *out << "\n";
  });
}

}  // namespace podtopo::cli
