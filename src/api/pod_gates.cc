#include "api/pod_gates.h"

#include <string>

#include "config/feature_gates.h"

namespace podtopo {
namespace {

bool GateByName(const config::KubeletConfig& cfg, const char* name, bool v137_default) {
  if (config::FindFeatureGate(name) != nullptr) return cfg.FeatureEnabled(name);
  auto it = cfg.feature_gates.find(name);
  return it != cfg.feature_gates.end() ? it->second : v137_default;
}

}  // namespace

PodGates PodGatesFromConfig(const config::KubeletConfig& cfg) {
  const PodGates v137;
  PodGates gates;
  gates.pod_level_resources =
      GateByName(cfg, config::kPodLevelResources, v137.pod_level_resources);
  gates.fix_defaulting =
      GateByName(cfg, kPodLevelResourcesFixDefaulting, v137.fix_defaulting);
  gates.fix_kubelet_qos_class =
      GateByName(cfg, kPodLevelResourcesFixKubeletQOSClass, v137.fix_kubelet_qos_class);
  return gates;
}

}  // namespace podtopo
