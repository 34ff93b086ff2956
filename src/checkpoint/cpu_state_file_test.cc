// Tests for cpu_manager_state reading (kubelet v1.37 chain) and writing.
// Expected values: ../shared/vectors/checkpoint_vectors.json (named per case), upstream
// pkg/kubelet/cm/cpumanager/state/state_checkpoint_test.go fixtures (cited per test), and
// the kubelet's error texts from state_checkpoint.go / checkpoint.go.
#include "checkpoint/cpu_state_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "checkpoint/checksum.h"
#include "cpuset/cpuset.h"
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

const std::string kPath = "/var/lib/kubelet/cpu_manager_state";

std::string Tail(const std::string& path = kPath) {
  return ", please drain this node and delete the CPU manager checkpoint file \"" + path +
         "\" before restarting Kubelet";
}

CpuLoadOptions Opts(std::string policy, bool gate = false) {
  CpuLoadOptions o;
  o.configured_policy = std::move(policy);
  o.pod_level_resource_managers = gate;
  return o;
}

absl::StatusOr<CpuCheckpoint> Restore(std::string_view json, const CpuLoadOptions& o) {
  return RestoreCpuCheckpoint(json, kPath, o);
}

// Builds a file for a legacy vector without file_json: compact JSON in V2/V3/V1 layout.
std::string FileFromVector(const nlohmann::json& c) {
  nlohmann::ordered_json f;
  f["policyName"] = c["policyName"];
  f["defaultCpuSet"] = c["defaultCpuSet"];
  if (!c["entries"].empty()) f["entries"] = c["entries"];
  if (c.contains("podEntries")) f["podEntries"] = c["podEntries"];
  f["checksum"] = c["checksum"];
  return f.dump();
}

// ---------------------------------------------------------------------------------------
// legacy_checksum_vectors with their expect_restore semantics under kubelet v1.37.

class CpuLegacyVectorRestoreTest : public ::testing::TestWithParam<size_t> {};

TEST_P(CpuLegacyVectorRestoreTest, Restore) {
  static const nlohmann::json v = testing::LoadVectors("checkpoint_vectors.json");
  const nlohmann::json& c = v["legacy_checksum_vectors"][GetParam()];
  SCOPED_TRACE(c["name"].get<std::string>());
  const std::string file =
      c.contains("file_json") ? c["file_json"].get<std::string>() : FileFromVector(c);
  const std::string layout = c["struct_layout"];
  const nlohmann::json expect =
      c.contains("expect_restore") ? c["expect_restore"] : nlohmann::json{{"ok", true}};
  const std::string policy =
      expect.contains("policy") ? expect["policy"].get<std::string>() : c["policyName"].get<std::string>();
  const bool gate = layout == "V3";
  absl::StatusOr<CpuCheckpoint> got = Restore(file, Opts(policy, gate));

  if (layout == "V1") {
    // The vectors' expect_restore describes <= 1.35 (which read V1 first). kubelet v1.37
    // reads V4 -> V3 -> V2 only (cpumanager.md §5.3, checkpoint-checksums.md): a V1
    // checksum fails V2 verification and containerID entries fail V2 decoding.
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(got.status().message()), StartsWith("could not restore state from checkpoint: "));
    EXPECT_THAT(std::string(got.status().message()), HasSubstr("this is a V1 checkpoint"));
    if (!c["entries"].empty()) {
      EXPECT_THAT(std::string(got.status().message()),
                  HasSubstr("json: cannot unmarshal string into Go struct field "
                            "CPUManagerCheckpointV2.entries of type map[string]string"));
    } else {
      EXPECT_THAT(std::string(got.status().message()), HasSubstr("checkpoint is corrupted"));
    }
    return;
  }

  if (!expect["ok"].get<bool>()) {
    ASSERT_FALSE(got.ok());
    std::string prefix = expect.contains("error") ? expect["error"].get<std::string>()
                                                  : expect["error_prefix"].get<std::string>();
    EXPECT_THAT(std::string(got.status().message()), StartsWith(prefix));
    EXPECT_THAT(std::string(got.status().message()), EndsWith(Tail()));
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->version_read, layout == "V3" ? 3 : 2);
  EXPECT_EQ(got->policy_name, c["policyName"].get<std::string>());
  EXPECT_EQ(got->default_cpu_set, c["defaultCpuSet"].get<std::string>());
  if (expect.contains("defaultCpuSet")) {
    EXPECT_EQ(got->default_cpu_set, expect["defaultCpuSet"].get<std::string>());
  }
  std::map<std::string, std::map<std::string, std::string>> entries;
  for (const auto& [pod, containers] : c["entries"].items()) {
    for (const auto& [name, cpus] : containers.items()) entries[pod][name] = cpus;
  }
  EXPECT_EQ(got->entries, entries);
  if (layout == "V3") {
    for (const auto& [pod, e] : c["podEntries"].items()) {
      EXPECT_EQ(got->pod_entries.at(pod), e["cpuSet"].get<std::string>());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Vectors, CpuLegacyVectorRestoreTest, ::testing::Range<size_t>(0, 13),
    [](const ::testing::TestParamInfo<size_t>& info) {
      static const nlohmann::json v = testing::LoadVectors("checkpoint_vectors.json");
      return testing::TestName(v["legacy_checksum_vectors"][info.param]["name"], info.param);
    });

// ---------------------------------------------------------------------------------------
// v4_data_vectors: the data text our writer produces equals the vector's data, the written
// V4 file is exactly the sketch with the inline checksum we chose (0), and it restores.

class CpuV4VectorTest : public ::testing::TestWithParam<size_t> {};

TEST_P(CpuV4VectorTest, WriteAndRestore) {
  static const nlohmann::json v = testing::LoadVectors("checkpoint_vectors.json");
  const nlohmann::json& c = v["v4_data_vectors"][GetParam()];
  SCOPED_TRACE(c["name"].get<std::string>());
  nlohmann::json data = nlohmann::json::parse(c["data"].get<std::string>());
  CpuCheckpoint cp;
  cp.policy_name = data["policyName"];
  cp.default_cpu_set = data["defaultCpuSet"];
  if (data.contains("entries")) {
    for (const auto& [pod, containers] : data["entries"].items()) {
      for (const auto& [name, cpus] : containers.items()) cp.entries[pod][name] = cpus;
    }
  }
  const bool gate = data.contains("podEntries");
  if (gate) {
    for (const auto& [pod, e] : data["podEntries"].items()) cp.pod_entries[pod] = e["cpuSet"];
  }
  absl::StatusOr<std::string> text = MarshalCpuCheckpointData(cp, gate);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, c["data"].get<std::string>());

  CpuWriteOptions w;
  w.pod_level_resource_managers = gate;
  absl::StatusOr<std::string> file = MarshalCpuCheckpoint(cp, w);
  ASSERT_TRUE(file.ok()) << file.status();
  std::string sketch = c["file_json_sketch"];
  sketch = ReplaceFirst(sketch, "\"<0 or legacy V2 checksum: UNCONFIRMED>\"", "0");
  EXPECT_EQ(*file, sketch);

  absl::StatusOr<CpuCheckpoint> back = Restore(*file, Opts(cp.policy_name, gate));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->version_read, 4);
  cp.version_read = 4;
  EXPECT_EQ(*back, cp);
}

