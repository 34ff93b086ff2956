// KEP-5526 pod-level memory (kep5526.md §5, topology-memory-podresources.md §B.8): pod hints,
// AllocatePod partitioning, empty-shared-pool validation, restart idempotence (#140906,
// #141069), incomplete checkpoints (#141993) and release on the last container.
#include <string>
#include <vector>

#include "kubelet/admission_error.h"
#include "kubelet/version.h"
#include "gtest/gtest.h"
#include "memorymanager/static_policy.h"
#include "memorymanager/test_util.h"

namespace podtopo::memorymanager {
namespace {

using namespace testutil;  // NOLINT

constexpr PolicyGates kGatesOn{true, true};

class PodLevelTest : public ::testing::Test {
 protected:
  // Two NUMA nodes of 8Gi, 512Mi system-reserved each: 7.5Gi allocatable per node.
  StaticPolicy NewPolicy(PolicyGates gates = kGatesOn) {
    auto p = StaticPolicy::New(SimpleMachine(2, 8), SimpleReserved(2), &store_, gates);
    EXPECT_TRUE(p.ok()) << p.status();
    return *p;
  }
  MemoryState Started(StaticPolicy& policy) {
    MemoryState state;
    EXPECT_TRUE(policy.Start(state).ok());
    return state;
  }
  // A fresh policy (kubelet restart) validating `state`.
  absl::Status Restart(const MemoryState& state, PolicyGates gates = kGatesOn) {
    StaticPolicy fresh = NewPolicy(gates);
    MemoryState copy = state;
    return fresh.Start(copy);
  }
  const MemoryTable& Mem(MemoryState& s, int node) { return s.machine_state[node].memory_map["memory"]; }

  FakeAffinityStore store_;
};

// The seed pod: 2Gi pod budget, two containers without resources.
Pod SeedPod() {
  return PodLevelPod("seed", {{"cpu", "2"}, {"memory", "2Gi"}}, {},
                     {SharedContainer("c1"), SharedContainer("c2")});
}

TEST_F(PodLevelTest, SeedPodContainersShareThePodPool) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  Pod pod = SeedPod();

  std::optional<HintMap> hints = policy.GetPodTopologyHints(state, pod);
  ASSERT_TRUE(hints.has_value());
  EXPECT_EQ(*hints, (HintMap{{"memory",
                              {{Mask({0}), true}, {Mask({1}), true}, {Mask({0, 1}), false}}}}));

  store_.Set(TopologyHint{Mask({0}), true});
  ASSERT_TRUE(policy.AllocatePod(state, pod).ok());

  const std::vector<Block> pool = {Block{{0}, "memory", 2 * kGi}};
  EXPECT_EQ(GetPodMemory(state, "seed"), pool);
  EXPECT_EQ(GetMemory(state, "seed", "c1"), pool);
  EXPECT_EQ(GetMemory(state, "seed", "c2"), pool);
  EXPECT_EQ(GetMemoryNumaNodes(state, "seed", "c2"), std::vector<int>{0});
  // Charged once with the budget, not once per container.
  EXPECT_EQ(Mem(state, 0).reserved, 2 * kGi);
  EXPECT_EQ(Mem(state, 0).free, 7 * kGi + 512 * kMi - 2 * kGi);
  EXPECT_EQ(state.machine_state[0].number_of_assignments, 1);
  EXPECT_EQ(Mem(state, 1).reserved, 0u);
  EXPECT_TRUE(Restart(state).ok());
}

TEST_F(PodLevelTest, MixedPodCarvesTheExclusiveContainerOutOfTheBudget) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  Pod pod = PodLevelPod("mixed", {{"cpu", "4"}, {"memory", "4Gi"}}, {},
                        {GuaranteedContainer("excl", "1", "1Gi"), SharedContainer("shared")});
  store_.Set(TopologyHint{Mask({1}), true});
  ASSERT_TRUE(policy.AllocatePod(state, pod).ok());
  EXPECT_EQ(GetMemory(state, "mixed", "excl"), (std::vector<Block>{{{1}, "memory", kGi}}));
  EXPECT_EQ(GetMemory(state, "mixed", "shared"), (std::vector<Block>{{{1}, "memory", 3 * kGi}}));
  EXPECT_EQ(GetPodMemory(state, "mixed"), (std::vector<Block>{{{1}, "memory", 4 * kGi}}));
  EXPECT_EQ(Mem(state, 1).reserved, 4 * kGi);
  EXPECT_EQ(Mem(state, 0).reserved, 0u);
  EXPECT_TRUE(Restart(state).ok());
}

