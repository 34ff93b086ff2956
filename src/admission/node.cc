#include "admission/node.h"

#include <bit>

#include <algorithm>

#include "kubelet/admission_error.h"
#include "kubelet/version.h"
#include "admission/pod_record.h"
#include "admission/pod_requests.h"
#include "admission/state_files.h"
#include "api/pod_gates.h"
#include "cpumanager/static_policy.h"
#include "devicemanager/device_manager.h"
#include "util/format.h"
#include "memorymanager/reserved_memory.h"
#include "memorymanager/static_policy.h"
#include "topologymanager/policy.h"
#include "topologymanager/scope.h"
#include "util/dir_lock.h"
#include "util/file.h"

namespace podtopo {

using topologymanager::HintList;
using topologymanager::ProviderHints;
using topologymanager::ProvidersHints;
using topologymanager::TopologyHint;

namespace {

constexpr char kRejectedPrefix[] = "Pod was rejected: ";

ProviderHints FromMap(std::map<std::string, topologymanager::HintSet>&& m) {
  std::map<std::string, HintList> out;
  for (auto& [res, hints] : m) out.emplace_hint(out.end(), res, std::move(hints));
  return out;
}

ProviderHints FromOptionalMap(std::optional<std::map<std::string, topologymanager::HintSet>>&& m) {
  if (!m.has_value()) return std::nullopt;
  return FromMap(std::move(*m));
}

// The memory manager's blocks (null: none) as the result shows them.
std::vector<MemoryBlockView> Blocks(const std::vector<memorymanager::Block>* blocks) {
  std::vector<MemoryBlockView> out;
  if (blocks == nullptr) return out;
  out.reserve(blocks->size());
  for (const auto& b : *blocks) out.push_back({b.type, b.size, b.numa_affinity});
  return out;
}

std::string JoinPath(const std::string& dir, const char* file) {
  return dir.empty() ? std::string(file) : dir + "/" + file;
}

}  // namespace

class Node::Impl : public cpumanager::AffinityStore, public memorymanager::AffinityStore {
 public:
  NodeTopology topology;
  config::KubeletConfig config;
  Options options;
  // The state dir's lock (util/dir_lock.h), held while this node may write the directory.
  std::shared_ptr<DirLock> state_lock;
  bool pod_level_resources = true;
  bool pod_level_managers = false;
  PodGates pod_gates;  // PodLevelResources and its fix gates, for GetPodQos

  // The Topology Manager: policy, scope and the hints it stores per container.
  std::unique_ptr<topologymanager::Manager> tm;
  std::unique_ptr<cpumanager::StaticPolicy> cpu;  // null with the none policy
  cpumanager::CpuState cpu_state;
  std::optional<memorymanager::StaticPolicy> memory;  // nullopt with policy None
  memorymanager::MemoryState memory_state;
  // The checkpoints as restored from the state dir: what they hold beyond the managers' state
  // (members podtopo does not model, resize baselines) goes into every rewrite.
  std::optional<checkpoint::CpuCheckpoint> cpu_read;
  std::optional<checkpoint::MemoryCheckpoint> memory_read;
  devicemanager::DeviceManager devices;

  // Hint providers in the kubelet's registration order: devices, CPU, memory.
  std::vector<std::unique_ptr<topologymanager::HintProvider>> providers;
  std::vector<Pod> admitted;  // admission order
  // For the node-fit check, kept with `admitted` by AddAdmitted / EraseAdmitted: each pod's
  // PodFitAmounts (same order) and their sum.
  std::vector<FitAmounts> admitted_amounts;
  FitAmounts admitted_fit;
  void AddAdmitted(Pod pod, FitAmounts amounts) {
    for (const auto& [name, amount] : amounts) admitted_fit[name] += amount;
    admitted.push_back(std::move(pod));
    admitted_amounts.push_back(std::move(amounts));
  }
  // Removes admitted[i] and returns it with its amounts.
  std::pair<Pod, FitAmounts> EraseAdmitted(size_t i) {
    for (const auto& [name, amount] : admitted_amounts[i]) admitted_fit[name] -= amount;
    std::pair<Pod, FitAmounts> out{std::move(admitted[i]), std::move(admitted_amounts[i])};
    admitted.erase(admitted.begin() + static_cast<std::ptrdiff_t>(i));
    admitted_amounts.erase(admitted_amounts.begin() + static_cast<std::ptrdiff_t>(i));
    return out;
  }
  ResourceList allocatable;
  // Whether Admit fills PodAllocation::trace (Node::set_tracing).
  bool tracing = true;
  // The trace of the admission in progress (null outside Admit and when not tracing).
  AdmissionTrace* trace = nullptr;

  // While one pod is admitted: the managers take its QoS class (computed once by Admit) and
  // compute its request sizes once (StaticPolicy::BeginPod, DeviceManager::BeginPod).
  struct PodScope {
    PodScope(Impl& impl, const Pod& pod, QosClass qos) : m(impl) {
      if (m.cpu != nullptr) m.cpu->BeginPod(pod, qos);
      if (m.memory.has_value()) m.memory->BeginPod(pod, qos);
      m.devices.BeginPod(pod);
    }
    ~PodScope() {
      m.devices.EndPod();
      if (m.cpu != nullptr) m.cpu->EndPod();
      if (m.memory.has_value()) m.memory->EndPod();
    }
    Impl& m;
  };

  // Starts a merge step of the trace (the first provider's hint call does it).
  void BeginStep(const Pod& pod, const Container* container);
  // Appends one provider's hints to the current merge step.
  void RecordHints(const char* provider, const ProviderHints& hints) {
    if (trace == nullptr || trace->merges.empty()) return;
    trace->merges.back().providers.push_back({provider, hints});
  }
  // Records a provider's allocation error.
  void RecordFailure(const char* provider, const Container* container, const absl::Status& s) {
    if (trace == nullptr || s.ok() || trace->allocation_failure.has_value()) return;
    AdmitResult r = GetPodAdmitResult(s);
    trace->allocation_failure =
        AllocationFailure{provider, container == nullptr ? "" : container->name, r.reason,
                          std::string(s.message())};
  }
  std::vector<NumaSnapshot> Snapshot() const;
  void FillTraceHeader(const Pod& pod, QosClass qos, AdmissionTrace& t) const;

  TopologyHint GetAffinity(const std::string& pod_uid,
                           const std::string& container_name) const override {
    return tm->GetAffinity(pod_uid, container_name);
  }

  absl::Status Init();
  absl::Status Restore();
  // Options::occupied: the synthetic holder takes its resources (after Restore).
  absl::Status Occupy(const Options::Occupied& occupied);
  // Restore's re-admission for Options::restart: every pod's outcome into the report.
  absl::Status PredictRestart(const std::vector<PodRecordEntry>& pods);
  std::pair<CpuSet, std::vector<int>> Holdings(const std::string& uid) const;
  std::map<std::string, int64_t> UnassignedReserved() const;
  CpuSet DefaultCpus() const { return cpu != nullptr ? cpu_state.GetDefaultCpuSet() : CpuSet(); }
  absl::Status Save() const;
  // podtopo's record of the admitted pods (admission/pod_record.h), as Save writes it.
  std::vector<PodRecordEntry> Record() const;
  // Takes admitted[i], for every i in `indices`, off the node: podtopo's record is written
  // without them first (with a state dir, not read-only), then their resources are released
  // in memory; the caller writes the checkpoints (Save). A crash after the record write leaves
  // stale checkpoint entries, which the next start releases: never a recorded pod without its
  // allocation. A failed record write changes nothing.
  absl::Status TakeOff(std::vector<size_t> indices);

