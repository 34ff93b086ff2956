#include "runtime/pod_spec.h"

#include <set>

#include "fmt/format.h"

namespace podtopo::runtime {

const char* IsolationLevelName(IsolationLevel level) {
  switch (level) {
    case IsolationLevel::kHost:
      return "host";
    case IsolationLevel::kPod:
      return "pod";
    case IsolationLevel::kContainer:
      return "container";
  }
  return "host";
}

IsolationLevel IsolationOf(const std::string& assignment) {
  if (assignment == "node_exclusive" || assignment == "pod_exclusive") {
    return IsolationLevel::kContainer;
  }
  if (assignment == "pod_shared") return IsolationLevel::kPod;
  return IsolationLevel::kHost;
}

int64_t MilliCpuToShares(int64_t milli_cpu) {
  constexpr int64_t kMinShares = 2, kMaxShares = 262144, kSharesPerCpu = 1024;
  if (milli_cpu == 0) return kMinShares;
  int64_t shares = milli_cpu * kSharesPerCpu / 1000;
  if (shares < kMinShares) return kMinShares;
  if (shares > kMaxShares) return kMaxShares;
  return shares;
}

int64_t MilliCpuToQuota(int64_t milli_cpu, int64_t period_us) {
  constexpr int64_t kMinQuotaPeriod = 1000;
  if (milli_cpu == 0) return 0;
  int64_t quota = milli_cpu * period_us / 1000;
  return quota < kMinQuotaPeriod ? kMinQuotaPeriod : quota;
}

bool PodHasExclusiveCpus(const PodAllocation& allocation) {
  bool container_level = false;
  for (const ContainerAllocation& c : allocation.containers) {
    IsolationLevel level = IsolationOf(c.assignment);
    if (level == IsolationLevel::kPod) return false;
    if (level == IsolationLevel::kContainer) container_level = true;
  }
  return container_level;
}

namespace {

std::optional<int64_t> MilliCpu(const ResourceList& list) {
  auto it = list.find(kResourceCpu);
  if (it == list.end()) return std::nullopt;
  return it->second.MilliValue();
}

}  // namespace

int64_t PodCfsQuota(const Pod& pod, const PodAllocation& allocation,
                    bool disable_quota_with_exclusive) {
  if (disable_quota_with_exclusive && PodHasExclusiveCpus(allocation)) return -1;
  if (pod.resources.has_value()) {
    if (auto milli = MilliCpu(pod.resources->limits); milli && *milli > 0) {
      return MilliCpuToQuota(*milli, kCfsPeriodUs);
    }
  }
  int64_t sum = 0;
  for (const Container* c : pod.InitAndAppContainers()) {
    auto milli = MilliCpu(c->resources.limits);
    if (!milli || *milli == 0) return -1;
    sum += *milli;
  }
  if (sum == 0) return -1;
  return MilliCpuToQuota(sum, kCfsPeriodUs);
}

std::string CpusetMems(const ContainerAllocation& container, const PodAllocation& allocation) {
  std::set<int> nodes;
  for (const MemoryBlockView& b : container.memory) nodes.insert(b.numa_nodes.begin(), b.numa_nodes.end());
  if (nodes.empty() && container.assignment.rfind("pod_", 0) == 0) {
    for (const MemoryBlockView& b : allocation.memory) {
      nodes.insert(b.numa_nodes.begin(), b.numa_nodes.end());
    }
  }
  std::vector<int> ids(nodes.begin(), nodes.end());
  return CpuSet(ids).String();
}

criv1::LinuxContainerResources ContainerResources(const Container& container,
                                                  const ContainerAllocation& allocation,
                                                  const PodAllocation& pod_allocation,
                                                  const CpuSet& cpus,
                                                  bool disable_quota_with_exclusive) {
  criv1::LinuxContainerResources r;
  r.set_cpu_period(kCfsPeriodUs);
  // An unset request defaults to the limit (API defaulting).
  std::optional<int64_t> request = MilliCpu(container.resources.requests);
  std::optional<int64_t> limit = MilliCpu(container.resources.limits);
  r.set_cpu_shares(MilliCpuToShares(request.value_or(limit.value_or(0))));
  if (disable_quota_with_exclusive &&
      IsolationOf(allocation.assignment) == IsolationLevel::kContainer) {
    r.set_cpu_quota(-1);
  } else {
    r.set_cpu_quota(MilliCpuToQuota(limit.value_or(0), kCfsPeriodUs));
  }
  if (auto it = container.resources.limits.find(kResourceMemory);
      it != container.resources.limits.end()) {
    r.set_memory_limit_in_bytes(it->second.Value());
  }
  r.set_cpuset_cpus(cpus.String());
  r.set_cpuset_mems(CpusetMems(allocation, pod_allocation));
  return r;
}

criv1::PodSandboxConfig SandboxConfig(const Pod& pod, const std::string& cgroup_parent,
                                      const std::string& log_directory,
                                      const std::string& instance) {
  criv1::PodSandboxConfig c;
  c.mutable_metadata()->set_name(pod.name);
  c.mutable_metadata()->set_namespace_(pod.namespace_name);
  c.mutable_metadata()->set_uid(pod.uid);
  c.mutable_metadata()->set_attempt(0);
  c.set_log_directory(log_directory);
  auto& labels = *c.mutable_labels();
  for (const auto& [k, v] : pod.labels) labels[k] = v;
  labels[kLabelPodUid] = pod.uid;
  labels[kLabelPodName] = pod.name;
  labels[kLabelPodNamespace] = pod.namespace_name;
  labels[kLabelManaged] = "true";
  labels[kLabelInstance] = instance;
  // The kubelet's newPodAnnotations: the pod's annotations as they are.
  for (const auto& [k, v] : pod.annotations) (*c.mutable_annotations())[k] = v;
  auto* linux = c.mutable_linux();
  linux->set_cgroup_parent(cgroup_parent);
  auto* ns = linux->mutable_security_context()->mutable_namespace_options();
  ns->set_network(criv1::NODE);  // host network: no CNI on these machines
  ns->set_pid(criv1::CONTAINER);  // the kubelet's default for v1 pods
  ns->set_ipc(criv1::POD);
  return c;
}

criv1::ContainerConfig ContainerConfig(const Pod& pod, const Container& container,
                                       uint32_t attempt,
                                       const criv1::LinuxContainerResources& resources,
                                       const std::string& instance) {
  criv1::ContainerConfig c;
  c.mutable_metadata()->set_name(container.name);
  c.mutable_metadata()->set_attempt(attempt);
  c.mutable_image()->set_image(container.image);
  c.mutable_image()->set_user_specified_image(container.image);
  for (const std::string& s : container.command) c.add_command(s);
  for (const std::string& s : container.args) c.add_args(s);
  auto& labels = *c.mutable_labels();
  labels[kLabelPodUid] = pod.uid;
  labels[kLabelPodName] = pod.name;
  labels[kLabelPodNamespace] = pod.namespace_name;
  labels[kLabelContainerName] = container.name;
  labels[kLabelContainerKind] = ContainerKindName(container.kind);
  labels[kLabelManaged] = "true";
  labels[kLabelInstance] = instance;
  c.set_log_path(fmt::format("{}/{}.log", container.name, attempt));
  *c.mutable_linux()->mutable_resources() = resources;
  return c;
}

}  // namespace podtopo::runtime
