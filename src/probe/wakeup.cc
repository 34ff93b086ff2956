#include "probe/wakeup.h"

#include "probe/system.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <latch>
#include <thread>

#include "fmt/format.h"
#include "util/file.h"

namespace podtopo::probe {
namespace {

constexpr int64_t kNsPerSec = 1'000'000'000;

timespec ToTimespec(int64_t ns) {
  return timespec{static_cast<time_t>(ns / kNsPerSec), static_cast<long>(ns % kNsPerSec)};
}
int64_t InvoluntarySwitches() {
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) != 0) return 0;
  return ru.ru_nivcsw;
}

// What one thread brings back.
struct ThreadOut {
  CpuWakeup stats;
  bool fifo_refused = false;
  int fifo_errno = 0;
};

void RunThread(int cpu, const WakeupOptions& o, std::latch& ready, std::latch& go,
               std::atomic<int64_t>& start, ThreadOut& out) {
  out.stats.cpu = cpu;
  bool pinned = false;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  CPU_SET(cpu, &mask);
  if (sched_setaffinity(0, sizeof(mask), &mask) != 0) {
    out.stats.error = fmt::format("cannot run on CPU {}: sched_setaffinity: {}", cpu,
                                  std::strerror(errno));
  } else {
    pinned = true;
  }
  // Room for every sample, touched now so that no page faults while measuring.
  const int64_t expected = o.duration_ns / o.interval_ns + 2;
  std::vector<int64_t> samples;
  if (pinned) {
    samples.assign(static_cast<size_t>(expected), 0);
    samples.clear();
  }
  // Still SCHED_OTHER here: waiting cannot keep the main thread off this CPU.
  ready.count_down();
  go.wait();
  const int64_t begin = start.load(std::memory_order_acquire);
  if (!pinned) return;
  if (o.priority > 0) {
    sched_param sp{};
    sp.sched_priority = o.priority;
    int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    if (rc != 0) {
      out.fifo_refused = true;
      out.fifo_errno = rc;
    }
  }

  auto sched0 = ReadThreadSchedstat();
  int64_t ivcsw0 = InvoluntarySwitches();
  const int64_t end = begin + o.duration_ns;
  int64_t next = begin;
  while (true) {
    next += o.interval_ns;
    if (next > end) break;
    timespec ts = ToTimespec(next);
    int rc;
    do {
      rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    } while (rc == EINTR);
    int64_t now = MonotonicNs();
    if (static_cast<int64_t>(samples.size()) < expected) samples.push_back(now - next);
    if (now - next >= o.interval_ns) {
      ++out.stats.overruns;
      while (next + o.interval_ns <= now) next += o.interval_ns;
    }
  }
  out.stats.involuntary_switches = InvoluntarySwitches() - ivcsw0;
  auto sched1 = ReadThreadSchedstat();
  if (sched0.has_value() && sched1.has_value()) {
    out.stats.run_queue_delay_us = static_cast<double>(sched1->second - sched0->second) / 1e3;
  }
  // Back to SCHED_OTHER before the sort, so that it does not hold the CPU at FIFO priority.
  sched_param other{};
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
  Summarize(samples, out.stats);
}

}  // namespace

void Summarize(std::vector<int64_t>& ns, CpuWakeup& out) {
  out.samples = static_cast<int64_t>(ns.size());
  out.histogram.clear();
  if (ns.empty()) return;
  std::sort(ns.begin(), ns.end());
  auto rank = [&](double p) {
    size_t r = static_cast<size_t>(std::ceil(p * static_cast<double>(ns.size())));
    r = std::clamp<size_t>(r, 1, ns.size());
    return static_cast<double>(ns[r - 1]) / 1e3;
  };
  out.min_us = static_cast<double>(ns.front()) / 1e3;
  out.max_us = static_cast<double>(ns.back()) / 1e3;
  out.p50_us = rank(0.50);
  out.p99_us = rank(0.99);
  out.p999_us = rank(0.999);
  long double sum = 0;
  for (int64_t v : ns) sum += static_cast<long double>(v);
  out.avg_us = static_cast<double>(sum / static_cast<long double>(ns.size()) / 1e3L);
  // Power-of-two buckets in us, up to 2^30 us.
  double bound = 1;
  size_t i = 0;
  while (i < ns.size()) {
    int64_t count = 0;
    while (i < ns.size() && (static_cast<double>(ns[i]) <= bound * 1e3 || bound >= 1 << 30)) {
      ++count;
      ++i;
    }
    if (count > 0) out.histogram.emplace_back(bound, count);
    bound *= 2;
  }
}

std::optional<std::pair<int64_t, int64_t>> ReadThreadSchedstat() {
  auto text = ReadSmallFile(fmt::format("/proc/self/task/{}/schedstat", gettid()), 4096);
  if (!text.ok()) return std::nullopt;
  long long run = 0, wait = 0;
  if (std::sscanf(text->c_str(), "%lld %lld", &run, &wait) != 2) return std::nullopt;
  return std::make_pair(static_cast<int64_t>(run), static_cast<int64_t>(wait));
}

WakeupRun MeasureWakeup(const WakeupOptions& o) {
  WakeupRun run;
  std::vector<int> cpus = o.cpus.List();
  std::vector<ThreadOut> outs(cpus.size());
  std::latch ready(static_cast<std::ptrdiff_t>(cpus.size()));
  std::latch go(1);
  std::atomic<int64_t> start{0};
  std::vector<std::thread> threads;
  threads.reserve(cpus.size());
  for (size_t i = 0; i < cpus.size(); ++i) {
    threads.emplace_back(RunThread, cpus[i], std::cref(o), std::ref(ready), std::ref(go), std::ref(start),
                         std::ref(outs[i]));
  }
  ready.wait();
  // A common start a little ahead, so that every thread is asleep before its first deadline.
  start.store(MonotonicNs() + 5'000'000, std::memory_order_release);
  go.count_down();
  for (auto& t : threads) t.join();

  bool any_refused = false;
  int refused_errno = 0;
  for (auto& out : outs) {
    if (out.fifo_refused) {
      any_refused = true;
      refused_errno = out.fifo_errno;
    }
    run.cpus.push_back(std::move(out.stats));
  }
  if (o.priority > 0 && !any_refused) {
    run.sched_fifo = true;
    run.priority = o.priority;
  }
  if (any_refused) {
    run.note = fmt::format(
        "SCHED_FIFO refused (sched_setscheduler: {}): the wake-up threads ran SCHED_OTHER, so "
        "their latencies include the fair scheduler's delays; run as root or with "
        "CAP_SYS_NICE (in a pod: securityContext.capabilities.add: [SYS_NICE])",
        std::strerror(refused_errno));
  }
  return run;
}

}  // namespace podtopo::probe
