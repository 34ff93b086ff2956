// RunningPods: which pods (and containers) are really running on the node, for
// `podtopo state repair --running-pods FILE`.
//
// The file may be any of (detected from its content):
//   * plain text: one pod UID per line; blank lines and lines starting with '#' are ignored;
//   * `kubectl get pods -o json` (a List/PodList; items[].metadata.uid; container IDs from
//     status.{initContainerStatuses,containerStatuses}[].containerID, "containerd://<id>")
//     or a single Pod object;
//   * `crictl pods -o json` ({"items": [{"metadata": {"uid": ...}}]});
//   * `crictl ps -a -o json` ({"containers": [{"id", "labels": {"io.kubernetes.pod.uid",
//     "io.kubernetes.container.name"}}]}) — the form that also maps container IDs, which
//     migrating a V1 CPU checkpoint (entries keyed by container ID) needs.
// An empty list is valid (no pod runs: every checkpoint entry is stale).
//
// Example:
//   absl::StatusOr<RunningPods> r = ParseRunningPods("0f6c...\n", "running.txt");
//   r->uids.count("0f6c...");   // 1
#ifndef PODTOPO_STATE_RUNNING_PODS_H_
#define PODTOPO_STATE_RUNNING_PODS_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"

namespace podtopo::state {

struct RunningPods {
  std::set<std::string> uids;
  // Container ID (without a "containerd://"-style scheme) -> (pod UID, container name).
  std::map<std::string, std::pair<std::string, std::string>> containers;
  // "text", "kubectl", "crictl-pods" or "crictl-ps".
  std::string format;
};

// Parses `text` (read from `path`, named in errors). Errors (kInvalidArgument) name the file
// and the field: `running.json: items[2].metadata.uid: expected a string`.
absl::StatusOr<RunningPods> ParseRunningPods(std::string_view text, const std::string& path);

// ReadFile + ParseRunningPods ("-" reads standard input).
absl::StatusOr<RunningPods> LoadRunningPods(const std::string& path);

}  // namespace podtopo::state

#endif  // PODTOPO_STATE_RUNNING_PODS_H_
