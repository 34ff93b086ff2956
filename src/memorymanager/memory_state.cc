#include "memorymanager/memory_state.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "resource/quantity.h"

namespace podtopo::memorymanager {

const std::vector<Block>* MemoryState::GetMemoryBlocks(const std::string& pod_uid,
                                                       const std::string& container_name) const {
  auto pod = assignments.find(pod_uid);
  if (pod == assignments.end()) return nullptr;
  auto ctr = pod->second.find(container_name);
  if (ctr == pod->second.end()) return nullptr;
  return &ctr->second;
}

void MemoryState::SetMemoryBlocks(const std::string& pod_uid, const std::string& container_name,
                                  std::vector<Block> blocks) {
  assignments[pod_uid][container_name] = std::move(blocks);
}

const std::vector<Block>* MemoryState::GetPodMemoryBlocks(const std::string& pod_uid) const {
  auto pod = pod_assignments.find(pod_uid);
  if (pod == pod_assignments.end()) return nullptr;
  return &pod->second;
}

void MemoryState::SetPodMemoryBlocks(const std::string& pod_uid, std::vector<Block> blocks) {
  pod_assignments[pod_uid] = std::move(blocks);
}

void MemoryState::Delete(const std::string& pod_uid, const std::string& container_name) {
  auto pod = assignments.find(pod_uid);
  if (pod == assignments.end()) return;
  pod->second.erase(container_name);
  if (pod->second.empty()) assignments.erase(pod);
}

void MemoryState::DeletePod(const std::string& pod_uid) {
  assignments.erase(pod_uid);
  pod_assignments.erase(pod_uid);
}

size_t MemoryState::ContainerEntryCount(const std::string& pod_uid) const {
  auto pod = assignments.find(pod_uid);
  return pod == assignments.end() ? 0 : pod->second.size();
}

bool IsHugePageResourceName(const std::string& name) {
  return name.rfind("hugepages-", 0) == 0;
}

bool IsMemoryResourceName(const std::string& name) {
  return name == "memory" || IsHugePageResourceName(name);
}

std::string HugePageResourceName(uint64_t page_size_kib) {
  // resource.NewQuantity(int64(PageSize)*1024, BinarySI) and HugePageResourceName.
  Quantity q = Quantity::FromInt(static_cast<int64_t>(page_size_kib * 1024),
                                 Quantity::Format::kBinarySI);
  return "hugepages-" + q.String();
}

absl::StatusOr<std::vector<MachineNumaNode>> MachineNumaNodesFromTopology(
    const NodeTopology& topology) {
  std::vector<MachineNumaNode> nodes;
  nodes.reserve(topology.numa_nodes.size());
  for (const NumaNode& numa : topology.numa_nodes) {
    MachineNumaNode node;
    node.id = numa.id;
    node.memory = numa.memory;
    for (const auto& [name, total] : numa.hugepages) {
      if (!IsHugePageResourceName(name)) {
        return absl::InvalidArgumentError(fmt::format(
            "{}: NUMA node {}: hugepages resource \"{}\" does not start with \"hugepages-\"",
            topology.source, numa.id, name));
      }
      absl::StatusOr<Quantity> size = Quantity::Parse(name.substr(10));
      if (!size.ok()) {
        return absl::InvalidArgumentError(
            fmt::format("{}: NUMA node {}: hugepages resource \"{}\": bad page size: {}",
                        topology.source, numa.id, name, std::string(size.status().message())));
      }
      int64_t bytes = size->Value();
      if (bytes <= 0 || bytes % 1024 != 0 || Quantity::FromInt(bytes).Cmp(*size) != 0) {
        return absl::InvalidArgumentError(fmt::format(
            "{}: NUMA node {}: hugepages resource \"{}\": page size must be a positive multiple "
            "of 1Ki",
            topology.source, numa.id, name));
      }
      uint64_t page = static_cast<uint64_t>(bytes);
      if (total % page != 0) {
        return absl::InvalidArgumentError(fmt::format(
            "{}: NUMA node {}: hugepages resource \"{}\": total {} bytes is not a whole number of "
            "{}-byte pages",
            topology.source, numa.id, name, total, page));
      }
      node.hugepages.push_back(HugePagesInfo{page / 1024, total / page});
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

namespace {

uint64_t ResourceSystemReserved(const SystemReservedMemory& reserved, int node,
                                const std::string& resource) {
  auto n = reserved.find(node);
  if (n == reserved.end()) return 0;
  auto r = n->second.find(resource);
  return r == n->second.end() ? 0 : r->second;
}

}  // namespace

NumaNodeMap DefaultMachineState(const std::vector<MachineNumaNode>& nodes,
                                const SystemReservedMemory& system_reserved) {
  NumaNodeMap state;
  std::map<int, uint64_t> node_hugepages;
  for (const MachineNumaNode& node : nodes) {
    NumaNodeState& ns = state[node.id];
    ns = NumaNodeState{};
    ns.cells = {node.id};
    for (const HugePagesInfo& hp : node.hugepages) {
      std::string name = HugePageResourceName(hp.page_size_kib);
      uint64_t reserved = ResourceSystemReserved(system_reserved, node.id, name);
      uint64_t total = hp.num_pages * hp.page_size_kib * 1024;  // wraps like Go
      uint64_t allocatable = total - reserved;                  // wraps like Go
      ns.memory_map[name] = MemoryTable{total, reserved, allocatable, 0, allocatable};
      node_hugepages[node.id] += total;
    }
    uint64_t reserved = ResourceSystemReserved(system_reserved, node.id, "memory");
    uint64_t allocatable = node.memory - reserved;
    if (auto it = node_hugepages.find(node.id); it != node_hugepages.end()) {
      allocatable -= it->second;
    }
    ns.memory_map["memory"] = MemoryTable{node.memory, reserved, allocatable, 0, allocatable};
  }
  return state;
}

namespace {

bool SameGroup(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

const MemoryTable* FindTable(const NumaNodeMap& ms, int node, const std::string& resource) {
  auto n = ms.find(node);
  if (n == ms.end()) return nullptr;
  auto t = n->second.memory_map.find(resource);
  return t == n->second.memory_map.end() ? nullptr : &t->second;
}

}  // namespace

bool AreMachineStatesEqual(const NumaNodeMap& a, const NumaNodeMap& b, std::string* why) {
  auto fail = [why](std::string msg) {
    if (why != nullptr) *why = std::move(msg);
    return false;
  };
  if (a.size() != b.size()) {
    return fail(fmt::format("node count {} != {}", a.size(), b.size()));
  }
  for (const auto& [id, n1] : a) {
    auto it = b.find(id);
    if (it == b.end()) return fail(fmt::format("node {} missing", id));
    const NumaNodeState& n2 = it->second;
    if (n1.number_of_assignments != n2.number_of_assignments) {
      return fail(fmt::format("node {}: numberOfAssignments {} != {}", id,
                              n1.number_of_assignments, n2.number_of_assignments));
    }
    if (!SameGroup(n1.cells, n2.cells)) {
      return fail(fmt::format("node {}: cells [{}] != [{}]", id, fmt::join(n1.cells, ","),
                              fmt::join(n2.cells, ",")));
    }
    if (n1.memory_map.size() != n2.memory_map.size()) {
      return fail(fmt::format("node {}: memoryMap sizes {} != {}", id, n1.memory_map.size(),
                              n2.memory_map.size()));
    }
    for (const auto& [resource, t1] : n1.memory_map) {
      auto t2it = n2.memory_map.find(resource);
      if (t2it == n2.memory_map.end()) {
        return fail(fmt::format("node {}: resource {} missing", id, resource));
      }
      const MemoryTable& t2 = t2it->second;
      if (t1.total != t2.total || t1.system_reserved != t2.system_reserved ||
          t1.allocatable != t2.allocatable) {
        return fail(fmt::format(
            "node {} {}: total/systemReserved/allocatable {}/{}/{} != {}/{}/{}", id, resource,
            t1.total, t1.system_reserved, t1.allocatable, t2.total, t2.system_reserved,
            t2.allocatable));
      }
      uint64_t free1 = 0, free2 = 0, reserved1 = 0, reserved2 = 0;
      for (int cell : n1.cells) {
        if (const MemoryTable* t = FindTable(a, cell, resource)) {
          free1 += t->free;
          reserved1 += t->reserved;
        }
        if (const MemoryTable* t = FindTable(b, cell, resource)) {
          free2 += t->free;
          reserved2 += t->reserved;
        }
      }
      if (free1 != free2) {
        return fail(fmt::format("node {} {}: group free {} != {}", id, resource, free1, free2));
      }
      if (reserved1 != reserved2) {
        return fail(fmt::format("node {} {}: group reserved {} != {}", id, resource, reserved1,
                                reserved2));
      }
    }
  }
  return true;
}

namespace {

std::vector<Block> Sorted(std::vector<Block> blocks) {
  std::sort(blocks.begin(), blocks.end(), [](const Block& x, const Block& y) {
    return std::tie(x.type, x.size, x.numa_affinity) < std::tie(y.type, y.size, y.numa_affinity);
  });
  return blocks;
}

}  // namespace

bool SameBlocks(const std::vector<Block>& a, const std::vector<Block>& b) {
  return a.size() == b.size() && Sorted(a) == Sorted(b);
}

bool SameAssignments(const ContainerMemoryAssignments& a, const ContainerMemoryAssignments& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [pod, containers] : a) {
    auto it = b.find(pod);
    if (it == b.end() || it->second.size() != containers.size()) return false;
    for (const auto& [name, blocks] : containers) {
      auto c = it->second.find(name);
      if (c == it->second.end() || !SameBlocks(blocks, c->second)) return false;
    }
  }
  return true;
}

std::string BlockString(const Block& block) {
  return fmt::format("{{{} {} @ [{}]}}", block.type, block.size,
                     fmt::join(block.numa_affinity, ","));
}

std::string BlocksString(const std::vector<Block>& blocks) {
  std::vector<std::string> parts;
  for (const Block& b : blocks) parts.push_back(BlockString(b));
  return fmt::format("[{}]", fmt::join(parts, " "));
}

std::string MachineStateString(const NumaNodeMap& state) {
  std::string out;
  for (const auto& [id, node] : state) {
    out += fmt::format("node {}: assignments={} cells=[{}]", id, node.number_of_assignments,
                       fmt::join(node.cells, ","));
    for (const auto& [resource, t] : node.memory_map) {
      out += fmt::format(" {}{{total={} sysres={} alloc={} reserved={} free={}}}", resource,
                         t.total, t.system_reserved, t.allocatable, t.reserved, t.free);
    }
    out += "\n";
  }
  return out;
}

}  // namespace podtopo::memorymanager
