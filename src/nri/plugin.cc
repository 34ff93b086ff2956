#include "nri/plugin.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "admission/pod_record.h"
#include "api/pod_gates.h"
#include "fmt/format.h"
#include "runtime/pod_spec.h"
#include "spdlog/spdlog.h"

namespace podtopo::nri {
namespace {

std::string PodName(const nriapi::PodSandbox& s) {
  return fmt::format("{}/{}", s.namespace_().empty() ? "default" : s.namespace_(), s.name());
}
std::string PodKey(const nriapi::PodSandbox& s) { return PodName(s); }

// The same model: what the record would store of it.
bool SameModel(const Pod& a, const Pod& b) { return PodToJson(a).dump() == PodToJson(b).dump(); }

nriapi::ContainerUpdate MakeUpdate(const std::string& id, const std::string& cpus,
                                   const std::string& mems) {
  nriapi::ContainerUpdate u;
  u.set_container_id(id);
  // A container may exit between the decision and the update: not worth failing the event.
  u.set_ignore_failure(true);
  nriapi::LinuxCPU* cpu = u.mutable_linux()->mutable_resources()->mutable_cpu();
  cpu->set_cpus(cpus);
  if (!mems.empty()) cpu->set_mems(mems);
  return u;
}

template <typename M>
absl::StatusOr<M> ParseRequest(const std::string& method, const std::string& payload) {
  M m;
  if (!m.ParseFromString(payload)) {
    return absl::InvalidArgumentError(
        fmt::format("podtopo: {} request of {} bytes does not parse as {}", method,
                    payload.size(), M::descriptor()->full_name()));
  }
  return m;
}

}  // namespace

int32_t SubscribedEvents() {
  int32_t mask = 0;
  for (nriapi::Event e : {nriapi::RUN_POD_SANDBOX, nriapi::STOP_POD_SANDBOX,
                          nriapi::REMOVE_POD_SANDBOX, nriapi::CREATE_CONTAINER,
                          nriapi::UPDATE_CONTAINER, nriapi::STOP_CONTAINER,
                          nriapi::REMOVE_CONTAINER}) {
    mask |= 1 << (static_cast<int>(e) - 1);
  }
  return mask;
}

absl::StatusOr<std::unique_ptr<Plugin>> Plugin::Create(NodeTopology topology,
                                                       config::KubeletConfig config,
                                                       PluginOptions options) {
  if (!options.state_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.state_dir, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          fmt::format("--state-dir {}: {}", options.state_dir, ec.message()));
    }
  }
  PodLoadOptions load;
  load.gates = PodGatesFromConfig(config);
  Node::Options o;
  o.state_dir = options.state_dir;
  auto node = Node::Create(std::move(topology), std::move(config), o);
  if (!node.ok()) return node.status();
  (*node)->set_tracing(false);  // nothing here reads the admission trace
  std::unique_ptr<Plugin> p(new Plugin(std::move(*node), std::move(load), std::move(options)));
  p->RefreshAllocations();
  return p;
}

Plugin::Plugin(std::unique_ptr<Node> node, PodLoadOptions load, PluginOptions options)
    : node_(std::move(node)), load_(std::move(load)), options_(std::move(options)) {}

namespace {

// Parses the request `Req`, runs `fn` on it and serializes its reply (a message or a StatusOr).
template <typename Req, typename Fn>
absl::StatusOr<std::string> Serve(const std::string& method, const std::string& payload, Fn fn) {
  auto req = ParseRequest<Req>(method, payload);
  if (!req.ok()) return req.status();
  auto reply = fn(*req);
  if constexpr (requires { reply.ok(); }) {
    if (!reply.ok()) return reply.status();
    return reply->SerializeAsString();
  } else {
    return reply.SerializeAsString();
  }
}

}  // namespace

