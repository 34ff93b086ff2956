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
#include "util/popcount.h"

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
        lists.push_back(list->Enumerate());
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

  const int n = PopCount64(default_mask);
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

// ---- Structured merge ----
//
// The same result as HintMerger::Merge, for lists that are HintSets by structure. By the
// argument at the top of this file the merged hint is the minimum of a fixed total order over
// the SET of merged masks; so the masks are visited in that order and the first one some
// permutation produces is the answer:
//   - preferred: masks a preferred by every list that has no {nil, preferred} hint, searched
//     by width (count first in both mask orders), then within a width in ascending value
//     (Narrowest: the first hit wins; Closest: every hit of that width is compared);
//   - otherwise widths B, B-1, ..., 1, then B+1, ..., N (B = bestNonPreferredAffinityCount),
//     each in mask order, and a mask m counts when some choice of one hint per list ANDs to
//     exactly m (Achievable).
// Achievable(m): every list must offer a hint containing m. A list's explicit masks (its
// listed hints, its extra masks) exclude fixed nodes; a list's family can exclude any set S of
// nodes outside m with domain \ S still in the family, i.e. the weights of S fit in the rules'
// slack (sum over the domain minus the need) and S avoids the required nodes. Covering the
// nodes outside m with such sets is a small bin packing (bins = lists), solved by search.
namespace {

struct MergeList {
  const HintSet* set = nullptr;     // structured; nullptr for a listed list
  std::vector<TopologyHint> hints;  // the listed hints
  bool singles = false;             // single-numa-node: only preferred one-node masks of `set`
  bool nil_preferred = false;       // listed and holds {nil, preferred}
};

class StructuredMerge {
 public:
  StructuredMerge(const NUMAInfo& numa_info, std::vector<MergeList> lists, bool use_closest,
                  bool single)
      : numa_info_(numa_info),
        lists_(std::move(lists)),
        use_closest_(use_closest),
        single_(single),
        dv_(numa_info.DefaultAffinityMask().value()) {}

  TopologyHint Merge() const {
    const TopologyHint fallback{BitMask::FromUint64(dv_), false};
    for (const MergeList& l : lists_) {
      if (l.set == nullptr && l.hints.empty()) return fallback;  // no permutation at all
    }
    if (std::optional<uint64_t> p = BestPreferred()) {
      return TopologyHint{BitMask::FromUint64(*p), true};
    }
    if (single_) return fallback;  // only distinct single nodes left: every AND is empty
    if (std::optional<uint64_t> n = BestNonPreferred()) {
      return TopologyHint{BitMask::FromUint64(*n), false};
    }
    return fallback;
  }

 private:
  // CompareNUMAAffinityMasks on different masks: true when `a` wins.
  bool Better(uint64_t a, uint64_t b) const {
    if (a == b) return false;
    BitMask ma = BitMask::FromUint64(a), mb = BitMask::FromUint64(b);
    BitMask best = use_closest_ ? numa_info_.Closest(mb, ma) : numa_info_.Narrowest(mb, ma);
    return best == ma;
  }

  bool ListPreferred(const MergeList& l, uint64_t a) const {
    if (l.set == nullptr) {
      for (const TopologyHint& h : l.hints) {
        if (h.preferred && h.affinity.has_value() && h.affinity->value() == a) return true;
      }
      return false;
    }
    if (l.singles && PopCount64(a) != 1) return false;
    return l.set->Preferred(a);
  }

  // Visits the masks of `count` bits found by `search` in mask order: Narrowest stops at the
  // first, Closest compares all of them.
  void Consider(const MaskSearch& search, int count, std::optional<uint64_t>& best) const {
    SearchMasks(search, count, [&](uint64_t m) {
      if (!best || Better(m, *best)) best = m;
      return !use_closest_;
    });
  }

