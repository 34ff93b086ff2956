#include "util/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>

#include "fmt/format.h"
#include "util/file.h"
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

// "podtopo serve (pid 4242)": the process /proc/locks names as the holder of an flock on the
// directory (lines "1: FLOCK  ADVISORY  WRITE 4242 08:01:5678 0 EOF", device in hex), or
// "another process" when it names none (another PID namespace).
std::string Holder(const struct stat& dir) {
  absl::StatusOr<std::string> locks = ReadSmallFile("/proc/locks", 4 << 20);
  if (!locks.ok()) return "another process";
  const std::string id =
      fmt::format("{:02x}:{:02x}:{}", major(dir.st_dev), minor(dir.st_dev), dir.st_ino);
  std::istringstream lines(*locks);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string number, type, advisory, mode, pid, file;
    if (!(fields >> number >> type >> advisory >> mode >> pid >> file)) continue;
    if (type != "FLOCK" || file != id || pid.empty() || pid[0] == '-' || pid == "0") continue;
    const std::string what = ProcessDescription(static_cast<pid_t>(std::stol(pid)));
    return fmt::format("{} (pid {})", what.empty() ? "a process" : what, pid);
  }
  return "another process";
}

}  // namespace

absl::StatusOr<std::shared_ptr<DirLock>> DirLock::Acquire(const std::string& dir) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return std::shared_ptr<DirLock>();  // missing or unreadable: nothing to lock
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    close(fd);
    return absl::InternalError(fmt::format("{}: fstat: {}", dir, std::strerror(e)));
  }
  const auto key = std::make_pair(st.st_dev, st.st_ino);
  if (auto held = Registry()[key].lock()) {
    close(fd);
    return held;
  }
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int e = errno;
    close(fd);
    if (e == EWOULDBLOCK) {
      return absl::FailedPreconditionError(fmt::format(
          "state dir {} is in use by {}: one process at a time may write it", dir, Holder(st)));
    }
    return absl::InternalError(fmt::format("{}: flock: {}", dir, std::strerror(e)));
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
