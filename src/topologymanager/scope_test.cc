#include "topologymanager/scope.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "resource/quantity.h"
#include "testing/testing.h"
#include "topologymanager/test_helpers.h"

namespace podtopo::topologymanager {
namespace {

using nlohmann::json;

BitMask M(std::initializer_list<int> bits) { return *NewBitMask(bits); }

// A provider returning fixed hints (the kubelet's mockHintProvider) and recording calls.
class FakeProvider : public HintProvider {
 public:
  explicit FakeProvider(ProviderHints hints) : hints_(std::move(hints)) {}

  ProviderHints GetTopologyHints(const Pod&, const Container& container, Operation) override {
    calls.push_back("hints:" + container.name);
    return hints_;
  }
  ProviderHints GetPodTopologyHints(const Pod& pod, Operation) override {
    calls.push_back("podhints:" + pod.name);
    return hints_;
  }
  absl::Status Allocate(const Pod&, const Container& container, Operation) override {
    calls.push_back("allocate:" + container.name);
    if (container.name == fail_container) return fail_status;
    return absl::OkStatus();
  }
  absl::Status AllocatePod(const Pod& pod, Operation) override {
    calls.push_back("allocatepod:" + pod.name);
    return allocate_pod_status;
  }

  std::vector<std::string> calls;
  std::string fail_container;
  absl::Status fail_status;
  absl::Status allocate_pod_status;

