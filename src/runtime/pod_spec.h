// How podtopo turns an admitted pod into CRI requests (pure functions, no I/O).
//
// - Labels: the kubelet's keys (io.kubernetes.pod.uid, .pod.name, .pod.namespace,
//   io.kubernetes.container.name) plus podtopo.io/managed=true, so that a restarted podtopo
//   finds its sandboxes and containers again (ListPodSandbox / ListContainers by label).
// - Sandbox: host network (no CNI here), host UTS (no hostname), cgroup parent
//   "/<cgroup root>/pod<uid>".
// - Containers: cpuset_cpus / cpuset_mems of the allocation, CPU shares from the request and the
//   CFS quota per the kubelet's resource isolation level (KEP-5526 §4.4):
//     node_shared                    -> "host":      quota from the container's CPU limit
//     pod_shared                     -> "pod":       quota from the container's CPU limit (the
//                                                     pod cgroup's quota caps the pod budget)
//     node_exclusive / pod_exclusive -> "container": quota disabled (-1)
//
// Example:
//   criv1::LinuxContainerResources r = ContainerResources(container, allocation, pod_alloc);
//   r.cpuset_cpus();   // "1"
//   r.cpu_quota();     // -1 (exclusive)
#ifndef PODTOPO_RUNTIME_POD_SPEC_H_
#define PODTOPO_RUNTIME_POD_SPEC_H_

#include <map>
#include <optional>
#include <string>

#include "admission/node.h"
#include "api/pod.h"
#include "cri/runtime/v1/api.pb.h"

namespace podtopo::runtime {

namespace criv1 = ::runtime::v1;

inline constexpr char kLabelPodUid[] = "io.kubernetes.pod.uid";
inline constexpr char kLabelPodName[] = "io.kubernetes.pod.name";
inline constexpr char kLabelPodNamespace[] = "io.kubernetes.pod.namespace";
inline constexpr char kLabelContainerName[] = "io.kubernetes.container.name";
inline constexpr char kLabelManaged[] = "podtopo.io/managed";
inline constexpr char kLabelContainerKind[] = "podtopo.io/container-kind";
// Which podtopo instance owns the object: its cgroup root (two podtopo on one runtime with
// different roots never touch each other's pods).
inline constexpr char kLabelInstance[] = "podtopo.io/cgroup-root";

inline constexpr int64_t kCfsPeriodUs = 100000;  // the kubelet's default CFS period

enum class IsolationLevel { kHost, kPod, kContainer };
const char* IsolationLevelName(IsolationLevel level);  // "host", "pod", "container"

// The resource isolation level of a container from its assignment ("node_shared", ...).
IsolationLevel IsolationOf(const std::string& assignment);

// The kubelet's MilliCPUToShares (min 2, max 262144) and MilliCPUToQuota (0 = no limit,
// min 1000 us).
int64_t MilliCpuToShares(int64_t milli_cpu);
int64_t MilliCpuToQuota(int64_t milli_cpu, int64_t period_us);

// The kubelet's PodHasExclusiveCPUs under KEP-5526: some container runs at the "container"
// level and none at the "pod" level.
bool PodHasExclusiveCpus(const PodAllocation& allocation);

// The pod cgroup's CFS quota in microseconds (-1 = none): none when PodHasExclusiveCpus and
// `disable_quota_with_exclusive` (the DisableCPUQuotaWithExclusiveCPUs gate, as the kubelet's
// pod container manager turns enforceCPULimits off), else the pod-level CPU limit, else the
// sum of the containers' limits when every container has one.
int64_t PodCfsQuota(const Pod& pod, const PodAllocation& allocation,
                    bool disable_quota_with_exclusive = true);

// The cpuset_mems of a container: the NUMA nodes of its memory blocks, else (pod-level
// containers) of the pod's blocks; "" when the Memory Manager assigned nothing.
std::string CpusetMems(const ContainerAllocation& container, const PodAllocation& allocation);

// The LinuxContainerResources a container is created with. `cpus` is the cpuset it runs on
// (its allocation's cpus; the default set for node-shared containers). An exclusive
// container's CFS quota is disabled (-1) when `disable_quota_with_exclusive` (the gate
// DisableCPUQuotaWithExclusiveCPUs, kuberuntime's generateLinuxContainerResources); without
// it, every container's quota comes from its CPU limit.
criv1::LinuxContainerResources ContainerResources(const Container& container,
                                                  const ContainerAllocation& allocation,
                                                  const PodAllocation& pod_allocation,
                                                  const CpuSet& cpus,
                                                  bool disable_quota_with_exclusive = true);

// The sandbox configuration of a pod: the pod's labels (plus podtopo's) and its annotations,
// as the kubelet's newPodLabels / newPodAnnotations. `instance` is the kLabelInstance value.
criv1::PodSandboxConfig SandboxConfig(const Pod& pod, const std::string& cgroup_parent,
                                      const std::string& log_directory,
                                      const std::string& instance = "podtopo");

// The container configuration (labels, image, command, args, log path, resources).
criv1::ContainerConfig ContainerConfig(const Pod& pod, const Container& container,
                                       uint32_t attempt,
                                       const criv1::LinuxContainerResources& resources,
                                       const std::string& instance = "podtopo");

}  // namespace podtopo::runtime

#endif  // PODTOPO_RUNTIME_POD_SPEC_H_
