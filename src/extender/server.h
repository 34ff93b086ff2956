// The HTTP side of `podtopo extender` (docs/scheduler.md): kube-scheduler's extender protocol
// over HTTP/1.1 (civetweb, as the agent), on top of an Extender (extender/extender.h) that makes
// every decision. The server only moves bytes, enforces the body limit and counts.
//
//   POST /filter       ExtenderArgs in, ExtenderFilterResult out     (filterVerb: filter)
//   POST /prioritize   ExtenderArgs in, HostPriorityList out         (prioritizeVerb: prioritize)
//   POST /bind         ExtenderBindingArgs in, ExtenderBindingResult (bindVerb: bind)
//   GET  /healthz      200 "ok" while the server serves (a liveness probe)
//   GET  /readyz       200 once every source (informer) has listed; 503 naming those that have not
//   GET  /metrics      Prometheus text: requests by verb and code, their latency, nodes
//                      filtered/failed/approximate, NRT objects held, reservations, bind errors,
//                      and each source's errors and sync state
//
// The scheduler's urlPrefix is http://HOST:PORT (no path). A body larger than
// max_request_bytes is refused with 413 before it is read: from its Content-Length when it has
// one, else as soon as the bytes read pass the limit. Every error body is JSON
// {"Error": "..."} naming the request, as the protocol's result objects carry errors. Requests
// run concurrently on `threads` worker threads; the Extender is thread-safe.
//
// Example:
//   auto ext = Extender::Create({}).value();
//   auto server = Server::Start(ext.get(), {.listen = "127.0.0.1:0", .bind = PostBinding});
//   int port = (*server)->port();  // the port bound (":0" picks a free one)
//   (*server)->Stop();
//
// Thread safety: Start/Stop from one thread; the handlers run on civetweb's worker threads.
#ifndef PODTOPO_EXTENDER_SERVER_H_
#define PODTOPO_EXTENDER_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "extender/extender.h"

namespace podtopo::extender {

// One input that feeds the Extender (an informer): for /readyz and /metrics.
struct SourceStatus {
  std::string name;  // "noderesourcetopologies", "pods"
  bool synced = false;
  uint64_t errors = 0;
  std::string last_error;
};

struct ServerOptions {
  // HOST:PORT (":PORT" and "PORT" bind 127.0.0.1; port 0 picks a free one); errors name `flag`.
  std::string listen;
  std::string flag = "--listen";
  int threads = 8;
  size_t max_request_bytes = 64 << 20;  // as ExtenderOptions::max_request_bytes
  // POST /bind creates the Binding (the CLI posts it to the API server). Unset: /bind answers
  // 404, as an extender without bindVerb.
  std::function<absl::Status(const BindingArgs&)> bind;
  // The sources' state, read on every /readyz and /metrics. Unset: no sources (ready at once).
  std::function<std::vector<SourceStatus>()> sources;
};

class Server {
 public:
  // Binds the listener. Errors: a malformed address (kInvalidArgument, naming the flag), or one
  // that cannot be bound (kUnavailable: "port 8888 is in use", ...).
  static absl::StatusOr<std::unique_ptr<Server>> Start(Extender* extender, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Stops accepting, waits for requests in progress. Idempotent.
  void Stop();

  const std::string& address() const;  // "127.0.0.1:8888", as bound (the real port)
  int port() const;

  // The /metrics text now.
  std::string MetricsText() const;

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace podtopo::extender

#endif  // PODTOPO_EXTENDER_SERVER_H_
