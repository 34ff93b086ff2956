// The kubelet's CPU manager checkpoint, /var/lib/kubelet/cpu_manager_state, byte-exact.
//
// Formats (spec: checkpoint-checksums.md, cpumanager.md §5, kep5526.md §7.1):
//   V1 (<= 1.17)  {"policyName","defaultCpuSet","entries":{containerID:cpuset},"checksum"}
//   V2 (1.18-1.35, 1.36 gate off)  entries = {podUID:{container:cpuset}}
//   V3 (1.36 gate on)  V2 + "podEntries":{podUID:{"cpuSet":cpuset}} before "checksum"
//   V4 (1.37, PR #139102)  inline V2 fields + "data" (JSON text of {policyName,
//      defaultCpuSet, entries?, podEntries?}) + "dataChecksum" = FNV("(string)"+data)
// Legacy checksums hash the go-spew dump of the struct with the type name
// `CPUManagerCheckpoint` (see checksum.h).
//
// Reading follows kubelet v1.37 (`loadAndMigrateCheckpointV4`; an older kubelet's chain starts
// lower: CpuLoadOptions::newest_format):
//   1. V4: decode the file, then `data`; verify dataChecksum. If that fails while `data` is
//      non-empty or dataChecksum != 0: `could not load v4 checkpoint: <err>` (no fallback).
//   2. V3: verify with the name CPUManagerCheckpointV3, then CPUManagerCheckpoint (0 is NOT
//      accepted).
//   3. V2: checksum 0 accepted; with PodLevelResourceManagers off the name
//      CPUManagerCheckpointV2 is tried first; then CPUManagerCheckpoint.
//   V1 is not read by 1.37: a containerID-keyed `entries` fails to decode as V2, and a V1
//   checksum fails V2 verification; the error then carries a note explaining this.
// Decoding is Go's encoding/json (go_json.h): case-insensitive keys, unknown keys ignored,
// missing entries -> empty map, null -> nil (which changes the checksum).
// Then, as restoreState: policy check, default set and entry cpusets must parse. Every error
// is wrapped exactly as the kubelet does:
//   could not restore state from checkpoint: <err>, please drain this node and delete the
//   CPU manager checkpoint file "<path>" before restarting Kubelet
//
// Writing produces json.Marshal's bytes (compact, struct field order, sorted keys, Go string
// escaping, no trailing newline) with canonical cpuset strings.
// DECISION (V4 inline `checksum`): the merged #139102 checkpoint.go is not available to us;
// its sibling implementation of the same sketch (#139103, same author and day) writes 0
// ("clear checksum from the legacy field ... so it can be read by older kubelets"), and
// kep5526.md §7.1 describes the V4 marshal the same way. 1.37 ignores this field, and every
// older reader accepts both 0 and the V2 legacy checksum (V2 verification accepts 0), so
// kZero is the default and kLegacyV2 is available.
//
// Example:
//   CpuLoadOptions opts{.configured_policy = "static", .pod_level_resource_managers = false};
//   absl::StatusOr<std::optional<CpuCheckpoint>> cp =
//       LoadCpuCheckpointFile("/var/lib/kubelet/cpu_manager_state", opts);
//   ...
//   absl::Status s = WriteCpuCheckpointFile(path, *cp.value(), CpuWriteOptions{});
#ifndef PODTOPO_CHECKPOINT_CPU_STATE_FILE_H_
#define PODTOPO_CHECKPOINT_CPU_STATE_FILE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "checkpoint/kept_fields.h"

namespace podtopo::checkpoint {

// What the kubelet keeps after restoring the CPU manager checkpoint. Cpusets stay strings:
// default_cpu_set and entries as stored in the file (the state layer parses them);
// pod_entries in canonical form (the kubelet parses them while decoding).
struct CpuCheckpoint {
  std::string policy_name;
  std::string default_cpu_set;
  // podUID -> container name -> cpuset.
  std::map<std::string, std::map<std::string, std::string>> entries;
  // podUID -> pod-level cpuset (KEP-5526). Filled only with PodLevelResourceManagers on.
  std::map<std::string, std::string> pod_entries;
  // KEP-5554 baselines (k/k #140314, #140788; a 1.37 kubelet with
  // InPlacePodVerticalScalingExclusiveCPUs writes them into V4 `data`): podUID -> container ->
  // the cpuset the container got at its first admission, as written (not re-printed).
  // `data.baselines` = {"<pod>": {"<container>": {"baseline": "<cpuset>"}}}. podtopo never
  // creates one; it keeps them, and drops one only with the container entry it belongs to.
  std::map<std::string, std::map<std::string, std::string>> baselines;
  // Members podtopo does not model, kept for the next write (kept_fields.h).
  KeptFields kept;
  // Format the state came from: 4, 3 or 2 (3 and 2 were migrated to V4 in memory). 0 for a
  // state that was not read from a file.
  int version_read = 0;

