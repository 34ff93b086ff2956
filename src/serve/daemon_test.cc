#include "serve/daemon.h"

#include <atomic>
#include <future>
#include <thread>

#include "config/kubelet_config.h"
#include "gtest/gtest.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "nlohmann/json.hpp"
#include "podresources/v1/api.grpc.pb.h"
#include "serve/test_util.h"
#include "topology/node_source.h"

namespace podtopo::serve {
namespace {

using testutil::PodYaml;
using testutil::TempDir;
using testutil::WaitFor;
using testutil::WriteManifest;

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pods_ = dir_.path() + "/pods";
    state_ = dir_.path() + "/state";
    socket_ = dir_.path() + "/pod-resources/kubelet.sock";
    std::filesystem::create_directories(state_);
    std::filesystem::create_directories(pods_);
  }

  void Start(DaemonOptions o = {}) {
    o.socket_path = socket_;
    o.pods_dir = pods_;
    o.state_dir = state_;
    if (o.qps == 100) o.qps = 0;  // tests are not rate limited unless they say so
    auto topo = LoadNode("preset:demo");
    ASSERT_TRUE(topo.ok());
    auto d = Daemon::Start(*topo, config::SeedDefault(), std::move(o));
    ASSERT_TRUE(d.ok()) << d.status();
    daemon_ = std::move(*d);
    stub_ = v1::PodResourcesLister::NewStub(
        grpc::CreateChannel("unix:" + socket_, grpc::InsecureChannelCredentials()));
  }

  const AdmittedPod* Find(const NodeSnapshot& s, const std::string& name) {
    for (const auto& p : s.pods) {
      if (p.pod.name == name) return &p;
    }
    return nullptr;
  }
  bool Has(const std::string& name) {
    NodeSnapshot s = daemon_->Snapshot();
    return Find(s, name) != nullptr;
  }
  grpc::Status List(v1::ListPodResourcesResponse* r) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return stub_->List(&ctx, {}, r);
  }
  grpc::Status GetPod(const std::string& name, v1::GetPodResourcesResponse* r) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::GetPodResourcesRequest req;
    req.set_pod_namespace("default");
    req.set_pod_name(name);
    return stub_->Get(&ctx, req, r);
  }
  bool HasRejection(const std::string& reason, const std::string& file) {
    for (const auto& r : daemon_->Rejections()) {
      if (r.reason == reason && r.file == file) return true;
    }
    return false;
  }

  TempDir dir_;
  std::string pods_, state_, socket_;
  std::unique_ptr<Daemon> daemon_;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub_;
};

TEST_F(DaemonTest, ManifestAddedIsAdmittedChangedIsReevaluatedRemovedIsReleased) {
  Start();
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  WriteManifest(pods_, "a.yaml", PodYaml("a", 4, 2));
  ASSERT_TRUE(WaitFor([&] { return Has("a"); }));
  v1::ListPodResourcesResponse r;
  ASSERT_TRUE(List(&r).ok());
  ASSERT_EQ(r.pod_resources_size(), 1);
  EXPECT_EQ(r.pod_resources(0).cpu_ids_size(), 4);
  ASSERT_EQ(r.pod_resources(0).containers_size(), 2);
  EXPECT_EQ(r.pod_resources(0).containers(0).name(), "side");
  EXPECT_EQ(r.pod_resources(0).containers(1).cpu_ids_size(), 2);

  // Changed: the pod is admitted again with its new resources.
  WriteManifest(pods_, "a.yaml", PodYaml("a", 6, 3));
  ASSERT_TRUE(WaitFor([&] {
    NodeSnapshot s = daemon_->Snapshot();
    const AdmittedPod* p = Find(s, "a");
    return p != nullptr && p->allocation.cpus.Size() == 6;
  }));
  r.Clear();
  ASSERT_TRUE(List(&r).ok());
  ASSERT_EQ(r.pod_resources_size(), 1);
  EXPECT_EQ(r.pod_resources(0).containers(1).cpu_ids_size(), 3);

  // Removed: released, the CPUs return to the shared pool.
  CpuSet before = daemon_->Snapshot().default_cpus;
  std::filesystem::remove(pods_ + "/a.yaml");
  ASSERT_TRUE(WaitFor([&] { return !Has("a"); }));
  EXPECT_EQ(daemon_->Snapshot().default_cpus.Size(), before.Size() + 6);
  r.Clear();
  ASSERT_TRUE(List(&r).ok());
  EXPECT_EQ(r.pod_resources_size(), 0);
}

