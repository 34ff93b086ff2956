// KubeletConfig: the kubelet's own configuration file (KubeletConfiguration,
// kubelet.config.k8s.io/v1beta1), the fields the resource managers read, the kubelet's
// defaults and the kubelet's checks.
//
// Reading a file has two steps, as in the kubelet:
//  1. ParseKubeletConfig decodes the YAML (the kubelet's strict-then-lenient decoding) and
//     applies the v1beta1 defaults. Its findings are decode problems: YAML syntax errors,
//     wrong types (`cpuManagerPolicy: [1]`), bad quantities or durations, a missing `kind`
//     (errors: the kubelet refuses the file), and unknown or duplicate fields (warnings: the
//     kubelet logs them and ignores the field). Unknown fields come with a suggestion:
//       kubelet-config.yaml:10:1: memoryManager: unknown field "memoryManager" (did you mean
//       memoryManagerPolicy?) ...
//  2. KubeletConfig::Validate runs ValidateKubeletConfiguration's checks on the manager
//     fields plus the checks the CPU, Memory and Topology Manager constructors make at start
//     (policy names, policy options and their feature gates, the static CPU policy's
//     reservation, reservedMemory against Node Allocatable), with the kubelet's texts.
//
// Every field of KubeletConfiguration v1beta1 is known; those podtopo does not model
// (address, port, cgroupDriver, clusterDNS, ...) are accepted and ignored.
//
// Example:
//   ParsedKubeletConfig parsed = ParseKubeletConfig(yaml_text, "kubelet-config.yaml");
//   std::vector<Finding> problems = parsed.findings;
//   std::vector<Finding> invalid = parsed.config.Validate();
//   problems.insert(problems.end(), invalid.begin(), invalid.end());
//   if (HasErrors(problems)) { ... }
//   parsed.config.FeatureEnabled("PodLevelResourceManagers");
//
// Thread safety: value types.
#ifndef PODTOPO_CONFIG_KUBELET_CONFIG_H_
#define PODTOPO_CONFIG_KUBELET_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "config/duration.h"
#include "kubelet/version.h"
#include "cpuset/cpuset.h"
#include "resource/quantity.h"

namespace podtopo {

// Resource name -> quantity. The same alias as api/pod.h declares (kept here so that the
// config library does not depend on the Pod model).
using ResourceList = std::map<std::string, Quantity>;

namespace config {

inline constexpr char kKubeletConfigApiVersion[] = "kubelet.config.k8s.io/v1beta1";
inline constexpr char kKubeletConfigKind[] = "KubeletConfiguration";

// One problem found in a configuration.
struct Finding {
  enum class Severity { kError, kWarning, kInfo };
  Severity severity = Severity::kError;
  std::string field;    // path in the file: "cpuManagerPolicy", "reservedMemory[0].limits.memory"
  std::string message;  // the text, without location (usually the kubelet's own words)
  std::string source;   // file name ("" when the config was not read from a file)
  int line = 0;         // 1-based; 0 when unknown
  int column = 0;

  // "kubelet-config.yaml:10:1: warning: <field>: <message>" (parts left out when unknown).
  std::string ToString() const;
};
const char* SeverityName(Finding::Severity severity);  // "error", "warning", "info"
bool HasErrors(const std::vector<Finding>& findings);
// OK when there is no error; otherwise kInvalidArgument with every error's ToString(),
// one per line.
absl::Status ErrorsToStatus(const std::vector<Finding>& findings);

// One `reservedMemory` entry (kubeletconfig.MemoryReservation).
struct MemoryReservation {
  int32_t numa_node = 0;
  ResourceList limits;  // "memory", "hugepages-<size>" -> quantity
  friend bool operator==(const MemoryReservation&, const MemoryReservation&) = default;
};

// A hard eviction threshold (evictionapi.Threshold with operator "<"): a quantity, or a
// fraction of the capacity (float32, 0.1 for "10%").
struct EvictionThreshold {
  std::string signal;  // "memory.available", "nodefs.available", ...
  std::optional<Quantity> quantity;
  float percentage = 0;
};

struct KubeletConfig {
  // TypeMeta, as written ("" when missing).
  std::string api_version = kKubeletConfigApiVersion;
  std::string kind = kKubeletConfigKind;

  std::map<std::string, bool> feature_gates;  // as written; FeatureEnabled applies defaults
  std::string cpu_manager_policy = "none";
  std::map<std::string, std::string> cpu_manager_policy_options;
  Duration cpu_manager_reconcile_period = Duration::Seconds(10);
  std::string memory_manager_policy = "None";
  std::vector<MemoryReservation> reserved_memory;
  std::string topology_manager_policy = "none";
  std::string topology_manager_scope = "container";
  std::map<std::string, std::string> topology_manager_policy_options;
  std::string reserved_system_cpus;  // cpuset text, as written
  // ResourceName -> quantity text, as written (the kubelet parses them at start).
  std::map<std::string, std::string> kube_reserved;
  std::map<std::string, std::string> system_reserved;
  // Signal -> "100Mi" | "10%", after defaulting: the v1beta1 defaults when the file has no
  // evictionHard; merged with them when mergeDefaultEvictionSettings is true.
  std::map<std::string, std::string> eviction_hard = DefaultEvictionHard();
  bool merge_default_eviction_settings = false;
  // maxPods: how many pods the node admits (its `pods` capacity; the kubelet rejects the next
  // one with OutOfpods). The v1beta1 default is 110.
  int32_t max_pods = 110;

