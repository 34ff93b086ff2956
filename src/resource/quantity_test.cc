// Tests for Quantity. Expected values come from the apimachinery unit tests
// (staging/src/k8s.io/apimachinery/pkg/api/resource: quantity_test.go TestQuantityParse,
// TestQuantityString, TestQuantityParseEmit; quantity_golden_test.go;
// quantity_overflow_test.go), restricted to magnitudes below 10^28.
#include "resource/quantity.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/property.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

using F = Quantity::Format;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Quantity MustParse(const std::string& text) {
  auto q = Quantity::Parse(text);
  EXPECT_TRUE(q.ok()) << text << ": " << q.status();
  return q.ok() ? *q : Quantity();
}

// ---------------------------------------------------------------------------------------
// TestQuantityParse: input -> exact amount (mantissa * 10^exponent) and format.

struct ParseCase {
  const char* input;
  int64_t mantissa;
  int exponent;
  F format;
};

const ParseCase kParseCases[] = {
    {"0", 0, 0, F::kDecimalSI},
    {"0n", 0, 0, F::kDecimalSI},
    {"0u", 0, 0, F::kDecimalSI},
    {"0m", 0, 0, F::kDecimalSI},
    {"0Ki", 0, 0, F::kBinarySI},
    {"0k", 0, 0, F::kDecimalSI},
    {"0Mi", 0, 0, F::kBinarySI},
    {"0M", 0, 0, F::kDecimalSI},
    {"0Gi", 0, 0, F::kBinarySI},
    {"0G", 0, 0, F::kDecimalSI},
    {"0Ti", 0, 0, F::kBinarySI},
    {"0T", 0, 0, F::kDecimalSI},
    {"1", 1, 0, F::kDecimalSI},
    {"1Ki", 1024, 0, F::kBinarySI},
    {"8Ki", 8 * 1024, 0, F::kBinarySI},
    {"7Mi", 7LL << 20, 0, F::kBinarySI},
    {"6Gi", 6LL << 30, 0, F::kBinarySI},
    {"5Ti", 5LL << 40, 0, F::kBinarySI},
    {"4Pi", 4LL << 50, 0, F::kBinarySI},
    {"3Ei", 3LL << 60, 0, F::kBinarySI},
    {"10Ti", 10LL << 40, 0, F::kBinarySI},
    {"100Ti", 100LL << 40, 0, F::kBinarySI},
    {"5n", 5, -9, F::kDecimalSI},
    {"4u", 4, -6, F::kDecimalSI},
    {"3m", 3, -3, F::kDecimalSI},
    {"9", 9, 0, F::kDecimalSI},
    {"8k", 8, 3, F::kDecimalSI},
    {"50k", 5, 4, F::kDecimalSI},
    {"7M", 7, 6, F::kDecimalSI},
    {"6G", 6, 9, F::kDecimalSI},
    {"5T", 5, 12, F::kDecimalSI},
    {"40T", 4, 13, F::kDecimalSI},
    {"300T", 3, 14, F::kDecimalSI},
    {"2P", 2, 15, F::kDecimalSI},
    {"1E", 1, 18, F::kDecimalSI},
    {"1E-3", 1, -3, F::kDecimalExponent},
    {"1e3", 1, 3, F::kDecimalExponent},
    {"1E6", 1, 6, F::kDecimalExponent},
    {"1e9", 1, 9, F::kDecimalExponent},
    {"1E12", 1, 12, F::kDecimalExponent},
    {"1e15", 1, 15, F::kDecimalExponent},
    {"1E18", 1, 18, F::kDecimalExponent},
    {"1e14", 1, 14, F::kDecimalExponent},
    {"1e13", 1, 13, F::kDecimalExponent},
    {"100.035k", 100035, 0, F::kDecimalSI},
    {"0.001", 1, -3, F::kDecimalSI},
    {"0.0005k", 5, -1, F::kDecimalSI},
    {"0.005", 5, -3, F::kDecimalSI},
    {"0.05", 5, -2, F::kDecimalSI},
    {"0.5", 5, -1, F::kDecimalSI},
    {"0.00050k", 5, -1, F::kDecimalSI},
    {"0.00500", 5, -3, F::kDecimalSI},
    {"0.05000", 5, -2, F::kDecimalSI},
    {"0.50000", 5, -1, F::kDecimalSI},
    {"0.5e0", 5, -1, F::kDecimalExponent},
    {"0.5e-1", 5, -2, F::kDecimalExponent},
    {"0.5e-2", 5, -3, F::kDecimalExponent},
    {"10.035M", 10035, 3, F::kDecimalSI},
    {"1.2e3", 12, 2, F::kDecimalExponent},
    {"1.3E+6", 13, 5, F::kDecimalExponent},
    {"1.40e9", 14, 8, F::kDecimalExponent},
    {"1.53E12", 153, 10, F::kDecimalExponent},
    {"1.6e15", 16, 14, F::kDecimalExponent},
    {"1.7E18", 17, 17, F::kDecimalExponent},
    {"9.01", 901, -2, F::kDecimalSI},
    {"8.1k", 81, 2, F::kDecimalSI},
    {"7.123456M", 7123456, 0, F::kDecimalSI},
    {"6.987654321G", 6987654321, 0, F::kDecimalSI},
    {"5.444T", 5444, 9, F::kDecimalSI},
    {"40.1T", 401, 11, F::kDecimalSI},
    {"300.2T", 3002, 11, F::kDecimalSI},
    {"2.5P", 25, 14, F::kDecimalSI},
    {"1.01E", 101, 16, F::kDecimalSI},
    // Things that saturate/round.
    {"3.001n", 4, -9, F::kDecimalSI},
    {"1.1E-9", 2, -9, F::kDecimalExponent},
    {"0.0000000001", 1, -9, F::kDecimalSI},
    {"0.0000000005", 1, -9, F::kDecimalSI},
    {"0.00000000050", 1, -9, F::kDecimalSI},
    {"0.5e-9", 1, -9, F::kDecimalExponent},
    {"0.9n", 1, -9, F::kDecimalSI},
    {"0.00000012345", 124, -9, F::kDecimalSI},
    {"0.00000012354", 124, -9, F::kDecimalSI},
    {"9Ei", kMax, 0, F::kBinarySI},
    {"9223372036854775807Ki", kMax, 0, F::kBinarySI},
    {"12E", 12, 18, F::kDecimalSI},
    // Fractional binary.
    {"100.035Ki", 10243584, -2, F::kBinarySI},
    {"0.5Mi", 524288, 0, F::kBinarySI},
    {"0.05Gi", 536870912, -1, F::kBinarySI},
    {"0.025Ti", 274877906944, -1, F::kBinarySI},
    // Things written by trolls.
    {"0.000000000001Ki", 2, -9, F::kDecimalSI},
    {".001", 1, -3, F::kDecimalSI},
    {".0001k", 100, -3, F::kDecimalSI},
    {"1.", 1, 0, F::kDecimalSI},
    {"1.G", 1, 9, F::kDecimalSI},
};

