#include "cgroup/cgroup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fmt/format.h"

namespace podtopo::cgroup {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return absl::NotFoundError(fmt::format("{}: does not exist", path));
    return absl::UnavailableError(fmt::format("{}: {}", path, std::strerror(errno)));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

absl::StatusOr<CpuSet> ReadCpusetFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  std::string value = Trim(*text);
  absl::StatusOr<CpuSet> set = CpuSet::Parse(value);
  if (!set.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: \"{}\" is not a cpuset: {}", path, value, std::string(set.status().message())));
  }
  return set;
}

absl::Status WriteValue(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  if (!out) return absl::UnavailableError(fmt::format("{}: {}", path, std::strerror(errno)));
  out << value;
  out.flush();
  if (!out) return absl::UnavailableError(fmt::format("{}: write {}: {}", path, value,
                                                      std::strerror(errno)));
  return absl::OkStatus();
}

}  // namespace

std::string PodCgroupParent(const std::string& root, const std::string& pod_uid) {
  return fmt::format("/{}/pod{}", root, pod_uid);
}

absl::Status ValidateRootName(const std::string& root) {
  if (root.empty() || root.front() == '/' || root.back() == '/') {
    return absl::InvalidArgumentError(fmt::format(
        "cgroup root \"{}\": must be a non-empty relative name such as \"podtopo\"", root));
  }
  for (char c : root) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
          c == '/')) {
      return absl::InvalidArgumentError(
          fmt::format("cgroup root \"{}\": character '{}' is not allowed", root, c));
    }
  }
  if (root.find("..") != std::string::npos || root.find("//") != std::string::npos) {
    return absl::InvalidArgumentError(fmt::format("cgroup root \"{}\": no \"..\" or \"//\"", root));
  }
  return absl::OkStatus();
}

absl::StatusOr<CpuSet> ReadContainerCpusetCpus(const std::string& mount, const std::string& parent,
                                               const std::string& container_id) {
  return ReadCpusetFile(fmt::format("{}/cpuset{}/{}/cpuset.cpus", mount, parent, container_id));
}

absl::StatusOr<CpuSet> ReadContainerCpusetMems(const std::string& mount, const std::string& parent,
                                               const std::string& container_id) {
  return ReadCpusetFile(fmt::format("{}/cpuset{}/{}/cpuset.mems", mount, parent, container_id));
}

absl::StatusOr<CpuSet> ReadCpusAllowedList(int pid, const std::string& proc_root) {
  std::string path = fmt::format("{}/{}/status", proc_root, pid);
  absl::StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  std::istringstream in(*text);
  std::string line;
  const std::string key = "Cpus_allowed_list:";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      std::string value = Trim(line.substr(key.size()));
      absl::StatusOr<CpuSet> set = CpuSet::Parse(value);
      if (!set.ok()) {
        return absl::InvalidArgumentError(fmt::format(
            "{}: Cpus_allowed_list \"{}\" is not a cpuset: {}", path, value,
            std::string(set.status().message())));
      }
      return set;
    }
  }
  return absl::InvalidArgumentError(fmt::format("{}: no Cpus_allowed_list line", path));
}

absl::Status SetCfsQuota(const std::string& mount, const std::string& parent, int64_t period_us,
                         int64_t quota_us) {
  std::string dir = fmt::format("{}/cpu{}", mount, parent);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(fmt::format("{}: mkdir: {}", dir, ec.message()));
  // The quota must fit the period: lift the quota first, then set the period, then the quota.
  if (absl::Status s = WriteValue(dir + "/cpu.cfs_quota_us", "-1"); !s.ok()) return s;
  if (absl::Status s = WriteValue(dir + "/cpu.cfs_period_us", std::to_string(period_us)); !s.ok()) {
    return s;
  }
  return WriteValue(dir + "/cpu.cfs_quota_us", std::to_string(quota_us < 0 ? -1 : quota_us));
}

std::vector<std::string> RemoveCgroupTree(const std::string& mount, const std::string& parent) {
  std::vector<std::string> left;
  std::error_code ec;
  std::vector<fs::path> hierarchies;
  for (const auto& entry : fs::directory_iterator(mount, ec)) {
    // Skip the symlinks (cpu -> cpu,cpuacct): the real directory is visited under its own name.
    if (entry.is_symlink(ec) || !entry.is_directory(ec)) continue;
    hierarchies.push_back(entry.path());
  }
  for (const fs::path& h : hierarchies) {
    fs::path top = h / fs::path(parent).relative_path();
    if (!fs::is_directory(top, ec)) continue;
    // Collect the directories, deepest first.
    std::vector<fs::path> dirs;
    for (auto it = fs::recursive_directory_iterator(top, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) dirs.push_back(it->path());
    }
    dirs.push_back(top);
    std::sort(dirs.begin(), dirs.end(), [](const fs::path& a, const fs::path& b) {
      return a.string().size() > b.string().size();
    });
    for (const fs::path& d : dirs) {
      if (::rmdir(d.c_str()) != 0 && errno != ENOENT) {
        left.push_back(fmt::format("{}: {}", d.string(), std::strerror(errno)));
      }
    }
  }
  return left;
}

}  // namespace podtopo::cgroup
