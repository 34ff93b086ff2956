// Connection against a runtime played by the test over a socketpair, speaking the framing with
// the codec of ttrpc.h from the other side.
#include "nri/connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "gtest/gtest.h"
#include "nri/ttrpc/request.pb.h"
#include "nri/fake_runtime_test_util.h"
#include "nri/v1alpha1/api.pb.h"

namespace podtopo::nri {
namespace {

using namespace std::chrono_literals;
namespace tt = ::podtopo::ttrpc;

class ConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    conn_ = Connection::FromFd(sv[0], "test-runtime");
    runtime_ = std::make_unique<FakeRuntime>(sv[1]);
  }
  std::unique_ptr<Connection> conn_;
  std::unique_ptr<FakeRuntime> runtime_;
};

TEST_F(ConnectionTest, CallGoesOutOnConnection2WithOddStreamIdsAndGetsItsReply) {
  conn_->Start([](auto&, auto&, auto&) -> absl::StatusOr<std::string> { return ""; });
  ::nri::pkg::api::v1alpha1::RegisterPluginRequest reg;
  reg.set_plugin_name("podtopo");
  reg.set_plugin_idx("10");
  std::thread peer([&] {
    for (uint32_t want : {1u, 3u}) {
      TtrpcMessage m = runtime_->Read(kRuntimeServiceConn);
      EXPECT_EQ(m.type, MessageType::kRequest);
      EXPECT_EQ(m.stream_id, want);
      tt::Request r;
      ASSERT_TRUE(r.ParseFromString(m.payload));
      EXPECT_EQ(r.service(), "nri.pkg.api.v1alpha1.Runtime");
      EXPECT_EQ(r.method(), "RegisterPlugin");
      ::nri::pkg::api::v1alpha1::RegisterPluginRequest got;
      ASSERT_TRUE(got.ParseFromString(r.payload()));
      EXPECT_EQ(got.plugin_name(), "podtopo");
      tt::Response resp;
      resp.set_payload("reply-" + std::to_string(want));
      runtime_->Send(kRuntimeServiceConn, m.stream_id, MessageType::kResponse,
                     resp.SerializeAsString());
    }
  });
  auto r1 = conn_->Call("nri.pkg.api.v1alpha1.Runtime", "RegisterPlugin", reg.SerializeAsString(), 5s);
  auto r2 = conn_->Call("nri.pkg.api.v1alpha1.Runtime", "RegisterPlugin", reg.SerializeAsString(), 5s);
  peer.join();
  ASSERT_TRUE(r1.ok()) << r1.status();
  EXPECT_EQ(*r1, "reply-1");
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(*r2, "reply-3");
}

TEST_F(ConnectionTest, PeerErrorStatusKeepsItsCodeAndMessage) {
  conn_->Start([](auto&, auto&, auto&) -> absl::StatusOr<std::string> { return ""; });
  std::thread peer([&] {
    TtrpcMessage m = runtime_->Read(kRuntimeServiceConn);
    tt::Response resp;
    resp.mutable_status()->set_code(static_cast<int>(absl::StatusCode::kAlreadyExists));
    resp.mutable_status()->set_message("plugin 10-podtopo already registered");
    runtime_->Send(kRuntimeServiceConn, m.stream_id, MessageType::kResponse, resp.SerializeAsString());
  });
  auto r = conn_->Call("nri.pkg.api.v1alpha1.Runtime", "RegisterPlugin", "", 5s);
  peer.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(r.status().message().find("already registered"), std::string::npos) << r.status();
}

