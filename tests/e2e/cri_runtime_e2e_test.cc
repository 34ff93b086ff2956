// End-to-end tests of podtopo_runtime (CriRuntime) against a real containerd, driven by the
// kubelet's admission (Node) on this machine's topology: run by with_containerd.py, which
// starts a private containerd and sets PODTOPO_E2E_CRI / PODTOPO_E2E_CGROUP_ROOT. Without them
// every test is skipped.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "cgroup/cgroup.h"
#include "config/kubelet_config.h"
#include "cri/cri_client.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"
#include "runtime/cri_runtime.h"
#include "topology/node_source.h"

namespace podtopo {
namespace {

using namespace std::chrono_literals;
namespace criv1 = ::runtime::v1;
using Clock = std::chrono::steady_clock;

constexpr auto kPeriod = 500ms;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

class CriRuntimeE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoint_ = Env("PODTOPO_E2E_CRI");
    root_ = Env("PODTOPO_E2E_CGROUP_ROOT");
    if (endpoint_.empty() || root_.empty()) {
      GTEST_SKIP() << "PODTOPO_E2E_CRI / PODTOPO_E2E_CGROUP_ROOT not set (run through "
                      "tests/e2e/with_containerd.py)";
    }
    auto topo = LoadNode("local");
    ASSERT_TRUE(topo.ok()) << topo.status();
    if (topo->cpus.num_cpus < 2) GTEST_SKIP() << "needs 2 CPUs";
    config::KubeletConfig cfg = config::SeedDefault();
    cfg.cpu_manager_reconcile_period = config::Duration(kPeriod.count() * 1000000);
    auto node = Node::Create(*topo, cfg, {});
    ASSERT_TRUE(node.ok()) << node.status();
    node_ = std::move(*node);
    auto client = cri::CriClient::Connect(endpoint_, {});
    ASSERT_TRUE(client.ok());
    cri_ = std::move(*client);
    registry_ = std::make_shared<prometheus::Registry>();
    StartHooks();
  }

