#include "nri/connection.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "fmt/format.h"
#include "util/unix_socket.h"
#include "nri/ttrpc/request.pb.h"

namespace podtopo::nri {

namespace {
namespace tt = ::podtopo::ttrpc;
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::Dial(const std::string& socket_path) {
  sockaddr_un addr{};
  if (socket_path.empty() || socket_path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        fmt::format("NRI socket {:?}: expected a unix socket path of 1 to {} bytes", socket_path,
                    sizeof(addr.sun_path) - 1));
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(fmt::format("socket: {}", std::strerror(errno)));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int e = errno;
    ::close(fd);
    // Say what is wrong with the path (missing, not a socket, permission, stale) when it can.
    absl::Status why = CheckUnixSocket(
        socket_path, {"NRI socket", "containerd (with NRI enabled)", "--socket"});
    return absl::UnavailableError(
        why.ok() ? fmt::format("connect to NRI socket {}: {}", socket_path, std::strerror(e))
                 : std::string(why.message()));
  }
  return std::unique_ptr<Connection>(new Connection(fd, socket_path));
}

std::unique_ptr<Connection> Connection::FromFd(int fd, std::string peer_name) {
  return std::unique_ptr<Connection>(new Connection(fd, std::move(peer_name)));
}

Connection::Connection(int fd, std::string peer_name) : fd_(fd), peer_(std::move(peer_name)) {}

Connection::~Connection() {
  Close();
  if (fd_ >= 0) ::close(fd_);
}

void Connection::Start(Handler handler) {
  handler_ = std::move(handler);
  reader_ = std::thread([this] { ReadLoop(); });
  worker_ = std::thread([this] { WorkLoop(); });
}

void Connection::Fail(absl::Status why) {
  std::map<uint32_t, std::shared_ptr<Pending>> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
    close_reason_ = why;
    pending.swap(pending_);
    for (auto& [id, p] : pending) {
      p->done = true;
      p->result = absl::UnavailableError(
          why.ok() ? fmt::format("NRI connection to {} closed", peer_)
                   : fmt::format("NRI connection to {} closed: {}", peer_, std::string(why.message())));
    }
  }
  ::shutdown(fd_, SHUT_RDWR);
  cv_.notify_all();
}

void Connection::Close() {
  Fail(absl::OkStatus());
  if (reader_.joinable()) reader_.join();
  if (worker_.joinable()) worker_.join();
}

absl::Status Connection::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return closed_; });
  return close_reason_;
}

std::optional<absl::Status> Connection::WaitFor(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout, [this] { return closed_; })) return std::nullopt;
  return close_reason_;
}

absl::Status Connection::Send(uint32_t conn, const TtrpcMessage& message) {
  auto bytes = EncodeTtrpcMessage(message);
  if (!bytes.ok()) return bytes.status();
  // Each message goes out as its own frames, none over 4096 bytes (see ttrpc.h).
  std::string frames = EncodeMuxFrames(conn, *bytes);
  std::lock_guard<std::mutex> lock(write_mu_);
  size_t off = 0;
  while (off < frames.size()) {
    ssize_t n = ::send(fd_, frames.data() + off, frames.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(
          fmt::format("write to NRI socket {}: {}", peer_, std::strerror(errno)));
    }
    off += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

void Connection::ReadLoop() {
  MuxDecoder mux;
  TtrpcDecoder plugin_conn(fmt::format("NRI connection {} (plugin service)", kPluginServiceConn));
  TtrpcDecoder runtime_conn(
      fmt::format("NRI connection {} (runtime service)", kRuntimeServiceConn));
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n < 0) {
        Fail(absl::UnavailableError(fmt::format("read: {}", std::strerror(errno))));
      } else if (mux.Pending() > 0) {
        Fail(absl::DataLossError(
            fmt::format("EOF inside a multiplexer frame ({} bytes pending)", mux.Pending())));
      } else {
        Fail(absl::UnavailableError("the runtime closed the connection"));
      }
      return;
    }
    mux.Feed(std::string_view(buf, static_cast<size_t>(n)));
    for (;;) {
      auto frame = mux.Next();
      if (!frame.ok()) return Fail(frame.status());
      if (!frame->has_value()) break;
      TtrpcDecoder* dec = nullptr;
      if ((*frame)->conn == kPluginServiceConn) dec = &plugin_conn;
      if ((*frame)->conn == kRuntimeServiceConn) dec = &runtime_conn;
      if (dec == nullptr) continue;  // a connection nobody opened: dropped, as NRI's mux does
      dec->Feed((*frame)->payload);
      for (;;) {
        auto msg = dec->Next();
        if (!msg.ok()) return Fail(msg.status());
        if (!msg->has_value()) break;
        TtrpcMessage& m = **msg;
        if (dec == &plugin_conn) {
          if (m.type != MessageType::kRequest) {
            return Fail(absl::DataLossError(fmt::format(
                "message of type {} on stream {} of the plugin service: only requests are "
                "expected there",
                static_cast<int>(m.type), m.stream_id)));
          }
          std::lock_guard<std::mutex> lock(mu_);
          requests_.push_back(std::move(m));
          cv_.notify_all();
        } else {
          if (m.type != MessageType::kResponse) {
            return Fail(absl::DataLossError(fmt::format(
                "message of type {} on stream {} of the runtime service: only responses are "
                "expected there",
                static_cast<int>(m.type), m.stream_id)));
          }
          tt::Response resp;
          absl::StatusOr<std::string> result;
          if (!resp.ParseFromString(m.payload)) {
            result = absl::DataLossError(
                fmt::format("undecodable ttrpc response on stream {}", m.stream_id));
          } else if (resp.has_status() && resp.status().code() != 0) {
            int code = resp.status().code();
            result = absl::Status(code > 0 && code <= 16 ? static_cast<absl::StatusCode>(code)
                                                         : absl::StatusCode::kUnknown,
                                  std::string(resp.status().message()));
          } else {
            result = std::move(*resp.mutable_payload());
          }
          std::lock_guard<std::mutex> lock(mu_);
          auto it = pending_.find(m.stream_id);
          if (it != pending_.end()) {  // else: a reply after its call timed out
            it->second->done = true;
            it->second->result = std::move(result);
            pending_.erase(it);
            cv_.notify_all();
          }
        }
      }
    }
  }
}

