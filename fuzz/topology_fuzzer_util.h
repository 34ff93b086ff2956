// What every topology source (topology JSON, lstopo XML, sysfs) must give: a topology that
// podtopo's own JSON writes and reads back to the same text. Except one case the topology JSON
// cannot express: NUMA node -1, which sysfs discovery reports as cadvisor does for a machine
// without node<N> directories whose firmware gives physical_package_id -1 (hwloc fixtures
// 20s390-2g6s4c, 2ps3-2t); the JSON reader accepts -1 only for socket and uncore
// (docs/reliability.md, "Found and left").
#ifndef PODTOPO_FUZZ_TOPOLOGY_FUZZER_UTIL_H_
#define PODTOPO_FUZZ_TOPOLOGY_FUZZER_UTIL_H_

#include <string>

#include "fmt/format.h"
#include "fuzz/fuzz_target.h"
#include "topology/node_topology.h"
#include "topology/topology_json.h"

namespace podtopo::fuzz {

inline void CheckTopologyRoundTrip(const NodeTopology& node, const char* from) {
  FUZZ_CHECK(node.cpus.num_cpus > 0, fmt::format("{}: a topology without CPUs", from));
  for (const NumaNode& n : node.numa_nodes) {
    if (n.id < 0) return;
  }
  std::string json = WriteTopologyJson(node);
  absl::StatusOr<NodeTopology> back = ReadTopologyJson(json, "written.json");
  FUZZ_CHECK(back.ok(), fmt::format("{}: the topology JSON written does not read back: {}\n{}",
                                    from, back.status().ToString(), json));
  std::string again = WriteTopologyJson(*back);
  FUZZ_CHECK(again == json, fmt::format("{}: topology JSON round trip:\n{}\n{}", from, json, again));
}

}  // namespace podtopo::fuzz

#endif  // PODTOPO_FUZZ_TOPOLOGY_FUZZER_UTIL_H_
