#include "podresources/server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "fmt/format.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/server_posix.h"
#include "grpcpp/impl/codegen/server_callback_handlers.h"
#include "grpcpp/server_context.h"
#include "util/unix_socket.h"

namespace podtopo::podresources {

// What the server's gRPC transport may hold in memory, all connections together.
constexpr size_t kMemoryQuotaBytes = size_t{64} << 20;

// v1 is registered by hand (same method names as the generated service) so that List can
// answer with the pre-encoded bytes: its response type is EncodedList, whose
// SerializationTraits hand gRPC the ByteBuffer ListWire built.
struct EncodedList {
  grpc::ByteBuffer bytes;
};

}  // namespace podtopo::podresources

template <>
class grpc::SerializationTraits<podtopo::podresources::EncodedList, void> {
 public:
  static grpc::Status Serialize(const podtopo::podresources::EncodedList& msg,
                                grpc::ByteBuffer* buffer, bool* own_buffer) {
    *buffer = msg.bytes;  // shares the slices (reference counted), no copy
    *own_buffer = true;
    return grpc::Status::OK;
  }
  static grpc::Status Deserialize(grpc::ByteBuffer*, podtopo::podresources::EncodedList*) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "EncodedList is never received");
  }
};

namespace podtopo::podresources {

namespace {

// Every method is served with gRPC's callback API: the answer is computed at once (from the
// published state, under a mutex) and handed to gRPC, and no thread waits for it to be
// written. With the synchronous API each call held one of the server's threads until its
// answer had been written, so a client that sends requests and never reads pinned a thread and
// its stack per stream (22,505 threads for 32 x 1,000 such streams; docs/reliability.md).
//
// The request arrives as bytes and is decoded here as gRPC's synchronous API decodes it: a
// request that does not decode is INTERNAL, as in the kubelet's grpc-go ("error unmarshalling
// request"), where the callback API's own decoding would answer UNIMPLEMENTED. It fails
// before the handler, so it takes no token of the rate limit (grpc-go decodes before the
// interceptor).
template <typename Request, typename Response, typename Fn>
grpc::internal::MethodHandler* UnaryHandler(Fn fn) {
  return new grpc::internal::CallbackUnaryHandler<grpc::ByteBuffer, Response>(
      [fn](grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* bytes, Response* resp) {
        grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
        grpc::ByteBuffer buffer(*bytes);  // shares the slices; Deserialize consumes it
        Request request;
        grpc::Status st = grpc::SerializationTraits<Request>::Deserialize(&buffer, &request);
        reactor->Finish(st.ok() ? fn(request, resp) : st);
        return reactor;
      });
}

// A service whose methods are registered by name, each a callback-API unary handler.
class CallbackMethods : public grpc::Service {
 protected:
  void Add(const char* name, grpc::internal::MethodHandler* handler) {
    AddMethod(new grpc::internal::RpcServiceMethod(name, grpc::internal::RpcMethod::NORMAL_RPC,
                                                   nullptr));
    MarkMethodCallback(methods_added_++, handler);
  }

 private:
  int methods_added_ = 0;
};

}  // namespace

class PodResourcesServer::V1Service final : public CallbackMethods {
 public:
  explicit V1Service(PodResourcesServer* s) {
    Add("/v1.PodResourcesLister/List",
        UnaryHandler<v1::ListPodResourcesRequest, EncodedList>(
            [s](const v1::ListPodResourcesRequest&, EncodedList* resp) {
              return s->ListWire(grpc::ByteBuffer(), &resp->bytes);
            }));
    Add("/v1.PodResourcesLister/GetAllocatableResources",
        UnaryHandler<v1::AllocatableResourcesRequest, v1::AllocatableResourcesResponse>(
            [s](const v1::AllocatableResourcesRequest& req,
                v1::AllocatableResourcesResponse* resp) {
              return s->GetAllocatableResources(req, resp);
            }));
    Add("/v1.PodResourcesLister/Get",
        UnaryHandler<v1::GetPodResourcesRequest, v1::GetPodResourcesResponse>(
            [s](const v1::GetPodResourcesRequest& req, v1::GetPodResourcesResponse* resp) {
              return s->Get(req, resp);
            }));
  }
};

class PodResourcesServer::V1alpha1Service final : public CallbackMethods {
 public:
  explicit V1alpha1Service(PodResourcesServer* s) {
    Add("/v1alpha1.PodResourcesLister/List",
        UnaryHandler<v1alpha1::ListPodResourcesRequest, v1alpha1::ListPodResourcesResponse>(
            [s](const v1alpha1::ListPodResourcesRequest& req,
                v1alpha1::ListPodResourcesResponse* resp) { return s->ListV1alpha1(req, resp); }));
  }
};

PodResourcesServer::PodResourcesServer(Options options)
    : options_(std::move(options)),
      limiter_(options_.qps, options_.burst, options_.clock),
      v1_(std::make_unique<V1Service>(this)),
      v1alpha1_(std::make_unique<V1alpha1Service>(this)) {}

PodResourcesServer::~PodResourcesServer() { Shutdown(std::chrono::milliseconds(0)); }

void PodResourcesServer::Publish(std::shared_ptr<const ServedState> state) {
  std::lock_guard<std::mutex> lock(mu_);
  state_ = std::move(state);
}

grpc::Status PodResourcesServer::Admit(std::shared_ptr<const ServedState>* state) {
  if (!limiter_.Allow()) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "rejected by rate limit");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    *state = state_;
  }
  if (*state == nullptr) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "node state is not restored yet; retry later");
  }
  return grpc::Status::OK;
}

