// StaticPolicy: the kubelet CPU Manager's `static` policy (cpumanager/policy_static.go),
// container scope and pod scope with pod-level resources (KEP-5526).
//
// Guaranteed containers with an integral CPU request get exclusive CPUs taken from the default
// (shared) pool, NUMA-aligned by the Topology Manager's hint. With PodLevelResources and
// PodLevelResourceManagers on, a pod that sets spec.resources gets one CPU "bubble"
// (AllocatePod), split into exclusive slices for its eligible containers and a pod shared pool
// for the rest. Every decision and every error text is the kubelet's (spec cpumanager.md §2,
// §4; kep5526.md §2-§4). Deliberate differences (docs/differences.md):
//   - determinism: where the kubelet walks a Go map (which overlap validateState reports,
//     which bad option is reported), podtopo walks sorted order;
//   - versions: where kubelet versions decide differently, StaticPolicyGates::behavior says
//     which way (kubelet/version.h). By default (the fixed behaviour, podtopo as the
//     allocator) the restart bug k/k #140989 is not repeated: AllocatePod reuses a restored
//     pod bubble and container entries and computes only missing ones (k/k #141041), and
//     GetPodTopologyHints regenerates pod hints from the checkpointed pod-level set; a
//     restored pod skips full-pcpus-only's free-physical-CPU count (its own CPUs are no longer
//     free) but keeps the multiple-of-core check. Without #141041 (behavior), the restored pod
//     is allocated as a new one and its old bubble leaks, as the kubelet does;
//   - AllocatePod gives the bubble back when partitioning fails (the kubelet leaks it);
//   - strict-cpu-reservation never empties the default set (k/k #141196, see AllocateCpus)
//     unless behavior says the kubelet version does;
//   - where the kubelet divides by zero, podtopo answers: align-by-socket on a topology whose
//     socket count is 0 treats no hint as socket-aligned; full-pcpus-only on a topology whose
//     core count is 0 reports SMTAlignmentError.
//
// Example:
//   StaticPolicyConfig config{.num_reserved_cpus = 1};
//   auto policy = StaticPolicy::Create(topo, config, /*affinity=*/nullptr);
//   CpuState state;
//   PODTOPO_RETURN_IF_ERROR((*policy)->Start(state));      // default = all CPUs
//   PODTOPO_RETURN_IF_ERROR((*policy)->Allocate(state, pod, pod.containers[0]));
//   state.GetCpuSet(pod.uid, pod.containers[0].name);     // its exclusive CPUs
//
// Errors: SMTAlignmentError and EmptyPodSharedPoolError come back as TypedAdmissionError
// (kubelet/admission_error.h) with the kubelet's reason; any other error (e.g. "not enough
// cpus available to satisfy request: ...") is a plain Status that admission turns into
// UnexpectedAdmissionError.
//
// Thread safety: not thread-safe; the caller serialises calls (the kubelet's manager lock).
#ifndef PODTOPO_CPUMANAGER_STATIC_POLICY_H_
#define PODTOPO_CPUMANAGER_STATIC_POLICY_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/pod.h"
#include "cpumanager/cpu_assignment.h"
#include "cpumanager/cpu_state.h"
#include "cpumanager/policy_options.h"
#include "kubelet/version.h"
#include "cpuset/cpuset.h"
#include "topology/cpu_topology.h"
#include "topologymanager/bitmask.h"
#include "topologymanager/hint_set.h"
#include "topologymanager/topology_hint.h"

namespace podtopo::cpumanager {

// The policy's name, as the checkpoint's policyName records it.
inline constexpr char kStaticPolicyName[] = "static";

// The Topology Manager's affinity store as the policy sees it (topologymanager.Store).
class AffinityStore {
 public:
  virtual ~AffinityStore() = default;
  // The merged hint stored for the container; {nullopt, false} when there is none.
  virtual topologymanager::TopologyHint GetAffinity(const std::string& pod_uid,
                                                    const std::string& container_name) const = 0;
};

// Feature gates the static policy reads.
struct StaticPolicyGates {
  bool pod_level_resources = true;           // PodLevelResources (beta, on by default)
  bool pod_level_resource_managers = false;  // PodLevelResourceManagers (off by default)
  bool fix_kubelet_qos_class = true;         // PodLevelResourcesFixKubeletQOSClass
  OptionGates options;                       // CPUManagerPolicy{Alpha,Beta}Options
  // What the kubelet version decides differently (kubelet/version.h); the fixed behaviour by
  // default. Read: cpu_restore_keeps_pod_cpus (AllocatePod, GetPodTopologyHintSets),
  // distribute_min_numas_from_hint and strict_reservation_keeps_default_set (AllocateCpus),
  // distribute_remainder_whole_groups, distribute_keeps_best_numa_combination and
  // distribute_across_cores_by_core_topology (TakeByTopology).
  kubelet::Behavior behavior;
  // The gates GetPodQos reads.
  PodGates Qos() const { return {pod_level_resources, true, fix_kubelet_qos_class}; }
};

struct StaticPolicyConfig {
  // ceil(kube-reserved + system-reserved cpu).
  int num_reserved_cpus = 0;
  // --reserved-cpus; empty = pick num_reserved_cpus CPUs with takeByTopology.
  CpuSet reserved_system_cpus;
  // cpuManagerPolicyOptions.
  std::map<std::string, std::string> options;
  // topologyManagerPolicy ("none", "best-effort", "restricted", "single-numa-node"); only
  // align-by-socket's validation reads it.
  std::string topology_manager_policy = "none";
  StaticPolicyGates gates;
};

// SMTAlignmentError (full-pcpus-only). Error() is the kubelet's text.
struct SmtAlignmentError {
  int requested_cpus = 0;
  int cpus_per_core = 0;
  int available_physical_cpus = 0;
  bool caused_by_physical_cpus = false;