TEST_F(PodLevelTest, InitContainersAndSidecarsArePartitionedInSpecOrder) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  Pod pod = PodLevelPod(
      "p", {{"cpu", "8"}, {"memory", "4Gi"}},
      {GuaranteedContainer("s1", "1", "1Gi", ContainerKind::kSidecar),
       SharedContainer("i1", ContainerKind::kInit),
       GuaranteedContainer("i2", "1", "2Gi", ContainerKind::kInit),
       SharedContainer("s2", ContainerKind::kSidecar)},
      {GuaranteedContainer("a1", "1", "1Gi"), SharedContainer("a2")});
  store_.Set(TopologyHint{Mask({0}), true});
  ASSERT_TRUE(policy.AllocatePod(state, pod).ok());
  auto mem = [&](const std::string& c) { return GetMemory(state, "p", c); };
  EXPECT_EQ(mem("s1"), (std::vector<Block>{{{0}, "memory", kGi}}));      // exclusive sidecar
  EXPECT_EQ(mem("i1"), (std::vector<Block>{{{0}, "memory", 3 * kGi}}));  // budget - sidecars so far
  EXPECT_EQ(mem("i2"), (std::vector<Block>{{{0}, "memory", 2 * kGi}}));  // exclusive init
  EXPECT_EQ(mem("a1"), (std::vector<Block>{{{0}, "memory", kGi}}));
  // Shared sidecar and shared app container: budget - sidecars - exclusive apps.
  EXPECT_EQ(mem("s2"), (std::vector<Block>{{{0}, "memory", 2 * kGi}}));
  EXPECT_EQ(mem("a2"), (std::vector<Block>{{{0}, "memory", 2 * kGi}}));
  EXPECT_EQ(Mem(state, 0).reserved, 4 * kGi);
  EXPECT_TRUE(Restart(state).ok());
}

TEST_F(PodLevelTest, HugepagesInTheBudgetGoToTheSharedPool) {
  std::vector<MachineNumaNode> machine = {{0, 8 * kGi, {{1048576, 2}}}, {1, 8 * kGi, {{1048576, 2}}}};
  auto policy = StaticPolicy::New(machine, SimpleReserved(2), &store_, kGatesOn);
  ASSERT_TRUE(policy.ok());
  MemoryState state;
  ASSERT_TRUE(policy->Start(state).ok());
  Pod pod = PodLevelPod("hp", {{"cpu", "2"}, {"memory", "2Gi"}, {"hugepages-1Gi", "1Gi"}}, {},
                        {GuaranteedContainer("excl", "1", "1Gi"), SharedContainer("shared")});
  std::optional<HintMap> hints = policy->GetPodTopologyHints(state, pod);
  ASSERT_TRUE(hints.has_value());
  EXPECT_EQ(hints->size(), 2u);
  ASSERT_TRUE(policy->AllocatePod(state, pod).ok());  // nil stored hint: default {0}
  EXPECT_EQ(GetMemory(state, "hp", "excl"), (std::vector<Block>{{{0}, "memory", kGi}}));
  EXPECT_TRUE(SameBlocks(GetMemory(state, "hp", "shared"),
                         {{{0}, "hugepages-1Gi", kGi}, {{0}, "memory", kGi}}));
  EXPECT_EQ(state.machine_state[0].number_of_assignments, 2);  // one per budget type
  EXPECT_EQ(state.machine_state[0].memory_map["hugepages-1Gi"].reserved, kGi);
  StaticPolicy fresh = *StaticPolicy::New(machine, SimpleReserved(2), &store_, kGatesOn);
  MemoryState copy = state;
  EXPECT_TRUE(fresh.Start(copy).ok());
}

struct PoolFailure {
  std::string name;
  Pod pod;
  std::string message;
};

class EmptySharedPoolTest : public PodLevelTest,
                            public ::testing::WithParamInterface<PoolFailure> {};

