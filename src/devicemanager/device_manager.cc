#include "devicemanager/device_manager.h"

#include <algorithm>

#include "fmt/format.h"

namespace podtopo::devicemanager {
namespace {

using topologymanager::BitMask;
using topologymanager::TopologyHint;

// The container's limits for resources served by `dm`, as ints (Quantity.Value()).
std::map<std::string, int> ContainerRequests(const DeviceManager& dm, const Container& c) {
  std::map<std::string, int> out;
  for (const auto& [name, q] : c.resources.limits) {
    if (!dm.IsDevicePluginResource(name)) continue;
    int64_t v = q.Value();
    out[name] = static_cast<int>(std::clamp<int64_t>(v, 0, 1 << 30));
  }
  return out;
}

}  // namespace

DeviceManager::DeviceManager(const std::vector<Device>& devices, std::vector<int> numa_nodes)
    : all_(devices), numa_nodes_(std::move(numa_nodes)) {
  for (const auto& d : devices) devices_[d.resource].push_back({d.id, d.numa});
  for (auto& [_, list] : devices_) {
    std::sort(list.begin(), list.end(),
              [](const DeviceInfo& a, const DeviceInfo& b) { return a.id < b.id; });
  }
}

bool DeviceManager::HasTopologyAlignment(const std::string& resource) const {
  auto it = devices_.find(resource);
  if (it == devices_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [](const DeviceInfo& d) { return d.numa >= 0; });
}

int DeviceManager::NumaIn(const std::vector<DeviceInfo>& devices, const std::string& id) {
  // Sorted by id: the first device with this id.
  auto it = std::lower_bound(devices.begin(), devices.end(), id,
                             [](const DeviceInfo& d, const std::string& v) { return d.id < v; });
  return it != devices.end() && it->id == id ? it->numa : -1;
}

int DeviceManager::DeviceNuma(const std::string& resource, const std::string& id) const {
  auto it = devices_.find(resource);
  return it == devices_.end() ? -1 : NumaIn(it->second, id);
}

std::map<std::string, std::set<std::string>> DeviceManager::AllocatedDevices() const {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& [_, containers] : pod_devices_) {
    for (const auto& [__, resources] : containers) {
      for (const auto& [res, ids] : resources) out[res].insert(ids.begin(), ids.end());
    }
  }
  return out;
}

std::set<std::string> DeviceManager::Available(const std::string& resource) const {
  std::set<std::string> out;
  auto it = devices_.find(resource);
  if (it == devices_.end()) return out;
  for (const auto& d : it->second) out.insert(out.end(), d.id);  // ascending ids
  for (const auto& [_, containers] : pod_devices_) {
    for (const auto& [__, resources] : containers) {
      if (auto r = resources.find(resource); r != resources.end()) {
        for (const auto& id : r->second) out.erase(id);
      }
    }
  }
  return out;
}

