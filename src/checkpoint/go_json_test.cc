// Tests for the Go encoding/json emulation. Expected texts come from Go's encoding/json
// sources (scanner.go error contexts, decode.go unquote/UnmarshalTypeError, encode.go
// appendString with escapeHTML, fold.go foldName) and strconv.Quote.
#include "checkpoint/go_json.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace podtopo::checkpoint::gojson {
namespace {

using ::testing::HasSubstr;

struct SyntaxCase {
  const char* name;
  std::string input;
  std::string error;
};

class SyntaxErrorTest : public ::testing::TestWithParam<SyntaxCase> {};

TEST_P(SyntaxErrorTest, MatchesGoScanner) {
  absl::StatusOr<Value> v = Parse(GetParam().input);
  ASSERT_FALSE(v.ok()) << GetParam().input;
  EXPECT_EQ(v.status().message(), GetParam().error);
}

// Go's scanner feeds ' ' at end of input, so a truncated number or literal reports
// "invalid character ' ' ..." while a truncated object, array or string reports
// "unexpected end of JSON input" (scanner.eof).
INSTANTIATE_TEST_SUITE_P(
    Go, SyntaxErrorTest,
    ::testing::Values(
        SyntaxCase{"Empty", "", "unexpected end of JSON input"},
        SyntaxCase{"OnlySpace", " \n\t", "unexpected end of JSON input"},
        SyntaxCase{"OpenObject", "{", "unexpected end of JSON input"},
        SyntaxCase{"OpenString", "{\"a", "unexpected end of JSON input"},
        SyntaxCase{"AfterColon", "{\"a\":", "unexpected end of JSON input"},
        SyntaxCase{"TrailingCommaObject", "{\"a\":1,}",
                   "invalid character '}' looking for beginning of object key string"},
        SyntaxCase{"TrailingCommaArray", "[1,]",
                   "invalid character ']' looking for beginning of value"},
        SyntaxCase{"MissingColon", "{\"a\" 1}", "invalid character '1' after object key"},
        SyntaxCase{"MissingComma", "{\"a\":1 \"b\":2}",
                   "invalid character '\"' after object key:value pair"},
        SyntaxCase{"ArrayMissingComma", "[1 2]", "invalid character '2' after array element"},
        SyntaxCase{"LeadingZero", "01", "invalid character '1' after top-level value"},
        SyntaxCase{"LeadingZeroInObject", "{\"a\":01}",
                   "invalid character '1' after object key:value pair"},
        SyntaxCase{"LoneMinus", "-", "invalid character ' ' in numeric literal"},
        SyntaxCase{"MinusLetter", "-x", "invalid character 'x' in numeric literal"},
        SyntaxCase{"DotAtEnd", "1.", "invalid character ' ' after decimal point in numeric literal"},
        SyntaxCase{"DotLetter", "[1.x]",
                   "invalid character 'x' after decimal point in numeric literal"},
        SyntaxCase{"ExponentAtEnd", "1e", "invalid character ' ' in exponent of numeric literal"},
        SyntaxCase{"ExponentSign", "1e+]", "invalid character ']' in exponent of numeric literal"},
        SyntaxCase{"TruncatedTrue", "tru", "invalid character ' ' in literal true (expecting 'e')"},
        SyntaxCase{"BadFalse", "fx", "invalid character 'x' in literal false (expecting 'a')"},
        SyntaxCase{"TruncatedNull", "nul", "invalid character ' ' in literal null (expecting 'l')"},
        SyntaxCase{"BadEscape", "\"\\x\"", "invalid character 'x' in string escape code"},
        SyntaxCase{"BadHex", "\"\\u12g4\"",
                   "invalid character 'g' in \\u hexadecimal character escape"},
        SyntaxCase{"ControlInString", "\"a\nb\"", "invalid character '\\n' in string literal"},
        SyntaxCase{"NulInString", std::string("\"a\0b\"", 5),
                   "invalid character '\\x00' in string literal"},
        SyntaxCase{"TrailingGarbage", "{} x", "invalid character 'x' after top-level value"},
        SyntaxCase{"Garbage", "x", "invalid character 'x' looking for beginning of value"},
        SyntaxCase{"SingleQuote", "'a'", "invalid character '\\'' looking for beginning of value"},
        SyntaxCase{"NonAsciiByte", "\xc3\xa9", "invalid character 'Ã' looking for beginning of value"},
        SyntaxCase{"C1Byte", "\x85", "invalid character '\\u0085' looking for beginning of value"}),
    [](const ::testing::TestParamInfo<SyntaxCase>& info) { return info.param.name; });

TEST(ParseTest, KeepsOrderDuplicatesAndNumberText) {
  absl::StatusOr<Value> v = Parse(R"({"b":1.50,"a":[true,null,"x"],"b":-0e3})");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->kind, Value::Kind::kObject);
  ASSERT_EQ(v->object.size(), 3u);
  EXPECT_EQ(v->object[0].first, "b");
  EXPECT_EQ(v->object[0].second.text, "1.50");
  EXPECT_EQ(v->object[1].second.array.size(), 3u);
  EXPECT_TRUE(v->object[1].second.array[1].IsNull());
  EXPECT_EQ(v->object[2].second.text, "-0e3");
}

