// LoadNode: the node topology named by a `--node SPEC` (DESIGN.md, "Node input").
//
//   preset:NAME    a built-in node (topology/presets.h)
//   FILE.json      podtopo's topology JSON (topology/topology_json.h); "-" reads it from stdin
//   FILE.xml       an `lstopo --of xml` export (topology/hwloc_import.h)
//   sysfs:DIR      a sysfs tree holding devices/system/{cpu,node} (topology/sysfs_discovery.h)
//   local          sysfs:/sys, this machine as its kubelet sees it
// A file with another extension is read as JSON when its first non-blank character is '{'
// and as XML when it is '<'.
//
// Example:
//   absl::StatusOr<NodeTopology> node = LoadNode("preset:demo");
//   LoadNode("preset:nope").status().message();
//       // unknown preset "nope" (known: demo, dual-socket-ht, ...)
#ifndef PODTOPO_TOPOLOGY_NODE_SOURCE_H_
#define PODTOPO_TOPOLOGY_NODE_SOURCE_H_

#include <string>

#include "absl/status/statusor.h"
#include "topology/node_topology.h"

namespace podtopo {

// Loads the node. Errors come from the loader (naming the file and field) or, for a spec that
// names nothing known, kInvalidArgument listing the accepted forms.
absl::StatusOr<NodeTopology> LoadNode(const std::string& spec);

}  // namespace podtopo

#endif  // PODTOPO_TOPOLOGY_NODE_SOURCE_H_
