// Go's strconv and unicode/utf8 as the kubelet's error texts use them: one implementation
// for every module that repeats a Go message.
//
//   GoQuote("full-pcpus-only")     // "\"full-pcpus-only\""    (fmt %q, strconv.Quote)
//   GoQuote("a\tb\xff")            // "\"a\\tb\\xff\""
//   GoParseBool("enabled!").status().message()
//     // strconv.ParseBool: parsing "enabled!": invalid syntax
//   GoAtoi("99999999999999999999").status().message()
//     // strconv.Atoi: parsing "99999999999999999999": value out of range
//
// Printability follows Go's unicode tables (Unicode 15.0.0, Go 1.21 and later), see
// go_unicode_print.inc.
#ifndef PODTOPO_UTIL_GO_STRCONV_H_
#define PODTOPO_UTIL_GO_STRCONV_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace podtopo {

// strconv.Quote (fmt's %q of a string): double quotes around `s`; `"` and `\` backslashed;
// printable runes (GoIsPrint) kept as they are; \a \b \f \n \r \t \v; other bytes below
// 0x20 and 0x7f as \xNN; each byte of invalid UTF-8 as \xNN; other non-printable runes as
// \uNNNN (\UNNNNNNNN above U+FFFF).
std::string GoQuote(std::string_view s);

// strconv.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
bool GoIsPrint(char32_t rune);

// One rune decoded as utf8.DecodeRuneInString does: invalid or incomplete UTF-8 (overlong
// forms, surrogates, > U+10FFFF) gives {U+FFFD, 1}.
struct GoRune {
  char32_t rune;
  size_t size;  // bytes consumed, 1..4
};
// REQUIRES: pos < s.size().
GoRune GoDecodeRune(std::string_view s, size_t pos);

// Where `s` stops being UTF-8 (utf8.ValidString is false there; go-yaml, and so the kubelet
// and kubectl, refuse such a file): the offending byte, its offset, and its 1-based line and
// column (columns count runes). nullopt when `s` is valid UTF-8.
struct InvalidUtf8 {
  size_t offset;
  int line, column;
  uint8_t byte;
};
std::optional<InvalidUtf8> FindInvalidUtf8(std::string_view s);

// utf8.AppendRune: appends the UTF-8 encoding of `rune` (U+FFFD for a surrogate or a value
// above U+10FFFF).
void GoAppendRune(std::string& out, char32_t rune);

// strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False. Anything else is
// kInvalidArgument `strconv.ParseBool: parsing "<s as %q>": invalid syntax`.
absl::StatusOr<bool> GoParseBool(std::string_view s);

// strconv.Atoi on a 64-bit platform: an optional sign, then decimal digits only. Errors
// (kInvalidArgument): `strconv.Atoi: parsing "<s as %q>": invalid syntax`, or `...: value
// out of range` when the digits read so far overflow int64 (Go reports the overflow even
// when a bad character follows it).
absl::StatusOr<int64_t> GoAtoi(std::string_view s);

}  // namespace podtopo

#endif  // PODTOPO_UTIL_GO_STRCONV_H_
