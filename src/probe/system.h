// What podtopo probe may measure on this host: the CPUs this process may run on, the NUMA
// nodes that exist and those it may allocate on, and each CPU's last-level cache.
//
//   absl::StatusOr<probe::SystemView> sys = probe::ReadSystem();
//   sys->allowed_cpus.String();          // "0-1": sched_getaffinity, as Cpus_allowed_list
//   sys->numa_nodes                      // {0}: /sys/devices/system/node/node*
//   probe::ReadLastLevelCache("/sys/devices/system/cpu", 0)->size_bytes   // 33554432
//
// SystemView is a plain value so that the checks of the flags (probe.h) can be tested against
// made-up hosts.
//
// Thread safety: free functions; a value type.
#ifndef PODTOPO_PROBE_SYSTEM_H_
#define PODTOPO_PROBE_SYSTEM_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "cpuset/cpuset.h"

namespace podtopo::probe {

struct SystemView {
  // sched_getaffinity(0): the CPUs this process may run on (its Cpus_allowed_list; in a pod,
  // the container's cgroup cpuset).
  CpuSet allowed_cpus;
  // libnuma works here (numa_available() >= 0, get_mempolicy answers).
  bool numa_available = false;
  // The NUMA nodes with memory (numa_nodes_ptr / /sys/devices/system/node); {0} without NUMA.
  CpuSet numa_nodes;
  // The nodes this process may allocate on (Mems_allowed_list; a pod's cpuset.mems).
  CpuSet allowed_mems;
  // The NUMA node of each allowed CPU (numa_node_of_cpu; 0 without NUMA).
  std::map<int, int> node_of_cpu;
};

// Reads the running process's view. Never fails: what libnuma cannot tell is filled in for a
// machine with one node 0.
SystemView ReadSystem();

// A CPU's last-level data or unified cache, from sysfs
// (<cpu_dir>/cpu<N>/cache/index*/{level,type,size,shared_cpu_list}).
struct CacheInfo {
  int level = 0;
  int64_t size_bytes = 0;
  std::string shared_cpu_list;  // the CPUs sharing it, e.g. "0-1"
};
// kNotFound when the CPU has no cache directory (some VMs), kInvalidArgument naming the file
// when a size is not "<N>K", "<N>M" or "<N>G".
absl::StatusOr<CacheInfo> ReadLastLevelCache(const std::string& cpu_dir, int cpu);

// Parses a sysfs cache size: "32K", "32768K", "1M", "2G", or plain bytes.
absl::StatusOr<int64_t> ParseCacheSize(const std::string& text);

// CLOCK_MONOTONIC in nanoseconds.
int64_t MonotonicNs();

// "64 MiB", "512 KiB", "1.5 GiB", "100 B".
std::string HumanBytes(int64_t bytes);

}  // namespace podtopo::probe

#endif  // PODTOPO_PROBE_SYSTEM_H_
