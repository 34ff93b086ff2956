// What a pod looks like to podtopo when all it has is what NRI carries.
//
// The kubelet admits a pod from its spec; an NRI plugin sees the pod sandbox (its name,
// namespace, uid, labels and annotations, and the pod's summed Linux resources) and then each
// container as it is created (its CRI LinuxContainerResources: CPU shares, CFS quota and period,
// memory limit, hugepage limits). podtopo rebuilds the pod's resource model from them:
//
// - Exactly, from the pod annotation kPodSpecAnnotation (`podtopo.io/pod-spec`; the kubelet
//   copies pod annotations onto the sandbox): a JSON object holding the pod spec's
//   `initContainers`, `containers` and `resources` (at least the containers' names, resources
//   and restartPolicy). A mutating webhook or the workload's template can set it.
// - Otherwise, recovered (ContainerFromNri), as far as it can be:
//     cpu request  = ceil(shares * 1000 / 1024), none for 2 shares or fewer (the kubelet's
//                    MilliCPUToShares floors and has a minimum of 2: 1m and 2m look like none);
//     cpu limit    = ceil(quota * 1000 / period), none without a positive quota (a limit under
//                    10m shows as the kubelet's minimum quota of 1000 us);
//     memory limit = the memory limit; memory request = the limit (CRI on cgroup v1 carries no
//                    memory request; a Burstable container's smaller request is not seen);
//     hugepages    = the hugepage limits, requests equal to them.
//   Container kinds: the containers seen so far, in creation order; one that already exited
//   when a later one was created is an init container (the kubelet runs init containers to
//   completion first); a restartable init container (sidecar) cannot be told from an app
//   container and is taken as one. Pod-level resources (spec.resources) cannot be told from the
//   sandbox's resources alone (the kubelet fills them with the pod's requests and limits with or
//   without a pod-level stanza); the pod annotation kPodLevelAnnotation
//   (`podtopo.io/pod-level-resources: "true"`) states that the pod has one, and the sandbox's
//   resources (LinuxPodSandbox.pod_resources, recovered as a container's) become spec.resources.
// Both go through ParsePods, so defaulting and validation are those of every other command.
#ifndef PODTOPO_NRI_POD_MODEL_H_
#define PODTOPO_NRI_POD_MODEL_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/pod.h"
#include "api/pod_yaml.h"
#include "nlohmann/json.hpp"
#include "nri/v1alpha1/api.pb.h"

namespace podtopo::nri {

namespace nriapi = ::nri::pkg::api::v1alpha1;

inline constexpr char kPodSpecAnnotation[] = "podtopo.io/pod-spec";
inline constexpr char kPodLevelAnnotation[] = "podtopo.io/pod-level-resources";

// A container as NRI showed it to podtopo.
struct SeenContainer {
  std::string name;
  nriapi::LinuxResources resources;
  bool exited = false;  // it had exited when a later container of the pod was created
};

// The container's `resources` stanza (JSON, Kubernetes quantities) recovered from its CRI
// resources (see the banner).
nlohmann::json ResourcesFromNri(const nriapi::LinuxResources& resources);

// The pod from the kPodSpecAnnotation annotation; nullopt without it. Errors name the pod and
// the annotation (bad JSON, a spec ParsePods refuses).
absl::StatusOr<std::optional<Pod>> PodFromAnnotation(const nriapi::PodSandbox& sandbox,
                                                     const PodLoadOptions& options);

// The pod recovered from the containers seen (see the banner). Errors: those of ParsePods;
// kPodLevelAnnotation other than "true"/"false", or "true" on a sandbox without resources.
absl::StatusOr<Pod> RecoveredPod(const nriapi::PodSandbox& sandbox,
                                 const std::vector<SeenContainer>& containers,
                                 const PodLoadOptions& options);

}  // namespace podtopo::nri

#endif  // PODTOPO_NRI_POD_MODEL_H_
