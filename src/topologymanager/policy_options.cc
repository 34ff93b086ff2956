#include "topologymanager/policy_options.h"

#include <cstdint>
#include <set>

#include "fmt/format.h"
#include "util/go_strconv.h"

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

}  // namespace

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