TEST_P(EmptySharedPoolTest, RejectedWithEmptyPodSharedPoolError) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  const Pod& pod = GetParam().pod;
  // Pod hints: an empty list per type (no possible placement).
  std::optional<HintMap> hints = policy.GetPodTopologyHints(state, pod);
  ASSERT_TRUE(hints.has_value());
  EXPECT_EQ(*hints, (HintMap{{"memory", {}}}));
  MemoryState before = state;
  absl::Status s = policy.AllocatePod(state, pod);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(AdmissionReasonOf(s), kReasonEmptyPodSharedPool);
  EXPECT_EQ(s.message(), GetParam().message);
  AdmitResult r = GetPodAdmitResult(s);
  EXPECT_EQ(r.reason, "EmptyPodSharedPoolError");
  EXPECT_EQ(r.message, GetParam().message);
  EXPECT_EQ(state, before);
}

INSTANTIATE_TEST_SUITE_P(
    PodLevel, EmptySharedPoolTest,
    ::testing::Values(
        PoolFailure{"ExclusiveAppsUseWholeBudget",
                    PodLevelPod("p", {{"cpu", "4"}, {"memory", "2Gi"}}, {},
                                {GuaranteedContainer("a1", "1", "2Gi"), SharedContainer("a2")}),
                    "pod rejected, sum of exclusive container memory requests equals pod budget, "
                    "leaving no memory for shared containers"},
        PoolFailure{"InitLargerThanBudgetMinusSidecars",
                    PodLevelPod("p", {{"cpu", "4"}, {"memory", "2Gi"}},
                                {GuaranteedContainer("s", "1", "1Gi", ContainerKind::kSidecar),
                                 GuaranteedContainer("i", "1", "2Gi", ContainerKind::kInit)},
                                {SharedContainer("a")}),
                    "pod rejected, largest exclusive init container requests 2147483648 of "
                    "memory, but only 1073741824 available"},
        PoolFailure{"SharedInitAfterSidecarsTookEverything",
                    PodLevelPod("p", {{"cpu", "4"}, {"memory", "2Gi"}},
                                {GuaranteedContainer("s", "1", "2Gi", ContainerKind::kSidecar),
                                 SharedContainer("i", ContainerKind::kInit)},
                                {SharedContainer("a")}),
                    "pod rejected, pod has shared init containers but no memory available for "
                    "them"}),
    [](const ::testing::TestParamInfo<PoolFailure>& info) { return info.param.name; });

TEST_F(PodLevelTest, NoSharedContainersMayUseTheWholeBudget) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  Pod pod = PodLevelPod("p", {{"cpu", "2"}, {"memory", "2Gi"}}, {},
                        {GuaranteedContainer("a1", "1", "1Gi"), GuaranteedContainer("a2", "1", "1Gi")});
  ASSERT_TRUE(policy.AllocatePod(state, pod).ok());
  EXPECT_EQ(GetMemory(state, "p", "a2"), (std::vector<Block>{{{0}, "memory", kGi}}));
}

TEST_F(PodLevelTest, RestartRegeneratesPodHintsAndDoesNotChargeAgain) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  Pod pod = PodLevelPod("mixed", {{"cpu", "4"}, {"memory", "4Gi"}}, {},
                        {GuaranteedContainer("excl", "1", "1Gi"), SharedContainer("shared")});
  store_.Set(TopologyHint{Mask({1}), true});
  ASSERT_TRUE(policy.AllocatePod(state, pod).ok());
  const MemoryState allocated = state;

  // Kubelet restart: new policy, no stored hints, state from the checkpoint.
  store_.Set(TopologyHint{});
  StaticPolicy restarted = NewPolicy();
  ASSERT_TRUE(restarted.Start(state).ok());
  EXPECT_EQ(state, allocated);
  // #141069: hints come from the pod blocks (4Gi on node 1), not from the first container's
  // 1Gi block, which would not match the pod request and give no hint at all.
  std::optional<HintMap> hints = restarted.GetPodTopologyHints(state, pod);
  ASSERT_TRUE(hints.has_value());
  EXPECT_EQ(*hints, (HintMap{{"memory", {{Mask({1}), true}}}}));
  // #140906: re-admission changes nothing, charges nothing.
  store_.Set(TopologyHint{Mask({1}), true});
  ASSERT_TRUE(restarted.AllocatePod(state, pod).ok());
  EXPECT_EQ(state, allocated);
  EXPECT_TRUE(restarted.notices().empty());
}

