// The API objects a simulated node writes, as a kubelet writes them: its Node (registration and
// status), its Lease, and the status of the pods bound to it. Pure functions of the node's
// topology, its kubelet configuration and the admission results: no I/O (kubenode/kube_node.h
// does the requests), so each is unit-tested against what a kubelet would send.
//
// Node (pkg/kubelet/kubelet_node_status.go initialNodeStatus, nodestatus/setters.go):
//   metadata.labels   kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch (and their
//                     beta.* twins, as 1.20's kubelet still sets them), plus
//                     node.podtopo.io/simulated: "true" and podtopo.io/kubelet-version
//   status.capacity    cpu (the topology's CPUs), memory (the NUMA nodes' memory), hugepages-*
//                      (per size), one count per device resource, pods (the configuration's
//                      maxPods, 110 by default, which admission/node.cc checks as well):
//                      admission/pod_requests.h NodeCapacity, the function every command uses.
//   status.allocatable capacity minus kubeReserved, systemReserved and the hard-eviction
//                      threshold, memory also minus the hugepages: NodeAllocatable, the one
//                      the node-fit check (OutOfcpu, OutOfmemory, ...) admits against.
//   status.conditions  MemoryPressure, DiskPressure, PIDPressure False and Ready True, with the
//                      kubelet's reasons and messages; lastHeartbeatTime is the write's time.
//   status.nodeInfo    kubeletVersion "v" + the kubelet version podtopo predicts (config's),
//                      operatingSystem linux, architecture amd64, containerRuntimeVersion
//                      "podtopo://VERSION", and ids derived from the node's name.
//   status.addresses   InternalIP (KubeNodeOptions::address) and Hostname.
// ephemeral-storage is not reported: podtopo's topology has no disks.
//
// Pods (pkg/kubelet/kubelet.go rejectPod, kubelet_pods.go generateAPIPodStatus):
//   rejected  {"status": {"phase": "Failed", "reason": R, "message": M, "startTime": T}}, R and
//             M as Node::Admit gives them ("TopologyAffinityError", "Pod was rejected: ...").
//   admitted  phase Running, conditions Initialized/Ready/ContainersReady/PodScheduled True,
//             hostIP, startTime, containerStatuses running and ready (containerID
//             "podtopo://UID/NAME"), regular init containers terminated (Completed, exit 0),
//             sidecars (restartable init containers) running.
// Both go as JSON merge patches to pods/NAME/status. A terminating pod is deleted with
// DeleteNowBody: grace period 0 and a uid precondition, as the kubelet's status manager does
// once the pod's containers stopped (so a re-created pod of the same name is never deleted).
//
// Pods from the API server are read with the same reader as every command's manifests
// (api/pod_yaml.h ParsePods on the object's JSON). An API server before 1.32 drops pod-level
// spec.resources (KEP-2837) from every pod it stores: on such a server a pod-level pod is
// admitted as its containers alone.
//
// Example:
//   nlohmann::json node = NodeObject({.name = "n1"}, topology, config, Now());
//   absl::StatusOr<Pod> pod = PodFromApi(watch_event.object, config);
//   nlohmann::json patch = AdmittedStatusPatch(watch_event.object, "127.0.0.1", Now());
#ifndef PODTOPO_KUBENODE_API_OBJECTS_H_
#define PODTOPO_KUBENODE_API_OBJECTS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "admission/node.h"
#include "api/pod.h"
#include "config/kubelet_config.h"

#include "nlohmann/json.hpp"
#include "topology/node_topology.h"

