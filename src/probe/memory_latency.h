// Memory access latency to one NUMA node's memory, as Intel MLC's idle-latency matrix gives
// it: ns per dependent load.
//
// The buffer is an anonymous mapping bound to the node with mbind(MPOL_BIND) before any page
// is touched (what numa_alloc_onnode does, but strict: a page that cannot come from the node
// is an error, not a silent fallback). Each 64-byte cache line holds a pointer to the next
// line of a random cyclic permutation (Sattolo's shuffle, so the chase visits every line
// before it repeats); each load's address is the previous load's value, so the loads cannot
// overlap and the hardware prefetchers cannot guess the next line. The buffer is larger than
// the last-level cache (2x by default), so nearly every load misses it and goes to memory.
// Each round is timed with the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID), so that time
// spent preempted does not count as memory latency; the median round is reported.
// Transparent huge pages are asked for (madvise) so that TLB misses weigh less; where the
// kernel gives none, the figure includes page walks (docs/differences.md).
//
//   probe::ChaseOptions o;
//   o.node = 0;
//   o.buffer_bytes = probe::DefaultBufferBytes(llc);   // 64 MiB for a 32 MiB L3
//   absl::StatusOr<probe::ChaseResult> r = probe::MeasureMemoryLatency(o);   // on this thread
//   r->ns_per_load                                     // median over the rounds, e.g. 92.4
//
// The caller pins the calling thread to the CPU to measure from (probe.h does).
//
// Thread safety: MeasureMemoryLatency may run on several threads at once (their buffers are
// their own), though the measurements then disturb each other.
#ifndef PODTOPO_PROBE_MEMORY_LATENCY_H_
#define PODTOPO_PROBE_MEMORY_LATENCY_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "probe/system.h"

namespace podtopo::probe {

inline constexpr int64_t kCacheLine = 64;
inline constexpr int64_t kMinBufferBytes = int64_t{16} << 20;
inline constexpr int64_t kMaxBufferBytes = int64_t{1} << 30;
// Without a readable last-level cache size (some VMs hide it).
inline constexpr int64_t kUnknownLlcBufferBytes = int64_t{256} << 20;

// 2 x the last-level cache, at least 16 MiB, at most 1 GiB, rounded up to 2 MiB (a huge page).
int64_t DefaultBufferBytes(const std::optional<CacheInfo>& llc);

struct ChaseOptions {
  int node = -1;  // the NUMA node to bind the buffer to; -1: not bound (no NUMA support)
  int64_t buffer_bytes = kMinBufferBytes;
  int rounds = 7;                   // timed rounds; the median is reported
  int64_t loads_per_round = 1 << 18;
  uint64_t seed = 0x5eed;           // of the permutation
};

struct ChaseResult {
  int64_t buffer_bytes = 0;
  double ns_per_load = 0;      // median of the rounds
  double min_ns_per_load = 0;  // fastest round
  double max_ns_per_load = 0;  // slowest round
  int64_t loads = 0;           // timed loads, all rounds
  // Of a sample of the buffer's pages (move_pages), the share that is on `node`: 1.0 when the
  // binding held. Unset when it cannot be asked (no NUMA, or the call failed).
  std::optional<double> pages_on_node;
  bool huge_pages = false;     // the kernel backed (some of) the buffer with huge pages
};

// Builds the chase, walks it once untimed (faults the pages in, fills the TLB), then times
// `rounds` rounds. Errors: kInvalidArgument for a buffer under two cache lines or no rounds;
// kFailedPrecondition naming mbind or mmap and errno when the memory cannot be had or bound
// (a node outside this process's Mems_allowed, no memory left on it).
absl::StatusOr<ChaseResult> MeasureMemoryLatency(const ChaseOptions& options);

}  // namespace podtopo::probe

#endif  // PODTOPO_PROBE_MEMORY_LATENCY_H_
