// Upgrades and rollbacks through the built binary (docs/state.md, "Upgrades and rollbacks"):
// a node's checkpoints are written by `podtopo admit --state-dir` as kubelet version A writes
// them, then `state check` / `state restart --kubelet-version B` predict what kubelet B does
// with them (kubelet/version.h CheckpointFormats, ReadCheckpointFormat). Each step of the
// documented upgrade 1.36 -> 1.37.0 -> 1.38 and rollback 1.38 -> 1.37 -> 1.36 is one test.

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "state/node140989_testing.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Result = testing::CommandResult;

Result Podtopo(const std::string& args) {
  return testing::RunCommand(std::string(PODTOPO_BINARY) + " " + args);
}

// k/k #140989's node (6 CPUs on one NUMA node, 1 reserved) with its pod of 2 CPUs and 1Gi
// with pod-level resources, admitted into a state dir by kubelet `version`.
struct Node {
  std::string dir;
  std::string state;
  std::string flags;      // --node, --config (gate on)
  std::string gate_off;   // --node, --config (gate off)
  std::string uid;        // the pod's uid
};

Node Admitted(const std::string& version, const std::string& name, bool gate = true) {
  Node n;
  n.dir = testing::MakeTempDir("state-version-" + name);
  testing::WriteNode140989(n.dir, 6);
  n.uid = testing::kPod140989Uid;
  n.state = n.dir + "/state";
  n.flags = " --node " + n.dir + "/node.json --config " + n.dir + "/on.yaml";
  n.gate_off = " --node " + n.dir + "/node.json --config " + n.dir + "/off.yaml";
  Result admitted = Podtopo("admit --state-dir " + n.state + (gate ? n.flags : n.gate_off) +
                            " --kubelet-version " + version + " " + n.dir + "/pod.yaml");
  EXPECT_EQ(admitted.exit_code, 0) << admitted.out << admitted.err;
  return n;
}

nlohmann::json Json(const Result& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

nlohmann::json Check(const Node& n, const std::string& version, int want_exit,
                     const std::string& flags = "") {
  Result r = Podtopo("state check --kubelet-dir " + n.state + (flags.empty() ? n.flags : flags) +
                     " --kubelet-version " + version + " -o json");
  EXPECT_EQ(r.exit_code, want_exit) << version << "\n" << r.out << r.err;
  return Json(r);
}

nlohmann::json Restart(const Node& n, const std::string& version, int want_exit) {
  Result r = Podtopo("state restart --kubelet-dir " + n.state + n.flags + " --kubelet-version " +
                     version + " -o json");
  EXPECT_EQ(r.exit_code, want_exit) << version << "\n" << r.out << r.err;
  return Json(r);
}

std::vector<std::string> Problems(const nlohmann::json& check) {
  std::vector<std::string> out;
  for (const auto& f : check["findings"]) out.push_back(f["problem"]);
  return out;
}

// The formats each version writes (files[].version is what is on disk, whoever reads it).
TEST(StateVersionCli, Issue137751_EachVersionWritesItsFormats) {
  struct Case {
    const char* version;
    bool gate;
    int cpu;
    int memory;
  } cases[] = {{"1.36", true, 3, 2},   {"1.36", false, 2, 1},  {"1.37.0", true, 4, 3},
               {"1.37.0", false, 4, 3}, {"1.38", true, 4, 3}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.version) + (c.gate ? " gate on" : " gate off"));
    Node n = Admitted(c.version, std::string("writes-") + c.version, c.gate);
    nlohmann::json j = Check(n, c.version, 0, c.gate ? n.flags : n.gate_off);
    EXPECT_EQ(j["files"][0]["version"], c.cpu);
    EXPECT_EQ(j["files"][1]["version"], c.memory);
    EXPECT_EQ(j["files"][0]["readAs"], c.cpu);
    EXPECT_EQ(j["files"][1]["readAs"], c.memory);
  }
}