TEST_F(DaemonTest, SymlinkedManifestIsAdmittedAndTemporaryFilesAreIgnored) {
  Start();
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  WriteManifest(dir_.path(), "outside.yaml", PodYaml("linked", 2, 1));
  std::filesystem::create_symlink(dir_.path() + "/outside.yaml", pods_ + "/linked.yaml");
  WriteManifest(pods_, ".hidden.yaml", PodYaml("hidden", 2, 1));
  WriteManifest(pods_, "notes.txt", PodYaml("txt", 2, 1));
  ASSERT_TRUE(WaitFor([&] { return Has("linked"); }));
  EXPECT_FALSE(Has("hidden"));
  EXPECT_FALSE(Has("txt"));
}

TEST_F(DaemonTest, BadManifestIsReportedAndAffectsNothingElse) {
  Start();
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  WriteManifest(pods_, "good.yaml", PodYaml("good", 2, 1));
  ASSERT_TRUE(WaitFor([&] { return Has("good"); }));
  CpuSet good_cpus = Find(daemon_->Snapshot(), "good")->allocation.cpus;
  WriteManifest(pods_, "bad.yaml", "apiVersion: v1\nkind: Pod\nspec: [unclosed\n");
  ASSERT_TRUE(WaitFor([&] { return HasRejection("InvalidManifest", "bad.yaml"); }));
  for (const auto& r : daemon_->Rejections()) {
    if (r.file == "bad.yaml") {
      EXPECT_NE(r.message.find("bad.yaml"), std::string::npos) << r.message;
    }
  }
  // Queryable in the state dir.
  EXPECT_TRUE(WaitFor([&] {
    auto text = ReadFile(state_ + "/podtopo_rejections.json");
    return text.ok() && text->find("bad.yaml") != std::string::npos;
  }));
  // Other pods are untouched and new ones still admitted.
  WriteManifest(pods_, "next.yaml", PodYaml("next", 2, 1));
  ASSERT_TRUE(WaitFor([&] { return Has("next"); }));
  NodeSnapshot s = daemon_->Snapshot();
  ASSERT_NE(Find(s, "good"), nullptr);
  EXPECT_EQ(Find(s, "good")->allocation.cpus, good_cpus);
  // Fixing the file admits its pod and clears the error.
  WriteManifest(pods_, "bad.yaml", PodYaml("fixed", 2, 1));
  ASSERT_TRUE(WaitFor([&] { return Has("fixed"); }));
  EXPECT_FALSE(HasRejection("InvalidManifest", "bad.yaml"));
}

TEST_F(DaemonTest, RejectedPodIsKeptWithReasonAndMessage) {
  Start();
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  WriteManifest(pods_, "huge.yaml", PodYaml("huge", 1000, 2, 1));
  ASSERT_TRUE(WaitFor([&] { return !daemon_->Rejections().empty(); }));
  auto rej = daemon_->Rejections();
  ASSERT_EQ(rej.size(), 1u);
  EXPECT_EQ(rej[0].pod, "default/huge");
  EXPECT_EQ(rej[0].file, "huge.yaml");
  EXPECT_FALSE(rej[0].reason.empty());
  EXPECT_FALSE(rej[0].message.empty());
  EXPECT_FALSE(Has("huge"));
  ASSERT_TRUE(WaitFor([&] {
    auto t = ReadFile(state_ + "/podtopo_rejections.json");
    return t.ok() && t->find("default/huge") != std::string::npos;
  }));
  auto j = nlohmann::json::parse(*ReadFile(state_ + "/podtopo_rejections.json"));
  EXPECT_EQ(j["rejections"][0]["reason"], rej[0].reason);
  // The pod manager keeps a rejected pod: Get answers for it (no resources), List does not.
  v1::GetPodResourcesResponse got;
  ASSERT_TRUE(WaitFor([&] { return GetPod("huge", &got).ok(); }));
  EXPECT_EQ(got.pod_resources().name(), "huge");
  ASSERT_EQ(got.pod_resources().containers_size(), 2);  // the sidecar, then the app
  EXPECT_EQ(got.pod_resources().containers(0).name(), "side");
  EXPECT_EQ(got.pod_resources().containers(1).name(), "app");
  EXPECT_EQ(got.pod_resources().containers(1).cpu_ids_size(), 0);
  EXPECT_EQ(got.pod_resources().cpu_ids_size(), 0);
  v1::ListPodResourcesResponse list;
  ASSERT_TRUE(List(&list).ok());
  for (const auto& p : list.pod_resources()) EXPECT_NE(p.name(), "huge");
  // Removing the manifest clears it.
  std::filesystem::remove(pods_ + "/huge.yaml");
  ASSERT_TRUE(WaitFor([&] { return daemon_->Rejections().empty(); }));
}

