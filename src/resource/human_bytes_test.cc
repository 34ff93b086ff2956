#include "resource/human_bytes.h"

#include "gtest/gtest.h"

namespace podtopo {
namespace {

TEST(HumanBytes, Units) {
  EXPECT_EQ(HumanBytes(0), "0");
  EXPECT_EQ(HumanBytes(512), "512");
  EXPECT_EQ(HumanBytes(uint64_t{16} << 30), "16Gi");
  // Issue 22 item 12.3: fleet totals read "8.5Gi of 1.46Ti", not "8704Mi of 1526000Mi".
  EXPECT_EQ(HumanBytes(uint64_t{1536} << 20), "1.5Gi");
  EXPECT_EQ(HumanBytes(uint64_t{8704} << 20), "8.5Gi");
  EXPECT_EQ(HumanBytes(uint64_t{1526000} << 20), "1.46Ti");
  EXPECT_EQ(HumanBytes(uint64_t{1280} << 20), "1.25Gi");
  EXPECT_EQ(HumanBytes(uint64_t{1124} << 20), "1124Mi");
  EXPECT_EQ(HumanBytes(uint64_t{1025} << 20), "1025Mi");
  EXPECT_EQ(HumanBytes(uint64_t{15260} << 20), "14.9Gi");
  EXPECT_EQ(HumanBytes(uint64_t{5334812} * 1024), "5.09Gi");
  EXPECT_EQ(HumanBytes(123456789), "118Mi");
  EXPECT_EQ(HumanBytes(1000000000), "954Mi");
  EXPECT_EQ(HumanBytes(UINT64_MAX), "16.0Ei");
  EXPECT_EQ(HumanBytes(uint64_t{1} << 62), "4Ei");
}

}  // namespace
}  // namespace podtopo
