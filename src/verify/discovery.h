// Where `podtopo verify` and `podtopo agent` find the node's containers and the extra intent:
// the CRI runtime (its labels, ContainerStatus's pid and cgroupsPath), a JSON file instead of
// the runtime (tests and fixture nodes), and the kubelet's PodResources List. Outside the core:
// it links gRPC (podtopo_cri, podtopo_client).
//
//   std::vector<verify::ContainerRef> refs;
//   std::vector<std::string> problems;
//   absl::Status s = verify::ContainersFromRuntime("unix:///run/containerd/containerd.sock",
//                                                  refs, problems);
//
// Thread safety: free functions; each call opens its own connection.
#ifndef PODTOPO_VERIFY_DISCOVERY_H_
#define PODTOPO_VERIFY_DISCOVERY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "verify/verify.h"

namespace podtopo::verify {

// The running containers the CRI runtime lists, with their labels, pid and cgroupsPath.
// Errors: the runtime cannot be reached (nothing to verify). A container that goes away
// between the list and its status, or one without a pod UID label, is a problem (in words).
absl::Status ContainersFromRuntime(const std::string& endpoint, std::vector<ContainerRef>& out,
                                   std::vector<std::string>& problems);

// The containers of a JSON file:
// [{"namespace","pod","podUid","container","containerId","cgroupsPath"?,"pid"?}].
// Errors: the file cannot be read or parsed (naming it).
absl::StatusOr<std::vector<ContainerRef>> ContainersFromFile(const std::string& path);

// PodResources List as extra intent (Intent::reported): exclusive CPUs and memory NUMA nodes
// per namespace/pod/container. Errors: the socket cannot be reached or List fails.
absl::Status AddPodResources(const std::string& socket, Intent& intent);

}  // namespace podtopo::verify

#endif  // PODTOPO_VERIFY_DISCOVERY_H_