void PodResourcesServer::Observe(const char* version, const char* method,
                                 const grpc::Status& status) {
  if (options_.on_request) options_.on_request(version, method, !status.ok());
}

grpc::Status PodResourcesServer::List(const v1::ListPodResourcesRequest&,
                                      v1::ListPodResourcesResponse* response) {
  std::shared_ptr<const ServedState> state;
  grpc::Status st = Admit(&state);
  if (st.ok()) {
    if (!options_.is_running) {
      response->CopyFrom(state->list);
    } else {
      for (int i = 0; i < state->list.pod_resources_size(); ++i) {
        if (options_.is_running(state->uids[i])) {
          *response->add_pod_resources() = state->list.pod_resources(i);
        }
      }
    }
  }
  Observe("v1", "list", st);
  return st;
}

namespace {

// Keeps the published state alive while gRPC sends bytes that point into it.
struct StateRef {
  std::shared_ptr<const ServedState> state;
};
void ReleaseStateRef(void* p) { delete static_cast<StateRef*>(p); }

}  // namespace

grpc::Status PodResourcesServer::ListWire(const grpc::ByteBuffer& request,
                                          grpc::ByteBuffer* response) {
  std::shared_ptr<const ServedState> state;
  grpc::Status st = Admit(&state);
  if (st.ok()) {
    std::vector<grpc::Slice> slices;
    v1::ListPodResourcesRequest parsed;
    std::string bytes;
    // An empty message may come as a buffer without slices.
    if (request.Valid() && !request.Dump(&slices).ok()) {
      st = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "cannot read the request");
    } else {
      for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
      if (!parsed.ParseFromString(bytes)) {
        st = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "malformed ListPodResourcesRequest");
      }
    }
  }
  if (st.ok()) {
    if (!options_.is_running && !state->list_wire.empty()) {
      const std::string& wire = state->list_wire;
      auto* ref = new StateRef{state};
      grpc::Slice slice(const_cast<char*>(wire.data()), wire.size(), &ReleaseStateRef, ref);
      *response = grpc::ByteBuffer(&slice, 1);
    } else {
      std::string wire;
      for (size_t i = 0; i < state->pod_wire.size(); ++i) {
        if (options_.is_running(state->uids[i])) wire += state->pod_wire[i];
      }
      grpc::Slice slice(wire);
      *response = grpc::ByteBuffer(&slice, 1);
    }
  }
  Observe("v1", "list", st);
  return st;
}

grpc::Status PodResourcesServer::Get(const v1::GetPodResourcesRequest& request,
                                     v1::GetPodResourcesResponse* response) {
  std::shared_ptr<const ServedState> state;
  grpc::Status st = Admit(&state);
  if (st.ok()) {
    // The kubelet's Get looks the pod up in the pod manager (GetPodByName): every pod the node
    // knows, running or not, admitted or rejected; List reports active pods only.
    const std::string key = fmt::format("{}/{}", request.pod_namespace(), request.pod_name());
    if (auto it = state->index.find(key); it != state->index.end()) {
      *response->mutable_pod_resources() = state->list.pod_resources(it->second);
    } else if (auto k = state->known.find(key); k != state->known.end()) {
      *response->mutable_pod_resources() = k->second;
    } else {
      st = grpc::Status(grpc::StatusCode::NOT_FOUND,
                        fmt::format("pod {} in namespace {} not found", request.pod_name(),
                                    request.pod_namespace()));
    }
  }
  Observe("v1", "get", st);
  return st;
}

