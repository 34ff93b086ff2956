#include "probe/probe.h"

#include <gtest/gtest.h>

#include "fmt/format.h"

namespace podtopo::probe {
namespace {

// A made-up host: CPUs 0-3 allowed on two NUMA nodes, memory on 0-1, allowed on 0 only.
SystemView FakeHost() {
  SystemView s;
  s.allowed_cpus = CpuSet{0, 1, 2, 3};
  s.numa_available = true;
  s.numa_nodes = CpuSet{0, 1};
  s.allowed_mems = CpuSet{0};
  s.node_of_cpu = {{0, 0}, {1, 0}, {2, 1}, {3, 1}};
  return s;
}

std::string ErrorOf(const ProbeFlags& f, const SystemView& s = FakeHost()) {
  auto o = ResolveOptions(f, s);
  return o.ok() ? "ok" : std::string(o.status().message());
}

TEST(ResolveOptions, DefaultsAreTheProcessesCpusAndMems) {
  auto o = ResolveOptions(ProbeFlags{}, FakeHost());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->cpus.String(), "0-3");
  EXPECT_EQ(o->mems.String(), "0");
  EXPECT_EQ(o->duration_ns, 2'000'000'000);
  EXPECT_EQ(o->interval_ns, 1'000'000);
  EXPECT_FALSE(o->max_latency_ns.has_value());
  EXPECT_EQ(o->priority, 95);
  EXPECT_TRUE(o->numa);
}

TEST(ResolveOptions, BadInputNamesTheFlagAndValue) {
  ProbeFlags f;
  f.cpus = "2-5";
  EXPECT_EQ(ErrorOf(f), "--cpus 2-5: CPUs 4-5 are not among the CPUs this process may run on "
                        "(0-3; its Cpus_allowed_list)");
  f.cpus = "1-x";
  EXPECT_EQ(ErrorOf(f).rfind("--cpus 1-x: ", 0), 0u) << ErrorOf(f);
  f = {};
  f.mems = "2";
  EXPECT_EQ(ErrorOf(f), "--mems 2: NUMA node 2 does not exist here (nodes with memory: 0-1)");
  f.mems = "1";
  EXPECT_EQ(ErrorOf(f), "--mems 1: this process may not allocate on NUMA node 1 (its "
                        "Mems_allowed_list is 0; in a pod, the container's cpuset.mems)");
  f = {};
  f.duration = "2";
  EXPECT_EQ(ErrorOf(f), "--duration 2: time: missing unit in duration \"2\"");
  f.duration = "-1s";
  EXPECT_EQ(ErrorOf(f), "--duration -1s: must be above 0s and at most 1h0m0s");
  f.duration = "500us";
  EXPECT_EQ(ErrorOf(f), "--duration 500us: shorter than --interval 1ms: not one wake-up to "
                        "measure");
  f = {};
  f.interval = "1us";
  EXPECT_EQ(ErrorOf(f), "--interval 1us: must be between 10µs and 1s");
  f.interval = "fast";
  EXPECT_EQ(ErrorOf(f), "--interval fast: time: invalid duration \"fast\"");
  f = {};
  f.duration = "1h";
  f.interval = "100us";
  EXPECT_EQ(ErrorOf(f).rfind("--duration 1h at --interval 100us: 36000000 samples per CPU", 0),
            0u)
      << ErrorOf(f);
  f = {};
  f.max_latency = "0s";
  EXPECT_EQ(ErrorOf(f), "--max-latency 0s: must be above 0s");
  f.max_latency = "50";
  EXPECT_EQ(ErrorOf(f), "--max-latency 50: time: missing unit in duration \"50\"");
  f = {};
  f.priority = 120;
  EXPECT_EQ(ErrorOf(f), "--priority 120: SCHED_FIFO priorities are 1-99 (0: SCHED_OTHER)");
  f = {};
  f.buffer = "12Q";
  EXPECT_EQ(ErrorOf(f), "--buffer 12Q: cache size \"12Q\": unknown unit \"Q\" (K, M or G)");
  f.buffer = "100K";
  EXPECT_EQ(ErrorOf(f), "--buffer 100K: must be between 1M and 64G");
  f = {};
  f.no_memory = f.no_wakeup = true;
  EXPECT_EQ(ErrorOf(f), "--no-memory and --no-wakeup: nothing left to measure");
}

TEST(ResolveOptions, NoNumaOrOneNodeIsSaidNotRefused) {
  SystemView s = FakeHost();
  s.numa_available = false;
  auto o = ResolveOptions(ProbeFlags{}, s);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->numa);
  ASSERT_EQ(o->notes.size(), 1u);
  EXPECT_NE(o->notes[0].find("no NUMA support"), std::string::npos);
  s = FakeHost();
  s.numa_nodes = CpuSet{0};
  o = ResolveOptions(ProbeFlags{}, s);
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_EQ(o->notes.size(), 1u);
  EXPECT_NE(o->notes[0].find("one NUMA node (0)"), std::string::npos);
}

// A short real run through the -o json document and the table: the contract's keys, the
// buffer size, and --max-latency crossed on every CPU (1ns cannot be met).
TEST(RunProbe, JsonHasTheContractsKeysAndTheTableSaysWhatCrossed) {
  ProbeFlags f;
  f.duration = "200ms";
  f.max_latency = "1ns";
  f.buffer = "16M";
  auto o = ResolveOptions(f, ReadSystem());
  ASSERT_TRUE(o.ok()) << o.status();
  ProbeReport r = RunProbe(*o);
  nlohmann::json j = ToJson(r);
  EXPECT_EQ(j["cpus"], o->cpus.String());
  EXPECT_EQ(j["mems"], o->mems.String());
  EXPECT_TRUE(j["schedFifo"].is_boolean());
  ASSERT_TRUE(j["memoryLatencyNs"].is_object());
  EXPECT_EQ(j["memoryLatencyNs"].size(), static_cast<size_t>(o->mems.Size())) << j.dump();
  for (const auto& [node, ns] : j["memoryLatencyNs"].items()) EXPECT_GT(ns.get<double>(), 0);
  ASSERT_EQ(j["wakeup"].size(), static_cast<size_t>(o->cpus.Size()));
  for (const auto& [cpu, w] : j["wakeup"].items()) {
    for (const char* key : {"samples", "p50Us", "p99Us", "p999Us", "maxUs"}) {
      EXPECT_TRUE(w.contains(key)) << cpu << " " << key;
    }
    EXPECT_GT(w["samples"].get<int>(), 0);
  }
  EXPECT_TRUE(j["involuntarySwitches"].is_number_integer());
  EXPECT_EQ(j["bufferBytes"], 16 << 20);
  EXPECT_EQ(r.over_max_latency, o->cpus.List());
  EXPECT_EQ(j["overMaxLatency"].size(), static_cast<size_t>(o->cpus.Size()));
  std::string table = RenderTable(r);
  EXPECT_NE(table.find("buffer 16 MiB per node"), std::string::npos) << table;
  EXPECT_NE(table.find("max over --max-latency 1ns"), std::string::npos) << table;
  EXPECT_NE(table.find(fmt::format("over --max-latency 1ns on CPU {}", o->cpus.Min())),
            std::string::npos)
      << table;
}

TEST(RunProbe, ABarredNodeGivesAPartialReport) {
  SystemView sys = ReadSystem();
  if (!sys.numa_available) GTEST_SKIP() << "no NUMA support (numa_available() < 0)";
  ProbeFlags f;
  f.no_wakeup = true;
  f.buffer = "1M";
  auto o = ResolveOptions(f, sys);
  ASSERT_TRUE(o.ok()) << o.status();
  o->mems.Add(999);  // past ResolveOptions' checks: mbind refuses it
  o->notes.clear();
  ProbeReport r = RunProbe(*o);
  ASSERT_EQ(r.memory.size(), static_cast<size_t>(o->mems.Size()));
  EXPECT_TRUE(r.memory.front().result.has_value()) << r.memory.front().error;
  EXPECT_NE(r.memory.back().error.find("mbind"), std::string::npos);
  nlohmann::json j = ToJson(r);
  EXPECT_FALSE(j["memoryLatencyNs"].contains("999"));
  EXPECT_NE(RenderTable(r).find("error: mbind of the chase buffer to NUMA node 999"),
            std::string::npos);
}

}  // namespace
}  // namespace podtopo::probe
