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
#include "topologymanager/scope.h"
#include "util/file.h"

namespace podtopo {

using topologymanager::HintList;
using topologymanager::ProviderHints;
using topologymanager::ProvidersHints;
using topologymanager::TopologyHint;

namespace {

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

  // The Topology Manager: policy, scope and the hints it stores per container.
  std::unique_ptr<topologymanager::Manager> tm;
  std::unique_ptr<cpumanager::StaticPolicy> cpu;  // null with the none policy
  cpumanager::CpuState cpu_state;
  std::optional<memorymanager::StaticPolicy> memory;  // nullopt with policy None
  memorymanager::MemoryState memory_state;
  devicemanager::DeviceManager devices;

  // Hint providers in the kubelet's registration order: devices, CPU, memory.
  std::vector<std::unique_ptr<topologymanager::HintProvider>> providers;
  std::vector<Pod> admitted;  // admission order
  ResourceList allocatable;

  TopologyHint GetAffinity(const std::string& pod_uid,
                           const std::string& container_name) const override {
    return tm->GetAffinity(pod_uid, container_name);
  }

  absl::Status Init();
  absl::Status Restore();
  absl::Status Save() const;

  std::optional<AdmitResult> CheckFit(const Pod& pod) const;
  void Release(const Pod& pod);
  std::map<std::string, TopologyHint> StoredHints(const Pod& pod) const;
  PodAllocation View(const Pod& pod) const;
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
    return m_.devices.GetTopologyHints(pod, c);
  }
  ProviderHints GetPodTopologyHints(const Pod& pod, Operation) override {
    return m_.devices.GetPodTopologyHints(pod);
  }
  absl::Status Allocate(const Pod& pod, const Container& c, Operation) override {
    return m_.devices.Allocate(pod, c, m_.GetAffinity(pod.uid, c.name));
  }
  // The kubelet's device manager defers pod-level device allocation to container start, where
  // it uses the same stored hint; podtopo allocates the devices here.
  absl::Status AllocatePod(const Pod& pod, Operation op) override {
    for (const Container* c : pod.InitAndAppContainers()) {
      if (auto s = Allocate(pod, *c, op); !s.ok()) return s;
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
    return FromMap(m_.cpu->GetTopologyHints(m_.cpu_state, pod, c));
  }
  ProviderHints GetPodTopologyHints(const Pod& pod, Operation) override {
    return FromMap(m_.cpu->GetPodTopologyHints(m_.cpu_state, pod));
  }
  absl::Status Allocate(const Pod& pod, const Container& c, Operation) override {
    return m_.cpu->Allocate(m_.cpu_state, pod, c);
  }
  absl::Status AllocatePod(const Pod& pod, Operation) override {
    return m_.cpu->AllocatePod(m_.cpu_state, pod);
  }

 private:
  Node::Impl& m_;
};

class MemoryProvider : public topologymanager::HintProvider {
 public:
  explicit MemoryProvider(Node::Impl& m) : m_(m) {}
  ProviderHints GetTopologyHints(const Pod& pod, const Container& c, Operation) override {
    return FromOptionalMap(m_.memory->GetTopologyHints(m_.memory_state, pod, c));
  }
  ProviderHints GetPodTopologyHints(const Pod& pod, Operation) override {
    return FromOptionalMap(m_.memory->GetPodTopologyHints(m_.memory_state, pod));
  }
  absl::Status Allocate(const Pod& pod, const Container& c, Operation) override {
    return m_.memory->Allocate(m_.memory_state, pod, c);
  }
  absl::Status AllocatePod(const Pod& pod, Operation) override {
    return m_.memory->AllocatePod(m_.memory_state, pod);
  }

 private:
  Node::Impl& m_;
};

}  // namespace

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
  auto manager = topologymanager::NewManager(numa, config.topology_manager_policy,
                                             config.topology_manager_scope,
                                             config.topology_manager_policy_options, tm_gates,
                                             {pod_level_managers && pod_level_resources});
  if (!manager.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("topologyManagerPolicy: {}", manager.status().message()));
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
    if (text.ok()) {
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
    checkpoint::CpuLoadOptions lo{config.cpu_manager_policy, pod_level_managers};
    auto cp = checkpoint::LoadCpuCheckpointFile(path, lo);
    if (!cp.ok()) return cp.status();
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
    checkpoint::MemoryLoadOptions lo{config.memory_manager_policy, pod_level_managers};
    auto cp = checkpoint::LoadMemoryCheckpointFile(path, lo);
    if (!cp.ok()) return cp.status();
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
    admitted.push_back(e.pod);
  }
  return absl::OkStatus();
}

