#include "resource/human_bytes.h"

#include "fmt/format.h"

namespace podtopo {

std::string HumanBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  static constexpr int kLast = 6;
  if (bytes == 0) return "0";
  // The largest unit that fits.
  int unit = 0;
  while (unit < kLast && bytes >> (10 * (unit + 1)) != 0) ++unit;
  const uint64_t size = uint64_t{1} << (10 * unit);
  const uint64_t whole = bytes / size;
  const uint64_t rest = bytes % size;
  // 1. Exact with at most two decimals.
  if (rest == 0) return fmt::format("{}{}", whole, kUnits[unit]);
  const unsigned __int128 hundredths = static_cast<unsigned __int128>(rest) * 100;
  if (hundredths % size == 0) {
    const auto h = static_cast<uint64_t>(hundredths / size);
    return h % 10 == 0 ? fmt::format("{}.{}{}", whole, h / 10, kUnits[unit])
                       : fmt::format("{}.{:02}{}", whole, h, kUnits[unit]);
  }
  // 2. Exact in a smaller unit, in fewer than 10240.
  int exact = 0;
  uint64_t v = bytes;
  while (exact < kLast && v % 1024 == 0) {
    v /= 1024;
    ++exact;
  }
  if (v < 10240) return fmt::format("{}{}", v, kUnits[exact]);
  // 3. Three significant digits.
  const double d = static_cast<double>(bytes) / static_cast<double>(size);
  return fmt::format("{:.{}f}{}", d, d < 10 ? 2 : (d < 100 ? 1 : 0), kUnits[unit]);
}

}  // namespace podtopo
