// Static policy behaviour beyond the kubelet's vector tables: helpers, hint extension, the
// single/cross-NUMA rule, pod-scope hints of classic pods, and the pod-level gating of the
// container-scope entry points.
#include "memorymanager/static_policy.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memorymanager/test_util.h"

namespace podtopo::memorymanager {
namespace {

using namespace testutil;  // NOLINT

TEST(FindBestHint, PreferredThenNarrowest) {
  EXPECT_FALSE(FindBestHint({}).affinity.has_value());
  TopologyHint h = FindBestHint({{Mask({0, 1}), false}, {Mask({1}), false}, {Mask({0, 1}), true},
                                 {Mask({2, 3}), true}});
  EXPECT_EQ(h, (TopologyHint{Mask({0, 1}), true}));
  h = FindBestHint({{Mask({1}), true}, {Mask({0}), true}});
  EXPECT_EQ(h, (TopologyHint{Mask({0}), true}));
}

TEST(UpdateMachineState, SpillsOverTheMaskInNodeOrder) {
  NumaNodeMap ms = DefaultMachineState(SimpleMachine(2, 2), SimpleReserved(2));
  UpdateMachineState(ms, {0, 1}, "memory", 2 * kGi);
  EXPECT_EQ(ms[0].memory_map["memory"].free, 0u);
  EXPECT_EQ(ms[0].memory_map["memory"].reserved, kGi + 512 * kMi);
  EXPECT_EQ(ms[1].memory_map["memory"].reserved, 512 * kMi);
  EXPECT_EQ(ms[0].number_of_assignments, 1);
  EXPECT_EQ(ms[1].cells, (std::vector<int>{0, 1}));
  ReleaseMemory(ms, {Block{{0, 1}, "memory", 2 * kGi}});
  EXPECT_EQ(ms, DefaultMachineState(SimpleMachine(2, 2), SimpleReserved(2)));
}

class StaticPolicyTest : public ::testing::Test {
 protected:
  StaticPolicy MakePolicy(int nodes, uint64_t gib, PolicyGates gates = {}) {
    auto p = StaticPolicy::New(SimpleMachine(nodes, gib), SimpleReserved(nodes), &store_, gates);
    EXPECT_TRUE(p.ok()) << p.status();
    return *p;
  }
  Pod ClassicPod(const std::string& uid, std::vector<Container> app,
                 std::vector<Container> init = {}) {
    Pod pod;
    pod.uid = uid;
    pod.name = uid;
    pod.containers = std::move(app);
    pod.init_containers = std::move(init);
    return pod;
  }
  FakeAffinityStore store_;
};

TEST_F(StaticPolicyTest, NewRejectsMissingStore) {
  EXPECT_FALSE(StaticPolicy::New(SimpleMachine(1, 4), SimpleReserved(1), nullptr, {}).ok());
}

TEST_F(StaticPolicyTest, StartFillsDefaultStateAndAllocatableMemory) {
  StaticPolicy policy = MakePolicy(2, 4);
  MemoryState state;
  ASSERT_TRUE(policy.Start(state).ok());
  EXPECT_EQ(state.machine_state, policy.DefaultMachineState());
  std::vector<Block> allocatable = policy.GetAllocatableMemory(state);
  ASSERT_EQ(allocatable.size(), 2u);
  EXPECT_EQ(allocatable[1], (Block{{1}, "memory", 4 * kGi - 512 * kMi}));
}

TEST_F(StaticPolicyTest, RestrictedHintNarrowerThanRequestIsExtended) {
  StaticPolicy policy = MakePolicy(2, 2);  // 1.5Gi allocatable per node
  MemoryState state;
  ASSERT_TRUE(policy.Start(state).ok());
  Pod pod = ClassicPod("p", {GuaranteedContainer("c", "1", "2Gi")});
  store_.Set(TopologyHint{Mask({0}), false});  // does not hold 2Gi: extend to {0,1}
  ASSERT_TRUE(policy.Allocate(state, pod, pod.containers[0]).ok());
  EXPECT_EQ(GetMemoryNumaNodes(state, "p", "c"), (std::vector<int>{0, 1}));
  EXPECT_EQ(GetMemory(state, "p", "c"), (std::vector<Block>{Block{{0, 1}, "memory", 2 * kGi}}));
}

TEST_F(StaticPolicyTest, NodesOfACrossNumaGroupOnlyServeThatGroup) {
  StaticPolicy policy = MakePolicy(3, 2);  // 1.5Gi allocatable per node
  MemoryState state;
  ASSERT_TRUE(policy.Start(state).ok());
  Pod big = ClassicPod("big", {GuaranteedContainer("c", "1", "2Gi")});
  store_.Set(TopologyHint{Mask({0, 1}), true});
  ASSERT_TRUE(policy.Allocate(state, big, big.containers[0]).ok());
  // Nodes 0 and 1 are grouped: no single-node hints for them, no other group with them.
  Pod small = ClassicPod("small", {GuaranteedContainer("c", "1", "256Mi")});
  std::optional<HintMap> hints = policy.GetTopologyHints(state, small, small.containers[0]);
  ASSERT_TRUE(hints.has_value());
  EXPECT_EQ((*hints)["memory"],
            (std::vector<TopologyHint>{{Mask({2}), true}, {Mask({0, 1}), false}}));
  // A stored hint mixing the group with another node is refused at Allocate.
  store_.Set(TopologyHint{Mask({1, 2}), false});
  MemoryState before = state;
  absl::Status s = policy.Allocate(state, small, small.containers[0]);
  EXPECT_EQ(s.message(), "[memorymanager] preferred hint violates NUMA node allocation");
  EXPECT_EQ(state, before);
  // The group itself is fine.
  store_.Set(TopologyHint{Mask({0, 1}), false});
  ASSERT_TRUE(policy.Allocate(state, small, small.containers[0]).ok());
  EXPECT_EQ(state.machine_state[1].number_of_assignments, 2);
}

TEST_F(StaticPolicyTest, GetMemoryNumaNodesEmptyWhenNotPinned) {
  MemoryState state;
  EXPECT_TRUE(GetMemoryNumaNodes(state, "p", "c").empty());
  EXPECT_TRUE(GetMemory(state, "p", "c").empty());
  EXPECT_TRUE(GetPodMemory(state, "p").empty());
}

TEST_F(StaticPolicyTest, ClassicPodScopeHintsUseAggregatedRequest) {
  StaticPolicy policy = MakePolicy(2, 4);  // 3.5Gi allocatable per node
  MemoryState state;
  ASSERT_TRUE(policy.Start(state).ok());
  Pod pod = ClassicPod("p", {GuaranteedContainer("a", "1", "2Gi"), GuaranteedContainer("b", "1", "2Gi")});
  std::optional<HintMap> hints = policy.GetPodTopologyHints(state, pod);
  ASSERT_TRUE(hints.has_value());
  // 4Gi does not fit one node: only the pair, preferred.
  EXPECT_EQ((*hints)["memory"], (std::vector<TopologyHint>{{Mask({0, 1}), true}}));
}

TEST_F(StaticPolicyTest, BurstablePodsGetNothing) {
  StaticPolicy policy = MakePolicy(1, 4);
  MemoryState state;
  ASSERT_TRUE(policy.Start(state).ok());
  Pod pod = ClassicPod("p", {MakeContainer("c", ContainerKind::kApp, {{"memory", "1Gi"}},
                                           {{"memory", "2Gi"}})});
  EXPECT_FALSE(policy.GetTopologyHints(state, pod, pod.containers[0]).has_value());
  EXPECT_FALSE(policy.GetPodTopologyHints(state, pod).has_value());
  MemoryState before = state;
  EXPECT_TRUE(policy.Allocate(state, pod, pod.containers[0]).ok());
  EXPECT_EQ(state, before);
}

TEST_F(StaticPolicyTest, PodLevelPodsAreSkippedWhileAGateIsOff) {
  for (PolicyGates gates : {PolicyGates{true, false}, PolicyGates{false, true}}) {
    StaticPolicy policy = MakePolicy(1, 4, gates);
    MemoryState state;
    ASSERT_TRUE(policy.Start(state).ok());
    Pod pod = PodLevelPod("p", {{"cpu", "2"}, {"memory", "2Gi"}},
                          {}, {GuaranteedContainer("c", "1", "1Gi")});
    EXPECT_FALSE(policy.GetTopologyHints(state, pod, pod.containers[0]).has_value());
    EXPECT_FALSE(policy.GetPodTopologyHints(state, pod).has_value());
    MemoryState before = state;
    EXPECT_TRUE(policy.Allocate(state, pod, pod.containers[0]).ok());
    EXPECT_EQ(state, before);
    EXPECT_EQ(policy.AllocatePod(state, pod).code(), absl::StatusCode::kFailedPrecondition);
  }
}

TEST_F(StaticPolicyTest, ContainerScopeSkipsContainersWithoutExclusiveMemory) {
  // k/k #138770: with the gates on, a pod-level pod's shared container gets no hints and no
  // state entry in the container scope; its eligible container is pinned from the node.
  StaticPolicy policy = MakePolicy(1, 4, PolicyGates{true, true});
  MemoryState state;
  ASSERT_TRUE(policy.Start(state).ok());
  Pod pod = PodLevelPod("p", {{"cpu", "2"}, {"memory", "2Gi"}}, {},
                        {GuaranteedContainer("excl", "1", "1Gi"), SharedContainer("shared")});
  EXPECT_FALSE(policy.GetTopologyHints(state, pod, pod.containers[1]).has_value());
  ASSERT_TRUE(policy.Allocate(state, pod, pod.containers[1]).ok());
  EXPECT_EQ(state.GetMemoryBlocks("p", "shared"), nullptr);
  std::optional<HintMap> hints = policy.GetTopologyHints(state, pod, pod.containers[0]);
  ASSERT_TRUE(hints.has_value());
  EXPECT_EQ((*hints)["memory"], (std::vector<TopologyHint>{{Mask({0}), true}}));
  ASSERT_TRUE(policy.Allocate(state, pod, pod.containers[0]).ok());
  EXPECT_EQ(GetMemory(state, "p", "excl"), (std::vector<Block>{Block{{0}, "memory", kGi}}));
  EXPECT_EQ(state.machine_state[0].memory_map["memory"].reserved, kGi);
}

TEST_F(StaticPolicyTest, HugepagesOnlyOnSomeNodesGiveNoHintsThereWithoutCrashing) {
  std::vector<MachineNumaNode> machine = {{0, 4 * kGi, {}}, {1, 4 * kGi, {{2048, 512}}}};
  auto p = StaticPolicy::New(machine, SimpleReserved(2), &store_, {});
  ASSERT_TRUE(p.ok());
  MemoryState state;
  ASSERT_TRUE(p->Start(state).ok());
  Container c = MakeContainer("c", ContainerKind::kApp,
                              {{"cpu", "1"}, {"memory", "1Gi"}, {"hugepages-2Mi", "512Mi"}},
                              {{"cpu", "1"}, {"memory", "1Gi"}, {"hugepages-2Mi", "512Mi"}});
  Pod pod = ClassicPod("p", {c});
  std::optional<HintMap> hints = p->GetTopologyHints(state, pod, pod.containers[0]);
  ASSERT_TRUE(hints.has_value());
  EXPECT_EQ((*hints)["hugepages-2Mi"],
            (std::vector<TopologyHint>{{Mask({1}), true}, {Mask({0, 1}), false}}));
  ASSERT_TRUE(p->Allocate(state, pod, pod.containers[0]).ok());
  EXPECT_EQ(GetMemoryNumaNodes(state, "p", "c"), std::vector<int>{1});
}

}  // namespace
}  // namespace podtopo::memorymanager
