#include "resource/quantity.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace podtopo {
namespace {

using int128 = __int128;
using uint128 = unsigned __int128;

constexpr std::string_view kSplitRegexp = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";
// Go's error texts (resource.ErrFormatWrong, ErrNumeric, ErrSuffix).
constexpr std::string_view kErrSuffix = "unable to parse quantity's suffix";

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
constexpr int64_t kNanosPerUnit = 1'000'000'000;
// The binary-SI parse cap, 2^63-1 (resource.maxAllowed).
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

constexpr std::array<uint128, 39> MakePow10() {
  std::array<uint128, 39> p{};
  p[0] = 1;
  for (size_t i = 1; i < p.size(); ++i) p[i] = p[i - 1] * 10;
  return p;
}
constexpr std::array<uint128, 39> kPow10 = MakePow10();

// Exclusive bound on |nanos|: amounts below 10^28.
constexpr uint128 kNanosLimit = kPow10[37];
constexpr int kMaxDigits10 = 28;  // amounts have at most 28 integer digits

// A text quoted for an error message: escaped, and shortened when very long.
std::string Quote(std::string_view text) {
  constexpr size_t kShown = 64;
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < kShown; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kShown) out += fmt::format("...\" ({} characters)", text.size());
  else out += '"';
  return out;
}

absl::Status Invalid(std::string_view text, std::string_view reason) {
  return absl::InvalidArgumentError(
      fmt::format("invalid quantity {}: {}", Quote(text), reason));
}

absl::Status FormatWrong(std::string_view text) {
  return Invalid(text, fmt::format("quantities must match the regular expression '{}'",
                                   kSplitRegexp));
}

