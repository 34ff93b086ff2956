#include "topology/hwloc_import.h"

#include <fcntl.h>
#include <hwloc.h>
#include <poll.h>
#include <signal.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "topology/hugepages.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace podtopo {
namespace {

constexpr size_t kMaxXmlBytes = size_t{256} << 20;
constexpr int kImportTimeoutMs = 60000;

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

class Importer {
 public:
  Importer(hwloc_topology_t topo, std::string name) : topo_(topo), name_(std::move(name)) {}
  absl::StatusOr<NodeTopology> Run();

 private:
  absl::Status Error(const std::string& msg) const {
    return absl::InvalidArgumentError(fmt::format("{}: {}", name_, msg));
  }
  static std::string Label(hwloc_obj_t obj) {
    return fmt::format("{} L#{}", hwloc_obj_type_string(obj->type), obj->logical_index);
  }
  absl::StatusOr<int> Index(hwloc_obj_t obj, int max) const {
    if (obj->os_index == HWLOC_UNKNOWN_INDEX) return Error(Label(obj) + ": no os_index");
    if (obj->os_index > static_cast<unsigned>(max)) {
      return Error(fmt::format("{}: os_index {} is above {}", Label(obj), obj->os_index, max));
    }
    return static_cast<int>(obj->os_index);
  }
  // The socket id cadvisor reads (physical_package_id). hwloc's Linux backend stores that
  // file's value as the Package's os_index, so -1 (POWER LPARs whose firmware gives no chip
  // id) is HWLOC_UNKNOWN_INDEX: every such Package is socket -1, one socket as cadvisor counts
  // it, however many Packages hwloc made (one per core there). No Package: socket 0 (cadvisor's
  // "0" for a missing file).
  static int SocketOf(hwloc_obj_t package) {
    if (package == nullptr) return 0;
    return package->os_index != HWLOC_UNKNOWN_INDEX && package->os_index <= INT_MAX
               ? static_cast<int>(package->os_index)
               : -1;
  }
  absl::Status ReadNumaNodes();
  // The NUMA node local to a PU; -1 when no NUMANode holds it.
  int NumaOf(hwloc_obj_t pu, unsigned cpu) const;
  void ReadDistances();

  hwloc_topology_t topo_;
  std::string name_;
  NodeTopology out_;
  std::vector<hwloc_obj_t> numa_objs_;  // ascending by os_index
};

absl::Status Importer::ReadNumaNodes() {
  int n = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    PODTOPO_ASSIGN_OR_RETURN(int id, Index(obj, CpuSet::kMaxCpuId));
    numa_objs_.push_back(obj);
    NumaNode node{.id = id, .memory = obj->attr->numanode.local_memory, .hugepages = {},
                  .distances = {}};
    const auto& attr = obj->attr->numanode;
    // page_types is sorted by size; the first is the base page, the others hugepages.
    for (unsigned k = 1; k < attr.page_types_len; ++k) {
      uint64_t size = attr.page_types[k].size;
      uint64_t count = attr.page_types[k].count;
      if (size == 0) continue;
      if (count != 0 && size > UINT64_MAX / count) {
        return Error(fmt::format("{}: page_type {}: {} pages of {} bytes do not fit in 64 bits",
                                 Label(obj), k, count, size));
      }
      node.hugepages[HugepageResourceName(size)] += count * size;
    }
    out_.numa_nodes.push_back(std::move(node));
  }
  std::vector<size_t> order(numa_objs_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return out_.numa_nodes[a].id < out_.numa_nodes[b].id;
  });
  std::vector<NumaNode> nodes;
  std::vector<hwloc_obj_t> objs;
  for (size_t i : order) {
    if (!nodes.empty() && nodes.back().id == out_.numa_nodes[i].id) {
      return Error(fmt::format("{}: second NUMANode with os_index {}", Label(numa_objs_[i]),
                               nodes.back().id));
    }
    nodes.push_back(std::move(out_.numa_nodes[i]));
    objs.push_back(numa_objs_[i]);
  }
  out_.numa_nodes = std::move(nodes);
  numa_objs_ = std::move(objs);
  return absl::OkStatus();
}

int Importer::NumaOf(hwloc_obj_t pu, unsigned cpu) const {
  hwloc_obj_t any = nullptr;
  for (hwloc_obj_t numa : numa_objs_) {
    if (numa->cpuset == nullptr || !hwloc_bitmap_isset(numa->cpuset, cpu)) continue;
    if (numa->subtype == nullptr || numa->subtype[0] == '\0') return static_cast<int>(numa->os_index);
    if (any == nullptr) any = numa;
  }
  if (any != nullptr) return static_cast<int>(any->os_index);
  return -1;
}

