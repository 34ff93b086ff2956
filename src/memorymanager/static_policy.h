// The Memory Manager's Static policy (kubelet memorymanager/policy_static.go), container level
// and pod level (KEP-5526).
//
// The policy pins the memory and hugepages of Guaranteed pods to NUMA nodes. It offers NUMA
// hints to the Topology Manager (GetTopologyHints / GetPodTopologyHints), then reserves memory
// on the nodes of the merged hint (Allocate per container, or AllocatePod once per pod in the
// pod scope with pod-level resources), and releases it in RemoveContainer. All state lives in a
// MemoryState the caller owns (and checkpoints); the policy itself only keeps the in-memory
// "reusable init container memory" bookkeeping, as the kubelet does, plus notices.
//
// Example:
//   auto policy = StaticPolicy::New(nodes, reserved, &store, PolicyGates{});
//   MemoryState state;
//   PODTOPO_RETURN_IF_ERROR(policy->Start(state));          // default machine state
//   auto hints = policy->GetTopologyHints(state, pod, pod.containers[0]);
//   // {"memory": [{{0}, true}, {{1}, true}, {{0,1}, false}], "hugepages-1Gi": [...]}
//   PODTOPO_RETURN_IF_ERROR(policy->Allocate(state, pod, pod.containers[0]));
//   state.GetMemoryBlocks(pod.uid, "app");                  // [{[0] memory 1Gi}, ...]
//
// Determinism: where the kubelet walks a Go map of resource names (requested resources, memory
// types, machine-state nodes), podtopo walks them in sorted order. Only the order of blocks in
// a container's list depends on it (not significant), and which resource an error names first
// when several fail the same check.
//
// Differences from the kubelet's v1.36 alpha code, each following a merged fix or the spec:
//   * #138770: containers that request no exclusive memory get no hints and no allocation.
//   * #140906 / #141077: AllocatePod of a pod whose pod-level blocks and container entries are
//     already in the state (kubelet restart) changes nothing and charges nothing again.
//   * #141069 / #141070: restart hints of a pod-level pod come from its POD blocks, compared
//     with the pod request (not from the first container's blocks).
//   The last two are versioned (PolicyGates::behavior, kubelet/version.h): for a kubelet
//   version without the fix the policy does what that kubelet does.
//   * #141993 (open upstream): a pod-level entry without any container entry is an incomplete
//     checkpoint. Start drops it (the machine state never saw it: the kubelet writes the pod
//     entry, then container entries, then the machine state) and AllocatePod allocates such a
//     pod afresh; both record a notice.
//   * AllocatePod of a pod whose pod-level request has no memory or hugepages is a no-op
//     (the alpha code would fail to find a default hint).
//   * Go dereferences nil for unknown NUMA nodes / memory types in a few places (a panic); here
//     they count as zero memory.
// Only the kubelet's AddOperation is modelled (in-place resize is out of scope).
//
// Thread safety: not thread-safe; the kubelet serialises calls under the manager's mutex.
#ifndef PODTOPO_MEMORYMANAGER_STATIC_POLICY_H_
#define PODTOPO_MEMORYMANAGER_STATIC_POLICY_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/pod.h"
#include "kubelet/version.h"
#include "memorymanager/memory_state.h"
#include "topologymanager/bitmask.h"
#include "topologymanager/hint_set.h"
#include "topologymanager/topology_hint.h"

namespace podtopo::memorymanager {

using topologymanager::BitMask;
using topologymanager::TopologyHint;

// Resource name -> hints. The kubelet's nil map ("no preference") is std::nullopt; an empty map
// or an empty list mean what they mean to the Topology Manager (spec §A.6 step 1).
using HintMap = std::map<std::string, std::vector<TopologyHint>>;
// The same by structure (topologymanager/hint_set.h): what the Topology Manager merges.
using HintSetMap = std::map<std::string, topologymanager::HintSet>;

// Memory type -> bytes (the kubelet's map[v1.ResourceName]uint64).
using RequestedResources = std::map<std::string, uint64_t>;

// The Topology Manager's Store as the policy sees it: the merged hint stored for a container,
// or the zero TopologyHint{} ({nil, false}) when there is none.
class AffinityStore {
 public:
  virtual ~AffinityStore() = default;
  virtual TopologyHint GetAffinity(const std::string& pod_uid,
                                   const std::string& container_name) const = 0;
};

// Feature gates the policy reads.
struct PolicyGates {
  bool pod_level_resources = true;           // PodLevelResources (beta, on by default)
  bool pod_level_resource_managers = false;  // PodLevelResourceManagers (off by default in 1.37)
  bool fix_kubelet_qos_class = true;         // PodLevelResourcesFixKubeletQOSClass
  // What the kubelet version decides differently (kubelet/version.h); the fixed behaviour by
  // default. Read: memory_restore_keeps_pod_blocks (AllocatePod) and
  // memory_pod_restore_hints_from_pod_blocks (GetPodTopologyHintSets).
  kubelet::Behavior behavior;
  // The gates GetPodQos reads.
  PodGates Qos() const { return {pod_level_resources, true, fix_kubelet_qos_class}; }
};

class StaticPolicy {
 public:
  // podtopo's reusable-memory bookkeeping: podUID -> mask String() -> type -> bytes.
  using ReusableMemory = std::map<std::string, std::map<std::string, RequestedResources>>;

