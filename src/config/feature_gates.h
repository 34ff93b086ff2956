// The feature gates a v1.37 kubelet knows, with their v1.37 defaults and stages.
//
// KubeletConfiguration.featureGates may only name gates from this table (plus the special
// AllAlpha / AllBeta toggles); the kubelet refuses anything else with
// `unrecognized feature gate: X`, and refuses to change a locked (GA) gate with
// `cannot set feature gate X to false, feature is locked to true`.
//
// Example:
//   const FeatureGateSpec* g = FindFeatureGate("PodLevelResourceManagers");
//   g->default_value;   // false (beta, disabled by default in v1.37)
//   g->stage;           // GateStage::kBeta
//
// Source: the v1.37 "Feature Gates" reference page. Gates only some other component
// registers are included too (the kubelet shares one gate registry with every component
// library it links), so a name here is "known", not necessarily "used by the kubelet".
#ifndef PODTOPO_CONFIG_FEATURE_GATES_H_
#define PODTOPO_CONFIG_FEATURE_GATES_H_

#include <span>
#include <string_view>

namespace podtopo::config {

enum class GateStage { kAlpha, kBeta, kGA, kDeprecated };
const char* GateStageName(GateStage stage);  // "Alpha", "Beta", "GA", "Deprecated"

struct FeatureGateSpec {
  std::string_view name;
  bool default_value;
  GateStage stage;
  bool locked;  // LockToDefault: setting the other value is an error
};

// The whole table, sorted by name.
std::span<const FeatureGateSpec> KnownFeatureGates();
// nullptr when the kubelet does not know `name` (case-sensitive, as the kubelet).
const FeatureGateSpec* FindFeatureGate(std::string_view name);

// Gate names podtopo reads.
inline constexpr char kPodLevelResources[] = "PodLevelResources";
inline constexpr char kPodLevelResourceManagers[] = "PodLevelResourceManagers";
inline constexpr char kCPUManagerPolicyAlphaOptions[] = "CPUManagerPolicyAlphaOptions";
inline constexpr char kCPUManagerPolicyBetaOptions[] = "CPUManagerPolicyBetaOptions";
inline constexpr char kCPUManagerPolicyOptions[] = "CPUManagerPolicyOptions";
inline constexpr char kTopologyManagerPolicyAlphaOptions[] = "TopologyManagerPolicyAlphaOptions";
inline constexpr char kTopologyManagerPolicyBetaOptions[] = "TopologyManagerPolicyBetaOptions";
inline constexpr char kTopologyManagerPolicyOptions[] = "TopologyManagerPolicyOptions";
inline constexpr char kMemoryManager[] = "MemoryManager";
inline constexpr char kInPlacePodVerticalScaling[] = "InPlacePodVerticalScaling";

}  // namespace podtopo::config

#endif  // PODTOPO_CONFIG_FEATURE_GATES_H_
