// Tests for FNV-1a, the data checksum and the spew dumps.
// Sources of expected values are named on each test.
#include "checkpoint/checksum.h"

#include "checkpoint/cpu_state_file.h"
#include "checkpoint/memory_state_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/testing.h"

namespace podtopo::checkpoint {
namespace {

TEST(Fnv1a32Test, ReferenceValues) {
  // FNV-1a 32 reference values (offset basis; draft-eastlake-fnv test vectors).
  EXPECT_EQ(Fnv1a32(""), 2166136261u);
  EXPECT_EQ(Fnv1a32("a"), 0xe40c292cu);
  EXPECT_EQ(Fnv1a32("foobar"), 0xbf9cf968u);
}

// ../shared/vectors/checkpoint_vectors.json: legacy_checksum_vectors. Every hashed_string is
// hashed to its checksum (the NEGATIVE case to checksum_computed), and our spew builder
// reproduces each hashed_string from the vector's fields.
class LegacyChecksumVectorTest : public ::testing::TestWithParam<size_t> {
 protected:
  static const nlohmann::json& Vectors() {
    static const nlohmann::json v = testing::LoadVectors("checkpoint_vectors.json");
    return v;
  }
  const nlohmann::json& Case() const { return Vectors()["legacy_checksum_vectors"][GetParam()]; }
};

TEST_P(LegacyChecksumVectorTest, HashAndDump) {
  const nlohmann::json& c = Case();
  SCOPED_TRACE(c["name"].get<std::string>() + " (" + c["source"].get<std::string>() + ")");
  const std::string hashed = c["hashed_string"];
  uint64_t expected = c.contains("checksum_computed") ? c["checksum_computed"].get<uint64_t>()
                                                       : c["checksum"].get<uint64_t>();
  EXPECT_EQ(Fnv1a32(hashed), expected);

  const std::string layout = c["struct_layout"];
  std::string dump;
  if (layout == "V1") {
    std::map<std::string, std::string> entries;
    for (const auto& [k, v] : c["entries"].items()) entries[k] = v.get<std::string>();
    dump = SpewCpuV1("CPUManagerCheckpoint", c["policyName"].get<std::string>(),
                     c["defaultCpuSet"].get<std::string>(), entries);
  } else {
    CpuCheckpoint cp;
    cp.policy_name = c["policyName"];
    cp.default_cpu_set = c["defaultCpuSet"];
    for (const auto& [pod, containers] : c["entries"].items()) {
      for (const auto& [name, cpus] : containers.items()) cp.entries[pod][name] = cpus;
    }
    if (layout == "V2") {
      dump = SpewCpuV2("CPUManagerCheckpoint", cp);
    } else {
      for (const auto& [pod, entry] : c["podEntries"].items()) cp.pod_entries[pod] = entry["cpuSet"];
      absl::StatusOr<std::string> v3 = SpewCpuV3("CPUManagerCheckpoint", cp);
      ASSERT_TRUE(v3.ok()) << v3.status();
      dump = *v3;
    }
  }
  EXPECT_EQ(dump, hashed);
}

INSTANTIATE_TEST_SUITE_P(
    Vectors, LegacyChecksumVectorTest, ::testing::Range<size_t>(0, 13),
    [](const ::testing::TestParamInfo<size_t>& info) {
      static const nlohmann::json v = testing::LoadVectors("checkpoint_vectors.json");
      return testing::TestName(v["legacy_checksum_vectors"][info.param]["name"], info.param);
    });

TEST(LegacyChecksumVectorCountTest, ThirteenCases) {
  EXPECT_EQ(testing::LoadVectors("checkpoint_vectors.json")["legacy_checksum_vectors"].size(), 13u);
}

// v4_data_vectors (computed CPU data) and memorymanager_data_checksum_vectors (upstream
// pkg/kubelet/cm/memorymanager/state/state_checkpoint_test.go V3 fixtures).
TEST(DataChecksumTest, Vectors) {
  nlohmann::json v = testing::LoadVectors("checkpoint_vectors.json");
  ASSERT_EQ(v["v4_data_vectors"].size(), 3u);
  for (const auto& c : v["v4_data_vectors"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    EXPECT_EQ(DataChecksum(c["data"].get<std::string>()), c["dataChecksum"].get<uint64_t>());
    EXPECT_EQ(Fnv1a32(c["hashed_string"].get<std::string>()), c["dataChecksum"].get<uint64_t>());
  }
  ASSERT_EQ(v["memorymanager_data_checksum_vectors"]["cases"].size(), 3u);
  for (const auto& c : v["memorymanager_data_checksum_vectors"]["cases"]) {
    EXPECT_EQ(DataChecksum(c["data"].get<std::string>()), c["dataChecksum"].get<uint64_t>());
  }
}

// Data checksums from PR #137820's pkg/kubelet/cm/cpumanager/state/state_checkpoint_test.go
// (there the V4 data checksum field was called "checksum"; PR #139102 renamed it).
TEST(DataChecksumTest, UpstreamCpuV4Fixtures) {
  EXPECT_EQ(DataChecksum(R"({"policyName":"none","defaultCPUSet":"4-6"})"), 657950972u);
  EXPECT_EQ(DataChecksum(
                R"({"policyName":"static","defaultCPUSet":"7-9","entries":{"pod":{"container1":"4-6","container2":"1-3"}}})"),
            1420829534u);
  EXPECT_EQ(DataChecksum(R"({"policyName":"other","defaultCPUSet":"1-3"})"), 2380595610u);
  EXPECT_EQ(DataChecksum(R"({"policyName":"none","defaultCPUSet":"1.3"})"), 3033143655u);
  EXPECT_EQ(
      DataChecksum(
          R"({"policyName":"static","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"asd"}}})"),
      3794806925u);
  EXPECT_EQ(
      DataChecksum(
          R"({"policyName":"static","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"7-9"}},"podEntries":{"pod":{"cpuSet":"4-10"}}})"),
      2328898362u);
  EXPECT_EQ(DataChecksum(R"({"policyName":"none","defaultCPUSet":"4-6","unknownField":"value"})"),
            3492408555u);
}

