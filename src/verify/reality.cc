// The reality side of podtopo verify: cgroup files and /proc, under configurable roots.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "fmt/format.h"
#include "util/file.h"
#include "verify/verify.h"

namespace podtopo::verify {
namespace {

namespace fs = std::filesystem;

constexpr unsigned kPfKthread = 0x00200000;  // include/linux/sched.h

bool IsHexId(absl::string_view s) {
  if (s.size() < 12) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isxdigit(c); });
}

// The container id a cgroup directory's name carries: "<id>" (cgroupfs, podtopo serve) or
// "<prefix>-<id>.scope" (systemd: cri-containerd-, crio-, docker-).
std::string IdOfDir(absl::string_view name) {
  if (absl::ConsumeSuffix(&name, ".scope")) {
    size_t dash = name.rfind('-');
    if (dash == absl::string_view::npos) return "";
    name = name.substr(dash + 1);
  }
  return IsHexId(name) ? std::string(name) : "";
}

absl::StatusOr<CpuSet> ReadCpuSetFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  auto set = CpuSet::Parse(std::string(absl::StripAsciiWhitespace(*text)));
  if (!set.ok()) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", path, std::string(set.status().message())));
  }
  return *set;
}

std::vector<int> ReadPids(const std::string& path, absl::Status* error) {
  std::vector<int> out;
  absl::StatusOr<std::string> text = ReadSmallFile(path, 16 << 20);
  if (!text.ok()) {
    *error = text.status();
    return out;
  }
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipWhitespace())) {
    int pid = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &pid) && pid > 0) out.push_back(pid);
  }
  return out;
}

// /proc/PID/stat fields after the command: [0] is field 3 (state).
struct Stat {
  std::string comm;
  unsigned long flags = 0;
  uint64_t ticks = 0;  // utime + stime
  int processor = -1;
};

absl::StatusOr<Stat> ParseStat(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSmallFile(path, 1 << 16);
  if (!text.ok()) return text.status();
  size_t open = text->find('(');
  size_t close = text->rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return absl::InvalidArgumentError(fmt::format("{}: no (comm) field", path));
  }
  Stat s;
  s.comm = text->substr(open + 1, close - open - 1);
  std::vector<absl::string_view> f =
      absl::StrSplit(absl::string_view(*text).substr(close + 1), ' ', absl::SkipWhitespace());
  uint64_t utime = 0, stime = 0;
  if (f.size() < 37 || !absl::SimpleAtoi(f[6], &s.flags) || !absl::SimpleAtoi(f[11], &utime) ||
      !absl::SimpleAtoi(f[12], &stime) || !absl::SimpleAtoi(f[36], &s.processor)) {
    return absl::InvalidArgumentError(fmt::format("{}: fewer than 39 fields or not numbers", path));
  }
  s.ticks = utime + stime;
  return s;
}

}  // namespace

Reality::Reality(RealityOptions options) : options_(std::move(options)) {
  std::error_code ec;
  version_ = fs::exists(options_.cgroup_root + "/cgroup.controllers", ec) ? 2 : 1;
  if (options_.page_size == 0) options_.page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (options_.clock_ticks <= 0) options_.clock_ticks = static_cast<int>(sysconf(_SC_CLK_TCK));
}

std::string Reality::CpusetDir(const std::string& rel) const {
  return version_ == 2 ? options_.cgroup_root + "/" + rel
                       : options_.cgroup_root + "/cpuset/" + rel;
}

std::string Reality::MemoryDir(const std::string& rel) const {
  return version_ == 2 ? options_.cgroup_root + "/" + rel
                       : options_.cgroup_root + "/memory/" + rel;
}

std::string Reality::CgroupsPathToDir(const std::string& cgroups_path) {
  std::vector<std::string> parts = absl::StrSplit(cgroups_path, ':');
  if (parts.size() != 3) {
    absl::string_view p = cgroups_path;
    while (absl::ConsumePrefix(&p, "/")) {
    }
    return std::string(p);
  }
  // systemd: "<slice>:<prefix>:<name>". A slice "a-b-c.slice" lives in
  // a.slice/a-b.slice/a-b-c.slice; the unit is "<prefix>-<name>.scope".
  std::string out;
  absl::string_view slice = parts[0];
  if (absl::ConsumeSuffix(&slice, ".slice") && !slice.empty() && slice != "-") {
    std::string prefix;
    for (absl::string_view piece : absl::StrSplit(slice, '-')) {
      prefix = prefix.empty() ? std::string(piece) : prefix + "-" + std::string(piece);
      out += prefix + ".slice/";
    }
  }
  out += parts[1].empty() ? parts[2] : parts[1] + "-" + parts[2] + ".scope";
  return out;
}

