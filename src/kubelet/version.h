// Kubelet versions as data: what each released kubelet decides differently.
//
// podtopo predicts the kubelet a node runs, version by version. Everything that differs between
// versions lives in one table (version.cc), one entry per version:
//   - its feature gates, as changes against the v1.37 table (config/feature_gates.h): a gate's
//     stage, default and lock, and the gates it does not know;
//   - its Behavior: one flag per decision that differs (the restart re-admission paths,
//     k/k #139456, #140730, #140766, #141196, ...). Each flag is read by exactly one place in the
//     managers; nothing else asks which version runs;
//   - the checkpoint formats it writes and reads (CPU V2/V3/V4, memory V1/V2/V3).
// A default-constructed Behavior is the fixed behaviour: what podtopo does where it is the
// allocator (`serve --cri`, `nri`), and what the library does when no version is named.
//
// The sources of every entry, and where the evidence is thin, are in docs/differences.md
// ("Kubelet versions") and beside the entries in version.cc.
//
// Example:
//   absl::StatusOr<const KubeletVersion*> v = ParseKubeletVersion("1.37.0");
//   (*v)->behavior.cpu_restore_keeps_pod_cpus;   // false: k/k #140989 (fixed by #141041)
//   FixedIn(&Behavior::cpu_restore_keeps_pod_cpus);   // "1.38"
//   DefaultKubeletVersion().name;                 // the newest released version
//
// Thread safety: the table is constant.
#ifndef PODTOPO_KUBELET_VERSION_H_
#define PODTOPO_KUBELET_VERSION_H_

#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace podtopo::kubelet {

enum class GateStage { kAlpha, kBeta, kGA, kDeprecated };
const char* GateStageName(GateStage stage);  // "Alpha", "Beta", "GA", "Deprecated"

// One feature gate as a kubelet version registers it.
struct FeatureGateSpec {
  std::string_view name;
  bool default_value;
  GateStage stage;
  bool locked;  // LockToDefault: setting the other value is an error
};

// The decisions that differ between kubelet versions. true = the fixed behaviour.
struct Behavior {
  // --- at a kubelet restart, when a restored pod-level pod is admitted again ---
  // k/k #141041 (fixes #140989). false: GetPodTopologyHints checks each container's restored
  // cpuset against its own exclusive request (a pod-shared-pool container fails it: no hint),
  // and AllocatePod allocates a new bubble from the default set as for a new pod, so the pod is
  // rejected ("not enough cpus available to satisfy request: requested=2, available=1") or
  // moved, and its old CPUs leak (in no entry and not in the default set).
  bool cpu_restore_keeps_pod_cpus = true;
  // k/k #141077 (fixes #140906). false: AllocatePod of a restored pod-level pod reserves its
  // memory again on top of the restored reservation: the pod is charged twice, rejected when
  // the NUMA nodes cannot hold it twice, or moved.
  bool memory_restore_keeps_pod_blocks = true;
  // k/k #141070 (fixes #141069). false: the pod-scope restart hints compare each container's
  // restored blocks with the whole pod's request; a pod of more than one container with memory
  // gets no hint, which restricted and single-numa-node reject.
  bool memory_pod_restore_hints_from_pod_blocks = true;

