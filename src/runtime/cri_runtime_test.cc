// CriRuntime against FakeCri (an in-memory CRI server): the pod lifecycle, the reconcile loop's
// decisions (default set changes, drift, stale containers), adoption and runtime outages.
#include "runtime/cri_runtime.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "runtime/fake_cri_test_util.h"

namespace podtopo::runtime {
namespace {

namespace fs = std::filesystem;

class CriRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "podtopo-cri-runtime-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    socket_ = dir_ + "/cri.sock";
    fake_ = std::make_unique<testing::FakeCri>(socket_, dir_ + "/cgroup");
    fake_->Serve();
    snap_.default_cpus = CpuSet::Parse("0-3").value();
    snap_.reserved_cpus = CpuSet::Parse("0").value();
    registry_ = std::make_shared<prometheus::Registry>();
    hooks_ = NewHooks();
  }
  void TearDown() override {
    if (hooks_) hooks_->Shutdown();
    fake_.reset();
    fs::remove_all(dir_);
  }

  std::unique_ptr<CriRuntime> NewHooks() {
    CriRuntimeOptions o;
    o.cri_endpoint = "unix://" + socket_;
    o.cgroup_root = "podtopo-test";
    o.cgroup_mount = dir_ + "/cgroup";
    o.log_dir = dir_ + "/logs";
    o.reconcile_period = std::chrono::milliseconds(0);  // passes run by hand
    o.call_timeout = std::chrono::milliseconds(500);
    o.stop_grace_seconds = 0;
    auto h = CriRuntime::Create(o);
    EXPECT_TRUE(h.ok()) << h.status();
    return std::move(*h);
  }

  absl::Status Start(CriRuntime& h) {
    return h.Start(
        [this] {
          std::lock_guard<std::mutex> l(mu_);
          return snap_;
        },
        registry_);
  }

  serve::AdmittedPod MakePod(const std::string& name, const std::string& image,
                             std::vector<std::tuple<std::string, ContainerKind, std::string,
                                                    std::string>> containers) {
    serve::AdmittedPod p;
    p.pod.name = name;
    p.pod.uid = "uid-" + name;
    p.allocation.name = name;
    p.allocation.uid = p.pod.uid;
    p.allocation.admitted = true;
    for (auto& [cname, kind, assignment, cpus] : containers) {
      Container c{.name = cname, .image = image, .kind = kind};
      if (kind == ContainerKind::kInit) c.command = {"true"};
      (kind == ContainerKind::kApp ? p.pod.containers : p.pod.init_containers).push_back(c);
      ContainerAllocation a;
      a.name = cname;
      a.kind = kind;
      a.assignment = assignment;
      a.cpus = CpuSet::Parse(cpus).value();
      p.allocation.containers.push_back(a);
    }
    return p;
  }

  void Admit(const serve::AdmittedPod& p) {
    {
      std::lock_guard<std::mutex> l(mu_);
      snap_.pods.push_back(p);
    }
    hooks_->PodAdmitted(p);
  }

  void SetDefault(const char* cpus) {
    std::lock_guard<std::mutex> l(mu_);
    snap_.default_cpus = CpuSet::Parse(cpus).value();
    for (auto& p : snap_.pods) {
      for (auto& a : p.allocation.containers) {
        if (a.assignment == "node_shared") a.cpus = snap_.default_cpus;
      }
    }
  }

  std::string CgroupCpus(const std::string& uid, const std::string& cid) {
    std::ifstream in(fmt::format("{}/cgroup/cpuset/podtopo-test/pod{}/{}/cpuset.cpus", dir_,
                                 uid, cid));
    std::string v;
    in >> v;
    return v;
  }

  double Metric(const std::string& name, const std::string& label_value = "") {
    double total = 0;
    for (const auto& fam : registry_->Collect()) {
      if (fam.name != name) continue;
      for (const auto& m : fam.metric) {
        bool match = label_value.empty();
        for (const auto& l : m.label) match = match || l.value == label_value;
        if (!match) continue;
        total += fam.type == prometheus::MetricType::Gauge ? m.gauge.value : m.counter.value;
      }
    }
    return total;
  }

