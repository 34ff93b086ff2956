// What podtopo writes into a NodeResourceTopology beyond the standard fields, and how it is
// read back: the attributes that make the NRT an exact description of the node for
// `podtopo extender` (the agent writes them: agent/node_resource_topology.h).
//
//   podtopo.io/cpu-topology-digest  "fnv1a64:<16 hex>" of the topology's canonical JSON
//   podtopo.io/kubelet-version      "1.37"
//   podtopo.io/reserved-cpus        "0"           (when the configuration reserves any)
//   podtopo.io/kubelet-config       {"apiVersion":"kubelet.config.k8s.io/v1beta1",...}
//   zones[*] podtopo.io/free-cpus   "2-7,18-23" | "none"
//
// podtopo.io/kubelet-config is a compact JSON KubeletConfiguration holding every field the
// admission reads (the fields KubeletConfig::ToYaml writes: feature gates, CPU Manager policy
// and options, Memory Manager policy and reservedMemory, Topology Manager policy, scope and
// options, reservedSystemCPUs, kube/system reserved, evictionHard), so that the reader
// rebuilds the same KubeletConfig with the ordinary reader (ParseKubeletConfig: JSON is YAML).
//
// Example:
//   std::string v = KubeletConfigAttribute(config);       // on the node
//   auto back = ParseKubeletConfigAttribute(v, "NRT node-a");  // in the extender
//   back->SameSettings(config);                            // true
//
// Thread safety: pure functions.
#ifndef PODTOPO_EXTENDER_NRT_ATTRIBUTES_H_
#define PODTOPO_EXTENDER_NRT_ATTRIBUTES_H_

#include <string>

#include "absl/status/statusor.h"
#include "config/kubelet_config.h"
#include "topology/node_topology.h"

namespace podtopo::extender {

inline constexpr char kAttrCpuTopologyDigest[] = "podtopo.io/cpu-topology-digest";
inline constexpr char kAttrKubeletVersion[] = "podtopo.io/kubelet-version";
inline constexpr char kAttrReservedCpus[] = "podtopo.io/reserved-cpus";
inline constexpr char kAttrKubeletConfig[] = "podtopo.io/kubelet-config";
inline constexpr char kAttrFreeCpus[] = "podtopo.io/free-cpus";
inline constexpr char kNoFreeCpus[] = "none";

// "fnv1a64:<16 hex digits>" of the topology's canonical JSON (WriteTopologyJson).
std::string CpuTopologyDigest(const NodeTopology& topology);

// The compact JSON of `config`'s admission fields (see the banner). kubelet_version is not in
// it (podtopo.io/kubelet-version carries it).
std::string KubeletConfigAttribute(const config::KubeletConfig& config);

// Reads the attribute back. Errors (kInvalidArgument) start with `source` and name the field.
absl::StatusOr<config::KubeletConfig> ParseKubeletConfigAttribute(const std::string& value,
                                                                  const std::string& source);

}  // namespace podtopo::extender

#endif  // PODTOPO_EXTENDER_NRT_ATTRIBUTES_H_
