// The managers' in-memory state <-> the kubelet's checkpoint files.
//
// checkpoint/ reads and writes `cpu_manager_state` and `memory_manager_state` byte for byte as
// the kubelet does, with cpusets as strings; the managers keep parsed CpuSets and blocks. These
// conversions sit between the two, with errors that name the file and the entry.
#ifndef PODTOPO_ADMISSION_STATE_FILES_H_
#define PODTOPO_ADMISSION_STATE_FILES_H_

#include <string>

#include "absl/status/statusor.h"
#include "checkpoint/cpu_state_file.h"
#include "checkpoint/memory_state_file.h"
#include "config/kubelet_config.h"
#include "cpumanager/cpu_state.h"
#include "memorymanager/memory_state.h"

namespace podtopo {

inline constexpr char kCpuManagerStateFile[] = "cpu_manager_state";
inline constexpr char kMemoryManagerStateFile[] = "memory_manager_state";

// How config.kubelet_version reads and writes the checkpoints with config's
// PodLevelResourceManagers gate and policies (kubelet/version.h CheckpointFormats: 1.36 writes
// CPU V3 / memory V2 with the gate on, V2 / V1 with it off, and its load chains start there;
// 1.37 and 1.38 write and start at V4 / V3). No version (podtopo as the allocator): the newest
// formats.
checkpoint::CpuLoadOptions CpuLoadOptionsFor(const config::KubeletConfig& config);
checkpoint::MemoryLoadOptions MemoryLoadOptionsFor(const config::KubeletConfig& config);
checkpoint::CpuWriteOptions CpuWriteOptionsFor(const config::KubeletConfig& config);
checkpoint::MemoryWriteOptions MemoryWriteOptionsFor(const config::KubeletConfig& config);

// Parses every cpuset of the checkpoint; errors use the kubelet's texts
// (`could not parse default cpu set "<s>": <err>`, ...), prefixed with `path`.
absl::StatusOr<cpumanager::CpuState> CpuStateFromCheckpoint(const checkpoint::CpuCheckpoint& cp,
                                                            const std::string& path);
checkpoint::CpuCheckpoint CpuCheckpointFromState(const cpumanager::CpuState& state,
                                                 const std::string& policy_name);

memorymanager::MemoryState MemoryStateFromCheckpoint(const checkpoint::MemoryCheckpoint& cp);
checkpoint::MemoryCheckpoint MemoryCheckpointFromState(const memorymanager::MemoryState& state,
                                                       const std::string& policy_name);

}  // namespace podtopo

#endif  // PODTOPO_ADMISSION_STATE_FILES_H_