  void TearDown() override {
    if (hooks_ == nullptr) return;
    // Remove every pod through the hooks (as the daemon does on manifest removal).
    std::vector<PodAllocation> admitted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      admitted = node_->AdmittedPods();
    }
    for (const PodAllocation& a : admitted) RemovePod(a.namespace_name, a.name);
    hooks_->Shutdown();
    criv1::PodSandboxFilter f;
    auto left = cri_->ListPodSandbox(f);
    ASSERT_TRUE(left.ok());
    EXPECT_EQ(left->items_size(), 0) << "sandboxes left after removing every pod";
  }

  void StartHooks() {
    runtime::CriRuntimeOptions o;
    o.cri_endpoint = endpoint_;
    o.cgroup_root = root_;
    o.log_dir = Env("PODTOPO_E2E_RUN") + "/pod-logs";
    o.reconcile_period = kPeriod;
    o.stop_grace_seconds = 0;
    auto hooks = runtime::CriRuntime::Create(o);
    ASSERT_TRUE(hooks.ok()) << hooks.status();
    hooks_ = std::move(*hooks);
    absl::Status s = hooks_->Start([this] { return Snapshot(); }, registry_);
    ASSERT_TRUE(s.ok()) << s;
  }

  serve::NodeSnapshot Snapshot() {
    std::lock_guard<std::mutex> lock(mu_);
    serve::NodeSnapshot snap;
    snap.default_cpus = node_->DefaultCpuSet();
    snap.reserved_cpus = node_->ReservedCpus();
    for (const PodAllocation& a : node_->AdmittedPods()) {
      const Pod* p = node_->FindPod(a.namespace_name, a.name);
      if (p != nullptr) snap.pods.push_back({*p, a});
    }
    return snap;
  }

  serve::AdmittedPod AdmitFile(const std::string& file) {
    auto pods = LoadPods(std::string(PODTOPO_E2E_PODS_DIR) + "/" + file);
    EXPECT_TRUE(pods.ok()) << pods.status();
    serve::AdmittedPod out;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto a = node_->Admit(pods->at(0));
      EXPECT_TRUE(a.ok() && a->admitted) << file << ": " << (a.ok() ? a->message : "");
      out = {pods->at(0), *a};
    }
    hooks_->PodAdmitted(out);
    return out;
  }

  void RemovePod(const std::string& ns, const std::string& name) {
    serve::AdmittedPod p;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const Pod* pod = node_->FindPod(ns, name);
      if (pod == nullptr) return;
      p.pod = *pod;
    }
    hooks_->PodRemoving(p);
    std::lock_guard<std::mutex> lock(mu_);
    ASSERT_TRUE(node_->Remove(ns, name).ok());
  }

  // Container id of (pod uid, container name), "" if none.
  std::string ContainerId(const std::string& uid, const std::string& name) {
    criv1::ContainerFilter f;
    (*f.mutable_label_selector())["io.kubernetes.pod.uid"] = uid;
    (*f.mutable_label_selector())["io.kubernetes.container.name"] = name;
    auto list = cri_->ListContainers(f);
    if (!list.ok() || list->containers_size() == 0) return "";
    EXPECT_EQ(list->containers_size(), 1) << "duplicate containers for " << name;
    return list->containers(0).id();
  }

  int Pid(const std::string& cid) {
    auto st = cri_->ContainerStatus(cid, true);
    if (!st.ok()) return 0;
    auto it = st->info().find("info");
    if (it == st->info().end()) return 0;
    auto j = nlohmann::json::parse(it->second, nullptr, false);
    return j.is_discarded() ? 0 : j.value("pid", 0);
  }

  // {cgroup cpuset.cpus, Cpus_allowed_list}
  std::pair<std::string, std::string> Cpus(const std::string& uid, const std::string& cid) {
    auto cg = cgroup::ReadContainerCpusetCpus(cgroup::kCgroupRoot,
                                              cgroup::PodCgroupParent(root_, uid), cid);
    auto allowed = cgroup::ReadCpusAllowedList(Pid(cid));
    return {cg.ok() ? cg->String() : cg.status().ToString(),
            allowed.ok() ? allowed->String() : allowed.status().ToString()};
  }

  // cpu.cfs_quota_us of the container (or of the pod cgroup when cid is "").
  std::string CfsQuota(const std::string& uid, const std::string& cid) {
    std::string path = fmt::format("{}/cpu/{}/pod{}/{}cpu.cfs_quota_us", cgroup::kCgroupRoot,
                                   root_, uid, cid.empty() ? "" : cid + "/");
    std::ifstream in(path);
    std::string v;
    in >> v;
    return in ? v : "unreadable: " + path;
  }

  // Polls up to 3 reconcile periods for the container's cpus to become `want`; returns the
  // time it took (or -1).
  double WaitCpus(const std::string& uid, const std::string& cid, const std::string& want) {
    auto start = Clock::now();
    while (Clock::now() - start < 3 * kPeriod + 500ms) {
      auto got = Cpus(uid, cid);
      if (got.first == want && got.second == want) {
        return std::chrono::duration<double>(Clock::now() - start).count();
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }

  std::string endpoint_, root_;
  std::mutex mu_;
  std::unique_ptr<Node> node_;
  std::unique_ptr<cri::CriClient> cri_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<runtime::CriRuntime> hooks_;
};

TEST_F(CriRuntimeE2e, ExclusiveAndSharedCpusetsFollowTheState) {
  serve::AdmittedPod shared = AdmitFile("be-shared.yaml");
  ASSERT_TRUE(hooks_->IsRunning(shared.pod.uid));
  std::string shared_id = ContainerId(shared.pod.uid, "app");
  ASSERT_FALSE(shared_id.empty());
  std::string all = Snapshot().default_cpus.String();
  EXPECT_EQ(Cpus(shared.pod.uid, shared_id), std::make_pair(all, all));

  serve::AdmittedPod excl = AdmitFile("exclusive.yaml");
  ASSERT_TRUE(hooks_->IsRunning(excl.pod.uid));
  ASSERT_EQ(excl.allocation.containers.at(0).assignment, "node_exclusive");
  std::string want = excl.allocation.containers.at(0).cpus.String();
  std::string excl_id = ContainerId(excl.pod.uid, "main");
  EXPECT_EQ(Cpus(excl.pod.uid, excl_id), std::make_pair(want, want));

  // CFS quota per isolation level: an exclusive container and its pod have none.
  EXPECT_EQ(CfsQuota(excl.pod.uid, excl_id), "-1");
  EXPECT_EQ(CfsQuota(excl.pod.uid, ""), "-1");

  // The node-shared container shrinks to the new default set within one period.
  std::string shrunk = Snapshot().default_cpus.String();
  double t = WaitCpus(shared.pod.uid, shared_id, shrunk);
  EXPECT_GE(t, 0) << "shared container did not shrink to " << shrunk;
  std::printf("[measure] shrink to %s after %.3fs (period %.3fs)\n", shrunk.c_str(), t,
              std::chrono::duration<double>(kPeriod).count());

  // Drift by hand is corrected.
  {
    std::ofstream f(fmt::format("{}/cpuset/{}/pod{}/{}/cpuset.cpus", cgroup::kCgroupRoot, root_,
                                shared.pod.uid, shared_id));
    f << want;
  }
  ASSERT_EQ(Cpus(shared.pod.uid, shared_id).first, want);
  t = WaitCpus(shared.pod.uid, shared_id, shrunk);
  EXPECT_GE(t, 0) << "hand-made drift not corrected";
  std::printf("[measure] drift corrected after %.3fs\n", t);

  // The exclusive pod leaves: the shared container widens again.
  RemovePod(excl.pod.namespace_name, excl.pod.name);
  EXPECT_FALSE(hooks_->IsRunning(excl.pod.uid));
  EXPECT_EQ(ContainerId(excl.pod.uid, "main"), "");
  t = WaitCpus(shared.pod.uid, shared_id, Snapshot().default_cpus.String());
  EXPECT_GE(t, 0) << "shared container did not widen";
  std::printf("[measure] widen after %.3fs\n", t);
}

TEST_F(CriRuntimeE2e, InitContainersSidecarsAndPodSharedPool) {
  serve::AdmittedPod p = AdmitFile("init-and-sidecar.yaml");
  ASSERT_TRUE(hooks_->IsRunning(p.pod.uid));
  for (const char* name : {"init-1", "init-2"}) {
    std::string id = ContainerId(p.pod.uid, name);
    ASSERT_FALSE(id.empty()) << name;
    auto st = cri_->ContainerStatus(id, false);
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(st->status().state(), criv1::CONTAINER_EXITED) << name;
    EXPECT_EQ(st->status().exit_code(), 0) << name;
  }
  for (const char* name : {"sidecar", "app"}) {
    auto st = cri_->ContainerStatus(ContainerId(p.pod.uid, name), false);
    ASSERT_TRUE(st.ok()) << name;
    EXPECT_EQ(st->status().state(), criv1::CONTAINER_RUNNING) << name;
  }
  RemovePod(p.pod.namespace_name, p.pod.name);

  serve::AdmittedPod seed = AdmitFile("pod-level-resource-demo-2cpu.yaml");
  ASSERT_TRUE(hooks_->IsRunning(seed.pod.uid));
  // Pod-shared containers: no container quota; the pod cgroup has the pod's limit (1 CPU).
  EXPECT_EQ(CfsQuota(seed.pod.uid, ""), "100000");
  for (const ContainerAllocation& a : seed.allocation.containers) {
    EXPECT_EQ(a.assignment, "pod_shared") << a.name;
    EXPECT_EQ(CfsQuota(seed.pod.uid, ContainerId(seed.pod.uid, a.name)), "-1") << a.name;
    std::string id = ContainerId(seed.pod.uid, a.name);
    std::string want = a.cpus.String();
    EXPECT_EQ(Cpus(seed.pod.uid, id), std::make_pair(want, want)) << a.name;
  }
}

TEST_F(CriRuntimeE2e, MissingImageFailsOnlyThatPod) {
  serve::AdmittedPod ok = AdmitFile("be-shared.yaml");
  serve::AdmittedPod bad = AdmitFile("missing-image.yaml");
  EXPECT_TRUE(hooks_->IsRunning(ok.pod.uid));
  EXPECT_FALSE(hooks_->IsRunning(bad.pod.uid));
  criv1::PodSandboxFilter f;
  (*f.mutable_label_selector())["io.kubernetes.pod.uid"] = bad.pod.uid;
  auto list = cri_->ListPodSandbox(f);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->items_size(), 0) << "no sandbox for a pod whose image is missing";
}

