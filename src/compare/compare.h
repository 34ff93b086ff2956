// Compare: the same pods on the same nodes under two or more kubelet configurations
// (`podtopo compare`, ../shared/DESIGN.md "Contract additions").
//
// Every pod runs through admission/node.h's Node::Admit, the code path of `podtopo admit`:
// one Node per (configuration, fleet node), empty at the start, pods admitted in input order.
// A pod goes to the node fleet.h's AssignPods gives it; a first-fit pod is offered to the
// nodes in fleet order and stays on the first that admits it (when none does, it counts as
// rejected, in the total only, with the first node's reason). Nodes are independent: without
// first-fit pods the (configuration, node) runs are spread over threads; with them, the
// configurations are.
//
// What is counted, per node and in total (Tally):
//   pods, admitted, rejected by the kubelet's reason (TopologyAffinityError, OutOfcpu, ...);
//   exclusiveCpus        CPUs of containers with assignment node_exclusive or pod_exclusive
//                        in admitted pods (each CPU once per pod: an init container's CPUs
//                        reused by an app container count once);
//   podSharedPoolCpus    CPUs of admitted pods' bubbles not given to an exclusive container;
//   nodeSharedPoolCpus   the CPU Manager's default set left at the end (it includes the
//                        reserved CPUs, as the kubelet's does; every CPU with policy none);
//   alignedPods          admitted pods whose merged Topology Manager hint is preferred;
//   exclusive CPUs by container kind (app, init, sidecar), and memory per NUMA node and type
//   (allocated and allocatable, from the Memory Manager's tables; empty with policy None).
//
// Identical nodes. With placements by spec.nodeName, two nodes of one topology (a
// SPEC*COUNT, read once) whose pods are, in order, the same pods but for their identities
// get the same answers under a configuration, and only the first is run: the others take
// its tally, default and reserved CPU sets, and its pods' verdicts and reasons, position by
// position. "The same pods" compares everything of a pod but namespace, name, uid, labels,
// source, spec.nodeName and controller: pod-level resources and every container's kind,
// name, image, command, args and resources (each quantity by its text, canonical text,
// format and Go representation), and only when no two pods of either node share a
// namespace/name or a uid. This is exact because Node::Admit is deterministic and reads a
// pod's identity only as the key of its own entries in the node's state (the CPU, memory and
// device assignments, the Topology Manager's affinities) and to echo it in the result; no
// decision depends on the order of those keys (the node's pods are looked up by key, and
// the only walks over all of them take unions of CPU sets). Compare.IdenticalNodesGiveWhatEachNodeGives
// checks it against `share_identical_nodes = false` on random fleets.
//
// Between configurations of different kubelet versions (`--kubelet-version` per `--config`),
// ConfigResult::checkpoints_from_first says what the later version reads of the checkpoints
// the first one writes for the same pods: each file's format, read fully, through its inline
// legacy part (the pods whose pod-level entries a downgrade to 1.36 drops) or refused
// (kubelet::ReadCheckpointFormat).
//
// Differences() puts the change from one configuration to another in words ("sidecars no
// longer hold 14 exclusive CPUs", "3 pods that were admitted are now rejected with
// EmptyPodSharedPoolError"), from the totals and from each pod's two outcomes.
//
// Capacity() answers "how many replicas of each workload fit on an empty node of each
// shape, under each configuration": each workload's first pod is admitted again and again
// (as NAME-r0, NAME-r1, ...) on a fresh Node until one is rejected (the node-fit check
// stops it at the configuration's maxPods, the kubelet's 110 by default, at the latest).
//
// Example:
//   CompareRequest req{.fleet = LoadFleet({"preset:demo"}).value(),
//                      .configs = {{"off.yaml", off, pods_off}, {"on.yaml", on, pods_on}}};
//   auto result = Compare(req);
//   result->configs[1].total.admitted;
//   Differences(result->configs[0], result->configs[1]);   // {"sidecars no longer hold ..."}
//
// Thread safety: Compare and Capacity start their own threads and return when they are done;
// the request is only read.
#ifndef PODTOPO_COMPARE_COMPARE_H_
#define PODTOPO_COMPARE_COMPARE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "admission/node.h"
#include "api/pod.h"
#include "compare/fleet.h"
#include "config/kubelet_config.h"
#include "cpuset/cpuset.h"
#include "kubelet/version.h"