void Importer::ReadDistances() {
  unsigned nr = 0;
  if (hwloc_distances_get_by_type(topo_, HWLOC_OBJ_NUMANODE, &nr, nullptr,
                                  HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 ||
      nr == 0) {
    return;
  }
  std::vector<hwloc_distances_s*> all(nr, nullptr);
  if (hwloc_distances_get_by_type(topo_, HWLOC_OBJ_NUMANODE, &nr, all.data(),
                                  HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0) {
    return;
  }
  all.resize(nr);
  // Prefer the operating system's matrix (Linux node<N>/distance), like the kubelet.
  std::stable_sort(all.begin(), all.end(), [](hwloc_distances_s* a, hwloc_distances_s* b) {
    return (a->kind & HWLOC_DISTANCES_KIND_FROM_OS) > (b->kind & HWLOC_DISTANCES_KIND_FROM_OS);
  });
  for (hwloc_distances_s* d : all) {
    if (!out_.numa_nodes.front().distances.empty()) break;
    std::vector<int> slot;
    for (hwloc_obj_t obj : numa_objs_) {
      int found = hwloc_distances_obj_index(d, obj);
      if (found < 0) break;
      slot.push_back(found);
    }
    if (slot.size() != numa_objs_.size()) continue;
    for (size_t i = 0; i < slot.size(); ++i) {
      for (size_t j = 0; j < slot.size(); ++j) {
        out_.numa_nodes[i].distances.push_back(
            d->values[static_cast<size_t>(slot[i]) * d->nbobjs + static_cast<size_t>(slot[j])]);
      }
    }
  }
  for (hwloc_distances_s* d : all) hwloc_distances_release(topo_, d);
  if (out_.numa_nodes.size() > 1 && out_.numa_nodes.front().distances.empty()) {
    out_.warnings.push_back(
        fmt::format("{}: no NUMA latency matrix covering every NUMANode; distances left empty",
                    name_));
  }
}

absl::StatusOr<NodeTopology> Importer::Run() {
  out_.source = name_;
  PODTOPO_RETURN_IF_ERROR(ReadNumaNodes());
  if (out_.numa_nodes.empty()) return Error("no NUMANode objects");
  int npu = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_PU);
  if (npu <= 0) return Error("no PU objects");

  // Per NUMA node, the PUs it holds (for the node-cache rule).
  struct Pending {
    unsigned cpu;
    hwloc_obj_t pu, core, package, l3;
    int numa;
  };
  std::vector<Pending> pending;
  std::map<int, int> pus_per_numa;
  std::set<int> sockets;  // of every PU, as cadvisor counts packages of all online CPUs
  CpuSet dropped;
  for (int i = 0; i < npu; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    PODTOPO_ASSIGN_OR_RETURN(int cpu, Index(pu, CpuSet::kMaxCpuId));
    if (out_.cpus.Info(cpu) != nullptr) {
      return Error(fmt::format("{}: second PU with os_index {}", Label(pu), cpu));
    }
    hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_PACKAGE, pu);
    sockets.insert(SocketOf(package));
    int numa = NumaOf(pu, static_cast<unsigned>(cpu));
    if (numa < 0) {
      // An export restricted by a cgroup may leave out the NUMA node of allowed PUs. cadvisor
      // only takes CPUs from NUMA nodes, so such a CPU does not exist for the kubelet.
      dropped.Add(cpu);
      continue;
    }
    Pending p{.cpu = static_cast<unsigned>(cpu),
              .pu = pu,
              .core = hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_CORE, pu),
              .package = package,
              .l3 = hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_L3CACHE, pu),
              .numa = numa};
    pending.push_back(p);
    ++pus_per_numa[numa];
    out_.cpus.AddCpu(cpu, CpuInfo{.numa = numa});  // placeholder for the duplicate check
  }
  if (!dropped.IsEmpty()) {
    out_.warnings.push_back(fmt::format(
        "{}: no NUMANode holds PUs {} (an export restricted by a cgroup? `lstopo --whole-system "
        "--of xml` exports everything); left out, as cadvisor leaves out CPUs of no NUMA node",
        name_, dropped.String()));
  }
  if (pending.empty()) return Error("no PU is held by a NUMANode");
  for (const Pending& p : pending) {
    int socket = SocketOf(p.package);
    int core = static_cast<int>(p.cpu);
    if (p.core != nullptr && p.core->cpuset != nullptr) {
      int first = hwloc_bitmap_first(p.core->cpuset);
      if (first >= 0) core = first;
    }
    int uncore = socket;
    if (p.l3 != nullptr && p.l3->os_index != HWLOC_UNKNOWN_INDEX && p.l3->os_index <= INT_MAX &&
        p.l3->cpuset != nullptr && hwloc_bitmap_weight(p.l3->cpuset) != pus_per_numa[p.numa]) {
      uncore = static_cast<int>(p.l3->os_index);
    }
    out_.cpus.AddCpu(static_cast<int>(p.cpu),
                     CpuInfo{.numa = p.numa, .socket = socket, .core = core, .uncore = uncore});
  }
  out_.cpus.SetCountsFromCpus();
  out_.cpus.num_sockets = static_cast<int>(sockets.size());
  ReadDistances();
  return std::move(out_);
}