INSTANTIATE_TEST_SUITE_P(
    Vectors, CpuV4VectorTest, ::testing::Range<size_t>(0, 3),
    [](const ::testing::TestParamInfo<size_t>& info) {
      static const nlohmann::json v = testing::LoadVectors("checkpoint_vectors.json");
      return testing::TestName(v["v4_data_vectors"][info.param]["name"], info.param);
    });

// ---------------------------------------------------------------------------------------
// Upstream V4/V3 fixtures from PR #137820's TestCheckpointStateRestore. That PR stored the
// data checksum under "checksum"; #139102 (1.37) names it "dataChecksum", so the files are
// rewritten with that key. The data texts use "defaultCPUSet" (case-insensitive match).

std::string V4File(std::string_view data, uint64_t data_checksum) {
  std::string out = "{\"data\":";
  out += nlohmann::json(std::string(data)).dump();
  out += ",\"dataChecksum\":" + std::to_string(data_checksum) + "}";
  return out;
}

TEST(CpuUpstreamFixtureTest, V4RestoreDefaultCpuSet) {
  auto got = Restore(V4File(R"({"policyName":"none","defaultCPUSet":"4-6"})", 657950972),
                     Opts("none"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->default_cpu_set, "4-6");
  EXPECT_EQ(got->version_read, 4);
}

TEST(CpuUpstreamFixtureTest, V4RestoreValid) {
  auto got = Restore(
      V4File(
          R"({"policyName":"static","defaultCPUSet":"7-9","entries":{"pod":{"container1":"4-6","container2":"1-3"}}})",
          1420829534),
      Opts("static"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->default_cpu_set, "7-9");
  EXPECT_EQ(got->entries.at("pod").at("container2"), "1-3");
}

TEST(CpuUpstreamFixtureTest, V4InvalidPolicy) {
  auto got = Restore(V4File(R"({"policyName":"other","defaultCPUSet":"1-3"})", 2380595610),
                     Opts("none"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "could not restore state from checkpoint: configured policy \"none\" differs from "
            "state checkpoint policy \"other\"" + Tail());
}

TEST(CpuUpstreamFixtureTest, V4UnparsableDefault) {
  auto got = Restore(V4File(R"({"policyName":"none","defaultCPUSet":"1.3"})", 3033143655),
                     Opts("none"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "could not restore state from checkpoint: could not parse default cpu set \"1.3\": "
            "strconv.Atoi: parsing \"1.3\": invalid syntax" + Tail());
}

TEST(CpuUpstreamFixtureTest, V4UnparsableEntry) {
  auto got = Restore(
      V4File(
          R"({"policyName":"static","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"asd"}}})",
          3794806925),
      Opts("static"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "could not restore state from checkpoint: could not parse cpuset \"asd\" for "
            "container \"container2\" in pod \"pod\": strconv.Atoi: parsing \"asd\": invalid "
            "syntax" + Tail());
}

TEST(CpuUpstreamFixtureTest, V4WithPodEntriesGateOnAndOff) {
  const std::string data =
      R"({"policyName":"static","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"7-9"}},"podEntries":{"pod":{"cpuSet":"4-10"}}})";
  auto on = Restore(V4File(data, 2328898362), Opts("static", true));
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_EQ(on->pod_entries.at("pod"), "4-10");
  auto off = Restore(V4File(data, 2328898362), Opts("static", false));
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_TRUE(off->pod_entries.empty());  // pod entries restored only with the gate
  EXPECT_EQ(off->entries.at("pod").size(), 2u);
}

