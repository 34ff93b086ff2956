#include "topologymanager/hint_set.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "util/popcount.h"

namespace podtopo::topologymanager {
namespace {

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t s = a + b;
  return s < a ? std::numeric_limits<uint64_t>::max() : s;
}

}  // namespace

CoverRule CoverRule::Of(const std::vector<std::pair<int, uint64_t>>& weights, uint64_t need) {
  CoverRule r;
  r.need = need;
  for (const auto& [node, w] : weights) {
    if (node >= 0 && node < 64) r.weight[node] = SaturatingAdd(r.weight[node], w);
  }
  return r;
}

uint64_t CoverRule::Sum(uint64_t mask) const {
  uint64_t s = 0;
  for (uint64_t m = mask; m != 0; m &= m - 1) s = SaturatingAdd(s, weight[std::countr_zero(m)]);
  return s;
}

bool MaskFamily::Contains(uint64_t mask) const {
  if ((mask & ~domain) != 0 || (mask & required) != required) return false;
  if (mask == 0 || PopCount64(mask) < min_count) return false;
  for (const CoverRule& r : rules) {
    if (!r.Holds(mask)) return false;
  }
  return true;
}

std::optional<int> MaskFamily::MinCount() const {
  if (Empty()) return std::nullopt;
  if (rules.size() <= 1) {
    // One cover rule (or none) is no knapsack: the required nodes, then the heaviest other
    // nodes of the domain until the rule holds, is a narrowest member (weights are never
    // negative, and the family is upward closed for min_count).
    int count = PopCount64(required);
    if (!rules.empty() && !rules[0].Holds(required)) {
      const CoverRule& r = rules[0];
      std::array<uint64_t, 64> weights;
      size_t n = 0;
      for (uint64_t m = domain & ~required; m != 0; m &= m - 1) {
        weights[n++] = r.weight[static_cast<size_t>(std::countr_zero(m))];
      }
      std::sort(weights.begin(), weights.begin() + static_cast<std::ptrdiff_t>(n),
                std::greater<>());
      uint64_t sum = r.Sum(required);
      for (size_t i = 0; i < n && sum < r.need; ++i) {
        sum = SaturatingAdd(sum, weights[i]);
        ++count;
      }
    }
    return std::max({1, min_count, count});
  }
  MaskSearch search;
  search.allowed = domain;
  search.required = required;
  for (const CoverRule& r : rules) search.rules.push_back(&r);
  search.leaf = [this](uint64_t m) { return Contains(m); };
  for (int c = std::max({1, min_count, PopCount64(required)}); c <= PopCount64(domain); ++c) {
    if (FirstMask(search, c).has_value()) return c;
  }
  return std::nullopt;  // unreachable: `domain` itself is a member
}

int PreferenceRule::SocketCount(uint64_t mask) const {
  std::vector<uint64_t> acc;
  for (uint64_t m = mask; m != 0; m &= m - 1) {
    size_t node = static_cast<size_t>(std::countr_zero(m));
    if (node >= node_sockets.size()) continue;
    const auto& words = node_sockets[node];
    if (acc.size() < words.size()) acc.resize(words.size(), 0);
    for (size_t i = 0; i < words.size(); ++i) acc[i] |= words[i];
  }
  int n = 0;
  for (uint64_t w : acc) n += PopCount64(w);
  return n;
}

bool PreferenceRule::Holds(uint64_t mask) const {
  if (PopCount64(mask) == count) return true;
  return sockets.has_value() && SocketCount(mask) == *sockets;
}

HintSet HintSet::FromMasks(uint64_t nodes, std::optional<MaskFamily> family,
                           std::vector<uint64_t> extra, PreferenceRule preference) {
  HintSet s;
  s.listed_ = false;
  s.nodes_ = nodes;
  if (family.has_value()) {
    family->domain &= nodes;
    if (!family->Empty()) s.family_ = std::move(family);
  }
  extra.erase(std::remove_if(extra.begin(), extra.end(),
                             [&](uint64_t m) { return m == 0 || (m & ~nodes) != 0; }),
              extra.end());
  std::sort(extra.begin(), extra.end());
  extra.erase(std::unique(extra.begin(), extra.end()), extra.end());
  s.extra_ = std::move(extra);
  s.preference_ = std::move(preference);
  return s;
}

bool HintSet::InFamily(uint64_t mask) const { return family_.has_value() && family_->Contains(mask); }

bool HintSet::empty() const {
  if (listed_) return hints_.empty();
  return !family_.has_value() && extra_.empty();
}