// The same restart under the kubelet versions without the fixes (1.36, 1.37.0, 1.37: kubelet/
// version.h). #141069: the first container's 1Gi block is compared with the 2Gi pod request,
// so the pod gets no memory hint. #140906: AllocatePod reserves the 2Gi again on top of the
// restored reservation; the entries are overwritten and node 1's Reserved doubles (a 4Gi pod
// would not fit node 1's 7.5Gi twice: the running pod would be rejected instead).
TEST_F(PodLevelTest, Issue140906_Issue141069_RestartWithoutTheFixes) {
  for (const char* version : {"1.36", "1.37.0", "1.37", "1.38"}) {
    const kubelet::KubeletVersion* v = kubelet::FindKubeletVersion(version);
    PolicyGates gates = kGatesOn;
    gates.behavior = v->behavior;
    StaticPolicy policy = NewPolicy();
    MemoryState state = Started(policy);
    Pod pod = PodLevelPod("mixed", {{"cpu", "4"}, {"memory", "2Gi"}}, {},
                          {GuaranteedContainer("excl", "1", "1Gi"), SharedContainer("shared")});
    store_.Set(TopologyHint{Mask({1}), true});
    ASSERT_TRUE(policy.AllocatePod(state, pod).ok());
    const MemoryState allocated = state;
    const uint64_t reserved = Mem(state, 1).reserved;

    store_.Set(TopologyHint{});
    StaticPolicy restarted = NewPolicy(gates);
    ASSERT_TRUE(restarted.Start(state).ok());
    std::optional<HintMap> hints = restarted.GetPodTopologyHints(state, pod);
    if (v->behavior.memory_pod_restore_hints_from_pod_blocks) {
      ASSERT_TRUE(hints.has_value()) << version;
      EXPECT_EQ(*hints, (HintMap{{"memory", {{Mask({1}), true}}}})) << version;
    } else {
      EXPECT_FALSE(hints.has_value()) << version << ": k/k #141069, no hint";
    }
    store_.Set(TopologyHint{Mask({1}), true});
    ASSERT_TRUE(restarted.AllocatePod(state, pod).ok()) << version;
    if (v->behavior.memory_restore_keeps_pod_blocks) {
      EXPECT_EQ(state, allocated) << version;
    } else {
      EXPECT_EQ(Mem(state, 1).reserved, 2 * reserved) << version << ": k/k #140906, charged twice";
      // The next start finds a machine state that the assignments do not explain.
      EXPECT_FALSE(Restart(state).ok()) << version;
    }
  }
}

TEST_F(PodLevelTest, IncompleteCheckpointIsDroppedAtStartAndReallocated) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  // A crash after the pod entry was written, before container entries and machine state.
  state.SetPodMemoryBlocks("seed", {Block{{1}, "memory", 2 * kGi}});
  StaticPolicy restarted = NewPolicy();
  ASSERT_TRUE(restarted.Start(state).ok());
  EXPECT_EQ(state.GetPodMemoryBlocks("seed"), nullptr);
  ASSERT_EQ(restarted.notices().size(), 1u);
  EXPECT_NE(restarted.notices()[0].find("#141993"), std::string::npos);

  Pod pod = SeedPod();
  std::optional<HintMap> hints = restarted.GetPodTopologyHints(state, pod);
  ASSERT_TRUE(hints.has_value());
  EXPECT_EQ((*hints)["memory"].size(), 3u);  // calculated afresh
  ASSERT_TRUE(restarted.AllocatePod(state, pod).ok());
  EXPECT_EQ(GetMemory(state, "seed", "c1"), (std::vector<Block>{{{0}, "memory", 2 * kGi}}));
  EXPECT_EQ(Mem(state, 0).reserved, 2 * kGi);
  EXPECT_TRUE(Restart(state).ok());
}

TEST_F(PodLevelTest, IncompleteEntryIsNotTreatedAsAllocated) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  state.SetPodMemoryBlocks("seed", {Block{{1}, "memory", 2 * kGi}});
  Pod pod = SeedPod();
  // Not regenerated from the incomplete pod entry...
  std::optional<HintMap> hints = policy.GetPodTopologyHints(state, pod);
  ASSERT_TRUE(hints.has_value());
  EXPECT_EQ((*hints)["memory"].size(), 3u);
  // ...and AllocatePod allocates it instead of skipping it.
  store_.Set(TopologyHint{Mask({1}), true});
  ASSERT_TRUE(policy.AllocatePod(state, pod).ok());
  EXPECT_EQ(GetMemory(state, "seed", "c2"), (std::vector<Block>{{{1}, "memory", 2 * kGi}}));
  EXPECT_EQ(GetPodMemory(state, "seed"), (std::vector<Block>{{{1}, "memory", 2 * kGi}}));
  EXPECT_EQ(Mem(state, 1).reserved, 2 * kGi);  // charged exactly once
  EXPECT_EQ(policy.notices().size(), 1u);
  EXPECT_TRUE(Restart(state).ok());
}

