// Check and repair on the checkpoint fixtures of testdata/ (see testdata/README.md): every
// failure is reported with the kubelet's message, planned, fixed with --yes (the kubelet's
// start-up checks pass afterwards and the kubelet-facing invariants hold), and the original is
// kept byte-identical in a backup.
#include "state/kubelet_state.h"

#include <filesystem>
#include <set>

#include "config/kubelet_config.h"
#include "admission/node.h"
#include "api/pod_yaml.h"
#include "checkpoint/checksum.h"
#include "cpuset/cpuset.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "topology/node_source.h"
#include "util/file.h"

namespace podtopo::state {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kSeedUid[] = "b385c6d1-89e3-5d0a-a83c-5d5745f7b44b";
constexpr char kMixedUid[] = "d906daa8-1e76-5313-adcb-57a3c323ff6b";

std::string FixtureDir(const std::string& name) {
  return podtopo::testing::SourceDir() + "/src/state/testdata/" + name;
}

// A copy of the fixture in a fresh temp dir (the repair writes there).
std::string CopyFixture(const std::string& name) {
  std::string dir = podtopo::testing::MakeTempDir("state-" + name);
  fs::copy(FixtureDir(name), dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  return dir;
}

Environment Env(const std::string& dir) {
  Environment env;
  std::string node = FileExists(dir + "/node.json") ? dir + "/node.json" : "preset:demo";
  auto topo = LoadNode(node);
  EXPECT_TRUE(topo.ok()) << topo.status();
  env.topology = *topo;
  env.config = config::SeedDefault();
  return env;
}

std::optional<RunningPods> Running(const std::string& dir) {
  for (const char* f : {"/running-pods.txt", "/crictl-ps.json"}) {
    if (FileExists(dir + f)) {
      auto r = LoadRunningPods(dir + f);
      EXPECT_TRUE(r.ok()) << r.status();
      return *r;
    }
  }
  return std::nullopt;
}

// Every regular file of `dir` with its bytes.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    out[e.path().filename().string()] = ReadFile(e.path().string()).value();
  }
  return out;
}

const Finding* Find(const CheckReport& r, const std::string& file, const std::string& problem) {
  for (const auto& f : r.findings) {
    if (f.file == file && f.problem == problem) return &f;
  }
  return nullptr;
}

struct FixtureCase {
  std::string name;
  bool starts;
  // (file, problem, kubelet message substring or "") that check must report.
  std::vector<std::tuple<std::string, std::string, std::string>> expected;
  bool repairable;
};

std::vector<FixtureCase> Cases() {
  return {
      {"healthy", true, {}, true},
      {"policy-none-to-static",
       false,
       {{"cpu_manager_state", "policy-mismatch",
         "could not restore state from checkpoint: configured policy \"static\" differs from "
         "state checkpoint policy \"none\", please drain this node and delete the CPU manager "
         "checkpoint file"},
        {"memory_manager_state", "policy-mismatch",
         "could not restore state from checkpoint: [memorymanager] configured policy \"Static\" "
         "differs from state checkpoint policy \"None\", please drain this node and delete the "
         "memory manager checkpoint file"}},
       true},
      {"cpu-set-changed",
       false,
       {{"cpu_manager_state", "cpu-set-changed",
         "current set of available CPUs \"0-31\" doesn't match with CPUs in state \"0-63\""}},
       true},
      {"memory-capacity-drift",
       false,
       {{"memory_manager_state", "memory-capacity-drift",
         "[memorymanager] the expected machine state is different from the real one"}},
       true},
      {"stale-pods",
       true,
       {{"cpu_manager_state", "stale-pod", ""}, {"memory_manager_state", "stale-pod", ""}},
       true},
      {"v1-cpu-checkpoint",
       false,
       {{"cpu_manager_state", "v1-checkpoint",
         "could not restore state from checkpoint: json: cannot unmarshal string into Go struct "
         "field CPUManagerCheckpointV2.entries of type map[string]string"}},
       true},
      {"incomplete-pod-entry",
       true,
       {{"cpu_manager_state", "incomplete-pod-entry", ""},
        {"memory_manager_state", "incomplete-pod-entry", ""}},
       true},
      {"incomplete-pod-entry-charged",
       false,
       {{"memory_manager_state", "machine-state-mismatch",
         "[memorymanager] the expected machine state is different from the real one"},
        {"memory_manager_state", "incomplete-pod-entry", ""}},
       true},
      {"corrupt-json",
       false,
       {{"cpu_manager_state", "corrupt",
         "could not restore state from checkpoint: unexpected end of JSON input, please drain "
         "this node and delete the CPU manager checkpoint file"}},
       false},
      {"wrong-field-type",
       false,
       {{"memory_manager_state", "corrupt",
         "json: cannot unmarshal string into Go struct field "
         "NUMANodeState.machineState.numberOfAssignments of type int"}},
       false},
      {"checksum-mismatch",
       false,
       {{"cpu_manager_state", "checksum", "could not load v4 checkpoint: checkpoint is corrupted"}},
       false},
  };
}

