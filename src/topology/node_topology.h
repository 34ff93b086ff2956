// NodeTopology: everything podtopo knows about a node's hardware.
//
// The CPU layout (CpuTopology), the NUMA nodes with their memory, hugepages and distances,
// and device-plugin devices with their NUMA affinity. It is built from a sysfs tree, an
// `lstopo --of xml` export, podtopo's topology JSON or a built-in preset (see
// topology/node_source.h) and is the input of every manager.
//
// Thread safety: a value type.
#ifndef PODTOPO_TOPOLOGY_NODE_TOPOLOGY_H_
#define PODTOPO_TOPOLOGY_NODE_TOPOLOGY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "topology/cpu_topology.h"

namespace podtopo {

struct NumaNode {
  int id = 0;
  // Total memory of the node in bytes (sysfs MemTotal), hugepages included, as cadvisor
  // reports node.Memory.
  uint64_t memory = 0;
  // Hugepage resource name ("hugepages-2Mi", "hugepages-1Gi") -> total bytes on this node.
  std::map<std::string, uint64_t> hugepages;
  // distances[i] is the distance to the i-th entry of NodeTopology::numa_nodes.
  std::vector<uint64_t> distances;
};

struct Device {
  std::string resource;  // e.g. "example.com/gpu"
  std::string id;        // device id as the plugin reports it
  int numa = -1;         // NUMA node, -1 when the device has no NUMA affinity
};

struct NodeTopology {
  CpuTopology cpus;
  std::vector<NumaNode> numa_nodes;  // ascending by id
  std::vector<Device> devices;
  // Where it came from ("preset:demo", "sysfs:/sys", a file path), for messages.
  std::string source;
  // Things the loader noticed but tolerated as the kubelet does (e.g. sysfs cache files it
  // could not read, so uncore ids fell back to the socket id). For display only.
  std::vector<std::string> warnings;

  const NumaNode* FindNuma(int id) const {
    for (const auto& n : numa_nodes) {
      if (n.id == id) return &n;
    }
    return nullptr;
  }
  std::vector<int> NumaIds() const {
    std::vector<int> ids;
    for (const auto& n : numa_nodes) ids.push_back(n.id);
    return ids;
  }
};

}  // namespace podtopo

#endif  // PODTOPO_TOPOLOGY_NODE_TOPOLOGY_H_
