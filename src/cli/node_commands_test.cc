// `podtopo admit | explain | compare | remove | show` in process (cli::Run), as a node operator
// meets them in the first hour (issue 22): a pod whose manifest changed is admitted again and
// said so, two different pods with one name are refused, `remove` is all or nothing, and a
// missing --state-dir is one rule for every command (docs/state.md "The state directory").

#include <filesystem>
#include <map>
#include <sstream>

#include "cli/cli_testing.h"
#include "cpuset/cpuset.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/testing.h"
#include "util/file.h"

namespace podtopo {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using Result = cli::CliResult;
using cli::RunCli;

std::string Example(const std::string& f) { return testing::SourceDir() + "/docs/examples/" + f; }

// docs/examples/pod-scope-mixed.yaml with main-app asking for 3 CPUs instead of 2.
std::string ChangedMixedPod(const std::string& dir) {
  std::string text = testing::ReadFileOrEmpty(Example("pod-scope-mixed.yaml"));
  for (int i = 0; i < 2; ++i) {
    const size_t at = text.find("cpu: \"2\"");
    EXPECT_NE(at, std::string::npos);
    text.replace(at, 8, "cpu: \"3\"");
  }
  const std::string path = dir + "/pod-scope-mixed-3cpu.yaml";
  EXPECT_TRUE(WriteFileAtomically(path, text).ok());
  return path;
}

// The CPUs of container `name` of the only pod in admit's -o json.
int ContainerCpus(const std::string& admit_json, const std::string& name) {
  auto j = nlohmann::json::parse(admit_json);
  for (const auto& c : j["pods"].at(0)["containers"]) {
    if (c["name"] == name) return CpuSet::Parse(c["cpus"].get<std::string>())->Size();
  }
  ADD_FAILURE() << "no container " << name << " in " << admit_json;
  return -1;
}

std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    out[e.path().filename().string()] = testing::ReadFileOrEmpty(e.path().string());
  }
  return out;
}

// Item 1: the old code printed "Admitted" with the old 2-CPU slice for the 3-CPU manifest.
TEST(NodeCommands, ChangedPodIsAdmittedAgainAndSaysSo) {
  const std::string dir = testing::MakeTempDir("node-cmd-changed");
  const std::string state = dir + "/state";
  const std::string changed = ChangedMixedPod(dir);
  Result first = RunCli({"admit", Example("pod-scope-mixed.yaml"), "--state-dir", state, "-o",
                         "json"});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(ContainerCpus(first.out, "main-app"), 2);

  // explain reads the state dir and explains the new spec, not the held allocation.
  Result explained = RunCli({"explain", changed, "--state-dir", state, "-o", "json"});
  ASSERT_EQ(explained.code, 0) << explained.err;
  auto e = nlohmann::json::parse(explained.out)["pods"].at(0);
  EXPECT_THAT(e["note"].get<std::string>(),
              HasSubstr("pod default/pod-scope-mixed changed; admitting it again"));
  for (const auto& c : e["containers"]) {
    if (c["name"] == "main-app") {
      EXPECT_EQ(CpuSet::Parse(c["cpus"].get<std::string>())->Size(), 3) << c.dump();
    }
  }

  Result again = RunCli({"admit", changed, "--state-dir", state, "-o", "json"});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("pod default/pod-scope-mixed changed; admitting it again"));
  EXPECT_EQ(ContainerCpus(again.out, "main-app"), 3);
  // The state dir holds the new spec's allocation: show agrees, and the same manifest again is
  // the same pod (no re-admission).
  Result show = RunCli({"show", "--state-dir", state, "-o", "json"});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_EQ(ContainerCpus(show.out, "main-app"), 3);
  Result same = RunCli({"admit", changed, "--state-dir", state, "-o", "json"});
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_THAT(same.err, Not(HasSubstr("changed")));
  EXPECT_EQ(ContainerCpus(same.out, "main-app"), 3);
  fs::remove_all(dir);
}

// Item 1: without a state dir, two manifests with one namespace/name were admitted as one pod
// (the second reported with the first one's allocation).
TEST(NodeCommands, TwoDifferentPodsWithOneNameAreRefusedNamingBothFiles) {
  const std::string dir = testing::MakeTempDir("node-cmd-twice");
  const std::string original = Example("pod-scope-mixed.yaml");
  const std::string changed = ChangedMixedPod(dir);
  for (const std::string command : {"admit", "explain"}) {
    Result r = RunCli({command, original, changed});
    EXPECT_EQ(r.code, 1) << command << ": " << r.out;
    EXPECT_THAT(r.err, HasSubstr("pod default/pod-scope-mixed is given twice with different specs"))
        << command;
    EXPECT_THAT(r.err, HasSubstr(original)) << command;
    EXPECT_THAT(r.err, HasSubstr(changed)) << command;
    EXPECT_TRUE(r.out.empty()) << command << ": " << r.out;
  }
  Result compare = RunCli({"compare", original, changed, "--config",
                           Example("kubelet-config.yaml"), "--config",
                           Example("kubelet-config-gate-off.yaml")});
  EXPECT_EQ(compare.code, 1) << compare.out;
  EXPECT_THAT(compare.err, HasSubstr("is given twice with different specs"));
  // The same pod given twice is one pod.
  Result same = RunCli({"admit", original, original});
  EXPECT_EQ(same.code, 0) << same.err;
  fs::remove_all(dir);
}

