#include "cpumanager/policy_options.h"

#include <cstdint>

#include "fmt/format.h"

namespace podtopo::cpumanager {
namespace {

struct KnownOption {
  const char* name;
  OptionMaturity maturity;
  bool StaticPolicyOptions::*field;
};

// Maturity as of the v1.35-v1.37 kubelet (spec cpumanager.md §3.6).
constexpr KnownOption kKnownOptions[] = {
    {kFullPcpusOnlyOption, OptionMaturity::kStable, &StaticPolicyOptions::full_physical_cpus_only},
    {kDistributeCpusAcrossNumaOption, OptionMaturity::kBeta,
     &StaticPolicyOptions::distribute_cpus_across_numa},
    {kAlignBySocketOption, OptionMaturity::kAlpha, &StaticPolicyOptions::align_by_socket},
    {kDistributeCpusAcrossCoresOption, OptionMaturity::kAlpha,
     &StaticPolicyOptions::distribute_cpus_across_cores},
    {kStrictCpuReservationOption, OptionMaturity::kBeta,
     &StaticPolicyOptions::strict_cpu_reservation},
    {kPreferAlignByUncoreCacheOption, OptionMaturity::kBeta,
     &StaticPolicyOptions::prefer_align_by_uncore_cache},
};

const KnownOption* FindOption(const std::string& name) {
  for (const KnownOption& o : kKnownOptions) {
    if (name == o.name) return &o;
  }
  return nullptr;
}

// Length of the valid UTF-8 sequence starting at s[i] (1..4), or 0 when invalid. Mirrors
// Go's utf8.DecodeRuneInString acceptance (no overlongs, no surrogates, <= U+10FFFF).
int Utf8SequenceLength(const std::string& s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t b0 = byte(i);
  if (b0 < 0x80) return 1;
  int len;
  uint32_t cp;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + static_cast<size_t>(len) > s.size()) return 0;
  for (int k = 1; k < len; ++k) {
    uint8_t b = byte(i + static_cast<size_t>(k));
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return len;
}

}  // namespace

std::string GoQuote(const std::string& s) {
  std::string out = "\"";
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      int len = Utf8SequenceLength(s, i);
      if (len == 0) {
        out += fmt::format("\\x{:02x}", c);
        ++i;
      } else {
        // Non-ASCII printable runes are kept as they are (Go's IsPrint covers nearly all).
        out.append(s, i, static_cast<size_t>(len));
        i += static_cast<size_t>(len);
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
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

absl::StatusOr<OptionMaturity> OptionMaturityOf(const std::string& name) {
  const KnownOption* o = FindOption(name);
  if (o == nullptr) {
    return absl::InvalidArgumentError(
        fmt::format("unknown CPU Manager Policy option: {}", GoQuote(name)));
  }
  return o->maturity;
}

absl::Status CheckPolicyOptionAvailable(const std::string& name, const OptionGates& gates) {
  absl::StatusOr<OptionMaturity> maturity = OptionMaturityOf(name);
  if (!maturity.ok()) return maturity.status();
  if (*maturity == OptionMaturity::kAlpha && !gates.alpha_options) {
    return absl::InvalidArgumentError(fmt::format(
        "CPU Manager Policy Alpha-level Options not enabled, but option {} provided",
        GoQuote(name)));
  }
  if (*maturity == OptionMaturity::kBeta && !gates.beta_options) {
    return absl::InvalidArgumentError(fmt::format(
        "CPU Manager Policy Beta-level Options not enabled, but option {} provided",
        GoQuote(name)));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ParseGoBool(const std::string& value) {
  static const char* const kTrue[] = {"1", "t", "T", "TRUE", "true", "True"};
  static const char* const kFalse[] = {"0", "f", "F", "FALSE", "false", "False"};
  for (const char* t : kTrue) {
    if (value == t) return true;
  }
  for (const char* f : kFalse) {
    if (value == f) return false;
  }
  return absl::InvalidArgumentError(
      fmt::format("strconv.ParseBool: parsing {}: invalid syntax", GoQuote(value)));
}

absl::StatusOr<StaticPolicyOptions> NewStaticPolicyOptions(
    const std::map<std::string, std::string>& options, const OptionGates& gates) {
  StaticPolicyOptions opts;
  for (const auto& [name, value] : options) {  // sorted by name: deterministic
    if (absl::Status s = CheckPolicyOptionAvailable(name, gates); !s.ok()) return s;
    absl::StatusOr<bool> parsed = ParseGoBool(value);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(fmt::format(
          "bad value for option {}: {}", GoQuote(name), std::string(parsed.status().message())));
    }
    opts.*(FindOption(name)->field) = *parsed;
  }

  struct Exclusive {
    bool StaticPolicyOptions::*a;
    const char* a_name;
    bool StaticPolicyOptions::*b;
    const char* b_name;
  };
  // The kubelet's order of checks and of names inside each message.
  static const Exclusive kExclusive[] = {
      {&StaticPolicyOptions::full_physical_cpus_only, kFullPcpusOnlyOption,
       &StaticPolicyOptions::distribute_cpus_across_cores, kDistributeCpusAcrossCoresOption},
      {&StaticPolicyOptions::distribute_cpus_across_numa, kDistributeCpusAcrossNumaOption,
       &StaticPolicyOptions::distribute_cpus_across_cores, kDistributeCpusAcrossCoresOption},
      {&StaticPolicyOptions::prefer_align_by_uncore_cache, kPreferAlignByUncoreCacheOption,
       &StaticPolicyOptions::distribute_cpus_across_cores, kDistributeCpusAcrossCoresOption},
      {&StaticPolicyOptions::prefer_align_by_uncore_cache, kPreferAlignByUncoreCacheOption,
       &StaticPolicyOptions::distribute_cpus_across_numa, kDistributeCpusAcrossNumaOption},
  };
  for (const Exclusive& e : kExclusive) {
    if (opts.*(e.a) && opts.*(e.b)) {
      return absl::InvalidArgumentError(fmt::format(
          "static policy options {} and {} can not be used at the same time", e.a_name, e.b_name));
    }
  }
  return opts;
}

absl::Status ValidateStaticPolicyOptions(const StaticPolicyOptions& options,
                                         const CpuTopology& topology,
                                         const std::string& topology_manager_policy) {
  if (!options.align_by_socket) return absl::OkStatus();
  if (topology_manager_policy == "single-numa-node") {
    return absl::InvalidArgumentError(fmt::format(
        "Topolgy manager {} policy is incompatible with CPUManager {} policy option",
        topology_manager_policy, kAlignBySocketOption));
  }
  if (topology.num_sockets > topology.num_numa_nodes) {
    return absl::InvalidArgumentError(
        "Align by socket is not compatible with hardware where number of sockets are more than "
        "number of NUMA");
  }
  return absl::OkStatus();
}

}  // namespace podtopo::cpumanager
