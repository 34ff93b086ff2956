// Node: the admission pipeline of one simulated kubelet (the "node facade").
//
// A Node owns what a kubelet's container manager owns for resource management: the static CPU
// Manager (or none), the Static Memory Manager (or None), the device manager, and the Topology
// Manager with its policy and scope. Admit() runs a pod through the same steps as a kubelet
// receiving it: the node-fit check against allocatable (OutOfcpu, OutOfmemory, ...), then the
// Topology Manager scope (hints from every provider, the policy's merge, and allocation), and
// records the result. Remove() releases a pod the way the managers' RemoveContainer does.
//
// With a state directory, the CPU and memory checkpoints are read at Create() in the kubelet's
// formats, as config.kubelet_version reads them (its load chains: admission/state_files.h),
// validated as the kubelet's Start does, and rewritten after every change in the formats that
// version writes (1.36: CPU V3 / memory V2 with PodLevelResourceManagers on), together
// with podtopo's own record of admitted pods (`podtopo_pods.json`). The record is written
// after the checkpoints on admission and before them on removal, and Create() reconciles the
// checkpoints with the record (entries of pods it does not list are released), so a crash at
// any point loses no admitted pod and duplicates none.
//
// Example:
//   auto node = Node::Create(LoadNode("preset:demo").value(), config::SeedDefault(), {});
//   PodAllocation a = (*node)->Admit(pod);
//   a.admitted;            // true
//   a.cpus.String();       // the pod's bubble, e.g. "1-2"
//
// Thread safety: not thread-safe; callers serialise.
#ifndef PODTOPO_ADMISSION_NODE_H_
#define PODTOPO_ADMISSION_NODE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "admission/trace.h"
#include "api/pod.h"
#include "config/kubelet_config.h"
#include "cpuset/cpuset.h"
#include "topology/node_topology.h"
#include "topologymanager/topology_hint.h"

