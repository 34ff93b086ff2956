// PodView: what a PodResources v1 answer means for one pod, counted once.
//
// A v1.37 kubelet reports a pod with a pod-level exclusive allocation (KEP-5526, topology
// manager scope "pod") twice over: PodResources.cpu_ids / memory hold the whole pod bubble,
// and each exclusive container's cpu_ids / memory hold its subset of that bubble. Containers
// that run in the pod's shared pool report nothing. The consumer rules (kep5526.md §8.2):
//   pod shared pool       = Pod.cpu_ids − ∪ Container.cpu_ids
//   node-wide usage (pod) = Pod.cpu_ids if non-empty, else ∪ Container.cpu_ids (never both);
// the same for memory (Pod.memory if non-empty, else the containers' blocks).
//
// Servers without the pod-level fields (kubelets before v1.37, or the gate off) report
// container-level fields only; the rules above then reduce to the containers. A v1.36 kubelet
// with pod-level allocations reported each pod-shared-pool container with the shared pool's
// cpuset as if it were exclusive. Exclusive allocations of two containers never overlap, so
// containers whose reported CPUs overlap another container's are recognised as sharing
// ("legacy shared", Pool::kLegacyShared): their CPUs and their identical memory blocks are
// counted once. A lone shared container of such a server cannot be told from an exclusive one.
//
// CPUs are mapped to NUMA nodes with a NumaMap (the PodResources API does not say which NUMA
// node a CPU is on): the caller builds it from the node's topology. Memory blocks carry their
// own NUMA nodes; a block spanning several nodes is totalled under that group ("0,1").
//
// Example:
//   v1::PodResources pod = ...;   // from List or Get
//   absl::StatusOr<PodView> view = BuildPodView(pod, numa_map);
//   view->shared_pool.String();   // "4-5"
//   view->usage_cpus.Size();      // 4: the bubble, not 4 + 2
#ifndef PODTOPO_CLIENT_POD_VIEW_H_
#define PODTOPO_CLIENT_POD_VIEW_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cpuset/cpuset.h"
#include "podresources/v1/api.pb.h"

namespace podtopo::client {

// NUMA node id -> its CPUs. Empty = unknown (per-NUMA CPU totals are then not computed).
using NumaMap = std::map<int64_t, CpuSet>;

// Largest CPU id accepted from a server (Linux NR_CPUS tops out at 8192); a larger or negative
// id is a broken answer, reported as an error rather than allocating a huge set.
inline constexpr int64_t kMaxCpuId = (1 << 20) - 1;

struct MemoryBlock {
  std::string type;           // "memory", "hugepages-2Mi", ...
  uint64_t size = 0;          // bytes
  std::vector<int64_t> numa;  // sorted, unique; empty = no topology reported
  friend bool operator==(const MemoryBlock&, const MemoryBlock&) = default;
};

struct DeviceView {
  std::string resource;
  std::vector<std::string> ids;
  std::vector<int64_t> numa;
};

struct ClaimView {
  std::string name;
  std::string namespace_;
  std::vector<std::string> devices;  // "driver/pool/device", or CDI names when only those are set
};

enum class Pool {
  kExclusive,     // the container reported its own (exclusive) CPUs
  kPodShared,     // pod-level allocation; the container runs in the pod's shared pool
  kNodeShared,    // no allocation of its own: the node's shared pool
  kLegacyShared,  // pre-1.37 server: reported CPUs overlap another container's (shared)
};
// "exclusive", "pod-shared", "node-shared", "legacy-shared".
const char* PoolName(Pool pool);

struct ContainerView {
  std::string name;
  Pool pool = Pool::kNodeShared;
  CpuSet reported_cpus;             // cpu_ids as the server reported them
  CpuSet cpus;                      // the CPUs it runs on when known (pod shared pool too)
  std::vector<MemoryBlock> memory;  // as reported
  std::vector<DeviceView> devices;
  std::vector<ClaimView> claims;
};

struct NumaTotals {
  std::vector<int64_t> numa;  // one node, or a group of a multi-NUMA block;
                              // empty = not known
  CpuSet cpus;
  std::map<std::string, uint64_t> memory;  // type -> bytes
};

struct PodView {
  std::string namespace_;
  std::string name;
  // True when the server filled PodResources.cpu_ids or .memory for this pod.
  bool pod_level = false;
  CpuSet pod_cpus;
  std::vector<MemoryBlock> pod_memory;
  std::vector<ContainerView> containers;  // in the server's order
  // ∪ of the CPUs of the exclusive containers.
  CpuSet exclusive_container_cpus;
  // pod_cpus − exclusive_container_cpus; for a pre-1.37 server, the CPUs the legacy-shared
  // containers reported (minus the exclusive ones).
  CpuSet shared_pool;
  // What the pod takes from the node, counted once: pod_cpus if non-empty, else the union of
  // every container's reported CPUs.
  CpuSet usage_cpus;
  // Memory by type, counted once: pod_memory if non-empty, else the containers' blocks.
  std::map<std::string, uint64_t> usage_memory;
  std::vector<MemoryBlock> usage_blocks;  // the blocks usage_memory sums
  // usage_cpus and the usage memory blocks split by NUMA node (ascending; groups and unknown
  // last).
  std::vector<NumaTotals> numa;
  // Inconsistencies in the answer (a container CPU outside the pod's set, a CPU on no known
  // NUMA node). The view is still built.
  std::vector<std::string> warnings;
};

// Builds the view of one pod. Errors: kInvalidArgument for a CPU id outside [0, kMaxCpuId]
// (naming the pod, container and id).
absl::StatusOr<PodView> BuildPodView(const v1::PodResources& pod, const NumaMap& numa_map);

// Node-wide totals of a List answer: the union of the pods' usage CPUs (which never overlap on a
// sound server; overlaps are warned about) and the sum of their usage memory.
struct NodeUsage {
  CpuSet cpus;
  std::map<std::string, uint64_t> memory;
  std::vector<NumaTotals> numa;
  std::vector<std::string> warnings;
};
NodeUsage SumUsage(const std::vector<PodView>& pods, const NumaMap& numa_map);

// GetAllocatableResources, per NUMA node.
struct AllocatableView {
  CpuSet cpus;
  std::vector<MemoryBlock> memory;
  std::vector<DeviceView> devices;
  std::vector<NumaTotals> numa;  // CPUs by numa_map, memory by the blocks' NUMA nodes
  std::vector<std::string> warnings;
};
absl::StatusOr<AllocatableView> BuildAllocatableView(const v1::AllocatableResourcesResponse& r,
                                                     const NumaMap& numa_map);

}  // namespace podtopo::client

#endif  // PODTOPO_CLIENT_POD_VIEW_H_