absl::Status TooLarge(std::string_view text) {
  return absl::InvalidArgumentError(fmt::format(
      "quantity {} is too large (podtopo accepts magnitudes below 10^{})", Quote(text),
      kMaxDigits10));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The pieces parseQuantityString splits a text into.
struct Pieces {
  bool positive = true;
  std::string_view num;    // integer digits, leading zeros stripped; "0" when none
  std::string_view denom;  // fraction digits (may be empty)
  std::string_view suffix;
};

// Mirrors resource.parseQuantityString. Returns false on ErrFormatWrong.
bool Scan(std::string_view str, Pieces* out) {
  size_t pos = 0;
  const size_t end = str.size();
  if (pos < end) {
    if (str[0] == '-') {
      out->positive = false;
      ++pos;
    } else if (str[0] == '+') {
      ++pos;
    }
  }
  // Leading zeros; a text of only a sign and zeros is zero.
  while (true) {
    if (pos >= end) {
      out->num = "0";
      return true;
    }
    if (str[pos] != '0') break;
    ++pos;
  }
  size_t i = pos;
  while (i < end && IsDigit(str[i])) ++i;
  out->num = str.substr(pos, i - pos);
  if (i >= end) return true;
  pos = i;
  if (out->num.empty()) out->num = "0";
  if (str[pos] == '.') {
    ++pos;
    i = pos;
    while (i < end && IsDigit(str[i])) ++i;
    out->denom = str.substr(pos, i - pos);
    if (i >= end) return true;
    pos = i;
  }
  const size_t suffix_start = pos;
  constexpr std::string_view kSuffixChars = "eEinumkKMGTP";
  i = pos;
  while (i < end && kSuffixChars.find(str[i]) != std::string_view::npos) ++i;
  if (i >= end) {
    out->suffix = str.substr(suffix_start);
    return true;
  }
  pos = i;
  if (str[pos] == '-' || str[pos] == '+') ++pos;
  i = pos;
  while (i < end && IsDigit(str[i])) ++i;
  if (i >= end) {
    out->suffix = str.substr(suffix_start);
    return true;
  }
  return false;
}

// Go's strconv.ParseInt(s, 10, 64).
bool ParseInt64(std::string_view s, int64_t* out) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  uint64_t magnitude = 0;
  const uint64_t limit = negative ? uint64_t{1} << 63 : uint64_t{kMaxInt64};
  for (char c : s) {
    if (!IsDigit(c)) return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (magnitude > (limit - d) / 10) return false;
    magnitude = magnitude * 10 + d;
  }
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

struct Suffix {
  int base = 10;
  int64_t exponent = 0;
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

// Mirrors quantitySuffixer.interpret, including the int32 bound on exponents.
bool Interpret(std::string_view s, Suffix* out) {
  using F = Quantity::Format;
  struct Entry {
    std::string_view text;
    int base;
    int exponent;
    F format;
  };
  static constexpr Entry kTable[] = {
      {"", 10, 0, F::kDecimalSI},   {"n", 10, -9, F::kDecimalSI}, {"u", 10, -6, F::kDecimalSI},
      {"m", 10, -3, F::kDecimalSI}, {"k", 10, 3, F::kDecimalSI},  {"M", 10, 6, F::kDecimalSI},
      {"G", 10, 9, F::kDecimalSI},  {"T", 10, 12, F::kDecimalSI}, {"P", 10, 15, F::kDecimalSI},
      {"E", 10, 18, F::kDecimalSI}, {"Ki", 2, 10, F::kBinarySI},  {"Mi", 2, 20, F::kBinarySI},
      {"Gi", 2, 30, F::kBinarySI},  {"Ti", 2, 40, F::kBinarySI},  {"Pi", 2, 50, F::kBinarySI},
      {"Ei", 2, 60, F::kBinarySI},
  };
  for (const Entry& e : kTable) {
    if (e.text == s) {
      *out = {e.base, e.exponent, e.format};
      return true;
    }
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    int64_t exponent = 0;
    if (!ParseInt64(s.substr(1), &exponent)) return false;
    if (exponent > kMaxInt32 || exponent < -kMaxInt32) return false;
    *out = {10, exponent, F::kDecimalExponent};
    return true;
  }
  return false;
}

// Parses a run of at most 38 decimal digits.
uint128 DigitsValue(std::string_view digits) {
  uint128 v = 0;
  for (char c : digits) v = v * 10 + static_cast<uint128>(c - '0');
  return v;
}

// A minimal arbitrary-precision unsigned integer (little-endian base 2^32 limbs), used only
// for fractional binary-SI input such as "0.000000000001Ki".
class BigUint {
 public:
  explicit BigUint(std::string_view digits) {
    for (char c : digits) MulAdd(10, static_cast<uint32_t>(c - '0'));
  }
  void MulAdd(uint32_t mul, uint32_t add) {
    uint64_t carry = add;
    for (uint32_t& limb : limbs_) {
      uint64_t v = uint64_t{limb} * mul + carry;
      limb = static_cast<uint32_t>(v);
      carry = v >> 32;
    }
    if (carry != 0) limbs_.push_back(static_cast<uint32_t>(carry));
  }
  // Divides in place; returns the remainder.
  uint32_t DivMod(uint32_t div) {
    uint64_t rem = 0;
    for (size_t i = limbs_.size(); i-- > 0;) {
      uint64_t cur = (rem << 32) | limbs_[i];
      limbs_[i] = static_cast<uint32_t>(cur / div);
      rem = cur % div;
    }
    while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
    return static_cast<uint32_t>(rem);
  }
  // False when the value needs more than 128 bits.
  bool ToU128(uint128* out) const {
    if (limbs_.size() > 4) return false;
    uint128 v = 0;
    for (size_t i = limbs_.size(); i-- > 0;) v = (v << 32) | limbs_[i];
    *out = v;
    return true;
  }

 private:
  std::vector<uint32_t> limbs_;
};

// Writes an unsigned 128-bit integer in decimal.
std::string U128ToString(uint128 v) {
  if (v == 0) return "0";
  char buf[48];
  size_t n = 0;
  while (v != 0) {
    buf[n++] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  }
  std::string out;
  out.reserve(n);
  while (n > 0) out += buf[--n];
  return out;
}

uint128 Magnitude(int128 v) { return v < 0 ? -static_cast<uint128>(v) : static_cast<uint128>(v); }

int128 Clamp(int128 v) {
  const int128 limit = static_cast<int128>(kNanosLimit) - 1;
  if (v > limit) return limit;
  if (v < -limit) return -limit;
  return v;
}

// The value rounded away from zero to a multiple of 10^-9, as |nanos|; false when the
// amount is 10^28 or more. digits: significant digits (no leading or trailing zeros,
// non-empty); the amount is digits * 10^scale.
bool DecimalNanos(std::string_view digits, int64_t scale, uint128* nanos) {
  const int64_t k = static_cast<int64_t>(digits.size());
  if (k + scale > kMaxDigits10) return false;
  if (scale >= -9) {
    // k + scale + 9 <= 37 digits.
    *nanos = DigitsValue(digits) * kPow10[static_cast<size_t>(scale + 9)];
  } else {
    const int64_t drop = -9 - scale;  // digits below the nanounit; the last one is non-zero
    if (drop >= k) {
      *nanos = 1;
    } else {
      *nanos = DigitsValue(digits.substr(0, static_cast<size_t>(k - drop))) + 1;
    }
  }
  return *nanos < kNanosLimit;
}

// |amount| rounded away from zero to a nanounit and capped at 2^63-1, for an amount of
// digits * 10^scale * 2^exponent (binary SI).
uint128 BinaryNanos(std::string_view digits, int64_t scale, int64_t exponent) {
  const uint128 cap_nanos = static_cast<uint128>(kMaxInt64) * kNanosPerUnit;
  const int64_t k = static_cast<int64_t>(digits.size());
  // The amount is at least 10^(k+scale-1) >= 10^20 > 2^63: capped.
  if (k + scale > 20) return cap_nanos;
  BigUint n(digits);
  for (int64_t i = 0; i < exponent / 10; ++i) n.MulAdd(1024, 0);
  for (int64_t i = 0; i < scale; ++i) n.MulAdd(10, 0);
  n.MulAdd(static_cast<uint32_t>(kNanosPerUnit), 0);
  bool inexact = false;
  for (int64_t remaining = -scale; remaining > 0; remaining -= 9) {
    const int64_t step = remaining < 9 ? remaining : 9;
    if (n.DivMod(static_cast<uint32_t>(kPow10[static_cast<size_t>(step)])) != 0) inexact = true;
  }
  uint128 v = 0;
  if (!n.ToU128(&v) || v >= cap_nanos) return cap_nanos;
  return inexact ? v + 1 : v;
}

// What ParseQuantity's int64 fast path makes of a text: whether it takes it (else the value
// lives in an inf.Dec), the int64Amount it builds, and whether it caches the text as the
// quantity's String().
struct GoFastPath {
  bool taken = false;
  int64_t value = 0;
  int32_t scale = 0;
  bool echo = false;
};

GoFastPath GoParseFastPath(const Pieces& p, const Suffix& suffix) {
  GoFastPath out;
  const int64_t num_len = static_cast<int64_t>(p.num.size());
  const int64_t denom_len = static_cast<int64_t>(p.denom.size());
  const std::string shifted = std::string(p.num) + std::string(p.denom);
  // Go parses the digits as int64; current apimachinery keeps MinInt64 ("-9223372036854775808")
  // on this path, so the sign takes part.
  int64_t value = 0;
  if (!ParseInt64((p.positive ? "" : "-") + shifted, &value)) return out;
  if (suffix.format == Quantity::Format::kBinarySI) {
    if (denom_len != 0) return out;
    const int64_t precision = 14 - num_len - 3 * (suffix.exponent / 10);
    if (precision < 0) return out;
    // value has at most 11 digits here, so value << exponent fits int64.
    out.taken = true;
    out.value = value * (int64_t{1} << suffix.exponent);
    out.scale = 0;
    out.echo = (value & 0x07) != 0;
    return out;
  }
  const int64_t precision = 19 - (num_len + denom_len);
  if (precision < 0) return out;
  const int64_t scale = suffix.exponent - denom_len;  // exponent is within +-(2^31-1)
  if (scale < -9 || scale > std::numeric_limits<int32_t>::max()) return out;
  out.taken = true;
  out.value = value;
  out.scale = static_cast<int32_t>(scale);
  out.echo = scale % 3 == 0 && !(shifted.size() >= 3 && shifted.ends_with("000")) &&
             shifted[0] != '0';
  return out;
}

// Go's positiveScaleInt64: base * 10^scale, false on int64 overflow.
bool GoPositiveScale(int64_t base, int64_t scale, int64_t* out) {
  if (base == 0) {
    *out = 0;
    return true;
  }
  if (scale >= 19) return false;
  int64_t v = base;
  for (int64_t i = 0; i < scale; ++i) {
    if (__builtin_mul_overflow(v, int64_t{10}, &v)) return false;
  }
  *out = v;
  return true;
}

// Go's int64Amount.Add: false (and no change) when the int64 path overflows.
bool GoIntAdd(int64_t* av, int32_t* as, int64_t bv, int32_t bs) {
  if (bv == 0) return true;
  if (*av == 0) {
    *av = bv;
    *as = bs;
    return true;
  }
  int64_t a = *av;
  int64_t b = bv;
  if (*as > bs) {
    if (!GoPositiveScale(a, int64_t{*as} - bs, &a)) return false;
  } else if (*as < bs) {
    if (!GoPositiveScale(b, int64_t{bs} - *as, &b)) return false;
  }
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return false;
  *av = sum;
  *as = std::min(*as, bs);
  return true;
}

std::string_view DecimalSuffix(int64_t exponent) {
  switch (exponent) {
    case -9: return "n";
    case -6: return "u";
    case -3: return "m";
    case 0: return "";
    case 3: return "k";
    case 6: return "M";
    case 9: return "G";
    case 12: return "T";
    case 15: return "P";
    case 18: return "E";
    default: return "?";
  }
}

// AsCanonicalBytes + the base-10 suffix: all factors of ten moved into an exponent that is
// a multiple of three; exponent notation past the SI suffixes (as apimachinery now does).
std::string CanonicalDecimal(int128 nanos, bool exponent_form) {
  uint128 m = Magnitude(nanos);
  int64_t exponent = -9;
  while (m >= 10 && m % 10 == 0) {
    m /= 10;
    ++exponent;
  }
  const int64_t adjust = ((exponent % 3) + 3) % 3;
  m *= kPow10[static_cast<size_t>(adjust)];
  exponent -= adjust;
  std::string out = nanos < 0 ? "-" : "";
  out += U128ToString(m);
  std::string_view si = DecimalSuffix(exponent);
  if (exponent_form || si == "?") {
    if (exponent != 0) out += fmt::format("e{}", exponent);
  } else {
    out += si;
  }
  return out;
}

}  // namespace

Quantity Quantity::FromInt(int64_t value, Format format) {
  Quantity q;
  q.nanos_ = static_cast<int128>(value) * kNanosPerUnit;
  q.format_ = format;
  q.go_value_ = value;
  return q;
}

Quantity Quantity::FromMilli(int64_t milli) {
  Quantity q;
  q.nanos_ = static_cast<int128>(milli) * 1'000'000;
  q.go_value_ = milli;
  q.go_scale_ = -3;
  return q;
}

Quantity Quantity::FromScaled(int64_t value, int scale, Format format) {
  Quantity q;
  q.format_ = format;
  q.go_value_ = value;
  q.go_scale_ = scale;
  if (value == 0) return q;
  const uint128 m = Magnitude(value);
  const int64_t shift = int64_t{scale} + 9;  // nanos = value * 10^shift
  uint128 r = 0;
  if (shift < 0) {
    if (-shift >= static_cast<int64_t>(kPow10.size())) {
      r = 1;
    } else {
      const uint128 d = kPow10[static_cast<size_t>(-shift)];
      r = m / d + (m % d != 0 ? 1 : 0);
    }
  } else if (shift > 37 || m > kNanosLimit / kPow10[static_cast<size_t>(shift)]) {
    r = kNanosLimit - 1;
  } else {
    r = m * kPow10[static_cast<size_t>(shift)];
    if (r >= kNanosLimit) r = kNanosLimit - 1;
  }
  q.nanos_ = value < 0 ? -static_cast<int128>(r) : static_cast<int128>(r);
  return q;
}

absl::StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return FormatWrong(text);
  if (text.size() > kMaxTextLength) {
    return Invalid(text, fmt::format("longer than {} characters", kMaxTextLength));
  }
  if (text == "0") {
    Quantity zero;
    zero.echo_ = "0";
    return zero;
  }
  Pieces pieces;
  if (!Scan(text, &pieces)) return FormatWrong(text);
  Suffix suffix;
  if (!Interpret(pieces.suffix, &suffix)) return Invalid(text, kErrSuffix);

  // Significant digits of num.denom and the power of ten they are scaled by.
  std::string digits = std::string(pieces.num) + std::string(pieces.denom);
  int64_t scale = -static_cast<int64_t>(pieces.denom.size());
  size_t first = digits.find_first_not_of('0');
  Quantity q;
  q.format_ = suffix.format;
  const GoFastPath fast = GoParseFastPath(pieces, suffix);
  q.go_dec_ = !fast.taken;
  q.go_value_ = fast.value;
  q.go_scale_ = fast.scale;
  if (first == std::string::npos) return q;  // zero, in the suffix's format
  size_t last = digits.find_last_not_of('0');
  scale += static_cast<int64_t>(digits.size() - 1 - last);
  std::string_view significant = std::string_view(digits).substr(first, last - first + 1);

  uint128 magnitude = 0;
  if (suffix.base == 10) {
    if (!DecimalNanos(significant, scale + suffix.exponent, &magnitude)) return TooLarge(text);
  } else {
    magnitude = BinaryNanos(significant, scale, suffix.exponent);
    // Go shows a binary amount below one as DecimalSI ("0.000000000001Ki" -> "2n").
    if (magnitude < static_cast<uint128>(kNanosPerUnit)) q.format_ = Format::kDecimalSI;
  }
  q.nanos_ = pieces.positive ? static_cast<int128>(magnitude) : -static_cast<int128>(magnitude);
  if (fast.echo) q.echo_ = std::string(text);
  return q;
}

