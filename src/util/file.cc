#include "util/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string_view>
#include <utility>

#include "fmt/format.h"

namespace podtopo {
namespace {

absl::Status ErrnoStatus(const std::string& path, const char* what, int err) {
  std::string msg = fmt::format("{}: {}: {}", path, what, std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case EISDIR:
      return absl::InvalidArgumentError(msg);
    default:
      return absl::InternalError(msg);
  }
}

// `size_hint`: the file's size when known (a regular file), read straight into the string.
absl::StatusOr<std::string> ReadFd(int fd, const std::string& path, size_t max_bytes,
                                   size_t size_hint = 0) {
  std::string out;
  if (size_hint > 0 && size_hint <= max_bytes) {
    out.resize(size_hint);
    size_t got = 0;
    while (got < size_hint) {
      ssize_t n = ::read(fd, out.data() + got, size_hint - got);
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(path, "read", errno);
      }
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    out.resize(got);
    if (got < size_hint) return out;  // the file shrank: that is all of it
  }
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(path, "read", errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      return absl::InvalidArgumentError(
          fmt::format("{}: file is larger than {} bytes", path, max_bytes));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  if (path == "-") return ReadFd(0, "<stdin>", max_bytes);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path, "open", errno);
  struct stat st;
  size_t size_hint = 0;
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      return absl::InvalidArgumentError(fmt::format("{}: is a directory", path));
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) size_hint = static_cast<size_t>(st.st_size);
  }
  auto result = ReadFd(fd, path, max_bytes, size_hint);
  ::close(fd);
  return result;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  return ReadSmallFile(path, size_t{1} << 30);
}

namespace {

constexpr std::string_view kTempInfix = ".tmp-";

// The directory and the file name of `path` ("." for a bare name).
std::pair<std::string, std::string> SplitPath(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// The writer's pid of `<name>.tmp-<pid>`, or -1 for any other file name.
pid_t TempFileWriter(std::string_view file, std::string_view only_name) {
  auto at = file.rfind(kTempInfix);
  if (at == std::string_view::npos || at == 0 || file[0] == '.') return -1;
  if (!only_name.empty() && file.substr(0, at) != only_name) return -1;
  std::string_view digits = file.substr(at + kTempInfix.size());
  if (digits.empty() || digits.size() > 9) return -1;
  pid_t pid = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    pid = pid * 10 + (c - '0');
  }
  return pid > 0 ? pid : -1;
}

}  // namespace

std::vector<std::string> RemoveStaleTemporaryFiles(const std::string& dir,
                                                   const std::string& only_name) {
  std::vector<std::string> removed;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return removed;
  const pid_t self = ::getpid();
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    pid_t writer = TempFileWriter(name, only_name);
    if (writer < 0 || writer == self) continue;
    if (::kill(writer, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to signal)
    if (::unlinkat(::dirfd(d), name.c_str(), 0) == 0) removed.push_back(name);
  }
  ::closedir(d);
  return removed;
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents, int mode) {
  const auto [dir, name] = SplitPath(path);
  RemoveStaleTemporaryFiles(dir, name);
  std::string tmp = fmt::format("{}.tmp-{}", path, ::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoStatus(tmp, "create", errno);
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return ErrnoStatus(tmp, "write", err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return ErrnoStatus(tmp, "fsync", err);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus(path, "rename", err);
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return absl::OkStatus();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace podtopo
