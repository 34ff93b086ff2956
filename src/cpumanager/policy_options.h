// The static CPU policy's options (kubelet cpumanager/policy_options.go).
//
// `cpuManagerPolicyOptions` is a map name -> value. NewStaticPolicyOptions checks each name
// against the options the kubelet knows and the feature gates that unlock alpha and beta
// options, parses each value with Go's strconv.ParseBool, then rejects the mutually
// exclusive pairs. ValidateStaticPolicyOptions checks the result against the machine and
// the Topology Manager policy. Every error text is the kubelet's.
//
// Example:
//   auto opts = NewStaticPolicyOptions({{"full-pcpus-only", "true"}}, OptionGates{});
//   opts->full_physical_cpus_only;   // true
//   NewStaticPolicyOptions({{"full-pcpus-only", "enabled!"}}, {}).status().message();
//   // bad value for option "full-pcpus-only": strconv.ParseBool: parsing "enabled!": invalid syntax
//
// Determinism: the kubelet walks the options map in Go's random order and reports the first
// bad option it meets, so with several bad options its message varies between runs. podtopo
// walks the options sorted by name (std::map order) and reports the first bad one in that
// order. The mutually exclusive pairs are checked after all options parsed, in the kubelet's
// fixed order.
#ifndef PODTOPO_CPUMANAGER_POLICY_OPTIONS_H_
#define PODTOPO_CPUMANAGER_POLICY_OPTIONS_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "topology/cpu_topology.h"

namespace podtopo::cpumanager {

// Option names, as users write them.
inline constexpr char kFullPcpusOnlyOption[] = "full-pcpus-only";
inline constexpr char kDistributeCpusAcrossNumaOption[] = "distribute-cpus-across-numa";
inline constexpr char kAlignBySocketOption[] = "align-by-socket";
inline constexpr char kDistributeCpusAcrossCoresOption[] = "distribute-cpus-across-cores";
inline constexpr char kStrictCpuReservationOption[] = "strict-cpu-reservation";
inline constexpr char kPreferAlignByUncoreCacheOption[] = "prefer-align-cpus-by-uncorecache";

enum class OptionMaturity { kAlpha, kBeta, kStable };

// The feature gates that unlock non-stable options. Defaults are the kubelet's:
// CPUManagerPolicyAlphaOptions off, CPUManagerPolicyBetaOptions on.
struct OptionGates {
  bool alpha_options = false;  // CPUManagerPolicyAlphaOptions
  bool beta_options = true;    // CPUManagerPolicyBetaOptions
  // Every option allowed (both gates on), as `podtopo debug take-cpus` uses.
  static OptionGates AllEnabled() { return {true, true}; }
};

struct StaticPolicyOptions {
  bool full_physical_cpus_only = false;        // full-pcpus-only (stable)
  bool distribute_cpus_across_numa = false;    // distribute-cpus-across-numa (beta)
  bool align_by_socket = false;                // align-by-socket (alpha)
  bool distribute_cpus_across_cores = false;   // distribute-cpus-across-cores (alpha)
  bool strict_cpu_reservation = false;         // strict-cpu-reservation (beta)
  bool prefer_align_by_uncore_cache = false;   // prefer-align-cpus-by-uncorecache (beta)
  friend bool operator==(const StaticPolicyOptions&, const StaticPolicyOptions&) = default;
};

// The maturity of a known option; kInvalidArgument `unknown CPU Manager Policy option: "x"`
// for an unknown name.
absl::StatusOr<OptionMaturity> OptionMaturityOf(const std::string& name);

// CheckPolicyOptionAvailable: the name is known and its maturity gate is on. Errors
// (kInvalidArgument) are the kubelet's texts:
//   unknown CPU Manager Policy option: "x"
//   CPU Manager Policy Alpha-level Options not enabled, but option "x" provided
//   CPU Manager Policy Beta-level Options not enabled, but option "x" provided
absl::Status CheckPolicyOptionAvailable(const std::string& name, const OptionGates& gates);

// NewStaticPolicyOptions. Options are checked in name order (see the banner). Errors
// (kInvalidArgument): the CheckPolicyOptionAvailable texts; `bad value for option "x":
// <GoParseBool error (util/go_strconv.h)>`; `static policy options A and B can not be used at the same time`.
absl::StatusOr<StaticPolicyOptions> NewStaticPolicyOptions(
    const std::map<std::string, std::string>& options, const OptionGates& gates);

// ValidateStaticPolicyOptions: with align-by-socket on,
//   - Topology Manager policy "single-numa-node" is refused with
//     `Topolgy manager single-numa-node policy is incompatible with CPUManager
//     align-by-socket policy option` (the typo is upstream's);
//   - NumSockets > NumNUMANodes is refused with `Align by socket is not compatible with
//     hardware where number of sockets are more than number of NUMA`.
absl::Status ValidateStaticPolicyOptions(const StaticPolicyOptions& options,
                                         const CpuTopology& topology,
                                         const std::string& topology_manager_policy);

}  // namespace podtopo::cpumanager

#endif  // PODTOPO_CPUMANAGER_POLICY_OPTIONS_H_
