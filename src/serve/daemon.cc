#include "serve/daemon.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "admission/node.h"
#include "api/pod_gates.h"
#include "api/pod_yaml.h"
#include "config/feature_gates.h"
#include "fmt/format.h"
#include "metrics/kubelet_metrics.h"
#include "nlohmann/json.hpp"
#include "podresources/server.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "spdlog/spdlog.h"
#include "util/dir_lock.h"
#include "util/file.h"

namespace podtopo::serve {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxManifestBytes = 4 << 20;
constexpr char kRejectionsFile[] = "podtopo_rejections.json";

bool IsManifestName(const std::string& name) {
  if (name.empty() || name[0] == '.' || name.back() == '~') return false;
  auto ends = [&](const char* suffix) {
    std::string s = suffix;
    return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".yaml") || ends(".yml") || ends(".json");
}

}  // namespace

class Daemon::Impl {
 public:
  Impl(NodeTopology topology, config::KubeletConfig config, DaemonOptions options)
      : topology_(std::move(topology)),
        config_(std::move(config)),
        options_(std::move(options)),
        registry_(std::make_shared<prometheus::Registry>()),
        metrics_(registry_, config_) {
    rules_.pod_level_gate = config_.FeatureEnabled("PodLevelResourceManagers") &&
                            config_.FeatureEnabled("PodLevelResources");
    rules_.compat = options_.compat;
    rules_.list_active_pods = config_.FeatureEnabled(config::kKubeletPodResourcesListUseActivePods);
    device_numa_ = podresources::DeviceNumaMap(topology_);
    podresources::PodResourcesServer::Options so;
    so.qps = options_.qps;
    so.burst = options_.burst;
    if (options_.hooks != nullptr && rules_.list_active_pods) {
      RuntimeHooks* hooks = options_.hooks.get();
      so.is_running = [hooks](const std::string& uid) { return hooks->IsRunning(uid); };
    }
    so.on_request = [this](const char* version, const char* method, bool error) {
      metrics_.RecordPodResourcesRequest(version, method, error);
    };
    server_ = std::make_unique<podresources::PodResourcesServer>(std::move(so));
  }

  ~Impl() { Stop(); }

  absl::Status Start() {
    if (options_.socket_path.empty()) return absl::InvalidArgumentError("--socket: required");
    if (options_.pods_dir.empty()) return absl::InvalidArgumentError("--pods-dir: required");
    std::error_code ec;
    fs::create_directories(options_.pods_dir, ec);
    if (ec || !fs::is_directory(options_.pods_dir)) {
      return absl::InvalidArgumentError(fmt::format("--pods-dir {}: not a directory{}",
                                                    options_.pods_dir,
                                                    ec ? ": " + ec.message() : ""));
    }
    if (!options_.state_dir.empty()) {
      fs::create_directories(options_.state_dir, ec);
      if (ec || !fs::is_directory(options_.state_dir)) {
        return absl::InvalidArgumentError(fmt::format("--state-dir {}: not a directory{}",
                                                      options_.state_dir,
                                                      ec ? ": " + ec.message() : ""));
      }
      // One process at a time writes the state dir: held until the daemon is destroyed.
      auto lock = DirLock::Acquire(options_.state_dir);
      if (!lock.ok()) return lock.status();
      state_lock_ = std::move(*lock);
      // A daemon killed in the middle of a state write left its temporary file.
      for (const std::string& f : RemoveStaleTemporaryFiles(options_.state_dir)) {
        spdlog::info("--state-dir {}: removed {}, left by a writer that was killed",
                     options_.state_dir, f);
      }
    }
    if (!options_.metrics_addr.empty()) {
      auto exposer = metrics::Expose(options_.metrics_addr, registry_);
      if (!exposer.ok()) return exposer.status();
      exposer_ = std::move(*exposer);
    }
    inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (inotify_fd_ < 0 || stop_fd_ < 0) {
      return absl::InternalError(fmt::format("inotify: {}", std::strerror(errno)));
    }
    if (!WatchPodsDir()) {
      return absl::InvalidArgumentError(
          fmt::format("--pods-dir {}: cannot watch: {}", options_.pods_dir, std::strerror(errno)));
    }
    if (absl::Status s = server_->Listen(options_.socket_path); !s.ok()) return s;
    spdlog::info("serving PodResources v1 and v1alpha1 on unix:{} (mode 0600)",
                 options_.socket_path);
    thread_ = std::thread([this] { Run(); });
    return absl::OkStatus();
  }

