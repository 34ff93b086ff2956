#include "cri/cri_client.h"

#include <grpcpp/grpcpp.h>

#include "fmt/format.h"
#include "util/unix_socket.h"

namespace podtopo::cri {

namespace v1 = ::runtime::v1;

bool IsRuntimeUnavailable(const absl::Status& status) {
  // containerd answers "server is not initialized yet" (UNKNOWN) while its CRI plugin starts.
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) ||
         (absl::IsUnknown(status) &&
          status.message().find("not initialized") != absl::string_view::npos);
}

absl::Status FromGrpc(const char* rpc, const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  static const char* kNames[] = {"OK",
                                 "CANCELLED",
                                 "UNKNOWN",
                                 "INVALID_ARGUMENT",
                                 "DEADLINE_EXCEEDED",
                                 "NOT_FOUND",
                                 "ALREADY_EXISTS",
                                 "PERMISSION_DENIED",
                                 "RESOURCE_EXHAUSTED",
                                 "FAILED_PRECONDITION",
                                 "ABORTED",
                                 "OUT_OF_RANGE",
                                 "UNIMPLEMENTED",
                                 "INTERNAL",
                                 "UNAVAILABLE",
                                 "DATA_LOSS",
                                 "UNAUTHENTICATED"};
  int code = static_cast<int>(status.error_code());
  const char* name = code >= 0 && code <= 16 ? kNames[code] : "UNKNOWN";
  return absl::Status(static_cast<absl::StatusCode>(code),
                      fmt::format("CRI {}: {}: {}", rpc, name, status.error_message()));
}

CriClient::CriClient(std::string endpoint, Options options, std::shared_ptr<grpc::Channel> channel)
    : endpoint_(std::move(endpoint)),
      options_(options),
      channel_(std::move(channel)),
      runtime_(v1::RuntimeService::NewStub(channel_)),
      image_(v1::ImageService::NewStub(channel_)) {}

absl::StatusOr<std::unique_ptr<CriClient>> CriClient::Connect(const std::string& endpoint,
                                                              Options options) {
  absl::StatusOr<std::string> path = UnixSocketPath("--cri", endpoint);
  if (!path.ok()) return path.status();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 * 1024 * 1024);
  // Reconnect quickly when the runtime comes back (default backoff grows to 2 minutes).
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  auto channel =
      grpc::CreateCustomChannel(GrpcUnixTarget(*path), grpc::InsecureChannelCredentials(), args);
  return std::unique_ptr<CriClient>(new CriClient(endpoint, options, std::move(channel)));
}

std::unique_ptr<grpc::ClientContext> CriClient::Context(std::chrono::milliseconds timeout) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
  return ctx;
}

absl::StatusOr<v1::VersionResponse> CriClient::Version() {
  v1::VersionRequest req;
  req.set_version("v1");
  v1::VersionResponse resp;
  auto ctx = Context(options_.timeout);
  grpc::Status s = runtime_->Version(ctx.get(), req, &resp);
  if (!s.ok()) return FromGrpc("Version", s);
  return resp;
}

absl::StatusOr<std::string> CriClient::RunPodSandbox(const v1::PodSandboxConfig& config) {
  v1::RunPodSandboxRequest req;
  *req.mutable_config() = config;
  v1::RunPodSandboxResponse resp;
  // Sandbox creation starts a shim and a process: give it more time than a plain call.
  auto ctx = Context(options_.timeout * 4);
  grpc::Status s = runtime_->RunPodSandbox(ctx.get(), req, &resp);
  if (!s.ok()) return FromGrpc("RunPodSandbox", s);
  return resp.pod_sandbox_id();
}

absl::Status CriClient::StopPodSandbox(const std::string& sandbox_id) {
  v1::StopPodSandboxRequest req;
  req.set_pod_sandbox_id(sandbox_id);
  v1::StopPodSandboxResponse resp;
  auto ctx = Context(options_.timeout * 4);
  return FromGrpc("StopPodSandbox", runtime_->StopPodSandbox(ctx.get(), req, &resp));
}

absl::Status CriClient::RemovePodSandbox(const std::string& sandbox_id) {
  v1::RemovePodSandboxRequest req;
  req.set_pod_sandbox_id(sandbox_id);
  v1::RemovePodSandboxResponse resp;
  auto ctx = Context(options_.timeout * 4);
  return FromGrpc("RemovePodSandbox", runtime_->RemovePodSandbox(ctx.get(), req, &resp));
}

