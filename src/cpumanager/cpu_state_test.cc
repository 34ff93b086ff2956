#include "cpumanager/cpu_state.h"

#include "gtest/gtest.h"

namespace podtopo::cpumanager {
namespace {

TEST(CpuStateTest, ContainerEntriesAndDefault) {
  CpuState s;
  s.SetDefaultCpuSet(CpuSet::Range(0, 7));
  EXPECT_FALSE(s.GetCpuSet("p", "c").has_value());
  EXPECT_EQ(s.GetCpuSetOrDefault("p", "c"), CpuSet::Range(0, 7));
  s.SetCpuSet("p", "c", CpuSet{2, 6});
  ASSERT_TRUE(s.GetCpuSet("p", "c").has_value());
  EXPECT_EQ(*s.GetCpuSet("p", "c"), (CpuSet{2, 6}));
  EXPECT_EQ(s.GetCpuSetOrDefault("p", "c"), (CpuSet{2, 6}));
  EXPECT_TRUE(s.HasContainerEntries("p"));
  // An empty cpuset is still an entry.
  s.SetCpuSet("p", "empty", CpuSet{});
  EXPECT_TRUE(s.GetCpuSet("p", "empty").has_value());
  EXPECT_EQ(s.GetCpuSetOrDefault("p", "empty"), CpuSet{});
}

TEST(CpuStateTest, DeleteDropsPodWithLastContainer) {
  CpuState s;
  s.SetCpuSet("p", "a", CpuSet{1});
  s.SetCpuSet("p", "b", CpuSet{2});
  s.Delete("p", "a");
  EXPECT_EQ(s.GetCpuAssignments().count("p"), 1u);
  s.Delete("p", "b");
  EXPECT_EQ(s.GetCpuAssignments().count("p"), 0u);
  EXPECT_FALSE(s.HasContainerEntries("p"));
  s.Delete("missing", "x");  // no-op
  EXPECT_TRUE(s.GetCpuAssignments().empty());
}

TEST(CpuStateTest, PodEntries) {
  CpuState s;
  EXPECT_FALSE(s.GetPodCpuSet("p").has_value());
  s.SetPodCpuSet("p", CpuSet{2, 8});
  s.SetCpuSet("p", "c", CpuSet{2});
  s.SetCpuSet("q", "c", CpuSet{3});
  EXPECT_EQ(*s.GetPodCpuSet("p"), (CpuSet{2, 8}));
  s.DeletePod("p");
  EXPECT_FALSE(s.GetPodCpuSet("p").has_value());
  EXPECT_FALSE(s.GetCpuSet("p", "c").has_value());
  EXPECT_TRUE(s.GetCpuSet("q", "c").has_value());
}

TEST(CpuStateTest, IterationIsSorted) {
  CpuState s;
  s.SetCpuSet("pod-b", "z", CpuSet{1});
  s.SetCpuSet("pod-a", "y", CpuSet{2});
  s.SetCpuSet("pod-a", "x", CpuSet{3});
  std::vector<std::string> seen;
  for (const auto& [pod, containers] : s.GetCpuAssignments()) {
    for (const auto& [name, cpus] : containers) seen.push_back(pod + "/" + name);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"pod-a/x", "pod-a/y", "pod-b/z"}));
}

TEST(CpuStateTest, ClearAndEquality) {
  CpuState a, b;
  a.SetDefaultCpuSet(CpuSet{1});
  a.SetPodCpuSet("p", CpuSet{2});
  EXPECT_NE(a, b);
  a.ClearState();
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace podtopo::cpumanager
