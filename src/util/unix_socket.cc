#include "util/unix_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "fmt/format.h"
#include "util/file.h"

namespace podtopo {
namespace {

const char* FileKind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a socket";
}

// A connected socket to `path` (the caller closes it), or -1 with errno set.
int ConnectUnix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

}  // namespace

size_t MaxUnixSocketPath() { return sizeof(sockaddr_un::sun_path) - 1; }

absl::StatusOr<std::string> UnixSocketPath(std::string_view flag, std::string_view value) {
  std::string_view path = value;
  if (path.starts_with("unix://")) {
    path.remove_prefix(7);
  } else if (path.starts_with("unix:")) {
    path.remove_prefix(5);
  } else if (size_t scheme = path.find("://"); scheme != std::string_view::npos) {
    return absl::InvalidArgumentError(fmt::format(
        "{} \"{}\": only unix sockets are supported (a path, or unix:///path/to/server.sock)",
        flag, value));
  }
  if (path.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("{} \"{}\": expected the path of a unix socket", flag, value));
  }
  if (path.size() > MaxUnixSocketPath()) {
    return absl::InvalidArgumentError(fmt::format(
        "{} \"{}\": the path is {} bytes long; a unix socket path has at most {} (use a "
        "relative path or a shorter directory)",
        flag, value, path.size(), MaxUnixSocketPath()));
  }
  return std::string(path);
}

std::string GrpcUnixTarget(std::string_view path) {
  std::string out = "unix:";
  for (char ch : path) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || (ch != '\0' && std::strchr("/-._~", ch) != nullptr)) {
      out += ch;
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

absl::Status CheckUnixSocket(const std::string& path, const UnixSocketRole& role) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) {
      return absl::NotFoundError(
          fmt::format("no {} at {}: is {} running?", role.what, path, role.server));
    }
    if (e == EACCES) {
      return absl::PermissionDeniedError(fmt::format(
          "permission denied on {}: a directory above it is not searchable by this user: run as "
          "root",
          path));
    }
    return absl::UnavailableError(fmt::format("cannot stat {}: {}", path, std::strerror(e)));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        fmt::format("{} is not a socket (it is {}): pass {}'s {} with {}", path,
                    FileKind(st.st_mode), role.server, role.what, role.flag));
  }
  if (path.size() > MaxUnixSocketPath()) {
    return absl::InvalidArgumentError(
        fmt::format("socket path {} is {} bytes long; a unix socket path has at most {}", path,
                    path.size(), MaxUnixSocketPath()));
  }
  int fd = ConnectUnix(path);
  int e = errno;
  if (fd >= 0) {
    close(fd);
    return absl::OkStatus();
  }
  if (e == EAGAIN) return absl::OkStatus();  // listening, backlog full
  if (e == EACCES || e == EPERM) {
    return absl::PermissionDeniedError(fmt::format(
        "permission denied on {}: {} creates the socket with mode {:04o} for {}; run as root (or "
        "as the socket's owner, uid {})",
        path, role.server, st.st_mode & 07777,
        st.st_uid == 0 ? std::string("root") : fmt::format("uid {}", st.st_uid), st.st_uid));
  }
  if (e == ECONNREFUSED) {
    return absl::UnavailableError(fmt::format(
        "nothing listens on {} (a stale socket): is {} running?", path, role.server));
  }
  return absl::UnavailableError(fmt::format("cannot connect to {}: {}", path, std::strerror(e)));
}

std::optional<pid_t> UnixSocketListener(const std::string& path) {
  int fd = ConnectUnix(path);
  if (fd < 0) return std::nullopt;
  ucred cred{};
  socklen_t len = sizeof(cred);
  const bool known = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
  close(fd);
  return known ? cred.pid : 0;
}

std::string ProcessDescription(pid_t pid) {
  absl::StatusOr<std::string> cmdline =
      ReadSmallFile(fmt::format("/proc/{}/cmdline", pid), 64 * 1024);
  if (!cmdline.ok() || cmdline->empty()) return "";
  std::string program = cmdline->substr(0, cmdline->find('\0'));
  if (size_t slash = program.rfind('/'); slash != std::string::npos) program.erase(0, slash + 1);
  size_t end = cmdline->find('\0');
  if (program != "podtopo" || end == std::string::npos || end + 1 >= cmdline->size()) {
    return program;
  }
  std::string command = cmdline->substr(end + 1);
  command = command.substr(0, command.find('\0'));
  return command.empty() || command[0] == '-' ? program : program + " " + command;
}

}  // namespace podtopo
