// Unix socket paths, as every podtopo command that takes a socket reads them (client
// --socket, agent --podresources-socket, serve --socket and --cri, nri --socket).
//
// A flag's value is a path, absolute or relative to the working directory, optionally written
// as a URI: `unix:PATH` or `unix://PATH` (`unix:///run/containerd/containerd.sock`). A relative
// path stays relative: `unix://sv/kubelet.sock` means sv/kubelet.sock, as its writer meant it
// (gRPC would read `sv` as a host name, dial /kubelet.sock and time out). GrpcUnixTarget()
// turns the path into the target gRPC reads as that path.
//
// CheckUnixSocket() tells, before anything dials, what is wrong with the path: nothing there,
// not a socket, permission denied, a stale socket that nobody listens on; each in one sentence
// naming the path and the server expected there.
//
//   absl::StatusOr<std::string> path = UnixSocketPath("--socket", "unix://sv/kubelet.sock");
//   // *path == "sv/kubelet.sock"
//   absl::Status s = CheckUnixSocket(*path, {"PodResources socket", "the kubelet", "--socket"});
//   auto channel = grpc::CreateChannel(GrpcUnixTarget(*path), ...);  // "unix:sv/kubelet.sock"
#ifndef PODTOPO_UTIL_UNIX_SOCKET_H_
#define PODTOPO_UTIL_UNIX_SOCKET_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace podtopo {

// The longest path a sockaddr_un holds (107 bytes on Linux).
size_t MaxUnixSocketPath();

// The socket path of a flag's value (see the banner). Errors (kInvalidArgument, naming the
// flag and the value): empty, another scheme (`tcp://...`), a path longer than
// MaxUnixSocketPath().
absl::StatusOr<std::string> UnixSocketPath(std::string_view flag, std::string_view value);

// The gRPC target of the socket at `path` (absolute or relative): `unix:PATH`, with the
// characters a URI reserves percent-encoded.
std::string GrpcUnixTarget(std::string_view path);

// Who is expected at a socket, for the messages of CheckUnixSocket.
struct UnixSocketRole {
  std::string_view what;    // "PodResources socket"
  std::string_view server;  // "the kubelet" (in "is the kubelet running?")
  std::string_view flag;    // "--socket" (in "pass the kubelet's PodResources socket with ...")
};

// Checks that `path` is a unix socket this process may connect to and that something listens
// on it, without speaking any protocol (stat, then connect). Errors:
//   kNotFound           "no WHAT at PATH: is SERVER running?"
//   kPermissionDenied   "permission denied on PATH: ..." (the socket's mode and owner, or a
//                       directory above it this user cannot search)
//   kFailedPrecondition "PATH is not a socket (it is a regular file|a directory|...): ..."
//   kUnavailable        "nothing listens on PATH (a stale socket): is SERVER running?"
//   kInvalidArgument    the path is longer than a unix socket path may be
absl::Status CheckUnixSocket(const std::string& path, const UnixSocketRole& role);

// The process that listens on the socket at `path` (its SO_PEERCRED pid), or nullopt when
// nothing accepts a connection there. Servers ask it before they replace a socket file.
std::optional<pid_t> UnixSocketListener(const std::string& path);

// "podtopo serve" for a podtopo process (its program name and first argument, from
// /proc/PID/cmdline), the program name for another one, "" when it cannot be read.
std::string ProcessDescription(pid_t pid);

}  // namespace podtopo

#endif  // PODTOPO_UTIL_UNIX_SOCKET_H_
