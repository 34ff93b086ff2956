// Wake-up latency per CPU, as cyclictest measures it, and the interference the kernel saw.
//
// One thread per CPU, pinned to it (sched_setaffinity), SCHED_FIFO at `priority` where the
// kernel allows it. Each thread sleeps with clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)
// until the next multiple of `interval` after a start time all threads share, reads the
// clock when it runs again, and records latency = actual wake-up - intended wake-up. After an
// overrun (a wake-up later than the next interval) the next intended time is the first one
// still ahead, as cyclictest does. The run lasts `duration`: about duration / interval
// samples per CPU.
//
// During the run each thread also counts its involuntary context switches
// (getrusage(RUSAGE_THREAD).ru_nivcsw) and the time it waited on a run queue while runnable
// (/proc/self/task/<tid>/schedstat, second field).
//
//   probe::WakeupOptions o;
//   o.cpus = CpuSet{0, 1};
//   o.interval_ns = 1'000'000;
//   o.duration_ns = 2'000'000'000;
//   probe::WakeupRun run = probe::MeasureWakeup(o);
//   run.sched_fifo          // false when sched_setscheduler said EPERM: run.note says so
//   run.cpus[0].p50_us      // median wake-up latency on CPU 0
//
// Thread safety: MeasureWakeup starts and joins its own threads; do not run two at once on
// the same CPUs (they would measure each other).
#ifndef PODTOPO_PROBE_WAKEUP_H_
#define PODTOPO_PROBE_WAKEUP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cpuset/cpuset.h"

namespace podtopo::probe {

// At most this many samples per CPU are kept (duration / interval; probe.h refuses more).
inline constexpr int64_t kMaxSamplesPerCpu = 10'000'000;

struct WakeupOptions {
  CpuSet cpus;
  int64_t interval_ns = 1'000'000;
  int64_t duration_ns = 2'000'000'000;
  int priority = 95;  // SCHED_FIFO priority 1-99; 0: SCHED_OTHER on purpose
};

// Latency percentiles of one CPU, in microseconds. Percentiles are nearest-rank: p50 is the
// sample at rank ceil(0.50 * n) of the sorted samples.
struct CpuWakeup {
  int cpu = -1;
  int64_t samples = 0;
  double min_us = 0, avg_us = 0, p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
  int64_t overruns = 0;  // wake-ups later than the next intended one
  int64_t involuntary_switches = 0;
  std::optional<double> run_queue_delay_us;  // unset when schedstat is unreadable
  // Counts per bucket: {upper bound in us, count}, bounds 1, 2, 4, ... us; the last bucket
  // holds everything above the previous bound. Only non-empty buckets.
  std::vector<std::pair<double, int64_t>> histogram;
  std::string error;  // set when the thread could not run there (samples is 0)
};

struct WakeupRun {
  bool sched_fifo = false;
  int priority = 0;      // the priority the threads ran at (0 for SCHED_OTHER)
  std::string note;      // why not SCHED_FIFO, when asked for and refused
  std::vector<CpuWakeup> cpus;  // ascending CPU
};

WakeupRun MeasureWakeup(const WakeupOptions& options);

// Fills the percentiles, min, avg, max and histogram from latency samples in ns (reorders
// them). Exposed for tests.
void Summarize(std::vector<int64_t>& samples_ns, CpuWakeup& out);

// Reads /proc/self/task/<tid>/schedstat: {time on CPU ns, time waiting on a run queue ns}.
std::optional<std::pair<int64_t, int64_t>> ReadThreadSchedstat();

}  // namespace podtopo::probe

#endif  // PODTOPO_PROBE_WAKEUP_H_
