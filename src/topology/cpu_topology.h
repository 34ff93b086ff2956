// CpuTopology: the kubelet's view of a node's logical CPUs (cpumanager/topology).
//
// Each logical CPU (Linux cpu number) belongs to one physical core, socket, NUMA node and
// uncore (L3) cache. Core ids follow the kubelet: the lowest thread id of the physical core,
// so they are unique machine-wide. The header counts (num_cpus, num_cores, ...) are kept as
// given, not derived from the CPU map: the kubelet's ratios (CpusPerCore() and friends) use
// them, and some of its test topologies carry header counts that disagree with their maps.
//
// Example:
//   CpuTopology topo;
//   topo.AddCpu(0, {.numa = 0, .socket = 0, .core = 0, .uncore = 0});
//   topo.AddCpu(1, {.numa = 0, .socket = 0, .core = 0, .uncore = 0});
//   topo.SetCountsFromCpus();   // num_cpus 2, num_cores 1, num_sockets 1, ...
//   topo.CpusPerCore();         // 2
//   topo.CpusInCore(0).String() // "0-1"
//
// Element queries return ids ascending. All per-element cpusets are precomputed when CPUs
// are added, so queries on the full topology are lookups; callers that need the kubelet's
// CPUDetails.KeepOnly(available) view intersect with their available set.
//
// Thread safety: a value type; const methods may be called concurrently.
#ifndef PODTOPO_TOPOLOGY_CPU_TOPOLOGY_H_
#define PODTOPO_TOPOLOGY_CPU_TOPOLOGY_H_

#include <map>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "cpuset/cpuset.h"

namespace podtopo {

struct CpuInfo {
  int numa = 0;
  int socket = 0;
  int core = 0;
  int uncore = 0;
  friend bool operator==(const CpuInfo&, const CpuInfo&) = default;
};

class CpuTopology {
 public:
  // Header counts, as the kubelet's CPUTopology struct holds them.
  int num_cpus = 0;
  int num_cores = 0;
  int num_sockets = 0;
  int num_numa_nodes = 0;
  int num_uncore_caches = 0;

  // Adds (or replaces) a CPU. Header counts are not touched.
  void AddCpu(int cpu, const CpuInfo& info);
  // Sets the header counts from the CPU map, as topology.Discover does: num_cpus = CPUs,
  // num_cores = distinct core ids, num_sockets = distinct sockets, num_numa_nodes = distinct
  // NUMA nodes, num_uncore_caches = distinct uncore ids.
  void SetCountsFromCpus();

  // Integer ratios of the header counts; 0 when the denominator is 0.
  int CpusPerCore() const { return num_cores == 0 ? 0 : num_cpus / num_cores; }
  int CpusPerSocket() const { return num_sockets == 0 ? 0 : num_cpus / num_sockets; }
  int CpusPerUncore() const { return num_uncore_caches == 0 ? 0 : num_cpus / num_uncore_caches; }

  const CpuSet& AllCpus() const { return all_; }
  // nullptr for an unknown CPU.
  const CpuInfo* Info(int cpu) const {
    return cpu >= 0 && static_cast<size_t>(cpu) < info_.size() && all_.Contains(cpu)
               ? &info_[static_cast<size_t>(cpu)]
               : nullptr;
  }

  // Distinct ids present in the CPU map, ascending.
  std::vector<int> NumaNodes() const { return Keys(by_numa_); }
  std::vector<int> Sockets() const { return Keys(by_socket_); }
  std::vector<int> Cores() const { return Keys(by_core_); }
  std::vector<int> UncoreCaches() const { return Keys(by_uncore_); }

  // CPUs of one element (empty for an unknown id).
  const CpuSet& CpusInNuma(int id) const { return Lookup(by_numa_, id); }
  const CpuSet& CpusInSocket(int id) const { return Lookup(by_socket_, id); }
  const CpuSet& CpusInCore(int id) const { return Lookup(by_core_, id); }
  const CpuSet& CpusInUncore(int id) const { return Lookup(by_uncore_, id); }
  CpuSet CpusInNumas(const std::vector<int>& ids) const;
  CpuSet CpusInSockets(const std::vector<int>& ids) const;

  // Ids of the elements that contain at least one CPU of `cpus`, ascending.
  std::vector<int> NumaNodesOf(const CpuSet& cpus) const;
  std::vector<int> SocketsOf(const CpuSet& cpus) const;
  std::vector<int> CoresOf(const CpuSet& cpus) const;
  std::vector<int> UncoreCachesOf(const CpuSet& cpus) const;

  // True iff every id is a known NUMA node and together they span at most one socket.
  bool AreNumaNodesInSameSocket(const std::vector<int>& numas) const;

 private:
  static std::vector<int> Keys(const std::map<int, CpuSet>& m);
  static const CpuSet& Lookup(const std::map<int, CpuSet>& m, int id);

  CpuSet all_;
  std::vector<CpuInfo> info_;  // indexed by cpu id; valid where all_ contains the id
  std::map<int, CpuSet> by_numa_, by_socket_, by_core_, by_uncore_;
};

}  // namespace podtopo

#endif  // PODTOPO_TOPOLOGY_CPU_TOPOLOGY_H_
