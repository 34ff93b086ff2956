// Helpers shared by the CPU and memory checkpoint files (not a public API).
#ifndef PODTOPO_CHECKPOINT_INTERNAL_H_
#define PODTOPO_CHECKPOINT_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "checkpoint/cpu_state_file.h"

namespace podtopo::checkpoint::internal {

// The error text the kubelet's file store reports for a failed read of `path`, in Go's
// os.PathError form: "read <path>: is a directory", "open <path>: permission denied".
std::string GoReadErrorText(const absl::Status& read_status, const std::string& path);

// InvalidArgument "<prefix><message of s>" (the kubelet's fmt.Errorf("...: %v", err)).
absl::Status Prefix(std::string_view prefix, const absl::Status& s);
// The kubelet's checksum mismatch error.
absl::Status Corrupted();

// The outer step of Inspect*Checkpoint for the v1.37 formats with a data checksum (CPU V4,
// memory V3). `err` is the format's load-and-verify result, `inline_label` names the legacy
// inline checksum ("checksum", "V1 checksum"). Fills `r` and returns true when the file is of
// that format, loaded or not; false when it is an older format.
bool InspectDataChecksumFormat(int version, const absl::Status& err, const std::string& policy_name,
                               std::string_view data, uint64_t data_checksum,
                               std::string_view inline_label, uint64_t inline_checksum,
                               ChecksumReport& r);

}  // namespace podtopo::checkpoint::internal

#endif  // PODTOPO_CHECKPOINT_INTERNAL_H_
