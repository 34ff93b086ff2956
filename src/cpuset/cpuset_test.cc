#include "cpuset/cpuset.h"

#include "gtest/gtest.h"
#include "testing/property.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

TEST(CpuSetTest, ParseOkVectors) {
  auto v = testing::LoadVectors("checkpoint_vectors.json")["cpuset_string_vectors"];
  ASSERT_FALSE(v["parse_ok"].empty());
  for (const auto& c : v["parse_ok"]) {
    auto in = c[0].get<std::string>();
    auto parsed = CpuSet::Parse(in);
    ASSERT_TRUE(parsed.ok()) << in << ": " << parsed.status();
    EXPECT_EQ(parsed->String(), c[1].get<std::string>()) << in;
  }
}

TEST(CpuSetTest, ParseErrorVectors) {
  auto v = testing::LoadVectors("checkpoint_vectors.json")["cpuset_string_vectors"];
  ASSERT_FALSE(v["parse_error"].empty());
  for (const auto& c : v["parse_error"]) {
    auto in = c.get<std::string>();
    EXPECT_FALSE(CpuSet::Parse(in).ok()) << in;
  }
  for (const auto& [in, text] : v["error_texts"].items()) {
    auto parsed = CpuSet::Parse(in);
    ASSERT_FALSE(parsed.ok()) << in;
    EXPECT_EQ(parsed.status().message(), text.get<std::string>());
  }
}

TEST(CpuSetTest, StringVectors) {
  auto v = testing::LoadVectors("checkpoint_vectors.json")["cpuset_string_vectors"];
  for (const auto& c : v["string"]) {
    auto parsed = CpuSet::Parse(c[0].get<std::string>());
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->String(), c[1].get<std::string>());
  }
}

TEST(CpuSetTest, GoSemanticsEdgeCases) {
  EXPECT_EQ(CpuSet::Parse("+1")->String(), "1");
  EXPECT_FALSE(CpuSet::Parse(" 1").ok());
  EXPECT_EQ(CpuSet::Parse("0-0")->String(), "0");
  EXPECT_EQ(CpuSet::Parse("-1").status().message(), "strconv.Atoi: parsing \"\": invalid syntax");
  EXPECT_EQ(CpuSet::Parse("1--2").status().message(), "invalid range \"1--2\" (1 > -2)");
}

TEST(CpuSetTest, HugeAndTruncatedInput) {
  EXPECT_EQ(CpuSet::Parse("99999999999999999999").status().message(),
            "strconv.Atoi: parsing \"99999999999999999999\": value out of range");
  auto big = CpuSet::Parse("0-4000000000");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("outside the supported range"), std::string::npos);
  EXPECT_FALSE(CpuSet::Parse("0-").ok());
  EXPECT_FALSE(CpuSet::Parse("1,2,").ok());
  EXPECT_EQ(CpuSet::Parse("65535")->String(), "65535");
}

TEST(CpuSetTest, SetAlgebra) {
  CpuSet a = CpuSet::Parse("0-7,64-70").value();
  CpuSet b = CpuSet::Parse("4-66").value();
  EXPECT_EQ(a.Union(b).String(), "0-70");
  EXPECT_EQ(a.Intersection(b).String(), "4-7,64-66");
  EXPECT_EQ(a.Difference(b).String(), "0-3,67-70");
  EXPECT_EQ(a.IntersectionSize(b), 7);
  EXPECT_TRUE(CpuSet({4, 5}).IsSubsetOf(a));
  EXPECT_FALSE(b.IsSubsetOf(a));
  EXPECT_EQ(a.Size(), 15);
  EXPECT_EQ(a.Min(), 0);
  EXPECT_EQ(CpuSet().Min(), -1);
  // Equality is independent of how the set was built.
  CpuSet c = CpuSet::Parse("200").value();
  c.Remove(200);
  EXPECT_EQ(c, CpuSet());
  EXPECT_TRUE(c.IsEmpty());
}

PODTOPO_PROPERTY(CpuSetProperty, StringRoundTrips, (std::vector<uint16_t> ids)) {
  CpuSet s;
  for (auto id : ids) s.Add(id % 2048);
  auto parsed = CpuSet::Parse(s.String());
  RC_ASSERT(parsed.ok());
  RC_ASSERT(*parsed == s);
}

PODTOPO_PROPERTY(CpuSetProperty, AlgebraMatchesDefinition,
              (std::vector<uint8_t> xs, std::vector<uint8_t> ys)) {
  CpuSet a, b;
  for (auto x : xs) a.Add(x);
  for (auto y : ys) b.Add(y);
  for (int i = 0; i < 256; ++i) {
    RC_ASSERT(a.Union(b).Contains(i) == (a.Contains(i) || b.Contains(i)));
    RC_ASSERT(a.Intersection(b).Contains(i) == (a.Contains(i) && b.Contains(i)));
    RC_ASSERT(a.Difference(b).Contains(i) == (a.Contains(i) && !b.Contains(i)));
  }
  RC_ASSERT(a.IntersectionSize(b) == a.Intersection(b).Size());
}

}  // namespace
}  // namespace podtopo