absl::StatusOr<Quantity> Quantity::ParseTrimmed(std::string_view text) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  size_t b = text.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return Parse("");
  size_t e = text.find_last_not_of(kSpace);
  return Parse(text.substr(b, e - b + 1));
}

int64_t Quantity::ScaledValue(int scale) const {
  if (nanos_ == 0) return 0;
  const uint128 m = Magnitude(nanos_);
  const int64_t shift = int64_t{scale} + 9;  // the result is nanos / 10^shift
  uint128 r = 0;
  if (shift >= 0) {
    if (shift >= static_cast<int64_t>(kPow10.size())) {
      r = 1;  // |nanos| < 10^37 < 10^shift, rounded away from zero
    } else {
      const uint128 d = kPow10[static_cast<size_t>(shift)];
      r = m / d + (m % d != 0 ? 1 : 0);
    }
  } else if (-shift > 19 || m > (uint128{1} << 64)) {
    r = uint128{1} << 64;  // at least 10^20 or 2^64: beyond int64 either way
  } else {
    r = m * kPow10[static_cast<size_t>(-shift)];  // < 2^64 * 10^19 < 2^128
  }
  if (nanos_ > 0) return r > static_cast<uint128>(kMaxInt64) ? kMaxInt64 : static_cast<int64_t>(r);
  if (r >= (uint128{1} << 63)) return std::numeric_limits<int64_t>::min();
  return -static_cast<int64_t>(r);
}

