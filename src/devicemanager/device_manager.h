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
    return ResourceIndex(resource) >= 0;
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

  // Test oracle: hints from the kubelet's walk over every mask (generateDeviceTopologyHints,
  // exponential in the NUMA nodes) instead of their structure.
  void set_exhaustive_hints(bool on) { exhaustive_hints_ = on; }

  // Restores an allocation read from podtopo's state record (no checks beyond existence).
  absl::Status Restore(const std::string& pod_uid, const std::string& container_name,
                       const ResourceDevices& devices);

 private:
  struct DeviceInfo {
    std::string id;
    int numa = -1;
  };
  // One device-plugin resource: its devices by ascending id, and how many containers hold each
  // (an init container's devices are also held by the later containers that reuse them).
  struct Resource {
    std::string name;
    std::vector<DeviceInfo> devices;
    std::vector<int> holders;  // per device
    bool aligned = false;      // some device has a NUMA node (HasTopologyAlignment)
  };
  // Devices are named by their index in Resource::devices; lists of them are ascending.
  using Indices = std::vector<int>;
  // The devices of one resource a container holds.
  struct Holding {
    int resource = 0;  // index in resources_
    Indices devices;
  };
  // What one container holds, by ascending resource index (never empty: the entry goes with
  // its last device).
  struct ContainerHoldings {
    std::string container;
    std::vector<Holding> resources;
  };
  // (resource index, device count) by ascending resource index.
  using Requests = std::vector<std::pair<int, int>>;

  // Index of `resource` in resources_, -1 when no device serves it.
  int ResourceIndex(const std::string& resource) const;
  // Index of device `id` of resources_[r], -1 when unknown.
  int DeviceIndex(int r, const std::string& id) const;
  // The devices of resources_[r] no container holds.
  Indices Available(int r) const;
  // The containers of `pod_uid` holding devices (null when none does), and one of them.
  const std::vector<ContainerHoldings>* PodHoldings(const std::string& pod_uid) const;
  ContainerHoldings* FindHoldings(const std::string& pod_uid, const std::string& container);
  const ContainerHoldings* FindHoldings(const std::string& pod_uid,
                                        const std::string& container) const {
    return const_cast<DeviceManager*>(this)->FindHoldings(pod_uid, container);
  }
  // Adds `devices` (ascending) of resources_[r] to what `holdings` holds, counting the new
  // holders.
  void Hold(ContainerHoldings& holdings, int r, const Indices& devices);
  // Gives back every device `holdings` holds.
  void Unhold(const ContainerHoldings& holdings);
  // The hints of one resource by structure: masks holding every reusable device's NUMA node and
  // enough devices; preferred the narrowest that could hold the request on this node.
  topologymanager::HintSet GenerateHints(int r, const Indices& available, const Indices& reusable,
                                         int request) const;
  // generateDeviceTopologyHints as the kubelet runs it (every mask walked): the oracle of
  // GenerateHints.
  std::vector<topologymanager::TopologyHint> GenerateHintsExhaustive(int r,
                                                                     const Indices& available,
                                                                     const Indices& reusable,
                                                                     int request) const;
  // `available` and `reusable` as the kubelet computes them for `pod` (container scope when
  // `container_name` is given), then the hints of every request.
  HintMap HintsFor(const Pod& pod, const Requests& requests,
                   const std::string* container_name) const;

  // The container's device-plugin limits, as ints (Quantity.Value()).
  Requests ContainerRequests(const Container& container) const;
  // getPodDeviceRequest: the pod's device-plugin limits, aggregated.
  Requests PodDeviceRequests(const Pod& pod) const;

  std::vector<Device> all_;
  std::vector<Resource> resources_;  // by name
  std::vector<int> numa_nodes_;
  bool exhaustive_hints_ = false;
  // pod uid -> the containers holding devices
  std::map<std::string, std::vector<ContainerHoldings>> pod_devices_;
  // The pod being admitted, and per resource the devices its finished init containers left
  // behind (reuse_[r]).
  std::string reuse_pod_;
  std::vector<Indices> reuse_;
  // BeginPod's pod and its PodDeviceRequests (computed at the first hint call).
  struct AdmissionMemo {
    const Pod* pod = nullptr;
    std::optional<Requests> requests;
  };
  mutable std::optional<AdmissionMemo> admission_;
};

}  // namespace podtopo::devicemanager

#endif  // PODTOPO_DEVICEMANAGER_DEVICE_MANAGER_H_
