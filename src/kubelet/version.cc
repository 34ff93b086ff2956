#include "kubelet/version.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace podtopo::kubelet {
namespace {

using S = GateStage;

// ---- v1.36 ----
// KEP-5526 alpha (k/k #134768, #137751): PodLevelResourceManagers alpha, off by default.
// #140514's PodLevelResourcesFixDefaulting is a v1.37 gate; DisableCPUQuotaWithExclusiveCPUs
// was deprecated but not yet locked (#139351 locked it in v1.37).
constexpr FeatureGateSpec kGates136[] = {
    {"DisableCPUQuotaWithExclusiveCPUs", true, S::kDeprecated, false},
    {"PodLevelResourceManagers", false, S::kAlpha, false},
};
constexpr std::string_view kUnknown136[] = {"PodLevelResourcesFixDefaulting"};

// ---- v1.38 (release-1.38, due 2026-12-16) ----
// No gate change of the resource managers is evidenced for 1.38; the v1.37 table stands.
// CHANGELOG-1.38.md v1.38.0-alpha.1 ("since v1.37.0") lists #141041, #141070, #140730,
// #139456, #141238 and #140766 under "Bug or Regression"; #141077 (release note NONE) merged
// with them (2026-08).

// 1.36, 1.37.0 and 1.37 decide alike: none of them carries a fix of the Behavior table (their
// sources: the entries below and docs/differences.md).
constexpr Behavior kWithoutThe138Fixes = {
    .cpu_restore_keeps_pod_cpus = false,
    .memory_restore_keeps_pod_blocks = false,
    .memory_pod_restore_hints_from_pod_blocks = false,
    .distribute_min_numas_from_hint = false,
    .distribute_remainder_whole_groups = false,
    .distribute_keeps_best_numa_combination = false,
    .distribute_across_cores_by_core_topology = false,
    .strict_reservation_keeps_default_set = false,
};

// The table. Evidence per value: docs/differences.md "Kubelet versions".
constexpr KubeletVersion kVersions[] = {
    {
        .name = "1.36",
        .release = "v1.36.x (newest patch)",
        .released = true,
        .gate_changes = kGates136,
        .unknown_gates = kUnknown136,
        .behavior = kWithoutThe138Fixes,
        // #137751: V3 / V2 with the gate on, the legacy V2 / V1 with it off; its load chain
        // starts at V3 / V2 with the gate on (then V2 -> V1), at V2 / V1 with it off
        // (cpumanager and memorymanager state_checkpoint.go restoreState, 1.36 era).
        .checkpoints = {.cpu_write_gate_off = 2,
                        .cpu_write_gate_on = 3,
                        .cpu_read_newest_gate_off = 2,
                        .cpu_read_newest_gate_on = 3,
                        .memory_write_gate_off = 1,
                        .memory_write_gate_on = 2,
                        .memory_read_newest_gate_off = 1,
                        .memory_read_newest_gate_on = 2},
    },
    {
        .name = "1.37.0",
        .release = "v1.37.0",
        .released = true,
        .gate_changes = {},
        .unknown_gates = {},
        .behavior = kWithoutThe138Fixes,
        .checkpoints = {},
    },
    {
        // No cherry-pick of #141041, #141077, #141070, #139456, #140730, #141238 or #140766 into
        // release-1.37 is found; the 1.37 restart bugs were answered by #141209 (gate off by
        // default) instead of a 1.37.1 fix (#140989 thread, 2026-08-05). The reading the
        // evidence favours: the newest 1.37 patch decides as 1.37.0 (docs/differences.md,
        // "thin").
        .name = "1.37",
        .release = "v1.37.x (newest patch)",
        .released = true,
        .gate_changes = {},
        .unknown_gates = {},
        .behavior = kWithoutThe138Fixes,
        .checkpoints = {},
    },
    {
        .name = "1.38",
        .release = "v1.38 (release-1.38; due 2026-12-16)",
        .released = false,
        .gate_changes = {},
        .unknown_gates = {},
        .behavior =
            {
                .cpu_restore_keeps_pod_cpus = true,
                .memory_restore_keeps_pod_blocks = true,
                .memory_pod_restore_hints_from_pod_blocks = true,
                .distribute_min_numas_from_hint = true,
                .distribute_remainder_whole_groups = true,
                .distribute_keeps_best_numa_combination = true,
                .distribute_across_cores_by_core_topology = true,
                .strict_reservation_keeps_default_set = false,
            },
        .checkpoints = {},
    },
};

constexpr VersionedBehavior kBehaviors[] = {
    {&Behavior::cpu_restore_keeps_pod_cpus, "restart-cpu-pod-reallocated", "k/k #140989",
     "k/k #141041",
     "a restored pod-level pod is allocated a new CPU bubble at restart: rejected, or moved "
     "with its old CPUs leaked"},
    {&Behavior::memory_restore_keeps_pod_blocks, "restart-memory-pod-charged-twice",
     "k/k #140906", "k/k #141077",
     "a restored pod-level pod's memory is reserved again at restart: charged twice, rejected "
     "or moved"},
    {&Behavior::memory_pod_restore_hints_from_pod_blocks, "restart-memory-pod-hint-lost",
     "k/k #141069", "k/k #141070",
     "a restored pod-level pod of several containers with memory gets no memory hint at "
     "restart: restricted and single-numa-node reject it"},
    {&Behavior::distribute_min_numas_from_hint, "distribute-shrinks-affinity", "k/k #139430",
     "k/k #139456",
     "distribute-cpus-across-numa may take a multi-NUMA hint's CPUs from fewer NUMA nodes"},
    {&Behavior::distribute_remainder_whole_groups, "distribute-remainder-hang", "k/k #140730",
     "k/k #140730",
     "full-pcpus-only with distribute-cpus-across-numa hangs in admission when the per-NUMA "
     "leftovers are not whole cores"},
    {&Behavior::distribute_keeps_best_numa_combination, "distribute-best-combination-overwritten",
     "k/k #141237", "k/k #141238",
     "distribute-cpus-across-numa may take the CPUs from another NUMA set than the one it scored "
     "best (across sockets with align-by-socket)"},
    {&Behavior::distribute_across_cores_by_core_topology, "distribute-cores-by-cpu-id",
     "k/k #140688", "k/k #140766",
     "distribute-cpus-across-cores takes CPUs in id order: both threads of a core first where "
     "siblings have adjacent ids"},
    {&Behavior::strict_reservation_keeps_default_set, "strict-reservation-empty-default",
     "k/k #141196", "",
     "strict-cpu-reservation admits a pod that empties the default cpuset; the next start "
     "fails with \"default cpuset cannot be empty\""},
};

}  // namespace

