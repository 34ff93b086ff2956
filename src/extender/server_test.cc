// The extender's HTTP server against a real Extender fed with NodeResourceTopology objects as
// `podtopo agent` builds them: round trips over libcurl, bad and hostile requests, concurrency,
// /metrics, /readyz and the --listen errors.
#include "extender/server.h"

#include <curl/curl.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/node_resource_topology.h"
#include "admission/node.h"
#include "agent/observation.h"
#include "client/pod_view.h"
#include "podresources/report.h"
#include "config/kubelet_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "topology/node_source.h"

namespace podtopo::extender {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Http {
  long status = 0;
  std::string body;
  std::string error;  // curl's, when the exchange failed
};

size_t Collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// One request on a fresh connection. `chunked`: no Content-Length (Transfer-Encoding: chunked).
Http Request(int port, const std::string& method, const std::string& path,
             const std::string& body = "", bool chunked = false) {
  Http r;
  CURL* c = curl_easy_init();
  std::string url = "http://127.0.0.1:" + std::to_string(port) + path;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  if (chunked) headers = curl_slist_append(headers, "Transfer-Encoding: chunked");
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  if (method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    if (!chunked) curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) r.error = curl_easy_strerror(rc);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  return r;
}

Http Post(int port, const std::string& path, const std::string& body) {
  return Request(port, "POST", path, body);
}
Http Get(int port, const std::string& path) { return Request(port, "GET", path); }

// The NRT `podtopo agent` publishes for an empty node of `preset` with the default kubelet
// configuration (single-numa-node, pod scope, 1 CPU reserved).
nlohmann::json EmptyNodeNrt(const std::string& name, const std::string& preset) {
  NodeTopology topology = LoadNode(preset).value();
  config::KubeletConfig config = config::SeedDefault();
  // What the kubelet's GetAllocatableResources answers for this node, as the agent reads it.
  auto node = Node::Create(topology, config, {}).value();
  podresources::AllocatableView view;
  view.cpus = node->AllocatableCpus();
  for (const auto& [n, types] : node->MemoryTables()) {
    for (const auto& [type, t] : types) {
      if (t.allocatable > 0) view.memory.push_back({type, t.allocatable, {n}});
    }
  }
  agent::Observation observed;
  observed.allocatable = client::BuildAllocatableView(podresources::BuildAllocatable(view),
                                                      agent::NumaMapOf(topology))
                             .value();
  std::vector<agent::ZoneAccount> zones = agent::AccountZones(topology, config, observed);
  auto nrt = agent::BuildNodeResourceTopology(name, config, zones,
                                              agent::CpuTopologyDigest(topology));
  return nlohmann::json::parse(nrt.dump());
}

// A Guaranteed pod of `cpus` CPUs and 1Gi, as kube-scheduler sends it (v1.Pod JSON).
nlohmann::json GuaranteedPod(const std::string& name, int cpus) {
  nlohmann::json res = {{"cpu", std::to_string(cpus)}, {"memory", "1Gi"}};
  return {{"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
          {"spec",
           {{"containers",
             {{{"name", "app"}, {"resources", {{"requests", res}, {"limits", res}}}}}}}}};
}

std::string FilterArgs(const nlohmann::json& pod, const std::vector<std::string>& nodes) {
  return nlohmann::json{{"pod", pod}, {"nodenames", nodes}}.dump();
}

// The metric's value in the /metrics text, or -1 when absent.
double Metric(const std::string& text, const std::string& series) {
  size_t at = 0;
  while ((at = text.find(series + " ", at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') return std::stod(text.substr(at + series.size() + 1));
    ++at;
  }
  return -1;
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartWith({}, {}); }

  void StartWith(ExtenderOptions eo, ServerOptions so) {
    server_.reset();
    ext_ = Extender::Create(std::move(eo)).value();
    ext_->UpsertNrt(EmptyNodeNrt("node-demo", "preset:demo"));   // NUMA nodes of 16 CPUs
    ext_->UpsertNrt(EmptyNodeNrt("node-t256", "preset:t256"));   // NUMA nodes of 32 CPUs
    if (so.listen.empty()) so.listen = "127.0.0.1:0";
    if (!so.bind) {
      so.bind = [this](const BindingArgs& a) {
        std::lock_guard<std::mutex> l(mu_);
        bound_.push_back(a);
        return bind_result_;
      };
    }
    auto s = Server::Start(ext_.get(), std::move(so));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    port_ = server_->port();
    ASSERT_GT(port_, 0);
  }

  std::unique_ptr<Extender> ext_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<BindingArgs> bound_;
  absl::Status bind_result_;
};

TEST_F(ServerTest, FilterAnswersWhatTheExtenderAnswers) {
  // 20 CPUs fit no NUMA node of preset:demo (single-numa-node rejects the pod there), one of
  // preset:t256.
  std::string args = FilterArgs(GuaranteedPod("wide", 20), {"node-demo", "node-t256"});
  Http r = Post(port_, "/filter", args);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, ext_->Filter(args).body);  // bytes passed through unchanged
  auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["nodenames"], nlohmann::json::array({"node-t256"})) << r.body;
  EXPECT_THAT(j["failedNodes"].value("node-demo", ""), HasSubstr("TopologyAffinityError"));
  // The agent's NRT carries podtopo's attributes: the verdict is exact.
  EXPECT_THAT(j["failedNodes"].value("node-demo", ""), Not(HasSubstr("approximate")));
}

TEST_F(ServerTest, PrioritizeScoresEveryNode) {
  Http r = Post(port_, "/prioritize", FilterArgs(GuaranteedPod("small", 2), {"node-demo", "node-t256"}));
  ASSERT_EQ(r.status, 200) << r.body << r.error;
  auto j = nlohmann::json::parse(r.body);
  ASSERT_TRUE(j.is_array()) << r.body;
  std::set<std::string> hosts;
  for (const auto& h : j) {
    hosts.insert(h.at("host").get<std::string>());
    EXPECT_GE(h.at("score").get<int>(), 0);
    EXPECT_LE(h.at("score").get<int>(), 10);  // MaxExtenderPriority
  }
  EXPECT_EQ(hosts, (std::set<std::string>{"node-demo", "node-t256"}));
}

TEST_F(ServerTest, BindCallsTheBinderAndReportsItsError) {
  nlohmann::json args = {{"PodName", "wide"}, {"PodNamespace", "default"}, {"PodUID", "uid-wide"},
                         {"Node", "node-t256"}};
  Http r = Post(port_, "/bind", args.dump());
  ASSERT_EQ(r.status, 200) << r.body << r.error;
  EXPECT_EQ(nlohmann::json::parse(r.body).value("Error", ""), "") << r.body;  // "" or absent
  {
    std::lock_guard<std::mutex> l(mu_);
    ASSERT_EQ(bound_.size(), 1u);
    EXPECT_EQ(bound_[0].pod_name, "wide");
    EXPECT_EQ(bound_[0].pod_namespace, "default");
    EXPECT_EQ(bound_[0].pod_uid, "uid-wide");
    EXPECT_EQ(bound_[0].node, "node-t256");
  }
  bind_result_ = absl::PermissionDeniedError("pods \"x\" is forbidden");
  args["PodName"] = "x";
  r = Post(port_, "/bind", args.dump());
  EXPECT_THAT(nlohmann::json::parse(r.body).value("Error", ""), HasSubstr("forbidden")) << r.body;
  EXPECT_EQ(Metric(server_->MetricsText(), "podtopo_extender_bind_errors_total"), 1);
}

TEST_F(ServerTest, BadRequestsGetAClearErrorAndTheServerLivesOn) {
  for (const std::string& body : {std::string("{not json"), std::string("[]"), std::string(""),
                                  std::string("{\"pod\": 7, \"nodenames\": [\"node-demo\"]}"),
                                  std::string(10000, '[')}) {
    Http r = Post(port_, "/filter", body);
    EXPECT_EQ(r.status, 400) << body.substr(0, 40) << ": " << r.body;
    EXPECT_THAT(r.body, HasSubstr("rror")) << r.body;
  }
  Http r = Post(port_, "/bind", "{\"PodName\": 3}");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Post(port_, "/nope", "{}").status, 404);
  EXPECT_EQ(Get(port_, "/filter").status, 405);
  EXPECT_EQ(Get(port_, "/nope").status, 404);
  // Still serving, and the good request after them is answered.
  EXPECT_EQ(Post(port_, "/filter", FilterArgs(GuaranteedPod("p", 2), {"node-demo"})).status, 200);
  EXPECT_EQ(Get(port_, "/healthz").status, 200);
  std::string m = server_->MetricsText();
  EXPECT_EQ(Metric(m, "podtopo_extender_requests_total{code=\"400\",verb=\"filter\"}"), 5) << m;
  EXPECT_EQ(Metric(m, "podtopo_extender_requests_total{code=\"404\",verb=\"other\"}"), 2) << m;
}

