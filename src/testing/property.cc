#include "testing/property.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace podtopo::testing {
namespace {

bool ParseSeed(const std::string& text, uint64_t& out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtoull(text.c_str(), &end, 10);
  return errno == 0 && end != nullptr && *end == '\0';
}

}  // namespace

std::optional<std::vector<uint64_t>> PropertySeedsFromEnv(std::string* error) {
  const char* env = std::getenv("PODTOPO_PROPERTY_SEEDS");
  if (env == nullptr || *env == '\0') return std::nullopt;
  const std::string text = env;
  const size_t dash = text.find('-');
  uint64_t first = 0, last = 0;
  const bool ok = dash == std::string::npos
                      ? ParseSeed(text, first) && ParseSeed(text, last)
                      : ParseSeed(text.substr(0, dash), first) &&
                            ParseSeed(text.substr(dash + 1), last);
  if (!ok || last < first || last - first >= 100'000'000) {
    *error = "PODTOPO_PROPERTY_SEEDS=\"" + text +
             "\": want a seed or a range FIRST-LAST (FIRST <= LAST, at most 10^8 seeds)";
    return std::nullopt;
  }
  std::vector<uint64_t> seeds;
  for (uint64_t s = first;; ++s) {
    seeds.push_back(s);
    if (s == last) break;
  }
  return seeds;
}

std::vector<uint32_t> PropertySeeds(uint32_t fixed) {
  std::string error;
  const auto seeds = PropertySeedsFromEnv(&error);
  if (!error.empty()) ADD_FAILURE() << error;
  if (!seeds.has_value()) return {fixed};
  std::vector<uint32_t> out;
  for (uint64_t s : *seeds) out.push_back(fixed ^ static_cast<uint32_t>(s));
  return out;
}

bool MaxSuccessFromRcParams() {
  const char* params = std::getenv("RC_PARAMS");
  return params != nullptr && std::strstr(params, "max_success") != nullptr;
}

}  // namespace podtopo::testing
