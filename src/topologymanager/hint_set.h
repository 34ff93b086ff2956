// HintSet: one resource's TopologyHints, by structure instead of as a list of 2^N masks.
//
// Every hint provider of the kubelet walks all 2^N NUMA masks (bitmask.IterateBitMasks) and
// keeps a mask when the resources on it cover the request; the preferred masks are the
// narrowest that could ever hold it. At 34 NUMA nodes (GB200) that walk never ends (k/k
// #135541). A HintSet says the same thing without the walk:
//
//   qualifying masks = { m ⊆ nodes : m in `family` } ∪ `extra`
//   family           = { m ⊆ domain : required ⊆ m, |m| >= min_count, every CoverRule holds }
//                      (upward closed inside `domain`: adding a node never breaks a rule)
//   CoverRule        = sum over the nodes of m of weight[node] >= need
//   preferred        = qualifying and |m| == preference.count
//                      (or, with the CPU Manager's align-by-socket option, spanning exactly
//                      preference.sockets sockets)
//
// `extra` holds the few masks a provider accepts outside the family (the Memory Manager's
// single nodes, its multi-NUMA groups, masks with reusable init-container memory). A HintSet
// can also simply hold a list (`HintSet(std::vector<TopologyHint>)`, implicit), for the
// kubelet's test vectors, `debug merge-hints` and already-allocated resources.
//
// Enumerate() gives the kubelet's list (IterateBitMasks order) — for tests and small N only.
// The searches (MinCount, Best, SearchMasks) are exact for any N <= 64 and prune on the
// rules; their worst case is exponential (deciding whether k nodes cover several requests is
// a knapsack problem), their usual cost a few microseconds (bench/topology_merge_benchmark.cc).
//
// Example:
//   MaskFamily f{.domain = 0b11, .rules = {CoverRule::Of({{0, 4}, {1, 2}}, 3)}};
//   HintSet s = HintSet::FromMasks(0b11, f, {}, PreferenceRule{.count = 1});
//   s.Enumerate();   // [{01 preferred}, {11}]  ({1} holds only 2 of 3)
//
// Thread safety: a value type.
#ifndef PODTOPO_TOPOLOGYMANAGER_HINT_SET_H_
#define PODTOPO_TOPOLOGYMANAGER_HINT_SET_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "topologymanager/bitmask.h"
#include "topologymanager/topology_hint.h"

namespace podtopo::topologymanager {

// sum over the nodes of a mask of weight[node] >= need. Sums saturate at 2^64-1.
struct CoverRule {
  std::array<uint64_t, 64> weight{};
  uint64_t need = 0;

  // A rule from (node, weight) pairs.
  static CoverRule Of(const std::vector<std::pair<int, uint64_t>>& weights, uint64_t need);
  uint64_t Sum(uint64_t mask) const;
  bool Holds(uint64_t mask) const { return need == 0 || Sum(mask) >= need; }
  friend bool operator==(const CoverRule&, const CoverRule&) = default;
};

// The masks m ⊆ domain with required ⊆ m, |m| >= min_count and every rule holding.
struct MaskFamily {
  uint64_t domain = 0;
  uint64_t required = 0;
  int min_count = 1;
  std::vector<CoverRule> rules;

  bool Contains(uint64_t mask) const;
  // No member at all (the family is upward closed: `domain` is its widest candidate).
  bool Empty() const { return !Contains(domain); }
  // The fewest nodes of a member; nullopt when empty.
  std::optional<int> MinCount() const;
  friend bool operator==(const MaskFamily&, const MaskFamily&) = default;
};

// Which qualifying masks are preferred: those of `count` nodes, and with `sockets` set (CPU
// Manager option align-by-socket) also those whose nodes span exactly that many sockets.
struct PreferenceRule {
  int count = 0;
  std::optional<int> sockets;
  // node id -> the dense socket indices of its CPUs, as bit words.
  std::vector<std::vector<uint64_t>> node_sockets;

  // Number of distinct sockets of the mask's nodes.
  int SocketCount(uint64_t mask) const;
  bool Holds(uint64_t mask) const;
  friend bool operator==(const PreferenceRule&, const PreferenceRule&) = default;
};

class HintSet {
 public:
  // An empty list: no possible placement.
  HintSet() = default;
  // Exactly these hints, in this order (implicit: a list is a HintSet).
  HintSet(std::vector<TopologyHint> hints)  // NOLINT(google-explicit-constructor)
      : listed_(true), hints_(std::move(hints)) {}
  // The masks over `nodes` described by `family` and `extra` (see the file comment).
  // `extra` masks outside `nodes` are dropped.
  static HintSet FromMasks(uint64_t nodes, std::optional<MaskFamily> family,
                           std::vector<uint64_t> extra, PreferenceRule preference);

  bool listed() const { return listed_; }
  // REQUIRES: listed().
  const std::vector<TopologyHint>& hints() const { return hints_; }
  uint64_t nodes() const { return nodes_; }
  const std::optional<MaskFamily>& family() const { return family_; }
  const std::vector<uint64_t>& extra() const { return extra_; }
  const PreferenceRule& preference() const { return preference_; }

  // No hint at all.
  bool empty() const;
  // Some hint has this affinity (listed: with any preference).
  bool Qualifies(uint64_t mask) const;
  // Some preferred hint has this affinity.
  bool Preferred(uint64_t mask) const;
  // The kubelet's list: listed hints as they are; otherwise every qualifying mask in
  // IterateBitMasks order over `nodes`. Exponential in |nodes|: tests, oracles and small N.
  std::vector<TopologyHint> Enumerate() const;
  // The fewest nodes of a non-nil hint; 0 when there is none.
  int MinCount() const;
  // The Memory Manager's findBestHint over the hints whose affinity contains `must_contain`:
  // preferred first, then the narrowest (fewest nodes, then the smaller mask); nullopt when
  // no hint contains it. Nil affinities of a listed set are skipped.
  std::optional<TopologyHint> Best(uint64_t must_contain) const;

  // Up to `limit` preferred affinities, narrowest first (fewest nodes, then the smaller mask):
  // what `explain` shows where Enumerate would be too long.
  std::vector<BitMask> PreferredMasks(size_t limit) const;

  friend bool operator==(const HintSet&, const HintSet&) = default;

 private:
  bool InFamily(uint64_t mask) const;

  bool listed_ = true;
  std::vector<TopologyHint> hints_;
  uint64_t nodes_ = 0;
  std::optional<MaskFamily> family_;
  std::vector<uint64_t> extra_;  // ascending, each ⊆ nodes_
  PreferenceRule preference_;
};

// A search over the masks of exactly `count` bits of `allowed` containing `required`, in
// ascending numeric order (the kubelet's order among masks of equal width). Branches whose
// best completion cannot meet a rule, or (socket_limits) already spans more sockets than the
// limit, are cut; `leaf` decides exactly. `visit` returns true to stop.
struct MaskSearch {
  uint64_t allowed = 0;
  uint64_t required = 0;
  std::vector<const CoverRule*> rules;
  std::vector<std::pair<const PreferenceRule*, int>> socket_limits;
  std::function<bool(uint64_t)> leaf;
};
void SearchMasks(const MaskSearch& search, int count, const std::function<bool(uint64_t)>& visit);
// The first mask SearchMasks visits, or nullopt.
std::optional<uint64_t> FirstMask(const MaskSearch& search, int count);

}  // namespace podtopo::topologymanager

#endif  // PODTOPO_TOPOLOGYMANAGER_HINT_SET_H_