  // --- at admission ---
  // k/k #139456. false: distribute-cpus-across-numa's aligned call ignores how many NUMA nodes
  // the merged hint spans, and may take the CPUs from fewer of them (the affinity shrinks).
  bool distribute_min_numas_from_hint = true;
  // k/k #140730. false: the distributed remainder search lets a NUMA subset through on its raw
  // leftover count and then sweeps it forever when the leftovers are not whole groups: the
  // kubelet hangs in admission (full-pcpus-only with distribute-cpus-across-numa).
  bool distribute_remainder_whole_groups = true;
  // k/k #141238 (fixes #141237). false: the distributed search keeps its best NUMA combination
  // and remainder subset as Go slices that later combinations overwrite (iterateCombinations
  // reuses their backing array): with 4 or more of 5 or more NUMA nodes the CPUs come from
  // another set than the one scored best, across sockets with align-by-socket though one
  // socket would do, or the take fails with "accounting error".
  bool distribute_keeps_best_numa_combination = true;
  // k/k #140766 (fixes #140688). false: distribute-cpus-across-cores lists each socket's free
  // CPUs in CPU id order, so where sibling threads have adjacent ids (0/1, not 0/36) it takes
  // both threads of a core before the next core. true: one CPU of each core in turn.
  bool distribute_across_cores_by_core_topology = true;
  // k/k #141196 (proposed fix #141197, not merged). false: with strict-cpu-reservation the
  // kubelet admits a pod that empties the default cpuset, and then refuses its own checkpoint
  // at the next start ("default cpuset cannot be empty"). true: such an allocation is refused.
  bool strict_reservation_keeps_default_set = true;

  // The same with the restart fields fixed: a kubelet that never stops (podtopo's state dir
  // between two commands) admits its pods the same, and only a restart re-admits them.
  Behavior WithoutRestart() const {
    Behavior b = *this;
    b.cpu_restore_keeps_pod_cpus = true;
    b.memory_restore_keeps_pod_blocks = true;
    b.memory_pod_restore_hints_from_pod_blocks = true;
    return b;
  }

  friend bool operator==(const Behavior&, const Behavior&) = default;
};

// The checkpoint formats a version writes and reads (checkpoint/, docs/state.md). A format is
// its number: CPU V2, V3, V4 (cpu_manager_state), memory V1, V2, V3 (memory_manager_state).
// A version's load chain tries its newest format first and falls back to the older ones
// (1.37: CPU V4 -> V3 -> V2, memory V3 -> V2 -> V1); a file of a newer format than the chain
// starts with is read as whatever older format its bytes verify as (ReadCheckpointFormat).
struct CheckpointFormats {
  int cpu_write_gate_off = 4;         // cpu_manager_state with PodLevelResourceManagers off
  int cpu_write_gate_on = 4;          // ... and on
  int cpu_read_newest_gate_off = 4;   // where its CPU load chain starts, gate off
  int cpu_read_newest_gate_on = 4;    // ... and on
  int memory_write_gate_off = 3;      // memory_manager_state
  int memory_write_gate_on = 3;
  int memory_read_newest_gate_off = 3;
  int memory_read_newest_gate_on = 3;
};

struct KubeletVersion {
  std::string_view name;     // what --kubelet-version takes: "1.36", "1.37.0", "1.37", "1.38"
  std::string_view release;  // "v1.37.0 (2026-08-26)", "v1.37.x: newest patch", ...
  bool released = true;
  // Gate changes against the v1.37 table (config/feature_gates.h), and gates it does not know.
  std::span<const FeatureGateSpec> gate_changes;
  std::span<const std::string_view> unknown_gates;
  Behavior behavior;
  CheckpointFormats checkpoints;
};

// What podtopo follows where it is the allocator (`serve --cri`, `nri`): Behavior{}.
inline constexpr char kAllocatorBehavior[] =
    "podtopo as the allocator: kubelet 1.38's decisions with every merged fix, and "
    "strict-cpu-reservation never empties the default cpuset (k/k #141196)";

// Every version, oldest first.
std::span<const KubeletVersion> KubeletVersions();
// "1.37.0" or "v1.37.0"; nullptr when podtopo does not know the version.
const KubeletVersion* FindKubeletVersion(std::string_view name);
// FindKubeletVersion, or kInvalidArgument
//   unknown kubelet version "1.39": podtopo knows 1.36, 1.37.0, 1.37, 1.38
absl::StatusOr<const KubeletVersion*> ParseKubeletVersion(std::string_view name);
// The newest released version: what every command predicts when --kubelet-version is not given.
const KubeletVersion& DefaultKubeletVersion();
// "1.36, 1.37.0, 1.37, 1.38".
std::string KnownKubeletVersions();

