#include "topologymanager/bitmask.h"

#include <vector>

#include "gtest/gtest.h"
#include "testing/property.h"
#include "topologymanager/topology_hint.h"

namespace podtopo::topologymanager {
namespace {

BitMask M(std::initializer_list<int> bits) { return *NewBitMask(bits); }

TEST(BitMaskTest, NewAndString) {
  EXPECT_EQ(NewEmptyBitMask().String(), "00");
  EXPECT_EQ(M({0}).String(), "01");
  EXPECT_EQ(M({1}).String(), "10");
  EXPECT_EQ(M({0, 1}).String(), "11");
  // The width quirk: value > 1<<shift picks width shift+2.
  EXPECT_EQ(M({2}).String(), "100");
  EXPECT_EQ(M({0, 2}).String(), "0101");
  EXPECT_EQ(BitMask::FromUint64(16).String(), "10000");
  EXPECT_EQ(BitMask::FromUint64(17).String(), "010001");
  BitMask full;
  full.Fill();
  EXPECT_EQ(full.String(), std::string(64, '1'));
  EXPECT_EQ(M({63}).String(), "1" + std::string(63, '0'));
}

TEST(BitMaskTest, RangeErrors) {
  auto bad = NewBitMask({0, 64});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "bit number must be in range 0-63");
  EXPECT_FALSE(NewBitMask({-1}).ok());
  BitMask m = M({0});
  EXPECT_EQ(m.Add({1, 64}).message(), "bit number must be in range 0-63");
  EXPECT_EQ(m.String(), "01");  // unchanged
  EXPECT_EQ(m.Remove({-1, 0}).message(), "bit number must be in range 0-63");
  EXPECT_EQ(m.String(), "01");
  EXPECT_TRUE(m.Remove({0}).ok());
  EXPECT_TRUE(m.IsEmpty());
}

TEST(BitMaskTest, AndOrClearFill) {
  EXPECT_EQ(And(M({0, 1, 2, 3}), {M({1, 2, 3}), M({2, 3}), M({3})}).String(), "1000");
  EXPECT_EQ(And(M({0}), {M({0}), M({1}), M({0, 1})}).String(), "00");
  EXPECT_EQ(Or(M({3}), {M({2}), M({1}), M({0})}).String(), "1111");
  EXPECT_EQ(Or(M({0}), {NewEmptyBitMask()}).String(), "01");
  BitMask m = M({0, 1});
  m.Clear();
  EXPECT_TRUE(m.IsEmpty());
}

TEST(BitMaskTest, Queries) {
  EXPECT_FALSE(M({}).IsSet(0));
  EXPECT_TRUE(M({0, 1}).IsSet(1));
  EXPECT_FALSE(M({0, 1}).IsSet(64));
  EXPECT_FALSE(M({0, 1}).IsSet(-1));
  EXPECT_TRUE(M({0}).AnySet({0, 1}));
  EXPECT_FALSE(M({0, 1}).AnySet({64, 65}));
  EXPECT_FALSE(M({1, 2}).AnySet({0, 3}));
  EXPECT_TRUE(M({0, 1}).IsEqual(M({0, 1})));
  EXPECT_FALSE(M({0}).IsEqual(M({1})));
  EXPECT_EQ(M({}).Count(), 0);
  EXPECT_EQ(M({0, 5, 63}).Count(), 3);
  EXPECT_EQ(M({63, 0, 5}).GetBits(), (std::vector<int>{0, 5, 63}));
  EXPECT_TRUE(M({}).GetBits().empty());
}

TEST(BitMaskTest, Ordering) {
  EXPECT_TRUE(M({0}).IsNarrowerThan(M({0, 1})));
  EXPECT_FALSE(M({0, 1}).IsNarrowerThan(M({0})));
  EXPECT_TRUE(M({0}).IsNarrowerThan(M({1})));
  EXPECT_FALSE(M({1}).IsNarrowerThan(M({0})));
  EXPECT_TRUE(M({0, 3}).IsNarrowerThan(M({1, 2, 3})));  // fewer bits beats value
  EXPECT_TRUE(M({0, 1}).IsLessThan(M({2})));
  EXPECT_TRUE(M({2}).IsGreaterThan(M({0, 1})));
  EXPECT_FALSE(M({2}).IsNarrowerThan(M({2})));
}

TEST(BitMaskTest, IterateBitMasksOrder) {
  std::vector<std::string> seen;
  ASSERT_TRUE(IterateBitMasks({0, 1, 2, 3}, [&](BitMask m) {
                std::string s;
                for (int b : m.GetBits()) s += std::to_string(b);
                seen.push_back(s);
              }).ok());
  std::vector<std::string> want = {"0",   "1",   "2",   "3",   "01",  "02",  "03",   "12",
                                   "13",  "23",  "012", "013", "023", "123", "0123"};
  EXPECT_EQ(seen, want);
}

TEST(BitMaskTest, IterateBitMasksCounts) {
  for (int n : {1, 2, 4, 8, 16}) {
    std::vector<int> bits;
    for (int i = 0; i < n; ++i) bits.push_back(i);
    int count = 0;
    ASSERT_TRUE(IterateBitMasks(bits, [&](BitMask) { ++count; }).ok());
    EXPECT_EQ(count, (1 << n) - 1) << n;
  }
  int calls = 0;
  auto status = IterateBitMasks({0, 64}, [&](BitMask) { ++calls; });
  EXPECT_EQ(status.message(), "bit number must be in range 0-63");
  EXPECT_EQ(calls, 0);
  // Positions, not values, are combined: bits in any order, duplicates kept.
  std::vector<uint64_t> values;
  ASSERT_TRUE(IterateBitMasks({2, 0, 2}, [&](BitMask m) { values.push_back(m.value()); }).ok());
  EXPECT_EQ(values, (std::vector<uint64_t>{4, 1, 4, 5, 4, 5, 5}));
}

PODTOPO_PROPERTY(BitMaskProperty, NarrowerIsStrictTotalOrder, (uint64_t a, uint64_t b)) {
  BitMask x = BitMask::FromUint64(a), y = BitMask::FromUint64(b);
  if (a == b) {
    RC_ASSERT(!x.IsNarrowerThan(y));
  } else {
    RC_ASSERT(x.IsNarrowerThan(y) != y.IsNarrowerThan(x));
  }
  RC_ASSERT(static_cast<int>(x.GetBits().size()) == x.Count());
}

TEST(TopologyHintTest, IsEqualAndLessThan) {
  TopologyHint nil_pref{std::nullopt, true};
  TopologyHint nil_nonpref{std::nullopt, false};
  TopologyHint a{M({0}), true};
  TopologyHint b{M({0, 1}), true};
  EXPECT_TRUE(nil_pref.IsEqual(TopologyHint{std::nullopt, true}));
  EXPECT_FALSE(nil_pref.IsEqual(nil_nonpref));
  EXPECT_FALSE(nil_pref.IsEqual(a));
  EXPECT_TRUE(a.IsEqual(TopologyHint{M({0}), true}));
  EXPECT_FALSE(a.IsEqual(TopologyHint{M({0}), false}));
  EXPECT_TRUE(a.LessThan(b));
  EXPECT_FALSE(b.LessThan(a));
  EXPECT_TRUE((TopologyHint{M({0, 1}), true}).LessThan(TopologyHint{M({0}), false}));
  EXPECT_FALSE((TopologyHint{M({0}), false}).LessThan(TopologyHint{M({0, 1}), true}));
  EXPECT_TRUE(a.LessThan(nil_pref));
  EXPECT_FALSE(nil_pref.LessThan(a));
  EXPECT_FALSE(nil_pref.LessThan(nil_pref));
}

}  // namespace
}  // namespace podtopo::topologymanager
