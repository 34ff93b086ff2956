#include "topology/hwloc_import.h"

#include <fcntl.h>
#include <hwloc.h>
#include <poll.h>
#include <signal.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "topology/hugepages.h"
#include "util/file.h"
#include "util/status_macros.h"

// The sanitizers' runtime, when linked in.
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

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
  // A core is numbered by its lowest CPU, as the kubelet numbers cadvisor's cores (the lowest
  // thread), counting only the CPUs kept above. Its CPUs are on one NUMA node: cadvisor
  // builds cores per NUMA node, so a Core object whose PUs the NUMANodes split is not a
  // machine (the topology JSON reader refuses it too).
  struct CoreSeen {
    unsigned lowest;
    unsigned first_cpu;
    int numa;
  };
  std::map<hwloc_obj_t, CoreSeen> cores;
  for (const Pending& p : pending) {
    if (p.core == nullptr) continue;
    auto [it, inserted] = cores.emplace(p.core, CoreSeen{p.cpu, p.cpu, p.numa});
    if (inserted) continue;
    if (it->second.numa != p.numa) {
      return Error(fmt::format(
          "{}: its PUs are on different NUMA nodes: PU {} on NUMANode {}, PU {} on NUMANode {} "
          "(a core is on one NUMA node)",
          Label(p.core), it->second.first_cpu, it->second.numa, p.cpu, p.numa));
    }
    it->second.lowest = std::min(it->second.lowest, p.cpu);
  }
  for (const Pending& p : pending) {
    int socket = SocketOf(p.package);
    int core = static_cast<int>(p.core == nullptr ? p.cpu : cores.at(p.core).lowest);
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

// While it lives, a crash signal kills the process at once (as without sanitizers): the import
// child's hwloc crashing on bad XML is an error the parent reports, not a sanitizer's report
// (seconds of symbolizing in a fuzz target's child) or libFuzzer's crash handler (which would
// save the input it was fuzzing when the child was forked, not this one).
class CrashSignalsKill {
 public:
  CrashSignalsKill() {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigemptyset(&dfl.sa_mask);
    for (size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &dfl, &saved_[i]);
  }
  ~CrashSignalsKill() {
    for (size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &saved_[i], nullptr);
  }
  CrashSignalsKill(const CrashSignalsKill&) = delete;
  CrashSignalsKill& operator=(const CrashSignalsKill&) = delete;

 private:
  static constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  struct sigaction saved_[std::size(kSignals)] {};
};

// Loads the XML with hwloc in this process (the import child).
absl::StatusOr<NodeTopology> ImportInProcess(const std::string& xml, const std::string& name) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return absl::InternalError(fmt::format("{}: hwloc_topology_init failed", name));
  }
  TopologyPtr topo(raw);
  hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  std::optional<CrashSignalsKill> in_hwloc(std::in_place);
  // The length counts the terminating NUL, as hwloc_topology_export_xmlbuffer reports it.
  if (hwloc_topology_set_xmlbuffer(raw, xml.c_str(), static_cast<int>(xml.size() + 1)) != 0) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: not an hwloc XML topology (hwloc rejected it: {})", name, std::strerror(errno)));
  }
  if (hwloc_topology_load(raw) != 0) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: not an hwloc XML topology (hwloc could not load it: {})", name, std::strerror(errno)));
  }
  in_hwloc.reset();
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

// `bad`: set when the report is not one Encode wrote.
absl::StatusOr<NodeTopology> Decode(const std::string& text, const std::string& name,
                                    bool* bad) {
  *bad = false;
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
    *bad = true;
    return absl::InternalError(fmt::format("{}: bad report from the hwloc import: {}", name,
                                           e.what()));
  }
}

// hwloc's messages, one per line, at most a few.
std::vector<std::string> HwlocMessageLines(const std::string& messages) {
  std::vector<std::string> said;
  size_t start = 0;
  while (start < messages.size() && said.size() < 5) {
    size_t nl = messages.find('\n', start);
    if (nl == std::string::npos) nl = messages.size();
    std::string line = messages.substr(start, nl - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) said.push_back(line);
    start = nl + 1;
  }
  return said;
}