topologymanager::HintSet DeviceManager::GenerateHints(const std::string& resource,
                                                     const std::set<std::string>& available,
                                                     const std::set<std::string>& reusable,
                                                     int request) const {
  using topologymanager::CoverRule;
  using topologymanager::MaskFamily;
  if (exhaustive_hints_) return GenerateHintsExhaustive(resource, available, reusable, request);
  uint64_t nodes = 0;
  for (int numa : numa_nodes_) {
    if (numa < 0 || numa > 63) return topologymanager::HintSet();  // no mask at all
    nodes |= uint64_t{1} << numa;
  }
  auto on_node = [&](int numa) { return numa >= 0 && numa < 64 && ((nodes >> numa) & 1); };
  // minAffinitySize: the fewest NUMA nodes whose devices could hold the request.
  CoverRule capacity;
  capacity.need = request < 0 ? 0 : static_cast<uint64_t>(request);
  const std::vector<DeviceInfo>& devices = devices_.at(resource);
  for (const auto& d : devices) {
    if (on_node(d.numa)) ++capacity.weight[d.numa];
  }
  topologymanager::PreferenceRule preference;
  preference.count = MaskFamily{nodes, 0, 1, {capacity}}.MinCount().value_or(
      static_cast<int>(numa_nodes_.size()));
  // The mask holds every reusable device with a NUMA node, and with them the request.
  MaskFamily family;
  family.domain = nodes;
  int reusable_on_numa = 0;
  bool reusable_outside = false;
  for (const auto& id : reusable) {
    int numa = NumaIn(devices, id);
    if (numa < 0) continue;  // no topology: skipped
    ++reusable_on_numa;
    if (on_node(numa)) {
      family.required |= uint64_t{1} << numa;
    } else {
      reusable_outside = true;
    }
  }
  CoverRule free;
  const int64_t missing = int64_t{request} - reusable_on_numa;
  free.need = missing > 0 ? static_cast<uint64_t>(missing) : 0;
  for (const auto& id : available) {
    int numa = NumaIn(devices, id);
    if (on_node(numa)) ++free.weight[numa];
  }
  family.rules.push_back(free);
  std::optional<MaskFamily> members;
  if (!reusable_outside) members = std::move(family);
  return topologymanager::HintSet::FromMasks(nodes, std::move(members), {}, std::move(preference));
}

std::vector<TopologyHint> DeviceManager::GenerateHintsExhaustive(const std::string& resource,
                                                       const std::set<std::string>& available,
                                                       const std::set<std::string>& reusable,
                                                       int request) const {
  int min_affinity_size = static_cast<int>(numa_nodes_.size());
  std::vector<TopologyHint> hints;
  const auto& all = devices_.at(resource);
  auto in_mask = [&](BitMask mask, const std::string& id) {
    int numa = DeviceNuma(resource, id);
    return numa >= 0 && mask.IsSet(numa);
  };
  (void)topologymanager::IterateBitMasks(numa_nodes_, [&](BitMask mask) {
    int devices_in_mask = 0;
    for (const auto& d : all) {
      if (d.numa >= 0 && mask.IsSet(d.numa)) ++devices_in_mask;
    }
    if (devices_in_mask >= request && mask.Count() < min_affinity_size) {
      min_affinity_size = mask.Count();
    }
    int matching = 0;
    for (const auto& id : reusable) {
      if (DeviceNuma(resource, id) < 0) continue;  // no topology: skipped
      if (!in_mask(mask, id)) return;
      ++matching;
    }
    for (const auto& id : available) {
      if (in_mask(mask, id)) ++matching;
    }
    if (matching < request) return;
    hints.push_back(TopologyHint{mask, false});
  });
  for (auto& h : hints) {
    if (h.affinity->Count() == min_affinity_size) h.preferred = true;
  }
  return hints;
}

HintMap DeviceManager::HintsFor(const Pod& pod, const std::map<std::string, int>& requests,
                                const std::string* container_name) const {
  HintMap out;
  for (const auto& [resource, requested] : requests) {
    if (!HasTopologyAlignment(resource)) {
      out[resource] = std::nullopt;
      continue;
    }
    std::set<std::string> allocated;
    if (auto pit = pod_devices_.find(pod.uid); pit != pod_devices_.end()) {
      for (const auto& [name, resources] : pit->second) {
        if (container_name != nullptr && name != *container_name) continue;
        if (auto rit = resources.find(resource); rit != resources.end()) {
          allocated.insert(rit->second.begin(), rit->second.end());
        }
      }
    }
    if (!allocated.empty()) {
      if (static_cast<int>(allocated.size()) != requested) {
        out[resource] = std::vector<TopologyHint>{};
      } else {
        out[resource] = GenerateHints(resource, allocated, {}, requested);
      }
      continue;
    }
    std::set<std::string> available = Available(resource);
    std::set<std::string> reusable;
    if (container_name != nullptr) {
      if (auto rit = devices_to_reuse_.find(pod.uid); rit != devices_to_reuse_.end()) {
        if (auto it = rit->second.find(resource); it != rit->second.end()) reusable = it->second;
      }
    }
    // The devices of both sets, each once.
    size_t both = available.size();
    for (const auto& id : reusable) both += available.contains(id) ? 0 : 1;
    if (static_cast<int>(both) < requested) {
      out[resource] = std::vector<TopologyHint>{};
      continue;
    }
    out[resource] = GenerateHints(resource, available, reusable, requested);
  }
  return out;
}

