#include "podresources/socket_relay.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <set>
#include <string_view>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "spdlog/spdlog.h"

namespace podtopo::podresources {

// One relayed connection: `client` (accepted) and `inner` (ours of the socketpair whose other
// end gRPC serves). `up` holds the client's bytes for gRPC, `down` gRPC's for the client.
struct SocketRelay::Conn {
  int client = -1, inner = -1;
  std::string up, down;  // bytes to write to gRPC, to the client
  bool client_eof = false, inner_eof = false, inner_shut = false;
  bool inner_refuses = false;  // gRPC closed its reading side: the client's bytes are dropped
  uint32_t client_events = 0, inner_events = 0;  // registered with epoll
  std::chrono::steady_clock::time_point full_since{};  // `down` full since; {} when not
  // HTTP/2 as the client sends it: the preface, then frames, held until they may go on.
  std::string raw;                  // bytes read, not yet a whole frame
  std::deque<std::string> held;     // whole frames, in order
  size_t held_bytes = 0;
  bool preface_done = false, opaque = false;  // opaque: not HTTP/2 frames, passed as they are
  std::set<uint32_t> open;          // streams passed to gRPC and not yet ended
  uint32_t last_stream = 0;
  // gRPC's frames towards the client, read only for the streams they end.
  std::string down_header;          // a frame header being read (up to 9 bytes)
  size_t down_payload_left = 0;
};

namespace {

constexpr size_t kFrameHeader = 9;
constexpr char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr size_t kPrefaceBytes = sizeof(kPreface) - 1;
enum : uint8_t { kData = 0, kHeaders = 1, kRstStream = 3, kContinuation = 9 };
constexpr uint8_t kEndStream = 0x1;

uint32_t StreamOf(std::string_view header) {
  return ((static_cast<uint32_t>(static_cast<uint8_t>(header[5])) << 24) |
          (static_cast<uint32_t>(static_cast<uint8_t>(header[6])) << 16) |
          (static_cast<uint32_t>(static_cast<uint8_t>(header[7])) << 8) |
          static_cast<uint32_t>(static_cast<uint8_t>(header[8]))) & 0x7fffffffu;
}
size_t LengthOf(std::string_view header) {
  return (static_cast<size_t>(static_cast<uint8_t>(header[0])) << 16) |
         (static_cast<size_t>(static_cast<uint8_t>(header[1])) << 8) |
         static_cast<size_t>(static_cast<uint8_t>(header[2]));
}

// Frames the client's bytes (`raw`) and passes on what may go to gRPC (`up`, up to `cap`):
// every frame, except that a new stream's HEADERS waits while `max_streams` streams are open,
// and behind it every later HEADERS or CONTINUATION (HPACK's order) and every frame of a
// stream not passed yet. Bytes that are not HTTP/2 frames go on as they are (gRPC answers them).
void PassUp(SocketRelay::Conn& c, size_t cap, size_t max_streams) {
  if (!c.opaque && !c.preface_done && c.raw.size() >= kPrefaceBytes) {
    c.opaque = c.raw.compare(0, kPrefaceBytes, kPreface) != 0;
    if (!c.opaque) {
      c.up.append(c.raw, 0, kPrefaceBytes);
      c.raw.erase(0, kPrefaceBytes);
      c.preface_done = true;
    }
  }
  size_t at = 0;
  while (!c.opaque && c.preface_done && c.raw.size() - at >= kFrameHeader) {
    size_t len = LengthOf(std::string_view(c.raw).substr(at));
    if (len > cap) c.opaque = true;  // larger than gRPC accepts: its error to give
    if (c.opaque || c.raw.size() - at < kFrameHeader + len) break;
    c.held.push_back(c.raw.substr(at, kFrameHeader + len));
    c.held_bytes += kFrameHeader + len;
    at += kFrameHeader + len;
  }
  c.raw.erase(0, at);
  if (c.opaque) {
    for (const std::string& f : c.held) c.up += f;
    c.held.clear();
    c.held_bytes = 0;
    c.up += c.raw;
    c.raw.clear();
    return;
  }
  std::deque<std::string> kept;
  bool blocked = false;
  for (std::string& f : c.held) {
    auto type = static_cast<uint8_t>(f[3]);
    uint32_t id = StreamOf(f);
    bool pass;
    if (c.up.size() >= cap) {
      pass = false;
      blocked = true;
    } else if (type == kHeaders || type == kContinuation) {
      bool opens = type == kHeaders && id > c.last_stream;
      if (opens && c.open.size() >= max_streams) blocked = true;
      pass = !blocked;
      if (pass && opens) {
        c.open.insert(id);
        c.last_stream = id;
      }
    } else {
      pass = !blocked || id == 0 || c.open.contains(id);
      if (pass && type == kRstStream) c.open.erase(id);
    }
    if (pass) {
      c.up += f;
      c.held_bytes -= f.size();
    } else {
      kept.push_back(std::move(f));
    }
  }
  c.held = std::move(kept);
}

// gRPC's bytes for the client: the streams its frames end (END_STREAM, RST_STREAM).
void WatchDown(SocketRelay::Conn& c, std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    if (c.down_payload_left > 0) {
      size_t n = std::min(c.down_payload_left, bytes.size() - i);
      i += n;
      c.down_payload_left -= n;
      continue;
    }
    size_t n = std::min(kFrameHeader - c.down_header.size(), bytes.size() - i);
    c.down_header.append(bytes.substr(i, n));
    i += n;
    if (c.down_header.size() < kFrameHeader) break;
    auto type = static_cast<uint8_t>(c.down_header[3]);
    auto flags = static_cast<uint8_t>(c.down_header[4]);
    if (((type == kData || type == kHeaders) && (flags & kEndStream)) || type == kRstStream) {
      c.open.erase(StreamOf(c.down_header));
    }
    c.down_payload_left = LengthOf(c.down_header);
    c.down_header.clear();
  }
}

// Reads into `buf` up to `cap` bytes: false on end of file or error.
bool ReadSome(int fd, std::string* buf, size_t cap) {
  char tmp[16 << 10];
  size_t want = std::min(cap - buf->size(), sizeof(tmp));
  ssize_t n = read(fd, tmp, want);
  if (n > 0) {
    buf->append(tmp, static_cast<size_t>(n));
    return true;
  }
  return n < 0 && (errno == EAGAIN || errno == EINTR);
}

// Writes what it can of `buf`: false on error.
bool WriteSome(int fd, std::string* buf) {
  ssize_t n = send(fd, buf->data(), buf->size(), MSG_NOSIGNAL);
  if (n >= 0) {
    buf->erase(0, static_cast<size_t>(n));
    return true;
  }
  return errno == EAGAIN || errno == EINTR;
}

}  // namespace