// hwloc 2.9 crashes on some malformed XML (e.g. in hwloc_bitmap_compare_first), so the
// import runs in a child process: a crash or a hang there becomes an error here. What hwloc
// prints on stderr is collected and attached to the error, or kept as warnings.
//
// One child serves every import of the process, one at a time (ImportChild::mu_): forked at
// the first import, it reads requests from a socket, imports each in-process and answers
// with Encode's report. A fork per import cost the big processes most (the libFuzzer target:
// copying the page tables of its ASan shadow, then the copy-on-write faults, ~20 ms per
// input); the child is forked again only after it crashed, hung (killed at the timeout), gave
// a bad answer, or when the HWLOC_* environment changed (hwloc reads some variables once per
// process). The child's fd 2 is a memfd the parent empties before each request and reads
// after it, so hwloc's messages are collected even when it crashes. The child exits when it
// reads end-of-file on its socket (this process closed it or exited; at exit() this process
// also reaps it); it keeps no other file of this process open (stdin/stdout are /dev/null),
// and an alarm kills it should hwloc hang after this process died. Writes use MSG_NOSIGNAL: a dead child is an error, never a
// SIGPIPE here, and the process's signal dispositions are left alone.
constexpr uint64_t kMaxReportBytes = uint64_t{1} << 30;
constexpr size_t kMaxMessageBytes = size_t{64} << 20;

struct ImportRequestHeader {
  uint64_t name_size;
  uint64_t xml_size;
  uint32_t test_action;  // internal::HwlocImportTestAction
  uint32_t timeout_s;    // for the child's alarm
};

std::atomic<int> import_timeout_ms{kImportTimeoutMs};

bool ChildReadFull(int fd, void* buf, size_t n) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool ChildWriteFull(int fd, const void* buf, size_t n) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t put = ::send(fd, p, n, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

// The child's loop, on fd 3 (the socket). Never returns.
[[noreturn]] void ServeImports(int sock) {
  // SIGALRM and SIGABRT kill the child: not libFuzzer's handlers, which a fuzz target's child
  // inherits (its crash handler would save the input it fuzzed when the child was forked).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  ::sigaction(SIGALRM, &dfl, nullptr);
  ::sigaction(SIGABRT, &dfl, nullptr);
  sigset_t unblock;
  ::sigemptyset(&unblock);
  ::sigaddset(&unblock, SIGALRM);
  ::sigaddset(&unblock, SIGABRT);
  ::sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
  // Nor does a sanitizer's report in the child run libFuzzer's death callback (same reason);
  // the report is in the child's stderr, attached to the error.
  if (&__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(nullptr);
  // hwloc crashing on bad XML is an error, not a core dump of this process's size.
  struct rlimit no_core = {.rlim_cur = 0, .rlim_max = 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  while (true) {
    ImportRequestHeader h{};
    if (!ChildReadFull(sock, &h, sizeof(h))) ::_exit(0);  // end of file: the parent is done
    if (h.name_size > 65536 || h.xml_size > kMaxXmlBytes) ::_exit(2);
    std::string name(h.name_size, '\0'), xml(h.xml_size, '\0');
    if (!ChildReadFull(sock, name.data(), name.size()) ||
        !ChildReadFull(sock, xml.data(), xml.size())) {
      ::_exit(0);
    }
    // Received: from here on, the child's end is this input's doing.
    if (!ChildWriteFull(sock, "A", 1)) ::_exit(0);
    std::string report;
    switch (static_cast<internal::HwlocImportTestAction>(h.test_action)) {
      case internal::HwlocImportTestAction::kCrash:
        ::fprintf(stderr, "test: crashing on purpose\n");
        ::abort();
      case internal::HwlocImportTestAction::kExit:
        ::_exit(3);
      case internal::HwlocImportTestAction::kHang:
        while (true) ::pause();
      case internal::HwlocImportTestAction::kBadAnswer:
        report = "{not json";
        break;
      case internal::HwlocImportTestAction::kNone:
        ::alarm(h.timeout_s + 5);
        report = Encode(ImportInProcess(xml, name));
        ::alarm(0);
        break;
    }
    uint64_t size = report.size();
    if (!ChildWriteFull(sock, &size, sizeof(size)) ||
        !ChildWriteFull(sock, report.data(), report.size())) {
      ::_exit(0);
    }
  }
}

// The HWLOC_* variables of the environment, which the child's hwloc sees as they were when it
// was forked.
std::string HwlocEnvironment() {
  std::vector<std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "HWLOC_", 6) == 0) vars.emplace_back(*e);
  }
  std::sort(vars.begin(), vars.end());
  std::string out;
  for (const auto& v : vars) out.append(v).push_back('\0');
  return out;
}

