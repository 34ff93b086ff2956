// The kubelet's resource-manager checkpoints on a real node (/var/lib/kubelet/
// cpu_manager_state and memory_manager_state): check them as the kubelet does at start,
// show them, and plan and apply a repair (`podtopo state check|show|repair`).
//
// Check runs, for each file, what the configuration's kubelet version (default: the newest
// released) runs when it starts:
//   1. the load chain (1.37: CPU V4 -> V3 -> V2; memory V3 -> V2 -> V1), with the checksum
//      algorithm of the format on disk (checkpoint/Inspect*Checkpoint), and how that version
//      reads the format (kubelet::ReadCheckpointFormat): fully, through the inline legacy part
//      of a newer format (a downgrade to 1.36: the pod-level entries are dropped, finding
//      `pod-entries-dropped`, k/k #139102 / #139626), or not at all (`format-not-read`);
//   2. restoreState: the configured policy against the file's policyName, cpusets parse;
//   3. the policy's Start / validateState (cpumanager::StaticPolicy::Start and
//      memorymanager::StaticPolicy::Start): reserved CPUs in the default set, assignments
//      disjoint from it, every online CPU accounted for; the memory machine state equal to the
//      default state plus every assignment (pod-level pods by their pod blocks);
// and adds what the kubelet does not check but that hurts later: pod-level entries without
// container entries (k/k #141993), pods that no longer run (given --running-pods), exclusive
// CPUs held by two pods. Each Finding carries the kubelet's exact error text (so it can be
// searched), what the kubelet does, and what is safe to do.
//
// PlanRepair computes corrected checkpoints from a CheckReport: policy switch (none <-> static,
// None <-> Static: bottlerocket#1465), CPUs that changed after a reboot (k/k #110478; the
// current CPUs come from the node), memory capacity drift (k/k #131253; the machine state is
// rebuilt from the node and the assignments), stale pods (entries of pods not in the running
// list), V1 CPU checkpoints (migrated with the container list), and incomplete pod-level
// entries. Every planned file is checked again before it may be written; what cannot be fixed
// is listed as unresolved. ApplyRepair first keeps a byte-identical backup of each original
// (`<file>.podtopo-backup-<UTC timestamp>`, never overwriting one), then writes the new
// checkpoint atomically in the formats the configured kubelet version writes (1.36: CPU V3 / V2 and
// memory V2 / V1 with PodLevelResourceManagers on / off; 1.37 and later: CPU V4, memory V3).
//
// A podtopo state dir (`podtopo admit --state-dir`) also holds podtopo's record of admitted
// pods (admission/pod_record.h, `podtopo_pods.json`). The checkpoints are the truth about
// what each pod holds and the record says which pods are on the node; the two must agree, or
// the next `podtopo show|admit` would admit the dropped pods again. So a repair that drops
// pods (not running) drops them from the record too, written first with its own backup: a
// stop between the record and the checkpoints leaves only stale checkpoint entries, which
// podtopo releases at its next start (docs/state.md "One truth").
//
// Example:
//   Environment env{LoadNode("sysfs:/sys").value(), config::SeedDefault()};
//   absl::StatusOr<CheckReport> r = Check("/var/lib/kubelet", env, nullptr);
//   r->KubeletStarts();
//   absl::StatusOr<RepairPlan> plan = PlanRepair(*r, env, &running);
//   ApplyRepair(*r, *plan, "20261130T154500Z");
#ifndef PODTOPO_STATE_KUBELET_STATE_H_
#define PODTOPO_STATE_KUBELET_STATE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/cpu_state_file.h"
#include "checkpoint/memory_state_file.h"
#include "config/kubelet_config.h"
#include "cpuset/cpuset.h"
#include "state/running_pods.h"
#include "topology/node_topology.h"