SocketRelay::SocketRelay(int listen_fd, Limits limits, std::function<void(int fd)> serve)
    : listen_fd_(listen_fd), limits_(limits), serve_(std::move(serve)) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  thread_ = std::thread([this] { Run(); });
}

SocketRelay::~SocketRelay() {
  Stop();
  close(wake_fd_);
}

void SocketRelay::Stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  thread_.join();
}

void SocketRelay::Run() {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  // epoll data: the descriptor; conns by either of their descriptors.
  std::map<int, std::shared_ptr<Conn>> by_fd;
  size_t open = 0, refused = 0, stalled = 0;
  auto add = [&](int fd, uint32_t events) {
    epoll_event ev{.events = events, .data = {.fd = fd}};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  };
  add(listen_fd_, EPOLLIN);
  add(wake_fd_, EPOLLIN);
  const size_t cap = limits_.buffer_bytes;
  auto drop = [&](Conn& c) {
    for (int fd : {c.client, c.inner}) {
      epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
      close(fd);
    }
    int client = c.client, inner = c.inner;
    by_fd.erase(client);
    by_fd.erase(inner);  // may destroy c
    --open;
  };
  // Registers what each side of `c` waits for now.
  auto rearm = [&](Conn& c) {
    uint32_t want_client = 0, want_inner = 0;
    if (!c.client_eof && c.raw.size() + c.held_bytes < cap && c.up.size() < cap &&
        c.down.size() < cap) {
      want_client |= EPOLLIN;
    }
    if (!c.down.empty()) want_client |= EPOLLOUT;
    if (!c.inner_eof && c.down.size() < cap) want_inner |= EPOLLIN;
    if (!c.up.empty()) want_inner |= EPOLLOUT;
    if (want_client != c.client_events) {
      epoll_event ev{.events = want_client, .data = {.fd = c.client}};
      epoll_ctl(ep, EPOLL_CTL_MOD, c.client, &ev);
      c.client_events = want_client;
    }
    if (!c.inner_eof && want_inner != c.inner_events) {
      epoll_event ev{.events = want_inner, .data = {.fd = c.inner}};
      epoll_ctl(ep, EPOLL_CTL_MOD, c.inner, &ev);
      c.inner_events = want_inner;
    }
    if (c.down.size() >= cap) {
      if (c.full_since == std::chrono::steady_clock::time_point{}) {
        c.full_since = std::chrono::steady_clock::now();
      }
    } else {
      c.full_since = {};
    }
  };
  epoll_event events[64];
  while (true) {
    int n = epoll_wait(ep, events, 64, 1000);
    if (n < 0 && errno != EINTR) {
      spdlog::error("podresources: epoll_wait: {}", std::strerror(errno));
      break;
    }
    bool stop = false;
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == wake_fd_) {
        stop = true;
        break;
      }
      if (fd == listen_fd_) {
        int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (client < 0) {
          if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
            spdlog::warn("podresources: accept: {}", std::strerror(errno));
          }
          continue;
        }
        if (open >= static_cast<size_t>(limits_.max_connections)) {
          if (refused++ % 1000 == 0) {
            spdlog::warn("podresources: {} connections open, the most served; refusing new ones "
                         "({} refused so far)", open, refused);
          }
          close(client);
          continue;
        }
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) != 0) {
          spdlog::warn("podresources: socketpair: {}", std::strerror(errno));
          close(client);
          continue;
        }
        // What the kernel queues on each hop stays small: gRPC takes only a few requests ahead
        // of what the client reads, and answers only a few more than it reads.
        int small = static_cast<int>(cap);
        for (int fd : {client, pair[0], pair[1]}) {
          setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
        }
        auto c = std::make_shared<Conn>();
        c->client = client;
        c->inner = pair[1];
        by_fd[client] = c;
        by_fd[pair[1]] = c;
        ++open;
        add(client, 0);
        add(pair[1], 0);
        rearm(*c);
        serve_(pair[0]);
        continue;
      }
      auto it = by_fd.find(fd);
      if (it == by_fd.end()) continue;
      std::shared_ptr<Conn> keep = it->second;
      Conn& c = *keep;
      uint32_t ev = events[i].events;
      if (fd == c.client) {
        // The client closed (or failed): what it had not read cannot reach it.
        if (ev & (EPOLLHUP | EPOLLERR)) {
          drop(c);
          continue;
        }
        if ((ev & EPOLLIN) && !ReadSome(c.client, &c.raw, cap)) c.client_eof = true;
      } else {
        if ((ev & EPOLLHUP) && c.down.size() >= cap) {
          drop(c);  // gRPC closed and the client does not read what it said
          continue;
        }
        size_t had = c.down.size();
        if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !ReadSome(c.inner, &c.down, cap)) {
          c.inner_eof = true;  // gRPC closed: all it said is in `down`
          epoll_ctl(ep, EPOLL_CTL_DEL, c.inner, nullptr);
        }
        WatchDown(c, std::string_view(c.down).substr(had));
      }
      PassUp(c, cap, static_cast<size_t>(limits_.max_streams_per_connection));
      // gRPC may close after its last word (a GOAWAY) with the client's bytes unread: that
      // word still goes to the client.
      if (!c.inner_refuses && !c.up.empty() && !WriteSome(c.inner, &c.up)) c.inner_refuses = true;
      if (c.inner_refuses) {
        c.up.clear();
        c.raw.clear();
        c.held.clear();
        c.held_bytes = 0;
      }
      bool ok = c.down.empty() || WriteSome(c.client, &c.down);
      if (ok && c.client_eof && c.up.empty() && !c.inner_shut && !c.inner_eof &&
          !c.inner_refuses) {
        shutdown(c.inner, SHUT_WR);
        c.inner_shut = true;
      }
      if (!ok || (c.inner_eof && c.down.empty())) {
        drop(c);
        continue;
      }
      rearm(c);
    }
    if (stop) break;
    // Connections whose answers have not been read for `stall`.
    auto now = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<Conn>> stalled_now;
    for (const auto& [fd, c] : by_fd) {
      if (fd == c->client && c->full_since != std::chrono::steady_clock::time_point{} &&
          now - c->full_since >= limits_.stall) {
        stalled_now.push_back(c);
      }
    }
    for (const auto& c : stalled_now) {
      ++stalled;
      spdlog::warn("podresources: closing a connection that has not read its answers for {} s "
                   "({} closed so far)",
                   std::chrono::duration_cast<std::chrono::seconds>(limits_.stall).count(),
                   stalled);
      drop(*c);
    }
  }
  for (auto it = by_fd.begin(); it != by_fd.end(); it = by_fd.begin()) drop(*it->second);
  close(ep);
  close(listen_fd_);
}

}  // namespace podtopo::podresources