TEST(CpuUpstreamFixtureTest, V4IgnoresUnknownFieldsInData) {
  auto got = Restore(
      V4File(R"({"policyName":"none","defaultCPUSet":"4-6","unknownField":"value"})", 3492408555),
      Opts("none"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->default_cpu_set, "4-6");
}

// #137820's fixture with the old key: in 1.37 "checksum" is the (ignored) inline V2
// checksum, dataChecksum is 0 and data is non-empty -> hard failure, no fallback.
TEST(CpuUpstreamFixtureTest, V4DataWithoutDataChecksumFailsHard) {
  auto got = Restore(R"({"data":"{\"policyName\":\"none\",\"defaultCPUSet\":\"4-6\"}","checksum":657950972})",
                     Opts("none"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "could not restore state from checkpoint: could not load v4 checkpoint: checkpoint "
            "is corrupted" + Tail());
}

// "Restore checkpoint without checksum section falls back to empty v2 version" (#137820):
// with neither data nor dataChecksum the V2 reader accepts checksum 0 and gets policy "".
TEST(CpuUpstreamFixtureTest, NoDataNoChecksumFallsBackToEmptyV2) {
  auto got = Restore(R"({"checksum":0})", Opts("none"));
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()),
              StartsWith("could not restore state from checkpoint: configured policy \"none\" "
                         "differs from state checkpoint policy \"\""));
}

// "Restore checkpoint from v2 (migration) with PodLevelResourceManagers enabled" (#137820):
// a V2-shaped file whose checksum 1942532442 is the V3-named hash (empty podEntries). 1.37
// verifies V3 with its own name first, so it loads as V3.
TEST(CpuUpstreamFixtureTest, V2ShapedFileWithV3NamedChecksumLoadsAsV3) {
  const std::string file =
      R"({"policyName":"static","defaultCPUSet":"7-9","entries":{"pod":{"container1":"4-6","container2":"1-3"}},"checksum":1942532442})";
  for (bool gate : {false, true}) {
    auto got = Restore(file, Opts("static", gate));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->version_read, 3);
    EXPECT_EQ(got->entries.at("pod").at("container1"), "4-6");
  }
}

// "Restore checkpoint from v3 (migration)" with both gate values (#137820; 2284712151 and
// 751755688 are hashes under the V3 name; the legacy-name hash also verifies).
TEST(CpuUpstreamFixtureTest, V3Migration) {
  const std::string file =
      R"({"policyName":"static","defaultCPUSet":"1-2","entries":{"pod1":{"container1":"5-6","container2":"3-4"}},"podEntries":{"pod2":{"cpuSet":"7-9"}},"checksum":2284712151})";
  auto on = Restore(file, Opts("static", true));
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_EQ(on->version_read, 3);
  EXPECT_EQ(on->pod_entries.at("pod2"), "7-9");
  auto off = Restore(file, Opts("static", false));
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_TRUE(off->pod_entries.empty());

  const std::string legacy =
      R"({"policyName":"static","defaultCPUSet":"1-2","entries":{"pod1":{"container1":"5-6","container2":"3-4"}},"podEntries":{"pod2":{"cpuSet":"7-9"}},"checksum":766259872})";
  auto l = Restore(legacy, Opts("static", true));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->version_read, 3);

  const std::string disabled =
      R"({"policyName":"none","defaultCPUSet":"1-3","entries":{"pod1":{"container1":"4-6","container2":"1-3"}},"podEntries":{"pod2":{"cpuSet":"7-9"}},"checksum":751755688})";
  auto d = Restore(disabled, Opts("none", false));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->entries.at("pod1").at("container1"), "4-6");
}

// checkpoint-checksums.md: "A V3 file with checksum 0 loads through V2 and loses its
// podEntries."
TEST(CpuChainTest, V3WithZeroChecksumLoadsThroughV2) {
  const std::string file =
      R"({"policyName":"static","defaultCpuSet":"1-2","entries":{"pod1":{"c":"5-6"}},"podEntries":{"pod2":{"cpuSet":"7-9"}},"checksum":0})";
  auto got = Restore(file, Opts("static", true));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->version_read, 2);
  EXPECT_TRUE(got->pod_entries.empty());
  EXPECT_EQ(got->entries.at("pod1").at("c"), "5-6");
}

// V2 verification under 1.37 (checkpoint.go VerifyChecksum for V2): the un-replaced
// CPUManagerCheckpointV2 hash is accepted only while PodLevelResourceManagers is off.
TEST(CpuChainTest, V2OwnNameChecksumDependsOnGate) {
  CpuCheckpoint cp;
  cp.policy_name = "static";
  cp.default_cpu_set = "7-9";
  cp.entries["pod"] = {{"container1", "4-6"}};
  uint64_t own = Fnv1a32(SpewCpuV2("CPUManagerCheckpointV2", cp));
  const std::string file = R"({"policyName":"static","defaultCpuSet":"7-9","entries":{"pod":{"container1":"4-6"}},"checksum":)" +
                           std::to_string(own) + "}";
  auto off = Restore(file, Opts("static", false));
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->version_read, 2);
  auto on = Restore(file, Opts("static", true));
  ASSERT_FALSE(on.ok());
  EXPECT_EQ(on.status().message(),
            "could not restore state from checkpoint: checkpoint is corrupted" + Tail());
}