class FixtureTest : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(FixtureTest, CheckReportsTheKubeletsVerdictAndMessage) {
  const FixtureCase& c = GetParam();
  std::string dir = FixtureDir(c.name);
  Environment env = Env(dir);
  std::optional<RunningPods> running = Running(dir);
  auto r = Check(dir, env, running ? &*running : nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->KubeletStarts(), c.starts);
  for (const auto& [file, problem, message] : c.expected) {
    const Finding* f = Find(*r, file, problem);
    ASSERT_NE(f, nullptr) << file << " " << problem;
    EXPECT_THAT(f->kubelet_message, HasSubstr(message));
    if (!message.empty()) {
      EXPECT_FALSE(f->effect.empty());
      EXPECT_FALSE(f->advice.empty());
    }
    EXPECT_EQ(f->repairable, c.repairable) << problem;
  }
  if (c.expected.empty()) {
    for (const auto& f : r->findings) EXPECT_EQ(f.severity, Severity::kInfo) << f.message;
  }
  // A load error names the file.
  for (const auto& f : r->findings) {
    if (f.kubelet_message.rfind("could not restore state", 0) == 0) {
      EXPECT_THAT(f.kubelet_message, HasSubstr(dir + "/" + f.file));
    }
  }
}

// The kubelet-facing invariants of a repaired directory, checked independently of Check.
void ExpectInvariants(const std::string& dir, const Environment& env) {
  auto cpu = checkpoint::LoadCpuCheckpointFile(dir + "/cpu_manager_state",
                                               {"static", /*pod_level_resource_managers=*/true});
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  ASSERT_TRUE(cpu->has_value());
  EXPECT_EQ((*cpu)->version_read, 4);
  CpuSet def = CpuSet::Parse((*cpu)->default_cpu_set).value();
  CpuSet all = env.topology.cpus.AllCpus();
  CpuSet known = def;
  EXPECT_TRUE(def.Contains(0)) << "the seed configuration reserves CPU 0";
  for (const auto& [uid, containers] : (*cpu)->entries) {
    for (const auto& [name, text] : containers) {
      CpuSet cpus = CpuSet::Parse(text).value();
      EXPECT_FALSE(cpus.Intersects(def)) << uid << "/" << name;
      EXPECT_TRUE(cpus.IsSubsetOf(all)) << uid << "/" << name;
      EXPECT_FALSE(cpus.IsEmpty());
      known.UnionWith(cpus);
    }
  }
  for (const auto& [uid, text] : (*cpu)->pod_entries) {
    EXPECT_TRUE((*cpu)->entries.count(uid)) << "pod entry without containers: " << uid;
    known.UnionWith(CpuSet::Parse(text).value());
  }
  EXPECT_EQ(known, all);

  auto mem = checkpoint::LoadMemoryCheckpointFile(dir + "/memory_manager_state",
                                                  {"Static", /*pod_level_resource_managers=*/true});
  ASSERT_TRUE(mem.ok()) << mem.status();
  ASSERT_TRUE(mem->has_value());
  EXPECT_EQ((*mem)->version_read, 3);
  for (const auto& [id, node] : (*mem)->machine_state) {
    const NumaNode* n = env.topology.FindNuma(id);
    ASSERT_NE(n, nullptr) << id;
    auto t = node.memory_map.find("memory");
    ASSERT_NE(t, node.memory_map.end());
    EXPECT_EQ(t->second.total, n->memory) << "NUMA " << id;
    EXPECT_EQ(t->second.free + t->second.reserved, t->second.allocatable) << "NUMA " << id;
  }
  for (const auto& [uid, blocks] : (*mem)->pod_entries) {
    EXPECT_TRUE((*mem)->entries.count(uid)) << "pod entry without containers: " << uid;
  }
}

