// The kubelet's Static policy unit-test tables (../shared/vectors/memory_cases.json):
// TestStaticPolicyNew, TestStaticPolicyStart, TestStaticPolicyAllocate (+ init / restartable
// init variants), TestStaticPolicyRemoveContainer, TestStaticPolicyGetTopologyHints and
// Test_getPodRequestedResources. Machine states are compared with areMachineStatesEqual
// semantics, assignments with block order ignored, hint lists in order.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memorymanager/memory_state.h"
#include "memorymanager/static_policy.h"
#include "memorymanager/test_util.h"
#include "testing/testing.h"

namespace podtopo::memorymanager {
namespace {

using namespace testutil;  // NOLINT

MemoryState StateFromCase(const json& c) {
  MemoryState state;
  state.machine_state = MachineStateFromJson(c.value("machine_state", json()));
  state.assignments = AssignmentsFromJson(c.value("assignments", json()));
  return state;
}

void ExpectMachineState(const NumaNodeMap& got, const json& want) {
  NumaNodeMap expected = MachineStateFromJson(want);
  std::string why;
  EXPECT_TRUE(AreMachineStatesEqual(got, expected, &why))
      << why << "\ngot:\n" << MachineStateString(got) << "want:\n" << MachineStateString(expected);
}

void ExpectAssignments(const ContainerMemoryAssignments& got, const json& want) {
  ContainerMemoryAssignments expected = AssignmentsFromJson(want);
  EXPECT_TRUE(SameAssignments(got, expected)) << [&] {
    std::string s = "got:\n";
    for (const auto& [pod, cs] : got)
      for (const auto& [c, b] : cs) s += pod + "/" + c + " " + BlocksString(b) + "\n";
    s += "want:\n";
    for (const auto& [pod, cs] : expected)
      for (const auto& [c, b] : cs) s += pod + "/" + c + " " + BlocksString(b) + "\n";
    return s;
  }();
}

// --- TestStaticPolicyNew ---------------------------------------------------------------------

class NewPolicyVectors : public ::testing::TestWithParam<VectorCase> {};

TEST_P(NewPolicyVectors, Matches) {
  const json& c = GetParam().data;
  FakeAffinityStore store;
  auto policy = StaticPolicy::New({}, SystemReservedFromJson(c["system_reserved"]), &store,
                                  PolicyGates{});
  if (c["expected_error"].is_null()) {
    EXPECT_TRUE(policy.ok()) << policy.status();
  } else {
    ASSERT_FALSE(policy.ok());
    EXPECT_EQ(policy.status().message(), c["expected_error"].get<std::string>());
  }
}

INSTANTIATE_TEST_SUITE_P(MemoryCases, NewPolicyVectors, ::testing::ValuesIn(CasesOf("new_policy")),
                         ParamName);

// --- TestStaticPolicyStart -------------------------------------------------------------------

class StartVectors : public ::testing::TestWithParam<VectorCase> {};

TEST_P(StartVectors, Matches) {
  const json& c = GetParam().data;
  FakeAffinityStore store;
  auto policy = StaticPolicy::New(MachineInfoFromJson(c["machine_info"]),
                                  SystemReservedFromJson(c["system_reserved"]), &store,
                                  PolicyGates{});
  ASSERT_TRUE(policy.ok()) << policy.status();
  MemoryState state = StateFromCase(c);
  absl::Status s = policy->Start(state);
  if (!c["expected_error"].is_null()) {
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), c["expected_error"].get<std::string>());
    return;
  }
  ASSERT_TRUE(s.ok()) << s;
  ExpectMachineState(state.machine_state, c["expected_machine_state"]);
  ExpectAssignments(state.assignments, c["expected_assignments"]);
}

INSTANTIATE_TEST_SUITE_P(MemoryCases, StartVectors, ::testing::ValuesIn(CasesOf("start")),
                         ParamName);

// --- TestStaticPolicyAllocate* ---------------------------------------------------------------

class AllocateVectors : public ::testing::TestWithParam<VectorCase> {};

TEST_P(AllocateVectors, Matches) {
  const json& c = GetParam().data;
  FakeAffinityStore store(HintFromJson(c["topology_hint"]));
  auto policy = StaticPolicy::New(MachineInfoFromJson(c.value("machine_info", json())),
                                  SystemReservedFromJson(c["system_reserved"]), &store,
                                  PolicyGates{});
  ASSERT_TRUE(policy.ok()) << policy.status();
  if (!c["initial_reusable_memory"].is_null()) {
    StaticPolicy::ReusableMemory reusable;
    for (const auto& [pod, masks] : c["initial_reusable_memory"].items()) {
      auto& entry = reusable[pod];
      for (const auto& [mask, types] : masks.items()) {
        for (const auto& [type, size] : types.items()) entry[mask][type] = size.get<uint64_t>();
      }
    }
    policy->SetReusableMemoryForTesting(reusable);
  }
  Pod pod = PodFromJson(c["pod"]);
  // The pod model's QoS agrees with the class the kubelet test computed.
  EXPECT_STREQ(QosClassName(GetPodQos(pod)), c["pod"]["qos"].get<std::string>().c_str());

  MemoryState state = StateFromCase(c);
  const MemoryState before = state;
  for (const json& name : c["allocate_order"]) {
    const Container* container = pod.FindContainer(name.get<std::string>());
    ASSERT_NE(container, nullptr) << name;
    absl::Status s = policy->Allocate(state, pod, *container);
    if (!c["expected_error"].is_null()) {
      ASSERT_FALSE(s.ok()) << name;
      EXPECT_EQ(s.message(), c["expected_error"].get<std::string>());
      // podtopo's guarantee on top of the kubelet's: a failed Allocate changes nothing.
      EXPECT_EQ(state, before);
    } else {
      ASSERT_TRUE(s.ok()) << name << ": " << s;
    }
  }
  if (!c["expected_error"].is_null()) return;
  ExpectAssignments(state.assignments, c["expected_assignments"]);
  ExpectMachineState(state.machine_state, c["expected_machine_state"]);
}

