// The kubelet's memory manager checkpoint, /var/lib/kubelet/memory_manager_state, byte-exact.
//
// Formats (spec: checkpoint-checksums.md, topology-memory-podresources.md §B.2/§B.9,
// kep5526.md §7.2):
//   V1 (<= 1.35, 1.36 gate off) {"policyName","machineState":{"<numa>":{"numberOfAssignments",
//      "memoryMap":{"<resource>":{"total","systemReserved","allocatable","reserved","free"}},
//      "cells":[...]}},"entries":{pod:{container:[{"numaAffinity","type","size"}]}},"checksum"}
//   V2 (1.36 gate on)  V1 + "podEntries":{pod:{"memoryBlocks":[...]}} before "checksum"
//   V3 (1.37, PR #139626)  inline V1 (with its legacy checksum) + "data" (JSON text of
//      {policyName, machineState, entries?, podEntries?}) + "dataChecksum"
// machineState keys are NUMA ids: JSON sorts them as strings ("10" < "2"), spew numerically.
//
// Reading follows kubelet v1.37 (`loadAndMigrateCheckpointV3`; an older kubelet's chain starts
// lower: MemoryLoadOptions::newest_format): V3 (verify dataChecksum;
// if that fails while `data` is non-empty or dataChecksum != 0: `could not load v3
// checkpoint: <err>`, no fallback) -> V2 (no zero checksum) -> V1 (checksum 0 accepted).
// Legacy checksums hash the spew dump with the name `MemoryManagerCheckpoint`. Then
// restoreState: `[memorymanager] configured policy %q differs from state checkpoint policy
// %q`. Errors are wrapped as the kubelet does:
//   could not restore state from checkpoint: <err>, please drain this node and delete the
//   memory manager checkpoint file "<path>" before restarting Kubelet
//
// nil vs empty: the checksum sees Go's nil (`<nil>`) and empty (`[]`, `map[]`) values
// differently; the reader decodes them exactly. The restored MemoryCheckpoint is what the
// kubelet's state holds after SetMachineState/SetMemoryAssignments (which clone): nil maps
// and block lists become empty and nil `cells` become [] (NUMANodeMap.Clone appends to
// []int{}), while a nil `numaAffinity` stays nil (Block values are copied as is). Writers
// compute every checksum over exactly what a reader will decode from the bytes written
// (omitted omitempty maps decode as empty maps, an omitted memoryBlocks as nil), so the
// files always verify; the kubelet itself would write an unverifiable V2 file for a pod
// entry holding an empty non-nil block list.
//
// Deliberate deviations (the kubelet would restore these and fail or crash later): a null
// NUMA node state or memory table, and NUMA ids / cells / affinities outside the int32
// range, are restore errors here.
//
// Example:
//   MemoryLoadOptions opts{.configured_policy = "Static"};
//   absl::StatusOr<std::optional<MemoryCheckpoint>> cp =
//       LoadMemoryCheckpointFile("/var/lib/kubelet/memory_manager_state", opts);
//   absl::Status s = WriteMemoryCheckpointFile(path, **cp, MemoryWriteOptions{});
#ifndef PODTOPO_CHECKPOINT_MEMORY_STATE_FILE_H_
#define PODTOPO_CHECKPOINT_MEMORY_STATE_FILE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "checkpoint/cpu_state_file.h"

namespace podtopo::checkpoint {

// state.MemoryTable (bytes).
struct MemoryTable {
  uint64_t total = 0;  // TotalMemSize, JSON "total"
  uint64_t system_reserved = 0;
  uint64_t allocatable = 0;
  uint64_t reserved = 0;
  uint64_t free = 0;

  friend bool operator==(const MemoryTable&, const MemoryTable&) = default;
};

// state.NUMANodeState.
struct NumaNodeState {
  int64_t number_of_assignments = 0;
  // Resource name ("memory", "hugepages-2Mi", ...) -> table.
  std::map<std::string, MemoryTable> memory_map;
  // nullopt = Go nil (JSON null). The kubelet's state never holds nil cells.
  std::optional<std::vector<int>> cells;

