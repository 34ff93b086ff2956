// The NodeResourceTopology of a simulated node's own state (admission::Node), built with the
// agent's code rather than a second accounting.
//
// The node's admitted pods are reported as this node would answer the PodResources API
// (podresources/report.h BuildPodResources, the kubelet's reporting rules; GetAllocatableResources
// from BuildAllocatable) and read back with the agent's client views (client/pod_view.h
// BuildPodView, BuildAllocatableView). The resulting agent::Observation goes to the agent's
// AccountZones and BuildNodeResourceTopology. So a pod-level allocation (KEP-5526) is counted
// once, and the object is the one `podtopo agent` publishes for a `podtopo serve` that holds the
// same pods: one accounting, two callers.
//
// Example:
//   nlohmann::ordered_json nrt = NodeResourceTopologyOf(node, "sim-a");
//   // zones[0].resources cpu available "11", podtopo.io/free-cpus "3-7,32,35-39"
#ifndef PODTOPO_KUBENODE_NODE_NRT_H_
#define PODTOPO_KUBENODE_NODE_NRT_H_

#include <string>
#include <vector>

#include "admission/node.h"
#include "agent/observation.h"
#include "nlohmann/json.hpp"

namespace podtopo::kubenode {

// What an agent polling this node's PodResources API would observe now.
agent::Observation ObservationOf(const Node& node);

// The per-NUMA accounting of the node (agent::AccountZones of ObservationOf).
std::vector<agent::ZoneAccount> ZonesOf(const Node& node);

// The object to publish (without owner references), named `name`, with podtopo's attributes.
nlohmann::ordered_json NodeResourceTopologyOf(const Node& node, const std::string& name);

}  // namespace podtopo::kubenode

#endif  // PODTOPO_KUBENODE_NODE_NRT_H_