TEST_F(CriRuntimeE2e, RestartAdoptsWithoutDuplicates) {
  serve::AdmittedPod p = AdmitFile("init-and-sidecar.yaml");
  std::string app = ContainerId(p.pod.uid, "app");
  // A new CriRuntime (a restarted podtopo) on the same node state.
  hooks_->Shutdown();
  hooks_.reset();
  StartHooks();
  EXPECT_TRUE(hooks_->IsRunning(p.pod.uid));
  criv1::PodSandboxFilter f;
  (*f.mutable_label_selector())["io.kubernetes.pod.uid"] = p.pod.uid;
  auto list = cri_->ListPodSandbox(f);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->items_size(), 1);
  EXPECT_EQ(ContainerId(p.pod.uid, "app"), app) << "the app container was not adopted";
  // A hand-removed container is stale state: it is cleared and started again.
  ASSERT_TRUE(cri_->StopContainer(app, 0).ok());
  ASSERT_TRUE(cri_->RemoveContainer(app).ok());
  auto start = Clock::now();
  std::string again;
  while (Clock::now() - start < 4 * kPeriod && again.empty()) {
    std::this_thread::sleep_for(50ms);
    again = ContainerId(p.pod.uid, "app");
  }
  EXPECT_FALSE(again.empty());
  EXPECT_NE(again, app);
}

}  // namespace
}  // namespace podtopo