absl::StatusOr<std::string> Plugin::Handle(const std::string& method, const std::string& payload) {
  using namespace nriapi;
  if (method == "Configure") {
    return Serve<ConfigureRequest>(method, payload, [&](auto& r) { return Configure(r); });
  }
  if (method == "Synchronize") {
    return Serve<SynchronizeRequest>(method, payload, [&](auto& r) { return Synchronize(r); });
  }
  if (method == "Shutdown") return Empty().SerializeAsString();
  if (method == "CreateContainer") {
    return Serve<CreateContainerRequest>(method, payload, [&](auto& r) { return CreateContainer(r); });
  }
  if (method == "UpdateContainer") {
    return Serve<UpdateContainerRequest>(method, payload, [&](auto& r) { return UpdateContainer(r); });
  }
  if (method == "StopContainer") {
    return Serve<StopContainerRequest>(method, payload, [&](auto& r) { return StopContainer(r); });
  }
  if (method == "StateChange") {
    return Serve<StateChangeEvent>(method, payload, [&](auto& r) {
      StateChange(r);
      return Empty();
    });
  }
  return absl::UnimplementedError(fmt::format("podtopo: {}/{} is not served", kPluginService, method));
}

nriapi::ConfigureResponse Plugin::Configure(const nriapi::ConfigureRequest& req) {
  spdlog::info("configured by {} {}", req.runtime_name(), req.runtime_version());
  nriapi::ConfigureResponse r;
  r.set_events(SubscribedEvents());
  return r;
}

void Plugin::RefreshAllocations() {
  allocations_.clear();
  for (PodAllocation& a : node_->AdmittedPods()) {
    allocations_[a.namespace_name + "/" + a.name] = std::move(a);
  }
}

const PodAllocation* Plugin::AllocationOf(const PodEntry& pod) const {
  auto it = allocations_.find(PodKey(pod.sandbox));
  if (it == allocations_.end() || it->second.uid != pod.sandbox.uid()) return nullptr;
  return &it->second;
}

bool Plugin::HasExited(const ContainerEntry& c) const {
  // cgroupfs paths only ("/parent/id"); the systemd driver's "slice:prefix:name" is not read.
  if (c.cgroups_path.empty() || c.cgroups_path[0] != '/') return c.stopped;
  std::ifstream in(options_.cgroup_mount + "/cpuset" + c.cgroups_path + "/cgroup.procs");
  if (!in) return true;
  std::string pid;
  return !(in >> pid);
}

absl::Status Plugin::Place(PodEntry& pod) {
  const std::string name = PodName(pod.sandbox);
  auto exact = PodFromAnnotation(pod.sandbox, load_);
  if (!exact.ok()) return exact.status();
  std::optional<Pod> model;
  if (exact->has_value()) {
    model = std::move(**exact);
    pod.exact = true;
  } else {
    if (pod.seen.empty()) return absl::OkStatus();  // nothing to admit yet
    auto recovered = RecoveredPod(pod.sandbox, pod.seen, load_);
    if (!recovered.ok()) return recovered.status();
    model = std::move(*recovered);
    pod.exact = false;
  }
  const Pod* held = node_->FindPod(model->namespace_name, model->name);
  std::optional<Pod> previous;
  if (held != nullptr) {
    if (held->uid == model->uid && SameModel(*held, *model)) {
      pod.admitted = true;
      return absl::OkStatus();
    }
    previous = *held;
    auto removed = node_->Remove(model->namespace_name, model->name);
    if (!removed.ok()) return removed.status();
  }
  auto a = node_->Admit(*model);
  if (!a.ok() || !a->admitted) {
    absl::Status why = !a.ok() ? a.status()
                               : absl::FailedPreconditionError(fmt::format(
                                     "podtopo: pod {} rejected: {}: {}", name, a->reason,
                                     a->message));
    if (previous.has_value()) {
      auto back = node_->Admit(*previous);
      if (!back.ok() || !back->admitted) {
        spdlog::error("pod {}: its previous admission could not be restored", name);
        pod.admitted = false;
      }
    } else {
      pod.admitted = false;
    }
    RefreshAllocations();
    spdlog::warn("{}", std::string(why.message()));
    return why;
  }
  pod.admitted = true;
  RefreshAllocations();
  spdlog::info("pod {} admitted ({}): cpus {}", name, pod.exact ? "pod-spec annotation" : "recovered",
               a->cpus.String().empty() ? "-" : a->cpus.String());
  return absl::OkStatus();
}

