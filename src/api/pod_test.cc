#include "api/pod.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

Quantity Q(const std::string& text) {
  absl::StatusOr<Quantity> q = Quantity::Parse(text);
  EXPECT_TRUE(q.ok()) << text << ": " << q.status();
  return q.ok() ? *q : Quantity();
}

// getResourceList(cpu, memory) of the Go tests: empty strings are left out.
ResourceList RL(const std::string& cpu, const std::string& memory) {
  ResourceList list;
  if (!cpu.empty()) list[kResourceCpu] = Q(cpu);
  if (!memory.empty()) list[kResourceMemory] = Q(memory);
  return list;
}

ResourceList With(ResourceList list, const std::string& name, const std::string& value) {
  list[name] = Q(value);
  return list;
}

Container C(const std::string& name, ResourceList requests, ResourceList limits,
            ContainerKind kind = ContainerKind::kApp) {
  Container c;
  c.name = name;
  c.kind = kind;
  c.resources.requests = std::move(requests);
  c.resources.limits = std::move(limits);
  return c;
}

Pod P(std::vector<Container> containers, std::vector<Container> init = {},
      std::optional<ResourceRequirements> pod_resources = std::nullopt) {
  Pod pod;
  pod.name = "p";
  pod.containers = std::move(containers);
  pod.init_containers = std::move(init);
  pod.resources = std::move(pod_resources);
  return pod;
}

ResourceRequirements RR(ResourceList requests, ResourceList limits) {
  return ResourceRequirements{std::move(requests), std::move(limits)};
}

// ---------------------------------------------------------------------------------------
// TestComputePodQOS of pkg/apis/core/v1/helper/qos/qos_test.go, every case, same names.

struct QosCase {
  std::string name;
  Pod pod;
  QosClass expected;
  bool pod_level_resources_enabled;
};

