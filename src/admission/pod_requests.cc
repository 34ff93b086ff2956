#include "admission/pod_requests.h"

#include <algorithm>

#include "util/format.h"

namespace podtopo {
namespace {

bool IsHugePages(const std::string& name) { return name.rfind(kHugePagesPrefix, 0) == 0; }

// The amount the fit check compares: millicores for cpu, Value() otherwise.
int64_t Amount(const std::string& name, const Quantity& q) {
  return name == kResourceCpu ? q.MilliValue() : q.Value();
}

}  // namespace

ResourceList NodeCapacity(const NodeTopology& topology) {
  ResourceList cap;
  cap[kResourceCpu] = Quantity::FromInt(topology.cpus.AllCpus().Size());
  uint64_t memory = 0;
  std::map<std::string, uint64_t> huge;
  for (const auto& n : topology.numa_nodes) {
    memory += n.memory;
    for (const auto& [name, bytes] : n.hugepages) huge[name] += bytes;
  }
  cap[kResourceMemory] =
      Quantity::FromInt(static_cast<int64_t>(memory), Quantity::Format::kBinarySI);
  for (const auto& [name, bytes] : huge) {
    cap[name] = Quantity::FromInt(static_cast<int64_t>(bytes), Quantity::Format::kBinarySI);
  }
  std::map<std::string, int64_t> devices;
  for (const auto& d : topology.devices) devices[d.resource]++;
  for (const auto& [name, count] : devices) cap[name] = Quantity::FromInt(count);
  return cap;
}

ResourceList NodeAllocatable(const NodeTopology& topology, const config::KubeletConfig& config) {
  ResourceList cap = NodeCapacity(topology);
  ResourceList reservation = config.NodeAllocatableReservation(cap);
  ResourceList out;
  for (const auto& [name, q] : cap) {
    Quantity v = q;
    if (auto it = reservation.find(name); it != reservation.end()) v.Sub(it->second);
    if (v.Sign() < 0) v = Quantity::FromInt(0, q.format());
    out[name] = v;
  }
  for (const auto& [name, q] : cap) {
    if (!IsHugePages(name)) continue;
    Quantity& mem = out[kResourceMemory];
    mem.Sub(q);
    if (mem.Sign() < 0) mem = Quantity::FromInt(0, Quantity::Format::kBinarySI);
  }
  return out;
}

FitAmounts PodFitAmounts(const Pod& pod, bool pod_level_resources) {
  FitAmounts out;
  // The keys come in order, each once: every one goes at the end.
  for (auto& [name, q] : PodRequests(pod, pod_level_resources)) {
    out.emplace_hint(out.end(), name, Amount(name, q));
  }
  return out;
}

std::optional<AdmitResult> CheckNodeFit(const Pod& pod, const std::vector<const Pod*>& admitted,
                                        const ResourceList& allocatable,
                                        bool pod_level_resources, int max_pods,
                                        NodeFitShortage* shortage) {
  FitAmounts used;
  for (const Pod* p : admitted) {
    for (const auto& [name, amount] : PodFitAmounts(*p, pod_level_resources)) {
      used[name] += amount;
    }
  }
  return CheckNodeFit(PodFitAmounts(pod, pod_level_resources),
                      static_cast<int64_t>(admitted.size()), used, allocatable, max_pods,
                      shortage);
}

std::optional<AdmitResult> CheckNodeFit(const FitAmounts& request, int64_t admitted_pods,
                                        const FitAmounts& used, const ResourceList& allocatable,
                                        int max_pods, NodeFitShortage* shortage) {
  auto insufficient = [shortage](const std::string& name, int64_t requested, int64_t used,
                                 int64_t capacity) {
    if (shortage != nullptr) *shortage = NodeFitShortage{name, requested, used, capacity};
    return AdmitResult{false, "OutOf" + name,
                       fmt::format("Node didn't have enough resource: {}, requested: {}, used: "
                                   "{}, capacity: {}",
                                   name, requested, used, capacity)};
  };
  const int64_t pods = admitted_pods;
  if (pods + 1 > max_pods) return insufficient("pods", 1, pods, max_pods);

  auto check = [&](const std::string& name) -> std::optional<AdmitResult> {
    auto it = request.find(name);
    if (it == request.end()) return std::nullopt;
    const int64_t want = it->second;
    if (want <= 0) return std::nullopt;
    int64_t have = 0;
    if (auto a = allocatable.find(name); a != allocatable.end()) have = Amount(name, a->second);
    auto u = used.find(name);
    const int64_t in_use = u == used.end() ? 0 : u->second;
    if (want > have - in_use) return insufficient(name, want, in_use, have);
    return std::nullopt;
  };
  if (auto r = check(kResourceCpu)) return r;
  if (auto r = check(kResourceMemory)) return r;
  for (const auto& [name, amount] : request) {
    if (name == kResourceCpu || name == kResourceMemory || name == "ephemeral-storage") continue;
    // removeMissingExtendedResources: extended resources the node does not advertise are
    // left to other admission handlers (the kubelet drops them from the fit check).
    if (!IsHugePages(name) && allocatable.find(name) == allocatable.end()) continue;
    if (auto r = check(name)) return r;
  }
  return std::nullopt;
}

}  // namespace podtopo
