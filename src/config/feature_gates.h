// The feature gates a v1.37 kubelet knows, with their v1.37 defaults, stages, locks and
// dependencies.
//
// KubeletConfiguration.featureGates may only name gates from this table (plus the special
// AllAlpha / AllBeta toggles). The kubelet's feature gate (component-base featuregate,
// SetFromMap) refuses, with these texts:
//   unknown name:            `unrecognized feature gate: X`
//   locked gate moved:       `cannot set feature gate X to false, feature is locked to true`
//   dependency disabled:     `X is enabled, but depends on features that are disabled: [Y]`
// The v1.37 kubelet panics at start on the last one ("failed to merge global and in-flight
// KubeletConfiguration while setting defaults, error: ..."; k/k #140848, #140631): turning
// PodLevelResources off needs PodLevelResourcesFixDefaulting, PodLevelResourcesFixKubeletQOSClass
// and InPlacePodLevelResourcesVerticalScaling off too.
//
// Example:
//   const FeatureGateSpec* g = FindFeatureGate("PodLevelResourceManagers");
//   g->default_value;   // false (beta, disabled by default in v1.37)
//   g->stage;           // GateStage::kBeta
//   FeatureGateDependencies("PodLevelResourcesFixDefaulting");  // {"PodLevelResources"}
//
// Sources (which file and which PR each entry comes from): the table in feature_gates.cc.
// Gates only some other component registers are included too (the kubelet shares one gate
// registry with every component library it links), so a name here is "known", not
// necessarily "used by the kubelet".
#ifndef PODTOPO_CONFIG_FEATURE_GATES_H_
#define PODTOPO_CONFIG_FEATURE_GATES_H_

#include <span>
#include <string_view>

#include "kubelet/version.h"

namespace podtopo::config {

// The gate types are the kubelet's vocabulary (kubelet/version.h): a version's table is the
// v1.37 table below with that version's changes.
using kubelet::FeatureGateSpec;
using kubelet::GateStage;
using kubelet::GateStageName;

// The v1.37 table, sorted by name.
std::span<const FeatureGateSpec> KnownFeatureGates();
// nullptr when the kubelet does not know `name` (case-sensitive, as the kubelet). With a
// version, that version's spec: its gate_changes replace the v1.37 entry, and its unknown_gates
// are not known.
const FeatureGateSpec* FindFeatureGate(std::string_view name);
const FeatureGateSpec* FindFeatureGate(std::string_view name,
                                       const kubelet::KubeletVersion* version);

// The gates `gate` depends on, sorted (kube_features.go defaultKubernetesFeatureGateDependencies):
// when `gate` is enabled every one of them must be enabled. Empty for most gates.
std::span<const std::string_view> FeatureGateDependencies(std::string_view gate);

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
inline constexpr char kInPlacePodVerticalScalingExclusiveCPUs[] =
    "InPlacePodVerticalScalingExclusiveCPUs";
inline constexpr char kInPlacePodLevelResourcesVerticalScaling[] =
    "InPlacePodLevelResourcesVerticalScaling";
// Since #140514 (v1.37): the API server defaults pod-level limits (see api/).
inline constexpr char kPodLevelResourcesFixDefaulting[] = "PodLevelResourcesFixDefaulting";
// Since #137150 (v1.36): empty pod-level resources do not decide the QoS class.
inline constexpr char kPodLevelResourcesFixKubeletQOSClass[] =
    "PodLevelResourcesFixKubeletQOSClass";
// Deprecated and locked to true in v1.37 (#139351): exclusive containers get no CFS quota.
inline constexpr char kDisableCPUQuotaWithExclusiveCPUs[] = "DisableCPUQuotaWithExclusiveCPUs";
// Deprecated, default true: PodResources List reports active pods only.
inline constexpr char kKubeletPodResourcesListUseActivePods[] =
    "KubeletPodResourcesListUseActivePods";

}  // namespace podtopo::config

#endif  // PODTOPO_CONFIG_FEATURE_GATES_H_
