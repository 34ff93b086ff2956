#include "cli/node_flags.h"

#include <map>
#include <ostream>

#include "CLI/CLI.hpp"
#include "api/pod_gates.h"
#include "api/pod_yaml.h"
#include "config/kubelet_config.h"
#include "topology/node_source.h"
#include "render/json_yaml.h"
#include "util/format.h"

namespace podtopo::cli {

void NodeFlags::Add(CLI::App* cmd, bool with_output) {
  cmd->add_option("--node", node, "preset:NAME | FILE.json | FILE.xml | sysfs:DIR | local")
      ->capture_default_str();
  cmd->add_option("--config", config,
                  "KubeletConfiguration file (default: the seed configuration, corrected)");
  cmd->add_option("--state-dir", state_dir,
                  "directory with cpu_manager_state, memory_manager_state and podtopo's record");
  if (with_output) {
    cmd->add_option("-o,--output", output, "table | wide | json | yaml")
        ->check(CLI::IsMember({"table", "wide", "json", "yaml"}))
        ->capture_default_str();
  }
}

std::optional<config::KubeletConfig> LoadConfigFlag(const std::string& path, Context& ctx) {
  if (path.empty()) return config::SeedDefault();
  auto parsed = config::LoadKubeletConfig(path);
  if (!parsed.ok()) {
    ctx.Fail(parsed.status());
    return std::nullopt;
  }
  bool errors = false;
  for (const auto& f : parsed->findings) {
    *ctx.err << "podtopo: " << f.ToString() << "\n";
    errors |= f.severity == config::Finding::Severity::kError;
  }
  if (errors) {
    ctx.exit_code = kExitBadInput;
    return std::nullopt;
  }
  return std::move(parsed->config);
}

std::unique_ptr<Node> NodeFlags::CreateNode(Context& ctx) const {
  auto topology = LoadNode(node);
  if (!topology.ok()) {
    ctx.Fail(topology.status());
    return nullptr;
  }
  std::optional<config::KubeletConfig> cfg = LoadConfigFlag(config, ctx);
  if (!cfg.has_value()) return nullptr;
  auto created = Node::Create(std::move(*topology), std::move(*cfg), {state_dir});
  if (!created.ok()) {
    ctx.Fail(created.status());
    return nullptr;
  }
  return std::move(*created);
}

void AddStrictFlag(CLI::App* cmd, bool& strict) {
  cmd->add_flag("--strict", strict,
                "objects of kinds podtopo does not read (Service, ConfigMap, ...) are errors "
                "instead of being skipped");
}

bool LoadAllPods(const std::vector<std::string>& files, const config::KubeletConfig& cfg,
                 bool strict, std::vector<Pod>* pods, Context& ctx,
                 const std::vector<std::string>& node_names) {
  std::map<std::string, int> skipped;
  PodLoadOptions options{PodGatesFromConfig(cfg), node_names, strict, &skipped};
  for (const auto& f : files) {
    auto loaded = LoadPods(f, options);
    if (!loaded.ok()) {
      ctx.Fail(loaded.status());
      return false;
    }
    for (auto& p : *loaded) pods->push_back(std::move(p));
  }
  for (const auto& [kind, count] : skipped) {
    *ctx.err << fmt::format(
        "podtopo: skipped {} {} object{} (podtopo reads pods and workload controllers; "
        "--strict makes this an error)\n",
        count, kind, count == 1 ? "" : "s");
  }
  return true;
}

void PrintAllocations(const std::vector<PodAllocation>& pods, const Node& node,
                      const std::string& format, Context& ctx) {
  NodePools pools{node.DefaultCpuSet(), node.ReservedCpus()};
  if (format == "json") {
    *ctx.out << RenderAdmissionJson(pods, pools);
  } else if (format == "yaml") {
    *ctx.out << JsonToYaml(AdmissionJson(pods, pools));
  } else {
    *ctx.out << RenderAdmissionTable(pods, pools, format == "wide");
  }
}

}  // namespace podtopo::cli
