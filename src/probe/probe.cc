#include "probe/probe.h"

#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <thread>

#include "absl/status/status.h"
#include "config/duration.h"
#include "fmt/format.h"

namespace podtopo::probe {
namespace {

constexpr int64_t kMinIntervalNs = 10'000;            // 10us: below it the loop measures itself
constexpr int64_t kMaxIntervalNs = 1'000'000'000;     // 1s
constexpr int64_t kMaxDurationNs = int64_t{3600} * 1'000'000'000;  // 1h

std::string DurationString(int64_t ns) { return config::Duration(ns).String(); }

absl::StatusOr<int64_t> ParseDurationFlag(const std::string& flag, const std::string& text) {
  auto d = config::Duration::Parse(text);
  if (!d.ok()) {
    return absl::InvalidArgumentError(fmt::format("{} {}: {}", flag, text, std::string(d.status().message())));
  }
  return d->nanos();
}

double Round2(double v) { return std::round(v * 100) / 100; }

}  // namespace

absl::StatusOr<ProbeOptions> ResolveOptions(const ProbeFlags& f, const SystemView& sys) {
  ProbeOptions o;
  o.system = sys;
  if (sys.allowed_cpus.IsEmpty()) {
    return absl::FailedPreconditionError("cannot tell which CPUs this process may run on "
                                         "(sched_getaffinity failed)");
  }
  if (f.cpus.empty()) {
    o.cpus = sys.allowed_cpus;
  } else {
    auto cpus = CpuSet::Parse(f.cpus);
    if (!cpus.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("--cpus {}: {}", f.cpus, std::string(cpus.status().message())));
    }
    if (cpus->IsEmpty()) return absl::InvalidArgumentError("--cpus \"\": give at least one CPU");
    CpuSet outside = cpus->Difference(sys.allowed_cpus);
    if (!outside.IsEmpty()) {
      return absl::InvalidArgumentError(fmt::format(
          "--cpus {}: CPU{} {} {} not among the CPUs this process may run on ({}; its "
          "Cpus_allowed_list)",
          f.cpus, outside.Size() > 1 ? "s" : "", outside.String(),
          outside.Size() > 1 ? "are" : "is", sys.allowed_cpus.String()));
    }
    o.cpus = *cpus;
  }
  o.numa = sys.numa_available;
  if (!sys.numa_available) {
    o.notes.push_back("no NUMA support here (libnuma: numa_available() < 0): the chase buffer "
                      "is not bound to a node and is reported as node 0");
  }
  if (f.mems.empty()) {
    o.mems = sys.numa_nodes.Intersection(sys.allowed_mems);
    if (o.mems.IsEmpty()) o.mems = CpuSet{0};
  } else {
    auto mems = CpuSet::Parse(f.mems);
    if (!mems.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("--mems {}: {}", f.mems, std::string(mems.status().message())));
    }
    if (mems->IsEmpty()) return absl::InvalidArgumentError("--mems \"\": give at least one node");
    CpuSet unknown = mems->Difference(sys.numa_nodes);
    if (!unknown.IsEmpty()) {
      return absl::InvalidArgumentError(fmt::format(
          "--mems {}: NUMA node{} {} {} not exist here (nodes with memory: {})", f.mems,
          unknown.Size() > 1 ? "s" : "", unknown.String(), unknown.Size() > 1 ? "do" : "does",
          sys.numa_nodes.String()));
    }
    CpuSet barred = mems->Difference(sys.allowed_mems);
    if (!barred.IsEmpty()) {
      return absl::InvalidArgumentError(fmt::format(
          "--mems {}: this process may not allocate on NUMA node {} (its Mems_allowed_list is "
          "{}; in a pod, the container's cpuset.mems)",
          f.mems, barred.String(), sys.allowed_mems.String()));
    }
    o.mems = *mems;
  }
  if (sys.numa_nodes.Size() == 1 && sys.numa_available) {
    o.notes.push_back(fmt::format("one NUMA node ({}): there is no remote memory to compare the "
                                  "local latency with",
                                  sys.numa_nodes.String()));
  }

  auto duration = ParseDurationFlag("--duration", f.duration);
  if (!duration.ok()) return duration.status();
  auto interval = ParseDurationFlag("--interval", f.interval);
  if (!interval.ok()) return interval.status();
  if (*interval < kMinIntervalNs || *interval > kMaxIntervalNs) {
    return absl::InvalidArgumentError(fmt::format(
        "--interval {}: must be between {} and {}", f.interval, DurationString(kMinIntervalNs),
        DurationString(kMaxIntervalNs)));
  }
  if (*duration <= 0 || *duration > kMaxDurationNs) {
    return absl::InvalidArgumentError(fmt::format("--duration {}: must be above 0s and at most {}",
                                                  f.duration, DurationString(kMaxDurationNs)));
  }
  if (*duration < *interval) {
    return absl::InvalidArgumentError(fmt::format(
        "--duration {}: shorter than --interval {}: not one wake-up to measure", f.duration,
        f.interval));
  }
  if (*duration / *interval > kMaxSamplesPerCpu) {
    return absl::InvalidArgumentError(fmt::format(
        "--duration {} at --interval {}: {} samples per CPU; at most {} are kept (a longer "
        "--interval or a shorter --duration)",
        f.duration, f.interval, *duration / *interval, kMaxSamplesPerCpu));
  }
  o.duration_ns = *duration;
  o.interval_ns = *interval;
  if (!f.max_latency.empty()) {
    auto max = ParseDurationFlag("--max-latency", f.max_latency);
    if (!max.ok()) return max.status();
    if (*max <= 0) {
      return absl::InvalidArgumentError(
          fmt::format("--max-latency {}: must be above 0s", f.max_latency));
    }
    o.max_latency_ns = *max;
  }
  if (f.priority < 0 || f.priority > 99) {
    return absl::InvalidArgumentError(fmt::format(
        "--priority {}: SCHED_FIFO priorities are 1-99 (0: SCHED_OTHER)", f.priority));
  }
  o.priority = f.priority;
  if (!f.buffer.empty()) {
    auto bytes = ParseCacheSize(f.buffer);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("--buffer {}: {}", f.buffer, std::string(bytes.status().message())));
    }
    if (*bytes < 1 << 20 || *bytes > int64_t{64} << 30) {
      return absl::InvalidArgumentError(
          fmt::format("--buffer {}: must be between 1M and 64G", f.buffer));
    }
    o.buffer_bytes = *bytes;
  }
  o.memory = !f.no_memory;
  o.wakeup = !f.no_wakeup;
  if (!o.memory && !o.wakeup) {
    return absl::InvalidArgumentError("--no-memory and --no-wakeup: nothing left to measure");
  }
  return o;
}

