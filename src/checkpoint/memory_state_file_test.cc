// Tests for memory_manager_state reading (kubelet v1.37 chain) and writing.
// The restore table is upstream pkg/kubelet/cm/memorymanager/state/state_checkpoint_test.go
// (TestCheckpointStateRestore, post-review PR #139626), case names kept; the fixtures'
// checksums (4215593881, 1278640530, 1849615440, 2100279793, 637296054) are also in
// ../shared/vectors/checkpoint_vectors.json and checkpoint-checksums.md.
#include "checkpoint/memory_state_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "checkpoint/checksum.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/property.h"
#include "testing/testing.h"
#include "util/file.h"

namespace podtopo::checkpoint {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kPath = "/var/lib/kubelet/memory_manager_state";

std::string Tail(const std::string& path = kPath) {
  return ", please drain this node and delete the memory manager checkpoint file \"" + path +
         "\" before restarting Kubelet";
}

MemoryLoadOptions Opts(std::string policy, bool gate = false) {
  MemoryLoadOptions o;
  o.configured_policy = std::move(policy);
  o.pod_level_resource_managers = gate;
  return o;
}

absl::StatusOr<MemoryCheckpoint> Restore(std::string_view json, const MemoryLoadOptions& o) {
  return RestoreMemoryCheckpoint(json, kPath, o);
}

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

// JSON-quotes `s` for embedding as the "data" string.
std::string Q(const std::string& s) { return nlohmann::json(s).dump(); }

const std::string kMachine =
    R"({"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}})";
const std::string kCorruptMachine =
    R"({"0":{"numberOfAssignments":5,"memoryMap":{"memory":{"total":1024,"systemReserved":256,"allocatable":768,"reserved":256,"free":512}},"cells":[]}})";
const std::string kEntries =
    R"({"pod":{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}})";
const std::string kPodEntries =
    R"({"pod":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":512}]}})";
const std::string kData = R"({"policyName":"static","machineState":)" + kMachine +
                          R"(,"entries":)" + kEntries + "}";
const std::string kDataUnknown = R"({"unknownField":"value","policyName":"static","machineState":)" +
                                 kMachine + R"(,"entries":)" + kEntries + "}";
const std::string kDataPods = R"({"policyName":"static","machineState":)" + kMachine +
                              R"(,"entries":)" + kEntries + R"(,"podEntries":)" + kPodEntries + "}";

std::string V1Part(const std::string& checksum) {
  return R"({"policyName":"static","machineState":)" + kMachine + R"(,"entries":)" + kEntries +
         R"(,"checksum":)" + checksum;
}
// The inline V1 part "intentionally corrupted to verify that it is not used".
std::string CorruptV1Part(bool with_pods) {
  return R"({"policyName":"other","machineState":)" + kCorruptMachine +
         R"(,"entries":{"pod":{"containerX":[{"numaAffinity":[0],"type":"memory","size":128}]}})" +
         (with_pods ? R"(,"podEntries":{"podY":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":64}]}})"
                    : "") +
         R"(,"checksum":1234)";
}

// The expected state of most upstream cases.
MemoryCheckpoint Expected(bool with_pods) {
  MemoryCheckpoint cp;
  cp.policy_name = "static";
  NumaNodeState node;
  node.memory_map["memory"] = MemoryTable{2048, 512, 1536, 512, 1024};
  node.cells = std::vector<int>{};
  cp.machine_state[0] = node;
  cp.entries["pod"]["container1"] = {MemoryBlock{std::vector<int>{0}, "memory", 512}};
  if (with_pods) cp.pod_entries["pod"] = {MemoryBlock{std::vector<int>{0}, "memory", 512}};
  return cp;
}

struct UpstreamCase {
  std::string name;
  std::optional<bool> gate;  // nullopt: run with the gate off and on
  std::string content;
  std::string policy;
  std::string error;  // empty: success
  int version = 0;
  bool pods_expected = false;
};