namespace podtopo::state {

// What the kubelet starts with: the node's hardware and its configuration.
struct Environment {
  NodeTopology topology;
  config::KubeletConfig config;
};

enum class Severity {
  kFatal,    // the kubelet refuses to start
  kWarning,  // the kubelet starts, but the state is wrong or will hurt
  kInfo,
};
const char* SeverityName(Severity s);  // "fatal", "warning", "info"

struct Finding {
  Severity severity = Severity::kInfo;
  std::string file;     // "cpu_manager_state" or "memory_manager_state"
  std::string problem;  // stable id, e.g. "policy-mismatch", "cpu-set-changed"
  std::string message;  // what is wrong, in words
  std::vector<std::string> details;
  std::string kubelet_message;  // the kubelet's exact error text ("" when it says nothing)
  std::string effect;           // what the kubelet does
  std::string advice;           // what is safe to do
  bool repairable = false;      // PlanRepair fixes it
};

struct FileStatus {
  std::string name;  // "cpu_manager_state"
  std::string path;
  bool exists = false;
  bool read_ok = false;
  std::string bytes;        // the original, as read
  int version = 0;          // format that loads (CPU 1 = V1, unreadable by 1.37)
  std::string policy_name;  // the file's policyName
  std::string checksum;     // how the checksum verified (ChecksumReport::algorithm)
  // The format the configured kubelet version reads it as (kubelet::ReadCheckpointFormat):
  // `version` when it reads it fully, lower through the inline legacy part (a downgrade),
  // 0 when it does not read it.
  int read_as = 0;
  // Pods whose pod-level entries that read drops (UIDs, sorted).
  std::vector<std::string> pod_entries_dropped;
};

// The capacity of one NUMA node's memory type as the checkpoint's machine state records it and
// as this node has it now. After a reboot the kernel reports a few KiB (one node) to tens of MiB
// (several nodes) more or less per NUMA node (k/k #131253), and every released kubelet's
// memory manager then refuses to start: validateState compares TotalMemSize exactly.
struct MemoryDrift {
  int numa_node = 0;
  std::string type;            // "memory", "hugepages-2Mi", ...
  uint64_t checkpoint_bytes = 0;  // TotalMemSize in the checkpoint's machine state
  uint64_t node_bytes = 0;        // TotalMemSize this node has now (--node)
  int64_t Delta() const {
    return static_cast<int64_t>(node_bytes) - static_cast<int64_t>(checkpoint_bytes);
  }
};

struct CheckReport {
  std::string kubelet_dir;
  FileStatus cpu_file;
  FileStatus memory_file;
  // podtopo's record (`podtopo_pods.json`), when the directory is a podtopo state dir: read
  // for the repair only (version 0; the kubelet never reads it).
  FileStatus record_file;
  // The decoded contents whatever their policy (nullopt when missing or not decodable).
  std::optional<checkpoint::CpuCheckpoint> cpu;
  std::optional<checkpoint::CpuCheckpointV1> cpu_v1;
  std::optional<checkpoint::MemoryCheckpoint> memory;
  // From the node and the configuration (static policy only).
  CpuSet node_cpus;
  CpuSet reserved_cpus;
  std::vector<Finding> findings;
  // Static memory policy: every NUMA node and memory type whose total differs between the
  // checkpoint's machine state and this node (empty when they agree). The memory manager's
  // finding is then `memory-capacity-drift`.
  std::vector<MemoryDrift> memory_drift;
  // The pods a restart of the configured kubelet version allocates again, read from the
  // checkpoints alone (no pod specs), as (pod uid, upstream issue), sorted: with
  // PodLevelResourceManagers on, every pod with a pod-level CPU entry under a version without
  // k/k #141041 ("k/k#140989"), and every pod with pod-level memory blocks under a version
  // without #141077 ("k/k#140906"). Each is also a `restart-reallocates-pod` warning.
  // `podtopo state restart` predicts where they go; the agent exports them
  // (podtopo_restart_pod_at_risk).
  std::vector<std::pair<std::string, std::string>> restart_at_risk;

  bool KubeletStarts() const;  // no fatal finding
  bool HasWarnings() const;
};

// Checks both checkpoints of `kubelet_dir`. `running` (optional) enables the stale-pod check.
// Errors (bad input, not findings): the configuration is invalid for the node (the kubelet's
// configuration texts), or `kubelet_dir` is not a directory.
absl::StatusOr<CheckReport> Check(const std::string& kubelet_dir, const Environment& env,
                                  const RunningPods* running);

struct RepairPlan {
  std::vector<std::string> steps;       // what changes, in order, in words
  std::vector<std::string> unresolved;  // problems the repair cannot fix, with advice
  std::vector<std::string> restart_pods;  // pods whose pinned CPUs/memory change
  std::optional<std::string> cpu_bytes;     // the new cpu_manager_state (nullopt = unchanged)
  std::optional<std::string> memory_bytes;  // the new memory_manager_state
  std::optional<std::string> record_bytes;  // the new podtopo_pods.json (the pods dropped)
  std::optional<checkpoint::CpuCheckpoint> cpu;
  std::optional<checkpoint::MemoryCheckpoint> memory;

  bool HasChanges() const {
    return cpu_bytes.has_value() || memory_bytes.has_value() || record_bytes.has_value();
  }
};

// Plans the repair of what `report` found. Errors: the configuration is invalid for the node.
absl::StatusOr<RepairPlan> PlanRepair(const CheckReport& report, const Environment& env,
                                      const RunningPods* running);

struct RepairResult {
  std::vector<std::string> backups;  // backup paths, one per rewritten file
  std::vector<std::string> written;  // rewritten checkpoint paths
};

// Writes the plan, podtopo's record first: for each changed file, first a byte-identical backup
// `<path>.podtopo-backup-<timestamp>` (a numbered suffix is added when that name exists; an
// existing backup is never overwritten), verified by reading it back, then the new bytes with
// WriteFileAtomically (0600). Errors (nothing of that file is changed): the file changed since
// `report` read it, the backup or the write failed. A file written before an error stays
// written (its backup exists).
absl::StatusOr<RepairResult> ApplyRepair(const CheckReport& report, const RepairPlan& plan,
                                         const std::string& timestamp);

// The current UTC time as "20261130T154500Z".
std::string UtcTimestamp();

}  // namespace podtopo::state

#endif  // PODTOPO_STATE_KUBELET_STATE_H_