  // NewPolicyStatic. `machine` is the cadvisor node list (MachineNumaNodesFromTopology),
  // `system_reserved` the converted reservedMemory (GetSystemReservedMemory). `affinity` must
  // outlive the policy. Error (kInvalidArgument) when no node reserves any "memory":
  // "[memorymanager] you should specify the system reserved memory".
  static absl::StatusOr<StaticPolicy> New(std::vector<MachineNumaNode> machine,
                                          SystemReservedMemory system_reserved,
                                          const AffinityStore* affinity, PolicyGates gates);

  std::string Name() const { return "Static"; }

  // Start / validateState. An empty machine state becomes the default one (error if there are
  // container assignments). Otherwise the expected state (default + every assignment; pod-level
  // pods counted by their pod blocks when PodLevelResourceManagers is on) must equal the stored
  // one under AreMachineStatesEqual. Errors (kFailedPrecondition), the kubelet's texts:
  //   [memorymanager] machine state can not be empty when it has memory assignments
  //   [memorymanager] (pod: P, container: C) the memory assignment uses the NUMA that does not exist
  //   [memorymanager] (pod: P, container: C) the memory assignment uses memory resource that does not exist
  //   [memorymanager] the expected machine state is different from the real one
  // Pod-level entries are dropped first when PodLevelResourceManagers is off (the kubelet does
  // not load them) or when the pod has no container entry (#141993); each drop adds a notice.
  absl::Status Start(MemoryState& state);

  // GetTopologyHints for one container (container scope). nullopt for non-Guaranteed pods, pods
  // with pod-level resources while a pod-level gate is off, containers without exclusive memory,
  // or restored blocks that do not match the request; restored blocks that match give one
  // preferred hint per type; otherwise calculateHints (possibly an empty map).
  std::optional<HintMap> GetTopologyHints(const MemoryState& state, const Pod& pod,
                                          const Container& container) const;
  // The same hints by structure (no 2^N walk); GetTopologyHints is their Enumerate().
  std::optional<HintSetMap> GetTopologyHintSets(const MemoryState& state, const Pod& pod,
                                                const Container& container) const;

  // GetPodTopologyHints (pod scope): hints for the pod's aggregated request (the pod-level
  // request when PodLevelResourceManagers is on and the pod sets spec.resources). A pod-level
  // pod failing the empty-shared-pool validation gets an empty list per requested type.
  std::optional<HintMap> GetPodTopologyHints(const MemoryState& state, const Pod& pod) const;
  std::optional<HintSetMap> GetPodTopologyHintSets(const MemoryState& state,
                                                   const Pod& pod) const;

  // Test oracle: hints from the kubelet's walk over every mask (exponential) instead of their
  // structure; the default and extended hints of Allocate come from the same lists.
  void set_exhaustive_hints(bool on) { exhaustive_hints_ = on; }

  // Allocate for one container (container scope, and the legacy pod scope). Idempotent: a
  // container that already has blocks is left as is. Errors (kResourceExhausted), the
  // kubelet's texts, which the Topology Manager reports as UnexpectedAdmissionError:
  //   [memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available
  //   [memorymanager] failed to find the default preferred hint
  //   [memorymanager] failed to find NUMA nodes to extend the current topology hint
  //   [memorymanager] failed to find the extended preferred hint
  //   [memorymanager] preferred hint violates NUMA node allocation
  //   [memorymanager] failed to represent quantity as int64            (kInvalidArgument)
  // On error the state is unchanged.
  absl::Status Allocate(MemoryState& state, const Pod& pod, const Container& container);