std::vector<UpstreamCase> UpstreamCases() {
  return {
      {"Fail to restore checkpoint without data section", std::nullopt,
       V1Part("4215593881") + R"(,"dataChecksum":1234})", "none",
       "could not load v3 checkpoint: failed to deserialize memory manager checkpoint data: "
       "unexpected end of JSON input"},
      {"Fail to restore checkpoint without dataChecksum section", std::nullopt,
       V1Part("4215593881") + R"(,"data":)" + Q(kData) + "}", "none",
       "could not load v3 checkpoint: checkpoint is corrupted"},
      {"Restore valid checkpoint", std::nullopt,
       CorruptV1Part(false) + R"(,"data":)" + Q(kData) + R"(,"dataChecksum":1849615440})",
       "static", "", 3},
      {"Fail to restore checkpoint with invalid dataChecksum", std::nullopt,
       V1Part("4215593881") + R"(,"data":)" + Q(kData) + R"(,"dataChecksum":1234})", "none",
       "could not load v3 checkpoint: checkpoint is corrupted"},
      {"Fail to restore checkpoint with invalid data JSON", std::nullopt,
       V1Part("4215593881") + R"(,"data":"{","dataChecksum":1234})", "none",
       "could not load v3 checkpoint: failed to deserialize memory manager checkpoint data: "
       "unexpected end of JSON input"},
      {"Fail to restore checkpoint with invalid JSON", std::nullopt, "{", "none",
       "unexpected end of JSON input"},
      {"Fail to restore checkpoint with invalid policy name", std::nullopt,
       CorruptV1Part(false) + R"(,"data":)" + Q(kData) + R"(,"dataChecksum":1849615440})", "none",
       "[memorymanager] configured policy \"none\" differs from state checkpoint policy "
       "\"static\""},
      {"Restore checkpoint ignoring unknown fields in data section", std::nullopt,
       CorruptV1Part(false) + R"(,"data":)" + Q(kDataUnknown) + R"(,"dataChecksum":2100279793})",
       "static", "", 3},
      {"Restore checkpoint from v1 (migration)", std::nullopt, V1Part("4215593881") + "}",
       "static", "", 1},
      {"Restore checkpoint from v1 (migration) with checksum zeroed", std::nullopt,
       V1Part("0") + "}", "static", "", 1},
      {"Fail to restore checkpoint from v1 with invalid checksum", std::nullopt,
       R"({"policyName":"static","machineState":)" + kMachine +
           R"(,"entries":{"pod":{"container1":[{"affinity":[0],"type":"memory","size":512}]}},"checksum":101010})",
       "static", "checkpoint is corrupted"},
      {"Restore checkpoint from v2 with PodLevelResourceManagers enabled", true,
       R"({"policyName":"static","machineState":)" + kMachine + R"(,"entries":)" + kEntries +
           R"(,"podEntries":)" + kPodEntries + R"(,"checksum":1278640530})",
       "static", "", 2, true},
      {"Restore checkpoint from v2 with PodLevelResourceManagers disabled", false,
       R"({"policyName":"static","machineState":)" + kMachine + R"(,"entries":)" + kEntries +
           R"(,"podEntries":)" + kPodEntries + R"(,"checksum":1278640530})",
       "static", "", 2},
      // V2 refuses 0, V1 accepts it (podEntries is an unknown key to V1).
      {"Restore checkpoint from v2 with zeroed checksum and with PodLevelResourceManagers "
       "disabled",
       false,
       R"({"policyName":"static","machineState":)" + kMachine + R"(,"entries":)" + kEntries +
           R"(,"podEntries":)" + kPodEntries + R"(,"checksum":0})",
       "static", "", 1},
      {"Fail to restore checkpoint from v2 with invalid checksum", std::nullopt,
       R"({"policyName":"static","machineState":)" + kMachine + R"(,"entries":)" + kEntries +
           R"(,"podEntries":)" + kPodEntries + R"(,"checksum":101010})",
       "static", "checkpoint is corrupted"},
      {"Restore checkpoint from v3 with PodLevelResourceManagers enabled", true,
       CorruptV1Part(true) + R"(,"data":)" + Q(kDataPods) + R"(,"dataChecksum":637296054})",
       "static", "", 3, true},
      {"Restore checkpoint from v3 with PodLevelResourceManagers disabled", false,
       CorruptV1Part(true) + R"(,"data":)" + Q(kDataPods) + R"(,"dataChecksum":637296054})",
       "static", "", 3},
  };
}

class MemoryUpstreamRestoreTest : public ::testing::TestWithParam<size_t> {};

TEST_P(MemoryUpstreamRestoreTest, Restore) {
  const UpstreamCase c = UpstreamCases()[GetParam()];
  std::vector<bool> gates = c.gate ? std::vector<bool>{*c.gate} : std::vector<bool>{false, true};
  for (bool gate : gates) {
    SCOPED_TRACE(c.name + (gate ? " [gate on]" : " [gate off]"));
    absl::StatusOr<MemoryCheckpoint> got = Restore(c.content, Opts(c.policy, gate));
    if (!c.error.empty()) {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(Msg(got.status()), "could not restore state from checkpoint: " + c.error + Tail());
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status();
    MemoryCheckpoint expected = Expected(c.pods_expected);
    expected.version_read = c.version;
    if (c.content.find("unknownField") != std::string::npos) {
      // The kubelet ignores it; podtopo keeps it for its next write (kept_fields.h).
      expected.kept.data = {{"unknownField", "\"value\""}};
      expected.kept.data_order = {"unknownField", "policyName", "machineState", "entries"};
    }
    EXPECT_EQ(*got, expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Upstream, MemoryUpstreamRestoreTest,
                         ::testing::Range<size_t>(0, UpstreamCases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return testing::TestName(UpstreamCases()[info.param].name, info.param);
                         });

// memorymanager_data_checksum_vectors: each data text restores through V3 with its
// dataChecksum and yields the fixture state.
TEST(MemoryVectorTest, DataChecksumVectorsRestore) {
  nlohmann::json v = testing::LoadVectors("checkpoint_vectors.json");
  for (const auto& c : v["memorymanager_data_checksum_vectors"]["cases"]) {
    const std::string data = c["data"];
    const bool pods = data.find("podEntries") != std::string::npos;
    std::string file = R"({"data":)" + Q(data) + R"(,"dataChecksum":)" +
                       std::to_string(c["dataChecksum"].get<uint64_t>()) + "}";
    auto got = Restore(file, Opts("static", true));
    ASSERT_TRUE(got.ok()) << got.status();
    MemoryCheckpoint expected = Expected(pods);
    expected.version_read = 3;
    // An unknown member is kept for the next write (kept_fields.h), the rest is the fixture.
    EXPECT_EQ(got->kept.data.size(), data.find("unknownField") != std::string::npos ? 1u : 0u);
    got->kept = KeptFields{};
    EXPECT_EQ(*got, expected);
  }
}

// Our data writer reproduces the upstream data texts byte for byte.
TEST(MemoryWriteTest, DataTextMatchesUpstream) {
  EXPECT_EQ(MarshalMemoryCheckpointData(Expected(false), false), kData);
  EXPECT_EQ(MarshalMemoryCheckpointData(Expected(true), true), kDataPods);
  EXPECT_EQ(MarshalMemoryCheckpointData(Expected(true), false), kData);
  EXPECT_EQ(DataChecksum(kDataPods), 637296054u);
}

TEST(MemoryWriteTest, V1AndV2BytesMatchUpstreamFixtures) {
  MemoryWriteOptions w;
  w.format = MemoryFormat::kV1;
  EXPECT_EQ(*MarshalMemoryCheckpoint(Expected(false), w), V1Part("4215593881") + "}");
  w.format = MemoryFormat::kV2;
  w.pod_level_resource_managers = true;
  EXPECT_EQ(*MarshalMemoryCheckpoint(Expected(true), w),
            R"({"policyName":"static","machineState":)" + kMachine + R"(,"entries":)" + kEntries +
                R"(,"podEntries":)" + kPodEntries + R"(,"checksum":1278640530})");
}

TEST(MemoryWriteTest, V3Bytes) {
  MemoryWriteOptions w;
  w.pod_level_resource_managers = true;
  EXPECT_EQ(*MarshalMemoryCheckpoint(Expected(true), w),
            V1Part("4215593881") + R"(,"data":)" + Q(kDataPods) + R"(,"dataChecksum":637296054})");
}

// TestMemoryManagerCheckpoint_MarshalCheckpoint_HashCompatibility (upstream): the written
// "checksum" equals checksum.New of the un-versioned struct. The expected dumps are spelled
// out by hand (Cells was not set upstream, so it is nil and written as null).
TEST(MemoryWriteTest, HashCompatibility) {
  MemoryCheckpoint cp;
  cp.policy_name = "none";
  cp.machine_state[0].memory_map["memory"] = MemoryTable{2048, 512, 1536, 1024, 512};
  const std::string machine =
      "MachineState:(state.NUMANodeMap)map[0:<*>{NumberOfAssignments:(int)0 "
      "MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[memory:<*>{TotalMemSize:(uint64)"
      "2048 SystemReserved:(uint64)512 Allocatable:(uint64)1536 Reserved:(uint64)1024 "
      "Free:(uint64)512}] Cells:([]int)<nil>}]";
  const uint64_t v1 = Fnv1a32("(*state.MemoryManagerCheckpoint){PolicyName:(string)none " +
                              machine +
                              " Entries:(state.ContainerMemoryAssignments)map[] "
                              "Checksum:(checksum.Checksum)0}");
  const uint64_t v2 = Fnv1a32("(*state.MemoryManagerCheckpoint){PolicyName:(string)none " +
                              machine +
                              " Entries:(state.ContainerMemoryAssignments)map[] "
                              "PodEntries:(state.PodMemoryAssignments)map[] "
                              "Checksum:(checksum.Checksum)0}");
  auto checksum_of = [&](MemoryFormat f) {
    MemoryWriteOptions w;
    w.format = f;
    w.pod_level_resource_managers = true;
    nlohmann::json j = nlohmann::json::parse(*MarshalMemoryCheckpoint(cp, w));
    return j["checksum"].get<uint64_t>();
  };
  EXPECT_EQ(checksum_of(MemoryFormat::kV1), v1);
  EXPECT_EQ(checksum_of(MemoryFormat::kV2), v2);
  EXPECT_EQ(checksum_of(MemoryFormat::kV3), v1);
}

// encoding/json sorts int keys as strings; spew numerically (checkpoint-checksums.md).
TEST(MemoryWriteTest, NumaKeysSortedAsStringsInJson) {
  MemoryCheckpoint cp;
  cp.policy_name = "Static";
  for (int id : {0, 1, 2, 10}) cp.machine_state[id].cells = std::vector<int>{id};
  std::string data = MarshalMemoryCheckpointData(cp, false);
  size_t p1 = data.find("\"1\":"), p10 = data.find("\"10\":"), p2 = data.find("\"2\":");
  ASSERT_NE(p10, std::string::npos);
  EXPECT_LT(p1, p10);
  EXPECT_LT(p10, p2);
  MemoryWriteOptions w;
  w.format = MemoryFormat::kV1;
  auto back = Restore(*MarshalMemoryCheckpoint(cp, w), Opts("Static"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->machine_state.size(), 4u);
  EXPECT_EQ(back->machine_state.at(10).cells, std::vector<int>{10});
}

// nil vs empty cells hash differently; the reader keeps the file's form for verification
// and the restored state holds [] (NUMANodeMap.Clone).
TEST(MemoryNilTest, CellsNullVsEmpty) {
  auto dump = [](const std::string& cells) {
    return Fnv1a32(
        "(*state.MemoryManagerCheckpoint){PolicyName:(string)Static "
        "MachineState:(state.NUMANodeMap)map[0:<*>{NumberOfAssignments:(int)0 "
        "MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[] Cells:([]int)" +
        cells + "}] Entries:(state.ContainerMemoryAssignments)map[] Checksum:(checksum.Checksum)0}");
  };
  auto file = [](const std::string& cells, uint64_t sum) {
    return R"({"policyName":"Static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":{},"cells":)" +
           cells + R"(}},"checksum":)" + std::to_string(sum) + "}";
  };
  const uint64_t nil_sum = dump("<nil>"), empty_sum = dump("[]");
  ASSERT_NE(nil_sum, empty_sum);
  auto a = Restore(file("null", nil_sum), Opts("Static"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->machine_state.at(0).cells, std::vector<int>{});
  EXPECT_FALSE(Restore(file("null", empty_sum), Opts("Static")).ok());
  EXPECT_TRUE(Restore(file("[]", empty_sum), Opts("Static")).ok());
  EXPECT_FALSE(Restore(file("[]", nil_sum), Opts("Static")).ok());
  // A missing "cells" key is nil as well.
  std::string missing = R"({"policyName":"Static","machineState":{"0":{"memoryMap":{}}},"checksum":)" +
                        std::to_string(nil_sum) + "}";
  EXPECT_TRUE(Restore(missing, Opts("Static")).ok());

  // Writing nil cells produces null and verifies.
  MemoryCheckpoint cp;
  cp.policy_name = "Static";
  cp.machine_state[0];
  MemoryWriteOptions w;
  w.format = MemoryFormat::kV1;
  EXPECT_EQ(*MarshalMemoryCheckpoint(cp, w), file("null", nil_sum));
}

TEST(MemoryNilTest, NumaAffinityNullIsPreserved) {
  MemoryCheckpoint cp = Expected(false);
  cp.entries["pod"]["container1"][0].numa_affinity.reset();
  for (MemoryFormat f : {MemoryFormat::kV1, MemoryFormat::kV2, MemoryFormat::kV3}) {
    MemoryWriteOptions w;
    w.format = f;
    std::string bytes = *MarshalMemoryCheckpoint(cp, w);
    EXPECT_THAT(bytes, HasSubstr(R"({"numaAffinity":null,"type":"memory","size":512})"));
    auto back = Restore(bytes, Opts("static"));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_FALSE(back->entries.at("pod").at("container1")[0].numa_affinity.has_value());
  }
}

// An explicit "memoryBlocks":[] decodes as an empty non-nil slice and hashes as `[]`; an
// omitted one as <nil>. Our writer omits empty lists and hashes <nil>, so it verifies (the
// kubelet's own writer would hash `[]` for an empty non-nil list and produce a file no
// reader verifies: checkpoint-checksums.md "Trap").
TEST(MemoryNilTest, MemoryBlocksOmittedVsEmpty) {
  const std::string prefix = "(*state.MemoryManagerCheckpoint){PolicyName:(string)Static "
                             "MachineState:(state.NUMANodeMap)map[] "
                             "Entries:(state.ContainerMemoryAssignments)map[] "
                             "PodEntries:(state.PodMemoryAssignments)map[p:{MemoryBlocks:([]state.Block)";
  const uint64_t empty_sum = Fnv1a32(prefix + "[]}] Checksum:(checksum.Checksum)0}");
  const uint64_t nil_sum = Fnv1a32(prefix + "<nil>}] Checksum:(checksum.Checksum)0}");
  auto file = [](const std::string& entry, uint64_t sum) {
    return R"({"policyName":"Static","machineState":{},"podEntries":{"p":)" + entry +
           R"(},"checksum":)" + std::to_string(sum) + "}";
  };
  auto a = Restore(file(R"({"memoryBlocks":[]})", empty_sum), Opts("Static", true));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->version_read, 2);
  EXPECT_TRUE(a->pod_entries.at("p").empty());
  EXPECT_EQ(Restore(file("{}", nil_sum), Opts("Static", true))->version_read, 2);
  // The trap file (omitted list, `[]` hash) fails V2 and falls to V1, losing pod entries.
  auto trap = Restore(file("{}", empty_sum), Opts("Static", true));
  ASSERT_FALSE(trap.ok());
  EXPECT_EQ(Msg(trap.status()), "could not restore state from checkpoint: checkpoint is corrupted" + Tail());

  MemoryCheckpoint cp;
  cp.policy_name = "Static";
  cp.pod_entries["p"] = {};
  MemoryWriteOptions w;
  w.format = MemoryFormat::kV2;
  w.pod_level_resource_managers = true;
  EXPECT_EQ(*MarshalMemoryCheckpoint(cp, w), file("{}", nil_sum));
}

TEST(MemoryErrorTest, WrongTypesAndHugeNumbers) {
  auto size = Restore(
      R"({"policyName":"static","entries":{"p":{"c":[{"type":"memory","size":"512"}]}},"checksum":0})",
      Opts("static"));
  EXPECT_EQ(Msg(size.status()),
            "could not restore state from checkpoint: json: cannot unmarshal string into Go "
            "struct field Block.entries.size of type uint64" + Tail());
  auto huge = Restore(
      R"({"policyName":"static","machineState":{"0":{"memoryMap":{"memory":{"total":18446744073709551616}}}},"checksum":0})",
      Opts("static"));
  EXPECT_EQ(Msg(huge.status()),
            "could not restore state from checkpoint: json: cannot unmarshal number "
            "18446744073709551616 into Go struct field MemoryTable.machineState.memoryMap.total "
            "of type uint64" + Tail());
  auto key = Restore(R"({"policyName":"static","machineState":{"x":{}},"checksum":0})", Opts("static"));
  EXPECT_EQ(Msg(key.status()),
            "could not restore state from checkpoint: json: cannot unmarshal number x into Go "
            "struct field MemoryManagerCheckpointV1.machineState of type int" + Tail());
  auto node = Restore(R"({"policyName":"static","machineState":{"0":"x"},"checksum":0})",
                      Opts("static"));
  EXPECT_EQ(Msg(node.status()),
            "could not restore state from checkpoint: json: cannot unmarshal string into Go "
            "struct field MemoryManagerCheckpointV1.machineState of type state.NUMANodeState" +
                Tail());
  auto cells = Restore(R"({"policyName":"static","machineState":{"0":{"cells":[1.5]}},"checksum":0})",
                       Opts("static"));
  EXPECT_EQ(Msg(cells.status()),
            "could not restore state from checkpoint: json: cannot unmarshal number 1.5 into Go "
            "struct field NUMANodeState.machineState.cells of type int" + Tail());
  auto v3 = Restore(R"({"machineState":[],"data":"{}","dataChecksum":1})", Opts("static"));
  EXPECT_EQ(Msg(v3.status()),
            "could not restore state from checkpoint: could not load v3 checkpoint: failed to "
            "deserialize memory manager checkpoint: json: cannot unmarshal array into Go struct "
            "field MemoryManagerCheckpoint.MemoryManagerCheckpointV1.machineState of type "
            "state.NUMANodeMap" + Tail());
}

// Deliberate deviations documented in memory_state_file.h.
TEST(MemoryErrorTest, NullNodeAndOutOfRangeIds) {
  auto sum = [](const std::string& machine) {
    return std::to_string(Fnv1a32("(*state.MemoryManagerCheckpoint){PolicyName:(string)Static "
                                  "MachineState:(state.NUMANodeMap)" +
                                  machine +
                                  " Entries:(state.ContainerMemoryAssignments)map[] "
                                  "Checksum:(checksum.Checksum)0}"));
  };
  auto null_node = Restore(
      R"({"policyName":"Static","machineState":{"0":null},"checksum":)" + sum("map[0:<nil>]") + "}",
      Opts("Static"));
  EXPECT_EQ(Msg(null_node.status()),
            "could not restore state from checkpoint: machineState[0] is null" + Tail());
  auto big = Restore(R"({"policyName":"Static","machineState":{"4294967296":{"memoryMap":{}}},"checksum":0})",
                     Opts("Static"));
  EXPECT_THAT(Msg(big.status()), HasSubstr("machineState NUMA node id 4294967296 is outside the supported range"));
}

TEST(MemoryErrorTest, PolicyMismatchAndTruncated) {
  auto p = Restore(V1Part("4215593881") + "}", Opts("None"));
  EXPECT_EQ(Msg(p.status()),
            "could not restore state from checkpoint: [memorymanager] configured policy \"None\" "
            "differs from state checkpoint policy \"static\"" + Tail());
  auto t = Restore(V1Part("4215593881"), Opts("static"));
  EXPECT_EQ(Msg(t.status()), "could not restore state from checkpoint: unexpected end of JSON input" + Tail());
}

// Migration: V1 and V2 files restore, are re-written as V3 and restore again unchanged.
TEST(MemoryMigrationTest, V1AndV2ToV3) {
  for (const std::string& file :
       {V1Part("4215593881") + "}",
        R"({"policyName":"static","machineState":)" + kMachine + R"(,"entries":)" + kEntries +
            R"(,"podEntries":)" + kPodEntries + R"(,"checksum":1278640530})"}) {
    auto a = Restore(file, Opts("static", true));
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_LT(a->version_read, 3);
    MemoryWriteOptions w;
    w.pod_level_resource_managers = true;
    auto b = Restore(*MarshalMemoryCheckpoint(*a, w), Opts("static", true));
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(b->version_read, 3);
    MemoryCheckpoint expected = *a;
    expected.version_read = 3;
    EXPECT_EQ(*b, expected);
  }
}

class MemoryFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir("ckpt-mem"); }
  void TearDown() override {
    ::chmod(dir_.c_str(), 0755);
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(MemoryFileTest, MissingDirectoryAndRoundTrip) {
  const std::string path = dir_ + "/memory_manager_state";
  auto missing = LoadMemoryCheckpointFile(path, Opts("static"));
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());

  ASSERT_TRUE(WriteMemoryCheckpointFile(path, Expected(false), MemoryWriteOptions{}).ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto got = LoadMemoryCheckpointFile(path, Opts("static"));
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status();
  MemoryCheckpoint expected = Expected(false);
  expected.version_read = 3;
  EXPECT_EQ(**got, expected);

  const std::string dir_path = dir_ + "/sub";
  ASSERT_EQ(::mkdir(dir_path.c_str(), 0755), 0);
  auto d = LoadMemoryCheckpointFile(dir_path, Opts("static"));
  EXPECT_EQ(Msg(d.status()), "could not restore state from checkpoint: read " + dir_path +
                                 ": is a directory" + Tail(dir_path));
}

TEST_F(MemoryFileTest, FailedWriteLeavesOldFile) {
  const std::string path = dir_ + "/memory_manager_state";
  ASSERT_TRUE(WriteMemoryCheckpointFile(path, Expected(false), MemoryWriteOptions{}).ok());
  const std::string before = *ReadFile(path);
  MemoryCheckpoint other = Expected(false);
  other.policy_name = "None";
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(tmp.c_str(), 0755), 0);
  EXPECT_FALSE(WriteMemoryCheckpointFile(path, other, MemoryWriteOptions{}).ok());
  EXPECT_EQ(*ReadFile(path), before);
  ::rmdir(tmp.c_str());
  if (::geteuid() != 0) {
    ASSERT_EQ(::chmod(dir_.c_str(), 0555), 0);
    EXPECT_FALSE(WriteMemoryCheckpointFile(path, other, MemoryWriteOptions{}).ok());
    ::chmod(dir_.c_str(), 0755);
    EXPECT_EQ(*ReadFile(path), before);
  }
}

// Property: any state written in any format restores to the same state (modulo what the
// format drops: pod entries without the gate / in V1; nil cells restore as []).
rc::Gen<std::optional<std::vector<int>>> GenOptInts() {
  return rc::gen::map(
      rc::gen::pair(rc::gen::arbitrary<bool>(),
                    rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 8))),
      [](std::pair<bool, std::vector<int>> p) {
        return p.first ? std::optional<std::vector<int>>(std::move(p.second)) : std::nullopt;
      });
}

rc::Gen<std::vector<MemoryBlock>> GenBlocks() {
  return rc::gen::resize(6, rc::gen::container<std::vector<MemoryBlock>>(rc::gen::build<MemoryBlock>(
      rc::gen::set(&MemoryBlock::numa_affinity, GenOptInts()),
      rc::gen::set(&MemoryBlock::type, rc::gen::elementOf(std::vector<std::string>{
                                           "memory", "hugepages-2Mi", "hugepages-1Gi"})),
      rc::gen::set(&MemoryBlock::size, rc::gen::arbitrary<uint64_t>()))));
}

// Builds a std::map from generated (key, value) pairs (later duplicates win), so that small
// key spaces never make rapidcheck give up on unique keys.
template <class K, class V>
rc::Gen<std::map<K, V>> GenMap(rc::Gen<K> key, rc::Gen<V> value) {
  return rc::gen::map(rc::gen::resize(8, rc::gen::container<std::vector<std::pair<K, V>>>(
                                             rc::gen::pair(std::move(key), std::move(value)))),
                      [](std::vector<std::pair<K, V>> kvs) {
                        std::map<K, V> m;
                        for (auto& [k, v] : kvs) m[k] = std::move(v);
                        return m;
                      });
}

PODTOPO_PROPERTY(MemoryRoundTripProperty, WriteRestore, ()) {
  MemoryCheckpoint cp;
  cp.policy_name = *rc::gen::elementOf(std::vector<std::string>{"None", "Static"});
  cp.machine_state = *GenMap<int, NumaNodeState>(
      rc::gen::inRange(-3, 300),
      rc::gen::build<NumaNodeState>(
          rc::gen::set(&NumaNodeState::number_of_assignments, rc::gen::arbitrary<int64_t>()),
          rc::gen::set(&NumaNodeState::memory_map,
                       GenMap<std::string, MemoryTable>(
                           rc::gen::elementOf(std::vector<std::string>{"memory", "hugepages-2Mi"}),
                           rc::gen::build<MemoryTable>(
                               rc::gen::set(&MemoryTable::total, rc::gen::arbitrary<uint64_t>()),
                               rc::gen::set(&MemoryTable::free, rc::gen::arbitrary<uint64_t>())))),
          rc::gen::set(&NumaNodeState::cells, GenOptInts())));
  auto name = rc::gen::container<std::string>(rc::gen::elementOf(std::string("ab9-<&\"")));
  cp.entries = *GenMap<std::string, std::map<std::string, std::vector<MemoryBlock>>>(
      name, GenMap<std::string, std::vector<MemoryBlock>>(name, GenBlocks()));
  cp.pod_entries = *GenMap<std::string, std::vector<MemoryBlock>>(name, GenBlocks());
  const bool gate = *rc::gen::arbitrary<bool>();
  const MemoryFormat f =
      *rc::gen::elementOf(std::vector<MemoryFormat>{MemoryFormat::kV1, MemoryFormat::kV2, MemoryFormat::kV3});
  MemoryWriteOptions w;
  w.format = f;
  w.pod_level_resource_managers = gate;
  absl::StatusOr<std::string> bytes = MarshalMemoryCheckpoint(cp, w);
  RC_ASSERT(bytes.ok());
  absl::StatusOr<MemoryCheckpoint> back = Restore(*bytes, Opts(cp.policy_name, gate));
  RC_ASSERT(back.ok());
  MemoryCheckpoint expected = cp;
  for (auto& [id, node] : expected.machine_state) {
    if (!node.cells) node.cells = std::vector<int>{};
  }
  if (!gate || f == MemoryFormat::kV1) expected.pod_entries.clear();
  expected.version_read = f == MemoryFormat::kV3 ? 3 : f == MemoryFormat::kV2 ? 2 : 1;
  // A V2 file whose pod entries are empty is still verified by V2 (checksum != 0).
  RC_ASSERT(back->version_read == expected.version_read);
  RC_ASSERT(*back == expected);
}

// ---------------------------------------------------------------------------------------
// Nothing the kubelet wrote is dropped (issue 10 item 6).

TEST(MemoryKeptFieldsTest, UnknownMembersKeptByteForByte) {
  const std::string data = R"({"policyName":"static","machineState":)" + kMachine +
                           R"(,"entries":)" + kEntries + R"(,"future":{"x":[1,2]}})";
  const std::string file = R"({"policyName":"static","extra":"kept","machineState":)" + kMachine +
                           R"(,"entries":)" + kEntries + R"(,"checksum":4215593881,"data":)" +
                           Q(data) + R"(,"dataChecksum":)" + std::to_string(DataChecksum(data)) +
                           "}";
  auto cp = Restore(file, Opts("static"));
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_EQ(cp->kept.top, (std::vector<std::pair<std::string, std::string>>{{"extra", "\"kept\""}}));
  EXPECT_EQ(cp->kept.data,
            (std::vector<std::pair<std::string, std::string>>{{"future", R"({"x":[1,2]})"}}));
  EXPECT_EQ(*MarshalMemoryCheckpoint(*cp, MemoryWriteOptions{}), file);
  // A change keeps them, with checksums that verify.
  MemoryCheckpoint next = *cp;
  next.entries["pod"]["container1"][0].size = 256;
  next.machine_state[0].memory_map["memory"].reserved = 256;
  next.machine_state[0].memory_map["memory"].free = 1280;
  auto out = MarshalMemoryCheckpoint(next, MemoryWriteOptions{});
  ASSERT_TRUE(out.ok()) << out.status();
  auto back = Restore(*out, Opts("static"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->kept, cp->kept);
  EXPECT_EQ(back->entries, next.entries);
  EXPECT_THAT(*out, StartsWith(R"({"policyName":"static","extra":"kept","machineState":)"));
}

TEST(MemoryKeptFieldsTest, UnknownNestedMemberRefusesTheRewrite) {
  const std::string entries =
      R"({"pod":{"container1":[{"numaAffinity":[0],"type":"memory","size":512,"pinned":true}]}})";
  const std::string data = R"({"policyName":"static","machineState":)" + kMachine +
                           R"(,"entries":)" + entries + "}";
  const std::string file = R"({"data":)" + Q(data) + R"(,"dataChecksum":)" +
                           std::to_string(DataChecksum(data)) + "}";
  auto cp = Restore(file, Opts("static"));
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_EQ(cp->kept.unkept, std::vector<std::string>{"data.entries.pod.container1[0].pinned"});
  EXPECT_THAT(Msg(MarshalMemoryCheckpoint(*cp, MemoryWriteOptions{}).status()),
              HasSubstr("cannot keep (data.entries.pod.container1[0].pinned;"));
}

}  // namespace
}  // namespace podtopo::checkpoint
