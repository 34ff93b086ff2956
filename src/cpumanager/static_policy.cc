#include "cpumanager/static_policy.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <utility>

#include "kubelet/admission_error.h"
#include "cpumanager/cpu_assignment.h"
#include "fmt/format.h"

namespace podtopo::cpumanager {
namespace {

using topologymanager::BitMask;
using topologymanager::TopologyHint;

constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();

int Saturate(int64_t v) { return static_cast<int>(std::clamp<int64_t>(v, 0, kMaxInt)); }

// The quantity stored under `name`, or zero when absent (a Go map lookup).
// The quantity `list` holds for `name` (zero when absent). `name` is a std::string so that the
// lookup builds no temporary.
Quantity QuantityOf(const ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? Quantity() : it->second;
}

const std::string& CpuKey() {
  static const std::string* key = new std::string(kResourceCpu);
  return *key;
}

bool IsIntegralCpuAmount(const Quantity& q) { return q.Value() * 1000 == q.MilliValue(); }

}  // namespace

// ---- errors and names ----

std::string SmtAlignmentError::Error() const {
  if (caused_by_physical_cpus) {
    return fmt::format(
        "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = {}, "
        "requested CPUs = {}, CPUs per core = {}",
        available_physical_cpus, requested_cpus, cpus_per_core);
  }
  return fmt::format("SMT Alignment Error: requested {} cpus not multiple cpus per core = {}",
                     requested_cpus, cpus_per_core);
}

absl::Status SmtAlignmentError::ToStatus() const {
  return TypedAdmissionError(kReasonSmtAlignment, Error());
}

const char* ResourceIsolationLevelName(ResourceIsolationLevel level) {
  switch (level) {
    case ResourceIsolationLevel::kHost: return "host";
    case ResourceIsolationLevel::kPod: return "pod";
    case ResourceIsolationLevel::kContainer: return "container";
  }
  return "unknown";
}

const char* ContainerAssignmentName(ContainerAssignment assignment) {
  switch (assignment) {
    case ContainerAssignment::kNodeExclusive: return "node_exclusive";
    case ContainerAssignment::kPodExclusive: return "pod_exclusive";
    case ContainerAssignment::kPodShared: return "pod_shared";
    case ContainerAssignment::kNodeShared: return "node_shared";
  }
  return "unknown";
}

// ---- construction ----

StaticPolicy::StaticPolicy(const CpuTopology& topology, const StaticPolicyOptions& options,
                           const StaticPolicyGates& gates, const AffinityStore* affinity)
    : topology_(topology),
      options_(options),
      gates_(gates),
      affinity_(affinity),
      cpu_group_size_(topology.CpusPerCore()),
      tables_(topology_),
      hint_tables_(BuildHintTables(topology_, options_)) {}

StaticPolicy::HintTables StaticPolicy::BuildHintTables(const CpuTopology& topology,
                                                       const StaticPolicyOptions& options) {
  HintTables t;
  for (int numa : topology.NumaNodes()) {
    // NUMA ids beyond 63 cannot form a mask; the kubelet's walk then yields no hint.
    if (numa < 0 || numa > 63) {
      t.unmaskable = true;
      return t;
    }
    t.nodes |= uint64_t{1} << numa;
    t.numa_cpus.emplace_back(numa, topology.CpusInNuma(numa));
    t.capacity.weight[static_cast<size_t>(numa)] =
        static_cast<uint64_t>(t.numa_cpus.back().second.Size());
  }
  t.numa_count = static_cast<int>(t.numa_cpus.size());
  if (options.align_by_socket && topology.num_sockets > 0) {
    t.numa_per_socket = topology.num_numa_nodes / topology.num_sockets;
    if (t.numa_per_socket > 0) {
      std::vector<int> sockets = topology.Sockets();
      t.node_sockets.assign(64, {});
      for (const auto& [numa, cpus] : t.numa_cpus) {
        auto& words = t.node_sockets[static_cast<size_t>(numa)];
        words.assign((sockets.size() + 63) / 64, 0);
        for (int socket : topology.SocketsOf(cpus)) {
          size_t index = static_cast<size_t>(
              std::lower_bound(sockets.begin(), sockets.end(), socket) - sockets.begin());
          words[index / 64] |= uint64_t{1} << (index % 64);
        }
      }
    }
  }
  return t;
}

absl::StatusOr<std::unique_ptr<StaticPolicy>> StaticPolicy::Create(
    const CpuTopology& topology, const StaticPolicyConfig& config, const AffinityStore* affinity) {
  absl::StatusOr<StaticPolicyOptions> opts =
      NewStaticPolicyOptions(config.options, config.gates.options);
  if (!opts.ok()) return opts.status();
  if (absl::Status s =
          ValidateStaticPolicyOptions(*opts, topology, config.topology_manager_policy);
      !s.ok()) {
    return s;
  }
  std::unique_ptr<StaticPolicy> policy(new StaticPolicy(topology, *opts, config.gates, affinity));

  CpuSet reserved;
  if (!config.reserved_system_cpus.IsEmpty()) {
    reserved = config.reserved_system_cpus;
  } else {
    // The kubelet ignores the take error here; the size check below reports it.
    absl::StatusOr<CpuSet> taken =
        policy->TakeByTopology(topology.AllCpus(), std::max(config.num_reserved_cpus, 0));
    if (taken.ok()) reserved = *taken;
  }
  if (reserved.Size() != config.num_reserved_cpus) {
    return absl::InvalidArgumentError(fmt::format(
        "[cpumanager] unable to reserve the required amount of CPUs (size of {} did not equal "
        "{})",
        reserved.String(), config.num_reserved_cpus));
  }
  CpuSet reserved_physical;
  for (int cpu : reserved.List()) {
    const CpuInfo* info = topology.Info(cpu);
    if (info == nullptr) {
      return absl::InvalidArgumentError(fmt::format(
          "[cpumanager] unable to build the reserved physical CPUs from the reserved set: "
          "unknown CPU ID: {}",
          cpu));
    }
    reserved_physical.UnionWith(topology.CpusInCore(info->core));
  }
  policy->reserved_ = reserved;
  policy->reserved_physical_ = reserved_physical;
  return policy;
}

// ---- pools ----

CpuSet StaticPolicy::GetAllocatableCpus() const {
  return topology_.AllCpus().Difference(reserved_);
}

CpuSet StaticPolicy::GetAvailableCpus(const CpuState& state) const {
  return state.GetDefaultCpuSet().Difference(reserved_);
}

CpuSet StaticPolicy::GetAvailablePhysicalCpus(const CpuState& state) const {
  return state.GetDefaultCpuSet().Difference(reserved_physical_);
}

CpuSet StaticPolicy::CpusToReuse(const std::string& pod_uid) const {
  auto it = cpus_to_reuse_.find(pod_uid);
  return it == cpus_to_reuse_.end() ? CpuSet() : it->second;
}

// ---- Start ----

absl::Status StaticPolicy::Start(CpuState& state) const {
  const ContainerCpuAssignments& assignments = state.GetCpuAssignments();
  const CpuSet default_set = state.GetDefaultCpuSet();
  CpuSet all = topology_.AllCpus();
  if (options_.strict_cpu_reservation) all.Subtract(reserved_);

  if (default_set.IsEmpty()) {
    if (!assignments.empty()) return absl::FailedPreconditionError("default cpuset cannot be empty");
    state.SetDefaultCpuSet(all);
    return absl::OkStatus();
  }

  if (options_.strict_cpu_reservation) {
    CpuSet both = reserved_.Intersection(default_set);
    if (!both.IsEmpty()) {
      return absl::FailedPreconditionError(fmt::format(
          "some of strictly reserved cpus: \"{}\" are present in defaultCpuSet: \"{}\"",
          both.String(), default_set.String()));
    }
  } else if (!reserved_.IsSubsetOf(default_set)) {
    return absl::FailedPreconditionError(
        fmt::format("not all reserved cpus: \"{}\" are present in defaultCpuSet: \"{}\"",
                    reserved_.String(), default_set.String()));
  }

  // Sorted pod, then container order: the first overlap in that order is reported.
  for (const auto& [pod, containers] : assignments) {
    for (const auto& [name, cpus] : containers) {
      if (default_set.Intersects(cpus)) {
        return absl::FailedPreconditionError(fmt::format(
            "pod: {}, container: {} cpuset: \"{}\" overlaps with default cpuset \"{}\"", pod,
            name, cpus.String(), default_set.String()));
      }
    }
  }

  CpuSet known = default_set;
  for (const auto& [pod, containers] : assignments) {
    for (const auto& [name, cpus] : containers) known.UnionWith(cpus);
  }
  if (gates_.pod_level_resource_managers) {
    for (const auto& [pod, cpus] : state.GetPodCpuAssignments()) known.UnionWith(cpus);
  }
  if (known != all) {
    return absl::FailedPreconditionError(
        fmt::format("current set of available CPUs \"{}\" doesn't match with CPUs in state \"{}\"",
                    all.String(), known.String()));
  }
  return absl::OkStatus();
}

// ---- request sizes ----

bool StaticPolicy::PodLevelPath(const Pod& pod) const {
  return gates_.pod_level_resource_managers && gates_.pod_level_resources &&
         pod.HasPodLevelResources();
}

bool StaticPolicy::SkipsPodLevelPod(const Pod& pod) const {
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
  memo.guaranteed.reserve(pod.init_containers.size() + pod.containers.size());
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const Container& c : *list) memo.guaranteed.emplace_back(&c, GuaranteedCpus(pod, qos, c));
  }
  memo.pod_guaranteed = PodGuaranteedCpus(pod, memo.qos);
  admission_ = std::move(memo);
  admission_->pod_scope = CheckPodScopeResources(pod, admission_->qos);  // with the sizes above
}

