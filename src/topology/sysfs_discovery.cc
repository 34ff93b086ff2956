#include "topology/sysfs_discovery.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "topology/hugepages.h"
#include "topology/parse_util.h"
#include "util/status_macros.h"

namespace podtopo {
namespace {

using topology_internal::Msg;
using topology_internal::ParseInt;
using topology_internal::ParseUint;
using topology_internal::QuoteForMessage;
using topology_internal::ScanInt;
using topology_internal::TrimSpace;

constexpr char kCpuDir[] = "devices/system/cpu";
constexpr char kNodeDir[] = "devices/system/node";

// One cache as cadvisor's sysfs.CacheInfo: all fields take part in its equality test.
struct CacheEntry {
  int64_t id = 0;
  int64_t size = 0;
  int64_t level = 0;
  std::string type;
  int cpus = 0;
  friend bool operator==(const CacheEntry&, const CacheEntry&) = default;
};

// A cadvisor info.Core.
struct RawCore {
  int64_t core_id = 0;  // sysfs core_id (not unique machine-wide)
  int package = 0;
  std::vector<int> threads;         // in discovery (glob) order
  std::vector<CacheEntry> uncore;   // cadvisor's Core.UncoreCaches
};

// A cadvisor info.Node.
struct RawNode {
  int id = 0;
  std::string dir;  // for messages
  std::vector<RawCore> cores;
  uint64_t memory = 0;
  std::map<std::string, uint64_t> hugepages;
  std::vector<uint64_t> distances;
};

// "cpu12" -> 12, "node3" -> 3; nullopt for other names ("cpufreq", "cpu", "node3x").
std::optional<std::string_view> NumberedSuffix(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = name.substr(prefix.size());
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return digits;
}

// Go's filepath.Glob order for cpu<N> names: as strings ("cpu10" < "cpu2").
void SortGlobOrder(std::vector<int>& cpus) {
  std::sort(cpus.begin(), cpus.end(),
            [](int a, int b) { return std::to_string(a) < std::to_string(b); });
}

class Discoverer {
 public:
  explicit Discoverer(const SysfsSource& fs) : fs_(fs) {}

  absl::StatusOr<NodeTopology> Run();

 private:
  absl::Status Error(const std::string& rel, const std::string& msg) const {
    return absl::InvalidArgumentError(fmt::format("{}: {}: {}", fs_.Name(), rel, msg));
  }
  absl::Status Wrap(const std::string& rel, const absl::Status& s) const {
    return absl::Status(s.code(), fmt::format("{}: {}: {}", fs_.Name(), rel, Msg(s)));
  }
  absl::StatusOr<std::string> Read(const std::string& rel) const {
    auto r = fs_.ReadFile(rel);
    if (!r.ok()) return Wrap(rel, r.status());
    return r;
  }
  // nullopt when the file does not exist.
  absl::StatusOr<std::optional<std::string>> ReadOptional(const std::string& rel) const {
    auto r = fs_.ReadFile(rel);
    if (absl::IsNotFound(r.status())) return std::optional<std::string>();
    if (!r.ok()) return Wrap(rel, r.status());
    return std::optional<std::string>(std::move(*r));
  }
  static std::string CpuPath(int cpu, const std::string& rest) {
    return fmt::format("{}/cpu{}/{}", kCpuDir, cpu, rest);
  }

  bool IsOnline(int cpu) const { return !online_.has_value() || online_->Contains(cpu); }
  absl::Status ReadOnline();
  absl::Status ListCpus();
  // physical_package_id of an online CPU; nullopt when the file is missing.
  absl::StatusOr<std::optional<int>> Package(int cpu) const;
  absl::StatusOr<int> CountSockets() const;
  // cadvisor getCoresInfo: CPUs in glob order, offline ones and ones without topology files
  // skipped, threads grouped by (core_id, package).
  absl::StatusOr<std::vector<RawCore>> GetCores(std::vector<int> cpus) const;
  // cadvisor addCacheInfo; unreadable cache files stop it (with a warning), as there.
  void AddCacheInfo(RawNode& node);
  absl::StatusOr<CacheEntry> ReadCache(const std::string& dir) const;
  absl::StatusOr<RawNode> ReadNode(const std::string& name);
  absl::Status ReadMemInfo(RawNode& node);
  absl::Status ReadHugepages(RawNode& node) const;
  absl::Status ReadDistances(RawNode& node) const;
  absl::StatusOr<NodeTopology> Build(std::vector<RawNode> nodes, int num_cpus, int num_sockets);