// Upgrade 1.36 -> 1.37.0: 1.37.0 reads 1.36's V3 / V2 fully (every pod-level entry), and then
// re-admits the pod-level pod with k/k #140989 (no #141041 in 1.37.0): moved, CPUs leaked.
TEST(StateVersionCli, Issue140989_Upgrade136To1370ReadsEverythingAndStillMovesThePod) {
  Node n = Admitted("1.36", "up-136");
  nlohmann::json check = Check(n, "1.37.0", 0);
  EXPECT_EQ(check["files"][0]["version"], 3);
  EXPECT_EQ(check["files"][0]["readAs"], 3);
  EXPECT_EQ(check["files"][1]["readAs"], 2);
  EXPECT_TRUE(check["files"][0]["podEntriesDropped"].empty());
  // Nothing is lost in the reading; the one warning is the restart to come.
  EXPECT_THAT(Problems(check), ElementsAre("restart-reallocates-pod")) << check.dump(2);
  nlohmann::json r = Restart(n, "1.37.0", 3);
  ASSERT_EQ(r["pods"].size(), 1u);
  EXPECT_EQ(r["pods"][0]["outcome"], "moved");
  EXPECT_EQ(r["pods"][0]["cpusBefore"], "1-2");
  EXPECT_EQ(r["leakedCpus"], "1-2");
  EXPECT_THAT(r["pods"][0]["upstream"], ElementsAre("k/k#140989", "k/k#140906"));
}

// Upgrade 1.37.0 -> 1.38: V4 / V3 read fully, and 1.38 carries #141041 and #141077: kept.
TEST(StateVersionCli, Issue141041_Upgrade1370To138KeepsThePod) {
  Node n = Admitted("1.37.0", "up-1370");
  nlohmann::json check = Check(n, "1.38", 0);
  EXPECT_EQ(check["files"][0]["readAs"], 4);
  EXPECT_EQ(check["files"][1]["readAs"], 3);
  nlohmann::json r = Restart(n, "1.38", 0);
  EXPECT_EQ(r["pods"][0]["outcome"], "kept");
  EXPECT_EQ(r["pods"][0]["cpusAfter"], "1-2");
  EXPECT_EQ(r["leakedCpus"], "");
}

// Rollback 1.38 -> 1.37: the files are the same formats, read fully, but the restart bugs are
// back: the pod 1.38 admitted is moved and its CPUs leak.
TEST(StateVersionCli, Issue140989_Rollback138To137MovesThePod) {
  Node n = Admitted("1.38", "down-138");
  nlohmann::json check = Check(n, "1.37", 0);
  EXPECT_EQ(check["files"][0]["readAs"], 4);
  EXPECT_THAT(Problems(check), ElementsAre("restart-reallocates-pod")) << check.dump(2);
  nlohmann::json r = Restart(n, "1.37", 3);
  EXPECT_EQ(r["pods"][0]["outcome"], "moved");
  EXPECT_EQ(r["leakedCpus"], "1-2");
}

// Rollback 1.37 -> 1.36: 1.36 reads V4 as its inline V2 part (#139102) and memory V3 as its
// inline V1 part (#139626): the pod-level entries are dropped, which check names pod by pod.
// The containers keep their entries, so the kubelet starts; the restart then re-admits the
// pod without its pod-level entries.
TEST(StateVersionCli, Issue139102_DowngradeTo136DropsPodEntries) {
  Node n = Admitted("1.37", "down-137");
  nlohmann::json check = Check(n, "1.36", 0);
  EXPECT_EQ(check["kubeletStarts"], true);
  EXPECT_EQ(check["files"][0]["version"], 4);
  EXPECT_EQ(check["files"][0]["readAs"], 2);
  EXPECT_EQ(check["files"][1]["version"], 3);
  EXPECT_EQ(check["files"][1]["readAs"], 1);
  EXPECT_THAT(check["files"][0]["podEntriesDropped"], ElementsAre(n.uid));
  EXPECT_THAT(check["files"][1]["podEntriesDropped"], ElementsAre(n.uid));
  EXPECT_THAT(Problems(check), ElementsAre("pod-entries-dropped", "pod-entries-dropped"));
  EXPECT_THAT(check["findings"][0]["message"].get<std::string>(), HasSubstr("k/k #139102"));
  EXPECT_THAT(check["findings"][1]["message"].get<std::string>(), HasSubstr("k/k #139626"));
  EXPECT_THAT(check["findings"][0]["details"][0].get<std::string>(),
              HasSubstr("pod default/p (" + n.uid + "): pod-level CPU set 1-2 dropped"));
  // The version that wrote them reads them fully: nothing dropped, only the warning that its
  // own restart allocates the pod again (k/k #140989).
  EXPECT_THAT(Problems(Check(n, "1.37", 0)), ElementsAre("restart-reallocates-pod"));
  EXPECT_THAT(Problems(Check(n, "1.38", 0)), ::testing::IsEmpty());

  nlohmann::json r = Restart(n, "1.36", 3);
  ASSERT_EQ(r["pods"].size(), 1u);
  EXPECT_EQ(r["pods"][0]["cpusBefore"], "1-2");
  EXPECT_THAT(r["pods"][0]["upstream"][0], "k/k#139102");
  EXPECT_THAT(r["pods"][0]["upstream"][1], "k/k#139626");
  EXPECT_EQ(r["checkpoints"][0]["readAs"], 2);
  EXPECT_THAT(r["checkpoints"][0]["podEntriesDropped"], ElementsAre(n.uid));
}

