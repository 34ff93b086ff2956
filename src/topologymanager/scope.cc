#include "topologymanager/scope.h"

#include "fmt/format.h"
#include "util/popcount.h"

namespace podtopo::topologymanager {
namespace {

// Init containers, then app containers (append(pod.Spec.InitContainers, pod.Spec.Containers...)).
std::vector<const Container*> AdmissionOrder(const Pod& pod) {
  std::vector<const Container*> out;
  out.reserve(pod.init_containers.size() + pod.containers.size());
  for (const Container& c : pod.init_containers) out.push_back(&c);
  for (const Container& c : pod.containers) out.push_back(&c);
  return out;
}

// Whether the permutation that takes `mask` from every hint list is all preferred: every
// provider either has no preference (nil map, nil list) or lists `mask` as a preferred hint.
// The kubelet's mergePermutation makes that permutation the preferred `mask` (equal
// affinities, all preferred; `mask` comes from an earlier merge, so it lies within the default
// affinity), and its merger never replaces a preferred candidate by a non-preferred one: the
// merge is preferred and every policy admits. single-numa-node keeps the one-node preferred
// hints only, so there `mask` must be one node.
bool PreferredByAll(const ProvidersHints& hints, const std::optional<BitMask>& affinity,
                    bool single) {
  if (!affinity.has_value()) return false;
  const uint64_t mask = affinity->value();
  if (mask == 0 || (single && PopCount64(mask) != 1)) return false;
  for (const ProviderHints& p : hints) {
    if (!p.has_value()) continue;
    for (const auto& [resource, list] : *p) {
      if (list.has_value() && !list->Preferred(mask)) return false;
    }
  }
  return true;
}

const Container* FirstContainer(const Pod& pod) {
  if (!pod.init_containers.empty()) return &pod.init_containers.front();
  return pod.containers.empty() ? nullptr : &pod.containers.front();
}

}  // namespace

absl::Status TopologyAffinityError() {
  return TypedAdmissionError(kReasonTopologyAffinity, kTopologyAffinityErrorMessage);
}

absl::Status PodLevelTopologyAffinityError() {
  return TypedAdmissionError(kReasonTopologyAffinity, kPodLevelTopologyAffinityErrorMessage);
}

Manager::Manager(std::string scope_name, std::unique_ptr<Policy> policy, ScopeGates gates)
    : scope_name_(std::move(scope_name)), policy_(std::move(policy)), gates_(gates) {}

const MergeResult& Manager::Merge(const ProvidersHints& hints) {
  last_merges_.push_back(policy_->Merge(hints));
  return last_merges_.back();
}

AdmitResult Manager::Admit(const Pod& pod, Operation op) {
  last_merges_.clear();
  if (scope_name_ == kScopeContainer) return AdmitContainer(pod, op);
  if (scope_name_ == kScopePod) return AdmitPod(pod, op);
  return AdmitNone(pod, op);
}

absl::Status Manager::AllocateAligned(const Pod& pod, const Container& container, Operation op) {
  for (HintProvider* provider : providers_) {
    absl::Status status = provider->Allocate(pod, container, op);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

AdmitResult Manager::AdmitNone(const Pod& pod, Operation op) {
  for (const Container* container : AdmissionOrder(pod)) {
    absl::Status status = AllocateAligned(pod, *container, op);
    if (!status.ok()) return GetPodAdmitResult(status);
  }
  return GetPodAdmitResult(absl::OkStatus());
}

AdmitResult Manager::AdmitContainer(const Pod& pod, Operation op) {
  for (const Container* container : AdmissionOrder(pod)) {
    ProvidersHints hints;
    hints.reserve(providers_.size());
    for (HintProvider* provider : providers_) {
      hints.push_back(provider->GetTopologyHints(pod, *container, op));
    }
    const MergeResult& merged = Merge(hints);
    if (!merged.admit) return GetPodAdmitResult(TopologyAffinityError());
    SetAffinity(pod.uid, container->name, merged.hint);
    absl::Status status = AllocateAligned(pod, *container, op);
    if (!status.ok()) return GetPodAdmitResult(status);
  }
  return GetPodAdmitResult(absl::OkStatus());
}

AdmitResult Manager::AdmitPod(const Pod& pod, Operation op) {
  ProvidersHints hints;
  hints.reserve(providers_.size());
  for (HintProvider* provider : providers_) hints.push_back(provider->GetPodTopologyHints(pod, op));
  const MergeResult& merged = Merge(hints);
  const bool pod_level = gates_.pod_level_resource_managers && pod.HasPodLevelResources();
  if (pod_level) {
    if (!merged.admit) return GetPodAdmitResult(PodLevelTopologyAffinityError());
    for (const auto* list : {&pod.init_containers, &pod.containers}) {
      for (const Container& container : *list) SetAffinity(pod.uid, container.name, merged.hint);
    }
    for (HintProvider* provider : providers_) {
      absl::Status status = provider->AllocatePod(pod, op);
      if (!status.ok()) return GetPodAdmitResult(status);
    }
    return GetPodAdmitResult(absl::OkStatus());
  }
  if (!merged.admit) return GetPodAdmitResult(TopologyAffinityError());
  for (const Container* container : AdmissionOrder(pod)) {
    SetAffinity(pod.uid, container->name, merged.hint);
    absl::Status status = AllocateAligned(pod, *container, op);
    if (!status.ok()) return GetPodAdmitResult(status);
  }
  return GetPodAdmitResult(absl::OkStatus());
}

AdmitResult Manager::AdmitAllocated(const Pod& pod, Operation op) {
  last_merges_.clear();
  // Their merges always admit (policy.cc MergeWith).
  const std::string& policy = policy_->Name();
  if (policy == kPolicyNone || policy == kPolicyBestEffort) {
    return GetPodAdmitResult(absl::OkStatus());
  }
  // The merge can only be skipped where it admits for sure: every list prefers the hint the
  // pod holds (PreferredByAll).
  const bool single = policy == kPolicySingleNumaNode;
  if (scope_name_ == kScopeContainer) {
    for (const Container* container : AdmissionOrder(pod)) {
      ProvidersHints hints;
      hints.reserve(providers_.size());
      for (HintProvider* provider : providers_) {
        hints.push_back(provider->GetTopologyHints(pod, *container, op));
      }
      if (PreferredByAll(hints, GetAffinity(pod.uid, container->name).affinity, single)) continue;
      if (!Merge(hints).admit) return GetPodAdmitResult(TopologyAffinityError());
    }
  } else if (scope_name_ == kScopePod) {
    ProvidersHints hints;
    hints.reserve(providers_.size());
    for (HintProvider* provider : providers_) {
      hints.push_back(provider->GetPodTopologyHints(pod, op));
    }
    const Container* first = FirstContainer(pod);
    if (first != nullptr &&
        PreferredByAll(hints, GetAffinity(pod.uid, first->name).affinity, single)) {
      return GetPodAdmitResult(absl::OkStatus());
    }
    if (!Merge(hints).admit) {
      const bool pod_level = gates_.pod_level_resource_managers && pod.HasPodLevelResources();
      return GetPodAdmitResult(pod_level ? PodLevelTopologyAffinityError()
                                         : TopologyAffinityError());
    }
  }
  return GetPodAdmitResult(absl::OkStatus());
}

TopologyHint Manager::GetAffinity(const std::string& pod_uid,
                                  const std::string& container_name) const {
  auto pod = pod_topology_hints_.find(pod_uid);
  if (pod == pod_topology_hints_.end()) return TopologyHint{};
  auto hint = pod->second.find(container_name);
  return hint == pod->second.end() ? TopologyHint{} : hint->second;
}

void Manager::SetAffinity(const std::string& pod_uid, const std::string& container_name,
                          const TopologyHint& hint) {
  pod_topology_hints_[pod_uid][container_name] = hint;
}

void Manager::RemovePod(const std::string& pod_uid) {
  pod_topology_hints_.erase(pod_uid);
  for (auto it = container_map_.begin(); it != container_map_.end();) {
    it = it->second.first == pod_uid ? container_map_.erase(it) : std::next(it);
  }
}

void Manager::AddContainer(const Pod& pod, const Container& container,
                           const std::string& container_id) {
  container_map_[container_id] = {pod.uid, container.name};
}

absl::Status Manager::RemoveContainer(const std::string& container_id) {
  auto it = container_map_.find(container_id);
  if (it == container_map_.end()) return absl::OkStatus();
  const auto [pod_uid, container_name] = it->second;
  container_map_.erase(it);
  for (const auto& [id, ref] : container_map_) {
    if (ref.first == pod_uid && ref.second == container_name) return absl::OkStatus();
  }
  auto pod = pod_topology_hints_.find(pod_uid);
  if (pod != pod_topology_hints_.end()) {
    pod->second.erase(container_name);
    if (pod->second.empty()) pod_topology_hints_.erase(pod);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Manager>> NewManager(
    const std::vector<NUMANode>& topology, const std::string& policy_name,
    const std::string& scope_name, const std::map<std::string, std::string>& options,
    const PolicyOptionGates& option_gates, const ScopeGates& scope_gates) {
  if (policy_name == kPolicyNone) {
    return std::make_unique<Manager>(kScopeNone, NewNonePolicy(), scope_gates);
  }
  absl::StatusOr<std::unique_ptr<Policy>> policy =
      NewPolicy(policy_name, topology, options, option_gates);
  if (!policy.ok()) return policy.status();
  if (scope_name != kScopeContainer && scope_name != kScopePod) {
    return absl::InvalidArgumentError(fmt::format("unknown scope: \"{}\"", scope_name));
  }
  return std::make_unique<Manager>(scope_name, *std::move(policy), scope_gates);
}

}  // namespace podtopo::topologymanager
