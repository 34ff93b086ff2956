// CriClient: a small, synchronous client of the CRI (runtime.v1) RuntimeService and
// ImageService, as the kubelet uses them, over a unix socket (containerd's CRI plugin).
//
// Every call has a deadline (Options::timeout) and returns absl::Status / StatusOr. A failed
// call's message names the RPC and the runtime's own error, e.g.
//   "CRI RunPodSandbox: UNAVAILABLE: failed to connect to all addresses ..."
// and the gRPC code is mapped onto the absl code of the same name, so callers can tell an
// absent runtime (kUnavailable / kDeadlineExceeded) from a refused request.
//
// Example:
//   auto cri = CriClient::Connect("unix:///run/containerd/containerd.sock", {});
//   auto v = (*cri)->Version();          // v->runtime_name() == "containerd"
//   ::runtime::v1::ListContainersRequest req;
//   auto list = (*cri)->ListContainers(req);
//
// Thread safety: all methods may be called concurrently.
#ifndef PODTOPO_CRI_CRI_CLIENT_H_
#define PODTOPO_CRI_CRI_CLIENT_H_

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cri/runtime/v1/api.grpc.pb.h"

namespace podtopo::cri {

// True for errors that mean "the runtime is not there" (unavailable, deadline exceeded, or
// containerd's "server is not initialized yet" while it starts).
bool IsRuntimeUnavailable(const absl::Status& status);

class CriClient {
 public:
  struct Options {
    std::chrono::milliseconds timeout{10000};  // per call
  };

  // Creates the channel (lazily connected: no runtime is needed to construct it). `endpoint`
  // is a unix socket: unix:///run/containerd/containerd.sock, or a path, absolute or relative
  // (util/unix_socket.h UnixSocketPath). Errors: kInvalidArgument for a malformed endpoint,
  // naming --cri.
  static absl::StatusOr<std::unique_ptr<CriClient>> Connect(const std::string& endpoint,
                                                            Options options);

  const std::string& endpoint() const { return endpoint_; }

  absl::StatusOr<::runtime::v1::VersionResponse> Version();
  // RunPodSandbox: returns the sandbox id.
  absl::StatusOr<std::string> RunPodSandbox(const ::runtime::v1::PodSandboxConfig& config);
  absl::Status StopPodSandbox(const std::string& sandbox_id);
  absl::Status RemovePodSandbox(const std::string& sandbox_id);
  absl::StatusOr<::runtime::v1::ListPodSandboxResponse> ListPodSandbox(
      const ::runtime::v1::PodSandboxFilter& filter);
  // CreateContainer: returns the container id.
  absl::StatusOr<std::string> CreateContainer(const std::string& sandbox_id,
                                              const ::runtime::v1::ContainerConfig& config,
                                              const ::runtime::v1::PodSandboxConfig& sandbox);
  absl::Status StartContainer(const std::string& container_id);
  absl::Status StopContainer(const std::string& container_id, int64_t timeout_seconds);
  absl::Status RemoveContainer(const std::string& container_id);
  absl::StatusOr<::runtime::v1::ListContainersResponse> ListContainers(
      const ::runtime::v1::ContainerFilter& filter);
  absl::StatusOr<::runtime::v1::ContainerStatusResponse> ContainerStatus(
      const std::string& container_id, bool verbose);
  absl::Status UpdateContainerResources(const std::string& container_id,
                                        const ::runtime::v1::LinuxContainerResources& linux);
  // ImageStatus: whether `image` is present in the runtime (no pull is ever made).
  absl::StatusOr<bool> ImagePresent(const std::string& image);

 private:
  CriClient(std::string endpoint, Options options, std::shared_ptr<grpc::Channel> channel);
  std::unique_ptr<grpc::ClientContext> Context(std::chrono::milliseconds timeout) const;

  std::string endpoint_;
  Options options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<::runtime::v1::RuntimeService::Stub> runtime_;
  std::unique_ptr<::runtime::v1::ImageService::Stub> image_;
};

// Converts a gRPC status of RPC `rpc` into an absl::Status with the same code.
absl::Status FromGrpc(const char* rpc, const grpc::Status& status);

}  // namespace podtopo::cri

#endif  // PODTOPO_CRI_CRI_CLIENT_H_