absl::StatusOr<v1::ListPodSandboxResponse> CriClient::ListPodSandbox(
    const v1::PodSandboxFilter& filter) {
  v1::ListPodSandboxRequest req;
  *req.mutable_filter() = filter;
  v1::ListPodSandboxResponse resp;
  auto ctx = Context(options_.timeout);
  grpc::Status s = runtime_->ListPodSandbox(ctx.get(), req, &resp);
  if (!s.ok()) return FromGrpc("ListPodSandbox", s);
  return resp;
}

absl::StatusOr<std::string> CriClient::CreateContainer(const std::string& sandbox_id,
                                                       const v1::ContainerConfig& config,
                                                       const v1::PodSandboxConfig& sandbox) {
  v1::CreateContainerRequest req;
  req.set_pod_sandbox_id(sandbox_id);
  *req.mutable_config() = config;
  *req.mutable_sandbox_config() = sandbox;
  v1::CreateContainerResponse resp;
  auto ctx = Context(options_.timeout * 2);
  grpc::Status s = runtime_->CreateContainer(ctx.get(), req, &resp);
  if (!s.ok()) return FromGrpc("CreateContainer", s);
  return resp.container_id();
}

absl::Status CriClient::StartContainer(const std::string& container_id) {
  v1::StartContainerRequest req;
  req.set_container_id(container_id);
  v1::StartContainerResponse resp;
  auto ctx = Context(options_.timeout * 2);
  return FromGrpc("StartContainer", runtime_->StartContainer(ctx.get(), req, &resp));
}

absl::Status CriClient::StopContainer(const std::string& container_id, int64_t timeout_seconds) {
  v1::StopContainerRequest req;
  req.set_container_id(container_id);
  req.set_timeout(timeout_seconds);
  v1::StopContainerResponse resp;
  auto ctx = Context(options_.timeout + std::chrono::seconds(timeout_seconds));
  return FromGrpc("StopContainer", runtime_->StopContainer(ctx.get(), req, &resp));
}

absl::Status CriClient::RemoveContainer(const std::string& container_id) {
  v1::RemoveContainerRequest req;
  req.set_container_id(container_id);
  v1::RemoveContainerResponse resp;
  auto ctx = Context(options_.timeout * 2);
  return FromGrpc("RemoveContainer", runtime_->RemoveContainer(ctx.get(), req, &resp));
}

absl::StatusOr<v1::ListContainersResponse> CriClient::ListContainers(
    const v1::ContainerFilter& filter) {
  v1::ListContainersRequest req;
  *req.mutable_filter() = filter;
  v1::ListContainersResponse resp;
  auto ctx = Context(options_.timeout);
  grpc::Status s = runtime_->ListContainers(ctx.get(), req, &resp);
  if (!s.ok()) return FromGrpc("ListContainers", s);
  return resp;
}

absl::StatusOr<v1::ContainerStatusResponse> CriClient::ContainerStatus(
    const std::string& container_id, bool verbose) {
  v1::ContainerStatusRequest req;
  req.set_container_id(container_id);
  req.set_verbose(verbose);
  v1::ContainerStatusResponse resp;
  auto ctx = Context(options_.timeout);
  grpc::Status s = runtime_->ContainerStatus(ctx.get(), req, &resp);
  if (!s.ok()) return FromGrpc("ContainerStatus", s);
  return resp;
}

absl::Status CriClient::UpdateContainerResources(const std::string& container_id,
                                                 const v1::LinuxContainerResources& linux) {
  v1::UpdateContainerResourcesRequest req;
  req.set_container_id(container_id);
  *req.mutable_linux() = linux;
  v1::UpdateContainerResourcesResponse resp;
  auto ctx = Context(options_.timeout);
  return FromGrpc("UpdateContainerResources",
                  runtime_->UpdateContainerResources(ctx.get(), req, &resp));
}

absl::StatusOr<bool> CriClient::ImagePresent(const std::string& image) {
  v1::ImageStatusRequest req;
  req.mutable_image()->set_image(image);
  v1::ImageStatusResponse resp;
  auto ctx = Context(options_.timeout);
  grpc::Status s = image_->ImageStatus(ctx.get(), req, &resp);
  if (!s.ok()) return FromGrpc("ImageStatus", s);
  return resp.has_image() && !resp.image().id().empty();
}

}  // namespace podtopo::cri