INSTANTIATE_TEST_SUITE_P(MemoryCases, AllocateVectors, ::testing::ValuesIn(CasesOf("allocate")),
                         ParamName);

// --- TestStaticPolicyRemoveContainer ---------------------------------------------------------

class RemoveContainerVectors : public ::testing::TestWithParam<VectorCase> {};

TEST_P(RemoveContainerVectors, Matches) {
  const json& c = GetParam().data;
  FakeAffinityStore store;
  auto policy = StaticPolicy::New({}, SystemReservedFromJson(c["system_reserved"]), &store,
                                  PolicyGates{});
  ASSERT_TRUE(policy.ok()) << policy.status();
  MemoryState state = StateFromCase(c);
  policy->RemoveContainer(state, c["remove"]["pod_uid"].get<std::string>(),
                          c["remove"]["container_name"].get<std::string>());
  ExpectAssignments(state.assignments, c["expected_assignments"]);
  ExpectMachineState(state.machine_state, c["expected_machine_state"]);
}

INSTANTIATE_TEST_SUITE_P(MemoryCases, RemoveContainerVectors,
                         ::testing::ValuesIn(CasesOf("remove_container")), ParamName);

// --- TestStaticPolicyGetTopologyHints --------------------------------------------------------

class GetTopologyHintsVectors : public ::testing::TestWithParam<VectorCase> {};

TEST_P(GetTopologyHintsVectors, Matches) {
  const json& c = GetParam().data;
  FakeAffinityStore store;
  auto policy = StaticPolicy::New({}, SystemReservedFromJson(c["system_reserved"]), &store,
                                  PolicyGates{});
  ASSERT_TRUE(policy.ok()) << policy.status();
  MemoryState state = StateFromCase(c);
  Pod pod = PodFromJson(c["pod"]);
  std::optional<HintMap> hints = policy->GetTopologyHints(state, pod, pod.containers[0]);
  if (c["expected_hints"].is_null()) {
    EXPECT_FALSE(hints.has_value());
    return;
  }
  ASSERT_TRUE(hints.has_value());
  HintMap expected;
  for (const auto& [type, list] : c["expected_hints"].items()) {
    auto& out = expected[type];
    for (const json& h : list) out.push_back(HintFromJson(h));
  }
  EXPECT_EQ(*hints, expected);
}

INSTANTIATE_TEST_SUITE_P(MemoryCases, GetTopologyHintsVectors,
                         ::testing::ValuesIn(CasesOf("get_topology_hints")), ParamName);

// --- Test_getPodRequestedResources -----------------------------------------------------------

class PodRequestedResourcesVectors : public ::testing::TestWithParam<VectorCase> {};

TEST_P(PodRequestedResourcesVectors, Matches) {
  const json& c = GetParam().data;
  Pod pod = PodFromJson(c["pod"]);
  absl::StatusOr<RequestedResources> got = GetPodRequestedResources(pod, false);
  ASSERT_TRUE(got.ok()) << got.status();
  RequestedResources expected;
  for (const auto& [type, size] : c["expected"].items()) expected[type] = size.get<uint64_t>();
  EXPECT_EQ(*got, expected);
}

INSTANTIATE_TEST_SUITE_P(MemoryCases, PodRequestedResourcesVectors,
                         ::testing::ValuesIn(CasesOf("get_pod_requested_resources")), ParamName);

// Every case of the file is run by exactly one suite above (or reserved_memory_test.cc).
TEST(MemoryCasesCoverage, AllOpsKnown) {
  const json all = testing::LoadVectors("memory_cases.json");
  const std::vector<std::string> ops = {
      "new_policy",         "start",   "allocate",    "remove_container",
      "get_topology_hints", "get_pod_requested_resources", "validate_reserved_memory",
      "convert_reserved",   "get_system_reserved_memory"};
  int count = 0;
  for (const json& c : all.at("cases")) {
    EXPECT_NE(std::find(ops.begin(), ops.end(), c.at("op").get<std::string>()), ops.end())
        << c.at("id");
    ++count;
  }
  EXPECT_EQ(count, 59);
}

}  // namespace
}  // namespace podtopo::memorymanager