enum class CheckpointFile { kCpu, kMemory };  // cpu_manager_state, memory_manager_state
const char* CheckpointFileName(CheckpointFile file);  // "cpu_manager_state", ...

// The format `version` writes, and the newest its load chain reads, with the gate
// PodLevelResourceManagers on or off.
int WrittenCheckpointFormat(const KubeletVersion& version, CheckpointFile file, bool gate_on);
int NewestReadCheckpointFormat(const KubeletVersion& version, CheckpointFile file, bool gate_on);

// How a kubelet reads a checkpoint file of a given format (upgrades and downgrades).
enum class ReadMode {
  kFull,        // a format its chain knows: every entry it keeps with this gate is read
  kLegacyPart,  // a newer format, read through the older format embedded inline (CPU V4
                // embeds V2: k/k #139102; memory V3 embeds V1: k/k #139626); the pod-level
                // entries exist only in the newer part and are dropped
  kRefused,     // the kubelet does not start: "could not restore state from checkpoint: ..."
};
const char* ReadModeName(ReadMode mode);  // "full", "legacy-part", "refused"

struct CheckpointRead {
  ReadMode mode = ReadMode::kFull;
  int format_read = 0;           // the format it reads the file as (0 when refused)
  std::string_view upstream;     // kLegacyPart: the PR that embedded the legacy part
  std::string_view kubelet_error;  // kRefused: the kubelet's unwrapped load error
};

// How `version` (gate on or off) reads a `file` written in `format` (CPU 2-4, memory 1-3).
// It follows the chains of version.cc's sources: V3 verification accepts no checksum 0, so
// a CPU V4 file (inline checksum 0) fails it and loads as V2; a memory V3 file's inline
// part carries its V1 checksum, which V2 verification refuses and V1 accepts; a CPU V3 or
// memory V2 file does not verify as V2 / V1 ("checkpoint is corrupted"; 1.36's CPU chain
// then also tries V1, whose JSON error a file with container entries reports instead).
// Examples (1.36, gate on): CPU V4 -> {kLegacyPart, 2, "k/k #139102"}; memory V2 -> {kFull, 2}.
//          (1.36, gate off): CPU V3 -> {kRefused, 0, "", "checkpoint is corrupted"}.
CheckpointRead ReadCheckpointFormat(const KubeletVersion& version, CheckpointFile file,
                                    bool gate_on, int format);

// One versioned decision: the upstream change behind a Behavior field.
struct VersionedBehavior {
  bool Behavior::*field;
  std::string_view id;        // stable id: "restart-cpu-pod-reallocated"
  std::string_view issue;     // the upstream issue: "k/k #140989"
  std::string_view fix;       // the fix: "k/k #141041" ("" when none is merged)
  std::string_view summary;   // what the versions without the fix do, in a line
};
std::span<const VersionedBehavior> VersionedBehaviors();
const VersionedBehavior* FindVersionedBehavior(bool Behavior::*field);
// The upstream issue of a versioned behaviour as one token, for JSON, table columns and
// metric labels: "k/k#140989" for "k/k #140989".
std::string IssueTag(const VersionedBehavior& behavior);
std::string IssueTag(bool Behavior::*field);
// The versioned behaviour whose IssueTag is `tag`; nullptr for any other tag.
const VersionedBehavior* FindVersionedBehaviorByTag(std::string_view tag);

// The versions whose Behavior has `field` true, in table order ("1.37, 1.38"), or "none of
// the known versions".
std::string FixedIn(bool Behavior::*field);

// "k/k #140989, fixed by k/k #141041 in 1.38": the issue, the fix and the versions that
// carry it, for messages and explain.
std::string DescribeVersioned(bool Behavior::*field);

}  // namespace podtopo::kubelet

#endif  // PODTOPO_KUBELET_VERSION_H_
