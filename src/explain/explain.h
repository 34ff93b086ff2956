// Explain: why a pod is admitted where it is, or why it is rejected, in words a user
// understands (`podtopo explain`, `podtopo admit -o wide`, `podtopo demo`).
//
// An Explanation is built from the trace of an admission (admission/trace.h) and says, per pod:
//   - the QoS class and why (KEP-2837 rules with pod-level resources);
//   - for every container whether it gets exclusive CPUs (a slice of the pod's CPUs or its
//     own), the pod shared pool or the node shared pool, and why;
//   - each provider's hints per resource and the merged hint;
//   - for a rejection: every NUMA mask the policy tried and why it failed ("cpu: need 6, free 4
//     on NUMA 1"), the rule that decided, and (ExplainPods only) the smallest changes that
//     would fit, each checked by re-running the admission: a smaller request, another policy,
//     an empty node of the same shape.
//
// Example:
//   auto ex = explain::ExplainPods({topology, config, state_dir}, pods);
//   std::cout << explain::RenderText((*ex)[0]);
//   explain::ToJson((*ex)[0]);   // the stable `-o json` object
//
// Thread safety: functions only; no shared state.
#ifndef PODTOPO_EXPLAIN_EXPLAIN_H_
#define PODTOPO_EXPLAIN_EXPLAIN_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "admission/node.h"
#include "config/kubelet_config.h"
#include "nlohmann/json.hpp"
#include "topology/node_topology.h"
#include "topologymanager/hint_set.h"

namespace podtopo::explain {

// A hint: NUMA nodes (nullopt = any node, the kubelet's nil affinity) and preference.
struct HintView {
  std::optional<std::vector<int>> numa;
  bool preferred = false;
};

// One provider's hints for one resource.
struct ResourceHints {
  std::string provider;  // "devices", "cpu", "memory"
  std::string resource;  // "cpu", "memory", "hugepages-1Gi", "example.com/gpu"; "" = all
  // "hints", "no-preference" (the provider does not care) or "no-placement" (empty list:
  // nothing can satisfy the request).
  std::string state;
  std::string request;  // "6 CPUs", "2Gi", "2" ("" when not known)
  // Every hint when the provider's masks are few (at most kListedNumaNodes NUMA nodes);
  // otherwise only the preferred ones (at most kListedHints) and `summarized` is set.
  std::vector<HintView> hints;
  bool summarized = false;
  // The provider's hints as the merge saw them (tests which masks fit).
  std::optional<topologymanager::HintSet> set;
};
inline constexpr int kListedNumaNodes = 8;
inline constexpr size_t kListedHints = 64;

// One NUMA mask the policy tried.
struct MaskCheck {
  std::vector<int> numa;
  bool fits = false;       // every resource offered a hint on exactly this mask
  bool preferred = false;  // ... and every such hint is preferred
  std::vector<std::string> why;  // one line per failing or non-preferred resource
};

// One Topology Manager merge (the pod in pod scope, each container in container scope).
struct Step {
  std::string container;  // "" = the pod
  std::vector<ResourceHints> hints;
  HintView merged;
  bool admit = false;
  std::vector<MaskCheck> masks;  // the masks the policy tried (all, or single nodes)
  int masks_total = 0;           // before any truncation in text
};

struct ContainerView {
  std::string name;
  std::string kind;       // "init", "sidecar", "app", "ephemeral"
  // "exclusive" (its own CPUs from the node), "pod-exclusive" (a slice of the pod's CPUs),
  // "pod-shared" (the pod's shared pool) or "node-shared" (the node's shared pool).
  std::string placement;
  std::string cpus;       // its cpuset when admitted ("" when rejected)
  int exclusive_cpus = 0; // the CPU Manager's guaranteedCPUs
  std::string memory;     // "exclusive 2Gi", "pod budget", "" (not pinned)
  std::string why;
  // Why some of its exclusive CPUs lie outside its merged hint's NUMA nodes ("" when none do):
  // align-by-socket aligned them with the hint's socket, or the hint's CPUs were too few.
  std::string cpus_off_hint;
};

struct Suggestion {
  // "smaller-request", "policy", "cpu-policy-option", "empty-node", "larger-budget", "node"
  // ("node": even an empty node of this shape rejects the pod, and what would help; a
  // TopologyAffinityError's "larger NUMA nodes" is said only when checked, with this node's
  // resources as one NUMA node).
  std::string kind;
  std::string text;
  bool verified = false;  // re-running the admission with the change admitted the pod
};

struct Explanation {
  std::string pod;  // namespace/name
  bool admitted = false;
  std::string reason;
  std::string message;
  std::string qos;
  std::string qos_why;
  std::string policy;  // topologyManagerPolicy
  std::string scope;   // the scope that ran ("container", "pod", "none")
  bool pod_level = false;
  std::string pod_cpus;  // the pod's CPUs (bubble) when admitted
  std::string pod_cpus_off_hint;  // as ContainerView::cpus_off_hint, for the pod's CPUs
  std::string pod_budget;  // "2 CPUs, memory 2Gi" on the pod-level path
  std::vector<ContainerView> containers;
  std::vector<Step> steps;
  std::optional<NodeFitShortage> node_fit;
  std::optional<AllocationFailure> allocation_failure;
  std::string decision;  // the rule that decided, in words
  std::vector<Suggestion> suggestions;
  std::string note;      // e.g. "already admitted on this node"
  // The kubelet version predicted ("" = none) and what that version does differently with this
  // pod, each naming the upstream issue and the versions that fix it (VersionNotes).
  std::string kubelet_version;
  std::vector<std::string> version_notes;
};

// What config.kubelet_version does differently with `pod` once admitted (kubelet/version.h):
//   "kubelet 1.37.0 allocates this pod's CPUs again when it restarts (k/k #140989, fixed by
//    k/k #141041 in 1.38): the running pod is moved or rejected; `podtopo state restart` shows it"
// Empty for a version without such a difference, or with no version.
std::vector<std::string> VersionNotes(const Pod& pod, const config::KubeletConfig& config);

// The explanation of one admission result (no what-if suggestions). `result.trace` may be null
// (a pod reported as already admitted): the explanation then says so.
Explanation Explain(const PodAllocation& result);

// The node an explanation runs on.
struct Scenario {
  NodeTopology topology;
  config::KubeletConfig config;
  std::string state_dir;  // read, never written; "" = an empty node
};

// Explains `pods` in order, as if admitted one after another on the scenario's node (each pod
// sees the pods admitted before it). A pod the state dir holds with another spec is admitted
// again as Node::Admit does (its note says so). Rejected pods get suggestions, each checked by
// re-running the admission on a copy of the node. Errors: the node cannot be created (config, state dir),
// or a pod conflicts with an admitted one (Node::Admit errors).
absl::StatusOr<std::vector<Explanation>> ExplainPods(const Scenario& scenario,
                                                     const std::vector<Pod>& pods);

// Human-readable text, several lines, ending with a newline.
std::string RenderText(const Explanation& explanation);
// The stable `-o json` object (schema in docs/explain.md).
nlohmann::ordered_json ToJson(const Explanation& explanation);
// {"pods": [...]} pretty-printed, with a trailing newline.
std::string RenderJson(const std::vector<Explanation>& explanations);

// "NUMA 0,1"; "any NUMA node" for nullopt.
std::string FormatNuma(const std::optional<std::vector<int>>& numa);
// "2Gi", "1536Mi", "512".
std::string FormatSize(uint64_t bytes);

}  // namespace podtopo::explain

#endif  // PODTOPO_EXPLAIN_EXPLAIN_H_
