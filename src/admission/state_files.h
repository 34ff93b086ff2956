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
#include "cpumanager/cpu_state.h"
#include "memorymanager/memory_state.h"

namespace podtopo {

inline constexpr char kCpuManagerStateFile[] = "cpu_manager_state";
inline constexpr char kMemoryManagerStateFile[] = "memory_manager_state";

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