void Plugin::Release(PodEntry& pod) {
  if (!pod.admitted) return;
  pod.admitted = false;
  if (AllocationOf(pod) == nullptr) return;
  auto removed = node_->Remove(pod.sandbox.namespace_().empty() ? "default" : pod.sandbox.namespace_(),
                               pod.sandbox.name());
  if (!removed.ok()) spdlog::warn("release pod {}: {}", PodName(pod.sandbox), std::string(removed.status().message()));
  RefreshAllocations();
  spdlog::info("pod {} released", PodName(pod.sandbox));
}

std::optional<std::pair<std::string, std::string>> Plugin::Desired(const ContainerEntry& c) const {
  auto pit = pods_.find(c.sandbox_id);
  if (pit == pods_.end() || !pit->second.admitted) return std::nullopt;
  const PodAllocation* a = AllocationOf(pit->second);
  if (a == nullptr) return std::nullopt;
  for (const ContainerAllocation& ca : a->containers) {
    if (ca.name != c.name) continue;
    CpuSet cpus = ca.assignment == "node_shared" ? node_->DefaultCpuSet() : ca.cpus;
    return std::make_pair(cpus.String(), runtime::CpusetMems(ca, *a));
  }
  return std::nullopt;
}

std::vector<nriapi::ContainerUpdate> Plugin::Rebalance(const std::string& skip) {
  std::vector<nriapi::ContainerUpdate> out;
  for (auto& [id, c] : containers_) {
    if (id == skip || c.stopped) continue;
    auto want = Desired(c);
    if (!want.has_value()) continue;
    bool mems_differ = !want->second.empty() && want->second != c.mems;
    if (want->first == c.cpus && !mems_differ) continue;
    out.push_back(MakeUpdate(id, want->first, want->second));
    spdlog::debug("container {} ({}): cpus {} -> {}", c.name, id.substr(0, 12), c.cpus, want->first);
    c.cpus = want->first;
    if (!want->second.empty()) c.mems = want->second;
  }
  return out;
}

nriapi::SynchronizeResponse Plugin::Synchronize(const nriapi::SynchronizeRequest& req) {
  pods_.clear();
  containers_.clear();
  {
    std::lock_guard<std::mutex> lock(unsolicited_mu_);
    unsolicited_.clear();  // Synchronize's own updates supersede what a lost connection missed
  }
  for (const nriapi::PodSandbox& s : req.pods()) pods_[s.id()].sandbox = s;
  for (const nriapi::Container& c : req.containers()) {
    auto pit = pods_.find(c.pod_sandbox_id());
    if (pit == pods_.end()) continue;
    ContainerEntry e;
    e.id = c.id();
    e.sandbox_id = c.pod_sandbox_id();
    e.name = c.name();
    e.cgroups_path = c.linux().cgroups_path();
    e.stopped = c.state() == nriapi::CONTAINER_STOPPED;
    e.cpus = c.linux().resources().cpu().cpus();
    e.mems = c.linux().resources().cpu().mems();
    SeenContainer seen{c.name(), c.linux().resources(), e.stopped};
    pit->second.seen.push_back(std::move(seen));
    containers_[e.id] = std::move(e);
  }
  // Pods the state holds that the runtime no longer runs.
  std::map<std::string, std::string> running;  // namespace/name -> uid
  for (const auto& [id, p] : pods_) running[PodKey(p.sandbox)] = p.sandbox.uid();
  for (const PodAllocation& a : node_->AdmittedPods()) {
    auto it = running.find(a.namespace_name + "/" + a.name);
    if (it != running.end() && it->second == a.uid) continue;
    auto removed = node_->Remove(a.namespace_name, a.name);
    if (removed.ok()) spdlog::info("pod {}/{} no longer runs: released", a.namespace_name, a.name);
  }
  RefreshAllocations();
  int adopted = 0, kept = 0;
  for (auto& [id, p] : pods_) {
    // The last container seen is the one running now, whatever exited before it.
    if (!p.seen.empty()) p.seen.back().exited = false;
    if (AllocationOf(p) != nullptr) {
      // Held by the state: kept as admitted (the runtime lists containers in its own order; the
      // recorded model keeps the order they were created in).
      const Pod* pod = node_->FindPod(AllocationOf(p)->namespace_name, AllocationOf(p)->name);
      std::vector<SeenContainer> ordered;
      for (const Container* c : pod->InitAndAppContainers()) {
        for (const SeenContainer& s : p.seen) {
          if (s.name == c->name) ordered.push_back({s.name, s.resources, c->kind == ContainerKind::kInit});
        }
      }
      for (const SeenContainer& s : p.seen) {
        if (pod->FindContainer(s.name) == nullptr) ordered.push_back(s);
      }
      p.seen = std::move(ordered);
      p.admitted = true;
      p.exact = p.sandbox.annotations().count(kPodSpecAnnotation) > 0;
      kept++;
      continue;
    }
    absl::Status s = Place(p);
    if (!s.ok()) {
      spdlog::warn("pod {} left as it runs: {}", PodName(p.sandbox), std::string(s.message()));
      continue;
    }
    if (p.admitted) adopted++;
  }
  nriapi::SynchronizeResponse r;
  for (nriapi::ContainerUpdate& u : Rebalance("")) *r.add_update() = std::move(u);
  spdlog::info("synchronized: {} pods ({} kept, {} adopted), {} containers, {} updated",
               pods_.size(), kept, adopted, containers_.size(), r.update_size());
  return r;
}