// Item 5: `remove A B` with B not admitted removed A, wrote the state and exited 1.
TEST(NodeCommands, RemoveIsAllOrNothing) {
  const std::string dir = testing::MakeTempDir("node-cmd-remove");
  Result admit = RunCli({"admit", Example("pod-scope-mixed.yaml"),
                         Example("pod-level-resource-demo.yaml"), "--state-dir", dir});
  ASSERT_EQ(admit.code, 0) << admit.err;
  const auto before = Files(dir);
  Result bad = RunCli({"remove", "default/pod-scope-mixed", "default/not-there", "--state-dir", dir});
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr("pod default/not-there is not admitted on this node; nothing "
                                 "removed"));
  EXPECT_EQ(Files(dir), before);
  Result show = RunCli({"show", "--state-dir", dir, "-o", "json"});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_EQ(nlohmann::json::parse(show.out)["pods"].size(), 2u);

  Result good = RunCli({"remove", "default/pod-scope-mixed", "pod-scope-mixed", "--state-dir", dir,
                        "-o", "json"});
  ASSERT_EQ(good.code, 0) << good.err;
  EXPECT_EQ(nlohmann::json::parse(good.out)["pods"].size(), 1u);
  fs::remove_all(dir);
}

// Item 6: one rule. The old code: admit failed naming an internal temporary file, show printed
// an empty node with exit 0.
TEST(NodeCommands, MissingStateDirIsAnErrorForReadersAndCreatedByAdmit) {
  const std::string dir = testing::MakeTempDir("node-cmd-missing");
  const std::string missing = dir + "/no/such/dir";
  const std::vector<std::vector<std::string>> readers = {
      {"show", "--state-dir", missing},
      {"explain", Example("pod-scope-mixed.yaml"), "--state-dir", missing},
      {"remove", "default/pod-scope-mixed", "--state-dir", missing},
  };
  for (const auto& args : readers) {
    Result r = RunCli(args);
    EXPECT_EQ(r.code, 1) << args[0] << ": " << r.out;
    EXPECT_THAT(r.err, HasSubstr("--state-dir: state dir " + missing + " does not exist"))
        << args[0];
    EXPECT_FALSE(fs::exists(missing)) << args[0];
  }
  Result admit = RunCli({"admit", Example("pod-scope-mixed.yaml"), "--state-dir", missing});
  EXPECT_EQ(admit.code, 0) << admit.err;
  EXPECT_TRUE(fs::exists(missing + "/cpu_manager_state"));
  EXPECT_TRUE(fs::exists(missing + "/podtopo_pods.json"));
  // A file where the directory should be is an error for both kinds.
  const std::string file = dir + "/a-file";
  ASSERT_TRUE(WriteFileAtomically(file, "x").ok());
  for (const std::string command : {"show", "admit"}) {
    std::vector<std::string> args = {command, "--state-dir", file};
    if (command == "admit") args.insert(args.begin() + 1, Example("pod-scope-mixed.yaml"));
    Result r = RunCli(args);
    EXPECT_EQ(r.code, 1) << command;
    EXPECT_THAT(r.err, HasSubstr("state dir " + file + " is not a directory")) << command;
  }
  fs::remove_all(dir);
}

// Issue 22 item 12: on a node of more than 8 NUMA nodes without max-allowable-numa-nodes, admit
// names the fix lint gives (one text, admission::NumaNodeLimitFix). The old code: admit said
// only "unsupported on machines with more than 8 NUMA Nodes".
TEST(NodeCommands, TooManyNumaNodesNamesTheFixInAdmitAndLint) {
  const std::string fix = "set topologyManagerPolicyOptions: {max-allowable-numa-nodes: \"34\"}";
  for (const std::string command : {"admit", "explain"}) {
    Result r = RunCli({command, Example("pod-scope-mixed.yaml"), "--node", "preset:gb200"});
    EXPECT_EQ(r.code, 1) << command << ": " << r.out;
    EXPECT_THAT(r.err, HasSubstr("unsupported on machines with more than 8 NUMA Nodes")) << command;
    EXPECT_THAT(r.err, HasSubstr("preset:gb200 has 34 NUMA nodes: " + fix)) << command;
  }
  Result lint = RunCli({"lint", "--config", Example("kubelet-config.yaml"), "--node", "preset:gb200"});
  EXPECT_EQ(lint.code, 1);
  EXPECT_THAT(lint.out, HasSubstr("[node-startup]"));
  EXPECT_THAT(lint.out, HasSubstr("    fix: preset:gb200 has 34 NUMA nodes: " + fix + "\n"));
}

}  // namespace
}  // namespace podtopo
