// SocketRelay: the PodResources socket's listener, a relay in front of gRPC that bounds what a
// client that never reads can make the server hold.
//
// gRPC C++ 1.51 keeps every answer it cannot write (the call and its HTTP/2 stream, about
// 8.5 KiB) until the connection can be written or closes, and a client that never reads never
// acknowledges SETTINGS, so MAX_CONCURRENT_STREAMS is never enforced on it: without a relay
// such a client grows the server's memory with every request it sends (docs/reliability.md,
// "The gRPC surface"). Shutting the connection down under gRPC does not make it let go either;
// a peer that closes does. So the relay accepts each connection, gives gRPC one end of a
// socketpair (`serve(fd)`, e.g. grpc::AddInsecureChannelFromFd) and copies bytes both ways
// through small buffers:
//  * it reads the HTTP/2 frame headers (not their contents) and passes a HEADERS frame that
//    opens a stream only while fewer than `max_streams_per_connection` of the connection's
//    streams are open (not yet ended by gRPC's END_STREAM or an RST_STREAM): the limit
//    MAX_CONCURRENT_STREAMS would set, enforced whether or not the client acknowledged it.
//    The frames behind a held HEADERS wait with it, except those of streams already open and
//    of the connection (stream 0), so a client that reads keeps its windows moving;
//  * while the answers waiting for a client fill their buffer (the client does not read), no
//    more of its bytes are read;
//  * a connection whose answers have stayed full for `stall` is closed (both ends: gRPC sees
//    its peer close and drops the calls); logged (spdlog warn);
//  * connections beyond `max_connections` open ones are closed at once (logged).
// A client that reads gets its bytes as before, one copy later.
//
// Example:
//   SocketRelay relay(listen_fd, {}, [&](int fd) { grpc::AddInsecureChannelFromFd(server, fd); });
//   ...
//   relay.Stop();   // before the gRPC server shuts down
//
// One thread (epoll) for all connections. Thread-safe: Stop() may be called from any thread.
#ifndef PODTOPO_PODRESOURCES_SOCKET_RELAY_H_
#define PODTOPO_PODRESOURCES_SOCKET_RELAY_H_

#include <chrono>
#include <functional>
#include <thread>

namespace podtopo::podresources {

class SocketRelay {
 public:
  struct Limits {
    int max_connections = 128;
    int max_streams_per_connection = 32;
    size_t buffer_bytes = 32 << 10;  // each direction, each connection (a whole HTTP/2 frame)
    std::chrono::milliseconds stall = std::chrono::seconds(10);
  };

  // Takes `listen_fd` (a listening socket; closed by Stop).
  SocketRelay(int listen_fd, Limits limits, std::function<void(int fd)> serve);
  ~SocketRelay();
  SocketRelay(const SocketRelay&) = delete;
  SocketRelay& operator=(const SocketRelay&) = delete;

  // Stops accepting and relaying, closes the listening socket and every connection.
  void Stop();

 struct Conn;  // one relayed connection (socket_relay.cc)

 private:
  void Run();

  const int listen_fd_;
  const Limits limits_;
  const std::function<void(int)> serve_;
  int wake_fd_ = -1;
  std::thread thread_;
};

}  // namespace podtopo::podresources

#endif  // PODTOPO_PODRESOURCES_SOCKET_RELAY_H_