absl::StatusOr<nriapi::CreateContainerResponse> Plugin::CreateContainer(
    const nriapi::CreateContainerRequest& req) {
  const nriapi::Container& c = req.container();
  PodEntry& pod = pods_[req.pod().id()];
  pod.sandbox = req.pod();
  // Earlier containers of the pod that have exited by now ran to completion (init).
  for (SeenContainer& s : pod.seen) {
    for (const auto& [id, e] : containers_) {
      if (e.sandbox_id == req.pod().id() && e.name == s.name && !s.exited) s.exited = HasExited(e);
    }
  }
  bool known = false;
  for (SeenContainer& s : pod.seen) {
    if (s.name == c.name()) {
      known = true;
      s.resources = c.linux().resources();
      s.exited = false;
    }
  }
  if (!known) pod.seen.push_back({c.name(), c.linux().resources(), false});

  absl::Status placed = Place(pod);
  if (!placed.ok()) {
    if (!known) pod.seen.pop_back();
    return placed;
  }
  ContainerEntry e;
  e.id = c.id();
  e.sandbox_id = req.pod().id();
  e.name = c.name();
  e.cgroups_path = c.linux().cgroups_path();
  auto want = Desired(e);
  if (!want.has_value()) {
    return absl::FailedPreconditionError(fmt::format(
        "podtopo: container {} is not in the model of pod {} (annotation {}): it has no "
        "allocation",
        c.name(), PodName(req.pod()), kPodSpecAnnotation));
  }
  e.cpus = want->first;
  e.mems = want->second.empty() ? c.linux().resources().cpu().mems() : want->second;
  containers_[e.id] = e;

  nriapi::CreateContainerResponse r;
  nriapi::LinuxCPU* cpu = r.mutable_adjust()->mutable_linux()->mutable_resources()->mutable_cpu();
  cpu->set_cpus(want->first);
  if (!want->second.empty()) cpu->set_mems(want->second);
  for (nriapi::ContainerUpdate& u : Rebalance(e.id)) *r.add_update() = std::move(u);
  spdlog::info("container {} of pod {}: cpus {} mems {}", c.name(), PodName(req.pod()),
               want->first, want->second.empty() ? "-" : want->second);
  return r;
}