std::vector<QosCase> GoQosCases() {
  return {
      {"Single Guaranteed Container",
       P({C("guaranteed", RL("100m", "100Mi"), RL("100m", "100Mi"))}), QosClass::kGuaranteed,
       false},
      {"Two Guaranteed Containers",
       P({C("guaranteed", RL("100m", "100Mi"), RL("100m", "100Mi")),
          C("guaranteed", RL("100m", "100Mi"), RL("100m", "100Mi"))}),
       QosClass::kGuaranteed, false},
      {"Two BestEffort Containers",
       P({C("best-effort", RL("", ""), RL("", "")), C("best-effort", RL("", ""), RL("", ""))}),
       QosClass::kBestEffort, false},
      {"Single BestEffort Container", P({C("best-effort", RL("", ""), RL("", ""))}),
       QosClass::kBestEffort, false},
      {"BestEffort and Burstable Containers",
       P({C("best-effort", RL("", ""), RL("", "")), C("burstable", RL("1", ""), RL("2", ""))}),
       QosClass::kBurstable, false},
      {"BestEffort and Guaranteed Containers",
       P({C("best-effort", RL("", ""), RL("", "")),
          C("guaranteed", RL("10m", "100Mi"), RL("10m", "100Mi"))}),
       QosClass::kBurstable, false},
      {"Burstable CPU, Guaranteed Memory",
       P({C("burstable", RL("", "100Mi"), RL("", "100Mi"))}), QosClass::kBurstable, false},
      {"Burstable Without Limits", P({C("burstable", RL("100m", "100Mi"), RL("", ""))}),
       QosClass::kBurstable, false},
      {"Burstable and Guaranteed Containers",
       P({C("burstable", RL("1", "100Mi"), RL("2", "100Mi")),
          C("guaranteed", RL("100m", "100Mi"), RL("100m", "100Mi"))}),
       QosClass::kBurstable, false},
      {"Burstable Containers With Unbounded But Requests Match Limits",
       P({C("burstable", RL("100m", "100Mi"), RL("200m", "200Mi")),
          C("burstable-unbounded", RL("100m", "100Mi"), RL("", ""))}),
       QosClass::kBurstable, false},
      {"Burstable Container 1", P({C("burstable", RL("10m", "100Mi"), RL("100m", "200Mi"))}),
       QosClass::kBurstable, false},
      {"Burstable Container 2", P({C("burstable", RL("0", "0"), RL("100m", "200Mi"))}),
       QosClass::kBurstable, false},
      {"BestEffort Container With HugePages",
       P({C("best-effort", With(RL("0", "0"), "hugepages-2Mi", "1Gi"),
            With(RL("0", "0"), "hugepages-2Mi", "1Gi"))}),
       QosClass::kBestEffort, false},
      {"Init Container with BestEffort Main and Burstable Init",
       P({C("best-effort", RL("", ""), RL("", ""))},
         {C("burstable", RL("10m", "100Mi"), RL("100m", "200Mi"), ContainerKind::kInit)}),
       QosClass::kBurstable, false},
      {"Guaranteed Pod-Level Resources",
       P({C("best-effort", RL("", ""), RL("", ""))}, {},
         RR(RL("10m", "100Mi"), RL("10m", "100Mi"))),
       QosClass::kGuaranteed, true},
      {"Guaranteed Pod and Container-Level Resources",
       P({C("burstable", RL("3m", "10Mi"), RL("5m", "20Mi"))}, {},
         RR(RL("10m", "100Mi"), RL("10m", "100Mi"))),
       QosClass::kGuaranteed, true},
      {"Burstable Pod-Level Resources",
       P({C("best-effort", RL("", ""), RL("", ""))}, {}, RR(RL("10m", "10Mi"), RL("20m", "50Mi"))),
       QosClass::kBurstable, true},
      {"Burstable Pod and Container-Level Resources",
       P({C("burstable", RL("5m", "10Mi"), RL("5m", "10Mi"))}, {},
         RR(RL("10m", "10Mi"), RL("20m", "50Mi"))),
       QosClass::kBurstable, true},
      {"Burstable Pod and Container-Level Requests",
       P({C("burstable", RL("5m", "10Mi"), RL("", ""))}, {}, RR(RL("10m", "10Mi"), RL("", ""))),
       QosClass::kBurstable, true},
      {"Burstable Pod and Container-Level Resources 2",
       P({C("burstable", RL("5m", "10Mi"), RL("", "")),
          C("guaranteed", RL("5m", "10Mi"), RL("5m", "10Mi"))},
         {}, RR(RL("10m", "10Mi"), RL("5m", ""))),
       QosClass::kBurstable, true},
  };
}

class GoQosTableTest : public ::testing::TestWithParam<size_t> {};

TEST_P(GoQosTableTest, MatchesComputePodQOS) {
  const QosCase c = GoQosCases()[GetParam()];
  EXPECT_EQ(QosClassName(GetPodQos(c.pod, {.pod_level_resources = c.pod_level_resources_enabled})),
            std::string(QosClassName(c.expected)))
      << c.name;
}

INSTANTIATE_TEST_SUITE_P(QosTest, GoQosTableTest,
                         ::testing::Range<size_t>(0, GoQosCases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return testing::TestName(GoQosCases()[info.param].name, info.param);
                         });

// ---------------------------------------------------------------------------------------
// The pods of the Memory Manager vectors (../shared/vectors/memory_cases.json) carry the QoS
// GetPodQOS gives them.

struct VectorPod {
  std::string name;
  Pod pod;
  std::string qos;
};

ResourceList ListFromJson(const nlohmann::json& j) {
  ResourceList list;
  if (!j.is_object()) return list;
  for (const auto& [name, value] : j.items()) {
    list[name] = Q(value.is_string() ? value.get<std::string>() : value.dump());
  }
  return list;
}