  const SysfsSource& fs_;
  std::optional<CpuSet> online_;
  std::vector<int> cpu_dirs_;  // ids of devices/system/cpu/cpu<N>, glob order
  std::vector<std::string> warnings_;
};

absl::Status Discoverer::ReadOnline() {
  std::string rel = fmt::format("{}/online", kCpuDir);
  PODTOPO_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadOptional(rel));
  if (!text.has_value()) return absl::OkStatus();  // no CPU hotplug: every CPU is online
  std::string_view trimmed = TrimSpace(*text);
  if (trimmed.empty()) return Error(rel, "empty CPU list");
  auto set = CpuSet::Parse(trimmed);
  if (!set.ok()) return Error(rel, Msg(set.status()));
  online_ = std::move(*set);
  return absl::OkStatus();
}

absl::Status Discoverer::ListCpus() {
  auto names = fs_.ListDir(kCpuDir);
  if (!names.ok()) return Wrap(kCpuDir, names.status());
  for (const std::string& name : *names) {
    auto digits = NumberedSuffix(name, "cpu");
    if (!digits) continue;
    auto id = ParseInt(*digits, 0, CpuSet::kMaxCpuId);
    if (!id.ok()) {
      return Error(fmt::format("{}/{}", kCpuDir, name),
                   fmt::format("CPU number {}", Msg(id.status())));
    }
    cpu_dirs_.push_back(static_cast<int>(*id));
  }
  SortGlobOrder(cpu_dirs_);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<int>> Discoverer::Package(int cpu) const {
  std::string rel = CpuPath(cpu, "topology/physical_package_id");
  PODTOPO_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadOptional(rel));
  if (!text.has_value()) return std::optional<int>();
  // -1 is what some firmware reports when it does not know the package; cadvisor and the
  // kubelet keep it as a socket id.
  auto v = ParseInt(*text, -1, INT_MAX);
  if (!v.ok()) return Error(rel, Msg(v.status()));
  return std::optional<int>(static_cast<int>(*v));
}

absl::StatusOr<int> Discoverer::CountSockets() const {
  // cadvisor GetSockets -> GetUniqueCPUPropertyCount(physical_package_id): distinct values over
  // the online CPUs, a missing file counting as "0".
  std::set<int> packages;
  for (int cpu : cpu_dirs_) {
    if (!IsOnline(cpu)) continue;
    PODTOPO_ASSIGN_OR_RETURN(std::optional<int> pkg, Package(cpu));
    packages.insert(pkg.value_or(0));
  }
  return static_cast<int>(packages.size());
}

absl::StatusOr<std::vector<RawCore>> Discoverer::GetCores(std::vector<int> cpus) const {
  SortGlobOrder(cpus);
  std::vector<RawCore> cores;
  for (int cpu : cpus) {
    if (!IsOnline(cpu)) continue;
    std::string core_rel = CpuPath(cpu, "topology/core_id");
    PODTOPO_ASSIGN_OR_RETURN(std::optional<std::string> core_text, ReadOptional(core_rel));
    if (!core_text.has_value()) continue;  // cadvisor: "core_id file does not exist"
    auto core_id = ParseInt(*core_text, INT64_MIN, INT64_MAX);
    if (!core_id.ok()) return Error(core_rel, Msg(core_id.status()));
    PODTOPO_ASSIGN_OR_RETURN(std::optional<int> pkg, Package(cpu));
    if (!pkg.has_value()) continue;
    auto it = std::find_if(cores.begin(), cores.end(), [&](const RawCore& c) {
      return c.core_id == *core_id && c.package == *pkg;
    });
    if (it == cores.end()) {
      cores.push_back(RawCore{.core_id = *core_id, .package = *pkg, .threads = {}, .uncore = {}});
      it = cores.end() - 1;
    }
    it->threads.push_back(cpu);
  }
  return cores;
}

absl::StatusOr<CacheEntry> Discoverer::ReadCache(const std::string& dir) const {
  CacheEntry c;
  {
    std::string rel = dir + "/id";
    PODTOPO_ASSIGN_OR_RETURN(std::string text, Read(rel));
    auto v = ScanInt(text);
    if (!v.ok()) return Error(rel, Msg(v.status()));
    if (*v < INT_MIN || *v > INT_MAX) return Error(rel, fmt::format("out of range: {}", *v));
    c.id = *v;
  }
  {
    std::string rel = dir + "/size";
    PODTOPO_ASSIGN_OR_RETURN(std::string text, Read(rel));
    std::string_view rest;
    auto v = ScanInt(text, &rest);
    if (!v.ok()) return Error(rel, Msg(v.status()));
    if (*v < 0) return Error(rel, fmt::format("negative size: {}", QuoteForMessage(text)));
    if (rest.empty() || rest.front() != 'K') {
      return Error(rel, fmt::format("expected <number>K, got {}", QuoteForMessage(text)));
    }
    c.size = *v;
  }
  {
    std::string rel = dir + "/level";
    PODTOPO_ASSIGN_OR_RETURN(std::string text, Read(rel));
    auto v = ScanInt(text);
    if (!v.ok()) return Error(rel, Msg(v.status()));
    c.level = *v;
  }
  {
    std::string rel = dir + "/type";
    PODTOPO_ASSIGN_OR_RETURN(std::string text, Read(rel));
    c.type = std::string(TrimSpace(text));
  }
  {
    // cadvisor counts the bits of shared_cpu_map (comma-separated 32-bit hex words).
    std::string rel = dir + "/shared_cpu_map";
    PODTOPO_ASSIGN_OR_RETURN(std::string text, Read(rel));
    std::string_view rest = text;
    int count = 0;
    while (true) {
      size_t comma = rest.find(',');
      std::string_view word = TrimSpace(rest.substr(0, comma));
      if (word.empty() || word.size() > 16) {
        return Error(rel, fmt::format("not a CPU mask: {}", QuoteForMessage(text)));
      }
      uint64_t bits = 0;
      for (char ch : word) {
        int d = (ch >= '0' && ch <= '9')   ? ch - '0'
                : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10
                : (ch >= 'A' && ch <= 'F') ? ch - 'A' + 10
                                           : -1;
        if (d < 0) return Error(rel, fmt::format("not a CPU mask: {}", QuoteForMessage(text)));
        bits = bits << 4 | static_cast<uint64_t>(d);
      }
      count += std::popcount(bits);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    c.cpus = count;
  }
  return c;
}

void Discoverer::AddCacheInfo(RawNode& node) {
  for (RawCore& core : node.cores) {
    int thread = core.threads[0];
    std::string cache_dir = CpuPath(thread, "cache");
    auto names = fs_.ListDir(cache_dir);
    auto give_up = [&](const absl::Status& s) {
      warnings_.push_back(fmt::format(
          "{}; uncore cache ids of NUMA node {} fall back to the socket id from CPU {} on "
          "(cadvisor ignores unreadable cache information)",
          Msg(s), node.id, thread));
    };
    if (!names.ok()) {
      give_up(Wrap(cache_dir, names.status()));
      return;
    }
    std::vector<CacheEntry> caches;
    for (const std::string& name : *names) {
      if (name.rfind("index", 0) != 0) continue;
      auto c = ReadCache(cache_dir + "/" + name);
      if (!c.ok()) {
        give_up(c.status());
        return;
      }
      caches.push_back(std::move(*c));
    }
    int threads_per_core = static_cast<int>(core.threads.size());
    int threads_per_node = static_cast<int>(node.cores.size()) * threads_per_core;
    for (const CacheEntry& c : caches) {
      // A level-3+ cache shared by exactly as many CPUs as the node holds is a node cache,
      // not an uncore cache (cadvisor addCacheInfo).
      if (c.level <= 2 || c.cpus == threads_per_node) continue;
      if (std::find(core.uncore.begin(), core.uncore.end(), c) == core.uncore.end()) {
        core.uncore.push_back(c);
      }
    }
  }
}

absl::Status Discoverer::ReadMemInfo(RawNode& node) {
  std::string rel = node.dir + "/meminfo";
  PODTOPO_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadOptional(rel));
  if (!text.has_value()) {
    warnings_.push_back(fmt::format("{}: {}: not found; NUMA node {} has memory 0 (as cadvisor)",
                                    fs_.Name(), rel, node.id));
    return absl::OkStatus();
  }
  // cadvisor: regexp `MemTotal:\s*([0-9]+) kB`, leftmost match.
  std::string_view t = *text;
  for (size_t pos = t.find("MemTotal:"); pos != std::string_view::npos;
       pos = t.find("MemTotal:", pos + 1)) {
    size_t i = pos + 9;
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r' ||
                            t[i] == '\f' || t[i] == '\v')) {
      ++i;
    }
    size_t digits = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == digits || t.substr(i, 3) != " kB") continue;
    auto kib = ParseUint(t.substr(digits, i - digits));
    if (!kib.ok()) return Error(rel, fmt::format("MemTotal {}", Msg(kib.status())));
    if (*kib > UINT64_MAX / 1024) {
      return Error(rel, fmt::format("MemTotal {} kB does not fit in 64 bits as bytes", *kib));
    }
    node.memory = *kib * 1024;
    return absl::OkStatus();
  }
  return Error(rel, "no \"MemTotal: <N> kB\" line");
}

