#include "client/pod_view.h"

#include <algorithm>
#include <tuple>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "util/status_macros.h"

namespace podtopo::client {
namespace {

absl::StatusOr<CpuSet> ToCpuSet(const google::protobuf::RepeatedField<int64_t>& ids,
                                const std::string& where) {
  CpuSet set;
  for (int64_t id : ids) {
    if (id < 0 || id > kMaxCpuId) {
      return absl::InvalidArgumentError(
          fmt::format("{}: cpu_ids holds {}, not a CPU id (0..{})", where, id, kMaxCpuId));
    }
    set.Add(static_cast<int>(id));
  }
  return set;
}

std::vector<int64_t> NumaIds(const v1::TopologyInfo& topology) {
  std::vector<int64_t> ids;
  for (const auto& n : topology.nodes()) ids.push_back(n.id());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<MemoryBlock> ToBlocks(
    const google::protobuf::RepeatedPtrField<v1::ContainerMemory>& m) {
  std::vector<MemoryBlock> blocks;
  for (const auto& b : m) {
    blocks.push_back(MemoryBlock{b.memory_type(), b.size(), NumaIds(b.topology())});
  }
  return blocks;
}

std::vector<DeviceView> ToDevices(
    const google::protobuf::RepeatedPtrField<v1::ContainerDevices>& devices) {
  std::vector<DeviceView> out;
  for (const auto& d : devices) {
    DeviceView v{d.resource_name(), {}, NumaIds(d.topology())};
    for (const auto& id : d.device_ids()) v.ids.push_back(id);
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<ClaimView> ToClaims(
    const google::protobuf::RepeatedPtrField<v1::DynamicResource>& claims) {
  std::vector<ClaimView> out;
  for (const auto& c : claims) {
    ClaimView v{c.claim_name(), c.claim_namespace(), {}};
    for (const auto& r : c.claim_resources()) {
      if (!r.device_name().empty()) {
        v.devices.push_back(
            fmt::format("{}/{}/{}", r.driver_name(), r.pool_name(), r.device_name()));
      } else {
        for (const auto& cdi : r.cdi_devices()) v.devices.push_back(cdi.name());
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

// Orders NUMA keys: single nodes ascending, then multi-node groups, then "unknown" (empty).
bool NumaKeyLess(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  auto rank = [](const std::vector<int64_t>& k) { return k.empty() ? 2 : k.size() == 1 ? 0 : 1; };
  return std::make_tuple(rank(a), a) < std::make_tuple(rank(b), b);
}

// Splits CPUs and memory blocks by NUMA node. CPUs on no node of a non-empty map produce a
// warning; with an empty map every CPU is "unknown".
std::vector<NumaTotals> SplitByNuma(const CpuSet& cpus, const std::vector<MemoryBlock>& blocks,
                                    const NumaMap& numa_map, std::vector<std::string>* warnings) {
  std::vector<NumaTotals> out;
  auto at = [&out](const std::vector<int64_t>& key) -> NumaTotals& {
    for (auto& t : out) {
      if (t.numa == key) return t;
    }
    out.push_back(NumaTotals{key, {}, {}});
    return out.back();
  };
  CpuSet mapped;
  for (const auto& [id, numa_cpus] : numa_map) {
    CpuSet here = cpus.Intersection(numa_cpus);
    if (here.IsEmpty()) continue;
    at({id}).cpus.UnionWith(here);
    mapped.UnionWith(here);
  }
  CpuSet unmapped = cpus.Difference(mapped);
  if (!unmapped.IsEmpty()) {
    at({}).cpus = unmapped;
    if (!numa_map.empty() && warnings != nullptr) {
      warnings->push_back(
          fmt::format("CPUs {} are on no NUMA node of the node topology", unmapped.String()));
    }
  }
  for (const auto& b : blocks) at(b.numa).memory[b.type] += b.size;
  std::sort(out.begin(), out.end(),
            [](const NumaTotals& a, const NumaTotals& b) { return NumaKeyLess(a.numa, b.numa); });
  return out;
}

// Multiset union (max multiplicity) of several containers' block lists: identical blocks that
// several legacy-shared containers report are the same memory, counted once.
std::vector<MemoryBlock> MaxUnion(const std::vector<const std::vector<MemoryBlock>*>& lists) {
  std::vector<MemoryBlock> out;
  for (const auto* list : lists) {
    std::vector<bool> used(out.size(), false);
    for (const auto& b : *list) {
      bool matched = false;
      for (size_t i = 0; i < out.size(); ++i) {
        if (!used[i] && out[i] == b) {
          used[i] = true;
          matched = true;
          break;
        }
      }
      if (!matched) {
        out.push_back(b);
        used.push_back(true);
      }
    }
  }
  return out;
}

}  // namespace

const char* PoolName(Pool pool) {
  switch (pool) {
    case Pool::kExclusive:
      return "exclusive";
    case Pool::kPodShared:
      return "pod-shared";
    case Pool::kNodeShared:
      return "node-shared";
    case Pool::kLegacyShared:
      return "legacy-shared";
  }
  return "?";
}

absl::StatusOr<PodView> BuildPodView(const v1::PodResources& pod, const NumaMap& numa_map) {
  PodView view;
  view.namespace_ = pod.namespace_();
  view.name = pod.name();
  const std::string where = fmt::format("pod {}/{}", pod.namespace_(), pod.name());
  PODTOPO_ASSIGN_OR_RETURN(view.pod_cpus, ToCpuSet(pod.cpu_ids(), where));
  view.pod_memory = ToBlocks(pod.memory());
  view.pod_level = !view.pod_cpus.IsEmpty() || !view.pod_memory.empty();

  for (const auto& c : pod.containers()) {
    ContainerView cv;
    cv.name = c.name();
    PODTOPO_ASSIGN_OR_RETURN(
        cv.reported_cpus, ToCpuSet(c.cpu_ids(), fmt::format("{} container {}", where, c.name())));
    cv.memory = ToBlocks(c.memory());
    cv.devices = ToDevices(c.devices());
    cv.claims = ToClaims(c.dynamic_resources());
    cv.cpus = cv.reported_cpus;
    // The pool is about CPUs. A container can hold exclusive memory while its CPUs are shared
    // (requests = limits with a fractional CPU): its memory is reported, its cpu_ids are not.
    cv.pool = !cv.reported_cpus.IsEmpty()
                  ? Pool::kExclusive
                  : (view.pod_level ? Pool::kPodShared : Pool::kNodeShared);
    view.containers.push_back(std::move(cv));
  }

  // A server without pod-level fields: containers whose CPUs overlap another's share them.
  if (!view.pod_level) {
    for (size_t i = 0; i < view.containers.size(); ++i) {
      for (size_t j = 0; j < view.containers.size(); ++j) {
        if (i != j &&
            view.containers[i].reported_cpus.Intersects(view.containers[j].reported_cpus)) {
          view.containers[i].pool = Pool::kLegacyShared;
        }
      }
    }
  }

  CpuSet all_reported;
  CpuSet legacy_shared;
  for (const auto& c : view.containers) {
    all_reported.UnionWith(c.reported_cpus);
    if (c.pool == Pool::kExclusive) {
      if (view.exclusive_container_cpus.Intersects(c.reported_cpus)) {
        view.warnings.push_back(fmt::format(
            "container {} reports CPUs {} that another exclusive container also reports", c.name,
            view.exclusive_container_cpus.Intersection(c.reported_cpus).String()));
      }
      view.exclusive_container_cpus.UnionWith(c.reported_cpus);
    }
    if (c.pool == Pool::kLegacyShared) legacy_shared.UnionWith(c.reported_cpus);
    if (!view.pod_cpus.IsEmpty() && !c.reported_cpus.IsSubsetOf(view.pod_cpus)) {
      view.warnings.push_back(
          fmt::format("container {} reports CPUs {} outside the pod's CPUs {}", c.name,
                      c.reported_cpus.Difference(view.pod_cpus).String(), view.pod_cpus.String()));
    }
  }

  if (!view.pod_cpus.IsEmpty()) {
    view.shared_pool = view.pod_cpus.Difference(view.exclusive_container_cpus);
    view.usage_cpus = view.pod_cpus;
  } else {
    view.shared_pool = legacy_shared.Difference(view.exclusive_container_cpus);
    view.usage_cpus = all_reported;
  }
  for (auto& c : view.containers) {
    if (c.pool == Pool::kPodShared) c.cpus = view.shared_pool;
  }

  if (!view.pod_memory.empty()) {
    view.usage_blocks = view.pod_memory;
  } else {
    std::vector<const std::vector<MemoryBlock>*> legacy_lists;
    for (const auto& c : view.containers) {
      if (c.pool == Pool::kLegacyShared) {
        legacy_lists.push_back(&c.memory);
      } else {
        view.usage_blocks.insert(view.usage_blocks.end(), c.memory.begin(), c.memory.end());
      }
    }
    auto legacy = MaxUnion(legacy_lists);
    view.usage_blocks.insert(view.usage_blocks.end(), legacy.begin(), legacy.end());
  }
  for (const auto& b : view.usage_blocks) view.usage_memory[b.type] += b.size;
  view.numa = SplitByNuma(view.usage_cpus, view.usage_blocks, numa_map, &view.warnings);
  return view;
}

NodeUsage SumUsage(const std::vector<PodView>& pods, const NumaMap& numa_map) {
  NodeUsage usage;
  std::vector<MemoryBlock> blocks;
  for (const auto& p : pods) {
    if (usage.cpus.Intersects(p.usage_cpus)) {
      usage.warnings.push_back(fmt::format("pod {}/{} uses CPUs {} that another pod also uses",
                                           p.namespace_, p.name,
                                           usage.cpus.Intersection(p.usage_cpus).String()));
    }
    usage.cpus.UnionWith(p.usage_cpus);
    for (const auto& [type, bytes] : p.usage_memory) usage.memory[type] += bytes;
    blocks.insert(blocks.end(), p.usage_blocks.begin(), p.usage_blocks.end());
  }
  // CPUs on no NUMA node were already warned about per pod.
  usage.numa = SplitByNuma(usage.cpus, blocks, numa_map, nullptr);
  return usage;
}

absl::StatusOr<AllocatableView> BuildAllocatableView(const v1::AllocatableResourcesResponse& r,
                                                     const NumaMap& numa_map) {
  AllocatableView view;
  PODTOPO_ASSIGN_OR_RETURN(view.cpus, ToCpuSet(r.cpu_ids(), "allocatable resources"));
  view.memory = ToBlocks(r.memory());
  view.devices = ToDevices(r.devices());
  view.numa = SplitByNuma(view.cpus, view.memory, numa_map, &view.warnings);
  return view;
}

}  // namespace podtopo::client
