// The pod-related feature gates (api/pod.h PodGates) as a kubelet configuration sets them.
//
//   PodGates gates = PodGatesFromConfig(cfg);
//   LoadPods(path, {.gates = gates});   // defaulting
//   GetPodQos(pod, gates);              // QoS
//
// Each gate is read by name: a gate the feature-gate table (config/feature_gates.h) knows
// takes KubeletConfig::FeatureEnabled; a gate the table does not know yet is taken from
// featureGates as written, else its v1.37 default (PodLevelResourcesFixDefaulting and
// PodLevelResourcesFixKubeletQOSClass: on; pkg/features/kube_features.go).
#ifndef PODTOPO_API_POD_GATES_H_
#define PODTOPO_API_POD_GATES_H_

#include "api/pod.h"
#include "config/kubelet_config.h"

namespace podtopo {

inline constexpr char kPodLevelResourcesFixDefaulting[] = "PodLevelResourcesFixDefaulting";
inline constexpr char kPodLevelResourcesFixKubeletQOSClass[] =
    "PodLevelResourcesFixKubeletQOSClass";

PodGates PodGatesFromConfig(const config::KubeletConfig& cfg);

}  // namespace podtopo

#endif  // PODTOPO_API_POD_GATES_H_