std::vector<VectorPod> ReadMemoryVectorPods() {
  std::vector<VectorPod> out;
  const nlohmann::json vectors = testing::LoadVectors("memory_cases.json");
  for (const nlohmann::json& c : vectors.at("cases")) {
    if (!c.contains("pod") || !c["pod"].contains("qos")) continue;
    const nlohmann::json& jp = c["pod"];
    Pod pod;
    pod.name = jp.value("uid", "pod");
    for (const char* list : {"init_containers", "containers"}) {
      if (!jp.contains(list)) continue;
      for (const nlohmann::json& jc : jp[list]) {
        Container container;
        container.name = jc.value("name", "");
        container.resources.requests = ListFromJson(jc.value("requests", nlohmann::json()));
        container.resources.limits = ListFromJson(jc.value("limits", nlohmann::json()));
        if (std::string(list) == "containers") {
          container.kind = ContainerKind::kApp;
          pod.containers.push_back(container);
        } else {
          container.kind =
              jc.value("restartable", false) ? ContainerKind::kSidecar : ContainerKind::kInit;
          pod.init_containers.push_back(container);
        }
      }
    }
    out.push_back({c.value("id", "") + " " + c.value("test", "") + " " +
                       c.value("description", ""),
                   pod, jp["qos"].get<std::string>()});
  }
  return out;
}

// Read once: the parameter generator below asks for it for every test name.
const std::vector<VectorPod>& MemoryVectorPods() {
  static const std::vector<VectorPod>* pods = new std::vector<VectorPod>(ReadMemoryVectorPods());
  return *pods;
}

class MemoryVectorQosTest : public ::testing::TestWithParam<size_t> {};

TEST_P(MemoryVectorQosTest, QosOfVectorPod) {
  const VectorPod v = MemoryVectorPods()[GetParam()];
  EXPECT_STREQ(QosClassName(GetPodQos(v.pod)), v.qos.c_str()) << v.name;
}

INSTANTIATE_TEST_SUITE_P(Vectors, MemoryVectorQosTest,
                         ::testing::Range<size_t>(0, MemoryVectorPods().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return testing::TestName(MemoryVectorPods()[info.param].name,
                                                    info.param);
                         });

TEST(MemoryVectorQosTest, VectorsHavePods) { EXPECT_GE(MemoryVectorPods().size(), 20u); }

// ---------------------------------------------------------------------------------------
// Further pod-level and classic rules.

TEST(QosTest, PodLevelStanzaDecidesAloneEvenWhenContainersAreGuaranteed) {
  // Pod-level requests but no limits: not Guaranteed although the container is.
  Pod pod = P({C("c", RL("1", "1Gi"), RL("1", "1Gi"))}, {}, RR(RL("1", "1Gi"), {}));
  EXPECT_EQ(GetPodQos(pod), QosClass::kBurstable);
  // The same pod with the gate off uses the containers.
  EXPECT_EQ(GetPodQos(pod, {.pod_level_resources = false}), QosClass::kGuaranteed);
}

TEST(QosTest, PodLevelCpuOnlyIsBurstableWhateverTheContainersSay) {
  // ComputePodQOS does not fall back to the containers for a resource the pod level omits.
  Pod pod = P({C("c", RL("2", "1Gi"), RL("2", "1Gi"))}, {}, RR(RL("2", ""), RL("2", "")));
  EXPECT_EQ(GetPodQos(pod), QosClass::kBurstable);
}

TEST(QosTest, PodLevelHugepagesOnlyIsBestEffort) {
  Pod pod = P({C("c", {}, {})}, {},
              RR(With({}, "hugepages-2Mi", "2Mi"), With({}, "hugepages-2Mi", "2Mi")));
  EXPECT_TRUE(pod.HasPodLevelResources());
  EXPECT_EQ(GetPodQos(pod), QosClass::kBestEffort);
}

TEST(QosTest, PodLevelZeroQuantitiesAreIgnored) {
  // cpu: 0 at pod level counts as unset: limits lack a positive cpu -> not Guaranteed.
  Pod pod = P({C("c", {}, {})}, {}, RR(RL("0", "1Gi"), RL("0", "1Gi")));
  EXPECT_EQ(GetPodQos(pod), QosClass::kBurstable);
  Pod zero = P({C("c", {}, {})}, {}, RR(RL("0", "0"), RL("0", "0")));
  EXPECT_EQ(GetPodQos(zero), QosClass::kBestEffort);
}