TEST_P(FixtureTest, RepairPlansWritesNothingWithoutYesAndFixesWithYes) {
  const FixtureCase& c = GetParam();
  std::string dir = CopyFixture(c.name);
  Environment env = Env(dir);
  std::optional<RunningPods> running = Running(dir);
  const RunningPods* rp = running ? &*running : nullptr;
  auto before = Snapshot(dir);
  auto r = Check(dir, env, rp);
  ASSERT_TRUE(r.ok()) << r.status();
  auto plan = PlanRepair(*r, env, rp);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // Planning writes nothing.
  EXPECT_EQ(Snapshot(dir), before);
  if (c.name == "healthy") {
    EXPECT_FALSE(plan->HasChanges());
    EXPECT_TRUE(plan->unresolved.empty());
    return;
  }
  if (!c.repairable) {
    EXPECT_FALSE(plan->HasChanges());
    ASSERT_FALSE(plan->unresolved.empty());
    EXPECT_THAT(plan->unresolved[0], HasSubstr("drain the node"));
    return;
  }
  EXPECT_TRUE(plan->unresolved.empty()) << plan->unresolved[0];
  ASSERT_TRUE(plan->HasChanges());
  EXPECT_FALSE(plan->steps.empty());

  auto applied = ApplyRepair(*r, *plan, "20260101T000000Z");
  ASSERT_TRUE(applied.ok()) << applied.status();
  ASSERT_EQ(applied->backups.size(), applied->written.size());
  for (size_t i = 0; i < applied->written.size(); ++i) {
    std::string name = fs::path(applied->written[i]).filename().string();
    EXPECT_EQ(applied->backups[i], applied->written[i] + ".podtopo-backup-20260101T000000Z");
    EXPECT_EQ(ReadFile(applied->backups[i]).value(), before.at(name)) << "backup of " << name;
  }
  // Only the checkpoints and their backups changed.
  auto after = Snapshot(dir);
  for (const auto& [name, bytes] : before) {
    if (name != "cpu_manager_state" && name != "memory_manager_state") {
      EXPECT_EQ(after.at(name), bytes) << name;
    }
  }
  EXPECT_EQ(after.size(), before.size() + applied->backups.size());

  auto again = Check(dir, env, rp);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->KubeletStarts());
  for (const auto& f : again->findings) {
    EXPECT_NE(f.severity, Severity::kWarning) << f.problem << ": " << f.message;
  }
  ExpectInvariants(dir, env);
  // A second repair has nothing left to do.
  auto plan2 = PlanRepair(*again, env, rp);
  ASSERT_TRUE(plan2.ok());
  EXPECT_FALSE(plan2->HasChanges()) << (plan2->steps.empty() ? "" : plan2->steps[0]);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<FixtureCase>& info) {
                           return podtopo::testing::TestName(info.param.name, info.index);
                         });

// ---- What each repair produced, fixture by fixture. -----------------------------------

struct Repaired {
  std::string dir;
  RepairPlan plan;
  checkpoint::CpuCheckpoint cpu;
  checkpoint::MemoryCheckpoint memory;
};

Repaired Repair(const std::string& name) {
  Repaired out;
  out.dir = CopyFixture(name);
  Environment env = Env(out.dir);
  std::optional<RunningPods> running = Running(out.dir);
  const RunningPods* rp = running ? &*running : nullptr;
  auto r = Check(out.dir, env, rp);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return out;
  auto plan = PlanRepair(*r, env, rp);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return out;
  out.plan = *plan;
  auto applied = ApplyRepair(*r, out.plan, "20260101T000000Z");
  EXPECT_TRUE(applied.ok()) << applied.status();
  auto cpu = checkpoint::LoadCpuCheckpointFile(out.dir + "/cpu_manager_state", {"static", true});
  EXPECT_TRUE(cpu.ok() && cpu->has_value()) << cpu.status();
  if (cpu.ok() && cpu->has_value()) out.cpu = **cpu;
  auto mem =
      checkpoint::LoadMemoryCheckpointFile(out.dir + "/memory_manager_state", {"Static", true});
  EXPECT_TRUE(mem.ok() && mem->has_value()) << mem.status();
  if (mem.ok() && mem->has_value()) out.memory = **mem;
  return out;
}