 private:
  ProviderHints hints_;
};

Pod MakePod(int init_containers, int containers) {
  Pod pod;
  pod.name = "p";
  pod.uid = "uid-1";
  for (int i = 0; i < init_containers; ++i) {
    Container c;
    c.name = "init" + std::to_string(i);
    c.kind = ContainerKind::kInit;
    pod.init_containers.push_back(c);
  }
  for (int i = 0; i < containers; ++i) {
    Container c;
    c.name = "c" + std::to_string(i);
    pod.containers.push_back(c);
  }
  return pod;
}

std::vector<NUMANode> TwoNodes() { return {{0, std::nullopt}, {1, std::nullopt}}; }

// ---------------------------------------------------------------------------------------------
// TestAdmit vectors.

std::vector<json> AdmitCases() {
  json all = podtopo::testing::LoadVectors("topology_merge_cases.json");
  std::vector<json> out;
  for (const auto& c : all.at("cases")) {
    if (c.at("kind") == "admit") out.push_back(c);
  }
  return out;
}

class AdmitVectorTest : public ::testing::TestWithParam<json> {};

TEST_P(AdmitVectorTest, MatchesKubelet) {
  const json& c = GetParam();
  std::vector<NUMANode> topology;
  for (const auto& id : c.at("numa_nodes")) topology.push_back({id.get<int>(), std::nullopt});
  ProvidersHints hints = test::ProvidersFromJson(c.at("providers"));
  ASSERT_FALSE(c.at("scopes").empty());
  for (const auto& scope : c.at("scopes")) {
    SCOPED_TRACE("scope " + scope.get<std::string>());
    auto manager = NewManager(topology, c.at("policy"), scope, {});
    ASSERT_TRUE(manager.ok()) << manager.status();
    std::vector<std::unique_ptr<FakeProvider>> providers;
    for (const auto& h : hints) {
      providers.push_back(std::make_unique<FakeProvider>(h));
      (*manager)->AddHintProvider(providers.back().get());
    }
    Pod pod = MakePod(c.at("pod").at("init_containers"), c.at("pod").at("containers"));
    AdmitResult result = (*manager)->Admit(pod);
    EXPECT_EQ(result.admit, c.at("expected_admit").get<bool>());
    if (!result.admit) {
      EXPECT_EQ(result.reason, c.at("expected_reason_if_rejected").get<std::string>());
      EXPECT_EQ(result.message, c.at("expected_message_if_rejected").get<std::string>());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Vectors, AdmitVectorTest, ::testing::ValuesIn(AdmitCases()),
                         [](const ::testing::TestParamInfo<json>& info) {
                           return podtopo::testing::TestName(
                               info.param.at("id").get<std::string>() + "_" +
                                   info.param.at("name").get<std::string>(),
                               info.index);
                         });

TEST(AdmitVectorCount, AllCasesPresent) { EXPECT_EQ(AdmitCases().size(), 14u); }

// ---------------------------------------------------------------------------------------------
// Scope behaviour.

ProviderHints CpuHints(std::vector<TopologyHint> hints) {
  return std::map<std::string, HintList>{{"cpu", hints}};
}

TEST(ScopeTest, ContainerScopeMergesPerContainerInOrder) {
  auto tm = NewManager(TwoNodes(), kPolicySingleNumaNode, kScopeContainer, {});
  ASSERT_TRUE(tm.ok());
  FakeProvider a(CpuHints({{M({1}), true}, {M({0, 1}), false}}));
  FakeProvider b(std::nullopt);
  (*tm)->AddHintProvider(&a);
  (*tm)->AddHintProvider(&b);
  Pod pod = MakePod(1, 2);
  AdmitResult r = (*tm)->Admit(pod);
  EXPECT_TRUE(r.admit);
  EXPECT_EQ(a.calls, (std::vector<std::string>{"hints:init0", "allocate:init0", "hints:c0",
                                               "allocate:c0", "hints:c1", "allocate:c1"}));
  EXPECT_EQ(b.calls, (std::vector<std::string>{"hints:init0", "allocate:init0", "hints:c0",
                                               "allocate:c0", "hints:c1", "allocate:c1"}));
  EXPECT_EQ((*tm)->GetAffinity("uid-1", "c1"), (TopologyHint{M({1}), true}));
  EXPECT_EQ((*tm)->GetAffinity("uid-1", "nope"), TopologyHint{});
  EXPECT_EQ((*tm)->GetAffinity("other", "c1"), TopologyHint{});
}

TEST(ScopeTest, ContainerScopeRejectionStopsBeforeAllocating) {
  auto tm = NewManager(TwoNodes(), kPolicyRestricted, kScopeContainer, {});
  ASSERT_TRUE(tm.ok());
  FakeProvider a(CpuHints({{M({0, 1}), false}}));
  (*tm)->AddHintProvider(&a);
  AdmitResult r = (*tm)->Admit(MakePod(0, 2));
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "TopologyAffinityError");
  EXPECT_EQ(r.message, "Resources cannot be allocated with Topology locality");
  EXPECT_EQ(a.calls, (std::vector<std::string>{"hints:c0"}));
  EXPECT_EQ((*tm)->GetAffinity("uid-1", "c0"), TopologyHint{});
}

TEST(ScopeTest, AllocationErrorsBecomeAdmitResults) {
  auto tm = NewManager(TwoNodes(), kPolicyBestEffort, kScopePod, {});
  ASSERT_TRUE(tm.ok());
  FakeProvider a(CpuHints({{M({0}), true}}));
  FakeProvider b(std::nullopt);
  a.fail_container = "c1";
  a.fail_status = TypedAdmissionError(kReasonSmtAlignment, "SMT Alignment Error: x");
  (*tm)->AddHintProvider(&a);
  (*tm)->AddHintProvider(&b);
  AdmitResult r = (*tm)->Admit(MakePod(0, 2));
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "SMTAlignmentError");
  EXPECT_EQ(r.message, "SMT Alignment Error: x");
  // Pod scope: one merge, the hint stored before each container's Allocate; b never allocates c1.
  EXPECT_EQ(a.calls, (std::vector<std::string>{"podhints:p", "allocate:c0", "allocate:c1"}));
  EXPECT_EQ(b.calls, (std::vector<std::string>{"podhints:p", "allocate:c0"}));
  EXPECT_EQ((*tm)->GetAffinity("uid-1", "c1"), (TopologyHint{M({0}), true}));

  a.fail_status = absl::InternalError("boom");
  r = (*tm)->Admit(MakePod(0, 2));
  EXPECT_EQ(r.reason, "UnexpectedAdmissionError");
  EXPECT_EQ(r.message, "Allocate failed due to boom, which is unexpected");
}

TEST(ScopeTest, PodLevelResourcesUseAllocatePod) {
  Pod pod = MakePod(1, 1);
  pod.resources = ResourceRequirements{};
  pod.resources->requests["cpu"] = Quantity::FromInt(2);
  ScopeGates on{.pod_level_resource_managers = true};
  auto tm = NewManager(TwoNodes(), kPolicySingleNumaNode, kScopePod, {}, {}, on);
  ASSERT_TRUE(tm.ok());
  FakeProvider a(CpuHints({{M({1}), true}}));
  (*tm)->AddHintProvider(&a);
  EXPECT_TRUE((*tm)->Admit(pod).admit);
  EXPECT_EQ(a.calls, (std::vector<std::string>{"podhints:p", "allocatepod:p"}));
  EXPECT_EQ((*tm)->GetAffinity("uid-1", "init0"), (TopologyHint{M({1}), true}));
  EXPECT_EQ((*tm)->GetAffinity("uid-1", "c0"), (TopologyHint{M({1}), true}));

  // Rejection on the pod-level path.
  auto strict = NewManager(TwoNodes(), kPolicySingleNumaNode, kScopePod, {}, {}, on);
  FakeProvider wide(CpuHints({{M({0, 1}), true}}));
  (*strict)->AddHintProvider(&wide);
  AdmitResult r = (*strict)->Admit(pod);
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "TopologyAffinityError");
  EXPECT_EQ(r.message, kPodLevelTopologyAffinityErrorMessage);