int StaticPolicy::GuaranteedCpus(const Pod& pod, const Container& container) const {
  return GuaranteedCpus(pod, PodQos(pod), container);
}

int StaticPolicy::PodGuaranteedCpus(const Pod& pod) const {
  return PodGuaranteedCpus(pod, PodQos(pod));
}

absl::Status StaticPolicy::ValidatePodScopeResources(const Pod& pod) const {
  return ValidatePodScopeResources(pod, PodQos(pod));
}

int StaticPolicy::GuaranteedCpus(const Pod& pod, QosClass qos, const Container& container) const {
  if (const AdmissionMemo* memo = MemoFor(pod); memo != nullptr && memo->qos == qos) {
    for (const auto& [c, cpus] : memo->guaranteed) {
      if (c == &container) return cpus;
    }
  }
  if (qos != QosClass::kGuaranteed) return 0;
  Quantity cpu = QuantityOf(container.resources.requests, CpuKey());
  // Pod-level resource management: only containers that are Guaranteed on their own
  // (cpu and memory request == limit) get exclusive CPUs. The kubelet checks only the
  // PodLevelResourceManagers gate here.
  if (gates_.pod_level_resource_managers && pod.HasPodLevelResources() &&
      !IsContainerEquivalentQosGuaranteed(container)) {
    return 0;
  }
  if (!IsIntegralCpuAmount(cpu)) return 0;
  return Saturate(cpu.Value());
}

