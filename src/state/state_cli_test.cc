// `podtopo state check|show|repair` through the built binary: exit statuses (0 the kubelet
// would start, 2 it would not, 1 bad input, 4 check --strict with warnings), the dry run that
// writes nothing, --yes with its byte-identical backups, and bad input naming file and field.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/testing.h"

namespace podtopo {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using Result = testing::CommandResult;
using testing::ReadFileOrEmpty;

Result Podtopo(const std::string& args) {
  return testing::RunCommand(std::string(PODTOPO_BINARY) + " " + args);
}

std::string Fixture(const std::string& name) {
  return std::string(PODTOPO_STATE_TESTDATA) + "/" + name;
}

std::string Copy(const std::string& name) {
  std::string dir = testing::MakeTempDir("state-cli-" + name);
  fs::copy(Fixture(name), dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  return dir;
}

std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    out[e.path().filename().string()] = ReadFileOrEmpty(e.path().string());
  }
  return out;
}

std::string Node(const std::string& dir) {
  return fs::exists(dir + "/node.json") ? dir + "/node.json" : "preset:demo";
}

TEST(StateCli, CheckExitStatuses) {
  Result ok = Podtopo("state check --kubelet-dir " + Fixture("healthy") + " --node preset:demo");
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("the kubelet would start"));

  std::string dir = Fixture("cpu-set-changed");
  Result bad = Podtopo("state check --kubelet-dir " + dir + " --node " + dir + "/node.json");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_THAT(bad.out, HasSubstr("current set of available CPUs \"0-31\" doesn't match with CPUs "
                                 "in state \"0-63\""));
  EXPECT_THAT(bad.out, HasSubstr("the kubelet would NOT start"));

  // Warnings: the kubelet starts (0); --strict makes them count (4).
  std::string inc = Fixture("incomplete-pod-entry");
  Result warn = Podtopo("state check --kubelet-dir " + inc + " --node preset:demo");
  EXPECT_EQ(warn.exit_code, 0) << warn.err;
  EXPECT_THAT(warn.out, HasSubstr("#141993"));
  Result strict = Podtopo("state check --strict --kubelet-dir " + inc + " --node preset:demo");
  EXPECT_EQ(strict.exit_code, 4) << strict.err;
}

TEST(StateCli, CheckJson) {
  std::string dir = Fixture("policy-none-to-static");
  Result r = Podtopo("state check -o json --kubelet-dir " + dir + " --node preset:demo");
  ASSERT_EQ(r.exit_code, 2) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kubeletStarts"], false);
  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"][0]["version"], 2);
  EXPECT_EQ(j["files"][1]["version"], 1);
  ASSERT_GE(j["findings"].size(), 2u);
  EXPECT_EQ(j["findings"][0]["problem"], "policy-mismatch");
  EXPECT_EQ(j["findings"][0]["severity"], "fatal");
  EXPECT_EQ(j["findings"][0]["repairable"], true);
  EXPECT_THAT(j["findings"][0]["kubeletMessage"].get<std::string>(),
              HasSubstr("configured policy \"static\" differs from state checkpoint policy "
                        "\"none\""));
}

TEST(StateCli, RepairWithoutYesWritesNothing) {
  for (const char* name : {"policy-none-to-static", "cpu-set-changed", "memory-capacity-drift",
                           "stale-pods", "v1-cpu-checkpoint", "incomplete-pod-entry",
                           "incomplete-pod-entry-charged", "corrupt-json"}) {
    std::string dir = Copy(name);
    std::string extra;
    if (fs::exists(dir + "/running-pods.txt")) extra = " --running-pods " + dir + "/running-pods.txt";
    if (fs::exists(dir + "/crictl-ps.json")) extra = " --running-pods " + dir + "/crictl-ps.json";
    auto before = Snapshot(dir);
    Result r = Podtopo("state repair --kubelet-dir " + dir + " --node " + Node(dir) + extra);
    EXPECT_EQ(r.exit_code, std::string(name) == "corrupt-json" ? 2 : 0) << name << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr(std::string(name) == "corrupt-json" ? "cannot repair"
                                                                      : "nothing written"))
        << name;
    EXPECT_EQ(Snapshot(dir), before) << name;
    fs::remove_all(dir);
  }
}

