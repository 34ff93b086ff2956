#include "memorymanager/memory_state.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memorymanager/test_util.h"

namespace podtopo::memorymanager {
namespace {

using namespace testutil;  // NOLINT

TEST(HugePageResourceName, BinarySiOfPageSize) {
  EXPECT_EQ(HugePageResourceName(2048), "hugepages-2Mi");
  EXPECT_EQ(HugePageResourceName(1048576), "hugepages-1Gi");
  EXPECT_EQ(HugePageResourceName(64), "hugepages-64Ki");
}

TEST(IsMemoryResourceName, MemoryAndHugepagesOnly) {
  EXPECT_TRUE(IsMemoryResourceName("memory"));
  EXPECT_TRUE(IsMemoryResourceName("hugepages-2Mi"));
  EXPECT_FALSE(IsMemoryResourceName("cpu"));
  EXPECT_FALSE(IsMemoryResourceName("hugepages"));
}

TEST(DefaultMachineState, SubtractsReservedAndHugepages) {
  std::vector<MachineNumaNode> nodes = {{0, 3 * kGi, {{1048576, 1}}}, {1, 2 * kGi, {{2048, 10}}}};
  SystemReservedMemory reserved = {{0, {{"memory", 512 * kMi}}},
                                   {1, {{"memory", 256 * kMi}, {"hugepages-2Mi", 4 * kMi}}}};
  NumaNodeMap ms = DefaultMachineState(nodes, reserved);
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].cells, std::vector<int>{0});
  EXPECT_EQ(ms[0].number_of_assignments, 0);
  EXPECT_EQ(ms[0].memory_map["memory"],
            (MemoryTable{3 * kGi, 512 * kMi, 3 * kGi - 512 * kMi - kGi, 0,
                         3 * kGi - 512 * kMi - kGi}));
  EXPECT_EQ(ms[0].memory_map["hugepages-1Gi"], (MemoryTable{kGi, 0, kGi, 0, kGi}));
  EXPECT_EQ(ms[1].memory_map["hugepages-2Mi"],
            (MemoryTable{20 * kMi, 4 * kMi, 16 * kMi, 0, 16 * kMi}));
  EXPECT_EQ(ms[1].memory_map["memory"].allocatable, 2 * kGi - 256 * kMi - 20 * kMi);
}

TEST(DefaultMachineState, UnderflowWrapsLikeGoUint64) {
  NumaNodeMap ms = DefaultMachineState({{0, kGi, {{1048576, 1}}}}, {{0, {{"memory", 1}}}});
  EXPECT_EQ(ms[0].memory_map["memory"].allocatable, ~uint64_t{0});  // 1Gi - 1 - 1Gi
  EXPECT_EQ(ms[0].memory_map["memory"].free, ~uint64_t{0});
}

TEST(MachineNumaNodesFromTopology, IncludesCpuLessNodesAndDerivesPageSizes) {
  NodeTopology topo;
  topo.source = "test";
  topo.numa_nodes.push_back(NumaNode{0, 8 * kGi, {{"hugepages-2Mi", 64 * kMi}}, {}});
  topo.numa_nodes.push_back(NumaNode{1, 4 * kGi, {{"hugepages-1Gi", 2 * kGi}}, {}});  // CPU-less
  auto nodes = MachineNumaNodesFromTopology(topo);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].id, 0);
  EXPECT_EQ((*nodes)[0].memory, 8 * kGi);
  ASSERT_EQ((*nodes)[0].hugepages.size(), 1u);
  EXPECT_EQ((*nodes)[0].hugepages[0].page_size_kib, 2048u);
  EXPECT_EQ((*nodes)[0].hugepages[0].num_pages, 32u);
  EXPECT_EQ((*nodes)[1].hugepages[0].page_size_kib, 1048576u);
  EXPECT_EQ((*nodes)[1].hugepages[0].num_pages, 2u);
  NumaNodeMap ms = DefaultMachineState(*nodes, {});
  EXPECT_EQ(ms[1].memory_map["hugepages-1Gi"].total, 2 * kGi);
  EXPECT_EQ(ms[1].memory_map["memory"].allocatable, 2 * kGi);
}

