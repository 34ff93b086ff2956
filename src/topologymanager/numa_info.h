// NUMAInfo: the NUMA nodes the Topology Manager merges over, and their distances
// (kubelet topologymanager/numa_info.go).
//
// Built like the kubelet's NewNUMAInfo from the machine's NUMA nodes (cadvisor topology order).
// Distance rows are only kept when the `prefer-closest-numa-nodes` option is on. A row is
// indexed by NUMA node id (row[j] = distance to node j), as /sys/.../nodeN/distance and cadvisor
// give it.
//
// Example:
//   absl::StatusOr<NUMAInfo> info = NUMAInfo::Create(
//       {{0, {{10, 11}}}, {1, {{11, 10}}}}, /*prefer_closest=*/true);
//   info->DefaultAffinityMask();                 // {0,1}
//   info->Closest(mask_a, mask_b);               // the mask with the lower average distance
//
// Thread safety: immutable after construction.
#ifndef PODTOPO_TOPOLOGYMANAGER_NUMA_INFO_H_
#define PODTOPO_TOPOLOGYMANAGER_NUMA_INFO_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "topologymanager/bitmask.h"

namespace podtopo::topologymanager {

// One NUMA node as the machine reports it (cadvisor's Node: Id and Distances).
struct NUMANode {
  int id = 0;
  // Distance row indexed by node id; nullopt when unknown (cadvisor's nil slice).
  std::optional<std::vector<uint64_t>> distances;
};

class NUMAInfo {
 public:
  // NewNUMAInfo. `prefer_closest` is PolicyOptions::prefer_closest_numa: only then are distance
  // rows kept, and a node without one fails with "error getting NUMA distances from cadvisor".
  // podtopo checks what the kubelet would later crash on: node ids outside 0..63 ("NUMA node
  // 64: bit number must be in range 0-63"), an id listed twice, and (with prefer_closest) a row
  // too short to hold every listed node id.
  static absl::StatusOr<NUMAInfo> Create(const std::vector<NUMANode>& topology,
                                         bool prefer_closest);

  // Unchecked constructor for tests and callers that validated their input. Missing distance
  // entries read as 0. REQUIRES: node ids in 0..63.
  NUMAInfo(std::vector<int> nodes, std::map<int, std::vector<uint64_t>> distances);
  NUMAInfo() = default;

  const std::vector<int>& nodes() const { return nodes_; }
  const std::map<int, std::vector<uint64_t>>& distances() const { return distances_; }

  // The mask of all nodes.
  BitMask DefaultAffinityMask() const { return default_mask_; }
  // m1 if m1.IsNarrowerThan(m2), else m2.
  BitMask Narrowest(BitMask m1, BitMask m2) const { return m1.IsNarrowerThan(m2) ? m1 : m2; }
  // Different counts: Narrowest. Same count: the lower average distance; equal averages: the
  // numerically smaller mask.
  BitMask Closest(BitMask m1, BitMask m2) const;
  // The kubelet's CalculateAverageFor: sum of d[i][j] over i, j in the mask (diagonal
  // included), summed in float64 in ascending (i, j) order, divided by count^2; 0 when empty.
  double AverageDistance(BitMask mask) const;

 private:
  std::vector<int> nodes_;
  std::map<int, std::vector<uint64_t>> distances_;
  BitMask default_mask_;
};

}  // namespace podtopo::topologymanager

#endif  // PODTOPO_TOPOLOGYMANAGER_NUMA_INFO_H_