int StaticPolicy::PodGuaranteedCpus(const Pod& pod, QosClass qos) const {
  if (const AdmissionMemo* memo = MemoFor(pod); memo != nullptr && memo->qos == qos) {
    return memo->pod_guaranteed;
  }
  if (gates_.pod_level_resource_managers && pod.HasPodLevelResources()) {
    if (qos != QosClass::kGuaranteed) return 0;
    auto it = pod.resources->requests.find(CpuKey());
    if (it != pod.resources->requests.end() && IsIntegralCpuAmount(it->second)) {
      return Saturate(it->second.Value());
    }
    return 0;
  }
  int64_t by_init = 0;
  int64_t by_restartable_init = 0;
  for (const Container& c : pod.init_containers) {
    if (!c.resources.requests.contains(CpuKey())) continue;
    int64_t cpus = GuaranteedCpus(pod, qos, c);
    if (c.IsRestartableInit()) {
      by_restartable_init += cpus;
    } else if (by_restartable_init + cpus > by_init) {
      by_init = by_restartable_init + cpus;
    }
  }
  int64_t by_app = 0;
  for (const Container& c : pod.containers) {
    if (!c.resources.requests.contains(CpuKey())) continue;
    by_app += GuaranteedCpus(pod, qos, c);
  }
  int64_t long_running = by_app + by_restartable_init;
  return Saturate(std::max(by_init, long_running));
}

absl::Status StaticPolicy::ValidatePodScopeResources(const Pod& pod, QosClass qos) const {
  if (const AdmissionMemo* memo = MemoFor(pod); memo != nullptr && memo->qos == qos) {
    return memo->pod_scope;
  }
  return CheckPodScopeResources(pod, qos);
}

absl::Status StaticPolicy::CheckPodScopeResources(const Pod& pod, QosClass qos) const {
  const int64_t total = PodGuaranteedCpus(pod, qos);
  bool has_shared_long_running = false;
  int64_t sum_long_running_exclusive = 0;
  for (const Container& c : pod.init_containers) {
    int64_t g = GuaranteedCpus(pod, qos, c);
    if (!c.IsRestartableInit()) {
      if (g > 0) {
        int64_t pool = total - sum_long_running_exclusive;
        if (g > pool) {
          return TypedAdmissionError(
              kReasonEmptyPodSharedPool,
              fmt::format("pod rejected, largest exclusive init container requests {} cpus, but "
                          "only {} available",
                          g, pool));
        }
      } else if (sum_long_running_exclusive >= total) {
        return TypedAdmissionError(
            kReasonEmptyPodSharedPool,
            "pod rejected, pod has shared init containers but no cpus available for them");
      }
      continue;
    }
    if (g == 0) {
      has_shared_long_running = true;
    } else {
      sum_long_running_exclusive += g;
    }
  }
  for (const Container& c : pod.containers) {
    int64_t g = GuaranteedCpus(pod, qos, c);
    if (g == 0) {
      has_shared_long_running = true;
    } else {
      sum_long_running_exclusive += g;
    }
  }
  if (has_shared_long_running && sum_long_running_exclusive >= total) {
    return TypedAdmissionError(kReasonEmptyPodSharedPool,
                               "pod rejected, sum of exclusive container cpu requests equals pod "
                               "budget, leaving no cpus for shared containers");
  }
  return absl::OkStatus();
}