std::optional<int64_t> Quantity::AsInt64() const {
  if (go_dec_) return std::nullopt;
  if (go_scale_ == 0) return go_value_;
  if (go_scale_ < 0) return std::nullopt;
  int64_t v = 0;
  if (!GoPositiveScale(go_value_, go_scale_, &v)) return std::nullopt;
  return v;
}

int Quantity::Cmp(const Quantity& other) const {
  if (nanos_ < other.nanos_) return -1;
  return nanos_ > other.nanos_ ? 1 : 0;
}

int Quantity::CmpInt64(int64_t value) const {
  const int128 v = static_cast<int128>(value) * kNanosPerUnit;
  if (nanos_ < v) return -1;
  return nanos_ > v ? 1 : 0;
}

bool Quantity::IsInteger() const {
  // Go multiplies in int64 and lets it wrap; unsigned arithmetic wraps the same way.
  return static_cast<uint64_t>(Value()) * 1000u == static_cast<uint64_t>(MilliValue());
}

Quantity& Quantity::Add(const Quantity& other) {
  echo_.clear();
  if (nanos_ == 0) format_ = other.format_;
  if (go_dec_ || other.go_dec_ || !GoIntAdd(&go_value_, &go_scale_, other.go_value_, other.go_scale_)) {
    go_dec_ = true;
  }
  nanos_ = Clamp(nanos_ + other.nanos_);  // both < 10^37: no int128 overflow
  return *this;
}

