// `podtopo nri` on a real containerd 1.7 with NRI (run by tests/e2e/with_containerd.py --nri):
// pods are created through podtopo's CRI client as a kubelet with cpuManagerPolicy none creates
// them (CPU shares, CFS quota and memory limit; no cpuset), each carrying its spec in the
// podtopo.io/pod-spec annotation. Every container's cpuset.cpus / cpuset.mems in the cgroup must
// be what the admission engine of `podtopo admit` (Node) gives the same pods in the same order;
// init containers report theirs from /proc/self/status. The plugin and then containerd are
// restarted mid-run: no container loses its cpuset, no CPU is in two exclusive sets.
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "admission/node.h"
#include "api/pod_gates.h"
#include "api/pod_yaml.h"
#include "cgroup/cgroup.h"
#include "config/kubelet_config.h"
#include "cri/cri_client.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/pod_spec.h"
#include "testing/process.h"
#include "testing/testing.h"
#include "topology/node_source.h"
#include "yaml-cpp/yaml.h"

namespace podtopo {
namespace {

using namespace std::chrono_literals;
namespace criv1 = ::runtime::v1;
using Clock = std::chrono::steady_clock;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

nlohmann::json YamlToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = YamlToJson(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& e : n) a.push_back(YamlToJson(e));
      return a;
    }
    case YAML::NodeType::Scalar:
      return n.as<std::string>();
    default:
      return nullptr;
  }
}

int CountLines(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find(needle) != std::string::npos;
  return n;
}

// The CRI resources a kubelet with cpuManagerPolicy none (and no memory manager) gives a
// container: shares from the request, quota from the limit, the memory limit; no cpuset.
criv1::LinuxContainerResources KubeletNoneResources(const Container& c) {
  criv1::LinuxContainerResources r;
  auto milli = [&](const ResourceList& l) -> int64_t {
    auto it = l.find("cpu");
    return it == l.end() ? 0 : it->second.MilliValue();
  };
  int64_t req = milli(c.resources.requests), lim = milli(c.resources.limits);
  r.set_cpu_period(runtime::kCfsPeriodUs);
  r.set_cpu_shares(runtime::MilliCpuToShares(req > 0 ? req : lim));
  r.set_cpu_quota(lim > 0 ? runtime::MilliCpuToQuota(lim, runtime::kCfsPeriodUs) : 0);
  auto mem = c.resources.limits.find("memory");
  if (mem != c.resources.limits.end()) r.set_memory_limit_in_bytes(mem->second.Value());
  return r;
}

struct RunningPod {
  Pod pod;
  std::string sandbox_id;
  std::map<std::string, std::string> ids;        // container -> id
  std::map<std::string, std::string> init_seen;  // init container -> "cpus|mems" it printed
};