absl::Status StaticPolicy::EnforceSmtAlignment(const CpuState& state, int num_cpus,
                                               bool check_physical, int preallocated) const {
  if (!options_.full_physical_cpus_only) return absl::OkStatus();
  if (cpu_group_size_ == 0 || num_cpus % cpu_group_size_ != 0) {
    // A topology without cores (CpusPerCore() == 0) would divide by zero in the kubelet;
    // podtopo reports it as misaligned.
    return SmtAlignmentError{num_cpus, cpu_group_size_, 0, false}.ToStatus();
  }
  if (!check_physical) return absl::OkStatus();
  int available_physical = GetAvailablePhysicalCpus(state).Size() + preallocated;
  if (num_cpus > available_physical) {
    return SmtAlignmentError{num_cpus, cpu_group_size_, available_physical, true}.ToStatus();
  }
  return absl::OkStatus();
}

// ---- allocation ----

absl::StatusOr<CpuSet> StaticPolicy::TakeByTopology(const CpuSet& available, int num_cpus,
                                                    int min_numas_from_hint) const {
  CpuSortingStrategy strategy = CpuSortingStrategy::kPacked;
  if (options_.distribute_cpus_across_cores) {
    // k/k #140766: spread by core topology; the versions without it spread in CPU id order.
    strategy = gates_.behavior.distribute_across_cores_by_core_topology
                   ? CpuSortingStrategy::kSpread
                   : CpuSortingStrategy::kSpreadByCpuId;
  }
  if (options_.distribute_cpus_across_numa) {
    int group = options_.full_physical_cpus_only ? cpu_group_size_ : 1;
    // Nothing to take: both algorithms' accumulators are satisfied at once (a group size
    // below 1 is still the distributed algorithm's error).
    if (num_cpus <= 0 && group > 0) return CpuSet();
    return TakeByTopologyNumaDistributed(topology_, available, num_cpus, group, strategy,
                                         options_.align_by_socket, min_numas_from_hint,
                                         gates_.behavior.distribute_remainder_whole_groups,
                                         gates_.behavior.distribute_keeps_best_numa_combination,
                                         &tables_);
  }
  if (num_cpus <= 0) return CpuSet();
  return TakeByTopologyNumaPacked(topology_, available, num_cpus, strategy,
                                  options_.prefer_align_by_uncore_cache, &tables_);
}

CpuSet StaticPolicy::AlignedCpus(BitMask affinity, const CpuSet& allocatable) const {
  std::vector<int> numas = affinity.GetBits();
  if (options_.align_by_socket) {
    std::vector<int> sockets = topology_.SocketsOf(topology_.CpusInNumas(numas));
    return allocatable.Intersection(topology_.CpusInSockets(sockets));
  }
  return allocatable.Intersection(topology_.CpusInNumas(numas));
}

absl::StatusOr<CpuSet> StaticPolicy::AllocateCpus(CpuState& state, int num_cpus,
                                                  const std::optional<BitMask>& affinity,
                                                  const CpuSet& reusable) const {
  CpuSet allocatable = GetAvailableCpus(state).Union(reusable);
  CpuSet result;
  if (affinity.has_value()) {
    CpuSet aligned = AlignedCpus(*affinity, allocatable);
    int num_aligned = std::min(num_cpus, aligned.Size());
    // k/k #139456: the hint's NUMA count is the distributed algorithm's floor.
    const int min_numas = gates_.behavior.distribute_min_numas_from_hint ? affinity->Count() : 0;
    absl::StatusOr<CpuSet> taken = TakeByTopology(aligned, num_aligned, min_numas);
    if (!taken.ok()) return taken.status();
    result.UnionWith(*taken);
  }
  absl::StatusOr<CpuSet> rest =
      TakeByTopology(allocatable.Difference(result), num_cpus - result.Size());
  if (!rest.ok()) return rest.status();
  result.UnionWith(*rest);
  CpuSet remaining = state.GetDefaultCpuSet().Difference(result);
  if (options_.strict_cpu_reservation && remaining.IsEmpty() &&
      gates_.behavior.strict_reservation_keeps_default_set) {
    // k/k #141196: with strict-cpu-reservation the reserved CPUs are not in the default set, so
    // exclusive CPUs can empty it; the kubelet then refuses its own checkpoint at restart
    // ("default cpuset cannot be empty"). The fix proposed in k/k #141197 (not merged) rejects
    // the allocation before the state changes; podtopo does the same.
    return absl::FailedPreconditionError(fmt::format(
        "cannot allocate {} exclusive CPUs: with strict-cpu-reservation the reserved CPUs {} "
        "stay out of the shared pool, and taking CPUs {} would leave the node's shared pool "
        "(default cpuset {}) empty; the kubelet cannot restart from such a checkpoint "
        "(\"default cpuset cannot be empty\", k/k #141196), so podtopo rejects the allocation "
        "as the proposed fix k/k #141197 does (not merged in v1.37)",
        num_cpus, reserved_.String(), result.String(), state.GetDefaultCpuSet().String()));
  }
  state.SetDefaultCpuSet(remaining);
  return result;
}

TopologyHint StaticPolicy::AffinityFor(const std::string& pod_uid,
                                       const std::string& container_name) const {
  if (affinity_ == nullptr) return TopologyHint{};
  return affinity_->GetAffinity(pod_uid, container_name);
}