TEST_F(DaemonTest, DuplicatePodInAnotherFileIsRejected) {
  Start();
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  WriteManifest(pods_, "one.yaml", PodYaml("same", 2, 1));
  ASSERT_TRUE(WaitFor([&] { return Has("same"); }));
  WriteManifest(pods_, "two.yaml", PodYaml("same", 4, 2));
  ASSERT_TRUE(WaitFor([&] { return HasRejection("DuplicatePod", "two.yaml"); }));
  EXPECT_EQ(Find(daemon_->Snapshot(), "same")->allocation.cpus.Size(), 2);
  // Removing the duplicate does not release the original.
  std::filesystem::remove(pods_ + "/two.yaml");
  ASSERT_TRUE(WaitFor([&] { return !HasRejection("DuplicatePod", "two.yaml"); }));
  EXPECT_TRUE(Has("same"));
}

TEST_F(DaemonTest, RestartKeepsEveryAllocationAndReleasesPodsWhoseManifestWentAway) {
  WriteManifest(pods_, "a.yaml", PodYaml("a", 4, 2));
  WriteManifest(pods_, "b.yaml", PodYaml("b", 2, 1));
  Start();
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  ASSERT_TRUE(Has("a") && Has("b"));
  NodeSnapshot before = daemon_->Snapshot();
  daemon_->Stop();
  daemon_.reset();
  std::filesystem::remove(pods_ + "/b.yaml");  // while the daemon is down

  Start();
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  NodeSnapshot after = daemon_->Snapshot();
  ASSERT_NE(Find(after, "a"), nullptr);
  EXPECT_EQ(Find(after, "b"), nullptr);
  const AdmittedPod* a0 = Find(before, "a");
  const AdmittedPod* a1 = Find(after, "a");
  EXPECT_EQ(a1->allocation.cpus, a0->allocation.cpus);
  ASSERT_EQ(a1->allocation.containers.size(), a0->allocation.containers.size());
  for (size_t i = 0; i < a0->allocation.containers.size(); ++i) {
    EXPECT_EQ(a1->allocation.containers[i].cpus, a0->allocation.containers[i].cpus);
  }
  EXPECT_EQ(a1->allocation.memory, a0->allocation.memory);
  // b's CPUs are back in the shared pool.
  EXPECT_EQ(after.default_cpus.Size(),
            before.default_cpus.Size() + Find(before, "b")->allocation.cpus.Size());
}

// Found by tests/reliability/kill_test.py: a manifest whose resources changed while the daemon
// was down (or just before it was killed) kept the recorded allocation, reported with the old
// size.
TEST_F(DaemonTest, ManifestChangedWhileDownIsAdmittedAgainAtRestart) {
  WriteManifest(pods_, "a.yaml", PodYaml("a", 2, 1));
  WriteManifest(pods_, "b.yaml", PodYaml("b", 2, 1));
  Start();
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  ASSERT_TRUE(Has("a") && Has("b"));
  NodeSnapshot before = daemon_->Snapshot();
  daemon_->Stop();
  daemon_.reset();
  WriteManifest(pods_, "a.yaml", PodYaml("a", 4, 2));  // while the daemon is down

  Start();
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  NodeSnapshot after = daemon_->Snapshot();
  ASSERT_NE(Find(after, "a"), nullptr);
  EXPECT_EQ(Find(after, "a")->allocation.cpus.Size(), 4);
  EXPECT_EQ(Find(after, "a")->pod.resources->requests.at("cpu").Value(), 4);
  // The unchanged pod keeps its CPUs exactly.
  ASSERT_NE(Find(after, "b"), nullptr);
  EXPECT_EQ(Find(after, "b")->allocation.cpus, Find(before, "b")->allocation.cpus);
}

TEST_F(DaemonTest, FailedPreconditionUntilRestored) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  DaemonOptions o;
  o.before_restore = [released] { released.wait(); };
  WriteManifest(pods_, "a.yaml", PodYaml("a", 2, 1));
  Start(std::move(o));
  v1::ListPodResourcesResponse r;
  grpc::Status s = List(&r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  release.set_value();
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  r.Clear();
  s = List(&r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.pod_resources_size(), 1);
}

TEST_F(DaemonTest, RateLimitedDaemonKeepsServing) {
  DaemonOptions o;
  o.qps = 1;
  o.burst = 2;
  Start(std::move(o));
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  int exhausted = 0;
  for (int i = 0; i < 10; ++i) {
    v1::ListPodResourcesResponse r;
    grpc::Status s = List(&r);
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) ++exhausted;
  }
  EXPECT_GT(exhausted, 0);
  // Tokens come back: eventually a call succeeds again.
  EXPECT_TRUE(WaitFor([&] {
    v1::ListPodResourcesResponse r;
    return List(&r).ok();
  }));
}