void Reality::BuildIndex() {
  indexed_ = true;
  std::string top = CpusetDir("");
  std::error_code ec;
  fs::recursive_directory_iterator it(top, fs::directory_options::skip_permission_denied, ec);
  if (ec) return;
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it.depth() > 6) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_directory(ec)) continue;
    std::string id = IdOfDir(it->path().filename().string());
    // Any child of a pod's cgroup ("pod<uid>", "...-pod<uid>.slice") is a container's, whatever
    // its runtime's ids look like.
    if (id.empty() && it.depth() > 0) {
      std::string parent = it->path().parent_path().filename().string();
      if (absl::StartsWith(parent, "pod") || absl::StrContains(parent, "-pod")) {
        id = it->path().filename().string();
        absl::string_view name = id;
        if (absl::ConsumeSuffix(&name, ".scope")) {
          size_t dash = name.rfind('-');
          id = std::string(dash == absl::string_view::npos ? name : name.substr(dash + 1));
        }
      }
    }
    if (id.empty()) continue;
    // The path below the hierarchy (fs::relative would resolve every component: slow).
    std::string path = it->path().string();
    index_.emplace(id, path.size() > top.size() ? path.substr(top.size()) : "");
    it.disable_recursion_pending();  // a container's cgroup has no containers below it
  }
}

std::string Reality::FindCgroup(const ContainerRef& ref) {
  std::error_code ec;
  if (!ref.cgroups_path.empty()) {
    std::string rel = CgroupsPathToDir(ref.cgroups_path);
    if (fs::is_directory(CpusetDir(rel), ec)) return rel;
  }
  if (!indexed_) BuildIndex();
  auto it = index_.find(ref.id);
  if (it != index_.end() && fs::is_directory(CpusetDir(it->second), ec)) return it->second;
  return "";
}

ContainerState Reality::ReadContainer(const ContainerRef& ref) {
  ContainerState st;
  st.cgroup_version = version_;
  st.cgroup = FindCgroup(ref);
  if (st.cgroup.empty()) {
    st.problems.push_back(fmt::format(
        "container {}: no cgroup under {} (the container is gone, or its layout is unknown)",
        ref.id, CpusetDir("")));
    return st;
  }
  std::string dir = CpusetDir(st.cgroup);
  auto read_set = [&](const std::string& name, const std::string& fallback) -> std::optional<CpuSet> {
    std::string path = dir + "/" + name;
    if (!fallback.empty() && !FileExists(path)) path = dir + "/" + fallback;
    auto set = ReadCpuSetFile(path);
    if (!set.ok()) {
      st.problems.push_back(std::string(set.status().message()));
      return std::nullopt;
    }
    return *set;
  };
  if (version_ == 2) {
    st.cpus = read_set("cpuset.cpus.effective", "cpuset.cpus");
    st.mems = read_set("cpuset.mems.effective", "cpuset.mems");
  } else {
    st.cpus = read_set("cpuset.cpus", "");
    st.mems = read_set("cpuset.mems", "");
  }
  absl::Status pid_error;
  std::string tasks = dir + (version_ == 2 ? "/cgroup.threads" : "/tasks");
  if (!FileExists(tasks)) tasks = dir + "/cgroup.procs";
  for (int pid : ReadPids(tasks, &pid_error)) {
    auto t = ReadTask(pid);
    if (t.ok()) st.tasks.push_back(std::move(*t));  // a task that just exited is skipped
  }
  if (!pid_error.ok()) st.problems.push_back(std::string(pid_error.message()));
  std::string numa = MemoryDir(st.cgroup) + "/memory.numa_stat";
  absl::StatusOr<std::string> text = ReadSmallFile(numa);
  if (!text.ok()) {
    st.problems.push_back(std::string(text.status().message()));
  } else {
    auto bytes = ParseNumaStat(*text, version_, options_.page_size);
    if (bytes.ok()) {
      st.numa_bytes = std::move(*bytes);
    } else {
      st.problems.push_back(fmt::format("{}: {}", numa, std::string(bytes.status().message())));
    }
  }
  return st;
}