TEST(RepairResult, PolicyNoneToStaticStartsFromAnEmptyStaticState) {
  Repaired r = Repair("policy-none-to-static");
  EXPECT_EQ(r.cpu.policy_name, "static");
  EXPECT_EQ(r.cpu.default_cpu_set, "0-63");
  EXPECT_TRUE(r.cpu.entries.empty());
  EXPECT_EQ(r.memory.policy_name, "Static");
  EXPECT_EQ(r.memory.machine_state.size(), 4u);
  EXPECT_TRUE(r.plan.restart_pods.empty());
}

TEST(RepairResult, CpuSetChangedKeepsTheExclusiveCpusThatStillExist) {
  Repaired r = Repair("cpu-set-changed");
  // SMT off: every container loses its sibling thread (33, 34, 35).
  EXPECT_EQ(r.cpu.entries.at(kSeedUid).at("worker"), "1");
  EXPECT_EQ(r.cpu.entries.at(kMixedUid).at("main-app"), "2");
  EXPECT_EQ(r.cpu.entries.at(kMixedUid).at("logging-sidecar"), "3");
  EXPECT_EQ(r.cpu.pod_entries.at(kMixedUid), "2-3");
  EXPECT_EQ(r.cpu.default_cpu_set, "0,4-31");
  EXPECT_THAT(r.plan.restart_pods, ::testing::UnorderedElementsAre(kSeedUid, kMixedUid));
}

TEST(RepairResult, MemoryDriftRebuildsTheMachineStateAndKeepsTheAssignments) {
  Repaired r = Repair("memory-capacity-drift");
  const auto& t = r.memory.machine_state.at(0).memory_map.at("memory");
  EXPECT_EQ(t.total, (16ull << 30) - (3ull << 20));
  EXPECT_EQ(t.reserved, 3 * (2ull << 30));  // seed pod 2Gi + mixed pod 4Gi budget
  EXPECT_EQ(r.memory.entries.size(), 2u);
  EXPECT_EQ(r.memory.pod_entries.size(), 2u);
  EXPECT_TRUE(r.plan.restart_pods.empty());
}

TEST(RepairResult, StalePodsAreReleased) {
  Repaired r = Repair("stale-pods");
  EXPECT_FALSE(r.cpu.entries.count(kMixedUid));
  EXPECT_FALSE(r.cpu.pod_entries.count(kMixedUid));
  EXPECT_TRUE(r.cpu.entries.count(kSeedUid));
  EXPECT_EQ(r.cpu.default_cpu_set, "0,2-32,34-63");
  EXPECT_FALSE(r.memory.entries.count(kMixedUid));
  EXPECT_EQ(r.memory.machine_state.at(0).memory_map.at("memory").reserved, 2ull << 30);
}

TEST(RepairResult, V1IsMigratedWithTheContainerList) {
  Repaired r = Repair("v1-cpu-checkpoint");
  EXPECT_EQ(r.cpu.entries.at(kSeedUid).at("worker"), "1,33");
  EXPECT_EQ(r.cpu.entries.at(kSeedUid).at("telemetry-sidecar"), "1,33");
  EXPECT_EQ(r.cpu.entries.at(kMixedUid).at("main-app"), "2,34");
  EXPECT_EQ(r.cpu.entries.at(kMixedUid).at("logging-sidecar"), "3,35");
  // metrics-sidecar no longer exists; its CPUs stay with logging-sidecar, which shares them.
  EXPECT_FALSE(r.cpu.entries.at(kMixedUid).count("metrics-sidecar"));
  EXPECT_EQ(r.cpu.default_cpu_set, "0,4-32,36-63");
}

