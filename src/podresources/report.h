// PodResources reporting: admission results -> the kubelet's PodResources v1 / v1alpha1 messages.
//
// The rules are the kubelet's (pkg/kubelet/apis/podresources/server_v1.go, v1.37):
//  * containers: restartable init containers (sidecars) in spec order, then app containers in
//    spec order; regular init containers and ephemeral containers are never listed;
//  * container cpu_ids: the container's EXCLUSIVE CPUs only (node_exclusive or pod_exclusive);
//    containers in the node's or the pod's shared pool report none;
//  * container memory: the Memory Manager's blocks of the container, except for a container
//    living in a pod-level shared pool (pod-level memory present and the container is not
//    "equivalent Guaranteed"), which reports none;
//  * pod cpu_ids / memory (fields 4 and 5): the pod-level bubble and pod-level memory blocks,
//    only for pods with a pod-level exclusive allocation and only when the
//    PodLevelResourceManagers gate is on; they overlap the exclusive containers' sets;
//  * devices: one ContainerDevices per device, with the device's NUMA node as topology.
// Compat::k1_36 serves as a v1.36 kubelet did (before k/k PR #138738): no pod-level fields and
// container cpu_ids / memory straight from the managers' state, i.e. containers of a pod-level
// shared pool report the pool.
//
// Example:
//   ReportingRules rules{.pod_level_gate = true, .compat = Compat::k1_37};
//   v1::PodResources pr = BuildPodResources(admitted_pod, rules, device_numa);
//   pr.cpu_ids();                 // the pod's bubble, e.g. 2,3,4,5
//   pr.containers(2).cpu_ids();   // main-app's exclusive CPUs
#ifndef PODTOPO_PODRESOURCES_REPORT_H_
#define PODTOPO_PODRESOURCES_REPORT_H_

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "podresources/v1/api.pb.h"
#include "podresources/v1alpha1/api.pb.h"
#include "serve/runtime_hooks.h"
#include "topology/node_topology.h"

namespace podtopo::podresources {

enum class Compat { k1_37, k1_36 };

struct ReportingRules {
  bool pod_level_gate = false;  // the kubelet's PodLevelResourceManagers gate
  Compat compat = Compat::k1_37;
  // The KubeletPodResourcesListUseActivePods gate (deprecated, on by default): List reports
  // the active pods. Off, List reports every pod the node knows, rejected ones included.
  bool list_active_pods = true;
};

// "resource/id" -> NUMA node (-1: none), from the node's devices.
using DeviceNuma = std::map<std::string, int>;
DeviceNuma DeviceNumaMap(const NodeTopology& topology);

// One pod as List and Get report it.
v1::PodResources BuildPodResources(const serve::AdmittedPod& pod, const ReportingRules& rules,
                                   const DeviceNuma& device_numa);

// The legacy v1alpha1 view of the same pod (names and devices only).
v1alpha1::PodResources BuildV1alpha1PodResources(const serve::AdmittedPod& pod);

// What GetAllocatableResources reports; static for the daemon's lifetime.
struct AllocatableView {
  CpuSet cpus;                          // CPUs minus reserved (static policy), else empty
  std::vector<MemoryBlockView> memory;  // one block per (NUMA node, type) with allocatable > 0
  std::vector<Device> devices;
};
v1::AllocatableResourcesResponse BuildAllocatable(const AllocatableView& view);

// Everything the server answers, built once per change and then shared read-only by every
// request (List copies it; nothing is computed per request except the running-pod filter).
struct ServedState {
  v1::ListPodResourcesResponse list;
  v1alpha1::ListPodResourcesResponse list_v1alpha1;
  std::vector<std::string> uids;  // uids[i] is the uid of list.pod_resources(i)
  std::unordered_map<std::string, int> index;  // "namespace/name" -> position in list
  // Get's answer for pods the node knows without resources (rejected): names and containers,
  // no devices, CPUs or memory, as the kubelet's Get reports a pod its managers hold nothing
  // for. "namespace/name" -> the pod.
  std::unordered_map<std::string, v1::PodResources> known;
  v1::AllocatableResourcesResponse allocatable;
  // The same List response, encoded once: `list_wire` is list.SerializeAsString() and
  // pod_wire[i] the encoding of a response holding pod i alone (a repeated field's entries
  // concatenate), so List answers with these bytes instead of copying messages.
  std::string list_wire;
  std::vector<std::string> pod_wire;
};

std::shared_ptr<const ServedState> BuildServedState(const serve::NodeSnapshot& snapshot,
                                                    const ReportingRules& rules,
                                                    const DeviceNuma& device_numa,
                                                    const v1::AllocatableResourcesResponse& alloc);

}  // namespace podtopo::podresources

#endif  // PODTOPO_PODRESOURCES_REPORT_H_
