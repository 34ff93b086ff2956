#include "kubenode/kube_node.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <random>
#include <thread>

#include "agent/nrt_publisher.h"
#include "fmt/format.h"
#include "kube/api_client.h"
#include "kube/informer.h"
#include "kubenode/api_objects.h"
#include "kubenode/node_nrt.h"
#include "spdlog/spdlog.h"
#include "util/host_name.h"

namespace podtopo::kubenode {
namespace {

std::string MetaString(const nlohmann::json& object, const char* key) {
  auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return "";
  auto v = m->find(key);
  return v != m->end() && v->is_string() ? v->get<std::string>() : std::string();
}

// " (cpus 2-5)": the pod's bubble, else its containers' exclusive CPUs; "" when it has none.
std::string CpusNote(const PodAllocation& a) {
  CpuSet cpus = a.cpus;
  for (const auto& c : a.containers) {
    if (c.assignment == "node_exclusive" || c.assignment == "pod_exclusive") cpus = cpus.Union(c.cpus);
  }
  return cpus.IsEmpty() ? "" : fmt::format(" (cpus {})", cpus.String());
}

bool Ended(const std::string& phase) { return phase == "Failed" || phase == "Succeeded"; }

}  // namespace

class KubeNode::Impl {
 public:
  Impl(kube::Credentials credentials, NodeTopology topology, config::KubeletConfig config,
       KubeNodeOptions options)
      : credentials_(std::move(credentials)),
        topology_(std::move(topology)),
        config_(std::move(config)),
        options_(std::move(options)),
        id_{options_.node_name, options_.address} {}

  absl::Status Init() {
    if (options_.node_name.empty()) return absl::InvalidArgumentError("--node-name: required");
    if (options_.heartbeat.count() <= 0) return absl::InvalidArgumentError("heartbeat: must be positive");
    auto node = Node::Create(topology_, config_, {.state_dir = options_.state_dir});
    if (!node.ok()) return node.status();
    node_ = std::move(*node);
    node_->set_tracing(false);

    kube::ClientOptions co{.timeout = std::chrono::seconds(10), .user_agent = "podtopo-serve"};
    auto pods_client = kube::ApiClient::Create(credentials_, co);
    if (!pods_client.ok()) return pods_client.status();
    client_ = std::move(*pods_client);
    auto hb_client = kube::ApiClient::Create(credentials_, co);
    if (!hb_client.ok()) return hb_client.status();
    hb_client_ = std::move(*hb_client);

    // Another process playing this node (its Lease live and not ours): refused before the Node
    // is touched.
    if (absl::Status s = CheckLease(); !s.ok()) return s;
    if (absl::Status s = Register(); !s.ok()) return s;
    if (absl::Status s = RenewLease(); !s.ok()) {
      spdlog::warn("lease kube-node-lease/{}: {} (made again every {} ms)", id_.name,
                   std::string(s.message()), options_.heartbeat.count());
    }

    if (options_.publish_nrt) {
      auto nrt_client = kube::ApiClient::Create(credentials_, co);
      if (!nrt_client.ok()) return nrt_client.status();
      publisher_ = agent::NrtPublisher::Start(
          std::move(*nrt_client), {.node_name = id_.name, .resync = options_.nrt_resync});
      std::lock_guard<std::mutex> l(mu_);
      PublishNrt();
    }

    std::string path = "/api/v1/pods?fieldSelector=spec.nodeName%3D" + kube::EscapePathSegment(id_.name);
    auto informer = kube::Informer::Start(credentials_, {.path = path},
                                          [this](const kube::WatchEvent& e) { OnEvent(e); });
    if (!informer.ok()) return informer.status();
    informer_ = std::move(*informer);
    heartbeat_ = std::thread([this] { HeartbeatLoop(); });
    return absl::OkStatus();
  }

