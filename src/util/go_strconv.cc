#include "util/go_strconv.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace podtopo {
namespace {

struct RuneRange {
  char32_t first;
  char32_t last;
};

constexpr RuneRange kPrintRanges[] = {
#include "util/go_unicode_print.inc"
};

constexpr char32_t kRuneError = 0xFFFD;

absl::Status NumError(std::string_view func, std::string_view s, std::string_view what) {
  return absl::InvalidArgumentError(
      fmt::format("strconv.{}: parsing {}: {}", func, GoQuote(s), what));
}

}  // namespace

bool GoIsPrint(char32_t rune) {
  if (rune < 0x80) return rune >= 0x20 && rune < 0x7F;
  // The first range whose last code point is >= rune.
  const RuneRange* it =
      std::lower_bound(std::begin(kPrintRanges), std::end(kPrintRanges), rune,
                       [](const RuneRange& r, char32_t value) { return r.last < value; });
  return it != std::end(kPrintRanges) && it->first <= rune;
}

GoRune GoDecodeRune(std::string_view s, size_t pos) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c0 = b(pos);
  if (c0 < 0x80) return {c0, 1};
  if (c0 >= 0xC2 && c0 <= 0xDF) {
    if (!cont(pos + 1)) return {kRuneError, 1};
    return {((c0 & 0x1Fu) << 6) | (b(pos + 1) & 0x3Fu), 2};
  }
  if (c0 >= 0xE0 && c0 <= 0xEF) {
    if (!cont(pos + 1) || !cont(pos + 2)) return {kRuneError, 1};
    const unsigned char c1 = b(pos + 1);
    if (c0 == 0xE0 && c1 < 0xA0) return {kRuneError, 1};  // overlong
    if (c0 == 0xED && c1 > 0x9F) return {kRuneError, 1};  // surrogate
    return {((c0 & 0x0Fu) << 12) | ((c1 & 0x3Fu) << 6) | (b(pos + 2) & 0x3Fu), 3};
  }
  if (c0 >= 0xF0 && c0 <= 0xF4) {
    if (!cont(pos + 1) || !cont(pos + 2) || !cont(pos + 3)) return {kRuneError, 1};
    const unsigned char c1 = b(pos + 1);
    if (c0 == 0xF0 && c1 < 0x90) return {kRuneError, 1};  // overlong
    if (c0 == 0xF4 && c1 > 0x8F) return {kRuneError, 1};  // above U+10FFFF
    return {((c0 & 0x07u) << 18) | ((c1 & 0x3Fu) << 12) | ((b(pos + 2) & 0x3Fu) << 6) |
                (b(pos + 3) & 0x3Fu),
            4};
  }
  return {kRuneError, 1};
}

namespace {

// The line and column of the invalid byte at `bad`.
InvalidUtf8 LocateInvalidUtf8(std::string_view s, size_t bad) {
  int line = 1, column = 1;
  for (size_t pos = 0; pos < bad;) {
    if (s[pos] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    pos += GoDecodeRune(s, pos).size;
  }
  return InvalidUtf8{bad, line, column, static_cast<uint8_t>(s[bad])};
}

}  // namespace

std::optional<InvalidUtf8> FindInvalidUtf8(std::string_view s) {
  // ASCII runs are skipped eight bytes at a time; the line and column are counted only for
  // an invalid byte.
  constexpr uint64_t kHighBits = 0x8080808080808080ull;
  for (size_t pos = 0; pos < s.size();) {
    uint64_t word;
    if (pos + sizeof(word) <= s.size()) {
      std::memcpy(&word, s.data() + pos, sizeof(word));
      if ((word & kHighBits) == 0) {
        pos += sizeof(word);
        continue;
      }
    }
    if (static_cast<unsigned char>(s[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const GoRune r = GoDecodeRune(s, pos);
    if (r.rune == U'\uFFFD' && r.size == 1) return LocateInvalidUtf8(s, pos);
    pos += r.size;
  }
  return std::nullopt;
}

void GoAppendRune(std::string& out, char32_t r) {
  if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) r = kRuneError;
  if (r < 0x80) {
    out.push_back(static_cast<char>(r));
  } else if (r < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (r >> 6)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else if (r < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (r >> 12)));
    out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (r >> 18)));
    out.push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  }
}

std::string GoQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  auto out_it = std::back_inserter(out);
  for (size_t i = 0; i < s.size();) {
    const GoRune r = GoDecodeRune(s, i);
    if (r.rune == kRuneError && r.size == 1) {  // invalid UTF-8: the byte itself
      fmt::format_to(out_it, "\\x{:02x}", static_cast<unsigned char>(s[i]));
      i += 1;
      continue;
    }
    i += r.size;
    switch (r.rune) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\a': out += "\\a"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\v': out += "\\v"; continue;
      default: break;
    }
    if (GoIsPrint(r.rune)) {
      GoAppendRune(out, r.rune);
    } else if (r.rune < 0x20 || r.rune == 0x7F) {
      fmt::format_to(out_it, "\\x{:02x}", static_cast<unsigned>(r.rune));
    } else if (r.rune < 0x10000) {
      fmt::format_to(out_it, "\\u{:04x}", static_cast<unsigned>(r.rune));
    } else {
      fmt::format_to(out_it, "\\U{:08x}", static_cast<unsigned>(r.rune));
    }
  }
  out.push_back('"');
  return out;
}

absl::StatusOr<bool> GoParseBool(std::string_view s) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (s == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (s == f) return false;
  }
  return NumError("ParseBool", s, "invalid syntax");
}

absl::StatusOr<int64_t> GoAtoi(std::string_view s) {
  // ParseInt(s, 10, 64): the sign, then ParseUint's loop, which stops at the first bad
  // character or the first overflow, whichever comes first.
  std::string_view digits = s;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) return NumError("Atoi", s, "invalid syntax");
  constexpr uint64_t kCutoff = std::numeric_limits<uint64_t>::max() / 10 + 1;
  uint64_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return NumError("Atoi", s, "invalid syntax");
    if (n >= kCutoff) return NumError("Atoi", s, "value out of range");
    n *= 10;
    const uint64_t n1 = n + static_cast<uint64_t>(c - '0');
    if (n1 < n) return NumError("Atoi", s, "value out of range");
    n = n1;
  }
  constexpr uint64_t kLimit = uint64_t{1} << 63;
  if (negative ? n > kLimit : n >= kLimit) return NumError("Atoi", s, "value out of range");
  return negative ? static_cast<int64_t>(~n + 1) : static_cast<int64_t>(n);
}

}  // namespace podtopo