TEST(ParseTest, UnquotesLikeGo) {
  auto str = [](std::string json) {
    absl::StatusOr<Value> v = Parse(json);
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? v->text : std::string();
  };
  EXPECT_EQ(str(R"("a\"\\\/\b\f\n\r\t")"), "a\"\\/\b\f\n\r\t");
  EXPECT_EQ(str(R"("\u00e9")"), "\xc3\xa9");
  EXPECT_EQ(str(R"("\ud83d\ude00")"), "\xf0\x9f\x98\x80");  // surrogate pair
  EXPECT_EQ(str(R"("\ud800")"), "\xef\xbf\xbd");              // lone surrogate -> U+FFFD
  EXPECT_EQ(str(R"("\ud800\u0041")"), "\xef\xbf\xbd" "A");     // bad pair: keep 2nd escape
  EXPECT_EQ(str("\"\xff\""), "\xef\xbf\xbd");                  // invalid UTF-8 byte
  EXPECT_EQ(str("\"\xed\xa0\x80\""), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // UTF-8 surrogate
  EXPECT_EQ(str("\"\xe2\x80\xa8\""), "\xe2\x80\xa8");          // valid U+2028 kept
}

TEST(ParseTest, NestingLimit) {
  std::string deep(10001, '[');
  absl::StatusOr<Value> v = Parse(deep);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "invalid character '[' exceeded max depth");
  std::string ok = std::string(10000, '[') + std::string(10000, ']');
  absl::StatusOr<Value> deepest = Parse(ok);
  ASSERT_TRUE(deepest.ok()) << deepest.status();
  EXPECT_EQ(Marshal(*deepest), ok);
  // The same depth through objects, and an error at the innermost level.
  std::string objects;
  for (int i = 0; i < 10000; ++i) objects += "{\"a\":";
  EXPECT_EQ(Parse(objects + "1" + std::string(10000, '}')).status(), absl::OkStatus());
  EXPECT_EQ(Parse(objects + "x").status().message(),
            "invalid character 'x' looking for beginning of value");
}