absl::Status Discoverer::ReadHugepages(RawNode& node) const {
  std::string dir = node.dir + "/hugepages";
  auto names = fs_.ListDir(dir);
  if (!names.ok()) return absl::OkStatus();  // cadvisor: hugepages may be disabled
  for (const std::string& name : *names) {
    std::string entry = dir + "/" + name;
    // cadvisor: strings.Split(name, "-")[1], then strings.Split(that, "kB")[0].
    size_t dash = name.find('-');
    if (dash == std::string::npos) {
      return Error(entry, "not a hugepages-<size>kB directory");
    }
    std::string_view size_part = std::string_view(name).substr(dash + 1);
    size_part = size_part.substr(0, std::min(size_part.find('-'), size_part.find("kB")));
    auto size_kib = ParseUint(size_part);
    if (!size_kib.ok()) {
      return Error(entry, fmt::format("page size {}", Msg(size_kib.status())));
    }
    if (*size_kib == 0 || *size_kib > UINT64_MAX / 1024) {
      return Error(entry, fmt::format("unsupported page size {} kB", *size_kib));
    }
    std::string nr_rel = entry + "/nr_hugepages";
    PODTOPO_ASSIGN_OR_RETURN(std::string nr_text, Read(nr_rel));
    auto pages = ScanInt(nr_text);
    if (!pages.ok()) return Error(nr_rel, Msg(pages.status()));
    if (*pages < 0) return Error(nr_rel, fmt::format("negative page count {}", *pages));
    uint64_t page_bytes = *size_kib * 1024;
    uint64_t count = static_cast<uint64_t>(*pages);
    if (count != 0 && page_bytes > UINT64_MAX / count) {
      return Error(nr_rel, fmt::format("{} pages of {} bytes do not fit in 64 bits", count,
                                       page_bytes));
    }
    std::string resource = HugepageResourceName(page_bytes);
    if (!node.hugepages.emplace(resource, count * page_bytes).second) {
      return Error(entry, fmt::format("second directory for {}", resource));
    }
  }
  return absl::OkStatus();
}