const char* CheckpointFileName(CheckpointFile file) {
  return file == CheckpointFile::kCpu ? "cpu_manager_state" : "memory_manager_state";
}

int WrittenCheckpointFormat(const KubeletVersion& version, CheckpointFile file, bool gate_on) {
  const CheckpointFormats& f = version.checkpoints;
  if (file == CheckpointFile::kCpu) return gate_on ? f.cpu_write_gate_on : f.cpu_write_gate_off;
  return gate_on ? f.memory_write_gate_on : f.memory_write_gate_off;
}

int NewestReadCheckpointFormat(const KubeletVersion& version, CheckpointFile file,
                               bool gate_on) {
  const CheckpointFormats& f = version.checkpoints;
  if (file == CheckpointFile::kCpu) {
    return gate_on ? f.cpu_read_newest_gate_on : f.cpu_read_newest_gate_off;
  }
  return gate_on ? f.memory_read_newest_gate_on : f.memory_read_newest_gate_off;
}

const char* ReadModeName(ReadMode mode) {
  switch (mode) {
    case ReadMode::kFull: return "full";
    case ReadMode::kLegacyPart: return "legacy-part";
    case ReadMode::kRefused: return "refused";
  }
  return "?";
}

CheckpointRead ReadCheckpointFormat(const KubeletVersion& version, CheckpointFile file,
                                    bool gate_on, int format) {
  const int newest = NewestReadCheckpointFormat(version, file, gate_on);
  if (format <= newest) return {ReadMode::kFull, format, "", ""};
  // The generalized formats embed the oldest format every chain still reads, with a checksum
  // that format accepts (CPU V4: V2 fields, checksum 0; memory V3: V1 fields and checksum).
  const bool cpu = file == CheckpointFile::kCpu;
  const int generalized = cpu ? 4 : 3;
  const int embedded = cpu ? 2 : 1;
  if (format == generalized && newest >= embedded) {
    return {ReadMode::kLegacyPart, embedded, cpu ? "k/k #139102" : "k/k #139626", ""};
  }
  // CPU V3 / memory V2 carry podEntries under a checksum the older struct cannot reproduce.
  return {ReadMode::kRefused, 0, "", "checkpoint is corrupted"};
}

