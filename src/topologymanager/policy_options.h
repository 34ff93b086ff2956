// Topology Manager policy options (kubelet topologymanager/policy_options.go):
// the KubeletConfiguration map `topologyManagerPolicyOptions`.
//
//   prefer-closest-numa-nodes  bool (Go strconv.ParseBool)  GA   best-effort / restricted
//                                                                 break ties by NUMA distance
//   max-allowable-numa-nodes   int >= 8 (Go strconv.Atoi)   GA   NUMA nodes the manager accepts
//
// Both options are GA on master, so the gate checks below cannot fire for them; the check is
// kept for the kubelet's order of errors and for future options. Options are checked in
// ascending name order (the kubelet walks a Go map, i.e. a random order, so with two bad
// options it may report either one).
//
// Example:
//   absl::StatusOr<PolicyOptions> o = NewPolicyOptions({{"prefer-closest-numa-nodes", "true"}});
//   o->prefer_closest_numa;        // true
//   o->max_allowable_numa_nodes;   // 8
#ifndef PODTOPO_TOPOLOGYMANAGER_POLICY_OPTIONS_H_
#define PODTOPO_TOPOLOGYMANAGER_POLICY_OPTIONS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace podtopo::topologymanager {

inline constexpr char kPreferClosestNUMANodes[] = "prefer-closest-numa-nodes";
inline constexpr char kMaxAllowableNUMANodes[] = "max-allowable-numa-nodes";
inline constexpr int64_t kDefaultMaxAllowableNUMANodes = 8;

struct PolicyOptions {
  bool prefer_closest_numa = false;
  int64_t max_allowable_numa_nodes = kDefaultMaxAllowableNUMANodes;
};

// Feature gates that decide which option maturity levels are usable.
struct PolicyOptionGates {
  bool alpha_options = false;  // TopologyManagerPolicyAlphaOptions (alpha, default off)
  bool beta_options = true;    // TopologyManagerPolicyBetaOptions (beta, default on)
};

// CheckPolicyOptionAvailable: errors `unknown Topology Manager Policy option: "x"`, and for an
// alpha / beta option whose gate is off `topology manager policy alpha-level options not
// enabled, but option "x" provided` (beta-level likewise; the capitalisation of these two texts
// changed between releases and is UNCONFIRMED for v1.37).
absl::Status CheckPolicyOptionAvailable(const std::string& option, const PolicyOptionGates& gates);

// NewPolicyOptions. Errors (exact kubelet texts):
//   bad value for option "prefer-closest-numa-nodes": strconv.ParseBool: parsing "x": invalid syntax
//   unable to convert policy option to integer "max-allowable-numa-nodes": strconv.Atoi: parsing "x": invalid syntax
//   the minimum value of "max-allowable-numa-nodes" should not be less than 8
// A value above 8 is accepted (the kubelet only logs a warning).
absl::StatusOr<PolicyOptions> NewPolicyOptions(const std::map<std::string, std::string>& options,
                                               const PolicyOptionGates& gates = {});

}  // namespace podtopo::topologymanager

#endif  // PODTOPO_TOPOLOGYMANAGER_POLICY_OPTIONS_H_
