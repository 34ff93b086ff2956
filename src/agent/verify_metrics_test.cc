// `podtopo agent --verify`: verify's report as metrics, on the fixture nodes of src/verify
// (testdata/make_fixtures.py plants every fault, remote memory included: this machine has one
// NUMA node). The values of each family, the bounded labels, and the agent in process: a pod
// removed from the node loses its series at the next run.
#include "agent/verify_metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <regex>
#include <thread>

#include "agent/agent.h"
#include "agent/agent_metrics.h"
#include "agent/test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/testing.h"
#include "util/file.h"

namespace podtopo::agent {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(PODTOPO_VERIFY_TESTDATA) + "/" + name;
}

AgentVerifyOptions FixtureOptions(const std::string& name) {
  AgentVerifyOptions o;
  o.enabled = true;
  o.kubelet_dir = Fixture(name) + "/kubelet";
  o.containers_file = Fixture(name) + "/containers.json";
  o.cgroup_root = Fixture(name) + "/cgroup";
  o.proc_root = Fixture(name) + "/proc";
  return o;
}

// A free loopback port (bound then released).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

std::string Metrics(const VerifyStatus& v) {
  AgentStatus s;
  s.verify = v;
  return RenderMetricsText(s);
}

// The value of the one series whose name and labels are `series` verbatim, or nullopt.
std::optional<double> Value(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return std::nullopt;
}

