// RuntimeHooks: how `podtopo serve` drives a container runtime (issue 6) without knowing it.
//
// The daemon admits and releases pods (the Topology/CPU/Memory Managers, src/admission). With
// `--cri ENDPOINT` it also hands every admitted pod to a RuntimeHooks implementation, which runs
// the pod on the runtime with the cpusets of its allocation, keeps them true (the CPU Manager's
// reconcile loop), and stops the pod before its resources are released. Without `--cri` there
// are no hooks and List reports every admitted pod.
//
// Threading contract:
// - The daemon calls Start() once, after the node state is restored and before any pod event.
// - PodAdmitted() and PodRemoving() are called from the daemon's single pod-event thread, in
//   event order, WITHOUT the daemon's lock held (they may take seconds: sandbox, image, start).
// - The snapshot function given to Start() is thread-safe and may be called from any thread at
//   any time (the reconcile loop calls it every cpuManagerReconcilePeriod); it returns a
//   consistent copy of the current allocations.
// - IsRunning() may be called concurrently from gRPC threads; it must be cheap and not block
//   on the runtime.
// - Shutdown() is called once on SIGTERM, after the last pod event; it stops the loop but
//   leaves the pods running (as a kubelet that exits does).
#ifndef PODTOPO_SERVE_RUNTIME_HOOKS_H_
#define PODTOPO_SERVE_RUNTIME_HOOKS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "admission/node.h"
#include "api/pod.h"
#include "config/kubelet_config.h"
#include "cpuset/cpuset.h"

namespace prometheus {
class Registry;
}

namespace podtopo::serve {

// One admitted pod: its manifest and what the managers gave it.
struct AdmittedPod {
  Pod pod;
  PodAllocation allocation;
};

// A consistent copy of the node's allocations at one instant.
struct NodeSnapshot {
  CpuSet default_cpus;   // the CPU Manager's shared pool (node-shared containers run here)
  CpuSet reserved_cpus;  // reserved CPUs (static policy)
  std::vector<AdmittedPod> pods;  // admitted pods, in admission order
  // Pods the node knows but did not admit (rejected), by "namespace/name". The kubelet's pod
  // manager keeps them: PodResources Get answers for them, without resources.
  std::vector<Pod> rejected;
};

class RuntimeHooks {
 public:
  virtual ~RuntimeHooks() = default;

  // Adopts what already runs (sandboxes and containers labelled with the pods' UIDs and
  // container names), starts pods that are admitted but not running, and starts the reconcile
  // loop. `snapshot` stays valid until Shutdown() returns. `metrics` is the daemon's registry
  // (never null); hooks add their own families to it. An error here is reported and the daemon
  // keeps serving (the runtime may come back later).
  virtual absl::Status Start(std::function<NodeSnapshot()> snapshot,
                             std::shared_ptr<prometheus::Registry> metrics) = 0;

  // A pod was admitted: run it (sandbox, init containers one by one, sidecars, app containers,
  // each with the cpuset of its allocation). Failures are logged and kept as the pod's runtime
  // status; they never undo the admission and never affect other pods.
  virtual void PodAdmitted(const AdmittedPod& pod) = 0;

  // A pod's manifest was removed: stop and remove its sandbox and containers. The daemon
  // releases the pod's resources after this returns.
  virtual void PodRemoving(const AdmittedPod& pod) = 0;

  // Whether the pod with this UID actually runs (its sandbox is ready). List reports only
  // running pods when hooks are present.
  virtual bool IsRunning(const std::string& pod_uid) const = 0;

  // Stops the reconcile loop; leaves pods running.
  virtual void Shutdown() = 0;
};

struct RuntimeOptions {
  std::string cri_endpoint;        // "unix:///run/containerd/containerd.sock"
  config::KubeletConfig config;    // cpuManagerReconcilePeriod, cgroup settings, ...
  std::string state_dir;           // the daemon's --state-dir (hooks may keep files there)
};

// Connects to the CRI runtime at options.cri_endpoint. Defined in src/cli/serve_runtime.cc so
// that the daemon does not link the CRI code. Errors: a malformed endpoint.
absl::StatusOr<std::unique_ptr<RuntimeHooks>> MakeRuntimeHooks(const RuntimeOptions& options);

}  // namespace podtopo::serve

#endif  // PODTOPO_SERVE_RUNTIME_HOOKS_H_
