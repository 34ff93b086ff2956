// RenderTopologyTable: a node's topology as text tables (`podtopo topology -o table`).
//
// Four parts, each only when it has something to say:
//   * a summary line: where the node came from and the kubelet's header counts;
//   * the CPU table, one row per (socket, NUMA node, uncore cache) group, socket and NUMA
//     shown where they change, with the group's CPUs and its cores as "core(threads)";
//   * the NUMA table: CPUs, memory, hugepages ("512 x 2Mi": pages x page size) and the
//     distance row;
//   * devices, and the loader's warnings.
// Long cpusets and core lists wrap onto continuation lines inside their column.
//
// Example (preset:dual-socket-ht):
//   Node preset:dual-socket-ht: 12 CPUs, 6 cores, 2 sockets, 2 NUMA nodes, 1 uncore cache
//
//   SOCKET  NUMA  UNCORE  CPUS          CORES(THREADS)
//   0       0     0       0,2,4,6,8,10  0(0,6) 2(2,8) 4(4,10)
//   1       1     0       1,3,5,7,9,11  1(1,7) 3(3,9) 5(5,11)
//
//   NUMA  CPUS          MEMORY  HUGEPAGES  DISTANCES
//   0     0,2,4,6,8,10  16Gi    -          10 20
//   1     1,3,5,7,9,11  16Gi    -          20 10
#ifndef PODTOPO_RENDER_TOPOLOGY_TABLE_H_
#define PODTOPO_RENDER_TOPOLOGY_TABLE_H_

#include <string>

#include "topology/node_topology.h"

namespace podtopo {

// The tables, ending with a newline. Amounts of memory are HumanBytes (resource/human_bytes.h).
std::string RenderTopologyTable(const NodeTopology& node);

}  // namespace podtopo

#endif  // PODTOPO_RENDER_TOPOLOGY_TABLE_H_