  friend bool operator==(const CpuCheckpoint&, const CpuCheckpoint&) = default;
};

// What the next write of a checkpoint restored as `read` keeps of it: the members podtopo
// does not model, and the baselines of containers that still have an entry in `next` (or had
// none in `read`: podtopo did not touch them). Every podtopo write of a kubelet's file goes
// through this (admission's Save, state repair).
void KeepUnmodelled(const CpuCheckpoint& read, CpuCheckpoint& next);

struct CpuLoadOptions {
  std::string configured_policy = "none";  // the kubelet's --cpu-manager-policy
  bool pod_level_resource_managers = false;  // feature gate PodLevelResourceManagers
  // Where the load chain starts (kubelet/version.h NewestReadCheckpointFormat): 4 = v1.37's
  // V4 -> V3 -> V2; 3 = V3 -> V2 and 2 = V2 alone (1.36 with the gate on / off). A file of a
  // newer format is read as the older one its bytes verify as (a V4 file as its inline V2
  // part), or refused.
  int newest_format = 4;
};

// Decodes and verifies checkpoint bytes with the v1.37 chain and applies restoreState's
// checks. Errors (kFailedPrecondition) carry the kubelet's full wrapped message naming
// `path`.
absl::StatusOr<CpuCheckpoint> RestoreCpuCheckpoint(std::string_view contents,
                                                   const std::string& path,
                                                   const CpuLoadOptions& options);

// Reads `path` and restores it. nullopt when the file does not exist (the kubelet then
// writes a fresh checkpoint). A directory or unreadable file is a wrapped restore error.
absl::StatusOr<std::optional<CpuCheckpoint>> LoadCpuCheckpointFile(
    const std::string& path, const CpuLoadOptions& options);

enum class CpuFormat { kV2, kV3, kV4 };
enum class V4InlineChecksum { kZero, kLegacyV2 };

struct CpuWriteOptions {
  CpuFormat format = CpuFormat::kV4;  // 1.37 writes V4
  // Pod entries are written only with the gate on (V3 and V4); V2 never has them.
  bool pod_level_resource_managers = false;
  V4InlineChecksum v4_inline_checksum = V4InlineChecksum::kZero;
};

// The file bytes the kubelet would write for `cp`. Cpusets are re-printed canonically;
// baselines and cp.kept are written as read (V4 only). Errors: kInvalidArgument when a cpuset
// does not parse (names the field); kFailedPrecondition when cp.kept holds fields podtopo
// cannot keep (ErrorIfUnkept).
absl::StatusOr<std::string> MarshalCpuCheckpoint(const CpuCheckpoint& cp,
                                                 const CpuWriteOptions& options);

// MarshalCpuCheckpoint, then WriteFileAtomically(path, bytes, 0600) (the kubelet's file
// store creates its files 0600). On any error the existing file is left unchanged.
absl::Status WriteCpuCheckpointFile(const std::string& path, const CpuCheckpoint& cp,
                                    const CpuWriteOptions& options);

// ---- Checksum building blocks (exposed for tests and tools). -------------------------
// Spew dumps with Checksum 0 and the given type name (e.g. "CPUManagerCheckpoint"); maps
// are non-nil. V3 parses the pod entry cpusets (error if one does not parse).
std::string SpewCpuV1(std::string_view type_name, std::string_view policy_name,
                      std::string_view default_cpu_set,
                      const std::map<std::string, std::string>& entries);
std::string SpewCpuV2(std::string_view type_name, const CpuCheckpoint& cp);
absl::StatusOr<std::string> SpewCpuV3(std::string_view type_name, const CpuCheckpoint& cp);

// The JSON text of `data` that V4 writes for `cp` (pod entries included only when
// `with_pod_entries`; baselines after them; the kept data members where they were).
absl::StatusOr<std::string> MarshalCpuCheckpointData(const CpuCheckpoint& cp,
                                                     bool with_pod_entries);

// ---- Inspection (podtopo state check / repair). ----------------------------------------
// How a checkpoint's bytes fare in the kubelet's load chain, independent of the configured
// policy: which format's checks they pass and with which checksum algorithm.
struct ChecksumReport {
  // The format that loads, in the v1.37 order (CPU: 4, 3, 2; memory: 3, 2, 1). For CPU, 1
  // means a verifiable V1 file, which v1.37 does NOT load (error is then set too). 0 = none.
  int version = 0;
  std::string policy_name;  // the policyName of the format that loaded ("" when none)
  // How the checksum verified (or, on failure, what each format expected), in words:
  // "V4: dataChecksum 657950972 = FNV-1a-32 of \"(string)\"+data (inline checksum 0 not verified)".
  std::string algorithm;
  // The kubelet's unwrapped load error ("checkpoint is corrupted", a JSON error, "could not
  // load v4 checkpoint: ..."); OK when the chain loads.
  absl::Status error;
};

// The load chain of RestoreCpuCheckpoint without restoreState's checks.
ChecksumReport InspectCpuCheckpoint(std::string_view contents, bool pod_level_resource_managers);

// A V1 checkpoint (kubelet <= 1.17): entries are keyed by container ID.
struct CpuCheckpointV1 {
  std::string policy_name;
  std::string default_cpu_set;
  std::map<std::string, std::string> entries;  // container ID -> cpuset
  uint64_t checksum = 0;
};

// Decodes `contents` as V1 and verifies its checksum as the <= 1.35 kubelets did (0 accepted).
// Errors (kInvalidArgument): the JSON error, or "checkpoint is corrupted".
absl::StatusOr<CpuCheckpointV1> DecodeCpuCheckpointV1(std::string_view contents);

}  // namespace podtopo::checkpoint

#endif  // PODTOPO_CHECKPOINT_CPU_STATE_FILE_H_
