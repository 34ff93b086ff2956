// serve::MakeRuntimeHooks: `podtopo serve --cri ENDPOINT` runs admitted pods on a CRI runtime
// through podtopo_runtime (CriRuntime). Kept out of the daemon so that it does not link the CRI
// code. An endpoint that is not a socket, or one this user may not connect to, is an error at
// once; a runtime that does not run yet is logged and waited for.
//
// Environment (for tests and special setups):
//   PODTOPO_CGROUP_ROOT   pod cgroup parents are /<root>/pod<uid> (default "podtopo")
//   PODTOPO_STOP_GRACE    StopContainer grace period in seconds (default 2)
#include <chrono>
#include <cstdlib>
#include <string>

#include "config/feature_gates.h"
#include "fmt/format.h"
#include "runtime/cri_runtime.h"
#include "serve/runtime_hooks.h"
#include "spdlog/spdlog.h"
#include "util/unix_socket.h"

namespace podtopo::serve {

absl::StatusOr<std::unique_ptr<RuntimeHooks>> MakeRuntimeHooks(const RuntimeOptions& options) {
  // What is wrong with the endpoint, at once: a path that is not a socket or that this user
  // may not use is an error; a runtime that is not there (yet) is waited for.
  absl::StatusOr<std::string> path = UnixSocketPath("--cri", options.cri_endpoint);
  if (!path.ok()) return path.status();
  if (absl::Status s = CheckUnixSocket(*path, {"CRI socket", "containerd", "--cri"}); !s.ok()) {
    if (!absl::IsNotFound(s) && !absl::IsUnavailable(s)) {
      return absl::Status(s.code(), "--cri: " + std::string(s.message()));
    }
    spdlog::warn("--cri: {}; podtopo retries until it answers", std::string(s.message()));
  }
  runtime::CriRuntimeOptions o;
  o.cri_endpoint = options.cri_endpoint;
  o.disable_cpu_quota_with_exclusive_cpus =
      options.config.FeatureEnabled(config::kDisableCPUQuotaWithExclusiveCPUs);
  if (const char* root = std::getenv("PODTOPO_CGROUP_ROOT"); root != nullptr && *root != '\0') {
    o.cgroup_root = root;
  }
  if (const char* grace = std::getenv("PODTOPO_STOP_GRACE"); grace != nullptr && *grace != '\0') {
    char* end = nullptr;
    long v = std::strtol(grace, &end, 10);
    if (end == grace || *end != '\0' || v < 0 || v > 3600) {
      return absl::InvalidArgumentError(
          fmt::format("PODTOPO_STOP_GRACE=\"{}\": expected whole seconds 0..3600", grace));
    }
    o.stop_grace_seconds = v;
  }
  o.log_dir = options.state_dir.empty() ? std::string("/var/log/podtopo-pods")
                                        : options.state_dir + "/pod-logs";
  o.reconcile_period = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::nanoseconds(options.config.cpu_manager_reconcile_period.nanos()));
  auto hooks = runtime::CriRuntime::Create(std::move(o));
  if (!hooks.ok()) return hooks.status();
  return std::unique_ptr<RuntimeHooks>(std::move(*hooks));
}

}  // namespace podtopo::serve
