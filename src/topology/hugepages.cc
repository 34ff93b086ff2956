#include "topology/hugepages.h"

#include <array>
#include <string_view>

#include "fmt/format.h"

namespace podtopo {
namespace {
constexpr std::array<std::string_view, 7> kSuffixes = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
}  // namespace

std::string BinarySiString(uint64_t bytes) {
  size_t exp = 0;
  while (bytes != 0 && bytes % 1024 == 0 && exp + 1 < kSuffixes.size()) {
    bytes /= 1024;
    ++exp;
  }
  return fmt::format("{}{}", bytes, kSuffixes[exp]);
}

std::string HugepageResourceName(uint64_t page_size_bytes) {
  return "hugepages-" + BinarySiString(page_size_bytes);
}

std::optional<uint64_t> HugepageSizeFromResourceName(const std::string& name) {
  constexpr std::string_view kPrefix = "hugepages-";
  if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0) {
    return std::nullopt;
  }
  std::string_view rest(name);
  rest.remove_prefix(kPrefix.size());
  uint64_t value = 0;
  size_t i = 0;
  for (; i < rest.size() && rest[i] >= '0' && rest[i] <= '9'; ++i) {
    if (value > (UINT64_MAX - 9) / 10) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(rest[i] - '0');
  }
  if (i == 0 || value == 0) return std::nullopt;
  std::string_view suffix = rest.substr(i);
  for (size_t exp = 0; exp < kSuffixes.size(); ++exp) {
    if (suffix != kSuffixes[exp]) continue;
    for (size_t k = 0; k < exp; ++k) {
      if (value > UINT64_MAX / 1024) return std::nullopt;
      value *= 1024;
    }
    // Only the canonical spelling counts ("hugepages-2048Ki" is not a kubelet name).
    if (HugepageResourceName(value) != name) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

}  // namespace podtopo
