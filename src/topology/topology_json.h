// podtopo's topology JSON (DESIGN.md, "Topology JSON"): read and write.
//
//   {
//     "cpus": [ {"id": 0, "core": 0, "socket": 0, "numa": 0, "uncore": 0} ],
//     "numaNodes": [ {"id": 0, "memory": 17179869184,
//                     "hugepages": {"hugepages-2Mi": 0, "hugepages-1Gi": 0},
//                     "distances": [10, 21]} ],
//     "devices": [ {"resource": "example.com/gpu", "id": "gpu0", "numa": 1} ]
//   }
//
// cpus (required, non-empty): id, core, socket and numa are required; uncore defaults to the
// socket. Ids are >= 0, except socket and uncore which may be -1 (firmware that reports no
// package, kept by the kubelet). numaNodes (optional; when absent it is derived from cpus
// with memory 0): id required, memory (bytes) defaults to 0, hugepages maps kubelet resource
// names ("hugepages-2Mi") to total bytes, distances[i] is the distance to the i-th entry of
// numaNodes as written. devices (optional): resource and id required, numa defaults to -1
// (no NUMA affinity). Header counts are set with SetCountsFromCpus.
//
// The reader rejects, naming the file and the JSON path: malformed JSON, unknown keys, wrong
// types, ids out of range, duplicate CPU / NUMA / device ids, a core whose threads span
// sockets or NUMA nodes, a CPU on a NUMA node missing from numaNodes, a device on an unknown
// NUMA node, distances whose length differs from the number of NUMA nodes, unknown hugepage
// resource names. A core id that is not the lowest thread of its core (some kubelet test
// machines have such ids) is accepted with a warning.
//   node.json: cpus[3].socket: expected an integer, got "1"
//
// The writer's output is stable: fixed key order, one entry per line, CPUs and NUMA nodes by
// id, devices by (resource, id).
//
// Example:
//   absl::StatusOr<NodeTopology> node = ReadTopologyJsonFile("node.json");
//   std::string text = WriteTopologyJson(*node);   // ReadTopologyJson(text, ...) gives it back
#ifndef PODTOPO_TOPOLOGY_TOPOLOGY_JSON_H_
#define PODTOPO_TOPOLOGY_TOPOLOGY_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "topology/node_topology.h"

namespace podtopo {

// Parses topology JSON text; `name` prefixes every error and becomes NodeTopology::source.
absl::StatusOr<NodeTopology> ReadTopologyJson(const std::string& text, const std::string& name);

// Reads a file ("-" = standard input, at most 64 MiB) and parses it.
absl::StatusOr<NodeTopology> ReadTopologyJsonFile(const std::string& path);

// The topology as JSON text (ends with a newline). Header counts, source and warnings are not
// part of the format.
std::string WriteTopologyJson(const NodeTopology& node);

}  // namespace podtopo

#endif  // PODTOPO_TOPOLOGY_TOPOLOGY_JSON_H_
