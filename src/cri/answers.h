// What podtopo reads from the CRI runtime's answers, as pure functions of those answers: a sync
// pass's choice of sandboxes and containers, and the cpuset a container status reports. The
// answers come from a runtime that may be broken (duplicated or empty ids, missing labels, odd
// states, any text as a cpuset); every function accepts any message (fuzz/cri_answer_fuzzer.cc).
//
//   SandboxChoice c = ChooseSandboxes(list_response, kLabelPodUid,
//                                     [&](const std::string& uid) { return admitted(uid); });
//   for (auto& [uid, sandbox] : c.kept) ...      // adopt
//   for (auto& [uid, id] : c.removed) ...        // StopPodSandbox + RemovePodSandbox
#ifndef PODTOPO_CRI_ANSWERS_H_
#define PODTOPO_CRI_ANSWERS_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cri/runtime/v1/api.pb.h"

namespace podtopo::cri {

struct SandboxChoice {
  // Pod UID -> its newest (created_at; the first listed among equals) READY sandbox.
  std::map<std::string, const ::runtime::v1::PodSandbox*> kept;
  // (pod UID, "" when unlabelled; sandbox id) of every other sandbox: not READY, of a pod
  // `wanted` refuses, or older than the kept one. Each id once, never a kept id.
  std::vector<std::pair<std::string, std::string>> removed;
};

// Reads ListPodSandbox's answer. The pod of a sandbox is its label `uid_label`. Sandboxes
// without an id cannot be acted on and are ignored; an id listed twice counts once (its first
// entry).
SandboxChoice ChooseSandboxes(const ::runtime::v1::ListPodSandboxResponse& answer,
                              const std::string& uid_label,
                              const std::function<bool(const std::string& uid)>& wanted);

// The containers of sandbox `sandbox_id` in ListContainers' answer, by their label
// `name_label`: the newest (created_at; the first listed among equals) of each name.
// Containers without that label or without an id are ignored.
std::map<std::string, const ::runtime::v1::Container*> NewestContainers(
    const ::runtime::v1::ListContainersResponse& answer, const std::string& sandbox_id,
    const std::string& name_label);

// The cpuset ContainerStatus reports (status.resources.linux.cpuset_cpus), in CpuSet's
// canonical form when it parses ("0-3,8"), else as the runtime wrote it; "" when the status
// has no resources.
std::string ReportedCpuset(const ::runtime::v1::ContainerStatusResponse& answer);

}  // namespace podtopo::cri

#endif  // PODTOPO_CRI_ANSWERS_H_
