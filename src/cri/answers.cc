#include "cri/answers.h"

#include <set>

#include "cpuset/cpuset.h"

namespace podtopo::cri {

namespace criv1 = ::runtime::v1;

SandboxChoice ChooseSandboxes(const criv1::ListPodSandboxResponse& answer,
                              const std::string& uid_label,
                              const std::function<bool(const std::string& uid)>& wanted) {
  SandboxChoice out;
  std::set<std::string> seen;
  for (const criv1::PodSandbox& sb : answer.items()) {
    if (sb.id().empty() || !seen.insert(sb.id()).second) continue;
    auto l = sb.labels().find(uid_label);
    std::string uid = l == sb.labels().end() ? "" : l->second;
    if (uid.empty() || sb.state() != criv1::SANDBOX_READY || !wanted(uid)) {
      out.removed.emplace_back(uid, sb.id());
      continue;
    }
    const criv1::PodSandbox*& slot = out.kept[uid];
    if (slot == nullptr || sb.created_at() > slot->created_at()) {
      if (slot != nullptr) out.removed.emplace_back(uid, slot->id());
      slot = &sb;
    } else {
      out.removed.emplace_back(uid, sb.id());
    }
  }
  return out;
}

std::map<std::string, const criv1::Container*> NewestContainers(
    const criv1::ListContainersResponse& answer, const std::string& sandbox_id,
    const std::string& name_label) {
  std::map<std::string, const criv1::Container*> newest;
  for (const criv1::Container& c : answer.containers()) {
    if (c.pod_sandbox_id() != sandbox_id || c.id().empty()) continue;
    auto n = c.labels().find(name_label);
    if (n == c.labels().end()) continue;
    const criv1::Container*& slot = newest[n->second];
    if (slot == nullptr || c.created_at() > slot->created_at()) slot = &c;
  }
  return newest;
}

std::string ReportedCpuset(const criv1::ContainerStatusResponse& answer) {
  if (!answer.status().has_resources() || !answer.status().resources().has_linux()) return "";
  const std::string& text = answer.status().resources().linux().cpuset_cpus();
  absl::StatusOr<CpuSet> parsed = CpuSet::Parse(text);
  return parsed.ok() ? parsed->String() : text;
}

}  // namespace podtopo::cri
