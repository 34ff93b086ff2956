#include "probe/wakeup.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "fmt/format.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "probe/system.h"
#include "testing/testing.h"

namespace podtopo::probe {
namespace {

TEST(Summarize, NearestRankPercentilesAndBuckets) {
  std::vector<int64_t> ns;
  for (int i = 1000; i >= 1; --i) ns.push_back(i * 1000);  // 1..1000 us, reversed
  CpuWakeup w;
  Summarize(ns, w);
  EXPECT_EQ(w.samples, 1000);
  EXPECT_DOUBLE_EQ(w.min_us, 1);
  EXPECT_DOUBLE_EQ(w.p50_us, 500);
  EXPECT_DOUBLE_EQ(w.p99_us, 990);
  EXPECT_DOUBLE_EQ(w.p999_us, 999);
  EXPECT_DOUBLE_EQ(w.max_us, 1000);
  EXPECT_DOUBLE_EQ(w.avg_us, 500.5);
  int64_t total = 0;
  for (const auto& [bound, count] : w.histogram) total += count;
  EXPECT_EQ(total, 1000);
  EXPECT_EQ(w.histogram.front(), std::make_pair(1.0, int64_t{1}));
  EXPECT_EQ(w.histogram.back(), std::make_pair(1024.0, int64_t{1000 - 512}));
  std::vector<int64_t> none;
  Summarize(none, w);
  EXPECT_EQ(w.samples, 0);
}

TEST(MeasureWakeup, OneThreadPerCpuForTheDuration) {
  WakeupOptions o;
  o.cpus = ReadSystem().allowed_cpus;
  o.interval_ns = 1'000'000;
  o.duration_ns = 300'000'000;
  WakeupRun run = MeasureWakeup(o);
  ASSERT_EQ(run.cpus.size(), static_cast<size_t>(o.cpus.Size()));
  for (const CpuWakeup& c : run.cpus) {
    EXPECT_TRUE(c.error.empty()) << c.error;
    // 300 intended wake-ups, fewer after overruns.
    EXPECT_LE(c.samples, 300);
    EXPECT_GE(c.samples + c.overruns, 150) << "CPU " << c.cpu;
    EXPECT_LE(c.min_us, c.p50_us);
    EXPECT_LE(c.p50_us, c.p99_us);
    EXPECT_LE(c.p99_us, c.p999_us);
    EXPECT_LE(c.p999_us, c.max_us);
    EXPECT_GE(c.min_us, 0);
  }
  if (run.sched_fifo) {
    EXPECT_EQ(run.priority, 95);
    EXPECT_TRUE(run.note.empty());
  } else {
    EXPECT_NE(run.note.find("SCHED_FIFO refused"), std::string::npos);
  }
}

TEST(MeasureWakeup, ACpuOutsideTheAffinityIsReportedNotFatal) {
  WakeupOptions o;
  o.cpus = CpuSet{CpuSet::kMaxCpuId};  // no such CPU
  o.duration_ns = 20'000'000;
  WakeupRun run = MeasureWakeup(o);
  ASSERT_EQ(run.cpus.size(), 1u);
  EXPECT_EQ(run.cpus[0].samples, 0);
  EXPECT_NE(run.cpus[0].error.find("cannot run on CPU 65535"), std::string::npos)
      << run.cpus[0].error;
}

// Without permission for SCHED_FIFO (an unprivileged user whose RLIMIT_RTPRIO is 0) the run
// goes on under SCHED_OTHER and says so. The test drops to nobody in a child process.
TEST(MeasureWakeup, WithoutPermissionForFifoItRunsSchedOtherAndSaysSo) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    rlimit none{0, 0};
    setrlimit(RLIMIT_RTPRIO, &none);
    if (getuid() == 0 && setresuid(65534, 65534, 65534) != 0) _exit(2);
    WakeupOptions o;
    o.cpus = CpuSet{ReadSystem().allowed_cpus.Min()};
    o.duration_ns = 50'000'000;
    WakeupRun run = MeasureWakeup(o);
    std::string out = nlohmann::json{{"fifo", run.sched_fifo},
                                     {"note", run.note},
                                     {"samples", run.cpus.at(0).samples}}
                          .dump();
    if (write(fds[1], out.data(), out.size()) < 0) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  auto j = nlohmann::json::parse(text);
  EXPECT_FALSE(j["fifo"].get<bool>());
  EXPECT_NE(j["note"].get<std::string>().find("SCHED_FIFO refused (sched_setscheduler: "
                                              "Operation not permitted)"),
            std::string::npos)
      << j["note"];
  EXPECT_GT(j["samples"].get<int>(), 0);
}

// cyclictest's histogram ({"us": count}) median, nearest rank as Summarize.
double HistogramMedianUs(const nlohmann::json& hist) {
  std::vector<std::pair<int, int64_t>> buckets;
  int64_t total = 0;
  for (const auto& [us, count] : hist.items()) {
    buckets.emplace_back(std::stoi(us), count.get<int64_t>());
    total += count.get<int64_t>();
  }
  std::sort(buckets.begin(), buckets.end());
  int64_t rank = (total + 1) / 2, seen = 0;
  for (const auto& [us, count] : buckets) {
    seen += count;
    if (seen >= rank) return us;
  }
  return -1;
}

// Issue 24 item 5: the probe's wake-up latency on a CPU against Debian's cyclictest
// (rt-tests) on the same CPU, same interval (1ms), same duration (1s), same policy, one after
// the other. Their medians agree within max(15us, 50% of the larger): docs/verify.md gives the
// measurements behind this margin on the 2-CPU CI VM (medians 30-60us, pairs within 8us).
TEST(MeasureWakeup, MedianAgreesWithCyclictest) {
  if (std::system("command -v cyclictest >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "cyclictest is not installed (Debian package rt-tests; scripts/setup.sh "
                    "test installs it): no peer to compare with";
  }
  SystemView sys = ReadSystem();
  int cpu = sys.allowed_cpus.List().back();
  WakeupOptions o;
  o.cpus = CpuSet{cpu};
  o.interval_ns = 1'000'000;
  o.duration_ns = 1'000'000'000;
  WakeupRun ours = MeasureWakeup(o);
  ASSERT_EQ(ours.cpus.size(), 1u);
  ASSERT_GT(ours.cpus[0].samples, 0) << ours.cpus[0].error;

  std::string dir = testing::MakeTempDir("probe-cyclictest");
  std::string json = dir + "/cyclictest.json";
  // -q: summary only; -h: histogram up to 10ms (into --histfile, not stdout); --default-system:
  // leave /dev/cpu_dma_latency alone, as the probe does.
  std::string policy = ours.sched_fifo ? "-p 95" : "--policy=other";
  std::string cmd = fmt::format(
      "cyclictest -q -t 1 -a {} {} -i 1000 -D 1 -h 10000 --histfile={}/hist.txt "
      "--default-system --json={} >{}/out.txt 2>&1",
      cpu, policy, dir, json, dir);
  int rc = std::system(cmd.c_str());
  std::ifstream in(json);
  ASSERT_EQ(rc, 0) << cmd;
  ASSERT_TRUE(in.good()) << "no " << json;
  nlohmann::json peer = nlohmann::json::parse(in);
  const auto& thread = peer["thread"]["0"];
  double peer_median = HistogramMedianUs(thread["histogram"]);
  double our_median = ours.cpus[0].p50_us;
  double margin = std::max(15.0, 0.5 * std::max(peer_median, our_median));
  RecordProperty("probe_p50_us", std::to_string(our_median));
  RecordProperty("cyclictest_p50_us", std::to_string(peer_median));
  std::printf("CPU %d: probe p50 %.1fus (%lld samples, %s), cyclictest p50 %.0fus (%lld cycles)\n",
              cpu, our_median, static_cast<long long>(ours.cpus[0].samples),
              ours.sched_fifo ? "SCHED_FIFO" : "SCHED_OTHER", peer_median,
              static_cast<long long>(thread["cycles"].get<int64_t>()));
  EXPECT_LE(std::abs(our_median - peer_median), margin)
      << "probe " << our_median << "us, cyclictest " << peer_median << "us";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace podtopo::probe
