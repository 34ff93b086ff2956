// Plugin: podtopo's NRI plugin logic, the kubelet's resource managers behind NRI's events
// (no I/O but the state dir and cgroup reads; the connection is nri/connection.h).
//
// - Configure subscribes to RunPodSandbox, StopPodSandbox, RemovePodSandbox, CreateContainer,
//   UpdateContainer, StopContainer and RemoveContainer.
// - A pod is admitted by the same Node (src/admission) as `podtopo admit`, from its model
//   (nri/pod_model.h): at RunPodSandbox when the pod states its spec in the annotation
//   podtopo.io/pod-spec, else at its first CreateContainer. Without the annotation the model
//   grows with each container created; the pod is then admitted again with the larger model
//   (the previous admission is restored when the larger one is rejected).
// - CreateContainer adjusts the container's cpuset.cpus and cpuset.mems to its allocation:
//   exclusive containers their CPUs, pod-shared containers the pod's shared pool, node-shared
//   containers the node's default (shared) set; mems are the NUMA nodes of the Memory Manager's
//   blocks (unset when it assigned none). A rejected pod fails CreateContainer with the kubelet's
//   reason and message ("TopologyAffinityError: ..."); nothing is kept of it and the next
//   attempt is admitted afresh.
// - When the default set changes (a pod admitted or released), every running node-shared
//   container is updated: in the CreateContainer response (updates to other containers), or,
//   after StopPodSandbox/RemovePodSandbox (events that carry no reply), through
//   TakeUnsolicitedUpdates() for UpdateContainers.
// - UpdateContainer (CRI UpdateContainerResources) keeps the requested resources but podtopo's
//   cpuset.
// - StopPodSandbox releases the pod (the managers' RemoveContainer for each container).
// - Synchronize (at every connection) adopts what runs: pods the state dir holds keep their
//   allocations, pods it lacks are admitted from their annotation or their containers, pods it
//   holds that no longer run are released; every running container whose cpuset differs from
//   its allocation is updated.
// State: `cpu_manager_state`, `memory_manager_state` and `podtopo_pods.json` in the state dir
// (Node), the kubelet's formats.
//
// Thread safety: Handle() from one thread at a time; TakeUnsolicitedUpdates() from any.
#ifndef PODTOPO_NRI_PLUGIN_H_
#define PODTOPO_NRI_PLUGIN_H_

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "admission/node.h"
#include "api/pod_yaml.h"
#include "config/kubelet_config.h"
#include "nri/pod_model.h"
#include "topology/node_topology.h"

namespace podtopo::nri {

inline constexpr char kPluginService[] = "nri.pkg.api.v1alpha1.Plugin";
inline constexpr char kRuntimeService[] = "nri.pkg.api.v1alpha1.Runtime";

struct PluginOptions {
  std::string state_dir;  // "" = in memory
  // Where the cgroup v1 hierarchies are mounted: exited containers are told by an empty
  // cpuset cgroup.procs (recovered pod models, nri/pod_model.h).
  std::string cgroup_mount = "/sys/fs/cgroup";
};

// The events podtopo subscribes to, as ConfigureResponse.events.
int32_t SubscribedEvents();

class Plugin {
 public:
  static absl::StatusOr<std::unique_ptr<Plugin>> Create(NodeTopology topology,
                                                        config::KubeletConfig config,
                                                        PluginOptions options);

  // One request of the Plugin service: `method` with its serialized request; the serialized
  // response. Errors: kUnimplemented for a method podtopo does not serve, kInvalidArgument for
  // a payload that does not parse, and CreateContainer's rejection (kFailedPrecondition).
  absl::StatusOr<std::string> Handle(const std::string& method, const std::string& payload);

  nriapi::ConfigureResponse Configure(const nriapi::ConfigureRequest& req);
  nriapi::SynchronizeResponse Synchronize(const nriapi::SynchronizeRequest& req);
  absl::StatusOr<nriapi::CreateContainerResponse> CreateContainer(
      const nriapi::CreateContainerRequest& req);
  nriapi::UpdateContainerResponse UpdateContainer(const nriapi::UpdateContainerRequest& req);
  nriapi::StopContainerResponse StopContainer(const nriapi::StopContainerRequest& req);
  void StateChange(const nriapi::StateChangeEvent& event);

  // Updates to send with UpdateContainers (after events that carry no reply); empties the list.
  std::vector<nriapi::ContainerUpdate> TakeUnsolicitedUpdates();

  const Node& node() const { return *node_; }

 private:
  struct PodEntry {
    nriapi::PodSandbox sandbox;
    std::vector<SeenContainer> seen;  // creation order (recovered models)
    bool admitted = false;
    bool exact = false;  // the model came from the annotation
  };
  struct ContainerEntry {
    std::string id, sandbox_id, name, cgroups_path;
    bool stopped = false;
    std::string cpus, mems;  // what the container has (last set by podtopo or seen)
  };

  Plugin(std::unique_ptr<Node> node, PodLoadOptions load, PluginOptions options);

  // Admits the pod if its model changed (or it was never admitted). Errors: the rejection
  // (kFailedPrecondition, the kubelet's reason and message) or a bad annotation.
  absl::Status Place(PodEntry& pod);
  void Release(PodEntry& pod);
  const PodAllocation* AllocationOf(const PodEntry& pod) const;
  // The cpus/mems a container of an admitted pod should have; nullopt when unknown.
  std::optional<std::pair<std::string, std::string>> Desired(const ContainerEntry& c) const;
  // Updates for every running container whose cpuset differs from Desired (but `skip`).
  std::vector<nriapi::ContainerUpdate> Rebalance(const std::string& skip);
  void RefreshAllocations();
  bool HasExited(const ContainerEntry& c) const;

  std::unique_ptr<Node> node_;
  PodLoadOptions load_;
  PluginOptions options_;
  std::map<std::string, PodEntry> pods_;              // by sandbox id
  std::map<std::string, ContainerEntry> containers_;  // by container id
  std::map<std::string, PodAllocation> allocations_;  // admitted pods by namespace/name

  std::mutex unsolicited_mu_;
  std::vector<nriapi::ContainerUpdate> unsolicited_;
};

}  // namespace podtopo::nri

#endif  // PODTOPO_NRI_PLUGIN_H_
