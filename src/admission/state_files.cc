#include "admission/state_files.h"

#include "kubelet/version.h"
#include "util/format.h"

namespace podtopo {
namespace {

using kubelet::CheckpointFile;

bool PodLevelResourceManagers(const config::KubeletConfig& config) {
  return config.FeatureEnabled("PodLevelResourceManagers");
}

// The format config's kubelet writes (or, `newest_read`, the newest it reads); the newest known
// format without a version.
int Format(const config::KubeletConfig& config, CheckpointFile file, bool newest_read) {
  const kubelet::KubeletVersion* v = config.Version();
  if (v == nullptr) return file == CheckpointFile::kCpu ? 4 : 3;
  const bool gate = PodLevelResourceManagers(config);
  return newest_read ? kubelet::NewestReadCheckpointFormat(*v, file, gate)
                     : kubelet::WrittenCheckpointFormat(*v, file, gate);
}

}  // namespace

checkpoint::CpuLoadOptions CpuLoadOptionsFor(const config::KubeletConfig& config) {
  return {config.cpu_manager_policy, PodLevelResourceManagers(config),
          Format(config, CheckpointFile::kCpu, /*newest_read=*/true)};
}

checkpoint::MemoryLoadOptions MemoryLoadOptionsFor(const config::KubeletConfig& config) {
  return {config.memory_manager_policy, PodLevelResourceManagers(config),
          Format(config, CheckpointFile::kMemory, /*newest_read=*/true)};
}

checkpoint::CpuWriteOptions CpuWriteOptionsFor(const config::KubeletConfig& config) {
  checkpoint::CpuWriteOptions o;
  const int format = Format(config, CheckpointFile::kCpu, /*newest_read=*/false);
  o.format = format == 2   ? checkpoint::CpuFormat::kV2
             : format == 3 ? checkpoint::CpuFormat::kV3
                           : checkpoint::CpuFormat::kV4;
  o.pod_level_resource_managers = PodLevelResourceManagers(config);
  return o;
}

checkpoint::MemoryWriteOptions MemoryWriteOptionsFor(const config::KubeletConfig& config) {
  checkpoint::MemoryWriteOptions o;
  const int format = Format(config, CheckpointFile::kMemory, /*newest_read=*/false);
  o.format = format == 1   ? checkpoint::MemoryFormat::kV1
             : format == 2 ? checkpoint::MemoryFormat::kV2
                           : checkpoint::MemoryFormat::kV3;
  o.pod_level_resource_managers = PodLevelResourceManagers(config);
  return o;
}

absl::StatusOr<cpumanager::CpuState> CpuStateFromCheckpoint(const checkpoint::CpuCheckpoint& cp,
                                                            const std::string& path) {
  cpumanager::CpuState state;
  auto fail = [&](const absl::Status& s) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", path, s.message()));
  };
  auto def = CpuSet::Parse(cp.default_cpu_set);
  if (!def.ok()) {
    return fail(absl::InvalidArgumentError(fmt::format(
        "could not parse default cpu set \"{}\": {}", cp.default_cpu_set, def.status().message())));
  }
  state.SetDefaultCpuSet(*def);
  for (const auto& [pod, containers] : cp.entries) {
    for (const auto& [name, text] : containers) {
      auto cpus = CpuSet::Parse(text);
      if (!cpus.ok()) {
        return fail(absl::InvalidArgumentError(
            fmt::format("could not parse cpuset \"{}\" for container \"{}\" in pod \"{}\": {}", text,
                        name, pod, cpus.status().message())));
      }
      state.SetCpuSet(pod, name, *cpus);
    }
  }
  for (const auto& [pod, text] : cp.pod_entries) {
    auto cpus = CpuSet::Parse(text);
    if (!cpus.ok()) {
      return fail(absl::InvalidArgumentError(fmt::format(
          "could not parse cpuset \"{}\" for pod \"{}\": {}", text, pod, cpus.status().message())));
    }
    state.SetPodCpuSet(pod, *cpus);
  }
  return state;
}

checkpoint::CpuCheckpoint CpuCheckpointFromState(const cpumanager::CpuState& state,
                                                 const std::string& policy_name) {
  checkpoint::CpuCheckpoint cp;
  cp.policy_name = policy_name;
  cp.default_cpu_set = state.GetDefaultCpuSet().String();
  for (const auto& [pod, containers] : state.GetCpuAssignments()) {
    for (const auto& [name, cpus] : containers) cp.entries[pod][name] = cpus.String();
  }
  for (const auto& [pod, cpus] : state.GetPodCpuAssignments()) {
    cp.pod_entries[pod] = cpus.String();
  }
  return cp;
}

namespace {

memorymanager::Block BlockFrom(const checkpoint::MemoryBlock& b) {
  memorymanager::Block out;
  out.numa_affinity = b.numa_affinity.value_or(std::vector<int>{});
  out.type = b.type;
  out.size = b.size;
  return out;
}

checkpoint::MemoryBlock BlockTo(const memorymanager::Block& b) {
  checkpoint::MemoryBlock out;
  out.numa_affinity = b.numa_affinity;
  out.type = b.type;
  out.size = b.size;
  return out;
}

}  // namespace

memorymanager::MemoryState MemoryStateFromCheckpoint(const checkpoint::MemoryCheckpoint& cp) {
  memorymanager::MemoryState state;
  for (const auto& [id, node] : cp.machine_state) {
    memorymanager::NumaNodeState s;
    s.number_of_assignments = static_cast<int>(node.number_of_assignments);
    for (const auto& [type, t] : node.memory_map) {
      s.memory_map[type] = memorymanager::MemoryTable{t.total, t.system_reserved, t.allocatable,
                                                      t.reserved, t.free};
    }
    s.cells = node.cells.value_or(std::vector<int>{});
    state.machine_state[id] = std::move(s);
  }
  for (const auto& [pod, containers] : cp.entries) {
    for (const auto& [name, blocks] : containers) {
      std::vector<memorymanager::Block> out;
      for (const auto& b : blocks) out.push_back(BlockFrom(b));
      state.SetMemoryBlocks(pod, name, std::move(out));
    }
  }
  for (const auto& [pod, blocks] : cp.pod_entries) {
    std::vector<memorymanager::Block> out;
    for (const auto& b : blocks) out.push_back(BlockFrom(b));
    state.SetPodMemoryBlocks(pod, std::move(out));
  }
  return state;
}

checkpoint::MemoryCheckpoint MemoryCheckpointFromState(const memorymanager::MemoryState& state,
                                                       const std::string& policy_name) {
  checkpoint::MemoryCheckpoint cp;
  cp.policy_name = policy_name;
  for (const auto& [id, node] : state.machine_state) {
    checkpoint::NumaNodeState s;
    s.number_of_assignments = node.number_of_assignments;
    for (const auto& [type, t] : node.memory_map) {
      s.memory_map[type] =
          checkpoint::MemoryTable{t.total, t.system_reserved, t.allocatable, t.reserved, t.free};
    }
    s.cells = node.cells;
    cp.machine_state[id] = std::move(s);
  }
  for (const auto& [pod, containers] : state.assignments) {
    for (const auto& [name, blocks] : containers) {
      auto& out = cp.entries[pod][name];
      for (const auto& b : blocks) out.push_back(BlockTo(b));
    }
  }
  for (const auto& [pod, blocks] : state.pod_assignments) {
    auto& out = cp.pod_entries[pod];
    for (const auto& b : blocks) out.push_back(BlockTo(b));
  }
  return cp;
}

}  // namespace podtopo
