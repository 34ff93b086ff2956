#include "topologymanager/numa_info.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "fmt/format.h"

namespace podtopo::topologymanager {

absl::StatusOr<NUMAInfo> NUMAInfo::Create(const std::vector<NUMANode>& topology,
                                          bool prefer_closest) {
  std::vector<int> nodes;
  std::map<int, std::vector<uint64_t>> distances;
  std::set<int> seen;
  int max_id = -1;
  for (const NUMANode& node : topology) {
    if (node.id < 0 || node.id >= 64) {
      return absl::InvalidArgumentError(
          fmt::format("NUMA node {}: bit number must be in range 0-63", node.id));
    }
    if (!seen.insert(node.id).second) {
      return absl::InvalidArgumentError(fmt::format("NUMA node {} is listed twice", node.id));
    }
    nodes.push_back(node.id);
    max_id = std::max(max_id, node.id);
    if (prefer_closest) {
      if (!node.distances.has_value()) {
        return absl::InvalidArgumentError("error getting NUMA distances from cadvisor");
      }
      distances[node.id] = *node.distances;
    }
  }
  if (prefer_closest) {
    for (const auto& [id, row] : distances) {
      if (static_cast<int>(row.size()) <= max_id) {
        return absl::InvalidArgumentError(fmt::format(
            "NUMA node {}: the distance row has {} entries, but node ids go up to {}", id,
            row.size(), max_id));
      }
    }
  }
  return NUMAInfo(std::move(nodes), std::move(distances));
}

NUMAInfo::NUMAInfo(std::vector<int> nodes, std::map<int, std::vector<uint64_t>> distances)
    : nodes_(std::move(nodes)), distances_(std::move(distances)) {
  for (int id : nodes_) {
    if (id >= 0 && id < 64) default_mask_.Or(BitMask::FromUint64(uint64_t{1} << id));
  }
}

double NUMAInfo::AverageDistance(BitMask mask) const {
  if (mask.Count() == 0) return 0;
  std::vector<int> bits = mask.GetBits();
  double count = 0;
  double sum = 0;
  for (int i : bits) {
    auto row = distances_.find(i);
    for (int j : bits) {
      uint64_t d = 0;
      if (row != distances_.end() && j < static_cast<int>(row->second.size())) d = row->second[j];
      sum += static_cast<double>(d);
      count++;
    }
  }
  return sum / count;
}

BitMask NUMAInfo::Closest(BitMask m1, BitMask m2) const {
  if (m1.Count() != m2.Count()) return Narrowest(m1, m2);
  double d1 = AverageDistance(m1);
  double d2 = AverageDistance(m2);
  if (d1 == d2) return m1.IsLessThan(m2) ? m1 : m2;
  return d1 < d2 ? m1 : m2;
}

}  // namespace podtopo::topologymanager
