// Cgroups of pods run through CRI (cgroup v1, cgroupfs driver), as podtopo names and reads them.
//
// Every pod gets its own cgroup parent "/<root>/pod<uid>" (the kubelet's cgroupfs naming
// without the QoS level); runc puts each container in "<parent>/<container id>" in every
// hierarchy. runc creates the parent directories but never removes them:
// RemoveCgroupTree() does.
//
// Example:
//   std::string parent = PodCgroupParent("podtopo", "1234");   // "/podtopo/pod1234"
//   auto cpus = ReadContainerCpusetCpus(kCgroupRoot, parent, container_id);  // CpuSet {1}
//   auto allowed = ReadCpusAllowedList(pid);                                  // CpuSet {1}
//   RemoveCgroupTree(kCgroupRoot, parent);  // rmdir under every /sys/fs/cgroup/*/podtopo/pod1234
#ifndef PODTOPO_CGROUP_CGROUP_H_
#define PODTOPO_CGROUP_CGROUP_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cpuset/cpuset.h"

namespace podtopo::cgroup {

inline constexpr char kCgroupRoot[] = "/sys/fs/cgroup";

// "/<root>/pod<uid>". REQUIRES: root is a relative cgroup name without leading '/'.
std::string PodCgroupParent(const std::string& root, const std::string& pod_uid);

// Checks a cgroup root name: non-empty, [A-Za-z0-9._-] and '/' separated, no "..".
absl::Status ValidateRootName(const std::string& root);

// <mount>/cpuset/<parent>/<container_id>/cpuset.cpus (and .mems), parsed.
// Errors: kNotFound when the file does not exist; kInvalidArgument naming the file when its
// content is not a cpuset.
absl::StatusOr<CpuSet> ReadContainerCpusetCpus(const std::string& mount,
                                               const std::string& parent,
                                               const std::string& container_id);
absl::StatusOr<CpuSet> ReadContainerCpusetMems(const std::string& mount,
                                               const std::string& parent,
                                               const std::string& container_id);

// Cpus_allowed_list of /proc/<pid>/status (proc_root is "/proc" outside tests).
absl::StatusOr<CpuSet> ReadCpusAllowedList(int pid, const std::string& proc_root = "/proc");

// Writes cpu.cfs_period_us / cpu.cfs_quota_us of <mount>/cpu/<parent>, creating the directory.
// quota_us < 0 disables the quota. Errors name the file.
absl::Status SetCfsQuota(const std::string& mount, const std::string& parent, int64_t period_us,
                         int64_t quota_us);

// Removes <mount>/<hierarchy>/<parent> and everything below it, deepest first, in every
// hierarchy under `mount` (rmdir only: a cgroup that still has tasks stays and is reported).
// A missing directory is not an error. Returns the directories that could not be removed.
std::vector<std::string> RemoveCgroupTree(const std::string& mount, const std::string& parent);

}  // namespace podtopo::cgroup

#endif  // PODTOPO_CGROUP_CGROUP_H_
