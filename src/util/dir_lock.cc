#include "util/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "fmt/format.h"
#include "util/unix_socket.h"

namespace podtopo {
namespace {

// This process's locks, by directory: a second Acquire shares the first.
std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}
std::map<std::pair<dev_t, ino_t>, std::weak_ptr<DirLock>>& Registry() {
  static auto* registry = new std::map<std::pair<dev_t, ino_t>, std::weak_ptr<DirLock>>();
  return *registry;
}

// "podtopo serve (pid 4242)" from the lock file's "4242 podtopo serve", or "another process".
std::string Holder(int fd) {
  char buf[256] = {};
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return "another process";
  std::string text(buf, static_cast<size_t>(n));
  text = text.substr(0, text.find('\n'));
  const size_t space = text.find(' ');
  const std::string pid = text.substr(0, space);
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) {
    return "another process";
  }
  const std::string what = space == std::string::npos ? "" : text.substr(space + 1);
  return fmt::format("{} (pid {})", what.empty() ? "a process" : what, pid);
}

}  // namespace

absl::StatusOr<std::shared_ptr<DirLock>> DirLock::Acquire(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return std::shared_ptr<DirLock>();
  std::lock_guard<std::mutex> guard(RegistryMutex());
  const auto key = std::make_pair(st.st_dev, st.st_ino);
  if (auto held = Registry()[key].lock()) return held;

  const std::string path = dir + "/" + kDirLockFile;
  bool writable = true;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM)) {
    writable = false;
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::shared_ptr<DirLock>();  // cannot write here at all
  }
  if (fd < 0) {
    return absl::InternalError(fmt::format("{}: open: {}", path, std::strerror(errno)));
  }
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int e = errno;
    std::string holder = e == EWOULDBLOCK ? Holder(fd) : "";
    close(fd);
    if (e == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          fmt::format("state dir {} is in use by {}: one process at a time may write it (the "
                      "lock is {})",
                      dir, holder, path));
    }
    return absl::InternalError(fmt::format("{}: flock: {}", path, std::strerror(e)));
  }
  if (writable && ftruncate(fd, 0) == 0) {
    // Best effort: without the note the next process is refused "by another process".
    const std::string me = fmt::format("{} {}\n", getpid(), ProcessDescription(getpid()));
    [[maybe_unused]] ssize_t n = pwrite(fd, me.data(), me.size(), 0);
  }
  std::shared_ptr<DirLock> lock(new DirLock(fd, st.st_dev, st.st_ino));
  Registry()[key] = lock;
  return lock;
}

DirLock::~DirLock() {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Registry().find({dev_, ino_});
  if (it != Registry().end() && it->second.expired()) Registry().erase(it);
  close(fd_);  // releases the flock
}

}  // namespace podtopo