  // The node-fit check of a pod whose PodFitAmounts are `request`.
  std::optional<AdmitResult> CheckFit(const FitAmounts& request) const;
  void Release(const Pod& pod);
  // What the kubelet does to an admitted pod when it restarts: re-admit it against the state
  // it holds now (hints regenerated from its allocation, idempotent allocation). Returns that
  // admission's rejection, or nullopt when the pod survives a restart. Changes no state.
  std::optional<AdmitResult> RestartRejection(const Pod& pod, std::string* hints);
  std::map<std::string, TopologyHint> StoredHints(const Pod& pod) const;
  PodAllocation View(const Pod& pod) const { return View(pod, GetPodQos(pod, pod_gates)); }
  // The same, with the pod's QoS class already known.
  PodAllocation View(const Pod& pod, QosClass qos) const;
  const Pod* Find(const std::string& ns, const std::string& name) const {
    for (const auto& p : admitted) {
      if (p.namespace_name == ns && p.name == name) return &p;
    }
    return nullptr;
  }
};

namespace {

using topologymanager::Operation;

// The managers as the Topology Manager's hint providers, in the kubelet's registration order:
// device manager, CPU Manager, Memory Manager.
class DeviceProvider : public topologymanager::HintProvider {
 public:
  explicit DeviceProvider(Node::Impl& m) : m_(m) {}
  ProviderHints GetTopologyHints(const Pod& pod, const Container& c, Operation) override {
    m_.BeginStep(pod, &c);
    ProviderHints h = m_.devices.GetTopologyHints(pod, c);
    m_.RecordHints("devices", h);
    return h;
  }
  ProviderHints GetPodTopologyHints(const Pod& pod, Operation) override {
    m_.BeginStep(pod, nullptr);
    ProviderHints h = m_.devices.GetPodTopologyHints(pod);
    m_.RecordHints("devices", h);
    return h;
  }
  absl::Status Allocate(const Pod& pod, const Container& c, Operation) override {
    absl::Status s = m_.devices.Allocate(pod, c, m_.GetAffinity(pod.uid, c.name));
    m_.RecordFailure("devices", &c, s);
    return s;
  }
  // The kubelet's device manager defers pod-level device allocation to container start, where
  // it uses the same stored hint; podtopo allocates the devices here.
  absl::Status AllocatePod(const Pod& pod, Operation op) override {
    for (const auto* list : {&pod.init_containers, &pod.containers}) {
      for (const Container& c : *list) {
        if (auto s = Allocate(pod, c, op); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

 private:
  Node::Impl& m_;
};

class CpuProvider : public topologymanager::HintProvider {
 public:
  explicit CpuProvider(Node::Impl& m) : m_(m) {}
  ProviderHints GetTopologyHints(const Pod& pod, const Container& c, Operation) override {
    ProviderHints h = FromMap(m_.cpu->GetTopologyHintSets(m_.cpu_state, pod, c));
    m_.RecordHints("cpu", h);
    return h;
  }
  ProviderHints GetPodTopologyHints(const Pod& pod, Operation) override {
    ProviderHints h = FromMap(m_.cpu->GetPodTopologyHintSets(m_.cpu_state, pod));
    m_.RecordHints("cpu", h);
    return h;
  }
  absl::Status Allocate(const Pod& pod, const Container& c, Operation) override {
    absl::Status s = m_.cpu->Allocate(m_.cpu_state, pod, c);
    m_.RecordFailure("cpu", &c, s);
    return s;
  }
  absl::Status AllocatePod(const Pod& pod, Operation) override {
    absl::Status s = m_.cpu->AllocatePod(m_.cpu_state, pod);
    m_.RecordFailure("cpu", nullptr, s);
    return s;
  }

 private:
  Node::Impl& m_;
};

class MemoryProvider : public topologymanager::HintProvider {
 public:
  explicit MemoryProvider(Node::Impl& m) : m_(m) {}
  ProviderHints GetTopologyHints(const Pod& pod, const Container& c, Operation) override {
    ProviderHints h = FromOptionalMap(m_.memory->GetTopologyHintSets(m_.memory_state, pod, c));
    m_.RecordHints("memory", h);
    return h;
  }
  ProviderHints GetPodTopologyHints(const Pod& pod, Operation) override {
    ProviderHints h = FromOptionalMap(m_.memory->GetPodTopologyHintSets(m_.memory_state, pod));
    m_.RecordHints("memory", h);
    return h;
  }
  absl::Status Allocate(const Pod& pod, const Container& c, Operation) override {
    absl::Status s = m_.memory->Allocate(m_.memory_state, pod, c);
    m_.RecordFailure("memory", &c, s);
    return s;
  }
  absl::Status AllocatePod(const Pod& pod, Operation) override {
    absl::Status s = m_.memory->AllocatePod(m_.memory_state, pod);
    m_.RecordFailure("memory", nullptr, s);
    return s;
  }

 private:
  Node::Impl& m_;
};

}  // namespace

absl::Status Node::Impl::Init() {
  pod_level_resources = config.FeatureEnabled("PodLevelResources");
  pod_level_managers = config.FeatureEnabled("PodLevelResourceManagers");
  pod_gates = PodGatesFromConfig(config);
  // The version's decisions; its restart bugs only where a restart is predicted.
  const kubelet::Behavior behavior = options.restart != nullptr
                                         ? config.VersionBehavior()
                                         : config.VersionBehavior().WithoutRestart();

  ResourceList capacity = NodeCapacity(topology);
  std::vector<config::Finding> findings = config.Validate(&capacity);
  if (config::HasErrors(findings)) return config::ErrorsToStatus(findings);
  allocatable = NodeAllocatable(topology, config);

  // Topology Manager.
  std::vector<topologymanager::NUMANode> numa;
  std::vector<int> numa_ids = topology.NumaIds();
  if (numa_ids.empty()) numa_ids = topology.cpus.NumaNodes();
  for (size_t i = 0; i < topology.numa_nodes.size(); ++i) {
    const NumaNode& n = topology.numa_nodes[i];
    topologymanager::NUMANode tn{n.id, std::nullopt};
    if (!n.distances.empty()) {
      int max_id = *std::max_element(numa_ids.begin(), numa_ids.end());
      std::vector<uint64_t> row(static_cast<size_t>(std::max(max_id, 0) + 1), 0);
      for (size_t j = 0; j < n.distances.size() && j < topology.numa_nodes.size(); ++j) {
        int to = topology.numa_nodes[j].id;
        if (to >= 0 && static_cast<size_t>(to) < row.size()) row[static_cast<size_t>(to)] = n.distances[j];
      }
      tn.distances = std::move(row);
    }
    numa.push_back(std::move(tn));
  }
  if (numa.empty()) {
    for (int id : numa_ids) numa.push_back({id, std::nullopt});
  }
  topologymanager::PolicyOptionGates tm_gates{
      config.FeatureEnabled("TopologyManagerPolicyAlphaOptions"),
      config.FeatureEnabled("TopologyManagerPolicyBetaOptions")};
  auto manager = topologymanager::NewManager(numa, config.topology_manager_policy,
                                             config.topology_manager_scope,
                                             config.topology_manager_policy_options, tm_gates,
                                             {pod_level_managers && pod_level_resources});
  if (!manager.ok()) {
    const std::string fix = NumaNodeLimitFix(topology, config);
    return absl::InvalidArgumentError(fmt::format("topologyManagerPolicy: {}{}",
                                                  manager.status().message(),
                                                  fix.empty() ? "" : "; " + fix));
  }
  tm = std::move(*manager);

  // CPU Manager.
  if (config.cpu_manager_policy == "static") {
    cpumanager::StaticPolicyConfig cc;
    cc.num_reserved_cpus = config.NumReservedCpus();
    auto reserved = config.ReservedSystemCpuSet();
    if (!reserved.ok()) return reserved.status();
    cc.reserved_system_cpus = *reserved;
    cc.options = config.cpu_manager_policy_options;
    cc.topology_manager_policy = config.topology_manager_policy;
    cc.gates.pod_level_resources = pod_level_resources;
    cc.gates.pod_level_resource_managers = pod_level_managers;
    cc.gates.fix_kubelet_qos_class = pod_gates.fix_kubelet_qos_class;
    cc.gates.options = {config.FeatureEnabled("CPUManagerPolicyAlphaOptions"),
                        config.FeatureEnabled("CPUManagerPolicyBetaOptions")};
    cc.gates.behavior = behavior;
    if (cc.num_reserved_cpus == 0 && cc.reserved_system_cpus.IsEmpty()) {
      return absl::InvalidArgumentError(
          "cpuManagerPolicy: [cpumanager] the static policy requires systemreserved.cpu + "
          "kubereserved.cpu to be greater than zero");
    }
    auto p = cpumanager::StaticPolicy::Create(topology.cpus, cc, this);
    if (!p.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("cpuManagerPolicy: new static policy error: {}", p.status().message()));
    }
    cpu = std::move(*p);
    cpu->set_exhaustive_hints(options.exhaustive_hints);
  }

  // Memory Manager.
  if (config.memory_manager_policy == "Static") {
    auto machine = memorymanager::MachineNumaNodesFromTopology(topology);
    if (!machine.ok()) return machine.status();
    std::vector<int> ids;
    for (const auto& n : *machine) ids.push_back(n.id);
    std::vector<memorymanager::MemoryReservation> reservations;
    for (const auto& r : config.reserved_memory) reservations.push_back({r.numa_node, r.limits});
    auto reserved = memorymanager::GetSystemReservedMemory(
        ids, config.NodeAllocatableReservation(capacity), reservations);
    if (!reserved.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("reservedMemory: {}", reserved.status().message()));
    }
    memorymanager::PolicyGates gates{pod_level_resources, pod_level_managers,
                                     pod_gates.fix_kubelet_qos_class, behavior};
    auto p = memorymanager::StaticPolicy::New(*machine, *reserved, this, gates);
    if (!p.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("memoryManagerPolicy: {}", p.status().message()));
    }
    memory.emplace(std::move(*p));
    memory->set_exhaustive_hints(options.exhaustive_hints);
  }