ProbeReport RunProbe(const ProbeOptions& o) {
  ProbeReport r;
  const int64_t t0 = MonotonicNs();
  r.cpus = o.cpus;
  r.mems = o.mems;
  r.duration_ns = o.duration_ns;
  r.interval_ns = o.interval_ns;
  r.max_latency_ns = o.max_latency_ns;
  r.notes = o.notes;
  r.llc_cpu = o.cpus.Min();
  if (auto llc = ReadLastLevelCache("/sys/devices/system/cpu", r.llc_cpu); llc.ok()) {
    r.llc = *llc;
  } else if (!o.buffer_bytes.has_value()) {
    r.notes.push_back(fmt::format("last-level cache size unknown ({}): the chase buffer is {}",
                                  std::string(llc.status().message()), HumanBytes(kUnknownLlcBufferBytes)));
  }
  r.buffer_bytes = o.buffer_bytes.value_or(DefaultBufferBytes(r.llc));
  if (r.llc.has_value() && r.buffer_bytes <= r.llc->size_bytes) {
    r.notes.push_back(fmt::format(
        "the chase buffer ({}) is not larger than the {} L{} cache: loads may hit the cache",
        HumanBytes(r.buffer_bytes), HumanBytes(r.llc->size_bytes), r.llc->level));
  }

  if (o.memory) {
    // From the first CPU of each NUMA node among the CPUs.
    std::map<int, int> first_cpu_of_node;
    for (int cpu : o.cpus.List()) {
      auto it = o.system.node_of_cpu.find(cpu);
      first_cpu_of_node.try_emplace(it == o.system.node_of_cpu.end() ? 0 : it->second, cpu);
    }
    std::vector<std::pair<int, int>> sources(first_cpu_of_node.begin(), first_cpu_of_node.end());
    // The first CPU's row first: memoryLatencyNs is that row.
    std::stable_partition(sources.begin(), sources.end(),
                          [&](const auto& s) { return s.second == o.cpus.Min(); });
    for (const auto& source : sources) {
      // Plain ints: clang 14 cannot capture structured bindings in the lambda below.
      const int from_node = source.first;
      const int from_cpu = source.second;
      for (int node : o.mems.List()) {
        MemoryLatencyCell cell;
        cell.from_cpu = from_cpu;
        cell.from_node = from_node;
        cell.node = node;
        ChaseOptions co;
        co.node = o.numa ? node : -1;
        co.buffer_bytes = r.buffer_bytes;
        std::thread t([&cell, &co, from_cpu] {
          cpu_set_t mask;
          CPU_ZERO(&mask);
          CPU_SET(from_cpu, &mask);
          if (sched_setaffinity(0, sizeof(mask), &mask) != 0) {
            cell.error = fmt::format("cannot run on CPU {}: sched_setaffinity: {}", from_cpu,
                                     std::strerror(errno));
            return;
          }
          rusage before{}, after{};
          getrusage(RUSAGE_THREAD, &before);
          auto res = MeasureMemoryLatency(co);
          getrusage(RUSAGE_THREAD, &after);
          cell.involuntary_switches = after.ru_nivcsw - before.ru_nivcsw;
          if (res.ok()) {
            cell.result = *res;
          } else {
            cell.error = std::string(res.status().message());
          }
        });
        t.join();
        r.involuntary_switches += cell.involuntary_switches;
        r.memory.push_back(std::move(cell));
      }
    }
  }
  if (o.wakeup) {
    WakeupOptions wo;
    wo.cpus = o.cpus;
    wo.interval_ns = o.interval_ns;
    wo.duration_ns = o.duration_ns;
    wo.priority = o.priority;
    r.wakeup = MeasureWakeup(wo);
    if (!r.wakeup->note.empty()) r.notes.push_back(r.wakeup->note);
    for (const CpuWakeup& c : r.wakeup->cpus) {
      r.involuntary_switches += c.involuntary_switches;
      if (o.max_latency_ns.has_value() && c.samples > 0 &&
          c.max_us * 1e3 > static_cast<double>(*o.max_latency_ns)) {
        r.over_max_latency.push_back(c.cpu);
      }
    }
  }
  r.elapsed_s = static_cast<double>(MonotonicNs() - t0) / 1e9;
  return r;
}