TEST(RepairResult, V1WithEntriesNeedsTheContainerList) {
  std::string dir = CopyFixture("v1-cpu-checkpoint");
  Environment env = Env(dir);
  auto r = Check(dir, env, nullptr).value();
  auto plan = PlanRepair(r, env, nullptr).value();
  EXPECT_FALSE(plan.cpu_bytes.has_value());
  ASSERT_FALSE(plan.unresolved.empty());
  EXPECT_THAT(plan.unresolved[0], HasSubstr("crictl ps -a -o json"));
  fs::remove_all(dir);
}

TEST(RepairResult, IncompletePodEntriesAreDropped) {
  Repaired r = Repair("incomplete-pod-entry");
  EXPECT_TRUE(r.cpu.pod_entries.empty());
  EXPECT_EQ(r.cpu.default_cpu_set, "0-63");
  EXPECT_TRUE(r.memory.pod_entries.empty());
  EXPECT_EQ(r.memory.machine_state.at(0).memory_map.at("memory").reserved, 0u);
}

TEST(RepairResult, IncompleteChargedPodEntryIsDroppedAndItsMemoryReleased) {
  Repaired r = Repair("incomplete-pod-entry-charged");
  EXPECT_TRUE(r.memory.pod_entries.empty());
  const auto& t = r.memory.machine_state.at(0).memory_map.at("memory");
  EXPECT_EQ(t.reserved, 0u);
  EXPECT_EQ(t.free, t.allocatable);
  EXPECT_EQ(r.memory.machine_state.at(0).number_of_assignments, 0);
}

// ---- Safety of the writes. ---------------------------------------------------------------

TEST(ApplyRepair, NeverOverwritesAnExistingBackup) {
  std::string dir = CopyFixture("policy-none-to-static");
  Environment env = Env(dir);
  std::string original = ReadFile(dir + "/cpu_manager_state").value();
  std::string taken = dir + "/cpu_manager_state.podtopo-backup-20260101T000000Z";
  ASSERT_TRUE(WriteFileAtomically(taken, "an older backup").ok());
  auto r = Check(dir, env, nullptr).value();
  auto plan = PlanRepair(r, env, nullptr).value();
  auto applied = ApplyRepair(r, plan, "20260101T000000Z");
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(ReadFile(taken).value(), "an older backup");
  EXPECT_EQ(applied->backups[0], taken + "-1");
  EXPECT_EQ(ReadFile(taken + "-1").value(), original);
  fs::remove_all(dir);
}

TEST(ApplyRepair, RefusesWhenTheFileChangedSinceTheCheck) {
  std::string dir = CopyFixture("cpu-set-changed");
  Environment env = Env(dir);
  auto r = Check(dir, env, nullptr).value();
  auto plan = PlanRepair(r, env, nullptr).value();
  std::string changed = r.cpu_file.bytes + " ";
  ASSERT_TRUE(WriteFileAtomically(dir + "/cpu_manager_state", changed).ok());
  auto before = Snapshot(dir);
  auto applied = ApplyRepair(r, plan, "20260101T000000Z");
  EXPECT_FALSE(applied.ok());
  EXPECT_THAT(std::string(applied.status().message()), HasSubstr("changed since it was checked"));
  EXPECT_EQ(Snapshot(dir), before);
  fs::remove_all(dir);
}

