// SysfsSource: the few file operations sysfs discovery needs, behind an interface so tests
// can use fixture trees on disk or an in-memory tree.
//
// Paths are relative to the sysfs root ("devices/system/cpu/online"); the root is "/sys" on a
// real machine, or any directory holding devices/system/{cpu,node}.
//
// Example:
//   std::unique_ptr<SysfsSource> fs = NewSysfsDir("/sys");
//   absl::StatusOr<std::string> online = fs->ReadFile("devices/system/cpu/online");
//
//   FakeSysfs fake;                                    // for tests
//   fake.Set("devices/system/cpu/cpu0/topology/core_id", "0\n");
//   fake.ListDir("devices/system/cpu");                // {"cpu0"}
//
// Thread safety: const methods may be called concurrently.
#ifndef PODTOPO_TOPOLOGY_SYSFS_SOURCE_H_
#define PODTOPO_TOPOLOGY_SYSFS_SOURCE_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace podtopo {

class SysfsSource {
 public:
  // Files larger than this are rejected (sysfs attributes are at most a page or two).
  static constexpr size_t kMaxFileBytes = 1 << 20;

  virtual ~SysfsSource() = default;
  // How messages name this tree, e.g. "sysfs:/sys".
  virtual std::string Name() const = 0;
  // The whole file. Errors: kNotFound when it does not exist, kInvalidArgument when it is a
  // directory or larger than kMaxFileBytes, others for I/O failures. Messages are bare
  // reasons ("not found", "file is larger than 1048576 bytes"); callers add the path.
  virtual absl::StatusOr<std::string> ReadFile(const std::string& rel) const = 0;
  // Entry names of a directory, sorted as strings (the order of Go's filepath.Glob and
  // os.ReadDir). kNotFound when it does not exist or is not a directory.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(const std::string& rel) const = 0;
};

// A sysfs tree on disk under `root`.
std::unique_ptr<SysfsSource> NewSysfsDir(const std::string& root);

// An in-memory tree: files are set by path; directories exist implicitly as prefixes of
// file paths or explicitly through AddDir.
class FakeSysfs : public SysfsSource {
 public:
  explicit FakeSysfs(std::string name = "sysfs:fake") : name_(std::move(name)) {}

  // A file set after every file before it in path order (fixture trees, the fuzz target's
  // serialized trees) is appended at the end of the map: one comparison, not a search.
  void Set(const std::string& rel, std::string contents) {
    files_.insert_or_assign(files_.end(), rel, std::move(contents));
  }
  void AddDir(const std::string& rel) { dirs_.insert(rel); }
  // Removes a file, or every file under a directory.
  void Remove(const std::string& rel);

  std::string Name() const override { return name_; }
  absl::StatusOr<std::string> ReadFile(const std::string& rel) const override;
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& rel) const override;

 private:
  // A directory: set by AddDir, or a prefix of a path set.
  bool IsDir(const std::string& rel) const;

  std::string name_;
  // Both sorted, so that a directory's entries are one range of keys: ListDir looks at one key
  // per entry (it skips the keys under each), a missing ReadFile at one key.
  std::map<std::string, std::string> files_;
  std::set<std::string> dirs_;
};

}  // namespace podtopo

#endif  // PODTOPO_TOPOLOGY_SYSFS_SOURCE_H_
