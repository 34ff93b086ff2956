// Lint: the Pod-Level Resource Managers adoption checklist (`podtopo lint`).
//
// Lint reads a kubelet configuration, a node and some pods, and reports every finding a node
// operator needs before turning KEP-5526 on, each with a severity, a stable code, the file
// and field it is about, a message naming the amounts and NUMA nodes, and a fix hint:
//   - the configuration's decode findings (unknown fields with a "did you mean", duplicates,
//     type errors) and the kubelet's own start-up checks (KubeletConfig::Validate: gate
//     dependency, static CPU reservation, reservedMemory against Node Allocatable, policy
//     names and options), each given a lint code;
//   - the checklist on top: gates off or implicit, cpuManagerPolicy not static,
//     memoryManagerPolicy not Static, topologyManagerPolicy none, container scope;
//   - for every pod: the container roles (the CPU Manager's own classification, see
//     ClassifyPod), an empty pod shared pool (the kubelet's validatePodScopeResources, with
//     the rejection reason the admission gives: Node::Admit on an empty node), a pod
//     that is not Guaranteed, non-integral budgets, budgets larger than any single NUMA node
//     under single-numa-node, SMT misaligned budgets under full-pcpus-only, sidecars that hold
//     exclusive cores, and budgets left idle.
// Codes are listed in docs/lint.md; they never change meaning.
//
// Example:
//   auto parsed = config::LoadKubeletConfig("kubelet.yaml");
//   LintReport report = Lint(*parsed, LoadNode("preset:demo").value(), pods);
//   report.HasErrors();        // the exit status of `podtopo lint` is 1 when true
//   RenderLintTable(report);   // or RenderLintJson(report)
//
// Thread safety: pure functions over values.
#ifndef PODTOPO_LINT_LINT_H_
#define PODTOPO_LINT_LINT_H_

#include <string>
#include <vector>

#include "api/pod.h"
#include "config/kubelet_config.h"
#include "nlohmann/json.hpp"
#include "topology/node_topology.h"

namespace podtopo::lint {

enum class Severity { kError, kWarning, kInfo };
const char* SeverityName(Severity severity);  // "error", "warning", "info"

struct Finding {
  Severity severity = Severity::kError;
  std::string code;   // stable: "gate-dependency", "empty-shared-pool", ...
  std::string file;   // the configuration or pod file ("" when none)
  std::string field;  // "featureGates.PodLevelResourceManagers", "spec.resources.requests.cpu"
  int line = 0;       // 1-based; 0 when unknown (pods carry no positions)
  int column = 0;
  std::string pod;        // "namespace/name" for a pod finding, else ""
  std::string container;  // the container a pod finding is about, else ""
  std::string message;
  std::string hint;  // how to fix it
};

// Where a container's CPUs come from, as the CPU Manager classifies it
// (cpumanager::ContainerAssignmentName): "node_exclusive", "pod_exclusive", "pod_shared",
// "node_shared".
struct ContainerRole {
  std::string name;
  ContainerKind kind = ContainerKind::kApp;
  std::string role;
  int exclusive_cpus = 0;  // CPUs of its own (0 for shared roles)
  std::string reason;      // why, in words ("cpu 2/2 and memory 2Gi/2Gi are Guaranteed ...")
};

struct PodRoles {
  std::string pod;   // namespace/name
  std::string file;  // pod.source
  QosClass qos = QosClass::kBestEffort;
  // The pod's CPU bubble (pod scope, pod-level resources, both gates, static policy); 0 = none.
  int bubble_cpus = 0;
  std::vector<ContainerRole> containers;  // init containers then app containers
};

struct LintReport {
  std::string config_file;
  std::string node;  // the node's source ("preset:demo")
  std::vector<Finding> findings;
  std::vector<PodRoles> pods;

  int Count(Severity severity) const;
  bool HasErrors() const { return Count(Severity::kError) > 0; }
};

// The CPU Manager's placement of every init and app container of `pod` under `config`, on an
// empty node, as the kubelet's admission would leave it: the Topology Manager's dispatch
// (none / container / pod scope, and the pod-level path when PodLevelResourceManagers is on
// and the pod sets spec.resources), then the static policy's GuaranteedCpus /
// PodGuaranteedCpus, then StaticPolicy::ClassifyContainer's rule (an entry in a pod bubble is
// pod_exclusive when the container is Guaranteed on its own, else pod_shared). A pod that
// admission would reject (e.g. an empty pod shared pool) is classified as if admitted; the
// rejection is a separate finding. cpuManagerPolicy other than static: every container is
// node_shared.
PodRoles ClassifyPod(const config::KubeletConfig& config, const Pod& pod);

// The whole checklist. `parsed.findings` (decode problems) are included with lint codes;
// the configuration is validated against `node`'s capacity. Never fails.
LintReport Lint(const config::ParsedKubeletConfig& parsed, const NodeTopology& node,
                const std::vector<Pod>& pods);

// Decode findings that mean the file is not a YAML mapping at all (syntax error, empty file,
// a sequence or scalar document): `podtopo lint` reports them as bad input (exit 1, no
// report), as every other command does.
bool IsUnreadable(const config::Finding& finding);

// Output. The table lists the findings (file:line:col: severity [code] field: message, then
// "  fix: hint"), then the container roles, then a summary line. The JSON is one object:
//   {"config", "node", "summary": {"errors","warnings","infos"}, "findings": [{"severity",
//    "code","file","field","line","column","pod","container","message","hint"}],
//    "pods": [{"pod","file","qos","bubbleCpus","containers": [{"name","kind","role",
//    "exclusiveCpus","reason"}]}]}
// with every key always present (0 / "" when unknown), in this order.
std::string RenderLintTable(const LintReport& report);
nlohmann::ordered_json LintJson(const LintReport& report);
std::string RenderLintJson(const LintReport& report);  // LintJson(report).dump(2) + "\n"

}  // namespace podtopo::lint

#endif  // PODTOPO_LINT_LINT_H_
