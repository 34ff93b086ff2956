#include "util/go_strconv.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "testing/property.h"

namespace podtopo {
namespace {

// Expected texts follow Go's definitions: strconv.Quote escapes `"` and `\`, uses the short
// escapes \a \b \f \n \r \t \v, writes other bytes below 0x20 and 0x7f as \xNN, each byte of
// invalid UTF-8 as \xNN, and runs that unicode.IsPrint rejects (categories other than L M N P
// S, except the ASCII space) as \uNNNN or \UNNNNNNNN.

TEST(GoQuoteTest, AsciiAndShortEscapes) {
  EXPECT_EQ(GoQuote(""), "\"\"");
  EXPECT_EQ(GoQuote("plain"), "\"plain\"");
  EXPECT_EQ(GoQuote("memory"), "\"memory\"");
  EXPECT_EQ(GoQuote("1.3"), "\"1.3\"");
  EXPECT_EQ(GoQuote("/var/lib/kubelet/cpu_manager_state"),
            "\"/var/lib/kubelet/cpu_manager_state\"");
  EXPECT_EQ(GoQuote("a\"b\\"), "\"a\\\"b\\\\\"");
  EXPECT_EQ(GoQuote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(GoQuote("back\\slash"), "\"back\\\\slash\"");
  EXPECT_EQ(GoQuote("abc"), "\"abc\"");
  EXPECT_EQ(GoQuote("a\\b"), "\"a\\\\b\"");
  EXPECT_EQ(GoQuote("tab\there"), "\"tab\\there\"");
  EXPECT_EQ(GoQuote("'single'"), "\"'single'\"");  // only the double quote is escaped
  EXPECT_EQ(GoQuote("\a\b\f\n\r\t\v"), "\"\\a\\b\\f\\n\\r\\t\\v\"");
}

TEST(GoQuoteTest, ControlBytesAsHex) {
  EXPECT_EQ(GoQuote(std::string("\x00", 1)), "\"\\x00\"");
  EXPECT_EQ(GoQuote(std::string("\x01\x7f", 2)), "\"\\x01\\x7f\"");
  EXPECT_EQ(GoQuote("\t\x01\x7f"), "\"\\t\\x01\\x7f\"");
  EXPECT_EQ(GoQuote("\x1b[0m"), "\"\\x1b[0m\"");
}

TEST(GoQuoteTest, InvalidUtf8BytesAsHex) {
  EXPECT_EQ(GoQuote("\xff"), "\"\\xff\"");
  EXPECT_EQ(GoQuote(std::string("\x01\xff", 2)), "\"\\x01\\xff\"");
  EXPECT_EQ(GoQuote("\xc3"), "\"\\xc3\"");                    // truncated sequence
  EXPECT_EQ(GoQuote("\xc0\xaf"), "\"\\xc0\\xaf\"");            // overlong '/'
  EXPECT_EQ(GoQuote("\xed\xa0\x80"), "\"\\xed\\xa0\\x80\"");   // encoded surrogate U+D800
  EXPECT_EQ(GoQuote("\xf4\x90\x80\x80"), "\"\\xf4\\x90\\x80\\x80\"");  // above U+10FFFF
  EXPECT_EQ(GoQuote("\xe2\x82x"), "\"\\xe2\\x82x\"");          // cut short by an ASCII byte
}

TEST(GoQuoteTest, PrintableRunesKept) {
  EXPECT_EQ(GoQuote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");          // é
  EXPECT_EQ(GoQuote("\xc2\xa1"), "\"\xc2\xa1\"");                // ¡ U+00A1
  EXPECT_EQ(GoQuote("\xe2\x98\xba"), "\"\xe2\x98\xba\"");        // ☺ U+263A
  EXPECT_EQ(GoQuote("\xe4\xb8\xad"), "\"\xe4\xb8\xad\"");        // 中 U+4E2D
  EXPECT_EQ(GoQuote("\xef\xbf\xbd"), "\"\xef\xbf\xbd\"");        // U+FFFD written out (So)
  EXPECT_EQ(GoQuote("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");  // 😀 U+1F600
  EXPECT_EQ(GoQuote("\xcc\x81"), "\"\xcc\x81\"");                // combining acute (Mn)
}

TEST(GoQuoteTest, NonPrintableRunesAsUnicodeEscapes) {
  EXPECT_EQ(GoQuote("\xc2\x85"), "\"\\u0085\"");            // NEL, C1 control (Cc)
  EXPECT_EQ(GoQuote("\xc2\xa0"), "\"\\u00a0\"");            // no-break space (Zs)
  EXPECT_EQ(GoQuote("\xc2\xad"), "\"\\u00ad\"");            // soft hyphen (Cf)
  EXPECT_EQ(GoQuote("\xcd\xb8"), "\"\\u0378\"");            // unassigned (Cn)
  EXPECT_EQ(GoQuote("\xe2\x80\x8b"), "\"\\u200b\"");        // zero width space (Cf)
  EXPECT_EQ(GoQuote("\xe2\x80\xa8\xe2\x80\xa9"), "\"\\u2028\\u2029\"");  // Zl, Zp
  EXPECT_EQ(GoQuote("\xe3\x80\x80"), "\"\\u3000\"");        // ideographic space (Zs)
  EXPECT_EQ(GoQuote("\xee\x80\x80"), "\"\\ue000\"");        // private use (Co)
  EXPECT_EQ(GoQuote("\xef\xbb\xbf"), "\"\\ufeff\"");        // byte order mark (Cf)
  EXPECT_EQ(GoQuote("\xf3\xa0\x80\x81"), "\"\\U000e0001\"");  // language tag (Cf)
  EXPECT_EQ(GoQuote("\xf0\x90\x80\x8c"), "\"\\U0001000c\"");  // unassigned above the BMP
}

TEST(GoIsPrintTest, MatchesGoCategories) {
  EXPECT_TRUE(GoIsPrint(' '));
  EXPECT_TRUE(GoIsPrint('~'));
  EXPECT_FALSE(GoIsPrint('\t'));
  EXPECT_FALSE(GoIsPrint(0x7F));
  EXPECT_FALSE(GoIsPrint(0xA0));
  EXPECT_TRUE(GoIsPrint(0xA1));
  EXPECT_FALSE(GoIsPrint(0xAD));
  EXPECT_TRUE(GoIsPrint(0xFF));
  EXPECT_TRUE(GoIsPrint(0x20AC));   // €
  EXPECT_TRUE(GoIsPrint(0x1FAE8));  // Unicode 15.0 addition (shaking face)
  EXPECT_FALSE(GoIsPrint(0xD800));  // surrogate
  EXPECT_FALSE(GoIsPrint(0x10FFFF));
  EXPECT_FALSE(GoIsPrint(0x110000));
}

TEST(GoDecodeRuneTest, ValidAndInvalid) {
  EXPECT_EQ(GoDecodeRune("a", 0).rune, U'a');
  GoRune e = GoDecodeRune("x\xc3\xa9", 1);
  EXPECT_EQ(e.rune, U'\u00e9');
  EXPECT_EQ(e.size, 2u);
  GoRune smile = GoDecodeRune("\xf0\x9f\x98\x80", 0);
  EXPECT_EQ(smile.rune, U'\U0001F600');
  EXPECT_EQ(smile.size, 4u);
  for (const char* bad : {"\x80", "\xc1\xbf", "\xe0\x80\x80", "\xed\xbf\xbf", "\xf5\x80\x80\x80",
                          "\xf0\x9f\x98"}) {
    GoRune r = GoDecodeRune(bad, 0);
    EXPECT_EQ(r.rune, 0xFFFDu) << GoQuote(bad);
    EXPECT_EQ(r.size, 1u) << GoQuote(bad);
  }
}

TEST(GoAppendRuneTest, EncodesAndReplacesInvalid) {
  std::string out;
  GoAppendRune(out, U'a');
  GoAppendRune(out, U'\u00e9');
  GoAppendRune(out, U'\u263a');
  GoAppendRune(out, U'\U0001F600');
  EXPECT_EQ(out, "a\xc3\xa9\xe2\x98\xba\xf0\x9f\x98\x80");
  std::string bad;
  GoAppendRune(bad, 0xD800);
  GoAppendRune(bad, 0x110000);
  EXPECT_EQ(bad, "\xef\xbf\xbd\xef\xbf\xbd");
}

PODTOPO_PROPERTY(GoQuoteProperty, PlainPrintableAsciiIsOnlyWrapped, (const std::string& raw)) {
  std::string s;
  for (char c : raw) {
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') s.push_back(c);
  }
  RC_ASSERT(GoQuote(s) == "\"" + s + "\"");
}

PODTOPO_PROPERTY(GoQuoteProperty, OutputIsValidUtf8WithoutControlBytes, (const std::string& s)) {
  const std::string q = GoQuote(s);
  RC_ASSERT(q.size() >= 2u);
  RC_ASSERT(q.front() == '"');
  RC_ASSERT(q.back() == '"');
  for (size_t i = 0; i < q.size();) {
    GoRune r = GoDecodeRune(q, i);
    RC_ASSERT(!(r.rune == 0xFFFD && r.size == 1));
    RC_ASSERT(GoIsPrint(r.rune));
    i += r.size;
  }
}

TEST(GoParseBoolTest, AcceptsGoSpellings) {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) {
    EXPECT_EQ(GoParseBool(t).value_or(false), true) << t;
  }
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) {
    EXPECT_EQ(GoParseBool(f).value_or(true), false) << f;
  }
  for (const char* bad : {"", "yes", "tRUE", " true", "2", "on"}) {
    EXPECT_FALSE(GoParseBool(bad).ok()) << bad;
  }
  EXPECT_EQ(GoParseBool("enabled!").status().message(),
            "strconv.ParseBool: parsing \"enabled!\": invalid syntax");
  EXPECT_EQ(GoParseBool("a\"b\n").status().message(),
            "strconv.ParseBool: parsing \"a\\\"b\\n\": invalid syntax");
}

TEST(GoAtoiTest, Values) {
  EXPECT_EQ(GoAtoi("0").value(), 0);
  EXPECT_EQ(GoAtoi("+8").value(), 8);
  EXPECT_EQ(GoAtoi("-9").value(), -9);
  EXPECT_EQ(GoAtoi("007").value(), 7);
  EXPECT_EQ(GoAtoi("9223372036854775807").value(), 9223372036854775807LL);
  EXPECT_EQ(GoAtoi("-9223372036854775808").value(), INT64_MIN);
}

TEST(GoAtoiTest, Errors) {
  auto message = [](const char* s) { return std::string(GoAtoi(s).status().message()); };
  EXPECT_EQ(message(""), "strconv.Atoi: parsing \"\": invalid syntax");
  EXPECT_EQ(message("-"), "strconv.Atoi: parsing \"-\": invalid syntax");
  EXPECT_EQ(message("+"), "strconv.Atoi: parsing \"+\": invalid syntax");
  EXPECT_EQ(message("8x"), "strconv.Atoi: parsing \"8x\": invalid syntax");
  EXPECT_EQ(message("1.3"), "strconv.Atoi: parsing \"1.3\": invalid syntax");
  EXPECT_EQ(message(" 8"), "strconv.Atoi: parsing \" 8\": invalid syntax");
  EXPECT_EQ(message("1_0"), "strconv.Atoi: parsing \"1_0\": invalid syntax");
  EXPECT_EQ(message("--1"), "strconv.Atoi: parsing \"--1\": invalid syntax");
  EXPECT_EQ(message("1\n"), "strconv.Atoi: parsing \"1\\n\": invalid syntax");
  EXPECT_EQ(message("9223372036854775808"),
            "strconv.Atoi: parsing \"9223372036854775808\": value out of range");
  EXPECT_EQ(message("-9223372036854775809"),
            "strconv.Atoi: parsing \"-9223372036854775809\": value out of range");
  EXPECT_EQ(message("99999999999999999999"),
            "strconv.Atoi: parsing \"99999999999999999999\": value out of range");
  // ParseUint stops at the first overflow, before it sees the bad character.
  EXPECT_EQ(message("99999999999999999999x"),
            "strconv.Atoi: parsing \"99999999999999999999x\": value out of range");
  // A bad character before any overflow is a syntax error.
  EXPECT_EQ(message("9x9999999999999999999"),
            "strconv.Atoi: parsing \"9x9999999999999999999\": invalid syntax");
}

}  // namespace
}  // namespace podtopo

namespace podtopo {
namespace {

// The rune-by-rune walk FindInvalidUtf8 replaced (it skips ASCII runs eight bytes at a time).
std::optional<InvalidUtf8> FindInvalidUtf8Oracle(std::string_view s) {
  int line = 1, column = 1;
  for (size_t pos = 0; pos < s.size();) {
    const GoRune r = GoDecodeRune(s, pos);
    if (r.rune == U'\uFFFD' && r.size == 1) {
      return InvalidUtf8{pos, line, column, static_cast<uint8_t>(s[pos])};
    }
    if (s[pos] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    pos += r.size;
  }
  return std::nullopt;
}

void ExpectSameAsOracle(const std::string& s) {
  const std::optional<InvalidUtf8> got = FindInvalidUtf8(s);
  const std::optional<InvalidUtf8> want = FindInvalidUtf8Oracle(s);
  ASSERT_EQ(got.has_value(), want.has_value());
  if (!got.has_value()) return;
  EXPECT_EQ(got->offset, want->offset);
  EXPECT_EQ(got->line, want->line);
  EXPECT_EQ(got->column, want->column);
  EXPECT_EQ(got->byte, want->byte);
}

TEST(FindInvalidUtf8Test, NamesTheByteItsLineAndColumn) {
  const std::optional<InvalidUtf8> bad = FindInvalidUtf8("ab\ncd\xc3\xa9 long ascii run\xff");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->offset, 22u);
  EXPECT_EQ(bad->line, 2);
  EXPECT_EQ(bad->column, 19);  // é is one rune
  EXPECT_EQ(bad->byte, 0xff);
  EXPECT_FALSE(FindInvalidUtf8("").has_value());
  EXPECT_FALSE(FindInvalidUtf8("0123456789abcdef\xe2\x82\xac\n0123456789").has_value());
  // A multi-byte rune cut by the end, or straddling an 8-byte word.
  ExpectSameAsOracle("0123456\xe2\x82");
  ExpectSameAsOracle("0123456\xe2\x82\xac");
  ExpectSameAsOracle("01234567\xed\xa0\x80");  // a surrogate
}

// Random texts: mostly ASCII with lines, some runes of every length, some invalid bytes.
PODTOPO_PROPERTY(FindInvalidUtf8Property, SameAsTheRuneByRuneWalk, ()) {
  const std::vector<std::string> pieces = {
      "a", "01234567", "\n", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xff", "\xc3",
      "\xe2\x82", "\xed\xa0\x80", "\xc0\xaf", "\x80"};
  std::string s;
  for (int n = *rc::gen::inRange(0, 40); n > 0; --n) s += *rc::gen::elementOf(pieces);
  ExpectSameAsOracle(s);
}

}  // namespace
}  // namespace podtopo
