// The static CPU policy's allocation algorithms (kubelet cpumanager/cpu_assignment.go).
//
// TakeByTopologyNumaPacked fills whole NUMA nodes / sockets, then (optionally) uncore caches,
// then whole cores, then single CPUs, always preferring the fullest elements, so allocations
// pack tightly. TakeByTopologyNumaDistributed spreads a request evenly over the fewest NUMA
// nodes that can hold it (distribute-cpus-across-numa). Both agree bit for bit with the
// kubelet, including its quirks (see ../shared/spec/cpumanager.md §3); unlike the kubelet,
// the distributed search always terminates (upstream fix k/k #140730).
//
// Example (topoSingleSocketHT, cpu c on core c mod 4):
//   TakeByTopologyNumaPacked(topo, CpuSet::Parse("1,3,5-7").value(), 1,
//                            CpuSortingStrategy::kPacked, false);   // {6}
//
// Errors (kResourceExhausted / kInternal) carry the kubelet's texts:
//   "not enough cpus available to satisfy request: requested=4, available=2".
#ifndef PODTOPO_CPUMANAGER_CPU_ASSIGNMENT_H_
#define PODTOPO_CPUMANAGER_CPU_ASSIGNMENT_H_

#include "absl/status/statusor.h"
#include "cpuset/cpuset.h"
#include "topology/cpu_topology.h"

namespace podtopo::cpumanager {

enum class CpuSortingStrategy {
  kPacked,  // default: fullest cores first, whole cores taken
  kSpread,  // distribute-cpus-across-cores: no whole-core step, CPUs in socket/id order
};

// takeByTopologyNUMAPacked.
absl::StatusOr<CpuSet> TakeByTopologyNumaPacked(const CpuTopology& topo, const CpuSet& available,
                                                int num_cpus, CpuSortingStrategy strategy,
                                                bool prefer_align_by_uncore_cache);

// takeByTopologyNUMADistributed. `cpu_group_size` is 1, or CpusPerCore() with
// full-pcpus-only. `align_by_socket` (v1.37 #139778) prefers NUMA combinations within one
// socket. `min_numas_from_hint` (v1.37 #139456) raises the minimum NUMA count; 0 = off.
absl::StatusOr<CpuSet> TakeByTopologyNumaDistributed(const CpuTopology& topo,
                                                     const CpuSet& available, int num_cpus,
                                                     int cpu_group_size,
                                                     CpuSortingStrategy strategy,
                                                     bool align_by_socket,
                                                     int min_numas_from_hint);

}  // namespace podtopo::cpumanager

#endif  // PODTOPO_CPUMANAGER_CPU_ASSIGNMENT_H_
