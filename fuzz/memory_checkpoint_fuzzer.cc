// The memory manager checkpoint (/var/lib/kubelet/memory_manager_state, V1/V2/V3): bytes that
// restore have a checksum that verifies (InspectMemoryCheckpoint agrees on the format), and
// what restored survives writing in every format: Marshal -> Restore gives the same state,
// Marshal is a fixed point, and what is written verifies.
// Input: byte 0 = flags (bit 0: PodLevelResourceManagers on), then the file's bytes.
#include <string>

#include "checkpoint/cpu_state_file.h"
#include "checkpoint/memory_state_file.h"
#include "fmt/format.h"
#include "fuzz/fuzz_target.h"

PODTOPO_FUZZ_TARGET(memory_checkpoint) {
  using namespace podtopo::checkpoint;
  if (size == 0) return 0;
  const bool gate = data[0] & 1;
  std::string_view contents = AsText(data + 1, size - 1);
  ChecksumReport report = InspectMemoryCheckpoint(contents);
  MemoryLoadOptions load{
      .configured_policy = report.policy_name.empty() ? "Static" : report.policy_name,
      .pod_level_resource_managers = gate};
  absl::StatusOr<MemoryCheckpoint> cp =
      RestoreMemoryCheckpoint(contents, "memory_manager_state", load);
  if (!cp.ok()) {
    FUZZ_CHECK(cp.status().message().find("memory_manager_state") != std::string_view::npos,
               fmt::format("the error does not name the file: {}", cp.status().ToString()));
    return 0;
  }
  FUZZ_CHECK(report.error.ok() && report.version == cp->version_read,
             fmt::format("restored as V{} but Inspect says V{} ({}): {}", cp->version_read,
                         report.version, report.algorithm, report.error.ToString()));
  // The modelled state: members kept for the next write of the same file (kept_fields.h) are
  // not part of it.
  MemoryCheckpoint want = *cp;
  want.version_read = 0;
  want.kept = {};
  for (MemoryFormat format : {MemoryFormat::kV3, MemoryFormat::kV2, MemoryFormat::kV1}) {
    if (format == MemoryFormat::kV1 && !cp->pod_entries.empty()) continue;
    MemoryWriteOptions write{.format = format, .pod_level_resource_managers = gate};
    absl::StatusOr<std::string> bytes = MarshalMemoryCheckpoint(*cp, write);
    // Fields podtopo cannot keep inside modelled values: the write is refused on purpose
    // (kept_fields.h), never done with them dropped.
    if (RefusedForUnknownFields(bytes.status())) return 0;
    FUZZ_CHECK(bytes.ok(), fmt::format("a restored checkpoint does not marshal (V{}): {}",
                                       static_cast<int>(format) + 1, bytes.status().ToString()));
    absl::StatusOr<MemoryCheckpoint> back = RestoreMemoryCheckpoint(*bytes, "written", load);
    FUZZ_CHECK(back.ok(), fmt::format("what was written (V{}) does not restore: {}\n{}",
                                      static_cast<int>(format) + 1, back.status().ToString(),
                                      *bytes));
    MemoryCheckpoint modelled = *back;
    modelled.version_read = 0;
    modelled.kept = {};
    FUZZ_CHECK(modelled == want, fmt::format("round trip (V{}) changed the state:\n{}",
                                          static_cast<int>(format) + 1, *bytes));
    absl::StatusOr<std::string> again = MarshalMemoryCheckpoint(*back, write);
    FUZZ_CHECK(again.ok() && *again == *bytes,
               fmt::format("Marshal is not a fixed point:\n{}\n{}", *bytes,
                           again.ok() ? *again : again.status().ToString()));
    ChecksumReport verify = InspectMemoryCheckpoint(*bytes);
    FUZZ_CHECK(verify.error.ok(), fmt::format("what was written does not verify: {}\n{}",
                                              verify.error.ToString(), *bytes));
  }
  return 0;
}
