// Plugin against NRI requests built as containerd 1.7 sends them, checked against the same
// admission (Node) `podtopo admit` runs for the same pods.
#include "nri/plugin.h"

#include <filesystem>

#include "api/pod_yaml.h"
#include "gtest/gtest.h"
#include "testing/property.h"
#include "runtime/pod_spec.h"
#include "testing/testing.h"
#include "topology/node_source.h"

namespace podtopo::nri {
namespace {

nriapi::LinuxResources Cri(int64_t milli_request, int64_t milli_limit, int64_t memory) {
  nriapi::LinuxResources r;
  r.mutable_cpu()->mutable_shares()->set_value(runtime::MilliCpuToShares(milli_request));
  if (milli_limit > 0) {
    r.mutable_cpu()->mutable_quota()->set_value(runtime::MilliCpuToQuota(milli_limit, 100000));
  }
  r.mutable_cpu()->mutable_period()->set_value(100000);
  if (memory > 0) r.mutable_memory()->mutable_limit()->set_value(memory);
  return r;
}

nriapi::PodSandbox Sandbox(const std::string& name, const std::string& annotation = "") {
  nriapi::PodSandbox s;
  s.set_id("sb-" + name);
  s.set_name(name);
  s.set_namespace_("default");
  s.set_uid("uid-" + name);
  if (!annotation.empty()) (*s.mutable_annotations())[kPodSpecAnnotation] = annotation;
  return s;
}

nriapi::CreateContainerRequest Create(const nriapi::PodSandbox& pod, const std::string& name,
                                      const nriapi::LinuxResources& r) {
  nriapi::CreateContainerRequest req;
  *req.mutable_pod() = pod;
  req.mutable_container()->set_id(pod.name() + "-" + name);
  req.mutable_container()->set_pod_sandbox_id(pod.id());
  req.mutable_container()->set_name(name);
  *req.mutable_container()->mutable_linux()->mutable_resources() = r;
  return req;
}

class PluginTest : public ::testing::Test {
 protected:
  void SetUp() override { plugin_ = Make(""); }
  std::unique_ptr<Plugin> Make(const std::string& state_dir) {
    auto node = LoadNode("preset:demo");
    EXPECT_TRUE(node.ok());
    auto p = Plugin::Create(*node, config::SeedDefault(), {.state_dir = state_dir});
    EXPECT_TRUE(p.ok()) << p.status();
    return std::move(*p);
  }
  // What `podtopo admit` gives the pod of `yaml` on a fresh node.
  PodAllocation Oracle(const std::string& yaml, std::vector<std::string> before = {}) {
    auto node = Node::Create(LoadNode("preset:demo").value(), config::SeedDefault(), {});
    EXPECT_TRUE(node.ok());
    for (const std::string& y : before) (void)(*node)->Admit(ParsePods(y, "before").value()[0]);
    auto pods = ParsePods(yaml, "oracle");
    EXPECT_TRUE(pods.ok()) << pods.status();
    auto a = (*node)->Admit(pods->at(0));
    EXPECT_TRUE(a.ok());
    return *a;
  }
  static std::string Cpus(const nriapi::CreateContainerResponse& r) {
    return r.adjust().linux().resources().cpu().cpus();
  }
  static std::string Mems(const nriapi::CreateContainerResponse& r) {
    return r.adjust().linux().resources().cpu().mems();
  }
  std::unique_ptr<Plugin> plugin_;
};

constexpr char kGuaranteed2[] = R"(
apiVersion: v1
kind: Pod
metadata: {name: g2, uid: uid-g2}
spec:
  containers:
  - name: main
    image: nri
    resources:
      requests: {cpu: "2", memory: "1073741824"}
      limits: {cpu: "2", memory: "1073741824"}
)";

TEST_F(PluginTest, ConfigureSubscribesToPodAndContainerEvents) {
  nriapi::ConfigureResponse r = plugin_->Configure({});
  EXPECT_EQ(r.events(), SubscribedEvents());
  for (int e : {1, 2, 3, 4, 8, 10, 11}) EXPECT_TRUE(r.events() & (1 << (e - 1))) << e;
  EXPECT_FALSE(r.events() & (1 << (5 - 1))) << "PostCreateContainer is not needed";
}

TEST_F(PluginTest, RecoveredGuaranteedContainerGetsWhatAdmitGives) {
  auto r = plugin_->CreateContainer(Create(Sandbox("g2"), "main", Cri(2000, 2000, 1 << 30)));
  ASSERT_TRUE(r.ok()) << r.status();
  PodAllocation want = Oracle(kGuaranteed2);
  ASSERT_TRUE(want.admitted);
  EXPECT_EQ(Cpus(*r), want.containers[0].cpus.String());
  EXPECT_EQ(Mems(*r), runtime::CpusetMems(want.containers[0], want));
  EXPECT_EQ(CpuSet::Parse(Cpus(*r))->Size(), 2);
}

TEST_F(PluginTest, AnnotatedSeedPodGetsTheBubbleAndPoolsOfAdmit) {
  auto text = testing::ReadFileOrEmpty(testing::SourceDir() + "/docs/examples/pod-level-resource-demo.yaml");
  ASSERT_FALSE(text.empty());
  Pod seed = ParsePods(text, "seed").value()[0];
  // The spec as a webhook would put it into the annotation.
  nlohmann::json spec = {{"resources", {{"requests", {{"cpu", "2"}, {"memory", "2Gi"}}},
                                        {"limits", {{"cpu", "2"}, {"memory", "2Gi"}}}}}};
  spec["containers"] = nlohmann::json::array();
  for (const Container& c : seed.containers) spec["containers"].push_back({{"name", c.name}});
  nriapi::PodSandbox sb = Sandbox(seed.name, spec.dump());
  nriapi::StateChangeEvent run;
  run.set_event(nriapi::RUN_POD_SANDBOX);
  *run.mutable_pod() = sb;
  plugin_->StateChange(run);
  std::string oracle_yaml = text;
  PodAllocation want = Oracle(oracle_yaml);
  ASSERT_TRUE(want.admitted) << want.message;
  for (const ContainerAllocation& ca : want.containers) {
    auto r = plugin_->CreateContainer(Create(sb, ca.name, Cri(0, 0, 0)));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(Cpus(*r), ca.cpus.String()) << ca.name;
    EXPECT_EQ(Mems(*r), runtime::CpusetMems(ca, want)) << ca.name;
  }
}

TEST_F(PluginTest, SharedContainersFollowTheDefaultSetAsExclusiveCpusAreTaken) {
  nriapi::PodSandbox be = Sandbox("be");
  auto first = plugin_->CreateContainer(Create(be, "shell", Cri(0, 0, 0)));
  ASSERT_TRUE(first.ok()) << first.status();
  std::string all = plugin_->node().DefaultCpuSet().String();
  EXPECT_EQ(Cpus(*first), all);
  auto second = plugin_->CreateContainer(Create(Sandbox("g2"), "main", Cri(2000, 2000, 1 << 30)));
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->update_size(), 1) << "the best-effort container moves off the new exclusive CPUs";
  EXPECT_EQ(second->update(0).container_id(), "be-shell");
  std::string shrunk = second->update(0).linux().resources().cpu().cpus();
  EXPECT_EQ(shrunk, plugin_->node().DefaultCpuSet().String());
  EXPECT_EQ(CpuSet::Parse(all)->Difference(*CpuSet::Parse(shrunk)).String(), Cpus(*second));

