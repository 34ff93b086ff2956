// Crash safety of `podtopo admit` / `podtopo remove` with a state directory: the process is
// killed with SIGKILL at random points across many runs. After every kill the state directory
// must load and validate (`podtopo show` succeeds), every pod whose command finished is there
// with the allocation it was given, no pod appears twice, and no CPU is held twice.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "cpuset/cpuset.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/testing.h"

namespace podtopo {
namespace {

struct RunResult {
  int exit_code = -1;  // -1 when killed
  std::string out;
};

// Runs the podtopo binary; kills it after `kill_after_us` microseconds when >= 0.
RunResult RunPodtopo(const std::vector<std::string>& args, long kill_after_us,
               const std::string& out_file) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> argv;
    std::string bin = PODTOPO_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    _exit(127);
  }
  RunResult run;
  if (kill_after_us >= 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(kill_after_us));
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  std::ifstream in(out_file);
  run.out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return run;
}

std::string PodYaml(int i) {
  // Pod-level pods of 1-3 CPUs, one exclusive container when the budget allows.
  int cpus = 1 + i % 3;
  std::string y = fmt::format(
      "apiVersion: v1\nkind: Pod\nmetadata: {{name: crash-{0}}}\nspec:\n  resources:\n"
      "    requests: {{cpu: \"{1}\", memory: 1Gi}}\n    limits: {{cpu: \"{1}\", memory: 1Gi}}\n"
      "  containers:\n  - name: shared\n    image: busybox\n",
      i, cpus);
  if (cpus > 1) {
    y += "  - name: excl\n    image: busybox\n    resources:\n      requests: {cpu: \"1\", "
         "memory: 256Mi}\n      limits: {cpu: \"1\", memory: 256Mi}\n";
  }
  return y;
}

TEST(CrashTest, SigkillNeverLosesOrDuplicatesAnAllocation) {
  std::string dir = testing::MakeTempDir("podtopo-crash");
  std::string state = dir + "/state";
  std::filesystem::create_directories(state);
  const int kPods = 10;
  for (int i = 0; i < kPods; ++i) {
    std::ofstream(fmt::format("{}/pod-{}.yaml", dir, i)) << PodYaml(i);
  }
  std::string out = dir + "/out.txt";
  // How long one admission takes here, to spread the kills over the whole run.
  auto t0 = std::chrono::steady_clock::now();
  RunResult warm = RunPodtopo({"show", "--state-dir", state}, -1, out);
  ASSERT_EQ(warm.exit_code, 0) << warm.out;
  long span_us = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::steady_clock::now() - t0)
                     .count();
  span_us = std::max(span_us * 2, 2000L);

  std::mt19937 rng(42);
  std::map<std::string, std::string> confirmed;  // pod -> cpus, from finished commands
  std::set<std::string> attempted;
  int kills = 0, finished = 0;
  // At least kRuns runs; more (up to kMaxRuns) until both kinds of run occurred often enough,
  // however fast or slow this machine is at the moment (a loaded CI machine under ASan).
  const int kRuns = 120, kMaxRuns = 600;
  for (int run = 0; run < kRuns || (run < kMaxRuns && (kills <= 20 || finished <= 10));
       ++run) {
    int i = std::uniform_int_distribution<int>(0, kPods - 1)(rng);
    std::string name = fmt::format("crash-{}", i);
    bool remove = confirmed.count(name) && std::uniform_int_distribution<int>(0, 2)(rng) == 0;
    long delay = std::uniform_int_distribution<long>(0, span_us)(rng);
    bool kill_it = std::uniform_int_distribution<int>(0, 3)(rng) != 0;
    std::vector<std::string> args;
    if (remove) {
      args = {"remove", "default/" + name, "--state-dir", state, "-o", "json"};
    } else {
      args = {"admit", fmt::format("{}/pod-{}.yaml", dir, i), "--state-dir", state, "-o", "json"};
      attempted.insert(name);
    }
    auto started = std::chrono::steady_clock::now();
    RunResult r = RunPodtopo(args, kill_it ? delay : -1, out);
    if (r.exit_code == -1) {
      ++kills;
    } else {
      ++finished;
      // Spread the next kills over the time a command takes now: a command that finished
      // before its kill came says the span was too long for the machine's current speed.
      span_us = std::max<long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - started)
                                   .count(),
                               1000L);
      ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out;
    }

    // The state directory must load and validate after every run, killed or not.
    RunResult show = RunPodtopo({"show", "--state-dir", state, "-o", "json"}, -1, out);
    ASSERT_EQ(show.exit_code, 0) << "after run " << run << ": " << show.out;
    nlohmann::json j = nlohmann::json::parse(show.out);
    std::map<std::string, std::string> present;
    CpuSet held, all_default = CpuSet::Parse(j["node"]["defaultCpuSet"].get<std::string>()).value();
    for (const auto& p : j["pods"]) {
      std::string pn = p["name"].get<std::string>();
      ASSERT_FALSE(present.count(pn)) << pn << " appears twice";
      ASSERT_TRUE(attempted.count(pn)) << pn << " was never admitted";
      CpuSet bubble = CpuSet::Parse(p["cpus"].get<std::string>()).value();
      ASSERT_FALSE(bubble.Intersects(held)) << pn << " shares CPUs with another pod";
      ASSERT_FALSE(bubble.Intersects(all_default)) << pn << " bubble is in the default set";
      held.UnionWith(bubble);
      present[pn] = bubble.String();
    }
    // A finished command's result is what the state now says.
    if (r.exit_code != -1) {
      nlohmann::json res = nlohmann::json::parse(r.out);
      if (remove) {
        confirmed.erase(name);
        ASSERT_FALSE(present.count(name)) << name << " still there after remove finished";
      } else {
        for (const auto& p : res["pods"]) {
          if (p["admitted"].get<bool>()) confirmed[p["name"].get<std::string>()] =
              p["cpus"].get<std::string>();
        }
      }
    } else if (remove && !present.count(name)) {
      confirmed.erase(name);  // the kill came after the record was written: removed
    } else if (!remove && present.count(name)) {
      confirmed[name] = present[name];  // the kill came after the record was written
    }
    for (const auto& [pn, cpus] : confirmed) {
      ASSERT_TRUE(present.count(pn)) << "run " << run << ": admitted pod " << pn << " was lost";
      ASSERT_EQ(present[pn], cpus) << "run " << run << ": " << pn << " changed CPUs";
    }
    for (const auto& [pn, cpus] : present) {
      ASSERT_TRUE(confirmed.count(pn)) << "run " << run << ": " << pn << " is not expected";
    }
  }
  EXPECT_GT(kills, 20);
  EXPECT_GT(finished, 10);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace podtopo
