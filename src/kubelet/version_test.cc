#include "kubelet/version.h"

#include <string>

#include "gtest/gtest.h"

namespace podtopo::kubelet {
namespace {

TEST(KubeletVersionTest, KnownVersionsAndTheVPrefix) {
  for (const char* name : {"1.36", "1.37.0", "1.37", "1.38"}) {
    ASSERT_NE(FindKubeletVersion(name), nullptr) << name;
    EXPECT_EQ(FindKubeletVersion(std::string("v") + name), FindKubeletVersion(name));
  }
  EXPECT_EQ(FindKubeletVersion("1.39"), nullptr);
  EXPECT_EQ(FindKubeletVersion(""), nullptr);
}

TEST(KubeletVersionTest, UnknownVersionNamesTheKnownOnes) {
  absl::StatusOr<const KubeletVersion*> v = ParseKubeletVersion("1.3");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(v.status().message().find("unknown kubelet version \"1.3\": podtopo knows 1.36, "
                                      "1.37.0, 1.37, 1.38"),
            std::string::npos)
      << v.status();
}

// The default is the newest released version: 1.38 is not released on 2026-12-04.
TEST(KubeletVersionTest, DefaultIsTheNewestReleased) {
  const KubeletVersion& d = DefaultKubeletVersion();
  EXPECT_TRUE(d.released);
  bool after = false;
  for (const KubeletVersion& v : KubeletVersions()) {
    if (after) EXPECT_FALSE(v.released) << v.name << " is released but newer than " << d.name;
    if (&v == &d) after = true;
  }
  EXPECT_EQ(d.name, "1.37");
}

// Every versioned behaviour is described once, and a fix, once carried, is never dropped by a
// newer version (the table is ordered oldest first).
TEST(KubeletVersionTest, FixesAreNeverDroppedByANewerVersion) {
  for (const VersionedBehavior& b : VersionedBehaviors()) {
    bool carried = false;
    for (const KubeletVersion& v : KubeletVersions()) {
      if (carried) EXPECT_TRUE(v.behavior.*b.field) << b.id << " dropped by " << v.name;
      carried = carried || v.behavior.*b.field;
    }
    EXPECT_EQ(FindVersionedBehavior(b.field), &b);
  }
  // The fixed behaviour (podtopo as the allocator) has every fix.
  const Behavior fixed;
  for (const VersionedBehavior& b : VersionedBehaviors()) EXPECT_TRUE(fixed.*b.field) << b.id;
}

TEST(KubeletVersionTest, Issue140989_FixedInNamesTheVersions) {
  EXPECT_EQ(FixedIn(&Behavior::cpu_restore_keeps_pod_cpus), "1.38");
  EXPECT_EQ(DescribeVersioned(&Behavior::cpu_restore_keeps_pod_cpus),
            "k/k #140989, fixed by k/k #141041 in 1.38");
  EXPECT_EQ(FixedIn(&Behavior::strict_reservation_keeps_default_set),
            "none of the known versions");
}

// Both are listed in CHANGELOG-1.38 v1.38.0-alpha.1 ("since v1.37.0") and nowhere earlier.
TEST(KubeletVersionTest, Issue140688_Issue141237_FixedIn138) {
  EXPECT_EQ(FixedIn(&Behavior::distribute_across_cores_by_core_topology), "1.38");
  EXPECT_EQ(DescribeVersioned(&Behavior::distribute_across_cores_by_core_topology),
            "k/k #140688, fixed by k/k #140766 in 1.38");
  EXPECT_EQ(FixedIn(&Behavior::distribute_keeps_best_numa_combination), "1.38");
  EXPECT_EQ(DescribeVersioned(&Behavior::distribute_keeps_best_numa_combination),
            "k/k #141237, fixed by k/k #141238 in 1.38");
}

TEST(KubeletVersionTest, WithoutRestartFixesOnlyTheRestartFields) {
  const Behavior b = FindKubeletVersion("1.37.0")->behavior.WithoutRestart();
  EXPECT_TRUE(b.cpu_restore_keeps_pod_cpus);
  EXPECT_TRUE(b.memory_restore_keeps_pod_blocks);
  EXPECT_TRUE(b.memory_pod_restore_hints_from_pod_blocks);
  EXPECT_EQ(b.distribute_min_numas_from_hint,
            FindKubeletVersion("1.37.0")->behavior.distribute_min_numas_from_hint);
}

}  // namespace
}  // namespace podtopo::kubelet
