// Quantity texts (resource.ParseQuantity): parse -> String -> parse gives the same amount,
// the canonical text is a fixed point, and surrounding whitespace changes nothing for
// ParseTrimmed.
#include <string>

#include "fmt/format.h"
#include "fuzz/fuzz_target.h"
#include "resource/quantity.h"

PODTOPO_FUZZ_TARGET(quantity) {
  std::string_view text = AsText(data, size);
  absl::StatusOr<Quantity> q = Quantity::Parse(text);
  absl::StatusOr<Quantity> trimmed = Quantity::ParseTrimmed(fmt::format(" \t{}\n", text));
  if (!q.ok()) {
    FUZZ_CHECK(!q.status().message().empty(), "an error without a message");
    return 0;
  }
  FUZZ_CHECK(trimmed.ok() && *trimmed == *q,
             fmt::format("ParseTrimmed of the padded text: {} vs {}", trimmed.ok() ? trimmed->String() : std::string(trimmed.status().message()), q->String()));
  std::string printed = q->String();
  absl::StatusOr<Quantity> again = Quantity::Parse(printed);
  FUZZ_CHECK(again.ok(), fmt::format("String() {:?} of {:?} does not parse: {}", printed, text,
                                     again.status().ToString()));
  FUZZ_CHECK(*again == *q, fmt::format("{:?} -> {:?} -> {:?}: amounts differ", text, printed,
                                       again->String()));
  std::string canonical = q->CanonicalString();
  absl::StatusOr<Quantity> c = Quantity::Parse(canonical);
  FUZZ_CHECK(c.ok() && *c == *q && c->CanonicalString() == canonical,
             fmt::format("canonical {:?} of {:?} is not a fixed point", canonical, text));
  FUZZ_CHECK(again->CanonicalString() == canonical,
             fmt::format("{:?}: canonical {:?} vs {:?} after the round trip", text, canonical,
                         again->CanonicalString()));
  FUZZ_CHECK(q->MilliValue() == again->MilliValue() && q->Value() == again->Value(),
             fmt::format("{:?}: Value/MilliValue change through {:?}", text, printed));
  return 0;
}