namespace podtopo::kubenode {

using Clock = std::chrono::system_clock;

// RFC 3339 in UTC, seconds ("2026-12-07T11:30:00Z"): metav1.Time.
std::string Rfc3339(Clock::time_point t);
// With microseconds ("2026-12-07T11:30:00.123456Z"): metav1.MicroTime (Lease renewTime).
std::string Rfc3339Micro(Clock::time_point t);

struct NodeIdentity {
  std::string name;
  std::string address = "127.0.0.1";  // status.addresses InternalIP, and the pods' hostIP
};

// status.capacity and status.allocatable (quantities in canonical form, "pods" included).
nlohmann::json NodeCapacityJson(const NodeTopology& topology, const config::KubeletConfig& config);
nlohmann::json NodeAllocatableJson(const NodeTopology& topology,
                                   const config::KubeletConfig& config);

// The four conditions, Ready True; `since` is their lastTransitionTime, `now` the heartbeat.
nlohmann::json NodeConditions(Clock::time_point since, Clock::time_point now);

// The whole status (capacity, allocatable, conditions, addresses, nodeInfo, daemonEndpoints).
nlohmann::json NodeStatus(const NodeIdentity& id, const NodeTopology& topology,
                          const config::KubeletConfig& config, Clock::time_point since,
                          Clock::time_point now);

// The labels the node registers with.
nlohmann::json NodeLabels(const NodeIdentity& id, const config::KubeletConfig& config);

// The Node to create (POST /api/v1/nodes): metadata with the labels, empty spec, the status.
nlohmann::json NodeObject(const NodeIdentity& id, const NodeTopology& topology,
                          const config::KubeletConfig& config, Clock::time_point now);

// The node's Lease in kube-node-lease (coordination.k8s.io/v1), owned by the Node. With an
// `instance`, the Lease carries it as annotation kLeaseInstanceAnnotation: which process plays
// the node, so that a second one is refused (LeaseConflict).
nlohmann::json LeaseObject(const std::string& node_name, const std::string& node_uid,
                           Clock::time_point renew, int duration_seconds = 40,
                           const std::string& instance = "");

// The Lease annotation naming the `podtopo serve` that plays the node: "HOST:PID:TOKEN" (TOKEN
// random per process), or kLeaseReleased once it stopped.
inline constexpr char kLeaseInstanceAnnotation[] = "podtopo.io/serve-instance";
inline constexpr char kLeaseReleased[] = "released";

// This process's instance: "HOST:PID:TOKEN".
std::string LeaseInstance(const std::string& host, long pid, uint64_t token);

// Whether the node's existing Lease (GET kube-node-lease/NAME; null when there is none) says
// another process plays the node now. None when the Lease is ours, released, or expired
// (renewTime + leaseDurationSeconds before `now`), or names a process of this host
// (`host`) that is no longer running (`alive(pid)` false: a serve killed and started again) or
// that has this process's pid (a container restarted, pid 1 again).
// Otherwise the reason, naming the holder and the Lease's times:
//   "Node sim-a is played by another podtopo serve (podtopo.io/serve-instance
//    host1:4242:...; its Lease kube-node-lease/sim-a was renewed 3 s ago and expires in 37 s):
//    stop it or use another --node-name"
// A live Lease without the annotation is a kubelet's (or another tool's), which is named too.
std::optional<std::string> LeaseConflict(const nlohmann::json& lease, const std::string& node_name,
                                         const std::string& instance, const std::string& host,
                                         Clock::time_point now,
                                         const std::function<bool(long)>& alive);

// A pod object from the API server (a list item or a watch event's object) as a Pod, read by
// api/pod_yaml.h under `config`'s pod gates. Errors name the pod: "pod default/p (from the API
// server): spec.containers[0].resources.limits.cpu: ...".
absl::StatusOr<Pod> PodFromApi(const nlohmann::json& object, const config::KubeletConfig& config);

// status.phase ("" when unset), and whether the pod is being deleted (metadata.deletionTimestamp).
std::string PodPhase(const nlohmann::json& object);
bool PodTerminating(const nlohmann::json& object);
std::string PodUid(const nlohmann::json& object);

// The merge patches for pods/NAME/status (see the banner).
nlohmann::json AdmittedStatusPatch(const nlohmann::json& object, const std::string& host_ip,
                                   Clock::time_point start);
nlohmann::json RejectedStatusPatch(const PodAllocation& rejected, Clock::time_point start);

// The Warning Event a kubelet records for a rejected pod (kubelet.go rejectPod): reason R and
// the message without the status's "Pod was rejected: " prefix, source kubelet on `node_name`.
// POST /api/v1/namespaces/NS/events.
nlohmann::json RejectionEvent(const PodAllocation& rejected, const std::string& node_name,
                              Clock::time_point t);

// DeleteOptions: gracePeriodSeconds 0, preconditions.uid.
nlohmann::json DeleteNowBody(const std::string& uid);

}  // namespace podtopo::kubenode

#endif  // PODTOPO_KUBENODE_API_OBJECTS_H_