class ImportChild;
ImportChild& TheImportChild();

class ImportChild {
 public:
  absl::StatusOr<NodeTopology> Import(const std::string& xml, const std::string& name,
                                      internal::HwlocImportTestAction action);
  pid_t Pid() {
    std::lock_guard<std::mutex> lock(mu_);
    return pid_;
  }
  // At exit: ends and reaps the child, so that it is no zombie of whatever reaps orphans (or
  // of a PID 1 that does not). Skipped when an import is in flight in another thread.
  void StopAtExit() {
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    if (lock.owns_lock() && pid_ > 0 && owner_ == ::getpid()) Stop(false);
  }

 private:
  // kSendFailed: the child ended before it had the whole request (not this input's doing).
  enum class Exchange { kAnswered, kSendFailed, kTimedOut, kNoAnswer, kBadAnswer };
  absl::Status Spawn(const std::string& name);
  // Closes the socket, kills the child (SIGKILL when `kill`, else it exits on end of file)
  // and reaps it; the status it ended with.
  int Stop(bool kill);
  // The child ended on its own (reaped); its pid is cleared.
  bool Ended();
  Exchange Send(const ImportRequestHeader& h, const std::string& name, const std::string& xml,
                std::chrono::steady_clock::time_point deadline);
  // `why`: what was wrong with a bad answer.
  Exchange Receive(std::string* report, std::string* why,
                   std::chrono::steady_clock::time_point deadline);
  std::string Messages() const;

  std::mutex mu_;
  pid_t pid_ = -1;
  int sock_ = -1;
  int messages_ = -1;  // the child's stderr
  std::string env_;    // HwlocEnvironment() when it was forked
  pid_t owner_ = -1;   // the process that forked it
};

absl::Status ImportChild::Spawn(const std::string& name) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return absl::InternalError(fmt::format("{}: socketpair: {}", name, std::strerror(errno)));
  }
  int mfd = ::memfd_create("podtopo-hwloc-stderr", MFD_CLOEXEC);
  if (mfd < 0) {
    int e = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    return absl::InternalError(fmt::format("{}: memfd_create: {}", name, std::strerror(e)));
  }
  ::fcntl(mfd, F_SETFL, O_APPEND);
  std::string env = HwlocEnvironment();
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {sv[0], sv[1], mfd}) ::close(fd);
    return absl::InternalError(fmt::format("{}: fork: {}", name, std::strerror(e)));
  }
  if (pid == 0) {
    // 0 and 1: /dev/null; 2: the memfd; 3: the socket; nothing else of the parent stays open
    // (a pipe it holds must see end of file when the parent closes it, not when this exits).
    int sock = ::fcntl(sv[1], F_DUPFD, 10);
    int err = ::fcntl(mfd, F_DUPFD, 10);
    int null = ::open("/dev/null", O_RDWR);
    if (sock < 0 || err < 0 || null < 0) ::_exit(2);
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    ::dup2(sock, 3);
    if (::close_range(4, ~0U, 0) != 0) {
      for (int fd = 4; fd < 65536; ++fd) ::close(fd);
    }
    ServeImports(3);
  }
  ::close(sv[1]);
  pid_ = pid;
  sock_ = sv[0];
  messages_ = mfd;
  env_ = std::move(env);
  owner_ = ::getpid();
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit([] { TheImportChild().StopAtExit(); }); });
  return absl::OkStatus();
}