TEST_F(DaemonTest, ManyClientsListWhilePodsComeAndGo) {
  Start();
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0}, calls{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 6; ++t) {
    clients.emplace_back([&] {
      auto stub = v1::PodResourcesLister::NewStub(
          grpc::CreateChannel("unix:" + socket_, grpc::InsecureChannelCredentials()));
      while (!stop) {
        grpc::ClientContext ctx;
        v1::ListPodResourcesResponse r;
        if (!stub->List(&ctx, {}, &r).ok()) ++errors;
        for (const auto& p : r.pod_resources()) {
          // Every listed pod is complete: the bubble and its exclusive app container.
          if (p.cpu_ids_size() != 2 || p.containers_size() != 2 ||
              p.containers(1).cpu_ids_size() != 1) {
            ++errors;
          }
        }
        ++calls;
        (void)daemon_->Snapshot();
      }
    });
  }
  for (int i = 0; i < 6; ++i) {
    WriteManifest(pods_, fmt::format("p{}.yaml", i), PodYaml(fmt::format("p{}", i), 2, 1));
  }
  ASSERT_TRUE(WaitFor([&] { return daemon_->Snapshot().pods.size() == 6; }));
  for (int i = 0; i < 6; i += 2) std::filesystem::remove(pods_ + fmt::format("/p{}.yaml", i));
  ASSERT_TRUE(WaitFor([&] { return daemon_->Snapshot().pods.size() == 3; }));
  while (calls < 200) std::this_thread::yield();
  stop = true;
  for (auto& t : clients) t.join();
  EXPECT_EQ(errors.load(), 0);
}

class FakeHooks : public RuntimeHooks {
 public:
  absl::Status Start(std::function<NodeSnapshot()> snapshot,
                     std::shared_ptr<prometheus::Registry> metrics) override {
    std::lock_guard<std::mutex> l(mu);
    EXPECT_NE(metrics, nullptr);
    events.push_back(fmt::format("start:{}", snapshot().pods.size()));
    return absl::OkStatus();
  }
  void PodAdmitted(const AdmittedPod& pod) override {
    std::lock_guard<std::mutex> l(mu);
    events.push_back("admitted:" + pod.pod.name);
    running.insert(pod.pod.uid);
  }
  void PodRemoving(const AdmittedPod& pod) override {
    std::lock_guard<std::mutex> l(mu);
    events.push_back("removing:" + pod.pod.name);
    running.erase(pod.pod.uid);
  }
  bool IsRunning(const std::string& uid) const override {
    std::lock_guard<std::mutex> l(mu);
    return hide ? false : running.contains(uid);
  }
  void Shutdown() override {
    std::lock_guard<std::mutex> l(mu);
    events.push_back("shutdown");
  }
  mutable std::mutex mu;
  std::vector<std::string> events;
  std::set<std::string> running;
  bool hide = false;
};

TEST_F(DaemonTest, RuntimeHooksAreDrivenInOrderAndListShowsRunningPodsOnly) {
  auto hooks = std::make_unique<FakeHooks>();
  FakeHooks* h = hooks.get();
  DaemonOptions o;
  o.hooks = std::move(hooks);
  Start(std::move(o));
  ASSERT_TRUE(daemon_->WaitRestored().ok());
  WriteManifest(pods_, "a.yaml", PodYaml("a", 2, 1));
  ASSERT_TRUE(WaitFor([&] { return Has("a"); }));
  v1::ListPodResourcesResponse r;
  ASSERT_TRUE(List(&r).ok());
  EXPECT_EQ(r.pod_resources_size(), 1);
  {
    std::lock_guard<std::mutex> l(h->mu);
    h->hide = true;
  }
  r.Clear();
  ASSERT_TRUE(List(&r).ok());
  EXPECT_EQ(r.pod_resources_size(), 0);
  v1::GetPodResourcesResponse got;  // not running: Get still answers (the pod manager knows it)
  EXPECT_TRUE(GetPod("a", &got).ok());
  std::filesystem::remove(pods_ + "/a.yaml");
  ASSERT_TRUE(WaitFor([&] { return !Has("a"); }));
  daemon_->Stop();
  std::lock_guard<std::mutex> l(h->mu);
  EXPECT_EQ(h->events,
            (std::vector<std::string>{"start:0", "admitted:a", "removing:a", "shutdown"}));
}

}  // namespace
}  // namespace podtopo::serve
