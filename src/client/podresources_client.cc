#include "client/podresources_client.h"

#include "fmt/format.h"
#include "grpcpp/grpcpp.h"
#include "util/unix_socket.h"

namespace podtopo::client {
namespace {

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "Canceled";
    case grpc::StatusCode::UNKNOWN:
      return "Unknown";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "InvalidArgument";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DeadlineExceeded";
    case grpc::StatusCode::NOT_FOUND:
      return "NotFound";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "AlreadyExists";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PermissionDenied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "ResourceExhausted";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FailedPrecondition";
    case grpc::StatusCode::ABORTED:
      return "Aborted";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OutOfRange";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "Unimplemented";
    case grpc::StatusCode::INTERNAL:
      return "Internal";
    case grpc::StatusCode::UNAVAILABLE:
      return "Unavailable";
    case grpc::StatusCode::DATA_LOSS:
      return "DataLoss";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "Unauthenticated";
    default:
      return "code";
  }
}

}  // namespace

absl::Status CheckSocket(const std::string& path) {
  return CheckUnixSocket(path, {"PodResources socket", "the kubelet", "--socket"});
}

absl::Status CallError(const grpc::Status& status, const std::string& method,
                       const std::string& socket, std::chrono::milliseconds timeout) {
  auto code = static_cast<absl::StatusCode>(static_cast<int>(status.error_code()));
  const std::string& msg = status.error_message();
  std::string text;
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      text = fmt::format("{} on {}: server unavailable ({}): did it stop?", method, socket, msg);
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      text = fmt::format("{} on {}: no answer within {} ms", method, socket, timeout.count());
      break;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      text = fmt::format(
          "{} on {}: {} (the server rate-limits PodResources calls; a kubelet allows 100 per "
          "second with a burst of 10): retry later",
          method, socket, msg);
      break;
    case grpc::StatusCode::UNIMPLEMENTED:
      text = fmt::format("{} on {}: the server does not implement it ({}): an older kubelet?",
                         method, socket, msg);
      break;
    default:
      text = fmt::format("{} on {}: {}: {}", method, socket, CodeName(status.error_code()), msg);
  }
  return absl::Status(code, text);
}

PodResourcesClient::PodResourcesClient(ClientOptions options,
                                       std::shared_ptr<grpc::Channel> channel)
    : options_(std::move(options)),
      channel_(std::move(channel)),
      stub_(v1::PodResourcesLister::NewStub(channel_)) {}

absl::StatusOr<std::unique_ptr<PodResourcesClient>> PodResourcesClient::Connect(
    const ClientOptions& options) {
  if (absl::Status s = CheckSocket(options.socket); !s.ok()) return s;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  auto channel = grpc::CreateCustomChannel(GrpcUnixTarget(options.socket),
                                           grpc::InsecureChannelCredentials(), args);
  auto deadline = std::chrono::system_clock::now() + options.timeout;
  if (!channel->WaitForConnected(deadline)) {
    return absl::DeadlineExceededError(
        fmt::format("{} accepts connections but no gRPC server answered within {} ms",
                    options.socket, options.timeout.count()));
  }
  return std::unique_ptr<PodResourcesClient>(new PodResourcesClient(options, std::move(channel)));
}

absl::StatusOr<v1::ListPodResourcesResponse> PodResourcesClient::List() const {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options_.timeout);
  v1::ListPodResourcesResponse response;
  grpc::Status s = stub_->List(&ctx, v1::ListPodResourcesRequest(), &response);
  if (!s.ok()) return CallError(s, "List", options_.socket, options_.timeout);
  return response;
}

absl::StatusOr<v1::PodResources> PodResourcesClient::Get(const std::string& pod_namespace,
                                                         const std::string& pod_name) const {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options_.timeout);
  v1::GetPodResourcesRequest request;
  request.set_pod_namespace(pod_namespace);
  request.set_pod_name(pod_name);
  v1::GetPodResourcesResponse response;
  grpc::Status s = stub_->Get(&ctx, request, &response);
  if (!s.ok()) {
    // A kubelet answers an unknown pod with status Unknown, "pod X in namespace Y not found".
    if (s.error_code() == grpc::StatusCode::NOT_FOUND ||
        (s.error_code() == grpc::StatusCode::UNKNOWN &&
         s.error_message().find("not found") != std::string::npos)) {
      return absl::NotFoundError(fmt::format("Get on {}: {}", options_.socket, s.error_message()));
    }
    return CallError(s, "Get", options_.socket, options_.timeout);
  }
  return response.pod_resources();
}

absl::StatusOr<v1::AllocatableResourcesResponse> PodResourcesClient::GetAllocatableResources()
    const {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options_.timeout);
  v1::AllocatableResourcesResponse response;
  grpc::Status s =
      stub_->GetAllocatableResources(&ctx, v1::AllocatableResourcesRequest(), &response);
  if (!s.ok()) return CallError(s, "GetAllocatableResources", options_.socket, options_.timeout);
  return response;
}

}  // namespace podtopo::client
