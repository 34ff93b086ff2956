// Tests for Duration. Cases are Go's time package tests (parseDurationTests,
// parseDurationErrorTests, durationTests).
#include "config/duration.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "testing/property.h"

namespace podtopo::config {
namespace {

constexpr int64_t kNs = Duration::kNanosecond;
constexpr int64_t kUs = Duration::kMicrosecond;
constexpr int64_t kMs = Duration::kMillisecond;
constexpr int64_t kS = Duration::kSecond;
constexpr int64_t kM = Duration::kMinute;
constexpr int64_t kH = Duration::kHour;

TEST(DurationTest, ParsesAsGo) {
  const std::pair<const char*, int64_t> cases[] = {
      {"0", 0},
      {"5s", 5 * kS},
      {"30s", 30 * kS},
      {"1478s", 1478 * kS},
      {"-5s", -5 * kS},
      {"+5s", 5 * kS},
      {"-0", 0},
      {"+0", 0},
      {"5.0s", 5 * kS},
      {"5.6s", 5 * kS + 600 * kMs},
      {"5.s", 5 * kS},
      {".5s", 500 * kMs},
      {"1.0s", 1 * kS},
      {"1.00s", 1 * kS},
      {"1.004s", 1 * kS + 4 * kMs},
      {"1.0040s", 1 * kS + 4 * kMs},
      {"100.00100s", 100 * kS + 1 * kMs},
      {"10ns", 10 * kNs},
      {"11us", 11 * kUs},
      {"12\xc2\xb5s", 12 * kUs},
      {"12\xce\xbcs", 12 * kUs},
      {"13ms", 13 * kMs},
      {"14s", 14 * kS},
      {"15m", 15 * kM},
      {"16h", 16 * kH},
      {"3h30m", 3 * kH + 30 * kM},
      {"10.5s4m", 4 * kM + 10 * kS + 500 * kMs},
      {"-2m3.4s", -(2 * kM + 3 * kS + 400 * kMs)},
      {"1h2m3s4ms5us6ns", 1 * kH + 2 * kM + 3 * kS + 4 * kMs + 5 * kUs + 6 * kNs},
      {"39h9m14.425s", 39 * kH + 9 * kM + 14 * kS + 425 * kMs},
      {"52763797000ns", 52763797000 * kNs},
      {"0.3333333333333333333h", 20 * kM},
      {"9007199254740993ns", (int64_t{1} << 53) + 1},
      {"9223372036854775807ns", std::numeric_limits<int64_t>::max()},
      {"9223372036854775.807us", std::numeric_limits<int64_t>::max()},
      {"9223372036s854ms775us807ns", std::numeric_limits<int64_t>::max()},
      {"-9223372036854775808ns", std::numeric_limits<int64_t>::min()},
      {"-9223372036854775.808us", std::numeric_limits<int64_t>::min()},
      {"-9223372036s854ms775us808ns", std::numeric_limits<int64_t>::min()},
      {"-2562047h47m16.854775808s", std::numeric_limits<int64_t>::min()},
      {"0.100000000000000000000h", 6 * kM},
      {"0.830103483285477580700h", 49 * kM + 48 * kS + 372539827 * kNs},
  };
  for (const auto& [text, nanos] : cases) {
    auto d = Duration::Parse(text);
    ASSERT_TRUE(d.ok()) << text << ": " << d.status();
    EXPECT_EQ(d->nanos(), nanos) << text;
  }
}

TEST(DurationTest, ErrorsAsGo) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "time: invalid duration \"\""},
      {"3", "time: missing unit in duration \"3\""},
      {"-", "time: invalid duration \"-\""},
      {"s", "time: invalid duration \"s\""},
      {".", "time: invalid duration \".\""},
      {"-.", "time: invalid duration \"-.\""},
      {".s", "time: invalid duration \".s\""},
      {"+.s", "time: invalid duration \"+.s\""},
      {"1d", "time: unknown unit \"d\" in duration \"1d\""},
      {"\x85\x85", "time: invalid duration \"\\x85\\x85\""},
      {"\xff" "ff", "time: invalid duration \"\\xffff\""},
      {"hello \xff" "ff world", "time: invalid duration \"hello \\xffff world\""},
      {"9223372036854775810ns", "time: invalid duration \"9223372036854775810ns\""},
      {"9223372036854775808ns", "time: invalid duration \"9223372036854775808ns\""},
      {"-9223372036854775809ns", "time: invalid duration \"-9223372036854775809ns\""},
      {"9223372036854775.808us", "time: invalid duration \"9223372036854775.808us\""},
      {"9223372036854ms775us808ns", "time: invalid duration \"9223372036854ms775us808ns\""},
      {"5 s", "time: unknown unit \" s\" in duration \"5 s\""},
      {"1e3s", "time: unknown unit \"e\" in duration \"1e3s\""},
  };
  for (const auto& [text, message] : cases) {
    auto d = Duration::Parse(text);
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_EQ(d.status().message(), message) << text;
  }
}

TEST(DurationTest, StringsAsGo) {
  const std::pair<const char*, int64_t> cases[] = {
      {"0s", 0},
      {"1ns", 1 * kNs},
      {"1.1\xc2\xb5s", 1100 * kNs},
      {"2.2ms", 2200 * kUs},
      {"3.3s", 3300 * kMs},
      {"4m5s", 4 * kM + 5 * kS},
      {"4m5.001s", 4 * kM + 5001 * kMs},
      {"5h6m7.001s", 5 * kH + 6 * kM + 7001 * kMs},
      {"8m0.000000001s", 8 * kM + 1 * kNs},
      {"2562047h47m16.854775807s", std::numeric_limits<int64_t>::max()},
      {"-2562047h47m16.854775808s", std::numeric_limits<int64_t>::min()},
      {"10s", 10 * kS},
      {"1m30s", 90 * kS},
      {"1h0m0s", kH},
      {"-5s", -5 * kS},
  };
  for (const auto& [text, nanos] : cases) {
    EXPECT_EQ(Duration(nanos).String(), text);
  }
}

PODTOPO_PROPERTY(DurationProperty, StringParsesBack, (int64_t nanos)) {
  const Duration d(nanos);
  auto back = Duration::Parse(d.String());
  RC_ASSERT(back.ok());
  RC_ASSERT(back->nanos() == nanos);
}

PODTOPO_PROPERTY(DurationProperty, ArbitraryTextNeverCrashes, ()) {
  const std::string text = *rc::gen::container<std::string>(
      rc::gen::element('0', '1', '9', '.', '+', '-', 'h', 'm', 's', 'n', 'u', '\xc2', '\xb5'));
  auto d = Duration::Parse(text);
  if (d.ok()) {
    auto back = Duration::Parse(d->String());
    RC_ASSERT(back.ok());
    RC_ASSERT(back->nanos() == d->nanos());
  }
}

}  // namespace
}  // namespace podtopo::config