  // The Guaranteed pod goes away: its CPUs come back to the shared container, unsolicited.
  nriapi::StateChangeEvent stop;
  stop.set_event(nriapi::STOP_POD_SANDBOX);
  *stop.mutable_pod() = Sandbox("g2");
  plugin_->StateChange(stop);
  auto updates = plugin_->TakeUnsolicitedUpdates();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].container_id(), "be-shell");
  EXPECT_EQ(updates[0].linux().resources().cpu().cpus(), all);
  EXPECT_TRUE(plugin_->TakeUnsolicitedUpdates().empty());
}

TEST_F(PluginTest, RejectionFailsCreateContainerWithTheKubeletsReason) {
  // 20 CPUs do not fit one NUMA node of the demo node (16): single-numa-node rejects.
  auto r = plugin_->CreateContainer(Create(Sandbox("big"), "main", Cri(20000, 20000, 1 << 30)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("pod default/big rejected: TopologyAffinityError"),
            std::string::npos) << r.status();
  EXPECT_TRUE(plugin_->node().AdmittedPods().empty()) << "a rejected pod leaves nothing behind";
}

TEST_F(PluginTest, RecoveredModelGrowsAndARejectedGrowthKeepsThePreviousAdmission) {
  nriapi::PodSandbox sb = Sandbox("grow");
  auto a = plugin_->CreateContainer(Create(sb, "one", Cri(2000, 2000, 1 << 30)));
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = plugin_->CreateContainer(Create(sb, "two", Cri(2000, 2000, 1 << 30)));
  ASSERT_TRUE(b.ok()) << b.status();
  auto held = plugin_->node().FindPod("default", "grow");
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->containers.size(), 2u);
  auto c = plugin_->CreateContainer(Create(sb, "three", Cri(15000, 15000, 1 << 30)));
  ASSERT_FALSE(c.ok());
  held = plugin_->node().FindPod("default", "grow");
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->containers.size(), 2u) << "the two-container admission is restored";
}

