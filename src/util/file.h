// Small file helpers with Status errors that name the file.
//
//   absl::StatusOr<std::string> text = ReadFile("/var/lib/kubelet/cpu_manager_state");
//   absl::Status s = WriteFileAtomically(path, contents);  // temp, fsync, rename, fsync dir
#ifndef PODTOPO_UTIL_FILE_H_
#define PODTOPO_UTIL_FILE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace podtopo {

// Reads a whole file. "-" reads standard input. Errors: kNotFound when the file does not
// exist, kPermissionDenied, kInvalidArgument for a directory, kInternal otherwise; every
// message starts with the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Reads at most `max_bytes` (sysfs files, small configs); larger files are an error.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = 1 << 20);

// Replaces `path` with `contents` so that a reader sees either the old or the new file,
// never a mix: writes `path.tmp-<pid>`, fsyncs it, renames it over `path` and fsyncs the
// directory. On error the old file is untouched and the temporary file is removed. A writer
// killed mid-write leaves its `path.tmp-<pid>` behind; the next write of `path` removes it
// (RemoveStaleTemporaryFiles).
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents,
                                 int mode = 0644);

// Removes, in `dir`, the temporary files of WriteFileAtomically whose writer is gone:
// `<name>.tmp-<pid>` (name not starting with '.', pid in decimal) where no process `pid`
// exists. Only `<only_name>.tmp-<pid>` when `only_name` is given. Files of a live process, of
// this process, and every other name are kept. Returns the names removed; errors (an unreadable
// directory) remove nothing. A writer in another PID namespace looks dead: such a writer's
// rename then fails and its old file stays as it was.
std::vector<std::string> RemoveStaleTemporaryFiles(const std::string& dir,
                                                   const std::string& only_name = "");

bool FileExists(const std::string& path);

}  // namespace podtopo

#endif  // PODTOPO_UTIL_FILE_H_
