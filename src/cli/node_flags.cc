#include "cli/node_flags.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <thread>
#include <unordered_map>

#include "CLI/CLI.hpp"
#include "api/pod_gates.h"
#include "api/manifest_tree.h"
#include "api/pod_yaml.h"
#include "config/kubelet_config.h"
#include "topology/node_source.h"
#include "render/json_yaml.h"
#include "util/file.h"
#include "util/format.h"

namespace podtopo::cli {

void NodeFlags::Add(CLI::App* cmd, bool with_output) {
  cmd->add_option("--node", node, "preset:NAME | FILE.json | FILE.xml | sysfs:DIR | local")
      ->capture_default_str();
  cmd->add_option("--config", config,
                  "KubeletConfiguration file (default: the seed configuration, corrected)");
  cmd->add_option("--state-dir", state_dir,
                  "directory with cpu_manager_state, memory_manager_state and podtopo's record");
  AddKubeletVersionFlag(cmd, kubelet_version);
  if (with_output) {
    cmd->add_option("-o,--output", output, "table | wide | json | yaml")
        ->check(CLI::IsMember({"table", "wide", "json", "yaml"}))
        ->capture_default_str();
  }
}

void AddKubeletVersionFlag(CLI::App* cmd, std::string& version) {
  cmd->add_option("--kubelet-version", version,
                  fmt::format("the kubelet version to predict: {} (default: {}, the newest "
                              "released)",
                              kubelet::KnownKubeletVersions(), kubelet::DefaultKubeletVersion().name));
}

absl::StatusOr<std::string> ResolveKubeletVersion(const std::string& flag_value) {
  if (flag_value.empty()) return std::string(kubelet::DefaultKubeletVersion().name);
  absl::StatusOr<const kubelet::KubeletVersion*> v = kubelet::ParseKubeletVersion(flag_value);
  if (!v.ok()) {
    return absl::InvalidArgumentError(fmt::format("--kubelet-version: {}", v.status().message()));
  }
  return std::string((*v)->name);
}

std::optional<config::KubeletConfig> LoadConfigFlag(const std::string& path,
                                                    const std::string* kubelet_version,
                                                    Context& ctx) {
  std::string version;
  if (kubelet_version != nullptr) {
    absl::StatusOr<std::string> v = ResolveKubeletVersion(*kubelet_version);
    if (!v.ok()) {
      ctx.Fail(v.status());
      return std::nullopt;
    }
    version = std::move(*v);
  }
  if (path.empty()) {
    config::KubeletConfig seed = config::SeedDefault();
    seed.kubelet_version = version;
    return seed;
  }
  auto parsed = config::LoadKubeletConfig(path);
  if (!parsed.ok()) {
    ctx.Fail(parsed.status());
    return std::nullopt;
  }
  parsed->config.kubelet_version = version;
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

bool PrepareStateDir(const std::string& flag, const std::string& dir, StateDirUse use,
                     Context& ctx) {
  if (dir.empty()) return true;
  std::error_code ec;
  const bool exists = std::filesystem::exists(dir, ec);
  if (!exists && !ec && use == StateDirUse::kCreate) {
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      ctx.Fail(fmt::format("{}: cannot create state dir {}: {}", flag, dir, ec.message()));
      return false;
    }
  } else if (!exists && !ec) {
    ctx.Fail(fmt::format("{}: state dir {} does not exist", flag, dir));
    return false;
  }
  if (ec) {
    ctx.Fail(fmt::format("{}: state dir {}: {}", flag, dir, ec.message()));
    return false;
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    ctx.Fail(fmt::format("{}: state dir {} is not a directory", flag, dir));
    return false;
  }
  return true;
}

std::unique_ptr<Node> NodeFlags::CreateNode(StateDirUse use, Context& ctx,
                                            bool read_only) const {
  if (!PrepareStateDir("--state-dir", state_dir, use, ctx)) return nullptr;
  auto topology = LoadNode(node);
  if (!topology.ok()) {
    ctx.Fail(topology.status());
    return nullptr;
  }
  std::optional<config::KubeletConfig> cfg = LoadConfigFlag(config, &kubelet_version, ctx);
  if (!cfg.has_value()) return nullptr;
  Node::Options options;
  options.state_dir = state_dir;
  options.read_only = read_only;
  auto created = Node::Create(std::move(*topology), std::move(*cfg), options);
  if (!created.ok()) {
    ctx.Fail(created.status());
    return nullptr;
  }
  return std::move(*created);
}

void AddStrictFlag(CLI::App* cmd, bool& strict) {
  cmd->add_flag("--strict", strict,
                "objects of kinds podtopo does not read (Service, ConfigMap, ...) are errors "
                "instead of being skipped, and fields that are no field of their object "
                "(resource: for resources:) errors instead of warnings");
}

namespace {

bool SameGates(const PodGates& a, const PodGates& b) {
  return a.pod_level_resources == b.pod_level_resources && a.fix_defaulting == b.fix_defaulting &&
         a.fix_kubelet_qos_class == b.fix_kubelet_qos_class;
}

// Two different pods with one namespace/name: a node holds one pod per namespace/name, so
// the second would silently replace the first (LoadAllPods' contract).
absl::Status CheckOnePodPerName(const std::vector<Pod>& pods) {
  std::unordered_map<std::string, const Pod*> first;
  for (const Pod& p : pods) {
    auto [it, inserted] = first.emplace(p.Key(), &p);
    if (inserted || SamePodSpec(*it->second, p)) continue;
    return absl::InvalidArgumentError(fmt::format(
        "pod {} is given twice with different specs, in {} and in {}: a node holds one pod per "
        "namespace/name (rename one, or remove one from the input)",
        p.Key(), it->second->source, p.source));
  }
  return absl::OkStatus();
}

// Every file read and parsed once, its pods read under each set of gates (result[g]).
// Unknown fields go to `unknown_fields` when set, else are printed as warnings.
std::optional<std::vector<std::vector<Pod>>> LoadUnderGateSets(
    const std::vector<std::string>& files, const std::vector<PodGates>& gate_sets, bool strict,
    Context& ctx, const std::vector<std::string>& node_names,
    std::vector<UnknownField>* unknown_fields) {
  std::vector<std::vector<Pod>> pods(gate_sets.size());
  // Counted under the first set (kinds, owners and fields do not depend on gates).
  std::map<std::string, int> skipped, not_expanded;
  std::vector<UnknownField> unknown;
  for (const auto& f : files) {
    const std::string source = f == "-" ? "<stdin>" : f;
    absl::StatusOr<ManifestStream> stream = [&]() -> absl::StatusOr<ManifestStream> {
      absl::StatusOr<std::string> text = ReadFile(f);
      if (!text.ok()) return text.status();
      return ParseManifestText(*text, source);
    }();
    if (!stream.ok()) {
      ctx.Fail(stream.status());
      return std::nullopt;
    }
    // One thread per further set of gates: each reads the same tree, read-only.
    std::vector<absl::StatusOr<std::vector<Pod>>> read(gate_sets.size(), std::vector<Pod>());
    auto read_set = [&](size_t g) {
      PodLoadOptions options{.gates = gate_sets[g],
                             .node_names = node_names,
                             .strict = strict,
                             .skipped_kinds = g == 0 ? &skipped : nullptr,
                             .not_expanded = g == 0 ? &not_expanded : nullptr,
                             .unknown_fields = g == 0 ? &unknown : nullptr};
      read[g] = PodsFromManifest(*stream, source, options);
    };
    std::vector<std::thread> threads;
    for (size_t g = 1; g < gate_sets.size(); ++g) threads.emplace_back(read_set, g);
    read_set(0);
    for (auto& t : threads) t.join();
    FreeManifestStream(std::move(*stream));
    for (size_t g = 0; g < gate_sets.size(); ++g) {
      if (!read[g].ok()) {
        ctx.Fail(read[g].status());
        return std::nullopt;
      }
      if (pods[g].empty()) {
        pods[g] = std::move(*read[g]);
      } else {
        for (auto& p : *read[g]) pods[g].push_back(std::move(p));
      }
    }
  }
  if (unknown_fields != nullptr) {
    *unknown_fields = std::move(unknown);
  } else {
    for (const UnknownField& u : unknown) {
      *ctx.err << "podtopo: warning: " << u.ToString()
               << ": the API server refuses it (strict field validation) and podtopo ignores "
                  "it; --strict makes this an error\n";
    }
  }
  // Pods are read under every set of gates by the same names, so the first set decides.
  if (absl::Status s = pods.empty() ? absl::OkStatus() : CheckOnePodPerName(pods.front());
      !s.ok()) {
    ctx.Fail(s);
    return std::nullopt;
  }
  for (const auto& [kind, count] : skipped) {
    *ctx.err << fmt::format(
        "podtopo: skipped {} {} object{} (podtopo reads pods and workload controllers; "
        "--strict makes this an error)\n",
        count, kind, count == 1 ? "" : "s");
  }
  for (const auto& [kind, count] : not_expanded) {
    const bool one = count == 1;
    *ctx.err << fmt::format(
        "podtopo: did not expand {} {} object{}: the {} {} own{} are in the input and stand for "
        "{}\n",
        count, kind, one ? "" : "s",
        kind == "Deployment" ? "ReplicaSets" : kind == "CronJob" ? "Jobs" : "pods",
        one ? "it" : "they", one ? "s" : "", one ? "it" : "them");
  }
  return pods;
}

}  // namespace

bool LoadAllPods(const std::vector<std::string>& files, const config::KubeletConfig& cfg,
                 bool strict, std::vector<Pod>* pods, Context& ctx,
                 const std::vector<std::string>& node_names,
                 std::vector<UnknownField>* unknown_fields) {
  auto loaded = LoadUnderGateSets(files, {PodGatesFromConfig(cfg)}, strict, ctx, node_names,
                                  unknown_fields);
  if (!loaded.has_value()) return false;
  if (pods->empty()) {
    *pods = std::move(loaded->front());
  } else {
    for (auto& p : loaded->front()) pods->push_back(std::move(p));
  }
  return true;
}

std::optional<std::vector<std::shared_ptr<const std::vector<Pod>>>> LoadPodsUnderConfigs(
    const std::vector<std::string>& files, const std::vector<config::KubeletConfig>& configs,
    bool strict, Context& ctx, const std::vector<std::string>& node_names) {
  std::vector<PodGates> gate_sets;
  std::vector<size_t> set_of;  // per configuration
  for (const auto& cfg : configs) {
    const PodGates gates = PodGatesFromConfig(cfg);
    auto same = std::find_if(gate_sets.begin(), gate_sets.end(),
                             [&](const PodGates& g) { return SameGates(g, gates); });
    set_of.push_back(static_cast<size_t>(same - gate_sets.begin()));
    if (same == gate_sets.end()) gate_sets.push_back(gates);
  }
  auto loaded = LoadUnderGateSets(files, gate_sets, strict, ctx, node_names, nullptr);
  if (!loaded.has_value()) return std::nullopt;
  std::vector<std::shared_ptr<const std::vector<Pod>>> shared;
  for (auto& p : *loaded) shared.push_back(std::make_shared<const std::vector<Pod>>(std::move(p)));
  std::vector<std::shared_ptr<const std::vector<Pod>>> out;
  for (size_t s : set_of) out.push_back(shared[s]);
  return out;
}

absl::StatusOr<PodAllocation> AdmitPod(Node& node, const Pod& pod, Context& ctx) {
  absl::StatusOr<PodAllocation> r = node.Admit(pod);
  if (r.ok() && r->replaced) {
    *ctx.err << fmt::format("podtopo: pod {} changed; admitting it again\n", pod.Key());
  }
  return r;
}

void PrintAllocations(const std::vector<PodAllocation>& pods, const Node& node,
                      const std::string& format, Context& ctx) {
  NodePools pools{node.DefaultCpuSet(), node.ReservedCpus(), node.config().kubelet_version};
  if (format == "json") {
    *ctx.out << RenderAdmissionJson(pods, pools);
  } else if (format == "yaml") {
    *ctx.out << JsonToYaml(AdmissionJson(pods, pools));
  } else {
    *ctx.out << RenderAdmissionTable(pods, pools, format == "wide");
  }
}

}  // namespace podtopo::cli