absl::Status Discoverer::ReadDistances(RawNode& node) const {
  std::string rel = node.dir + "/distance";
  PODTOPO_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadOptional(rel));
  if (!text.has_value()) return absl::OkStatus();  // cadvisor: no distance information
  // cadvisor: strings.Split(TrimSpace(text), " ") and ParseUint of every piece.
  std::string_view rest = TrimSpace(*text);
  size_t index = 0;
  while (true) {
    size_t sp = rest.find(' ');
    auto v = ParseUint(rest.substr(0, sp));
    if (!v.ok()) {
      return Error(rel, fmt::format("distance [{}]: {}", index, Msg(v.status())));
    }
    node.distances.push_back(*v);
    if (sp == std::string_view::npos) break;
    rest.remove_prefix(sp + 1);
    ++index;
  }
  return absl::OkStatus();
}

absl::StatusOr<RawNode> Discoverer::ReadNode(const std::string& name) {
  RawNode node;
  node.dir = fmt::format("{}/{}", kNodeDir, name);
  auto id = ParseInt(*NumberedSuffix(name, "node"), 0, CpuSet::kMaxCpuId);
  if (!id.ok()) return Error(node.dir, fmt::format("NUMA node number {}", Msg(id.status())));
  node.id = static_cast<int>(*id);

  std::vector<int> cpus;
  std::string cpulist_rel = node.dir + "/cpulist";
  PODTOPO_ASSIGN_OR_RETURN(std::optional<std::string> cpulist, ReadOptional(cpulist_rel));
  if (cpulist.has_value()) {
    auto set = CpuSet::Parse(TrimSpace(*cpulist));
    if (!set.ok()) return Error(cpulist_rel, Msg(set.status()));
    cpus = set->List();
  } else {
    // Older kernels: only the node<N>/cpu<M> links (what cadvisor globs).
    auto names = fs_.ListDir(node.dir);
    if (!names.ok()) return Wrap(node.dir, names.status());
    for (const std::string& entry : *names) {
      auto digits = NumberedSuffix(entry, "cpu");
      if (!digits) continue;
      auto cpu = ParseInt(*digits, 0, CpuSet::kMaxCpuId);
      if (!cpu.ok()) {
        return Error(node.dir + "/" + entry, fmt::format("CPU number {}", Msg(cpu.status())));
      }
      cpus.push_back(static_cast<int>(*cpu));
    }
  }
  PODTOPO_ASSIGN_OR_RETURN(node.cores, GetCores(std::move(cpus)));
  AddCacheInfo(node);
  PODTOPO_RETURN_IF_ERROR(ReadMemInfo(node));
  PODTOPO_RETURN_IF_ERROR(ReadHugepages(node));
  PODTOPO_RETURN_IF_ERROR(ReadDistances(node));
  return node;
}

