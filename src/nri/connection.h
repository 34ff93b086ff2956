// Connection: one NRI plugin connection to a runtime over a unix socket, in podtopo's own C++:
// NRI's multiplexer (two logical connections on one socket) with ttrpc on each (nri/ttrpc.h).
//
// - Logical connection 1 (kPluginServiceConn): the runtime's requests to the plugin
//   (Configure, Synchronize, CreateContainer, ...). They are answered one at a time, in order,
//   on a worker thread, by the Handler given to Start(); a handler error becomes the ttrpc
//   response status (the absl code as the gRPC code, the message as is).
// - Logical connection 2 (kRuntimeServiceConn): the plugin's requests to the runtime
//   (RegisterPlugin, UpdateContainers) through Call(), from any thread other than the worker
//   while it runs a handler (the runtime may hold its lock while it waits for the plugin).
// - A malformed frame or message, EOF or a read error closes the connection: pending calls fail
//   with kUnavailable naming the reason, and Wait() returns it.
//
// Example:
//   auto c = Connection::Dial("/run/nri/nri.sock");
//   (*c)->Start([](const std::string& service, const std::string& method,
//                  const std::string& payload) -> absl::StatusOr<std::string> { ... });
//   auto reply = (*c)->Call("nri.pkg.api.v1alpha1.Runtime", "RegisterPlugin", bytes, 5s);
//   absl::Status why = (*c)->Wait();   // returns when the runtime goes away or Close()
//
// Thread safety: Call, Close and Wait may be called from any thread.
#ifndef PODTOPO_NRI_CONNECTION_H_
#define PODTOPO_NRI_CONNECTION_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nri/ttrpc.h"

namespace podtopo::nri {

class Connection {
 public:
  using Handler = std::function<absl::StatusOr<std::string>(
      const std::string& service, const std::string& method, const std::string& payload)>;

  // Connects to the unix socket at `socket_path`. Errors: kUnavailable naming the path.
  static absl::StatusOr<std::unique_ptr<Connection>> Dial(const std::string& socket_path);
  // Takes ownership of a connected stream socket (tests: one end of a socketpair).
  static std::unique_ptr<Connection> FromFd(int fd, std::string peer_name);
  ~Connection();  // Close()

  // Starts the reader and the worker. Call once.
  void Start(Handler handler);

  // Calls service/method on the peer's service (logical connection 2) and waits for the reply
  // payload. Errors: the peer's status (its code and message), kDeadlineExceeded after
  // `timeout`, kUnavailable when the connection is closed.
  absl::StatusOr<std::string> Call(const std::string& service, const std::string& method,
                                   const std::string& payload, std::chrono::milliseconds timeout);

  // Closes the socket and joins the threads. Idempotent; not from a handler.
  void Close();
  // Blocks until the connection is closed; returns why (OK after Close()).
  absl::Status Wait();
  // Like Wait() with a limit; nullopt when still open after `timeout`.
  std::optional<absl::Status> WaitFor(std::chrono::milliseconds timeout);

 private:
  Connection(int fd, std::string peer_name);
  void ReadLoop();
  void WorkLoop();
  void Fail(absl::Status why);
  absl::Status Send(uint32_t conn, const TtrpcMessage& message);
  absl::Status Dispatch(const TtrpcMessage& request);

  int fd_;
  std::string peer_;
  Handler handler_;
  std::thread reader_, worker_;

  std::mutex write_mu_;

  std::mutex mu_;  // everything below
  std::condition_variable cv_;
  bool closed_ = false;
  absl::Status close_reason_;
  std::deque<TtrpcMessage> requests_;  // from the runtime, for the worker
  uint32_t next_stream_ = 1;
  struct Pending {
    bool done = false;
    absl::StatusOr<std::string> result = absl::UnknownError("no reply");
  };
  std::map<uint32_t, std::shared_ptr<Pending>> pending_;
};

}  // namespace podtopo::nri

#endif  // PODTOPO_NRI_CONNECTION_H_
