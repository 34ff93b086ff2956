#include "cpumanager/policy_options.h"

#include "fmt/format.h"
#include "util/go_strconv.h"

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

}  // namespace

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

absl::StatusOr<StaticPolicyOptions> NewStaticPolicyOptions(
    const std::map<std::string, std::string>& options, const OptionGates& gates) {
  StaticPolicyOptions opts;
  for (const auto& [name, value] : options) {  // sorted by name: deterministic
    if (absl::Status s = CheckPolicyOptionAvailable(name, gates); !s.ok()) return s;
    absl::StatusOr<bool> parsed = GoParseBool(value);
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