TEST_F(PluginTest, StateDirIsKeptInTheKubeletsFormatsAndSynchronizeAdoptsAfterRestart) {
  std::string dir = testing::MakeTempDir("nri-plugin");
  auto p1 = Make(dir);
  nriapi::PodSandbox g = Sandbox("g2");
  auto r = p1->CreateContainer(Create(g, "main", Cri(2000, 2000, 1 << 30)));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(std::filesystem::exists(dir + "/cpu_manager_state"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/memory_manager_state"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/podtopo_pods.json"));
  p1.reset();

  // A restarted plugin: the pod still runs, its container lost its cpuset meanwhile; a pod the
  // state never saw runs too; a pod the state holds is gone.
  auto p2 = Make(dir);
  nriapi::SynchronizeRequest sync;
  *sync.add_pods() = g;
  nriapi::Container* c = sync.add_containers();
  c->set_id("g2-main");
  c->set_pod_sandbox_id(g.id());
  c->set_name("main");
  c->set_state(nriapi::CONTAINER_RUNNING);
  *c->mutable_linux()->mutable_resources() = Cri(2000, 2000, 1 << 30);
  c->mutable_linux()->mutable_resources()->mutable_cpu()->set_cpus("0-63");
  nriapi::PodSandbox late = Sandbox("late");
  *sync.add_pods() = late;
  nriapi::Container* lc = sync.add_containers();
  lc->set_id("late-main");
  lc->set_pod_sandbox_id(late.id());
  lc->set_name("main");
  lc->set_state(nriapi::CONTAINER_RUNNING);
  *lc->mutable_linux()->mutable_resources() = Cri(4000, 4000, 1 << 30);
  lc->mutable_linux()->mutable_resources()->mutable_cpu()->set_cpus("0-63");
  nriapi::SynchronizeResponse resp = p2->Synchronize(sync);
  std::map<std::string, std::string> got;
  for (const auto& u : resp.update()) got[u.container_id()] = u.linux().resources().cpu().cpus();
  EXPECT_EQ(got["g2-main"], Cpus(*r)) << "the kept pod gets its CPUs back";
  ASSERT_TRUE(got.count("late-main"));
  EXPECT_EQ(CpuSet::Parse(got["late-main"])->Size(), 4);
  EXPECT_TRUE(CpuSet::Parse(got["late-main"])->Intersection(*CpuSet::Parse(Cpus(*r))).IsEmpty());
  EXPECT_EQ(p2->node().AdmittedPods().size(), 2u);

  // Synchronize without the pods: both are released.
  auto p3 = Make(dir);
  p3->Synchronize({});
  EXPECT_TRUE(p3->node().AdmittedPods().empty());
}