TEST(QuoteTest, GoMarshalEscaping) {
  EXPECT_EQ(Quote("plain"), "\"plain\"");
  EXPECT_EQ(Quote("<a&b>"), "\"\\u003ca\\u0026b\\u003e\"");
  EXPECT_EQ(Quote("q\"b\\"), "\"q\\\"b\\\\\"");
  EXPECT_EQ(Quote("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
  EXPECT_EQ(Quote(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(Quote("\x7f"), "\"\x7f\"");  // DEL is not escaped
  EXPECT_EQ(Quote("\xe2\x80\xa8\xe2\x80\xa9"), "\"\\u2028\\u2029\"");
  EXPECT_EQ(Quote("\xff"), "\"\\ufffd\"");
  EXPECT_EQ(Quote("\xc3\xa9"), "\"\xc3\xa9\"");
}

// encoding/json's quoteChar: strconv.Quote of the byte taken as the rune U+00XX, in single
// quotes.
TEST(QuoteTest, QuoteChar) {
  EXPECT_EQ(QuoteChar('x'), "'x'");
  EXPECT_EQ(QuoteChar('\''), "'\\''");
  EXPECT_EQ(QuoteChar('"'), "'\"'");
  EXPECT_EQ(QuoteChar('\\'), "'\\\\'");
  EXPECT_EQ(QuoteChar('\n'), "'\\n'");
  EXPECT_EQ(QuoteChar(0x00), "'\\x00'");
  EXPECT_EQ(QuoteChar(0x7f), "'\\x7f'");
  EXPECT_EQ(QuoteChar(0x85), "'\\u0085'");  // C1 control
  EXPECT_EQ(QuoteChar(0xa0), "'\\u00a0'");  // no-break space is not printable in Go
  EXPECT_EQ(QuoteChar(0xad), "'\\u00ad'");  // soft hyphen
  EXPECT_EQ(QuoteChar(0xe9), "'\xc3\xa9'");  // é
}

TEST(FoldTest, GoFoldName) {
  EXPECT_TRUE(GoFoldEqual("defaultCPUSet", "defaultCpuSet"));
  EXPECT_TRUE(GoFoldEqual("POLICYNAME", "policyName"));
  EXPECT_TRUE(GoFoldEqual("check\xc5\xbfum", "checksum"));   // U+017F long s folds to S
  EXPECT_TRUE(GoFoldEqual("\xe2\x84\xaa" "ey", "key"));       // U+212A Kelvin sign
  EXPECT_TRUE(GoFoldEqual("pol\xc4\xb0" "cyName", "policyName"));  // U+0130
  EXPECT_FALSE(GoFoldEqual("policy_name", "policyName"));
  EXPECT_FALSE(GoFoldEqual("policyNam", "policyName"));
  EXPECT_FALSE(GoFoldEqual("pol\xc3\xad" "cyName", "policyName"));  // í does not fold to i
}

TEST(NumberTest, StrconvSemantics) {
  EXPECT_EQ(ParseGoInt64("+1"), 1);
  EXPECT_EQ(ParseGoInt64("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(ParseGoInt64("9223372036854775808"), std::nullopt);
  EXPECT_EQ(ParseGoInt64("1.0"), std::nullopt);
  EXPECT_EQ(ParseGoInt64("1e3"), std::nullopt);
  EXPECT_EQ(ParseGoUint64("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseGoUint64("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseGoUint64("-1"), std::nullopt);
  EXPECT_EQ(ParseGoUint64(""), std::nullopt);
}

// A little struct {A string `json:"alpha"`; M map[string]string `json:"m"`; N uint64 `json:"n"`}
// exercising Unmarshal's rules.
struct Small {
  std::string alpha;
  std::optional<std::map<std::string, std::string>> m = std::map<std::string, std::string>{};
  uint64_t n = 0;
};

absl::Status DecodeSmall(std::string_view json, Small& s) {
  return Unmarshal(json, [&](Decoder& d, const Value& v) {
    std::vector<FieldSpec> fields = {
        {"alpha", {}, [&](Decoder& dd, const Value& x) {
           DecodeString(dd, x, s.alpha, "string");
           return absl::OkStatus();
         }},
        {"m", {}, [&](Decoder& dd, const Value& x) {
           return DecodeStringMap(dd, x, s.m, "map[string]string",
                                  [](Decoder& d2, const Value& e, std::string& out) {
                                    DecodeString(d2, e, out, "string");
                                    return absl::OkStatus();
                                  });
         }},
        {"n", {}, [&](Decoder& dd, const Value& x) {
           DecodeUint64(dd, x, s.n, "uint64");
           return absl::OkStatus();
         }}};
    return DecodeStruct(d, v, "Small", "pkg.Small", fields);
  });
}

TEST(UnmarshalTest, DuplicateKeysMergeMapsAndOverwriteScalars) {
  Small s;
  ASSERT_TRUE(DecodeSmall(R"({"alpha":"x","m":{"a":"1"},"ALPHA":"y","m":{"b":"2"}})", s).ok());
  EXPECT_EQ(s.alpha, "y");
  ASSERT_TRUE(s.m.has_value());
  EXPECT_EQ(s.m->size(), 2u);  // Go reuses the existing map
}

TEST(UnmarshalTest, NullSetsMapNilAndLeavesScalars) {
  Small s;
  s.alpha = "keep";
  s.n = 7;
  ASSERT_TRUE(DecodeSmall(R"({"alpha":null,"m":null,"n":null})", s).ok());
  EXPECT_EQ(s.alpha, "keep");
  EXPECT_EQ(s.n, 7u);
  EXPECT_FALSE(s.m.has_value());
}

TEST(UnmarshalTest, FirstTypeErrorReportedAfterDecodingTheRest) {
  Small s;
  absl::Status st = DecodeSmall(R"({"n":1.5,"alpha":3,"m":{"k":"v"}})", s);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "json: cannot unmarshal number 1.5 into Go struct field Small.n of type uint64");
  EXPECT_EQ(s.m->at("k"), "v");  // decoding continued
}

TEST(UnmarshalTest, MapElementTypeErrorKeepsZeroElement) {
  Small s;
  absl::Status st = DecodeSmall(R"({"m":{"a":1,"b":"x"}})", s);
  EXPECT_EQ(st.message(),
            "json: cannot unmarshal number into Go struct field Small.m of type string");
  EXPECT_EQ(s.m->at("a"), "");  // Go still stores the zero value
  EXPECT_EQ(s.m->at("b"), "x");
}

TEST(UnmarshalTest, TopLevelKindMismatch) {
  Small s;
  EXPECT_EQ(DecodeSmall("[1]", s).message(), "json: cannot unmarshal array into Go value of type pkg.Small");
  EXPECT_EQ(DecodeSmall("\"x\"", s).message(),
            "json: cannot unmarshal string into Go value of type pkg.Small");
  EXPECT_TRUE(DecodeSmall("null", s).ok());
}

TEST(UnmarshalTest, SyntaxErrorDecodesNothing) {
  Small s;
  absl::Status st = DecodeSmall(R"({"alpha":"x",)", s);
  EXPECT_EQ(st.message(), "unexpected end of JSON input");
  EXPECT_EQ(s.alpha, "");
}

TEST(UnmarshalTest, HugeAndNegativeNumbers) {
  Small s;
  EXPECT_EQ(DecodeSmall(R"({"n":18446744073709551616})", s).message(),
            "json: cannot unmarshal number 18446744073709551616 into Go struct field Small.n of "
            "type uint64");
  EXPECT_EQ(DecodeSmall(R"({"n":-1})", s).message(),
            "json: cannot unmarshal number -1 into Go struct field Small.n of type uint64");
  ASSERT_TRUE(DecodeSmall(R"({"n":18446744073709551615})", s).ok());
  EXPECT_EQ(s.n, UINT64_MAX);
}

TEST(SliceTest, GoSliceSemantics) {
  Decoder d;
  std::optional<std::vector<int64_t>> out;
  auto elem = [](Decoder& dd, const Value& v, int64_t& x) {
    DecodeInt64(dd, v, x, "int");
    return absl::OkStatus();
  };
  ASSERT_TRUE(DecodeSlice(d, *Parse("[]"), out, "[]int", elem).ok());
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->empty());  // [] -> empty, non-nil
  ASSERT_TRUE(DecodeSlice(d, *Parse("[1,2,3]"), out, "[]int", elem).ok());
  // Decoding into an existing slice reuses its elements: null keeps the old value.
  ASSERT_TRUE(DecodeSlice(d, *Parse("[null,5]"), out, "[]int", elem).ok());
  EXPECT_EQ(*out, (std::vector<int64_t>{1, 5}));
  ASSERT_TRUE(DecodeSlice(d, *Parse("null"), out, "[]int", elem).ok());
  EXPECT_FALSE(out.has_value());
}

}  // namespace
}  // namespace podtopo::checkpoint::gojson