const char* GateStageName(GateStage stage) {
  switch (stage) {
    case GateStage::kAlpha: return "Alpha";
    case GateStage::kBeta: return "Beta";
    case GateStage::kGA: return "GA";
    case GateStage::kDeprecated: return "Deprecated";
  }
  return "?";
}

std::span<const KubeletVersion> KubeletVersions() { return kVersions; }

const KubeletVersion* FindKubeletVersion(std::string_view name) {
  if (name.size() > 1 && (name[0] == 'v' || name[0] == 'V')) name.remove_prefix(1);
  for (const KubeletVersion& v : kVersions) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

std::string KnownKubeletVersions() {
  std::string out;
  for (const KubeletVersion& v : kVersions) {
    if (!out.empty()) out += ", ";
    out += v.name;
  }
  return out;
}

absl::StatusOr<const KubeletVersion*> ParseKubeletVersion(std::string_view name) {
  if (const KubeletVersion* v = FindKubeletVersion(name)) return v;
  return absl::InvalidArgumentError(fmt::format(
      "unknown kubelet version \"{}\": podtopo knows {} (\"1.37\" is the newest 1.37 patch "
      "release; `kubectl get node NAME -o jsonpath='{{.status.nodeInfo.kubeletVersion}}'` "
      "tells a node's)",
      name, KnownKubeletVersions()));
}

const KubeletVersion& DefaultKubeletVersion() {
  const KubeletVersion* newest = &kVersions[0];
  for (const KubeletVersion& v : kVersions) {
    if (v.released) newest = &v;
  }
  return *newest;
}

std::span<const VersionedBehavior> VersionedBehaviors() { return kBehaviors; }

const VersionedBehavior* FindVersionedBehavior(bool Behavior::*field) {
  for (const VersionedBehavior& b : kBehaviors) {
    if (b.field == field) return &b;
  }
  return nullptr;
}

std::string IssueTag(const VersionedBehavior& behavior) {
  std::string tag(behavior.issue);
  tag.erase(std::remove(tag.begin(), tag.end(), ' '), tag.end());
  return tag;
}

std::string IssueTag(bool Behavior::*field) { return IssueTag(*FindVersionedBehavior(field)); }

const VersionedBehavior* FindVersionedBehaviorByTag(std::string_view tag) {
  for (const VersionedBehavior& b : kBehaviors) {
    if (IssueTag(b) == tag) return &b;
  }
  return nullptr;
}

std::string FixedIn(bool Behavior::*field) {
  std::string out;
  for (const KubeletVersion& v : kVersions) {
    if (!(v.behavior.*field)) continue;
    if (!out.empty()) out += ", ";
    out += v.name;
  }
  return out.empty() ? "none of the known versions" : out;
}

std::string DescribeVersioned(bool Behavior::*field) {
  const VersionedBehavior* b = FindVersionedBehavior(field);
  if (b == nullptr) return "";
  if (b->fix.empty()) return fmt::format("{}; no fix is merged", b->issue);
  if (b->fix == b->issue) return fmt::format("{}, fixed in {}", b->issue, FixedIn(field));
  return fmt::format("{}, fixed by {} in {}", b->issue, b->fix, FixedIn(field));
}

}  // namespace podtopo::kubelet