HintMap DeviceManager::GetTopologyHints(const Pod& pod, const Container& container) const {
  if (devices_.empty()) return {};  // no device-plugin resource: no request
  return HintsFor(pod, ContainerRequests(*this, container), &container.name);
}

std::map<std::string, int> DeviceManager::PodDeviceRequests(const Pod& pod) const {
  std::map<std::string, int> requests;
  if (devices_.empty()) return requests;  // no device-plugin resource: no request
  // getPodDeviceRequest: resource.PodLimits over the device-plugin resources.
  for (const auto& [name, q] : PodLimits(pod)) {
    if (!IsDevicePluginResource(name)) continue;
    requests.emplace_hint(requests.end(), name,
                          static_cast<int>(std::clamp<int64_t>(q.Value(), 0, 1 << 30)));
  }
  return requests;
}

void DeviceManager::BeginPod(const Pod& pod) { admission_ = AdmissionMemo{&pod, std::nullopt}; }

HintMap DeviceManager::GetPodTopologyHints(const Pod& pod) const {
  if (devices_.empty()) return {};  // no device-plugin resource: no request
  if (admission_.has_value() && admission_->pod == &pod) {
    if (!admission_->requests.has_value()) admission_->requests = PodDeviceRequests(pod);
    return HintsFor(pod, *admission_->requests, nullptr);
  }
  return HintsFor(pod, PodDeviceRequests(pod), nullptr);
}

