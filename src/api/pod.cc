#include "api/pod.h"

#include <set>
#include <string>
#include <vector>

namespace podtopo {
namespace {

bool HasSupportedKey(const ResourceList& list) {
  for (const auto& [name, quantity] : list) {
    if (IsSupportedPodLevelResource(name)) return true;
  }
  return false;
}

// The positive cpu and memory quantities of some resource lists, summed per resource (the only
// resources the QoS class looks at). No allocation: GetPodQos runs many times per admission.
struct QosSums {
  Quantity cpu;
  Quantity memory;
  bool has_cpu = false;
  bool has_memory = false;

  void AddPositive(const ResourceList& from) {
    for (const auto& [name, quantity] : from) {
      if (quantity.Sign() <= 0) continue;
      if (name == kResourceCpu) {
        cpu.Add(quantity);
        has_cpu = true;
      } else if (name == kResourceMemory) {
        memory.Add(quantity);
        has_memory = true;
      }
    }
  }
  bool empty() const { return !has_cpu && !has_memory; }
};

// The keys as strings, so that lookups build no temporary std::string.
const std::string& CpuKey() {
  static const std::string* key = new std::string(kResourceCpu);
  return *key;
}
const std::string& MemoryKey() {
  static const std::string* key = new std::string(kResourceMemory);
  return *key;
}

// The quantity `list` holds for `name`, or null.
const Quantity* Find(const ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? nullptr : &it->second;
}

// True iff `limits` has positive cpu and memory quantities.
bool HasPositiveCpuAndMemory(const ResourceList& limits) {
  const Quantity* cpu = Find(limits, CpuKey());
  if (cpu == nullptr || cpu->Sign() <= 0) return false;
  const Quantity* memory = Find(limits, MemoryKey());
  return memory != nullptr && memory->Sign() > 0;
}

// Every resource of a list (Aggregate's default filter).
bool AnyResource(const std::string&) { return true; }

template <typename Keep>
void AddInto(ResourceList& list, const ResourceList& more, const Keep& keep) {
  for (const auto& [name, quantity] : more) {
    if (!keep(name)) continue;
    auto it = list.find(name);
    if (it == list.end()) {
      list.emplace(name, quantity);
    } else {
      it->second.Add(quantity);
    }
  }
}

template <typename Keep>
void MaxInto(ResourceList& list, const ResourceList& other, const Keep& keep) {
  for (const auto& [name, quantity] : other) {
    if (!keep(name)) continue;
    auto it = list.find(name);
    if (it == list.end()) {
      list.emplace(name, quantity);
    } else if (quantity.Cmp(it->second) > 0) {
      it->second = quantity;
    }
  }
}

// aggregateContainerResourcesByFn with spec values (no status, no DRA), over the resources
// `keep` accepts (each resource's value depends on that resource only).
template <typename Keep>
ResourceList Aggregate(const Pod& pod, bool requests, const Keep& keep) {
  auto side = [requests](const Container& c) -> const ResourceList& {
    return requests ? c.resources.requests : c.resources.limits;
  };
  ResourceList result;
  for (const Container& c : pod.containers) AddInto(result, side(c), keep);
  ResourceList sidecars_so_far;
  ResourceList init_peak;
  for (const Container& c : pod.init_containers) {
    if (c.IsRestartableInit()) {
      AddInto(result, side(c), keep);
      AddInto(sidecars_so_far, side(c), keep);
      MaxInto(init_peak, sidecars_so_far, keep);
    } else {
      ResourceList use;
      AddInto(use, side(c), keep);
      AddInto(use, sidecars_so_far, keep);
      MaxInto(init_peak, use, keep);
    }
  }
  MaxInto(result, init_peak, keep);
  return result;
}

}  // namespace

const char* ContainerKindName(ContainerKind kind) {
  switch (kind) {
    case ContainerKind::kInit:
      return "init";
    case ContainerKind::kSidecar:
      return "sidecar";
    case ContainerKind::kApp:
      return "app";
    case ContainerKind::kEphemeral:
      return "ephemeral";
  }
  return "unknown";
}

const char* QosClassName(QosClass qos) {
  switch (qos) {
    case QosClass::kGuaranteed:
      return "Guaranteed";
    case QosClass::kBurstable:
      return "Burstable";
    case QosClass::kBestEffort:
      return "BestEffort";
  }
  return "Unknown";
}

namespace {

void AppendResources(std::string& out, const ResourceRequirements& r) {
  for (const auto& [k, q] : r.requests) out += "r:" + k + "=" + q.String() + ";";
  for (const auto& [k, q] : r.limits) out += "l:" + k + "=" + q.String() + ";";
}

}  // namespace

std::string PodSpecFingerprint(const Pod& pod) {
  std::string out = pod.namespace_name + "|" + pod.name + "|" + pod.uid + "|";
  if (pod.resources.has_value()) {
    out += "pod:";
    AppendResources(out, *pod.resources);
  }
  auto add = [&](const Container& c) {
    out += "|" + c.name + ":" + ContainerKindName(c.kind) + ":";
    AppendResources(out, c.resources);
  };
  for (const auto& c : pod.init_containers) add(c);
  for (const auto& c : pod.containers) add(c);
  for (const auto& c : pod.ephemeral_containers) add(c);
  return out;
}

bool SamePodSpec(const Pod& a, const Pod& b) {
  return PodSpecFingerprint(a) == PodSpecFingerprint(b);
}

bool IsHugePageResourceName(const std::string& name) {
  return name.rfind(kHugePagesPrefix, 0) == 0;
}

bool IsSupportedPodLevelResource(const std::string& name) {
  return name == kResourceCpu || name == kResourceMemory || IsHugePageResourceName(name);
}

bool Pod::HasPodLevelResources() const { return HasPodLevelRequests() || HasPodLevelLimits(); }

bool Pod::HasPodLevelRequests() const {
  return resources.has_value() && HasSupportedKey(resources->requests);
}

bool Pod::HasPodLevelLimits() const {
  return resources.has_value() && HasSupportedKey(resources->limits);
}

std::vector<const Container*> Pod::InitAndAppContainers() const {
  std::vector<const Container*> out;
  out.reserve(init_containers.size() + containers.size());
  for (const Container& c : init_containers) out.push_back(&c);
  for (const Container& c : containers) out.push_back(&c);
  return out;
}

const Container* Pod::FindContainer(const std::string& container_name) const {
  for (const auto* list : {&init_containers, &containers, &ephemeral_containers}) {
    for (const Container& c : *list) {
      if (c.name == container_name) return &c;
    }
  }
  return nullptr;
}

QosClass GetPodQos(const Pod& pod, const PodGates& gates) {
  QosSums requests;
  QosSums limits;
  bool guaranteed = true;

  const bool pod_level =
      gates.pod_level_resources &&
      (gates.fix_kubelet_qos_class ? pod.HasPodLevelResources() : pod.resources.has_value());
  if (pod_level) {
    requests.AddPositive(pod.resources->requests);
    if (!pod.resources->limits.empty()) {
      limits.AddPositive(pod.resources->limits);
      if (!HasPositiveCpuAndMemory(pod.resources->limits)) guaranteed = false;
    }
  } else {
    // Init and app containers; ephemeral containers cannot set resources and never count.
    for (const auto* list : {&pod.init_containers, &pod.containers}) {
      for (const Container& c : *list) {
        requests.AddPositive(c.resources.requests);
        limits.AddPositive(c.resources.limits);
        if (!HasPositiveCpuAndMemory(c.resources.limits)) guaranteed = false;
      }
    }
  }

  if (requests.empty() && limits.empty()) return QosClass::kBestEffort;
  // Guaranteed: every requested resource has an equal limit, and no limit lacks a request.
  if (guaranteed && requests.has_cpu == limits.has_cpu &&
      requests.has_memory == limits.has_memory &&
      (!requests.has_cpu || requests.cpu.Cmp(limits.cpu) == 0) &&
      (!requests.has_memory || requests.memory.Cmp(limits.memory) == 0)) {
    return QosClass::kGuaranteed;
  }
  return QosClass::kBurstable;
}

bool IsContainerEquivalentQosGuaranteed(const Container& container) {
  for (const std::string* name : {&CpuKey(), &MemoryKey()}) {
    const Quantity* request = Find(container.resources.requests, *name);
    if (request == nullptr || request->IsZero()) return false;
    const Quantity* limit = Find(container.resources.limits, *name);
    // An absent limit reads as zero, which a non-zero request never equals.
    if (limit == nullptr || request->Cmp(*limit) != 0) return false;
  }
  return true;
}

ResourceList AggregateContainerRequests(const Pod& pod) {
  return Aggregate(pod, true, AnyResource);
}

ResourceList AggregateContainerLimits(const Pod& pod) { return Aggregate(pod, false, AnyResource); }

ResourceList PodRequests(const Pod& pod, bool pod_level_resources_enabled) {
  ResourceList result = AggregateContainerRequests(pod);
  if (pod_level_resources_enabled && pod.HasPodLevelRequests()) {
    for (const auto& [name, quantity] : pod.resources->requests) {
      if (IsSupportedPodLevelResource(name)) result[name] = quantity;
    }
  }
  return result;
}

ResourceList PodLimits(const Pod& pod, bool pod_level_resources_enabled) {
  return PodLimitsOf(pod, AnyResource, pod_level_resources_enabled);
}

ResourceList PodLimitsOf(const Pod& pod, const std::function<bool(const std::string&)>& keep,
                         bool pod_level_resources_enabled) {
  ResourceList result = Aggregate(pod, false, keep);
  if (pod_level_resources_enabled && pod.HasPodLevelResources()) {
    for (const auto& [name, quantity] : pod.resources->limits) {
      if (IsSupportedPodLevelResource(name) && keep(name)) result[name] = quantity;
    }
  }
  return result;
}

}  // namespace podtopo