absl::StatusOr<NodeTopology> Discoverer::Run() {
  PODTOPO_RETURN_IF_ERROR(ReadOnline());
  PODTOPO_RETURN_IF_ERROR(ListCpus());
  PODTOPO_ASSIGN_OR_RETURN(int num_sockets, CountSockets());

  std::vector<std::string> node_names;
  if (auto names = fs_.ListDir(kNodeDir); names.ok()) {
    for (const std::string& name : *names) {
      if (NumberedSuffix(name, "node")) node_names.push_back(name);
    }
  }

  std::vector<RawNode> nodes;
  int num_cpus = 0;
  if (node_names.empty()) {
    // cadvisor getCPUTopology: one node per physical package, id = package id, no memory.
    std::map<int, std::vector<int>> by_package;
    for (int cpu : cpu_dirs_) {
      PODTOPO_ASSIGN_OR_RETURN(std::optional<int> pkg, Package(cpu));
      if (!pkg.has_value()) continue;
      // The package id becomes a NUMA node id here, and those are 0..65535 (as CPU ids).
      if (*pkg < 0 || *pkg > CpuSet::kMaxCpuId) {
        return Error(CpuPath(cpu, "topology/physical_package_id"),
                     fmt::format("package {} cannot be a NUMA node id (no node<N> directories "
                                 "under {}; NUMA node ids are 0 to {})",
                                 *pkg, kNodeDir, CpuSet::kMaxCpuId));
      }
      by_package[*pkg].push_back(cpu);
    }
    for (auto& [pkg, cpus] : by_package) {
      RawNode node;
      node.id = pkg;
      node.dir = kCpuDir;
      PODTOPO_ASSIGN_OR_RETURN(node.cores, GetCores(cpus));
      AddCacheInfo(node);
      nodes.push_back(std::move(node));
    }
    // cadvisor reports len(cpu<N> directories) as NumCores in this case, offline ones included.
    num_cpus = static_cast<int>(cpu_dirs_.size());
    if (!nodes.empty()) {
      warnings_.push_back(fmt::format(
          "{}: {}: no node<N> directories; as cadvisor, every socket is reported as its own "
          "NUMA node (id = physical_package_id) without memory information",
          fs_.Name(), kNodeDir));
    }
  } else {
    for (const std::string& name : node_names) {
      PODTOPO_ASSIGN_OR_RETURN(RawNode node, ReadNode(name));
      for (const RawCore& core : node.cores) num_cpus += static_cast<int>(core.threads.size());
      nodes.push_back(std::move(node));
    }
  }
  return Build(std::move(nodes), num_cpus, num_sockets);
}