absl::Status Connection::Dispatch(const TtrpcMessage& request) {
  tt::Request req;
  tt::Response resp;
  if (!req.ParseFromString(request.payload)) {
    resp.mutable_status()->set_code(static_cast<int>(absl::StatusCode::kInvalidArgument));
    resp.mutable_status()->set_message(
        fmt::format("podtopo: undecodable ttrpc request on stream {}", request.stream_id));
  } else {
    absl::StatusOr<std::string> out = handler_(req.service(), req.method(), req.payload());
    if (out.ok()) {
      resp.set_payload(std::move(*out));
    } else {
      resp.mutable_status()->set_code(static_cast<int>(out.status().code()));
      resp.mutable_status()->set_message(std::string(out.status().message()));
    }
  }
  TtrpcMessage m;
  m.stream_id = request.stream_id;
  m.type = MessageType::kResponse;
  m.payload = resp.SerializeAsString();
  return Send(kPluginServiceConn, m);
}

void Connection::WorkLoop() {
  for (;;) {
    TtrpcMessage request;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return closed_ || !requests_.empty(); });
      if (closed_) return;
      request = std::move(requests_.front());
      requests_.pop_front();
    }
    absl::Status s = Dispatch(request);
    if (!s.ok()) return Fail(s);
  }
}

absl::StatusOr<std::string> Connection::Call(const std::string& service, const std::string& method,
                                             const std::string& payload,
                                             std::chrono::milliseconds timeout) {
  tt::Request req;
  req.set_service(service);
  req.set_method(method);
  req.set_payload(payload);
  req.set_timeout_nano(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count());
  auto pending = std::make_shared<Pending>();
  TtrpcMessage m;
  m.type = MessageType::kRequest;
  m.payload = req.SerializeAsString();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) {
      return absl::UnavailableError(fmt::format("NRI connection to {} is closed", peer_));
    }
    m.stream_id = next_stream_;
    next_stream_ += 2;
    pending_[m.stream_id] = pending;
  }
  absl::Status sent = Send(kRuntimeServiceConn, m);
  std::unique_lock<std::mutex> lock(mu_);
  if (!sent.ok()) {
    pending_.erase(m.stream_id);
    return sent;
  }
  if (!cv_.wait_for(lock, timeout, [&] { return pending->done; })) {
    pending_.erase(m.stream_id);
    return absl::DeadlineExceededError(fmt::format("NRI {}/{}: no reply from {} within {} ms",
                                                   service, method, peer_, timeout.count()));
  }
  if (!pending->result.ok()) {
    return absl::Status(pending->result.status().code(),
                        fmt::format("NRI {}/{}: {}", service, method,
                                    std::string(pending->result.status().message())));
  }
  return std::move(*pending->result);
}

}  // namespace podtopo::nri
