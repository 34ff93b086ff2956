// Topology Manager policies and the hint merge.
//
// Why the fast merge returns exactly the kubelet's hint
// -----------------------------------------------------
// The kubelet folds best = compare(best, merged(p)) over every permutation p of the hint lists.
// Let B = bestNonPreferredAffinityCount, count(m) = popcount, and let "m1 beats m2" (for
// m1 != m2) mean CompareNUMAAffinityMasks picks m1: with Narrowest that is the order by
// (count, value); with Closest it is the order by (count, average distance, value) — Closest
// falls back to Narrowest when counts differ, so count still comes first. Both are strict total
// orders on masks (averages are plain doubles, never NaN).
//
// 1. Candidates with count 0 are ignored; a preferred candidate always replaces a
//    non-preferred best and is never replaced by one. So if any preferred candidate exists the
//    result is preferred, and among preferred candidates compare() is "keep current unless the
//    candidate's mask beats it": the fold returns the minimum preferred mask under the order.
//
// 2. Among non-preferred candidates (c = count(current), k = count(candidate)), compare() is
//    exactly "keep current unless the candidate is strictly better" for this total order:
//      masks with 1 <= count <= B come first, ordered by larger count, then by the mask order;
//      masks with count > B come after, ordered by the mask order.
//    Checking every branch of compare():
//      c > B:  cmpMasks. If k <= B the candidate has the smaller count, so it wins: it is in the
//              first group, hence better. If k > B both are in the second group: mask order.
//      c == B: k != B keeps current (k > B: second group; k < B: smaller count in the first
//              group is worse); k == B: cmpMasks, same count, mask order.
//      c < B:  k > B keeps current (second group); k == B takes the candidate (larger count);
//              c < k < B takes it; k < c keeps current; k == c: cmpMasks.
//    A fold that keeps the current element unless a strictly better one arrives returns the
//    minimum, whatever the visiting order. So the kubelet's result depends only on the SET of
//    merged masks, not on the permutation order (nor on Go's map order). Equal masks keep the
//    current hint, which has the same mask and preference, so the hint is the same too.
//
// 3. The preferred merged masks are computable directly: a permutation is preferred iff every
//    hint is preferred and all its non-nil affinities are one mask a (merged = default & a), or
//    all are nil (merged = default). So a qualifies iff every list holds {a, preferred} or
//    {nil, preferred}.
//
// 4. The set of non-preferred merged masks (when no preferred candidate survived, every
//    non-zero merged mask is non-preferred) is the AND-closure default & a_1 & ... & a_n over
//    the lists' distinct masks; it has at most 2^N elements and is built list by list
//    (AchievableMerges), never touching the product.
//
// policy_test.cc checks this against HintMerger::MergeExhaustive on many random inputs.
#include "topologymanager/policy.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "fmt/format.h"
#include "topologymanager/policy_internal.h"

