// Internals of the Topology Manager merge, exposed for tests and benchmarks only.
//
// These are the kubelet's unexported helpers (filterProvidersHints, filterSingleNumaHints,
// maxOfMinAffinityCounts, mergePermutation, HintMerger.compare / Merge) plus podtopo's fast
// merge and the pieces it is built from. Production code uses Policy (policy.h).
//
// Example (test):
//   internal::HintLists lists = internal::FilterProvidersHints(providers);
//   internal::HintMerger merger(&numa_info, lists, kPolicyBestEffort, opts);
//   EXPECT_EQ(merger.Merge(), merger.MergeExhaustive());
#ifndef PODTOPO_TOPOLOGYMANAGER_POLICY_INTERNAL_H_
#define PODTOPO_TOPOLOGYMANAGER_POLICY_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "topologymanager/numa_info.h"
#include "topologymanager/policy.h"
#include "topologymanager/policy_options.h"
#include "topologymanager/topology_hint.h"

namespace podtopo::topologymanager::internal {

using HintLists = std::vector<std::vector<TopologyHint>>;

// filterProvidersHints: one list per (provider, resource); HintSets by structure are
// enumerated (HintSet::Enumerate, exponential: the oracle's path). A nil or empty provider map gives
// [{nil, true}]; a nil resource list [{nil, true}]; an empty one [{nil, false}]. Resources in
// name order.
HintLists FilterProvidersHints(const ProvidersHints& providers_hints);

// filterSingleNumaHints: keeps the preferred hints whose affinity is nil or a single node. A
// list may become empty.
HintLists FilterSingleNumaHints(const HintLists& lists);

// maxOfMinAffinityCounts: the maximum over lists of the popcount of the list's narrowest
// non-nil affinity (lists without one are skipped); 0 when there is none.
int MaxOfMinAffinityCounts(const HintLists& lists);

// mergePermutation: default AND every non-nil affinity; preferred iff every hint is preferred
// and every non-nil affinity equals the first one.
TopologyHint MergePermutation(BitMask default_affinity,
                              const std::vector<const TopologyHint*>& permutation);

// How the fast merge enumerates the distinct merged masks of the non-preferred case.
enum class ClosureStrategy {
  kAuto,            // pick by size (what Merge uses)
  kSparse,          // sorted vector of masks, pairwise ANDs
  kDensePairwise,   // bitmap over the default mask's subsets, pairwise ANDs
  kDenseTransform,  // bitmap, AND-convolution through superset sums
};

// The distinct non-zero values of (default AND one mask from each list), ascending. `lists`
// holds, per hint list, its distinct contributions (nil already replaced by the default mask);
// every value must be a subset of `default_mask`. Empty when some list can only give 0.
std::vector<uint64_t> AchievableMerges(uint64_t default_mask,
                                       std::vector<std::vector<uint64_t>> lists,
                                       ClosureStrategy strategy = ClosureStrategy::kAuto);

// The kubelet's HintMerger.
class HintMerger {
 public:
  // bestNonPreferredAffinityCount = MaxOfMinAffinityCounts(hints). `numa_info` must outlive
  // the merger. Masks are compared with NUMAInfo::Closest when prefer_closest_numa is set and
  // the policy is not single-numa-node, else with NUMAInfo::Narrowest.
  HintMerger(const NUMAInfo* numa_info, HintLists hints, const std::string& policy_name,
             const PolicyOptions& opts);

  int best_non_preferred_affinity_count() const { return best_non_preferred_affinity_count_; }
  void set_best_non_preferred_affinity_count(int count) {
    best_non_preferred_affinity_count_ = count;
  }

  // compare(current, candidate): returns `current` or `candidate`. `current` null = no best hint
  // yet. A nil affinity counts as empty here (the kubelet never passes one).
  const TopologyHint* Compare(const TopologyHint* current, const TopologyHint* candidate) const;

  // The kubelet's Merge: folds Compare over every permutation of the hint lists (first list
  // outermost); {default, false} when no candidate survives. Exponential; tests only.
  TopologyHint MergeExhaustive() const;

  // The same result computed without walking the product (see policy.cc for the argument).
  TopologyHint Merge() const;

 private:
  // CompareNUMAAffinityMasks on two different masks: true when `a` wins over `b`.
  bool MaskBetter(BitMask a, BitMask b) const;
  // The total order the fold minimises among non-preferred candidates.
  bool NonPreferredBetter(BitMask a, BitMask b) const;

  const NUMAInfo* numa_info_;
  HintLists hints_;
  bool use_closest_;
  int best_non_preferred_affinity_count_;
};

// Policy merge with the kubelet's exhaustive walk (reference for tests and benchmarks).
MergeResult MergeExhaustive(const std::string& policy_name, const NUMAInfo& numa_info,
                            const PolicyOptions& opts, const ProvidersHints& providers_hints);
// Policy merge with every HintSet enumerated, then the fast list merge (the oracle for the
// structured merge where the kubelet's walk is too slow).
MergeResult MergeEnumerated(const std::string& policy_name, const NUMAInfo& numa_info,
                            const PolicyOptions& opts, const ProvidersHints& providers_hints);
// Policy merge with the fast algorithm (what Policy::Merge runs): the list merge when every
// list is a plain list, else the structured merge.
MergeResult MergeFast(const std::string& policy_name, const NUMAInfo& numa_info,
                      const PolicyOptions& opts, const ProvidersHints& providers_hints);

}  // namespace podtopo::topologymanager::internal

#endif  // PODTOPO_TOPOLOGYMANAGER_POLICY_INTERNAL_H_
