// CriRuntime: RuntimeHooks on a CRI runtime (containerd): runs admitted pods with the cpusets of
// their allocations and keeps them true (the CPU Manager's reconcile loop).
//
// - PodAdmitted: images are checked first (ImageStatus; podtopo never pulls: a missing image is
//   an error on that pod only), then RunPodSandbox (host network, cgroup parent
//   "/<cgroup root>/pod<uid>", whose cpu.cfs_quota_us is set per the pod's limits unless the pod
//   has exclusive CPUs), init containers one by one to completion, sidecars started and left
//   running, app containers started; each created with cpuset_cpus/cpuset_mems/CFS quota of its
//   allocation (pod_spec.h).
// - PodRemoving: StopContainer (grace period), StopPodSandbox, RemovePodSandbox, then the pod's
//   cgroup directories and log directory are removed.
// - Every reconcile period (cpuManagerReconcilePeriod, sliding like the kubelet's wait.Until):
//   a sync step (adopt what runs by labels; start admitted pods that do not run, with back-off
//   after failures; restart missing/exited sidecar and app containers; stop and remove
//   sandboxes of pods that are no longer admitted), then for every running container: the
//   ACTUAL cpuset (cgroup cpuset.cpus, else ContainerStatus resources) is compared with the
//   state (node-shared containers: the current default set) and UpdateContainerResources is
//   called where they differ. Unlike the kubelet (#138731) the comparison is against what the
//   container really has, not against what was last pushed, so drift made by hand is corrected.
//   Container records whose container is gone are dropped (stale state).
// - When the runtime does not answer, podtopo_runtime_up drops to 0, it is logged once, the
//   state is kept (IsRunning reports the last known state) and the next pass that reaches the
//   runtime catches up.
//
// Metrics (on the registry given to Start):
//   podtopo_reconcile_updates_total{reason="drift"|"default_set"|"state"}
//   podtopo_reconcile_failures_total{reason="update"|"status"|"runtime_unavailable"}
//   podtopo_reconcile_stale_containers_total, podtopo_reconcile_passes_total,
//   podtopo_reconcile_last_interval_seconds, podtopo_runtime_up,
//   podtopo_runtime_pod_starts_total{result="ok"|"error"}
//
// Example:
//   auto hooks = CriRuntime::Create({.cri_endpoint = "unix:///run/containerd/containerd.sock",
//                                    .reconcile_period = std::chrono::seconds(5)});
//   (*hooks)->Start(snapshot_fn, registry);
//   (*hooks)->PodAdmitted(pod);
#ifndef PODTOPO_RUNTIME_CRI_RUNTIME_H_
#define PODTOPO_RUNTIME_CRI_RUNTIME_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "cri/cri_client.h"
#include "runtime/pod_spec.h"
#include "serve/runtime_hooks.h"

namespace prometheus {
class Counter;
class Gauge;
template <typename T>
class Family;
}  // namespace prometheus

namespace podtopo::runtime {

struct CriRuntimeOptions {
  std::string cri_endpoint;              // unix:///path/containerd.sock
  std::string cgroup_root = "podtopo";   // pod cgroup parents are /<cgroup_root>/pod<uid>
  std::string cgroup_mount = "/sys/fs/cgroup";
  std::string log_dir = "/var/log/podtopo-pods";  // <log_dir>/<ns>_<name>_<uid>/<c>/<n>.log
  std::chrono::milliseconds reconcile_period{10000};  // 0 disables the loop
  std::chrono::milliseconds call_timeout{10000};
  std::chrono::seconds init_timeout{300};  // an init container must finish within this
  int64_t stop_grace_seconds = 2;          // StopContainer timeout
  // The DisableCPUQuotaWithExclusiveCPUs gate: exclusive containers (and pods holding them)
  // run without a CFS quota. Locked on in v1.37 (#139351); off keeps the quota of the limits.
  bool disable_cpu_quota_with_exclusive_cpus = true;
};

class CriRuntime : public serve::RuntimeHooks {
 public:
  // Errors: a malformed endpoint or cgroup root.
  static absl::StatusOr<std::unique_ptr<CriRuntime>> Create(CriRuntimeOptions options);
  ~CriRuntime() override;