TEST(StateCli, RepairWithYesKeepsByteIdenticalBackupsAndTheKubeletStarts) {
  for (const char* name : {"policy-none-to-static", "cpu-set-changed", "memory-capacity-drift",
                           "stale-pods", "v1-cpu-checkpoint", "incomplete-pod-entry",
                           "incomplete-pod-entry-charged"}) {
    std::string dir = Copy(name);
    std::string extra;
    if (fs::exists(dir + "/running-pods.txt")) extra = " --running-pods " + dir + "/running-pods.txt";
    if (fs::exists(dir + "/crictl-ps.json")) extra = " --running-pods " + dir + "/crictl-ps.json";
    auto before = Snapshot(dir);
    Result r =
        Podtopo("state repair --yes --kubelet-dir " + dir + " --node " + Node(dir) + extra);
    EXPECT_EQ(r.exit_code, 0) << name << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("after the repair: the kubelet would start")) << name;
    auto after = Snapshot(dir);
    int backups = 0;
    for (const auto& [file, bytes] : after) {
      auto pos = file.find(".podtopo-backup-");
      if (pos == std::string::npos) continue;
      ++backups;
      std::string original = file.substr(0, pos);
      ASSERT_TRUE(before.count(original)) << file;
      EXPECT_EQ(bytes, before.at(original)) << name << ": " << file;
      EXPECT_NE(after.at(original), before.at(original)) << name << ": " << original;
    }
    EXPECT_GE(backups, 1) << name;
    // With a kubelet that keeps restored pod-level pods (1.38) nothing is left to warn about;
    // 1.37 warns that its next restart allocates them again (restart-reallocates-pod).
    Result again = Podtopo("state check --strict --kubelet-version 1.38 --kubelet-dir " + dir +
                           " --node " + Node(dir) + extra);
    EXPECT_EQ(again.exit_code, 0) << name << again.out;
    fs::remove_all(dir);
  }
}

TEST(StateCli, UnrepairableCorruptionExitsTwoAndWritesNothing) {
  for (const char* name : {"corrupt-json", "wrong-field-type", "checksum-mismatch"}) {
    std::string dir = Copy(name);
    auto before = Snapshot(dir);
    Result r = Podtopo("state repair --yes --kubelet-dir " + dir + " --node preset:demo");
    EXPECT_EQ(r.exit_code, 2) << name << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("drain the node")) << name;
    EXPECT_EQ(Snapshot(dir), before) << name;
    fs::remove_all(dir);
  }
}

TEST(StateCli, RepairJson) {
  std::string dir = Copy("stale-pods");
  Result r = Podtopo("state repair -o json --kubelet-dir " + dir +
                     " --node preset:demo --running-pods " + dir + "/running-pods.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kubeletStartsNow"], true);
  EXPECT_EQ(j["applied"], false);
  EXPECT_EQ(j["files"].size(), 2u);
  EXPECT_FALSE(j["steps"].empty());
  EXPECT_TRUE(j["unresolved"].empty());
  fs::remove_all(dir);
}

// Issue 22 item 7: after `state repair --yes` dropped a pod that no longer runs, `show` (and
// `admit`) admitted it again from podtopo's record, so `show` and `state show` disagreed.
TEST(StateCli, RepairDropsThePodsFromPodtoposRecordTooSoShowAndStateShowAgree) {
  const std::string dir = testing::MakeTempDir("state-cli-record");
  const std::string examples = testing::SourceDir() + "/docs/examples/";
  Result admit = Podtopo("admit " + examples + "pod-scope-mixed.yaml " + examples +
                         "pod-level-resource-demo.yaml --state-dir " + dir + " -o json");
  ASSERT_EQ(admit.exit_code, 0) << admit.err;
  auto admitted = nlohmann::json::parse(admit.out)["pods"];
  ASSERT_EQ(admitted.size(), 2u);
  const std::string kept = admitted[0]["uid"], dropped = admitted[1]["uid"];
  std::ofstream(dir + "/running.txt") << kept << "\n";

  Result dry = Podtopo("state repair --kubelet-dir " + dir + " --node preset:demo --running-pods " +
                       dir + "/running.txt");
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_THAT(dry.out, HasSubstr("drop it from podtopo's record"));
  EXPECT_THAT(dry.out, HasSubstr(dir + "/podtopo_pods.json"));
  const auto before = Snapshot(dir);
  Result repair = Podtopo("state repair --yes --kubelet-dir " + dir +
                          " --node preset:demo --running-pods " + dir + "/running.txt");
  ASSERT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  // The record has its backup, as the checkpoints do.
  bool record_backup = false;
  for (const auto& [file, bytes] : Snapshot(dir)) {
    if (file.rfind("podtopo_pods.json.podtopo-backup-", 0) == 0) {
      record_backup = true;
      EXPECT_EQ(bytes, before.at("podtopo_pods.json"));
    }
  }
  EXPECT_TRUE(record_backup);

  // One truth: the checkpoints hold only the running pod, and podtopo shows only it.
  Result state = Podtopo("state show -o json --kubelet-dir " + dir + " --node preset:demo");
  ASSERT_EQ(state.exit_code, 0) << state.err;
  std::set<std::string> in_checkpoints;
  const auto checkpoints = nlohmann::json::parse(state.out);
  for (const auto& e : checkpoints["cpu"]["entries"]) {
    in_checkpoints.insert(e["podUid"].get<std::string>());
  }
  EXPECT_EQ(in_checkpoints, std::set<std::string>{kept});
  Result show = Podtopo("show -o json --state-dir " + dir);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  std::set<std::string> shown;
  const auto pods = nlohmann::json::parse(show.out);
  for (const auto& p : pods["pods"]) {
    shown.insert(p["uid"].get<std::string>());
  }
  EXPECT_EQ(shown, in_checkpoints);
  // show wrote nothing, and the checkpoints still say the same after it.
  Result state_again = Podtopo("state show -o json --kubelet-dir " + dir + " --node preset:demo");
  EXPECT_EQ(state_again.out, state.out);
  fs::remove_all(dir);
}

