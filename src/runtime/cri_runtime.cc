#include "runtime/cri_runtime.h"

#include <algorithm>
#include <filesystem>
#include <future>
#include <thread>
#include <vector>

#include "cgroup/cgroup.h"
#include "cri/answers.h"
#include "fmt/format.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "spdlog/spdlog.h"

namespace podtopo::runtime {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

const ContainerAllocation* FindAllocation(const PodAllocation& a, const std::string& name) {
  for (const ContainerAllocation& c : a.containers) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// Init containers (regular and sidecars) in spec order, then app containers.
std::vector<const Container*> StartOrder(const Pod& pod) {
  std::vector<const Container*> order;
  for (const Container& c : pod.init_containers) order.push_back(&c);
  for (const Container& c : pod.containers) order.push_back(&c);
  return order;
}

// The cpuset a container must run on now.
CpuSet DesiredCpus(const ContainerAllocation& a, const CpuSet& default_cpus) {
  if (a.assignment == "node_shared" || a.assignment.empty()) return default_cpus;
  return a.cpus;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CriRuntime>> CriRuntime::Create(CriRuntimeOptions options) {
  if (absl::Status s = cgroup::ValidateRootName(options.cgroup_root); !s.ok()) return s;
  cri::CriClient::Options copts;
  copts.timeout = options.call_timeout;
  auto client = cri::CriClient::Connect(options.cri_endpoint, copts);
  if (!client.ok()) return client.status();
  return std::unique_ptr<CriRuntime>(new CriRuntime(std::move(options), std::move(*client)));
}

CriRuntime::CriRuntime(CriRuntimeOptions options, std::unique_ptr<cri::CriClient> client)
    : options_(std::move(options)), client_(std::move(client)) {}

CriRuntime::~CriRuntime() { Shutdown(); }

std::vector<std::string> CriRuntime::RemovePodCgroups(const std::string& uid) const {
  std::vector<std::string> left = cgroup::RemoveCgroupTree(options_.cgroup_mount, PodParent(uid));
  for (int attempt = 0; !left.empty() && attempt < 20; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    left = cgroup::RemoveCgroupTree(options_.cgroup_mount, PodParent(uid));
  }
  return left;
}

std::string CriRuntime::PodParent(const std::string& uid) const {
  return cgroup::PodCgroupParent(options_.cgroup_root, uid);
}

std::string CriRuntime::PodLogDir(const Pod& pod) const {
  return fmt::format("{}/{}_{}_{}", options_.log_dir, pod.namespace_name, pod.name, pod.uid);
}

absl::Status CriRuntime::Start(std::function<serve::NodeSnapshot()> snapshot,
                               std::shared_ptr<prometheus::Registry> metrics) {
  snapshot_ = std::move(snapshot);
  registry_ = std::move(metrics);
  if (!registry_) registry_ = std::make_shared<prometheus::Registry>();
  updates_ = &prometheus::BuildCounter()
                  .Name("podtopo_reconcile_updates_total")
                  .Help("UpdateContainerResources calls made by the reconcile loop, by reason: "
                        "drift (changed behind podtopo's back), default_set (the node shared "
                        "pool changed), state (the container's assignment changed)")
                  .Register(*registry_);
  failures_ = &prometheus::BuildCounter()
                   .Name("podtopo_reconcile_failures_total")
                   .Help("Reconcile steps that failed, by reason")
                   .Register(*registry_);
  starts_ = &prometheus::BuildCounter()
                 .Name("podtopo_runtime_pod_starts_total")
                 .Help("Pods started on the container runtime, by result")
                 .Register(*registry_);
  stale_ = &prometheus::BuildCounter()
                .Name("podtopo_reconcile_stale_containers_total")
                .Help("Container records dropped because the container no longer exists")
                .Register(*registry_)
                .Add({});
  passes_ = &prometheus::BuildCounter()
                 .Name("podtopo_reconcile_passes_total")
                 .Help("Reconcile passes run")
                 .Register(*registry_)
                 .Add({});
  interval_ = &prometheus::BuildGauge()
                   .Name("podtopo_reconcile_last_interval_seconds")
                   .Help("Observed time between the starts of the last two reconcile passes")
                   .Register(*registry_)
                   .Add({});
  up_ = &prometheus::BuildGauge()
             .Name("podtopo_runtime_up")
             .Help("1 when the container runtime answered the last call, else 0")
             .Register(*registry_)
             .Add({});
  up_->Set(1);

  absl::Status status;
  auto version = client_->Version();
  if (!version.ok()) {
    NoteRuntime(version.status());
    status = absl::UnavailableError(fmt::format(
        "container runtime {} does not answer (pods start when it does): {}",
        client_->endpoint(), Msg(version.status())));
  } else {
    spdlog::info("runtime: {} {} (CRI {}) at {}", version->runtime_name(),
                 version->runtime_version(), version->runtime_api_version(), client_->endpoint());
    std::lock_guard<std::mutex> ops(ops_mu_);
    status = Sync(snapshot_());
  }
  if (options_.reconcile_period.count() > 0) {
    loop_ = std::thread([this] { Loop(); });
  }
  return status;
}

void CriRuntime::NoteRuntime(const absl::Status& status) {
  if (status.ok()) {
    if (!runtime_up_.exchange(true)) {
      spdlog::info("runtime: {} answers again; catching up", client_->endpoint());
    }
    if (up_) up_->Set(1);
    return;
  }
  if (!cri::IsRuntimeUnavailable(status)) return;
  if (runtime_up_.exchange(false)) {
    spdlog::error("runtime: {} is unavailable ({}); keeping state, retrying every period",
                  client_->endpoint(), Msg(status));
  }
  if (up_) up_->Set(0);
  if (failures_) failures_->Add({{"reason", "runtime_unavailable"}}).Increment();
}

void CriRuntime::SetRunning(const std::string& uid, bool running, const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = records_.find(uid);
  if (it == records_.end()) return;
  it->second.running = running;
  it->second.error = error;
}

bool CriRuntime::IsRunning(const std::string& pod_uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = records_.find(pod_uid);
  return it != records_.end() && it->second.running;
}

void CriRuntime::PodAdmitted(const serve::AdmittedPod& pod) {
  std::lock_guard<std::mutex> ops(ops_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    removing_.erase(pod.pod.uid);
  }
  CpuSet default_cpus = snapshot_ ? snapshot_().default_cpus : CpuSet();
  (void)RunPod(pod, default_cpus);
}

absl::Status CriRuntime::RunPod(const serve::AdmittedPod& pod, const CpuSet& default_cpus) {
  auto started = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    PodRecord& r = records_[pod.pod.uid];
    r.uid = pod.pod.uid;
    r.namespace_name = pod.pod.namespace_name;
    r.name = pod.pod.name;
  }
  absl::Status s = RunPodSteps(pod, default_cpus);
  NoteRuntime(s);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  std::lock_guard<std::mutex> lock(mu_);
  PodRecord& r = records_[pod.pod.uid];
  if (s.ok()) {
    if (!r.running) {
      spdlog::info("runtime: pod {} ({}) runs in sandbox {} ({} ms)", pod.pod.Key(), pod.pod.uid,
                   r.sandbox_id.substr(0, 13), ms);
      if (starts_) starts_->Add({{"result", "ok"}}).Increment();
    }
    r.running = true;
    r.error.clear();
    r.backoff = std::chrono::milliseconds(0);
  } else {
    if (r.error != Msg(s)) spdlog::error("runtime: pod {}: {}", pod.pod.Key(), Msg(s));
    if (starts_) starts_->Add({{"result", "error"}}).Increment();
    r.error = Msg(s);
    if (cri::IsRuntimeUnavailable(s)) {
      // The runtime is away: retry on every pass until it answers, no back-off.
      r.backoff = std::chrono::milliseconds(0);
      r.next_retry = Clock::now();
      return s;
    }
    // Back-off before the loop retries: 2 periods doubling up to 5 minutes.
    auto base = std::max(options_.reconcile_period * 2, std::chrono::milliseconds(1000));
    r.backoff = r.backoff.count() == 0
                    ? base
                    : std::min(r.backoff * 2, std::chrono::milliseconds(300000));
    r.next_retry = Clock::now() + r.backoff;
  }
  return s;
}

absl::Status CriRuntime::RunPodSteps(const serve::AdmittedPod& pod, const CpuSet& default_cpus) {
  const Pod& p = pod.pod;
  // Images first: a missing image fails this pod before anything is created.
  std::set<std::string> images;
  for (const Container* c : StartOrder(p)) {
    if (c->image.empty()) {
      return absl::InvalidArgumentError(fmt::format("container \"{}\": no image", c->name));
    }
    images.insert(c->image);
  }
  for (const std::string& image : images) {
    auto present = client_->ImagePresent(image);
    if (!present.ok()) return present.status();
    if (!*present) {
      return absl::FailedPreconditionError(fmt::format(
          "image \"{}\" is not present in the runtime (podtopo never pulls; import it, e.g. "
          "ctr -n k8s.io images import)",
          image));
    }
  }

  criv1::PodSandboxConfig sandbox = SandboxConfig(p, PodParent(p.uid), PodLogDir(p), options_.cgroup_root);
  std::string sandbox_id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const PodRecord& r = records_[p.uid];
    sandbox_id = r.sandbox_id;
    sandbox.mutable_metadata()->set_attempt(r.next_sandbox_attempt);
  }
  if (sandbox_id.empty()) {
    // The pod cgroup's CFS quota (the kubelet writes it on the pod cgroup it creates).
    std::error_code ec;
    if (fs::exists(options_.cgroup_mount + "/cpu", ec)) {
      absl::Status q = cgroup::SetCfsQuota(options_.cgroup_mount, PodParent(p.uid), kCfsPeriodUs,
                                           PodCfsQuota(p, pod.allocation,
                                                       options_.disable_cpu_quota_with_exclusive_cpus));
      if (!q.ok()) spdlog::warn("runtime: pod {}: pod cgroup quota: {}", p.Key(), Msg(q));
    }
    fs::create_directories(PodLogDir(p), ec);
    auto id = client_->RunPodSandbox(sandbox);
    if (!id.ok()) {
      // containerd keeps a sandbox name reserved by a RunPodSandbox whose caller went away
      // (podtopo killed inside it), and no listing shows that sandbox: the retry takes the
      // next attempt. Should the reserved one still turn up ready, the next pass keeps the
      // newer sandbox only.
      if (id.status().message().find("failed to reserve sandbox name") != std::string_view::npos) {
        std::lock_guard<std::mutex> lock(mu_);
        PodRecord& r = records_[p.uid];
        r.next_sandbox_attempt = std::max(r.next_sandbox_attempt, sandbox.metadata().attempt() + 1);
      }
      return id.status();
    }
    sandbox_id = *id;
    std::lock_guard<std::mutex> lock(mu_);
    PodRecord& r = records_[p.uid];
    r.sandbox_id = sandbox_id;
    r.next_sandbox_attempt = std::max(r.next_sandbox_attempt, sandbox.metadata().attempt() + 1);
  }

  for (const Container* c : StartOrder(p)) {
    ContainerRecord rec;
    bool have = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& cs = records_[p.uid].containers;
      if (auto it = cs.find(c->name); it != cs.end()) {
        rec = it->second;
        have = !rec.id.empty();
      }
    }
    uint32_t attempt = 0;
    if (have) {
      auto st = client_->ContainerStatus(rec.id, false);
      if (!st.ok() && !absl::IsNotFound(st.status())) return st.status();
      if (st.ok()) {
        auto state = st->status().state();
        if (c->kind == ContainerKind::kInit) {
          if (state == criv1::CONTAINER_EXITED && st->status().exit_code() == 0) continue;
          if (state == criv1::CONTAINER_EXITED) {
            // A failed init container runs again (new attempt), as the kubelet retries it.
            (void)client_->RemoveContainer(rec.id);
            if (absl::Status s = StartContainerOf(pod, *c, sandbox, default_cpus, sandbox_id,
                                                  rec.attempt + 1);
                !s.ok()) {
              return s;
            }
            continue;
          }
          if (state == criv1::CONTAINER_CREATED) {
            if (absl::Status s = client_->StartContainer(rec.id); !s.ok()) return s;
          }
          if (absl::Status s = WaitForExit(c->name, rec.id); !s.ok()) return s;
          continue;
        }
        if (state == criv1::CONTAINER_RUNNING) continue;
        if (state == criv1::CONTAINER_CREATED) {
          if (absl::Status s = client_->StartContainer(rec.id); !s.ok()) return s;
          continue;
        }
        // Exited sidecar or app container: restart it (restartPolicy Always), new attempt.
        spdlog::warn("runtime: pod {}: container {} exited (code {}); restarting", p.Key(),
                     c->name, st->status().exit_code());
        (void)client_->RemoveContainer(rec.id);
      }
      attempt = rec.attempt + 1;
    }
    if (absl::Status s = StartContainerOf(pod, *c, sandbox, default_cpus, sandbox_id, attempt);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status CriRuntime::StartContainerOf(const serve::AdmittedPod& pod, const Container& c,
                                          const criv1::PodSandboxConfig& sandbox,
                                          const CpuSet& default_cpus,
                                          const std::string& sandbox_id, uint32_t attempt) {
  const ContainerAllocation* a = FindAllocation(pod.allocation, c.name);
  ContainerAllocation fallback;
  fallback.name = c.name;
  fallback.assignment = "node_shared";
  if (a == nullptr) a = &fallback;
  CpuSet cpus = DesiredCpus(*a, default_cpus);
  criv1::LinuxContainerResources res = ContainerResources(
      c, *a, pod.allocation, cpus, options_.disable_cpu_quota_with_exclusive_cpus);
  {
    std::lock_guard<std::mutex> lock(mu_);
    attempt = std::max(attempt, records_[pod.pod.uid].next_container_attempt[c.name]);
  }
  std::error_code ec;
  fs::create_directories(fmt::format("{}/{}", PodLogDir(pod.pod), c.name), ec);
  auto id = client_->CreateContainer(sandbox_id, ContainerConfig(pod.pod, c, attempt, res, options_.cgroup_root), sandbox);
  if (!id.ok()) {
    return absl::Status(id.status().code(),
                        fmt::format("container \"{}\": {}", c.name, Msg(id.status())));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    PodRecord& pr = records_[pod.pod.uid];
    uint32_t& next = pr.next_container_attempt[c.name];
    next = std::max(next, attempt + 1);
    ContainerRecord& r = pr.containers[c.name];
    r.id = *id;
    r.kind = c.kind;
    r.attempt = attempt;
    r.last_pushed = res.cpuset_cpus();
  }
  if (absl::Status s = client_->StartContainer(*id); !s.ok()) {
    return absl::Status(s.code(), fmt::format("container \"{}\": {}", c.name, Msg(s)));
  }
  spdlog::info("runtime: pod {}: {} container {} started on cpus {} mems {} quota {} ({})",
               pod.pod.Key(), ContainerKindName(c.kind), c.name, res.cpuset_cpus(),
               res.cpuset_mems().empty() ? "-" : res.cpuset_mems(), res.cpu_quota(),
               IsolationLevelName(IsolationOf(a->assignment)));
  if (c.kind == ContainerKind::kInit) return WaitForExit(c.name, *id);
  return absl::OkStatus();
}

absl::Status CriRuntime::WaitForExit(const std::string& name, const std::string& container_id) {
  auto deadline = Clock::now() + options_.init_timeout;
  while (Clock::now() < deadline && !stop_) {
    auto st = client_->ContainerStatus(container_id, false);
    if (!st.ok()) return st.status();
    if (st->status().state() == criv1::CONTAINER_EXITED) {
      if (st->status().exit_code() != 0) {
        return absl::AbortedError(fmt::format("init container \"{}\" exited with code {}", name,
                                              st->status().exit_code()));
      }
      return absl::OkStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::DeadlineExceededError(fmt::format(
      "init container \"{}\" did not finish within {}s", name, options_.init_timeout.count()));
}

void CriRuntime::StopAndRemoveSandbox(const std::string& uid, const std::string& sandbox_id) {
  criv1::ContainerFilter filter;
  filter.set_pod_sandbox_id(sandbox_id);
  auto list = client_->ListContainers(filter);
  if (list.ok()) {
    // Stop the containers in parallel, each with its grace period (as the kubelet does).
    std::vector<std::future<absl::Status>> stops;
    for (const auto& c : list->containers()) {
      if (c.state() != criv1::CONTAINER_RUNNING) continue;
      stops.push_back(std::async(std::launch::async, [this, id = c.id()] {
        return client_->StopContainer(id, options_.stop_grace_seconds);
      }));
    }
    for (auto& f : stops) {
      absl::Status s = f.get();
      if (!s.ok()) spdlog::warn("runtime: pod {}: {}", uid, Msg(s));
    }
  }
  absl::Status s = client_->StopPodSandbox(sandbox_id);
  if (s.ok()) s = client_->RemovePodSandbox(sandbox_id);
  NoteRuntime(s);
  if (!s.ok()) {
    spdlog::error("runtime: pod {}: removing sandbox {}: {}", uid, sandbox_id.substr(0, 13), Msg(s));
  }
}

void CriRuntime::PodRemoving(const serve::AdmittedPod& pod) {
  std::lock_guard<std::mutex> ops(ops_mu_);
  const std::string& uid = pod.pod.uid;
  std::set<std::string> sandboxes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    removing_.insert(uid);
    if (auto it = records_.find(uid); it != records_.end() && !it->second.sandbox_id.empty()) {
      sandboxes.insert(it->second.sandbox_id);
    }
  }
  criv1::PodSandboxFilter filter;
  (*filter.mutable_label_selector())[kLabelPodUid] = uid;
  (*filter.mutable_label_selector())[kLabelInstance] = options_.cgroup_root;
  auto list = client_->ListPodSandbox(filter);
  NoteRuntime(list.status());
  if (list.ok()) {
    for (const auto& sb : list->items()) sandboxes.insert(sb.id());
  }
  for (const std::string& id : sandboxes) StopAndRemoveSandbox(uid, id);
  if (!list.ok()) {
    spdlog::error("runtime: pod {}: cannot remove it now ({}); it is removed when the runtime "
                  "answers again",
                  pod.pod.Key(), Msg(list.status()));
  } else {
    for (const std::string& left : RemovePodCgroups(uid)) {
      spdlog::warn("runtime: pod {}: cgroup left: {}", pod.pod.Key(), left);
    }
    std::error_code ec;
    fs::remove_all(PodLogDir(pod.pod), ec);
    spdlog::info("runtime: pod {} ({}) stopped and removed", pod.pod.Key(), uid);
  }
  std::lock_guard<std::mutex> lock(mu_);
  records_.erase(uid);
}

absl::Status CriRuntime::Sync(const serve::NodeSnapshot& snap) {
  criv1::PodSandboxFilter sfilter;
  (*sfilter.mutable_label_selector())[kLabelManaged] = "true";
  (*sfilter.mutable_label_selector())[kLabelInstance] = options_.cgroup_root;
  auto sandboxes = client_->ListPodSandbox(sfilter);
  NoteRuntime(sandboxes.status());
  if (!sandboxes.ok()) return sandboxes.status();
  criv1::ContainerFilter cfilter;
  (*cfilter.mutable_label_selector())[kLabelManaged] = "true";
  (*cfilter.mutable_label_selector())[kLabelInstance] = options_.cgroup_root;
  auto containers = client_->ListContainers(cfilter);
  NoteRuntime(containers.status());
  if (!containers.ok()) return containers.status();

  std::map<std::string, const serve::AdmittedPod*> admitted;
  for (const serve::AdmittedPod& p : snap.pods) admitted[p.pod.uid] = &p;
  std::set<std::string> removing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Tombstones of pods the daemon no longer lists are done.
    for (auto it = removing_.begin(); it != removing_.end();) {
      it = admitted.count(*it) ? std::next(it) : removing_.erase(it);
    }
    removing = removing_;
  }

  // The newest ready sandbox per admitted pod; every other managed sandbox goes.
  cri::SandboxChoice choice =
      cri::ChooseSandboxes(*sandboxes, kLabelPodUid, [&](const std::string& uid) {
        return admitted.count(uid) && !removing.count(uid);
      });
  const auto& chosen = choice.kept;
  const auto& doomed = choice.removed;
  for (const auto& [uid, id] : doomed) {
    spdlog::info("runtime: removing sandbox {} of pod {} (not admitted, or not ready)",
                 id.substr(0, 13), uid.empty() ? "?" : uid);
    StopAndRemoveSandbox(uid, id);
    if (!admitted.count(uid) && !uid.empty()) {
      for (const std::string& left : RemovePodCgroups(uid)) {
        spdlog::warn("runtime: pod {}: cgroup left: {}", uid, left);
      }
    }
  }

  // Adopt: records from what runs.
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = records_.begin(); it != records_.end();) {
      it = admitted.count(it->first) ? std::next(it) : records_.erase(it);
    }
    // Every sandbox and container the runtime lists for an admitted pod, kept or being
    // removed, holds its attempt number: the pod's next sandbox (container of that name)
    // takes a higher one.
    for (const criv1::PodSandbox& sb : sandboxes->items()) {
      auto label = sb.labels().find(kLabelPodUid);
      if (label == sb.labels().end() || !admitted.count(label->second)) continue;
      PodRecord& r = records_[label->second];
      r.next_sandbox_attempt = std::max(r.next_sandbox_attempt, sb.metadata().attempt() + 1);
    }
    for (const criv1::Container& c : containers->containers()) {
      auto uid = c.labels().find(kLabelPodUid);
      auto name = c.labels().find(kLabelContainerName);
      if (uid == c.labels().end() || name == c.labels().end() || !admitted.count(uid->second)) {
        continue;
      }
      uint32_t& next = records_[uid->second].next_container_attempt[name->second];
      next = std::max(next, c.metadata().attempt() + 1);
    }
    for (const auto& [uid, sb] : chosen) {
      PodRecord& r = records_[uid];
      const serve::AdmittedPod* p = admitted[uid];
      if (r.sandbox_id != sb->id()) {
        if (!r.sandbox_id.empty() || r.uid.empty()) {
          spdlog::info("runtime: adopting sandbox {} of pod {} ({})", sb->id().substr(0, 13),
                       p->pod.Key(), uid);
        }
        r.containers.clear();
      }
      r.uid = uid;
      r.namespace_name = p->pod.namespace_name;
      r.name = p->pod.name;
      r.sandbox_id = sb->id();
      // Containers by name: the newest of each name.
      const std::map<std::string, const criv1::Container*> newest =
          cri::NewestContainers(*containers, sb->id(), kLabelContainerName);
      for (const auto& [name, c] : newest) {
        ContainerRecord& cr = r.containers[name];
        if (cr.id != c->id()) {
          cr.id = c->id();
          cr.attempt = c->metadata().attempt();
          cr.last_pushed.clear();
        }
      }
      // Records of containers that no longer exist: stale state.
      for (auto it = r.containers.begin(); it != r.containers.end();) {
        if (!newest.count(it->first)) {
          spdlog::info("runtime: pod {}: container {} ({}) no longer exists; clearing its state",
                       p->pod.Key(), it->first, it->second.id.substr(0, 13));
          if (stale_) stale_->Increment();
          it = r.containers.erase(it);
        } else {
          ++it;
        }
      }
    }
    // Pods whose sandbox is gone.
    for (auto& [uid, r] : records_) {
      if (!chosen.count(uid) && !r.sandbox_id.empty()) {
        spdlog::warn("runtime: pod {}/{}: sandbox {} no longer exists; starting it again",
                     r.namespace_name, r.name, r.sandbox_id.substr(0, 13));
        r.sandbox_id.clear();
        r.containers.clear();
        r.running = false;
      }
    }
  }

  // Catch up: every admitted pod whose containers are not all where they should be.
  std::map<std::string, const criv1::Container*> by_id;
  for (const auto& c : containers->containers()) by_id[c.id()] = &c;
  for (const serve::AdmittedPod& p : snap.pods) {
    if (removing.count(p.pod.uid)) continue;
    bool complete = true;
    bool retry_due = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = records_.find(p.pod.uid);
      if (it == records_.end() || it->second.sandbox_id.empty()) {
        complete = false;
      } else {
        for (const Container* c : StartOrder(p.pod)) {
          auto cr = it->second.containers.find(c->name);
          if (cr == it->second.containers.end()) {
            complete = false;
            break;
          }
          auto live = by_id.find(cr->second.id);
          if (live == by_id.end()) {
            complete = false;
            break;
          }
          auto state = live->second->state();
          bool ok = c->kind == ContainerKind::kInit ? state == criv1::CONTAINER_EXITED
                                                    : state == criv1::CONTAINER_RUNNING;
          if (!ok) {
            complete = false;
            break;
          }
        }
        if (complete && !it->second.running) {
          it->second.running = true;
          it->second.error.clear();
        }
      }
      if (it != records_.end() && !it->second.error.empty()) {
        retry_due = Clock::now() >= it->second.next_retry;
      }
    }
    if (!complete && retry_due) (void)RunPod(p, snap.default_cpus);
  }
  return absl::OkStatus();
}

