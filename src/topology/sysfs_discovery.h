// Sysfs discovery: a node's topology read from /sys the way the kubelet sees it.
//
// The kubelet learns the machine from cadvisor (utils/sysinfo GetNodesInfo) and turns it into
// its CPU topology with topology.Discover (spec/cpumanager.md §1.2). DiscoverSysfs does both:
//   * online CPUs from devices/system/cpu/online (every CPU when the file is absent);
//   * NUMA nodes from devices/system/node/node<N> (CPUs from its cpulist, or its cpu<M>
//     entries when there is no cpulist); CPU-less nodes are kept as memory-only entries;
//   * per CPU: socket = topology/physical_package_id; threads are grouped into cores by
//     (topology/core_id, package); the core id is the lowest thread id of the core;
//   * uncore = the id of the first cache of level > 2 (cache/index<K>/id) that is shared by
//     fewer CPUs than the NUMA node holds; otherwise (an L3 spanning the whole NUMA node, no
//     L3, or unreadable cache files) the socket id, exactly as cadvisor's addCacheInfo and
//     the kubelet's fallback do;
//   * memory = node<N>/meminfo MemTotal in bytes (hugepages included), hugepages from
//     node<N>/hugepages/hugepages-<K>kB/nr_hugepages named "hugepages-2Mi" etc. (total
//     bytes), distances from node<N>/distance (indexed by node id, as the kubelet reads
//     the row: NumaNode::distances[k] = row[numa_nodes[k].id]);
//   * without any node<N> directory (a kernel without NUMA), cadvisor makes one node per
//     socket with id = physical_package_id and no memory information; so does this.
// Header counts are topology.Discover's: num_cpus = logical CPUs found (cadvisor's NumCores;
// without node directories, the number of cpu<N> directories), num_sockets = distinct
// physical_package_id over online CPUs, num_cores = cadvisor cores, num_numa_nodes and
// num_uncore_caches = distinct values in the CPU map.
//
// Cadvisor skips a CPU whose core_id or physical_package_id file is missing (offline CPUs have
// none) and ignores unreadable cache files; both are tolerated here too (the latter is
// reported in NodeTopology::warnings). Anything malformed is an error naming the file and
// what is wrong, e.g.
//   sysfs:/tmp/x: devices/system/cpu/cpu3/topology/physical_package_id: not an integer: "abc"
//
// Example:
//   absl::StatusOr<NodeTopology> node = DiscoverSysfs("/sys");
//   node->cpus.CpusInNuma(0).String();   // "0-7,16-23"
#ifndef PODTOPO_TOPOLOGY_SYSFS_DISCOVERY_H_
#define PODTOPO_TOPOLOGY_SYSFS_DISCOVERY_H_

#include <string>

#include "absl/status/statusor.h"
#include "topology/node_topology.h"
#include "topology/sysfs_source.h"

namespace podtopo {

// Discovers the tree under `root` (holding devices/system/cpu and devices/system/node).
// NodeTopology::source is "sysfs:<root>". Errors: kNotFound when devices/system/cpu is
// missing, kInvalidArgument for malformed files or when no CPU is found
// ("could not detect number of cpus", the kubelet's text).
absl::StatusOr<NodeTopology> DiscoverSysfs(const std::string& root);

// The same on any SysfsSource; source is fs.Name().
absl::StatusOr<NodeTopology> DiscoverSysfs(const SysfsSource& fs);

}  // namespace podtopo

#endif  // PODTOPO_TOPOLOGY_SYSFS_DISCOVERY_H_