namespace podtopo {

struct MemoryBlockView {
  std::string type;  // "memory", "hugepages-2Mi", ...
  uint64_t size = 0;
  std::vector<int> numa_nodes;
  friend bool operator==(const MemoryBlockView&, const MemoryBlockView&) = default;
};

struct ContainerAllocation {
  std::string name;
  ContainerKind kind = ContainerKind::kApp;
  // False where the source does not say which kind the container is: the PodResources API
  // (the agent's observed picture) names containers but not init containers or sidecars.
  bool kind_known = true;
  // The cpuset the container runs on: its state entry, or the node's default set.
  CpuSet cpus;
  // "node_exclusive", "pod_exclusive", "pod_shared" or "node_shared".
  std::string assignment;
  std::vector<MemoryBlockView> memory;
  std::map<std::string, std::vector<std::string>> devices;  // resource -> device ids
  // The merged hint stored for this container; nullopt when none was merged.
  std::optional<topologymanager::TopologyHint> topology_hint;
};

struct PodAllocation {
  std::string namespace_name;
  std::string name;
  std::string uid;
  bool admitted = false;
  std::string reason;   // the kubelet's rejection reason ("" when admitted)
  std::string message;  // the pod's status message ("" when admitted)
  QosClass qos = QosClass::kBestEffort;
  std::optional<topologymanager::TopologyHint> topology_hint;
  CpuSet cpus;                          // pod-level bubble (pod scope with pod-level resources)
  std::vector<MemoryBlockView> memory;  // pod-level memory blocks
  std::vector<ContainerAllocation> containers;
  // Set by Admit when the node held a pod of this namespace, name and uid with another spec
  // (SamePodSpec, api/pod.h): that pod's allocation was released and this spec admitted (or
  // rejected) in its place. Commands say "pod NS/NAME changed; admitting it again".
  bool replaced = false;
  // What this admission saw and decided (admission/trace.h); set by Admit for a pod it ran
  // through the pipeline, null for pods reported as already admitted, for AdmittedPods() and
  // when tracing is off (Node::set_tracing).
  // Not part of any existing output (table, json, yaml); `-o wide` and `explain` show it.
  std::shared_ptr<const AdmissionTrace> trace;
};

// What a kubelet restart does to one pod that runs on the node (Node::Options::restart).
struct RestartPod {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string outcome;  // "kept", "moved" or "rejected"
  // The pod's CPUs (its bubble, else the union of its containers' entries; empty when it runs
  // in the shared pool) and the NUMA nodes of its memory, before and after the restart.
  CpuSet cpus_before;
  CpuSet cpus_after;
  std::vector<int> memory_numa_before;
  std::vector<int> memory_numa_after;
  std::string reason;   // rejected: the kubelet's reason
  std::string message;  // rejected: the pod's status message
  // The upstream issues whose bug decided this pod's outcome in this version ("k/k#140989").
  std::vector<std::string> upstream;
};

// `podtopo state restart`: what a kubelet of config.kubelet_version does when it restarts.
struct RestartReport {
  std::vector<RestartPod> pods;  // in re-admission order
  CpuSet default_before;         // the CPU Manager's default set, restored and after
  CpuSet default_after;
  // CPUs in no entry and not in the default set after the restart (k/k #140989).
  CpuSet leaked_cpus;
  // Memory reserved in the machine state beyond what the assignments hold, after the restart
  // (k/k #140906): memory type -> bytes.
  std::map<std::string, uint64_t> leaked_memory;
};

class Node {
 public:
  struct Options {
    // Where cpu_manager_state, memory_manager_state and podtopo_pods.json live; "" = in memory.
    std::string state_dir;
    // Reads the state dir but never writes it (`podtopo explain`: what admit WOULD do).
    bool read_only = false;
    // Test oracle: every hint provider walks all 2^N NUMA masks as the kubelet does instead of
    // describing its hints by structure (topologymanager/hint_set.h). Exponential in the NUMA
    // nodes; the answers must be the same.
    bool exhaustive_hints = false;
    // Predicts a kubelet restart (`podtopo state restart`; needs read_only and a state dir):
    // the restored pods are admitted again as config.kubelet_version does when it restarts (its
    // restart bugs included: kubelet::Behavior's restart fields), without the hints podtopo
    // recorded, and each pod's outcome goes into *restart instead of failing Create. Without
    // it Create restores a node that never stopped (the fixed restart behaviour).
    RestartReport* restart = nullptr;
    // The pods that run on the node, in place of podtopo's record (a kubelet's own directory
    // has none): matched to the checkpoints by uid, re-admitted in this order.
    const std::vector<Pod>* running_pods = nullptr;

    // Resources that pods this Node does not know hold on the node at Create, so that the
    // node starts in a given state instead of empty (`podtopo extender` rebuilds a node from its
    // NodeResourceTopology: what the NRT reports as not available is occupied). Create takes
    // them out of the managers' state as one synthetic holder, pod uid kOccupiedHolderUid,
    // container "occupied", exactly as if a pod held them:
    //  * cpus: a CPU Manager assignment (the CPUs leave the default set); they must be
    //    allocatable (not reserved) CPUs of the topology; ignored with the none policy;
    //  * memory: one single-NUMA block per (NUMA node, type): the Memory Manager's reserved
    //    and free of that node change and its assignment count grows by one, as for a pod whose
    //    memory sits on that one node (a multi-NUMA group cannot be described here: cells stay
    //    [id]); the bytes must fit the node's free memory; ignored with policy None;
    //  * devices: the device ids held (device manager), which must exist.
    // The holder is not an admitted pod: AdmittedPods() does not list it and it cannot be
    // Remove()d. In the node-fit check its resources count as used (cpu = its CPUs, memory
    // and hugepages = its bytes, devices = its ids), a lower bound of what the pods behind it
    // request: an NRT says nothing of shared-pool requests or of the pod count. Needs an in-memory node (no state_dir);
    // errors (kInvalidArgument) name the CPU, NUMA node and type, or device.
    struct Occupied {
      CpuSet cpus;
      std::map<int, std::map<std::string, uint64_t>> memory;  // NUMA -> type -> bytes
      std::map<std::string, std::vector<std::string>> devices;  // resource -> device ids
    };
    const Occupied* occupied = nullptr;
  };
  // The pod uid of Options::occupied's synthetic holder.
  static constexpr char kOccupiedHolderUid[] = "podtopo.io/occupied";

