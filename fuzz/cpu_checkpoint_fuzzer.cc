// The CPU manager checkpoint (/var/lib/kubelet/cpu_manager_state, V2/V3/V4): bytes that
// restore are bytes whose checksum verifies (InspectCpuCheckpoint agrees on the format), and
// what restored survives writing in every format the kubelet writes: Marshal -> Restore gives
// the same state (cpusets canonical), Marshal is a fixed point, and what is written verifies.
// Input: byte 0 = flags (bit 0: PodLevelResourceManagers on), then the file's bytes.
#include <string>

#include "checkpoint/cpu_state_file.h"
#include "cpuset/cpuset.h"
#include "fmt/format.h"
#include "fuzz/fuzz_target.h"

namespace podtopo::fuzz {
namespace {

using namespace podtopo::checkpoint;

std::string Canonical(const std::string& cpus) {
  absl::StatusOr<CpuSet> s = CpuSet::Parse(cpus);
  return s.ok() ? s->String() : "!" + cpus;
}

// The modelled state: members podtopo keeps for the next write of the same file (kept_fields.h)
// are not part of it, and only V4 carries the resize baselines.
CpuCheckpoint Canonical(CpuCheckpoint cp, bool v4 = true) {
  cp.version_read = 0;
  cp.kept = {};
  if (!v4) cp.baselines.clear();
  cp.default_cpu_set = Canonical(cp.default_cpu_set);
  for (auto& [pod, containers] : cp.entries) {
    for (auto& [name, cpus] : containers) cpus = Canonical(cpus);
  }
  for (auto& [pod, cpus] : cp.pod_entries) cpus = Canonical(cpus);
  return cp;
}

std::string Describe(const CpuCheckpoint& cp) {
  std::string s = fmt::format("policy {:?} default {:?}", cp.policy_name, cp.default_cpu_set);
  for (const auto& [pod, cs] : cp.entries) {
    for (const auto& [c, cpus] : cs) s += fmt::format(" {}/{}={}", pod, c, cpus);
  }
  for (const auto& [pod, cpus] : cp.pod_entries) s += fmt::format(" pod {}={}", pod, cpus);
  return s;
}

}  // namespace
}  // namespace podtopo::fuzz

PODTOPO_FUZZ_TARGET(cpu_checkpoint) {
  if (size == 0) return 0;
  const bool gate = data[0] & 1;
  std::string_view contents = AsText(data + 1, size - 1);
  checkpoint::ChecksumReport report = checkpoint::InspectCpuCheckpoint(contents, gate);
  // Restore with the policy the file names, so that the policy check does not hide the rest.
  checkpoint::CpuLoadOptions load{.configured_policy = report.policy_name.empty()
                                                           ? "static"
                                                           : report.policy_name,
                                  .pod_level_resource_managers = gate};
  absl::StatusOr<checkpoint::CpuCheckpoint> cp =
      checkpoint::RestoreCpuCheckpoint(contents, "cpu_manager_state", load);
  if (!cp.ok()) {
    FUZZ_CHECK(cp.status().message().find("cpu_manager_state") != std::string_view::npos,
               fmt::format("the error does not name the file: {}", cp.status().ToString()));
    return 0;
  }
  FUZZ_CHECK(report.error.ok() && report.version == cp->version_read,
             fmt::format("restored as V{} but Inspect says V{} ({}): {}", cp->version_read,
                         report.version, report.algorithm, report.error.ToString()));
  const checkpoint::CpuCheckpoint want = Canonical(*cp);
  for (checkpoint::CpuFormat format :
       {checkpoint::CpuFormat::kV4, checkpoint::CpuFormat::kV3, checkpoint::CpuFormat::kV2}) {
    if (format == checkpoint::CpuFormat::kV2 && !cp->pod_entries.empty()) continue;
    for (checkpoint::V4InlineChecksum inline_sum :
         {checkpoint::V4InlineChecksum::kZero, checkpoint::V4InlineChecksum::kLegacyV2}) {
      if (format != checkpoint::CpuFormat::kV4 && inline_sum != checkpoint::V4InlineChecksum::kZero) continue;
      checkpoint::CpuWriteOptions write{.format = format, .pod_level_resource_managers = gate,
                                        .v4_inline_checksum = inline_sum};
      absl::StatusOr<std::string> bytes = checkpoint::MarshalCpuCheckpoint(*cp, write);
      // Fields podtopo cannot keep inside modelled values: the write is refused on purpose
      // (kept_fields.h), never done with them dropped.
      if (RefusedForUnknownFields(bytes.status())) return 0;
      FUZZ_CHECK(bytes.ok(), fmt::format("a restored checkpoint does not marshal (format {}): {}",
                                         static_cast<int>(format), bytes.status().ToString()));
      absl::StatusOr<checkpoint::CpuCheckpoint> back =
          checkpoint::RestoreCpuCheckpoint(*bytes, "written", load);
      FUZZ_CHECK(back.ok(), fmt::format("what was written does not restore: {}\n{}",
                                        back.status().ToString(), *bytes));
      const bool v4 = format == checkpoint::CpuFormat::kV4;
      FUZZ_CHECK(Canonical(*back, v4) == Canonical(want, v4),
                 fmt::format("round trip (format {}):\n{}\n{}\n{}", static_cast<int>(format),
                             Describe(want), Describe(Canonical(*back, v4)), *bytes));
      absl::StatusOr<std::string> again = checkpoint::MarshalCpuCheckpoint(*back, write);
      FUZZ_CHECK(again.ok() && *again == *bytes,
                 fmt::format("Marshal is not a fixed point:\n{}\n{}", *bytes,
                             again.ok() ? *again : again.status().ToString()));
      checkpoint::ChecksumReport verify = checkpoint::InspectCpuCheckpoint(*bytes, gate);
      FUZZ_CHECK(verify.error.ok(), fmt::format("what was written does not verify: {}\n{}",
                                                verify.error.ToString(), *bytes));
    }
  }
  return 0;
}
