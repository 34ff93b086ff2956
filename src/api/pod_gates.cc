#include "api/pod_gates.h"

#include "config/feature_gates.h"

namespace podtopo {

PodGates PodGatesFromConfig(const config::KubeletConfig& cfg) {
  return PodGates{.pod_level_resources = cfg.FeatureEnabled(config::kPodLevelResources),
                  .fix_defaulting = cfg.FeatureEnabled(config::kPodLevelResourcesFixDefaulting),
                  .fix_kubelet_qos_class =
                      cfg.FeatureEnabled(config::kPodLevelResourcesFixKubeletQOSClass)};
}

}  // namespace podtopo
