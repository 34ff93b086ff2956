// kubelet::ReadCheckpointFormat (what each version reads of each format) against the codec:
// every version and gate reads every format podtopo writes with the load chain the version
// table gives it (admission/state_files.h), and the model and the bytes must agree.

#include <string>

#include "admission/state_files.h"
#include "checkpoint/cpu_state_file.h"
#include "checkpoint/memory_state_file.h"
#include "gtest/gtest.h"
#include "kubelet/version.h"

namespace podtopo {
namespace {

using kubelet::CheckpointFile;
using kubelet::ReadMode;

checkpoint::CpuCheckpoint CpuWithPodEntry() {
  checkpoint::CpuCheckpoint cp;
  cp.policy_name = "static";
  cp.default_cpu_set = "0,3-5";
  cp.entries["pod"]["app"] = "1-2";
  cp.pod_entries["pod"] = "1-2";
  return cp;
}

checkpoint::MemoryCheckpoint MemoryWithPodEntry() {
  checkpoint::MemoryCheckpoint cp;
  cp.policy_name = "Static";
  checkpoint::NumaNodeState node;
  node.number_of_assignments = 1;
  node.memory_map["memory"] = {8ULL << 30, 1ULL << 30, 7ULL << 30, 1ULL << 30, 6ULL << 30};
  node.cells = std::vector<int>{0};
  cp.machine_state[0] = node;
  checkpoint::MemoryBlock b{std::vector<int>{0}, "memory", 1ULL << 30};
  cp.entries["pod"]["app"] = {b};
  cp.pod_entries["pod"] = {b};
  return cp;
}

constexpr checkpoint::CpuFormat kCpuFormats[] = {
    checkpoint::CpuFormat::kV2, checkpoint::CpuFormat::kV3, checkpoint::CpuFormat::kV4};
constexpr checkpoint::MemoryFormat kMemoryFormats[] = {
    checkpoint::MemoryFormat::kV1, checkpoint::MemoryFormat::kV2, checkpoint::MemoryFormat::kV3};

TEST(CheckpointVersions, Issue139102_Issue139626_ModelAgreesWithTheLoadChains) {
  for (const kubelet::KubeletVersion& v : kubelet::KubeletVersions()) {
    for (bool gate : {false, true}) {
      for (int i = 0; i < 3; ++i) {
        SCOPED_TRACE(std::string(v.name) + (gate ? " gate on" : " gate off") + " format " +
                     std::to_string(i));
        // CPU V2..V4, written with pod entries (V3 and V4 hold them).
        auto cpu_bytes = checkpoint::MarshalCpuCheckpoint(
            CpuWithPodEntry(), {.format = kCpuFormats[i], .pod_level_resource_managers = true});
        ASSERT_TRUE(cpu_bytes.ok()) << cpu_bytes.status();
        kubelet::CheckpointRead want =
            kubelet::ReadCheckpointFormat(v, CheckpointFile::kCpu, gate, i + 2);
        auto cpu = checkpoint::RestoreCpuCheckpoint(
            *cpu_bytes, "cpu_manager_state",
            {"static", gate, kubelet::NewestReadCheckpointFormat(v, CheckpointFile::kCpu, gate)});
        if (want.mode == ReadMode::kRefused) {
          ASSERT_FALSE(cpu.ok());
          EXPECT_NE(std::string(cpu.status().message()).find(want.kubelet_error),
                    std::string::npos)
              << cpu.status();
        } else {
          ASSERT_TRUE(cpu.ok()) << cpu.status();
          EXPECT_EQ(cpu->version_read, want.format_read);
          EXPECT_EQ(cpu->entries.at("pod").at("app"), "1-2");
          // Pod entries survive a full read with the gate on, never the legacy part.
          const bool kept = gate && want.mode == ReadMode::kFull && i + 2 >= 3;
          EXPECT_EQ(cpu->pod_entries.size(), kept ? 1u : 0u);
        }
        // Memory V1..V3.
        auto mem_bytes = checkpoint::MarshalMemoryCheckpoint(
            MemoryWithPodEntry(),
            {.format = kMemoryFormats[i], .pod_level_resource_managers = true});
        ASSERT_TRUE(mem_bytes.ok()) << mem_bytes.status();
        want = kubelet::ReadCheckpointFormat(v, CheckpointFile::kMemory, gate, i + 1);
        auto mem = checkpoint::RestoreMemoryCheckpoint(
            *mem_bytes, "memory_manager_state",
            {"Static", gate,
             kubelet::NewestReadCheckpointFormat(v, CheckpointFile::kMemory, gate)});
        if (want.mode == ReadMode::kRefused) {
          ASSERT_FALSE(mem.ok());
          EXPECT_NE(std::string(mem.status().message()).find(want.kubelet_error),
                    std::string::npos)
              << mem.status();
        } else {
          ASSERT_TRUE(mem.ok()) << mem.status();
          EXPECT_EQ(mem->version_read, want.format_read);
          const bool kept = gate && want.mode == ReadMode::kFull && i + 1 >= 2;
          EXPECT_EQ(mem->pod_entries.size(), kept ? 1u : 0u);
        }
      }
    }
  }
}

// The cases the docs name.
TEST(CheckpointVersions, Issue139102_136ReadsV4AsItsInlineV2) {
  const kubelet::KubeletVersion& v136 = *kubelet::FindKubeletVersion("1.36");
  kubelet::CheckpointRead r = kubelet::ReadCheckpointFormat(v136, CheckpointFile::kCpu, true, 4);
  EXPECT_EQ(r.mode, ReadMode::kLegacyPart);
  EXPECT_EQ(r.format_read, 2);
  EXPECT_EQ(r.upstream, "k/k #139102");
  r = kubelet::ReadCheckpointFormat(v136, CheckpointFile::kMemory, false, 3);
  EXPECT_EQ(r.mode, ReadMode::kLegacyPart);
  EXPECT_EQ(r.format_read, 1);
  EXPECT_EQ(r.upstream, "k/k #139626");
  EXPECT_EQ(kubelet::ReadCheckpointFormat(v136, CheckpointFile::kCpu, false, 3).mode,
            ReadMode::kRefused);
  const kubelet::KubeletVersion& v137 = *kubelet::FindKubeletVersion("1.37.0");
  for (int f : {2, 3, 4}) {
    EXPECT_EQ(kubelet::ReadCheckpointFormat(v137, CheckpointFile::kCpu, false, f).mode,
              ReadMode::kFull);
  }
}

// The options admission and `state` derive from a configuration's version.
TEST(CheckpointVersions, Issue137751_OptionsFollowTheVersionTable) {
  config::KubeletConfig c;
  c.feature_gates["PodLevelResourceManagers"] = true;
  c.kubelet_version = "1.36";
  EXPECT_EQ(CpuWriteOptionsFor(c).format, checkpoint::CpuFormat::kV3);
  EXPECT_EQ(MemoryWriteOptionsFor(c).format, checkpoint::MemoryFormat::kV2);
  EXPECT_EQ(CpuLoadOptionsFor(c).newest_format, 3);
  c.feature_gates["PodLevelResourceManagers"] = false;
  EXPECT_EQ(CpuWriteOptionsFor(c).format, checkpoint::CpuFormat::kV2);
  EXPECT_EQ(MemoryWriteOptionsFor(c).format, checkpoint::MemoryFormat::kV1);
  EXPECT_EQ(MemoryLoadOptionsFor(c).newest_format, 1);
  c.kubelet_version = "1.37.0";
  EXPECT_EQ(CpuWriteOptionsFor(c).format, checkpoint::CpuFormat::kV4);
  EXPECT_EQ(MemoryLoadOptionsFor(c).newest_format, 3);
  c.kubelet_version = "";  // podtopo as the allocator: the newest formats
  EXPECT_EQ(CpuWriteOptionsFor(c).format, checkpoint::CpuFormat::kV4);
  EXPECT_EQ(MemoryWriteOptionsFor(c).format, checkpoint::MemoryFormat::kV3);
}

}  // namespace
}  // namespace podtopo