void StaticPolicy::UpdateCpusToReuse(const Pod& pod, const Container& container,
                                     const CpuSet& cpus) {
  // Only the pod being admitted keeps reuse state.
  for (auto it = cpus_to_reuse_.begin(); it != cpus_to_reuse_.end();) {
    it = it->first != pod.uid ? cpus_to_reuse_.erase(it) : std::next(it);
  }
  CpuSet& reuse = cpus_to_reuse_[pod.uid];
  for (const Container& init : pod.init_containers) {
    if (init.name != container.name) continue;
    if (init.IsRestartableInit()) break;  // a sidecar keeps running: nothing to reuse
    reuse.UnionWith(cpus);
    return;
  }
  reuse.Subtract(cpus);
}

absl::Status StaticPolicy::Allocate(CpuState& state, const Pod& pod, const Container& container) {
  int num_cpus = GuaranteedCpus(pod, container);
  if (num_cpus == 0) return absl::OkStatus();  // shared pool
  if (SkipsPodLevelPod(pod)) return absl::OkStatus();
  // k/k #129079 (fixes #129078): CPUs the container already holds (a restored entry after a
  // restart) count as available, or a running pod with most of the node would be rejected.
  std::optional<CpuSet> existing = state.GetCpuSet(pod.uid, container.name);
  if (absl::Status s = EnforceSmtAlignment(state, num_cpus, /*check_physical=*/true,
                                           existing.has_value() ? existing->Size() : 0);
      !s.ok()) {
    return s;
  }
  if (existing.has_value()) {
    UpdateCpusToReuse(pod, container, *existing);
    return absl::OkStatus();
  }
  TopologyHint hint = AffinityFor(pod.uid, container.name);
  absl::StatusOr<CpuSet> cpus = AllocateCpus(state, num_cpus, hint.affinity, CpusToReuse(pod.uid));
  if (!cpus.ok()) return cpus.status();
  state.SetCpuSet(pod.uid, container.name, *cpus);
  UpdateCpusToReuse(pod, container, *cpus);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<CpuSet>> StaticPolicy::PartitionPodCpus(
    const Pod& pod, QosClass qos, const CpuSet& bubble, const std::map<std::string, CpuSet>& existing) const {
  // The init containers' sets, then the app containers'; nullopt for the pod shared pool.
  std::vector<std::optional<CpuSet>> assigned(pod.init_containers.size() + pod.containers.size());
  auto own = assigned.begin();
  CpuSet sidecars;
  for (const Container& c : pod.init_containers) {
    std::optional<CpuSet>& mine = *own++;
    int n = GuaranteedCpus(pod, qos, c);
    auto found = existing.find(c.name);
    if (found != existing.end()) {
      mine = found->second;
      if (n > 0 && c.IsRestartableInit()) sidecars.UnionWith(found->second);
      continue;
    }
    if (n > 0) {
      absl::StatusOr<CpuSet> cs = TakeByTopology(bubble.Difference(sidecars), n);
      if (!cs.ok()) return cs.status();
      mine = *cs;
      if (c.IsRestartableInit()) sidecars.UnionWith(*cs);  // permanent for the pod's life
    } else if (!c.IsRestartableInit()) {
      // A shared regular init container runs on the whole bubble minus the sidecars so far.
      mine = bubble.Difference(sidecars);
    }
    // A shared sidecar gets the final pod shared pool below.
  }
  CpuSet pool = bubble.Difference(sidecars);
  // Exclusive app slices restored from state leave the pool first, so that slices computed
  // now never overlap them. Without restored entries this is the kubelet's walk exactly.
  const auto apps = own;
  for (const Container& c : pod.containers) {
    std::optional<CpuSet>& mine = *own++;
    auto found = existing.find(c.name);
    if (found == existing.end()) continue;
    mine = found->second;
    if (GuaranteedCpus(pod, qos, c) > 0) pool.Subtract(found->second);
  }
  own = apps;
  for (const Container& c : pod.containers) {
    std::optional<CpuSet>& mine = *own++;
    if (existing.contains(c.name)) continue;
    int n = GuaranteedCpus(pod, qos, c);
    if (n == 0) continue;
    absl::StatusOr<CpuSet> cs = TakeByTopology(pool, n);
    if (!cs.ok()) return cs.status();
    mine = *cs;
    pool.Subtract(*cs);
  }
  std::vector<CpuSet> out;
  out.reserve(assigned.size());
  for (std::optional<CpuSet>& cs : assigned) out.push_back(cs.has_value() ? std::move(*cs) : pool);
  return out;
}

absl::Status StaticPolicy::AllocatePod(CpuState& state, const Pod& pod) {
  if (!PodLevelPath(pod)) return absl::OkStatus();
  const QosClass qos = PodQos(pod);
  int total = PodGuaranteedCpus(pod, qos);
  if (total == 0) return absl::OkStatus();  // the pod runs in the node's shared pool
  if (absl::Status s = ValidatePodScopeResources(pod, qos); !s.ok()) return s;

  std::optional<CpuSet> restored = state.GetPodCpuSet(pod.uid);
  // k/k #140989: a kubelet without #141041 allocates a restored pod as a new one. Its bubble
  // and container entries are overwritten, and the CPUs they held stay out of the default set.
  if (!gates_.behavior.cpu_restore_keeps_pod_cpus) restored.reset();
  // After a restart the pod's CPUs are no longer in the default set, so the physical-CPU
  // count would reject a running pod; only the multiple-of-core check applies then.
  if (absl::Status s = EnforceSmtAlignment(state, total, /*check_physical=*/!restored.has_value());
      !s.ok()) {
    return s;
  }

  CpuSet bubble;
  std::map<std::string, CpuSet> existing;
  if (restored.has_value()) {
    bubble = *restored;
    for (const Container* c : pod.InitAndAppContainers()) {
      if (std::optional<CpuSet> cs = state.GetCpuSet(pod.uid, c->name)) existing[c->name] = *cs;
    }
  } else {
    const Container* first = !pod.init_containers.empty() ? &pod.init_containers.front()
                             : !pod.containers.empty()    ? &pod.containers.front()
                                                          : nullptr;
    TopologyHint hint = first == nullptr ? TopologyHint{} : AffinityFor(pod.uid, first->name);
    absl::StatusOr<CpuSet> allocated = AllocateCpus(state, total, hint.affinity, CpuSet());
    if (!allocated.ok()) return allocated.status();
    bubble = *allocated;
    state.SetPodCpuSet(pod.uid, bubble);
  }

  absl::StatusOr<std::vector<CpuSet>> parts = PartitionPodCpus(pod, qos, bubble, existing);
  if (!parts.ok()) {
    // Give every CPU of the pod back to the default set (the kubelet would leak the bubble).
    CpuSet release = bubble;
    if (auto it = state.GetCpuAssignments().find(pod.uid); it != state.GetCpuAssignments().end()) {
      for (const auto& [name, cpus] : it->second) release.UnionWith(cpus);
    }
    if (options_.strict_cpu_reservation) release.Subtract(reserved_);
    state.SetDefaultCpuSet(state.GetDefaultCpuSet().Union(release));
    state.DeletePod(pod.uid);
    return parts.status();
  }
  auto cpus = parts->begin();
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const Container& c : *list) {
      if (!existing.contains(c.name)) state.SetCpuSet(pod.uid, c.name, *cpus);
      ++cpus;
    }
  }
  return absl::OkStatus();
}