// Loads the XML with hwloc in this process.
absl::StatusOr<NodeTopology> ImportInProcess(const std::string& xml, const std::string& name) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return absl::InternalError(fmt::format("{}: hwloc_topology_init failed", name));
  }
  TopologyPtr topo(raw);
  hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  // The length counts the terminating NUL, as hwloc_topology_export_xmlbuffer reports it.
  if (hwloc_topology_set_xmlbuffer(raw, xml.c_str(), static_cast<int>(xml.size() + 1)) != 0) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: not an hwloc XML topology (hwloc rejected it: {})", name, std::strerror(errno)));
  }
  if (hwloc_topology_load(raw) != 0) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: not an hwloc XML topology (hwloc could not load it: {})", name, std::strerror(errno)));
  }
  return Importer(raw, name).Run();
}

// The child's report to the parent: the topology or the error, as JSON.
std::string Encode(const absl::StatusOr<NodeTopology>& r) {
  nlohmann::json j;
  if (!r.ok()) {
    j["code"] = static_cast<int>(r.status().code());
    j["message"] = std::string(r.status().message());
    return j.dump();
  }
  const CpuTopology& t = r->cpus;
  nlohmann::json cpus = nlohmann::json::array();
  t.AllCpus().ForEach([&](int cpu) {
    const CpuInfo* i = t.Info(cpu);
    cpus.push_back({cpu, i->core, i->socket, i->numa, i->uncore});
  });
  j["cpus"] = std::move(cpus);
  j["counts"] = {t.num_cpus, t.num_cores, t.num_sockets, t.num_numa_nodes, t.num_uncore_caches};
  nlohmann::json numa = nlohmann::json::array();
  for (const NumaNode& n : r->numa_nodes) {
    numa.push_back({{"id", n.id}, {"memory", n.memory}, {"hugepages", n.hugepages},
                    {"distances", n.distances}});
  }
  j["numa"] = std::move(numa);
  j["warnings"] = r->warnings;
  return j.dump();
}

absl::StatusOr<NodeTopology> Decode(const std::string& text, const std::string& name) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j.contains("code")) {
      return absl::Status(static_cast<absl::StatusCode>(j["code"].get<int>()),
                          j["message"].get<std::string>());
    }
    NodeTopology out;
    out.source = name;
    for (const auto& c : j["cpus"]) {
      out.cpus.AddCpu(c[0].get<int>(), CpuInfo{.numa = c[3].get<int>(), .socket = c[2].get<int>(),
                                               .core = c[1].get<int>(), .uncore = c[4].get<int>()});
    }
    const auto& counts = j["counts"];
    out.cpus.num_cpus = counts[0].get<int>();
    out.cpus.num_cores = counts[1].get<int>();
    out.cpus.num_sockets = counts[2].get<int>();
    out.cpus.num_numa_nodes = counts[3].get<int>();
    out.cpus.num_uncore_caches = counts[4].get<int>();
    for (const auto& n : j["numa"]) {
      out.numa_nodes.push_back(NumaNode{
          .id = n["id"].get<int>(),
          .memory = n["memory"].get<uint64_t>(),
          .hugepages = n["hugepages"].get<std::map<std::string, uint64_t>>(),
          .distances = n["distances"].get<std::vector<uint64_t>>()});
    }
    out.warnings = j["warnings"].get<std::vector<std::string>>();
    return out;
  } catch (const std::exception& e) {
    return absl::InternalError(fmt::format("{}: bad report from the hwloc import: {}", name,
                                           e.what()));
  }
}