TEST_F(ServerTest, OversizedBodiesAre413BeforeBeingRead) {
  ExtenderOptions eo;
  eo.max_request_bytes = 4096;
  ServerOptions so;
  so.max_request_bytes = 4096;
  StartWith(eo, so);
  std::string big = FilterArgs(GuaranteedPod("p", 2), std::vector<std::string>(2000, "node-demo"));
  ASSERT_GT(big.size(), 4096u);
  Http r = Post(port_, "/filter", big);
  EXPECT_EQ(r.status, 413) << r.body << r.error;
  EXPECT_THAT(r.body, HasSubstr("4096 bytes"));
  // Without Content-Length the limit holds as the bytes arrive.
  r = Request(port_, "POST", "/filter", big, /*chunked=*/true);
  EXPECT_EQ(r.status, 413) << r.body << r.error;
  // 64 MiB announced: refused from the header, nothing buffered.
  r = Post(port_, "/prioritize", std::string(64 << 20, ' '));
  EXPECT_EQ(r.status, 413) << r.error;
  EXPECT_EQ(Get(port_, "/healthz").status, 200);
  EXPECT_EQ(Post(port_, "/filter", FilterArgs(GuaranteedPod("p", 2), {"node-demo"})).status, 200);
  EXPECT_EQ(Metric(server_->MetricsText(), "podtopo_extender_bad_requests_total"), 3);
}