// checkpoint-checksums.md "Exact dump, CPU V2" (upstream 1.18 fixture, 3610638499).
TEST(SpewTest, ExactCpuV2Dump) {
  CpuCheckpoint cp;
  cp.policy_name = "none";
  cp.default_cpu_set = "1-3";
  cp.entries["pod"] = {{"container1", "4-6"}, {"container2", "1-3"}};
  const std::string expected =
      "(*state.CPUManagerCheckpoint){PolicyName:(string)none DefaultCPUSet:(string)1-3 "
      "Entries:(map[string]map[string]string)map[pod:map[container1:4-6 container2:1-3]] "
      "Checksum:(checksum.Checksum)0}";
  EXPECT_EQ(SpewCpuV2("CPUManagerCheckpoint", cp), expected);
  EXPECT_EQ(Fnv1a32(expected), 3610638499u);
}

// Upstream V3 fixture (TestCheckpointStateRestore "Restore checkpoint from v3 (migration)
// with PodLevelResourceManagers enabled", PR #137820's state_checkpoint_test.go): checksum
// 2284712151 is the hash under the name CPUManagerCheckpointV3; the same content under the
// legacy name is the 1.36 fixture 766259872 (checkpoint-checksums.md). This confirms the
// PodEntries rendering `{CPUSet:(cpuset.CPUSet){elems:(map[int]struct {})map[...]}}`.
TEST(SpewTest, CpuV3Fixtures) {
  CpuCheckpoint cp;
  cp.policy_name = "static";
  cp.default_cpu_set = "1-2";
  cp.entries["pod1"] = {{"container1", "5-6"}, {"container2", "3-4"}};
  cp.pod_entries["pod2"] = "7-9";
  absl::StatusOr<std::string> legacy = SpewCpuV3("CPUManagerCheckpoint", cp);
  absl::StatusOr<std::string> v3 = SpewCpuV3("CPUManagerCheckpointV3", cp);
  ASSERT_TRUE(legacy.ok() && v3.ok());
  EXPECT_EQ(*legacy,
            "(*state.CPUManagerCheckpoint){PolicyName:(string)static DefaultCPUSet:(string)1-2 "
            "Entries:(map[string]map[string]string)map[pod1:map[container1:5-6 container2:3-4]] "
            "PodEntries:(state.PodCPUAssignments)map[pod2:{CPUSet:(cpuset.CPUSet){elems:(map[int]"
            "struct {})map[7:{} 8:{} 9:{}]}}] Checksum:(checksum.Checksum)0}");
  EXPECT_EQ(Fnv1a32(*legacy), 766259872u);
  EXPECT_EQ(Fnv1a32(*v3), 2284712151u);

  // Same test file, "... from v3 (migration) with PodLevelResourceManagers disabled":
  // 751755688 under the V3 name.
  CpuCheckpoint off;
  off.policy_name = "none";
  off.default_cpu_set = "1-3";
  off.entries["pod1"] = {{"container1", "4-6"}, {"container2", "1-3"}};
  off.pod_entries["pod2"] = "7-9";
  EXPECT_EQ(Fnv1a32(*SpewCpuV3("CPUManagerCheckpointV3", off)), 751755688u);
}

// Cpuset keys sort numerically in spew (2 < 10), not as strings.
TEST(SpewTest, CpuSetElemsSortNumerically) {
  std::string out;
  SpewWriter w(&out);
  SpewCpuSetBody(w, {2, 10, 100});
  EXPECT_EQ(out, "{elems:(map[int]struct {})map[2:{} 10:{} 100:{}]}");
}

