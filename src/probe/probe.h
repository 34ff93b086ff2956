// podtopo probe: what the placement does to a workload on the CPUs it runs on.
//
// Two measurements, one after the other so that they do not disturb each other:
//   1. memory access latency from the CPUs to each NUMA node's memory (memory_latency.h):
//      from the first CPU of each NUMA node among the CPUs, to every node in `mems`: the
//      matrix of Intel MLC's idle-latency mode. `memoryLatencyNs` keys the row of the first
//      CPU by memory node;
//   2. wake-up latency on every CPU at once (wakeup.h), cyclictest's loop.
// and the interference the kernel saw meanwhile (involuntary context switches, run-queue
// delay).
//
//   auto opts = probe::ResolveOptions(flags, probe::ReadSystem());   // checks the flags
//   probe::ProbeReport report = probe::RunProbe(*opts);
//   nlohmann::json j = probe::ToJson(report);        // the -o json document
//   std::string table = probe::RenderTable(report);  // the -o table text
//   report.over_max_latency                           // CPUs whose max crossed --max-latency
//
// The contract is ../shared/DESIGN.md "Wave 3: podtopo probe"; docs/verify.md shows output.
//
// Thread safety: RunProbe starts and joins its own threads; run one at a time.
#ifndef PODTOPO_PROBE_PROBE_H_
#define PODTOPO_PROBE_PROBE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cpuset/cpuset.h"
#include "nlohmann/json.hpp"
#include "probe/memory_latency.h"
#include "probe/system.h"
#include "probe/wakeup.h"

namespace podtopo::probe {

// The command line as typed; empty strings are "not given".
struct ProbeFlags {
  std::string cpus;
  std::string mems;
  std::string duration = "2s";
  std::string interval = "1ms";
  std::string max_latency;
  int priority = 95;
  std::string buffer;  // e.g. "64M", "1G"; default: 2 x the last-level cache
  bool no_memory = false;
  bool no_wakeup = false;
};

struct ProbeOptions {
  CpuSet cpus;
  CpuSet mems;
  int64_t duration_ns = 2'000'000'000;
  int64_t interval_ns = 1'000'000;
  std::optional<int64_t> max_latency_ns;
  int priority = 95;
  std::optional<int64_t> buffer_bytes;  // unset: DefaultBufferBytes of the first CPU's LLC
  bool memory = true;
  bool wakeup = true;
  bool numa = true;  // bind the buffers (false without libnuma support: unbound, said so)
  std::vector<std::string> notes;  // what ResolveOptions had to decide (no NUMA, ...)
  SystemView system;
};

// Checks the flags against the host. Errors (kInvalidArgument) name the flag and its value:
//   --cpus 5: CPU 5 is not among the CPUs this process may run on (0-1)
//   --mems 3: NUMA node 3 does not exist here (nodes with memory: 0)
//   --interval 0s: must be at least 10us
//   --duration 1x: time: unknown unit "x" in duration "1x"
//   --priority 120: SCHED_FIFO priorities are 1-99 (0: SCHED_OTHER)
absl::StatusOr<ProbeOptions> ResolveOptions(const ProbeFlags& flags, const SystemView& system);

struct MemoryLatencyCell {
  int from_cpu = -1;
  int from_node = -1;
  int node = -1;  // memory node; -1 when measured unbound (no NUMA support)
  std::optional<ChaseResult> result;
  std::string error;  // set instead of result when the node could not be measured
  int64_t involuntary_switches = 0;
};

struct ProbeReport {
  CpuSet cpus;
  CpuSet mems;
  int64_t duration_ns = 0;
  int64_t interval_ns = 0;
  std::optional<int64_t> max_latency_ns;
  int64_t buffer_bytes = 0;
  std::optional<CacheInfo> llc;  // of the first CPU
  int llc_cpu = -1;
  std::vector<MemoryLatencyCell> memory;
  std::optional<WakeupRun> wakeup;
  int64_t involuntary_switches = 0;  // all measuring threads, while measuring
  std::vector<int> over_max_latency;  // CPUs whose max wake-up latency crossed it
  std::vector<std::string> notes;
  double elapsed_s = 0;
};

ProbeReport RunProbe(const ProbeOptions& options);

nlohmann::json ToJson(const ProbeReport& report);
std::string RenderTable(const ProbeReport& report);

}  // namespace podtopo::probe

#endif  // PODTOPO_PROBE_PROBE_H_