namespace podtopo::topologymanager {
namespace internal {

HintLists FilterProvidersHints(const ProvidersHints& providers_hints) {
  HintLists lists;
  for (const ProviderHints& hints : providers_hints) {
    if (!hints.has_value() || hints->empty()) {
      lists.push_back({TopologyHint{std::nullopt, true}});
      continue;
    }
    for (const auto& [resource, list] : *hints) {
      if (!list.has_value()) {
        lists.push_back({TopologyHint{std::nullopt, true}});
      } else if (list->empty()) {
        lists.push_back({TopologyHint{std::nullopt, false}});
      } else {
        lists.push_back(*list);
      }
    }
  }
  return lists;
}

HintLists FilterSingleNumaHints(const HintLists& lists) {
  HintLists filtered;
  filtered.reserve(lists.size());
  for (const auto& list : lists) {
    std::vector<TopologyHint> kept;
    for (const TopologyHint& hint : list) {
      if (!hint.preferred) continue;
      if (!hint.affinity.has_value() || hint.affinity->Count() == 1) kept.push_back(hint);
    }
    filtered.push_back(std::move(kept));
  }
  return filtered;
}

int MaxOfMinAffinityCounts(const HintLists& lists) {
  int max_of_min = 0;
  for (const auto& list : lists) {
    const TopologyHint* narrowest = nullptr;
    for (const TopologyHint& hint : list) {
      if (!hint.affinity.has_value()) continue;
      if (narrowest == nullptr || hint.affinity->IsNarrowerThan(*narrowest->affinity)) {
        narrowest = &hint;
      }
    }
    if (narrowest != nullptr) max_of_min = std::max(max_of_min, narrowest->affinity->Count());
  }
  return max_of_min;
}

TopologyHint MergePermutation(BitMask default_affinity,
                              const std::vector<const TopologyHint*>& permutation) {
  bool preferred = true;
  std::optional<BitMask> first;
  BitMask merged = default_affinity;
  for (const TopologyHint* hint : permutation) {
    if (hint->affinity.has_value()) {
      if (!first.has_value()) first = *hint->affinity;
      if (!hint->affinity->IsEqual(*first)) preferred = false;
      merged.And(*hint->affinity);
    }
    if (!hint->preferred) preferred = false;
  }
  return TopologyHint{merged, preferred};
}

namespace {

// Maps the bits of `mask` onto 0..popcount(mask)-1 (a software PEXT) and back.
class BitCompressor {
 public:
  explicit BitCompressor(uint64_t mask) : mask_(mask) {
    if (mask == 0) {
      shift_ = 0;
      contiguous_ = true;
      return;
    }
    shift_ = std::countr_zero(mask);
    uint64_t run = mask >> shift_;
    contiguous_ = (run & (run + 1)) == 0;
  }
  uint64_t Compress(uint64_t v) const {
    if (contiguous_) return (v & mask_) >> shift_;
    uint64_t out = 0;
    int k = 0;
    for (uint64_t m = mask_; m != 0; m &= m - 1, ++k) {
      if (v & (m & (~m + 1))) out |= uint64_t{1} << k;
    }
    return out;
  }
  uint64_t Expand(uint64_t v) const {
    if (contiguous_) return v << shift_;
    uint64_t out = 0;
    int k = 0;
    for (uint64_t m = mask_; m != 0; m &= m - 1, ++k) {
      if ((v >> k) & 1) out |= m & (~m + 1);
    }
    return out;
  }

