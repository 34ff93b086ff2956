// `podtopo verify` through the built binary on fixture nodes (src/verify/testdata): exit
// statuses (0 clean, 3 findings, 1 bad input or nothing reachable), -o json|table|html, and bad
// input naming the flag or file. The containers come from the test-only --containers file, /proc
// from --proc-root. A real containerd run is tests/e2e's business.
#include <filesystem>
#include <fstream>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/testing.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;

testing::CommandResult Podtopo(const std::string& args) {
  return testing::RunCommand(std::string(PODTOPO_BINARY) + " " + args);
}

std::string Node(const std::string& fixture) {
  std::string d = std::string(PODTOPO_VERIFY_TESTDATA) + "/" + fixture;
  return "--kubelet-dir " + d + "/kubelet --cgroup-root " + d + "/cgroup --proc-root " + d +
         "/proc --containers " + d + "/containers.json";
}

TEST(VerifyCli, FaultsAreFoundWithExit3) {
  auto r = Podtopo("verify -o json " + Node("v1-cgroupfs-faults"));
  ASSERT_EQ(r.exit_code, 3) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["containers"].size(), 5u);
  EXPECT_EQ(j["containers"][0]["intent"]["cpus"], "2-3");
  EXPECT_EQ(j["containers"][0]["actual"]["cpus"], "1-3");
  std::multiset<std::string> kinds;
  for (const auto& f : j["findings"]) kinds.insert(f["kind"].get<std::string>());
  for (const char* k : {"cpuset-drift", "shared-exclusive-cpu", "foreign-task", "remote-memory",
                        "affinity-wider", "pool-leak"}) {
    EXPECT_EQ(kinds.count(k) > 0, true) << k;
  }
  for (const auto& f : j["findings"]) {
    if (f["kind"] == "foreign-task") {
      EXPECT_EQ(f["pid"], 4242);
      EXPECT_EQ(f["comm"], "stress");
    }
    if (f["kind"] == "remote-memory") EXPECT_EQ(f["bytes"], 4096000);
  }
}

TEST(VerifyCli, CleanNodeExit0) {
  // The v2 systemd fixture is clean but for remote memory; the v1 clean fixture has the pinned
  // host `stress` task only.
  auto v1 = Podtopo("verify " + Node("v1-cgroupfs-clean"));
  EXPECT_EQ(v1.exit_code, 3) << v1.out << v1.err;
  EXPECT_THAT(v1.out, HasSubstr("foreign-task"));
  EXPECT_THAT(v1.out, HasSubstr("1 finding(s)"));
  // Without /proc's host tasks (an empty proc root) the clean node is clean.
  std::string empty = testing::MakeTempDir("verify-proc");
  std::string d = std::string(PODTOPO_VERIFY_TESTDATA) + "/v1-cgroupfs-clean";
  auto clean = Podtopo("verify --kubelet-dir " + d + "/kubelet --cgroup-root " + d +
                       "/cgroup --proc-root " + empty + " --containers " + d + "/containers.json");
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  EXPECT_THAT(clean.out, HasSubstr("no findings"));
}

TEST(VerifyCli, Html) {
  auto r = Podtopo("verify -o html " + Node("v2-systemd"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.out, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(r.out, HasSubstr("remote-memory"));
}

TEST(VerifyCli, BadInput) {
  auto no_dir = Podtopo("verify --kubelet-dir /nonexistent/kubelet --containers /dev/null");
  EXPECT_EQ(no_dir.exit_code, 1);
  EXPECT_THAT(no_dir.err, HasSubstr("--kubelet-dir /nonexistent/kubelet"));
  std::string d = std::string(PODTOPO_VERIFY_TESTDATA) + "/v1-cgroupfs-clean";
  auto no_runtime = Podtopo("verify --kubelet-dir " + d +
                            "/kubelet --runtime-endpoint unix:///nonexistent/containerd.sock");
  EXPECT_EQ(no_runtime.exit_code, 1);
  EXPECT_THAT(no_runtime.err, HasSubstr("--runtime-endpoint unix:///nonexistent/containerd.sock"));
  auto bad_sample = Podtopo("verify --sample 5 " + Node("v1-cgroupfs-clean"));
  EXPECT_EQ(bad_sample.exit_code, 1);
  EXPECT_THAT(bad_sample.err, HasSubstr("--sample"));
  auto bad_output = Podtopo("verify -o yaml " + Node("v1-cgroupfs-clean"));
  EXPECT_EQ(bad_output.exit_code, 1);
}

TEST(VerifyCli, UnreadableCgroupIsAPartialReport) {
  // A container listed by the runtime whose cgroup is gone: a problem, the rest is verified.
  std::string dir = testing::MakeTempDir("verify-gone");
  std::string d = std::string(PODTOPO_VERIFY_TESTDATA) + "/v1-cgroupfs-clean";
  {
    std::ofstream(dir + "/containers.json")
        << R"([{"namespace":"default","pod":"db","podUid":"aaaaaaaa-1111-4111-8111-111111111111",
               "container":"db","containerId":")" << std::string(64, '1') << R"("},
              {"namespace":"default","pod":"gone","podUid":"x","container":"c",
               "containerId":")" << std::string(64, '9') << R"("}])";
  }
  std::string empty = testing::MakeTempDir("verify-proc2");
  auto r = Podtopo("verify -o json --kubelet-dir " + d + "/kubelet --cgroup-root " + d +
                   "/cgroup --proc-root " + empty + " --containers " + dir + "/containers.json");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["problems"].size(), 1u);
  EXPECT_THAT(j["problems"][0].get<std::string>(), HasSubstr("default/gone/c: container 9999"));
  EXPECT_THAT(r.err, HasSubstr("partial"));
}

}  // namespace
}  // namespace podtopo
