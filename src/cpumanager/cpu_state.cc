#include "cpumanager/cpu_state.h"

namespace podtopo::cpumanager {

std::optional<CpuSet> CpuState::GetCpuSet(const std::string& pod_uid,
                                          const std::string& container_name) const {
  auto pod = assignments_.find(pod_uid);
  if (pod == assignments_.end()) return std::nullopt;
  auto c = pod->second.find(container_name);
  if (c == pod->second.end()) return std::nullopt;
  return c->second;
}

CpuSet CpuState::GetCpuSetOrDefault(const std::string& pod_uid,
                                    const std::string& container_name) const {
  std::optional<CpuSet> cpus = GetCpuSet(pod_uid, container_name);
  return cpus.has_value() ? *cpus : default_cpuset_;
}

std::optional<CpuSet> CpuState::GetPodCpuSet(const std::string& pod_uid) const {
  auto it = pod_assignments_.find(pod_uid);
  if (it == pod_assignments_.end()) return std::nullopt;
  return it->second;
}

bool CpuState::HasContainerEntries(const std::string& pod_uid) const {
  auto it = assignments_.find(pod_uid);
  return it != assignments_.end() && !it->second.empty();
}

void CpuState::SetCpuSet(const std::string& pod_uid, const std::string& container_name,
                         const CpuSet& cpus) {
  assignments_[pod_uid][container_name] = cpus;
}

void CpuState::SetPodCpuSet(const std::string& pod_uid, const CpuSet& cpus) {
  pod_assignments_[pod_uid] = cpus;
}

std::optional<CpuSet> CpuState::Delete(const std::string& pod_uid,
                                       const std::string& container_name) {
  auto pod = assignments_.find(pod_uid);
  if (pod == assignments_.end()) return std::nullopt;
  auto c = pod->second.find(container_name);
  if (c == pod->second.end()) return std::nullopt;
  std::optional<CpuSet> cpus = std::move(c->second);
  pod->second.erase(c);
  if (pod->second.empty()) assignments_.erase(pod);
  return cpus;
}

void CpuState::DeletePod(const std::string& pod_uid) {
  pod_assignments_.erase(pod_uid);
  assignments_.erase(pod_uid);
}

void CpuState::ClearState() {
  default_cpuset_.Clear();
  assignments_.clear();
  pod_assignments_.clear();
}

}  // namespace podtopo::cpumanager