// JSON null vs {} changes the checksum: `entries: null` decodes to a nil map and hashes as
// <nil> (dump spelled out here by hand from checkpoint-checksums.md's rules).
TEST(CpuChainTest, NullEntriesHashAsNil) {
  const uint64_t nil_sum = Fnv1a32(
      "(*state.CPUManagerCheckpoint){PolicyName:(string)none DefaultCPUSet:(string)1-3 "
      "Entries:(map[string]map[string]string)<nil> Checksum:(checksum.Checksum)0}");
  const uint64_t empty_sum = Fnv1a32(
      "(*state.CPUManagerCheckpoint){PolicyName:(string)none DefaultCPUSet:(string)1-3 "
      "Entries:(map[string]map[string]string)map[] Checksum:(checksum.Checksum)0}");
  ASSERT_NE(nil_sum, empty_sum);
  auto file = [](std::string entries, uint64_t sum) {
    return R"({"policyName":"none","defaultCpuSet":"1-3",)" + entries +
           R"("checksum":)" + std::to_string(sum) + "}";
  };
  EXPECT_TRUE(Restore(file(R"("entries":null,)", nil_sum), Opts("none")).ok());
  EXPECT_FALSE(Restore(file(R"("entries":null,)", empty_sum), Opts("none")).ok());
  EXPECT_TRUE(Restore(file(R"("entries":{},)", empty_sum), Opts("none")).ok());
  EXPECT_TRUE(Restore(file("", empty_sum), Opts("none")).ok());  // missing -> empty map
  EXPECT_FALSE(Restore(file("", nil_sum), Opts("none")).ok());
  // A nil inner map: `map[pod:<nil>]`; the pod is restored with no containers.
  const uint64_t inner_nil = Fnv1a32(
      "(*state.CPUManagerCheckpoint){PolicyName:(string)none DefaultCPUSet:(string)1-3 "
      "Entries:(map[string]map[string]string)map[pod:<nil>] Checksum:(checksum.Checksum)0}");
  auto got = Restore(file(R"("entries":{"pod":null},)", inner_nil), Opts("none"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->entries.at("pod").empty());
}

TEST(CpuChainTest, CaseInsensitiveAndUnknownKeys) {
  // 3610638499: upstream V2 fixture (checkpoint-checksums.md).
  auto got = Restore(
      R"({"POLICYNAME":"none","defaultcpuset":"1-3","Entries":{"pod":{"container1":"4-6","container2":"1-3"}},"extra":[1,{"x":null}],"checksum":3610638499})",
      Opts("none"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->entries.at("pod").at("container1"), "4-6");
}

TEST(CpuChainTest, TruncatedJson) {
  auto got = Restore(R"({"policyName":"none","defaultCpuSet":"1-3")", Opts("none"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "could not restore state from checkpoint: unexpected end of JSON input" + Tail());
  auto empty = Restore("", Opts("none"));
  EXPECT_EQ(empty.status().message(),
            "could not restore state from checkpoint: unexpected end of JSON input" + Tail());
}

TEST(CpuChainTest, WrongTypes) {
  auto got = Restore(R"({"policyName":5,"defaultCpuSet":"1-3","checksum":0})", Opts("none"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "could not restore state from checkpoint: json: cannot unmarshal number into Go "
            "struct field CPUManagerCheckpointV2.policyName of type string" + Tail());
  auto arr = Restore("[]", Opts("none"));
  EXPECT_EQ(arr.status().message(),
            "could not restore state from checkpoint: json: cannot unmarshal array into Go "
            "value of type state.CPUManagerCheckpointV2" + Tail());
  auto cs = Restore(R"({"policyName":"none","checksum":"12"})", Opts("none"));
  EXPECT_EQ(cs.status().message(),
            "could not restore state from checkpoint: json: cannot unmarshal string into Go "
            "struct field CPUManagerCheckpointV2.checksum of type checksum.Checksum" + Tail());
}

TEST(CpuChainTest, HugeAndOddNumbers) {
  auto huge = Restore(R"({"policyName":"none","checksum":18446744073709551616})", Opts("none"));
  EXPECT_EQ(huge.status().message(),
            "could not restore state from checkpoint: json: cannot unmarshal number "
            "18446744073709551616 into Go struct field CPUManagerCheckpointV2.checksum of type "
            "checksum.Checksum" + Tail());
  auto max = Restore(R"({"policyName":"none","checksum":18446744073709551615})", Opts("none"));
  EXPECT_EQ(max.status().message(),
            "could not restore state from checkpoint: checkpoint is corrupted" + Tail());
  auto frac = Restore(R"({"policyName":"none","checksum":1.0})", Opts("none"));
  EXPECT_THAT(std::string(frac.status().message()), HasSubstr("cannot unmarshal number 1.0 into Go struct field"));
  // A huge dataChecksum is a V4 decode error, but Go cannot store the number, so
  // dataChecksum stays 0: with no data the chain falls back, and V2 accepts checksum 0.
  auto dc = Restore(R"({"policyName":"none","dataChecksum":99999999999999999999,"checksum":0})",
                    Opts("none"));
  ASSERT_TRUE(dc.ok()) << dc.status();
  EXPECT_EQ(dc->version_read, 2);
}

TEST(CpuChainTest, V4HardFailures) {
  auto bad_data = Restore(R"({"data":"{","dataChecksum":1})", Opts("none"));
  EXPECT_EQ(bad_data.status().message(),
            "could not restore state from checkpoint: could not load v4 checkpoint: failed to "
            "deserialize cpu manager checkpoint data: unexpected end of JSON input" + Tail());
  // dataChecksum without data (the memory manager's upstream "without data section" case,
  // same code shape).
  auto no_data = Restore(R"({"policyName":"none","dataChecksum":1234})", Opts("none"));
  EXPECT_EQ(no_data.status().message(),
            "could not restore state from checkpoint: could not load v4 checkpoint: failed to "
            "deserialize cpu manager checkpoint data: unexpected end of JSON input" + Tail());
  // An unparsable pod cpuset fails while decoding data (PodEntry.UnmarshalJSON).
  std::string data = R"({"policyName":"static","defaultCpuSet":"","podEntries":{"p":{"cpuSet":"x"}}})";
  auto pod = Restore(V4File(data, DataChecksum(data)), Opts("static", true));
  EXPECT_EQ(pod.status().message(),
            "could not restore state from checkpoint: could not load v4 checkpoint: failed to "
            "deserialize cpu manager checkpoint data: failed to parse cpuset: strconv.Atoi: "
            "parsing \"x\": invalid syntax" + Tail());
  // A wrongly typed pod entry aborts with the outer context.
  std::string typed = R"({"policyName":"static","podEntries":{"p":{"cpuSet":5}}})";
  auto t = Restore(V4File(typed, DataChecksum(typed)), Opts("static", true));
  EXPECT_EQ(t.status().message(),
            "could not restore state from checkpoint: could not load v4 checkpoint: failed to "
            "deserialize cpu manager checkpoint data: json: cannot unmarshal number into Go "
            "struct field CPUManagerCheckpointData.podEntries.cpuSet of type string" + Tail());
  // The outer V4 decode reports the embedded struct on the field path.
  auto outer = Restore(R"({"entries":{"p":"x"},"data":"{}","dataChecksum":1})", Opts("none"));
  EXPECT_EQ(outer.status().message(),
            "could not restore state from checkpoint: could not load v4 checkpoint: failed to "
            "deserialize cpu manager checkpoint: json: cannot unmarshal string into Go struct "
            "field CPUManagerCheckpoint.CPUManagerCheckpointV2.entries of type "
            "map[string]string" + Tail());
}

TEST(CpuChainTest, V4InlinePartIsIgnored) {
  CpuCheckpoint cp;
  cp.policy_name = "static";
  cp.default_cpu_set = "0-3";
  absl::StatusOr<std::string> file = MarshalCpuCheckpoint(cp, CpuWriteOptions{});
  ASSERT_TRUE(file.ok());
  // Corrupt the inline part only: 1.37 reads data.
  std::string tampered = ReplaceFirst(*file, R"("defaultCpuSet":"0-3")", R"("defaultCpuSet":"x")");
  tampered = ReplaceFirst(tampered, R"("checksum":0)", R"("checksum":17)");
  ASSERT_NE(tampered, *file);
  auto got = Restore(tampered, Opts("static"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->default_cpu_set, "0-3");
}

// ---------------------------------------------------------------------------------------
// Writing.

CpuCheckpoint Sample() {
  CpuCheckpoint cp;
  cp.policy_name = "static";
  cp.default_cpu_set = "0-1,3-7,9-11";
  cp.entries["pod1"] = {{"container1", "2"}};
  cp.pod_entries["pod1"] = "2,8";
  return cp;
}

TEST(CpuWriteTest, V2Bytes) {
  CpuWriteOptions w;
  w.format = CpuFormat::kV2;
  CpuCheckpoint cp;
  cp.policy_name = "none";
  cp.default_cpu_set = "1-3";
  cp.entries["pod"] = {{"container1", "4-6"}, {"container2", "1-3"}};
  // Upstream 1.18 fixture (checkpoint-checksums.md), compact Go marshal.
  EXPECT_EQ(*MarshalCpuCheckpoint(cp, w),
            R"({"policyName":"none","defaultCpuSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"1-3"}},"checksum":3610638499})");
  // Empty entries are omitted (omitempty); vector "computed: static, empty assignments".
  CpuCheckpoint empty;
  empty.policy_name = "static";
  empty.default_cpu_set = "0-11";
  EXPECT_EQ(*MarshalCpuCheckpoint(empty, w),
            R"({"policyName":"static","defaultCpuSet":"0-11","checksum":1227076877})");
}

TEST(CpuWriteTest, V3Bytes) {
  CpuWriteOptions w;
  w.format = CpuFormat::kV3;
  w.pod_level_resource_managers = true;
  // Vector "computed: V3 layout with podEntries" (399087231).
  EXPECT_EQ(*MarshalCpuCheckpoint(Sample(), w),
            R"({"policyName":"static","defaultCpuSet":"0-1,3-7,9-11","entries":{"pod1":{"container1":"2"}},"podEntries":{"pod1":{"cpuSet":"2,8"}},"checksum":399087231})");
}

// Both inline checksum choices are accepted by an older V2 reader, which sees only the
// inline fields (data and dataChecksum are unknown keys to it).
TEST(CpuWriteTest, V4InlineChecksumChoicesVerifyAsV2) {
  CpuCheckpoint inline_part = Sample();
  inline_part.pod_entries.clear();
  const uint64_t legacy = Fnv1a32(SpewCpuV2("CPUManagerCheckpoint", inline_part));
  for (V4InlineChecksum mode : {V4InlineChecksum::kZero, V4InlineChecksum::kLegacyV2}) {
    CpuWriteOptions w;
    w.pod_level_resource_managers = true;
    w.v4_inline_checksum = mode;
    absl::StatusOr<std::string> file = MarshalCpuCheckpoint(Sample(), w);
    ASSERT_TRUE(file.ok());
    const uint64_t expected = mode == V4InlineChecksum::kZero ? 0 : legacy;
    const std::string marker = "\"checksum\":" + std::to_string(expected) + ",\"data\":";
    size_t at = file->find(marker);
    ASSERT_NE(at, std::string::npos) << *file;
    // What a V2-only reader decodes: the same bytes without the two V4 keys.
    std::string v2_view = file->substr(0, at) + "\"checksum\":" + std::to_string(expected) + "}";
    for (bool gate : {false, true}) {
      auto got = Restore(v2_view, Opts("static", gate));
      ASSERT_TRUE(got.ok()) << got.status() << " " << v2_view;
      EXPECT_EQ(got->version_read, 2);
      EXPECT_EQ(got->entries, inline_part.entries);
    }
    auto v4 = Restore(*file, Opts("static", true));
    ASSERT_TRUE(v4.ok());
    EXPECT_EQ(v4->version_read, 4);
  }
}

TEST(CpuWriteTest, GoEscapingInsideAndOutsideData) {
  CpuCheckpoint cp;
  cp.policy_name = "static";
  cp.default_cpu_set = "0";
  cp.entries["a<b>&c"] = {{"x\"y", "1"}};
  absl::StatusOr<std::string> file = MarshalCpuCheckpoint(cp, CpuWriteOptions{});
  ASSERT_TRUE(file.ok());
  EXPECT_THAT(*file, StartsWith(R"({"policyName":"static","defaultCpuSet":"0","entries":{"a\u003cb\u003e\u0026c":{"x\"y":"1"}},"checksum":0,"data":"{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":{\"a\\u003cb\\u003e\\u0026c\":{\"x\\\"y\":\"1\"}}}","dataChecksum":)"));
  EXPECT_EQ((*file).back(), '}');  // no trailing newline
  auto back = Restore(*file, Opts("static"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->entries.at("a<b>&c").at("x\"y"), "1");
}

TEST(CpuWriteTest, CanonicalCpusetsAndErrors) {
  CpuCheckpoint cp;
  cp.policy_name = "static";
  cp.default_cpu_set = "3,2,1,0";
  cp.entries["p"]["c"] = "5,4";
  CpuWriteOptions w;
  w.format = CpuFormat::kV2;
  EXPECT_THAT(*MarshalCpuCheckpoint(cp, w), StartsWith(R"({"policyName":"static","defaultCpuSet":"0-3","entries":{"p":{"c":"4-5"}})"));
  cp.entries["p"]["c"] = "x";
  absl::StatusOr<std::string> bad = MarshalCpuCheckpoint(cp, w);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("container \"c\" in pod \"p\""));
}

TEST(CpuWriteTest, EmptyPodEntryAndPodWithoutContainers) {
  CpuCheckpoint cp;
  cp.policy_name = "static";
  cp.default_cpu_set = "0-3";
  cp.entries["empty-pod"];  // Go writes "empty-pod":{}
  cp.pod_entries["p"] = "";  // PodEntry.MarshalJSON omits an empty cpuSet
  CpuWriteOptions w;
  w.pod_level_resource_managers = true;
  absl::StatusOr<std::string> data = MarshalCpuCheckpointData(cp, true);
  EXPECT_EQ(*data,
            R"({"policyName":"static","defaultCpuSet":"0-3","entries":{"empty-pod":{}},"podEntries":{"p":{}}})");
  for (CpuFormat f : {CpuFormat::kV3, CpuFormat::kV4}) {
    w.format = f;
    auto back = Restore(*MarshalCpuCheckpoint(cp, w), Opts("static", true));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(back->entries.at("empty-pod").empty());
    EXPECT_EQ(back->pod_entries.at("p"), "");
  }
}

// ---------------------------------------------------------------------------------------
// Migration: V2/V3 files are restored, then written as V4 (what 1.37 does on the next
// store) and the V4 file restores to the same state.

TEST(CpuMigrationTest, V2ToV4) {
  // Vector "real node V2 file".
  const std::string v2 =
      R"({"policyName":"static","defaultCpuSet":"0,2-12,14-23","entries":{"235148fe-393f-47a8-a17d-bd55bc1a836b":{"cgroup1-0":"1,13"}},"checksum":1552716370})";
  auto a = Restore(v2, Opts("static"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->version_read, 2);
  absl::StatusOr<std::string> v4 = MarshalCpuCheckpoint(*a, CpuWriteOptions{});
  ASSERT_TRUE(v4.ok());
  // v4_data_vectors "V4 data: static, one container" (2345636181).
  EXPECT_THAT(*v4, HasSubstr("\"dataChecksum\":2345636181}"));
  auto b = Restore(*v4, Opts("static"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->version_read, 4);
  EXPECT_EQ(b->entries, a->entries);
  EXPECT_EQ(b->default_cpu_set, a->default_cpu_set);
}

TEST(CpuMigrationTest, V3ToV4KeepsPodEntriesWithGate) {
  CpuWriteOptions v3;
  v3.format = CpuFormat::kV3;
  v3.pod_level_resource_managers = true;
  auto a = Restore(*MarshalCpuCheckpoint(Sample(), v3), Opts("static", true));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->version_read, 3);
  CpuWriteOptions v4;
  v4.pod_level_resource_managers = true;
  auto b = Restore(*MarshalCpuCheckpoint(*a, v4), Opts("static", true));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->version_read, 4);
  EXPECT_EQ(b->pod_entries, a->pod_entries);
  EXPECT_EQ(b->entries, a->entries);
}

// ---------------------------------------------------------------------------------------
// Files.

class CpuFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir("ckpt-cpu"); }
  void TearDown() override {
    ::chmod(dir_.c_str(), 0755);
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(CpuFileTest, MissingFileIsNullopt) {
  auto got = LoadCpuCheckpointFile(dir_ + "/cpu_manager_state", Opts("none"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(got->has_value());
}

TEST_F(CpuFileTest, DirectoryIsARestoreError) {
  const std::string path = dir_ + "/cpu_manager_state";
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
  auto got = LoadCpuCheckpointFile(path, Opts("none"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), "could not restore state from checkpoint: read " + path +
                                        ": is a directory" + Tail(path));
}

TEST_F(CpuFileTest, WriteThenLoadAndMode) {
  const std::string path = dir_ + "/cpu_manager_state";
  CpuWriteOptions w;
  w.pod_level_resource_managers = true;
  ASSERT_TRUE(WriteCpuCheckpointFile(path, Sample(), w).ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto got = LoadCpuCheckpointFile(path, Opts("static", true));
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status();
  CpuCheckpoint expected = Sample();
  expected.version_read = 4;
  EXPECT_EQ(**got, expected);
  EXPECT_EQ(*ReadFile(path), *MarshalCpuCheckpoint(Sample(), w));
}

TEST_F(CpuFileTest, FailedWriteLeavesOldFile) {
  const std::string path = dir_ + "/cpu_manager_state";
  ASSERT_TRUE(WriteCpuCheckpointFile(path, Sample(), CpuWriteOptions{}).ok());
  const std::string before = *ReadFile(path);
  CpuCheckpoint other = Sample();
  other.default_cpu_set = "0-11";

  // 1. The temporary file cannot be created (a directory is in its place).
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(tmp.c_str(), 0755), 0);
  EXPECT_FALSE(WriteCpuCheckpointFile(path, other, CpuWriteOptions{}).ok());
  EXPECT_EQ(*ReadFile(path), before);
  ::rmdir(tmp.c_str());

  // 2. Marshal fails: nothing is written.
  CpuCheckpoint bad = Sample();
  bad.default_cpu_set = "nope";
  EXPECT_FALSE(WriteCpuCheckpointFile(path, bad, CpuWriteOptions{}).ok());
  EXPECT_EQ(*ReadFile(path), before);

  // 3. Read-only directory (not enforced for root).
  if (::geteuid() != 0) {
    ASSERT_EQ(::chmod(dir_.c_str(), 0555), 0);
    EXPECT_FALSE(WriteCpuCheckpointFile(path, other, CpuWriteOptions{}).ok());
    ::chmod(dir_.c_str(), 0755);
    EXPECT_EQ(*ReadFile(path), before);
  }
  // Nothing left behind.
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    (void)e;
    ++n;
  }
  EXPECT_EQ(n, 1u);
}

// ---------------------------------------------------------------------------------------
// Property: any state written in any format restores to the same state (cpusets
// canonical), and a V4 file's dataChecksum re-verifies.

rc::Gen<std::string> GenName() {
  return rc::gen::container<std::string>(rc::gen::elementOf(std::string("abz09-_.<&\"")));
}

rc::Gen<std::string> GenCpuSet() {
  return rc::gen::map(rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 200)),
                      [](std::vector<int> ids) { return CpuSet(ids).String(); });
}

PODTOPO_PROPERTY(CpuRoundTripProperty, WriteRestore, ()) {
  CpuCheckpoint cp;
  cp.policy_name = *rc::gen::elementOf(std::vector<std::string>{"none", "static"});
  cp.default_cpu_set = *GenCpuSet();
  // At a third of rapidcheck's size: up to ~33 pods of ~33 containers (at full size, 100 x 100
  // entries took 57 s of CI's ASan run, and larger maps exercise no other path of the codec).
  cp.entries = *rc::gen::scale(
      0.33, rc::gen::container<std::map<std::string, std::map<std::string, std::string>>>(
                GenName(),
                rc::gen::container<std::map<std::string, std::string>>(GenName(), GenCpuSet())));
  const bool gate = *rc::gen::arbitrary<bool>();
  const CpuFormat format = *rc::gen::elementOf(
      std::vector<CpuFormat>{CpuFormat::kV2, CpuFormat::kV3, CpuFormat::kV4});
  if (gate && format != CpuFormat::kV2) {
    cp.pod_entries = *rc::gen::container<std::map<std::string, std::string>>(GenName(), GenCpuSet());
  }
  CpuWriteOptions w;
  w.format = format;
  w.pod_level_resource_managers = gate;
  w.v4_inline_checksum =
      *rc::gen::elementOf(std::vector<V4InlineChecksum>{V4InlineChecksum::kZero,
                                                       V4InlineChecksum::kLegacyV2});
  absl::StatusOr<std::string> file = MarshalCpuCheckpoint(cp, w);
  RC_ASSERT(file.ok());
  absl::StatusOr<CpuCheckpoint> back = Restore(*file, Opts(cp.policy_name, gate));
  RC_ASSERT(back.ok());
  int expected_version = format == CpuFormat::kV4 ? 4 : format == CpuFormat::kV3 ? 3 : 2;
  // A V3 file without pod entries and a V2 file may both verify as V3/V2; a V2-format file
  // never verifies as V3 unless it has the V3-named hash, which our writer never produces.
  RC_ASSERT(back->version_read == expected_version);
  cp.version_read = expected_version;
  // The inline checksum mode is remembered so that a rewrite keeps it.
  cp.kept.legacy_inline_checksum =
      format == CpuFormat::kV4 && w.v4_inline_checksum == V4InlineChecksum::kLegacyV2;
  RC_ASSERT(*back == cp);
}

// ---------------------------------------------------------------------------------------
// Nothing the kubelet wrote is dropped (issue 10 item 6): resize baselines (k/k #140314,
// #140788), members podtopo does not model, the inline checksum mode.

// A V4 file as json.Marshal writes it: the inline V2 fields, data, dataChecksum.
std::string KubeletV4(const std::string& inline_fields, const std::string& data,
                      uint64_t inline_checksum = 0) {
  return "{" + inline_fields + ",\"checksum\":" + std::to_string(inline_checksum) +
         ",\"data\":" + nlohmann::json(data).dump() +
         ",\"dataChecksum\":" + std::to_string(DataChecksum(data)) + "}";
}

TEST(CpuKeptFieldsTest, Issue140314_V4BaselinesKeptByteForByte) {
  const std::string data =
      R"({"policyName":"static","defaultCpuSet":"0,3-11","entries":{"pod1":{"c1":"1-2"}},)"
      R"("baselines":{"pod1":{"c1":{"baseline":"1-2"}}}})";
  const std::string file = KubeletV4(
      R"("policyName":"static","defaultCpuSet":"0,3-11","entries":{"pod1":{"c1":"1-2"}})", data);
  for (bool gate : {false, true}) {
    auto cp = Restore(file, Opts("static", gate));
    ASSERT_TRUE(cp.ok()) << cp.status();
    EXPECT_EQ(cp->baselines.at("pod1").at("c1"), "1-2");
    EXPECT_TRUE(cp->kept.empty());
    CpuWriteOptions w;
    w.pod_level_resource_managers = gate;
    EXPECT_EQ(*MarshalCpuCheckpoint(*cp, w), file);
  }
  // Wherever the kubelet put them, a rewrite leaves them there.
  const std::string first =
      R"({"baselines":{"pod1":{"c1":{"baseline":"1-2"}}},"policyName":"static",)"
      R"("defaultCpuSet":"0,3-11","entries":{"pod1":{"c1":"1-2"}}})";
  const std::string file2 = KubeletV4(
      R"("policyName":"static","defaultCpuSet":"0,3-11","entries":{"pod1":{"c1":"1-2"}})", first);
  auto cp2 = Restore(file2, Opts("static"));
  ASSERT_TRUE(cp2.ok()) << cp2.status();
  EXPECT_EQ(*MarshalCpuCheckpoint(*cp2, CpuWriteOptions{}), file2);
}

TEST(CpuKeptFieldsTest, UnknownMembersSurviveAChangeWithValidChecksums) {
  const std::string data =
      R"({"policyName":"static","futureData":{"a":[1,"x<"]},"defaultCpuSet":"0,3-11",)"
      R"("entries":{"pod1":{"c1":"1-2"}}})";
  const std::string file = KubeletV4(
      R"("policyName":"static","defaultCpuSet":"0,3-11","futureTop":true,"entries":{"pod1":{"c1":"1-2"}})",
      data, /*inline_checksum=*/12345);
  auto cp = Restore(file, Opts("static"));
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_TRUE(cp->kept.legacy_inline_checksum);
  ASSERT_EQ(cp->kept.top.size(), 1u);
  ASSERT_EQ(cp->kept.data.size(), 1u);
  EXPECT_EQ(cp->kept.data[0].second, R"({"a":[1,"x\u003c"]})");
  // Untouched: the bytes podtopo writes are the kubelet's, except the inline legacy checksum,
  // which podtopo computes (the kubelet's 12345 was not a valid one).
  CpuCheckpoint next = *cp;
  next.entries["pod2"]["c"] = "3";
  next.default_cpu_set = "0,4-11";
  absl::StatusOr<std::string> out = MarshalCpuCheckpoint(next, CpuWriteOptions{});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, StartsWith(R"({"policyName":"static","defaultCpuSet":"0,4-11","futureTop":true,"entries":{"pod1":{"c1":"1-2"},"pod2":{"c":"3"}},"checksum":)"));
  auto back = Restore(*out, Opts("static"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->kept, cp->kept);
  EXPECT_EQ(back->entries, next.entries);
  // The data text keeps the member in place and the dataChecksum covers it.
  EXPECT_THAT(*out, HasSubstr(R"(\"policyName\":\"static\",\"futureData\":{\"a\":[1,\"x\\u003c\"]},\"defaultCpuSet\":\"0,4-11\")"));
  // An older reader sees a V2 file whose checksum verifies (the inline checksum is legacy).
  const size_t at = out->find(",\"data\":");
  auto v2 = Restore(out->substr(0, at) + "}", Opts("static"));
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(v2->version_read, 2);
}

TEST(CpuKeptFieldsTest, BaselineGoesOnlyWithItsEntry) {
  CpuCheckpoint read;
  read.policy_name = "static";
  read.entries["gone"]["c"] = "1";
  read.entries["stays"]["c"] = "2";
  read.baselines["gone"]["c"] = "1";
  read.baselines["stays"]["c"] = "2";
  read.baselines["untouched"]["c"] = "5";  // no entry when read: not podtopo's to drop
  CpuCheckpoint next;
  next.policy_name = "static";
  next.entries["stays"]["c"] = "2";
  KeepUnmodelled(read, next);
  EXPECT_EQ(next.baselines,
            (std::map<std::string, std::map<std::string, std::string>>{
                {"stays", {{"c", "2"}}}, {"untouched", {{"c", "5"}}}}));
}

TEST(CpuKeptFieldsTest, BaselinesOfAnotherShapeAreKeptVerbatim) {
  const std::string data =
      R"({"policyName":"static","defaultCpuSet":"0-11","baselines":[{"pod":"p","cpus":"1"}]})";
  const std::string file = KubeletV4(R"("policyName":"static","defaultCpuSet":"0-11")", data);
  auto cp = Restore(file, Opts("static"));
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_TRUE(cp->baselines.empty());
  ASSERT_EQ(cp->kept.data.size(), 1u);
  EXPECT_EQ(*MarshalCpuCheckpoint(*cp, CpuWriteOptions{}), file);
}

TEST(CpuKeptFieldsTest, UnknownNestedMemberRefusesTheRewrite) {
  const std::string data =
      R"({"policyName":"static","defaultCpuSet":"0-3","podEntries":{"p":{"cpuSet":"4-5","weight":3}},)"
      R"("baselines":{"p":{"c":{"baseline":"4","resized":"4-5"}}}})";
  const std::string file = KubeletV4(R"("policyName":"static","defaultCpuSet":"0-3")", data);
  auto cp = Restore(file, Opts("static", true));
  ASSERT_TRUE(cp.ok()) << cp.status();  // the kubelet ignores unknown keys
  EXPECT_EQ(cp->kept.unkept,
            (std::vector<std::string>{"data.podEntries.p.weight", "data.baselines.p.c.resized"}));
  CpuWriteOptions w;
  w.pod_level_resource_managers = true;
  EXPECT_EQ(MarshalCpuCheckpoint(*cp, w).status().message(),
            "podtopo does not rewrite this CPU manager checkpoint: it holds fields podtopo does "
            "not model and cannot keep (data.podEntries.p.weight, data.baselines.p.c.resized; "
            "written by a newer kubelet?), and a rewrite would drop them");
}

}  // namespace
}  // namespace podtopo::checkpoint