bool HintSet::Qualifies(uint64_t mask) const {
  if (listed_) {
    return std::any_of(hints_.begin(), hints_.end(), [&](const TopologyHint& h) {
      return h.affinity.has_value() && h.affinity->value() == mask;
    });
  }
  if ((mask & ~nodes_) != 0 || mask == 0) return false;
  return InFamily(mask) || std::binary_search(extra_.begin(), extra_.end(), mask);
}

bool HintSet::Preferred(uint64_t mask) const {
  if (listed_) {
    return std::any_of(hints_.begin(), hints_.end(), [&](const TopologyHint& h) {
      return h.preferred && h.affinity.has_value() && h.affinity->value() == mask;
    });
  }
  return Qualifies(mask) && preference_.Holds(mask);
}

std::vector<TopologyHint> HintSet::Enumerate() const {
  if (listed_) return hints_;
  std::vector<int> bits = BitMask::FromUint64(nodes_).GetBits();
  std::vector<TopologyHint> out;
  (void)IterateBitMasks(bits, [&](BitMask m) {
    if (Qualifies(m.value())) out.push_back(TopologyHint{m, preference_.Holds(m.value())});
  });
  return out;
}

int HintSet::MinCount() const {
  int best = 0;
  auto take = [&](int c) {
    if (c > 0 && (best == 0 || c < best)) best = c;
  };
  if (listed_) {
    for (const TopologyHint& h : hints_) {
      if (h.affinity.has_value()) take(h.affinity->Count());
    }
    return best;
  }
  for (uint64_t e : extra_) take(PopCount64(e));
  if (family_.has_value()) take(family_->MinCount().value_or(0));
  return best;
}

std::optional<TopologyHint> HintSet::Best(uint64_t must_contain) const {
  auto narrower = [](uint64_t a, uint64_t b) {
    return BitMask::FromUint64(a).IsNarrowerThan(BitMask::FromUint64(b));
  };
  if (listed_) {
    std::optional<TopologyHint> best;
    for (const TopologyHint& h : hints_) {
      if (!h.affinity.has_value() || (h.affinity->value() & must_contain) != must_contain) continue;
      if (!best || (h.preferred && !best->preferred) ||
          (h.preferred == best->preferred && narrower(h.affinity->value(), best->affinity->value()))) {
        best = h;
      }
    }
    return best;
  }
  // The narrowest qualifying mask of exactly `count` nodes containing `must_contain` that
  // satisfies `want`, from the family and the extra masks.
  auto first_of_count = [&](int count, const std::function<bool(uint64_t)>& want,
                            bool socket_prune) -> std::optional<uint64_t> {
    std::optional<uint64_t> best;
    for (uint64_t e : extra_) {
      if (PopCount64(e) == count && (e & must_contain) == must_contain && want(e)) {
        best = e;
        break;  // ascending
      }
    }
    if (family_.has_value()) {
      MaskSearch search;
      search.allowed = family_->domain;
      search.required = family_->required | must_contain;
      for (const CoverRule& r : family_->rules) search.rules.push_back(&r);
      if (socket_prune) search.socket_limits.push_back({&preference_, *preference_.sockets});
      search.leaf = [&](uint64_t m) { return family_->Contains(m) && want(m); };
      std::optional<uint64_t> f = FirstMask(search, count);
      if (f && (!best || *f < *best)) best = f;
    }
    return best;
  };
  const int lo = std::max(1, PopCount64(must_contain));
  const int hi = PopCount64(nodes_);
  // Preferred hints first.
  auto preferred = [&](uint64_t m) { return preference_.Holds(m); };
  for (int c = lo; c <= hi; ++c) {
    const bool by_count = c == preference_.count;
    if (!by_count && !preference_.sockets.has_value()) continue;
    if (auto m = first_of_count(c, preferred, !by_count)) {
      return TopologyHint{BitMask::FromUint64(*m), true};
    }
  }
  for (int c = lo; c <= hi; ++c) {
    if (auto m = first_of_count(c, [](uint64_t) { return true; }, false)) {
      return TopologyHint{BitMask::FromUint64(*m), preference_.Holds(*m)};
    }
  }
  return std::nullopt;
}