 private:
  uint64_t mask_;
  int shift_;
  bool contiguous_;
};

constexpr int kMaxDenseBits = 20;

void SortUnique(std::vector<uint64_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// One AND step on a bitmap universe of 2^n compressed masks: next = {s & a != 0}, via
// superset sums: F(z) = #{s >= z}, G(z) = #{a >= z}; F*G counts pairs with s & a >= z, and the
// superset Moebius inverse gives the pairs with s & a == z. Exact in int64 for n <= 20.
std::vector<uint64_t> TransformStep(int n, const std::vector<uint64_t>& present,
                                    const std::vector<uint64_t>& contrib) {
  const size_t size = size_t{1} << n;
  std::vector<int64_t> f(size, 0), g(size, 0);
  for (uint64_t s : present) f[s] = 1;
  for (uint64_t a : contrib) g[a] = 1;
  for (int bit = 0; bit < n; ++bit) {
    const size_t b = size_t{1} << bit;
    for (size_t x = 0; x < size; ++x) {
      if ((x & b) == 0) {
        f[x] += f[x | b];
        g[x] += g[x | b];
      }
    }
  }
  for (size_t x = 0; x < size; ++x) f[x] *= g[x];
  for (int bit = 0; bit < n; ++bit) {
    const size_t b = size_t{1} << bit;
    for (size_t x = 0; x < size; ++x) {
      if ((x & b) == 0) f[x] -= f[x | b];
    }
  }
  std::vector<uint64_t> next;
  for (size_t z = 1; z < size; ++z) {
    if (f[z] > 0) next.push_back(z);
  }
  return next;
}

}  // namespace

std::vector<uint64_t> AchievableMerges(uint64_t default_mask,
                                       std::vector<std::vector<uint64_t>> lists,
                                       ClosureStrategy strategy) {
  if (default_mask == 0) return {};
  // The set does not depend on the order of the lists; small lists first keep it small.
  for (auto& list : lists) {
    list.erase(std::remove(list.begin(), list.end(), uint64_t{0}), list.end());
    SortUnique(list);
    if (list.empty()) return {};
  }
  std::stable_sort(lists.begin(), lists.end(),
                   [](const auto& a, const auto& b) { return a.size() < b.size(); });

  const int n = std::popcount(default_mask);
  if (n > kMaxDenseBits || strategy == ClosureStrategy::kSparse) {
    std::vector<uint64_t> present = {default_mask};
    absl::flat_hash_set<uint64_t> next;
    for (const auto& list : lists) {
      next.clear();
      for (uint64_t s : present) {
        for (uint64_t a : list) {
          if (uint64_t z = s & a; z != 0) next.insert(z);
        }
      }
      if (next.empty()) return {};
      present.assign(next.begin(), next.end());
    }
    SortUnique(present);
    return present;
  }

  BitCompressor compressor(default_mask);
  const size_t size = size_t{1} << n;
  std::vector<uint64_t> present = {size - 1};
  std::vector<uint8_t> seen;  // bitmap scratch for pairwise steps, all zero between steps
  for (const auto& raw : lists) {
    std::vector<uint64_t> contrib;
    contrib.reserve(raw.size());
    for (uint64_t a : raw) contrib.push_back(compressor.Compress(a));
    const double pair_work = static_cast<double>(present.size()) * contrib.size();
    const double transform_work = 4.0 * n * static_cast<double>(size);
    bool transform = strategy == ClosureStrategy::kDenseTransform ||
                     (strategy == ClosureStrategy::kAuto && pair_work > transform_work);
    std::vector<uint64_t> next;
    if (transform) {
      next = TransformStep(n, present, contrib);
    } else {
      if (seen.empty()) seen.assign(size, 0);
      for (uint64_t s : present) {
        for (uint64_t a : contrib) {
          uint64_t z = s & a;
          if (z != 0 && !seen[z]) {
            seen[z] = 1;
            next.push_back(z);
          }
        }
      }
      for (uint64_t z : next) seen[z] = 0;
    }
    if (next.empty()) return {};
    present.swap(next);
  }
  std::vector<uint64_t> out;
  out.reserve(present.size());
  for (uint64_t z : present) out.push_back(compressor.Expand(z));
  SortUnique(out);
  return out;
}

HintMerger::HintMerger(const NUMAInfo* numa_info, HintLists hints,
                       const std::string& policy_name, const PolicyOptions& opts)
    : numa_info_(numa_info),
      hints_(std::move(hints)),
      use_closest_(policy_name != kPolicySingleNumaNode && opts.prefer_closest_numa),
      best_non_preferred_affinity_count_(MaxOfMinAffinityCounts(hints_)) {}

bool HintMerger::MaskBetter(BitMask a, BitMask b) const {
  if (a == b) return false;
  BitMask best = use_closest_ ? numa_info_->Closest(b, a) : numa_info_->Narrowest(b, a);
  return best == a;
}

bool HintMerger::NonPreferredBetter(BitMask a, BitMask b) const {
  const int bnp = best_non_preferred_affinity_count_;
  const int ca = a.Count(), cb = b.Count();
  const bool a_first = ca <= bnp, b_first = cb <= bnp;
  if (a_first != b_first) return a_first;
  if (a_first && ca != cb) return ca > cb;
  return MaskBetter(a, b);
}

const TopologyHint* HintMerger::Compare(const TopologyHint* current,
                                        const TopologyHint* candidate) const {
  auto count = [](const TopologyHint* h) { return h->affinity ? h->affinity->Count() : 0; };
  auto mask = [](const TopologyHint* h) { return h->affinity.value_or(BitMask()); };
  // CompareNUMAAffinityMasks: equal masks keep current; else the policy's mask order.
  auto compare_masks = [&]() {
    if (mask(candidate) == mask(current)) return current;
    BitMask best = use_closest_ ? numa_info_->Closest(mask(current), mask(candidate))
                                : numa_info_->Narrowest(mask(current), mask(candidate));
    return best == mask(current) ? current : candidate;
  };
  if (count(candidate) == 0) return current;
  if (current == nullptr) return candidate;
  if (!current->preferred && candidate->preferred) return candidate;
  if (current->preferred && !candidate->preferred) return current;
  if (current->preferred && candidate->preferred) return compare_masks();
  const int bnp = best_non_preferred_affinity_count_;
  const int c = count(current), k = count(candidate);
  if (c > bnp) return compare_masks();
  if (c == bnp) return k != bnp ? current : compare_masks();
  if (k > bnp) return current;
  if (k == bnp) return candidate;
  if (k > c) return candidate;
  if (k < c) return current;
  return compare_masks();
}

TopologyHint HintMerger::MergeExhaustive() const {
  const BitMask default_affinity = numa_info_->DefaultAffinityMask();
  std::optional<TopologyHint> best;
  std::vector<const TopologyHint*> permutation;
  permutation.reserve(hints_.size());
  std::function<void(size_t)> iterate = [&](size_t i) {
    if (i == hints_.size()) {
      TopologyHint merged = MergePermutation(default_affinity, permutation);
      const TopologyHint* winner = Compare(best ? &*best : nullptr, &merged);
      if (winner == &merged) best = merged;
      return;
    }
    for (const TopologyHint& hint : hints_[i]) {
      permutation.push_back(&hint);
      iterate(i + 1);
      permutation.pop_back();
    }
  };
  iterate(0);
  if (!best.has_value()) return TopologyHint{default_affinity, false};
  return *best;
}

TopologyHint HintMerger::Merge() const {
  const BitMask default_affinity = numa_info_->DefaultAffinityMask();
  const uint64_t dv = default_affinity.value();
  const TopologyHint fallback{default_affinity, false};
  // No lists: one empty permutation, merged = default, preferred.
  if (hints_.empty()) return dv == 0 ? fallback : TopologyHint{default_affinity, true};
  for (const auto& list : hints_) {
    if (list.empty()) return fallback;  // no permutation at all
  }

  // Preferred candidates (argument, point 3).
  struct Preferred {
    std::vector<uint64_t> masks;
    bool nil = false;
  };
  std::vector<Preferred> preferred(hints_.size());
  for (size_t i = 0; i < hints_.size(); ++i) {
    for (const TopologyHint& hint : hints_[i]) {
      if (!hint.preferred) continue;
      if (hint.affinity.has_value()) {
        preferred[i].masks.push_back(hint.affinity->value());
      } else {
        preferred[i].nil = true;
      }
    }
    SortUnique(preferred[i].masks);
  }
  std::optional<BitMask> best_preferred;
  auto consider = [&](uint64_t merged) {
    if (merged == 0) return;
    BitMask m = BitMask::FromUint64(merged);
    if (!best_preferred || MaskBetter(m, *best_preferred)) best_preferred = m;
  };
  int driver = -1;
  for (size_t i = 0; i < hints_.size(); ++i) {
    if (preferred[i].nil) continue;
    if (driver < 0 || preferred[i].masks.size() < preferred[driver].masks.size()) {
      driver = static_cast<int>(i);
    }
  }
  if (driver < 0) {
    // Every list has {nil, preferred}: the all-nil permutation, and any preferred mask taken
    // by some lists while the others say nil.
    consider(dv);
    for (const Preferred& p : preferred) {
      for (uint64_t a : p.masks) consider(dv & a);
    }
  } else {
    for (uint64_t a : preferred[driver].masks) {
      bool everywhere = true;
      for (const Preferred& p : preferred) {
        if (!p.nil && !std::binary_search(p.masks.begin(), p.masks.end(), a)) {
          everywhere = false;
          break;
        }
      }
      if (everywhere) consider(dv & a);
    }
  }
  if (best_preferred.has_value()) return TopologyHint{*best_preferred, true};

  // Non-preferred (points 2 and 4).
  std::vector<std::vector<uint64_t>> contributions(hints_.size());
  for (size_t i = 0; i < hints_.size(); ++i) {
    for (const TopologyHint& hint : hints_[i]) {
      contributions[i].push_back(hint.affinity ? (hint.affinity->value() & dv) : dv);
    }
  }
  std::vector<uint64_t> merges = AchievableMerges(dv, std::move(contributions));
  if (merges.empty()) return fallback;
  BitMask best = BitMask::FromUint64(merges.front());
  for (size_t i = 1; i < merges.size(); ++i) {
    BitMask m = BitMask::FromUint64(merges[i]);
    if (NonPreferredBetter(m, best)) best = m;
  }
  return TopologyHint{best, false};
}

namespace {

MergeResult MergeWith(const std::string& policy_name, const NUMAInfo& numa_info,
                      const PolicyOptions& opts, const ProvidersHints& providers_hints,
                      bool exhaustive) {
  if (policy_name == kPolicyNone) return MergeResult{TopologyHint{}, true};
  const bool single = policy_name == kPolicySingleNumaNode;
  HintLists lists = FilterProvidersHints(providers_hints);
  if (single) lists = FilterSingleNumaHints(lists);
  HintMerger merger(&numa_info, std::move(lists), policy_name, opts);
  TopologyHint hint = exhaustive ? merger.MergeExhaustive() : merger.Merge();
  if (single && hint.affinity.has_value() &&
      hint.affinity->IsEqual(numa_info.DefaultAffinityMask())) {
    hint.affinity = std::nullopt;
  }
  const bool admit = policy_name == kPolicyBestEffort ? true : hint.preferred;
  return MergeResult{hint, admit};
}

}  // namespace

MergeResult MergeExhaustive(const std::string& policy_name, const NUMAInfo& numa_info,
                            const PolicyOptions& opts, const ProvidersHints& providers_hints) {
  return MergeWith(policy_name, numa_info, opts, providers_hints, /*exhaustive=*/true);
}

MergeResult MergeFast(const std::string& policy_name, const NUMAInfo& numa_info,
                      const PolicyOptions& opts, const ProvidersHints& providers_hints) {
  return MergeWith(policy_name, numa_info, opts, providers_hints, /*exhaustive=*/false);
}

}  // namespace internal

namespace {

class NonePolicy : public Policy {
 public:
  std::string Name() const override { return kPolicyNone; }
  MergeResult Merge(const ProvidersHints&) const override {
    return MergeResult{TopologyHint{}, true};
  }
};

class MergingPolicy : public Policy {
 public:
  MergingPolicy(std::string name, NUMAInfo numa_info, PolicyOptions opts)
      : name_(std::move(name)), numa_info_(std::move(numa_info)), opts_(opts) {}
  std::string Name() const override { return name_; }
  MergeResult Merge(const ProvidersHints& providers_hints) const override {
    return internal::MergeFast(name_, numa_info_, opts_, providers_hints);
  }

