#include "config/duration.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace podtopo::config {
namespace {

constexpr uint64_t kMaxMagnitude = uint64_t{1} << 63;  // 1<<63, as Go compares against

// The time package's quote(): bytes below ' ' or above 0x7f become \xNN.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x80) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out + "\"";
}

absl::Status Invalid(std::string_view orig) {
  return absl::InvalidArgumentError("time: invalid duration " + Quote(orig));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// leadingInt: consumes digits; false on overflow past 1<<63.
bool LeadingInt(std::string_view* s, uint64_t* x) {
  size_t i = 0;
  uint64_t v = 0;
  for (; i < s->size() && IsDigit((*s)[i]); ++i) {
    if (v > kMaxMagnitude / 10) return false;
    v = v * 10 + static_cast<uint64_t>((*s)[i] - '0');
    if (v > kMaxMagnitude) return false;
  }
  *x = v;
  s->remove_prefix(i);
  return true;
}

// leadingFraction: consumes digits, keeping as many as fit.
void LeadingFraction(std::string_view* s, uint64_t* x, double* scale) {
  size_t i = 0;
  uint64_t v = 0;
  *scale = 1;
  bool overflow = false;
  for (; i < s->size() && IsDigit((*s)[i]); ++i) {
    if (overflow) continue;
    if (v > (uint64_t{1} << 63) / 10) {
      overflow = true;
      continue;
    }
    uint64_t y = v * 10 + static_cast<uint64_t>((*s)[i] - '0');
    if (y > kMaxMagnitude) {
      overflow = true;
      continue;
    }
    v = y;
    *scale *= 10;
  }
  *x = v;
  s->remove_prefix(i);
}

bool UnitNanos(std::string_view u, uint64_t* unit) {
  struct Entry {
    std::string_view name;
    uint64_t nanos;
  };
  static constexpr Entry kUnits[] = {
      {"ns", 1},
      {"us", 1000},
      {"\xc2\xb5s", 1000},  // U+00B5 micro sign
      {"\xce\xbcs", 1000},  // U+03BC Greek letter mu
      {"ms", 1000 * 1000},
      {"s", 1000 * 1000 * 1000},
      {"m", uint64_t{60} * 1000 * 1000 * 1000},
      {"h", uint64_t{3600} * 1000 * 1000 * 1000},
  };
  for (const Entry& e : kUnits) {
    if (e.name == u) {
      *unit = e.nanos;
      return true;
    }
  }
  return false;
}

// fmtFrac: writes the fraction of v/10^prec (trailing zeros omitted, no point when zero)
// in front of the text built so far, and returns v/10^prec.
uint64_t FmtFrac(std::string* out, uint64_t v, int prec) {
  std::string digits;
  bool print = false;
  for (int i = 0; i < prec; ++i) {
    int digit = static_cast<int>(v % 10);
    print = print || digit != 0;
    if (print) digits.insert(digits.begin(), static_cast<char>('0' + digit));
    v /= 10;
  }
  if (print) out->insert(0, "." + digits);
  return v;
}

void FmtInt(std::string* out, uint64_t v) { out->insert(0, std::to_string(v)); }

}  // namespace

absl::StatusOr<Duration> Duration::Parse(std::string_view text) {
  const std::string_view orig = text;
  std::string_view s = text;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return Duration(0);
  if (s.empty()) return Invalid(orig);
  uint64_t d = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || IsDigit(s[0]))) return Invalid(orig);
    uint64_t v = 0;
    size_t before = s.size();
    if (!LeadingInt(&s, &v)) return Invalid(orig);
    const bool pre = before != s.size();
    bool post = false;
    uint64_t f = 0;
    double scale = 1;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      before = s.size();
      LeadingFraction(&s, &f, &scale);
      post = before != s.size();
    }
    if (!pre && !post) return Invalid(orig);
    size_t i = 0;
    while (i < s.size() && !(s[i] == '.' || IsDigit(s[i]))) ++i;
    if (i == 0) {
      return absl::InvalidArgumentError("time: missing unit in duration " + Quote(orig));
    }
    const std::string_view u = s.substr(0, i);
    s.remove_prefix(i);
    uint64_t unit = 0;
    if (!UnitNanos(u, &unit)) {
      return absl::InvalidArgumentError("time: unknown unit " + Quote(u) + " in duration " +
                                        Quote(orig));
    }
    if (v > kMaxMagnitude / unit) return Invalid(orig);
    v *= unit;
    if (f > 0) {
      // Go: v += uint64(float64(f) * (float64(unit) / scale)); the product is below 2^63.
      v += static_cast<uint64_t>(static_cast<double>(f) *
                                 (static_cast<double>(unit) / scale));
      if (v > kMaxMagnitude) return Invalid(orig);
    }
    d += v;  // both <= 2^63: no uint64 wrap
    if (d > kMaxMagnitude) return Invalid(orig);
  }
  if (neg) {
    // d <= 2^63, so -d fits int64 (2^63 gives INT64_MIN).
    return Duration(static_cast<int64_t>(0 - d));
  }
  if (d > kMaxMagnitude - 1) return Invalid(orig);
  return Duration(static_cast<int64_t>(d));
}

std::string Duration::String() const {
  const bool neg = nanos_ < 0;
  uint64_t u = neg ? 0 - static_cast<uint64_t>(nanos_) : static_cast<uint64_t>(nanos_);
  std::string out;
  if (u < static_cast<uint64_t>(kSecond)) {
    int prec = 0;
    if (u == 0) return "0s";
    if (u < static_cast<uint64_t>(kMicrosecond)) {
      out = "ns";
      prec = 0;
    } else if (u < static_cast<uint64_t>(kMillisecond)) {
      out = "\xc2\xb5s";  // µs, as Go prints it
      prec = 3;
    } else {
      out = "ms";
      prec = 6;
    }
    u = FmtFrac(&out, u, prec);
    FmtInt(&out, u);
  } else {
    out = "s";
    u = FmtFrac(&out, u, 9);
    FmtInt(&out, u % 60);
    u /= 60;
    if (u > 0) {
      out.insert(0, "m");
      FmtInt(&out, u % 60);
      u /= 60;
      if (u > 0) {
        out.insert(0, "h");
        FmtInt(&out, u);
      }
    }
  }
  if (neg) out.insert(0, "-");
  return out;
}

}  // namespace podtopo::config