absl::Status StaticPolicy::RemoveContainer(CpuState& state, const std::string& pod_uid,
                                           const std::string& container_name) {
  std::optional<CpuSet> to_release = state.Delete(pod_uid, container_name);
  if (!to_release.has_value()) return absl::OkStatus();

  if (gates_.pod_level_resource_managers) {
    const PodCpuAssignments& bubbles = state.GetPodCpuAssignments();
    if (auto bubble = bubbles.find(pod_uid); bubble != bubbles.end()) {
      // The bubble goes back only with the pod's last container; exclusive slices of removed
      // containers are not returned to the pod's shared pool.
      if (!state.HasContainerEntries(pod_uid)) {
        state.SetDefaultCpuSet(state.GetDefaultCpuSet().Union(bubble->second));
        state.DeletePod(pod_uid);
      }
      return absl::OkStatus();
    }
  }

  CpuSet in_use;
  if (auto it = state.GetCpuAssignments().find(pod_uid); it != state.GetCpuAssignments().end()) {
    for (const auto& [name, cpus] : it->second) {
      if (name != container_name) in_use.UnionWith(cpus);
    }
  }
  state.SetDefaultCpuSet(state.GetDefaultCpuSet().Union(to_release->Difference(in_use)));
  return absl::OkStatus();
}

// ---- hints ----

bool StaticPolicy::IsHintSocketAligned(BitMask mask, int min_affinity_size) const {
  if (topology_.num_sockets == 0) return false;  // the kubelet divides by zero here
  int numas_per_socket = topology_.num_numa_nodes / topology_.num_sockets;
  if (numas_per_socket == 0) return false;
  int min_sockets = (min_affinity_size + numas_per_socket - 1) / numas_per_socket;
  int sockets = static_cast<int>(topology_.SocketsOf(topology_.CpusInNumas(mask.GetBits())).size());
  return sockets == min_sockets;
}

