// The intent side of podtopo verify: the kubelet's checkpoints, read with the project's codecs.
#include <filesystem>

#include "checkpoint/cpu_state_file.h"
#include "checkpoint/memory_state_file.h"
#include "fmt/format.h"
#include "util/file.h"
#include "verify/verify.h"

namespace podtopo::verify {
namespace {

CpuSet Nodes(const std::vector<checkpoint::MemoryBlock>& blocks) {
  CpuSet out;
  for (const auto& b : blocks) {
    if (!b.numa_affinity) continue;
    for (int n : *b.numa_affinity) {
      if (n >= 0 && n <= CpuSet::kMaxCpuId) out.Add(n);
    }
  }
  return out;
}

// Parses a checkpoint cpuset; a bad one is a problem (the codec already refuses most).
CpuSet ParseOr(const std::string& text, const std::string& where, std::vector<std::string>& problems) {
  auto s = CpuSet::Parse(text);
  if (!s.ok()) {
    problems.push_back(fmt::format("{}: {}", where, std::string(s.status().message())));
    return {};
  }
  return *s;
}

void ReadCpu(const std::string& path, Intent& in) {
  if (!FileExists(path)) return;
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) {
    in.problems.push_back(std::string(bytes.status().message()));
    return;
  }
  // As `podtopo state show`: find the policy the file names, then restore with it and the
  // pod-level gate on so that KEP-5526 pod entries are kept.
  checkpoint::ChecksumReport inspect = checkpoint::InspectCpuCheckpoint(*bytes, true);
  if (!inspect.error.ok()) {
    in.problems.push_back(fmt::format("{}: the checkpoint does not load: {}", path,
                                      std::string(inspect.error.message())));
    return;
  }
  auto cp = checkpoint::RestoreCpuCheckpoint(*bytes, path, {inspect.policy_name, true});
  if (!cp.ok()) {
    in.problems.push_back(std::string(cp.status().message()));
    return;
  }
  in.cpu_policy = cp->policy_name;
  in.default_cpus = ParseOr(cp->default_cpu_set, path + " defaultCpuSet", in.problems);
  for (const auto& [uid, containers] : cp->entries) {
    for (const auto& [name, set] : containers) {
      in.container_cpus[uid][name] =
          ParseOr(set, fmt::format("{} entries[{}][{}]", path, uid, name), in.problems);
    }
  }
  for (const auto& [uid, set] : cp->pod_entries) {
    in.pod_cpus[uid] = ParseOr(set, fmt::format("{} podEntries[{}]", path, uid), in.problems);
  }
}

void ReadMemory(const std::string& path, Intent& in) {
  if (!FileExists(path)) return;
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) {
    in.problems.push_back(std::string(bytes.status().message()));
    return;
  }
  checkpoint::ChecksumReport inspect = checkpoint::InspectMemoryCheckpoint(*bytes);
  if (!inspect.error.ok()) {
    in.problems.push_back(fmt::format("{}: the checkpoint does not load: {}", path,
                                      std::string(inspect.error.message())));
    return;
  }
  auto cp = checkpoint::RestoreMemoryCheckpoint(*bytes, path, {inspect.policy_name, true});
  if (!cp.ok()) {
    in.problems.push_back(std::string(cp.status().message()));
    return;
  }
  in.memory_policy = cp->policy_name;
  for (const auto& [uid, containers] : cp->entries) {
    for (const auto& [name, blocks] : containers) in.container_mems[uid][name] = Nodes(blocks);
  }
  for (const auto& [uid, blocks] : cp->pod_entries) in.pod_mems[uid] = Nodes(blocks);
}

}  // namespace

CpuSet Intent::NodeCpus() const {
  CpuSet all = default_cpus;
  for (const auto& [uid, containers] : container_cpus) {
    for (const auto& [name, set] : containers) all.UnionWith(set);
  }
  for (const auto& [uid, set] : pod_cpus) all.UnionWith(set);
  return all;
}

bool Intent::IsExclusive(const std::string& uid, const std::string& name) const {
  auto pod = container_cpus.find(uid);
  if (pod == container_cpus.end()) return false;
  auto mine = pod->second.find(name);
  if (mine == pod->second.end() || mine->second.IsEmpty()) return false;
  for (const auto& [other, set] : pod->second) {
    if (other != name && set.Intersects(mine->second)) return false;
  }
  return true;
}

CpuSet Intent::PodPool(const std::string& uid) const {
  auto pod = pod_cpus.find(uid);
  if (pod == pod_cpus.end()) return {};
  CpuSet pool = pod->second;
  auto containers = container_cpus.find(uid);
  if (containers != container_cpus.end()) {
    for (const auto& [name, set] : containers->second) {
      if (IsExclusive(uid, name)) pool.Subtract(set);
    }
  }
  return pool;
}

absl::StatusOr<Intent> LoadIntent(const std::string& kubelet_dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(kubelet_dir, ec)) {
    return absl::InvalidArgumentError(
        fmt::format("--kubelet-dir {}: not a directory (the kubelet's root directory, "
                    "usually /var/lib/kubelet)", kubelet_dir));
  }
  Intent in;
  ReadCpu(kubelet_dir + "/cpu_manager_state", in);
  ReadMemory(kubelet_dir + "/memory_manager_state", in);
  return in;
}

}  // namespace podtopo::verify