  std::string Error() const;
  // TypedAdmissionError(kReasonSmtAlignment, Error()).
  absl::Status ToStatus() const;
};

// cm/qos ResourceIsolationLevel (KEP-5526 §4.4).
enum class ResourceIsolationLevel {
  kHost,       // "host": no cpuset entry, the node's shared pool
  kPod,        // "pod": the pod's shared pool (CFS quota stays on)
  kContainer,  // "container": exclusive CPUs
};
const char* ResourceIsolationLevelName(ResourceIsolationLevel level);

// What a container runs on, as podtopo's output names it.
enum class ContainerAssignment {
  kNodeExclusive,  // "node_exclusive": exclusive CPUs from the node pool (container path)
  kPodExclusive,   // "pod_exclusive": an exclusive slice of the pod's bubble
  kPodShared,      // "pod_shared": the pod's shared pool
  kNodeShared,     // "node_shared": no entry, the node's default cpuset
};
const char* ContainerAssignmentName(ContainerAssignment assignment);

// Resource name -> hints, as a hint provider returns them. An empty map is the kubelet's nil
// map (no preference); {"cpu": {}} is a preference that cannot be satisfied.
using TopologyHintMap = std::map<std::string, std::vector<topologymanager::TopologyHint>>;
// The same hints by structure (topologymanager/hint_set.h): what the Topology Manager merges.
using HintSetMap = std::map<std::string, topologymanager::HintSet>;

class StaticPolicy {
 public:
  // NewStaticPolicy. `affinity` may be null (Topology Manager policy none: nil hints); it must
  // outlive the policy. Errors (kInvalidArgument), in this order: option errors
  // (NewStaticPolicyOptions, with config.gates.options), align-by-socket validation,
  // `[cpumanager] unable to reserve the required amount of CPUs (size of <set> did not equal
  // <n>)`, `[cpumanager] unable to build the reserved physical CPUs from the reserved set:
  // unknown CPU ID: <id>`.
  static absl::StatusOr<std::unique_ptr<StaticPolicy>> Create(const CpuTopology& topology,
                                                              const StaticPolicyConfig& config,
                                                              const AffinityStore* affinity);

  // Start / validateState (§2.4): initialises an empty state to all CPUs (minus reserved with
  // strict-cpu-reservation), else checks the reserved set, overlaps (reported in sorted pod,
  // container order) and that default ∪ assignments (∪ pod sets with
  // PodLevelResourceManagers) covers exactly the CPUs. Errors are the kubelet's texts.
  absl::Status Start(CpuState& state) const;

  // Container scope (§2.5): exclusive CPUs for a Guaranteed container with an integral CPU
  // request; no-op otherwise. Idempotent: an existing entry is kept (after the SMT check, as
  // in the kubelet; the CPUs the entry holds count as free physical CPUs, k/k #129079).
  absl::Status Allocate(CpuState& state, const Pod& pod, const Container& container);

  // Pod scope with pod-level resources (§2.7, kep5526 §4): allocates the bubble and writes an
  // entry for every init and app container. Acts only for pods with pod-level resources while
  // both pod-level gates are on (else nothing happens; callers use Allocate). Restart-safe:
  // when the pod already has a bubble in state it is reused with the container entries found,
  // only missing ones are computed, and the default set does not change.
  absl::Status AllocatePod(CpuState& state, const Pod& pod);

  // §2.8 / kep5526 §4.5. For a pod with a bubble (gate on) nothing goes back to the default
  // set until the pod's last container entry is removed; then the whole bubble does.
  absl::Status RemoveContainer(CpuState& state, const std::string& pod_uid,
                               const std::string& container_name);