void CriRuntime::ReconcileCpusets(const serve::NodeSnapshot& snap) {
  struct Work {
    std::string pod_key, uid, name, id, last_pushed, assignment;
    CpuSet desired;
  };
  std::vector<Work> work;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const serve::AdmittedPod& p : snap.pods) {
      auto it = records_.find(p.pod.uid);
      if (it == records_.end() || it->second.sandbox_id.empty()) continue;
      for (const ContainerAllocation& a : p.allocation.containers) {
        auto cr = it->second.containers.find(a.name);
        if (cr == it->second.containers.end() || cr->second.id.empty()) continue;
        work.push_back({p.pod.Key(), p.pod.uid, a.name, cr->second.id, cr->second.last_pushed,
                        a.assignment, DesiredCpus(a, snap.default_cpus)});
      }
    }
  }
  for (const Work& w : work) {
    if (stop_) return;
    auto st = client_->ContainerStatus(w.id, false);
    if (!st.ok()) {
      NoteRuntime(st.status());
      if (absl::IsNotFound(st.status())) {
        std::lock_guard<std::mutex> lock(mu_);
        if (auto it = records_.find(w.uid); it != records_.end()) {
          auto& cs = it->second.containers;
          if (auto c = cs.find(w.name); c != cs.end() && c->second.id == w.id) {
            spdlog::info("runtime: pod {}: container {} ({}) no longer exists; clearing its state",
                         w.pod_key, w.name, w.id.substr(0, 13));
            cs.erase(c);
            if (stale_) stale_->Increment();
          }
        }
      } else {
        failures_->Add({{"reason", "status"}}).Increment();
        if (cri::IsRuntimeUnavailable(st.status())) return;
      }
      continue;
    }
    // Waiting or terminated containers are skipped (as the kubelet does).
    if (st->status().state() != criv1::CONTAINER_RUNNING) continue;
    // The actual cpuset: the cgroup file (what the kernel enforces), else the runtime's view.
    std::string actual;
    auto cg = cgroup::ReadContainerCpusetCpus(options_.cgroup_mount, PodParent(w.uid), w.id);
    if (cg.ok()) {
      actual = cg->String();
    } else {
      actual = cri::ReportedCpuset(*st);
    }
    std::string desired = w.desired.String();
    if (desired.empty()) {
      failures_->Add({{"reason", "empty_cpuset"}}).Increment();
      continue;
    }
    if (actual == desired) continue;
    const char* reason = !w.last_pushed.empty() && actual != w.last_pushed ? "drift"
                         : w.assignment == "node_shared"                  ? "default_set"
                                                                           : "state";
    criv1::LinuxContainerResources res;
    res.set_cpuset_cpus(desired);
    absl::Status s = client_->UpdateContainerResources(w.id, res);
    NoteRuntime(s);
    if (!s.ok()) {
      failures_->Add({{"reason", "update"}}).Increment();
      spdlog::error("reconcile: pod {} container {}: cpuset {} -> {}: {}", w.pod_key, w.name,
                    actual, desired, Msg(s));
      if (cri::IsRuntimeUnavailable(s)) return;
      continue;
    }
    updates_->Add({{"reason", reason}}).Increment();
    spdlog::info("reconcile: pod {} container {}: cpuset {} -> {} ({})", w.pod_key, w.name,
                 actual.empty() ? "?" : actual, desired, reason);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = records_.find(w.uid); it != records_.end()) {
      if (auto c = it->second.containers.find(w.name);
          c != it->second.containers.end() && c->second.id == w.id) {
        c->second.last_pushed = desired;
      }
    }
  }
}

