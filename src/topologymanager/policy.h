// Topology Manager policies and their hint merge (kubelet topologymanager/policy*.go).
//
// A Policy merges the TopologyHints of every hint provider into one hint and decides admission:
//
//   none              Merge is not consulted by the manager; returns {nil, false}, admit.
//   best-effort       the best merged hint; always admit.
//   restricted        as best-effort; admit iff the hint is preferred.
//   single-numa-node  only preferred single-node (or nil) hints take part; a result spanning
//                     every node is returned with a nil affinity; admit iff preferred.
//
// Provider hints keep the kubelet's nil / empty distinctions:
//   ProviderHints nullopt or an empty map -> the provider has no preference at all;
//   HintList nullopt                      -> no preference for that resource;
//   HintList empty vector                 -> no possible placement for that resource.
//
// Resource order: the kubelet walks each provider's map in Go's random order. podtopo walks
// resources in ascending name order (std::map). The merged hint does not depend on that order
// (see policy.cc: the kubelet's fold over all permutations picks the minimum of a fixed total
// order on the merged masks), so this only fixes the order of log lines.
//
// Speed: the kubelet walks the cartesian product of all hint lists ((2^N-1)^4 permutations for
// 4 providers listing every mask of N nodes: 258 s at N = 8). podtopo computes the same hint
// without walking the product. The preferred case costs O(total hints x lists); otherwise the
// distinct merged masks are built list by list: O(sum over lists of |set| x |list|) with
// |set| <= min(2^N, product of the list sizes so far), so never more than the kubelet's walk,
// and tens of microseconds for the kubelet-perf inputs (bench/topology_merge_benchmark.cc).
// internal::HintMerger::MergeExhaustive keeps the kubelet's walk as a reference for tests.
// When a provider's lists are HintSets by structure (the CPU, memory and device managers'),
// the merge never lists them: it searches the candidate masks in the order in which the
// kubelet's fold would keep them and stops at the first one some permutation produces
// (policy.cc, "Structured merge"); internal::MergeEnumerated is its oracle.
//
// Example:
//   absl::StatusOr<std::unique_ptr<Policy>> policy =
//       NewPolicy("restricted", {{0, {}}, {1, {}}}, /*options=*/{});
//   std::map<std::string, HintList> cpu;
//   cpu["cpu"] = std::vector<TopologyHint>{{*NewBitMask({0}), true}, {*NewBitMask({0, 1}), false}};
//   MergeResult r = (*policy)->Merge({cpu});   // r.hint = {{0}, true}, r.admit = true
#ifndef PODTOPO_TOPOLOGYMANAGER_POLICY_H_
#define PODTOPO_TOPOLOGYMANAGER_POLICY_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "topologymanager/hint_set.h"
#include "topologymanager/numa_info.h"
#include "topologymanager/policy_options.h"
#include "topologymanager/topology_hint.h"

namespace podtopo::topologymanager {

inline constexpr char kPolicyNone[] = "none";
inline constexpr char kPolicyBestEffort[] = "best-effort";
inline constexpr char kPolicyRestricted[] = "restricted";
inline constexpr char kPolicySingleNumaNode[] = "single-numa-node";

// One resource's hints: nullopt = nil list (no preference), an empty set = no possible hint.
// A HintSet is either a plain list or the structure of the provider's 2^N masks (hint_set.h).
using HintList = std::optional<HintSet>;
// One provider's answer: nullopt = nil map. Resources are walked in name order.
using ProviderHints = std::optional<std::map<std::string, HintList>>;
// Every provider's answer, in provider (registration) order.
using ProvidersHints = std::vector<ProviderHints>;

struct MergeResult {
  TopologyHint hint;
  bool admit = false;
};

class Policy {
 public:
  virtual ~Policy() = default;
  // "none", "best-effort", "restricted" or "single-numa-node".
  virtual const std::string& Name() const = 0;
  // The merged hint and the admission decision for the given provider hints.
  virtual MergeResult Merge(const ProvidersHints& providers_hints) const = 0;
};

std::unique_ptr<Policy> NewNonePolicy();
std::unique_ptr<Policy> NewBestEffortPolicy(NUMAInfo numa_info, PolicyOptions opts);
std::unique_ptr<Policy> NewRestrictedPolicy(NUMAInfo numa_info, PolicyOptions opts);
// Ignores prefer-closest-numa-nodes (as the kubelet does).
std::unique_ptr<Policy> NewSingleNumaNodePolicy(NUMAInfo numa_info, PolicyOptions opts);

// The policy part of the kubelet's NewManager, in its order:
//   1. "none" -> the none policy (options and topology are not looked at);
//   2. options (NewPolicyOptions errors);
//   3. NUMAInfo::Create, wrapped as "cannot discover NUMA topology: <err>";
//   4. more nodes than max-allowable-numa-nodes ->
//      "unsupported on machines with more than 8 NUMA Nodes";
//   5. unknown name -> `unknown policy: "<name>"`.
absl::StatusOr<std::unique_ptr<Policy>> NewPolicy(const std::string& policy_name,
                                                  const std::vector<NUMANode>& topology,
                                                  const std::map<std::string, std::string>& options,
                                                  const PolicyOptionGates& gates = {});

// IsAlignmentGuaranteed: only single-numa-node guarantees NUMA alignment.
inline bool IsAlignmentGuaranteed(const Policy& policy) {
  return policy.Name() == kPolicySingleNumaNode;
}

}  // namespace podtopo::topologymanager

#endif  // PODTOPO_TOPOLOGYMANAGER_POLICY_H_
