// Test-only helpers for the memorymanager tests: reading ../shared/vectors/memory_cases.json
// objects into podtopo types, a fixed-hint affinity store, and small builders.
#ifndef PODTOPO_MEMORYMANAGER_TEST_UTIL_H_
#define PODTOPO_MEMORYMANAGER_TEST_UTIL_H_

#include <map>
#include <string>
#include <vector>

#include "api/pod.h"
#include "gtest/gtest.h"
#include "memorymanager/memory_state.h"
#include "memorymanager/reserved_memory.h"
#include "memorymanager/static_policy.h"
#include "nlohmann/json.hpp"
#include "resource/quantity.h"
#include "testing/testing.h"

namespace podtopo::memorymanager::testutil {

using nlohmann::json;

constexpr uint64_t kMi = 1024ull * 1024;
constexpr uint64_t kGi = 1024ull * kMi;

// Returns the same hint for every container (the kubelet's NewFakeManagerWithHint), or per
// container when `per_container` has an entry.
class FakeAffinityStore : public AffinityStore {
 public:
  FakeAffinityStore() = default;
  explicit FakeAffinityStore(TopologyHint hint) : hint_(hint) {}
  TopologyHint GetAffinity(const std::string& pod_uid,
                           const std::string& container_name) const override {
    auto it = per_container_.find(pod_uid + "/" + container_name);
    return it != per_container_.end() ? it->second : hint_;
  }
  void Set(TopologyHint hint) { hint_ = hint; }
  void SetFor(const std::string& pod_uid, const std::string& container, TopologyHint hint) {
    per_container_[pod_uid + "/" + container] = hint;
  }