TEST(VerifyMetrics, FaultsFixture) {
  VerifyStatus v;
  std::string problem = RunVerify(FixtureOptions("v1-cgroupfs-faults"), v);
  EXPECT_EQ(problem, "");
  std::string m = Metrics(v);
  EXPECT_EQ(Value(m, "podtopo_verify_up"), 1);
  EXPECT_EQ(Value(m, "podtopo_verify_runs_total"), 1);
  EXPECT_EQ(Value(m, "podtopo_verify_containers"), 5);
  EXPECT_EQ(Value(m, "podtopo_verify_problems"), 0);
  EXPECT_EQ(Value(m, "podtopo_verify_findings{kind=\"cpuset-drift\"}"), 3);
  EXPECT_EQ(Value(m, "podtopo_verify_findings{kind=\"foreign-task\"}"), 1);
  EXPECT_EQ(Value(m, "podtopo_verify_findings{kind=\"remote-memory\"}"), 1);
  EXPECT_EQ(Value(m, "podtopo_verify_findings{kind=\"shared-exclusive-cpu\"}"), 1);
  EXPECT_EQ(Value(m, "podtopo_verify_findings{kind=\"pool-leak\"}"), 1);
  EXPECT_EQ(Value(m, "podtopo_verify_findings{kind=\"affinity-wider\"}"), 1);
  EXPECT_EQ(Value(m, "podtopo_verify_findings{kind=\"intent-mismatch\"}"), 0);
  EXPECT_EQ(Value(m, "podtopo_verify_findings{kind=\"sidecar-outside-pool\"}"), 0);
  // 1000 pages of db's memory.numa_stat on a node outside its assignment (this machine's page
  // size: the agent reads with it).
  EXPECT_EQ(Value(m, "podtopo_verify_remote_memory_bytes{namespace=\"default\",pod=\"db\"}"),
            1000.0 * static_cast<double>(sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(Value(m, "podtopo_verify_foreign_tasks{namespace=\"default\",pod=\"db\"}"), 1);
  EXPECT_EQ(Value(m, "podtopo_verify_pod_findings{namespace=\"default\",pod=\"db\","
                     "kind=\"remote-memory\"}"),
            1);
  // No sampling window: no CPU-time family.
  EXPECT_EQ(m.find("podtopo_verify_foreign_cpu_seconds"), std::string::npos);
  // Bounded labels: no pid, command or container id anywhere.
  EXPECT_EQ(m.find("4242"), std::string::npos) << m;
  EXPECT_EQ(m.find("stress"), std::string::npos);
  EXPECT_EQ(m.find("1111111111111111"), std::string::npos);
  EXPECT_EQ(m.find("pid="), std::string::npos);
  EXPECT_GT(*Value(m, "podtopo_verify_last_run_timestamp_seconds"), 1.6e9);
}

TEST(VerifyMetrics, CleanFixtureHasZerosForPodsWithExclusiveCpus) {
  VerifyStatus v;
  AgentVerifyOptions o = FixtureOptions("v1-cgroupfs-clean");
  o.proc_root = testing::MakeTempDir("verify-metrics");  // no host tasks: nothing foreign
  EXPECT_EQ(RunVerify(o, v), "");
  std::filesystem::remove_all(o.proc_root);
  std::string m = Metrics(v);
  for (const std::string& kind : VerifyFindingKinds()) {
    EXPECT_EQ(Value(m, "podtopo_verify_findings{kind=\"" + kind + "\"}"), 0) << kind;
  }
  EXPECT_EQ(Value(m, "podtopo_verify_foreign_tasks{namespace=\"default\",pod=\"db\"}"), 0) << m;
  // tools runs in the node's shared pool: no exclusive CPUs, no series.
  EXPECT_EQ(m.find("pod=\"tools\"}"), std::string::npos) << m;
  EXPECT_EQ(m.find("podtopo_verify_pod_findings{"), std::string::npos);
}

TEST(VerifyMetrics, SampledCpuTimeIsSummedPerPod) {
  verify::Report r;
  verify::Observed db;
  db.ref = {.pod_namespace = "ns", .pod = "db", .pod_uid = "u", .name = "db", .id = "c1",
            .cgroups_path = "", .pid = 0};
  db.intent_cpus = CpuSet{2, 3};
  db.exclusive = true;
  r.containers.push_back(db);
  for (double secs : {0.25, 0.5}) {
    verify::Finding f;
    f.kind = "foreign-task";
    f.pod_namespace = "ns";
    f.pod = "db";
    f.pid = 7;
    f.cpu_seconds = secs;
    r.findings.push_back(f);
  }
  VerifyStatus v;
  Summarize(r, /*sampled=*/true, v);
  std::string m = Metrics(v);
  EXPECT_EQ(Value(m, "podtopo_verify_foreign_tasks{namespace=\"ns\",pod=\"db\"}"), 2);
  EXPECT_EQ(Value(m, "podtopo_verify_foreign_cpu_seconds{namespace=\"ns\",pod=\"db\"}"), 0.75);
}

TEST(VerifyMetrics, FailureDropsThePodSeriesAndCounts) {
  VerifyStatus v;
  ASSERT_EQ(RunVerify(FixtureOptions("v1-cgroupfs-faults"), v), "");
  AgentVerifyOptions bad = FixtureOptions("v1-cgroupfs-faults");
  bad.containers_file = "/nonexistent/containers.json";
  EXPECT_NE(RunVerify(bad, v), "");
  bad = FixtureOptions("v1-cgroupfs-faults");
  bad.kubelet_dir = "/nonexistent/kubelet";
  EXPECT_NE(RunVerify(bad, v), "");
  std::string m = Metrics(v);
  EXPECT_EQ(Value(m, "podtopo_verify_up"), 0);
  EXPECT_EQ(Value(m, "podtopo_verify_runs_total"), 3);
  EXPECT_EQ(Value(m, "podtopo_verify_errors_total{reason=\"runtime\"}"), 1);
  EXPECT_EQ(Value(m, "podtopo_verify_errors_total{reason=\"intent\"}"), 1);
  EXPECT_EQ(m.find("pod=\""), std::string::npos) << m;
  EXPECT_EQ(m.find("podtopo_verify_findings{"), std::string::npos);
}

// The agent in process (its PodResources socket absent: verify runs anyway), every 50 ms; the
// pod db leaves the containers file and its series go.
TEST(VerifyMetrics, AgentDropsTheSeriesOfAPodThatIsGone) {
  std::string dir = testing::MakeTempDir("verify-metrics");
  std::string containers = dir + "/containers.json";
  std::string text = ReadFile(Fixture("v1-cgroupfs-faults") + "/containers.json").value();
  ASSERT_TRUE(WriteFileAtomically(containers, text).ok());
  auto docs = testutil::AdmitDocsPods(podresources::Compat::k1_37);
  AgentOptions ao{.socket = dir + "/absent.sock",
                  .listen = "127.0.0.1:" + std::to_string(FreePort()),
                  .nrt_out = "",
                  .nrt_name = "node-a",
                  .kubelet_dir = "",
                  .interval = std::chrono::milliseconds(50),
                  .verify = {}};
  ao.verify = FixtureOptions("v1-cgroupfs-faults");
  ao.verify.containers_file = containers;
  ao.verify.podresources_socket = ao.socket;
  auto a = Agent::Start(docs.topology, docs.config, ao);
  ASSERT_TRUE(a.ok()) << a.status();
  const std::string db = "podtopo_verify_remote_memory_bytes{namespace=\"default\",pod=\"db\"}";
  auto wait_for = [&](const std::function<bool(const std::string&)>& done) {
    std::string m;
    for (int i = 0; i < 200; ++i) {
      m = (*a)->Handle("/metrics").body;
      if (done(m)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return m;
  };
  std::string m = wait_for([&](const std::string& t) { return Value(t, db).has_value(); });
  ASSERT_TRUE(Value(m, db).has_value()) << m;
  EXPECT_GT(*Value(m, db), 0);
  EXPECT_EQ(Value(m, "podtopo_podresources_up"), 0);
  EXPECT_EQ(Value(m, "podtopo_verify_up"), 1);

  auto j = nlohmann::json::parse(text);
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& c : j) {
    if (c["pod"] != "db") kept.push_back(c);
  }
  ASSERT_TRUE(WriteFileAtomically(containers, kept.dump()).ok());
  m = wait_for([&](const std::string& t) {
    return Value(t, "podtopo_verify_containers") == 4.0;
  });
  EXPECT_EQ(Value(m, "podtopo_verify_containers"), 4) << m;
  EXPECT_EQ(m.find("pod=\"db\""), std::string::npos) << m;
  EXPECT_TRUE(Value(m, "podtopo_verify_foreign_tasks{namespace=\"default\",pod=\"web\"}") ||
              m.find("pod=\"web\"") != std::string::npos)
      << m;
  (*a)->Stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace podtopo::agent
