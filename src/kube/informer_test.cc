// Informer against a fake API server (civetweb, plain HTTP) whose lists and watch streams the
// test scripts: the initial list, watch events as they are written, resuming after the
// server's timeout, 410 Gone and an error (re-list, diffed against the cache), and a prompt
// Stop during an open watch.
#include "kube/informer.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "CivetServer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/testing.h"

namespace podtopo::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

nlohmann::json Pod(const std::string& name, const std::string& rv) {
  return {{"metadata", {{"namespace", "default"}, {"name", name}, {"resourceVersion", rv}}}};
}

std::string Event(const std::string& type, const nlohmann::json& object) {
  return nlohmann::json{{"type", type}, {"object", object}}.dump() + "\n";
}

// A collection at /api/v1/pods. LIST answers `list` (or `list_status`); a watch writes the
// lines the test pushes, and ends when the test calls EndWatch() or the server closes.
class FakeApi : public CivetHandler {
 public:
  FakeApi() {
    server_ = std::make_unique<CivetServer>(std::vector<std::string>{
        "listening_ports", "127.0.0.1:0", "num_threads", "4"});
    server_->addHandler("/api/v1/pods", this);
  }
  ~FakeApi() override {
    {
      std::lock_guard<std::mutex> l(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    server_->close();
  }

  Credentials Creds() {
    Credentials c;
    c.server = "http://127.0.0.1:" + std::to_string(server_->getListeningPorts()[0]);
    c.source = "test";
    return c;
  }

  void SetList(std::vector<nlohmann::json> items, const std::string& rv, int status = 200) {
    std::lock_guard<std::mutex> l(mu_);
    list_ = nlohmann::json{{"kind", "PodList"},
                           {"metadata", {{"resourceVersion", rv}}},
                           {"items", items}};
    list_status_ = status;
  }
  void Push(const std::string& line) {
    {
      std::lock_guard<std::mutex> l(mu_);
      lines_.push_back(line);
    }
    cv_.notify_all();
  }
  void EndWatch() {
    {
      std::lock_guard<std::mutex> l(mu_);
      end_watch_ = true;
    }
    cv_.notify_all();
  }
  std::vector<std::string> Queries() {
    std::lock_guard<std::mutex> l(mu_);
    return queries_;
  }
  int OpenWatches() { return open_watches_.load(); }

  bool handleGet(CivetServer*, mg_connection* c) override {
    const mg_request_info* info = mg_get_request_info(c);
    std::string query = info->query_string != nullptr ? info->query_string : "";
    {
      std::lock_guard<std::mutex> l(mu_);
      queries_.push_back(query);
    }
    if (query.find("watch=1") == std::string::npos) {
      std::string body;
      int status;
      {
        std::lock_guard<std::mutex> l(mu_);
        body = list_status_ == 200 ? list_.dump()
                                   : R"({"kind":"Status","message":"scripted failure","code":500})";
        status = list_status_;
      }
      mg_printf(c, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                status, body.size());
      mg_write(c, body.data(), body.size());
      return true;
    }
    ++open_watches_;
    mg_printf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n");
    std::unique_lock<std::mutex> l(mu_);
    end_watch_ = false;
    while (true) {
      cv_.wait_for(l, std::chrono::milliseconds(50),
                   [this] { return closing_ || end_watch_ || !lines_.empty(); });
      while (!lines_.empty()) {
        std::string line = std::move(lines_.front());
        lines_.pop_front();
        l.unlock();
        int written = mg_write(c, line.data(), line.size());
        l.lock();
        if (written <= 0) closing_client_ = true;
      }
      if (closing_ || end_watch_ || closing_client_) break;
      // A client that went away: writing a blank line fails.
      l.unlock();
      int written = mg_write(c, "\n", 1);
      l.lock();
      if (written <= 0) break;
    }
    end_watch_ = false;
    closing_client_ = false;
    --open_watches_;
    return true;
  }

 private:
  std::unique_ptr<CivetServer> server_;
  std::mutex mu_;
  std::condition_variable cv_;
  nlohmann::json list_ = nlohmann::json{{"items", nlohmann::json::array()}};
  int list_status_ = 200;
  std::deque<std::string> lines_;
  bool end_watch_ = false;
  bool closing_ = false;
  bool closing_client_ = false;
  std::vector<std::string> queries_;
  std::atomic<int> open_watches_{0};
};

// What the handler saw, as "TYPE key@rv" lines.
class Recorder {
 public:
  Informer::Handler Handler() {
    return [this](const WatchEvent& e) {
      std::lock_guard<std::mutex> l(mu_);
      seen_.push_back(std::string(TypeName(e.type)) + " " + KeyOf(e.object) + "@" +
                      e.object["metadata"].value("resourceVersion", ""));
      cv_.notify_all();
    };
  }
  // Waits until `n` events were seen; returns them all.
  std::vector<std::string> WaitFor(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, std::chrono::seconds(10), [&] { return seen_.size() >= n; });
    return seen_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> seen_;
};

void WaitUntil(const std::function<bool()>& f) {
  for (int i = 0; i < 200 && !f(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
}

TEST(InformerTest, ListThenWatchEventsInOrder) {
  FakeApi api;
  api.SetList({Pod("a", "1"), Pod("b", "2")}, "2");
  Recorder rec;
  auto inf = Informer::Start(api.Creds(), {.path = "/api/v1/pods"}, rec.Handler());
  ASSERT_TRUE(inf.ok()) << inf.status();
  ASSERT_TRUE((*inf)->WaitForSync(std::chrono::seconds(10)));
  WaitUntil([&] { return api.OpenWatches() == 1; });
  api.Push(Event("MODIFIED", Pod("a", "3")));
  api.Push(Event("BOOKMARK", {{"metadata", {{"resourceVersion", "4"}}}}));
  api.Push(Event("ADDED", Pod("c", "5")));
  api.Push(Event("DELETED", Pod("b", "6")));
  EXPECT_THAT(rec.WaitFor(5), ElementsAre("ADDED default/a@1", "ADDED default/b@2",
                                          "MODIFIED default/a@3", "ADDED default/c@5",
                                          "DELETED default/b@6"));
  auto snapshot = (*inf)->Snapshot();
  ASSERT_EQ(snapshot.size(), 2u);
  EXPECT_EQ(KeyOf(snapshot[0]), "default/a");
  EXPECT_EQ(KeyOf(snapshot[1]), "default/c");
  // The watch started from the list's resourceVersion.
  auto queries = api.Queries();
  ASSERT_GE(queries.size(), 2u);
  EXPECT_THAT(queries[1], HasSubstr("resourceVersion=2"));
  EXPECT_THAT(queries[1], HasSubstr("allowWatchBookmarks=true"));
  (*inf)->Stop();
}

TEST(InformerTest, ResumesFromTheLastVersionWhenTheServerEndsTheWatch) {
  FakeApi api;
  api.SetList({Pod("a", "1")}, "1");
  Recorder rec;
  auto inf = Informer::Start(api.Creds(), {.path = "/api/v1/pods"}, rec.Handler());
  ASSERT_TRUE(inf.ok()) << inf.status();
  WaitUntil([&] { return api.OpenWatches() == 1; });
  api.Push(Event("ADDED", Pod("b", "7")));
  rec.WaitFor(2);
  api.EndWatch();
  WaitUntil([&] { return api.Queries().size() >= 3; });
  auto queries = api.Queries();
  ASSERT_GE(queries.size(), 3u);
  EXPECT_THAT(queries[2], HasSubstr("watch=1"));
  EXPECT_THAT(queries[2], HasSubstr("resourceVersion=7"));
  EXPECT_EQ((*inf)->Stats().lists, 1u);  // no re-list: the watch was resumed
  EXPECT_EQ((*inf)->Stats().errors, 0u);
}

TEST(InformerTest, GoneRelistsAndDiffsAgainstTheCache) {
  FakeApi api;
  api.SetList({Pod("a", "1"), Pod("b", "2"), Pod("c", "3")}, "3");
  Recorder rec;
  auto inf = Informer::Start(api.Creds(), {.path = "/api/v1/pods"}, rec.Handler());
  ASSERT_TRUE(inf.ok()) << inf.status();
  rec.WaitFor(3);
  WaitUntil([&] { return api.OpenWatches() == 1; });
  // While "not watching": b deleted, c changed, d created. Then the server says 410.
  api.SetList({Pod("a", "1"), Pod("c", "9"), Pod("d", "10")}, "10");
  api.Push(Event("ERROR", {{"kind", "Status"}, {"code", 410}, {"message", "too old"}}));
  auto seen = rec.WaitFor(6);
  EXPECT_THAT(seen, ElementsAre("ADDED default/a@1", "ADDED default/b@2", "ADDED default/c@3",
                                "DELETED default/b@2", "MODIFIED default/c@9",
                                "ADDED default/d@10"));
  WaitUntil([&] { return (*inf)->Stats().lists >= 2; });  // counted after the delivery
  EXPECT_EQ((*inf)->Stats().lists, 2u);
  EXPECT_EQ((*inf)->Stats().errors, 0u);  // 410 is the protocol, not a failure
}

TEST(InformerTest, FailuresBackOffAndAreCounted) {
  FakeApi api;
  api.SetList({}, "1", 500);
  Recorder rec;
  auto inf = Informer::Start(api.Creds(),
                             {.path = "/api/v1/pods",
                              .backoff_initial = std::chrono::milliseconds(20),
                              .backoff_max = std::chrono::milliseconds(40)},
                             rec.Handler());
  ASSERT_TRUE(inf.ok()) << inf.status();
  WaitUntil([&] { return (*inf)->Stats().errors >= 3; });
  InformerStats s = (*inf)->Stats();
  EXPECT_GE(s.errors, 3u);
  EXPECT_FALSE(s.synced);
  EXPECT_THAT(s.last_error, HasSubstr("HTTP 500"));
  EXPECT_THAT(s.last_error, HasSubstr("scripted failure"));
  // The server recovers: the informer syncs.
  api.SetList({Pod("a", "1")}, "1");
  EXPECT_TRUE((*inf)->WaitForSync(std::chrono::seconds(10)));
  EXPECT_THAT(rec.WaitFor(1), ElementsAre("ADDED default/a@1"));
}

TEST(InformerTest, AGarbledLineIsAnErrorAndTheInformerRelists) {
  FakeApi api;
  api.SetList({Pod("a", "1")}, "1");
  Recorder rec;
  auto inf = Informer::Start(api.Creds(),
                             {.path = "/api/v1/pods",
                              .backoff_initial = std::chrono::milliseconds(10)},
                             rec.Handler());
  ASSERT_TRUE(inf.ok()) << inf.status();
  WaitUntil([&] { return api.OpenWatches() == 1; });
  api.Push("{not json\n");
  WaitUntil([&] { return (*inf)->Stats().lists >= 2; });
  EXPECT_GE((*inf)->Stats().lists, 2u);
  EXPECT_THAT((*inf)->Stats().last_error, HasSubstr("not a watch event"));
  EXPECT_THAT(rec.WaitFor(1), ElementsAre("ADDED default/a@1"));  // nothing changed: no event
}

TEST(InformerTest, StopEndsAnOpenWatchPromptly) {
  FakeApi api;
  api.SetList({}, "1");
  Recorder rec;
  auto inf = Informer::Start(api.Creds(), {.path = "/api/v1/pods"}, rec.Handler());
  ASSERT_TRUE(inf.ok()) << inf.status();
  WaitUntil([&] { return api.OpenWatches() == 1; });
  auto t0 = std::chrono::steady_clock::now();
  (*inf)->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
}

TEST(InformerTest, BadPathIsRefused) {
  Credentials c;
  c.server = "http://127.0.0.1:1";
  auto inf = Informer::Start(c, {.path = "api/v1/pods"}, [](const WatchEvent&) {});
  ASSERT_FALSE(inf.ok());
  EXPECT_THAT(inf.status().message(), HasSubstr("expected an API path"));
}

}  // namespace
}  // namespace podtopo::kube

namespace podtopo::kube {
namespace {

// The same against the real kube-apiserver 1.20.2 (../shared/runtime/kubernetes-1.20): TLS,
// token authentication, chunked watch streams and bookmarks as the server writes them.
// Skipped where the control plane or etcd is missing.
class RealApiServer : public ::testing::Test {
 protected:
  void SetUp() override {
    script_ = podtopo::testing::SharedDir() + "/runtime/kubernetes-1.20/control-plane.sh";
    if (!std::filesystem::exists(script_)) GTEST_SKIP() << "no control plane at " << script_;
    if (std::system("command -v etcd >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "etcd is missing (scripts/setup.sh installs etcd-server)";
    }
    dir_ = podtopo::testing::MakeTempDir("informer-cp");
    std::string cmd = script_ + " start " + dir_ + " >" + dir_ + "/start.out 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << "control-plane.sh start failed; see " << dir_;
    started_ = true;
    auto c = LoadKubeconfig(dir_ + "/admin.kubeconfig");
    ASSERT_TRUE(c.ok()) << c.status();
    creds_ = *c;
  }
  void TearDown() override {
    if (started_) {
      std::string cmd = script_ + " stop " + dir_ + " >/dev/null 2>&1";
      (void)std::system(cmd.c_str());
      std::filesystem::remove_all(dir_);
    }
  }
  std::string script_, dir_;
  bool started_ = false;
  Credentials creds_;
};

TEST_F(RealApiServer, InformerFollowsConfigMaps) {
  auto client = ApiClient::Create(creds_);
  ASSERT_TRUE(client.ok()) << client.status();
  const std::string base = "/api/v1/namespaces/default/configmaps";
  auto make = [&](const std::string& name, const std::string& value) {
    auto r = (*client)->Post(base, nlohmann::json{{"apiVersion", "v1"},
                                                  {"kind", "ConfigMap"},
                                                  {"metadata", {{"name", name}}},
                                                  {"data", {{"k", value}}}}
                                       .dump());
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->ok()) << r->Error();
  };
  make("before", "1");
  std::mutex mu;
  std::vector<std::string> seen;
  auto inf = Informer::Start(creds_, {.path = base + "?labelSelector=" + EscapePathSegment("!x")},
                             [&](const WatchEvent& e) {
                               std::lock_guard<std::mutex> l(mu);
                               seen.push_back(std::string(TypeName(e.type)) + " " + KeyOf(e.object) +
                                              " " + e.object["data"].value("k", ""));
                             });
  ASSERT_TRUE(inf.ok()) << inf.status();
  ASSERT_TRUE((*inf)->WaitForSync(std::chrono::seconds(20))) << (*inf)->Stats().last_error;
  make("after", "2");
  auto r = (*client)->Patch(base + "/before", R"({"data":{"k":"3"}})", kMergePatch);
  ASSERT_TRUE(r.ok() && r->ok());
  r = (*client)->Delete(base + "/after");
  ASSERT_TRUE(r.ok() && r->ok());
  auto count = [&] {
    std::lock_guard<std::mutex> l(mu);
    return seen.size();
  };
  WaitUntil([&] { return count() >= 4; });
  std::lock_guard<std::mutex> l(mu);
  EXPECT_THAT(seen, ElementsAre("ADDED default/before 1", "ADDED default/after 2",
                                "MODIFIED default/before 3", "DELETED default/after 2"));
  EXPECT_EQ((*inf)->Stats().errors, 0u) << (*inf)->Stats().last_error;
}

}  // namespace
}  // namespace podtopo::kube
