// TopologyHint: a hint provider's (or the merge's) NUMA placement proposal.
//
// `affinity` nullopt is the kubelet's nil NUMANodeAffinity: "no NUMA preference, any node".
// `preferred` marks a placement the provider considers optimal (usually: the narrowest masks
// that can satisfy the request). The zero value {nullopt, false} is what GetAffinity returns for
// a container that was never merged.
//
// Example:
//   TopologyHint h{BitMask::FromUint64(0b01), true};   // NUMA node 0, preferred
//   TopologyHint any{std::nullopt, true};              // no preference
//   h.IsEqual(any);   // false
//
// Thread safety: a value type.
#ifndef PODTOPO_TOPOLOGYMANAGER_TOPOLOGY_HINT_H_
#define PODTOPO_TOPOLOGYMANAGER_TOPOLOGY_HINT_H_

#include <optional>
#include <ostream>

#include "topologymanager/bitmask.h"

namespace podtopo::topologymanager {

struct TopologyHint {
  std::optional<BitMask> affinity;  // nullopt = nil = no NUMA preference
  bool preferred = false;

  // Preferred equal, and both affinities nil or both non-nil and equal.
  bool IsEqual(const TopologyHint& other) const {
    if (preferred != other.preferred) return false;
    if (affinity.has_value() != other.affinity.has_value()) return false;
    return !affinity.has_value() || affinity->IsEqual(*other.affinity);
  }

  // The kubelet's LessThan: a preferred hint sorts first; with equal preference the narrower
  // affinity (BitMask::IsNarrowerThan). The kubelet dereferences nil affinities here (a panic);
  // podtopo orders a nil affinity after every mask, and two nil affinities as equal.
  bool LessThan(const TopologyHint& other) const {
    if (preferred != other.preferred) return preferred;
    if (!affinity.has_value()) return false;
    if (!other.affinity.has_value()) return true;
    return affinity->IsNarrowerThan(*other.affinity);
  }

  friend bool operator==(const TopologyHint& a, const TopologyHint& b) { return a.IsEqual(b); }
};

// GoogleTest / logging: "{affinity: {0,1}, preferred: true}", nil affinity as "nil".
inline std::ostream& operator<<(std::ostream& os, const TopologyHint& hint) {
  os << "{affinity: ";
  if (hint.affinity.has_value()) {
    os << *hint.affinity;
  } else {
    os << "nil";
  }
  return os << ", preferred: " << (hint.preferred ? "true" : "false") << "}";
}

}  // namespace podtopo::topologymanager

#endif  // PODTOPO_TOPOLOGYMANAGER_TOPOLOGY_HINT_H_