class NriE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = Env("PODTOPO_E2E_NRI_SOCKET");
    run_ = Env("PODTOPO_E2E_RUN");
    root_ = Env("PODTOPO_E2E_CGROUP_ROOT");
    if (socket_.empty() || run_.empty()) {
      GTEST_SKIP() << "PODTOPO_E2E_NRI_SOCKET / PODTOPO_E2E_RUN not set (run through "
                      "tests/e2e/with_containerd.py --bin-dir .../containerd-1.7/bin --nri)";
    }
    auto topo = LoadNode("local");
    ASSERT_TRUE(topo.ok()) << topo.status();
    if (topo->cpus.num_cpus != 2) GTEST_SKIP() << "the pods are sized for 2 CPUs (CPU 0 reserved)";
    auto oracle = Node::Create(*topo, config::SeedDefault(), {});
    ASSERT_TRUE(oracle.ok()) << oracle.status();
    oracle_ = std::move(*oracle);
    auto cri = cri::CriClient::Connect(Env("PODTOPO_E2E_CRI"), {});
    ASSERT_TRUE(cri.ok());
    cri_ = std::move(*cri);
    state_dir_ = run_ + "/nri-state";
    log_ = run_ + "/podtopo-nri.log";
    StartPlugin();
  }

  void TearDown() override {
    for (auto& [name, p] : pods_) {
      (void)cri_->StopPodSandbox(p.sandbox_id);
      (void)cri_->RemovePodSandbox(p.sandbox_id);
    }
    if (plugin_ > 0) StopPlugin();
    if (HasFailure() || !Env("PODTOPO_E2E_VERBOSE").empty()) std::cerr << testing::ReadFileOrEmpty(log_);
  }

  void StartPlugin() {
    int before = CountLines(log_, "synchronized:");
    plugin_ = testing::SpawnProcess({PODTOPO_BINARY, "nri", "--socket", socket_, "--node", "local",
                                     "--state-dir", state_dir_, "--log-level", "debug"},
                                    log_);
    WaitSynchronized(before);
  }
  void WaitSynchronized(int before) {
    auto deadline = Clock::now() + 20s;
    while (CountLines(log_, "synchronized:") <= before) {
      ASSERT_LT(Clock::now(), deadline) << "podtopo nri did not synchronize:\n"
                                        << testing::ReadFileOrEmpty(log_);
      std::this_thread::sleep_for(20ms);
    }
  }
  void StopPlugin() {
    ::kill(plugin_, SIGTERM);
    EXPECT_EQ(testing::WaitExit(plugin_), 0) << "SIGTERM stops podtopo nri cleanly";
    plugin_ = -1;
  }

  Pod Load(const std::string& path) {
    auto pods = LoadPods(path, {.gates = PodGatesFromConfig(config::SeedDefault())});
    EXPECT_TRUE(pods.ok()) << pods.status();
    return pods->at(0);
  }

  std::string Parent(const Pod& pod) const { return cgroup::PodCgroupParent(root_, pod.uid); }

  void WaitExited(const std::string& id) {
    auto deadline = Clock::now() + 20s;
    for (;;) {
      auto s = cri_->ContainerStatus(id, false);
      ASSERT_TRUE(s.ok()) << s.status();
      if (s->status().state() == criv1::CONTAINER_EXITED) return;
      ASSERT_LT(Clock::now(), deadline) << id << " did not exit";
      std::this_thread::sleep_for(20ms);
    }
  }

  // How the pod tells podtopo its model.
  enum Model { kSpecAnnotation, kRecovered, kRecoveredPodLevel };

  // Runs `path`'s pod as a kubelet would (sandbox, init containers to completion, sidecars,
  // apps), admitting it on the oracle too. kSpecAnnotation: the sandbox carries the pod's spec
  // in podtopo.io/pod-spec; kRecovered: the plugin recovers it from the CRI resources;
  // kRecoveredPodLevel: also the sandbox's resources (the pod-level values, as the kubelet's
  // calculateSandboxResources fills them) with podtopo.io/pod-level-resources: "true".
  void RunPod(const std::string& path, Model model = kSpecAnnotation) {
    Pod pod = Load(path);
    auto a = oracle_->Admit(pod);
    ASSERT_TRUE(a.ok() && a->admitted) << path << ": " << (a.ok() ? a->message : "");
    RunningPod rp{pod, "", {}, {}};
    YAML::Node doc = YAML::LoadFile(path);
    std::string logs = run_ + "/pod-logs/" + pod.uid;
    criv1::PodSandboxConfig sb = runtime::SandboxConfig(pod, Parent(pod), logs, root_);
    // Every NRI message about this pod is larger than one 4096-byte multiplexer frame.
    (*sb.mutable_annotations())["example.com/padding"] = std::string(20000, 'p');
    if (model == kSpecAnnotation) {
      (*sb.mutable_annotations())["podtopo.io/pod-spec"] = YamlToJson(doc["spec"]).dump();
    }
    if (model == kRecoveredPodLevel) {
      ASSERT_TRUE(pod.resources.has_value()) << path << " has no pod-level resources";
      Container whole;
      whole.resources = *pod.resources;
      *sb.mutable_linux()->mutable_resources() = KubeletNoneResources(whole);
      (*sb.mutable_annotations())["podtopo.io/pod-level-resources"] = "true";
    }
    auto id = cri_->RunPodSandbox(sb);
    ASSERT_TRUE(id.ok()) << id.status();
    rp.sandbox_id = *id;
    for (const Container* c : pod.InitAndAppContainers()) {
      criv1::ContainerConfig cc = runtime::ContainerConfig(pod, *c, 0, KubeletNoneResources(*c), root_);
      auto cid = cri_->CreateContainer(rp.sandbox_id, cc, sb);
      ASSERT_TRUE(cid.ok()) << c->name << ": " << cid.status();
      ASSERT_TRUE(cri_->StartContainer(*cid).ok());
      rp.ids[c->name] = *cid;
      if (c->kind == ContainerKind::kInit) {
        WaitExited(*cid);
        std::string out = testing::ReadFileOrEmpty(fmt::format("{}/{}/0.log", logs, c->name));
        auto field = [&](const std::string& key) {
          size_t at = out.find(key + ":");
          if (at == std::string::npos) return std::string("?");
          size_t b = out.find_first_not_of(" \t", at + key.size() + 1);
          return out.substr(b, out.find('\n', b) - b);
        };
        rp.init_seen[c->name] = field("Cpus_allowed_list") + "|" + field("Mems_allowed_list");
      }
    }
    pods_[pod.name] = std::move(rp);
  }

  void RemovePod(const std::string& name) {
    RunningPod& p = pods_.at(name);
    absl::Status stopped = cri_->StopPodSandbox(p.sandbox_id);
    for (int i = 0; i < 50 && !stopped.ok() && cri::IsRuntimeUnavailable(stopped); ++i) {
      std::this_thread::sleep_for(100ms);  // containerd just restarted
      stopped = cri_->StopPodSandbox(p.sandbox_id);
    }
    ASSERT_TRUE(stopped.ok()) << stopped;
    absl::Status removed = cri_->RemovePodSandbox(p.sandbox_id);
    ASSERT_TRUE(removed.ok()) << removed;
    ASSERT_TRUE(oracle_->Remove(p.pod.namespace_name, p.pod.name).ok());
    pods_.erase(name);
  }

  // Every running container's cgroup cpuset equals the oracle's; init containers printed
  // theirs; exclusive sets are disjoint. Waits up to 5 s for unsolicited updates to land.
  void CheckCpusets(const std::string& when) {
    auto deadline = Clock::now() + 5s;
    for (;;) {
      std::vector<std::string> diffs = Diffs();
      if (diffs.empty()) break;
      if (Clock::now() > deadline) {
        for (const std::string& d : diffs) ADD_FAILURE() << when << ": " << d;
        return;
      }
      std::this_thread::sleep_for(50ms);
    }
    std::map<int, std::string> owner;
    for (const PodAllocation& a : oracle_->AdmittedPods()) {
      for (const ContainerAllocation& ca : a.containers) {
        if (ca.assignment != "node_exclusive" && ca.assignment != "pod_exclusive") continue;
        if (ca.kind == ContainerKind::kInit) continue;  // ran and exited
        auto cpus = cgroup::ReadContainerCpusetCpus(cgroup::kCgroupRoot, Parent(pods_.at(a.name).pod),
                                                    pods_.at(a.name).ids.at(ca.name));
        ASSERT_TRUE(cpus.ok());
        for (int cpu : cpus->List()) {
          EXPECT_FALSE(owner.count(cpu)) << when << ": CPU " << cpu << " in " << owner[cpu]
                                         << " and " << a.name << "/" << ca.name;
          owner[cpu] = a.name + "/" + ca.name;
        }
      }
    }
  }

  std::vector<std::string> Diffs() {
    std::vector<std::string> out;
    for (const PodAllocation& a : oracle_->AdmittedPods()) {
      const RunningPod& rp = pods_.at(a.name);
      for (const ContainerAllocation& ca : a.containers) {
        std::string want_cpus =
            ca.assignment == "node_shared" ? oracle_->DefaultCpuSet().String() : ca.cpus.String();
        std::string want_mems = runtime::CpusetMems(ca, a);
        std::string got_cpus, got_mems;
        if (ca.kind == ContainerKind::kInit) {
          std::string seen = rp.init_seen.at(ca.name);
          got_cpus = seen.substr(0, seen.find('|'));
          got_mems = seen.substr(seen.find('|') + 1);
        } else {
          auto c = cgroup::ReadContainerCpusetCpus(cgroup::kCgroupRoot, Parent(rp.pod), rp.ids.at(ca.name));
          auto m = cgroup::ReadContainerCpusetMems(cgroup::kCgroupRoot, Parent(rp.pod), rp.ids.at(ca.name));
          got_cpus = c.ok() ? c->String() : std::string(c.status().message());
          got_mems = m.ok() ? m->String() : std::string(m.status().message());
        }
        if (got_cpus != want_cpus || (!want_mems.empty() && got_mems != want_mems)) {
          out.push_back(fmt::format("{}/{} ({}, {}): cpus {} mems {}, admit gives cpus {} mems {}",
                                    a.name, ca.name, ContainerKindName(ca.kind), ca.assignment,
                                    got_cpus, got_mems, want_cpus, want_mems.empty() ? "-" : want_mems));
        }
      }
    }
    return out;
  }

  void RestartContainerd() {
    pid_t harness = static_cast<pid_t>(std::atoi(Env("PODTOPO_E2E_HARNESS_PID").c_str()));
    ASSERT_GT(harness, 0);
    std::string count = run_ + "/restarts";
    std::string before = testing::ReadFileOrEmpty(count);
    int synced = CountLines(log_, "synchronized:");
    ASSERT_EQ(::kill(harness, SIGUSR1), 0);
    auto deadline = Clock::now() + 30s;
    while (testing::ReadFileOrEmpty(count) == before) {
      ASSERT_LT(Clock::now(), deadline) << "containerd was not restarted";
      std::this_thread::sleep_for(50ms);
    }
    WaitSynchronized(synced);  // the plugin reconnected by itself
  }

  std::string socket_, run_, root_, state_dir_, log_;
  pid_t plugin_ = -1;
  std::unique_ptr<Node> oracle_;
  std::unique_ptr<cri::CriClient> cri_;
  std::map<std::string, RunningPod> pods_;
};

