// The pod-related feature gates (api/pod.h PodGates) as a kubelet configuration sets them.
//
//   PodGates gates = PodGatesFromConfig(cfg);
//   LoadPods(path, {.gates = gates});   // defaulting
//   GetPodQos(pod, gates);              // QoS
//
// Each gate is KubeletConfig::FeatureEnabled (featureGates as written, else the v1.37 default
// of config/feature_gates.h: all three on).
#ifndef PODTOPO_API_POD_GATES_H_
#define PODTOPO_API_POD_GATES_H_

#include "api/pod.h"
#include "config/kubelet_config.h"

namespace podtopo {

PodGates PodGatesFromConfig(const config::KubeletConfig& cfg);

}  // namespace podtopo

#endif  // PODTOPO_API_POD_GATES_H_
