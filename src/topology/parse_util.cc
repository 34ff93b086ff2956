#include "topology/parse_util.h"

#include <limits>

#include "fmt/format.h"

namespace podtopo::topology_internal {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads [sign]digits from the start of s. Returns the number of characters consumed (0 when
// there are no digits) and sets *overflow when |value| does not fit int64.
size_t ReadSigned(std::string_view s, int64_t* value, bool* overflow) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    neg = s[i] == '-';
    ++i;
  }
  size_t digits_start = i;
  // Accumulate as a negative number so INT64_MIN fits.
  int64_t acc = 0;
  *overflow = false;
  for (; i < s.size() && IsDigit(s[i]); ++i) {
    int d = s[i] - '0';
    if (acc < (std::numeric_limits<int64_t>::min() + d) / 10) *overflow = true;
    if (!*overflow) acc = acc * 10 - d;
  }
  if (i == digits_start) return 0;
  if (!neg) {
    if (acc == std::numeric_limits<int64_t>::min()) *overflow = true;
    acc = -acc;
  }
  *value = acc;
  return i;
}

}  // namespace

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string QuoteForMessage(std::string_view s) {
  constexpr size_t kMax = 40;
  bool cut = s.size() > kMax;
  if (cut) s = s.substr(0, kMax);
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out += cut ? "\"..." : "\"";
  return out;
}

absl::StatusOr<int64_t> ParseInt(std::string_view text, int64_t min, int64_t max) {
  std::string_view t = TrimSpace(text);
  int64_t v = 0;
  bool overflow = false;
  size_t n = ReadSigned(t, &v, &overflow);
  if (n == 0 || n != t.size()) {
    return absl::InvalidArgumentError(fmt::format("not an integer: {}", QuoteForMessage(t)));
  }
  if (overflow || v < min || v > max) {
    return absl::InvalidArgumentError(
        fmt::format("out of range [{}, {}]: {}", min, max, QuoteForMessage(t)));
  }
  return v;
}

absl::StatusOr<uint64_t> ParseUint(std::string_view text) {
  if (text.empty()) return absl::InvalidArgumentError("not an unsigned integer: \"\"");
  uint64_t v = 0;
  for (char c : text) {
    if (!IsDigit(c)) {
      return absl::InvalidArgumentError(
          fmt::format("not an unsigned integer: {}", QuoteForMessage(text)));
    }
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) {
      return absl::InvalidArgumentError(
          fmt::format("out of range for a 64-bit unsigned integer: {}", QuoteForMessage(text)));
    }
    v = v * 10 + d;
  }
  return v;
}

absl::StatusOr<int64_t> ScanInt(std::string_view text, std::string_view* rest) {
  std::string_view t = text;
  while (!t.empty() && IsSpace(t.front())) t.remove_prefix(1);
  int64_t v = 0;
  bool overflow = false;
  size_t n = ReadSigned(t, &v, &overflow);
  if (n == 0) {
    return absl::InvalidArgumentError(
        fmt::format("not an integer: {}", QuoteForMessage(TrimSpace(text))));
  }
  if (overflow) {
    return absl::InvalidArgumentError(
        fmt::format("out of range: {}", QuoteForMessage(TrimSpace(text))));
  }
  if (rest != nullptr) *rest = t.substr(n);
  return v;
}

}  // namespace podtopo::topology_internal
