#include "topologymanager/numa_info.h"

#include "gtest/gtest.h"

namespace podtopo::topologymanager {
namespace {

BitMask M(std::initializer_list<int> bits) { return *NewBitMask(bits); }

// The kubelet's 4-node test distances.
NUMAInfo Four() {
  return NUMAInfo({0, 1, 2, 3}, {{0, {10, 11, 12, 12}},
                                 {1, {11, 10, 12, 12}},
                                 {2, {12, 12, 10, 11}},
                                 {3, {12, 12, 11, 10}}});
}

TEST(NUMAInfoTest, CreateKeepsDistancesOnlyWithPreferClosest) {
  std::vector<NUMANode> topo = {{0, {{10, 11}}}, {1, {{11, 10}}}};
  auto with = NUMAInfo::Create(topo, true);
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_EQ(with->nodes(), (std::vector<int>{0, 1}));
  EXPECT_EQ(with->distances().at(1), (std::vector<uint64_t>{11, 10}));
  auto without = NUMAInfo::Create(topo, false);
  ASSERT_TRUE(without.ok());
  EXPECT_TRUE(without->distances().empty());
  EXPECT_EQ(without->DefaultAffinityMask(), M({0, 1}));
}

TEST(NUMAInfoTest, CreateErrors) {
  EXPECT_EQ(NUMAInfo::Create({{0, std::nullopt}}, true).status().message(),
            "error getting NUMA distances from cadvisor");
  // Without prefer-closest a missing row is fine (the kubelet does not read it).
  EXPECT_TRUE(NUMAInfo::Create({{0, std::nullopt}}, false).ok());
  EXPECT_EQ(NUMAInfo::Create({{64, std::nullopt}}, false).status().message(),
            "NUMA node 64: bit number must be in range 0-63");
  EXPECT_EQ(NUMAInfo::Create({{1, std::nullopt}, {1, std::nullopt}}, false).status().message(),
            "NUMA node 1 is listed twice");
  // Non-sequential ids: rows are indexed by id, so node 2 needs three entries.
  EXPECT_FALSE(NUMAInfo::Create({{0, {{10, 11}}}, {2, {{11, 10}}}}, true).ok());
  EXPECT_TRUE(NUMAInfo::Create({{0, {{10, 0, 11}}}, {2, {{11, 0, 10}}}}, true).ok());
}

TEST(NUMAInfoTest, NarrowestAndClosest) {
  NUMAInfo info = Four();
  EXPECT_EQ(info.Narrowest(M({0, 1}), M({2})), M({2}));
  EXPECT_EQ(info.Narrowest(M({1}), M({2})), M({1}));
  // Different counts: narrowest regardless of distance.
  EXPECT_EQ(info.Closest(M({0, 2}), M({1, 2, 3})), M({0, 2}));
  // Same count: lower average distance ({2,3}: (10+11+11+10)/4 = 10.5 < {0,2}: 11).
  EXPECT_EQ(info.Closest(M({0, 2}), M({2, 3})), M({2, 3}));
  EXPECT_EQ(info.Closest(M({2, 3}), M({0, 2})), M({2, 3}));
  // Equal averages: the numerically smaller mask.
  EXPECT_EQ(info.Closest(M({2, 3}), M({0, 1})), M({0, 1}));
  EXPECT_DOUBLE_EQ(info.AverageDistance(M({0, 2})), 11.0);
  EXPECT_DOUBLE_EQ(info.AverageDistance(M({0, 1, 2})), (30.0 + 22 + 48) / 9);
  EXPECT_EQ(info.AverageDistance(M({})), 0.0);
}

TEST(NUMAInfoTest, AsymmetricRowsUseRowOfFirstIndex) {
  // The 8-node table's row 7 has d[7][6] = 13 while d[6][7] = 11: both are summed.
  NUMAInfo info({6, 7}, {{6, {0, 0, 0, 0, 0, 0, 10, 11}}, {7, {0, 0, 0, 0, 0, 0, 13, 10}}});
  EXPECT_DOUBLE_EQ(info.AverageDistance(M({6, 7})), (10.0 + 11 + 13 + 10) / 4);
}

}  // namespace
}  // namespace podtopo::topologymanager
