// AdmissionTrace: what one Node::Admit saw and decided, for `podtopo explain` and `admit -o wide`.
//
// Node::Admit fills a trace for every pod it admits or rejects (PodAllocation::trace) unless
// tracing is off (Node::set_tracing; `podtopo admit` traces only for `-o wide`). Tracing
// only observes: the same calls run in the same order, so the decision and every other output
// are those of an untraced admission. A trace holds:
//   - the pod, the policies and gates that applied, and the managers' own request sizes
//     (the CPU Manager's guaranteedCPUs per container and podGuaranteedCPUs, the Memory
//     Manager's requested memory per container and for the pod);
//   - the node-fit shortage when the pod was rejected before the managers ran;
//   - one MergeStep per Topology Manager merge (one for the pod in pod scope, one per container
//     in container scope): every provider's hints per resource, the policy's merged hint and
//     decision (Policy::Merge re-run on the same hints), the request of that step and a
//     per-NUMA snapshot of free CPUs, memory and devices taken just before the hints;
//   - the allocation failure (provider, container, reason, message) when a provider's
//     Allocate/AllocatePod rejected the pod after the merge.
//
// Example:
//   auto a = node->Admit(pod);
//   const AdmissionTrace& t = *a->trace;
//   t.merges.back().result.hint;          // the merged hint, also for a rejection
//   t.merges.back().numa[1].cpus_free;     // free CPUs on NUMA 1 before the hints
#ifndef PODTOPO_ADMISSION_TRACE_H_
#define PODTOPO_ADMISSION_TRACE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/pod.h"
#include "cpuset/cpuset.h"
#include "topologymanager/policy.h"

namespace podtopo {

// One NUMA node's free resources at the moment a merge step asked for hints.
struct NumaSnapshot {
  int id = 0;
  int cpus_allocatable = 0;  // CPUs of the node minus reserved (static CPU policy)
  int cpus_free = 0;         // default set minus reserved on this node
  std::map<std::string, uint64_t> memory_allocatable;  // type -> bytes (Static memory policy)
  std::map<std::string, uint64_t> memory_free;         // type -> bytes
  int memory_assignments = 0;                           // blocks charged on the node
  std::vector<int> memory_group;  // the node's multi-NUMA memory group (cells), or empty
  std::map<std::string, int> devices_total;  // resource -> devices on the node
  std::map<std::string, int> devices_free;   // resource -> unallocated devices on the node
};

// One provider's answer in one merge step.
struct ProviderHintsTrace {
  std::string provider;  // "devices", "cpu" or "memory"
  topologymanager::ProviderHints hints;
};

// One Topology Manager merge.
struct MergeStep {
  std::string container;  // "" for the pod-scope merge
  std::vector<ProviderHintsTrace> providers;  // registration order: devices, cpu, memory
  topologymanager::MergeResult result;        // the policy's merged hint and decision
  // The request the providers answered for.
  int cpu_request = 0;     // exclusive CPUs (0 = the CPU Manager pins nothing)
  int cpu_reusable = 0;    // init-container CPUs this pod may reuse
  std::map<std::string, uint64_t> memory_request;  // type -> bytes (exclusive memory)
  std::map<std::string, int64_t> device_request;   // device resource -> count
  std::vector<NumaSnapshot> numa;                   // ascending NUMA id
};

// The node-fit shortage (OutOf<resource>); amounts in the fit check's units (cpu millicores,
// memory and hugepages bytes, other resources counts).
struct NodeFitShortage {
  std::string resource;
  int64_t requested = 0;
  int64_t used = 0;
  int64_t capacity = 0;
};

// A provider's allocation that rejected the pod after the merge admitted it.
struct AllocationFailure {
  std::string provider;   // "devices", "cpu" or "memory"
  std::string container;  // "" for AllocatePod
  std::string reason;     // the rejection reason (UnexpectedAdmissionError for untyped errors)
  std::string message;    // the provider's error text
};

struct AdmissionTrace {
  Pod pod;
  // Configuration that applied.
  std::string topology_policy;  // "none", "best-effort", "restricted", "single-numa-node"
  std::string scope;            // the Topology Manager's scope: "container", "pod" or "none"
  std::string cpu_policy;       // "none" or "static"
  std::string memory_policy;    // "None" or "Static"
  std::map<std::string, std::string> cpu_policy_options;
  bool align_by_socket = false;  // the static policy's align-by-socket option is on
  bool pod_level_resources_gate = false;
  bool pod_level_managers_gate = false;
  // Pod scope with pod-level resources and both gates on: one bubble, AllocatePod.
  bool pod_level_path = false;
  int cpus_per_core = 1;
  std::vector<int> numa_ids;
  // The CPU map, to say where a container's CPUs landed against its merged hint: each NUMA
  // node's CPUs, and the socket that holds them (the lowest when several do).
  std::map<int, CpuSet> numa_cpus;
  std::map<int, int> numa_socket;

  // The managers' request sizes (0 / empty without the static policies).
  int pod_cpus = 0;                                    // podGuaranteedCPUs
  std::map<std::string, int> container_cpus;           // guaranteedCPUs per container
  std::map<std::string, uint64_t> pod_memory;          // getPodRequestedResources
  std::map<std::string, std::map<std::string, uint64_t>> container_memory;
  // validatePodScopeResources of the CPU Manager on the pod-level path ("" = passes).
  std::string cpu_shared_pool_error;

  std::optional<NodeFitShortage> node_fit;
  std::vector<MergeStep> merges;
  std::optional<AllocationFailure> allocation_failure;
};

}  // namespace podtopo

#endif  // PODTOPO_ADMISSION_TRACE_H_