  // Builds the managers from the kubelet configuration (validated here as the kubelet does at
  // start) and, with a state dir, restores and validates the checkpoints. Errors name the
  // field or file. A node that may write its state dir (not read_only) holds the directory's
  // lock for its lifetime (util/dir_lock.h): kFailedPrecondition "state dir D is in use by
  // podtopo serve (pid N)" while another process holds it.
  static absl::StatusOr<std::unique_ptr<Node>> Create(NodeTopology topology,
                                                      config::KubeletConfig config,
                                                      Options options);
  ~Node();

  // Admits `pod` as a kubelet receiving it. A pod already admitted with the same spec
  // (SamePodSpec) is reported as it is, unchanged, without a trace. A pod of the same
  // namespace/name and uid with another spec replaces it: the old allocation is released and
  // `pod` is admitted as a new pod (PodAllocation::replaced; if `pod` is rejected, the old one
  // stays released, as when a kubelet's pod is deleted and created again). The same
  // namespace/name with another uid is an error (kAlreadyExists: remove it first). A rejected
  // pod leaves no state behind. With a state dir the new state is written before returning
  // (not with Options::read_only); a write failure is returned as an error and leaves the pod
  // not admitted. The result carries the admission's trace.
  absl::StatusOr<PodAllocation> Admit(const Pod& pod);

  // A pod named by namespace and name.
  struct PodName {
    std::string namespace_name;
    std::string name;
  };
  // Releases the pods, all or nothing: if any is not admitted, kNotFound names every such pod
  // and nothing changes. Otherwise all are released together and the state dir is written
  // once. Returns their allocations as they were before the release (duplicates count once).
  absl::StatusOr<std::vector<PodAllocation>> Remove(const std::vector<PodName>& pods);
  // Remove of one pod.
  absl::StatusOr<PodAllocation> Remove(const std::string& namespace_name, const std::string& name);

  // Admitted pods, in admission order.
  std::vector<PodAllocation> AdmittedPods() const;
  const Pod* FindPod(const std::string& namespace_name, const std::string& name) const;

  // Whether Admit fills PodAllocation::trace (on by default). Off, the admission decides and
  // allocates the same and the trace stays null: `podtopo admit` turns it off unless `-o wide`
  // shows it; `serve` and `nri` never read it.
  void set_tracing(bool on);

  const NodeTopology& topology() const;
  const config::KubeletConfig& config() const;
  // The CPU Manager's default (shared) set; all CPUs with the none policy.
  CpuSet DefaultCpuSet() const;
  // Reserved CPUs (empty with the none policy).
  CpuSet ReservedCpus() const;
  // CPUs minus reserved (static policy), as GetAllocatableResources reports them.
  CpuSet AllocatableCpus() const;

  // The Memory Manager's machine state: NUMA id -> memory type -> table (empty with policy
  // None), for invariant checks and pictures.
  struct MemoryTableView {
    uint64_t allocatable = 0;
    uint64_t reserved = 0;
    uint64_t free = 0;
  };
  std::map<int, std::map<std::string, MemoryTableView>> MemoryTables() const;

  class Impl;

 private:
  explicit Node(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The fix for a Topology Manager that refuses `topology` for its number of NUMA nodes (more
// than max-allowable-numa-nodes, 8 by default; the kubelet's "unsupported on machines with more
// than 8 NUMA Nodes"), or "" when `config` allows them (or policy none ignores them):
//   "preset:gb200 has 34 NUMA nodes: set topologyManagerPolicyOptions: {max-allowable-numa-nodes: \"34\"}"
// Node::Create adds it to that refusal, so every command that builds a node says it, and
// `podtopo lint` gives it as the node-startup fix.
std::string NumaNodeLimitFix(const NodeTopology& topology, const config::KubeletConfig& config);

}  // namespace podtopo

#endif  // PODTOPO_ADMISSION_NODE_H_