  absl::Status Start(std::function<serve::NodeSnapshot()> snapshot,
                     std::shared_ptr<prometheus::Registry> metrics) override;
  void PodAdmitted(const serve::AdmittedPod& pod) override;
  void PodRemoving(const serve::AdmittedPod& pod) override;
  bool IsRunning(const std::string& pod_uid) const override;
  void Shutdown() override;

  // One reconcile pass (sync + cpusets), as the loop runs it. For tests.
  void ReconcileOnce();

 private:
  struct ContainerRecord {
    std::string id;
    ContainerKind kind = ContainerKind::kApp;
    uint32_t attempt = 0;
    std::string last_pushed;  // cpuset last written by podtopo ("" = at creation)
  };
  struct PodRecord {
    std::string uid, namespace_name, name;
    std::string sandbox_id;
    // The attempt number of the pod's next sandbox: one more than the newest the runtime
    // lists or podtopo created (the kubelet's podSandboxChanged). A sandbox that cannot be
    // removed keeps its name (NAME_NAMESPACE_UID_ATTEMPT) reserved in containerd, so a new one
    // of the same attempt would be refused for ever.
    uint32_t next_sandbox_attempt = 0;
    // The same for each container name: containerd reserves NAME_POD_NAMESPACE_UID_ATTEMPT
    // across the pod's sandboxes (the kubelet's next attempt is the newest status's + 1).
    std::map<std::string, uint32_t> next_container_attempt;
    bool running = false;
    std::string error;
    std::map<std::string, ContainerRecord> containers;
    std::chrono::steady_clock::time_point next_retry{};
    std::chrono::milliseconds backoff{0};
  };

  explicit CriRuntime(CriRuntimeOptions options, std::unique_ptr<cri::CriClient> client);

  std::string PodParent(const std::string& uid) const;
  // Removes the pod's cgroup directories in every hierarchy, retrying for up to 2 s while one
  // is still busy (the sandbox's last tasks may still be exiting after RemovePodSandbox
  // answered); returns what is left.
  std::vector<std::string> RemovePodCgroups(const std::string& uid) const;
  std::string PodLogDir(const Pod& pod) const;
  // Runs (or completes) a pod; ops_mu_ held. Returns the error that stopped it.
  absl::Status RunPod(const serve::AdmittedPod& pod, const CpuSet& default_cpus);
  absl::Status RunPodSteps(const serve::AdmittedPod& pod, const CpuSet& default_cpus);
  absl::Status StartContainerOf(const serve::AdmittedPod& pod, const Container& c,
                                const criv1::PodSandboxConfig& sandbox, const CpuSet& default_cpus,
                                const std::string& sandbox_id, uint32_t attempt);
  absl::Status WaitForExit(const std::string& name, const std::string& container_id);
  void StopAndRemoveSandbox(const std::string& uid, const std::string& sandbox_id);
  // Adopts and catches up; ops_mu_ held.
  absl::Status Sync(const serve::NodeSnapshot& snap);
  void ReconcileCpusets(const serve::NodeSnapshot& snap);
  void NoteRuntime(const absl::Status& status);
  void SetRunning(const std::string& uid, bool running, const std::string& error);
  void Loop();

  CriRuntimeOptions options_;
  std::unique_ptr<cri::CriClient> client_;
  std::function<serve::NodeSnapshot()> snapshot_;
  std::shared_ptr<prometheus::Registry> registry_;

  std::mutex ops_mu_;  // pod lifecycle operations (events, sync)
  mutable std::mutex mu_;  // records_, removing_
  std::map<std::string, PodRecord> records_;  // by pod UID
  std::set<std::string> removing_;            // UIDs whose manifest was removed

  std::atomic<bool> runtime_up_{true};
  std::atomic<bool> stop_{false};
  std::mutex loop_mu_;
  std::condition_variable loop_cv_;
  std::thread loop_;
  std::chrono::steady_clock::time_point last_pass_{};

  prometheus::Family<prometheus::Counter>* updates_ = nullptr;
  prometheus::Family<prometheus::Counter>* failures_ = nullptr;
  prometheus::Family<prometheus::Counter>* starts_ = nullptr;
  prometheus::Counter* stale_ = nullptr;
  prometheus::Counter* passes_ = nullptr;
  prometheus::Gauge* interval_ = nullptr;
  prometheus::Gauge* up_ = nullptr;
};

}  // namespace podtopo::runtime

#endif  // PODTOPO_RUNTIME_CRI_RUNTIME_H_