absl::Status DeviceManager::Allocate(const Pod& pod, const Container& container,
                                     const TopologyHint& affinity) {
  // Only the pod being admitted keeps reuse state.
  for (auto it = devices_to_reuse_.begin(); it != devices_to_reuse_.end();) {
    it = it->first == pod.uid ? std::next(it) : devices_to_reuse_.erase(it);
  }
  auto& reuse = devices_to_reuse_[pod.uid];
  const std::map<std::string, int> requests = ContainerRequests(*this, container);
  if (requests.empty()) {
    // Nothing to allocate; only devices the container already holds (restored) change the
    // reuse state below.
    auto pit = pod_devices_.find(pod.uid);
    if (pit == pod_devices_.end() || !pit->second.contains(container.name)) {
      return absl::OkStatus();
    }
  }
  std::map<std::string, std::set<std::string>> granted;
  for (const auto& [resource, required] : requests) {
    std::set<std::string> held;
    if (auto pit = pod_devices_.find(pod.uid); pit != pod_devices_.end()) {
      if (auto cit = pit->second.find(container.name); cit != pit->second.end()) {
        if (auto rit = cit->second.find(resource); rit != cit->second.end()) held = rit->second;
      }
    }
    int needed = required - static_cast<int>(held.size());
    if (needed <= 0) continue;
    std::set<std::string> allocated;
    auto take_from = [&](const std::vector<std::string>& ids) {
      for (const auto& id : ids) {
        if (needed == 0) return true;
        if (allocated.count(id) || held.count(id)) continue;
        allocated.insert(id);
        --needed;
      }
      return needed == 0;
    };
    std::vector<std::string> reusable(reuse[resource].begin(), reuse[resource].end());
    if (!take_from(reusable)) {
      std::set<std::string> available = Available(resource);
      // Devices granted to this container for other resources are not shared across names.
      if (static_cast<int>(available.size()) < needed) {
        return absl::ResourceExhaustedError(fmt::format(
            "requested number of devices unavailable for {}. Requested: {}, Available: {}",
            resource, needed, available.size()));
      }
      // filterByAffinity: devices on the hint's NUMA nodes, on other nodes, and without one.
      std::vector<std::string> aligned, unaligned, no_affinity;
      if (!HasTopologyAlignment(resource) || !affinity.affinity.has_value()) {
        no_affinity.assign(available.begin(), available.end());
      } else {
        const std::vector<DeviceInfo>& devices = devices_.at(resource);
        std::map<int, int> per_node;
        for (const auto& id : available) per_node[NumaIn(devices, id)]++;
        std::vector<int> nodes;
        for (const auto& [n, _] : per_node) nodes.push_back(n);
        const BitMask mask = *affinity.affinity;
        std::stable_sort(nodes.begin(), nodes.end(), [&](int a, int b) {
          bool ia = a >= 0 && mask.IsSet(a), ib = b >= 0 && mask.IsSet(b);
          if (ia && ib) return per_node[a] < per_node[b];
          if (ia) return true;
          if (ib) return false;
          if (a < 0) return false;
          if (b < 0) return true;
          return per_node[a] < per_node[b];
        });
        for (int n : nodes) {
          for (const auto& id : available) {
            if (NumaIn(devices, id) != n) continue;
            if (n < 0) {
              no_affinity.push_back(id);
            } else if (mask.IsSet(n)) {
              aligned.push_back(id);
            } else {
              unaligned.push_back(id);
            }
          }
        }
      }
      bool done = take_from(aligned) || take_from(unaligned) || take_from(no_affinity);
      if (!done) {
        return absl::InternalError(
            fmt::format("unexpectedly allocated less resources than required. Requested: {}, "
                        "Got: {}",
                        required, required - needed));
      }
    }
    granted[resource] = std::move(allocated);
  }
  auto& mine = pod_devices_[pod.uid][container.name];
  for (auto& [resource, ids] : granted) mine[resource].insert(ids.begin(), ids.end());
  // Regular init containers leave their devices to later containers; sidecars and app
  // containers keep theirs.
  for (const auto& [resource, ids] : mine) {
    if (container.kind == ContainerKind::kInit) {
      reuse[resource].insert(ids.begin(), ids.end());
    } else {
      for (const auto& id : ids) reuse[resource].erase(id);
    }
  }
  if (mine.empty()) pod_devices_[pod.uid].erase(container.name);
  if (pod_devices_[pod.uid].empty()) pod_devices_.erase(pod.uid);
  return absl::OkStatus();
}

void DeviceManager::RemoveContainer(const std::string& pod_uid,
                                    const std::string& container_name) {
  auto pit = pod_devices_.find(pod_uid);
  if (pit == pod_devices_.end()) return;
  pit->second.erase(container_name);
  if (pit->second.empty()) {
    pod_devices_.erase(pit);
    devices_to_reuse_.erase(pod_uid);
  }
}

ResourceDevices DeviceManager::ContainerDevices(const std::string& pod_uid,
                                                const std::string& container_name) const {
  ResourceDevices out;
  auto pit = pod_devices_.find(pod_uid);
  if (pit == pod_devices_.end()) return out;
  auto cit = pit->second.find(container_name);
  if (cit == pit->second.end()) return out;
  for (const auto& [res, ids] : cit->second) out[res].assign(ids.begin(), ids.end());
  return out;
}

absl::Status DeviceManager::Restore(const std::string& pod_uid,
                                    const std::string& container_name,
                                    const ResourceDevices& devices) {
  for (const auto& [res, ids] : devices) {
    for (const auto& id : ids) {
      bool known = false;
      if (auto it = devices_.find(res); it != devices_.end()) {
        for (const auto& d : it->second) known |= d.id == id;
      }
      if (!known) {
        return absl::InvalidArgumentError(
            fmt::format("device {} of resource {} (pod {}, container {}) is not on this node", id,
                        res, pod_uid, container_name));
      }
    }
  }
  auto& mine = pod_devices_[pod_uid][container_name];
  for (const auto& [res, ids] : devices) mine[res].insert(ids.begin(), ids.end());
  return absl::OkStatus();
}

}  // namespace podtopo::devicemanager