absl::StatusOr<NodeTopology> Discoverer::Build(std::vector<RawNode> nodes, int num_cpus,
                                               int num_sockets) {
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const RawNode& a, const RawNode& b) { return a.id < b.id; });
  for (size_t i = 1; i < nodes.size(); ++i) {
    if (nodes[i].id == nodes[i - 1].id) {
      return Error(nodes[i].dir, fmt::format("second directory for NUMA node {}", nodes[i].id));
    }
  }
  NodeTopology out;
  out.source = fs_.Name();
  std::map<int, int> cpu_node;  // cpu -> NUMA node that listed it
  int num_cores = 0;
  for (const RawNode& node : nodes) {
    for (const RawCore& core : node.cores) {
      ++num_cores;
      int core_id = *std::min_element(core.threads.begin(), core.threads.end());
      int uncore = core.uncore.empty() ? core.package : static_cast<int>(core.uncore[0].id);
      for (int cpu : core.threads) {
        auto [it, inserted] = cpu_node.emplace(cpu, node.id);
        if (!inserted) {
          return Error(node.dir, fmt::format("CPU {} is also listed by NUMA node {}", cpu,
                                             it->second));
        }
        out.cpus.AddCpu(cpu, CpuInfo{.numa = node.id, .socket = core.package, .core = core_id,
                                     .uncore = uncore});
      }
    }
    // The kubelet indexes a node's distance row by node id (NUMADistances[i][j]); keep the
    // entries for the ids present, in numa_nodes order. A row too short for some id would
    // make the kubelet index out of range: no distances then.
    std::vector<uint64_t> distances;
    if (!node.distances.empty()) {
      for (const RawNode& other : nodes) {
        if (static_cast<size_t>(other.id) >= node.distances.size()) {
          distances.clear();
          warnings_.push_back(fmt::format(
              "{}: {}/distance: {} distances, none for NUMA node {}; distances left empty",
              fs_.Name(), node.dir, node.distances.size(), other.id));
          break;
        }
        distances.push_back(node.distances[static_cast<size_t>(other.id)]);
      }
    }
    out.numa_nodes.push_back(NumaNode{.id = node.id,
                                      .memory = node.memory,
                                      .hugepages = node.hugepages,
                                      .distances = std::move(distances)});
  }
  if (num_cpus == 0 || out.cpus.AllCpus().IsEmpty()) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: could not detect number of cpus (no online CPU with topology/core_id and "
        "topology/physical_package_id{})",
        fs_.Name(), cpu_dirs_.empty() ? fmt::format(" under {}", kCpuDir) : ""));
  }
  out.cpus.SetCountsFromCpus();
  out.cpus.num_cpus = num_cpus;
  out.cpus.num_cores = num_cores;
  out.cpus.num_sockets = num_sockets;
  out.warnings = std::move(warnings_);
  return out;
}

}  // namespace

absl::StatusOr<NodeTopology> DiscoverSysfs(const SysfsSource& fs) {
  return Discoverer(fs).Run();
}

absl::StatusOr<NodeTopology> DiscoverSysfs(const std::string& root) {
  return DiscoverSysfs(*NewSysfsDir(root));
}

}  // namespace podtopo