TEST(SpewTest, WriterSeparatorsAndNil) {
  std::string out;
  SpewWriter w(&out);
  w.Type("*state.X").OpenStruct();
  w.FieldName("A").Type("map[string]string").OpenMap().CloseMap();
  w.FieldName("B").Type("[]int").OpenSlice().CloseSlice();
  w.FieldName("C").Type("[]int").Nil();
  w.FieldName("D").Type("map[string][]int").OpenMap();
  w.Key().String("k").Colon().OpenSlice().Elem().Int(1).Elem().Int(-2).CloseSlice();
  w.Key().String("z").Colon().Nil();
  w.CloseMap();
  w.CloseStruct();
  EXPECT_EQ(out,
            "(*state.X){A:(map[string]string)map[] B:([]int)[] C:([]int)<nil> "
            "D:(map[string][]int)map[k:[1 -2] z:<nil>]}");
}

TEST(ReplaceFirstTest, OnlyFirstOccurrence) {
  EXPECT_EQ(ReplaceFirst("aXbXc", "X", "YY"), "aYYbXc");
  EXPECT_EQ(ReplaceFirst("abc", "X", "Y"), "abc");
  // A policy name that contains the versioned name is replaced only in the type name.
  CpuCheckpoint cp;
  cp.policy_name = "CPUManagerCheckpointV2";
  std::string dump = SpewCpuV2("CPUManagerCheckpointV2", cp);
  EXPECT_EQ(ReplaceFirst(dump, "CPUManagerCheckpointV2", "CPUManagerCheckpoint"),
            "(*state.CPUManagerCheckpoint){PolicyName:(string)CPUManagerCheckpointV2 "
            "DefaultCPUSet:(string) Entries:(map[string]map[string]string)map[] "
            "Checksum:(checksum.Checksum)0}");
}

MemoryCheckpoint UpstreamMemoryFixture() {
  MemoryCheckpoint cp;
  cp.policy_name = "static";
  NumaNodeState node;
  node.memory_map["memory"] = MemoryTable{2048, 512, 1536, 512, 1024};
  node.cells = std::vector<int>{};
  cp.machine_state[0] = node;
  cp.entries["pod"]["container1"] = {MemoryBlock{std::vector<int>{0}, "memory", 512}};
  return cp;
}

// checkpoint-checksums.md "Exact dump, memory V1" (upstream fixture 4215593881).
TEST(SpewTest, ExactMemoryV1Dump) {
  const std::string expected =
      "(*state.MemoryManagerCheckpoint){PolicyName:(string)static "
      "MachineState:(state.NUMANodeMap)map[0:<*>{NumberOfAssignments:(int)0 "
      "MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[memory:<*>{TotalMemSize:(uint64)2048 "
      "SystemReserved:(uint64)512 Allocatable:(uint64)1536 Reserved:(uint64)512 "
      "Free:(uint64)1024}] Cells:([]int)[]}] "
      "Entries:(state.ContainerMemoryAssignments)map[pod:map[container1:[{NUMAAffinity:([]int)[0] "
      "Type:(v1.ResourceName)memory Size:(uint64)512}]]] Checksum:(checksum.Checksum)0}";
  EXPECT_EQ(SpewMemoryV1("MemoryManagerCheckpoint", UpstreamMemoryFixture()), expected);
  EXPECT_EQ(Fnv1a32(expected), 4215593881u);
}

// Upstream memorymanager TestCheckpointStateRestore "Restore checkpoint from v2 with
// PodLevelResourceManagers enabled": V2 checksum 1278640530 under the legacy name.
TEST(SpewTest, MemoryV2Fixture) {
  MemoryCheckpoint cp = UpstreamMemoryFixture();
  cp.pod_entries["pod"] = {MemoryBlock{std::vector<int>{0}, "memory", 512}};
  std::string dump = SpewMemoryV2("MemoryManagerCheckpoint", cp);
  EXPECT_THAT(dump, ::testing::HasSubstr(
                        "PodEntries:(state.PodMemoryAssignments)map[pod:{MemoryBlocks:([]state."
                        "Block)[{NUMAAffinity:([]int)[0] Type:(v1.ResourceName)memory "
                        "Size:(uint64)512}]}] Checksum:(checksum.Checksum)0}"));
  EXPECT_EQ(Fnv1a32(dump), 1278640530u);
}

// NUMA ids sort numerically in spew (0 1 2 10) but as strings in JSON.
TEST(SpewTest, MemoryMachineStateKeysNumeric) {
  MemoryCheckpoint cp;
  cp.policy_name = "Static";
  for (int id : {10, 2, 0, 1}) cp.machine_state[id].cells = std::vector<int>{id};
  std::string dump = SpewMemoryV1("MemoryManagerCheckpoint", cp);
  EXPECT_THAT(dump, ::testing::HasSubstr("map[0:<*>{"));
  size_t p2 = dump.find(" 2:<*>"), p10 = dump.find(" 10:<*>");
  ASSERT_NE(p2, std::string::npos);
  ASSERT_NE(p10, std::string::npos);
  EXPECT_LT(p2, p10);
}

}  // namespace
}  // namespace podtopo::checkpoint
