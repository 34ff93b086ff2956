// Topology Manager scopes and the manager itself (kubelet topologymanager/scope*.go,
// topology_manager.go).
//
// The Manager asks every registered HintProvider (device, CPU and memory managers) for
// TopologyHints, merges them with its Policy and lets the providers allocate:
//
//   container scope  per container (init containers, then app containers): hints, Merge,
//                    reject with TopologyAffinityError when the policy refuses, store the hint,
//                    every provider's Allocate. Earlier containers are not rolled back.
//   pod scope        one Merge for the whole pod (GetPodTopologyHints), the same hint stored
//                    for every container, then Allocate per container. With the
//                    PodLevelResourceManagers gate and pod-level resources (KEP-5526): the
//                    rejection is the pod-level TopologyAffinityError and providers get one
//                    AllocatePod call instead of Allocate.
//   none scope       policy "none": every provider's Allocate per container, no hints stored.
//
// Rejections: reason "TopologyAffinityError", message "Resources cannot be allocated with
// Topology locality" (pod-level path: "Pod Scope pod with pod-level resources failed admission
// under pod-scope topology manager"; its exact text is UNCONFIRMED upstream). Provider errors go
// through admission::GetPodAdmitResult (typed errors keep their reason, others become
// UnexpectedAdmissionError).
//
// Example:
//   absl::StatusOr<std::unique_ptr<Manager>> tm =
//       NewManager({{0, {}}, {1, {}}}, "single-numa-node", "pod", /*options=*/{});
//   (*tm)->AddHintProvider(&cpu_provider);
//   AdmitResult r = (*tm)->Admit(pod);
//   (*tm)->GetAffinity(pod.uid, "main");   // the merged hint stored for the container
//
// Thread safety: not thread-safe; callers serialise (the kubelet admits pods one at a time).
#ifndef PODTOPO_TOPOLOGYMANAGER_SCOPE_H_
#define PODTOPO_TOPOLOGYMANAGER_SCOPE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kubelet/admission_error.h"
#include "api/pod.h"
#include "topologymanager/policy.h"

namespace podtopo::topologymanager {

inline constexpr char kScopeContainer[] = "container";
inline constexpr char kScopePod[] = "pod";
inline constexpr char kScopeNone[] = "none";

inline constexpr char kTopologyAffinityErrorMessage[] =
    "Resources cannot be allocated with Topology locality";
inline constexpr char kPodLevelTopologyAffinityErrorMessage[] =
    "Pod Scope pod with pod-level resources failed admission under pod-scope topology manager";

// lifecycle.Operation: why the pod is being admitted. Providers only do work for kAdd in
// v1.37's static policies; in-place resize semantics are UNCONFIRMED.
enum class Operation { kAdd, kResize };

// A component whose resources the Topology Manager aligns (the kubelet's HintProvider).
// ProviderHints nullopt / an empty map = no preference for any resource; per resource, nullopt
// = no preference, an empty list = no possible placement (policy.h).
class HintProvider {
 public:
  virtual ~HintProvider() = default;
  // Hints for one container (container scope).
  virtual ProviderHints GetTopologyHints(const Pod& pod, const Container& container,
                                         Operation op) = 0;
  // Hints for the whole pod (pod scope).
  virtual ProviderHints GetPodTopologyHints(const Pod& pod, Operation op) = 0;
  // Allocates the container's resources; typed admission errors (admission_error.h) keep their
  // rejection reason.
  virtual absl::Status Allocate(const Pod& pod, const Container& container, Operation op) = 0;
  // KEP-5526 pod-level allocation (pod scope, gate on, pod-level resources set).
  virtual absl::Status AllocatePod(const Pod& pod, Operation op) = 0;
};

// Feature gates the scopes consult.
struct ScopeGates {
  bool pod_level_resource_managers = false;  // PodLevelResourceManagers (alpha in 1.36)
};

// TopologyAffinityError as an admission Status (reason "TopologyAffinityError").
absl::Status TopologyAffinityError();
// NewPodLevelTopologyAffinityError(...) for the pod-level path.
absl::Status PodLevelTopologyAffinityError();

class Manager {
 public:
  // Builds a manager whose scope is `scope_name` ("container", "pod" or "none").
  // REQUIRES: policy non-null. Prefer NewManager, which validates names like the kubelet.
  Manager(std::string scope_name, std::unique_ptr<Policy> policy, ScopeGates gates);