  devices = devicemanager::DeviceManager(topology.devices, numa_ids);
  devices.set_exhaustive_hints(options.exhaustive_hints);
  providers.push_back(std::make_unique<DeviceProvider>(*this));
  if (cpu != nullptr) providers.push_back(std::make_unique<CpuProvider>(*this));
  if (memory.has_value()) providers.push_back(std::make_unique<MemoryProvider>(*this));
  for (auto& p : providers) tm->AddHintProvider(p.get());
  return absl::OkStatus();
}

absl::Status Node::Impl::Restore() {
  const std::string& dir = options.state_dir;
  // Podtopo's record first: it says which pods are admitted.
  std::vector<PodRecordEntry> record;
  if (!dir.empty()) {
    std::string path = JoinPath(dir, kPodRecordFile);
    auto text = ReadFile(path);
    if (options.running_pods != nullptr) {
      for (const Pod& pod : *options.running_pods) record.push_back(PodRecordEntry{pod, {}, {}});
    } else if (text.ok()) {
      auto parsed = ParsePodRecord(*text, path);
      if (!parsed.ok()) return parsed.status();
      record = std::move(*parsed);
    } else if (text.status().code() != absl::StatusCode::kNotFound) {
      return text.status();
    }
  }

  // Both checkpoints are read whatever the policies are: a kubelet with the none policies
  // keeps them too, and refuses to start when the file names another policy.
  if (!dir.empty()) {
    std::string path = JoinPath(dir, kCpuManagerStateFile);
    auto cp = checkpoint::LoadCpuCheckpointFile(path, CpuLoadOptionsFor(config));
    if (!cp.ok()) return cp.status();
    cpu_read = *cp;
    if (cp->has_value() && cpu != nullptr) {
      auto st = CpuStateFromCheckpoint(**cp, path);
      if (!st.ok()) return st.status();
      cpu_state = std::move(*st);
    }
  }
  if (cpu != nullptr) {
    if (auto s = cpu->Start(cpu_state); !s.ok()) {
      return absl::FailedPreconditionError(fmt::format(
          "{}: {} (the kubelet refuses to start with this state: drain the node and delete the "
          "CPU manager checkpoint file before restarting it)",
          JoinPath(dir, kCpuManagerStateFile), s.message()));
    }
  }
  if (!dir.empty()) {
    std::string path = JoinPath(dir, kMemoryManagerStateFile);
    auto cp = checkpoint::LoadMemoryCheckpointFile(path, MemoryLoadOptionsFor(config));
    if (!cp.ok()) return cp.status();
    memory_read = *cp;
    if (cp->has_value() && memory.has_value()) memory_state = MemoryStateFromCheckpoint(**cp);
  }
  if (memory.has_value()) {
    if (auto s = memory->Start(memory_state); !s.ok()) {
      return absl::FailedPreconditionError(fmt::format(
          "{}: {} (the kubelet refuses to start with this state: drain the node and delete the "
          "memory manager checkpoint file before restarting it)",
          JoinPath(dir, kMemoryManagerStateFile), s.message()));
    }
  }

  // Reconcile: checkpoint entries of pods the record does not list are stale (a crash between
  // writing the checkpoints and the record, or a pod removed from the record first) and are
  // released, as the kubelet's removeStaleState does for pods that are no longer active.
  std::set<std::string> known;
  for (const auto& e : record) known.insert(e.pod.uid);
  if (cpu != nullptr) {
    std::set<std::pair<std::string, std::string>> stale;
    for (const auto& [uid, containers] : cpu_state.GetCpuAssignments()) {
      if (known.count(uid)) continue;
      for (const auto& [name, _] : containers) stale.insert({uid, name});
    }
    for (const auto& [uid, name] : stale) (void)cpu->RemoveContainer(cpu_state, uid, name);
    std::vector<std::string> stale_pods;
    for (const auto& [uid, _] : cpu_state.GetPodCpuAssignments()) {
      if (!known.count(uid)) stale_pods.push_back(uid);
    }
    for (const auto& uid : stale_pods) {
      cpu_state.SetDefaultCpuSet(
          cpu_state.GetDefaultCpuSet().Union(*cpu_state.GetPodCpuSet(uid)));
      cpu_state.DeletePod(uid);
    }
  }
  if (memory.has_value()) {
    std::set<std::pair<std::string, std::string>> stale;
    for (const auto& [uid, containers] : memory_state.assignments) {
      if (known.count(uid)) continue;
      for (const auto& [name, _] : containers) stale.insert({uid, name});
    }
    // The pod budget goes with the pod's last container; pod entries without any container
    // entry (#141993) were already dropped by Start.
    for (const auto& [uid, name] : stale) memory->RemoveContainer(memory_state, uid, name);
  }

  if (options.restart != nullptr) return PredictRestart(record);

  // Re-admit the recorded pods as a restarted kubelet does: hints are restored, allocation is
  // idempotent (existing entries are kept; missing ones are computed).
  for (auto& e : record) {
    for (const auto& [name, hint] : e.hints) tm->SetAffinity(e.pod.uid, name, hint);
    for (const auto& [name, devs] : e.devices) {
      if (auto s = devices.Restore(e.pod.uid, name, devs); !s.ok()) return s;
    }
    AdmitResult r = tm->Admit(e.pod);
    if (!r.admit) {
      return absl::FailedPreconditionError(fmt::format(
          "{}: pod {} was admitted before but cannot be restored: {}: {}",
          JoinPath(dir, kPodRecordFile), e.pod.Key(), r.reason, r.message));
    }
    AddAdmitted(e.pod, PodFitAmounts(e.pod, pod_level_resources));
  }
  return absl::OkStatus();
}

absl::Status Node::Impl::Occupy(const Options::Occupied& o) {
  if (!options.state_dir.empty()) {
    return absl::InvalidArgumentError("occupied: needs an in-memory node (no state dir)");
  }
  const std::string uid = kOccupiedHolderUid;
  const std::string name = "occupied";
  if (cpu != nullptr && !o.cpus.IsEmpty()) {
    CpuSet shared = cpu_state.GetDefaultCpuSet();
    CpuSet allocatable = cpu->GetAllocatableCpus();
    for (int c : o.cpus.List()) {
      if (!shared.Contains(c) || !allocatable.Contains(c)) {
        return absl::InvalidArgumentError(fmt::format(
            "occupied: CPU {} is not an allocatable CPU of the default set of {}", c,
            topology.source.empty() ? "the node" : topology.source));
      }
    }
    cpu_state.SetCpuSet(uid, name, o.cpus);
    cpu_state.SetDefaultCpuSet(shared.Difference(o.cpus));
  }
  if (memory.has_value()) {
    std::vector<memorymanager::Block> blocks;
    for (const auto& [numa, types] : o.memory) {
      for (const auto& [type, bytes] : types) {
        if (bytes == 0) continue;
        auto node = memory_state.machine_state.find(numa);
        if (node == memory_state.machine_state.end() ||
            !node->second.memory_map.count(type)) {
          return absl::InvalidArgumentError(
              fmt::format("occupied: NUMA node {} has no {}", numa, type));
        }
        memorymanager::MemoryTable& t = node->second.memory_map[type];
        if (bytes > t.free) {
          return absl::InvalidArgumentError(fmt::format(
              "occupied: {} bytes of {} on NUMA node {} exceed its free {}", bytes, type, numa,
              t.free));
        }
        t.free -= bytes;
        t.reserved += bytes;
        node->second.number_of_assignments += 1;
        blocks.push_back({{numa}, type, bytes});
      }
    }
    if (!blocks.empty()) memory_state.SetMemoryBlocks(uid, name, std::move(blocks));
  }
  // What the holder takes counts as requested in the node-fit check: the pods behind it
  // request at least their exclusive CPUs, pinned memory and devices.
  if (cpu != nullptr) admitted_fit["cpu"] += int64_t{1000} * o.cpus.Size();
  if (memory.has_value()) {
    for (const auto& [numa, types] : o.memory) {
      for (const auto& [type, bytes] : types) admitted_fit[type] += static_cast<int64_t>(bytes);
    }
  }
  for (const auto& [res, ids] : o.devices) admitted_fit[res] += static_cast<int64_t>(ids.size());
  if (!o.devices.empty()) {
    if (auto s = devices.Restore(uid, name, o.devices); !s.ok()) {
      return absl::InvalidArgumentError(fmt::format("occupied: {}", s.message()));
    }
  }
  return absl::OkStatus();
}

// What one pod holds in the managers' state: its CPUs and the NUMA nodes of its memory.
std::pair<CpuSet, std::vector<int>> Node::Impl::Holdings(const std::string& uid) const {
  CpuSet cpus;
  if (cpu != nullptr) {
    if (auto bubble = cpu_state.GetPodCpuSet(uid); bubble.has_value()) {
      cpus = *bubble;
    } else if (auto it = cpu_state.GetCpuAssignments().find(uid);
               it != cpu_state.GetCpuAssignments().end()) {
      for (const auto& [name, set] : it->second) cpus.UnionWith(set);
    }
  }
  std::set<int> numa;
  if (memory.has_value()) {
    if (const auto* blocks = memory_state.GetPodMemoryBlocks(uid)) {
      for (const auto& b : *blocks) numa.insert(b.numa_affinity.begin(), b.numa_affinity.end());
    }
    if (auto it = memory_state.assignments.find(uid); it != memory_state.assignments.end()) {
      for (const auto& [name, blocks] : it->second) {
        for (const auto& b : blocks) numa.insert(b.numa_affinity.begin(), b.numa_affinity.end());
      }
    }
  }
  return {cpus, std::vector<int>(numa.begin(), numa.end())};
}

// Memory the machine state holds as reserved beyond the assignments' blocks, per type (pod-level
// pods counted by their pod blocks).
std::map<std::string, int64_t> Node::Impl::UnassignedReserved() const {
  std::map<std::string, int64_t> out;
  if (!memory.has_value()) return out;
  for (const auto& [numa, node] : memory_state.machine_state) {
    for (const auto& [type, table] : node.memory_map) out[type] += static_cast<int64_t>(table.reserved);
  }
  for (const auto& [uid, containers] : memory_state.assignments) {
    if (const auto* pod_blocks = memory_state.GetPodMemoryBlocks(uid)) {
      for (const auto& b : *pod_blocks) out[b.type] -= static_cast<int64_t>(b.size);
      continue;
    }
    for (const auto& [name, blocks] : containers) {
      for (const auto& b : blocks) out[b.type] -= static_cast<int64_t>(b.size);
    }
  }
  return out;
}

absl::Status Node::Impl::PredictRestart(const std::vector<PodRecordEntry>& pods) {
  RestartReport& report = *options.restart;
  const kubelet::Behavior behavior = config.VersionBehavior();
  report.default_before = DefaultCpus();
  const std::map<std::string, int64_t> unassigned_before = UnassignedReserved();
  for (const PodRecordEntry& e : pods) {
    const Pod& pod = e.pod;
    RestartPod out;
    out.namespace_name = pod.namespace_name;
    out.name = pod.name;
    out.uid = pod.uid;
    std::tie(out.cpus_before, out.memory_numa_before) = Holdings(pod.uid);
    // Which versioned restart path this pod takes (kubelet/version.h).
    const bool pod_level = pod_level_managers && pod_level_resources && pod.HasPodLevelResources();
    if (pod_level && cpu != nullptr && cpu_state.GetPodCpuSet(pod.uid).has_value() &&
        !behavior.cpu_restore_keeps_pod_cpus) {
      out.upstream.push_back(kubelet::IssueTag(&kubelet::Behavior::cpu_restore_keeps_pod_cpus));
    }
    if (pod_level && memory.has_value() && memory_state.GetPodMemoryBlocks(pod.uid) != nullptr) {
      if (!behavior.memory_restore_keeps_pod_blocks) {
        out.upstream.push_back(
            kubelet::IssueTag(&kubelet::Behavior::memory_restore_keeps_pod_blocks));
      }
      if (!behavior.memory_pod_restore_hints_from_pod_blocks &&
          config.topology_manager_scope == "pod") {
        auto it = memory_state.assignments.find(pod.uid);
        if (it != memory_state.assignments.end() && it->second.size() > 1) {
          out.upstream.push_back(
              kubelet::IssueTag(&kubelet::Behavior::memory_pod_restore_hints_from_pod_blocks));
        }
      }
    }
    for (const auto& [name, devs] : e.devices) {
      if (auto s = devices.Restore(pod.uid, name, devs); !s.ok()) return s;
    }
    const QosClass qos = GetPodQos(pod, pod_gates);
    AdmitResult r;
    {
      PodScope scope(*this, pod, qos);
      r = tm->Admit(pod);
    }
    if (!r.admit) {
      Release(pod);
      out.outcome = "rejected";
      out.reason = r.reason;
      out.message = kRejectedPrefix + r.message;
      report.pods.push_back(std::move(out));
      continue;
    }
    AddAdmitted(pod, PodFitAmounts(pod, pod_level_resources));
    std::tie(out.cpus_after, out.memory_numa_after) = Holdings(pod.uid);
    const bool same = out.cpus_after == out.cpus_before &&
                      out.memory_numa_after == out.memory_numa_before;
    out.outcome = same ? "kept" : "moved";
    report.pods.push_back(std::move(out));
  }
  report.default_after = DefaultCpus();
  if (cpu != nullptr) {
    CpuSet held = cpu_state.GetDefaultCpuSet();
    for (const auto& [uid, containers] : cpu_state.GetCpuAssignments()) {
      for (const auto& [name, set] : containers) held.UnionWith(set);
    }
    for (const auto& [uid, set] : cpu_state.GetPodCpuAssignments()) held.UnionWith(set);
    // Reserved CPUs outside the default set (strict-cpu-reservation) are not leaked.
    report.leaked_cpus = topology.cpus.AllCpus().Difference(held).Difference(cpu->reserved_cpus());
  }
  for (const auto& [type, after] : UnassignedReserved()) {
    auto it = unassigned_before.find(type);
    const int64_t extra = after - (it == unassigned_before.end() ? 0 : it->second);
    if (extra > 0) report.leaked_memory[type] = static_cast<uint64_t>(extra);
  }
  return absl::OkStatus();
}

absl::Status Node::Impl::Save() const {
  const std::string& dir = options.state_dir;
  if (dir.empty() || options.read_only) return absl::OkStatus();
  // The none policies keep an empty checkpoint naming themselves, as the kubelet's do. Both
  // files are marshalled before either is written, so a refused one changes nothing.
  // In the formats config.kubelet_version writes (1.36: CPU V3 / memory V2 with the gate on).
  const checkpoint::CpuWriteOptions cwo = CpuWriteOptionsFor(config);
  checkpoint::CpuCheckpoint ccp =
      cpu != nullptr ? CpuCheckpointFromState(cpu_state, config.cpu_manager_policy)
                     : checkpoint::CpuCheckpoint{.policy_name = config.cpu_manager_policy};
  if (cpu_read.has_value()) checkpoint::KeepUnmodelled(*cpu_read, ccp);
  const checkpoint::MemoryWriteOptions mwo = MemoryWriteOptionsFor(config);
  checkpoint::MemoryCheckpoint mcp =
      memory.has_value()
          ? MemoryCheckpointFromState(memory_state, config.memory_manager_policy)
          : checkpoint::MemoryCheckpoint{.policy_name = config.memory_manager_policy};
  if (memory_read.has_value()) checkpoint::KeepUnmodelled(*memory_read, mcp);
  const std::string cpu_path = JoinPath(dir, kCpuManagerStateFile);
  const std::string memory_path = JoinPath(dir, kMemoryManagerStateFile);
  auto cpu_bytes = checkpoint::MarshalCpuCheckpoint(ccp, cwo);
  if (!cpu_bytes.ok()) {
    return absl::Status(cpu_bytes.status().code(),
                        fmt::format("{}: {}", cpu_path, cpu_bytes.status().message()));
  }
  auto memory_bytes = checkpoint::MarshalMemoryCheckpoint(mcp, mwo);
  if (!memory_bytes.ok()) {
    return absl::Status(memory_bytes.status().code(),
                        fmt::format("{}: {}", memory_path, memory_bytes.status().message()));
  }
  if (auto s = WriteFileAtomically(cpu_path, *cpu_bytes, 0600); !s.ok()) return s;
  if (auto s = WriteFileAtomically(memory_path, *memory_bytes, 0600); !s.ok()) return s;
  return WriteFileAtomically(JoinPath(dir, kPodRecordFile), MarshalPodRecord(Record()));
}

std::vector<PodRecordEntry> Node::Impl::Record() const {
  std::vector<PodRecordEntry> record;
  for (const auto& pod : admitted) {
    PodRecordEntry e;
    e.pod = pod;
    e.hints = StoredHints(pod);
    for (const Container* c : pod.InitAndAppContainers()) {
      auto d = devices.ContainerDevices(pod.uid, c->name);
      if (!d.empty()) e.devices[c->name] = d;
    }
    record.push_back(std::move(e));
  }
  return record;
}

absl::Status Node::Impl::TakeOff(std::vector<size_t> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  const std::vector<Pod> kept_admitted = admitted;
  const std::vector<FitAmounts> kept_amounts = admitted_amounts;
  const FitAmounts kept_fit = admitted_fit;
  std::vector<Pod> gone;
  for (auto i = indices.rbegin(); i != indices.rend(); ++i) gone.push_back(EraseAdmitted(*i).first);
  if (!options.state_dir.empty() && !options.read_only) {
    if (auto s = WriteFileAtomically(JoinPath(options.state_dir, kPodRecordFile),
                                     MarshalPodRecord(Record()));
        !s.ok()) {
      admitted = kept_admitted;
      admitted_amounts = kept_amounts;
      admitted_fit = kept_fit;
      return s;
    }
  }
  for (const Pod& pod : gone) Release(pod);
  return absl::OkStatus();
}

std::optional<AdmitResult> Node::Impl::CheckFit(const FitAmounts& request) const {
  NodeFitShortage shortage;
  std::optional<AdmitResult> r = CheckNodeFit(request, static_cast<int64_t>(admitted.size()),
                                              admitted_fit, allocatable, config.max_pods, &shortage);
  if (r.has_value() && trace != nullptr) trace->node_fit = shortage;
  return r;
}

std::vector<NumaSnapshot> Node::Impl::Snapshot() const {
  std::vector<int> ids = topology.NumaIds();
  if (ids.empty()) ids = topology.cpus.NumaNodes();
  CpuSet allocatable_cpus = cpu != nullptr ? cpu->GetAllocatableCpus() : topology.cpus.AllCpus();
  CpuSet free_cpus = cpu != nullptr ? cpu->GetAvailableCpus(cpu_state) : topology.cpus.AllCpus();
  std::map<std::string, std::set<std::string>> used_devices = devices.AllocatedDevices();
  std::vector<NumaSnapshot> out;
  for (int id : ids) {
    NumaSnapshot n;
    n.id = id;
    CpuSet in_numa = topology.cpus.CpusInNumas({id});
    n.cpus_allocatable = in_numa.IntersectionSize(allocatable_cpus);
    n.cpus_free = in_numa.IntersectionSize(free_cpus);
    if (memory.has_value()) {
      if (auto it = memory_state.machine_state.find(id); it != memory_state.machine_state.end()) {
        for (const auto& [type, t] : it->second.memory_map) {
          n.memory_allocatable[type] = t.allocatable;
          n.memory_free[type] = t.free;
        }
        n.memory_assignments = it->second.number_of_assignments;
        if (it->second.cells.size() > 1) n.memory_group = it->second.cells;
      }
    }
    for (const Device& d : devices.AllDevices()) {
      if (d.numa != id) continue;
      ++n.devices_total[d.resource];
      auto u = used_devices.find(d.resource);
      if (u == used_devices.end() || !u->second.count(d.id)) ++n.devices_free[d.resource];
      else n.devices_free.try_emplace(d.resource, 0);
    }
    out.push_back(std::move(n));
  }
  return out;
}

void Node::Impl::BeginStep(const Pod& pod, const Container* container) {
  if (trace == nullptr) return;
  MergeStep step;
  step.container = container == nullptr ? "" : container->name;
  if (cpu != nullptr) {
    step.cpu_request = container == nullptr ? cpu->PodGuaranteedCpus(pod)
                                             : cpu->GuaranteedCpus(pod, *container);
    step.cpu_reusable = cpu->CpusToReuse(pod.uid).Size();
  }
  if (memory.has_value()) {
    auto req = container == nullptr ? memory->PodRequestedResources(pod)
                                    : memory->ContainerRequestedResources(pod, *container);
    if (req.ok()) step.memory_request = *req;
  }
  auto add_devices = [&](const Container& c) {
    for (const auto& [name, q] : c.resources.requests) {
      if (devices.IsDevicePluginResource(name)) step.device_request[name] += q.Value();
    }
  };
  if (container != nullptr) {
    add_devices(*container);
  } else {
    for (const Container* c : pod.InitAndAppContainers()) add_devices(*c);
  }
  step.numa = Snapshot();
  trace->merges.push_back(std::move(step));
}

void Node::Impl::FillTraceHeader(const Pod& pod, QosClass qos, AdmissionTrace& t) const {
  t.pod = pod;
  t.topology_policy = config.topology_manager_policy;
  t.scope = tm->scope_name();
  t.cpu_policy = config.cpu_manager_policy;
  t.memory_policy = config.memory_manager_policy;
  t.cpu_policy_options = config.cpu_manager_policy_options;
  t.pod_level_resources_gate = pod_level_resources;
  t.pod_level_managers_gate = pod_level_managers;
  t.pod_level_path = t.scope == topologymanager::kScopePod && pod_level_managers &&
                     pod_level_resources && pod.HasPodLevelResources();
  t.cpus_per_core = std::max(1, topology.cpus.CpusPerCore());
  t.numa_ids = topology.NumaIds();
  if (t.numa_ids.empty()) t.numa_ids = topology.cpus.NumaNodes();
  for (int numa : topology.cpus.NumaNodes()) {
    const CpuSet& cpus = topology.cpus.CpusInNuma(numa);
    t.numa_cpus.emplace(numa, cpus);
    std::vector<int> sockets = topology.cpus.SocketsOf(cpus);
    if (!sockets.empty()) t.numa_socket.emplace(numa, sockets.front());
  }
  if (cpu != nullptr) {
    t.align_by_socket = cpu->options().align_by_socket;
    t.pod_cpus = cpu->PodGuaranteedCpus(pod, qos);
    for (const Container* c : pod.InitAndAppContainers()) {
      t.container_cpus[c->name] = cpu->GuaranteedCpus(pod, qos, *c);
    }
    if (pod_level_managers && pod_level_resources && pod.HasPodLevelResources()) {
      absl::Status v = cpu->ValidatePodScopeResources(pod, qos);
      if (!v.ok()) t.cpu_shared_pool_error = std::string(v.message());
    }
  }
  if (memory.has_value()) {
    if (auto r = memory->PodRequestedResources(pod); r.ok()) t.pod_memory = *r;
    for (const Container* c : pod.InitAndAppContainers()) {
      auto r = memory->ContainerRequestedResources(pod, *c);
      if (r.ok() && !r->empty()) t.container_memory[c->name] = *r;
    }
  }
}

std::map<std::string, TopologyHint> Node::Impl::StoredHints(const Pod& pod) const {
  std::map<std::string, TopologyHint> out;
  for (const Container* c : pod.InitAndAppContainers()) {
    TopologyHint h = tm->GetAffinity(pod.uid, c->name);
    if (h.affinity.has_value() || h.preferred) out[c->name] = h;
  }
  return out;
}

namespace {

// "cpu: NUMA 1 (preferred), NUMA 0,1 (preferred), 6 not preferred" for one provider's answer.
std::string HintsText(const std::string& provider, const topologymanager::ProviderHints& hints) {
  if (!hints.has_value() || hints->empty()) return provider + ": no preference";
  std::vector<std::string> parts;
  for (const auto& [resource, list] : *hints) {
    if (!list.has_value()) {
      parts.push_back(resource + ": no preference");
      continue;
    }
    std::vector<std::string> shown;
    int others = 0;
    // 2^N masks above 8 NUMA nodes: the preferred ones only (HintSet::PreferredMasks).
    std::vector<TopologyHint> listed;
    bool summarized = false;
    if (list->listed() || std::popcount(list->nodes()) <= 8) {
      listed = list->Enumerate();
    } else {
      for (const auto& m : list->PreferredMasks(64)) listed.push_back(TopologyHint{m, true});
      summarized = true;
    }
    for (const TopologyHint& h : listed) {
      if (!h.preferred) {
        ++others;
        continue;
      }
      shown.push_back(fmt::format(
          "NUMA {} (preferred)",
          h.affinity.has_value() ? fmt::format("{}", fmt::join(h.affinity->GetBits(), ","))
                                 : std::string("any")));
    }
    if (others > 0) shown.push_back(fmt::format("{} not preferred", others));
    if (summarized) shown.push_back("wider masks not preferred");
    parts.push_back(fmt::format("{}: {}", resource,
                                shown.empty() ? std::string("none") : fmt::format("{}", fmt::join(shown, ", "))));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

std::optional<AdmitResult> Node::Impl::RestartRejection(const Pod& pod, std::string* hints) {
  // The pod's allocation is in place: only the merges of the hints regenerated from it can
  // refuse (Manager::AdmitAllocated), and they change no state. The exhaustive oracle keeps
  // the whole re-admission (allocation included) on copies of the state.
  if (!options.exhaustive_hints) {
    AdmissionTrace* outer = trace;
    trace = nullptr;
    AdmitResult r = tm->AdmitAllocated(pod);
    trace = outer;
    if (r.admit) return std::nullopt;
  }
  const cpumanager::CpuState cpu_before = cpu_state;
  const memorymanager::MemoryState memory_before = memory_state;
  const devicemanager::DeviceManager devices_before = devices;
  const std::map<std::string, TopologyHint> hints_before = StoredHints(pod);
  AdmissionTrace* outer = trace;
  // Re-admits the pod against the state it leaves, then puts that state back.
  auto readmit = [&](AdmissionTrace* t) {
    trace = t;
    AdmitResult r = tm->Admit(pod);
    trace = outer;
    cpu_state = cpu_before;
    memory_state = memory_before;
    devices = devices_before;
    for (const auto& [name, hint] : hints_before) tm->SetAffinity(pod.uid, name, hint);
    return r;
  };
  // Untraced: tracing only observes (admission/trace.h), so the decision is the same.
  AdmitResult again = readmit(nullptr);
  if (again.admit) return std::nullopt;
  // Refused (rare): once more, traced, for the regenerated hints the message shows.
  AdmissionTrace restart_trace;
  (void)readmit(&restart_trace);
  std::vector<std::string> steps;
  for (const MergeStep& step : restart_trace.merges) {
    std::vector<std::string> providers;
    for (const auto& p : step.providers) providers.push_back(HintsText(p.provider, p.hints));
    steps.push_back(fmt::format("{}{}", step.container.empty() ? "" : step.container + ": ",
                                fmt::join(providers, "; ")));
  }
  *hints = fmt::format("{}", fmt::join(steps, " | "));
  return again;
}

void Node::Impl::Release(const Pod& pod) {
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const Container& c : *list) {
      devices.RemoveContainer(pod.uid, c.name);
      if (cpu != nullptr) (void)cpu->RemoveContainer(cpu_state, pod.uid, c.name);
      if (memory.has_value()) memory->RemoveContainer(memory_state, pod.uid, c.name);
    }
  }
  // Bubbles of pods whose containers never got entries (a rejection between AllocatePod's
  // steps) go back too.
  if (cpu != nullptr) {
    if (auto bubble = cpu_state.GetPodCpuSet(pod.uid); bubble.has_value()) {
      cpu_state.SetDefaultCpuSet(cpu_state.GetDefaultCpuSet().Union(*bubble));
      cpu_state.DeletePod(pod.uid);
    }
  }
  // The memory manager's AllocatePod is all-or-nothing, and RemoveContainer releases the pod
  // budget with the last container, so no memory is left behind here.
  tm->RemovePod(pod.uid);
}

PodAllocation Node::Impl::View(const Pod& pod, QosClass qos) const {
  PodAllocation a;
  a.namespace_name = pod.namespace_name;
  a.name = pod.name;
  a.uid = pod.uid;
  a.admitted = true;
  a.qos = qos;
  if (cpu != nullptr) {
    if (auto bubble = cpu_state.GetPodCpuSet(pod.uid); bubble.has_value()) a.cpus = *bubble;
  }
  if (memory.has_value()) a.memory = Blocks(memory_state.GetPodMemoryBlocks(pod.uid));
  CpuSet shared = cpu != nullptr ? cpu_state.GetDefaultCpuSet() : topology.cpus.AllCpus();
  a.containers.reserve(pod.init_containers.size() + pod.containers.size() +
                       pod.ephemeral_containers.size());
  // The pod's entries, looked up once.
  const auto& cpu_entries = cpu_state.GetCpuAssignments();
  const auto cpu_pod = cpu_entries.find(pod.uid);
  const auto memory_pod = memory_state.assignments.find(pod.uid);
  auto add = [&](const Container& c) {
    ContainerAllocation ca;
    ca.name = c.name;
    ca.kind = c.kind;
    if (cpu != nullptr && c.kind != ContainerKind::kEphemeral) {
      // Its state entry, or the default set (CpuState::GetCpuSetOrDefault).
      ca.cpus = shared;
      if (cpu_pod != cpu_entries.end()) {
        auto it = cpu_pod->second.find(c.name);
        if (it != cpu_pod->second.end()) ca.cpus = it->second;
      }
      ca.assignment =
          cpumanager::ContainerAssignmentName(cpu->ClassifyContainer(cpu_state, pod, qos, c));
    } else {
      ca.cpus = shared;
      ca.assignment = "node_shared";
    }
    if (memory.has_value() && memory_pod != memory_state.assignments.end()) {
      if (auto it = memory_pod->second.find(c.name); it != memory_pod->second.end()) {
        ca.memory = Blocks(&it->second);
      }
    }
    ca.devices = devices.ContainerDevices(pod.uid, c.name);
    if (c.kind != ContainerKind::kEphemeral) {
      TopologyHint h = tm->GetAffinity(pod.uid, c.name);
      if (h.affinity.has_value() || h.preferred) ca.topology_hint = h;
    }
    a.containers.push_back(std::move(ca));
  };
  for (const auto& c : pod.init_containers) add(c);
  for (const auto& c : pod.containers) add(c);
  for (const auto& c : pod.ephemeral_containers) add(c);
  {
    // The pod's hint: the one stored for its first container (all of them under pod scope).
    for (const auto& c : a.containers) {
      if (c.topology_hint.has_value()) {
        a.topology_hint = c.topology_hint;
        break;
      }
    }
  }
  return a;
}


Node::Node(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Node::~Node() = default;

std::string NumaNodeLimitFix(const NodeTopology& topology, const config::KubeletConfig& config) {
  if (config.topology_manager_policy == topologymanager::kPolicyNone) return "";
  // The NUMA nodes Node::Create gives the Topology Manager.
  const size_t numa_nodes = topology.numa_nodes.empty() ? topology.cpus.NumaNodes().size()
                                                        : topology.numa_nodes.size();
  int64_t allowed = topologymanager::kDefaultMaxAllowableNUMANodes;
  auto it = config.topology_manager_policy_options.find(topologymanager::kMaxAllowableNUMANodes);
  if (it != config.topology_manager_policy_options.end()) {
    auto options = topologymanager::NewPolicyOptions(
        {{topologymanager::kMaxAllowableNUMANodes, it->second}},
        {config.FeatureEnabled("TopologyManagerPolicyAlphaOptions"),
         config.FeatureEnabled("TopologyManagerPolicyBetaOptions")});
    if (!options.ok()) return "";  // the option's own error says what is wrong
    allowed = options->max_allowable_numa_nodes;
  }
  if (static_cast<int64_t>(numa_nodes) <= allowed) return "";
  return fmt::format("{} has {} NUMA nodes: set topologyManagerPolicyOptions: {{{}: \"{}\"}}",
                     topology.source.empty() ? "the node" : topology.source, numa_nodes,
                     topologymanager::kMaxAllowableNUMANodes, numa_nodes);
}

absl::StatusOr<std::unique_ptr<Node>> Node::Create(NodeTopology topology,
                                                   config::KubeletConfig config,
                                                   Options options) {
  auto impl = std::make_unique<Impl>();
  impl->topology = std::move(topology);
  impl->config = std::move(config);
  impl->options = std::move(options);
  if (!impl->options.state_dir.empty() && !impl->options.read_only) {
    auto lock = DirLock::Acquire(impl->options.state_dir);
    if (!lock.ok()) return lock.status();
    impl->state_lock = std::move(*lock);
  }
  if (auto s = impl->Init(); !s.ok()) return s;
  if (auto s = impl->Restore(); !s.ok()) return s;
  if (impl->options.occupied != nullptr) {
    if (auto s = impl->Occupy(*impl->options.occupied); !s.ok()) return s;
  }
  return std::unique_ptr<Node>(new Node(std::move(impl)));
}

absl::StatusOr<PodAllocation> Node::Admit(const Pod& pod) {
  Impl& m = *impl_;
  bool replaced = false;
  if (const Pod* existing = m.Find(pod.namespace_name, pod.name)) {
    if (existing->uid != pod.uid) {
      return absl::AlreadyExistsError(fmt::format(
          "{}: pod {} is already admitted with uid {} (this manifest has uid {}); remove it first",
          pod.source.empty() ? "pod" : pod.source, pod.Key(), existing->uid, pod.uid));
    }
    if (SamePodSpec(*existing, pod)) return m.View(*existing);
    // The pod changed: its old allocation goes, and the new spec is admitted as a new pod.
    if (auto s = m.TakeOff({static_cast<size_t>(existing - m.admitted.data())}); !s.ok()) {
      return s;
    }
    replaced = true;
  }
  // The pod's QoS class, once for the whole admission: the managers, the trace and the result
  // take this one.
  const QosClass qos = GetPodQos(pod, m.pod_gates);
  // The trace pointer never outlives this admission, whichever way it returns.
  struct TraceReset {
    Impl& m;
    ~TraceReset() { m.trace = nullptr; }
  } trace_reset{m};
  std::shared_ptr<AdmissionTrace> trace;
  if (m.tracing) {
    trace = std::make_shared<AdmissionTrace>();
    m.FillTraceHeader(pod, qos, *trace);
    m.trace = trace.get();
  }
  PodAllocation rejected;
  rejected.namespace_name = pod.namespace_name;
  rejected.name = pod.name;
  rejected.uid = pod.uid;
  rejected.qos = qos;
  rejected.trace = trace;
  rejected.replaced = replaced;
  // A rejection of a changed pod: the release of its old allocation is written.
  auto reject = [&](std::string reason, std::string message) -> absl::StatusOr<PodAllocation> {
    rejected.reason = std::move(reason);
    rejected.message = std::move(message);
    if (replaced) {
      if (auto s = m.Save(); !s.ok()) return s;
    }
    return rejected;
  };
  FitAmounts fit_amounts = PodFitAmounts(pod, m.pod_level_resources);
  if (auto fit = m.CheckFit(fit_amounts); fit.has_value()) {
    return reject(fit->reason, kRejectedPrefix + fit->message);
  }
  // The managers' per-pod values, once the pod fits the node (a pod refused above never
  // reaches them).
  Impl::PodScope scope(m, pod, qos);
  AdmitResult r = m.tm->Admit(pod);
  // The merged hint of every step, also for a rejection: the policy's Merge of those hints
  // (one merge per step, in order).
  const std::vector<topologymanager::MergeResult>& merges = m.tm->last_merges();
  for (size_t i = 0; trace != nullptr && i < trace->merges.size(); ++i) {
    MergeStep& step = trace->merges[i];
    if (i < merges.size()) {
      step.result = merges[i];
      continue;
    }
    ProvidersHints hints;
    for (const auto& p : step.providers) hints.push_back(p.hints);
    step.result = m.tm->policy().Merge(hints);
  }
  if (!r.admit) {
    m.Release(pod);
    return reject(r.reason, kRejectedPrefix + r.message);
  }
  // A kubelet re-admits every running pod when it restarts. A pod whose allocation would not
  // pass that re-admission is refused now (no upstream fix; docs/differences.md): e.g.
  // align-by-socket places the CPUs on another NUMA node of the socket than the memory, and
  // the hints regenerated from the allocation no longer merge to a preferred hint.
  std::string restart_hints;
  if (auto again = m.RestartRejection(pod, &restart_hints); again.has_value()) {
    m.Release(pod);
    return reject(
        again->reason,
        fmt::format("{}podtopo refuses the pod although kubelet v1.37 admits it now: after a "
                    "kubelet restart the re-admission of the running pod fails ({}: {}), and the "
                    "kubelet then stops it. The hints regenerated from its allocation: {}",
                    kRejectedPrefix, again->reason, again->message, restart_hints));
  }
  m.AddAdmitted(pod, std::move(fit_amounts));
  if (auto s = m.Save(); !s.ok()) {
    // Nothing was written: the pod is not admitted.
    (void)m.EraseAdmitted(m.admitted.size() - 1);
    m.Release(pod);
    return s;
  }
  PodAllocation admitted = m.View(pod, qos);
  admitted.trace = trace;
  admitted.replaced = replaced;
  return admitted;
}

absl::StatusOr<std::vector<PodAllocation>> Node::Remove(const std::vector<PodName>& pods) {
  Impl& m = *impl_;
  std::vector<size_t> indices;
  std::vector<std::string> missing;
  for (const PodName& p : pods) {
    const Pod* found = m.Find(p.namespace_name, p.name);
    if (found == nullptr) {
      missing.push_back(fmt::format("{}/{}", p.namespace_name, p.name));
      continue;
    }
    const size_t i = static_cast<size_t>(found - m.admitted.data());
    if (std::find(indices.begin(), indices.end(), i) == indices.end()) indices.push_back(i);
  }
  if (!missing.empty()) {
    return absl::NotFoundError(fmt::format(
        "{} {}{} not admitted on this node{}", missing.size() == 1 ? "pod" : "pods",
        fmt::join(missing, ", "), missing.size() == 1 ? " is" : " are",
        pods.size() > 1 ? "; nothing removed" : ""));
  }
  std::vector<PodAllocation> removed;
  for (size_t i : indices) removed.push_back(m.View(m.admitted[i]));
  if (auto s = m.TakeOff(indices); !s.ok()) return s;
  if (auto s = m.Save(); !s.ok()) return s;
  return removed;
}

absl::StatusOr<PodAllocation> Node::Remove(const std::string& namespace_name,
                                           const std::string& name) {
  auto removed = Remove(std::vector<PodName>{{namespace_name, name}});
  if (!removed.ok()) return removed.status();
  return std::move(removed->front());
}

std::vector<PodAllocation> Node::AdmittedPods() const {
  std::vector<PodAllocation> out;
  for (const auto& p : impl_->admitted) out.push_back(impl_->View(p));
  return out;
}

const Pod* Node::FindPod(const std::string& namespace_name, const std::string& name) const {
  return impl_->Find(namespace_name, name);
}

const NodeTopology& Node::topology() const { return impl_->topology; }
const config::KubeletConfig& Node::config() const { return impl_->config; }

void Node::set_tracing(bool on) { impl_->tracing = on; }

CpuSet Node::DefaultCpuSet() const {
  return impl_->cpu != nullptr ? impl_->cpu_state.GetDefaultCpuSet()
                               : impl_->topology.cpus.AllCpus();
}

CpuSet Node::ReservedCpus() const {
  if (impl_->cpu == nullptr) return {};
  return impl_->topology.cpus.AllCpus().Difference(impl_->cpu->GetAllocatableCpus());
}

std::map<int, std::map<std::string, Node::MemoryTableView>> Node::MemoryTables() const {
  std::map<int, std::map<std::string, MemoryTableView>> out;
  if (!impl_->memory.has_value()) return out;
  for (const auto& [id, node] : impl_->memory_state.machine_state) {
    for (const auto& [type, t] : node.memory_map) {
      out[id][type] = {t.allocatable, t.reserved, t.free};
    }
  }
  return out;
}

CpuSet Node::AllocatableCpus() const {
  return impl_->cpu != nullptr ? impl_->cpu->GetAllocatableCpus() : CpuSet();
}

}  // namespace podtopo
