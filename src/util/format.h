// fmt support for abseil types: Debian 12's abseil has its own absl::string_view (it is not
// std::string_view), which is what absl::Status::message() returns. Include this header to
// pass a status message (or any absl::string_view) straight to fmt::format.
//
//   fmt::format("{}: {}", path, status.message());
#ifndef PODTOPO_UTIL_FORMAT_H_
#define PODTOPO_UTIL_FORMAT_H_

#include "absl/strings/string_view.h"
#include "fmt/format.h"

template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<fmt::string_view> {
  template <typename FormatContext>
  auto format(absl::string_view s, FormatContext& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(s.data(), s.size()), ctx);
  }
};

#endif  // PODTOPO_UTIL_FORMAT_H_