  // AllocatePod (KEP-5526): charges the machine state once with the pod-level budget on the
  // NUMA nodes of the hint stored for the pod's first container, records the pod blocks, and
  // gives every init and app container either its exclusive blocks or the pod shared pool.
  // REQUIRES: the pod sets spec.resources and both pod-level gates are on (else
  // kFailedPrecondition). Errors: the Allocate texts above, and the empty-shared-pool texts as
  // TypedAdmissionError(kReasonEmptyPodSharedPool, ...):
  //   pod rejected, largest exclusive init container requests %d of %s, but only %d available
  //   pod rejected, pod has shared init containers but no %s available for them
  //   pod rejected, sum of exclusive container %s requests equals pod budget, leaving no memory for shared containers
  // On error the state is unchanged.
  absl::Status AllocatePod(MemoryState& state, const Pod& pod);

  // RemoveContainer: releases the container's blocks (nodes in block order: assignments--,
  // cells reset when a node has none left, reserved memory given back). For pod-level pods
  // (PodLevelResourceManagers on and a pod entry present) only the container entry goes; the
  // pod budget is released when the pod's last container entry is removed. A pod entry without
  // any container entry (incomplete checkpoint, #141993) is dropped without releasing anything.
  void RemoveContainer(MemoryState& state, const std::string& pod_uid,
                       const std::string& container_name);

  // GetAllocatableMemory: one block {[node], type, allocatable} per (node, type) with
  // allocatable > 0, sorted by node then type (the kubelet's order is Go map order).
  std::vector<Block> GetAllocatableMemory(const MemoryState& state) const;

  // getDefaultMachineState for this policy's machine and reservation.
  NumaNodeMap DefaultMachineState() const;

  // Things worth telling the operator (dropped incomplete checkpoint entries, ...), oldest first.
  const std::vector<std::string>& notices() const { return notices_; }
  void ClearNotices() { notices_.clear(); }

  const ReusableMemory& reusable_memory() const { return init_containers_reusable_memory_; }
  // Test hook: the kubelet's tests preset initContainersReusableMemory.
  void SetReusableMemoryForTesting(ReusableMemory memory) {
    init_containers_reusable_memory_ = std::move(memory);
  }

  const PolicyGates& gates() const { return gates_; }

  // Many calls about `pod` follow (Node::Admit): until EndPod, the policy's calls
  // about this same Pod object (and its containers) take its QoS class, requested memory and
  // shared-pool validation from values computed once here. `qos` is the pod's class as the
  // caller computed it once for the whole admission (GetPodQos with the gates of
  // gates().Qos()). The answers are the same; the pod must not change in between.
  void BeginPod(const Pod& pod, QosClass qos);
  void EndPod() { admission_.reset(); }

  // GetContainerRequestedResources / GetPodRequestedResources with this policy's gate.
  absl::StatusOr<RequestedResources> ContainerRequestedResources(const Pod& pod,
                                                                 const Container& c) const;
  absl::StatusOr<RequestedResources> PodRequestedResources(const Pod& pod) const;

 private:
  StaticPolicy(std::vector<MachineNumaNode> machine, SystemReservedMemory system_reserved,
               const AffinityStore* affinity, PolicyGates gates);