nriapi::UpdateContainerResponse Plugin::UpdateContainer(const nriapi::UpdateContainerRequest& req) {
  nriapi::UpdateContainerResponse r;
  auto it = containers_.find(req.container().id());
  if (it == containers_.end()) return r;
  auto want = Desired(it->second);
  if (!want.has_value()) return r;
  const nriapi::LinuxCPU& asked = req.linux_resources().cpu();
  if (asked.cpus() == want->first && (want->second.empty() || asked.mems() == want->second)) return r;
  // The runtime's update with podtopo's cpuset (an update of this container replaces it).
  nriapi::ContainerUpdate* u = r.add_update();
  u->set_container_id(req.container().id());
  *u->mutable_linux()->mutable_resources() = req.linux_resources();
  nriapi::LinuxCPU* cpu = u->mutable_linux()->mutable_resources()->mutable_cpu();
  cpu->set_cpus(want->first);
  if (!want->second.empty()) cpu->set_mems(want->second);
  return r;
}

nriapi::StopContainerResponse Plugin::StopContainer(const nriapi::StopContainerRequest& req) {
  auto it = containers_.find(req.container().id());
  if (it != containers_.end()) it->second.stopped = true;
  return {};
}

void Plugin::StateChange(const nriapi::StateChangeEvent& ev) {
  spdlog::debug("{} pod {} container {}", nriapi::Event_Name(ev.event()), PodName(ev.pod()),
                ev.container().name());
  switch (ev.event()) {
    case nriapi::RUN_POD_SANDBOX: {
      PodEntry& pod = pods_[ev.pod().id()];
      pod.sandbox = ev.pod();
      if (pod.sandbox.annotations().count(kPodSpecAnnotation) > 0 && Place(pod).ok()) {
        // (a rejection is logged; CreateContainer reports it)
        std::vector<nriapi::ContainerUpdate> updates = Rebalance("");
        std::lock_guard<std::mutex> lock(unsolicited_mu_);
        for (auto& u : updates) unsolicited_.push_back(std::move(u));
      }
      break;
    }
    case nriapi::STOP_POD_SANDBOX:
    case nriapi::REMOVE_POD_SANDBOX: {
      auto it = pods_.find(ev.pod().id());
      if (it == pods_.end()) break;
      Release(it->second);
      for (auto& [id, c] : containers_) {
        if (c.sandbox_id == ev.pod().id()) c.stopped = true;
      }
      std::vector<nriapi::ContainerUpdate> updates = Rebalance("");
      if (!updates.empty()) {
        std::lock_guard<std::mutex> lock(unsolicited_mu_);
        for (auto& u : updates) unsolicited_.push_back(std::move(u));
      }
      if (ev.event() == nriapi::REMOVE_POD_SANDBOX) {
        for (auto c = containers_.begin(); c != containers_.end();) {
          c = c->second.sandbox_id == ev.pod().id() ? containers_.erase(c) : std::next(c);
        }
        pods_.erase(it);
      }
      break;
    }
    case nriapi::REMOVE_CONTAINER: {
      auto it = containers_.find(ev.container().id());
      if (it == containers_.end()) break;
      std::string sandbox = it->second.sandbox_id;
      containers_.erase(it);
      // containerd 1.7.13 sends no StopPodSandbox / RemovePodSandbox for sandboxes that were
      // running before it restarted; their containers' RemoveContainer still come. A pod whose
      // last container is removed is released (docs/nri.md).
      auto pit = pods_.find(sandbox);
      if (pit == pods_.end() || !pit->second.admitted) break;
      for (const auto& [id, c] : containers_) {
        if (c.sandbox_id == sandbox) return;
      }
      Release(pit->second);
      std::vector<nriapi::ContainerUpdate> updates = Rebalance("");
      std::lock_guard<std::mutex> lock(unsolicited_mu_);
      for (auto& u : updates) unsolicited_.push_back(std::move(u));
      break;
    }
    default:
      break;
  }
}

std::vector<nriapi::ContainerUpdate> Plugin::TakeUnsolicitedUpdates() {
  std::lock_guard<std::mutex> lock(unsolicited_mu_);
  std::vector<nriapi::ContainerUpdate> out;
  out.swap(unsolicited_);
  return out;
}

}  // namespace podtopo::nri