std::vector<TopologyHint> StaticPolicy::GenerateCpuTopologyHints(const CpuSet& available,
                                                                 const CpuSet& reusable,
                                                                 int request) const {
  std::vector<int> numa_nodes = topology_.NumaNodes();
  int min_affinity_size = static_cast<int>(numa_nodes.size());
  // NUMA of a CPU; an unknown CPU reads as NUMA 0 (a Go map's zero value).
  auto numa_of = [&](int cpu) {
    const CpuInfo* info = topology_.Info(cpu);
    return info == nullptr ? 0 : info->numa;
  };
  // Per-NUMA counts, so each mask costs a few lookups (same sums as the kubelet's CPU walks).
  std::map<int, int> available_per_numa;
  available.ForEach([&](int cpu) { ++available_per_numa[numa_of(cpu)]; });
  std::set<int> reusable_numas;
  reusable.ForEach([&](int cpu) { reusable_numas.insert(numa_of(cpu)); });
  const int reusable_count = reusable.Size();

  std::vector<TopologyHint> hints;
  // NUMA ids beyond 63 cannot form a mask; no hint is generated then.
  (void)topologymanager::IterateBitMasks(numa_nodes, [&](BitMask mask) {
    int cpus_in_mask = topology_.CpusInNumas(mask.GetBits()).Size();
    if (cpus_in_mask >= request && mask.Count() < min_affinity_size) {
      min_affinity_size = mask.Count();
    }
    // Every reusable CPU must lie inside the mask.
    for (int numa : reusable_numas) {
      if (!mask.IsSet(numa)) return;
    }
    int matching = reusable_count;
    for (const auto& [numa, count] : available_per_numa) {
      if (mask.IsSet(numa)) matching += count;
    }
    if (matching < request) return;
    hints.push_back(TopologyHint{mask, false});
  });
  for (TopologyHint& hint : hints) {
    if (options_.align_by_socket && IsHintSocketAligned(*hint.affinity, min_affinity_size)) {
      hint.preferred = true;
      continue;
    }
    if (hint.affinity->Count() == min_affinity_size) hint.preferred = true;
  }
  return hints;
}

namespace {

// The CPU Manager's answer: one "cpu" entry, moved in (an initializer list would copy it).
HintSetMap CpuHints(topologymanager::HintSet set) {
  HintSetMap out;
  out.emplace(kResourceCpu, std::move(set));
  return out;
}

}  // namespace

HintSetMap StaticPolicy::GetTopologyHintSets(const CpuState& state, const Pod& pod,
                                             const Container& container) const {
  int requested = GuaranteedCpus(pod, container);
  if (requested == 0) return {};
  if (SkipsPodLevelPod(pod)) return {};
  if (std::optional<CpuSet> allocated = state.GetCpuSet(pod.uid, container.name)) {
    if (allocated->Size() != requested) return CpuHints(topologymanager::HintSet());
    return CpuHints(CpuHintSet(*allocated, CpuSet(), requested));
  }
  return CpuHints(CpuHintSet(GetAvailableCpus(state), CpusToReuse(pod.uid), requested));
}

HintSetMap StaticPolicy::GetPodTopologyHintSets(const CpuState& state, const Pod& pod) const {
  const QosClass qos = PodQos(pod);
  int requested = PodGuaranteedCpus(pod, qos);
  if (requested == 0) return {};
  if (SkipsPodLevelPod(pod)) return {};
  if (gates_.pod_level_resource_managers && pod.HasPodLevelResources()) {
    if (!ValidatePodScopeResources(pod, qos).ok()) return CpuHints(topologymanager::HintSet());
    // k/k #141041: a restored pod regenerates its hints from the checkpointed bubble (the
    // per-container check below would wrongly reject its pod-shared-pool containers).
    // Without #141041 the per-container check below runs for pod-level pods too (k/k #140989).
    std::optional<CpuSet> bubble = state.GetPodCpuSet(pod.uid);
    if (bubble.has_value() && gates_.behavior.cpu_restore_keeps_pod_cpus) {
      if (bubble->Size() != requested) return CpuHints(topologymanager::HintSet());
      return CpuHints(CpuHintSet(*bubble, CpuSet(), requested));
    }
    if (!bubble.has_value()) {
      return CpuHints(CpuHintSet(GetAvailableCpus(state), CpusToReuse(pod.uid), requested));
    }
  }

  CpuSet assigned;
  for (const Container* c : pod.InitAndAppContainers()) {
    int by_container = GuaranteedCpus(pod, qos, *c);
    if (std::optional<CpuSet> allocated = state.GetCpuSet(pod.uid, c->name)) {
      if (allocated->Size() != by_container) return CpuHints(topologymanager::HintSet());
      assigned.UnionWith(*allocated);
    }
  }
  if (assigned.Size() == requested) {
    return CpuHints(CpuHintSet(assigned, CpuSet(), requested));
  }
  CpuSet reusable = CpusToReuse(pod.uid).Union(assigned);
  return CpuHints(CpuHintSet(GetAvailableCpus(state), reusable, requested));
}

namespace {

TopologyHintMap Enumerated(const HintSetMap& sets) {
  TopologyHintMap out;
  for (const auto& [resource, set] : sets) out[resource] = set.Enumerate();
  return out;
}

}  // namespace

TopologyHintMap StaticPolicy::GetTopologyHints(const CpuState& state, const Pod& pod,
                                               const Container& container) const {
  return Enumerated(GetTopologyHintSets(state, pod, container));
}

TopologyHintMap StaticPolicy::GetPodTopologyHints(const CpuState& state, const Pod& pod) const {
  return Enumerated(GetPodTopologyHintSets(state, pod));
}