TEST_F(PodLevelTest, RemovingFromAnIncompleteEntryReleasesNothing) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  state.SetPodMemoryBlocks("seed", {Block{{0}, "memory", 2 * kGi}});  // never charged
  policy.RemoveContainer(state, "seed", "c1");
  EXPECT_EQ(state.GetPodMemoryBlocks("seed"), nullptr);
  EXPECT_EQ(state.machine_state, policy.DefaultMachineState());
  EXPECT_EQ(policy.notices().size(), 1u);
}

TEST_F(PodLevelTest, RemoveContainerReleasesTheBudgetAfterTheLastContainer) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  Pod pod = PodLevelPod("mixed", {{"cpu", "4"}, {"memory", "4Gi"}}, {},
                        {GuaranteedContainer("excl", "1", "1Gi"), SharedContainer("shared")});
  store_.Set(TopologyHint{Mask({0}), true});
  ASSERT_TRUE(policy.AllocatePod(state, pod).ok());

  policy.RemoveContainer(state, "mixed", "excl");
  EXPECT_EQ(state.GetMemoryBlocks("mixed", "excl"), nullptr);
  EXPECT_NE(state.GetPodMemoryBlocks("mixed"), nullptr);
  EXPECT_EQ(Mem(state, 0).reserved, 4 * kGi);  // nothing released yet
  EXPECT_TRUE(Restart(state).ok());

  policy.RemoveContainer(state, "mixed", "shared");
  EXPECT_TRUE(state.assignments.empty());
  EXPECT_TRUE(state.pod_assignments.empty());
  EXPECT_EQ(state.machine_state, policy.DefaultMachineState());
}

TEST_F(PodLevelTest, GateOffAtRestartValidatesContainerBlocks) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  ASSERT_TRUE(policy.AllocatePod(state, SeedPod()).ok());
  // With PodLevelResourceManagers off the pod entries are not loaded; the two 2Gi shared-pool
  // blocks then do not add up to the 2Gi the machine state holds.
  absl::Status s = Restart(state, PolicyGates{true, false});
  EXPECT_EQ(s.message(), "[memorymanager] the expected machine state is different from the real one");
}

TEST_F(PodLevelTest, BurstablePodLevelPodsGetNothing) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  Pod pod = SeedPod();
  pod.resources->limits["memory"] = Quantity::Parse("4Gi").value();  // request != limit
  EXPECT_FALSE(policy.GetPodTopologyHints(state, pod).has_value());
  MemoryState before = state;
  EXPECT_TRUE(policy.AllocatePod(state, pod).ok());
  EXPECT_EQ(state, before);
}

TEST_F(PodLevelTest, CpuOnlyBudgetPinsNothing) {
  // A pod-level stanza without memory: no memory budget to pin (and, per KEP-2837, the pod is
  // not Guaranteed either).
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  Pod pod = PodLevelPod("cpuonly", {{"cpu", "2"}}, {}, {GuaranteedContainer("c", "1", "1Gi")});
  EXPECT_FALSE(policy.GetPodTopologyHints(state, pod).has_value());
  MemoryState before = state;
  EXPECT_TRUE(policy.AllocatePod(state, pod).ok());
  EXPECT_EQ(state, before);
}

TEST_F(PodLevelTest, BudgetThatFitsNowhereFailsWithTheKubeletText) {
  StaticPolicy policy = NewPolicy();
  MemoryState state = Started(policy);
  Pod pod = PodLevelPod("huge", {{"cpu", "2"}, {"memory", "20Gi"}}, {}, {SharedContainer("c")});
  std::optional<HintMap> hints = policy.GetPodTopologyHints(state, pod);
  ASSERT_TRUE(hints.has_value());
  EXPECT_TRUE(hints->empty());
  MemoryState before = state;
  absl::Status s = policy.AllocatePod(state, pod);
  EXPECT_EQ(s.message(),
            "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough "
            "memory is available");
  EXPECT_EQ(GetPodAdmitResult(s).reason, kReasonUnexpectedAdmission);
  EXPECT_EQ(state, before);
}

}  // namespace
}  // namespace podtopo::memorymanager
