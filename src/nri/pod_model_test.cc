#include "nri/pod_model.h"

#include "gtest/gtest.h"
#include "runtime/pod_spec.h"

namespace podtopo::nri {
namespace {

nriapi::LinuxResources Cri(int64_t shares, int64_t quota, int64_t memory) {
  nriapi::LinuxResources r;
  if (shares > 0) r.mutable_cpu()->mutable_shares()->set_value(shares);
  if (quota != 0) r.mutable_cpu()->mutable_quota()->set_value(quota);
  r.mutable_cpu()->mutable_period()->set_value(100000);
  if (memory > 0) r.mutable_memory()->mutable_limit()->set_value(memory);
  return r;
}

nriapi::PodSandbox Sandbox() {
  nriapi::PodSandbox s;
  s.set_id("sb1");
  s.set_name("web");
  s.set_namespace_("prod");
  s.set_uid("uid-1");
  return s;
}

// The kubelet's MilliCPUToShares / MilliCPUToQuota, inverted: every request from 3m to 64 CPUs
// and every limit from 10m comes back exactly.
TEST(ResourcesFromNri, CpuRequestAndLimitRoundTripThroughTheKubeletsConversions) {
  for (int64_t milli : {3, 10, 99, 100, 101, 250, 999, 1000, 1500, 2001, 4000, 64000}) {
    int64_t shares = runtime::MilliCpuToShares(milli);
    int64_t quota = runtime::MilliCpuToQuota(milli, 100000);
    nlohmann::json j = ResourcesFromNri(Cri(shares, quota, 0));
    EXPECT_EQ(j["requests"]["cpu"], std::to_string(milli) + "m") << milli;
    // The kubelet's minimum quota (1000 us) is a 10m limit: smaller limits read as 10m.
    EXPECT_EQ(j["limits"]["cpu"], std::to_string(std::max<int64_t>(milli, 10)) + "m") << milli;
  }
}

TEST(ResourcesFromNri, MinimumSharesAndNoQuotaMeanNoCpuRequestOrLimit) {
  nlohmann::json j = ResourcesFromNri(Cri(2, -1, 0));
  EXPECT_FALSE(j.contains("requests")) << j;
  EXPECT_FALSE(j.contains("limits")) << j;
}

TEST(ResourcesFromNri, MemoryRequestIsTakenAsTheLimit) {
  nlohmann::json j = ResourcesFromNri(Cri(1024, 100000, 1073741824));
  EXPECT_EQ(j["limits"]["memory"], "1073741824");
  EXPECT_EQ(j["requests"]["memory"], "1073741824");
}

TEST(ResourcesFromNri, HugepageLimitsBecomeHugepageResources) {
  nriapi::LinuxResources r = Cri(1024, 100000, 1 << 30);
  auto* h = r.add_hugepage_limits();
  h->set_page_size("2MB");
  h->set_limit(4 << 20);
  nlohmann::json j = ResourcesFromNri(r);
  EXPECT_EQ(j["limits"]["hugepages-2Mi"], std::to_string(4 << 20));
  EXPECT_EQ(j["requests"]["hugepages-2Mi"], std::to_string(4 << 20));
}

TEST(RecoveredPod, GuaranteedContainerAndNames) {
  auto pod = RecoveredPod(Sandbox(), {{"main", Cri(2048, 200000, 1 << 30), false}}, {});
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->Key(), "prod/web");
  EXPECT_EQ(pod->uid, "uid-1");
  ASSERT_EQ(pod->containers.size(), 1u);
  EXPECT_EQ(GetPodQos(*pod), QosClass::kGuaranteed);
  EXPECT_EQ(pod->containers[0].resources.requests.at("cpu").MilliValue(), 2000);
}

TEST(RecoveredPod, ContainersThatExitedBeforeALaterOneAreInitContainers) {
  auto pod = RecoveredPod(Sandbox(),
                          {{"setup", Cri(1024, 100000, 0), true},
                           {"agent", Cri(102, 0, 0), false},
                           {"migrate", Cri(1024, 100000, 0), true},
                           {"app", Cri(1024, 100000, 0), false}},
                          {});
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_EQ(pod->init_containers.size(), 3u);
  EXPECT_EQ(pod->init_containers[0].name, "setup");
  EXPECT_EQ(pod->init_containers[1].name, "agent");  // still running: cannot be told from a sidecar
  EXPECT_EQ(pod->init_containers[1].kind, ContainerKind::kInit);
  ASSERT_EQ(pod->containers.size(), 1u);
  EXPECT_EQ(pod->containers[0].name, "app");
}

TEST(RecoveredPod, PodLevelAnnotationTakesTheSandboxResourcesAsSpecResources) {
  nriapi::PodSandbox s = Sandbox();
  (*s.mutable_annotations())[kPodLevelAnnotation] = "true";
  *s.mutable_linux()->mutable_pod_resources() = Cri(2048, 200000, 2LL << 30);
  auto pod = RecoveredPod(s, {{"worker", Cri(2, 0, 0), false}, {"sidecar", Cri(2, 0, 0), false}}, {});
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_TRUE(pod->HasPodLevelResources());
  EXPECT_EQ(pod->resources->requests.at("cpu").MilliValue(), 2000);
  EXPECT_EQ(pod->resources->limits.at("memory").Value(), 2LL << 30);
  EXPECT_EQ(GetPodQos(*pod), QosClass::kGuaranteed);
}

TEST(RecoveredPod, PodLevelAnnotationNeedsSandboxResourcesAndABoolean) {
  nriapi::PodSandbox s = Sandbox();
  (*s.mutable_annotations())[kPodLevelAnnotation] = "true";
  auto none = RecoveredPod(s, {{"a", Cri(1024, 100000, 0), false}}, {});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no pod resources"), std::string::npos) << none.status();
  (*s.mutable_annotations())[kPodLevelAnnotation] = "yes";
  auto bad = RecoveredPod(s, {{"a", Cri(1024, 100000, 0), false}}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("expected \"true\" or \"false\""), std::string::npos)
      << bad.status();
}

TEST(RecoveredPod, AllExitedLeavesTheLastAsTheApp) {
  auto pod = RecoveredPod(Sandbox(), {{"a", Cri(1024, 100000, 0), true}, {"b", Cri(1024, 100000, 0), true}}, {});
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_EQ(pod->containers.size(), 1u);
  EXPECT_EQ(pod->containers[0].name, "b");
}

TEST(PodFromAnnotation, AbsentIsNullopt) {
  auto pod = PodFromAnnotation(Sandbox(), {});
  ASSERT_TRUE(pod.ok());
  EXPECT_FALSE(pod->has_value());
}

TEST(PodFromAnnotation, SpecWithSidecarsAndPodLevelResources) {
  nriapi::PodSandbox s = Sandbox();
  (*s.mutable_annotations())[kPodSpecAnnotation] = R"({
    "resources": {"requests": {"cpu": "4", "memory": "4Gi"}, "limits": {"cpu": "4", "memory": "4Gi"}},
    "initContainers": [{"name": "log", "restartPolicy": "Always"}],
    "containers": [{"name": "main", "resources": {"requests": {"cpu": "2", "memory": "2Gi"},
                                                  "limits": {"cpu": "2", "memory": "2Gi"}}}]})";
  auto pod = PodFromAnnotation(s, {});
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_TRUE(pod->has_value());
  EXPECT_TRUE((*pod)->HasPodLevelResources());
  ASSERT_EQ((*pod)->init_containers.size(), 1u);
  EXPECT_EQ((*pod)->init_containers[0].kind, ContainerKind::kSidecar);
  EXPECT_EQ((*pod)->Key(), "prod/web");
}

TEST(PodFromAnnotation, BadJsonNamesThePodAndTheAnnotation) {
  nriapi::PodSandbox s = Sandbox();
  (*s.mutable_annotations())[kPodSpecAnnotation] = "{containers: nope";
  auto pod = PodFromAnnotation(s, {});
  ASSERT_FALSE(pod.ok());
  EXPECT_NE(pod.status().message().find("pod prod/web annotation podtopo.io/pod-spec"),
            std::string::npos) << pod.status();
}

TEST(PodFromAnnotation, BadQuantityIsReportedByTheLoaderWithTheSource) {
  nriapi::PodSandbox s = Sandbox();
  (*s.mutable_annotations())[kPodSpecAnnotation] =
      R"({"containers": [{"name": "a", "resources": {"limits": {"cpu": "lots"}}}]})";
  auto pod = PodFromAnnotation(s, {});
  ASSERT_FALSE(pod.ok());
  EXPECT_NE(pod.status().message().find("podtopo.io/pod-spec"), std::string::npos) << pod.status();
  EXPECT_NE(pod.status().message().find("lots"), std::string::npos) << pod.status();
}

}  // namespace
}  // namespace podtopo::nri
