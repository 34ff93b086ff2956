#include "util/suggest.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace podtopo {
namespace {

// The edit distance of a and b when it is at most `cap`, else cap + 1: stops as soon as no
// alignment can stay within it (SuggestName asks for hundreds of names per unknown field).
size_t EditDistance(std::string_view a, std::string_view b, size_t cap) {
  const size_t length_gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (length_gap > cap) return cap + 1;
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > cap) return cap + 1;  // every later row is at least this row's minimum
    std::swap(prev, cur);
  }
  return std::min(prev[b.size()], cap + 1);
}

}  // namespace

std::string LowerNoDash(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_' || c == '.') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::optional<std::string> SuggestName(std::string_view name,
                                       std::span<const std::string_view> candidates) {
  const std::string key = LowerNoDash(name);
  if (key.empty()) return std::nullopt;
  for (std::string_view c : candidates) {
    if (LowerNoDash(c) == key) return std::string(c);
  }
  // The first candidate at the smallest distance, if that distance is within `allowed`: a
  // candidate is measured only up to what could still be suggested (within `allowed`, below
  // the best so far).
  const size_t allowed = std::max<size_t>(2, key.size() / 4);
  std::optional<std::string> best;
  size_t best_distance = allowed + 1;
  for (std::string_view c : candidates) {
    const size_t cap = best_distance - 1;
    size_t d = EditDistance(key, LowerNoDash(c), cap);
    if (d <= cap) {
      best_distance = d;
      best = std::string(c);
      if (d == 0) break;
    }
  }
  if (best) return best;
  // A prefix of a known name ("memoryManager" of memoryManagerPolicy).
  for (std::string_view c : candidates) {
    if (key.size() >= 4 && LowerNoDash(c).rfind(key, 0) == 0) return std::string(c);
  }
  return std::nullopt;
}

}  // namespace podtopo