class ParseTest : public ::testing::TestWithParam<ParseCase> {};

TEST_P(ParseTest, ExactAmountAndFormat) {
  const ParseCase& c = GetParam();
  const Quantity want = Quantity::FromScaled(c.mantissa, c.exponent);
  for (const std::string prefix : {"", "+", "-"}) {
    SCOPED_TRACE(prefix + c.input);
    auto got = Quantity::Parse(prefix + c.input);
    ASSERT_TRUE(got.ok()) << got.status();
    Quantity expected = want;
    if (prefix == "-") expected.Neg();
    EXPECT_EQ(got->Cmp(expected), 0) << got->String() << " vs " << expected.String();
    EXPECT_EQ(got->format(), c.format);
    // Whatever String() prints parses back to the same amount.
    auto again = Quantity::Parse(got->String());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->Cmp(*got), 0) << got->String();
  }
}

INSTANTIATE_TEST_SUITE_P(GoTestQuantityParse, ParseTest, ::testing::ValuesIn(kParseCases),
                         [](const ::testing::TestParamInfo<ParseCase>& info) {
                           return testing::TestName(info.param.input, info.index);
                         });

TEST(QuantityParseTest, InvalidInputs) {
  // TestQuantityParse's `invalid` list plus truncated and malformed texts.
  for (const char* text :
       {"", "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-",
        "1e4294967297", " 1", "1 ", "1e", "1Ki3", "--1", "1e+-3", "1ee3", "1KI", "1k1", "1.5.",
        "1,5", "1_000", "0x10", "1\n", "Infinity", "NaN", "1e2147483648", "1e-2147483648",
        "1e9223372036854775808", "\xff"}) {
    SCOPED_TRACE(text);
    auto q = Quantity::Parse(text);
    ASSERT_FALSE(q.ok());
    EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(q.status().message()).find("invalid quantity"), std::string::npos)
        << q.status();
  }
}

