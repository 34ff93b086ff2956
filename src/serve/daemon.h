// Daemon: `podtopo serve` — a simulated kubelet node serving the PodResources API.
//
// Start() listens on the socket first (every call answers FAILED_PRECONDITION until the state
// is restored), then, on the daemon's pod-event thread: restores the node (Node with
// --state-dir reconciles the checkpoints), starts the runtime hooks if any, reconciles the
// pods directory with what was restored, and watches it with inotify:
//   * a manifest file appearing (or renamed into the directory) is admitted, pod by pod;
//   * a file removed (or renamed away) releases its pods;
//   * a file changed re-evaluates its pods: pods gone from it are released, pods whose
//     resource model changed are released and admitted again, new pods admitted, unchanged
//     pods untouched;
//   * a file that does not parse is logged (naming the file) and recorded; its previously
//     admitted pods stay as they were; nothing else is affected;
//   * files whose name starts with '.' or ends with '~', and names not ending in .yaml, .yml
//     or .json are ignored (editors' temporary files).
// A pod whose namespace/name is already held by another file is rejected ("DuplicatePod").
// Rejections (pod reason and message, or the file's parse error) are logged with spdlog and
// kept: Rejections() and, with a state dir, `<state-dir>/podtopo_rejections.json` (written
// atomically after every change).
// After every batch of events an immutable ServedState is rebuilt and published, so List
// only copies it.
//
// Example:
//   DaemonOptions o{.socket_path = "/tmp/pr/kubelet.sock", .pods_dir = "/tmp/pods"};
//   auto d = Daemon::Start(topology, config, std::move(o));
//   (*d)->WaitRestored();     // restore status
//   ...
//   (*d)->Stop();
//
// Thread-safe: every public method may be called from any thread.
#ifndef PODTOPO_SERVE_DAEMON_H_
#define PODTOPO_SERVE_DAEMON_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "config/kubelet_config.h"
#include "podresources/report.h"
#include "serve/runtime_hooks.h"
#include "topology/node_topology.h"

namespace podtopo::serve {

struct DaemonOptions {
  std::string socket_path;
  std::string pods_dir;
  std::string state_dir;     // "" = state in memory only
  std::string metrics_addr;  // "" = no metrics endpoint
  podresources::Compat compat = podresources::Compat::k1_37;
  double qps = 100;  // <= 0: no rate limit
  int burst = 10;
  bool strict = false;  // manifests holding kinds podtopo does not read are bad manifests
  // The runtime hooks (--cri); null = none.
  std::unique_ptr<RuntimeHooks> hooks;
  // Test hook: runs on the pod-event thread before the state is restored.
  std::function<void()> before_restore;
};

// One rejected pod, or one manifest file that could not be read.
struct Rejection {
  std::string file;   // the manifest's file name in the pods dir
  std::string pod;    // "namespace/name"; "" for a file error
  std::string reason;   // the kubelet's reason, "DuplicatePod", or "InvalidManifest"
  std::string message;
};

class Daemon {
 public:
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(NodeTopology topology,
                                                       config::KubeletConfig config,
                                                       DaemonOptions options);
  ~Daemon();  // Stop()

  // Blocks until the state is restored (or failed to restore) and the pods directory was
  // scanned once; returns the restore status.
  absl::Status WaitRestored();

  // Graceful shutdown: stops the event thread, shuts the hooks down, lets in-flight calls
  // finish and removes the socket. Idempotent.
  void Stop();

  // Consistent copy of the allocations.
  NodeSnapshot Snapshot() const;
  std::vector<Rejection> Rejections() const;
  // Incremented after every processed batch of pod events (tests wait on it).
  uint64_t Generation() const;
  // Blocks until Generation() > `after` or `timeout` passes; returns the generation.
  uint64_t WaitGeneration(uint64_t after, std::chrono::milliseconds timeout) const;

  class Impl;

 private:
  explicit Daemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace podtopo::serve

#endif  // PODTOPO_SERVE_DAEMON_H_
