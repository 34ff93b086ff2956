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
// podtopo adds its own attributes, so that a reader that knows them (podtopo extender) has the
// node's exact state; other consumers read the standard fields and ignore these:
//   attributes:
//   - {name: podtopo.io/cpu-topology-digest, value: "fnv1a64:9c1f..."}  # CpuTopologyDigest
//   - {name: podtopo.io/kubelet-version, value: "1.37"}
//   - {name: podtopo.io/reserved-cpus, value: "0"}         # when the configuration reserves any
//   - {name: podtopo.io/kubelet-config, value: '{"apiVersion":...}'}  # every kubelet-config
//                             # field admission reads, compact JSON (extender/nrt_attributes.h)
//   zones[*].attributes:
//   - {name: podtopo.io/free-cpus, value: "2-7,18-23"}     # the CPU ids of `available`,
//                                                          # "none" when there are none
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

// Top-level attribute names podtopo adds (docs/agent.md).
inline constexpr char kAttrCpuTopologyDigest[] = "podtopo.io/cpu-topology-digest";
inline constexpr char kAttrKubeletVersion[] = "podtopo.io/kubelet-version";
inline constexpr char kAttrReservedCpus[] = "podtopo.io/reserved-cpus";
// The zone attribute with the free CPU ids.
inline constexpr char kAttrFreeCpus[] = "podtopo.io/free-cpus";
// Its value for an empty set: the API server 1.20 refuses "" in a server-side apply (HTTP 422,
// "zones.attributes.value in body must be of type string: \"null\"").
inline constexpr char kNoFreeCpus[] = "none";

// The free-cpus value of `free`: a cpuset list ("2-7,18"), or kNoFreeCpus.
std::string FreeCpusValue(const CpuSet& free);

// "fnv1a64:<16 hex digits>" of the topology's canonical JSON (WriteTopologyJson): equal digests,
// equal CPU/NUMA topology. A reader compares it with the digest of the topology it was given
// for that node (a preset, a `podtopo topology -o json` file) before trusting free-cpus.
std::string CpuTopologyDigest(const NodeTopology& topology);

// `cpu_topology_digest` "" leaves that attribute out.
nlohmann::ordered_json BuildNodeResourceTopology(const std::string& name,
                                                 const config::KubeletConfig& config,
                                                 const std::vector<ZoneAccount>& zones,
                                                 const std::string& cpu_topology_digest = "");

// The object with metadata.ownerReferences naming the Node (apiVersion v1, kind Node, name,
// uid): the garbage collector deletes the NRT with its Node.
nlohmann::ordered_json WithNodeOwner(nlohmann::ordered_json nrt, const std::string& node_name,
                                     const std::string& node_uid);

// The object as a YAML document (block style, quantities double-quoted).
std::string NrtYaml(const nlohmann::ordered_json& nrt);

}  // namespace podtopo::agent

#endif  // PODTOPO_AGENT_NODE_RESOURCE_TOPOLOGY_H_