TEST(QosTest, EmptyPodLevelStanzaWithFixUsesContainers) {
  // k/k #135082: `resources: {}` must not turn a Guaranteed pod into BestEffort.
  Pod pod = P({C("pause", RL("100m", "50Mi"), RL("100m", "50Mi"))}, {}, RR({}, {}));
  EXPECT_FALSE(pod.HasPodLevelResources());
  EXPECT_EQ(GetPodQos(pod, {.fix_kubelet_qos_class = true}), QosClass::kGuaranteed);
  EXPECT_EQ(GetPodQos(pod, {.fix_kubelet_qos_class = false}), QosClass::kBestEffort);
  // A stanza naming only an unsupported resource is "not set" for the fixed rule too.
  Pod gpu_only = P({C("pause", RL("100m", "50Mi"), RL("100m", "50Mi"))}, {},
                   RR(With({}, "example.com/gpu", "1"), {}));
  EXPECT_EQ(GetPodQos(gpu_only, {.fix_kubelet_qos_class = true}), QosClass::kGuaranteed);
  EXPECT_EQ(GetPodQos(gpu_only, {.fix_kubelet_qos_class = false}), QosClass::kBestEffort);
  // Without any stanza both agree.
  Pod no_stanza = P({C("pause", RL("100m", "50Mi"), RL("100m", "50Mi"))});
  EXPECT_EQ(GetPodQos(no_stanza, {.fix_kubelet_qos_class = true}), QosClass::kGuaranteed);
  EXPECT_EQ(GetPodQos(no_stanza, {.fix_kubelet_qos_class = false}), QosClass::kGuaranteed);
}

TEST(QosTest, InitContainersCountEphemeralDoNot) {
  Pod pod = P({C("app", RL("1", "1Gi"), RL("1", "1Gi"))},
              {C("init", RL("1", "1Gi"), RL("2", "1Gi"), ContainerKind::kInit)});
  EXPECT_EQ(GetPodQos(pod), QosClass::kBurstable);
  Pod sidecar = P({C("app", RL("1", "1Gi"), RL("1", "1Gi"))},
                  {C("side", RL("", ""), RL("", ""), ContainerKind::kSidecar)});
  EXPECT_EQ(GetPodQos(sidecar), QosClass::kBurstable);  // a container without limits

  Pod ephemeral = P({C("app", RL("1", "1Gi"), RL("1", "1Gi"))});
  ephemeral.ephemeral_containers.push_back(
      C("debug", RL("1", ""), RL("", ""), ContainerKind::kEphemeral));
  EXPECT_EQ(GetPodQos(ephemeral), QosClass::kGuaranteed);
  Pod only_ephemeral = P({C("app", {}, {})});
  only_ephemeral.ephemeral_containers.push_back(
      C("debug", RL("1", "1Gi"), RL("1", "1Gi"), ContainerKind::kEphemeral));
  EXPECT_EQ(GetPodQos(only_ephemeral), QosClass::kBestEffort);
}

TEST(QosTest, ExtendedResourcesDoNotCount) {
  Pod pod = P({C("c", With(RL("1", "1Gi"), "example.com/gpu", "1"),
                 With(RL("1", "1Gi"), "example.com/gpu", "2"))});
  EXPECT_EQ(GetPodQos(pod), QosClass::kGuaranteed);
  Pod only_gpu = P({C("c", With({}, "example.com/gpu", "1"), With({}, "example.com/gpu", "1"))});
  EXPECT_EQ(GetPodQos(only_gpu), QosClass::kBestEffort);
}

TEST(QosTest, EquivalentQuantitiesInDifferentUnitsAreEqual) {
  Pod pod = P({C("c", RL("1000m", "1024Mi"), RL("1", "1Gi"))});
  EXPECT_EQ(GetPodQos(pod), QosClass::kGuaranteed);
}

