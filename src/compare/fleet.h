// Fleets: the nodes `podtopo compare` runs pods on, and which node each pod goes to.
//
// A fleet is read from `--node` flags (../shared/DESIGN.md, "Named nodes" and `compare`):
//   [NAME=]SPEC          one node: a topology/node_source.h SPEC (preset:NAME, FILE.json,
//                        FILE.xml, sysfs:DIR, local), named NAME, or SPEC without a name
//   [NAME=]SPEC*COUNT    COUNT nodes of that shape, named NAME-0 ... NAME-<COUNT-1>
//                        (SPEC-0 ... without a name); the SPEC is read once
//   DIR                  every node file of a directory, in name order: *.json (topology
//                        JSON), *.xml (lstopo XML), and sysfs dumps (subdirectories holding
//                        devices/system/cpu), each named after its file without the extension
//                        (or its subdirectory); other regular files are read by content as
//                        LoadNode does; hidden entries are skipped
// NAME is what a pod's spec.nodeName names. The whole fleet is read before anything runs: a
// bad node file stops with an error naming the flag and the file (and the loader's field), a
// name given twice is an error naming both flags.
//
// Placement (AssignPods): a pod goes to the node its spec.nodeName names (an error naming the
// pod's file, document and the field when no --node has that name). With one node, every
// other pod goes there; with several, pods without a node need Placement::kFirstFit: each
// goes to the first node, in --node order, that admits it (a first-fit placement, not the
// kube-scheduler's).
//
// Example:
//   auto fleet = LoadFleet({"big=preset:demo*3", "dumps/"});   // big-0, big-1, big-2, ...
//   auto where = AssignPods(pods, *fleet, Placement::kByNodeName);
//   (*where)[0];    // index of pod 0's node, or kFirstFitNode
//
// Thread safety: value types; FleetNode's topology is shared read-only.
#ifndef PODTOPO_COMPARE_FLEET_H_
#define PODTOPO_COMPARE_FLEET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/pod.h"
#include "topology/node_topology.h"

namespace podtopo::compare {

struct FleetNode {
  std::string name;    // what spec.nodeName names
  std::string source;  // the SPEC or file it was read from ("preset:demo", "dumps/a.xml")
  // Shared by the nodes of one SPEC*COUNT; never modified.
  std::shared_ptr<const NodeTopology> topology;
};

// Reads every --node flag (see the banner). Errors: kInvalidArgument / the loaders' errors,
// each message starting with `--node <flag>`.
absl::StatusOr<std::vector<FleetNode>> LoadFleet(const std::vector<std::string>& flags);

// How pods without spec.nodeName are placed when the fleet has several nodes.
enum class Placement {
  kByNodeName,  // only by spec.nodeName: a pod without one is an error
  kFirstFit,    // the first node, in --node order, that admits it
};

// AssignPods' value for a pod placed first-fit.
inline constexpr int kFirstFitNode = -1;

// For each pod, the index of its node in `fleet`, or kFirstFitNode. Errors
// (kInvalidArgument): a spec.nodeName no node has ("pods.yaml#3: pod default/web-0:
// spec.nodeName: no --node is named \"n9\" (nodes: a, b)"), and pods without a node on a fleet
// of several nodes without kFirstFit.
absl::StatusOr<std::vector<int>> AssignPods(const std::vector<Pod>& pods,
                                            const std::vector<FleetNode>& fleet,
                                            Placement placement);

}  // namespace podtopo::compare

#endif  // PODTOPO_COMPARE_FLEET_H_