  std::string dir_, socket_;
  std::unique_ptr<testing::FakeCri> fake_;
  std::mutex mu_;
  serve::NodeSnapshot snap_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<CriRuntime> hooks_;
};

TEST_F(CriRuntimeTest, RunsContainersInOrderWithTheirCpusets) {
  ASSERT_TRUE(Start(*hooks_).ok());
  auto p = MakePod("p", "busybox",
                   {{"init", ContainerKind::kInit, "node_shared", "0-3"},
                    {"side", ContainerKind::kSidecar, "pod_shared", "2-3"},
                    {"main", ContainerKind::kApp, "pod_exclusive", "1"}});
  Admit(p);
  EXPECT_TRUE(hooks_->IsRunning(p.pod.uid));
  std::lock_guard<std::mutex> l(fake_->mu);
  ASSERT_EQ(fake_->sandboxes.size(), 1u);
  ASSERT_EQ(fake_->containers.size(), 3u);
  std::map<std::string, testing::FakeCri::C> by_name;
  for (auto& [id, c] : fake_->containers) by_name[c.c.metadata().name()] = c;
  EXPECT_EQ(by_name["init"].c.state(), ::runtime::v1::CONTAINER_EXITED);
  EXPECT_EQ(by_name["side"].c.state(), ::runtime::v1::CONTAINER_RUNNING);
  EXPECT_EQ(by_name["main"].cpus, "1");
  EXPECT_EQ(by_name["side"].cpus, "2-3");
  EXPECT_LT(by_name["init"].c.created_at(), by_name["side"].c.created_at());
  EXPECT_LT(by_name["side"].c.created_at(), by_name["main"].c.created_at());
  EXPECT_EQ(by_name["main"].parent, "/podtopo-test/poduid-p");
}

TEST_F(CriRuntimeTest, MissingImageFailsOnlyThatPod) {
  ASSERT_TRUE(Start(*hooks_).ok());
  auto bad = MakePod("bad", "absent", {{"c", ContainerKind::kApp, "node_shared", "0-3"}});
  auto good = MakePod("good", "busybox", {{"c", ContainerKind::kApp, "node_shared", "0-3"}});
  Admit(bad);
  Admit(good);
  EXPECT_FALSE(hooks_->IsRunning(bad.pod.uid));
  EXPECT_TRUE(hooks_->IsRunning(good.pod.uid));
  EXPECT_EQ(fake_->sandboxes_created, 1);
  EXPECT_EQ(Metric("podtopo_runtime_pod_starts_total", "error"), 1);
}

TEST_F(CriRuntimeTest, ReconcileFollowsTheDefaultSetAndCorrectsDrift) {
  ASSERT_TRUE(Start(*hooks_).ok());
  auto shared = MakePod("s", "busybox", {{"c", ContainerKind::kApp, "node_shared", "0-3"}});
  auto excl = MakePod("e", "busybox", {{"c", ContainerKind::kApp, "node_exclusive", "2-3"}});
  Admit(shared);
  std::string sid = fake_->Find(shared.pod.uid, "c");
  EXPECT_EQ(CgroupCpus(shared.pod.uid, sid), "0-3");
  hooks_->ReconcileOnce();
  EXPECT_EQ(fake_->updates, 0) << "nothing to correct";

  SetDefault("0-1");
  Admit(excl);
  EXPECT_EQ(CgroupCpus(excl.pod.uid, fake_->Find(excl.pod.uid, "c")), "2-3");
  hooks_->ReconcileOnce();
  EXPECT_EQ(CgroupCpus(shared.pod.uid, sid), "0-1");
  EXPECT_EQ(Metric("podtopo_reconcile_updates_total", "default_set"), 1);

  // Drift behind podtopo's back: the runtime still reports 0-1, the cgroup says 3.
  std::ofstream(fmt::format("{}/cgroup/cpuset/podtopo-test/pod{}/{}/cpuset.cpus", dir_,
                            shared.pod.uid, sid))
      << "3\n";
  hooks_->ReconcileOnce();
  EXPECT_EQ(CgroupCpus(shared.pod.uid, sid), "0-1");
  EXPECT_EQ(Metric("podtopo_reconcile_updates_total", "drift"), 1);
  EXPECT_EQ(fake_->updates, 2);
}