  std::optional<uint64_t> BestPreferred() const {
    std::vector<const MergeList*> strict;  // lists without {nil, preferred}
    strict.reserve(lists_.size());
    for (const MergeList& l : lists_) {
      if (!l.nil_preferred) strict.push_back(&l);
    }
    std::optional<uint64_t> best;
    auto consider = [&](uint64_t a) {
      for (const MergeList* l : strict) {
        if (!ListPreferred(*l, a)) return;
      }
      uint64_t merged = dv_ & a;
      if (merged != 0 && (!best || Better(merged, *best))) best = merged;
    };
    const MergeList* listed = nullptr;
    for (const MergeList* l : strict) {
      if (l->set == nullptr && (listed == nullptr || l->hints.size() < listed->hints.size())) {
        listed = l;
      }
    }
    if (listed != nullptr) {
      for (const TopologyHint& h : listed->hints) {
        if (h.preferred && h.affinity.has_value()) consider(h.affinity->value());
      }
      return best;
    }
    // Every strict list is structured (there is one: a structured list has no nil hint).
    bool all_families = true;
    for (const MergeList* l : strict) {
      for (uint64_t e : l->set->extra()) consider(e);
      if (!l->set->family().has_value()) all_families = false;
    }
    if (!all_families) return best;
    MaskSearch search;
    search.allowed = dv_;
    size_t rule_count = 0;
    for (const MergeList* l : strict) rule_count += l->set->family()->rules.size();
    search.rules.reserve(rule_count);
    std::optional<int> fixed;
    bool counts_agree = true, any_socket = false;
    for (const MergeList* l : strict) {
      const MaskFamily& f = *l->set->family();
      search.allowed &= f.domain;
      search.required |= f.required;
      for (const CoverRule& r : f.rules) search.rules.push_back(&r);
      const PreferenceRule& p = l->set->preference();
      std::optional<int> k;
      if (l->singles) k = 1;
      if (!p.sockets.has_value() || l->singles) {
        k = l->singles ? 1 : p.count;
      } else {
        any_socket = true;
      }
      if (k.has_value()) {
        if (fixed.has_value() && *fixed != *k) counts_agree = false;
        fixed = k;
      }
    }
    if (!counts_agree) return best;
    search.leaf = [&](uint64_t m) {
      for (const MergeList* l : strict) {
        if (!ListPreferred(*l, m)) return false;
      }
      return true;
    };
    const int lo = fixed.value_or(1), hi = fixed.value_or(PopCount64(search.allowed));
    for (int c = lo; c <= hi; ++c) {
      if (best && PopCount64(*best) < c) break;  // a narrower extra mask already won
      std::optional<uint64_t> found;
      if (any_socket) {
        MaskSearch at = search;
        for (const MergeList* l : strict) {
          const PreferenceRule& p = l->set->preference();
          if (p.sockets.has_value() && !l->singles && c != p.count) {
            at.socket_limits.push_back({&p, *p.sockets});
          }
        }
        Consider(at, c, found);
      } else {
        Consider(search, c, found);
      }
      if (found) {
        if (!best || Better(*found, *best)) best = found;
        break;
      }
    }
    return best;
  }

  std::optional<uint64_t> BestNonPreferred() const {
    int b = 0;
    uint64_t within = dv_;
    for (const MergeList& l : lists_) {
      int c = 0;
      if (l.set == nullptr) {
        // The narrowest non-nil affinity (an empty mask counts, with 0 nodes).
        std::optional<int> narrowest;
        for (const TopologyHint& h : l.hints) {
          if (h.affinity.has_value() && (!narrowest || h.affinity->Count() < *narrowest)) {
            narrowest = h.affinity->Count();
          }
        }
        c = narrowest.value_or(0);
      } else {
        c = l.set->MinCount();
        within &= l.set->nodes();
      }
      b = std::max(b, c);
    }
    MaskSearch search;
    search.allowed = within;
    search.leaf = [this](uint64_t m) { return Achievable(m); };
    const int n = PopCount64(within);
    std::vector<int> order;
    for (int c = std::min(b, n); c >= 1; --c) order.push_back(c);
    for (int c = b + 1; c <= n; ++c) order.push_back(c);
    for (int c : order) {
      std::optional<uint64_t> found;
      Consider(search, c, found);
      if (found) return found;
    }
    return std::nullopt;
  }

  // A family's bin in the packing of Achievable.
  struct Bin {
    const MaskFamily* family;
    std::vector<uint64_t> slack;  // per rule: sum over the domain minus the need
    int count_slack;              // nodes the family may drop
    uint64_t allowed;             // nodes it may drop
  };