  friend bool operator==(const NumaNodeState&, const NumaNodeState&) = default;
};

// state.Block.
struct MemoryBlock {
  std::optional<std::vector<int>> numa_affinity;  // nullopt = Go nil (JSON null)
  std::string type;                               // v1.ResourceName
  uint64_t size = 0;

  friend bool operator==(const MemoryBlock&, const MemoryBlock&) = default;
};

struct MemoryCheckpoint {
  std::string policy_name;
  std::map<int, NumaNodeState> machine_state;  // NUMA id -> state
  // podUID -> container -> blocks.
  std::map<std::string, std::map<std::string, std::vector<MemoryBlock>>> entries;
  // podUID -> pod-level blocks (KEP-5526). Filled only with PodLevelResourceManagers on.
  std::map<std::string, std::vector<MemoryBlock>> pod_entries;
  // Members podtopo does not model, kept for the next write (kept_fields.h).
  KeptFields kept;
  // Format the state came from: 3, 2 or 1; 0 when not read from a file.
  int version_read = 0;

  friend bool operator==(const MemoryCheckpoint&, const MemoryCheckpoint&) = default;
};

// What the next write of a checkpoint restored as `read` keeps of it (the members podtopo
// does not model); see the CPU overload.
void KeepUnmodelled(const MemoryCheckpoint& read, MemoryCheckpoint& next);

struct MemoryLoadOptions {
  std::string configured_policy = "None";  // --memory-manager-policy
  bool pod_level_resource_managers = false;
  // Where the load chain starts: 3 = v1.37's V3 -> V2 -> V1; 2 = V2 -> V1 and 1 = V1 alone
  // (1.36 with the gate on / off). A V3 file is then read as its inline V1 part.
  int newest_format = 3;
};

// Decodes and verifies checkpoint bytes with the v1.37 chain, then restoreState's policy
// check. Errors (kFailedPrecondition) carry the kubelet's wrapped message naming `path`.
absl::StatusOr<MemoryCheckpoint> RestoreMemoryCheckpoint(std::string_view contents,
                                                         const std::string& path,
                                                         const MemoryLoadOptions& options);

// Reads `path` and restores it; nullopt when the file does not exist.
absl::StatusOr<std::optional<MemoryCheckpoint>> LoadMemoryCheckpointFile(
    const std::string& path, const MemoryLoadOptions& options);

enum class MemoryFormat { kV1, kV2, kV3 };

struct MemoryWriteOptions {
  MemoryFormat format = MemoryFormat::kV3;  // 1.37 writes V3
  bool pod_level_resource_managers = false;  // pod entries written only with the gate (V2, V3)
};

// The bytes the kubelet would write for `cp` (json.Marshal; no trailing newline); V3 writes
// cp.kept's members where they were. kFailedPrecondition when cp.kept holds fields podtopo
// cannot keep (ErrorIfUnkept).
absl::StatusOr<std::string> MarshalMemoryCheckpoint(const MemoryCheckpoint& cp,
                                                    const MemoryWriteOptions& options);

// MarshalMemoryCheckpoint, then WriteFileAtomically(path, bytes, 0600).
absl::Status WriteMemoryCheckpointFile(const std::string& path, const MemoryCheckpoint& cp,
                                       const MemoryWriteOptions& options);

// ---- Checksum building blocks (exposed for tests and tools). -------------------------
// Spew dumps with Checksum 0 and the given type name, as a reader would see the JSON that
// Marshal writes for `cp` (V2 includes cp.pod_entries).
std::string SpewMemoryV1(std::string_view type_name, const MemoryCheckpoint& cp);
std::string SpewMemoryV2(std::string_view type_name, const MemoryCheckpoint& cp);

// The JSON text of V3's `data` for `cp`.
std::string MarshalMemoryCheckpointData(const MemoryCheckpoint& cp, bool with_pod_entries);

// ---- Inspection (podtopo state check / repair). ----------------------------------------
// The load chain of RestoreMemoryCheckpoint without restoreState's policy check
// (ChecksumReport is declared in cpu_state_file.h; version is 3, 2 or 1, 0 when none loads).
ChecksumReport InspectMemoryCheckpoint(std::string_view contents);

}  // namespace podtopo::checkpoint

#endif  // PODTOPO_CHECKPOINT_MEMORY_STATE_FILE_H_
