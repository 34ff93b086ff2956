// CpuState: the CPU Manager's in-memory state (kubelet cpumanager/state, state_mem.go).
//
// It holds three things:
//   - the default (shared) cpuset: every CPU no container holds exclusively;
//   - container assignments: pod UID -> container name -> cpuset;
//   - pod entries (KEP-5526, PodLevelResourceManagers): pod UID -> the pod's CPU "bubble".
// All maps are ordered, so every walk over the state is deterministic (the kubelet's Go maps
// are not). The state checks nothing: the static policy keeps it consistent and validates it
// in StaticPolicy::Start.
//
// Example:
//   CpuState s;
//   s.SetDefaultCpuSet(CpuSet::Range(0, 7));
//   s.SetCpuSet("pod-uid", "app", CpuSet{2, 6});
//   s.GetCpuSet("pod-uid", "app");                 // {2,6}
//   s.GetCpuSetOrDefault("pod-uid", "other");      // 0-7 (no entry: the default set)
//
// Thread safety: a value type; callers serialise mutations (the kubelet's manager lock).
#ifndef PODTOPO_CPUMANAGER_CPU_STATE_H_
#define PODTOPO_CPUMANAGER_CPU_STATE_H_

#include <map>
#include <optional>
#include <string>

#include "cpuset/cpuset.h"

namespace podtopo::cpumanager {

// pod UID -> container name -> cpuset.
using ContainerCpuAssignments = std::map<std::string, std::map<std::string, CpuSet>>;
// pod UID -> the pod-level CPU set (the bubble).
using PodCpuAssignments = std::map<std::string, CpuSet>;

class CpuState {
 public:
  const CpuSet& GetDefaultCpuSet() const { return default_cpuset_; }
  // The container's entry; nullopt when it has none.
  std::optional<CpuSet> GetCpuSet(const std::string& pod_uid,
                                  const std::string& container_name) const;
  // The container's entry, or the default set when it has none (manager.GetCPUAffinity).
  CpuSet GetCpuSetOrDefault(const std::string& pod_uid, const std::string& container_name) const;
  // The pod-level set; nullopt when the pod has no pod entry.
  std::optional<CpuSet> GetPodCpuSet(const std::string& pod_uid) const;
  const ContainerCpuAssignments& GetCpuAssignments() const { return assignments_; }
  const PodCpuAssignments& GetPodCpuAssignments() const { return pod_assignments_; }
  // True iff the pod has at least one container entry.
  bool HasContainerEntries(const std::string& pod_uid) const;

  void SetDefaultCpuSet(const CpuSet& cpus) { default_cpuset_ = cpus; }
  void SetCpuSet(const std::string& pod_uid, const std::string& container_name,
                 const CpuSet& cpus);
  void SetPodCpuSet(const std::string& pod_uid, const CpuSet& cpus);
  void SetCpuAssignments(const ContainerCpuAssignments& a) { assignments_ = a; }
  void SetPodCpuAssignments(const PodCpuAssignments& a) { pod_assignments_ = a; }
  // Deletes one container entry and returns its set (nullopt: it had none); the pod's map goes
  // away with its last container.
  std::optional<CpuSet> Delete(const std::string& pod_uid, const std::string& container_name);
  // Deletes the pod entry and any container entries of the pod.
  void DeletePod(const std::string& pod_uid);
  // Empties everything (default set included).
  void ClearState();

  friend bool operator==(const CpuState&, const CpuState&) = default;

 private:
  CpuSet default_cpuset_;
  ContainerCpuAssignments assignments_;
  PodCpuAssignments pod_assignments_;
};

}  // namespace podtopo::cpumanager

#endif  // PODTOPO_CPUMANAGER_CPU_STATE_H_
