#include "agent/observation.h"

#include <algorithm>

#include "fmt/format.h"

namespace podtopo::agent {

absl::StatusOr<Observation> Observe(const client::PodResourcesClient& client,
                                    const client::NumaMap& numa_map, ObserveError* error) {
  auto fail = [&](const char* call, absl::Status s) {
    if (error != nullptr) *error = ObserveError{call, s};
    return s;
  };
  Observation o;
  auto list = client.List();
  if (!list.ok()) return fail("list", list.status());
  for (const auto& p : list->pod_resources()) {
    auto view = client::BuildPodView(p, numa_map);
    if (!view.ok()) {
      return fail("malformed", absl::InvalidArgumentError(fmt::format(
                                   "List on {}: {}", client.socket(), std::string(view.status().message()))));
    }
    for (const auto& w : view->warnings) {
      o.warnings.push_back(fmt::format("pod {}/{}: {}", view->namespace_, view->name, w));
    }
    o.pods.push_back(std::move(*view));
  }
  auto alloc = client.GetAllocatableResources();
  if (alloc.ok()) {
    auto view = client::BuildAllocatableView(*alloc, numa_map);
    if (!view.ok()) {
      return fail("malformed", absl::InvalidArgumentError(
                                   fmt::format("GetAllocatableResources on {}: {}",
                                               client.socket(), std::string(view.status().message()))));
    }
    for (const auto& w : view->warnings) o.warnings.push_back("allocatable: " + w);
    o.allocatable = std::move(*view);
  } else if (alloc.status().code() != absl::StatusCode::kUnimplemented) {
    return fail("get_allocatable", alloc.status());
  }
  o.usage = client::SumUsage(o.pods, numa_map);
  for (const auto& w : o.usage.warnings) o.warnings.push_back(w);
  o.time = std::chrono::system_clock::now();
  return o;
}

client::NumaMap NumaMapOf(const NodeTopology& topology) {
  client::NumaMap map;
  for (int id : topology.cpus.NumaNodes()) map[id] = topology.cpus.CpusInNuma(id);
  for (const auto& n : topology.numa_nodes) map.emplace(n.id, CpuSet());
  return map;
}

namespace {

// Takes `size` bytes of `type` from the NUMA nodes of a block, in ascending order, as far as
// each has room; what is left goes to the first node (never below zero).
void TakeMemory(std::map<int, ZoneAccount*>& zones, const client::MemoryBlock& b) {
  uint64_t left = b.size;
  for (int64_t n : b.numa) {
    auto z = zones.find(static_cast<int>(n));
    if (z == zones.end()) continue;
    Amount& a = z->second->memory[b.type];
    uint64_t take = std::min(left, a.available);
    a.available -= take;
    left -= take;
    if (left == 0) return;
  }
}

}  // namespace

std::vector<ZoneAccount> AccountZones(const NodeTopology& topology,
                                      const config::KubeletConfig& config, const Observation& o) {
  std::vector<ZoneAccount> zones;
  std::vector<int> ids = topology.NumaIds();
  for (int id : topology.cpus.NumaNodes()) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  CpuSet reserved = config.ReservedSystemCpuSet().value_or(CpuSet());
  CpuSet held = o.usage.cpus;
  for (int id : ids) {
    ZoneAccount z;
    z.numa = id;
    CpuSet cpus = topology.cpus.CpusInNuma(id);
    CpuSet allocatable = o.allocatable && !o.allocatable->cpus.IsEmpty()
                             ? cpus.Intersection(o.allocatable->cpus)
                             : cpus.Difference(reserved);
    z.cpu.capacity = cpus.Size();
    z.cpu.allocatable = allocatable.Size();
    z.free_cpus = allocatable.Difference(held);
    z.cpu.available = z.free_cpus.Size();
    if (const NumaNode* n = topology.FindNuma(id)) {
      uint64_t huge = 0;
      for (const auto& [type, size] : n->hugepages) {
        z.memory[type].capacity = size;
        huge += size;
      }
      z.memory["memory"].capacity = n->memory > huge ? n->memory - huge : 0;
      for (size_t i = 0; i < n->distances.size() && i < topology.numa_nodes.size(); ++i) {
        z.distances.emplace_back(topology.numa_nodes[i].id, n->distances[i]);
      }
    }
    zones.push_back(std::move(z));
  }
  std::map<int, ZoneAccount*> by_id;
  for (auto& z : zones) by_id[z.numa] = &z;
  // Allocatable memory: the kubelet's blocks of each node, else the capacity.
  bool reported = o.allocatable && !o.allocatable->memory.empty();
  if (reported) {
    for (const auto& b : o.allocatable->memory) {
      if (b.numa.size() != 1 || by_id.count(static_cast<int>(b.numa[0])) == 0) continue;
      by_id[static_cast<int>(b.numa[0])]->memory[b.type].allocatable += b.size;
    }
  }
  for (auto& z : zones) {
    for (auto& [type, a] : z.memory) {
      if (!reported) a.allocatable = a.capacity;
      a.available = a.allocatable;
    }
  }
  for (const auto& p : o.pods) {
    for (const auto& b : p.usage_blocks) TakeMemory(by_id, b);
  }
  // Devices: the allocatable ones per node, minus those pods hold.
  if (o.allocatable) {
    for (const auto& d : o.allocatable->devices) {
      for (int64_t n : d.numa) {
        auto z = by_id.find(static_cast<int>(n));
        if (z == by_id.end()) continue;
        Amount& a = z->second->devices[d.resource];
        a.capacity += d.ids.size();
        a.allocatable += d.ids.size();
        a.available += d.ids.size();
        break;  // a device with several NUMA nodes is counted on its first
      }
    }
  }
  for (const auto& p : o.pods) {
    for (const auto& c : p.containers) {
      for (const auto& d : c.devices) {
        if (d.numa.empty()) continue;
        auto z = by_id.find(static_cast<int>(d.numa.front()));
        if (z == by_id.end()) continue;
        auto a = z->second->devices.find(d.resource);
        if (a == z->second->devices.end()) continue;
        a->second.available -= std::min<uint64_t>(a->second.available, d.ids.size());
      }
    }
  }
  return zones;
}

}  // namespace podtopo::agent