topologymanager::HintSet StaticPolicy::CpuHintSet(const CpuSet& available, const CpuSet& reusable,
                                                  int request) const {
  using topologymanager::CoverRule;
  using topologymanager::MaskFamily;
  using topologymanager::PreferenceRule;
  if (exhaustive_hints_) return GenerateCpuTopologyHints(available, reusable, request);
  const HintTables& t = hint_tables_;
  if (t.unmaskable) return topologymanager::HintSet();
  const uint64_t nodes = t.nodes;
  auto numa_of = [&](int cpu) {
    const CpuInfo* info = topology_.Info(cpu);
    return info == nullptr ? 0 : info->numa;  // an unknown CPU reads as NUMA 0 (Go map)
  };
  // minAffinitySize: the fewest NUMA nodes whose CPUs could hold the request at all.
  MaskFamily capacity{nodes, 0, 1, {t.capacity}};
  capacity.rules[0].need = request < 0 ? 0 : static_cast<uint64_t>(request);
  PreferenceRule preference;
  preference.count = capacity.MinCount().value_or(t.numa_count);
  if (t.numa_per_socket > 0) {  // align-by-socket
    preference.sockets = (preference.count + t.numa_per_socket - 1) / t.numa_per_socket;
    preference.node_sockets = t.node_sockets;
  }
  // The mask must hold every reusable CPU and, with them, the request.
  MaskFamily family;
  family.domain = nodes;
  bool reusable_outside = false;
  reusable.ForEach([&](int cpu) {
    int numa = numa_of(cpu);
    if (numa < 0 || numa > 63 || !((nodes >> numa) & 1)) {
      reusable_outside = true;
    } else {
      family.required |= uint64_t{1} << numa;
    }
  });
  CoverRule& free = family.rules.emplace_back();
  const int64_t missing = int64_t{request} - reusable.Size();
  free.need = missing > 0 ? static_cast<uint64_t>(missing) : 0;
  int known = 0;
  for (const auto& [numa, cpus] : t.numa_cpus) {
    const int n = available.IntersectionSize(cpus);
    free.weight[static_cast<size_t>(numa)] = static_cast<uint64_t>(n);
    known += n;
  }
  // CPUs the topology does not know read as NUMA 0.
  free.weight[0] += static_cast<uint64_t>(available.Size() - known);
  std::optional<MaskFamily> members;
  if (!reusable_outside) members = std::move(family);
  return topologymanager::HintSet::FromMasks(nodes, std::move(members), {}, std::move(preference));
}

// ---- isolation and classification ----

ResourceIsolationLevel StaticPolicy::GetResourceIsolationLevel(const CpuState& state,
                                                               const Pod& pod,
                                                               const Container& container) const {
  if (!state.GetCpuSet(pod.uid, container.name).has_value()) return ResourceIsolationLevel::kHost;
  if (gates_.pod_level_resource_managers && pod.HasPodLevelResources()) {
    bool qualifies = IsContainerEquivalentQosGuaranteed(container) &&
                     IsIntegralCpuAmount(QuantityOf(container.resources.limits, CpuKey()));
    if (!qualifies) return ResourceIsolationLevel::kPod;
  }
  return ResourceIsolationLevel::kContainer;
}

ContainerAssignment StaticPolicy::ClassifyContainer(const CpuState& state, const Pod& pod,
                                                    const Container& container) const {
  return ClassifyContainer(state, pod, PodQos(pod), container);
}

ContainerAssignment StaticPolicy::ClassifyContainer(const CpuState& state, const Pod& pod,
                                                    QosClass qos,
                                                    const Container& container) const {
  const auto& entries = state.GetCpuAssignments();
  auto pod_entries = entries.find(pod.uid);
  if (pod_entries == entries.end() || !pod_entries->second.contains(container.name)) {
    return ContainerAssignment::kNodeShared;
  }
  if (state.GetPodCpuAssignments().contains(pod.uid)) {
    return GuaranteedCpus(pod, qos, container) > 0 ? ContainerAssignment::kPodExclusive
                                                   : ContainerAssignment::kPodShared;
  }
  return ContainerAssignment::kNodeExclusive;
}

// ---- debug ----

absl::StatusOr<CpuSet> DebugTakeCpus(const CpuTopology& topology, const CpuSet& available,
                                     int count, const std::map<std::string, std::string>& options,
                                     std::optional<std::vector<int>> numa_affinity) {
  absl::StatusOr<StaticPolicyOptions> opts =
      NewStaticPolicyOptions(options, OptionGates::AllEnabled());
  if (!opts.ok()) return opts.status();
  // strict-cpu-reservation's empty-pool refusal is an admission check, not part of the take.
  opts->strict_cpu_reservation = false;
  StaticPolicy policy(topology, *opts, StaticPolicyGates{}, nullptr);
  if (!numa_affinity.has_value()) return policy.TakeByTopology(available, count);
  absl::StatusOr<BitMask> mask = topologymanager::NewBitMask(*numa_affinity);
  if (!mask.ok()) return mask.status();
  CpuState state;
  state.SetDefaultCpuSet(available);
  return policy.AllocateCpus(state, count, *mask, CpuSet());
}

}  // namespace podtopo::cpumanager