TEST(Check, StaticToNoneIsPlannedAsAnEmptyNoneStateAndPinnedPodsMustRestart) {
  std::string dir = CopyFixture("healthy");
  Environment env = Env(dir);
  env.config.cpu_manager_policy = "none";
  env.config.memory_manager_policy = "None";
  env.config.reserved_memory.clear();
  auto r = Check(dir, env, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_NE(Find(*r, "cpu_manager_state", "policy-mismatch"), nullptr);
  EXPECT_THAT(Find(*r, "cpu_manager_state", "policy-mismatch")->kubelet_message,
              HasSubstr("configured policy \"none\" differs from state checkpoint policy "
                        "\"static\""));
  auto plan = PlanRepair(*r, env, nullptr).value();
  ASSERT_TRUE(plan.cpu.has_value());
  EXPECT_EQ(plan.cpu->policy_name, "none");
  EXPECT_EQ(plan.cpu->default_cpu_set, "");
  EXPECT_THAT(plan.restart_pods, ::testing::UnorderedElementsAre(kSeedUid, kMixedUid));
  fs::remove_all(dir);
}

TEST(Check, ChangedReservationIsReportedAndRepairedByShrinkingTheHolder) {
  std::string dir = CopyFixture("healthy");
  Environment env = Env(dir);
  env.config.reserved_system_cpus = "0-1";  // CPU 1 is the seed pod's
  auto r = Check(dir, env, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  const Finding* f = Find(*r, "cpu_manager_state", "reserved-cpus");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kubelet_message,
            "not all reserved cpus: \"0-1\" are present in defaultCpuSet: \"0,4-32,36-63\"");
  EXPECT_THAT(f->details, ::testing::Contains(HasSubstr("container worker holds reserved CPUs 1")));
  auto plan = PlanRepair(*r, env, nullptr).value();
  ASSERT_TRUE(plan.unresolved.empty()) << plan.unresolved[0];
  ASSERT_TRUE(plan.cpu.has_value());
  EXPECT_EQ(plan.cpu->entries.at(kSeedUid).at("worker"), "33");
  EXPECT_EQ(plan.cpu->pod_entries.at(kSeedUid), "33");
  EXPECT_EQ(plan.cpu->default_cpu_set, "0-1,4-32,36-63");
  EXPECT_THAT(plan.restart_pods, ::testing::ElementsAre(kSeedUid));
  fs::remove_all(dir);
}

TEST(Check, ADirectoryInPlaceOfTheCheckpointIsReportedWithTheKubeletsText) {
  std::string dir = podtopo::testing::MakeTempDir("state-dir-as-file");
  fs::create_directory(dir + "/cpu_manager_state");
  Environment env = Env(dir);
  auto r = Check(dir, env, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  const Finding* f = Find(*r, "cpu_manager_state", "unreadable");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kFatal);
  EXPECT_THAT(f->kubelet_message, HasSubstr("is a directory"));
  EXPECT_THAT(f->kubelet_message, HasSubstr(dir + "/cpu_manager_state"));
  EXPECT_FALSE(r->KubeletStarts());
  auto plan = PlanRepair(*r, env, nullptr).value();
  EXPECT_FALSE(plan.HasChanges());
  EXPECT_FALSE(plan.unresolved.empty());
  fs::remove_all(dir);
}

TEST(Check, InvalidConfigurationIsBadInput) {
  Environment env = Env(FixtureDir("healthy"));
  env.config.reserved_memory.clear();  // no longer equals kube/system-reserved + eviction
  auto r = Check(FixtureDir("healthy"), env, nullptr);
  EXPECT_FALSE(r.ok());
}

// ---- Inspection of checksum algorithms (checkpoint/Inspect*). ---------------------------

TEST(Inspect, NamesTheFormatAndAlgorithm) {
  // Upstream fixtures (checkpoint-checksums.md).
  auto v2 = checkpoint::InspectCpuCheckpoint(
      R"({"policyName":"none","defaultCpuSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"1-3"}},"checksum":3610638499})",
      false);
  EXPECT_TRUE(v2.error.ok());
  EXPECT_EQ(v2.version, 2);
  EXPECT_THAT(v2.algorithm, HasSubstr("named CPUManagerCheckpoint"));
  auto zero = checkpoint::InspectCpuCheckpoint(
      R"({"policyName":"none","defaultCpuSet":"1-3","checksum":0})", true);
  EXPECT_EQ(zero.version, 2);
  EXPECT_THAT(zero.algorithm, HasSubstr("checksum 0"));
  auto bad = checkpoint::InspectCpuCheckpoint(
      R"({"policyName":"none","defaultCpuSet":"1-3","checksum":1})", true);
  EXPECT_EQ(bad.version, 0);
  EXPECT_EQ(bad.error.message(), "checkpoint is corrupted");
  EXPECT_THAT(bad.algorithm, HasSubstr("V2 (CPUManagerCheckpoint) expects 1850858057"));
  auto v1 = checkpoint::InspectCpuCheckpoint(
      R"({"policyName":"none","defaultCpuSet":"1-3","checksum":1694838852})", true);
  EXPECT_EQ(v1.version, 1);
  EXPECT_FALSE(v1.error.ok());
  auto mem = checkpoint::InspectMemoryCheckpoint(
      R"({"policyName":"static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}},"entries":{"pod":{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}},"checksum":4215593881})");
  EXPECT_TRUE(mem.error.ok());
  EXPECT_EQ(mem.version, 1);
  EXPECT_EQ(mem.policy_name, "static");
}

