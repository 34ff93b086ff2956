#include "admission/node.h"

#include <algorithm>

#include "admission/admission_error.h"
#include "admission/pod_record.h"
#include "admission/pod_requests.h"
#include "admission/state_files.h"
#include "cpumanager/static_policy.h"
#include "devicemanager/device_manager.h"
#include "util/format.h"
#include "memorymanager/reserved_memory.h"
#include "memorymanager/static_policy.h"
#include "topologymanager/policy.h"
#include "util/file.h"

namespace podtopo {

using topologymanager::HintList;
using topologymanager::ProviderHints;
using topologymanager::ProvidersHints;
using topologymanager::TopologyHint;

namespace {

constexpr char kTopologyAffinityMessage[] = "Resources cannot be allocated with Topology locality";
constexpr char kPodLevelTopologyAffinityMessage[] =
    "Pod Scope pod with pod-level resources failed admission under pod-scope topology manager";
constexpr char kRejectedPrefix[] = "Pod was rejected: ";

ProviderHints FromMap(const std::map<std::string, std::vector<TopologyHint>>& m) {
  std::map<std::string, HintList> out;
  for (const auto& [res, hints] : m) out[res] = hints;
  return out;
}

ProviderHints FromOptionalMap(
    const std::optional<std::map<std::string, std::vector<TopologyHint>>>& m) {
  if (!m.has_value()) return std::nullopt;
  return FromMap(*m);
}

std::vector<MemoryBlockView> Blocks(const std::vector<memorymanager::Block>& blocks) {
  std::vector<MemoryBlockView> out;
  for (const auto& b : blocks) out.push_back({b.type, b.size, b.numa_affinity});
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
  bool pod_level_resources = true;
  bool pod_level_managers = false;

  std::unique_ptr<topologymanager::Policy> tm_policy;
  std::string scope;  // "container", "pod" or "none" (policy none)
  std::unique_ptr<cpumanager::StaticPolicy> cpu;  // null with the none policy
  cpumanager::CpuState cpu_state;
  std::optional<memorymanager::StaticPolicy> memory;  // nullopt with policy None
  memorymanager::MemoryState memory_state;
  devicemanager::DeviceManager devices;

  // podUID -> container -> merged hint (the Topology Manager's store).
  std::map<std::string, std::map<std::string, TopologyHint>> hints;
  std::vector<Pod> admitted;  // admission order
  ResourceList allocatable;

  TopologyHint GetAffinity(const std::string& pod_uid,
                           const std::string& container_name) const override {
    auto pit = hints.find(pod_uid);
    if (pit == hints.end()) return {};
    auto cit = pit->second.find(container_name);
    return cit == pit->second.end() ? TopologyHint{} : cit->second;
  }

  absl::Status Init();
  absl::Status Restore();
  absl::Status Save() const;

  std::optional<AdmitResult> CheckFit(const Pod& pod) const;
  AdmitResult AdmitToManagers(const Pod& pod, std::optional<TopologyHint>* pod_hint);
  ProvidersHints ContainerHints(const Pod& pod, const Container& c) const;
  ProvidersHints PodHints(const Pod& pod) const;
  absl::Status AllocateContainer(const Pod& pod, const Container& c);
  void Release(const Pod& pod);
  PodAllocation View(const Pod& pod, const std::optional<TopologyHint>& pod_hint) const;
  const Pod* Find(const std::string& ns, const std::string& name) const {
    for (const auto& p : admitted) {
      if (p.namespace_name == ns && p.name == name) return &p;
    }
    return nullptr;
  }
};

absl::Status Node::Impl::Init() {
  pod_level_resources = config.FeatureEnabled("PodLevelResources");
  pod_level_managers = config.FeatureEnabled("PodLevelResourceManagers");

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
  auto policy = topologymanager::NewPolicy(config.topology_manager_policy, numa,
                                           config.topology_manager_policy_options, tm_gates);
  if (!policy.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("topologyManagerPolicy: {}", policy.status().message()));
  }
  tm_policy = std::move(*policy);
  scope = config.topology_manager_policy == topologymanager::kPolicyNone
              ? "none"
              : config.topology_manager_scope;

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
    cc.gates.options = {config.FeatureEnabled("CPUManagerPolicyAlphaOptions"),
                        config.FeatureEnabled("CPUManagerPolicyBetaOptions")};
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
    memorymanager::PolicyGates gates{pod_level_resources, pod_level_managers};
    auto p = memorymanager::StaticPolicy::New(*machine, *reserved, this, gates);
    if (!p.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("memoryManagerPolicy: {}", p.status().message()));
    }
    memory.emplace(std::move(*p));
  }

  devices = devicemanager::DeviceManager(topology.devices, numa_ids);
  return absl::OkStatus();
}