TEST_F(PluginTest, UpdateContainerKeepsPodtopoCpuset) {
  auto r = plugin_->CreateContainer(Create(Sandbox("g2"), "main", Cri(2000, 2000, 1 << 30)));
  ASSERT_TRUE(r.ok());
  nriapi::UpdateContainerRequest up;
  *up.mutable_pod() = Sandbox("g2");
  up.mutable_container()->set_id("g2-main");
  *up.mutable_linux_resources() = Cri(2000, 2000, 1 << 30);
  up.mutable_linux_resources()->mutable_cpu()->set_cpus("0-63");
  nriapi::UpdateContainerResponse u = plugin_->UpdateContainer(up);
  ASSERT_EQ(u.update_size(), 1);
  EXPECT_EQ(u.update(0).linux().resources().cpu().cpus(), Cpus(*r));
  EXPECT_EQ(u.update(0).linux().resources().memory().limit().value(), 1 << 30);
}

TEST_F(PluginTest, HandleReportsUnknownMethodsAndBadPayloads) {
  auto u = plugin_->Handle("Frobnicate", "");
  EXPECT_EQ(u.status().code(), absl::StatusCode::kUnimplemented);
  auto b = plugin_->Handle("CreateContainer", "\xff\xff");
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(b.status().message().find("CreateContainerRequest"), std::string::npos) << b.status();
  auto c = plugin_->Handle("Configure", nriapi::ConfigureRequest().SerializeAsString());
  ASSERT_TRUE(c.ok());
  nriapi::ConfigureResponse cr;
  ASSERT_TRUE(cr.ParseFromString(*c));
  EXPECT_EQ(cr.events(), SubscribedEvents());
}

// Whatever bytes arrive for whatever method, Handle answers or refuses; it never crashes, and
// the node's state stays consistent (every admitted pod is found again).
PODTOPO_PROPERTY(PluginProperty, GarbageRequestsNeverCrash, (std::vector<std::string> payloads)) {
  auto node = LoadNode("preset:demo");
  RC_ASSERT(node.ok());
  auto p = Plugin::Create(*node, config::SeedDefault(), {});
  RC_ASSERT(p.ok());
  const char* methods[] = {"Configure", "Synchronize", "CreateContainer", "UpdateContainer",
                           "StopContainer", "StateChange", "Shutdown", "Nope"};
  for (size_t i = 0; i < payloads.size(); ++i) {
    (void)(*p)->Handle(methods[i % 8], payloads[i]);
  }
  for (const PodAllocation& a : (*p)->node().AdmittedPods()) {
    RC_ASSERT((*p)->node().FindPod(a.namespace_name, a.name) != nullptr);
  }
}

// Well-formed CreateContainer requests with arbitrary CRI resources: admitted or refused with a
// message, never a crash.
PODTOPO_PROPERTY(PluginProperty, ArbitraryResourcesAdmitOrRefuse,
              (uint32_t shares, int32_t quota, uint32_t memory_mib, uint8_t containers)) {
  auto node = LoadNode("preset:demo");
  RC_ASSERT(node.ok());
  auto p = Plugin::Create(*node, config::SeedDefault(), {});
  RC_ASSERT(p.ok());
  nriapi::PodSandbox sb = Sandbox("fuzz");
  for (int i = 0; i < 1 + containers % 4; ++i) {
    nriapi::LinuxResources r;
    r.mutable_cpu()->mutable_shares()->set_value(shares);
    r.mutable_cpu()->mutable_quota()->set_value(quota);
    r.mutable_memory()->mutable_limit()->set_value(static_cast<int64_t>(memory_mib) << 20);
    auto out = (*p)->CreateContainer(Create(sb, "c" + std::to_string(i), r));
    if (!out.ok()) RC_ASSERT(!out.status().message().empty());
  }
}

}  // namespace
}  // namespace podtopo::nri