  bool Achievable(uint64_t m) const {
    // Per list: the node sets its explicit hints containing m exclude, and whether its family
    // has a member containing m.
    std::vector<std::vector<uint64_t>> excludes(lists_.size());
    std::vector<bool> family(lists_.size(), false);
    bool exact = false;
    for (size_t i = 0; i < lists_.size(); ++i) {
      const MergeList& l = lists_[i];
      auto offer = [&](uint64_t aff) {
        aff &= dv_;
        if ((aff & m) != m) return;
        if (aff == m) exact = true;
        excludes[i].push_back(dv_ & ~aff);
      };
      if (l.set == nullptr) {
        for (const TopologyHint& h : l.hints) offer(h.affinity ? h.affinity->value() : dv_);
      } else {
        for (uint64_t e : l.set->extra()) offer(e);
        const std::optional<MaskFamily>& f = l.set->family();
        if (f.has_value() && (m & ~f->domain) == 0) {
          family[i] = true;
          if (f->Contains(m)) exact = true;
        }
      }
      if (excludes[i].empty() && !family[i]) return false;
      // Keep the widest exclusions only.
      auto& x = excludes[i];
      std::sort(x.begin(), x.end());
      x.erase(std::unique(x.begin(), x.end()), x.end());
      std::vector<uint64_t> kept;
      for (uint64_t a : x) {
        bool dominated = false;
        for (uint64_t b : x) dominated = dominated || (b != a && (a & b) == a);
        if (!dominated) kept.push_back(a);
      }
      x.swap(kept);
    }
    // One list offering exactly m: every other list offers some superset of m.
    if (exact) return true;
    std::vector<const MaskFamily*> bins;
    return Choose(m, 0, 0, excludes, family, bins);
  }

  bool Choose(uint64_t m, size_t i, uint64_t excluded,
              const std::vector<std::vector<uint64_t>>& excludes,
              const std::vector<bool>& family, std::vector<const MaskFamily*>& bins) const {
    if (i == lists_.size()) {
      uint64_t residual = dv_ & ~m & ~excluded;
      for (const MaskFamily* f : bins) residual &= f->domain;
      return Pack(m, residual, bins);
    }
    for (uint64_t x : excludes[i]) {
      if (Choose(m, i + 1, excluded | x, excludes, family, bins)) return true;
    }
    if (family[i]) {
      bins.push_back(&*lists_[i].set->family());
      bool ok = Choose(m, i + 1, excluded, excludes, family, bins);
      bins.pop_back();
      if (ok) return true;
    }
    return false;
  }

  // Whether the nodes of `residual` can be dropped by the families of `bins` (each keeping a
  // member containing m).
  bool Pack(uint64_t m, uint64_t residual, const std::vector<const MaskFamily*>& families) const {
    if (residual == 0) return true;
    std::vector<Bin> bins;
    for (const MaskFamily* f : families) {
      Bin b{f, {}, PopCount64(f->domain) - f->min_count, f->domain & ~f->required & ~m};
      for (const CoverRule& r : f->rules) {
        uint64_t sum = r.Sum(f->domain);
        b.slack.push_back(sum >= r.need ? sum - r.need : 0);
      }
      bins.push_back(std::move(b));
    }
    return PackRest(residual, bins);
  }

  static bool Fits(const Bin& b, int node) {
    if (!((b.allowed >> node) & 1) || b.count_slack <= 0) return false;
    for (size_t r = 0; r < b.slack.size(); ++r) {
      if (b.family->rules[r].weight[node] > b.slack[r]) return false;
    }
    return true;
  }

  static bool PackRest(uint64_t residual, std::vector<Bin>& bins) {
    if (residual == 0) return true;
    // The node with the fewest bins that can take it.
    int pick = -1;
    size_t fewest = SIZE_MAX;
    for (uint64_t r = residual; r != 0; r &= r - 1) {
      int node = std::countr_zero(r);
      size_t n = 0;
      for (const Bin& b : bins) n += Fits(b, node) ? 1 : 0;
      if (n == 0) return false;
      if (n < fewest) {
        fewest = n;
        pick = node;
      }
    }
    const uint64_t rest = residual & ~(uint64_t{1} << pick);
    for (Bin& b : bins) {
      if (!Fits(b, pick)) continue;
      --b.count_slack;
      for (size_t r = 0; r < b.slack.size(); ++r) b.slack[r] -= b.family->rules[r].weight[pick];
      bool ok = PackRest(rest, bins);
      ++b.count_slack;
      for (size_t r = 0; r < b.slack.size(); ++r) b.slack[r] += b.family->rules[r].weight[pick];
      if (ok) return true;
    }
    return false;
  }

