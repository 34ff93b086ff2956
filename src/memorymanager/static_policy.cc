#include "memorymanager/static_policy.h"

#include <algorithm>
#include <bit>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kubelet/admission_error.h"
#include "fmt/format.h"
#include "memorymanager/reserved_memory.h"
#include "util/popcount.h"

namespace podtopo::memorymanager {
namespace {

constexpr char kMemory[] = "memory";

absl::Status MemoryError(const std::string& message) {
  return absl::ResourceExhaustedError("[memorymanager] " + message);
}

// The nodes of `mask`, ascending.
template <typename F>
void ForEachNode(uint64_t mask, F&& f) {
  for (uint64_t m = mask; m != 0; m &= m - 1) f(std::countr_zero(m));
}

// Whether `cells`, as a set, is exactly the nodes of `mask` (the kubelet's areGroupsEqual of
// the cells and the mask's bits: the same ids, as many of them).
bool GroupIs(const std::vector<int>& cells, uint64_t mask) {
  if (static_cast<int>(cells.size()) != PopCount64(mask)) return false;
  uint64_t seen = 0;
  for (int c : cells) {
    if (c < 0 || c > 63) return false;
    const uint64_t bit = uint64_t{1} << c;
    if ((mask & bit) == 0 || (seen & bit) != 0) return false;
    seen |= bit;
  }
  return true;
}

// Lookups that treat a node or memory type missing from the machine state as zero memory
// (where Go would dereference a nil pointer).
const MemoryTable* Table(const NumaNodeMap& ms, int node, const std::string& type) {
  auto n = ms.find(node);
  if (n == ms.end()) return nullptr;
  auto t = n->second.memory_map.find(type);
  return t == n->second.memory_map.end() ? nullptr : &t->second;
}

uint64_t FreeOf(const NumaNodeMap& ms, int node, const std::string& type) {
  const MemoryTable* t = Table(ms, node, type);
  return t == nullptr ? 0 : t->free;
}

const NumaNodeState* Node(const NumaNodeMap& ms, int node) {
  auto n = ms.find(node);
  return n == ms.end() ? nullptr : &n->second;
}

bool IsAffinitySatisfyRequest(const NumaNodeMap& ms, BitMask mask,
                              const RequestedResources& req) {
  for (const auto& [type, size] : req) {
    uint64_t free = 0;
    // `t`: clang 14 (CI's compiler) cannot capture a structured binding itself.
    ForEachNode(mask.value(), [&, &t = type](int node) { free += FreeOf(ms, node, t); });
    if (free < size) return false;
  }
  return true;
}

bool IsAffinityViolatingNumaAllocations(const NumaNodeMap& ms, BitMask mask) {
  const uint64_t m = mask.value();
  if (PopCount64(m) == 1) return false;  // a single node never violates
  for (uint64_t r = m; r != 0; r &= r - 1) {
    const NumaNodeState* ns = Node(ms, std::countr_zero(r));
    if (ns == nullptr || ns->number_of_assignments == 0) continue;
    if (ns->cells.size() == 1) return true;
    if (!GroupIs(ns->cells, m)) return true;
  }
  return false;
}

bool IsRegularInitContainer(const Pod& pod, const Container& container) {
  for (const Container& c : pod.init_containers) {
    if (c.name == container.name) return !c.IsRestartableInit();
  }
  return false;
}

// regenerateHints: one preferred hint per type from already-assigned blocks; nullopt when the
// blocks do not match `req` exactly.
std::optional<HintSetMap> RegenerateHints(const std::vector<Block>& blocks,
                                          const RequestedResources& req) {
  std::map<std::string, std::vector<TopologyHint>> hints;
  for (const auto& [type, size] : req) hints[type];
  if (blocks.size() != req.size()) return std::nullopt;
  for (const Block& b : blocks) {
    auto it = req.find(b.type);
    if (it == req.end()) return std::nullopt;
    if (b.size != it->second) return std::nullopt;
    absl::StatusOr<BitMask> mask = topologymanager::NewBitMask(b.numa_affinity);
    if (!mask.ok()) return std::nullopt;
    hints[b.type].push_back(TopologyHint{*mask, true});
  }
  HintSetMap out;
  for (auto& [type, list] : hints) out[type] = std::move(list);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Free functions.

absl::StatusOr<RequestedResources> GetContainerRequestedResources(const Pod& pod,
                                                                  const Container& container,
                                                                  bool pod_level_resource_managers) {
  RequestedResources req;
  // For pod-level resource management only "equivalent Guaranteed" containers get exclusive
  // memory.
  if (pod_level_resource_managers && pod.HasPodLevelResources() &&
      !IsContainerEquivalentQosGuaranteed(container)) {
    return req;
  }
  for (const auto& [name, quantity] : container.resources.requests) {
    if (!IsMemoryResourceName(name)) continue;
    std::optional<int64_t> v = QuantityAsInt64(quantity);
    if (!v.has_value()) {
      return absl::InvalidArgumentError("[memorymanager] failed to represent quantity as int64");
    }
    req[name] = static_cast<uint64_t>(*v);
  }
  return req;
}

absl::StatusOr<RequestedResources> GetPodRequestedResources(const Pod& pod,
                                                            bool pod_level_resource_managers) {
  if (pod_level_resource_managers && pod.HasPodLevelResources()) {
    RequestedResources req;
    for (const auto& [name, quantity] : pod.resources->requests) {
      if (!IsMemoryResourceName(name)) continue;
      std::optional<int64_t> v = QuantityAsInt64(quantity);
      if (!v.has_value()) {
        return absl::InvalidArgumentError(
            "[memorymanager] failed to represent quantity as int64");
      }
      if (*v <= 0) continue;
      req[name] = static_cast<uint64_t>(*v);
    }
    return req;
  }

  RequestedResources by_init;         // max over regular init containers (with sidecars so far)
  RequestedResources by_restartable;  // sum of restartable init containers
  for (const Container& c : pod.init_containers) {
    absl::StatusOr<RequestedResources> r =
        GetContainerRequestedResources(pod, c, pod_level_resource_managers);
    if (!r.ok()) return r.status();
    for (const auto& [name, qty] : *r) {
      by_init.try_emplace(name, 0);
      if (c.IsRestartableInit()) {
        by_restartable[name] += qty;
      } else if (by_restartable[name] + qty > by_init[name]) {
        by_init[name] = by_restartable[name] + qty;
      }
    }
  }
  RequestedResources by_app;
  for (const Container& c : pod.containers) {
    absl::StatusOr<RequestedResources> r =
        GetContainerRequestedResources(pod, c, pod_level_resource_managers);
    if (!r.ok()) return r.status();
    for (const auto& [name, qty] : *r) by_app[name] += qty;
  }
  // Only types some app container requests (the kubelet's behaviour; k/k #140816 is open).
  RequestedResources req;
  for (const auto& [name, app] : by_app) {
    uint64_t long_running = app + by_restartable[name];
    req[name] = std::max(long_running, by_init[name]);
  }
  return req;
}

void UpdateMachineState(NumaNodeMap& ms, const std::vector<int>& numa_affinity,
                        const std::string& type, uint64_t size) {
  for (int node : numa_affinity) {
    auto n = ms.find(node);
    if (n == ms.end()) continue;
    n->second.number_of_assignments++;
    n->second.cells = numa_affinity;
    if (size == 0) continue;
    auto t = n->second.memory_map.find(type);
    if (t == n->second.memory_map.end()) continue;
    MemoryTable& table = t->second;
    if (table.free == 0) continue;
    if (table.free >= size) {
      table.reserved += size;
      table.free -= size;
      size = 0;
      continue;
    }
    size -= table.free;
    table.reserved += table.free;
    table.free = 0;
  }
}

void ReleaseMemory(NumaNodeMap& ms, const std::vector<Block>& blocks) {
  for (const Block& b : blocks) {
    uint64_t released = b.size;
    for (int node : b.numa_affinity) {
      auto n = ms.find(node);
      if (n == ms.end()) continue;
      n->second.number_of_assignments--;
      if (n->second.number_of_assignments == 0) n->second.cells = {node};
      if (released == 0) continue;
      auto t = n->second.memory_map.find(b.type);
      if (t == n->second.memory_map.end()) continue;
      MemoryTable& table = t->second;
      if (table.reserved == 0) continue;
      if (table.reserved < released) {
        released -= table.reserved;
        table.free += table.reserved;
        table.reserved = 0;
        continue;
      }
      table.free += released;
      table.reserved -= released;
      released = 0;
    }
  }
}

TopologyHint FindBestHint(const std::vector<TopologyHint>& hints) {
  TopologyHint best;
  for (const TopologyHint& hint : hints) {
    if (!best.affinity.has_value()) {
      best = hint;
      continue;
    }
    if (hint.preferred && !best.preferred) {
      best = hint;
      continue;
    }
    if (hint.preferred == best.preferred && hint.affinity.has_value() &&
        hint.affinity->IsNarrowerThan(*best.affinity)) {
      best = hint;
    }
  }
  return best;
}

std::vector<Block> GetMemory(const MemoryState& state, const std::string& pod_uid,
                             const std::string& container_name) {
  const std::vector<Block>* blocks = state.GetMemoryBlocks(pod_uid, container_name);
  return blocks == nullptr ? std::vector<Block>{} : *blocks;
}

std::vector<Block> GetPodMemory(const MemoryState& state, const std::string& pod_uid) {
  const std::vector<Block>* blocks = state.GetPodMemoryBlocks(pod_uid);
  return blocks == nullptr ? std::vector<Block>{} : *blocks;
}

std::vector<int> GetMemoryNumaNodes(const MemoryState& state, const std::string& pod_uid,
                                    const std::string& container_name) {
  std::set<int> nodes;
  if (const std::vector<Block>* blocks = state.GetMemoryBlocks(pod_uid, container_name)) {
    for (const Block& b : *blocks) nodes.insert(b.numa_affinity.begin(), b.numa_affinity.end());
  }
  return std::vector<int>(nodes.begin(), nodes.end());
}

// ---------------------------------------------------------------------------------------------
// StaticPolicy.

StaticPolicy::StaticPolicy(std::vector<MachineNumaNode> machine,
                           SystemReservedMemory system_reserved, const AffinityStore* affinity,
                           PolicyGates gates)
    : machine_(std::move(machine)),
      system_reserved_(std::move(system_reserved)),
      affinity_(affinity),
      gates_(gates) {}

absl::StatusOr<StaticPolicy> StaticPolicy::New(std::vector<MachineNumaNode> machine,
                                               SystemReservedMemory system_reserved,
                                               const AffinityStore* affinity,
                                               PolicyGates gates) {
  uint64_t total = 0;
  for (const auto& [node, types] : system_reserved) {
    if (auto it = types.find(kMemory); it != types.end()) total += it->second;
  }
  if (total == 0) {
    return absl::InvalidArgumentError(
        "[memorymanager] you should specify the system reserved memory");
  }
  if (affinity == nullptr) {
    return absl::InvalidArgumentError("[memorymanager] no topology affinity store given");
  }
  return StaticPolicy(std::move(machine), std::move(system_reserved), affinity, gates);
}

NumaNodeMap StaticPolicy::DefaultMachineState() const {
  return memorymanager::DefaultMachineState(machine_, system_reserved_);
}

bool StaticPolicy::PodLevelManaged(const Pod& pod) const {
  return gates_.pod_level_resource_managers && gates_.pod_level_resources &&
         pod.HasPodLevelResources();
}

bool StaticPolicy::PodLevelSkipped(const Pod& pod) const {
  return (!gates_.pod_level_resource_managers || !gates_.pod_level_resources) &&
         pod.HasPodLevelResources();
}

QosClass StaticPolicy::PodQos(const Pod& pod) const {
  if (const AdmissionMemo* memo = MemoFor(pod)) return memo->qos;
  return GetPodQos(pod, gates_.Qos());
}

void StaticPolicy::BeginPod(const Pod& pod, QosClass qos) {
  admission_.reset();
  AdmissionMemo memo;
  memo.pod = &pod;
  memo.qos = qos;
  memo.containers.reserve(pod.init_containers.size() + pod.containers.size());
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const Container& c : *list) {
      memo.containers.emplace_back(&c, ContainerRequestedResources(pod, c));
    }
  }
  memo.pod_request = PodRequestedResources(pod);
  admission_ = std::move(memo);
  admission_->pod_scope = CheckPodScopeResources(pod);  // with the requests above
}

absl::StatusOr<RequestedResources> StaticPolicy::ContainerRequestedResources(
    const Pod& pod, const Container& c) const {
  absl::StatusOr<RequestedResources> scratch;
  return ContainerRequest(pod, c, scratch);
}

const absl::StatusOr<RequestedResources>& StaticPolicy::PodRequest(
    const Pod& pod, absl::StatusOr<RequestedResources>& scratch) const {
  if (const AdmissionMemo* memo = MemoFor(pod)) return memo->pod_request;
  scratch = GetPodRequestedResources(pod, gates_.pod_level_resource_managers);
  return scratch;
}

const absl::StatusOr<RequestedResources>& StaticPolicy::ContainerRequest(
    const Pod& pod, const Container& c, absl::StatusOr<RequestedResources>& scratch) const {
  if (const AdmissionMemo* memo = MemoFor(pod)) {
    for (const auto& [container, req] : memo->containers) {
      if (container == &c) return req;
    }
  }
  scratch = GetContainerRequestedResources(pod, c, gates_.pod_level_resource_managers);
  return scratch;
}

absl::StatusOr<RequestedResources> StaticPolicy::PodRequestedResources(const Pod& pod) const {
  absl::StatusOr<RequestedResources> scratch;
  return PodRequest(pod, scratch);
}

uint64_t StaticPolicy::PodReusableMemory(const Pod& pod, BitMask mask,
                                         const std::string& type) const {
  auto p = init_containers_reusable_memory_.find(pod.uid);
  if (p == init_containers_reusable_memory_.end()) return 0;
  auto m = p->second.find(mask.String());
  if (m == p->second.end()) return 0;
  auto t = m->second.find(type);
  return t == m->second.end() ? 0 : t->second;
}

StaticPolicy::NodeAmounts StaticPolicy::AmountsOf(const NumaNodeMap& ms,
                                                  const RequestedResources& req) {
  NodeAmounts out;
  out.allocatable.resize(req.size());
  out.free.resize(req.size());
  size_t i = 0;
  for (const auto& [type, size] : req) {
    for (const auto& [id, state] : ms) {
      if (id < 0 || id > 63) continue;  // in no mask
      auto t = state.memory_map.find(type);
      if (t == state.memory_map.end()) continue;
      out.allocatable[i][static_cast<size_t>(id)] = t->second.allocatable;
      out.free[i][static_cast<size_t>(id)] = t->second.free;
    }
    ++i;
  }
  return out;
}

bool StaticPolicy::MaskQualifies(const NumaNodeMap& ms, const Pod& pod,
                                 const RequestedResources& req, const NodeAmounts& amounts,
                                 BitMask mask, bool* covers_allocatable) const {
  const uint64_t m = mask.value();
  const bool single = PopCount64(m) == 1;
  if (covers_allocatable != nullptr) *covers_allocatable = false;
  // The sum of one type's amounts over the mask's nodes (uint64 wrap as in Go).
  auto sum = [m](const std::array<uint64_t, 64>& amount) {
    uint64_t total = 0;
    ForEachNode(m, [&](int node) { total += amount[static_cast<size_t>(node)]; });
    return total;
  };

  // Enough allocatable memory of every type in the mask.
  size_t i = 0;
  for (const auto& [type, size] : req) {
    if (sum(amounts.allocatable[i++]) < size) return false;
  }
  // (The smallest mask that could ever satisfy the request is counted here.)
  if (covers_allocatable != nullptr) *covers_allocatable = true;

  // A node grouped with others cannot serve a single-NUMA allocation.
  if (single) {
    const NumaNodeState* ns = Node(ms, std::countr_zero(m));
    if (ns != nullptr && ns->cells.size() > 1) return false;
  }
  // A used node can join a multi-NUMA mask only with its exact group.
  if (!single) {
    for (uint64_t r = m; r != 0; r &= r - 1) {
      const NumaNodeState* ns = Node(ms, std::countr_zero(r));
      if (ns == nullptr || ns->number_of_assignments <= 0) continue;
      if (ns->cells.size() == 1) return false;
      if (!GroupIs(ns->cells, m)) return false;
    }
  }
  // Enough free memory (plus this pod's reusable init-container memory).
  const bool reusable = init_containers_reusable_memory_.contains(pod.uid);
  i = 0;
  for (const auto& [type, size] : req) {
    uint64_t free = sum(amounts.free[i++]);
    if (free + (reusable ? PodReusableMemory(pod, mask, type) : 0) < size) return false;
  }
  return true;
}

HintMap StaticPolicy::CalculateHintsExhaustive(const NumaNodeMap& ms, const Pod& pod,
                                               const RequestedResources& req) const {
  std::vector<int> nodes;
  for (const auto& [id, state] : ms) nodes.push_back(id);  // sorted: std::map
  int min_affinity_size = static_cast<int>(nodes.size());

  HintMap hints;
  const NodeAmounts amounts = AmountsOf(ms, req);
  absl::Status iterated = topologymanager::IterateBitMasks(nodes, [&](BitMask mask) {
    bool covers = false;
    bool qualifies = MaskQualifies(ms, pod, req, amounts, mask, &covers);
    if (covers) min_affinity_size = std::min(min_affinity_size, mask.Count());
    if (!qualifies) return;
    for (const auto& [type, size] : req) hints[type].push_back(TopologyHint{mask, false});
  });
  (void)iterated;  // node ids come from the machine state; out-of-range ids just give no masks

  for (auto& [type, list] : hints) {
    for (TopologyHint& hint : list) hint.preferred = hint.affinity->Count() == min_affinity_size;
  }
  return hints;
}

// calculateHints by structure. The qualifying masks are (MaskQualifies):
//   - masks of >= 2 nodes none of which holds memory yet, with enough allocatable and free
//     memory of every type: an upward-closed family;
//   - single nodes, the multi-NUMA groups of used nodes, and masks with reusable
//     init-container memory: tested one by one (extra masks).
// A used node can only be part of its exact group, so no other mask qualifies.
HintSetMap StaticPolicy::CalculateHints(const NumaNodeMap& ms, const Pod& pod,
                                        const RequestedResources& req) const {
  using topologymanager::CoverRule;
  using topologymanager::HintSet;
  using topologymanager::MaskFamily;
  if (exhaustive_hints_) {
    HintSetMap out;
    for (auto& [type, list] : CalculateHintsExhaustive(ms, pod, req)) out[type] = std::move(list);
    return out;
  }
  uint64_t nodes = 0, used = 0;
  for (const auto& [id, state] : ms) {
    if (id < 0 || id > 63) return {};  // the kubelet's walk yields no mask
    nodes |= uint64_t{1} << id;
    if (state.number_of_assignments > 0) used |= uint64_t{1} << id;
  }
  // The rules: enough allocatable memory of every type (which also gives the preferred
  // width), then enough free memory of every type.
  MaskFamily family{nodes, 0, 1, {}};
  family.rules.reserve(2 * req.size());
  const NodeAmounts amounts = AmountsOf(ms, req);
  // One rule per type: the nodes' amounts of it cover the request.
  auto add_rules = [&](const std::vector<std::array<uint64_t, 64>>& amount) {
    size_t i = 0;
    for (const auto& [type, size] : req) {
      CoverRule& r = family.rules.emplace_back();
      r.need = size;
      r.weight = amount[i++];
    }
  };
  add_rules(amounts.allocatable);
  topologymanager::PreferenceRule preference;
  preference.count = family.MinCount().value_or(static_cast<int>(ms.size()));
  add_rules(amounts.free);
  family.domain = nodes & ~used;
  family.min_count = 2;

  std::vector<uint64_t> candidates;
  candidates.reserve(2 * ms.size());
  for (const auto& [id, state] : ms) {
    candidates.push_back(uint64_t{1} << id);
    if (state.number_of_assignments > 0 && state.cells.size() > 1) {
      absl::StatusOr<BitMask> group = topologymanager::NewBitMask(state.cells);
      if (group.ok()) candidates.push_back(group->value());
    }
  }
  if (auto p = init_containers_reusable_memory_.find(pod.uid);
      p != init_containers_reusable_memory_.end()) {
    for (const auto& [key, types] : p->second) {
      // Keys are BitMask::String(): the mask in binary.
      uint64_t m = 0;
      for (char ch : key) m = (m << 1) | (ch == '1' ? 1 : 0);
      candidates.push_back(m);
    }
  }
  std::vector<uint64_t> extra;
  extra.reserve(candidates.size());
  for (uint64_t m : candidates) {
    if ((m & ~nodes) == 0 && m != 0 &&
        MaskQualifies(ms, pod, req, amounts, BitMask::FromUint64(m), nullptr)) {
      extra.push_back(m);
    }
  }
  HintSet set = HintSet::FromMasks(nodes, std::move(family), std::move(extra), preference);
  if (set.empty()) return {};  // no type gets a list: the kubelet's empty map
  HintSetMap out;
  for (auto it = req.begin(); it != req.end(); ++it) {
    if (std::next(it) == req.end()) {
      out.emplace_hint(out.end(), it->first, std::move(set));
    } else {
      out.emplace_hint(out.end(), it->first, set);
    }
  }
  return out;
}

absl::Status StaticPolicy::ValidatePodScopeResources(const Pod& pod) const {
  if (const AdmissionMemo* memo = MemoFor(pod)) return memo->pod_scope;
  return CheckPodScopeResources(pod);
}

absl::Status StaticPolicy::CheckPodScopeResources(const Pod& pod) const {
  absl::StatusOr<RequestedResources> total_or_scratch;
  const absl::StatusOr<RequestedResources>& total_or = PodRequest(pod, total_or_scratch);
  if (!total_or.ok()) return total_or.status();
  const RequestedResources& total = *total_or;

  bool has_shared_long_running = false;
  RequestedResources long_running_exclusive;  // sidecars and app containers with exclusive memory
  for (const Container& c : pod.init_containers) {
    absl::StatusOr<RequestedResources> reqs_scratch;
    const absl::StatusOr<RequestedResources>& reqs = ContainerRequest(pod, c, reqs_scratch);
    if (!reqs.ok()) return reqs.status();
    if (!c.IsRestartableInit()) {
      if (!reqs->empty()) {
        // The largest standard init container must fit in the budget minus sidecars so far.
        for (const auto& [type, budget] : total) {
          uint64_t pool = budget - long_running_exclusive[type];  // uint64 wrap as in Go
          uint64_t want = reqs->count(type) ? reqs->at(type) : 0;
          if (want > pool) {
            return absl::FailedPreconditionError(fmt::format(
                "pod rejected, largest exclusive init container requests {} of {}, but only {} "
                "available",
                want, type, pool));
          }
        }
      } else {
        for (const auto& [type, budget] : total) {
          if (long_running_exclusive[type] >= budget) {
            return absl::FailedPreconditionError(fmt::format(
                "pod rejected, pod has shared init containers but no {} available for them",
                type));
          }
        }
      }
      continue;
    }
    if (reqs->empty()) {
      has_shared_long_running = true;
      continue;
    }
    for (const auto& [type, size] : *reqs) long_running_exclusive[type] += size;
  }
  for (const Container& c : pod.containers) {
    absl::StatusOr<RequestedResources> reqs_scratch;
    const absl::StatusOr<RequestedResources>& reqs = ContainerRequest(pod, c, reqs_scratch);
    if (!reqs.ok()) return reqs.status();
    if (reqs->empty()) {
      has_shared_long_running = true;
      continue;
    }
    for (const auto& [type, size] : *reqs) long_running_exclusive[type] += size;
  }
  if (has_shared_long_running) {
    for (const auto& [type, budget] : total) {
      if (long_running_exclusive[type] >= budget) {
        return absl::FailedPreconditionError(fmt::format(
            "pod rejected, sum of exclusive container {} requests equals pod budget, leaving no "
            "memory for shared containers",
            type));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TopologyHint> StaticPolicy::BestHint(const NumaNodeMap& ms, const Pod& pod,
                                                    const RequestedResources& req,
                                                    TopologyHint hint) const {
  TopologyHint best = hint;
  // A nil affinity from the Topology Manager: compute the default the same way it would.
  // findBestHint over the "memory" hints (HintSet::Best: no 2^N walk).
  if (!hint.affinity.has_value()) {
    HintSetMap hints = CalculateHints(ms, pod, req);
    auto memory = hints.find(kMemory);
    std::optional<TopologyHint> def;
    if (memory != hints.end()) def = memory->second.Best(0);
    // Without a "memory" list the kubelet would go on with a nil mask and panic; podtopo
    // reports that no default affinity exists.
    if (!def.has_value()) {
      return MemoryError(
          "failed to get the default NUMA affinity, no NUMA nodes with enough memory is "
          "available");
    }
    if (!def->preferred && hint.preferred) {
      return MemoryError("failed to find the default preferred hint");
    }
    best = *def;
  }

  // The merged hint may be narrower than what the request needs (restricted policy ANDs
  // masks); extend it to the best calculated hint that contains it.
  if (!IsAffinitySatisfyRequest(ms, *best.affinity, req)) {
    HintSetMap hints = CalculateHints(ms, pod, req);
    std::optional<TopologyHint> extended;
    if (auto memory = hints.find(kMemory); memory != hints.end()) {
      extended = memory->second.Best(best.affinity->value());
    }
    if (!extended.has_value()) {
      return MemoryError("failed to find NUMA nodes to extend the current topology hint");
    }
    if (!extended->preferred && best.preferred) {
      return MemoryError("failed to find the extended preferred hint");
    }
    best = *extended;
  }

  // A NUMA node cannot take both single- and cross-NUMA allocations.
  if (IsAffinityViolatingNumaAllocations(ms, *best.affinity)) {
    return MemoryError("preferred hint violates NUMA node allocation");
  }
  return best;
}

void StaticPolicy::UpdatePodReusableMemory(const Pod& pod, const Container& container,
                                           const std::vector<Block>& blocks) {
  // Entries of other pods are dropped.
  for (auto it = init_containers_reusable_memory_.begin();
       it != init_containers_reusable_memory_.end();) {
    it = it->first != pod.uid ? init_containers_reusable_memory_.erase(it) : std::next(it);
  }

  if (IsRegularInitContainer(pod, container)) {
    auto& pod_memory = init_containers_reusable_memory_[pod.uid];
    for (const Block& b : blocks) {
      absl::StatusOr<BitMask> mask = topologymanager::NewBitMask(b.numa_affinity);
      if (!mask.ok()) continue;
      uint64_t& value = pod_memory[mask->String()][b.type];
      if (b.size > value) value = b.size;
    }
    return;
  }

  // App and restartable init containers use up the reusable memory.
  for (const Block& b : blocks) {
    absl::StatusOr<BitMask> mask = topologymanager::NewBitMask(b.numa_affinity);
    if (!mask.ok()) continue;
    uint64_t reusable = PodReusableMemory(pod, *mask, b.type);
    if (reusable == 0) continue;
    uint64_t& value = init_containers_reusable_memory_[pod.uid][mask->String()][b.type];
    value = b.size >= reusable ? 0 : reusable - b.size;
  }
}

void StaticPolicy::UpdateInitContainersMemoryBlocks(MemoryState& state, const Pod& pod,
                                                    const Container& container,
                                                    const std::vector<Block>& blocks) const {
  for (const Block& block : blocks) {
    uint64_t size = block.size;
    absl::StatusOr<BitMask> block_mask = topologymanager::NewBitMask(block.numa_affinity);
    for (const Container& init : pod.init_containers) {
      if (init.name == container.name) break;
      if (size == 0) break;
      if (init.IsRestartableInit()) continue;  // sidecar memory is never reused
      const std::vector<Block>* existing = state.GetMemoryBlocks(pod.uid, init.name);
      if (existing == nullptr || existing->empty()) continue;
      std::vector<Block> init_blocks = *existing;
      for (Block& ib : init_blocks) {
        if (ib.size == 0) continue;
        if (ib.type != block.type) continue;
        absl::StatusOr<BitMask> init_mask = topologymanager::NewBitMask(ib.numa_affinity);
        if (!init_mask.ok() || !block_mask.ok() || !init_mask->IsEqual(*block_mask)) continue;
        if (ib.size > size) {
          ib.size -= size;
          size = 0;
        } else {
          size -= ib.size;
          ib.size = 0;
        }
      }
      state.SetMemoryBlocks(pod.uid, init.name, std::move(init_blocks));
    }
  }
}

absl::Status StaticPolicy::Allocate(MemoryState& state, const Pod& pod,
                                    const Container& container) {
  if (PodQos(pod) != QosClass::kGuaranteed) return absl::OkStatus();
  if (PodLevelSkipped(pod)) return absl::OkStatus();

  if (const std::vector<Block>* blocks = state.GetMemoryBlocks(pod.uid, container.name)) {
    std::vector<Block> copy = *blocks;
    UpdatePodReusableMemory(pod, container, copy);
    return absl::OkStatus();  // already allocated (idempotent)
  }

  TopologyHint hint = affinity_->GetAffinity(pod.uid, container.name);
  absl::StatusOr<RequestedResources> req_scratch;
  const absl::StatusOr<RequestedResources>& req = ContainerRequest(pod, container, req_scratch);
  if (!req.ok()) return req.status();
  if (req->empty()) return absl::OkStatus();  // #138770: nothing exclusive to pin

  absl::StatusOr<TopologyHint> best = BestHint(state.machine_state, pod, *req, hint);
  if (!best.ok()) return best.status();

  // Nothing below fails: the machine state changes in place.
  std::vector<int> bits = best->affinity->GetBits();
  std::vector<Block> blocks;
  for (const auto& [type, size] : *req) {
    blocks.push_back(Block{bits, type, size});
    uint64_t reusable = PodReusableMemory(pod, *best->affinity, type);
    uint64_t to_reserve = reusable >= size ? 0 : size - reusable;
    UpdateMachineState(state.machine_state, bits, type, to_reserve);
  }
  UpdatePodReusableMemory(pod, container, blocks);
  state.SetMemoryBlocks(pod.uid, container.name, blocks);
  // Keep Σ block sizes of the pod == memory actually reserved: earlier init containers' blocks
  // shrink by what this container re-uses.
  UpdateInitContainersMemoryBlocks(state, pod, container, blocks);
  return absl::OkStatus();
}

absl::Status StaticPolicy::AllocatePod(MemoryState& state, const Pod& pod) {
  if (PodQos(pod) != QosClass::kGuaranteed) return absl::OkStatus();
  if (!PodLevelManaged(pod)) {
    return absl::FailedPreconditionError(fmt::format(
        "[memorymanager] AllocatePod needs pod-level resources and the PodLevelResources and "
        "PodLevelResourceManagers feature gates (pod {})",
        pod.Key()));
  }

  absl::StatusOr<RequestedResources> total_or_scratch;
  const absl::StatusOr<RequestedResources>& total_or = PodRequest(pod, total_or_scratch);
  if (!total_or.ok()) return absl::OkStatus();  // the kubelet logs and admits unpinned
  const RequestedResources& pod_total = *total_or;
  if (pod_total.empty()) return absl::OkStatus();

  // Restart: a pod whose pod-level allocation and container entries are in the state keeps
  // them and is not charged again (#140906). A pod entry without container entries is an
  // incomplete checkpoint (#141993): the machine state never saw it, so drop it and allocate.
  // A kubelet without #141077 (gates_.behavior) computes the request again and applies it on
  // top of the restored reservation: the entries are overwritten, the machine state is charged
  // twice (k/k #140906).
  if (state.GetPodMemoryBlocks(pod.uid) != nullptr && gates_.behavior.memory_restore_keeps_pod_blocks) {
    if (state.ContainerEntryCount(pod.uid) > 0) return absl::OkStatus();
    notices_.push_back(fmt::format(
        "[memorymanager] pod {} (uid {}) had pod-level memory blocks but no container "
        "assignments (incomplete checkpoint, k/k #141993); allocating it again",
        pod.Key(), pod.uid));
    state.pod_assignments.erase(pod.uid);
  }

  // Every validation error becomes an EmptyPodSharedPoolError, as in the kubelet.
  if (absl::Status valid = ValidatePodScopeResources(pod); !valid.ok()) {
    return TypedAdmissionError(kReasonEmptyPodSharedPool, std::string(valid.message()));
  }

  const Container* first = !pod.init_containers.empty() ? &pod.init_containers.front()
                           : !pod.containers.empty()    ? &pod.containers.front()
                                                        : nullptr;
  if (first == nullptr) {
    return absl::InvalidArgumentError(
        fmt::format("[memorymanager] pod {} has no containers", pod.Key()));
  }
  TopologyHint hint = affinity_->GetAffinity(pod.uid, first->name);
  absl::StatusOr<TopologyHint> best = BestHint(state.machine_state, pod, pod_total, hint);
  if (!best.ok()) return best.status();
  std::vector<int> bits = best->affinity->GetBits();

  auto blocks_of = [&bits](const RequestedResources& sizes) {
    std::vector<Block> blocks;
    for (const auto& [type, size] : sizes) {
      if (size > 0) blocks.push_back(Block{bits, type, size});
    }
    return blocks;
  };

  // Partition the budget (quantities, not pages): the exclusive blocks of every init and app
  // container in admission order, nullopt for those of the shared pool.
  std::vector<std::optional<std::vector<Block>>> exclusive;
  exclusive.reserve(pod.init_containers.size() + pod.containers.size());
  RequestedResources sidecars;  // of the sidecars declared so far
  auto budget_left = [&](const RequestedResources& budget) {  // budget minus sidecars
    RequestedResources left;
    for (const auto& [type, size] : budget) {
      auto it = sidecars.find(type);
      left.emplace_hint(left.end(), type, size - (it == sidecars.end() ? 0 : it->second));
    }
    return left;
  };
  for (const Container& c : pod.init_containers) {
    absl::StatusOr<RequestedResources> reqs_scratch;
    const absl::StatusOr<RequestedResources>& reqs = ContainerRequest(pod, c, reqs_scratch);
    if (!reqs.ok()) return reqs.status();
    if (reqs->empty()) {
      if (c.IsRestartableInit()) {
        exclusive.emplace_back();  // shared sidecar: gets the final shared pool
      } else {
        exclusive.emplace_back(blocks_of(budget_left(pod_total)));
      }
      continue;
    }
    exclusive.emplace_back(blocks_of(*reqs));
    if (c.IsRestartableInit()) {
      for (const auto& [type, size] : *reqs) sidecars[type] += size;
    }
  }
  RequestedResources app_pool = budget_left(pod_total);
  for (const Container& c : pod.containers) {
    absl::StatusOr<RequestedResources> reqs_scratch;
    const absl::StatusOr<RequestedResources>& reqs = ContainerRequest(pod, c, reqs_scratch);
    if (!reqs.ok()) return reqs.status();
    if (reqs->empty()) {
      exclusive.emplace_back();  // shared pool
      continue;
    }
    std::vector<Block> blocks;
    blocks.reserve(reqs->size());
    for (const auto& [type, size] : *reqs) {
      if (size == 0) continue;
      blocks.push_back(Block{bits, type, size});
      app_pool[type] -= size;  // uint64 as in Go
    }
    exclusive.emplace_back(std::move(blocks));
  }
  std::vector<Block> shared_pool = blocks_of(app_pool);

  // Nothing below fails: the machine state changes in place.
  std::vector<Block> pod_blocks;
  pod_blocks.reserve(pod_total.size());
  for (const auto& [type, size] : pod_total) pod_blocks.push_back(Block{bits, type, size});
  for (const auto& [type, size] : pod_total) {
    UpdateMachineState(state.machine_state, bits, type, size);
  }

  state.SetPodMemoryBlocks(pod.uid, std::move(pod_blocks));
  auto own = exclusive.begin();
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const Container& c : *list) {
      state.SetMemoryBlocks(pod.uid, c.name,
                            own->has_value() ? std::move(**own) : shared_pool);
      ++own;
    }
  }
  return absl::OkStatus();
}

void StaticPolicy::RemoveContainer(MemoryState& state, const std::string& pod_uid,
                                   const std::string& container_name) {
  if (gates_.pod_level_resource_managers) {
    if (const std::vector<Block>* pod_blocks = state.GetPodMemoryBlocks(pod_uid)) {
      if (state.ContainerEntryCount(pod_uid) == 0) {
        // An incomplete checkpoint entry (#141993) was never charged: drop it, release nothing
        // (the kubelet would release the pod blocks here and corrupt the machine state).
        notices_.push_back(fmt::format(
            "[memorymanager] dropping the pod-level memory entry of pod uid {}: it has no "
            "container assignments (incomplete checkpoint, k/k #141993)",
            pod_uid));
        state.pod_assignments.erase(pod_uid);
        return;
      }
      state.Delete(pod_uid, container_name);  // leaves the pod entry (pod_blocks) in place
      if (state.ContainerEntryCount(pod_uid) == 0) {
        ReleaseMemory(state.machine_state, *pod_blocks);
        state.DeletePod(pod_uid);
      }
      return;
    }
  }
  const std::vector<Block>* found = state.GetMemoryBlocks(pod_uid, container_name);
  if (found == nullptr) return;
  ReleaseMemory(state.machine_state, *found);
  state.Delete(pod_uid, container_name);
}

namespace {

std::optional<HintMap> Enumerated(const std::optional<HintSetMap>& sets) {
  if (!sets.has_value()) return std::nullopt;
  HintMap out;
  for (const auto& [type, set] : *sets) out[type] = set.Enumerate();
  return out;
}

}  // namespace

std::optional<HintMap> StaticPolicy::GetTopologyHints(const MemoryState& state, const Pod& pod,
                                                      const Container& container) const {
  return Enumerated(GetTopologyHintSets(state, pod, container));
}

std::optional<HintMap> StaticPolicy::GetPodTopologyHints(const MemoryState& state,
                                                         const Pod& pod) const {
  return Enumerated(GetPodTopologyHintSets(state, pod));
}

std::optional<HintSetMap> StaticPolicy::GetTopologyHintSets(const MemoryState& state,
                                                            const Pod& pod,
                                                            const Container& container) const {
  if (PodQos(pod) != QosClass::kGuaranteed) return std::nullopt;
  absl::StatusOr<RequestedResources> req_scratch;
  const absl::StatusOr<RequestedResources>& req = ContainerRequest(pod, container, req_scratch);
  if (!req.ok()) return std::nullopt;
  if (PodLevelSkipped(pod)) return std::nullopt;
  if (req->empty()) return std::nullopt;  // #138770
  if (const std::vector<Block>* blocks = state.GetMemoryBlocks(pod.uid, container.name)) {
    return RegenerateHints(*blocks, *req);
  }
  return CalculateHints(state.machine_state, pod, *req);
}

std::optional<HintSetMap> StaticPolicy::GetPodTopologyHintSets(const MemoryState& state,
                                                               const Pod& pod) const {
  if (PodQos(pod) != QosClass::kGuaranteed) return std::nullopt;
  absl::StatusOr<RequestedResources> req_scratch;
  const absl::StatusOr<RequestedResources>& req = PodRequest(pod, req_scratch);
  if (!req.ok()) return std::nullopt;
  if (PodLevelSkipped(pod)) return std::nullopt;
  bool pod_level = gates_.pod_level_resource_managers && pod.HasPodLevelResources();
  if (pod_level && !ValidatePodScopeResources(pod).ok()) {
    HintSetMap none;
    for (const auto& [type, size] : *req) none[type];  // empty list: no possible placement
    return none;
  }
  if (req->empty()) return std::nullopt;

  // Restart of a pod-level pod: the pod blocks hold the pod request (#141069). An entry without
  // container entries is incomplete (#141993) and is ignored.
  // Without #141070 (gates_.behavior) the first container's blocks are compared with the pod
  // request below: a pod of several containers gets no hint (k/k #141069).
  if (pod_level && gates_.behavior.memory_pod_restore_hints_from_pod_blocks) {
    const std::vector<Block>* pod_blocks = state.GetPodMemoryBlocks(pod.uid);
    if (pod_blocks != nullptr && state.ContainerEntryCount(pod.uid) > 0) {
      return RegenerateHints(*pod_blocks, *req);
    }
  }
  if (auto entries = state.assignments.find(pod.uid); entries != state.assignments.end()) {
    for (const auto* list : {&pod.init_containers, &pod.containers}) {
      for (const Container& c : *list) {
        auto it = entries->second.find(c.name);
        if (it != entries->second.end()) return RegenerateHints(it->second, *req);
      }
    }
  }
  // Pod hints are calculated once for all containers: no reusable memory to consider.
  return CalculateHints(state.machine_state, pod, *req);
}

absl::Status StaticPolicy::UpdateExpectedMachineState(NumaNodeMap& expected,
                                                      const std::vector<Block>& blocks,
                                                      const std::string& pod_uid,
                                                      const std::string& container_name) const {
  for (const Block& b : blocks) {
    uint64_t size = b.size;
    for (int node : b.numa_affinity) {
      auto n = expected.find(node);
      if (n == expected.end()) {
        return absl::FailedPreconditionError(fmt::format(
            "[memorymanager] (pod: {}, container: {}) the memory assignment uses the NUMA that "
            "does not exist",
            pod_uid, container_name));
      }
      n->second.number_of_assignments++;
      n->second.cells = b.numa_affinity;
      auto t = n->second.memory_map.find(b.type);
      if (t == n->second.memory_map.end()) {
        return absl::FailedPreconditionError(fmt::format(
            "[memorymanager] (pod: {}, container: {}) the memory assignment uses memory resource "
            "that does not exist",
            pod_uid, container_name));
      }
      if (size == 0) continue;
      MemoryTable& table = t->second;
      if (table.free == 0) continue;
      if (table.free >= size) {
        table.reserved += size;
        table.free -= size;
        size = 0;
        continue;
      }
      size -= table.free;
      table.reserved += table.free;
      table.free = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status StaticPolicy::Start(MemoryState& state) {
  for (auto it = state.pod_assignments.begin(); it != state.pod_assignments.end();) {
    if (!gates_.pod_level_resource_managers) {
      notices_.push_back(fmt::format(
          "[memorymanager] ignoring the pod-level memory entry of pod uid {}: the "
          "PodLevelResourceManagers feature gate is off",
          it->first));
      it = state.pod_assignments.erase(it);
    } else if (state.ContainerEntryCount(it->first) == 0) {
      notices_.push_back(fmt::format(
          "[memorymanager] dropping the pod-level memory entry of pod uid {}: it has no "
          "container assignments (incomplete checkpoint, k/k #141993)",
          it->first));
      it = state.pod_assignments.erase(it);
    } else {
      ++it;
    }
  }

  if (state.machine_state.empty()) {
    if (!state.assignments.empty()) {
      return absl::FailedPreconditionError(
          "[memorymanager] machine state can not be empty when it has memory assignments");
    }
    state.machine_state = DefaultMachineState();
    return absl::OkStatus();
  }

  NumaNodeMap expected = DefaultMachineState();
  for (const auto& [pod_uid, containers] : state.assignments) {
    if (gates_.pod_level_resource_managers) {
      const std::vector<Block>* pod_blocks = state.GetPodMemoryBlocks(pod_uid);
      if (pod_blocks != nullptr && !pod_blocks->empty()) {
        absl::Status s = UpdateExpectedMachineState(expected, *pod_blocks, pod_uid, "");
        if (!s.ok()) return s;
        continue;
      }
    }
    for (const auto& [container_name, blocks] : containers) {
      absl::Status s = UpdateExpectedMachineState(expected, blocks, pod_uid, container_name);
      if (!s.ok()) return s;
    }
  }
  std::string why;
  if (!AreMachineStatesEqual(state.machine_state, expected, &why)) {
    notices_.push_back("[memorymanager] invalid state, please drain node and remove policy state "
                       "file: " + why);
    return absl::FailedPreconditionError(
        "[memorymanager] the expected machine state is different from the real one");
  }
  return absl::OkStatus();
}

std::vector<Block> StaticPolicy::GetAllocatableMemory(const MemoryState& state) const {
  std::vector<Block> blocks;
  for (const auto& [node, ns] : state.machine_state) {
    for (const auto& [type, table] : ns.memory_map) {
      if (table.allocatable == 0) continue;
      blocks.push_back(Block{{node}, type, table.allocatable});
    }
  }
  return blocks;
}

}  // namespace podtopo::memorymanager