TEST(StateCli, ShowTableAndJson) {
  std::string dir = Fixture("healthy");
  Result t = Podtopo("state show --kubelet-dir " + dir + " --node preset:demo");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr("b385c6d1-89e3-5d0a-a83c-5d5745f7b44b"));
  EXPECT_THAT(t.out, HasSubstr("main-app"));
  Result j = Podtopo("state show -o json --kubelet-dir " + dir + " --node preset:demo");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["cpu"]["defaultCpuSet"], "0,4-32,36-63");
  EXPECT_EQ(doc["cpu"]["reservedCpus"], "0");
  EXPECT_EQ(doc["cpu"]["entries"].size(), 5u);
  EXPECT_EQ(doc["cpu"]["podEntries"].size(), 2u);
  EXPECT_EQ(doc["memory"]["machineState"].size(), 4u);
  EXPECT_EQ(doc["memory"]["machineState"][0]["memory"][0]["reserved"], 6442450944ull);
}

TEST(StateCli, BadInputExitsOneNamingFileAndField) {
  std::string dir = Fixture("healthy");
  Result missing_flag = Podtopo("state check --node preset:demo");
  EXPECT_EQ(missing_flag.exit_code, 1);  // CLI11: --kubelet-dir is required

  // A missing directory: every state command says so, as show and explain do for --state-dir
  // (docs/state.md "The state directory").
  for (const char* command : {"check", "show", "repair --yes"}) {
    Result nodir = Podtopo(std::string("state ") + command +
                           " --kubelet-dir /nonexistent/kubelet --node preset:demo");
    EXPECT_EQ(nodir.exit_code, 1) << command;
    EXPECT_THAT(nodir.err,
                HasSubstr("--kubelet-dir: state dir /nonexistent/kubelet does not exist"))
        << command;
  }

  Result node = Podtopo("state check --kubelet-dir " + dir + " --node preset:nope");
  EXPECT_EQ(node.exit_code, 1);
  EXPECT_THAT(node.err, HasSubstr("nope"));

  std::string tmp = testing::MakeTempDir("state-cli-bad");
  std::ofstream(tmp + "/pods.json") << R"({"items":[{"metadata":{"uid":7}}]})";
  Result pods = Podtopo("state check --kubelet-dir " + dir + " --node preset:demo --running-pods " +
                        tmp + "/pods.json");
  EXPECT_EQ(pods.exit_code, 1);
  EXPECT_THAT(pods.err, HasSubstr(tmp + "/pods.json: items[0].metadata.uid"));

  std::ofstream(tmp + "/kubelet.yaml") << "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                          "kind: KubeletConfiguration\n"
                                          "cpuManagerPolicy: [1]\n";
  Result cfg = Podtopo("state check --kubelet-dir " + dir + " --node preset:demo --config " + tmp +
                       "/kubelet.yaml");
  EXPECT_EQ(cfg.exit_code, 1);
  EXPECT_THAT(cfg.err, HasSubstr("cpuManagerPolicy"));
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace podtopo