  bool WaitForSync(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    if (!informer_->WaitForSync(timeout)) return false;
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_until(l, deadline, [this] { return reconciled_ || stopping_; }) && reconciled_;
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopped_) return;
      stopping_ = stopped_ = true;
    }
    cv_.notify_all();
    if (hb_client_) hb_client_->Cancel();
    if (informer_) informer_->Stop();
    if (heartbeat_.joinable()) heartbeat_.join();
    if (publisher_) publisher_->Stop();
    ReleaseLease();
  }

  KubeNodeStats Stats() const {
    std::lock_guard<std::mutex> l(mu_);
    KubeNodeStats s = stats_;
    s.pods = node_ ? node_->AdmittedPods().size() : 0;
    return s;
  }

  std::vector<PodAllocation> Pods() const {
    std::lock_guard<std::mutex> l(mu_);
    return node_->AdmittedPods();
  }

 private:
  void Failed(const std::string& what, const absl::Status& s, bool log = true) {
    ++stats_.errors;
    stats_.last_error = fmt::format("{}: {}", what, std::string(s.message()));
    if (log) spdlog::warn("{} (made again every {} ms)", stats_.last_error, options_.heartbeat.count());
  }

  // 1. Registration: create the Node, or adopt the one that exists.
  absl::Status Register() {
    auto now = Clock::now();
    since_ = now;
    nlohmann::json node = NodeObject(id_, topology_, config_, now);
    auto created = client_->Post("/api/v1/nodes", node.dump());
    if (!created.ok()) return created.status();
    nlohmann::json object;
    if (created->status == 409) {
      nlohmann::json labels = {{"metadata", {{"labels", NodeLabels(id_, config_)}}}};
      const std::string path = "/api/v1/nodes/" + kube::EscapePathSegment(id_.name);
      auto patched = client_->Patch(path, labels.dump(), kube::kMergePatch);
      if (!patched.ok()) return patched.status();
      if (!patched->ok()) return patched->Error();
      object = nlohmann::json::parse(patched->body, nullptr, false);
      if (!object.is_object()) return absl::InternalError("PATCH " + path + ": not JSON");
      object["status"] = NodeStatus(id_, topology_, config_, now, now);
      auto put = client_->Put(path + "/status", object.dump());
      if (!put.ok()) return put.status();
      if (!put->ok()) return put->Error();
      spdlog::info("adopted Node {} (it existed): status replaced", id_.name);
    } else if (!created->ok()) {
      return created->Error();
    } else {
      object = nlohmann::json::parse(created->body, nullptr, false);
      spdlog::info("registered Node {}", id_.name);
    }
    node_uid_ = MetaString(object, "uid");
    last_status_ = now;
    return absl::OkStatus();
  }

  std::string LeasePath() const {
    return "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/" +
           kube::EscapePathSegment(id_.name);
  }

  // Before registering: the node's Lease, when one exists, must not be another process's live
  // one (LeaseConflict). This process is HOST:PID:TOKEN in the Lease's annotation.
  absl::Status CheckLease() {
    host_ = HostName();
    instance_ = LeaseInstance(host_, static_cast<long>(getpid()), std::random_device{}() * 0x100000000ULL + std::random_device{}());
    auto r = client_->Get(LeasePath());
    if (!r.ok()) return r.status();
    if (r->status == 404) return absl::OkStatus();
    if (!r->ok()) return r->Error();
    nlohmann::json lease = nlohmann::json::parse(r->body, nullptr, false);
    auto conflict = LeaseConflict(lease, id_.name, instance_, host_, Clock::now(), [](long pid) {
      return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
    });
    if (conflict.has_value()) return absl::FailedPreconditionError(*conflict);
    return absl::OkStatus();
  }

  // After a clean stop the Lease says so, and the next serve of this node need not wait for it
  // to expire. Not when the API server was away at the last beat (it would only delay Stop).
  void ReleaseLease() {
    if (!lease_renewed_ || lease_failing_ || client_ == nullptr) return;
    nlohmann::json patch = {
        {"metadata", {{"annotations", {{kLeaseInstanceAnnotation, kLeaseReleased}}}}}};
    auto r = client_->Patch(LeasePath(), patch.dump(), kube::kMergePatch);
    if (!r.ok() || !r->ok()) {
      spdlog::warn("lease kube-node-lease/{}: not released: {}", id_.name,
                   r.ok() ? std::string(r->Error().message()) : std::string(r.status().message()));
    }
  }

  // 4. Heartbeat: the Lease, and the Node's conditions now and then.
  absl::Status RenewLease() {
    const std::string path = LeasePath();
    const std::string base = path.substr(0, path.rfind('/'));
    nlohmann::json lease = LeaseObject(id_.name, node_uid_, Clock::now(), 40, instance_);
    nlohmann::json patch = {{"metadata", lease["metadata"]}, {"spec", lease["spec"]}};
    auto r = hb_client_->Patch(path, patch.dump(), kube::kMergePatch);
    if (!r.ok()) return r.status();
    if (r->status == 404) {
      r = hb_client_->Post(base, lease.dump());
      if (!r.ok()) return r.status();
    }
    if (!r->ok()) return r->Error();
    lease_renewed_ = true;
    return absl::OkStatus();
  }

  absl::Status ReportStatus() {
    auto now = Clock::now();
    nlohmann::json patch = {{"status", {{"conditions", NodeConditions(since_, now)}}}};
    auto r = hb_client_->Patch("/api/v1/nodes/" + kube::EscapePathSegment(id_.name) + "/status",
                               patch.dump(), kube::kMergePatch);
    if (!r.ok()) return r.status();
    if (!r->ok()) return r->Error();
    last_status_ = now;
    return absl::OkStatus();
  }

  void HeartbeatLoop() {
    std::unique_lock<std::mutex> l(mu_);
    auto next_beat = std::chrono::steady_clock::now() + options_.heartbeat;
    while (!stopping_) {
      // Until the first list is reconciled, look often; then once per heartbeat.
      auto wait = reconciled_ ? options_.heartbeat : std::chrono::milliseconds(100);
      cv_.wait_for(l, wait, [this] { return stopping_; });
      if (stopping_) break;
      if (informer_->Stats().synced) Resync();
      if (std::chrono::steady_clock::now() < next_beat) continue;
      next_beat = std::chrono::steady_clock::now() + options_.heartbeat;
      bool report = Clock::now() - last_status_ >= options_.status_report;
      l.unlock();
      absl::Status lease = RenewLease();
      absl::Status status = report ? ReportStatus() : absl::OkStatus();
      l.lock();
      // An outage is logged once (and counted at every beat), and its end once.
      if (!lease.ok() && !stopping_) {
        Failed("lease kube-node-lease/" + id_.name, lease, /*log=*/!lease_failing_);
        lease_failing_ = true;
      } else if (lease.ok() && lease_failing_) {
        lease_failing_ = false;
        spdlog::info("lease kube-node-lease/{} renewed again", id_.name);
      }
      if (!status.ok() && !stopping_) Failed("Node " + id_.name + " status", status);
    }
  }

  // Every pod of the informer's cache again, and the pods the node holds that the cache does
  // not (deleted while podtopo was not watching). REQUIRES: mu_ held.
  void Resync() {
    std::vector<nlohmann::json> pods = informer_->Snapshot();
    std::set<std::pair<std::string, std::string>> listed;
    for (const auto& p : pods) {
      listed.emplace(MetaString(p, "namespace") + "/" + MetaString(p, "name"), PodUid(p));
      Reconcile(p, /*gone=*/false);
    }
    for (const auto& a : node_->AdmittedPods()) {
      if (listed.count({a.namespace_name + "/" + a.name, a.uid}) == 0) {
        Release(a.namespace_name, a.name, "no longer bound to this node");
      }
    }
    if (changed_) PublishNrt();
    if (!reconciled_) {
      reconciled_ = true;
      spdlog::info("synced: {} pods bound to {}, {} held", pods.size(), id_.name,
                   node_->AdmittedPods().size());
      cv_.notify_all();
    }
  }

  void OnEvent(const kube::WatchEvent& e) {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return;
    Reconcile(e.object, e.type == kube::WatchEvent::Type::kDeleted);
    if (changed_) PublishNrt();
  }

  // 2. One pod: what it is against what the node made of it. REQUIRES: mu_ held.
  void Reconcile(const nlohmann::json& object, bool gone) {
    const std::string ns = MetaString(object, "namespace");
    const std::string name = MetaString(object, "name");
    const std::string uid = PodUid(object);
    if (name.empty() || uid.empty()) return;
    const Pod* held = node_->FindPod(ns, name);
    if (held != nullptr && held->uid != uid) {
      Release(ns, name, "its name now belongs to pod uid " + uid);
      held = nullptr;
    }
    if (gone) {
      if (held != nullptr) Release(ns, name, "deleted");
      rejected_.erase(uid);
      deleted_.erase(uid);
      start_.erase(uid);
      return;
    }
    if (PodTerminating(object)) {
      if (held != nullptr) Release(ns, name, "terminating");
      rejected_.erase(uid);
      if (deleted_.insert(uid).second) DeleteNow(ns, name, uid);
      return;
    }
    const std::string phase = PodPhase(object);
    if (held != nullptr) {
      if (Ended(phase)) {
        Release(ns, name, "status.phase " + phase);
      } else if (phase != "Running") {
        WriteStatus(ns, name, uid, AdmittedStatusPatch(object, id_.address, StartOf(uid)));
      }
      return;
    }
    if (auto r = rejected_.find(uid); r != rejected_.end()) {
      if (phase != "Failed") WriteStatus(ns, name, uid, RejectedStatusPatch(r->second, StartOf(uid)));
      return;
    }
    // Ended elsewhere, or rejected by this node before it restarted: nothing to run.
    if (Ended(phase)) return;

    absl::StatusOr<Pod> pod = PodFromApi(object, config_);
    if (!pod.ok()) {
      PodAllocation refused;
      refused.namespace_name = ns;
      refused.name = name;
      refused.uid = uid;
      refused.reason = "PodtopoInvalidPod";
      refused.message = std::string(pod.status().message());
      spdlog::warn("pod {}/{} refused: {}", ns, name, refused.message);
      ++stats_.rejected;
      WriteStatus(ns, name, uid, RejectedStatusPatch(refused, StartOf(uid)));
      rejected_[uid] = std::move(refused);
      return;
    }
    absl::StatusOr<PodAllocation> a = node_->Admit(*pod);
    if (!a.ok()) {  // a state-dir write failed: made again at the next resync
      Failed(fmt::format("admitting pod {}/{}", ns, name), a.status());
      return;
    }
    if (a->admitted) {
      ++stats_.admitted;
      changed_ = true;
      spdlog::info("pod {}/{} admitted{}", ns, name, CpusNote(*a));
      WriteStatus(ns, name, uid, AdmittedStatusPatch(object, id_.address, StartOf(uid)));
    } else {
      ++stats_.rejected;
      spdlog::info("pod {}/{} rejected: {}: {}", ns, name, a->reason, a->message);
      WriteStatus(ns, name, uid, RejectedStatusPatch(*a, StartOf(uid)));
      RecordEvent(RejectionEvent(*a, id_.name, Clock::now()));
      rejected_[uid] = std::move(*a);
    }
  }

  Clock::time_point StartOf(const std::string& uid) {
    return start_.try_emplace(uid, Clock::now()).first->second;
  }

  void Release(const std::string& ns, const std::string& name, const std::string& why) {
    const Pod* p = node_->FindPod(ns, name);
    std::string uid = p != nullptr ? p->uid : "";
    absl::StatusOr<PodAllocation> r = node_->Remove(ns, name);
    if (!r.ok()) {
      Failed(fmt::format("releasing pod {}/{}", ns, name), r.status());
      return;
    }
    ++stats_.released;
    start_.erase(uid);
    changed_ = true;
    spdlog::info("pod {}/{} released ({})", ns, name, why);
  }

  void WriteStatus(const std::string& ns, const std::string& name, const std::string& uid,
                   nlohmann::json patch) {
    // The uid makes the write fail on a pod created again under the same name.
    patch["metadata"] = {{"uid", uid}};
    const std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/status",
                                         kube::EscapePathSegment(ns), kube::EscapePathSegment(name));
    auto r = client_->Patch(path, patch.dump(), kube::kMergePatch);
    if (r.ok() && r->ok()) {
      ++stats_.status_writes;
      return;
    }
    if (r.ok() && r->status == 404) return;  // gone: its DELETED event follows
    Failed("pod " + ns + "/" + name + " status", r.ok() ? r->Error() : r.status());
  }

  void RecordEvent(const nlohmann::json& event) {
    const std::string ns = event["metadata"]["namespace"];
    auto r = client_->Post("/api/v1/namespaces/" + kube::EscapePathSegment(ns) + "/events",
                           event.dump());
    if (!r.ok() || !r->ok()) Failed("event for pod " + ns, r.ok() ? r->Error() : r.status());
  }

  void DeleteNow(const std::string& ns, const std::string& name, const std::string& uid) {
    const std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}", kube::EscapePathSegment(ns),
                                         kube::EscapePathSegment(name));
    auto r = client_->DeleteWithOptions(path, DeleteNowBody(uid).dump());
    if (r.ok() && (r->ok() || r->status == 404 || r->status == 409)) {
      if (r->ok()) ++stats_.deleted;
      return;
    }
    deleted_.erase(uid);  // made again at the next resync
    Failed("deleting pod " + ns + "/" + name, r.ok() ? r->Error() : r.status());
  }

  // 3. The NodeResourceTopology of the node's state, through the agent's accounting
  // (kubenode/node_nrt.h). REQUIRES: mu_ held.
  void PublishNrt() {
    changed_ = false;
    if (publisher_ != nullptr) publisher_->Offer(NodeResourceTopologyOf(*node_, id_.name));
  }

  const kube::Credentials credentials_;
  const NodeTopology topology_;
  const config::KubeletConfig config_;
  const KubeNodeOptions options_;
  const NodeIdentity id_;

  std::unique_ptr<kube::ApiClient> client_;     // pods (under mu_)
  std::unique_ptr<kube::ApiClient> hb_client_;  // Lease and Node status (heartbeat thread)
  std::unique_ptr<agent::NrtPublisher> publisher_;
  std::unique_ptr<kube::Informer> informer_;
  std::thread heartbeat_;
  std::string node_uid_;
  std::string host_;      // this host's name, and
  std::string instance_;  // this process in the Lease (LeaseInstance)
  std::atomic<bool> lease_renewed_{false};  // a renewal succeeded: the Lease is this process's
  Clock::time_point since_, last_status_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false, stopped_ = false;
  bool lease_failing_ = false;  // the last Lease renewal failed
  bool reconciled_ = false;  // the first list was reconciled with the restored pods
  bool changed_ = false;     // the node's pods changed since the last PublishNrt
  std::unique_ptr<Node> node_;
  std::map<std::string, PodAllocation> rejected_;    // uid -> rejection
  std::set<std::string> deleted_;                    // uids deleted with grace 0
  std::map<std::string, Clock::time_point> start_;  // uid -> status.startTime
  KubeNodeStats stats_;
};

KubeNode::KubeNode(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KubeNode::~KubeNode() { Stop(); }

absl::StatusOr<std::unique_ptr<KubeNode>> KubeNode::Start(kube::Credentials credentials,
                                                          NodeTopology topology,
                                                          config::KubeletConfig config,
                                                          KubeNodeOptions options) {
  auto impl = std::make_unique<Impl>(std::move(credentials), std::move(topology), std::move(config),
                                     std::move(options));
  if (absl::Status s = impl->Init(); !s.ok()) {
    impl->Stop();
    return s;
  }
  return std::unique_ptr<KubeNode>(new KubeNode(std::move(impl)));
}

bool KubeNode::WaitForSync(std::chrono::milliseconds timeout) { return impl_->WaitForSync(timeout); }
void KubeNode::Stop() {
  if (impl_) impl_->Stop();
}
KubeNodeStats KubeNode::Stats() const { return impl_->Stats(); }
std::vector<PodAllocation> KubeNode::Pods() const { return impl_->Pods(); }

}  // namespace podtopo::kubenode
