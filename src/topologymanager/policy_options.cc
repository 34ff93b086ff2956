#include "topologymanager/policy_options.h"

#include <cstdint>
#include <limits>
#include <set>

#include "fmt/format.h"

namespace podtopo::topologymanager {
namespace {

// Option maturity on master (v1.37): both options are GA.
const std::set<std::string>& AlphaOptions() {
  static const auto* options = new std::set<std::string>{};
  return *options;
}
const std::set<std::string>& BetaOptions() {
  static const auto* options = new std::set<std::string>{};
  return *options;
}
const std::set<std::string>& StableOptions() {
  static const auto* options =
      new std::set<std::string>{kPreferClosestNUMANodes, kMaxAllowableNUMANodes};
  return *options;
}

std::string NumError(const char* func, const std::string& num, const char* what) {
  return fmt::format("strconv.{}: parsing {}: {}", func, GoQuote(num), what);
}

// strconv.ParseBool.
absl::StatusOr<bool> GoParseBool(const std::string& s) {
  if (s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "false" || s == "FALSE" || s == "False") {
    return false;
  }
  return absl::InvalidArgumentError(NumError("ParseBool", s, "invalid syntax"));
}

// strconv.Atoi on a 64-bit platform (ParseInt(s, 10, 64) semantics: optional sign, decimal
// digits only; the first overflow is a range error even if a bad character follows).
absl::StatusOr<int64_t> GoAtoi(const std::string& s) {
  auto syntax = [&] { return absl::InvalidArgumentError(NumError("Atoi", s, "invalid syntax")); };
  auto range = [&] {
    return absl::InvalidArgumentError(NumError("Atoi", s, "value out of range"));
  };
  if (s.empty()) return syntax();
  size_t pos = 0;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    pos = 1;
  }
  if (pos == s.size()) return syntax();
  constexpr uint64_t kMaxUint64 = std::numeric_limits<uint64_t>::max();
  constexpr uint64_t kCutoff = kMaxUint64 / 10 + 1;
  uint64_t n = 0;
  for (; pos < s.size(); ++pos) {
    char c = s[pos];
    if (c < '0' || c > '9') return syntax();
    if (n >= kCutoff) return range();
    n *= 10;
    uint64_t n1 = n + static_cast<uint64_t>(c - '0');
    if (n1 < n) return range();
    n = n1;
  }
  constexpr uint64_t kLimit = uint64_t{1} << 63;
  if (!negative && n >= kLimit) return range();
  if (negative && n > kLimit) return range();
  if (negative) return static_cast<int64_t>(~n + 1);
  return static_cast<int64_t>(n);
}

void AppendUtf8Escaped(std::string& out, const std::string& s, size_t& i) {
  // Decodes one UTF-8 sequence starting at s[i]; valid ones are copied (podtopo treats every
  // valid non-ASCII rune as printable), invalid bytes become \xNN as in Go.
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b0 = byte(i);
  size_t len = 0;
  uint32_t min = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    min = 0x10000;
  }
  bool valid = len > 0 && i + len <= s.size();
  uint32_t rune = len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (size_t k = 1; valid && k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      valid = false;
    } else {
      rune = (rune << 6) | (byte(i + k) & 0x3F);
    }
  }
  if (valid && (rune < min || rune > 0x10FFFF || (rune >= 0xD800 && rune <= 0xDFFF))) {
    valid = false;
  }
  if (!valid) {
    out += fmt::format("\\x{:02x}", b0);
    i += 1;
    return;
  }
  out.append(s, i, len);
  i += len;
}

}  // namespace

std::string GoQuote(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      AppendUtf8Escaped(out, s, i);
      continue;
    }
    switch (c) {
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out += "\"";
  return out;
}

absl::Status CheckPolicyOptionAvailable(const std::string& option,
                                        const PolicyOptionGates& gates) {
  bool alpha = AlphaOptions().count(option) > 0;
  bool beta = BetaOptions().count(option) > 0;
  bool stable = StableOptions().count(option) > 0;
  if (!alpha && !beta && !stable) {
    return absl::InvalidArgumentError(
        fmt::format("unknown Topology Manager Policy option: {}", GoQuote(option)));
  }
  if (alpha && !gates.alpha_options) {
    return absl::InvalidArgumentError(fmt::format(
        "topology manager policy alpha-level options not enabled, but option {} provided",
        GoQuote(option)));
  }
  if (beta && !gates.beta_options) {
    return absl::InvalidArgumentError(fmt::format(
        "topology manager policy beta-level options not enabled, but option {} provided",
        GoQuote(option)));
  }
  return absl::OkStatus();
}

absl::StatusOr<PolicyOptions> NewPolicyOptions(const std::map<std::string, std::string>& options,
                                               const PolicyOptionGates& gates) {
  PolicyOptions opts;
  for (const auto& [name, value] : options) {
    absl::Status available = CheckPolicyOptionAvailable(name, gates);
    if (!available.ok()) return available;
    if (name == kPreferClosestNUMANodes) {
      absl::StatusOr<bool> parsed = GoParseBool(value);
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(fmt::format(
            "bad value for option {}: {}", GoQuote(name), std::string(parsed.status().message())));
      }
      opts.prefer_closest_numa = *parsed;
    } else if (name == kMaxAllowableNUMANodes) {
      absl::StatusOr<int64_t> parsed = GoAtoi(value);
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            fmt::format("unable to convert policy option to integer {}: {}", GoQuote(name),
                        std::string(parsed.status().message())));
      }
      if (*parsed < kDefaultMaxAllowableNUMANodes) {
        return absl::InvalidArgumentError(
            fmt::format("the minimum value of {} should not be less than {}", GoQuote(name),
                        kDefaultMaxAllowableNUMANodes));
      }
      opts.max_allowable_numa_nodes = *parsed;
    } else {
      // Unreachable while every known option has a case above (as in the kubelet).
      return absl::InvalidArgumentError(
          fmt::format("unsupported topologymanager option: {} ({})", GoQuote(name), value));
    }
  }
  return opts;
}

}  // namespace podtopo::topologymanager