TEST_F(CriRuntimeTest, StaleContainerIsClearedAndStartedAgain) {
  ASSERT_TRUE(Start(*hooks_).ok());
  auto p = MakePod("p", "busybox", {{"c", ContainerKind::kApp, "node_shared", "0-3"}});
  Admit(p);
  std::string old_id = fake_->Find(p.pod.uid, "c");
  {
    std::lock_guard<std::mutex> l(fake_->mu);
    fake_->containers.erase(old_id);
  }
  hooks_->ReconcileOnce();
  std::string new_id = fake_->Find(p.pod.uid, "c");
  EXPECT_FALSE(new_id.empty());
  EXPECT_NE(new_id, old_id);
  EXPECT_EQ(Metric("podtopo_reconcile_stale_containers_total"), 1);
  EXPECT_TRUE(hooks_->IsRunning(p.pod.uid));
}

TEST_F(CriRuntimeTest, RestartAdoptsAndRemovesOrphans) {
  ASSERT_TRUE(Start(*hooks_).ok());
  auto keep = MakePod("keep", "busybox", {{"c", ContainerKind::kApp, "node_shared", "0-3"}});
  auto gone = MakePod("gone", "busybox", {{"c", ContainerKind::kApp, "node_shared", "0-3"}});
  Admit(keep);
  Admit(gone);
  std::string keep_id = fake_->Find(keep.pod.uid, "c");
  hooks_->Shutdown();
  hooks_.reset();
  {
    std::lock_guard<std::mutex> l(mu_);
    snap_.pods.pop_back();  // `gone` was removed while podtopo was down
  }
  hooks_ = NewHooks();
  ASSERT_TRUE(Start(*hooks_).ok());
  EXPECT_TRUE(hooks_->IsRunning(keep.pod.uid));
  EXPECT_FALSE(hooks_->IsRunning(gone.pod.uid));
  EXPECT_EQ(fake_->Find(keep.pod.uid, "c"), keep_id);
  EXPECT_EQ(fake_->Find(gone.pod.uid, "c"), "");
  EXPECT_EQ(fake_->sandboxes_created, 2) << "nothing started twice";
  std::lock_guard<std::mutex> l(fake_->mu);
  EXPECT_EQ(fake_->sandboxes.size(), 1u);
}

// The --cri kill loss (docs/reliability.md): a SIGKILL inside StartContainer left a task in the
// pod's sandbox, so containerd refuses to remove it and keeps its name, and its container's,
// reserved. After the restart the pod's new sandbox and container take the next attempt
// numbers, as the kubelet's do (kuberuntime podSandboxChanged: the newest sandbox's attempt
// + 1; a container's: its newest status's + 1), and the pod runs again.
TEST_F(CriRuntimeTest, SandboxThatCannotBeRemovedDoesNotBlockTheNewOne) {
  ASSERT_TRUE(Start(*hooks_).ok());
  auto p = MakePod("p", "busybox", {{"c", ContainerKind::kApp, "node_shared", "0-3"}});
  Admit(p);
  ASSERT_TRUE(hooks_->IsRunning(p.pod.uid));
  hooks_->Shutdown();
  hooks_.reset();
  std::string stuck;
  {
    std::lock_guard<std::mutex> l(fake_->mu);
    ASSERT_EQ(fake_->sandboxes.size(), 1u);
    stuck = fake_->sandboxes.begin()->first;
    fake_->sandboxes.begin()->second.set_state(::runtime::v1::SANDBOX_NOTREADY);
    fake_->unremovable.insert(stuck);
  }
  hooks_ = NewHooks();
  ASSERT_TRUE(Start(*hooks_).ok());
  hooks_->ReconcileOnce();
  EXPECT_TRUE(hooks_->IsRunning(p.pod.uid));
  std::lock_guard<std::mutex> l(fake_->mu);
  EXPECT_EQ(fake_->sandboxes_created, 2);
  ASSERT_EQ(fake_->sandboxes.size(), 2u) << "the stuck sandbox stays, and one new";
  for (const auto& [id, sb] : fake_->sandboxes) {
    if (id == stuck) continue;
    EXPECT_EQ(sb.state(), ::runtime::v1::SANDBOX_READY);
    EXPECT_EQ(sb.metadata().attempt(), 1u);
  }
  int live = 0;
  for (const auto& [id, c] : fake_->containers) {
    if (c.c.pod_sandbox_id() == stuck) continue;
    ++live;
    EXPECT_EQ(c.c.metadata().attempt(), 1u) << "the stuck sandbox's container keeps attempt 0";
  }
  EXPECT_EQ(live, 1);
}

