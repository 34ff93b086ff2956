// PodResourcesServer: the kubelet's PodResources gRPC endpoint (v1 and the legacy v1alpha1 on
// the same unix socket), answering from an immutable ServedState published by the daemon.
//
//  * Until the first Publish() every call fails with FAILED_PRECONDITION ("node state is not
//    restored yet") — the daemon publishes after the checkpoints are restored.
//  * Every call first takes a token from one global RateLimiter (the kubelet's unary
//    interceptor): RESOURCE_EXHAUSTED "rejected by rate limit" when none is left.
//  * List copies the published response (with a running-pod filter when one is set: List then
//    reports only pods whose uid passes it, as the kubelet's List reports active pods). Get
//    answers for every pod the node knows, as the kubelet's Get reads the pod manager: admitted
//    pods whether they run or not, and rejected pods (ServedState::known, no resources). Get
//    of an unknown pod is NOT_FOUND "pod NAME in namespace NS not found" (the kubelet returns
//    the same text with code Unknown).
//  * The socket's parent directory is created (0750), a stale socket removed, and the socket
//    created with mode 0600.
//  * Methods are served with gRPC's callback API (no thread waits for a client that does not
//    read its answers), the transport's buffers share a 64 MiB gRPC memory quota, and the
//    server relays each connection to gRPC itself, so that a client that does not read its
//    answers gets no more requests served and is closed when it stalls (socket_relay.h;
//    docs/reliability.md, "The gRPC surface").
//
// Example:
//   PodResourcesServer server({.qps = 100, .burst = 10});
//   PODTOPO_RETURN_IF_ERROR(server.Listen("/var/lib/kubelet/pod-resources/kubelet.sock"));
//   server.Publish(BuildServedState(snapshot, rules, numa, allocatable));
//   ...
//   server.Shutdown();
//
// Thread-safe: Publish() may be called from any thread while requests are served.
#ifndef PODTOPO_PODRESOURCES_SERVER_H_
#define PODTOPO_PODRESOURCES_SERVER_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "grpcpp/server.h"
#include "grpcpp/support/byte_buffer.h"
#include "podresources/rate_limiter.h"
#include "podresources/report.h"
#include "podresources/socket_relay.h"
#include "podresources/v1/api.grpc.pb.h"
#include "podresources/v1alpha1/api.grpc.pb.h"

namespace podtopo::podresources {

class PodResourcesServer {
 public:
  struct Options {
    double qps = kDefaultQps;  // <= 0: no rate limit
    int burst = kDefaultBurst;
    // When set, List reports only pods whose uid it accepts (CRI hooks' IsRunning); Get is not
    // filtered.
    // Called from gRPC threads; must be thread-safe and cheap.
    std::function<bool(const std::string& uid)> is_running;
    // Called once per request after it is answered: api version ("v1", "v1alpha1"), method
    // ("list", "get", "get_allocatable"), and whether it failed. For the endpoint metrics.
    std::function<void(const char* version, const char* method, bool error)> on_request;
    RateLimiter::Clock clock;  // tests
  };

  explicit PodResourcesServer(Options options);
  ~PodResourcesServer();

  // Makes `state` the answer of every following request.
  void Publish(std::shared_ptr<const ServedState> state);

  // Creates the socket (see the banner) and starts serving on it. A socket file already there
  // is replaced only when nothing accepts connections on it (a stale one): the socket of a
  // live server is kFailedPrecondition "--socket PATH is in use by podtopo serve (pid N)".
  // Errors name the path.
  absl::Status Listen(const std::string& socket_path);

  // Stops serving: in-flight calls get `grace` to finish. Removes the socket. Idempotent.
  void Shutdown(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

  // The handlers, callable without a socket (benchmarks, tests). ListWire is what the socket
  // serves for v1 List (a synchronous method whose response type carries these bytes): the
  // published response's encoding, shared without copying (with a running-pod filter, the
  // running pods' encodings concatenated); `request` must decode as a ListPodResourcesRequest
  // (INVALID_ARGUMENT otherwise). List returns the same response as a message.
  grpc::Status ListWire(const grpc::ByteBuffer& request, grpc::ByteBuffer* response);
  grpc::Status List(const v1::ListPodResourcesRequest& request,
                    v1::ListPodResourcesResponse* response);
  grpc::Status Get(const v1::GetPodResourcesRequest& request,
                   v1::GetPodResourcesResponse* response);
  grpc::Status GetAllocatableResources(const v1::AllocatableResourcesRequest& request,
                                       v1::AllocatableResourcesResponse* response);
  grpc::Status ListV1alpha1(const v1alpha1::ListPodResourcesRequest& request,
                            v1alpha1::ListPodResourcesResponse* response);

 private:
  class V1Service;
  class V1alpha1Service;

  // The published state or an error status (not restored / rate limited).
  grpc::Status Admit(std::shared_ptr<const ServedState>* state);
  void Observe(const char* version, const char* method, const grpc::Status& status);

  Options options_;
  RateLimiter limiter_;
  std::mutex mu_;
  std::shared_ptr<const ServedState> state_;
  std::unique_ptr<V1Service> v1_;
  std::unique_ptr<V1alpha1Service> v1alpha1_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<SocketRelay> relay_;  // the socket's listener; set while listening
  std::string socket_path_;
};

}  // namespace podtopo::podresources

#endif  // PODTOPO_PODRESOURCES_SERVER_H_