std::vector<BitMask> HintSet::PreferredMasks(size_t limit) const {
  std::vector<BitMask> out;
  if (listed_) {
    for (const TopologyHint& h : hints_) {
      if (out.size() < limit && h.preferred && h.affinity.has_value()) out.push_back(*h.affinity);
    }
    return out;
  }
  for (int c = 1; c <= PopCount64(nodes_) && out.size() < limit; ++c) {
    if (c != preference_.count && !preference_.sockets.has_value()) continue;
    std::vector<uint64_t> found;
    for (uint64_t e : extra_) {
      if (PopCount64(e) == c && preference_.Holds(e)) found.push_back(e);
    }
    if (family_.has_value()) {
      MaskSearch search;
      search.allowed = family_->domain;
      search.required = family_->required;
      for (const CoverRule& r : family_->rules) search.rules.push_back(&r);
      if (c != preference_.count) search.socket_limits.push_back({&preference_, *preference_.sockets});
      search.leaf = [&](uint64_t m) { return family_->Contains(m) && preference_.Holds(m); };
      SearchMasks(search, c, [&](uint64_t m) {
        found.push_back(m);
        return found.size() >= limit + extra_.size();
      });
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    for (uint64_t m : found) {
      if (out.size() < limit) out.push_back(BitMask::FromUint64(m));
    }
  }
  return out;
}

namespace {

// Depth-first search of SearchMasks: `positions` ascending; the next chosen bit is the highest
// one still to choose, tried from the lowest possible position up, so leaves come in ascending
// numeric order.
class Searcher {
 public:
  Searcher(const MaskSearch& s, const std::function<bool(uint64_t)>& visit) : s_(s), visit_(visit) {
    // positions_ and top_ (at most one entry per allowed bit) allocate once each, not once per
    // doubling: 7 times on the 64 NUMA nodes of numa64.
    positions_.reserve(static_cast<size_t>(PopCount64(s.allowed)));
    for (uint64_t m = s.allowed; m != 0; m &= m - 1) positions_.push_back(std::countr_zero(m));
  }

  bool Run(int count) {
    if (count <= 0 || (s_.required & ~s_.allowed) != 0) return false;
    if (PopCount64(s_.required) > count || static_cast<int>(positions_.size()) < count) return false;
    return Choose(static_cast<int>(positions_.size()), count, 0);
  }

 private:
  // Chooses `remaining` more bits among positions_[0 .. limit-1]; `chosen` so far.
  bool Choose(int limit, int remaining, uint64_t chosen) {
    // The highest required position below `limit` must be the next chosen bit or lower.
    int lowest_start = remaining - 1;
    for (int i = limit - 1; i >= 0; --i) {
      if ((s_.required >> positions_[i]) & 1) {
        lowest_start = std::max(lowest_start, i);
        break;
      }
    }
    for (int j = lowest_start; j < limit; ++j) {
      const uint64_t bit = uint64_t{1} << positions_[j];
      const uint64_t next = chosen | bit;
      // Required bits strictly below j must fit into the remaining - 1 slots.
      const uint64_t below = j == 0 ? 0 : (uint64_t{1} << positions_[j]) - 1;
      if (PopCount64(s_.required & s_.allowed & below) > remaining - 1) break;
      if (!Feasible(next, j, remaining - 1)) continue;
      if (remaining == 1) {
        if ((next & s_.required) == s_.required && (!s_.leaf || s_.leaf(next)) && visit_(next)) {
          return true;
        }
        continue;
      }
      if (Choose(j, remaining - 1, next)) return true;
    }
    return false;
  }

  // Whether `chosen` plus the best `more` bits among positions_[0 .. below-1] can meet every
  // rule and stay within the socket limits.
  bool Feasible(uint64_t chosen, int below, int more) {
    for (const auto& [rule, limit] : s_.socket_limits) {
      if (rule->SocketCount(chosen) > limit) return false;
    }
    for (const CoverRule* r : s_.rules) {
      if (r->need == 0) continue;
      uint64_t have = r->Sum(chosen);
      if (have >= r->need) continue;
      if (more == 0) return false;
      top_.clear();
      if (below > 0) top_.reserve(positions_.size());
      for (int i = 0; i < below; ++i) top_.push_back(r->weight[positions_[i]]);
      if (static_cast<int>(top_.size()) > more) {
        std::nth_element(top_.begin(), top_.begin() + more, top_.end(), std::greater<>());
        top_.resize(more);
      }
      for (uint64_t w : top_) have = SaturatingAdd(have, w);
      if (have < r->need) return false;
    }
    return true;
  }

  const MaskSearch& s_;
  const std::function<bool(uint64_t)>& visit_;
  std::vector<int> positions_;
  std::vector<uint64_t> top_;
};

}  // namespace

void SearchMasks(const MaskSearch& search, int count,
                 const std::function<bool(uint64_t)>& visit) {
  Searcher(search, visit).Run(count);
}

std::optional<uint64_t> FirstMask(const MaskSearch& search, int count) {
  std::optional<uint64_t> found;
  SearchMasks(search, count, [&](uint64_t m) {
    found = m;
    return true;
  });
  return found;
}

}  // namespace podtopo::topologymanager