Quantity& Quantity::Sub(const Quantity& other) {
  echo_.clear();
  if (nanos_ == 0) format_ = other.format_;
  // int64Amount.Sub: Add of the negation; MinInt64 cannot be negated and goes to inf.Dec.
  if (go_dec_ || other.go_dec_ || other.go_value_ == std::numeric_limits<int64_t>::min() ||
      !GoIntAdd(&go_value_, &go_scale_, -other.go_value_, other.go_scale_)) {
    go_dec_ = true;
  }
  nanos_ = Clamp(nanos_ - other.nanos_);
  return *this;
}

Quantity& Quantity::Neg() {
  echo_.clear();
  nanos_ = -nanos_;
  go_value_ = static_cast<int64_t>(0 - static_cast<uint64_t>(go_value_));  // wraps as Go
  return *this;
}

std::string Quantity::String() const {
  if (!echo_.empty()) return echo_;
  return CanonicalString();
}

std::string Quantity::CanonicalString() const {
  if (nanos_ == 0) return "0";
  Format format = format_;
  if (format == Format::kBinarySI) {
    // Between -1024 and 1024, or not a whole number: shown as DecimalSI.
    if (CmpInt64(-1024) > 0 && CmpInt64(1024) < 0) format = Format::kDecimalSI;
    else if (nanos_ % kNanosPerUnit != 0) format = Format::kDecimalSI;
  }
  if (format != Format::kBinarySI) {
    return CanonicalDecimal(nanos_, format == Format::kDecimalExponent);
  }
  uint128 m = Magnitude(nanos_) / kNanosPerUnit;
  int exponent = 0;
  while (m >= 1024 && m % 1024 == 0) {
    m /= 1024;
    ++exponent;
  }
  static constexpr std::string_view kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (exponent > 6) {
    // No binary suffix that large: the exact decimal form (apimachinery's fallback).
    return CanonicalDecimal(nanos_, /*exponent_form=*/true);
  }
  std::string out = nanos_ < 0 ? "-" : "";
  out += U128ToString(m);
  out += kBinary[exponent];
  return out;
}

}  // namespace podtopo
