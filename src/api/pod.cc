#include "api/pod.h"

#include <set>
#include <string>
#include <vector>

namespace podtopo {
namespace {

bool IsQosComputeResource(const std::string& name) {
  return name == kResourceCpu || name == kResourceMemory;
}

bool HasSupportedKey(const ResourceList& list) {
  for (const auto& [name, quantity] : list) {
    if (IsSupportedPodLevelResource(name)) return true;
  }
  return false;
}

// Adds every positive cpu/memory quantity of `from` into `sums`.
void AddPositiveQosQuantities(const ResourceList& from, ResourceList& sums) {
  for (const auto& [name, quantity] : from) {
    if (!IsQosComputeResource(name) || quantity.Sign() <= 0) continue;
    auto it = sums.find(name);
    if (it == sums.end()) {
      sums.emplace(name, quantity);
    } else {
      it->second.Add(quantity);
    }
  }
}

// True iff `limits` has positive cpu and memory quantities.
bool HasPositiveCpuAndMemory(const ResourceList& limits) {
  auto positive = [&](const char* name) {
    auto it = limits.find(name);
    return it != limits.end() && it->second.Sign() > 0;
  };
  return positive(kResourceCpu) && positive(kResourceMemory);
}

void AddInto(ResourceList& list, const ResourceList& more) {
  for (const auto& [name, quantity] : more) {
    auto it = list.find(name);
    if (it == list.end()) {
      list.emplace(name, quantity);
    } else {
      it->second.Add(quantity);
    }
  }
}

void MaxInto(ResourceList& list, const ResourceList& other) {
  for (const auto& [name, quantity] : other) {
    auto it = list.find(name);
    if (it == list.end()) {
      list.emplace(name, quantity);
    } else if (quantity.Cmp(it->second) > 0) {
      it->second = quantity;
    }
  }
}

// aggregateContainerResourcesByFn with spec values (no status, no DRA).
ResourceList Aggregate(const Pod& pod, bool requests) {
  auto side = [requests](const Container& c) -> const ResourceList& {
    return requests ? c.resources.requests : c.resources.limits;
  };
  ResourceList result;
  for (const Container& c : pod.containers) AddInto(result, side(c));
  ResourceList sidecars_so_far;
  ResourceList init_peak;
  for (const Container& c : pod.init_containers) {
    if (c.IsRestartableInit()) {
      AddInto(result, side(c));
      AddInto(sidecars_so_far, side(c));
      MaxInto(init_peak, sidecars_so_far);
    } else {
      ResourceList use = side(c);
      AddInto(use, sidecars_so_far);
      MaxInto(init_peak, use);
    }
  }
  MaxInto(result, init_peak);
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
  ResourceList requests;
  ResourceList limits;
  bool guaranteed = true;

  const bool pod_level =
      gates.pod_level_resources &&
      (gates.fix_kubelet_qos_class ? pod.HasPodLevelResources() : pod.resources.has_value());
  if (pod_level) {
    AddPositiveQosQuantities(pod.resources->requests, requests);
    if (!pod.resources->limits.empty()) {
      AddPositiveQosQuantities(pod.resources->limits, limits);
      if (!HasPositiveCpuAndMemory(pod.resources->limits)) guaranteed = false;
    }
  } else {
    // Ephemeral containers cannot set resources and never count.
    for (const Container* c : pod.InitAndAppContainers()) {
      AddPositiveQosQuantities(c->resources.requests, requests);
      AddPositiveQosQuantities(c->resources.limits, limits);
      if (!HasPositiveCpuAndMemory(c->resources.limits)) guaranteed = false;
    }
  }

  if (requests.empty() && limits.empty()) return QosClass::kBestEffort;
  if (guaranteed) {
    for (const auto& [name, request] : requests) {
      auto it = limits.find(name);
      if (it == limits.end() || it->second.Cmp(request) != 0) {
        guaranteed = false;
        break;
      }
    }
  }
  if (guaranteed && requests.size() == limits.size()) return QosClass::kGuaranteed;
  return QosClass::kBurstable;
}

bool IsContainerEquivalentQosGuaranteed(const Container& container) {
  for (const char* name : {kResourceCpu, kResourceMemory}) {
    auto req = container.resources.requests.find(name);
    auto lim = container.resources.limits.find(name);
    Quantity request = req == container.resources.requests.end() ? Quantity() : req->second;
    Quantity limit = lim == container.resources.limits.end() ? Quantity() : lim->second;
    if (request.IsZero() || request.Cmp(limit) != 0) return false;
  }
  return true;
}

ResourceList AggregateContainerRequests(const Pod& pod) { return Aggregate(pod, true); }

ResourceList AggregateContainerLimits(const Pod& pod) { return Aggregate(pod, false); }

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
  ResourceList result = AggregateContainerLimits(pod);
  if (pod_level_resources_enabled && pod.HasPodLevelResources()) {
    for (const auto& [name, quantity] : pod.resources->limits) {
      if (IsSupportedPodLevelResource(name)) result[name] = quantity;
    }
  }
  return result;
}

}  // namespace podtopo
