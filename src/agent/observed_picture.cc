#include "agent/observed_picture.h"

#include "fmt/format.h"

namespace podtopo::agent {
namespace {

std::vector<MemoryBlockView> Blocks(const std::vector<client::MemoryBlock>& blocks) {
  std::vector<MemoryBlockView> out;
  for (const auto& b : blocks) {
    MemoryBlockView v;
    v.type = b.type;
    v.size = b.size;
    for (int64_t n : b.numa) v.numa_nodes.push_back(static_cast<int>(n));
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

ObservedNode ObservedNodeOf(const Observation& o, const std::vector<ZoneAccount>& zones,
                            const NodeTopology& topology) {
  ObservedNode node;
  CpuSet all = topology.cpus.AllCpus();
  CpuSet allocatable = o.allocatable && !o.allocatable->cpus.IsEmpty() ? o.allocatable->cpus : all;
  node.reserved = all.Difference(allocatable);
  node.default_set = allocatable.Difference(o.usage.cpus);
  for (const auto& z : zones) {
    for (const auto& [type, a] : z.memory) {
      node.memory[z.numa][type] = {a.allocatable, a.allocatable - a.available, a.available};
    }
  }
  int drawn = 0;
  for (const auto& p : o.pods) {
    if (p.usage_cpus.IsEmpty() && p.usage_memory.empty()) continue;
    ++drawn;
    PodAllocation a;
    a.namespace_name = p.namespace_;
    a.name = p.name;
    a.admitted = true;
    a.qos = QosClass::kGuaranteed;
    a.cpus = p.pod_level ? p.pod_cpus
                         : (p.shared_pool.IsEmpty() ? CpuSet() : p.usage_cpus);
    a.memory = Blocks(p.pod_memory);
    for (const auto& c : p.containers) {
      ContainerAllocation ca;
      ca.name = c.name;
      ca.kind_known = false;  // PodResources does not say which containers are sidecars
      ca.cpus = c.cpus;
      switch (c.pool) {
        case client::Pool::kExclusive:
          ca.assignment = a.cpus.IsEmpty() ? "node_exclusive" : "pod_exclusive";
          break;
        case client::Pool::kPodShared:
        case client::Pool::kLegacyShared:
          ca.assignment = "pod_shared";
          break;
        case client::Pool::kNodeShared:
          ca.assignment = "node_shared";
          ca.cpus = node.default_set;
          break;
      }
      ca.memory = Blocks(c.memory);
      for (const auto& d : c.devices) {
        auto& ids = ca.devices[d.resource];
        ids.insert(ids.end(), d.ids.begin(), d.ids.end());
      }
      a.containers.push_back(std::move(ca));
    }
    node.pods.push_back(std::move(a));
  }
  node.subheading = fmt::format(
      "observed through the PodResources API: {} pod{} holding CPUs or memory, {} reported",
      drawn, drawn == 1 ? "" : "s", o.pods.size());
  return node;
}

}  // namespace podtopo::agent