absl::Status Node::Impl::Restore() {
  const std::string& dir = options.state_dir;
  // Podtopo's record first: it says which pods are admitted.
  std::vector<PodRecordEntry> record;
  if (!dir.empty()) {
    std::string path = JoinPath(dir, kPodRecordFile);
    auto text = ReadFile(path);
    if (text.ok()) {
      auto parsed = ParsePodRecord(*text, path);
      if (!parsed.ok()) return parsed.status();
      record = std::move(*parsed);
    } else if (text.status().code() != absl::StatusCode::kNotFound) {
      return text.status();
    }
  }

  if (cpu != nullptr) {
    if (!dir.empty()) {
      std::string path = JoinPath(dir, kCpuManagerStateFile);
      checkpoint::CpuLoadOptions lo{config.cpu_manager_policy, pod_level_managers};
      auto cp = checkpoint::LoadCpuCheckpointFile(path, lo);
      if (!cp.ok()) return cp.status();
      if (cp->has_value()) {
        auto st = CpuStateFromCheckpoint(**cp, path);
        if (!st.ok()) return st.status();
        cpu_state = std::move(*st);
      }
    }
    if (auto s = cpu->Start(cpu_state); !s.ok()) {
      return absl::FailedPreconditionError(fmt::format(
          "{}: {} (the kubelet refuses to start with this state: drain the node and delete the "
          "CPU manager checkpoint file, or run `podtopo state check`)",
          JoinPath(dir, kCpuManagerStateFile), s.message()));
    }
  }
  if (memory.has_value()) {
    if (!dir.empty()) {
      std::string path = JoinPath(dir, kMemoryManagerStateFile);
      checkpoint::MemoryLoadOptions lo{config.memory_manager_policy, pod_level_managers};
      auto cp = checkpoint::LoadMemoryCheckpointFile(path, lo);
      if (!cp.ok()) return cp.status();
      if (cp->has_value()) memory_state = MemoryStateFromCheckpoint(**cp);
    }
    if (auto s = memory->Start(memory_state); !s.ok()) {
      return absl::FailedPreconditionError(fmt::format(
          "{}: {} (the kubelet refuses to start with this state: drain the node and delete the "
          "memory manager checkpoint file, or run `podtopo state check`)",
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

  // Re-admit the recorded pods as a restarted kubelet does: hints are restored, allocation is
  // idempotent (existing entries are kept; missing ones are computed).
  for (auto& e : record) {
    hints[e.pod.uid] = e.hints;
    for (const auto& [name, devs] : e.devices) {
      if (auto s = devices.Restore(e.pod.uid, name, devs); !s.ok()) return s;
    }
    std::optional<TopologyHint> ignored;
    AdmitResult r = AdmitToManagers(e.pod, &ignored);
    if (!r.admit) {
      return absl::FailedPreconditionError(fmt::format(
          "{}: pod {} was admitted before but cannot be restored: {}: {}",
          JoinPath(dir, kPodRecordFile), e.pod.Key(), r.reason, r.message));
    }
    admitted.push_back(e.pod);
  }
  return absl::OkStatus();
}

absl::Status Node::Impl::Save() const {
  const std::string& dir = options.state_dir;
  if (dir.empty()) return absl::OkStatus();
  if (cpu != nullptr) {
    checkpoint::CpuWriteOptions wo;
    wo.pod_level_resource_managers = pod_level_managers;
    if (auto s = checkpoint::WriteCpuCheckpointFile(
            JoinPath(dir, kCpuManagerStateFile),
            CpuCheckpointFromState(cpu_state, config.cpu_manager_policy), wo);
        !s.ok()) {
      return s;
    }
  }
  if (memory.has_value()) {
    checkpoint::MemoryWriteOptions wo;
    wo.pod_level_resource_managers = pod_level_managers;
    if (auto s = checkpoint::WriteMemoryCheckpointFile(
            JoinPath(dir, kMemoryManagerStateFile),
            MemoryCheckpointFromState(memory_state, config.memory_manager_policy), wo);
        !s.ok()) {
      return s;
    }
  }
  std::vector<PodRecordEntry> record;
  for (const auto& pod : admitted) {
    PodRecordEntry e;
    e.pod = pod;
    if (auto it = hints.find(pod.uid); it != hints.end()) e.hints = it->second;
    for (const Container* c : pod.InitAndAppContainers()) {
      auto d = devices.ContainerDevices(pod.uid, c->name);
      if (!d.empty()) e.devices[c->name] = d;
    }
    record.push_back(std::move(e));
  }
  return WriteFileAtomically(JoinPath(dir, kPodRecordFile), MarshalPodRecord(record));
}

std::optional<AdmitResult> Node::Impl::CheckFit(const Pod& pod) const {
  std::vector<const Pod*> others;
  for (const auto& p : admitted) others.push_back(&p);
  return CheckNodeFit(pod, others, allocatable, pod_level_resources,
                      110);
}

ProvidersHints Node::Impl::ContainerHints(const Pod& pod, const Container& c) const {
  // Registration order of the kubelet's container manager: devices, CPU, memory.
  ProvidersHints out;
  out.push_back(devices.GetTopologyHints(pod, c));
  if (cpu != nullptr) out.push_back(FromMap(cpu->GetTopologyHints(cpu_state, pod, c)));
  if (memory.has_value()) {
    out.push_back(FromOptionalMap(memory->GetTopologyHints(memory_state, pod, c)));
  }
  return out;
}

ProvidersHints Node::Impl::PodHints(const Pod& pod) const {
  ProvidersHints out;
  out.push_back(devices.GetPodTopologyHints(pod));
  if (cpu != nullptr) out.push_back(FromMap(cpu->GetPodTopologyHints(cpu_state, pod)));
  if (memory.has_value()) {
    out.push_back(FromOptionalMap(memory->GetPodTopologyHints(memory_state, pod)));
  }
  return out;
}

absl::Status Node::Impl::AllocateContainer(const Pod& pod, const Container& c) {
  if (auto s = devices.Allocate(pod, c, GetAffinity(pod.uid, c.name)); !s.ok()) return s;
  if (cpu != nullptr) {
    if (auto s = cpu->Allocate(cpu_state, pod, c); !s.ok()) return s;
  }
  if (memory.has_value()) {
    if (auto s = memory->Allocate(memory_state, pod, c); !s.ok()) return s;
  }
  return absl::OkStatus();
}

AdmitResult Node::Impl::AdmitToManagers(const Pod& pod, std::optional<TopologyHint>* pod_hint) {
  std::vector<const Container*> containers = pod.InitAndAppContainers();
  auto reject = [](const std::string& reason, const std::string& message) {
    return AdmitResult{false, reason, message};
  };
  if (scope == "none") {
    for (const Container* c : containers) {
      if (auto s = AllocateContainer(pod, *c); !s.ok()) return GetPodAdmitResult(s);
    }
    return {};
  }
  if (scope == "container") {
    for (const Container* c : containers) {
      auto merged = tm_policy->Merge(ContainerHints(pod, *c));
      if (!merged.admit) return reject(kReasonTopologyAffinity, kTopologyAffinityMessage);
      hints[pod.uid][c->name] = merged.hint;
      if (!pod_hint->has_value()) *pod_hint = merged.hint;
      if (auto s = AllocateContainer(pod, *c); !s.ok()) return GetPodAdmitResult(s);
    }
    return {};
  }
  // Pod scope.
  bool pod_level = pod_level_managers && pod_level_resources && pod.HasPodLevelResources();
  auto merged = tm_policy->Merge(PodHints(pod));
  *pod_hint = merged.hint;
  if (!merged.admit) {
    return reject(kReasonTopologyAffinity,
                  pod_level ? kPodLevelTopologyAffinityMessage : kTopologyAffinityMessage);
  }
  for (const Container* c : containers) hints[pod.uid][c->name] = merged.hint;
  if (pod_level) {
    // One AllocatePod per provider. The kubelet's device manager defers device allocation to
    // container start, where it uses the same stored hint; podtopo allocates them here.
    for (const Container* c : containers) {
      if (auto s = devices.Allocate(pod, *c, merged.hint); !s.ok()) return GetPodAdmitResult(s);
    }
    if (cpu != nullptr) {
      if (auto s = cpu->AllocatePod(cpu_state, pod); !s.ok()) return GetPodAdmitResult(s);
    }
    if (memory.has_value()) {
      if (auto s = memory->AllocatePod(memory_state, pod); !s.ok()) return GetPodAdmitResult(s);
    }
    return {};
  }
  for (const Container* c : containers) {
    if (auto s = AllocateContainer(pod, *c); !s.ok()) return GetPodAdmitResult(s);
  }
  return {};
}

void Node::Impl::Release(const Pod& pod) {
  for (const Container* c : pod.InitAndAppContainers()) {
    devices.RemoveContainer(pod.uid, c->name);
    if (cpu != nullptr) (void)cpu->RemoveContainer(cpu_state, pod.uid, c->name);
    if (memory.has_value()) memory->RemoveContainer(memory_state, pod.uid, c->name);
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
  hints.erase(pod.uid);
}

PodAllocation Node::Impl::View(const Pod& pod, const std::optional<TopologyHint>& pod_hint) const {
  PodAllocation a;
  a.namespace_name = pod.namespace_name;
  a.name = pod.name;
  a.uid = pod.uid;
  a.admitted = true;
  a.qos = GetPodQos(pod, pod_level_resources);
  a.topology_hint = pod_hint;
  if (cpu != nullptr) {
    if (auto bubble = cpu_state.GetPodCpuSet(pod.uid); bubble.has_value()) a.cpus = *bubble;
  }
  if (memory.has_value()) a.memory = Blocks(memorymanager::GetPodMemory(memory_state, pod.uid));
  CpuSet shared = cpu != nullptr ? cpu_state.GetDefaultCpuSet() : topology.cpus.AllCpus();
  auto add = [&](const Container& c) {
    ContainerAllocation ca;
    ca.name = c.name;
    ca.kind = c.kind;
    if (cpu != nullptr && c.kind != ContainerKind::kEphemeral) {
      ca.cpus = cpu_state.GetCpuSetOrDefault(pod.uid, c.name);
      ca.assignment =
          cpumanager::ContainerAssignmentName(cpu->ClassifyContainer(cpu_state, pod, c));
    } else {
      ca.cpus = shared;
      ca.assignment = "node_shared";
    }
    if (memory.has_value()) ca.memory = Blocks(memorymanager::GetMemory(memory_state, pod.uid, c.name));
    ca.devices = devices.ContainerDevices(pod.uid, c.name);
    if (auto pit = hints.find(pod.uid); pit != hints.end()) {
      if (auto cit = pit->second.find(c.name); cit != pit->second.end()) ca.topology_hint = cit->second;
    }
    a.containers.push_back(std::move(ca));
  };
  for (const Container* c : pod.InitAndAppContainers()) add(*c);
  for (const auto& c : pod.ephemeral_containers) add(c);
  if (!a.topology_hint.has_value()) {
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

absl::StatusOr<std::unique_ptr<Node>> Node::Create(NodeTopology topology,
                                                   config::KubeletConfig config,
                                                   Options options) {
  auto impl = std::make_unique<Impl>();
  impl->topology = std::move(topology);
  impl->config = std::move(config);
  impl->options = std::move(options);
  if (auto s = impl->Init(); !s.ok()) return s;
  if (auto s = impl->Restore(); !s.ok()) return s;
  return std::unique_ptr<Node>(new Node(std::move(impl)));
}

absl::StatusOr<PodAllocation> Node::Admit(const Pod& pod) {
  Impl& m = *impl_;
  if (const Pod* existing = m.Find(pod.namespace_name, pod.name)) {
    if (existing->uid != pod.uid) {
      return absl::AlreadyExistsError(fmt::format(
          "{}: pod {} is already admitted with uid {} (this manifest has uid {}); remove it first",
          pod.source.empty() ? "pod" : pod.source, pod.Key(), existing->uid, pod.uid));
    }
    std::optional<TopologyHint> hint;
    return m.View(*existing, hint);
  }
  PodAllocation rejected;
  rejected.namespace_name = pod.namespace_name;
  rejected.name = pod.name;
  rejected.uid = pod.uid;
  rejected.qos = GetPodQos(pod, m.pod_level_resources);
  if (auto fit = m.CheckFit(pod); fit.has_value()) {
    rejected.reason = fit->reason;
    rejected.message = kRejectedPrefix + fit->message;
    return rejected;
  }
  std::optional<TopologyHint> pod_hint;
  AdmitResult r = m.AdmitToManagers(pod, &pod_hint);
  if (!r.admit) {
    m.Release(pod);
    rejected.reason = r.reason;
    rejected.message = kRejectedPrefix + r.message;
    rejected.topology_hint = pod_hint;
    return rejected;
  }
  m.admitted.push_back(pod);
  if (auto s = m.Save(); !s.ok()) return s;
  return m.View(pod, pod_hint);
}

absl::StatusOr<PodAllocation> Node::Remove(const std::string& namespace_name,
                                           const std::string& name) {
  Impl& m = *impl_;
  auto it = std::find_if(m.admitted.begin(), m.admitted.end(), [&](const Pod& p) {
    return p.namespace_name == namespace_name && p.name == name;
  });
  if (it == m.admitted.end()) {
    return absl::NotFoundError(fmt::format("pod {}/{} is not admitted on this node",
                                           namespace_name, name));
  }
  Pod pod = *it;
  PodAllocation before = m.View(pod, std::nullopt);
  m.admitted.erase(it);
  // The record goes first: a crash after it leaves stale checkpoint entries, which the next
  // start releases; never a recorded pod without its allocation.
  if (!m.options.state_dir.empty()) {
    std::vector<PodRecordEntry> record;
    // Save() writes the record last; here it must come first.
    for (const auto& p : m.admitted) {
      PodRecordEntry e;
      e.pod = p;
      if (auto h = m.hints.find(p.uid); h != m.hints.end()) e.hints = h->second;
      for (const Container* c : p.InitAndAppContainers()) {
        auto d = m.devices.ContainerDevices(p.uid, c->name);
        if (!d.empty()) e.devices[c->name] = d;
      }
      record.push_back(std::move(e));
    }
    if (auto s = WriteFileAtomically(JoinPath(m.options.state_dir, kPodRecordFile),
                                     MarshalPodRecord(record));
        !s.ok()) {
      m.admitted.push_back(pod);
      return s;
    }
  }
  m.Release(pod);
  if (auto s = m.Save(); !s.ok()) return s;
  return before;
}

std::vector<PodAllocation> Node::AdmittedPods() const {
  std::vector<PodAllocation> out;
  for (const auto& p : impl_->admitted) out.push_back(impl_->View(p, std::nullopt));
  return out;
}

const Pod* Node::FindPod(const std::string& namespace_name, const std::string& name) const {
  return impl_->Find(namespace_name, name);
}

const NodeTopology& Node::topology() const { return impl_->topology; }
const config::KubeletConfig& Node::config() const { return impl_->config; }

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
