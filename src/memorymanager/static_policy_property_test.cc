// Property: whatever sequence of container-level Allocate, pod-level AllocatePod and
// RemoveContainer calls the policy sees, the state stays self-consistent: a restarted policy's
// validateState accepts it, and per node and type free + reserved == allocatable (so also for
// the group sums validateState compares).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memorymanager/static_policy.h"
#include "memorymanager/test_util.h"
#include "rapidcheck.h"
#include "testing/property.h"

namespace podtopo::memorymanager {
namespace {

using namespace testutil;  // NOLINT

struct PodSpec {
  bool pod_level = false;
  uint64_t budget_mib = 0;
  bool with_init = false;
  uint64_t init_mib = 0;
  std::vector<uint64_t> app_mib;  // 0 = shared container (pod-level only)
  uint64_t hugepages_gib = 0;     // per container (classic) / in the budget (pod-level)
  int hint = -1;                  // -1 nil, else an index into the policy's own hints
  bool preferred = false;
};

void showValue(const PodSpec& s, std::ostream& os) {
  os << "{pod_level=" << s.pod_level << " budget=" << s.budget_mib << "Mi init=" << s.with_init
     << "/" << s.init_mib << "Mi apps=[";
  for (uint64_t a : s.app_mib) os << a << "Mi ";
  os << "] hp=" << s.hugepages_gib << "Gi hint=" << s.hint << " preferred=" << s.preferred << "}";
}

std::string Mi(uint64_t mib) { return std::to_string(mib) + "Mi"; }

Container ClassicContainer(const std::string& name, uint64_t mib, uint64_t hp_gib,
                           ContainerKind kind) {
  std::map<std::string, std::string> r = {{"cpu", "1"}, {"memory", Mi(mib)}};
  if (hp_gib > 0) r["hugepages-1Gi"] = std::to_string(hp_gib) + "Gi";
  return MakeContainer(name, kind, r, r);
}

Pod BuildPod(const std::string& uid, const PodSpec& spec) {
  Pod pod;
  pod.uid = uid;
  pod.name = uid;
  if (!spec.pod_level) {
    if (spec.with_init) {
      pod.init_containers.push_back(
          ClassicContainer("init", spec.init_mib, spec.hugepages_gib, ContainerKind::kInit));
    }
    for (size_t i = 0; i < spec.app_mib.size(); ++i) {
      pod.containers.push_back(ClassicContainer("app" + std::to_string(i),
                                                std::max<uint64_t>(spec.app_mib[i], 64),
                                                spec.hugepages_gib, ContainerKind::kApp));
    }
    return pod;
  }
  std::map<std::string, std::string> budget = {{"cpu", "8"}, {"memory", Mi(spec.budget_mib)}};
  if (spec.hugepages_gib > 0) budget["hugepages-1Gi"] = std::to_string(spec.hugepages_gib) + "Gi";
  std::vector<Container> init, app;
  if (spec.with_init) {
    init.push_back(spec.init_mib == 0
                       ? SharedContainer("init", ContainerKind::kInit)
                       : GuaranteedContainer("init", "1", Mi(spec.init_mib), ContainerKind::kInit));
  }
  for (size_t i = 0; i < spec.app_mib.size(); ++i) {
    std::string name = "app" + std::to_string(i);
    app.push_back(spec.app_mib[i] == 0 ? SharedContainer(name)
                                       : GuaranteedContainer(name, "1", Mi(spec.app_mib[i])));
  }
  return PodLevelPod(uid, budget, std::move(init), std::move(app));
}

rc::Gen<PodSpec> GenPodSpec(int nodes) {
  return rc::gen::exec([nodes] {
    PodSpec s;
    s.pod_level = *rc::gen::arbitrary<bool>();
    s.budget_mib = 256 * *rc::gen::inRange<uint64_t>(1, 40);
    s.with_init = *rc::gen::arbitrary<bool>();
    s.init_mib = 256 * *rc::gen::inRange<uint64_t>(0, 12);
    int n = *rc::gen::inRange(1, 4);
    for (int i = 0; i < n; ++i) s.app_mib.push_back(256 * *rc::gen::inRange<uint64_t>(0, 12));
    s.hugepages_gib = *rc::gen::inRange<uint64_t>(0, 3);
    s.hint = *rc::gen::inRange(-1, 8 * nodes);
    s.preferred = *rc::gen::arbitrary<bool>();
    return s;
  });
}

void CheckInvariants(const StaticPolicy& policy, const std::vector<MachineNumaNode>& machine,
                     const SystemReservedMemory& reserved, const FakeAffinityStore& store,
                     const MemoryState& state) {
  for (const auto& [id, node] : state.machine_state) {
    for (const auto& [type, t] : node.memory_map) {
      RC_ASSERT(t.free + t.reserved == t.allocatable);
    }
    // Group sums: free + reserved over the node's cells equals allocatable over them.
    for (const auto& [type, t] : node.memory_map) {
      uint64_t free = 0, res = 0, alloc = 0;
      for (int cell : node.cells) {
        const MemoryTable& c = state.machine_state.at(cell).memory_map.at(type);
        free += c.free;
        res += c.reserved;
        alloc += c.allocatable;
      }
      RC_ASSERT(free + res == alloc);
    }
    RC_ASSERT(node.number_of_assignments >= 0);
  }
  auto fresh = StaticPolicy::New(machine, reserved, &store, policy.gates());
  RC_ASSERT(fresh.ok());
  MemoryState copy = state;
  absl::Status s = fresh->Start(copy);
  if (!s.ok()) {
    RC_LOG() << s << "\n" << MachineStateString(state.machine_state);
    for (const auto& [pod, cs] : state.assignments)
      for (const auto& [c, b] : cs) RC_LOG() << pod << "/" << c << " " << BlocksString(b) << "\n";
    for (const auto& [pod, b] : state.pod_assignments) RC_LOG() << pod << " pod " << BlocksString(b) << "\n";
    for (const std::string& n : fresh->notices()) RC_LOG() << n << "\n";
  }
  RC_ASSERT(s.ok());
  RC_ASSERT(fresh->notices().empty());
}

PODTOPO_PROPERTY(StaticPolicyProperty, StateStaysValidUnderRandomAllocateAndRemove, ()) {
  const int nodes = *rc::gen::inRange(1, 4);
  std::vector<MachineNumaNode> machine;
  SystemReservedMemory reserved;
  for (int i = 0; i < nodes; ++i) {
    machine.push_back(MachineNumaNode{i, (4 + static_cast<uint64_t>(i)) * kGi, {{1048576, 2}}});
    reserved[i]["memory"] = 512 * kMi;
  }
  FakeAffinityStore store;
  auto policy = StaticPolicy::New(machine, reserved, &store, PolicyGates{true, true});
  RC_ASSERT(policy.ok());
  MemoryState state;
  RC_ASSERT(policy->Start(state).ok());

  std::vector<std::pair<std::string, std::string>> live;  // (pod uid, container)
  const int steps = *rc::gen::inRange(1, 25);
  for (int step = 0; step < steps; ++step) {
    bool remove = !live.empty() && *rc::gen::inRange(0, 3) == 0;
    if (remove) {
      size_t i = *rc::gen::inRange<size_t>(0, live.size());
      policy->RemoveContainer(state, live[i].first, live[i].second);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      PodSpec spec = *GenPodSpec(nodes);
      std::string uid = "pod" + std::to_string(step);
      Pod pod = BuildPod(uid, spec);
      // The stored hint is what the Topology Manager could merge from this provider alone:
      // nil, or one of the policy's own hints. (Arbitrary masks can break the kubelet's state:
      // it accepts a single-NUMA hint on a node of a cross-NUMA group, see the report.)
      auto pick = [&](const std::optional<HintMap>& hints) {
        TopologyHint hint;
        hint.preferred = spec.preferred;
        if (spec.hint < 0 || !hints.has_value() || hints->empty()) return hint;
        const std::vector<TopologyHint>& list = hints->begin()->second;
        if (list.empty()) return hint;
        return list[static_cast<size_t>(spec.hint) % list.size()];
      };
      if (spec.pod_level) {
        store.Set(pick(policy->GetPodTopologyHints(state, pod)));
        absl::Status s = policy->AllocatePod(state, pod);
        if (s.ok()) {
          for (const Container* c : pod.InitAndAppContainers()) {
            if (state.GetMemoryBlocks(uid, c->name) != nullptr) live.emplace_back(uid, c->name);
          }
        }
      } else {
        for (const Container* c : pod.InitAndAppContainers()) {
          store.Set(pick(policy->GetTopologyHints(state, pod, *c)));
          if (policy->Allocate(state, pod, *c).ok() &&
              state.GetMemoryBlocks(uid, c->name) != nullptr) {
            live.emplace_back(uid, c->name);
          }
        }
      }
    }
    CheckInvariants(*policy, machine, reserved, store, state);
  }
  // Removing everything gives the default machine state back.
  for (const auto& [uid, name] : live) policy->RemoveContainer(state, uid, name);
  RC_ASSERT(state.assignments.empty());
  RC_ASSERT(state.pod_assignments.empty());
  RC_ASSERT(AreMachineStatesEqual(state.machine_state, policy->DefaultMachineState()));
}

}  // namespace
}  // namespace podtopo::memorymanager