void CriRuntime::ReconcileOnce() {
  if (!snapshot_) return;
  auto now = Clock::now();
  if (last_pass_ != Clock::time_point{} && interval_) {
    interval_->Set(std::chrono::duration<double>(now - last_pass_).count());
  }
  last_pass_ = now;
  if (passes_) passes_->Increment();
  serve::NodeSnapshot snap = snapshot_();
  // Is the runtime there? (Cheap; logs the transitions.)
  auto version = client_->Version();
  NoteRuntime(version.status());
  if (!version.ok()) return;
  {
    std::unique_lock<std::mutex> ops(ops_mu_, std::try_to_lock);
    if (ops.owns_lock()) {
      (void)Sync(snap);
      snap = snapshot_();
    }
  }
  ReconcileCpusets(snap);
}

void CriRuntime::Loop() {
  while (!stop_) {
    ReconcileOnce();
    // Sliding period, as the kubelet's wait.Until: the next pass starts one period after this
    // one ended.
    std::unique_lock<std::mutex> lock(loop_mu_);
    loop_cv_.wait_for(lock, options_.reconcile_period, [this] { return stop_.load(); });
  }
}

void CriRuntime::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(loop_mu_);
    stop_ = true;
  }
  loop_cv_.notify_all();
  if (loop_.joinable()) loop_.join();
}

}  // namespace podtopo::runtime