nlohmann::json ToJson(const ProbeReport& r) {
  nlohmann::json j;
  j["cpus"] = r.cpus.String();
  j["mems"] = r.mems.String();
  j["schedFifo"] = r.wakeup.has_value() && r.wakeup->sched_fifo;
  if (r.wakeup.has_value()) j["priority"] = r.wakeup->priority;
  nlohmann::json latency = nlohmann::json::object();
  nlohmann::json matrix = nlohmann::json::array();
  for (const MemoryLatencyCell& c : r.memory) {
    nlohmann::json cell = {{"fromCpu", c.from_cpu}, {"fromNode", c.from_node}, {"node", c.node},
                           {"involuntarySwitches", c.involuntary_switches}};
    if (c.result.has_value()) {
      cell["ns"] = Round2(c.result->ns_per_load);
      cell["minNs"] = Round2(c.result->min_ns_per_load);
      cell["maxNs"] = Round2(c.result->max_ns_per_load);
      cell["loads"] = c.result->loads;
      cell["hugePages"] = c.result->huge_pages;
      if (c.result->pages_on_node.has_value()) {
        cell["pagesOnNode"] = Round2(*c.result->pages_on_node);
      }
      if (c.from_cpu == r.memory.front().from_cpu) {
        latency[std::to_string(c.node)] = Round2(c.result->ns_per_load);
      }
    } else {
      cell["error"] = c.error;
    }
    matrix.push_back(std::move(cell));
  }
  j["memoryLatencyNs"] = std::move(latency);
  nlohmann::json wakeup = nlohmann::json::object();
  if (r.wakeup.has_value()) {
    for (const CpuWakeup& c : r.wakeup->cpus) {
      nlohmann::json w = {{"samples", c.samples}};
      if (!c.error.empty()) {
        w["error"] = c.error;
      } else {
        w["p50Us"] = Round2(c.p50_us);
        w["p99Us"] = Round2(c.p99_us);
        w["p999Us"] = Round2(c.p999_us);
        w["maxUs"] = Round2(c.max_us);
        w["minUs"] = Round2(c.min_us);
        w["avgUs"] = Round2(c.avg_us);
        w["overruns"] = c.overruns;
        w["involuntarySwitches"] = c.involuntary_switches;
        if (c.run_queue_delay_us.has_value()) {
          w["runQueueDelayUs"] = Round2(*c.run_queue_delay_us);
        }
        nlohmann::json h = nlohmann::json::array();
        for (const auto& [bound, count] : c.histogram) h.push_back({bound, count});
        w["histogramUs"] = std::move(h);
      }
      wakeup[std::to_string(c.cpu)] = std::move(w);
    }
  }
  j["wakeup"] = std::move(wakeup);
  j["involuntarySwitches"] = r.involuntary_switches;
  j["bufferBytes"] = r.buffer_bytes;
  if (r.llc.has_value()) {
    j["lastLevelCache"] = {{"cpu", r.llc_cpu},
                           {"level", r.llc->level},
                           {"bytes", r.llc->size_bytes},
                           {"sharedCpus", r.llc->shared_cpu_list}};
  }
  j["memoryLatency"] = std::move(matrix);
  j["duration"] = DurationString(r.duration_ns);
  j["interval"] = DurationString(r.interval_ns);
  if (r.max_latency_ns.has_value()) {
    j["maxLatencyUs"] = Round2(static_cast<double>(*r.max_latency_ns) / 1e3);
    nlohmann::json over = nlohmann::json::array();
    for (int cpu : r.over_max_latency) over.push_back(std::to_string(cpu));
    j["overMaxLatency"] = std::move(over);
  }
  j["notes"] = r.notes;
  j["elapsedS"] = Round2(r.elapsed_s);
  return j;
}