namespace podtopo::compare {

// One configuration under comparison, with the pods as read under its feature gates (their
// defaulting may depend on them). Every configuration holds the same pods in the same order;
// configurations with the same gates share one list (never modified).
struct Configuration {
  std::string name;  // as the report names it: the --config file
  config::KubeletConfig config;
  std::shared_ptr<const std::vector<Pod>> pods;
};

struct CompareRequest {
  std::vector<FleetNode> fleet;
  std::vector<Configuration> configs;
  Placement placement = Placement::kByNodeName;
  int threads = 0;  // 0 = one per hardware thread
  // Identical nodes (see the banner) run once; false runs every node (the tests' oracle).
  bool share_identical_nodes = true;
};

struct MemoryUse {
  uint64_t allocated = 0;
  uint64_t allocatable = 0;
  friend bool operator==(const MemoryUse&, const MemoryUse&) = default;
};

struct Tally {
  int pods = 0;
  int admitted = 0;
  std::map<std::string, int> rejected;  // reason -> pods
  int exclusive_cpus = 0;
  int pod_shared_pool_cpus = 0;
  int node_shared_pool_cpus = 0;
  int aligned_pods = 0;
  std::map<std::string, int> exclusive_cpus_by_kind;  // "app", "init", "sidecar" -> CPUs
  std::map<int, std::map<std::string, MemoryUse>> memory;  // NUMA id -> type -> use

  int Rejected() const;
  // Adds `other` in (the total of several nodes: memory adds up per NUMA id).
  void Add(const Tally& other);
  friend bool operator==(const Tally&, const Tally&) = default;
};

// What happened to one pod under one configuration.
struct PodOutcome {
  std::string pod;  // namespace/name
  int node = -1;  // the node it was admitted on or rejected by; -1 for a first-fit pod no
                  // node admitted
  bool admitted = false;
  std::string reason;  // the kubelet's reason when rejected
  // Admitted with a pod-level entry (KEP-5526) in cpu_manager_state / memory_manager_state.
  bool pod_cpu_entry = false;
  bool pod_memory_entry = false;
};

// What one checkpoint file, as the first configuration's kubelet writes it, becomes when a
// kubelet of another version starts with it (an upgrade or a downgrade).
struct CheckpointFileRead {
  kubelet::CheckpointFile file = kubelet::CheckpointFile::kCpu;
  int written = 0;           // the format the first configuration's kubelet writes
  kubelet::CheckpointRead read;  // how the other version reads it (kubelet/version.h)
  // kLegacyPart: the admitted pods (namespace/name) whose pod-level entries the read drops.
  std::vector<std::string> pods_dropped;
};

struct CheckpointCompatibility {
  std::string from_version;  // the first configuration's kubelet, which wrote the files
  std::string to_version;    // the kubelet that reads them
  std::vector<CheckpointFileRead> files;  // cpu_manager_state, memory_manager_state
};

struct NodeResult {
  std::string node;
  Tally tally;
  CpuSet default_cpu_set;
  CpuSet reserved_cpus;
};

struct ConfigResult {
  std::string config;
  std::string kubelet_version;  // the configuration's kubelet version ("" = none)
  Tally total;
  std::vector<NodeResult> nodes;  // in fleet order
  std::vector<PodOutcome> pods;   // in input order
  // For a configuration after the first whose kubelet version differs from the first's: what
  // it reads of the checkpoints the first one's kubelet wrote for these pods.
  std::optional<CheckpointCompatibility> checkpoints_from_first;
};

struct CompareResult {
  Placement placement = Placement::kByNodeName;
  bool first_fit_used = false;  // some pod was placed first-fit
  std::vector<ConfigResult> configs;
};

// Runs the comparison. Errors: AssignPods' (bad spec.nodeName, pods without a node), a
// configuration whose pods differ in number from the first's, and Node::Create's (an invalid
// configuration for the node), naming the configuration and the node.
absl::StatusOr<CompareResult> Compare(const CompareRequest& request);

// The tally of one node's admission results, as Compare counts them (`admit`'s results and
// the Node they ran on; rejected pods count by reason).
Tally TallyOf(const std::vector<PodAllocation>& results, const Node& node);

// The change from `before` to `after`, one sentence per difference (empty when the two
// configurations decide every pod the same way and every count is equal).
std::vector<std::string> Differences(const ConfigResult& before, const ConfigResult& after);

struct CapacityRow {
  std::string workload;  // namespace/name of the pod that stands for it
  std::string shape;     // the first fleet node of that shape (its source)
  std::vector<int> replicas;  // per configuration
  // Per configuration: why the next replica was rejected ("OutOfcpu", ...).
  std::vector<std::string> stopped_by;
};

// For every workload (each distinct pod) and every distinct node shape of the fleet.
absl::StatusOr<std::vector<CapacityRow>> Capacity(const CompareRequest& request);

}  // namespace podtopo::compare

#endif  // PODTOPO_COMPARE_COMPARE_H_