TEST(QosTest, Names) {
  EXPECT_STREQ(QosClassName(QosClass::kGuaranteed), "Guaranteed");
  EXPECT_STREQ(QosClassName(QosClass::kBurstable), "Burstable");
  EXPECT_STREQ(QosClassName(QosClass::kBestEffort), "BestEffort");
  EXPECT_STREQ(ContainerKindName(ContainerKind::kInit), "init");
  EXPECT_STREQ(ContainerKindName(ContainerKind::kSidecar), "sidecar");
  EXPECT_STREQ(ContainerKindName(ContainerKind::kApp), "app");
  EXPECT_STREQ(ContainerKindName(ContainerKind::kEphemeral), "ephemeral");
}

TEST(ContainerQosTest, IsContainerEquivalentQosGuaranteed) {
  EXPECT_TRUE(IsContainerEquivalentQosGuaranteed(C("c", RL("2", "2Gi"), RL("2", "2Gi"))));
  EXPECT_TRUE(IsContainerEquivalentQosGuaranteed(C("c", RL("500m", "1Gi"), RL("500m", "1Gi"))));
  EXPECT_TRUE(
      IsContainerEquivalentQosGuaranteed(C("c", RL("1", "1024Mi"), RL("1000m", "1Gi"))));
  EXPECT_FALSE(IsContainerEquivalentQosGuaranteed(C("c", RL("2", ""), RL("2", ""))));
  EXPECT_FALSE(IsContainerEquivalentQosGuaranteed(C("c", RL("", "1Gi"), RL("", "1Gi"))));
  EXPECT_FALSE(IsContainerEquivalentQosGuaranteed(C("c", RL("1", "1Gi"), RL("2", "1Gi"))));
  EXPECT_FALSE(IsContainerEquivalentQosGuaranteed(C("c", RL("1", "1Gi"), RL("", ""))));
  EXPECT_FALSE(IsContainerEquivalentQosGuaranteed(C("c", RL("0", "0"), RL("0", "0"))));
  EXPECT_FALSE(IsContainerEquivalentQosGuaranteed(C("c", {}, {})));
}

// ---------------------------------------------------------------------------------------
// Pod helpers.

TEST(PodTest, HasPodLevelResources) {
  Pod pod = P({C("c", {}, {})});
  EXPECT_FALSE(pod.HasPodLevelResources());
  pod.resources = RR({}, {});
  EXPECT_FALSE(pod.HasPodLevelResources());
  pod.resources = RR(With({}, "example.com/gpu", "1"), {});
  EXPECT_FALSE(pod.HasPodLevelResources());  // only supported names count
  pod.resources = RR({}, RL("0", ""));
  EXPECT_TRUE(pod.HasPodLevelResources());  // keys, not values
  EXPECT_TRUE(pod.HasPodLevelLimits());
  EXPECT_FALSE(pod.HasPodLevelRequests());
  pod.resources = RR(With({}, "hugepages-1Gi", "1Gi"), {});
  EXPECT_TRUE(pod.HasPodLevelResources());
  EXPECT_TRUE(pod.HasPodLevelRequests());
}

TEST(PodTest, SupportedPodLevelResourceNames) {
  EXPECT_TRUE(IsSupportedPodLevelResource("cpu"));
  EXPECT_TRUE(IsSupportedPodLevelResource("memory"));
  EXPECT_TRUE(IsSupportedPodLevelResource("hugepages-2Mi"));
  EXPECT_FALSE(IsSupportedPodLevelResource("ephemeral-storage"));
  EXPECT_FALSE(IsSupportedPodLevelResource("example.com/gpu"));
  EXPECT_TRUE(IsHugePageResourceName("hugepages-1Gi"));
  EXPECT_FALSE(IsHugePageResourceName("memory"));
}

