#include "runtime/pod_spec.h"

#include "gtest/gtest.h"

namespace podtopo::runtime {
namespace {

Quantity Q(const char* text) { return Quantity::Parse(text).value(); }

ContainerAllocation Alloc(const std::string& name, const std::string& assignment,
                          const char* cpus) {
  ContainerAllocation a;
  a.name = name;
  a.assignment = assignment;
  a.cpus = CpuSet::Parse(cpus).value();
  return a;
}

TEST(IsolationLevel, FromAssignment) {
  EXPECT_EQ(IsolationOf("node_exclusive"), IsolationLevel::kContainer);
  EXPECT_EQ(IsolationOf("pod_exclusive"), IsolationLevel::kContainer);
  EXPECT_EQ(IsolationOf("pod_shared"), IsolationLevel::kPod);
  EXPECT_EQ(IsolationOf("node_shared"), IsolationLevel::kHost);
  EXPECT_STREQ(IsolationLevelName(IsolationLevel::kPod), "pod");
}

TEST(CpuConversions, KubeletHelpers) {
  EXPECT_EQ(MilliCpuToShares(0), 2);
  EXPECT_EQ(MilliCpuToShares(1), 2);
  EXPECT_EQ(MilliCpuToShares(1000), 1024);
  EXPECT_EQ(MilliCpuToShares(250), 256);
  EXPECT_EQ(MilliCpuToQuota(0, 100000), 0);
  EXPECT_EQ(MilliCpuToQuota(1, 100000), 1000);  // the kernel's minimum
  EXPECT_EQ(MilliCpuToQuota(1500, 100000), 150000);
}

// KEP-5526 unit test: one exclusive and one pod-shared container -> PodHasExclusiveCPUs false.
TEST(PodHasExclusiveCpus, PodSharedContainerKeepsPodQuota) {
  PodAllocation a;
  a.containers = {Alloc("excl", "pod_exclusive", "1"), Alloc("shared", "pod_shared", "2-3")};
  EXPECT_FALSE(PodHasExclusiveCpus(a));
  a.containers = {Alloc("excl", "node_exclusive", "1")};
  EXPECT_TRUE(PodHasExclusiveCpus(a));
  a.containers = {Alloc("c", "node_shared", "0-3")};
  EXPECT_FALSE(PodHasExclusiveCpus(a));
}

TEST(PodCfsQuota, PodLevelLimitUnlessExclusive) {
  Pod pod;
  pod.resources = ResourceRequirements{{{"cpu", Q("2")}}, {{"cpu", Q("2")}}};
  pod.containers.push_back(Container{.name = "a"});
  pod.containers.push_back(Container{.name = "b"});
  PodAllocation a;
  a.containers = {Alloc("a", "pod_exclusive", "1"), Alloc("b", "pod_shared", "2")};
  EXPECT_EQ(PodCfsQuota(pod, a), 200000);
  a.containers = {Alloc("a", "pod_exclusive", "1"), Alloc("b", "pod_exclusive", "2")};
  EXPECT_EQ(PodCfsQuota(pod, a), -1);
  // No pod-level limit, a container without a limit: no pod quota.
  pod.resources.reset();
  a.containers = {Alloc("a", "node_shared", "0-3"), Alloc("b", "node_shared", "0-3")};
  EXPECT_EQ(PodCfsQuota(pod, a), -1);
  // Every container limited: the sum.
  pod.containers[0].resources.limits["cpu"] = Q("500m");
  pod.containers[1].resources.limits["cpu"] = Q("250m");
  EXPECT_EQ(PodCfsQuota(pod, a), 75000);
}

TEST(ContainerResources, ExclusiveHasNoQuota) {
  Container c{.name = "main"};
  c.resources.requests = {{"cpu", Q("1")}, {"memory", Q("1Gi")}};
  c.resources.limits = {{"cpu", Q("1")}, {"memory", Q("1Gi")}};
  ContainerAllocation a = Alloc("main", "node_exclusive", "1");
  a.memory.push_back(MemoryBlockView{"memory", 1 << 30, {0}});
  PodAllocation pa;
  auto r = ContainerResources(c, a, pa, a.cpus);
  EXPECT_EQ(r.cpuset_cpus(), "1");
  EXPECT_EQ(r.cpuset_mems(), "0");
  EXPECT_EQ(r.cpu_quota(), -1);
  EXPECT_EQ(r.cpu_period(), kCfsPeriodUs);
  EXPECT_EQ(r.cpu_shares(), 1024);
  EXPECT_EQ(r.memory_limit_in_bytes(), int64_t{1} << 30);
}

// DisableCPUQuotaWithExclusiveCPUs off (kuberuntime_container_linux.go: disableCPUQuota =
// gate && ContainerHasExclusiveCPUs; the pod container manager keeps enforceCPULimits): the
// exclusive container keeps the quota of its limit, and so does the pod cgroup. The gate is
// locked on in v1.37 (#139351), so a v1.37 configuration cannot turn it off (config_test
// locked_deprecated_gate); this is the code path a kubelet up to 1.36 takes with it off.
TEST(ContainerResources, DisableCpuQuotaGateOffKeepsTheQuotaOfExclusiveContainers) {
  Container c{.name = "main"};
  c.resources.requests = {{"cpu", Q("2")}, {"memory", Q("1Gi")}};
  c.resources.limits = {{"cpu", Q("2")}, {"memory", Q("1Gi")}};
  ContainerAllocation a = Alloc("main", "node_exclusive", "2-3");
  PodAllocation pa;
  pa.containers = {a};
  EXPECT_EQ(ContainerResources(c, a, pa, a.cpus, /*disable_quota_with_exclusive=*/true)
                .cpu_quota(),
            -1);
  EXPECT_EQ(ContainerResources(c, a, pa, a.cpus, /*disable_quota_with_exclusive=*/false)
                .cpu_quota(),
            200000);
  Pod pod;
  pod.containers = {c};
  EXPECT_EQ(PodCfsQuota(pod, pa, true), -1);
  EXPECT_EQ(PodCfsQuota(pod, pa, false), 200000);
}

TEST(ContainerResources, PodSharedWithoutLimitsHasNoContainerQuotaAndPodMems) {
  Container c{.name = "sidecar", .kind = ContainerKind::kSidecar};
  ContainerAllocation a = Alloc("sidecar", "pod_shared", "2-3");
  PodAllocation pa;
  pa.memory.push_back(MemoryBlockView{"memory", 1 << 30, {1}});
  auto r = ContainerResources(c, a, pa, a.cpus);
  EXPECT_EQ(r.cpuset_cpus(), "2-3");
  EXPECT_EQ(r.cpuset_mems(), "1");
  EXPECT_EQ(r.cpu_quota(), 0);
  EXPECT_EQ(r.cpu_shares(), 2);
}

TEST(ContainerResources, NodeSharedQuotaFromLimitAndDefaultSet) {
  Container c{.name = "web"};
  c.resources.limits = {{"cpu", Q("500m")}};
  ContainerAllocation a = Alloc("web", "node_shared", "0-1");
  PodAllocation pa;
  pa.memory.push_back(MemoryBlockView{"memory", 1 << 30, {1}});  // not for node-shared
  auto r = ContainerResources(c, a, pa, CpuSet::Parse("0").value());
  EXPECT_EQ(r.cpuset_cpus(), "0");
  EXPECT_EQ(r.cpuset_mems(), "");
  EXPECT_EQ(r.cpu_quota(), 50000);
  EXPECT_EQ(r.cpu_shares(), 512);  // request defaults to the limit
}

TEST(SandboxConfig, HostNetworkLabelsAndCgroupParent) {
  Pod pod;
  pod.name = "demo";
  pod.namespace_name = "ns";
  pod.uid = "u-1";
  pod.labels = {{"app", "x"}};
  auto s = SandboxConfig(pod, "/podtopo/podu-1", "/logs/ns_demo_u-1");
  EXPECT_EQ(s.metadata().uid(), "u-1");
  EXPECT_EQ(s.metadata().namespace_(), "ns");
  EXPECT_EQ(s.hostname(), "");  // host UTS with host network
  EXPECT_EQ(s.linux().cgroup_parent(), "/podtopo/podu-1");
  EXPECT_EQ(s.linux().security_context().namespace_options().network(), criv1::NODE);
  EXPECT_EQ(s.labels().at(kLabelPodUid), "u-1");
  EXPECT_EQ(s.labels().at(kLabelManaged), "true");
  EXPECT_EQ(s.labels().at("app"), "x");
  EXPECT_EQ(s.labels().at(kLabelInstance), "podtopo");
}

// The kubelet's newPodLabels / newPodAnnotations: the pod's labels and annotations go to the
// sandbox, where NRI plugins read them (podtopo nri: podtopo.io/pod-spec).
TEST(SandboxConfig, PodAnnotationsAndLabels) {
  Pod pod;
  pod.name = "demo";
  pod.uid = "u-1";
  pod.labels = {{"app", "x"}};
  pod.annotations = {{"podtopo.io/pod-spec", R"({"containers":[]})"}, {"note", "y"}};
  auto s = SandboxConfig(pod, "/podtopo/podu-1", "/logs/default_demo_u-1");
  EXPECT_EQ(s.annotations().size(), 2u);
  EXPECT_EQ(s.annotations().at("podtopo.io/pod-spec"), R"({"containers":[]})");
  EXPECT_EQ(s.annotations().at("note"), "y");
  EXPECT_EQ(s.labels().at("app"), "x");
}

TEST(ContainerConfig, LabelsCommandAndLogPath) {
  Pod pod;
  pod.name = "demo";
  pod.uid = "u-1";
  Container c{.name = "worker", .image = "docker.io/podtopo/busybox:e2e",
              .command = {"sh", "-c"}, .args = {"sleep 1"}};
  criv1::LinuxContainerResources r;
  r.set_cpuset_cpus("1");
  auto cc = ContainerConfig(pod, c, 2, r);
  EXPECT_EQ(cc.metadata().name(), "worker");
  EXPECT_EQ(cc.metadata().attempt(), 2u);
  EXPECT_EQ(cc.image().image(), "docker.io/podtopo/busybox:e2e");
  ASSERT_EQ(cc.command_size(), 2);
  EXPECT_EQ(cc.args(0), "sleep 1");
  EXPECT_EQ(cc.log_path(), "worker/2.log");
  EXPECT_EQ(cc.labels().at(kLabelContainerName), "worker");
  EXPECT_EQ(cc.labels().at(kLabelPodUid), "u-1");
  EXPECT_EQ(cc.linux().resources().cpuset_cpus(), "1");
}

}  // namespace
}  // namespace podtopo::runtime