TEST_F(ConnectionTest, RequestsOnConnection1AreAnsweredInOrderByTheHandler) {
  conn_->Start([](const std::string& service, const std::string& method,
                  const std::string& payload) -> absl::StatusOr<std::string> {
    if (method == "Fail") return absl::FailedPreconditionError("TopologyAffinityError: no");
    return service + "/" + method + ":" + payload;
  });
  std::string big(20000, 'z');  // spans several frames both ways
  runtime_->Request(1, "Configure", "cfg");
  runtime_->Request(3, "Fail", "");
  runtime_->Request(5, "Echo", big);
  TtrpcMessage a = runtime_->Read(kPluginServiceConn);
  TtrpcMessage b = runtime_->Read(kPluginServiceConn);
  TtrpcMessage c = runtime_->Read(kPluginServiceConn);
  EXPECT_EQ(a.stream_id, 1u);
  EXPECT_EQ(a.type, MessageType::kResponse);
  tt::Response ra, rb, rc;
  ASSERT_TRUE(ra.ParseFromString(a.payload));
  EXPECT_EQ(ra.payload(), "nri.pkg.api.v1alpha1.Plugin/Configure:cfg");
  EXPECT_EQ(ra.status().code(), 0);
  EXPECT_EQ(b.stream_id, 3u);
  ASSERT_TRUE(rb.ParseFromString(b.payload));
  EXPECT_EQ(rb.status().code(), static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(rb.status().message(), "TopologyAffinityError: no");
  EXPECT_EQ(c.stream_id, 5u);
  ASSERT_TRUE(rc.ParseFromString(c.payload));
  EXPECT_EQ(rc.payload(), "nri.pkg.api.v1alpha1.Plugin/Echo:" + big);
}

TEST_F(ConnectionTest, BadFrameClosesTheConnectionWithAClearReasonAndFailsPendingCalls) {
  conn_->Start([](auto&, auto&, auto&) -> absl::StatusOr<std::string> { return ""; });
  std::thread peer([&] {
    (void)runtime_->Read(kRuntimeServiceConn);  // the call, never answered
    runtime_->Write(std::string("\0\0\0\0\0\0\0\1x", 9));  // connection 0 is reserved
  });
  auto r = conn_->Call("nri.pkg.api.v1alpha1.Runtime", "RegisterPlugin", "", 10s);
  peer.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("connection 0 (reserved)"), std::string::npos) << r.status();
  absl::Status why = conn_->Wait();
  EXPECT_EQ(why.code(), absl::StatusCode::kDataLoss) << why;
}

TEST_F(ConnectionTest, ResponseOnThePluginServiceIsAProtocolError) {
  conn_->Start([](auto&, auto&, auto&) -> absl::StatusOr<std::string> { return ""; });
  runtime_->Send(kPluginServiceConn, 1, MessageType::kResponse, "");
  absl::Status why = conn_->Wait();
  EXPECT_EQ(why.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(why.message().find("only requests are expected"), std::string::npos) << why;
}

TEST_F(ConnectionTest, UndecodableRequestGetsAnErrorReplyAndTheConnectionStays) {
  conn_->Start([](auto&, auto&, auto&) -> absl::StatusOr<std::string> { return "ok"; });
  runtime_->Send(kPluginServiceConn, 1, MessageType::kRequest, "\xff\xff\xff");
  TtrpcMessage m = runtime_->Read(kPluginServiceConn);
  tt::Response r;
  ASSERT_TRUE(r.ParseFromString(m.payload));
  EXPECT_EQ(r.status().code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  runtime_->Request(3, "Configure", "");
  TtrpcMessage m2 = runtime_->Read(kPluginServiceConn);
  ASSERT_TRUE(r.ParseFromString(m2.payload));
  EXPECT_EQ(r.payload(), "ok");
}

TEST_F(ConnectionTest, EofEndsTheConnectionAndLaterCallsFail) {
  conn_->Start([](auto&, auto&, auto&) -> absl::StatusOr<std::string> { return ""; });
  runtime_->Close();
  absl::Status why = conn_->Wait();
  EXPECT_EQ(why.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(why.message().find("closed the connection"), std::string::npos) << why;
  auto r = conn_->Call("nri.pkg.api.v1alpha1.Runtime", "UpdateContainers", "", 1s);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(ConnectionTest, UnansweredCallTimesOut) {
  conn_->Start([](auto&, auto&, auto&) -> absl::StatusOr<std::string> { return ""; });
  auto r = conn_->Call("nri.pkg.api.v1alpha1.Runtime", "UpdateContainers", "", 100ms);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("within 100 ms"), std::string::npos) << r.status();
}

TEST(ConnectionDial, MissingSocketIsUnavailableNamingThePath) {
  auto c = Connection::Dial("/nonexistent/nri.sock");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(c.status().message().find("/nonexistent/nri.sock"), std::string::npos);
}

}  // namespace
}  // namespace podtopo::nri