std::string RenderTable(const ProbeReport& r) {
  std::string out;
  auto line = [&out](std::string s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out += s + "\n";
  };
  line(fmt::format("podtopo probe: CPUs {}, memory of NUMA node{} {}", r.cpus.String(),
                   r.mems.Size() > 1 ? "s" : "", r.mems.String()));
  if (!r.memory.empty()) {
    std::string llc = r.llc.has_value()
                          ? fmt::format("2 x the {} L{} cache of CPU {}; 16 MiB-1 GiB",
                                        HumanBytes(r.llc->size_bytes), r.llc->level, r.llc_cpu)
                          : "last-level cache size unknown";
    line("");
    line("MEMORY LATENCY  ns per dependent load, median of the rounds");
    line(fmt::format("buffer {} per node ({}), one cache line per load, random cyclic order",
                     HumanBytes(r.buffer_bytes), llc));
    line(fmt::format("{:<10}{:<11}{:<6}{:>9}{:>9}{:>9}  {:<15}{}", "FROM CPU", "FROM NODE",
                     "NODE", "NS/LOAD", "MIN", "MAX", "PAGES ON NODE", "HUGE PAGES"));
    for (const MemoryLatencyCell& c : r.memory) {
      if (!c.result.has_value()) {
        line(fmt::format("{:<10}{:<11}{:<6}error: {}", c.from_cpu, c.from_node, c.node, c.error));
        continue;
      }
      line(fmt::format(
          "{:<10}{:<11}{:<6}{:>9.1f}{:>9.1f}{:>9.1f}  {:<15}{}", c.from_cpu, c.from_node, c.node,
          c.result->ns_per_load, c.result->min_ns_per_load, c.result->max_ns_per_load,
          c.result->pages_on_node.has_value()
              ? fmt::format("{:.0f}%", *c.result->pages_on_node * 100)
              : std::string("-"),
          c.result->huge_pages ? "yes" : "no"));
    }
  }
  if (r.wakeup.has_value()) {
    line("");
    line(fmt::format("WAKE-UP LATENCY  absolute clock_nanosleep every {} for {}, {}; us",
                     DurationString(r.interval_ns), DurationString(r.duration_ns),
                     r.wakeup->sched_fifo ? fmt::format("SCHED_FIFO priority {}", r.wakeup->priority)
                                          : std::string("SCHED_OTHER")));
    line(fmt::format("{:<5}{:>8}{:>9}{:>9}{:>9}{:>9}{:>9}{:>12}{:>8}  {}", "CPU", "SAMPLES", "MIN",
                     "P50", "P99", "P99.9", "MAX", "RUNQ DELAY", "INVOL.", ""));
    for (const CpuWakeup& c : r.wakeup->cpus) {
      if (!c.error.empty()) {
        line(fmt::format("{:<5}error: {}", c.cpu, c.error));
        continue;
      }
      std::string flag;
      if (std::find(r.over_max_latency.begin(), r.over_max_latency.end(), c.cpu) !=
          r.over_max_latency.end()) {
        flag = fmt::format("max over --max-latency {}", DurationString(*r.max_latency_ns));
      }
      line(fmt::format("{:<5}{:>8}{:>9.1f}{:>9.1f}{:>9.1f}{:>9.1f}{:>9.1f}{:>12}{:>8}  {}", c.cpu,
                       c.samples, c.min_us, c.p50_us, c.p99_us, c.p999_us, c.max_us,
                       c.run_queue_delay_us.has_value()
                           ? fmt::format("{:.0f}us", *c.run_queue_delay_us)
                           : std::string("-"),
                       c.involuntary_switches, flag));
    }
  }
  line("");
  line(fmt::format("involuntary context switches of the measuring threads: {}",
                   r.involuntary_switches));
  if (r.max_latency_ns.has_value()) {
    if (r.over_max_latency.empty()) {
      line(fmt::format("every CPU's max wake-up latency is within --max-latency {}",
                       DurationString(*r.max_latency_ns)));
    } else {
      std::vector<std::string> cpus;
      for (int c : r.over_max_latency) cpus.push_back(std::to_string(c));
      line(fmt::format("over --max-latency {} on CPU {}", DurationString(*r.max_latency_ns),
                       fmt::join(cpus, ",")));
    }
  }
  for (const std::string& n : r.notes) line("note: " + n);
  line(fmt::format("took {:.1f}s", r.elapsed_s));
  return out;
}

}  // namespace podtopo::probe