  // Hint providers (§4.2, §4.3, kep5526 §3.3), by structure: no 2^N walk.
  HintSetMap GetTopologyHintSets(const CpuState& state, const Pod& pod,
                                 const Container& container) const;
  HintSetMap GetPodTopologyHintSets(const CpuState& state, const Pod& pod) const;
  // The same as lists (HintSet::Enumerate: exponential in the NUMA nodes; tests, small N).
  TopologyHintMap GetTopologyHints(const CpuState& state, const Pod& pod,
                                   const Container& container) const;
  TopologyHintMap GetPodTopologyHints(const CpuState& state, const Pod& pod) const;
  // generateCPUTopologyHints by structure: the masks holding the reusable CPUs' NUMA nodes and
  // enough available CPUs; preferred the narrowest that could hold the request on this node
  // (or, with align-by-socket, those on the fewest sockets).
  topologymanager::HintSet CpuHintSet(const CpuSet& available, const CpuSet& reusable,
                                      int request) const;
  // Test oracle: CpuHintSet returns GenerateCpuTopologyHints' list instead of the structure.
  void set_exhaustive_hints(bool on) { exhaustive_hints_ = on; }
  // generateCPUTopologyHints as the kubelet runs it: every NUMA mask walked (IterateBitMasks).
  // The oracle of CpuHintSet; exponential in the NUMA nodes.
  std::vector<topologymanager::TopologyHint> GenerateCpuTopologyHints(const CpuSet& available,
                                                                      const CpuSet& reusable,
                                                                      int request) const;

  // guaranteedCPUs / podGuaranteedCPUs (§2.2, §2.3, kep5526 §2.3-2.4). Requests beyond
  // INT32_MAX CPUs saturate.
  int GuaranteedCpus(const Pod& pod, const Container& container) const;
  int PodGuaranteedCpus(const Pod& pod) const;
  // The same for a caller that already holds the pod's QoS class (PodQos): one GetPodQos per
  // admission step instead of one per container.
  int GuaranteedCpus(const Pod& pod, QosClass qos, const Container& container) const;
  int PodGuaranteedCpus(const Pod& pod, QosClass qos) const;
  // GetPodQos with the gates this policy reads.
  QosClass PodQos(const Pod& pod) const;

  // Many calls about `pod` follow (Node::Admit): until EndPod, the calls above
  // about this same Pod object (and its containers) answer from values computed once here instead
  // of re-reading the pod's resources each time. `qos` is the pod's class as the caller computed
  // it once for the whole admission (GetPodQos with the gates of gates().Qos()). The answers are
  // the same; the pod must not change in between.
  void BeginPod(const Pod& pod, QosClass qos);
  void EndPod() { admission_.reset(); }

  // validatePodScopeResources (kep5526 §4.1): EmptyPodSharedPoolError when containers left
  // for the pod's shared pool would get no CPUs.
  absl::Status ValidatePodScopeResources(const Pod& pod) const;
  absl::Status ValidatePodScopeResources(const Pod& pod, QosClass qos) const;

  // allocateCPUs (§2.5): takes `num_cpus` from (default − reserved) ∪ reusable, CPUs of the
  // affinity's NUMA nodes (their sockets with align-by-socket) first, and removes them from
  // the default set. nullopt affinity = no NUMA preference. With strict-cpu-reservation a take
  // that would leave the default set empty is refused before the state changes (k/k #141196,
  // as the unmerged fix #141197 proposes; the kubelet v1.37 takes it and then cannot restart).
  absl::StatusOr<CpuSet> AllocateCpus(CpuState& state, int num_cpus,
                                      const std::optional<topologymanager::BitMask>& affinity,
                                      const CpuSet& reusable) const;
  // takeByTopology: packed / spread / distributed per the options. `min_numas_from_hint` is
  // the distributed algorithm's v1.37 NUMA floor (0 = none).
  absl::StatusOr<CpuSet> TakeByTopology(const CpuSet& available, int num_cpus,
                                        int min_numas_from_hint = 0) const;

  CpuSet GetAllocatableCpus() const;                      // all − reserved
  CpuSet GetAvailableCpus(const CpuState& state) const;  // default − reserved
  CpuSet GetAvailablePhysicalCpus(const CpuState& state) const;  // default − reserved cores

  // manager.GetResourceIsolationLevel (kep5526 §4.4).
  ResourceIsolationLevel GetResourceIsolationLevel(const CpuState& state, const Pod& pod,
                                                   const Container& container) const;
  // node_exclusive / pod_exclusive / pod_shared / node_shared, from the state.
  ContainerAssignment ClassifyContainer(const CpuState& state, const Pod& pod,
                                        const Container& container) const;
  // The same with the pod's QoS class already known (PodQos).
  ContainerAssignment ClassifyContainer(const CpuState& state, const Pod& pod, QosClass qos,
                                        const Container& container) const;

