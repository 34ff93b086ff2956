#include "topology/sysfs_source.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "fmt/format.h"

namespace podtopo {
namespace {

absl::Status ErrnoError(int err) {
  std::string msg = std::strerror(err);
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError("not found");
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
  return absl::InternalError(msg);
}

class DirSysfs : public SysfsSource {
 public:
  explicit DirSysfs(std::string root) : root_(std::move(root)) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  }

  std::string Name() const override { return "sysfs:" + root_; }

  absl::StatusOr<std::string> ReadFile(const std::string& rel) const override {
    std::string path = root_ + "/" + rel;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError(errno);
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      return absl::InvalidArgumentError("is a directory");
    }
    std::string out;
    char buf[8192];
    while (true) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        return ErrnoError(err);
      }
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
      if (out.size() > kMaxFileBytes) {
        ::close(fd);
        return absl::InvalidArgumentError(
            fmt::format("file is larger than {} bytes", kMaxFileBytes));
      }
    }
    ::close(fd);
    return out;
  }

  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& rel) const override {
    std::string path = root_ + "/" + rel;
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) return ErrnoError(errno);
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(dir)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      names.push_back(std::move(name));
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string root_;
};

bool HasDirPrefix(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

}  // namespace

std::unique_ptr<SysfsSource> NewSysfsDir(const std::string& root) {
  return std::make_unique<DirSysfs>(root);
}

void FakeSysfs::Remove(const std::string& rel) {
  files_.erase(rel);
  std::erase_if(files_, [&](const auto& kv) { return HasDirPrefix(kv.first, rel); });
  std::erase_if(dirs_, [&](const std::string& d) { return d == rel || HasDirPrefix(d, rel); });
}

absl::StatusOr<std::string> FakeSysfs::ReadFile(const std::string& rel) const {
  auto it = files_.find(rel);
  if (it != files_.end()) {
    if (it->second.size() > kMaxFileBytes) {
      return absl::InvalidArgumentError(
          fmt::format("file is larger than {} bytes", kMaxFileBytes));
    }
    return it->second;
  }
  if (IsDir(rel)) return absl::InvalidArgumentError("is a directory");
  return absl::NotFoundError("not found");
}

bool FakeSysfs::IsDir(const std::string& rel) const {
  if (dirs_.contains(rel)) return true;
  const std::string prefix = rel + "/";
  auto file = files_.lower_bound(prefix);
  if (file != files_.end() && file->first.compare(0, prefix.size(), prefix) == 0) return true;
  auto dir = dirs_.lower_bound(prefix);
  return dir != dirs_.end() && dir->compare(0, prefix.size(), prefix) == 0;
}

absl::StatusOr<std::vector<std::string>> FakeSysfs::ListDir(const std::string& rel) const {
  std::set<std::string> names;
  bool exists = dirs_.contains(rel);
  // The paths under rel are the keys from "rel/" up to the first that does not start so. Each
  // entry's name is taken once: then the search skips the keys under it ("rel/name/..." sort
  // before "rel/name0"; keys "rel/nameX" with X below '/' sort before them and are entries of
  // their own).
  const std::string prefix = rel + "/";
  auto add_children = [&](const auto& sorted, auto key) {
    auto it = sorted.lower_bound(prefix);
    while (it != sorted.end() && key(*it).compare(0, prefix.size(), prefix) == 0) {
      exists = true;
      std::string_view rest = std::string_view(key(*it)).substr(prefix.size());
      size_t slash = rest.find('/');
      if (slash == std::string_view::npos) {
        names.emplace(rest);
        ++it;
        continue;
      }
      std::string child(rest.substr(0, slash));
      std::string past = prefix + child + static_cast<char>('/' + 1);
      names.insert(std::move(child));
      it = sorted.lower_bound(past);
    }
  };
  add_children(files_, [](const auto& kv) -> const std::string& { return kv.first; });
  add_children(dirs_, [](const std::string& d) -> const std::string& { return d; });
  if (!exists) return absl::NotFoundError("not found");
  return std::vector<std::string>(names.begin(), names.end());
}

}  // namespace podtopo