int ImportChild::Stop(bool kill) {
  int status = 0;
  if (sock_ >= 0) ::close(sock_);
  if (messages_ >= 0) ::close(messages_);
  sock_ = messages_ = -1;
  if (pid_ > 0) {
    if (kill) ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  return status;
}

bool ImportChild::Ended() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0) return false;
  pid_ = -1;  // reaped (or not our child any more)
  Stop(false);
  return true;
}

int RemainingMs(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - std::chrono::steady_clock::now())
                  .count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, INT_MAX));
}

ImportChild::Exchange ImportChild::Send(const ImportRequestHeader& h, const std::string& name,
                                        const std::string& xml,
                                        std::chrono::steady_clock::time_point deadline) {
  std::pair<const char*, size_t> parts[] = {
      {reinterpret_cast<const char*>(&h), sizeof(h)}, {name.data(), name.size()},
      {xml.data(), xml.size()}};
  for (auto [p, left] : parts) {
    while (left > 0) {
      ssize_t n = ::send(sock_, p, left, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        p += n;
        left -= static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        struct pollfd pfd = {.fd = sock_, .events = POLLOUT, .revents = 0};
        int ready = ::poll(&pfd, 1, RemainingMs(deadline));
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) return Exchange::kTimedOut;
        if (ready < 0) return Exchange::kSendFailed;
        continue;
      }
      return Exchange::kSendFailed;  // EPIPE, ECONNRESET: the child is gone
    }
  }
  return Exchange::kAnswered;
}