  const CpuTopology& topology() const { return topology_; }
  const StaticPolicyOptions& options() const { return options_; }
  const StaticPolicyGates& gates() const { return gates_; }
  const CpuSet& reserved_cpus() const { return reserved_; }
  const CpuSet& reserved_physical_cpus() const { return reserved_physical_; }
  // Reusable CPUs remembered for the pod being admitted (init-container reuse, §2.6).
  CpuSet CpusToReuse(const std::string& pod_uid) const;

 private:
  friend absl::StatusOr<CpuSet> DebugTakeCpus(const CpuTopology&, const CpuSet&, int,
                                              const std::map<std::string, std::string>&,
                                              std::optional<std::vector<int>>);

  StaticPolicy(const CpuTopology& topology, const StaticPolicyOptions& options,
               const StaticPolicyGates& gates, const AffinityStore* affinity);

  // ValidatePodScopeResources' check itself (no BeginPod value).
  absl::Status CheckPodScopeResources(const Pod& pod, QosClass qos) const;
  bool PodLevelPath(const Pod& pod) const;        // both gates on and spec.resources set
  bool SkipsPodLevelPod(const Pod& pod) const;    // a gate off and spec.resources set
  // `preallocated`: CPUs the container already holds, counted as available (k/k #129079).
  absl::Status EnforceSmtAlignment(const CpuState& state, int num_cpus, bool check_physical,
                                   int preallocated = 0) const;
  void UpdateCpusToReuse(const Pod& pod, const Container& container, const CpuSet& cpus);
  bool IsHintSocketAligned(topologymanager::BitMask mask, int min_affinity_size) const;
  CpuSet AlignedCpus(topologymanager::BitMask affinity, const CpuSet& allocatable) const;
  topologymanager::TopologyHint AffinityFor(const std::string& pod_uid,
                                            const std::string& container_name) const;
  // Splits `bubble` among the pod's containers (§2.7 step 6); containers already in `existing`
  // keep their entries. Returns the cpuset of every init and app container, in that order.
  absl::StatusOr<std::vector<CpuSet>> PartitionPodCpus(
      const Pod& pod, QosClass qos, const CpuSet& bubble,
      const std::map<std::string, CpuSet>& existing) const;

  CpuTopology topology_;
  StaticPolicyOptions options_;
  StaticPolicyGates gates_;
  const AffinityStore* affinity_;  // not owned; may be null
  int cpu_group_size_ = 0;
  TopologyTables tables_;  // of topology_, which never changes
  // What CpuHintSet reads of topology_, computed once.
  struct HintTables {
    bool unmaskable = false;  // a NUMA id outside 0-63: no mask, no hint
    uint64_t nodes = 0;       // the NUMA nodes as a mask
    int numa_count = 0;
    std::vector<std::pair<int, CpuSet>> numa_cpus;  // ascending NUMA id -> its CPUs
    topologymanager::CoverRule capacity;            // weight: CPUs per NUMA node
    // align-by-socket: NUMA nodes per socket (0 = the option is off) and each node's sockets
    // (PreferenceRule::node_sockets).
    int numa_per_socket = 0;
    std::vector<std::vector<uint64_t>> node_sockets;
  };
  static HintTables BuildHintTables(const CpuTopology& topology,
                                    const StaticPolicyOptions& options);
  HintTables hint_tables_;
  bool exhaustive_hints_ = false;
  CpuSet reserved_;
  CpuSet reserved_physical_;
  std::map<std::string, CpuSet> cpus_to_reuse_;
  // BeginPod's values for its pod.
  struct AdmissionMemo {
    const Pod* pod = nullptr;
    QosClass qos = QosClass::kBestEffort;
    std::vector<std::pair<const Container*, int>> guaranteed;  // init, then app containers
    int pod_guaranteed = 0;
    absl::Status pod_scope;  // ValidatePodScopeResources
  };
  const AdmissionMemo* MemoFor(const Pod& pod) const {
    return admission_.has_value() && admission_->pod == &pod ? &*admission_ : nullptr;
  }
  std::optional<AdmissionMemo> admission_;
};

// `podtopo debug take-cpus`: takeByTopology over `available` with the given options, or, with a
// NUMA affinity, the static policy's allocateCPUs path (aligned CPUs first) as if `available`
// were the default set and nothing were reserved. No admission checks run (no SMT alignment
// check), every option is allowed (alpha and beta option gates on), and the options are not
// validated against the topology. Errors: option errors, "bit number must be in range 0-63" for
// a bad NUMA id, and the take algorithms' errors.
absl::StatusOr<CpuSet> DebugTakeCpus(const CpuTopology& topology, const CpuSet& available,
                                     int count, const std::map<std::string, std::string>& options,
                                     std::optional<std::vector<int>> numa_affinity);

}  // namespace podtopo::cpumanager

#endif  // PODTOPO_CPUMANAGER_STATIC_POLICY_H_
