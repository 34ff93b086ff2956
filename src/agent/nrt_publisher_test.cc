// NrtPublisher against a fake API server (civetweb, plain HTTP): the requests it makes
// (GET the Node, server-side apply with the owner reference), writes only on change, resync,
// back-off and the error reasons.
#include "agent/nrt_publisher.h"

#include <atomic>
#include <mutex>
#include <thread>

#include "CivetServer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace podtopo::agent {
namespace {

using ::testing::HasSubstr;

class FakeApi : public CivetHandler {
 public:
  struct Request {
    std::string method, uri, query, content_type, authorization, body;
  };

  FakeApi() {
    server_ = std::make_unique<CivetServer>(std::vector<std::string>{
        "listening_ports", "127.0.0.1:0", "num_threads", "2"});
    server_->addHandler("/", this);
  }
  ~FakeApi() override { server_->close(); }

  std::string Url() { return "http://127.0.0.1:" + std::to_string(server_->getListeningPorts()[0]); }

  bool handleGet(CivetServer*, mg_connection* c) override { return Serve("GET", c); }
  bool handlePatch(CivetServer*, mg_connection* c) override { return Serve("PATCH", c); }

  std::vector<Request> Requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }
  size_t Applies() {
    std::lock_guard<std::mutex> l(mu_);
    size_t n = 0;
    for (const auto& r : requests_) n += r.method == "PATCH";
    return n;
  }
  std::atomic<int> patch_status{200};
  std::atomic<int> node_status{200};

 private:
  bool Serve(const char* method, mg_connection* c) {
    const mg_request_info* info = mg_get_request_info(c);
    Request r;
    r.method = method;
    r.uri = info->local_uri != nullptr ? info->local_uri : "";
    r.query = info->query_string != nullptr ? info->query_string : "";
    if (const char* t = mg_get_header(c, "Content-Type")) r.content_type = t;
    if (const char* a = mg_get_header(c, "Authorization")) r.authorization = a;
    char buf[4096];
    int n;
    while ((n = mg_read(c, buf, sizeof(buf))) > 0) r.body.append(buf, n);
    int status = 200;
    std::string body;
    if (r.method == "GET") {
      status = node_status.load();
      body = status == 200 ? R"({"kind":"Node","metadata":{"name":"n1","uid":"uid-1"}})"
                           : R"({"kind":"Status","message":"nodes \"n1\" not found","code":404})";
    } else {
      status = patch_status.load();
      body = status == 200 ? r.body
                           : R"({"kind":"Status","message":"denied by the test","code":)" +
                                 std::to_string(status) + "}";
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      requests_.push_back(r);
    }
    mg_printf(c, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
              status, body.size());
    mg_write(c, body.data(), body.size());
    return true;
  }

  std::unique_ptr<CivetServer> server_;
  std::mutex mu_;
  std::vector<Request> requests_;
};

nlohmann::ordered_json Nrt(const std::string& available) {
  return {{"apiVersion", "topology.node.k8s.io/v1alpha2"},
          {"kind", "NodeResourceTopology"},
          {"metadata", {{"name", "n1"}}},
          {"zones", {{{"name", "node-0"}, {"type", "Node"}, {"resources", {{{"name", "cpu"}, {"capacity", "4"}, {"allocatable", "4"}, {"available", available}}}}}}}};
}

template <typename F>
bool WaitFor(F f, int ms = 5000) {
  for (int i = 0; i < ms / 10; ++i) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return f();
}

std::unique_ptr<NrtPublisher> Publisher(FakeApi& api, std::chrono::milliseconds resync) {
  kube::Credentials c;
  c.server = api.Url();
  c.source = "test";
  c.token = "tok";
  return NrtPublisher::Start(kube::ApiClient::Create(c).value(),
                             {.node_name = "n1", .resync = resync,
                              .backoff_initial = std::chrono::milliseconds(20),
                              .backoff_max = std::chrono::milliseconds(80)});
}

TEST(NrtPublisherTest, AppliesWithTheNodeOwnerOnlyOnChange) {
  FakeApi api;
  auto p = Publisher(api, std::chrono::minutes(5));
  p->Offer(Nrt("3"));
  ASSERT_TRUE(WaitFor([&] { return api.Applies() == 1; }));
  auto reqs = api.Requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].method, "GET");
  EXPECT_EQ(reqs[0].uri, "/api/v1/nodes/n1");
  EXPECT_EQ(reqs[0].authorization, "Bearer tok");
  EXPECT_EQ(reqs[1].uri, "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies/n1");
  EXPECT_EQ(reqs[1].query, "fieldManager=podtopo&force=true");
  EXPECT_EQ(reqs[1].content_type, "application/apply-patch+yaml");
  auto body = nlohmann::json::parse(reqs[1].body);
  EXPECT_EQ(body["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(body["metadata"]["ownerReferences"][0]["kind"], "Node");
  EXPECT_EQ(body["zones"][0]["resources"][0]["available"], "3");

  p->Offer(Nrt("3"));  // unchanged: no write
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(api.Applies(), 1u);
  p->Offer(Nrt("2"));
  ASSERT_TRUE(WaitFor([&] { return api.Applies() == 2; }));
  PublishStats s = p->Stats();
  EXPECT_EQ(s.writes, 2u);
  EXPECT_GT(s.last_success_seconds, 0);
  EXPECT_TRUE(s.errors.empty());
}

TEST(NrtPublisherTest, ResyncsUnchangedObjects) {
  FakeApi api;
  auto p = Publisher(api, std::chrono::milliseconds(50));
  p->Offer(Nrt("3"));
  ASSERT_TRUE(WaitFor([&] { return api.Applies() >= 3; }));
}

TEST(NrtPublisherTest, BacksOffAndCountsReasons) {
  FakeApi api;
  api.patch_status = 403;
  auto p = Publisher(api, std::chrono::minutes(5));
  p->Offer(Nrt("3"));
  ASSERT_TRUE(WaitFor([&] { return p->Stats().errors["forbidden"] >= 3; }));
  EXPECT_THAT(p->Stats().last_error,
              HasSubstr("/noderesourcetopologies/n1?fieldManager=podtopo&force=true: HTTP 403 "
                        "Forbidden: denied by the test"));
  // Back-off: 20, 40, 80, 80 ms... far fewer attempts than a busy loop in 300 ms.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LT(p->Stats().errors["forbidden"], 12u);
  api.patch_status = 404;
  ASSERT_TRUE(WaitFor([&] { return p->Stats().errors["crd_missing"] >= 1; }));
  api.patch_status = 200;
  api.node_status = 404;
  ASSERT_TRUE(WaitFor([&] { return p->Stats().errors["node_not_found"] >= 1; }));
  api.node_status = 200;
  ASSERT_TRUE(WaitFor([&] { return p->Stats().writes == 1; }));
  EXPECT_EQ(p->Stats().last_error, "");
}

TEST(NrtPublisherTest, TransportErrorsWhenNothingListens) {
  kube::Credentials c;
  c.server = "http://127.0.0.1:1";
  c.source = "test";
  auto p = NrtPublisher::Start(kube::ApiClient::Create(c).value(),
                               {.node_name = "n1", .backoff_initial = std::chrono::milliseconds(10),
                                .backoff_max = std::chrono::milliseconds(20)});
  p->Offer(Nrt("1"));
  ASSERT_TRUE(WaitFor([&] { return p->Stats().errors["transport"] >= 2; }));
  p->Stop();
}

}  // namespace
}  // namespace podtopo::agent