TEST(PodTest, InitAndAppContainersAndFind) {
  Pod pod = P({C("a1", {}, {}), C("a2", {}, {})},
              {C("i1", {}, {}, ContainerKind::kInit), C("s1", {}, {}, ContainerKind::kSidecar)});
  pod.ephemeral_containers.push_back(C("e1", {}, {}, ContainerKind::kEphemeral));
  std::vector<std::string> names;
  for (const Container* c : pod.InitAndAppContainers()) names.push_back(c->name);
  EXPECT_THAT(names, ::testing::ElementsAre("i1", "s1", "a1", "a2"));
  ASSERT_NE(pod.FindContainer("s1"), nullptr);
  EXPECT_TRUE(pod.FindContainer("s1")->IsRestartableInit());
  ASSERT_NE(pod.FindContainer("e1"), nullptr);
  EXPECT_EQ(pod.FindContainer("e1")->kind, ContainerKind::kEphemeral);
  EXPECT_EQ(pod.FindContainer("a2"), &pod.containers[1]);
  EXPECT_EQ(pod.FindContainer("nope"), nullptr);
  pod.namespace_name = "team";
  EXPECT_EQ(pod.Key(), "team/p");
}

TEST(PodTest, AggregateUsesTheSidecarFormula) {
  // KEP-753: init1 (2) runs alone; sidecar s1 (1) then init2 (3) runs next to s1 -> 4;
  // s2 (1); apps 1 + 1 with sidecars 1 + 1 -> 4. Peak = max(4, 4, 2) = 4 cpu.
  Pod pod = P({C("a1", RL("1", "1Gi"), {}), C("a2", RL("1", "1Gi"), {})},
              {C("init1", RL("2", "3Gi"), {}, ContainerKind::kInit),
               C("s1", RL("1", "100Mi"), {}, ContainerKind::kSidecar),
               C("init2", RL("3", "1Gi"), {}, ContainerKind::kInit),
               C("s2", RL("1", "100Mi"), {}, ContainerKind::kSidecar)});
  ResourceList agg = AggregateContainerRequests(pod);
  EXPECT_EQ(agg.at("cpu").MilliValue(), 4000);
  // memory: max(2Gi + 200Mi, 3Gi, 1Gi + 100Mi) = 3Gi.
  EXPECT_EQ(agg.at("memory").Value(), int64_t{3} << 30);
  EXPECT_TRUE(AggregateContainerLimits(pod).empty());

  Pod big_init = P({C("app", RL("1", ""), {})},
                   {C("s", RL("500m", ""), {}, ContainerKind::kSidecar),
                    C("init", RL("5", ""), {}, ContainerKind::kInit)});
  EXPECT_EQ(AggregateContainerRequests(big_init).at("cpu").MilliValue(), 5500);
}

TEST(PodTest, AggregateIgnoresEphemeralContainers) {
  Pod pod = P({C("a", RL("1", ""), {})});
  pod.ephemeral_containers.push_back(C("e", RL("7", ""), {}, ContainerKind::kEphemeral));
  EXPECT_EQ(AggregateContainerRequests(pod).at("cpu").MilliValue(), 1000);
}

TEST(PodTest, PodRequestsAndLimitsPreferThePodLevel) {
  Pod pod = P({C("a", With(RL("1", "1Gi"), "example.com/gpu", "1"), RL("2", "2Gi"))}, {},
              RR(RL("4", ""), RL("", "8Gi")));
  ResourceList requests = PodRequests(pod);
  EXPECT_EQ(requests.at("cpu").MilliValue(), 4000);
  EXPECT_EQ(requests.at("memory").Value(), int64_t{1} << 30);
  EXPECT_EQ(requests.at("example.com/gpu").Value(), 1);
  ResourceList limits = PodLimits(pod);
  EXPECT_EQ(limits.at("cpu").MilliValue(), 2000);
  EXPECT_EQ(limits.at("memory").Value(), int64_t{8} << 30);
  EXPECT_EQ(PodRequests(pod, /*pod_level_resources_enabled=*/false).at("cpu").MilliValue(), 1000);
}

}  // namespace
}  // namespace podtopo