// A RunPodSandbox cut short by a kill leaves its name reserved in containerd with no sandbox
// listed (seen in `kill_test.py --cri`): the retry takes the next attempt.
TEST_F(CriRuntimeTest, SandboxNameHeldByAnAbandonedCallIsNotRetriedForEver) {
  ASSERT_TRUE(Start(*hooks_).ok());
  auto p = MakePod("p", "busybox", {{"c", ContainerKind::kApp, "node_shared", "0-3"}});
  {
    std::lock_guard<std::mutex> l(fake_->mu);
    fake_->reserved_names.insert("p_default_uid-p_0");
  }
  Admit(p);
  EXPECT_FALSE(hooks_->IsRunning(p.pod.uid));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // the retry's back-off
  hooks_->ReconcileOnce();
  EXPECT_TRUE(hooks_->IsRunning(p.pod.uid));
  std::lock_guard<std::mutex> l(fake_->mu);
  ASSERT_EQ(fake_->sandboxes.size(), 1u);
  EXPECT_EQ(fake_->sandboxes.begin()->second.metadata().attempt(), 1u);
}

TEST_F(CriRuntimeTest, RuntimeOutageKeepsStateAndCatchesUp) {
  ASSERT_TRUE(Start(*hooks_).ok());
  auto p = MakePod("p", "busybox", {{"c", ContainerKind::kApp, "node_shared", "0-3"}});
  Admit(p);
  std::string id = fake_->Find(p.pod.uid, "c");
  fake_->Stop();
  hooks_->ReconcileOnce();
  EXPECT_EQ(Metric("podtopo_runtime_up"), 0);
  EXPECT_TRUE(hooks_->IsRunning(p.pod.uid)) << "last known state is kept";
  // A pod admitted during the outage, and a default set change.
  auto q = MakePod("q", "busybox", {{"c", ContainerKind::kApp, "node_shared", "0-3"}});
  Admit(q);
  EXPECT_FALSE(hooks_->IsRunning(q.pod.uid));
  SetDefault("0-2");
  fake_->Serve();
  // The channel reconnects with back-off (100 ms..1 s): the next passes catch up.
  for (int i = 0; i < 50 && Metric("podtopo_runtime_up") != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    hooks_->ReconcileOnce();
  }
  EXPECT_EQ(Metric("podtopo_runtime_up"), 1);
  EXPECT_TRUE(hooks_->IsRunning(q.pod.uid));
  EXPECT_EQ(CgroupCpus(p.pod.uid, id), "0-2");
}

TEST_F(CriRuntimeTest, RemovingStopsRemovesAndCleansCgroups) {
  ASSERT_TRUE(Start(*hooks_).ok());
  auto p = MakePod("p", "busybox", {{"c", ContainerKind::kApp, "node_exclusive", "1"}});
  Admit(p);
  ASSERT_TRUE(fs::exists(dir_ + "/cgroup/cpuset/podtopo-test/poduid-p"));
  hooks_->PodRemoving(p);
  EXPECT_FALSE(hooks_->IsRunning(p.pod.uid));
  EXPECT_FALSE(fs::exists(dir_ + "/cgroup/cpuset/podtopo-test/poduid-p"));
  std::lock_guard<std::mutex> l(fake_->mu);
  EXPECT_TRUE(fake_->sandboxes.empty());
  EXPECT_TRUE(fake_->containers.empty());
}

TEST(CriRuntimeCreate, RejectsBadEndpointAndRoot) {
  EXPECT_FALSE(CriRuntime::Create({.cri_endpoint = "tcp://x"}).ok());
  EXPECT_FALSE(CriRuntime::Create({.cri_endpoint = "unix:///x.sock", .cgroup_root = "/abs"}).ok());
}

}  // namespace
}  // namespace podtopo::runtime
