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

#include <functional>
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
  // metadata.annotations (a controller's pods: its template's). `serve --cri` hands them to
  // the runtime with the sandbox, as the kubelet does (podtopo nri reads podtopo.io/pod-spec).
  std::map<std::string, std::string> annotations;
  // spec.resources; nullopt when the manifest has no pod-level stanza.
  std::optional<ResourceRequirements> resources;
  std::vector<Container> init_containers;  // regular and restartable, in spec order
  std::vector<Container> containers;
  std::vector<Container> ephemeral_containers;
  // spec.nodeName: the node the pod is bound to ("" when not scheduled). podtopo compare
  // places pods by it.
  std::string node_name;
  // Where the manifest came from ("pod.yaml", "pod.yaml#2", "<stdin>"), for messages.
  std::string source;
  // The workload object the pod was expanded from ("Deployment", "web"); both empty for a
  // Pod object. See api/pod_yaml.h for the controllers read.
  std::string controller_kind;
  std::string controller_name;

  std::string Key() const { return namespace_name + "/" + name; }
  // The kubelet's resourcehelper.IsPodLevelResourcesSet: spec.resources has a cpu or memory
  // request or limit (or a hugepages one). Zero quantities count: only the keys are looked at.
  bool HasPodLevelResources() const;
  // resourcehelper.IsPodLevelRequestsSet / IsPodLevelLimitsSet: the same, for one side only.
  bool HasPodLevelRequests() const;
  bool HasPodLevelLimits() const;
  // Init containers, then app containers (the order admission walks them).
  std::vector<const Container*> InitAndAppContainers() const;
  const Container* FindContainer(const std::string& name) const;
};

// THE test of "is this the same pod": the parts of a pod that admission and its reports
// read, as one string: namespace, name and uid, then spec.resources and every container's
// name, kind, requests and limits (not images, commands, labels, spec.nodeName or the file it
// came from). Two pods with the same fingerprint are one pod to podtopo: `serve` keeps its
// allocation and Node::Admit reports it as already admitted; a pod whose fingerprint changed
// is admitted again (its old allocation released first). `serve` keeps these strings to
// remember what it admitted or rejected.
std::string PodSpecFingerprint(const Pod& pod);
// PodSpecFingerprint(a) == PodSpecFingerprint(b).
bool SamePodSpec(const Pod& a, const Pod& b);

enum class QosClass { kGuaranteed, kBurstable, kBestEffort };
const char* QosClassName(QosClass qos);  // "Guaranteed", "Burstable", "BestEffort"

// The feature gates that change how a pod is defaulted and classified, with their v1.37
// defaults. Every command that reads pods takes them from the kubelet configuration
// (api/pod_gates.h PodGatesFromConfig) and passes the same values to loading (defaulting)
// and to GetPodQos, so one pod has one QoS class everywhere.
struct PodGates {
  bool pod_level_resources = true;    // PodLevelResources
  bool fix_defaulting = true;         // PodLevelResourcesFixDefaulting (k/k #140514)
  bool fix_kubelet_qos_class = true;  // PodLevelResourcesFixKubeletQOSClass (k/k #135082)
};

// THE pod QoS class (v1qos.GetPodQOS / ComputePodQOS) with the pod-level rules of
// KEP-2837; admission, the managers, explain, lint, serve, compare and the pictures all call
// it. Only cpu and memory count (hugepages and extended resources do not); zero quantities
// count as unset; init containers count, ephemeral containers do not.
//  * With pod-level resources in play, spec.resources ALONE decides, for both cpu and memory:
//    Guaranteed iff its limits name both cpu and memory (non-zero) and every non-zero request
//    equals its limit; a resource the pod level does not name is not taken from the
//    containers (a pod-level stanza with only cpu is Burstable).
//  * Otherwise: summed over init and app containers, every container has non-zero cpu and
//    memory limits and the sums of requests equal the sums of limits -> Guaranteed; nothing
//    set anywhere -> BestEffort; else Burstable.
// "Pod-level resources in play" is `gates.pod_level_resources` and, with
// `gates.fix_kubelet_qos_class` (on by default since v1.36), HasPodLevelResources(); without
// the fix any spec.resources stanza, even an empty one (`resources: {}`), takes the
// pod-level branch (k/k #135082).
QosClass GetPodQos(const Pod& pod, const PodGates& gates = {});

// cm/qos IsContainerEquivalentQOSGuaranteed: cpu and memory requests are non-zero and equal
// to their limits.
bool IsContainerEquivalentQosGuaranteed(const Container& container);

// "hugepages-2Mi", "hugepages-1Gi", ...
bool IsHugePageResourceName(const std::string& name);
// resourcehelper.IsSupportedPodLevelResource: cpu, memory and hugepages-*.
bool IsSupportedPodLevelResource(const std::string& name);

// resourcehelper.AggregateContainerRequests / AggregateContainerLimits: the KEP-753 sidecar
// formula over init and app containers (ephemeral containers never count), per resource:
//   max(sum(app) + sum(sidecars), max_i(init_i + sum(sidecars declared before init_i)))
// A resource no container names is absent from the result.
ResourceList AggregateContainerRequests(const Pod& pod);
ResourceList AggregateContainerLimits(const Pod& pod);

// resourcehelper.PodRequests / PodLimits without overhead: the container aggregate, with
// each supported pod-level value (cpu, memory, hugepages-*) replacing it when the pod sets
// pod-level requests (PodRequests) or any pod-level resources (PodLimits). With
// `pod_level_resources_enabled` false the pod level is ignored.
ResourceList PodRequests(const Pod& pod, bool pod_level_resources_enabled = true);
ResourceList PodLimits(const Pod& pod, bool pod_level_resources_enabled = true);
// PodLimits of the resources `keep` accepts only (the same values; the others are not
// aggregated): the device manager's getPodDeviceRequest.
ResourceList PodLimitsOf(const Pod& pod, const std::function<bool(const std::string&)>& keep,
                         bool pod_level_resources_enabled = true);

}  // namespace podtopo

#endif  // PODTOPO_API_POD_H_
