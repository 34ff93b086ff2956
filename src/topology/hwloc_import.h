// Import of `lstopo --of xml` exports (hwloc 2.x XML) through the hwloc library.
//
// Each PU becomes a CPU (id = PU os_index). Its core is the enclosing Core object (the PU
// itself when there is none) and the kubelet core id is the lowest PU os_index of that core;
// socket = the enclosing Package's os_index (-1 for a Package without one: hwloc's reading of
// physical_package_id = -1, the POWER LPAR case, so all such Packages are one socket -1 as
// cadvisor sees them; 0 when there is no Package); NUMA node = the NUMA node the PU's memory is
// local to (the first NUMANode without a subtype whose cpuset holds the PU, lowest os_index
// first; HBM/NVM nodes carry a subtype and are memory-only for the kubelet, as in sysfs).
// The uncore id follows cadvisor's rule on the hwloc data: the enclosing L3Cache's os_index
// (hwloc copies sysfs cache/index3/id there) unless that L3 holds as many PUs as the NUMA
// node (a "node cache"), the L3 has no os_index (the kernel exported no cache ids, so
// cadvisor could not read them), or there is no L3: then the socket id.
// NUMA nodes: every NUMANode object, CPU-less ones included; memory = local_memory (hwloc
// reports MemTotal, hugepages included), hugepages = the page types beyond the first (the
// base page), named "hugepages-2Mi" ..., distances = the NUMALatency matrix when it covers
// every node. Header counts come from SetCountsFromCpus.
//
// hwloc 2.9 crashes on some malformed XML, so the import runs in a child process; a crash or
// a hang (60 s) there is reported as an error. One child serves every import of the process
// in turn (forked at the first, and again after a crash, a hang or a bad answer); it exits
// when the process closes its end or exits. Files written by hwloc 3.x
// (`<topology version="3.0">`, which hwloc 2.9 refuses) are read as 2.0, with a warning.
//
// Disallowed objects are kept (HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED), but an export taken
// inside a restricted cgroup only holds the allowed PUs, and that is what is imported; PUs
// whose NUMA node the export left out are dropped with a warning (cadvisor, too, only sees
// CPUs of NUMA nodes). num_sockets counts the distinct socket ids of all PUs (cadvisor's
// GetSockets).
//
// Example:
//   absl::StatusOr<NodeTopology> node = ImportHwlocXml("node.xml");
//   node->cpus.num_cpus;   // PUs in the export
//
// The os_index of every PU and NUMANode object is checked on the text before hwloc reads it
// (at most 65535, present): hwloc sizes bitmaps by these indexes, and a PU without one (index
// 2^32-1) made it copy 512 MiB bitmaps.
//
// Errors name the file and the object: `node.xml: line 40: PU object: os_index 70000 is above
// 65535`, `node.xml: PU L#1: second PU with os_index 1`, `node.xml: not an hwloc XML topology
// (hwloc could not load it)`.
#ifndef PODTOPO_TOPOLOGY_HWLOC_IMPORT_H_
#define PODTOPO_TOPOLOGY_HWLOC_IMPORT_H_

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"
#include "topology/node_topology.h"

namespace podtopo {

// Reads and imports an XML file (at most 256 MiB). source = path.
absl::StatusOr<NodeTopology> ImportHwlocXml(const std::string& path);

// Imports XML text; `name` is used in messages and as source.
absl::StatusOr<NodeTopology> ImportHwlocXmlText(const std::string& xml, const std::string& name);

namespace internal {

// Tests of the import child: what it does with the next request instead of importing.
enum class HwlocImportTestAction : uint32_t { kNone, kCrash, kExit, kHang, kBadAnswer };
// The child's import of `xml` (none of ImportHwlocXmlText's checks on the text), after
// `action`.
absl::StatusOr<NodeTopology> ImportHwlocXmlInChildForTest(const std::string& xml,
                                                          const std::string& name,
                                                          HwlocImportTestAction action);
// The import child's pid, -1 when there is none.
pid_t HwlocImportChildPid();
// The import timeout (60 s).
void SetHwlocImportTimeoutForTest(int ms);

}  // namespace internal

}  // namespace podtopo

#endif  // PODTOPO_TOPOLOGY_HWLOC_IMPORT_H_