grpc::Status PodResourcesServer::GetAllocatableResources(
    const v1::AllocatableResourcesRequest&, v1::AllocatableResourcesResponse* response) {
  std::shared_ptr<const ServedState> state;
  grpc::Status st = Admit(&state);
  if (st.ok()) response->CopyFrom(state->allocatable);
  Observe("v1", "get_allocatable", st);
  return st;
}

grpc::Status PodResourcesServer::ListV1alpha1(const v1alpha1::ListPodResourcesRequest&,
                                              v1alpha1::ListPodResourcesResponse* response) {
  std::shared_ptr<const ServedState> state;
  grpc::Status st = Admit(&state);
  if (st.ok()) {
    if (!options_.is_running) {
      response->CopyFrom(state->list_v1alpha1);
    } else {
      for (int i = 0; i < state->list_v1alpha1.pod_resources_size(); ++i) {
        if (options_.is_running(state->uids[i])) {
          *response->add_pod_resources() = state->list_v1alpha1.pod_resources(i);
        }
      }
    }
  }
  Observe("v1alpha1", "list", st);
  return st;
}

absl::Status PodResourcesServer::Listen(const std::string& socket_path) {
  namespace fs = std::filesystem;
  if (server_ != nullptr) return absl::FailedPreconditionError("already listening");
  std::error_code ec;
  fs::path parent = fs::path(socket_path).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) {
      return absl::UnavailableError(
          fmt::format("--socket {}: cannot create directory {}: {}", socket_path,
                      parent.string(), ec.message()));
    }
  }
  // A stale socket from an earlier run (the kubelet removes it too); never another file type,
  // and never the socket of a server that still accepts connections on it.
  struct stat st;
  if (lstat(socket_path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          fmt::format("--socket {}: exists and is not a socket", socket_path));
    }
    if (std::optional<pid_t> pid = UnixSocketListener(socket_path); pid.has_value()) {
      const std::string who = *pid > 0 ? ProcessDescription(*pid) : "";
      return absl::FailedPreconditionError(fmt::format(
          "--socket {} is in use by {}{}: another server listens on it", socket_path,
          who.empty() ? "another process" : who,
          *pid > 0 ? fmt::format(" (pid {})", *pid) : ""));
    }
    if (unlink(socket_path.c_str()) != 0) {
      return absl::UnavailableError(fmt::format("--socket {}: cannot remove the stale socket: {}",
                                                socket_path, std::strerror(errno)));
    }
  }
  // The server accepts the connections itself and relays them to gRPC (socket_relay.h).
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(fmt::format(
        "--socket {}: longer than the {} bytes of a unix socket path", socket_path,
        sizeof(addr.sun_path) - 1));
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    return absl::UnavailableError(
        fmt::format("--socket {}: socket: {}", socket_path, std::strerror(errno)));
  }
  // The socket is created with the process umask: make it 0600 from the start.
  mode_t old = umask(0177);
  int bound = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int bind_errno = errno;
  umask(old);
  if (bound != 0 || listen(fd, SOMAXCONN) != 0) {
    int e = bound != 0 ? bind_errno : errno;
    close(fd);
    return absl::UnavailableError(fmt::format("--socket {}: cannot listen on the unix socket: {}",
                                              socket_path, std::strerror(e)));
  }
  chmod(socket_path.c_str(), 0600);

  grpc::ServerBuilder builder;
  builder.RegisterService(v1_.get());
  builder.RegisterService(v1alpha1_.get());
  // Requests are empty or two short strings: refuse anything large before decoding it.
  builder.SetMaxReceiveMessageSize(64 * 1024);
  // gRPC C++ checks that size only once the whole message has arrived (grpc-go refuses on the
  // 5-byte length prefix): without a bound a client announcing a 4 GiB request makes the server
  // buffer all of it. The memory quota makes the transport cancel such calls instead.
  grpc::ResourceQuota quota("podtopo-podresources");
  quota.Resize(kMemoryQuotaBytes);
  builder.SetResourceQuota(quota);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) {
    close(fd);
    unlink(socket_path.c_str());
    return absl::UnavailableError(
        fmt::format("--socket {}: cannot start the gRPC server", socket_path));
  }
  grpc::Server* server = server_.get();
  relay_ = std::make_unique<SocketRelay>(fd, SocketRelay::Limits{}, [server](int conn) {
    grpc::AddInsecureChannelFromFd(server, conn);
  });
  socket_path_ = socket_path;
  return absl::OkStatus();
}

void PodResourcesServer::Shutdown(std::chrono::milliseconds grace) {
  if (server_ == nullptr) return;
  relay_->Stop();
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  server_->Wait();
  server_.reset();
  relay_.reset();
  unlink(socket_path_.c_str());
}

}  // namespace podtopo::podresources