  // The kubelet that reads this configuration (kubelet/version.h): "1.36", "1.37.0", ...
  // Not a field of the file: `--kubelet-version` sets it. "" = no kubelet version, podtopo's
  // own allocator (the v1.37 gates with every fix: kubelet::Behavior{}).
  std::string kubelet_version;

  // Where each field was written (field path -> 1-based line, column), for messages.
  std::string source;
  std::map<std::string, std::pair<int, int>> positions;

  // The v1beta1 default evictionHard (memory.available 100Mi, nodefs.available 10%,
  // nodefs.inodesFree 5%, imagefs.available 15%).
  static std::map<std::string, std::string> DefaultEvictionHard();

  // kubelet_version's table entry; nullptr for "" (or a name the table does not have: the
  // commands check it with kubelet::ParseKubeletVersion).
  const kubelet::KubeletVersion* Version() const;
  // The version's decision differences; the fixed behaviour for "".
  kubelet::Behavior VersionBehavior() const;

  // The gate's value for kubelet_version (the v1.37 table for ""): as set in featureGates, else AllAlpha / AllBeta for an alpha /
  // beta gate when set, else its default. False for a gate the kubelet does not know.
  bool FeatureEnabled(std::string_view gate) const;

  // Every enabled gate with a disabled dependency (the kubelet's feature gate refuses the
  // configuration: "X is enabled, but depends on features that are disabled: [Y]"), sorted
  // by gate. `disabled` lists the disabled dependencies in the kubelet's order (sorted).
  struct GateDependencyProblem {
    std::string gate;
    std::vector<std::string> disabled;
  };
  std::vector<GateDependencyProblem> GateDependencyProblems() const;

  // kubeReserved / systemReserved as the kubelet's parseResourceList reads them, with
  // reservedSystemCPUs overriding the CPU (system-reserved cpu = |reservedSystemCPUs|,
  // kube-reserved cpu dropped), as kubelet start-up does. Errors (kInvalidArgument):
  //   failed to parse quantity "x" for "cpu" resource: <Quantity error>
  //   resource quantity for "cpu" cannot be negative: -1
  //   cannot reserve "gpu" resource
  absl::StatusOr<ResourceList> KubeReserved() const;
  absl::StatusOr<ResourceList> SystemReserved() const;
  // evictionHard parsed (eviction.ParseThresholdConfig); "0%" and "100%" disable a signal.
  // Errors: `unsupported eviction signal x`, `eviction threshold memory.available must be
  // positive: 0`, `eviction percentage threshold x must be <= 100%: 101%`, Quantity errors.
  absl::StatusOr<std::vector<EvictionThreshold>> HardEvictionThresholds() const;
  // reservedSystemCPUs as a cpuset (empty when unset). Error: the cpuset parse error.
  absl::StatusOr<CpuSet> ReservedSystemCpuSet() const;

  // containerManager.GetNodeAllocatableReservation: for each resource of `capacity`,
  // system-reserved + kube-reserved + the hard-eviction reservation (memory.available ->
  // memory, nodefs.available -> ephemeral-storage; a percentage is taken of the capacity),
  // zero sums left out. Sums follow Go's Quantity.Add (start at 0, take the first non-zero
  // addend's format), so String() prints what the kubelet prints. Entries that do not parse
  // are skipped (Validate reports them).
  ResourceList NodeAllocatableReservation(const ResourceList& capacity) const;
  // The static CPU policy's numReservedCPUs: ceil(reserved cpu millicores / 1000), where the
  // reserved cpu is system + kube reserved after the reservedSystemCPUs override.
  int NumReservedCpus() const;

  // The kubelet's checks, every problem found (see the banner). `capacity`, when given, is
  // the node's capacity (cpu, memory, hugepages-*) used for eviction percentages and for the
  // reservedMemory sums; without it the node is assumed to have cpu and memory and no
  // hugepages, and a percentage memory.available threshold skips the reservedMemory check
  // (an info finding says so).
  std::vector<Finding> Validate(const ResourceList* capacity = nullptr) const;

  // The settings (not `source` / `positions`) are equal.
  bool SameSettings(const KubeletConfig& other) const;

  // The config as a KubeletConfiguration YAML document (modelled fields only).
  std::string ToYaml() const;
};

struct ParsedKubeletConfig {
  KubeletConfig config;
  std::vector<Finding> findings;  // decode problems (see the banner)
};

// Decodes a KubeletConfiguration YAML document and applies the v1beta1 defaults.
// `source` names the file in findings. Never fails: problems are findings; fields that fail
// to decode keep their defaults.
ParsedKubeletConfig ParseKubeletConfig(std::string_view yaml, const std::string& source);

// Reads and parses a file. Error (kNotFound / kInvalidArgument) only when the file cannot
// be read or is larger than 4 MiB.
absl::StatusOr<ParsedKubeletConfig> LoadKubeletConfig(const std::string& path);

// podtopo's default configuration: the seed article's configuration, corrected
// (docs/examples/kubelet-config.yaml): gates PodLevelResources and PodLevelResourceManagers
// on, cpuManagerPolicy static (reconcile 5s), memoryManagerPolicy Static,
// topologyManagerPolicy single-numa-node, topologyManagerScope pod, systemReserved
// {cpu: 1, memory: 1Gi}, evictionHard {memory.available: 100Mi} and reservedMemory
// [{numaNode: 0, limits: {memory: 1124Mi}}], so that the reserved memory equals
// system-reserved + hard eviction.
KubeletConfig SeedDefault();

// Every top-level field name of KubeletConfiguration v1beta1 (plus apiVersion and kind).
std::span<const std::string_view> KnownKubeletConfigFields();

}  // namespace config
}  // namespace podtopo

#endif  // PODTOPO_CONFIG_KUBELET_CONFIG_H_