// ---- Nothing the kubelet wrote is dropped (issue 10 item 6). --------------------------------

// Adds, as a 1.37 kubelet (or a newer one) would write them, resize baselines (k/k #140314)
// and members podtopo does not model to the healthy fixture, then has repair drop a stale pod.
TEST(StateRepair, Issue140314_RepairKeepsBaselinesAndUnknownFields) {
  std::string dir = CopyFixture("healthy");
  const std::string cpu_path = dir + "/cpu_manager_state";
  const std::string mem_path = dir + "/memory_manager_state";
  auto rewrite = [](const std::string& path, auto&& edit_data, const std::string& top_key) {
    nlohmann::ordered_json file = nlohmann::ordered_json::parse(ReadFile(path).value());
    nlohmann::ordered_json data = nlohmann::ordered_json::parse(file["data"].get<std::string>());
    edit_data(data);
    const std::string text = data.dump();
    nlohmann::ordered_json out;
    for (auto it = file.begin(); it != file.end(); ++it) {
      if (it.key() == "data") out[top_key] = "kept";  // an unknown member before data
      out[it.key()] = it.key() == "data" ? nlohmann::ordered_json(text) : it.value();
    }
    out["dataChecksum"] = checkpoint::DataChecksum(text);
    ASSERT_TRUE(WriteFileAtomically(path, out.dump(), 0600).ok());
  };
  rewrite(cpu_path, [](nlohmann::ordered_json& d) {
    d["baselines"][kSeedUid]["worker"]["baseline"] = "1,33";
    d["baselines"][kMixedUid]["main-app"]["baseline"] = "2,34";
    d["futureField"] = 7;
  }, "futureTop");
  rewrite(mem_path, [](nlohmann::ordered_json& d) { d["future"] = {1, 2}; }, "futureTop");
  ASSERT_TRUE(WriteFileAtomically(dir + "/running-pods.txt", std::string(kSeedUid) + "\n").ok());

  Environment env = Env(dir);
  auto running = LoadRunningPods(dir + "/running-pods.txt");
  ASSERT_TRUE(running.ok());
  auto r = Check(dir, env, &*running);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->KubeletStarts());
  auto plan = PlanRepair(*r, env, &*running);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->cpu_bytes.has_value() && plan->memory_bytes.has_value());
  ASSERT_TRUE(ApplyRepair(*r, *plan, "20260101T000000Z").ok());

  auto cpu = checkpoint::LoadCpuCheckpointFile(cpu_path, {"static", true});
  ASSERT_TRUE(cpu.ok() && cpu->has_value()) << cpu.status();
  // The stale pod's baseline went with its entries; the running pod's stays, byte for byte.
  EXPECT_EQ((*cpu)->baselines,
            (std::map<std::string, std::map<std::string, std::string>>{{kSeedUid, {{"worker", "1,33"}}}}));
  const std::string cpu_bytes = ReadFile(cpu_path).value();
  EXPECT_THAT(cpu_bytes, HasSubstr(R"(,\"baselines\":{\"b385c6d1-89e3-5d0a-a83c-5d5745f7b44b\":{\"worker\":{\"baseline\":\"1,33\"}}},\"futureField\":7})"));
  EXPECT_THAT(cpu_bytes, HasSubstr(R"("futureTop":"kept","data":)"));
  auto mem = checkpoint::LoadMemoryCheckpointFile(mem_path, {"Static", true});
  ASSERT_TRUE(mem.ok() && mem->has_value()) << mem.status();
  EXPECT_EQ((*mem)->kept.data,
            (std::vector<std::pair<std::string, std::string>>{{"future", "[1,2]"}}));
  EXPECT_EQ((*mem)->kept.top,
            (std::vector<std::pair<std::string, std::string>>{{"futureTop", "\"kept\""}}));
  // The repaired files pass the kubelet's start-up checks.
  auto again = Check(dir, env, &*running);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->KubeletStarts());
  fs::remove_all(dir);
}

