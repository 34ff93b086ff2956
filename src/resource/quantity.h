// Quantity: a Kubernetes resource quantity, parsed and rounded as resource.Quantity does.
//
// Accepted forms are the API server's: an optional sign, a decimal number (`1`, `0.5`, `.5`,
// `1.`), then an optional suffix — binary SI (`Ki Mi Gi Ti Pi Ei`), decimal SI (`n u m "" k M
// G T P E`) or a decimal exponent (`e3`, `E-2`). Anything else is an error naming the text.
//
// Value() and MilliValue() round up (towards +inf) exactly as the Go methods do, so the CPU
// Manager's integrality rule `Value()*1000 == MilliValue()` behaves identically:
//   Quantity::Parse("977m")->Value()       // 1      MilliValue() 977
//   Quantity::Parse("1.5")->MilliValue()   // 1500
//   Quantity::Parse("2Gi")->Value()        // 2147483648
//   Quantity::Parse("1e3")->Value()        // 1000
//   Quantity::Parse("0.1m")->MilliValue()  // 1
// String() gives the canonical form Quantity.String() prints ("1536Mi", "500m", "2").
//
// Thread safety: a value type.
#ifndef PODTOPO_RESOURCE_QUANTITY_H_
#define PODTOPO_RESOURCE_QUANTITY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace podtopo {

class Quantity {
 public:
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;  // zero, DecimalSI
  // An integer amount (scale 0) in the given format.
  static Quantity FromInt(int64_t value, Format format = Format::kDecimalSI);
  // value / 1000, DecimalSI.
  static Quantity FromMilli(int64_t milli);

  // kInvalidArgument with a message like `quantities must match the regular expression ...`
  // (the API server's wording) or `quantity "1e400" is too large`.
  static absl::StatusOr<Quantity> Parse(std::string_view text);

  // Rounded up to an integer (Quantity.Value()). Saturates at int64 limits.
  int64_t Value() const;
  // Rounded up to thousandths (Quantity.MilliValue()). Saturates at int64 limits.
  int64_t MilliValue() const;
  bool IsZero() const;
  int Sign() const;
  // -1, 0, 1 as Quantity.Cmp.
  int Cmp(const Quantity& other) const;
  // True iff the quantity is a whole number (Value()*1000 == MilliValue()).
  bool IsInteger() const { return Value() * 1000 == MilliValue(); }

  Quantity& Add(const Quantity& other);  // keeps this quantity's format, as Go's Add
  Quantity& Sub(const Quantity& other);

  Format format() const { return format_; }
  // Canonical text as Quantity.String() prints it.
  std::string String() const;

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.Cmp(b) == 0; }

 private:
  // The exact amount is mantissa_ * 10^scale_. |mantissa_| < 10^36, scale_ in [-18, 18]
  // after normalisation; larger inputs are rejected by Parse.
  __int128 mantissa_ = 0;
  int scale_ = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace podtopo

#endif  // PODTOPO_RESOURCE_QUANTITY_H_
