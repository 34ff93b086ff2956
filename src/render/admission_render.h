// Rendering of admission results: the `-o json` schema of the CLI contract and the table.
//
// JSON (../shared/DESIGN.md, `podtopo admit`): one object {"pods": [...], "node": {...}} with
// camelCase keys in a fixed order, so the output is stable across runs and versions:
//   {"pods": [{"namespace", "name", "uid", "admitted", "reason", "message", "qosClass",
//              "topologyHint": {"affinity": [0], "preferred": true} | null,
//              "cpus", "memory": [{"type", "size", "numaNodes"}],
//              "containers": [{"name", "kind", "cpus", "assignment", "memory",
//                              "devices"?, "topologyHint"?}]}],
//    "node": {"defaultCpuSet", "reservedCpus"}}
// The table reads at a glance: one line per pod (verdict, QoS, NUMA hint, bubble, memory),
// one indented line per container (kind, assignment, cpuset, memory, devices), and the node's
// pools at the bottom.
#ifndef PODTOPO_RENDER_ADMISSION_RENDER_H_
#define PODTOPO_RENDER_ADMISSION_RENDER_H_

#include <string>
#include <vector>

#include "admission/node.h"
#include "explain/explain.h"
#include "nlohmann/json.hpp"

namespace podtopo {

// What the renderers show about the node besides the pods.
struct NodePools {
  CpuSet default_cpu_set;
  CpuSet reserved_cpus;
  // The kubelet version predicted (KubeletConfig::kubelet_version); "" = none (podtopo as the
  // allocator). JSON "kubeletVersion" (null for none); the table's node line names it.
  std::string kubelet_version;
};

nlohmann::ordered_json PodAllocationJson(const PodAllocation& pod);
nlohmann::ordered_json AdmissionJson(const std::vector<PodAllocation>& pods,
                                     const NodePools& node);
// Pretty-printed JSON text with a trailing newline.
std::string RenderAdmissionJson(const std::vector<PodAllocation>& pods, const NodePools& node);
// `wide` adds each container's stored Topology Manager hint and its device ids, and after the
// table the explanation (explain::RenderText) of every pod that carries an admission trace.
std::string RenderAdmissionTable(const std::vector<PodAllocation>& pods, const NodePools& node,
                                 bool wide = false);

// Exact binary units ("2Gi", "1536Mi", "512"): explain::FormatSize, under the name the
// PodResources client's tables (src/client) use. podtopo's own tables and pictures say amounts
// with HumanBytes (resource/human_bytes.h).
inline std::string FormatBytes(uint64_t bytes) { return explain::FormatSize(bytes); }
// "NUMA 0 (preferred)", "NUMA 0,1 (not preferred)" (best-effort admits it), "any (preferred)"
// (nil affinity); "-" without a hint.
std::string FormatHint(const std::optional<topologymanager::TopologyHint>& hint);

}  // namespace podtopo

#endif  // PODTOPO_RENDER_ADMISSION_RENDER_H_
