// The static CPU policy's allocation algorithms (kubelet cpumanager/cpu_assignment.go).
//
// TakeByTopologyNumaPacked fills whole NUMA nodes / sockets, then (optionally) uncore caches,
// then whole cores, then single CPUs, always preferring the fullest elements, so allocations
// pack tightly. TakeByTopologyNumaDistributed spreads a request evenly over the fewest NUMA
// nodes that can hold it (distribute-cpus-across-numa). Both agree bit for bit with the
// kubelet (../shared/spec/cpumanager.md §3), including its quirks:
//   - "free" checks use the header ratios CpusPerCore()/CpusPerSocket() for cores and
//     sockets but the full-topology CPU count for NUMA nodes and uncore caches, and a free
//     element is taken whole (all its topology CPUs);
//   - elements are ordered by available CPUs ascending, ties by id; NUMA-first iff
//     num_sockets >= num_numa_nodes (header counts); an element straddling two parents is
//     listed once per parent;
//   - before k/k #141238 the distributed search kept its best NUMA combination as a Go slice
//     whose backing array later combinations overwrite (iterateCombinations aliasing, spec
//     3.5, DERIVED); `keep_best_combination` false reproduces it.
// Where the kubelet would never return, podtopo returns instead: the remainder search uses
// the whole-groups test of k/k #140730, and a remainder sweep that can make no progress (the
// kubelet spins forever there; reachable only through the aliasing or on irregular
// topologies) stops, giving the kubelet's "accounting error" text. Where the kubelet would
// panic (group size 0, CPUsPerCore() 0 in the uncore step) an error is returned.
//
// Example (topoSingleSocketHT, cpu c on core c mod 4):
//   TakeByTopologyNumaPacked(topo, CpuSet::Parse("1,3,5-7").value(), 1,
//                            CpuSortingStrategy::kPacked, false);   // {6}
//
// Errors carry the kubelet's texts:
//   kResourceExhausted  "not enough cpus available to satisfy request: requested=4, available=2"
//                       (available = |available| as passed, CPUs unknown to the topology included)
//   kInternal           "accounting error, not enough CPUs allocated, remaining: 2",
//                       "accounting error, too many CPUs allocated, remaining: -1",
//                       "failed to allocate cpus", or a divide-by-zero report (see above)
//   kInvalidArgument    cpu_group_size <= 0
//
// Performance: per-topology lookup tables are built on first use and cached per thread
// (validated against the topology's full content on every call, so mutating or replacing a
// topology is safe), or passed in as TopologyTables by a caller whose topology never changes.
// A take on a 256-CPU, 8-NUMA machine costs about 1-3 us.
// Thread safety: the functions may be called concurrently from several threads.
#ifndef PODTOPO_CPUMANAGER_CPU_ASSIGNMENT_H_
#define PODTOPO_CPUMANAGER_CPU_ASSIGNMENT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "cpuset/cpuset.h"
#include "topology/cpu_topology.h"

namespace podtopo::cpumanager {

enum class CpuSortingStrategy {
  kPacked,  // default: fullest cores first, whole cores taken
  // distribute-cpus-across-cores: no whole-core step; socket by socket, one CPU of each core in
  // turn (cores by available CPUs ascending, then id; a core's CPUs by id), k/k #140766. The
  // ascending core order is podtopo's reading of the PR (docs/differences.md).
  kSpread,
  // distribute-cpus-across-cores before k/k #140766 (kubelet::Behavior::
  // distribute_across_cores_by_core_topology false): socket by socket, CPUs in id order.
  kSpreadByCpuId,
};

namespace assignment_internal {
struct TopoIndex;
}  // namespace assignment_internal

// The lookup tables of one topology, built once. A caller that takes many times from one
// topology that never changes (StaticPolicy keeps its own copy) passes them to the takes
// below, which then skip the per-call check of the topology's content (an O(CPUs) walk).
// They must have been built from the `topo` passed with them. Immutable; copies share.
class TopologyTables {
 public:
  explicit TopologyTables(const CpuTopology& topo);
  ~TopologyTables();
  TopologyTables(const TopologyTables&);
  TopologyTables& operator=(const TopologyTables&);
  const assignment_internal::TopoIndex& index() const { return *index_; }

 private:
  std::shared_ptr<const assignment_internal::TopoIndex> index_;
};

// takeByTopologyNUMAPacked: `num_cpus` CPUs from `available` (CPUs the topology does not
// know are ignored). num_cpus <= 0 gives the empty set. `prefer_align_by_uncore_cache` is
// the prefer-align-cpus-by-uncorecache option. `tables`: see TopologyTables (null = the
// per-thread cache).
absl::StatusOr<CpuSet> TakeByTopologyNumaPacked(const CpuTopology& topo, const CpuSet& available,
                                                int num_cpus, CpuSortingStrategy strategy,
                                                bool prefer_align_by_uncore_cache,
                                                const TopologyTables* tables = nullptr);

// takeByTopologyNUMADistributed. `cpu_group_size` is 1, or CpusPerCore() with
// full-pcpus-only; when num_cpus is not a multiple of it the packed algorithm is used
// (without the uncore step). `align_by_socket` (v1.37 #139778) prefers NUMA combinations
// within one socket. `min_numas_from_hint` (v1.37 #139456) is the TopologyManager hint's
// NUMA count, 0 = none: it raises the minimum number of NUMA nodes tried when it lies above
// the computed minimum and at most the computed maximum (min(groups needed, NUMA nodes with
// free CPUs)); otherwise it is ignored. `remainder_whole_groups` (k/k #140730; the kubelet
// versions without it: kubelet::Behavior::distribute_remainder_whole_groups) tests a remainder
// subset by its whole groups; off, a subset that passes the older raw-count test without whole
// groups makes the kubelet sweep forever, and the result is KubeletHangError
// (kubelet/admission_error.h) instead of an allocation. `keep_best_combination` (k/k #141238;
// the versions without it: kubelet::Behavior::distribute_keeps_best_numa_combination) keeps a
// copy of the best NUMA combination and remainder subset; off, they are the Go slices that
// later combinations overwrite (the aliasing above).
absl::StatusOr<CpuSet> TakeByTopologyNumaDistributed(const CpuTopology& topo,
                                                     const CpuSet& available, int num_cpus,
                                                     int cpu_group_size,
                                                     CpuSortingStrategy strategy,
                                                     bool align_by_socket, int min_numas_from_hint,
                                                     bool remainder_whole_groups = true,
                                                     bool keep_best_combination = true,
                                                     const TopologyTables* tables = nullptr);

}  // namespace podtopo::cpumanager

#endif  // PODTOPO_CPUMANAGER_CPU_ASSIGNMENT_H_