  const NUMAInfo& numa_info_;
  std::vector<MergeList> lists_;
  bool use_closest_;
  bool single_;
  uint64_t dv_;
};

// Whether some list is a HintSet by structure (then the structured merge runs).
bool HasStructuredList(const ProvidersHints& providers_hints) {
  for (const ProviderHints& p : providers_hints) {
    if (!p.has_value()) continue;
    for (const auto& [resource, list] : *p) {
      if (list.has_value() && !list->listed() && !list->empty()) return true;
    }
  }
  return false;
}

TopologyHint MergeStructured(const std::string& policy_name, const NUMAInfo& numa_info,
                             const PolicyOptions& opts, const ProvidersHints& providers_hints) {
  const bool single = policy_name == kPolicySingleNumaNode;
  std::vector<MergeList> lists;
  size_t list_count = 0;
  for (const ProviderHints& hints : providers_hints) {
    list_count += hints.has_value() && !hints->empty() ? hints->size() : 1;
  }
  lists.reserve(list_count);
  auto listed = [&](std::vector<TopologyHint> hints) {
    MergeList l;
    if (single) hints = FilterSingleNumaHints({hints}).front();
    for (const TopologyHint& h : hints) {
      if (!h.affinity.has_value() && h.preferred) l.nil_preferred = true;
    }
    l.hints = std::move(hints);
    lists.push_back(std::move(l));
  };
  for (const ProviderHints& hints : providers_hints) {
    if (!hints.has_value() || hints->empty()) {
      listed({TopologyHint{std::nullopt, true}});
      continue;
    }
    for (const auto& [resource, list] : *hints) {
      if (!list.has_value()) {
        listed({TopologyHint{std::nullopt, true}});
      } else if (list->empty()) {
        listed({TopologyHint{std::nullopt, false}});
      } else if (list->listed()) {
        listed(list->hints());
      } else {
        MergeList l;
        l.set = &*list;
        l.singles = single;
        lists.push_back(std::move(l));
      }
    }
  }
  const bool use_closest = !single && opts.prefer_closest_numa;
  return StructuredMerge(numa_info, std::move(lists), use_closest, single).Merge();
}

enum class MergeMode { kFast, kEnumerated, kExhaustive };

MergeResult MergeWith(const std::string& policy_name, const NUMAInfo& numa_info,
                      const PolicyOptions& opts, const ProvidersHints& providers_hints,
                      MergeMode mode) {
  if (policy_name == kPolicyNone) return MergeResult{TopologyHint{}, true};
  const bool single = policy_name == kPolicySingleNumaNode;
  TopologyHint hint;
  if (mode == MergeMode::kFast && HasStructuredList(providers_hints)) {
    hint = MergeStructured(policy_name, numa_info, opts, providers_hints);
  } else {
    HintLists lists = FilterProvidersHints(providers_hints);
    if (single) lists = FilterSingleNumaHints(lists);
    HintMerger merger(&numa_info, std::move(lists), policy_name, opts);
    hint = mode == MergeMode::kExhaustive ? merger.MergeExhaustive() : merger.Merge();
  }
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
  return MergeWith(policy_name, numa_info, opts, providers_hints, MergeMode::kExhaustive);
}

MergeResult MergeEnumerated(const std::string& policy_name, const NUMAInfo& numa_info,
                            const PolicyOptions& opts, const ProvidersHints& providers_hints) {
  return MergeWith(policy_name, numa_info, opts, providers_hints, MergeMode::kEnumerated);
}

MergeResult MergeFast(const std::string& policy_name, const NUMAInfo& numa_info,
                      const PolicyOptions& opts, const ProvidersHints& providers_hints) {
  return MergeWith(policy_name, numa_info, opts, providers_hints, MergeMode::kFast);
}

}  // namespace internal

namespace {

class NonePolicy : public Policy {
 public:
  const std::string& Name() const override { return name_; }
  MergeResult Merge(const ProvidersHints&) const override {
    return MergeResult{TopologyHint{}, true};
  }

 private:
  std::string name_ = kPolicyNone;
};

class MergingPolicy : public Policy {
 public:
  MergingPolicy(std::string name, NUMAInfo numa_info, PolicyOptions opts)
      : name_(std::move(name)), numa_info_(std::move(numa_info)), opts_(opts) {}
  const std::string& Name() const override { return name_; }
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
