// PodResourcesClient: a gRPC client of the kubelet's PodResources v1 API on a unix socket.
//
// Connect() checks the socket before it dials, so that the common mistakes get a sentence
// rather than a gRPC status: no file there ("is the kubelet running?"), a file that is not a
// socket, permission denied (the kubelet creates the socket with mode 0600: run as root), a
// stale socket nobody listens on. Every call has a deadline; gRPC errors come back as
// absl::Status with the same code and a message naming the socket and the call.
//
// Example:
//   auto client = PodResourcesClient::Connect({.socket =
//   "/var/lib/kubelet/pod-resources/kubelet.sock"}); if (!client.ok()) { std::cerr <<
//   client.status().message(); } absl::StatusOr<v1::ListPodResourcesResponse> pods =
//   (*client)->List(); absl::StatusOr<v1::PodResources> pod = (*client)->Get("default",
//   "pod-scope-mixed");
//
// Thread safety: after Connect(), the calls may be made from any number of threads.
#ifndef PODTOPO_CLIENT_PODRESOURCES_CLIENT_H_
#define PODTOPO_CLIENT_PODRESOURCES_CLIENT_H_

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "podresources/v1/api.grpc.pb.h"

namespace podtopo::client {

inline constexpr char kDefaultSocket[] = "/var/lib/kubelet/pod-resources/kubelet.sock";
// The kubelet's own client (pkg/kubelet/apis/podresources) accepts answers up to 16 MiB.
inline constexpr int kMaxMessageBytes = 16 * 1024 * 1024;

struct ClientOptions {
  std::string socket = kDefaultSocket;  // a path (util/unix_socket.h UnixSocketPath)
  // Deadline of the connection and of each call.
  std::chrono::milliseconds timeout{10000};
};

// util/unix_socket.h CheckUnixSocket for the kubelet's PodResources socket (`path` absolute
// or relative). Errors:
//   kNotFound          "no PodResources socket at PATH: is the kubelet running?"
//   kPermissionDenied  "permission denied on PATH: ..." (the socket or a directory above it)
//   kFailedPrecondition "PATH is not a socket (it is a regular file|directory|...)"
//   kUnavailable       "nothing listens on PATH (a stale socket): is the kubelet running?"
absl::Status CheckSocket(const std::string& path);

class PodResourcesClient {
 public:
  // CheckSocket(), then a gRPC channel to the socket (GrpcUnixTarget: a relative path stays
  // relative to the working directory) that must become ready within the timeout
  // (kDeadlineExceeded otherwise).
  static absl::StatusOr<std::unique_ptr<PodResourcesClient>> Connect(const ClientOptions& options);

  absl::StatusOr<v1::ListPodResourcesResponse> List() const;
  // kNotFound (as the kubelet words it: "pod NAME in namespace NS not found") when the server
  // does not know the pod; a kubelet answers that with gRPC status Unknown, which is mapped.
  absl::StatusOr<v1::PodResources> Get(const std::string& pod_namespace,
                                       const std::string& pod_name) const;
  absl::StatusOr<v1::AllocatableResourcesResponse> GetAllocatableResources() const;

  const std::string& socket() const { return options_.socket; }

 private:
  PodResourcesClient(ClientOptions options, std::shared_ptr<grpc::Channel> channel);
  ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub_;
};

// The absl::Status of a failed call: same code, message "METHOD on PATH: ..." with a hint for
// the codes a user can act on (unavailable, deadline, rate limit, unimplemented).
absl::Status CallError(const grpc::Status& status, const std::string& method,
                       const std::string& socket, std::chrono::milliseconds timeout);

}  // namespace podtopo::client

#endif  // PODTOPO_CLIENT_PODRESOURCES_CLIENT_H_
