// The runtime's end of an NRI connection, played by a test with the codecs of nri/ttrpc.h:
// connection_test drives it over a socketpair, runner_test over a listening unix socket.
#ifndef PODTOPO_NRI_FAKE_RUNTIME_TEST_UTIL_H_
#define PODTOPO_NRI_FAKE_RUNTIME_TEST_UTIL_H_

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "nri/plugin.h"
#include "nri/ttrpc.h"
#include "nri/ttrpc/request.pb.h"

namespace podtopo::nri {

class FakeRuntime {
 public:
  explicit FakeRuntime(int fd = -1) : fd_(fd) {}
  ~FakeRuntime() {
    Close();
    if (listen_ >= 0) ::close(listen_);
  }

  // Listens on the unix socket `path`; Accept() takes the plugin's connection.
  void Listen(const std::string& path) {
    listen_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    ASSERT_EQ(::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    ASSERT_EQ(::listen(listen_, 4), 0);
  }
  void Accept() { fd_ = ::accept(listen_, nullptr, nullptr); }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    mux_ = MuxDecoder();
    plugin_ = TtrpcDecoder("1");
    runtime_ = TtrpcDecoder("2");
  }

  void Write(const std::string& bytes) {
    ASSERT_EQ(::write(fd_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  void Send(uint32_t conn, uint32_t stream, MessageType type, const std::string& payload) {
    TtrpcMessage m{stream, type, 0, payload};
    Write(EncodeMuxFrames(conn, EncodeTtrpcMessage(m).value()));
  }
  // A request to the plugin's service (connection 1).
  void Request(uint32_t stream, const std::string& method, const std::string& payload) {
    ::podtopo::ttrpc::Request r;
    r.set_service(kPluginService);
    r.set_method(method);
    r.set_payload(payload);
    Send(kPluginServiceConn, stream, MessageType::kRequest, r.SerializeAsString());
  }
  // Request() and the plugin's reply.
  ::podtopo::ttrpc::Response Call(uint32_t stream, const std::string& method,
                                  const std::string& payload) {
    Request(stream, method, payload);
    ::podtopo::ttrpc::Response resp;
    EXPECT_TRUE(resp.ParseFromString(Read(kPluginServiceConn).payload));
    return resp;
  }
  // Answers the plugin's next call (connection 2) with `reply`; returns the call.
  ::podtopo::ttrpc::Request Answer(const std::string& reply) {
    TtrpcMessage m = Read(kRuntimeServiceConn);
    ::podtopo::ttrpc::Request req;
    EXPECT_TRUE(req.ParseFromString(m.payload));
    ::podtopo::ttrpc::Response r;
    r.set_payload(reply);
    Send(kRuntimeServiceConn, m.stream_id, MessageType::kResponse, r.SerializeAsString());
    return req;
  }
  // The next ttrpc message on `conn`; every frame podtopo sends is checked to be at most
  // kMuxMaxSendPayload bytes. An empty message at EOF.
  TtrpcMessage Read(uint32_t conn) {
    for (;;) {
      for (;;) {
        auto f = mux_.Next();
        EXPECT_TRUE(f.ok());
        if (!f.ok() || !f->has_value()) break;
        EXPECT_LE((*f)->payload.size(), kMuxMaxSendPayload);
        if ((*f)->conn == kPluginServiceConn) plugin_.Feed((*f)->payload);
        if ((*f)->conn == kRuntimeServiceConn) runtime_.Feed((*f)->payload);
      }
      auto m = (conn == kPluginServiceConn ? plugin_ : runtime_).Next();
      EXPECT_TRUE(m.ok());
      if (m.ok() && m->has_value()) return **m;
      char buf[8192];
      ssize_t n = ::read(fd_, buf, sizeof(buf));
      if (n <= 0) return {};
      mux_.Feed(std::string_view(buf, static_cast<size_t>(n)));
    }
  }

 private:
  int fd_ = -1;
  int listen_ = -1;
  MuxDecoder mux_;
  TtrpcDecoder plugin_{"1"}, runtime_{"2"};
};

}  // namespace podtopo::nri

#endif  // PODTOPO_NRI_FAKE_RUNTIME_TEST_UTIL_H_
