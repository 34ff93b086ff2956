// Helpers shared by the CPU and memory checkpoint files (not a public API).
#ifndef PODTOPO_CHECKPOINT_INTERNAL_H_
#define PODTOPO_CHECKPOINT_INTERNAL_H_

#include <string>

#include "absl/status/status.h"

namespace podtopo::checkpoint::internal {

// The error text the kubelet's file store reports for a failed read of `path`, in Go's
// os.PathError form: "read <path>: is a directory", "open <path>: permission denied".
std::string GoReadErrorText(const absl::Status& read_status, const std::string& path);

}  // namespace podtopo::checkpoint::internal

#endif  // PODTOPO_CHECKPOINT_INTERNAL_H_