TEST_F(ServerTest, HugeNodeListsAreRefused) {
  ExtenderOptions eo;
  eo.max_nodes = 100;
  StartWith(eo, {});
  Http r = Post(port_, "/filter",
                FilterArgs(GuaranteedPod("p", 2), std::vector<std::string>(101, "node-demo")));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(r.body, HasSubstr("100")) << r.body;
  EXPECT_EQ(Post(port_, "/filter", FilterArgs(GuaranteedPod("p", 2), {"node-demo"})).status, 200);
}

TEST_F(ServerTest, ConcurrentRequestsAllAnswered) {
  const std::string args = FilterArgs(GuaranteedPod("wide", 20), {"node-demo", "node-t256"});
  const std::string want = ext_->Filter(args).body;
  constexpr int kThreads = 8, kEach = 24;  // half filter, half prioritize
  std::atomic<int> ok{0};
  std::mutex first_mu;
  std::string first_bad;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        Http r = i % 2 ? Post(port_, "/filter", args)
                       : Post(port_, "/prioritize", args);
        if (r.status == 200 && (i % 2 == 0 || r.body == want)) {
          ++ok;
        } else {
          std::lock_guard<std::mutex> l(first_mu);
          if (first_bad.empty()) {
            first_bad = std::to_string(r.status) + " " + r.error + " " + r.body.substr(0, 300);
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kEach) << "first bad answer: " << first_bad;
  std::string m = server_->MetricsText();
  EXPECT_EQ(Metric(m, "podtopo_extender_requests_total{code=\"200\",verb=\"filter\"}"),
            kThreads * kEach / 2 + 0.0) << m;
  EXPECT_EQ(Metric(m, "podtopo_extender_request_duration_seconds_count{verb=\"filter\"}"),
            kThreads * kEach / 2 + 0.0) << m;
}

TEST_F(ServerTest, MetricsAndReadiness) {
  std::atomic<bool> synced{false};
  ServerOptions so;
  so.sources = [&] {
    SourceStatus s;
    s.name = "noderesourcetopologies";
    s.synced = synced.load();
    s.errors = 3;
    s.last_error = "HTTP 403 Forbidden";
    return std::vector<SourceStatus>{s};
  };
  StartWith({}, so);
  EXPECT_EQ(Get(port_, "/healthz").status, 200);
  Http r = Get(port_, "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_THAT(r.body, HasSubstr("noderesourcetopologies not listed yet: HTTP 403 Forbidden"));
  synced = true;
  EXPECT_EQ(Get(port_, "/readyz").status, 200);

  ASSERT_EQ(Post(port_, "/filter", FilterArgs(GuaranteedPod("wide", 20), {"node-demo", "node-t256"})).status, 200);
  r = Get(port_, "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Metric(r.body, "podtopo_extender_nodes_known"), 2) << r.body;
  EXPECT_EQ(Metric(r.body, "podtopo_extender_nodes_filtered_total"), 2) << r.body;
  EXPECT_EQ(Metric(r.body, "podtopo_extender_nodes_failed_total"), 1) << r.body;
  EXPECT_EQ(Metric(r.body, "podtopo_extender_nodes_approximate_total"), 0) << r.body;
  EXPECT_EQ(Metric(r.body, "podtopo_extender_reservations"), 0) << r.body;
  EXPECT_EQ(Metric(r.body, "podtopo_extender_informer_errors_total{resource=\"noderesourcetopologies\"}"), 3);
  EXPECT_EQ(Metric(r.body, "podtopo_extender_informer_synced{resource=\"noderesourcetopologies\"}"), 1);
  EXPECT_EQ(Metric(r.body, "podtopo_extender_requests_total{code=\"503\",verb=\"readyz\"}"), 1);
  EXPECT_EQ(Metric(r.body, "podtopo_extender_requests_total{code=\"200\",verb=\"metrics\"}"), 1);
}

TEST_F(ServerTest, ABindReservesAndTheNextFilterSeesIt) {
  // preset:t256 has 8 NUMA nodes of 32 CPUs; 8 pods of 20 CPUs fill them one each (the pod
  // scope puts each on one NUMA node), and a 9th fits nowhere, although the NRT never changed.
  for (int i = 0; i < 8; ++i) {
    std::string name = "wide-" + std::to_string(i);
    Http f = Post(port_, "/filter", FilterArgs(GuaranteedPod(name, 20), {"node-t256"}));
    ASSERT_EQ(nlohmann::json::parse(f.body)["nodenames"], nlohmann::json::array({"node-t256"}))
        << name << ": " << f.body;
    Http b = Post(port_, "/bind", nlohmann::json{{"PodName", name}, {"PodNamespace", "default"},
                                                  {"PodUID", "uid-" + name}, {"Node", "node-t256"}}
                                      .dump());
    ASSERT_EQ(b.status, 200) << b.body;
  }
  Http f = Post(port_, "/filter", FilterArgs(GuaranteedPod("wide-8", 20), {"node-t256"}));
  EXPECT_THAT(nlohmann::json::parse(f.body)["failedNodes"].value("node-t256", ""),
              HasSubstr("TopologyAffinityError")) << f.body;
  EXPECT_EQ(Metric(server_->MetricsText(), "podtopo_extender_reservations"), 8);
}

TEST_F(ServerTest, BindsThatRaceTheirFiltersMeetAtTheBind) {
  // kube-scheduler binds asynchronously: all 9 pods of a burst may pass /filter before the first
  // /bind. The 9th bind then finds no NUMA node left and is refused, without a Binding posted.
  std::vector<std::string> names;
  for (int i = 0; i < 9; ++i) {
    names.push_back("burst-" + std::to_string(i));
    Http f = Post(port_, "/filter", FilterArgs(GuaranteedPod(names.back(), 20), {"node-t256"}));
    ASSERT_EQ(nlohmann::json::parse(f.body)["nodenames"], nlohmann::json::array({"node-t256"}))
        << f.body;
  }
  int refused = 0;
  for (const std::string& name : names) {
    Http b = Post(port_, "/bind", nlohmann::json{{"PodName", name}, {"PodNamespace", "default"},
                                                  {"PodUID", "uid-" + name}, {"Node", "node-t256"}}
                                      .dump());
    ASSERT_EQ(b.status, 200) << b.body;
    std::string error = nlohmann::json::parse(b.body).value("Error", "");
    if (!error.empty()) {
      ++refused;
      EXPECT_EQ(name, "burst-8");
      EXPECT_THAT(error, HasSubstr("TopologyAffinityError"));
    }
  }
  EXPECT_EQ(refused, 1);
  std::lock_guard<std::mutex> l(mu_);
  EXPECT_EQ(bound_.size(), 8u);  // the refused pod was never posted
}

TEST(ServerListen, BadAddressesNameTheFlag) {
  auto ext = Extender::Create({}).value();
  for (const char* bad : {"./extender.sock", "http://127.0.0.1:8888", "127.0.0.1", "host:port",
                          "127.0.0.1:99999", ""}) {
    ServerOptions so;
    so.listen = bad;
    auto s = Server::Start(ext.get(), so);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad << ": " << s.status();
    EXPECT_THAT(s.status().message(), HasSubstr("--listen")) << s.status();
  }
  ServerOptions so;
  so.listen = "127.0.0.1:0";
  auto first = Server::Start(ext.get(), so);
  ASSERT_TRUE(first.ok()) << first.status();
  so.listen = (*first)->address();
  auto second = Server::Start(ext.get(), so);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr("in use")) << second.status();
  EXPECT_THAT(second.status().message(), Not(HasSubstr("null context")));
}

TEST(ServerListen, WithoutABinderBindIs404) {
  auto ext = Extender::Create({}).value();
  ServerOptions so;
  so.listen = ":0";
  auto s = Server::Start(ext.get(), so);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->address(), "127.0.0.1:" + std::to_string((*s)->port()));
  Http r = Post((*s)->port(), "/bind", "{}");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.body, HasSubstr("does not bind"));
}

}  // namespace
}  // namespace podtopo::extender
