// The NodeResourceTopology object (topology.node.k8s.io/v1alpha2) that `podtopo agent`
// writes, as the NUMA-aware scheduler (scheduler-plugins' NodeResourceTopologyMatch) reads it.
//
// The shape is the one the Resource Topology Exporter and the NFD topology-updater publish
// (k8stopologyawareschedwg/noderesourcetopology-api pkg/apis/topology/v1alpha2/types.go; the
// CRD schema in kubernetes-sigs/node-feature-discovery
// deployment/base/noderesourcetopologies-crd/noderesourcetopologies.yaml):
//   apiVersion: topology.node.k8s.io/v1alpha2
//   kind: NodeResourceTopology
//   metadata: {name: NODE}
//   topologyPolicies: ["SingleNUMANodePodLevel"]   # deprecated; RTE still sets it
//   attributes: [{name: topologyManagerPolicy, value: single-numa-node},
//                {name: topologyManagerScope, value: pod}]
//   zones:
//   - name: node-0
//     type: Node
//     costs: [{name: node-0, value: 10}, {name: node-1, value: 20}]   # the NUMA distances
//     resources:                                                       # sorted by name
//     - {name: cpu, capacity: "16", allocatable: "15", available: "11"}
//     - {name: memory, capacity: "16Gi", allocatable: "15Gi", available: "9Gi"}
// Quantities are strings (resource.Quantity's JSON form, canonical text). Unlike the two
// exporters, which add up the containers' cpu_ids, a pod's pod-level allocation (KEP-5526) is
// taken once: see agent/observation.h AccountZones.
//
// Example:
//   nlohmann::ordered_json nrt = BuildNodeResourceTopology("node-a", config, zones);
//   std::string yaml = NrtYaml(nrt);    // what --nrt-out holds
#ifndef PODTOPO_AGENT_NODE_RESOURCE_TOPOLOGY_H_
#define PODTOPO_AGENT_NODE_RESOURCE_TOPOLOGY_H_

#include <string>
#include <vector>

#include "agent/observation.h"
#include "config/kubelet_config.h"
#include "nlohmann/json.hpp"

namespace podtopo::agent {

// The deprecated topologyPolicies value RTE derives from the policy and scope
// ("SingleNUMANodePodLevel", "RestrictedContainerLevel", "BestEffortPodLevel", "None").
std::string TopologyPolicyName(const std::string& policy, const std::string& scope);

nlohmann::ordered_json BuildNodeResourceTopology(const std::string& name,
                                                 const config::KubeletConfig& config,
                                                 const std::vector<ZoneAccount>& zones);

// The object as a YAML document (block style, quantities double-quoted).
std::string NrtYaml(const nlohmann::ordered_json& nrt);

}  // namespace podtopo::agent

#endif  // PODTOPO_AGENT_NODE_RESOURCE_TOPOLOGY_H_
