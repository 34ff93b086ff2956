// Pod: the parts of a v1 Pod that the kubelet's resource managers read.
//
// Pods come from YAML manifests (api/pod_yaml.h). This header is the in-memory model: pod
// metadata, the pod-level `spec.resources` (KEP-2837), and the init, app and ephemeral
// containers with their requests and limits. Defaulting (api/pod_yaml.h) has already been
// applied when a Pod reaches a manager: container requests default to limits, pod-level
// requests default as the API server does, and every pod has a uid.
//
// Thread safety: a value type.
#ifndef PODTOPO_API_POD_H_
#define PODTOPO_API_POD_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "resource/quantity.h"

namespace podtopo {

// Resource name ("cpu", "memory", "hugepages-2Mi", "example.com/gpu") -> quantity.
// Ordered, so every walk over resources is deterministic.
using ResourceList = std::map<std::string, Quantity>;

inline constexpr char kResourceCpu[] = "cpu";
inline constexpr char kResourceMemory[] = "memory";
inline constexpr char kHugePagesPrefix[] = "hugepages-";

struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
};

// How a container runs in its pod, as the KEP and podtopo's output name it.
enum class ContainerKind {
  kInit,       // regular init container: runs to completion before the next one
  kSidecar,    // init container with restartPolicy: Always (restartable init container)
  kApp,        // spec.containers
  kEphemeral,  // spec.ephemeralContainers
};
const char* ContainerKindName(ContainerKind kind);  // "init", "sidecar", "app", "ephemeral"

struct Container {
  std::string name;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  ResourceRequirements resources;
  ContainerKind kind = ContainerKind::kApp;
  bool IsRestartableInit() const { return kind == ContainerKind::kSidecar; }
};

struct Pod {
  std::string name;
  std::string namespace_name = "default";
  std::string uid;
  std::map<std::string, std::string> labels;
  // spec.resources; nullopt when the manifest has no pod-level stanza.
  std::optional<ResourceRequirements> resources;
  std::vector<Container> init_containers;  // regular and restartable, in spec order
  std::vector<Container> containers;
  std::vector<Container> ephemeral_containers;
  // Where the manifest came from ("pod.yaml", "pod.yaml#2", "<stdin>"), for messages.
  std::string source;

  std::string Key() const { return namespace_name + "/" + name; }
  // The kubelet's resourcehelper.IsPodLevelResourcesSet: spec.resources has a cpu or memory
  // request or limit (or a hugepages one).
  bool HasPodLevelResources() const;
  // Init containers, then app containers (the order admission walks them).
  std::vector<const Container*> InitAndAppContainers() const;
  const Container* FindContainer(const std::string& name) const;
};

enum class QosClass { kGuaranteed, kBurstable, kBestEffort };
const char* QosClassName(QosClass qos);  // "Guaranteed", "Burstable", "BestEffort"

// v1qos.GetPodQOS with the pod-level rules of KEP-2837 (PodLevelResources on): when
// spec.resources is set it alone decides for the resources it names; zero quantities count
// as unset. `pod_level_resources_enabled` is the PodLevelResources gate.
QosClass GetPodQos(const Pod& pod, bool pod_level_resources_enabled = true);

// cm/qos IsContainerEquivalentQOSGuaranteed: cpu and memory requests are non-zero and equal
// to their limits.
bool IsContainerEquivalentQosGuaranteed(const Container& container);

}  // namespace podtopo

#endif  // PODTOPO_API_POD_H_