TEST(QuantityParseTest, ErrorTextsNameTheTextAndGoReason) {
  EXPECT_EQ(Quantity::Parse("1.1.M").status().message(),
            "invalid quantity \"1.1.M\": quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  EXPECT_EQ(Quantity::Parse("0.1mi").status().message(),
            "invalid quantity \"0.1mi\": unable to parse quantity's suffix");
  EXPECT_EQ(Quantity::Parse("").status().message(),
            "invalid quantity \"\": quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  // Control bytes are escaped, long texts shortened.
  EXPECT_NE(std::string(Quantity::Parse("1\n").status().message())
                .find("invalid quantity \"1\\x0a\""),
            std::string::npos);
  std::string long_text(2000, '1');
  auto q = Quantity::Parse(long_text);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(std::string(q.status().message()).find("(2000 characters)"), std::string::npos);
  EXPECT_NE(std::string(q.status().message()).find("longer than 1024"), std::string::npos);
}

TEST(QuantityParseTest, GoScannerQuirks) {
  // parseQuantityString accepts a bare sign, a bare point, or a bare suffix as zero.
  for (const char* text : {"-", "+", ".", "-.", "Ki", "m", "000", "-0", "+0.000"}) {
    auto q = Quantity::Parse(text);
    ASSERT_TRUE(q.ok()) << text << ": " << q.status();
    EXPECT_TRUE(q->IsZero()) << text;
    EXPECT_EQ(q->String(), "0") << text;
  }
  EXPECT_EQ(MustParse("Ki").format(), F::kBinarySI);
}

TEST(QuantityParseTest, HugeTinyAndLongInputs) {
  // Beyond podtopo's range: a clear error, never a crash or a wrapped value.
  for (const char* text : {"1e400", "-1e400", "1e28", "123456789012345678901234567890",
                           "-123456789012345678901234567890", "1e2147483647", "100000000000E",
                           "9999999999999999999999999999.9999999999"}) {
    auto q = Quantity::Parse(text);
    ASSERT_FALSE(q.ok()) << text;
    EXPECT_NE(std::string(q.status().message()).find("is too large"), std::string::npos)
        << q.status();
  }
  // Just inside the range.
  Quantity big = MustParse("9999999999999999999999999999");
  EXPECT_EQ(big.String(), "9999999999999999999999999999");
  EXPECT_EQ(big.Value(), kMax);
  EXPECT_EQ(big.MilliValue(), kMax);
  EXPECT_EQ(MustParse("-9999999999999999999999999999").Value(), kMin);
  EXPECT_EQ(MustParse("1e27").String(), "1e27");
  // Binary SI never fails for size: ParseQuantity caps it at 2^63-1.
  for (const char* text : {"123456789012345678901234567890Ki",
                           "99999999999999999999999999999999999999999Ei", "1e30Ki"}) {
    SCOPED_TRACE(text);
    // "1e30Ki" is not a binary quantity: the suffix "e30Ki" is malformed.
    auto q = Quantity::Parse(text);
    if (std::string(text) == "1e30Ki") {
      EXPECT_FALSE(q.ok());
      continue;
    }
    ASSERT_TRUE(q.ok()) << q.status();
    EXPECT_EQ(q->Value(), kMax);
    EXPECT_EQ(q->String(), "9223372036854775807");
  }
  EXPECT_EQ(MustParse("-99999999999999999999999999999999999999999Ei").Value(), -kMax);
  // Tiny amounts round away from zero to one nanounit.
  EXPECT_EQ(MustParse("1e-400").String(), "1e-9");
  EXPECT_EQ(MustParse("-1e-400").String(), "-1e-9");
  EXPECT_EQ(MustParse("1e-2147483647").ScaledValue(-9), 1);
  EXPECT_EQ(MustParse("0e400").String(), "0");
  EXPECT_EQ(MustParse("0.000000000000001").String(), "1n");
  std::string tiny_binary = "0." + std::string(1000, '0') + "1Ki";
  Quantity tb = MustParse(tiny_binary);
  EXPECT_EQ(tb.String(), "1n");
  EXPECT_EQ(tb.format(), F::kDecimalSI);
  // Many fractional digits on a binary amount: exact nano rounding.
  EXPECT_EQ(MustParse("1.00000000000000000000000000000000000001Ki").String(), "1024000000001n");
  EXPECT_EQ(MustParse("1.000000000000000000000000000000000000000Ki").String(), "1Ki");
}

// ---------------------------------------------------------------------------------------
// TestQuantityString: a quantity built from (mantissa, exponent, format) prints `expect`;
// `alternate` parses and prints `expect`.

struct StringCase {
  int64_t mantissa;
  int exponent;
  F format;
  const char* expect;
  const char* alternate;
};

const StringCase kStringCases[] = {
    {1LL << 30, 0, F::kBinarySI, "1Gi", "1024Mi"},
    {300LL << 20, 0, F::kBinarySI, "300Mi", "307200Ki"},
    {6 * 1024, 0, F::kBinarySI, "6Ki", ""},
    {1001LL << 30, 0, F::kBinarySI, "1001Gi", "1025024Mi"},
    {1LL << 40, 0, F::kBinarySI, "1Ti", "1024Gi"},
    {5, 0, F::kBinarySI, "5", "5000m"},
    {500, -3, F::kBinarySI, "500m", "0.5"},
    {1, 9, F::kDecimalSI, "1G", "1000M"},
    {1000, 6, F::kDecimalSI, "1G", "0.001T"},
    {1000000, 3, F::kDecimalSI, "1G", ""},
    {1000000000, 0, F::kDecimalSI, "1G", ""},
    {1, -3, F::kDecimalSI, "1m", "1000u"},
    {80, -3, F::kDecimalSI, "80m", ""},
    {1080, -3, F::kDecimalSI, "1080m", "1.08"},
    {108, -2, F::kDecimalSI, "1080m", "1080000000n"},
    {10800, -4, F::kDecimalSI, "1080m", ""},
    {300, 6, F::kDecimalSI, "300M", ""},
    {1, 12, F::kDecimalSI, "1T", ""},
    {1, 18, F::kDecimalSI, "1E", ""},
    {1, 21, F::kDecimalSI, "1e21", "1000E"},
    {5, 21, F::kDecimalSI, "5e21", "5000E"},
    {1, 24, F::kDecimalSI, "1e24", "1000000E"},
    {1234567, 6, F::kDecimalSI, "1234567M", ""},
    {1234567, -3, F::kBinarySI, "1234567m", ""},
    {3, 3, F::kDecimalSI, "3k", ""},
    {1025, 0, F::kBinarySI, "1025", ""},
    {0, 0, F::kDecimalSI, "0", ""},
    {0, 0, F::kBinarySI, "0", ""},
    {1, 9, F::kDecimalExponent, "1e9", ".001e12"},
    {1, -3, F::kDecimalExponent, "1e-3", "0.001e0"},
    {1, -9, F::kDecimalExponent, "1e-9", "1000e-12"},
    {80, -3, F::kDecimalExponent, "80e-3", ""},
    {300, 6, F::kDecimalExponent, "300e6", ""},
    {1, 12, F::kDecimalExponent, "1e12", ""},
    {1, 3, F::kDecimalExponent, "1e3", ""},
    {3, 3, F::kDecimalExponent, "3e3", ""},
    {0, 0, F::kDecimalExponent, "0", "00"},
    {1, -9, F::kDecimalSI, "1n", ""},
    {80, -9, F::kDecimalSI, "80n", ""},
    {1080, -9, F::kDecimalSI, "1080n", ""},
    {108, -8, F::kDecimalSI, "1080n", ""},
    {10800, -10, F::kDecimalSI, "1080n", ""},
    {1, -6, F::kDecimalSI, "1u", ""},
    {80, -6, F::kDecimalSI, "80u", ""},
    {1080, -6, F::kDecimalSI, "1080u", ""},
};

class StringTest : public ::testing::TestWithParam<StringCase> {};

TEST_P(StringTest, Canonical) {
  const StringCase& c = GetParam();
  Quantity q = Quantity::FromScaled(c.mantissa, c.exponent, c.format);
  EXPECT_EQ(q.String(), c.expect);
  EXPECT_EQ(MustParse(c.expect).String(), c.expect);
  if (*c.alternate != '\0') {
    EXPECT_EQ(MustParse(c.alternate).String(), c.expect) << c.alternate;
  }
  if (!q.IsZero()) {
    q.Neg();
    EXPECT_EQ(q.String(), std::string("-") + c.expect);
  }
}

INSTANTIATE_TEST_SUITE_P(GoTestQuantityString, StringTest, ::testing::ValuesIn(kStringCases),
                         [](const ::testing::TestParamInfo<StringCase>& info) {
                           return testing::TestName(info.param.expect, info.index);
                         });

TEST(QuantityStringTest, BinarySIZeroExponent) {
  // TestBinarySIZeroExponentString: no binary suffix for 1024^0.
  EXPECT_EQ(Quantity::FromScaled(2000, 0, F::kBinarySI).String(), "2000");
  EXPECT_EQ(Quantity::FromScaled(-2000, 0, F::kBinarySI).String(), "-2000");
}

TEST(QuantityStringTest, ParseEmit) {
  // TestQuantityParseEmit, positive and negated.
  const std::pair<const char*, const char*> cases[] = {
      {"1Ki", "1Ki"},          {"1Mi", "1Mi"},           {"1Gi", "1Gi"},
      {"1024Mi", "1Gi"},       {"1000M", "1G"},          {".001Ki", "1024m"},
      {".000001Ki", "1024u"},  {".000000001Ki", "1024n"}, {".000000000001Ki", "2n"},
  };
  for (const auto& [in, want] : cases) {
    EXPECT_EQ(MustParse(in).String(), want) << in;
    EXPECT_EQ(MustParse(std::string("-") + in).String(), std::string("-") + want) << in;
  }
}

TEST(QuantityStringTest, BriefExamples) {
  EXPECT_EQ(MustParse("1536Mi").String(), "1536Mi");
  EXPECT_EQ(MustParse("1.5Gi").String(), "1536Mi");
  EXPECT_EQ(MustParse("0.5").String(), "500m");
  EXPECT_EQ(MustParse("1000m").String(), "1");
  EXPECT_EQ(MustParse("1e3").String(), "1e3");
  EXPECT_EQ(MustParse("2048Ki").String(), "2Mi");
  EXPECT_EQ(MustParse("1.5Ki").String(), "1536");
  EXPECT_EQ(MustParse("1000").String(), "1k");
  EXPECT_EQ(MustParse("1100m").String(), "1100m");
  EXPECT_EQ(MustParse("1e2").String(), "100");
  EXPECT_EQ(MustParse("12e5").String(), "1200e3");
}

TEST(QuantityStringTest, GoldenSerialization) {
  // quantity_golden_test.go: String() and the canonical form without the cached text.
  struct Golden {
    Quantity q;
    const char* string;
    const char* canonical;
  };
  const int64_t max = kMax;
  Quantity max_plus_max = Quantity::FromInt(max);
  max_plus_max.Add(Quantity::FromInt(max));
  const Golden cases[] = {
      {Quantity(), "0", "0"},
      {MustParse("1"), "1", "1"},
      {MustParse("-1"), "-1", "-1"},
      {MustParse("1Ki"), "1Ki", "1Ki"},
      {MustParse("1024Mi"), "1Gi", "1Gi"},
      {MustParse("1000M"), "1G", "1G"},
      {MustParse("1e3"), "1e3", "1e3"},
      {MustParse("0.1"), "100m", "100m"},
      {Quantity::FromMilli(1441), "1441m", "1441m"},
      {MustParse("0.000000000000001"), "1n", "1n"},
      {MustParse("1.441"), "1.441", "1441m"},
      {MustParse("1.000001"), "1.000001", "1000001u"},
      {MustParse("1.000000001"), "1.000000001", "1000000001n"},
      {MustParse("1.5"), "1500m", "1500m"},
      {MustParse("9223372036854775807"), "9223372036854775807", "9223372036854775807"},
      {Quantity::FromInt(kMin), "-9223372036854775808", "-9223372036854775808"},
      {MustParse("9223372036854775808"), "9223372036854775808", "9223372036854775808"},
      {MustParse("18446744073709551616"), "18446744073709551616", "18446744073709551616"},
      {Quantity::FromScaled(max, 1), "92233720368547758070", "92233720368547758070"},
      {MustParse("1E"), "1E", "1E"},
      {MustParse("100E"), "100E", "100E"},
      {MustParse("1000E"), "1e21", "1e21"},
      {Quantity::FromScaled(1, 21), "1e21", "1e21"},
      {MustParse("8Ei"), "9223372036854775807", "9223372036854775807"},
      {MustParse("-20Ei"), "-9223372036854775807", "-9223372036854775807"},
      {MustParse("-9.5Gi"), "-9728Mi", "-9728Mi"},
      {MustParse("-9.5000000001Gi"), "-10200547328107374183n", "-10200547328107374183n"},
      {max_plus_max, "18446744073709551614", "18446744073709551614"},
  };
  for (const Golden& g : cases) {
    EXPECT_EQ(g.q.String(), g.string);
    EXPECT_EQ(g.q.CanonicalString(), g.canonical) << g.string;
    // Adding zero drops the echoed text (TestQuantitySerializationSurvivesNoOpArithmetic).
    Quantity added = g.q;
    added.Add(Quantity());
    EXPECT_EQ(added.String(), g.canonical) << g.string;
  }
}

TEST(QuantityStringTest, EchoedInputAsGoCachesIt) {
  // ParseQuantity's fast path caches the text when it looks canonical.
  EXPECT_EQ(MustParse("+1").String(), "+1");
  EXPECT_EQ(MustParse("007").String(), "007");
  EXPECT_EQ(MustParse("1.234k").String(), "1.234k");
  EXPECT_EQ(MustParse("1E3").String(), "1E3");
  EXPECT_EQ(MustParse("1e+3").String(), "1e+3");
  EXPECT_EQ(MustParse("1.G").String(), "1.G");
  EXPECT_EQ(MustParse("+1Ki").String(), "+1Ki");
  // Not cached: trailing 000, leading 0 digit, scale not a multiple of 3, 8 | binary value.
  EXPECT_EQ(MustParse("+1000").String(), "1k");
  EXPECT_EQ(MustParse("+0.5").String(), "500m");
  EXPECT_EQ(MustParse("+1.5").String(), "1500m");
  EXPECT_EQ(MustParse("+8Ki").String(), "8Ki");
  EXPECT_EQ(MustParse("+1024Ki").String(), "1Mi");
  EXPECT_EQ(MustParse("1e25").String(), "10e24");
  // 20 digits: Go's fast path does not take it, so the sign is not echoed.
  EXPECT_EQ(MustParse("+12345678901234567891").String(), "12345678901234567891");
  // Mutations drop the echo.
  Quantity q = MustParse("+1");
  q.Neg();
  EXPECT_EQ(q.String(), "-1");
}

// ---------------------------------------------------------------------------------------
// Value / MilliValue / ScaledValue(3) (quantity_overflow_test.go accessor rows).

TEST(QuantityValueTest, BasicRounding) {
  EXPECT_EQ(MustParse("977m").Value(), 1);
  EXPECT_EQ(MustParse("977m").MilliValue(), 977);
  EXPECT_EQ(MustParse("1.5").MilliValue(), 1500);
  EXPECT_EQ(MustParse("1.5").Value(), 2);
  EXPECT_EQ(MustParse("2Gi").Value(), 2147483648);
  EXPECT_EQ(MustParse("1e3").Value(), 1000);
  EXPECT_EQ(MustParse("0.1m").MilliValue(), 1);
  EXPECT_EQ(MustParse("1n").Value(), 1);
  EXPECT_EQ(MustParse("1n").MilliValue(), 1);
  EXPECT_EQ(MustParse("1n").ScaledValue(-9), 1);
  EXPECT_EQ(MustParse("1").ScaledValue(-9), 1000000000);
  EXPECT_EQ(MustParse("1").ScaledValue(-30), kMax);
  EXPECT_EQ(MustParse("1").ScaledValue(400), 1);
  EXPECT_EQ(MustParse("-1").ScaledValue(400), -1);
  EXPECT_EQ(MustParse("1").ScaledValue(std::numeric_limits<int>::max()), 1);
  EXPECT_EQ(MustParse("1").ScaledValue(std::numeric_limits<int>::min()), kMax);
  // Negative amounts round away from zero (negativeScaleInt64).
  EXPECT_EQ(MustParse("-1.5").Value(), -2);
  EXPECT_EQ(MustParse("-0.1m").MilliValue(), -1);
  EXPECT_EQ(MustParse("-977m").Value(), -1);
  EXPECT_EQ(MustParse("-1.001").Value(), -2);
  EXPECT_EQ(Quantity().Value(), 0);
}

TEST(QuantityValueTest, GoOverflowAccessorRows) {
  struct Row {
    const char* name;
    Quantity q;
    int64_t value, milli, kilo;
    const char* string;
  };
  Quantity max_plus_max = Quantity::FromInt(kMax);
  max_plus_max.Add(Quantity::FromInt(kMax));
  const Row rows[] = {
      {"int64-max-parsed", MustParse("9223372036854775807"), kMax, kMax, 9223372036854776,
       "9223372036854775807"},
      {"int64-max-constructed", Quantity::FromInt(kMax), kMax, kMax, 9223372036854776,
       "9223372036854775807"},
      {"int64-min-constructed", Quantity::FromInt(kMin), kMin, kMin, -9223372036854776,
       "-9223372036854775808"},
      {"ten-to-18-parsed", MustParse("1E"), 1000000000000000000, kMax, 1000000000000000, "1E"},
      {"binary-8Ei-caps-at-max", MustParse("8Ei"), kMax, kMax, 9223372036854776,
       "9223372036854775807"},
      {"binary-negative-8Ei", MustParse("-8Ei"), -kMax, kMin, -9223372036854776,
       "-9223372036854775807"},
      {"binary-20Ei-caps-at-max", MustParse("20Ei"), kMax, kMax, 9223372036854776,
       "9223372036854775807"},
      {"binary-negative-20Ei", MustParse("-20Ei"), -kMax, kMin, -9223372036854776,
       "-9223372036854775807"},
      {"two-to-63-parsed", MustParse("9223372036854775808"), kMax, kMax, 9223372036854776,
       "9223372036854775808"},
      {"two-to-64-parsed", MustParse("18446744073709551616"), kMax, kMax, 18446744073709552,
       "18446744073709551616"},
      {"ten-to-20-parsed", MustParse("100E"), kMax, kMax, 100000000000000000, "100E"},
      {"ten-to-21-parsed", MustParse("1000E"), kMax, kMax, 1000000000000000000, "1e21"},
      {"five-times-ten-to-21", MustParse("5000E"), kMax, kMax, 5000000000000000000, "5e21"},
      {"scaled-one-times-ten-to-21", Quantity::FromScaled(1, 21), kMax, kMax,
       1000000000000000000, "1e21"},
      {"scaled-max-times-ten", Quantity::FromScaled(kMax, 1), kMax, kMax, 92233720368547759,
       "92233720368547758070"},
      {"int64-min-parsed", MustParse("-9223372036854775808"), kMin, kMin, -9223372036854776,
       "-9223372036854775808"},
      {"int64-min-plus-one-parsed", MustParse("-9223372036854775807"), kMin + 1, kMin,
       -9223372036854776, "-9223372036854775807"},
      {"negative-ten-to-20-parsed", MustParse("-100E"), kMin, kMin, -100000000000000000,
       "-100E"},
      {"negative-ten-to-21-parsed", MustParse("-1000E"), kMin, kMin, -1000000000000000000,
       "-1e21"},
      {"negative-9_5Gi", MustParse("-9.5Gi"), -10200547328, -10200547328000, -10200548,
       "-9728Mi"},
      {"negative-9_5000000001Gi", MustParse("-9.5000000001Gi"), -10200547329, -10200547328108,
       -10200548, "-10200547328107374183n"},
      {"new-milli-max", Quantity::FromMilli(kMax), 9223372036854776, kMax, 9223372036855,
       "9223372036854775807m"},
      {"new-milli-min", Quantity::FromMilli(kMin), -9223372036854776, kMin, -9223372036855,
       "-9223372036854775808m"},
      {"zero-at-large-scale", Quantity::FromScaled(0, 500), 0, 0, 0, "0"},
      {"zero-at-large-negative-scale", Quantity::FromScaled(0, -500), 0, 0, 0, "0"},
      {"max-plus-max", max_plus_max, kMax, kMax, 18446744073709552, "18446744073709551614"},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(r.q.Value(), r.value);
    EXPECT_EQ(r.q.MilliValue(), r.milli);
    EXPECT_EQ(r.q.ScaledValue(3), r.kilo);
    EXPECT_EQ(r.q.String(), r.string);
  }
}

TEST(QuantityValueTest, IsIntegerFollowsTheKubeletFormula) {
  EXPECT_TRUE(MustParse("2").IsInteger());
  EXPECT_TRUE(MustParse("2000m").IsInteger());
  EXPECT_FALSE(MustParse("1500m").IsInteger());
  EXPECT_FALSE(MustParse("0.0001").IsInteger());
  // ceil(1.9995) * 1000 == ceil(1999.5): whole by the kubelet's formula.
  EXPECT_TRUE(MustParse("1.9995").IsInteger());
  EXPECT_FALSE(MustParse("1E").IsInteger());  // MilliValue saturates, Value*1000 wraps
  EXPECT_TRUE(Quantity().IsInteger());
  EXPECT_TRUE(MustParse("-3").IsInteger());
}

TEST(QuantityValueTest, AsInt64FollowsGoRepresentation) {
  // int64Amount at scale >= 0: ok.
  EXPECT_EQ(MustParse("1Gi").AsInt64(), 1073741824);
  EXPECT_EQ(MustParse("1G").AsInt64(), 1000000000);
  EXPECT_EQ(MustParse("1e3").AsInt64(), 1000);
  EXPECT_EQ(MustParse("1E").AsInt64(), 1000000000000000000);
  EXPECT_EQ(MustParse("9223372036854775807").AsInt64(), kMax);
  EXPECT_EQ(MustParse("-9223372036854775808").AsInt64(), kMin);  // quantity_overflow_test.go
  EXPECT_EQ(MustParse("-9223372036854775807").AsInt64(), kMin + 1);
  EXPECT_EQ(Quantity::FromInt(kMin).AsInt64(), kMin);
  EXPECT_EQ(Quantity::FromScaled(0, 500).AsInt64(), 0);
  EXPECT_EQ(MustParse("0").AsInt64(), 0);
  // Negative scale: false even when whole.
  EXPECT_EQ(MustParse("1000m").AsInt64(), std::nullopt);
  EXPECT_EQ(MustParse("0.5").AsInt64(), std::nullopt);
  EXPECT_EQ(Quantity::FromMilli(2000).AsInt64(), std::nullopt);
  EXPECT_EQ(Quantity::FromScaled(0, -500).AsInt64(), std::nullopt);
  // inf.Dec-backed: fractional binary, capped binary, too many digits.
  EXPECT_EQ(MustParse("1.5Gi").AsInt64(), std::nullopt);
  EXPECT_EQ(MustParse("0.5Gi").AsInt64(), std::nullopt);
  EXPECT_EQ(MustParse("8Ei").AsInt64(), std::nullopt);
  EXPECT_EQ(MustParse("-9.5Gi").AsInt64(), std::nullopt);
  EXPECT_EQ(MustParse("9223372036854775808").AsInt64(), std::nullopt);
  EXPECT_EQ(MustParse("1Pi").AsInt64(), std::nullopt);  // Pi/Ei never take the int64 path
  // Overflow at a positive scale.
  EXPECT_EQ(MustParse("12E").AsInt64(), std::nullopt);
  EXPECT_EQ(Quantity::FromScaled(kMax, 1).AsInt64(), std::nullopt);
  // Sums stay int64 while they fit, at the smaller scale.
  Quantity sum = MustParse("1Gi");
  sum.Add(MustParse("100Mi"));
  EXPECT_EQ(sum.AsInt64(), 1178599424);
  sum.Add(MustParse("1"));
  EXPECT_EQ(sum.AsInt64(), 1178599425);
  sum.Add(MustParse("1m"));
  EXPECT_EQ(sum.AsInt64(), std::nullopt);  // now at scale -3
  Quantity max_plus_max = Quantity::FromInt(kMax);
  max_plus_max.Add(Quantity::FromInt(kMax));
  EXPECT_EQ(max_plus_max.AsInt64(), std::nullopt);  // promoted to inf.Dec
  Quantity zero;
  zero.Add(MustParse("1G"));
  EXPECT_EQ(zero.AsInt64(), 1000000000);  // adding to zero takes the addend's amount
  Quantity diff = MustParse("2Gi");
  diff.Sub(MustParse("1Gi"));
  EXPECT_EQ(diff.AsInt64(), 1073741824);
}

// ---------------------------------------------------------------------------------------
// Cmp, Add, Sub.

TEST(QuantityArithmeticTest, Cmp) {
  EXPECT_EQ(MustParse("0").Cmp(MustParse("0")), 0);
  EXPECT_EQ(MustParse("100m").Cmp(MustParse("50m")), 1);
  EXPECT_EQ(MustParse("50m").Cmp(MustParse("100m")), -1);
  EXPECT_EQ(MustParse("10000T").Cmp(MustParse("100Gi")), 1);
  EXPECT_EQ(MustParse("1Gi").Cmp(MustParse("1073741824")), 0);
  EXPECT_EQ(MustParse("-1").Cmp(MustParse("0")), -1);
  EXPECT_EQ(MustParse("1k").CmpInt64(1000), 0);
  EXPECT_EQ(MustParse("1001").CmpInt64(1000), 1);
  EXPECT_EQ(MustParse("-1024").CmpInt64(-1024), 0);
  EXPECT_TRUE(MustParse("1") == MustParse("1000m"));
  EXPECT_TRUE(MustParse("1") != MustParse("1001m"));
  EXPECT_TRUE(MustParse("1") < MustParse("1001m"));
}

TEST(QuantityArithmeticTest, AddSubKeepFormatAsGo) {
  // TestQuantityAddZeroPreservesSuffix / TestQuantitySubZeroPreservesSuffix.
  for (const char* text : {"100m", "1Gi"}) {
    Quantity v1 = MustParse(text);
    v1.Add(Quantity());
    EXPECT_EQ(v1.String(), text);
    Quantity v2;
    v2.Add(MustParse(text));
    EXPECT_EQ(v2.String(), text);
    Quantity v3 = MustParse(text);
    v3.Sub(Quantity());
    EXPECT_EQ(v3.String(), text);
    Quantity v4;
    v4.Sub(MustParse(text));
    EXPECT_EQ(v4.String(), std::string("-") + text);
  }
  Quantity q = MustParse("1Gi");
  q.Add(MustParse("512Mi"));
  EXPECT_EQ(q.String(), "1536Mi");
  q.Sub(MustParse("1.5Gi"));
  EXPECT_TRUE(q.IsZero());
  EXPECT_EQ(q.String(), "0");
  Quantity cpu = MustParse("1");
  cpu.Add(MustParse("500m"));
  EXPECT_EQ(cpu.String(), "1500m");
  EXPECT_EQ(cpu.MilliValue(), 1500);
  // Neg (TestQuantityNeg).
  Quantity n = Quantity::FromScaled(901, -2);
  n.Neg();
  EXPECT_EQ(n.String(), "-9010m");
}

TEST(QuantityArithmeticTest, AddSaturatesInsteadOfOverflowing) {
  Quantity q = MustParse("9e27");
  q.Add(MustParse("9e27"));
  EXPECT_EQ(q.Cmp(MustParse("9999999999999999999999999999.999999999")), 0);
  Quantity n = MustParse("-9e27");
  n.Sub(MustParse("9e27"));
  EXPECT_EQ(n.Cmp(MustParse("-9999999999999999999999999999.999999999")), 0);
  EXPECT_EQ(n.Value(), kMin);
}

// ---------------------------------------------------------------------------------------
// Properties.

Quantity::Format GenFormat(int i) {
  switch (i % 3) {
    case 0: return F::kDecimalSI;
    case 1: return F::kBinarySI;
    default: return F::kDecimalExponent;
  }
}

PODTOPO_PROPERTY(QuantityProperty, StringReparsesToEqualAmount, (int64_t mantissa, int format)) {
  const int scale = *rc::gen::inRange(-12, 12);
  Quantity q = Quantity::FromScaled(mantissa, scale, GenFormat(format));
  // Parsing caps binary-SI text at 2^63-1 (as Go does), so larger binary amounts shrink.
  RC_PRE(q.format() != F::kBinarySI || (q.CmpInt64(kMax) <= 0 && q.CmpInt64(-kMax) >= 0));
  auto back = Quantity::Parse(q.String());
  RC_ASSERT(back.ok());
  RC_ASSERT(back->Cmp(q) == 0);
  // Printing what was parsed from the printed text changes nothing more.
  RC_ASSERT(Quantity::Parse(back->CanonicalString())->CanonicalString() ==
            back->CanonicalString());
}

PODTOPO_PROPERTY(QuantityProperty, ValueAndMilliValueBracketTheAmount, (int64_t milli_base)) {
  // Amounts small enough that neither accessor saturates.
  const int64_t nanos = milli_base % 1'000'000'000'000'000;  // |amount| < 10^6
  Quantity q = Quantity::FromScaled(nanos, -9);
  const __int128 v = q.Value();
  const __int128 m = q.MilliValue();
  if (nanos >= 0) {
    RC_ASSERT(m >= v * 1000 - 999);
    RC_ASSERT(m <= v * 1000);
    RC_ASSERT(static_cast<__int128>(m) * 1'000'000 >= nanos);
    RC_ASSERT(v * 1'000'000'000 >= nanos);
  } else {
    RC_ASSERT(m <= v * 1000 + 999);
    RC_ASSERT(m >= v * 1000);
    RC_ASSERT(static_cast<__int128>(m) * 1'000'000 <= nanos);
    RC_ASSERT(v * 1'000'000'000 <= nanos);
  }
  RC_ASSERT(q.IsInteger() == (v * 1000 == m));
}

PODTOPO_PROPERTY(QuantityProperty, AddThenSubRestores, (int64_t a, int64_t b)) {
  const int sa = *rc::gen::inRange(-9, 9);
  const int sb = *rc::gen::inRange(-9, 9);
  const Quantity qa = Quantity::FromScaled(a, sa);
  const Quantity qb = Quantity::FromScaled(b, sb);
  Quantity sum = qa;
  sum.Add(qb);
  Quantity back = sum;
  back.Sub(qb);
  RC_ASSERT(back.Cmp(qa) == 0);
  // Cmp is antisymmetric and agrees with the sign of the difference.
  Quantity diff = qa;
  diff.Sub(qb);
  RC_ASSERT(qa.Cmp(qb) == diff.Sign());
  RC_ASSERT(qb.Cmp(qa) == -qa.Cmp(qb));
}

PODTOPO_PROPERTY(QuantityProperty, GeneratedTextsParseAndRoundTrip, ()) {
  // Texts from the quantity grammar.
  const std::string sign = *rc::gen::element<std::string>("", "+", "-");
  const std::string integer = *rc::gen::container<std::string>(
      *rc::gen::inRange<size_t>(0, 20), rc::gen::inRange('0', static_cast<char>('9' + 1)));
  const std::string fraction = *rc::gen::container<std::string>(
      *rc::gen::inRange<size_t>(0, 12), rc::gen::inRange('0', static_cast<char>('9' + 1)));
  const bool point = *rc::gen::arbitrary<bool>();
  const std::string suffix = *rc::gen::element<std::string>(
      "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "e3",
      "e-3", "E+6", "e-12", "e0", "e18");
  RC_PRE(!integer.empty() || point);
  const std::string text = sign + integer + (point ? "." + fraction : "") + suffix;
  auto q = Quantity::Parse(text);
  if (!q.ok()) {
    // Only range errors are possible for grammatical texts.
    RC_ASSERT(std::string(q.status().message()).find("too large") != std::string::npos);
    return;
  }
  auto back = Quantity::Parse(q->String());
  RC_ASSERT(back.ok());
  RC_ASSERT(back->Cmp(*q) == 0);
  RC_ASSERT(Quantity::Parse(q->CanonicalString())->Cmp(*q) == 0);
}

PODTOPO_PROPERTY(QuantityProperty, ArbitraryTextsNeverCrash, ()) {
  const std::string text = *rc::gen::container<std::string>(
      rc::gen::element('0', '1', '9', '.', '+', '-', 'e', 'E', 'i', 'n', 'u', 'm', 'k', 'K',
                       'M', 'G', 'T', 'P', ' ', 'x'));
  auto q = Quantity::Parse(text);
  if (q.ok()) {
    auto back = Quantity::Parse(q->String());
    RC_ASSERT(back.ok());
    RC_ASSERT(back->Cmp(*q) == 0);
  } else {
    RC_ASSERT(q.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace podtopo
