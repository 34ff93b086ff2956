#include "podresources/report.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "podresources/test_util.h"

namespace podtopo::podresources {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testutil::Ids;

constexpr uint64_t kGi = 1ull << 30;

std::vector<std::string> Names(const v1::PodResources& pr) {
  std::vector<std::string> n;
  for (const auto& c : pr.containers()) n.push_back(c.name());
  return n;
}

const v1::ContainerResources& C(const v1::PodResources& pr, const std::string& name) {
  for (const auto& c : pr.containers()) {
    if (c.name() == name) return c;
  }
  ADD_FAILURE() << "no container " << name;
  return v1::ContainerResources::default_instance();
}

TEST(ReportTest, PodScopeMixedPodReportsBubbleAndExclusiveContainerOnly) {
  auto node = testutil::MakeNode(testutil::PodScope());
  auto ap = testutil::AdmitOrDie(*node, testutil::LoadOnePod(testutil::MixedPodPath()));
  v1::PodResources pr = BuildPodResources(ap, {.pod_level_gate = true}, {});
  EXPECT_EQ(pr.name(), "pod-scope-mixed");
  EXPECT_EQ(pr.namespace_(), "default");
  // Sidecars first (spec order), then app containers.
  EXPECT_THAT(Names(pr), ElementsAre("metrics-sidecar", "logging-sidecar", "main-app"));
  // The pod's 4-CPU bubble.
  ASSERT_EQ(pr.cpu_ids_size(), 4);
  std::set<int64_t> bubble(pr.cpu_ids().begin(), pr.cpu_ids().end());
  EXPECT_EQ(bubble.size(), 4u);
  std::vector<int> want = ap.allocation.cpus.List();
  EXPECT_EQ(Ids(pr.cpu_ids()), std::vector<int64_t>(want.begin(), want.end()));
  // main-app: its 2 exclusive CPUs, inside the bubble.
  const auto& main = C(pr, "main-app");
  ASSERT_EQ(main.cpu_ids_size(), 2);
  for (int64_t cpu : main.cpu_ids()) EXPECT_TRUE(bubble.contains(cpu)) << cpu;
  // Sidecars run in the pod shared pool: nothing at container level.
  EXPECT_THAT(Ids(C(pr, "metrics-sidecar").cpu_ids()), IsEmpty());
  EXPECT_THAT(Ids(C(pr, "logging-sidecar").cpu_ids()), IsEmpty());
  EXPECT_EQ(C(pr, "metrics-sidecar").memory_size(), 0);
  EXPECT_EQ(C(pr, "logging-sidecar").memory_size(), 0);
  // Pod memory: 4Gi of regular memory on one NUMA node; main-app 2Gi of it.
  ASSERT_EQ(pr.memory_size(), 1);
  EXPECT_EQ(pr.memory(0).memory_type(), "memory");
  EXPECT_EQ(pr.memory(0).size(), 4 * kGi);
  ASSERT_EQ(pr.memory(0).topology().nodes_size(), 1);
  ASSERT_EQ(main.memory_size(), 1);
  EXPECT_EQ(main.memory(0).size(), 2 * kGi);
  EXPECT_EQ(main.memory(0).topology().nodes(0).id(), pr.memory(0).topology().nodes(0).id());
}

TEST(ReportTest, GateOffInReportingLeavesPodLevelFieldsEmpty) {
  auto node = testutil::MakeNode(testutil::PodScope());
  auto ap = testutil::AdmitOrDie(*node, testutil::LoadOnePod(testutil::MixedPodPath()));
  ASSERT_FALSE(ap.allocation.cpus.IsEmpty());
  v1::PodResources pr = BuildPodResources(ap, {.pod_level_gate = false}, {});
  EXPECT_EQ(pr.cpu_ids_size(), 0);
  EXPECT_EQ(pr.memory_size(), 0);
  EXPECT_EQ(C(pr, "main-app").cpu_ids_size(), 2);
}

TEST(ReportTest, GateOffNodeGivesNoExclusiveResourcesToPodLevelPods) {
  auto node = testutil::MakeNode(testutil::GateOff());
  auto ap = testutil::AdmitOrDie(*node, testutil::LoadOnePod(testutil::MixedPodPath()));
  v1::PodResources pr = BuildPodResources(ap, {.pod_level_gate = false}, {});
  EXPECT_THAT(Names(pr), ElementsAre("metrics-sidecar", "logging-sidecar", "main-app"));
  EXPECT_EQ(pr.cpu_ids_size(), 0);
  EXPECT_EQ(pr.memory_size(), 0);
  for (const auto& c : pr.containers()) {
    EXPECT_EQ(c.cpu_ids_size(), 0) << c.name();
    EXPECT_EQ(c.memory_size(), 0) << c.name();
  }
}

TEST(ReportTest, ContainerScopeReportsNoPodLevelFields) {
  auto node = testutil::MakeNode(testutil::ContainerScope());
  auto ap = testutil::AdmitOrDie(*node, testutil::LoadOnePod(testutil::MixedPodPath()));
  v1::PodResources pr = BuildPodResources(ap, {.pod_level_gate = true}, {});
  EXPECT_EQ(pr.cpu_ids_size(), 0);
  EXPECT_EQ(pr.memory_size(), 0);
  EXPECT_EQ(C(pr, "metrics-sidecar").cpu_ids_size(), 0);
  EXPECT_EQ(C(pr, "logging-sidecar").cpu_ids_size(), 0);
  // Whatever the container got, only an exclusive allocation is reported.
  const ContainerAllocation* main = nullptr;
  for (const auto& c : ap.allocation.containers) {
    if (c.name == "main-app") main = &c;
  }
  ASSERT_NE(main, nullptr);
  bool exclusive = main->assignment == "node_exclusive" || main->assignment == "pod_exclusive";
  EXPECT_EQ(C(pr, "main-app").cpu_ids_size(), exclusive ? main->cpus.Size() : 0);
}

TEST(ReportTest, ContainerScopeGuaranteedPodReportsExclusiveCpusAndMemory) {
  auto node = testutil::MakeNode(testutil::ContainerScope());
  Pod pod = testutil::ParseOnePod(R"(
apiVersion: v1
kind: Pod
metadata: {name: g}
spec:
  containers:
  - name: a
    resources: {limits: {cpu: "2", memory: 1Gi}}
  - name: b
    resources: {limits: {cpu: 500m, memory: 1Gi}}
)");
  auto ap = testutil::AdmitOrDie(*node, pod);
  v1::PodResources pr = BuildPodResources(ap, {.pod_level_gate = true}, {});
  EXPECT_EQ(pr.cpu_ids_size(), 0);
  EXPECT_EQ(pr.memory_size(), 0);
  EXPECT_EQ(C(pr, "a").cpu_ids_size(), 2);
  // Fractional CPU: the node's shared pool, not reported.
  EXPECT_EQ(C(pr, "b").cpu_ids_size(), 0);
  // Both containers of a Guaranteed pod get memory blocks from the Memory Manager.
  ASSERT_EQ(C(pr, "a").memory_size(), 1);
  EXPECT_EQ(C(pr, "a").memory(0).size(), kGi);
  EXPECT_EQ(C(pr, "b").memory_size(), 1);
}

TEST(ReportTest, RegularInitContainersAreNotListed) {
  auto node = testutil::MakeNode(testutil::PodScope());
  Pod pod = testutil::ParseOnePod(R"(
apiVersion: v1
kind: Pod
metadata: {name: init}
spec:
  initContainers:
  - name: setup
  - name: side
    restartPolicy: Always
  containers:
  - name: app
)");
  auto ap = testutil::AdmitOrDie(*node, pod);
  v1::PodResources pr = BuildPodResources(ap, {.pod_level_gate = true}, {});
  EXPECT_THAT(Names(pr), ElementsAre("side", "app"));
  v1alpha1::PodResources old = BuildV1alpha1PodResources(ap);
  ASSERT_EQ(old.containers_size(), 2);
  EXPECT_EQ(old.containers(0).name(), "side");
  EXPECT_EQ(old.containers(1).name(), "app");
}

TEST(ReportTest, Compat136ReportsStateCpusetsAndNoPodLevelFields) {
  auto node = testutil::MakeNode(testutil::PodScope());
  auto ap = testutil::AdmitOrDie(*node, testutil::LoadOnePod(testutil::MixedPodPath()));
  v1::PodResources pr = BuildPodResources(ap, {.pod_level_gate = true, .compat = Compat::k1_36}, {});
  EXPECT_EQ(pr.cpu_ids_size(), 0);
  EXPECT_EQ(pr.memory_size(), 0);
  EXPECT_THAT(Names(pr), ElementsAre("metrics-sidecar", "logging-sidecar", "main-app"));
  // v1.36 reported the CPU Manager's entry of every container: the sidecars show the pod's
  // shared pool = bubble minus main-app's CPUs.
  CpuSet bubble = ap.allocation.cpus;
  CpuSet main(std::vector<int>(C(pr, "main-app").cpu_ids().begin(),
                               C(pr, "main-app").cpu_ids().end()));
  EXPECT_EQ(main.Size(), 2);
  CpuSet pool = bubble.Difference(main);
  for (const char* name : {"metrics-sidecar", "logging-sidecar"}) {
    CpuSet got(std::vector<int>(C(pr, name).cpu_ids().begin(), C(pr, name).cpu_ids().end()));
    EXPECT_EQ(got, pool) << name;
  }
}

TEST(ReportTest, DevicesCarryTheirNumaNode) {
  serve::AdmittedPod ap;
  ap.pod.name = "d";
  ap.pod.containers.push_back(Container{.name = "c"});
  ContainerAllocation ca;
  ca.name = "c";
  ca.assignment = "node_shared";
  ca.devices["example.com/gpu"] = {"gpu0", "gpu1"};
  ap.allocation.containers.push_back(ca);
  DeviceNuma numa{{"example.com/gpu/gpu0", 1}, {"example.com/gpu/gpu1", -1}};
  v1::PodResources pr = BuildPodResources(ap, {}, numa);
  ASSERT_EQ(pr.containers(0).devices_size(), 2);
  EXPECT_EQ(pr.containers(0).devices(0).resource_name(), "example.com/gpu");
  EXPECT_THAT(pr.containers(0).devices(0).device_ids(), ElementsAre("gpu0"));
  ASSERT_EQ(pr.containers(0).devices(0).topology().nodes_size(), 1);
  EXPECT_EQ(pr.containers(0).devices(0).topology().nodes(0).id(), 1);
  EXPECT_FALSE(pr.containers(0).devices(1).has_topology());
}

TEST(ReportTest, AllocatableIsCpusMinusReservedAndPerNumaMemory) {
  auto node = testutil::MakeNode(testutil::PodScope());
  AllocatableView view;
  view.cpus = node->AllocatableCpus();
  for (const auto& [numa, types] : node->MemoryTables()) {
    for (const auto& [type, t] : types) {
      if (t.allocatable > 0) view.memory.push_back({type, t.allocatable, {numa}});
    }
  }
  auto r = BuildAllocatable(view);
  CpuSet all = node->topology().cpus.AllCpus();
  CpuSet expected = all.Difference(node->ReservedCpus());
  ASSERT_FALSE(node->ReservedCpus().IsEmpty());
  EXPECT_EQ(CpuSet(std::vector<int>(r.cpu_ids().begin(), r.cpu_ids().end())), expected);
  EXPECT_EQ(r.memory_size(), static_cast<int>(view.memory.size()));
  EXPECT_GE(r.memory_size(), static_cast<int>(node->topology().numa_nodes.size()));
  for (const auto& m : r.memory()) EXPECT_EQ(m.topology().nodes_size(), 1);
}

TEST(ReportTest, AllocatableIsEmptyWithNonePolicies) {
  auto cfg = config::SeedDefault();
  cfg.cpu_manager_policy = "none";
  cfg.memory_manager_policy = "None";
  cfg.topology_manager_policy = "none";
  cfg.reserved_memory.clear();
  auto node = testutil::MakeNode(cfg);
  ASSERT_NE(node, nullptr);
  EXPECT_TRUE(node->AllocatableCpus().IsEmpty());
  EXPECT_TRUE(node->MemoryTables().empty());
}

TEST(ReportTest, ServedStateIndexesPodsByNamespaceAndName) {
  auto node = testutil::MakeNode(testutil::PodScope());
  serve::NodeSnapshot snap;
  snap.pods.push_back(testutil::AdmitOrDie(*node, testutil::LoadOnePod(testutil::MixedPodPath())));
  auto s = BuildServedState(snap, {.pod_level_gate = true}, {}, {});
  ASSERT_EQ(s->list.pod_resources_size(), 1);
  ASSERT_EQ(s->list_v1alpha1.pod_resources_size(), 1);
  ASSERT_TRUE(s->index.contains("default/pod-scope-mixed"));
  EXPECT_EQ(s->uids[0], snap.pods[0].pod.uid);
}

}  // namespace
}  // namespace podtopo::podresources