// 1.36 with the gate turned off reads only V2 / V1: its own gate-on V3 file does not verify
// as V2 ("checkpoint is corrupted", KEP-5526 "Upgrade / downgrade") and the kubelet stops.
TEST(StateVersionCli, Issue137751_GateOffIn136RefusesItsOwnV3File) {
  Node n = Admitted("1.36", "gate-off-136");
  nlohmann::json check = Check(n, "1.36", 2, n.gate_off);
  EXPECT_EQ(check["files"][0]["version"], 3);
  EXPECT_EQ(check["files"][0]["readAs"], 0);
  ASSERT_FALSE(check["findings"].empty());
  EXPECT_EQ(check["findings"][0]["problem"], "format-not-read");
  EXPECT_THAT(check["findings"][0]["kubeletMessage"].get<std::string>(),
              HasSubstr("could not restore state from checkpoint: checkpoint is corrupted"));
  // 1.37 with the gate off reads the same file (its chain starts at V4).
  EXPECT_EQ(Check(n, "1.37", 0, n.gate_off)["files"][0]["readAs"], 3);
}

// `state repair` writes the formats of --kubelet-version: after a reboot's memory drift (12 KiB
// less), a 1.36 node's repair writes CPU V3 / memory V2 and keeps the pod-level entries 1.36
// reads; 1.37's writes V4 / V3. Written as 1.37 for a 1.36 node, the next 1.36 start would read
// the files through their legacy part and lose the entries (pod-entries-dropped).
TEST(StateVersionCli, RepairWritesTheFormatsOfTheVersion) {
  struct Case {
    const char* version;
    int cpu;
    int memory;
  } cases[] = {{"1.36", 3, 2}, {"1.37", 4, 3}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.version);
    Node n = Admitted(c.version, std::string("repair-") + c.version);
    auto node = nlohmann::json::parse(testing::ReadFileOrEmpty(n.dir + "/node.json"));
    node["numaNodes"][0]["memory"] = node["numaNodes"][0]["memory"].get<int64_t>() - 12288;
    std::ofstream(n.dir + "/node.json") << node.dump();
    nlohmann::json drifted = Check(n, c.version, 2);
    EXPECT_THAT(Problems(drifted), ::testing::Contains("memory-capacity-drift"));
    Result r = Podtopo("state repair --yes --kubelet-dir " + n.state + n.flags +
                       " --kubelet-version " + c.version);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    nlohmann::json j = Check(n, c.version, 0);
    EXPECT_EQ(j["files"][0]["version"], c.cpu);
    EXPECT_EQ(j["files"][1]["version"], c.memory);
    EXPECT_THAT(Problems(j), ::testing::Not(::testing::Contains("pod-entries-dropped")));
    Result show = Podtopo("state show -o json --kubelet-dir " + n.state + n.flags +
                          " --kubelet-version " + c.version);
    nlohmann::json sj = Json(show);
    ASSERT_EQ(sj["cpu"]["podEntries"].size(), 1u) << sj.dump(2);
    EXPECT_EQ(sj["cpu"]["podEntries"][0]["podUid"], n.uid);
  }
}

}  // namespace
}  // namespace podtopo