 private:
  std::string name_;
  NUMAInfo numa_info_;
  PolicyOptions opts_;
};

}  // namespace

std::unique_ptr<Policy> NewNonePolicy() { return std::make_unique<NonePolicy>(); }

std::unique_ptr<Policy> NewBestEffortPolicy(NUMAInfo numa_info, PolicyOptions opts) {
  return std::make_unique<MergingPolicy>(kPolicyBestEffort, std::move(numa_info), opts);
}

std::unique_ptr<Policy> NewRestrictedPolicy(NUMAInfo numa_info, PolicyOptions opts) {
  return std::make_unique<MergingPolicy>(kPolicyRestricted, std::move(numa_info), opts);
}

std::unique_ptr<Policy> NewSingleNumaNodePolicy(NUMAInfo numa_info, PolicyOptions opts) {
  return std::make_unique<MergingPolicy>(kPolicySingleNumaNode, std::move(numa_info), opts);
}

absl::StatusOr<std::unique_ptr<Policy>> NewPolicy(const std::string& policy_name,
                                                  const std::vector<NUMANode>& topology,
                                                  const std::map<std::string, std::string>& options,
                                                  const PolicyOptionGates& gates) {
  if (policy_name == kPolicyNone) return NewNonePolicy();
  absl::StatusOr<PolicyOptions> opts = NewPolicyOptions(options, gates);
  if (!opts.ok()) return opts.status();
  absl::StatusOr<NUMAInfo> numa_info = NUMAInfo::Create(topology, opts->prefer_closest_numa);
  if (!numa_info.ok()) {
    return absl::InvalidArgumentError(fmt::format("cannot discover NUMA topology: {}",
                                                  std::string(numa_info.status().message())));
  }
  if (static_cast<int64_t>(numa_info->nodes().size()) > opts->max_allowable_numa_nodes) {
    return absl::InvalidArgumentError(fmt::format(
        "unsupported on machines with more than {} NUMA Nodes", opts->max_allowable_numa_nodes));
  }
  if (policy_name == kPolicyBestEffort) return NewBestEffortPolicy(*std::move(numa_info), *opts);
  if (policy_name == kPolicyRestricted) return NewRestrictedPolicy(*std::move(numa_info), *opts);
  if (policy_name == kPolicySingleNumaNode) {
    return NewSingleNumaNodePolicy(*std::move(numa_info), *opts);
  }
  return absl::InvalidArgumentError(fmt::format("unknown policy: \"{}\"", policy_name));
}

}  // namespace podtopo::topologymanager