// hwloc 2.9 crashes on some malformed XML (e.g. in hwloc_bitmap_compare_first), so the
// import runs in a child process: a crash or a hang there becomes an error here. What hwloc
// prints on stderr is collected and attached to the error, or kept as warnings.
absl::StatusOr<NodeTopology> ImportIsolated(const std::string& xml, const std::string& name) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    return absl::InternalError(fmt::format("{}: pipe: {}", name, std::strerror(errno)));
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(out[0]);
    ::close(out[1]);
    return absl::InternalError(fmt::format("{}: pipe: {}", name, std::strerror(e)));
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    return absl::InternalError(fmt::format("{}: fork: {}", name, std::strerror(e)));
  }
  if (pid == 0) {
    ::close(out[0]);
    ::close(err[0]);
    ::dup2(err[1], STDERR_FILENO);
    std::string report = Encode(ImportInProcess(xml, name));
    const char* p = report.data();
    size_t left = report.size();
    while (left > 0) {
      ssize_t n = ::write(out[1], p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ::_exit(2);
      p += n;
      left -= static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(out[1]);
  ::close(err[1]);
  std::string report, messages;
  struct pollfd pfds[2] = {{.fd = out[0], .events = POLLIN, .revents = 0},
                           {.fd = err[0], .events = POLLIN, .revents = 0}};
  std::string* sinks[2] = {&report, &messages};
  int open_fds = 2;
  bool timed_out = false;
  char buf[65536];
  while (open_fds > 0) {
    int ready = ::poll(pfds, 2, kImportTimeoutMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = true;
      break;
    }
    for (int k = 0; k < 2; ++k) {
      if (pfds[k].fd < 0 || pfds[k].revents == 0) continue;
      ssize_t n = ::read(pfds[k].fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(pfds[k].fd);
        pfds[k].fd = -1;
        --open_fds;
      } else if (sinks[k]->size() < (size_t{64} << 20)) {
        sinks[k]->append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (const auto& pfd : pfds) {
    if (pfd.fd >= 0) ::close(pfd.fd);
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // hwloc's messages, one per line, at most a few.
  std::vector<std::string> said;
  {
    size_t start = 0;
    while (start < messages.size() && said.size() < 5) {
      size_t nl = messages.find('\n', start);
      if (nl == std::string::npos) nl = messages.size();
      std::string line = messages.substr(start, nl - start);
      if (line.find_first_not_of(" \t\r") != std::string::npos) said.push_back(line);
      start = nl + 1;
    }
  }
  auto with_messages = [&](absl::Status s) {
    if (said.empty()) return s;
    std::string joined;
    for (const auto& l : said) joined += (joined.empty() ? "" : " | ") + l;
    return absl::Status(s.code(), fmt::format("{} [hwloc: {}]", std::string(s.message()), joined));
  };
  if (timed_out) {
    return with_messages(absl::InvalidArgumentError(fmt::format(
        "{}: hwloc did not finish loading it within {} s", name, kImportTimeoutMs / 1000)));
  }
  if (WIFSIGNALED(status)) {
    return with_messages(absl::InvalidArgumentError(fmt::format(
        "{}: not a valid hwloc XML topology (hwloc crashed loading it: {})", name,
        strsignal(WTERMSIG(status)))));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return with_messages(
        absl::InternalError(fmt::format("{}: the hwloc import process failed", name)));
  }
  auto node = Decode(report, name);
  if (!node.ok()) return with_messages(node.status());
  for (const auto& l : said) node->warnings.push_back(fmt::format("{}: hwloc: {}", name, l));
  return node;
}

// The os_index of each PU and NUMANode object, checked on the text before hwloc reads it.
// hwloc sizes bitmaps by these indexes: a PU without one gets index 2^32-1, and hwloc then
// copies 512 MiB bitmaps for it (seconds of page faults for a 10 KB file); the importer
// refuses such objects afterwards anyway (Importer::Index). The scan follows hwloc's own
// reading: its XML parser (hwloc's "nolibxml" one, Debian builds hwloc without libxml2) takes
// `<object` elements with double-quoted attributes, decodes &amp; &lt; &gt; &quot; &apos;
// &#9; &#10; &#13;, reads types case-insensitively ("pu", "node" and "NUMANode" included:
// hwloc_type_sscanf) and os_index with strtoul (so "-1" is 2^32-1); the last of repeated
// attributes counts. Any type starting with "pu" or "n" is checked: that covers hwloc's
// spellings, and the others ("pUxx") hwloc refuses anyway. Objects of other types keep
// whatever index they have (PCI objects' are bus ids, above 65535).
std::string DecodeXmlAttribute(std::string_view raw) {
  static constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'},
      {"&apos;", '\''}, {"&#9;", '\t'}, {"&#10;", '\n'}, {"&#13;", '\r'}};
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    bool decoded = false;
    if (raw[i] == '&') {
      for (const auto& [entity, ch] : kEntities) {
        if (raw.substr(i, entity.size()) == entity) {
          out += ch;
          i += entity.size() - 1;
          decoded = true;
          break;
        }
      }
    }
    if (!decoded) out += raw[i];
  }
  return out;
}

absl::Status CheckObjectIndexes(const std::string& xml, const std::string& name) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  for (size_t at = xml.find("<object"); at != std::string::npos;
       at = xml.find("<object", at + 1)) {
    // The attributes: name="value", separated by spaces, up to '>' or "/>".
    std::optional<std::string> type, os_index;
    size_t i = at + 7;
    if (i < xml.size() && !space(xml[i]) && xml[i] != '>' && xml[i] != '/') continue;
    while (true) {
      while (i < xml.size() && space(xml[i])) ++i;
      size_t eq = xml.find('=', i);
      if (i >= xml.size() || xml[i] == '>' || xml[i] == '/' || eq == std::string::npos ||
          eq + 1 >= xml.size() || xml[eq + 1] != '"') {
        break;
      }
      size_t close = xml.find('"', eq + 2);
      if (close == std::string::npos) break;
      std::string_view attr(xml.data() + i, eq - i);
      if (attr.find_first_of(" \t\n\r<>/") != std::string_view::npos) break;
      std::optional<std::string>* slot =
          attr == "type" ? &type : attr == "os_index" ? &os_index : nullptr;
      if (slot != nullptr) {
        *slot = DecodeXmlAttribute(std::string_view(xml).substr(eq + 2, close - eq - 2));
      }
      i = close + 1;
    }
    if (!type) continue;
    const char* kind = strncasecmp(type->c_str(), "pu", 2) == 0 ? "PU"
                       : (!type->empty() && (type->front() == 'n' || type->front() == 'N'))
                           ? "NUMANode"
                           : nullptr;
    if (kind == nullptr) continue;
    auto line = [&] {
      return 1 + std::count(xml.begin(), xml.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    };
    if (!os_index) {
      return absl::InvalidArgumentError(
          fmt::format("{}: line {}: {} object without an os_index", name, line(), kind));
    }
    auto index = static_cast<unsigned>(std::strtoul(os_index->c_str(), nullptr, 10));
    if (index > static_cast<unsigned>(CpuSet::kMaxCpuId)) {
      return absl::InvalidArgumentError(
          fmt::format("{}: line {}: {} object: os_index {} is above {}", name, line(), kind,
                      index, CpuSet::kMaxCpuId));
    }
  }
  return absl::OkStatus();
}

// hwloc 2.9 refuses `<topology version="3.0">` (written by hwloc 3.x); the 3.0 format
// only adds elements the 2.x reader skips, so such files are read as 2.0.
std::string DowngradeVersion(const std::string& xml, std::vector<std::string>* notes,
                             const std::string& name) {
  static constexpr char kTag[] = "<topology version=\"";
  size_t at = xml.find(kTag);
  if (at == std::string::npos) return xml;
  size_t v = at + sizeof(kTag) - 1;
  size_t end = xml.find('"', v);
  if (end == std::string::npos || xml.compare(v, 2, "3.") != 0) return xml;
  notes->push_back(fmt::format("{}: hwloc {} XML read with hwloc 2.x's reader", name,
                               xml.substr(v, end - v)));
  std::string out = xml;
  out.replace(v, end - v, "2.0");
  return out;
}

}  // namespace

absl::StatusOr<NodeTopology> ImportHwlocXmlText(const std::string& xml, const std::string& name) {
  if (xml.size() > kMaxXmlBytes) {
    return absl::InvalidArgumentError(
        fmt::format("{}: larger than {} bytes", name, kMaxXmlBytes));
  }
  if (xml.find("<topology") == std::string::npos) {
    return absl::InvalidArgumentError(
        fmt::format("{}: not an hwloc XML topology (no <topology> element)", name));
  }
  PODTOPO_RETURN_IF_ERROR(CheckObjectIndexes(xml, name));
  std::vector<std::string> notes;
  std::string input = DowngradeVersion(xml, &notes, name);
  auto node = ImportIsolated(input, name);
  if (node.ok()) node->warnings.insert(node->warnings.begin(), notes.begin(), notes.end());
  return node;
}

absl::StatusOr<NodeTopology> ImportHwlocXml(const std::string& path) {
  PODTOPO_ASSIGN_OR_RETURN(std::string xml, ReadSmallFile(path, kMaxXmlBytes));
  return ImportHwlocXmlText(xml, path);
}

}  // namespace podtopo
