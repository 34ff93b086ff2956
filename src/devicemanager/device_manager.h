// DeviceManager: device-plugin devices as the kubelet's devicemanager hands them out.
//
// podtopo has no device plugins; the devices come from the node topology (`"devices"` in the
// topology JSON: resource, id, NUMA node). The manager is a Topology Manager hint provider for
// extended resources, so a GPU pod is aligned with its CPUs and memory exactly as a kubelet
// would align it, and it allocates device ids to containers the way devicesToAllocate does:
// reusable init-container devices first, then devices on the NUMA nodes of the container's
// affinity, then the rest.
//
// Example:
//   DeviceManager dm({{"example.com/gpu", "gpu0", 0}, {"example.com/gpu", "gpu1", 1}}, {0, 1});
//   dm.GetTopologyHints(pod, container);   // {"example.com/gpu": [{01 pref}, {10 pref}, {11}]}
//   dm.Allocate(pod, container, hint);     // gpu1 when the hint is NUMA 1
//
// Determinism: the kubelet picks devices out of Go sets (random order) and walks resources in
// map order; podtopo takes devices in the kubelet's NUMA order, then by ascending id, and walks
// resources by name (docs/differences.md).
//
// Thread safety: not thread-safe; the admission pipeline serialises calls.
#ifndef PODTOPO_DEVICEMANAGER_DEVICE_MANAGER_H_
#define PODTOPO_DEVICEMANAGER_DEVICE_MANAGER_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "api/pod.h"
#include "topology/node_topology.h"
#include "topologymanager/policy.h"
#include "topologymanager/topology_hint.h"

namespace podtopo::devicemanager {

// Resource name -> hints, as one hint provider returns them (nullopt list = no preference,
// empty list = no possible placement).
using HintMap = std::map<std::string, topologymanager::HintList>;
// Resource name -> device ids (ascending).
using ResourceDevices = std::map<std::string, std::vector<std::string>>;

class DeviceManager {
 public:
  DeviceManager() = default;
  // `numa_nodes`: the node's NUMA ids (the masks hints are built over).
  DeviceManager(const std::vector<Device>& devices, std::vector<int> numa_nodes);

  // True iff some device of the node serves `resource`.
  bool IsDevicePluginResource(const std::string& resource) const {
    return devices_.count(resource) > 0;
  }

  // GetTopologyHints (container scope): one entry per device-plugin resource in the
  // container's limits. Resources whose devices have no NUMA node get a nil list.
  HintMap GetTopologyHints(const Pod& pod, const Container& container) const;
  // GetPodTopologyHints (pod scope): the pod's aggregated device limits.
  HintMap GetPodTopologyHints(const Pod& pod) const;

  // Many calls about `pod` follow (Node::Admit): until EndPod, the calls about this same Pod
  // object compute its aggregated device limits once.
  void BeginPod(const Pod& pod);
  void EndPod() { admission_.reset(); }

  // Allocates the container's device-plugin limits. `affinity` is the container's merged
  // hint. Idempotent: devices already held by the container count towards its request.
  // Error (untyped, becomes UnexpectedAdmissionError) when too few devices are free:
  // "requested number of devices unavailable for <res>. Requested: N, Available: M".
  // On error nothing is allocated for this container.
  absl::Status Allocate(const Pod& pod, const Container& container,
                        const topologymanager::TopologyHint& affinity);

  // Releases the container's devices (kept while other containers of the pod hold them).
  void RemoveContainer(const std::string& pod_uid, const std::string& container_name);

  // Devices held by a container, by resource.
  ResourceDevices ContainerDevices(const std::string& pod_uid,
                                   const std::string& container_name) const;
  // All devices of the node (GetAllocatableResources).
  const std::vector<Device>& AllDevices() const { return all_; }
  // NUMA node of a device, -1 when unknown or without affinity.
  int DeviceNuma(const std::string& resource, const std::string& id) const;
  // Devices currently in use, by resource.
  std::map<std::string, std::set<std::string>> AllocatedDevices() const;

  // generateDeviceTopologyHints as the kubelet runs it (every mask walked): the oracle of the
  // structured hints, exponential in the NUMA nodes. `available` and `reusable` as HintsFor
  // computes them for `pod` (container scope when `container_name` is given).
  std::vector<topologymanager::TopologyHint> GenerateHintsExhaustive(
      const std::string& resource, const std::set<std::string>& available,
      const std::set<std::string>& reusable, int request) const;

  // Test oracle: hints from GenerateHintsExhaustive instead of the structure.
  void set_exhaustive_hints(bool on) { exhaustive_hints_ = on; }

  // Restores an allocation read from podtopo's state record (no checks beyond existence).
  absl::Status Restore(const std::string& pod_uid, const std::string& container_name,
                       const ResourceDevices& devices);

 private:
  struct DeviceInfo {
    std::string id;
    int numa = -1;
  };

  // NUMA node of device `id` among `devices`, -1 when unknown or without affinity.
  static int NumaIn(const std::vector<DeviceInfo>& devices, const std::string& id);
  bool HasTopologyAlignment(const std::string& resource) const;
  std::set<std::string> Available(const std::string& resource) const;
  // The hints of one resource by structure: masks holding every reusable device's NUMA node and
  // enough devices; preferred the narrowest that could hold the request on this node.
  topologymanager::HintSet GenerateHints(const std::string& resource,
                                         const std::set<std::string>& available,
                                         const std::set<std::string>& reusable,
                                         int request) const;
  HintMap HintsFor(const Pod& pod, const std::map<std::string, int>& requests,
                   const std::string* container_name) const;

  // getPodDeviceRequest: the pod's device-plugin limits, aggregated.
  std::map<std::string, int> PodDeviceRequests(const Pod& pod) const;

  std::vector<Device> all_;
  std::map<std::string, std::vector<DeviceInfo>> devices_;  // resource -> devices by id
  std::vector<int> numa_nodes_;
  bool exhaustive_hints_ = false;
  // pod uid -> container -> resource -> ids
  std::map<std::string, std::map<std::string, std::map<std::string, std::set<std::string>>>>
      pod_devices_;
  // The pod being admitted -> resource -> ids its finished init containers left behind.
  std::map<std::string, std::map<std::string, std::set<std::string>>> devices_to_reuse_;
  // BeginPod's pod and its PodDeviceRequests (computed at the first hint call).
  struct AdmissionMemo {
    const Pod* pod = nullptr;
    std::optional<std::map<std::string, int>> requests;
  };
  mutable std::optional<AdmissionMemo> admission_;
};

}  // namespace podtopo::devicemanager

#endif  // PODTOPO_DEVICEMANAGER_DEVICE_MANAGER_H_