ImportChild::Exchange ImportChild::Receive(std::string* report, std::string* why,
                                           std::chrono::steady_clock::time_point deadline) {
  // First the child's acknowledgement that it has the whole request.
  char ack = 0;
  while (true) {
    struct pollfd pfd = {.fd = sock_, .events = POLLIN, .revents = 0};
    int ready = ::poll(&pfd, 1, RemainingMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return Exchange::kTimedOut;
    if (ready < 0) return Exchange::kSendFailed;
    ssize_t n = ::read(sock_, &ack, 1);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return Exchange::kSendFailed;  // it ended before it had this input
    if (ack != 'A') {
      *why = "no acknowledgement";
      return Exchange::kBadAnswer;
    }
    break;
  }
  uint64_t size = 0;
  size_t have = 0;
  bool sized = false;
  while (true) {
    char* dst;
    size_t want;
    if (!sized) {
      dst = reinterpret_cast<char*>(&size) + have;
      want = sizeof(size) - have;
    } else {
      dst = report->data() + have;
      want = report->size() - have;
    }
    if (want == 0) {
      if (sized) return Exchange::kAnswered;
      if (size > kMaxReportBytes) {
        *why = fmt::format("larger than {} bytes", kMaxReportBytes);
        return Exchange::kBadAnswer;
      }
      report->assign(size, '\0');
      sized = true;
      have = 0;
      continue;
    }
    struct pollfd pfd = {.fd = sock_, .events = POLLIN, .revents = 0};
    int ready = ::poll(&pfd, 1, RemainingMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return Exchange::kTimedOut;
    if (ready < 0) return Exchange::kNoAnswer;
    ssize_t n = ::read(sock_, dst, want);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return Exchange::kNoAnswer;  // end of file: the child ended
    have += static_cast<size_t>(n);
  }
}

std::string ImportChild::Messages() const {
  struct stat st {};
  if (messages_ < 0 || ::fstat(messages_, &st) != 0 || st.st_size <= 0) return "";
  std::string out(std::min(static_cast<size_t>(st.st_size), kMaxMessageBytes), '\0');
  ssize_t n = ::pread(messages_, out.data(), out.size(), 0);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

absl::StatusOr<NodeTopology> ImportChild::Import(const std::string& xml, const std::string& name,
                                                 internal::HwlocImportTestAction action) {
  std::lock_guard<std::mutex> lock(mu_);
  int timeout_ms = import_timeout_ms.load();
  ImportRequestHeader h{.name_size = name.size(),
                        .xml_size = xml.size(),
                        .test_action = static_cast<uint32_t>(action),
                        .timeout_s = static_cast<uint32_t>(timeout_ms / 1000)};
  if (pid_ > 0 && owner_ != ::getpid()) {
    // This process is a fork of the one that forked the child: that child is its sibling,
    // and its socket is shared with the parent. Leave both to the parent; fork our own.
    ::close(sock_);
    ::close(messages_);
    pid_ = sock_ = messages_ = -1;
  }
  if (pid_ > 0 && HwlocEnvironment() != env_) Stop(false);
  Ended();  // killed from outside since the last import: fork another
  Exchange got = Exchange::kSendFailed;
  std::string report, why;
  // A second try only when the first child died before it had this input: that child did not
  // die of it.
  for (int attempt = 0; attempt < 2 && got == Exchange::kSendFailed; ++attempt) {
    if (attempt > 0) Stop(false);
    if (pid_ <= 0) PODTOPO_RETURN_IF_ERROR(Spawn(name));
    if (::ftruncate(messages_, 0) != 0) {
      return absl::InternalError(fmt::format("{}: ftruncate: {}", name, std::strerror(errno)));
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    got = Send(h, name, xml, deadline);
    if (got == Exchange::kAnswered) got = Receive(&report, &why, deadline);
  }
  std::vector<std::string> said = HwlocMessageLines(Messages());
  auto with_messages = [&](absl::Status s) {
    if (said.empty()) return s;
    std::string joined;
    for (const auto& l : said) joined += (joined.empty() ? "" : " | ") + l;
    return absl::Status(s.code(), fmt::format("{} [hwloc: {}]", std::string(s.message()), joined));
  };
  switch (got) {
    case Exchange::kAnswered:
      break;
    case Exchange::kTimedOut:
      Stop(true);
      return with_messages(absl::InvalidArgumentError(fmt::format(
          "{}: hwloc did not finish loading it within {} s", name, timeout_ms / 1000)));
    case Exchange::kBadAnswer:
      Stop(true);
      return with_messages(absl::InternalError(fmt::format(
          "{}: bad report from the hwloc import: {}", name, why)));
    case Exchange::kSendFailed:
    case Exchange::kNoAnswer: {
      int status = Stop(false);  // it closed the socket: it is ending
      if (WIFSIGNALED(status)) {
        return with_messages(absl::InvalidArgumentError(fmt::format(
            "{}: not a valid hwloc XML topology (hwloc crashed loading it: {})", name,
            strsignal(WTERMSIG(status)))));
      }
      return with_messages(
          absl::InternalError(fmt::format("{}: the hwloc import process failed", name)));
    }
  }
  bool bad = false;
  auto node = Decode(report, name, &bad);
  if (bad) Stop(true);
  if (!node.ok()) return with_messages(node.status());
  for (const auto& l : said) node->warnings.push_back(fmt::format("{}: hwloc: {}", name, l));
  return node;
}

ImportChild& TheImportChild() {
  static auto* child = new ImportChild();  // never destroyed: the child ends with the process
  return *child;
}

absl::StatusOr<NodeTopology> ImportIsolated(const std::string& xml, const std::string& name) {
  return TheImportChild().Import(xml, name, internal::HwlocImportTestAction::kNone);
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

namespace internal {

absl::StatusOr<NodeTopology> ImportHwlocXmlInChildForTest(const std::string& xml,
                                                          const std::string& name,
                                                          HwlocImportTestAction action) {
  return TheImportChild().Import(xml, name, action);
}

pid_t HwlocImportChildPid() { return TheImportChild().Pid(); }

void SetHwlocImportTimeoutForTest(int ms) { import_timeout_ms.store(ms); }

}  // namespace internal

}  // namespace podtopo