  QosClass PodQos(const Pod& pod) const;
  bool PodLevelManaged(const Pod& pod) const;
  bool PodLevelSkipped(const Pod& pod) const;
  absl::Status ValidatePodScopeResources(const Pod& pod) const;
  // ValidatePodScopeResources' check itself (no BeginPod value).
  absl::Status CheckPodScopeResources(const Pod& pod) const;
  // calculateHints by structure, and as the kubelet walks it (the oracle).
  HintSetMap CalculateHints(const NumaNodeMap& ms, const Pod& pod,
                            const RequestedResources& req) const;
  HintMap CalculateHintsExhaustive(const NumaNodeMap& ms, const Pod& pod,
                                   const RequestedResources& req) const;
  // What MaskQualifies reads of the memory tables for one request: the allocatable and the
  // free bytes of every requested type (in the request's order) on every node, by node id
  // (zero where the machine state has none).
  struct NodeAmounts {
    std::vector<std::array<uint64_t, 64>> allocatable;
    std::vector<std::array<uint64_t, 64>> free;
  };
  static NodeAmounts AmountsOf(const NumaNodeMap& ms, const RequestedResources& req);
  // The kubelet's per-mask test of calculateHints, `amounts` being AmountsOf(ms, req);
  // `covers_allocatable` (optional) tells whether the mask passed its first step (enough
  // allocatable memory).
  bool MaskQualifies(const NumaNodeMap& ms, const Pod& pod, const RequestedResources& req,
                     const NodeAmounts& amounts, BitMask mask, bool* covers_allocatable) const;
  uint64_t PodReusableMemory(const Pod& pod, BitMask mask, const std::string& type) const;
  absl::StatusOr<TopologyHint> BestHint(const NumaNodeMap& ms, const Pod& pod,
                                        const RequestedResources& req, TopologyHint hint) const;
  void UpdatePodReusableMemory(const Pod& pod, const Container& container,
                               const std::vector<Block>& blocks);
  void UpdateInitContainersMemoryBlocks(MemoryState& state, const Pod& pod,
                                        const Container& container,
                                        const std::vector<Block>& blocks) const;
  absl::Status UpdateExpectedMachineState(NumaNodeMap& expected, const std::vector<Block>& blocks,
                                          const std::string& pod_uid,
                                          const std::string& container_name) const;

  std::vector<MachineNumaNode> machine_;
  SystemReservedMemory system_reserved_;
  const AffinityStore* affinity_;
  PolicyGates gates_;
  ReusableMemory init_containers_reusable_memory_;
  bool exhaustive_hints_ = false;
  std::vector<std::string> notices_;
  // BeginPod's values for its pod.
  struct AdmissionMemo {
    const Pod* pod = nullptr;
    QosClass qos = QosClass::kBestEffort;
    std::vector<std::pair<const Container*, absl::StatusOr<RequestedResources>>> containers;
    absl::StatusOr<RequestedResources> pod_request;
    absl::Status pod_scope;  // ValidatePodScopeResources
  };
  const AdmissionMemo* MemoFor(const Pod& pod) const {
    return admission_.has_value() && admission_->pod == &pod ? &*admission_ : nullptr;
  }
  // PodRequestedResources / ContainerRequestedResources without a copy: the memo's value, or
  // the one computed into `scratch`.
  const absl::StatusOr<RequestedResources>& PodRequest(
      const Pod& pod, absl::StatusOr<RequestedResources>& scratch) const;
  const absl::StatusOr<RequestedResources>& ContainerRequest(
      const Pod& pod, const Container& c, absl::StatusOr<RequestedResources>& scratch) const;
  std::optional<AdmissionMemo> admission_;
};

// getContainerRequestedResources / getPodRequestedResources as free functions (the kubelet's
// unit tests call them directly). `pod_level_resource_managers` is the gate.
absl::StatusOr<RequestedResources> GetContainerRequestedResources(const Pod& pod,
                                                                  const Container& container,
                                                                  bool pod_level_resource_managers);
absl::StatusOr<RequestedResources> GetPodRequestedResources(const Pod& pod,
                                                            bool pod_level_resource_managers);

// updateMachineState: for each node of `numa_affinity` in order, NumberOfAssignments++ and
// Cells = numa_affinity; `size` bytes of `type` move from free to reserved, node by node.
void UpdateMachineState(NumaNodeMap& ms, const std::vector<int>& numa_affinity,
                        const std::string& type, uint64_t size);
// releaseMemory: the reverse of UpdateMachineState for every block.
void ReleaseMemory(NumaNodeMap& ms, const std::vector<Block>& blocks);

// findBestHint: the preferred, then narrowest hint; {nil, false} for an empty list.
TopologyHint FindBestHint(const std::vector<TopologyHint>& hints);

// Manager-level read accessors.
// GetMemory: the container's blocks (empty when none).
std::vector<Block> GetMemory(const MemoryState& state, const std::string& pod_uid,
                             const std::string& container_name);
// GetPodMemory: the pod-level blocks (empty when none).
std::vector<Block> GetPodMemory(const MemoryState& state, const std::string& pod_uid);
// GetMemoryNUMANodes: sorted union of the container's block affinities, for cpuset.mems.
// Empty (the kubelet's nil: not pinned) when the container has no blocks.
std::vector<int> GetMemoryNumaNodes(const MemoryState& state, const std::string& pod_uid,
                                    const std::string& container_name);

}  // namespace podtopo::memorymanager

#endif  // PODTOPO_MEMORYMANAGER_STATIC_POLICY_H_
