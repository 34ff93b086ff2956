// Small parsing helpers shared by the topology loaders (sysfs, JSON, hwloc). Internal to
// src/topology.
#ifndef PODTOPO_TOPOLOGY_PARSE_UTIL_H_
#define PODTOPO_TOPOLOGY_PARSE_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace podtopo::topology_internal {

// The message of a status as std::string (Debian's absl::string_view does not go into fmt).
inline std::string Msg(const absl::Status& s) { return std::string(s.message()); }

// Trims ASCII whitespace at both ends.
std::string_view TrimSpace(std::string_view s);

// A quoted, escaped excerpt of a value for error messages: "abc", "1\n2", at most 40
// characters followed by "..." when longer.
std::string QuoteForMessage(std::string_view s);

// Go strconv.Atoi on TrimSpace(text): optional sign, decimal digits only, and the value must
// fit [min, max]. Errors (bare reasons): `not an integer: "abc"`, `out of range: "99999999999"`.
absl::StatusOr<int64_t> ParseInt(std::string_view text, int64_t min, int64_t max);

// Go strconv.ParseUint(text, 10, 64) on the exact text (no trimming, no sign).
absl::StatusOr<uint64_t> ParseUint(std::string_view text);

// Go fmt.Sscanf(text, "%d", &v) for a signed int: skips leading spaces, reads an optional sign
// and digits, ignores what follows. `rest` (optional) receives the unread remainder.
absl::StatusOr<int64_t> ScanInt(std::string_view text, std::string_view* rest = nullptr);

}  // namespace podtopo::topology_internal

#endif  // PODTOPO_TOPOLOGY_PARSE_UTIL_H_