  void Stop() {
    std::call_once(stop_once_, [this] {
      if (thread_.joinable()) {
        uint64_t one = 1;
        [[maybe_unused]] ssize_t n = write(stop_fd_, &one, sizeof(one));
        thread_.join();
      }
      if (options_.hooks != nullptr && hooks_started_) options_.hooks->Shutdown();
      server_->Shutdown();
      exposer_.reset();
      if (inotify_fd_ >= 0) close(inotify_fd_);
      if (stop_fd_ >= 0) close(stop_fd_);
      inotify_fd_ = stop_fd_ = -1;
      {
        std::lock_guard<std::mutex> lock(restore_mu_);
        if (!restore_done_) {
          restore_done_ = true;
          restore_status_ = absl::CancelledError("stopped before the state was restored");
        }
      }
      restore_cv_.notify_all();
    });
  }

  absl::Status WaitRestored() {
    std::unique_lock<std::mutex> lock(restore_mu_);
    restore_cv_.wait(lock, [&] { return restore_done_; });
    return restore_status_;
  }

  NodeSnapshot Snapshot() const {
    std::lock_guard<std::mutex> lock(snap_mu_);
    return snapshot_ != nullptr ? *snapshot_ : NodeSnapshot{};
  }

  std::vector<Rejection> Rejections() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Rejection> out;
    for (const auto& [k, r] : rejections_) out.push_back(r);
    return out;
  }

  uint64_t Generation() const {
    std::lock_guard<std::mutex> lock(gen_mu_);
    return generation_;
  }

  uint64_t WaitGeneration(uint64_t after, std::chrono::milliseconds timeout) const {
    std::unique_lock<std::mutex> lock(gen_mu_);
    gen_cv_.wait_for(lock, timeout, [&] { return generation_ > after; });
    return generation_;
  }

 private:
  struct FileState {
    std::string content;
    std::vector<std::string> keys;  // pods this file holds (admitted or rejected)
  };

  // ---- the pod-event thread ----

  void Run() {
    if (options_.before_restore) options_.before_restore();
    auto node = Node::Create(topology_, config_, {options_.state_dir});
    if (!node.ok()) {
      spdlog::error("cannot restore the node state: {}", node.status().ToString());
      FinishRestore(node.status());
      return;
    }
    (*node)->set_tracing(false);  // nothing here reads the admission trace
    std::map<std::string, std::string> initial = ListManifests();
    {
      std::lock_guard<std::mutex> lock(mu_);
      node_ = std::move(*node);
      // Restored pods: keep the manifest's pod (with its images) when it still has the pod
      // with the recorded resource model. A manifest changed while the daemon was down keeps
      // the recorded pod here, so that processing the manifest below sees the change and
      // admits the pod again (the allocation belongs to the recorded model).
      std::map<std::string, Pod> manifest_pods;
      for (const auto& [name, content] : initial) {
        auto parsed = ParseManifest(content, name, /*log=*/false);  // logged when processed
        if (!parsed.ok()) continue;
        for (auto& p : *parsed) manifest_pods.emplace(p.Key(), std::move(p));
      }
      for (const auto& a : node_->AdmittedPods()) {
        std::string key = fmt::format("{}/{}", a.namespace_name, a.name);
        const Pod* recorded = node_->FindPod(a.namespace_name, a.name);
        auto it = manifest_pods.find(key);
        if (it != manifest_pods.end() && recorded != nullptr &&
            SamePodSpec(it->second, *recorded)) {
          pods_[key] = it->second;
        } else if (recorded != nullptr) {
          pods_[key] = *recorded;
        }
        allocations_[key] = a;
      }
      spdlog::info("node state restored: {} admitted pod(s){}", pods_.size(),
                   options_.state_dir.empty() ? "" : " from " + options_.state_dir);
      PodResourcesAllocatable();
    }
    Rebuild();
    if (options_.hooks != nullptr) {
      absl::Status s = options_.hooks->Start([this] { return Snapshot(); }, registry_);
      hooks_started_ = true;
      if (!s.ok()) spdlog::error("runtime hooks: {}", s.ToString());
    }
    for (const auto& [name, content] : initial) ProcessFile(name, &content);
    // Pods restored from the state whose manifest is gone.
    std::vector<std::string> orphans;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [key, pod] : pods_) {
        if (!owner_.contains(key)) orphans.push_back(key);
      }
    }
    for (const auto& key : orphans) {
      spdlog::info("pod {}: no manifest in {} any more; releasing it", key, options_.pods_dir);
      ReleasePod(key);
    }
    Rebuild();
    WriteRejections();
    FinishRestore(absl::OkStatus());
    BumpGeneration();
    EventLoop();
  }

  void FinishRestore(absl::Status status) {
    {
      std::lock_guard<std::mutex> lock(restore_mu_);
      restore_done_ = true;
      restore_status_ = std::move(status);
    }
    restore_cv_.notify_all();
    BumpGeneration();
  }

  void BumpGeneration() {
    {
      std::lock_guard<std::mutex> lock(gen_mu_);
      ++generation_;
    }
    gen_cv_.notify_all();
  }

  // A manifest of the pods dir, read as every command reads pods (the configuration's pod
  // gates, --strict); with `log`, skipped kinds and unknown fields are logged.
  absl::StatusOr<std::vector<Pod>> ParseManifest(const std::string& content,
                                                 const std::string& name, bool log) const {
    std::map<std::string, int> skipped;
    std::vector<UnknownField> unknown;
    auto parsed = ParsePods(content, PathOf(name),
                            {.gates = PodGatesFromConfig(config_),
                             .strict = options_.strict,
                             .skipped_kinds = &skipped,
                             .unknown_fields = log ? &unknown : nullptr});
    if (!log) return parsed;
    for (const auto& [kind, count] : skipped) {
      spdlog::warn("{}: skipped {} {} object(s) (--strict makes this an error)", PathOf(name),
                   count, kind);
    }
    for (const UnknownField& u : unknown) {
      spdlog::warn("{}: the API server refuses it and podtopo ignores it (--strict makes this "
                   "an error)",
                   u.ToString());
    }
    return parsed;
  }

  std::string PathOf(const std::string& name) const {
    return (fs::path(options_.pods_dir) / name).string();
  }

  std::map<std::string, std::string> ListManifests() {
    std::map<std::string, std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(options_.pods_dir, ec)) {
      std::string name = e.path().filename().string();
      if (!IsManifestName(name)) continue;
      if (auto content = ReadManifest(name); content.has_value()) out[name] = *content;
    }
    if (ec) spdlog::error("--pods-dir {}: {}", options_.pods_dir, ec.message());
    return out;
  }

  // The file's content; nullopt when it is gone or not a regular file. A read error (e.g. a
  // file too large) is remembered in read_errors_ and reported as a bad manifest.
  std::optional<std::string> ReadManifest(const std::string& name) {
    struct stat st;
    std::string path = PathOf(name);
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    auto text = ReadSmallFile(path, kMaxManifestBytes);
    if (!text.ok()) {
      read_errors_[name] = std::string(text.status().message());
      return std::string();
    }
    read_errors_.erase(name);
    return *text;
  }

  bool WatchPodsDir() {
    pods_wd_ = inotify_add_watch(inotify_fd_, options_.pods_dir.c_str(),
                                 IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                                     IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF);
    return pods_wd_ >= 0;
  }

  void EventLoop() {
    alignas(struct inotify_event) char buf[64 * 1024];
    while (true) {
      pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
      // Without a watch (the pods dir was removed or moved away), look for it every 500 ms.
      bool retrying;
      {
        std::lock_guard<std::mutex> lock(mu_);
        retrying = !release_retry_.empty();
      }
      int n = poll(fds, 2, pods_wd_ < 0 || retrying ? 500 : -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        spdlog::error("poll: {}", std::strerror(errno));
        return;
      }
      if (fds[0].revents & POLLIN) return;
      std::set<std::string> names;
      bool rescan = false;
      if (retrying) {
        RetryReleases();
        Rebuild();
        BumpGeneration();
      }
      if (pods_wd_ < 0 && WatchPodsDir()) {
        spdlog::warn("--pods-dir {} is there again; rescanning it", options_.pods_dir);
        rescan = true;
      }
      // Read what is there, then coalesce what follows within 20 ms (an editor's save is a
      // burst of events).
      for (int round = 0; round < 2; ++round) {
        while (true) {
          ssize_t len = read(inotify_fd_, buf, sizeof(buf));
          if (len <= 0) break;
          for (char* p = buf; p < buf + len;) {
            auto* ev = reinterpret_cast<struct inotify_event*>(p);
            if (ev->mask & IN_Q_OVERFLOW) rescan = true;
            if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
              spdlog::error("--pods-dir {} was removed or moved; its pods stay as they are "
                            "until it is there again",
                            options_.pods_dir);
              // A moved directory would still be watched under its new name: stop that.
              if ((ev->mask & IN_MOVE_SELF) && pods_wd_ >= 0) {
                inotify_rm_watch(inotify_fd_, pods_wd_);
              }
              pods_wd_ = -1;
            }
            if (ev->len > 0) {
              std::string name = ev->name;
              if (IsManifestName(name)) {
                if (!(ev->mask & IN_CREATE) || IsLinkCreated(name)) names.insert(name);
              }
            }
            p += sizeof(struct inotify_event) + ev->len;
          }
        }
        if (round == 0) {
          pollfd stop = {stop_fd_, POLLIN, 0};
          if (poll(&stop, 1, 20) > 0) return;
        }
      }
      if (rescan) {
        spdlog::warn("inotify queue overflow: rescanning {}", options_.pods_dir);
        for (const auto& [name, st] : files_) names.insert(name);
        for (const auto& [name, content] : ListManifests()) names.insert(name);
      }
      if (names.empty()) continue;
      for (const auto& name : names) {
        std::optional<std::string> content = ReadManifest(name);
        ProcessFile(name, content.has_value() ? &*content : nullptr);
      }
      Rebuild();
      WriteRejections();
      BumpGeneration();
    }
  }

  // A file created by `ln` / `ln -s` gets no IN_CLOSE_WRITE: take its IN_CREATE.
  bool IsLinkCreated(const std::string& name) const {
    struct stat st;
    if (lstat(PathOf(name).c_str(), &st) != 0) return false;
    return S_ISLNK(st.st_mode) || (S_ISREG(st.st_mode) && st.st_nlink > 1);
  }

  // `content` null: the file is gone.
  void ProcessFile(const std::string& name, const std::string* content) {
    auto fit = files_.find(name);
    if (content == nullptr) {
      if (fit == files_.end()) return;
      spdlog::info("{}: removed; releasing {} pod(s)", PathOf(name), fit->second.keys.size());
      for (const auto& key : fit->second.keys) ReleasePod(key);
      files_.erase(fit);
      SetRejection("file:" + name, std::nullopt);
      ClearDuplicates(name);
      return;
    }
    if (fit != files_.end() && fit->second.content == *content && !read_errors_.contains(name)) {
      return;
    }
    FileState& state = files_[name];
    state.content = *content;
    absl::StatusOr<std::vector<Pod>> parsed =
        read_errors_.contains(name)
            ? absl::StatusOr<std::vector<Pod>>(absl::InvalidArgumentError(read_errors_[name]))
            : ParseManifest(*content, name, /*log=*/true);
    if (!parsed.ok()) {
      std::string msg(parsed.status().message());
      spdlog::error("bad manifest {}: {} (its pods, if any, are left as they were)", PathOf(name),
                    msg);
      SetRejection("file:" + name, Rejection{name, "", "InvalidManifest", msg});
      return;
    }
    SetRejection("file:" + name, std::nullopt);
    ClearDuplicates(name);
    std::set<std::string> new_keys;
    for (const auto& p : *parsed) new_keys.insert(p.Key());
    std::vector<std::string> kept;
    for (const auto& key : state.keys) {
      if (!new_keys.contains(key)) {
        spdlog::info("{}: pod {} removed from the manifest; releasing it", PathOf(name), key);
        ReleasePod(key);
      }
    }
    for (const auto& pod : *parsed) {
      const std::string key = pod.Key();
      auto owner = owner_.find(key);
      if (owner != owner_.end() && owner->second != name) {
        std::string msg = fmt::format("pod {} is already defined in {}", key,
                                      PathOf(owner->second));
        spdlog::warn("{}: pod {} rejected: DuplicatePod: {}", PathOf(name), key, msg);
        SetRejection("dup:" + name + ":" + key, Rejection{name, key, "DuplicatePod", msg});
        continue;
      }
      owner_[key] = name;
      kept.push_back(key);
      const std::string fp = PodSpecFingerprint(pod);
      bool admitted;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = pods_.find(key);
        admitted = it != pods_.end();
        if (admitted && PodSpecFingerprint(it->second) == fp) {
          it->second = pod;  // same resource model: keep the allocation
          continue;
        }
        if (!admitted) {
          auto rf = rejected_fp_.find(key);
          if (rf != rejected_fp_.end() && rf->second == fp) continue;  // still rejected
        }
      }
      if (admitted) {
        spdlog::info("{}: pod {} changed; admitting it again", PathOf(name), key);
        ReleasePod(key, /*keep_owner=*/true);
      }
      AdmitPod(pod, name, fp);
    }
    // Duplicates of another file's pods are not this file's.
    state.keys = kept;
  }

  void AdmitPod(const Pod& pod, const std::string& file, const std::string& fp) {
    const std::string key = pod.Key();
    std::optional<AdmittedPod> admitted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto t0 = std::chrono::steady_clock::now();
      absl::StatusOr<PodAllocation> a = node_->Admit(pod);
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                      .count();
      if (!a.ok()) {
        std::string msg(a.status().message());
        spdlog::error("{}: pod {} not admitted: {}", PathOf(file), key, msg);
        rejections_[key] = Rejection{file, key, "AdmissionError", msg};
        rejected_fp_[key] = fp;
        rejected_pods_[key] = pod;
        rejections_dirty_ = true;
        return;
      }
      metrics_.RecordAdmission(pod, *a, ms);
      if (!a->admitted) {
        spdlog::warn("{}: pod {} rejected: {}: {}", PathOf(file), key, a->reason, a->message);
        rejections_[key] = Rejection{file, key, a->reason, a->message};
        rejected_fp_[key] = fp;
        rejected_pods_[key] = pod;
        rejections_dirty_ = true;
        return;
      }
      spdlog::info("{}: pod {} admitted{}", PathOf(file), key,
                   a->cpus.IsEmpty() ? "" : " (pod cpus " + a->cpus.String() + ")");
      if (rejections_.erase(key) > 0) rejections_dirty_ = true;
      rejected_fp_.erase(key);
      rejected_pods_.erase(key);
      pods_[key] = pod;
      allocations_[key] = *a;
      if (options_.hooks != nullptr) admitted = AdmittedPod{pod, *a};
    }
    if (admitted.has_value()) {
      Rebuild();  // the hooks' snapshot sees the pod before they run it
      options_.hooks->PodAdmitted(*admitted);
    }
  }

  void ReleasePod(const std::string& key, bool keep_owner = false) {
    std::optional<AdmittedPod> removing;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (rejections_.erase(key) > 0) rejections_dirty_ = true;
      rejected_fp_.erase(key);
      rejected_pods_.erase(key);
      auto it = pods_.find(key);
      if (it != pods_.end() && options_.hooks != nullptr) {
        removing = AdmittedPod{it->second, allocations_[key]};
      }
    }
    if (!keep_owner) owner_.erase(key);
    if (removing.has_value()) options_.hooks->PodRemoving(*removing);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pods_.find(key);
    if (it == pods_.end()) return;
    auto removed = node_->Remove(it->second.namespace_name, it->second.name);
    if (!removed.ok() && removed.status().code() != absl::StatusCode::kNotFound &&
        node_->FindPod(it->second.namespace_name, it->second.name) != nullptr) {
      // Not written (a full or read-only disk): the pod still holds its resources, on disk and
      // here, and stays listed; the release is tried again (RetryReleases).
      spdlog::error("pod {}: release failed, will retry: {}", key, removed.status().ToString());
      release_retry_.insert(key);
      return;
    }
    if (!removed.ok()) {
      spdlog::error("pod {}: release failed: {}", key, removed.status().ToString());
    } else {
      spdlog::info("pod {} released", key);
    }
    release_retry_.erase(key);
    pods_.erase(it);
    allocations_.erase(key);
  }

  // Releases again the pods whose release could not be written, when no manifest holds them.
  void RetryReleases() {
    std::set<std::string> keys;
    {
      std::lock_guard<std::mutex> lock(mu_);
      keys.swap(release_retry_);
    }
    for (const auto& key : keys) {
      if (!owner_.contains(key)) ReleasePod(key);
    }
  }

  // Forgets the DuplicatePod rejections of `file`'s pods.
  void ClearDuplicates(const std::string& file) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string prefix = "dup:" + file + ":";
    for (auto it = rejections_.lower_bound(prefix);
         it != rejections_.end() && it->first.compare(0, prefix.size(), prefix) == 0;) {
      it = rejections_.erase(it);
      rejections_dirty_ = true;
    }
  }

  void SetRejection(const std::string& id, std::optional<Rejection> r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (r.has_value()) {
      rejections_[id] = *std::move(r);
      rejections_dirty_ = true;
    } else if (rejections_.erase(id) > 0) {
      rejections_dirty_ = true;
    }
  }

  // REQUIRES: mu_ held.
  void PodResourcesAllocatable() {
    podresources::AllocatableView view;
    view.cpus = node_->AllocatableCpus();
    for (const auto& [numa, types] : node_->MemoryTables()) {
      for (const auto& [type, t] : types) {
        if (t.allocatable > 0) view.memory.push_back({type, t.allocatable, {numa}});
      }
    }
    view.devices = topology_.devices;
    allocatable_ = podresources::BuildAllocatable(view);
  }

  // Rebuilds the snapshot and the served state from the node and publishes both.
  void Rebuild() {
    auto snap = std::make_shared<NodeSnapshot>();
    {
      std::lock_guard<std::mutex> lock(mu_);
      snap->default_cpus = node_->DefaultCpuSet();
      snap->reserved_cpus = node_->ReservedCpus();
      for (auto& a : node_->AdmittedPods()) {
        std::string key = fmt::format("{}/{}", a.namespace_name, a.name);
        auto it = pods_.find(key);
        if (it == pods_.end()) continue;
        allocations_[key] = a;
        snap->pods.push_back(AdmittedPod{it->second, std::move(a)});
      }
      for (const auto& [key, pod] : rejected_pods_) snap->rejected.push_back(pod);
    }
    auto served = podresources::BuildServedState(*snap, rules_, device_numa_, allocatable_);
    {
      std::lock_guard<std::mutex> lock(snap_mu_);
      snapshot_ = std::move(snap);
    }
    server_->Publish(std::move(served));
  }

  void WriteRejections() {
    nlohmann::ordered_json j;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!rejections_dirty_) return;
      rejections_dirty_ = false;
      j["rejections"] = nlohmann::ordered_json::array();
      for (const auto& [id, r] : rejections_) {
        j["rejections"].push_back(
            {{"file", r.file}, {"pod", r.pod}, {"reason", r.reason}, {"message", r.message}});
      }
    }
    if (options_.state_dir.empty()) return;
    std::string path = (fs::path(options_.state_dir) / kRejectionsFile).string();
    absl::Status s = WriteFileAtomically(path, j.dump(2) + "\n");
    if (!s.ok()) spdlog::error("{}", s.ToString());
  }

  const NodeTopology topology_;
  const config::KubeletConfig config_;
  DaemonOptions options_;
  std::shared_ptr<DirLock> state_lock_;  // of options_.state_dir (the Node shares it)
  podresources::ReportingRules rules_;
  podresources::DeviceNuma device_numa_;
  std::shared_ptr<prometheus::Registry> registry_;
  metrics::KubeletMetrics metrics_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::unique_ptr<podresources::PodResourcesServer> server_;

  mutable std::mutex mu_;  // node_, pods_, allocations_, rejections_
  std::unique_ptr<Node> node_;
  std::map<std::string, Pod> pods_;
  std::map<std::string, PodAllocation> allocations_;
  std::map<std::string, Rejection> rejections_;
  std::set<std::string> release_retry_;  // pods whose release could not be written
  std::map<std::string, std::string> rejected_fp_;
  std::map<std::string, Pod> rejected_pods_;  // rejected pods by key (PodResources Get)
  bool rejections_dirty_ = true;
  v1::AllocatableResourcesResponse allocatable_;

  // Event thread only.
  std::map<std::string, FileState> files_;
  std::map<std::string, std::string> owner_;  // pod key -> file
  std::map<std::string, std::string> read_errors_;

  mutable std::mutex snap_mu_;
  std::shared_ptr<const NodeSnapshot> snapshot_;

  mutable std::mutex gen_mu_;
  mutable std::condition_variable gen_cv_;
  uint64_t generation_ = 0;

  std::mutex restore_mu_;
  std::condition_variable restore_cv_;
  bool restore_done_ = false;
  absl::Status restore_status_;

  int inotify_fd_ = -1;
  int pods_wd_ = -1;  // the pods dir's watch; -1 while the directory is gone
  int stop_fd_ = -1;
  std::thread thread_;
  std::once_flag stop_once_;
  std::atomic<bool> hooks_started_{false};
};

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Daemon::~Daemon() { Stop(); }

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(NodeTopology topology,
                                                      config::KubeletConfig config,
                                                      DaemonOptions options) {
  auto impl = std::make_unique<Impl>(std::move(topology), std::move(config), std::move(options));
  absl::Status s = impl->Start();
  if (!s.ok()) {
    impl->Stop();
    return s;
  }
  return std::unique_ptr<Daemon>(new Daemon(std::move(impl)));
}

absl::Status Daemon::WaitRestored() { return impl_->WaitRestored(); }
void Daemon::Stop() {
  if (impl_) impl_->Stop();
}
NodeSnapshot Daemon::Snapshot() const { return impl_->Snapshot(); }
std::vector<Rejection> Daemon::Rejections() const { return impl_->Rejections(); }
uint64_t Daemon::Generation() const { return impl_->Generation(); }
uint64_t Daemon::WaitGeneration(uint64_t after, std::chrono::milliseconds timeout) const {
  return impl_->WaitGeneration(after, timeout);
}

}  // namespace podtopo::serve