// A field podtopo cannot keep (inside a modelled value): repair refuses and says why.
TEST(StateRepair, UnknownNestedFieldIsNotRewritten) {
  std::string dir = CopyFixture("stale-pods");
  const std::string mem_path = dir + "/memory_manager_state";
  nlohmann::ordered_json file = nlohmann::ordered_json::parse(ReadFile(mem_path).value());
  nlohmann::ordered_json data = nlohmann::ordered_json::parse(file["data"].get<std::string>());
  data["machineState"]["0"]["memoryMap"]["memory"]["fragmented"] = true;
  file["data"] = data.dump();
  file["dataChecksum"] = checkpoint::DataChecksum(data.dump());
  ASSERT_TRUE(WriteFileAtomically(mem_path, file.dump(), 0600).ok());
  const std::string before = ReadFile(mem_path).value();
  Environment env = Env(dir);
  auto running = Running(dir);
  auto r = Check(dir, env, &*running);
  ASSERT_TRUE(r.ok()) << r.status();
  auto plan = PlanRepair(*r, env, &*running);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->memory_bytes.has_value());
  ASSERT_FALSE(plan->unresolved.empty());
  EXPECT_THAT(plan->unresolved.back(),
              HasSubstr("cannot keep (data.machineState.0.memoryMap.memory.fragmented;"));
  ASSERT_TRUE(ApplyRepair(*r, *plan, "20260101T000000Z").ok());
  EXPECT_EQ(ReadFile(mem_path).value(), before);
  fs::remove_all(dir);
}

// Issue 10 item 7: pod-scope-mixed admitted with PodLevelResourceManagers on; the same node
// with the gate off does not start (validateState charges every container's blocks: 6Gi
// against the 4Gi the pod reserved), as the v1.37 kubelet's memory manager does. Dropping the
// pod-level pods' entries (repair with a running list without them) is the way out.
TEST(StateRollback, GateOffRefusesPodLevelStateAndRepairDropsThePods) {
  const std::string dir = podtopo::testing::MakeTempDir("state-rollback");
  Environment on = Env(dir);
  {
    auto node = Node::Create(on.topology, on.config, {dir});
    ASSERT_TRUE(node.ok()) << node.status();
    auto pods = LoadPods(podtopo::testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml");
    ASSERT_TRUE(pods.ok());
    auto a = (*node)->Admit(pods->front());
    ASSERT_TRUE(a.ok() && a->admitted);
  }
  Environment off = on;
  off.config.feature_gates["PodLevelResourceManagers"] = false;
  auto r = Check(dir, off, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->KubeletStarts());
  const Finding* f = Find(*r, "memory_manager_state", "machine-state-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kubelet_message,
            "[memorymanager] the expected machine state is different from the real one");
  EXPECT_THAT(f->details, ::testing::Contains(HasSubstr(
                              "reserved 4294967296 / free 11706302464 in the state, 6442450944 / "
                              "9558818816 from the assignments")));
  EXPECT_EQ(Find(*r, "cpu_manager_state", "invalid-state"), nullptr);  // the CPU file passes
  // Check explains the rollback in both files.
  for (const char* file : {"cpu_manager_state", "memory_manager_state"}) {
    const Finding* ignored = Find(*r, file, "pod-entries-ignored");
    ASSERT_NE(ignored, nullptr) << file;
    EXPECT_THAT(ignored->message, HasSubstr(kMixedUid));
    EXPECT_THAT(ignored->advice, HasSubstr("--running-pods"));
  }
  RunningPods none;
  auto plan = PlanRepair(*r, off, &none);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->unresolved.empty());
  ASSERT_TRUE(ApplyRepair(*r, *plan, "20260101T000000Z").ok());
  auto again = Check(dir, off, nullptr);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->KubeletStarts());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace podtopo::state
