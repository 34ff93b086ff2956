#include "devicemanager/device_manager.h"

#include <algorithm>

#include "fmt/format.h"

namespace podtopo::devicemanager {
namespace {

using topologymanager::BitMask;
using topologymanager::TopologyHint;

// A device count as the kubelet reads it (Quantity.Value(), clamped).
int DeviceCount(const Quantity& q) {
  return static_cast<int>(std::clamp<int64_t>(q.Value(), 0, 1 << 30));
}

bool Contains(const std::vector<int>& sorted, int v) {
  return std::binary_search(sorted.begin(), sorted.end(), v);
}

}  // namespace

DeviceManager::DeviceManager(const std::vector<Device>& devices, std::vector<int> numa_nodes)
    : all_(devices), numa_nodes_(std::move(numa_nodes)) {
  std::map<std::string, std::vector<DeviceInfo>> by_resource;
  for (const auto& d : devices) by_resource[d.resource].push_back({d.id, d.numa});
  for (auto& [name, list] : by_resource) {
    // By id; of equal ids the first one given.
    std::stable_sort(list.begin(), list.end(),
                     [](const DeviceInfo& a, const DeviceInfo& b) { return a.id < b.id; });
    list.erase(std::unique(list.begin(), list.end(),
                           [](const DeviceInfo& a, const DeviceInfo& b) { return a.id == b.id; }),
               list.end());
    Resource r;
    r.name = name;
    r.aligned = std::any_of(list.begin(), list.end(), [](const DeviceInfo& d) { return d.numa >= 0; });
    r.holders.assign(list.size(), 0);
    r.devices = std::move(list);
    resources_.push_back(std::move(r));
  }
  reuse_.resize(resources_.size());
}

int DeviceManager::ResourceIndex(const std::string& resource) const {
  auto it = std::lower_bound(resources_.begin(), resources_.end(), resource,
                             [](const Resource& r, const std::string& v) { return r.name < v; });
  return it != resources_.end() && it->name == resource
             ? static_cast<int>(it - resources_.begin())
             : -1;
}

int DeviceManager::DeviceIndex(int r, const std::string& id) const {
  const std::vector<DeviceInfo>& devices = resources_[static_cast<size_t>(r)].devices;
  auto it = std::lower_bound(devices.begin(), devices.end(), id,
                             [](const DeviceInfo& d, const std::string& v) { return d.id < v; });
  return it != devices.end() && it->id == id ? static_cast<int>(it - devices.begin()) : -1;
}

int DeviceManager::DeviceNuma(const std::string& resource, const std::string& id) const {
  int r = ResourceIndex(resource);
  int d = r < 0 ? -1 : DeviceIndex(r, id);
  return d < 0 ? -1 : resources_[static_cast<size_t>(r)].devices[static_cast<size_t>(d)].numa;
}

std::map<std::string, std::set<std::string>> DeviceManager::AllocatedDevices() const {
  std::map<std::string, std::set<std::string>> out;
  for (const Resource& r : resources_) {
    for (size_t d = 0; d < r.devices.size(); ++d) {
      if (r.holders[d] > 0) out[r.name].insert(r.devices[d].id);
    }
  }
  return out;
}

DeviceManager::Indices DeviceManager::Available(int r) const {
  const Resource& res = resources_[static_cast<size_t>(r)];
  Indices out;
  out.reserve(res.devices.size());
  for (size_t d = 0; d < res.devices.size(); ++d) {
    if (res.holders[d] == 0) out.push_back(static_cast<int>(d));
  }
  return out;
}

const std::vector<DeviceManager::ContainerHoldings>* DeviceManager::PodHoldings(
    const std::string& pod_uid) const {
  auto it = pod_devices_.find(pod_uid);
  return it == pod_devices_.end() ? nullptr : &it->second;
}

DeviceManager::ContainerHoldings* DeviceManager::FindHoldings(const std::string& pod_uid,
                                                             const std::string& container) {
  auto it = pod_devices_.find(pod_uid);
  if (it == pod_devices_.end()) return nullptr;
  for (ContainerHoldings& h : it->second) {
    if (h.container == container) return &h;
  }
  return nullptr;
}

void DeviceManager::Hold(ContainerHoldings& holdings, int r, const Indices& devices) {
  auto it = std::lower_bound(holdings.resources.begin(), holdings.resources.end(), r,
                             [](const Holding& h, int v) { return h.resource < v; });
  if (it == holdings.resources.end() || it->resource != r) {
    it = holdings.resources.insert(it, Holding{r, {}});
  }
  Resource& res = resources_[static_cast<size_t>(r)];
  Indices merged;
  merged.reserve(it->devices.size() + devices.size());
  std::set_union(it->devices.begin(), it->devices.end(), devices.begin(), devices.end(),
                 std::back_inserter(merged));
  for (int d : devices) {
    if (!Contains(it->devices, d)) ++res.holders[static_cast<size_t>(d)];
  }
  it->devices = std::move(merged);
}

void DeviceManager::Unhold(const ContainerHoldings& holdings) {
  for (const Holding& h : holdings.resources) {
    Resource& res = resources_[static_cast<size_t>(h.resource)];
    for (int d : h.devices) --res.holders[static_cast<size_t>(d)];
  }
}

topologymanager::HintSet DeviceManager::GenerateHints(int r, const Indices& available,
                                                     const Indices& reusable,
                                                     int request) const {
  using topologymanager::CoverRule;
  using topologymanager::MaskFamily;
  if (exhaustive_hints_) return GenerateHintsExhaustive(r, available, reusable, request);
  uint64_t nodes = 0;
  for (int numa : numa_nodes_) {
    if (numa < 0 || numa > 63) return topologymanager::HintSet();  // no mask at all
    nodes |= uint64_t{1} << numa;
  }
  auto on_node = [&](int numa) { return numa >= 0 && numa < 64 && ((nodes >> numa) & 1); };
  // minAffinitySize: the fewest NUMA nodes whose devices could hold the request.
  MaskFamily capacity{nodes, 0, 1, {}};
  CoverRule& all = capacity.rules.emplace_back();
  all.need = request < 0 ? 0 : static_cast<uint64_t>(request);
  const std::vector<DeviceInfo>& devices = resources_[static_cast<size_t>(r)].devices;
  for (const auto& d : devices) {
    if (on_node(d.numa)) ++all.weight[d.numa];
  }
  topologymanager::PreferenceRule preference;
  preference.count = capacity.MinCount().value_or(static_cast<int>(numa_nodes_.size()));
  // The mask holds every reusable device with a NUMA node, and with them the request.
  MaskFamily family;
  family.domain = nodes;
  int reusable_on_numa = 0;
  bool reusable_outside = false;
  for (int d : reusable) {
    int numa = devices[static_cast<size_t>(d)].numa;
    if (numa < 0) continue;  // no topology: skipped
    ++reusable_on_numa;
    if (on_node(numa)) {
      family.required |= uint64_t{1} << numa;
    } else {
      reusable_outside = true;
    }
  }
  CoverRule& free = family.rules.emplace_back();
  const int64_t missing = int64_t{request} - reusable_on_numa;
  free.need = missing > 0 ? static_cast<uint64_t>(missing) : 0;
  for (int d : available) {
    int numa = devices[static_cast<size_t>(d)].numa;
    if (on_node(numa)) ++free.weight[numa];
  }
  std::optional<MaskFamily> members;
  if (!reusable_outside) members = std::move(family);
  return topologymanager::HintSet::FromMasks(nodes, std::move(members), {}, std::move(preference));
}

std::vector<TopologyHint> DeviceManager::GenerateHintsExhaustive(int r, const Indices& available,
                                                                 const Indices& reusable,
                                                                 int request) const {
  int min_affinity_size = static_cast<int>(numa_nodes_.size());
  std::vector<TopologyHint> hints;
  const std::vector<DeviceInfo>& devices = resources_[static_cast<size_t>(r)].devices;
  auto numa_of = [&](int d) { return devices[static_cast<size_t>(d)].numa; };
  (void)topologymanager::IterateBitMasks(numa_nodes_, [&](BitMask mask) {
    int devices_in_mask = 0;
    for (const auto& d : devices) {
      if (d.numa >= 0 && mask.IsSet(d.numa)) ++devices_in_mask;
    }
    if (devices_in_mask >= request && mask.Count() < min_affinity_size) {
      min_affinity_size = mask.Count();
    }
    int matching = 0;
    for (int d : reusable) {
      if (numa_of(d) < 0) continue;  // no topology: skipped
      if (!mask.IsSet(numa_of(d))) return;
      ++matching;
    }
    for (int d : available) {
      if (numa_of(d) >= 0 && mask.IsSet(numa_of(d))) ++matching;
    }
    if (matching < request) return;
    hints.push_back(TopologyHint{mask, false});
  });
  for (auto& h : hints) {
    if (h.affinity->Count() == min_affinity_size) h.preferred = true;
  }
  return hints;
}

HintMap DeviceManager::HintsFor(const Pod& pod, const Requests& requests,
                                const std::string* container_name) const {
  HintMap out;
  const std::vector<ContainerHoldings>* holdings = PodHoldings(pod.uid);
  for (const auto& [r, requested] : requests) {
    const Resource& res = resources_[static_cast<size_t>(r)];
    auto& hints = out.emplace_hint(out.end(), res.name, std::nullopt)->second;
    if (!res.aligned) continue;  // no preference
    // The devices the pod (the container) already holds.
    Indices allocated;
    if (holdings != nullptr) {
      for (const ContainerHoldings& c : *holdings) {
        if (container_name != nullptr && c.container != *container_name) continue;
        for (const Holding& h : c.resources) {
          if (h.resource != r) continue;
          Indices merged;
          std::set_union(allocated.begin(), allocated.end(), h.devices.begin(), h.devices.end(),
                         std::back_inserter(merged));
          allocated = std::move(merged);
        }
      }
    }
    if (!allocated.empty()) {
      if (static_cast<int>(allocated.size()) != requested) {
        hints = std::vector<TopologyHint>{};
      } else {
        hints = GenerateHints(r, allocated, {}, requested);
      }
      continue;
    }
    Indices available = Available(r);
    static const Indices kNone;
    const Indices& reusable =
        container_name != nullptr && reuse_pod_ == pod.uid ? reuse_[static_cast<size_t>(r)]
                                                           : kNone;
    // The devices of both sets, each once.
    size_t both = available.size();
    for (int d : reusable) both += Contains(available, d) ? 0 : 1;
    if (static_cast<int>(both) < requested) {
      hints = std::vector<TopologyHint>{};
      continue;
    }
    hints = GenerateHints(r, available, reusable, requested);
  }
  return out;
}

DeviceManager::Requests DeviceManager::ContainerRequests(const Container& container) const {
  Requests out;
  if (resources_.empty()) return out;  // no device-plugin resource: no request
  for (const auto& [name, q] : container.resources.limits) {
    int r = ResourceIndex(name);
    if (r >= 0) out.emplace_back(r, DeviceCount(q));
  }
  return out;
}

HintMap DeviceManager::GetTopologyHints(const Pod& pod, const Container& container) const {
  if (resources_.empty()) return {};  // no device-plugin resource: no request
  return HintsFor(pod, ContainerRequests(container), &container.name);
}

DeviceManager::Requests DeviceManager::PodDeviceRequests(const Pod& pod) const {
  Requests requests;
  if (resources_.empty()) return requests;  // no device-plugin resource: no request
  // getPodDeviceRequest: resource.PodLimits over the device-plugin resources.
  ResourceList limits = PodLimitsOf(
      pod, [this](const std::string& name) { return IsDevicePluginResource(name); });
  for (const auto& [name, q] : limits) requests.emplace_back(ResourceIndex(name), DeviceCount(q));
  return requests;
}

void DeviceManager::BeginPod(const Pod& pod) { admission_ = AdmissionMemo{&pod, std::nullopt}; }

HintMap DeviceManager::GetPodTopologyHints(const Pod& pod) const {
  if (resources_.empty()) return {};  // no device-plugin resource: no request
  if (admission_.has_value() && admission_->pod == &pod) {
    if (!admission_->requests.has_value()) admission_->requests = PodDeviceRequests(pod);
    return HintsFor(pod, *admission_->requests, nullptr);
  }
  return HintsFor(pod, PodDeviceRequests(pod), nullptr);
}

absl::Status DeviceManager::Allocate(const Pod& pod, const Container& container,
                                     const TopologyHint& affinity) {
  // Only the pod being admitted keeps reuse state.
  if (reuse_pod_ != pod.uid) {
    reuse_pod_ = pod.uid;
    reuse_.assign(resources_.size(), {});
  }
  const Requests requests = ContainerRequests(container);
  ContainerHoldings* mine = FindHoldings(pod.uid, container.name);
  // Nothing to allocate; only devices the container already holds (restored) change the reuse
  // state below.
  if (requests.empty() && mine == nullptr) return absl::OkStatus();
  std::vector<Holding> granted;
  for (const auto& [r, required] : requests) {
    const Resource& res = resources_[static_cast<size_t>(r)];
    static const Indices kNone;
    const Indices* held = &kNone;
    if (mine != nullptr) {
      for (const Holding& h : mine->resources) {
        if (h.resource == r) held = &h.devices;
      }
    }
    int needed = required - static_cast<int>(held->size());
    if (needed <= 0) continue;
    Indices allocated;
    auto take_from = [&](const Indices& ids) {
      for (int d : ids) {
        if (needed == 0) return true;
        if (std::find(allocated.begin(), allocated.end(), d) != allocated.end() ||
            Contains(*held, d)) {
          continue;
        }
        allocated.push_back(d);
        --needed;
      }
      return needed == 0;
    };
    if (!take_from(reuse_[static_cast<size_t>(r)])) {
      Indices available = Available(r);
      // Devices granted to this container for other resources are not shared across names.
      if (static_cast<int>(available.size()) < needed) {
        return absl::ResourceExhaustedError(fmt::format(
            "requested number of devices unavailable for {}. Requested: {}, Available: {}",
            res.name, needed, available.size()));
      }
      // filterByAffinity: devices on the hint's NUMA nodes, on other nodes, and without one,
      // taken from in that order. `preferred` is the three lists one after the other (the
      // sorted nodes below put the hint's nodes first and the devices without a node last),
      // which takes the same devices as taking from each list in turn.
      Indices preferred;
      if (!res.aligned || !affinity.affinity.has_value()) {
        preferred = std::move(available);
      } else {
        auto numa_of = [&](int d) { return res.devices[static_cast<size_t>(d)].numa; };
        // The NUMA nodes of the available devices (ascending) and how many each has.
        std::vector<std::pair<int, int>> per_node;
        per_node.reserve(available.size());
        for (int d : available) {
          auto it = std::lower_bound(per_node.begin(), per_node.end(), numa_of(d),
                                     [](const std::pair<int, int>& p, int v) { return p.first < v; });
          if (it == per_node.end() || it->first != numa_of(d)) {
            it = per_node.insert(it, {numa_of(d), 0});
          }
          ++it->second;
        }
        const BitMask mask = *affinity.affinity;
        std::stable_sort(per_node.begin(), per_node.end(),
                         [&](const std::pair<int, int>& pa, const std::pair<int, int>& pb) {
                           int a = pa.first, b = pb.first;
                           bool ia = a >= 0 && mask.IsSet(a), ib = b >= 0 && mask.IsSet(b);
                           if (ia && ib) return pa.second < pb.second;
                           if (ia) return true;
                           if (ib) return false;
                           if (a < 0) return false;
                           if (b < 0) return true;
                           return pa.second < pb.second;
                         });
        preferred.reserve(available.size());
        for (const auto& [n, _] : per_node) {
          for (int d : available) {
            if (numa_of(d) == n) preferred.push_back(d);
          }
        }
      }
      bool done = take_from(preferred);
      if (!done) {
        return absl::InternalError(
            fmt::format("unexpectedly allocated less resources than required. Requested: {}, "
                        "Got: {}",
                        required, required - needed));
      }
    }
    std::sort(allocated.begin(), allocated.end());
    granted.push_back({r, std::move(allocated)});
  }
  if (mine == nullptr && !granted.empty()) {
    mine = &pod_devices_[pod.uid].emplace_back(ContainerHoldings{container.name, {}});
  }
  if (mine == nullptr) return absl::OkStatus();
  for (const Holding& g : granted) Hold(*mine, g.resource, g.devices);
  // Regular init containers leave their devices to later containers; sidecars and app
  // containers keep theirs.
  for (const Holding& h : mine->resources) {
    Indices& reuse = reuse_[static_cast<size_t>(h.resource)];
    Indices updated;
    if (container.kind == ContainerKind::kInit) {
      std::set_union(reuse.begin(), reuse.end(), h.devices.begin(), h.devices.end(),
                     std::back_inserter(updated));
    } else {
      std::set_difference(reuse.begin(), reuse.end(), h.devices.begin(), h.devices.end(),
                          std::back_inserter(updated));
    }
    reuse = std::move(updated);
  }
  return absl::OkStatus();
}

void DeviceManager::RemoveContainer(const std::string& pod_uid,
                                    const std::string& container_name) {
  auto pit = pod_devices_.find(pod_uid);
  if (pit == pod_devices_.end()) return;
  std::vector<ContainerHoldings>& containers = pit->second;
  for (auto it = containers.begin(); it != containers.end(); ++it) {
    if (it->container != container_name) continue;
    Unhold(*it);
    containers.erase(it);
    break;
  }
  if (containers.empty()) {
    pod_devices_.erase(pit);
    if (reuse_pod_ == pod_uid) reuse_.assign(resources_.size(), {});
  }
}

ResourceDevices DeviceManager::ContainerDevices(const std::string& pod_uid,
                                                const std::string& container_name) const {
  ResourceDevices out;
  const ContainerHoldings* holdings = FindHoldings(pod_uid, container_name);
  if (holdings == nullptr) return out;
  for (const Holding& h : holdings->resources) {
    const Resource& res = resources_[static_cast<size_t>(h.resource)];
    std::vector<std::string>& ids =
        out.emplace_hint(out.end(), res.name, std::vector<std::string>{})->second;
    ids.reserve(h.devices.size());
    for (int d : h.devices) ids.push_back(res.devices[static_cast<size_t>(d)].id);
  }
  return out;
}

absl::Status DeviceManager::Restore(const std::string& pod_uid,
                                    const std::string& container_name,
                                    const ResourceDevices& devices) {
  std::vector<Holding> restored;
  for (const auto& [res, ids] : devices) {
    if (ids.empty()) continue;  // nothing held (a record never lists an empty one)
    int r = ResourceIndex(res);
    Holding h{r, {}};
    for (const auto& id : ids) {
      int d = r < 0 ? -1 : DeviceIndex(r, id);
      if (d < 0) {
        return absl::InvalidArgumentError(
            fmt::format("device {} of resource {} (pod {}, container {}) is not on this node", id,
                        res, pod_uid, container_name));
      }
      h.devices.push_back(d);
    }
    std::sort(h.devices.begin(), h.devices.end());
    h.devices.erase(std::unique(h.devices.begin(), h.devices.end()), h.devices.end());
    restored.push_back(std::move(h));
  }
  if (restored.empty()) return absl::OkStatus();
  ContainerHoldings* mine = FindHoldings(pod_uid, container_name);
  if (mine == nullptr) {
    mine = &pod_devices_[pod_uid].emplace_back(ContainerHoldings{container_name, {}});
  }
  for (const Holding& h : restored) Hold(*mine, h.resource, h.devices);
  return absl::OkStatus();
}

}  // namespace podtopo::devicemanager