TEST(MachineNumaNodesFromTopology, BadHugepageNamesAreErrors) {
  NodeTopology topo;
  topo.source = "topo.json";
  topo.numa_nodes.push_back(NumaNode{3, kGi, {{"hugepages-huge", kGi}}, {}});
  auto nodes = MachineNumaNodesFromTopology(topo);
  ASSERT_FALSE(nodes.ok());
  EXPECT_NE(nodes.status().message().find("topo.json: NUMA node 3"), std::string::npos)
      << nodes.status();
  topo.numa_nodes[0].hugepages = {{"hugepages-2Mi", 3 * kMi}};  // not whole pages
  EXPECT_FALSE(MachineNumaNodesFromTopology(topo).ok());
  topo.numa_nodes[0].hugepages = {{"hugepages-100", 1000}};  // not a multiple of 1Ki
  EXPECT_FALSE(MachineNumaNodesFromTopology(topo).ok());
}

NumaNodeMap TwoNodeGroup(uint64_t free0, uint64_t free1) {
  NumaNodeMap ms;
  for (int id : {0, 1}) {
    NumaNodeState ns;
    ns.number_of_assignments = 1;
    ns.cells = {0, 1};
    uint64_t free = id == 0 ? free0 : free1;
    ns.memory_map["memory"] = MemoryTable{2 * kGi, 0, 2 * kGi, 2 * kGi - free, free};
    ms[id] = ns;
  }
  return ms;
}

TEST(AreMachineStatesEqual, ComparesFreeAndReservedAsGroupSums) {
  // Same totals over the {0,1} group, distributed differently: equal.
  EXPECT_TRUE(AreMachineStatesEqual(TwoNodeGroup(kGi, 0), TwoNodeGroup(0, kGi)));
  std::string why;
  EXPECT_FALSE(AreMachineStatesEqual(TwoNodeGroup(kGi, 0), TwoNodeGroup(0, 0), &why));
  EXPECT_NE(why.find("free"), std::string::npos) << why;
}

TEST(AreMachineStatesEqual, CellsAsSetsAndStrictFields) {
  NumaNodeMap a = TwoNodeGroup(0, 0);
  NumaNodeMap b = a;
  b[0].cells = {1, 0};
  EXPECT_TRUE(AreMachineStatesEqual(a, b));
  b = a;
  b[1].number_of_assignments = 2;
  EXPECT_FALSE(AreMachineStatesEqual(a, b));
  b = a;
  b[1].memory_map["memory"].allocatable--;
  EXPECT_FALSE(AreMachineStatesEqual(a, b));
  b = a;
  b[1].memory_map["hugepages-2Mi"] = MemoryTable{};
  EXPECT_FALSE(AreMachineStatesEqual(a, b));
  b = a;
  b.erase(1);
  EXPECT_FALSE(AreMachineStatesEqual(a, b));
}

TEST(MemoryState, DistinguishesMissingFromEmptyEntries) {
  MemoryState s;
  EXPECT_EQ(s.GetMemoryBlocks("p", "c"), nullptr);
  s.SetMemoryBlocks("p", "c", {});
  ASSERT_NE(s.GetMemoryBlocks("p", "c"), nullptr);
  EXPECT_TRUE(s.GetMemoryBlocks("p", "c")->empty());
  EXPECT_EQ(s.ContainerEntryCount("p"), 1u);
  s.Delete("p", "c");
  EXPECT_EQ(s.GetMemoryBlocks("p", "c"), nullptr);
  EXPECT_TRUE(s.assignments.empty());  // the empty pod map goes too
  s.SetPodMemoryBlocks("p", {Block{{0}, "memory", 1}});
  s.SetMemoryBlocks("p", "c", {});
  s.DeletePod("p");
  EXPECT_EQ(s.GetPodMemoryBlocks("p"), nullptr);
  EXPECT_EQ(s.ContainerEntryCount("p"), 0u);
}

TEST(SameBlocks, IgnoresOrderButNotMultiplicity) {
  Block a{{0}, "memory", 1}, b{{0}, "hugepages-1Gi", 2};
  EXPECT_TRUE(SameBlocks({a, b}, {b, a}));
  EXPECT_FALSE(SameBlocks({a, a}, {a, b}));
  EXPECT_FALSE(SameBlocks({a}, {a, a}));
}

}  // namespace
}  // namespace podtopo::memorymanager