absl::Status Node::Impl::Save() const {
  const std::string& dir = options.state_dir;
  if (dir.empty()) return absl::OkStatus();
  // The none policies keep an empty checkpoint naming themselves, as the kubelet's do.
  {
    checkpoint::CpuWriteOptions wo;
    wo.pod_level_resource_managers = pod_level_managers;
    checkpoint::CpuCheckpoint cp =
        cpu != nullptr ? CpuCheckpointFromState(cpu_state, config.cpu_manager_policy)
                       : checkpoint::CpuCheckpoint{.policy_name = config.cpu_manager_policy};
    if (auto s = checkpoint::WriteCpuCheckpointFile(JoinPath(dir, kCpuManagerStateFile), cp, wo);
        !s.ok()) {
      return s;
    }
  }
  {
    checkpoint::MemoryWriteOptions wo;
    wo.pod_level_resource_managers = pod_level_managers;
    checkpoint::MemoryCheckpoint cp =
        memory.has_value()
            ? MemoryCheckpointFromState(memory_state, config.memory_manager_policy)
            : checkpoint::MemoryCheckpoint{.policy_name = config.memory_manager_policy};
    if (auto s =
            checkpoint::WriteMemoryCheckpointFile(JoinPath(dir, kMemoryManagerStateFile), cp, wo);
        !s.ok()) {
      return s;
    }
  }
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
  return WriteFileAtomically(JoinPath(dir, kPodRecordFile), MarshalPodRecord(record));
}

std::optional<AdmitResult> Node::Impl::CheckFit(const Pod& pod) const {
  std::vector<const Pod*> others;
  for (const auto& p : admitted) others.push_back(&p);
  return CheckNodeFit(pod, others, allocatable, pod_level_resources,
                      110);
}

std::map<std::string, TopologyHint> Node::Impl::StoredHints(const Pod& pod) const {
  std::map<std::string, TopologyHint> out;
  for (const Container* c : pod.InitAndAppContainers()) {
    TopologyHint h = tm->GetAffinity(pod.uid, c->name);
    if (h.affinity.has_value() || h.preferred) out[c->name] = h;
  }
  return out;
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
  tm->RemovePod(pod.uid);
}

PodAllocation Node::Impl::View(const Pod& pod) const {
  PodAllocation a;
  a.namespace_name = pod.namespace_name;
  a.name = pod.name;
  a.uid = pod.uid;
  a.admitted = true;
  a.qos = GetPodQos(pod, pod_level_resources);
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
    if (c.kind != ContainerKind::kEphemeral) {
      TopologyHint h = tm->GetAffinity(pod.uid, c.name);
      if (h.affinity.has_value() || h.preferred) ca.topology_hint = h;
    }
    a.containers.push_back(std::move(ca));
  };
  for (const Container* c : pod.InitAndAppContainers()) add(*c);
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
    return m.View(*existing);
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
  AdmitResult r = m.tm->Admit(pod);
  if (!r.admit) {
    m.Release(pod);
    rejected.reason = r.reason;
    rejected.message = kRejectedPrefix + r.message;
    return rejected;
  }
  m.admitted.push_back(pod);
  if (auto s = m.Save(); !s.ok()) return s;
  return m.View(pod);
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
  PodAllocation before = m.View(pod);
  m.admitted.erase(it);
  // The record goes first: a crash after it leaves stale checkpoint entries, which the next
  // start releases; never a recorded pod without its allocation.
  if (!m.options.state_dir.empty()) {
    std::vector<PodRecordEntry> record;
    // Save() writes the record last; here it must come first.
    for (const auto& p : m.admitted) {
      PodRecordEntry e;
      e.pod = p;
      e.hints = m.StoredHints(p);
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
  for (const auto& p : impl_->admitted) out.push_back(impl_->View(p));
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