absl::StatusOr<std::map<int, uint64_t>> Reality::ParseNumaStat(const std::string& text,
                                                               int version, uint64_t page_size) {
  std::map<int, uint64_t> out;
  bool any = false;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (f.empty()) continue;
    uint64_t scale = 1;
    size_t first = 1;
    if (version == 1) {
      // "total=<pages> N0=<pages> N1=<pages>": only the total line (file + anon + unevictable).
      if (!absl::StartsWith(f[0], "total=")) continue;
      scale = page_size;
    } else {
      // "anon N0=<bytes> ..." and "file N0=<bytes> ...": together the v1 total.
      if (f[0] != "anon" && f[0] != "file") continue;
    }
    any = true;
    for (size_t i = first; i < f.size(); ++i) {
      absl::string_view kv = f[i];
      if (!absl::ConsumePrefix(&kv, "N")) continue;
      size_t eq = kv.find('=');
      int node = 0;
      uint64_t value = 0;
      if (eq == absl::string_view::npos || !absl::SimpleAtoi(kv.substr(0, eq), &node) ||
          !absl::SimpleAtoi(kv.substr(eq + 1), &value) || node < 0) {
        return absl::InvalidArgumentError(fmt::format("bad field {:?} in {:?}", std::string(f[i]), std::string(line)));
      }
      out[node] += value * scale;
    }
  }
  if (!any) {
    return absl::InvalidArgumentError(version == 1 ? "no total= line (cgroup v1 numa_stat)"
                                                   : "no anon or file line (cgroup v2 numa_stat)");
  }
  return out;
}

absl::StatusOr<Task> Reality::ReadTask(int pid) const {
  std::string path = fmt::format("{}/{}/status", options_.proc_root, pid);
  absl::StatusOr<std::string> text = ReadSmallFile(path, 1 << 16);
  if (!text.ok()) return text.status();
  Task t;
  t.pid = pid;
  bool cpus = false;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipWhitespace())) {
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    absl::string_view key = line.substr(0, colon);
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (key == "Name") {
      t.comm = std::string(value);
    } else if (key == "Cpus_allowed_list" || key == "Mems_allowed_list") {
      auto set = CpuSet::Parse(std::string(value));
      if (!set.ok()) {
        return absl::InvalidArgumentError(fmt::format("{}: {}: {}", path, std::string(key), std::string(set.status().message())));
      }
      (key == "Cpus_allowed_list" ? t.cpus_allowed : t.mems_allowed) = *set;
      cpus |= key == "Cpus_allowed_list";
    }
  }
  if (!cpus) return absl::InvalidArgumentError(fmt::format("{}: no Cpus_allowed_list", path));
  return t;
}

std::vector<HostTask> Reality::HostTasks(const std::vector<int>& exclude) const {
  std::set<int> skip(exclude.begin(), exclude.end());
  std::vector<HostTask> out;
  std::error_code ec;
  for (fs::directory_iterator it(options_.proc_root, ec), end; !ec && it != end; it.increment(ec)) {
    int pid = 0;
    if (!absl::SimpleAtoi(it->path().filename().string(), &pid) || skip.count(pid)) continue;
    auto stat = ParseStat(fmt::format("{}/{}/stat", options_.proc_root, pid));
    if (!stat.ok()) continue;  // gone
    HostTask h;
    h.pid = pid;
    h.comm = stat->comm;
    h.kernel_thread = (stat->flags & kPfKthread) != 0;
    if (h.kernel_thread) {
      out.push_back(std::move(h));
      continue;
    }
    auto task = ReadTask(pid);
    if (!task.ok()) continue;
    h.cpus_allowed = task->cpus_allowed;
    out.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end(), [](const HostTask& a, const HostTask& b) { return a.pid < b.pid; });
  return out;
}

void Reality::Sample(std::vector<HostTask>& tasks, std::chrono::milliseconds window) const {
  // Per task: ticks of each thread at the start, then again at the end.
  auto snapshot = [&](const HostTask& t) {
    std::map<int, Stat> threads;
    std::error_code ec;
    std::string dir = fmt::format("{}/{}/task", options_.proc_root, t.pid);
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      int tid = 0;
      if (!absl::SimpleAtoi(it->path().filename().string(), &tid)) continue;
      auto s = ParseStat(it->path().string() + "/stat");
      if (s.ok()) threads[tid] = *s;
    }
    return threads;
  };
  std::vector<std::map<int, Stat>> before;
  before.reserve(tasks.size());
  for (const HostTask& t : tasks) before.push_back(snapshot(t));
  std::this_thread::sleep_for(window);
  for (size_t i = 0; i < tasks.size(); ++i) {
    uint64_t ticks = 0;
    tasks[i].ran_on.Clear();
    for (const auto& [tid, s] : snapshot(tasks[i])) {
      auto b = before[i].find(tid);
      uint64_t start = b == before[i].end() ? 0 : b->second.ticks;
      if (s.ticks > start) {
        ticks += s.ticks - start;
        if (s.processor >= 0 && s.processor <= CpuSet::kMaxCpuId) tasks[i].ran_on.Add(s.processor);
      }
    }
    tasks[i].cpu_seconds = static_cast<double>(ticks) / options_.clock_ticks;
  }
}

}  // namespace podtopo::verify
