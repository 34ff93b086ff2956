// Quantity: a Kubernetes resource quantity, parsed, rounded and printed as
// k8s.io/apimachinery/pkg/api/resource.Quantity does.
//
// Accepted forms are ParseQuantity's: an optional sign, a decimal number (`1`, `0.5`, `.5`,
// `1.`, even `.` or `-` which mean zero), then an optional suffix: binary SI (`Ki Mi Gi Ti Pi
// Ei`), decimal SI (`n u m "" k M G T P E`) or a decimal exponent (`e3`, `E-2`, `e+6`, with
// |exponent| <= 2^31-1). No whitespace. Anything else is a kInvalidArgument error quoting the
// text and Go's reason.
//
// Values are exact to the nanounit: finer input rounds away from zero to the next nanounit
// ("0.1n" is 1n), as ParseQuantity does. Binary-SI input is capped at 2^63-1 in magnitude
// ("8Ei" is 9223372036854775807), as ParseQuantity does.
//
// Value() and MilliValue() round away from zero (ceil for positive amounts) and saturate at
// the int64 limits, as the Go methods do, so the CPU Manager's integrality rule
// `Value()*1000 == MilliValue()` (IsInteger) behaves identically:
//   Quantity::Parse("977m")->Value()       // 1      MilliValue() 977
//   Quantity::Parse("1.5")->MilliValue()   // 1500
//   Quantity::Parse("2Gi")->Value()        // 2147483648
//   Quantity::Parse("1e3")->Value()        // 1000
//   Quantity::Parse("0.1m")->MilliValue()  // 1
//   Quantity::Parse("-1.5")->Value()       // -2
// String() prints what Quantity.String() prints: the canonical form ("1.5Gi" -> "1536Mi",
// "0.5" -> "500m", "1000m" -> "1", "2048Ki" -> "2Mi", "1e3" -> "1e3"), except that, like Go,
// a parsed text that Go's fast path deems canonical is echoed verbatim ("1.441" stays
// "1.441", "+1" stays "+1"); Add/Sub/Neg drop that echo.
//
// Deliberate differences from Go (which keeps arbitrary precision in inf.Dec):
//  - magnitudes of 10^28 and above are rejected by Parse (`quantity "1e400" is too large`)
//    and Add/Sub saturate just below 10^28; no Kubernetes resource comes near this.
//  - texts longer than kMaxTextLength characters are rejected.
//
// Thread safety: a value type; const methods may be called concurrently.
#ifndef PODTOPO_RESOURCE_QUANTITY_H_
#define PODTOPO_RESOURCE_QUANTITY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace podtopo {

class Quantity {
 public:
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  // Longest text Parse accepts.
  static constexpr size_t kMaxTextLength = 1024;

  Quantity() = default;  // zero, DecimalSI
  // An integer amount in the given format (resource.NewQuantity).
  static Quantity FromInt(int64_t value, Format format = Format::kDecimalSI);
  // value / 1000, DecimalSI (resource.NewMilliQuantity).
  static Quantity FromMilli(int64_t milli);
  // value * 10^scale (resource.NewScaledQuantity, with a format). Amounts finer than a
  // nanounit round away from zero; amounts of 10^28 or more saturate.
  static Quantity FromScaled(int64_t value, int scale, Format format = Format::kDecimalSI);

  // resource.ParseQuantity. Errors (kInvalidArgument) quote the text, e.g.
  //   invalid quantity "1.1.M": quantities must match the regular expression '...'
  //   invalid quantity "1Q": unable to parse quantity's suffix
  //   quantity "1e400" is too large (podtopo accepts magnitudes below 10^28)
  static absl::StatusOr<Quantity> Parse(std::string_view text);
  // Parse after trimming surrounding ASCII whitespace, as Quantity.UnmarshalJSON does for
  // values read from a manifest.
  static absl::StatusOr<Quantity> ParseTrimmed(std::string_view text);

  // Rounded away from zero to an integer (Quantity.Value()). Saturates at int64 limits.
  int64_t Value() const { return ScaledValue(0); }
  // Rounded away from zero to thousandths (Quantity.MilliValue()). Saturates.
  int64_t MilliValue() const { return ScaledValue(-3); }
  // The amount in units of 10^scale, rounded away from zero (Quantity.ScaledValue).
  // Saturates at int64 limits.
  int64_t ScaledValue(int scale) const;
  bool IsZero() const { return nanos_ == 0; }
  // -1, 0 or 1.
  int Sign() const { return nanos_ < 0 ? -1 : (nanos_ > 0 ? 1 : 0); }
  // -1, 0, 1 as Quantity.Cmp.
  int Cmp(const Quantity& other) const;
  // -1, 0, 1 as Quantity.CmpInt64.
  int CmpInt64(int64_t value) const;
  // Quantity.AsInt64: the value when Go holds the quantity as an int64Amount whose value
  // fits int64 at scale 0 (int64 x 10^scale with scale >= 0). nullopt when Go would say
  // false: a negative scale ("1000m", "0.5"), an inf.Dec-backed value ("1.5Gi", "8Ei",
  // sums that overflowed int64), or overflow ("12E"). The kubelet uses it to convert
  // reservedMemory ("could not covert a variable of type Quantity to int64").
  std::optional<int64_t> AsInt64() const;
  // The kubelet's integrality test `Value()*1000 == MilliValue()`, evaluated with Go's
  // wrapping int64 arithmetic (so 1.9995 counts as whole, exactly as in the kubelet).
  bool IsInteger() const;

  // Quantity.Add / Sub: exact; when this quantity is zero it takes other's format.
  Quantity& Add(const Quantity& other);
  Quantity& Sub(const Quantity& other);
  // Quantity.Neg.
  Quantity& Neg();

  Format format() const { return format_; }
  // Text as Quantity.String() prints it (see the banner).
  std::string String() const;
  // The canonical text, ignoring any echoed input (Quantity.CanonicalizeBytes).
  std::string CanonicalString() const;

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.Cmp(b) == 0; }
  friend bool operator!=(const Quantity& a, const Quantity& b) { return a.Cmp(b) != 0; }
  friend bool operator<(const Quantity& a, const Quantity& b) { return a.Cmp(b) < 0; }

 private:
  // The exact amount times 10^9. Invariant: |nanos_| < 10^37 (the amount is below 10^28).
  __int128 nanos_ = 0;
  Format format_ = Format::kDecimalSI;
  // The parsed text when Go would echo it from String(); empty otherwise.
  std::string echo_;
  // Go's representation, for AsInt64: inf.Dec-backed, or int64Amount{go_value_, go_scale_}.
  bool go_dec_ = false;
  int64_t go_value_ = 0;
  int32_t go_scale_ = 0;
};

}  // namespace podtopo

#endif  // PODTOPO_RESOURCE_QUANTITY_H_