 private:
  TopologyHint hint_;
  std::map<std::string, TopologyHint> per_container_;
};

inline BitMask Mask(const std::vector<int>& bits) { return topologymanager::NewBitMask(bits).value(); }

// A quantity from a vector value: a JSON number is bytes, a string is a Kubernetes quantity.
inline Quantity QuantityFromJson(const json& v) {
  if (v.is_number_integer()) {
    return Quantity::FromInt(v.get<int64_t>(), Quantity::Format::kBinarySI);
  }
  absl::StatusOr<Quantity> q = Quantity::Parse(v.get<std::string>());
  EXPECT_TRUE(q.ok()) << v.dump() << ": " << q.status();
  return q.ok() ? *q : Quantity();
}

inline ResourceList ResourcesFromJson(const json& j) {
  ResourceList list;
  if (j.is_null()) return list;
  for (const auto& [name, value] : j.items()) list[name] = QuantityFromJson(value);
  return list;
}

inline Container ContainerFromJson(const json& j, ContainerKind kind) {
  Container c;
  c.name = j.at("name").get<std::string>();
  if (j.contains("requests")) c.resources.requests = ResourcesFromJson(j["requests"]);
  if (j.contains("limits")) c.resources.limits = ResourcesFromJson(j["limits"]);
  if (kind == ContainerKind::kInit && j.value("restartable", false)) kind = ContainerKind::kSidecar;
  c.kind = kind;
  return c;
}

inline Pod PodFromJson(const json& j) {
  Pod pod;
  pod.uid = j.value("uid", "");
  pod.name = pod.uid.empty() ? "pod" : pod.uid;
  if (j.contains("init_containers")) {
    for (const json& c : j["init_containers"]) {
      pod.init_containers.push_back(ContainerFromJson(c, ContainerKind::kInit));
    }
  }
  for (const json& c : j.at("containers")) {
    pod.containers.push_back(ContainerFromJson(c, ContainerKind::kApp));
  }
  return pod;
}

inline MemoryTable TableFromJson(const json& j) {
  return MemoryTable{j.at("total").get<uint64_t>(), j.at("systemReserved").get<uint64_t>(),
                     j.at("allocatable").get<uint64_t>(), j.at("reserved").get<uint64_t>(),
                     j.at("free").get<uint64_t>()};
}

inline NumaNodeMap MachineStateFromJson(const json& j) {
  NumaNodeMap ms;
  if (j.is_null()) return ms;
  for (const auto& [id, node] : j.items()) {
    NumaNodeState ns;
    ns.number_of_assignments = node.at("numberOfAssignments").get<int>();
    for (const auto& [type, table] : node.at("memoryMap").items()) {
      ns.memory_map[type] = TableFromJson(table);
    }
    ns.cells = node.at("cells").get<std::vector<int>>();
    ms[std::stoi(id)] = ns;
  }
  return ms;
}

inline std::vector<Block> BlocksFromJson(const json& j) {
  std::vector<Block> blocks;
  for (const json& b : j) {
    blocks.push_back(Block{b.at("numaAffinity").get<std::vector<int>>(),
                           b.at("type").get<std::string>(), b.at("size").get<uint64_t>()});
  }
  return blocks;
}

inline ContainerMemoryAssignments AssignmentsFromJson(const json& j) {
  ContainerMemoryAssignments a;
  if (j.is_null()) return a;
  for (const auto& [pod, containers] : j.items()) {
    auto& entry = a[pod];
    for (const auto& [name, blocks] : containers.items()) entry[name] = BlocksFromJson(blocks);
  }
  return a;
}

inline SystemReservedMemory SystemReservedFromJson(const json& j) {
  SystemReservedMemory r;
  if (j.is_null()) return r;
  for (const auto& [id, types] : j.items()) {
    auto& node = r[std::stoi(id)];
    for (const auto& [type, size] : types.items()) node[type] = size.get<uint64_t>();
  }
  return r;
}

inline std::vector<MachineNumaNode> MachineInfoFromJson(const json& j) {
  std::vector<MachineNumaNode> nodes;
  if (j.is_null()) return nodes;
  for (const json& n : j) {
    MachineNumaNode node;
    node.id = n.at("id").get<int>();
    node.memory = n.at("memory").get<uint64_t>();
    for (const json& hp : n.at("hugepages")) {
      node.hugepages.push_back(
          HugePagesInfo{hp.at("page_size_kib").get<uint64_t>(), hp.at("num_pages").get<uint64_t>()});
    }
    nodes.push_back(node);
  }
  return nodes;
}

inline TopologyHint HintFromJson(const json& j) {
  TopologyHint h;
  if (!j.at("affinity").is_null()) h.affinity = Mask(j["affinity"].get<std::vector<int>>());
  h.preferred = j.at("preferred").get<bool>();
  return h;
}

inline std::vector<MemoryReservation> ReservationsFromJson(const json& j) {
  std::vector<MemoryReservation> out;
  for (const json& r : j) {
    out.push_back(MemoryReservation{r.at("numaNode").get<int32_t>(), ResourcesFromJson(r.at("limits"))});
  }
  return out;
}

// Builders for hand-written tests.
inline Container MakeContainer(const std::string& name, ContainerKind kind,
                               const std::map<std::string, std::string>& requests,
                               const std::map<std::string, std::string>& limits) {
  Container c;
  c.name = name;
  c.kind = kind;
  for (const auto& [k, v] : requests) c.resources.requests[k] = Quantity::Parse(v).value();
  for (const auto& [k, v] : limits) c.resources.limits[k] = Quantity::Parse(v).value();
  return c;
}

// An "equivalent Guaranteed" container: cpu and memory requests == limits.
inline Container GuaranteedContainer(const std::string& name, const std::string& cpu,
                                     const std::string& memory,
                                     ContainerKind kind = ContainerKind::kApp) {
  return MakeContainer(name, kind, {{"cpu", cpu}, {"memory", memory}},
                       {{"cpu", cpu}, {"memory", memory}});
}

inline Container SharedContainer(const std::string& name, ContainerKind kind = ContainerKind::kApp) {
  return MakeContainer(name, kind, {}, {});
}

// A pod with pod-level requests == limits (Guaranteed).
inline Pod PodLevelPod(const std::string& uid, const std::map<std::string, std::string>& budget,
                       std::vector<Container> init, std::vector<Container> app) {
  Pod pod;
  pod.uid = uid;
  pod.name = uid;
  ResourceRequirements r;
  for (const auto& [k, v] : budget) {
    r.requests[k] = Quantity::Parse(v).value();
    r.limits[k] = Quantity::Parse(v).value();
  }
  pod.resources = r;
  pod.init_containers = std::move(init);
  pod.containers = std::move(app);
  return pod;
}

// One case of ../shared/vectors/memory_cases.json, named "<id> <test> <description>".
struct VectorCase {
  std::string name;
  json data;
};

// The cases whose "op" is `op`, in file order.
inline std::vector<VectorCase> CasesOf(const std::string& op) {
  static const json all = testing::LoadVectors("memory_cases.json");
  std::vector<VectorCase> out;
  for (const json& c : all.at("cases")) {
    if (c.at("op") != op) continue;
    out.push_back(VectorCase{c.at("id").get<std::string>() + " " + c.at("test").get<std::string>() +
                                 " " + c.at("description").get<std::string>(),
                             c});
  }
  return out;
}

// GoogleTest parameter names that keep the case's name.
inline std::string ParamName(const ::testing::TestParamInfo<VectorCase>& info) {
  return testing::TestName(info.param.name, info.index);
}

// Machine: `n` nodes with `memory_gib` GiB each (no hugepages) and 512Mi system-reserved each.
inline std::vector<MachineNumaNode> SimpleMachine(int n, uint64_t memory_gib) {
  std::vector<MachineNumaNode> nodes;
  for (int i = 0; i < n; ++i) nodes.push_back(MachineNumaNode{i, memory_gib * kGi, {}});
  return nodes;
}
inline SystemReservedMemory SimpleReserved(int n) {
  SystemReservedMemory r;
  for (int i = 0; i < n; ++i) r[i]["memory"] = 512 * kMi;
  return r;
}

}  // namespace podtopo::memorymanager::testutil

#endif  // PODTOPO_MEMORYMANAGER_TEST_UTIL_H_