  // "container", "pod" or "none".
  const std::string& scope_name() const { return scope_name_; }
  const Policy& policy() const { return *policy_; }

  // Registers a provider (not owned; must outlive the manager). Providers are asked in
  // registration order.
  void AddHintProvider(HintProvider* provider) { providers_.push_back(provider); }

  // Runs the scope's admission for `pod` (see the file comment).
  AdmitResult Admit(const Pod& pod, Operation op = Operation::kAdd);

  // Admit's decision for a pod whose allocation every provider already holds (a re-admission
  // right after Admit, as a restarting kubelet does): the scope's hints and merges only,
  // nothing stored, nothing allocated. Same answer as Admit: each provider's Allocate and
  // AllocatePod keep an existing allocation (CPUs, pod bubble, memory blocks, devices) and
  // succeed, so only a merge can refuse it. None and best-effort never refuse; a step whose
  // every hint list prefers the hint the pod holds is not merged (that merge admits).
  AdmitResult AdmitAllocated(const Pod& pod, Operation op = Operation::kAdd);

  // The policy's merges of the last Admit or AdmitAllocated (steps it skips have none), one per
  // merge step (the pod in pod scope, each container so far in container scope; none in none).
  const std::vector<MergeResult>& last_merges() const { return last_merges_; }

  // The hint stored for (pod, container), or the zero hint {nil, false}.
  TopologyHint GetAffinity(const std::string& pod_uid, const std::string& container_name) const;

  // Records that `container_id` runs (pod, container).
  void AddContainer(const Pod& pod, const Container& container, const std::string& container_id);
  // Forgets `container_id`; when no other id maps to the same (pod, container) its stored hint
  // is dropped (and the pod's entry when it becomes empty). Unknown ids are ignored. Always OK.
  absl::Status RemoveContainer(const std::string& container_id);

  // podtopo additions for callers that restore or forget pods without container ids.
  void SetAffinity(const std::string& pod_uid, const std::string& container_name,
                   const TopologyHint& hint);
  void RemovePod(const std::string& pod_uid);

 private:
  AdmitResult AdmitNone(const Pod& pod, Operation op);
  AdmitResult AdmitContainer(const Pod& pod, Operation op);
  AdmitResult AdmitPod(const Pod& pod, Operation op);
  absl::Status AllocateAligned(const Pod& pod, const Container& container, Operation op);

  std::string scope_name_;
  std::unique_ptr<Policy> policy_;
  ScopeGates gates_;
  std::vector<HintProvider*> providers_;
  std::vector<MergeResult> last_merges_;
  // policy_->Merge, remembered in last_merges_.
  const MergeResult& Merge(const ProvidersHints& hints);
  std::map<std::string, std::map<std::string, TopologyHint>> pod_topology_hints_;
  // container id -> (pod uid, container name)
  std::map<std::string, std::pair<std::string, std::string>> container_map_;
};

// The kubelet's NewManager(topology, policyName, scopeName, options):
//   policy "none" -> none scope (scope name and options are not checked);
//   else NewPolicy (policy.h: option, NUMA and node-count errors, `unknown policy: "x"`),
//   then the scope: "container" | "pod", else `unknown scope: "x"`.
absl::StatusOr<std::unique_ptr<Manager>> NewManager(
    const std::vector<NUMANode>& topology, const std::string& policy_name,
    const std::string& scope_name, const std::map<std::string, std::string>& options,
    const PolicyOptionGates& option_gates = {}, const ScopeGates& scope_gates = {});

}  // namespace podtopo::topologymanager

#endif  // PODTOPO_TOPOLOGYMANAGER_SCOPE_H_