TEST_F(NriE2e, CpusetsAreWhatAdmitGivesThroughRestarts) {
  const std::string e2e = PODTOPO_E2E_PODS_DIR, nri = PODTOPO_NRI_PODS_DIR;
  ASSERT_NO_FATAL_FAILURE(RunPod(nri + "/best-effort.yaml"));
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("best-effort pod alone"));
  ASSERT_NO_FATAL_FAILURE(RunPod(e2e + "/pod-level-resource-demo-2cpu.yaml"));
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("seed pod admitted"));

  ASSERT_NO_FATAL_FAILURE(StopPlugin());
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("plugin stopped"));
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("plugin restarted"));
  ASSERT_NO_FATAL_FAILURE(RestartContainerd());
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("containerd restarted"));
  EXPECT_EQ(testing::RunCommand(fmt::format("{} state check --kubelet-dir {} --node local",
                                            PODTOPO_BINARY, state_dir_)).exit_code, 0)
      << "podtopo state reads the plugin's checkpoints";
  auto shown = testing::RunCommand(fmt::format("{} state show --kubelet-dir {} --node local -o json",
                                               PODTOPO_BINARY, state_dir_));
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find(pods_.at("pod-level-resource-demo").pod.uid), std::string::npos)
      << "the seed pod's entries are in the plugin's cpu_manager_state:\n" << shown.out;

  ASSERT_NO_FATAL_FAILURE(RemovePod("pod-level-resource-demo"));
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("seed pod removed"));
  ASSERT_NO_FATAL_FAILURE(RunPod(e2e + "/pod-scope-mixed-2cpu.yaml"));
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("pod-scope-mixed admitted"));
  ASSERT_NO_FATAL_FAILURE(RemovePod("pod-scope-mixed"));
  ASSERT_NO_FATAL_FAILURE(RunPod(nri + "/init-sidecar-pod-level.yaml"));
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("init containers and sidecar"));
  ASSERT_NO_FATAL_FAILURE(RemovePod("init-sidecar-pod-level"));

  // Without the annotation: a Guaranteed container recovered from its shares, quota and memory
  // limit gets the exclusive CPU; the best-effort pod leaves it.
  ASSERT_NO_FATAL_FAILURE(RunPod(e2e + "/exclusive.yaml", kRecovered));
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("exclusive pod (recovered)"));
  ASSERT_NO_FATAL_FAILURE(StopPlugin());
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("exclusive pod, plugin restarted"));
  // A plugin that never saw these pods (its state dir lost) adopts them as they run.
  ASSERT_NO_FATAL_FAILURE(StopPlugin());
  ASSERT_EQ(testing::RunCommand("rm -rf " + state_dir_).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  EXPECT_NE(testing::ReadFileOrEmpty(log_).find("(0 kept, 2 adopted)"), std::string::npos)
      << testing::ReadFileOrEmpty(log_);
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("exclusive pod, adopted without state"));

  // A second one does not fit: CreateContainer fails with the kubelet's reason.
  Pod again = Load(e2e + "/exclusive.yaml");
  again.name = "exclusive-2";
  again.uid = "exclusive-2-uid";
  criv1::PodSandboxConfig sb = runtime::SandboxConfig(again, Parent(again), run_ + "/pod-logs/x", root_);
  auto sid = cri_->RunPodSandbox(sb);
  ASSERT_TRUE(sid.ok()) << sid.status();
  pods_["exclusive-2"] = RunningPod{again, *sid, {}, {}};
  auto cid = cri_->CreateContainer(
      *sid, runtime::ContainerConfig(again, again.containers[0], 0,
                                     KubeletNoneResources(again.containers[0]), root_), sb);
  ASSERT_FALSE(cid.ok()) << "a second exclusive CPU does not exist";
  EXPECT_NE(cid.status().message().find("pod default/exclusive-2 rejected: OutOfcpu"),
            std::string::npos) << cid.status();
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("after the rejection"));
  ASSERT_NO_FATAL_FAILURE(RemovePod("exclusive"));
  ASSERT_TRUE(cri_->StopPodSandbox(*sid).ok());
  ASSERT_TRUE(cri_->RemovePodSandbox(*sid).ok());
  pods_.erase("exclusive-2");

  // Without the annotation, an exited container followed by another is an init container.
  ASSERT_NO_FATAL_FAILURE(RunPod(nri + "/init-exclusive.yaml", kRecovered));
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("init container and app, recovered"));
  ASSERT_NO_FATAL_FAILURE(RemovePod("init-exclusive"));

  // The seed pod again, recovered: its containers have no resources; the pod-level ones come
  // from the sandbox's resources.
  ASSERT_NO_FATAL_FAILURE(RunPod(e2e + "/pod-level-resource-demo-2cpu.yaml", kRecoveredPodLevel));
  ASSERT_NO_FATAL_FAILURE(CheckCpusets("seed pod recovered with its pod-level resources"));
}

}  // namespace
}  // namespace podtopo