  // AllocatePod errors.
  a.allocate_pod_status = TypedAdmissionError(kReasonEmptyPodSharedPool, "empty pool");
  r = (*tm)->Admit(pod);
  EXPECT_EQ(r.reason, "EmptyPodSharedPoolError");

  // Gate off: the classic pod scope (per-container Allocate).
  auto off = NewManager(TwoNodes(), kPolicySingleNumaNode, kScopePod, {});
  FakeProvider c(CpuHints({{M({1}), true}}));
  (*off)->AddHintProvider(&c);
  EXPECT_TRUE((*off)->Admit(pod).admit);
  EXPECT_EQ(c.calls, (std::vector<std::string>{"podhints:p", "allocate:init0", "allocate:c0"}));
}

TEST(ScopeTest, NoneScopeOnlyAllocates) {
  auto tm = NewManager(TwoNodes(), kPolicyNone, "ignored", {{"bogus", "option"}});
  ASSERT_TRUE(tm.ok());
  EXPECT_EQ((*tm)->scope_name(), "none");
  FakeProvider a(CpuHints({}));
  (*tm)->AddHintProvider(&a);
  EXPECT_TRUE((*tm)->Admit(MakePod(1, 1)).admit);
  EXPECT_EQ(a.calls, (std::vector<std::string>{"allocate:init0", "allocate:c0"}));
  EXPECT_EQ((*tm)->GetAffinity("uid-1", "c0"), TopologyHint{});
}

TEST(ScopeTest, NewManagerErrors) {
  EXPECT_EQ(NewManager(TwoNodes(), kPolicyBestEffort, "node", {}).status().message(),
            "unknown scope: \"node\"");
  EXPECT_EQ(NewManager(TwoNodes(), "bogus", "node", {}).status().message(),
            "unknown policy: \"bogus\"");
}

TEST(ScopeTest, RemoveContainerKeepsHintsOfRestartedContainers) {
  auto tm = NewManager(TwoNodes(), kPolicyBestEffort, kScopeContainer, {});
  ASSERT_TRUE(tm.ok());
  Pod pod = MakePod(0, 2);
  FakeProvider a(CpuHints({{M({0}), true}}));
  (*tm)->AddHintProvider(&a);
  ASSERT_TRUE((*tm)->Admit(pod).admit);
  (*tm)->AddContainer(pod, pod.containers[0], "id-a");
  (*tm)->AddContainer(pod, pod.containers[0], "id-b");  // restarted: a second id
  (*tm)->AddContainer(pod, pod.containers[1], "id-c");
  EXPECT_TRUE((*tm)->RemoveContainer("unknown").ok());
  EXPECT_TRUE((*tm)->RemoveContainer("id-a").ok());
  EXPECT_EQ((*tm)->GetAffinity("uid-1", "c0"), (TopologyHint{M({0}), true}));  // id-b remains
  EXPECT_TRUE((*tm)->RemoveContainer("id-b").ok());
  EXPECT_EQ((*tm)->GetAffinity("uid-1", "c0"), TopologyHint{});
  EXPECT_EQ((*tm)->GetAffinity("uid-1", "c1"), (TopologyHint{M({0}), true}));
  EXPECT_TRUE((*tm)->RemoveContainer("id-c").ok());
  EXPECT_EQ((*tm)->GetAffinity("uid-1", "c1"), TopologyHint{});
  (*tm)->SetAffinity("uid-2", "x", TopologyHint{M({1}), false});
  EXPECT_EQ((*tm)->GetAffinity("uid-2", "x"), (TopologyHint{M({1}), false}));
  (*tm)->RemovePod("uid-2");
  EXPECT_EQ((*tm)->GetAffinity("uid-2", "x"), TopologyHint{});
}

}  // namespace
}  // namespace podtopo::topologymanager
