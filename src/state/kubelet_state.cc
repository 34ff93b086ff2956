#include "state/kubelet_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <set>

#include "admission/pod_record.h"
#include "admission/pod_requests.h"
#include "admission/state_files.h"
#include "api/pod_gates.h"
#include "cpumanager/static_policy.h"
#include "fmt/format.h"
#include "kubelet/version.h"
#include "memorymanager/reserved_memory.h"
#include "memorymanager/static_policy.h"
#include "util/file.h"
#include "util/format.h"
#include "util/go_strconv.h"

namespace podtopo::state {
namespace {

constexpr char kCpuFile[] = "cpu_manager_state";
constexpr char kMemoryFile[] = "memory_manager_state";

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

// ---------------------------------------------------------------------------------------
// The managers the kubelet would build from the configuration (as admission/node.cc does).

// Start never asks for hints; the policy only needs a store to exist.
class NoAffinity : public memorymanager::AffinityStore {
 public:
  memorymanager::TopologyHint GetAffinity(const std::string&, const std::string&) const override {
    return {};
  }
};

struct Managers {
  NoAffinity no_affinity;
  bool plrm = false;  // PodLevelResourceManagers
  std::string cpu_policy;
  std::string memory_policy;
  std::unique_ptr<cpumanager::StaticPolicy> cpu;     // null unless static
  std::optional<memorymanager::StaticPolicy> memory;  // unless Static
  CpuSet all_cpus;   // the node's CPUs
  CpuSet reserved;   // static policy's reserved set
  bool strict = false;
  // How the configuration's kubelet version reads the files (its load chains).
  const kubelet::KubeletVersion* version = nullptr;  // null: podtopo's own reader (newest)
  checkpoint::CpuLoadOptions cpu_load;
  checkpoint::MemoryLoadOptions memory_load;
  // podUID -> "namespace/name" from podtopo's record, when the directory has one.
  std::map<std::string, std::string> pod_names;
};

absl::StatusOr<std::unique_ptr<Managers>> BuildManagers(const Environment& env) {
  auto m = std::make_unique<Managers>();
  const config::KubeletConfig& config = env.config;
  m->plrm = config.FeatureEnabled("PodLevelResourceManagers");
  m->cpu_policy = config.cpu_manager_policy;
  m->memory_policy = config.memory_manager_policy;
  m->version = config.Version();
  m->cpu_load = CpuLoadOptionsFor(config);
  m->memory_load = MemoryLoadOptionsFor(config);
  m->all_cpus = env.topology.cpus.AllCpus();
  ResourceList capacity = NodeCapacity(env.topology);
  std::vector<config::Finding> findings = config.Validate(&capacity);
  if (config::HasErrors(findings)) return config::ErrorsToStatus(findings);

  if (config.cpu_manager_policy == "static") {
    cpumanager::StaticPolicyConfig cc;
    cc.num_reserved_cpus = config.NumReservedCpus();
    auto reserved = config.ReservedSystemCpuSet();
    if (!reserved.ok()) return reserved.status();
    cc.reserved_system_cpus = *reserved;
    cc.options = config.cpu_manager_policy_options;
    cc.topology_manager_policy = config.topology_manager_policy;
    cc.gates.pod_level_resources = config.FeatureEnabled("PodLevelResources");
    cc.gates.pod_level_resource_managers = m->plrm;
    cc.gates.fix_kubelet_qos_class = PodGatesFromConfig(config).fix_kubelet_qos_class;
    cc.gates.options = {config.FeatureEnabled("CPUManagerPolicyAlphaOptions"),
                        config.FeatureEnabled("CPUManagerPolicyBetaOptions")};
    if (cc.num_reserved_cpus == 0 && cc.reserved_system_cpus.IsEmpty()) {
      return absl::InvalidArgumentError(
          "cpuManagerPolicy: [cpumanager] the static policy requires systemreserved.cpu + "
          "kubereserved.cpu to be greater than zero");
    }
    auto p = cpumanager::StaticPolicy::Create(env.topology.cpus, cc, nullptr);
    if (!p.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("cpuManagerPolicy: new static policy error: {}", p.status().message()));
    }
    m->cpu = std::move(*p);
    m->reserved = m->cpu->reserved_cpus();
    m->strict = m->cpu->options().strict_cpu_reservation;
  }
  if (config.memory_manager_policy == "Static") {
    auto machine = memorymanager::MachineNumaNodesFromTopology(env.topology);
    if (!machine.ok()) return machine.status();
    std::vector<int> ids;
    for (const auto& n : *machine) ids.push_back(n.id);
    std::vector<memorymanager::MemoryReservation> reservations;
    for (const auto& r : config.reserved_memory) reservations.push_back({r.numa_node, r.limits});
    auto reserved = memorymanager::GetSystemReservedMemory(
        ids, config.NodeAllocatableReservation(capacity), reservations);
    if (!reserved.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("reservedMemory: {}", reserved.status().message()));
    }
    memorymanager::PolicyGates gates{config.FeatureEnabled("PodLevelResources"), m->plrm,
                                     PodGatesFromConfig(config).fix_kubelet_qos_class};
    auto p = memorymanager::StaticPolicy::New(*machine, *reserved, &m->no_affinity, gates);
    if (!p.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("memoryManagerPolicy: {}", p.status().message()));
    }
    m->memory.emplace(std::move(*p));
  }
  return m;
}

// CPUs the state must account for: all, minus reserved with strict-cpu-reservation.
CpuSet ExpectedCpus(const Managers& m) {
  CpuSet all = m.all_cpus;
  if (m.strict) all.Subtract(m.reserved);
  return all;
}

std::string Bytes(uint64_t b) {
  static const char* units[] = {"Ki", "Mi", "Gi", "Ti"};
  std::string out = std::to_string(b);
  uint64_t v = b;
  for (const char* u : units) {
    if (v == 0 || v % 1024 != 0) break;
    v /= 1024;
    out = fmt::format("{}{}", v, u);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// CPU analysis.

constexpr char kRestartAdvice[] =
    "run `podtopo state repair` to see the plan and `podtopo state repair --yes` to apply it "
    "(a backup of the file is kept); the kubelet's own advice - drain the node and delete the "
    "file - also works but restarts every pod";

bool IsChecksumError(const absl::Status& s) {
  std::string m(s.message());
  const std::string suffix = "checkpoint is corrupted";
  return m.size() >= suffix.size() && m.compare(m.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct CpuAnalysis {
  FileStatus file;
  std::optional<checkpoint::CpuCheckpoint> cp;
  std::optional<checkpoint::CpuCheckpointV1> v1;
  std::vector<Finding> findings;
};

Finding Fatal(const std::string& file, std::string problem) {
  Finding f;
  f.severity = Severity::kFatal;
  f.file = file;
  f.problem = std::move(problem);
  return f;
}

Finding Warning(const std::string& file, std::string problem) {
  Finding f = Fatal(file, std::move(problem));
  f.severity = Severity::kWarning;
  return f;
}

// The finding for a checkpoint file that could not be read: missing (the kubelet starts with
// a fresh one) or unreadable (it refuses to start; `kubelet_error` is its own message).
// Marks `status` as existing unless the file is missing.
Finding UnreadableCheckpoint(const char* file, const char* what, const absl::Status& read,
                             const absl::Status& kubelet_error, FileStatus& status) {
  if (absl::IsNotFound(read)) {
    Finding f;
    f.severity = Severity::kInfo;
    f.file = file;
    f.problem = "missing";
    f.message = fmt::format("no {} checkpoint", what);
    f.effect = "the kubelet writes a fresh one at start";
    return f;
  }
  status.exists = true;
  Finding f = Fatal(file, "unreadable");
  f.message = std::string(read.message());
  f.kubelet_message = kubelet_error.ok() ? "" : std::string(kubelet_error.message());
  f.effect = "the kubelet refuses to start";
  f.advice = "fix the file's type or permissions (the kubelet needs a readable regular file)";
  return f;
}

// A "stale-pod" warning for every pod in `pods` that is not in `running` (nothing without a
// list of running pods): the kubelet's removeStaleState releases them, but only later.
void AddStalePods(const char* file, const char* what, const std::set<std::string>& pods,
                  const RunningPods* running, const char* advice, std::vector<Finding>& out) {
  if (running == nullptr) return;
  for (const auto& uid : pods) {
    if (running->uids.count(uid)) continue;
    Finding f;
    f.severity = Severity::kWarning;
    f.file = file;
    f.problem = "stale-pod";
    f.message = fmt::format("pod {} holds {} in the state but is not running", uid, what);
    f.effect = fmt::format(
        "the kubelet starts and releases it itself once every pod source is ready "
        "(removeStaleState); until then its {} {} not available",
        what, std::string_view(what) == "CPUs" ? "are" : "is");
    f.advice = advice;
    f.repairable = true;
    out.push_back(std::move(f));
  }
}

// Pods with pod-level entries (KEP-5526) in a checkpoint read while PodLevelResourceManagers
// is off (a rollback): the kubelet ignores those entries, charges the containers' own, and
// allocates nothing for such pods; the way out is to drop their entries.
void AddPodLevelRollback(const char* file, const std::set<std::string>& pods,
                         std::vector<Finding>& out) {
  if (pods.empty()) return;
  Finding f = Warning(file, "pod-entries-ignored");
  f.message = fmt::format(
      "pod-level entries of pod(s) {} were written with PodLevelResourceManagers on, and the "
      "gate is off now (a rollback)",
      fmt::join(pods, ", "));
  f.effect =
      "the kubelet ignores them: validateState charges each container's own entries instead "
      "(a pod's shared pool once per container), and a gate-off kubelet allocates nothing for "
      "pods with pod-level resources";
  f.advice =
      "drop those pods' entries: `podtopo state repair --running-pods FILE --yes` with a list "
      "of the pods to keep (those without spec.resources), then restart the pod-level pods "
      "(docs/state.md, \"Rolling back\")";
  f.repairable = true;
  out.push_back(std::move(f));
}

// How the configured kubelet version reads a file of `format` (kubelet/version.h); podtopo's
// own reader (no version) reads every known format fully.
kubelet::CheckpointRead HowRead(const Managers& m, kubelet::CheckpointFile file, int format) {
  if (m.version == nullptr) return {kubelet::ReadMode::kFull, format, "", ""};
  return kubelet::ReadCheckpointFormat(*m.version, file, m.plrm, format);
}

// Whether a finding names the file's pod-level entries, so that they must be read: the
// version reads the file through its inline legacy part (which drops them), or the gate is off
// (the kubelet ignores them).
bool NamesPodEntries(const Managers& m, kubelet::CheckpointFile file, int format) {
  return !m.plrm || HowRead(m, file, format).mode == kubelet::ReadMode::kLegacyPart;
}

std::string FormatLabel(int format) { return fmt::format("V{}", format); }

std::string PodLabel(const Managers& m, const std::string& uid) {
  auto it = m.pod_names.find(uid);
  return it == m.pod_names.end() ? uid : fmt::format("{} ({})", it->second, uid);
}

// A kubelet version that reads a newer checkpoint format than its own: refused (fatal), or
// read through the inline legacy part, which drops the pod-level entries of `dropped` (a
// downgrade: 1.37 -> 1.36, k/k #139102 / #139626). Fills file.read_as and
// file.pod_entries_dropped. Returns false when the version does not read the file at all.
bool AddVersionRead(const char* file_name, const Managers& m, kubelet::CheckpointFile file,
                    const std::map<std::string, std::string>& dropped,
                    const std::string& kubelet_msg, FileStatus& status,
                    std::vector<Finding>& out) {
  const kubelet::CheckpointRead read = HowRead(m, file, status.version);
  status.read_as = read.format_read;
  const std::string who =
      m.version == nullptr ? "podtopo" : fmt::format("kubelet {}", m.version->name);
  const int newest = m.version == nullptr
                         ? status.version
                         : kubelet::NewestReadCheckpointFormat(*m.version, file, m.plrm);
  if (read.mode == kubelet::ReadMode::kRefused) {
    Finding f = Fatal(file_name, "format-not-read");
    f.message = fmt::format(
        "a {} checkpoint; {} (PodLevelResourceManagers {}) reads {} and older only, and the "
        "file does not verify as one of them",
        FormatLabel(status.version), who, m.plrm ? "on" : "off", FormatLabel(newest));
    f.kubelet_message = kubelet_msg;
    f.effect = "the kubelet refuses to start";
    f.advice =
        "start the kubelet version (and gate) that wrote the file, or drain the node and delete "
        "the file (docs/state.md, \"Upgrades and rollbacks\")";
    out.push_back(std::move(f));
    return false;
  }
  if (read.mode != kubelet::ReadMode::kLegacyPart || dropped.empty()) return true;
  Finding f = Warning(file_name, "pod-entries-dropped");
  f.message = fmt::format(
      "{} reads this {} checkpoint through its inline {} part ({}): the pod-level entries of "
      "{} pod(s) are not in that part and are lost",
      who, FormatLabel(status.version), FormatLabel(read.format_read), read.upstream,
      dropped.size());
  for (const auto& [uid, held] : dropped) {
    status.pod_entries_dropped.push_back(uid);
    f.details.push_back(fmt::format("pod {}: pod-level {} dropped", PodLabel(m, uid), held));
  }
  f.effect =
      "the kubelet starts without the pods' pod-level entries: their containers keep their own "
      "entries, and when it admits the pods again it allocates their pod-level resources anew "
      "(`podtopo state restart` predicts what that does)";
  f.advice =
      "before downgrading, drain the pods with pod-level resources (or accept that they are "
      "re-admitted); `podtopo state restart --kubelet-version V` shows each pod's outcome";
  out.push_back(std::move(f));
  return true;
}

std::set<std::string> CpuPods(const cpumanager::CpuState& st) {
  std::set<std::string> pods;
  for (const auto& [uid, _] : st.GetCpuAssignments()) pods.insert(uid);
  for (const auto& [uid, _] : st.GetPodCpuAssignments()) pods.insert(uid);
  return pods;
}

void ValidateStaticCpu(const cpumanager::CpuState& state, const Managers& m,
                       const RunningPods* running, std::vector<Finding>& out) {
  cpumanager::CpuState copy = state;
  absl::Status s = m.cpu->Start(copy);
  const CpuSet all = ExpectedCpus(m);
  const CpuSet& def = state.GetDefaultCpuSet();
  if (!s.ok()) {
    std::string msg(s.message());
    Finding f = Fatal(kCpuFile, "invalid-state");
    f.kubelet_message = msg;
    f.effect =
        "the kubelet refuses to start: the CPU manager's Start fails (log: \"Static policy "
        "invalid state, please drain node and remove policy state file\")";
    f.advice = kRestartAdvice;
    f.repairable = true;
    if (msg.rfind("default cpuset cannot be empty", 0) == 0) {
      f.problem = "empty-default-cpuset";
      f.message = "the default (shared) cpuset is empty while containers hold exclusive CPUs";
    } else if (msg.rfind("not all reserved cpus", 0) == 0 ||
               msg.rfind("some of strictly reserved", 0) == 0) {
      f.problem = "reserved-cpus";
      f.message = fmt::format(
          "the reserved CPUs ({}) do not match the default cpuset ({}): the reservation "
          "(reservedSystemCPUs, kube/system-reserved cpu, strict-cpu-reservation) changed since "
          "the state was written, or exclusive containers hold reserved CPUs",
          m.reserved.String(), def.String());
    } else if (msg.find("overlaps with default cpuset") != std::string::npos) {
      f.problem = "overlap";
      f.message = "exclusive CPUs of a container are also in the default (shared) cpuset";
    } else if (msg.rfind("current set of available CPUs", 0) == 0) {
      f.problem = "cpu-set-changed";
      f.message =
          "the CPUs in the state are not the CPUs of this node (k/k #110478: CPUs went offline "
          "or online, or the machine changed, since the state was written)";
    }
    // Every problem, not only the first the kubelet reports.
    CpuSet known = def;
    for (const auto& [uid, containers] : state.GetCpuAssignments()) {
      for (const auto& [name, cpus] : containers) {
        known.UnionWith(cpus);
        if (cpus.Intersects(def)) {
          f.details.push_back(fmt::format("pod {} container {} ({}) overlaps the default cpuset",
                                          uid, name, cpus.String()));
        }
        if (cpus.Intersects(m.reserved)) {
          f.details.push_back(fmt::format("pod {} container {} holds reserved CPUs {}", uid,
                                          name, cpus.Intersection(m.reserved).String()));
        }
        if (!cpus.IsSubsetOf(m.all_cpus)) {
          f.details.push_back(fmt::format("pod {} container {} holds CPUs {} this node lacks",
                                          uid, name, cpus.Difference(m.all_cpus).String()));
        }
      }
    }
    if (m.plrm) {
      for (const auto& [uid, cpus] : state.GetPodCpuAssignments()) known.UnionWith(cpus);
    }
    if (!known.Difference(all).IsEmpty()) {
      f.details.push_back(fmt::format("CPUs in the state that this node does not offer: {}",
                                      known.Difference(all).String()));
    }
    if (!all.Difference(known).IsEmpty()) {
      f.details.push_back(fmt::format("CPUs of this node missing from the state: {}",
                                      all.Difference(known).String()));
    }
    if (m.strict ? def.Intersects(m.reserved) : !m.reserved.IsSubsetOf(def)) {
      f.details.push_back(fmt::format("reserved CPUs {}, default cpuset {}{}", m.reserved.String(),
                                      def.String(),
                                      m.strict ? " (strict-cpu-reservation)" : ""));
    }
    out.push_back(std::move(f));
  }

  // What the kubelet accepts but that hurts later.
  if (m.plrm) {
    for (const auto& [uid, cpus] : state.GetPodCpuAssignments()) {
      if (state.HasContainerEntries(uid)) continue;
      Finding f;
      f.severity = Severity::kWarning;
      f.file = kCpuFile;
      f.problem = "incomplete-pod-entry";
      f.message = fmt::format(
          "pod {} has a pod-level CPU set ({}) but no container entries: an incomplete write "
          "(the kubelet writes the pod entry first, then each container)",
          uid, cpus.String());
      f.effect =
          "the kubelet starts; the pod's CPUs stay out of the shared pool, and if the pod is "
          "gone they are never released (removeStaleState only walks container entries)";
      f.advice = "`podtopo state repair --yes` drops the entry and gives the CPUs back to the "
                 "shared pool; the kubelet allocates the pod afresh if it is re-admitted";
      f.repairable = true;
      out.push_back(std::move(f));
    }
  }
  // Exclusive CPUs held by two pods.
  std::map<int, std::string> owner;
  std::set<std::pair<std::string, std::string>> reported;
  for (const auto& [uid, containers] : state.GetCpuAssignments()) {
    CpuSet pod_cpus;
    for (const auto& [name, cpus] : containers) pod_cpus.UnionWith(cpus);
    if (auto b = state.GetPodCpuSet(uid); b && m.plrm) pod_cpus.UnionWith(*b);
    pod_cpus.ForEach([&, &pod_uid = uid](int c) {
      auto [it, inserted] = owner.emplace(c, pod_uid);
      if (!inserted && it->second != pod_uid && reported.insert({it->second, pod_uid}).second) {
        Finding f;
        f.severity = Severity::kWarning;
        f.file = kCpuFile;
        f.problem = "shared-exclusive-cpus";
        f.message =
            fmt::format("pods {} and {} both hold CPU {} exclusively", it->second, pod_uid, c);
        f.effect = "the kubelet starts (validateState does not compare pods with each other)";
        f.advice = "restart one of the pods, or give --running-pods so that repair drops the "
                   "one that no longer runs";
        out.push_back(std::move(f));
      }
    });
  }
  AddStalePods(kCpuFile, "CPUs", CpuPods(state), running,
               "`podtopo state repair --running-pods FILE --yes` gives its CPUs back now", out);
}

CpuAnalysis AnalyzeCpu(const std::string& path, const absl::StatusOr<std::string>& bytes,
                       const Managers& m, const RunningPods* running) {
  CpuAnalysis a;
  a.file.name = kCpuFile;
  a.file.path = path;
  const checkpoint::CpuLoadOptions& lo = m.cpu_load;
  if (!bytes.ok()) {
    absl::Status kubelet_error =
        absl::IsNotFound(bytes.status())
            ? absl::OkStatus()
            : checkpoint::LoadCpuCheckpointFile(path, lo).status();
    a.findings.push_back(
        UnreadableCheckpoint(kCpuFile, "CPU manager", bytes.status(), kubelet_error, a.file));
    return a;
  }
  a.file.exists = true;
  a.file.read_ok = true;
  a.file.bytes = *bytes;
  absl::StatusOr<checkpoint::CpuCheckpoint> kubelet = checkpoint::RestoreCpuCheckpoint(*bytes, path, lo);
  checkpoint::ChecksumReport inspect = checkpoint::InspectCpuCheckpoint(*bytes, m.plrm);
  a.file.version = inspect.version;
  a.file.policy_name = inspect.policy_name;
  a.file.checksum = inspect.algorithm;
  const std::string kubelet_msg = kubelet.ok() ? "" : std::string(kubelet.status().message());
  if (!inspect.error.ok()) {
    if (inspect.version == 1) {
      auto v1 = checkpoint::DecodeCpuCheckpointV1(*bytes);
      if (v1.ok()) a.v1 = *v1;
      Finding f = Fatal(kCpuFile, "v1-checkpoint");
      f.message =
          "a V1 checkpoint (kubelet <= 1.17: entries keyed by container ID); kubelet 1.37 reads "
          "only V2, V3 and V4";
      if (v1.ok()) {
        for (const auto& [id, cpus] : v1->entries) {
          f.details.push_back(fmt::format("container {} holds CPUs {}", id, cpus));
        }
      }
      f.kubelet_message = kubelet_msg;
      f.effect = "the kubelet refuses to start";
      bool mappable = running != nullptr && !running->containers.empty();
      f.repairable = true;
      f.advice =
          v1.ok() && !v1->entries.empty() && !mappable
              ? "`podtopo state repair --yes` migrates it; its entries need the container list "
                "(--running-pods with `crictl ps -a -o json` or `kubectl get pods -o json`)"
              : "`podtopo state repair --yes` migrates it to V4 (a backup is kept)";
      a.findings.push_back(std::move(f));
      return a;
    }
    Finding f = Fatal(kCpuFile, IsChecksumError(inspect.error) ? "checksum" : "corrupt");
    f.message = fmt::format("the checkpoint does not load: {}", inspect.error.message());
    f.details.push_back(inspect.algorithm);
    f.kubelet_message = kubelet_msg;
    f.effect = "the kubelet refuses to start";
    f.advice =
        "podtopo does not repair a checkpoint whose contents cannot be trusted: drain the node "
        "(kubectl drain), delete the file, restart the kubelet, then uncordon";
    a.findings.push_back(std::move(f));
    return a;
  }
  // The pod-level entries the file holds (podtopo's own reader, gate on), read only where a
  // finding names them: the version's read drops them, or the gate is off.
  std::map<std::string, std::string> pod_sets;
  if (NamesPodEntries(m, kubelet::CheckpointFile::kCpu, a.file.version)) {
    auto all = checkpoint::RestoreCpuCheckpoint(*bytes, path, {inspect.policy_name, true});
    if (all.ok()) {
      for (const auto& [uid, cpus] : all->pod_entries) pod_sets[uid] = "CPU set " + cpus;
    }
  }
  if (!AddVersionRead(kCpuFile, m, kubelet::CheckpointFile::kCpu, pod_sets, kubelet_msg, a.file,
                      a.findings)) {
    return a;
  }
  checkpoint::CpuLoadOptions own = lo;
  own.configured_policy = inspect.policy_name;
  absl::StatusOr<checkpoint::CpuCheckpoint> decoded =
      checkpoint::RestoreCpuCheckpoint(*bytes, path, own);
  if (!decoded.ok()) {
    Finding f = Fatal(kCpuFile, "bad-cpuset");
    f.message = "a cpuset in the checkpoint does not parse";
    f.kubelet_message = kubelet_msg.empty() ? std::string(decoded.status().message()) : kubelet_msg;
    f.effect = "the kubelet refuses to start";
    f.advice = "drain the node, delete the file and restart the kubelet";
    a.findings.push_back(std::move(f));
    return a;
  }
  a.cp = *decoded;
  if (inspect.policy_name != m.cpu_policy) {
    Finding f = Fatal(kCpuFile, "policy-mismatch");
    f.message = fmt::format(
        "the checkpoint was written by the {} policy but the kubelet is configured with {} "
        "(bottlerocket#1465)",
        GoQuote(inspect.policy_name), GoQuote(m.cpu_policy));
    f.kubelet_message = kubelet_msg;
    f.effect = "the kubelet refuses to start";
    f.repairable = true;
    f.advice = fmt::format(
        "`podtopo state repair --yes` writes an empty {} state{}", m.cpu_policy,
        decoded->entries.empty()
            ? " (no pod holds exclusive CPUs, so no pod is affected)"
            : "; pods that held exclusive CPUs keep their cpusets until restarted - drain first");
    a.findings.push_back(std::move(f));
    return a;
  }
  if (!kubelet.ok()) {  // cannot happen when the policies match; keep the kubelet's word
    Finding f = Fatal(kCpuFile, "restore");
    f.message = kubelet_msg;
    f.kubelet_message = kubelet_msg;
    f.effect = "the kubelet refuses to start";
    a.findings.push_back(std::move(f));
    return a;
  }
  if (m.cpu != nullptr) {
    auto st = CpuStateFromCheckpoint(*decoded, path);
    if (st.ok()) ValidateStaticCpu(*st, m, running, a.findings);
  }
  if (!m.plrm && a.file.pod_entries_dropped.empty()) {
    std::set<std::string> pods;
    for (const auto& [uid, _] : pod_sets) pods.insert(uid);
    AddPodLevelRollback(kCpuFile, pods, a.findings);
  }
  return a;
}

// ---------------------------------------------------------------------------------------
// Memory analysis.

struct MemoryAnalysis {
  FileStatus file;
  std::optional<checkpoint::MemoryCheckpoint> cp;
  std::vector<Finding> findings;
  std::vector<MemoryDrift> drift;
};

// validateState's expected machine state: default + every assignment (pod-level pods by their
// pod blocks). `unreserved` (optional) receives the bytes the fill rule could not reserve.
absl::StatusOr<memorymanager::NumaNodeMap> ExpectedMachineState(
    const memorymanager::StaticPolicy& policy, const memorymanager::MemoryState& state,
    bool plrm, uint64_t* unreserved) {
  memorymanager::NumaNodeMap expected = policy.DefaultMachineState();
  auto apply = [&](const std::vector<memorymanager::Block>& blocks, const std::string& pod,
                   const std::string& container) -> absl::Status {
    for (const auto& b : blocks) {
      uint64_t size = b.size;
      for (int node : b.numa_affinity) {
        auto n = expected.find(node);
        if (n == expected.end()) {
          return absl::FailedPreconditionError(fmt::format(
              "[memorymanager] (pod: {}, container: {}) the memory assignment uses the NUMA "
              "that does not exist",
              pod, container));
        }
        n->second.number_of_assignments++;
        n->second.cells = b.numa_affinity;
        auto t = n->second.memory_map.find(b.type);
        if (t == n->second.memory_map.end()) {
          return absl::FailedPreconditionError(fmt::format(
              "[memorymanager] (pod: {}, container: {}) the memory assignment uses memory "
              "resource that does not exist",
              pod, container));
        }
        uint64_t take = std::min(size, t->second.free);
        t->second.reserved += take;
        t->second.free -= take;
        size -= take;
      }
      if (unreserved != nullptr) *unreserved += size;
    }
    return absl::OkStatus();
  };
  for (const auto& [pod, containers] : state.assignments) {
    if (plrm) {
      const auto* pod_blocks = state.GetPodMemoryBlocks(pod);
      if (pod_blocks != nullptr && !pod_blocks->empty()) {
        if (auto s = apply(*pod_blocks, pod, ""); !s.ok()) return s;
        continue;
      }
    }
    for (const auto& [name, blocks] : containers) {
      if (auto s = apply(blocks, pod, name); !s.ok()) return s;
    }
  }
  return expected;
}

// Per-node, per-type differences between the stored and the expected machine state; sets the
// flags for the kind of difference, and (optional) lists the totals that differ.
std::vector<std::string> DiffMachineStates(const memorymanager::NumaNodeMap& stored,
                                           const memorymanager::NumaNodeMap& expected,
                                           bool* capacity, bool* reservation, bool* layout,
                                           std::vector<MemoryDrift>* drift = nullptr) {
  std::vector<std::string> out;
  for (const auto& [id, e] : expected) {
    auto s = stored.find(id);
    if (s == stored.end()) {
      out.push_back(fmt::format("NUMA node {} is on this node but not in the state", id));
      *layout = true;
      continue;
    }
    for (const auto& [type, et] : e.memory_map) {
      auto st = s->second.memory_map.find(type);
      if (st == s->second.memory_map.end()) {
        out.push_back(fmt::format("NUMA node {}: {} is on this node but not in the state", id, type));
        *layout = true;
        continue;
      }
      const auto& t = st->second;
      if (t.total != et.total) {
        out.push_back(fmt::format("NUMA node {} {}: total {} ({}) in the state, {} ({}) on this node",
                                  id, type, t.total, Bytes(t.total), et.total, Bytes(et.total)));
        *capacity = true;
        if (drift != nullptr) drift->push_back({id, type, t.total, et.total});
      }
      if (t.system_reserved != et.system_reserved) {
        out.push_back(fmt::format(
            "NUMA node {} {}: systemReserved {} ({}) in the state, {} ({}) configured", id, type,
            t.system_reserved, Bytes(t.system_reserved), et.system_reserved,
            Bytes(et.system_reserved)));
        *reservation = true;
      }
      if (t.allocatable != et.allocatable && t.total == et.total &&
          t.system_reserved == et.system_reserved) {
        out.push_back(fmt::format("NUMA node {} {}: allocatable {} in the state, {} expected", id,
                                  type, t.allocatable, et.allocatable));
        *capacity = true;
      }
      if (t.reserved != et.reserved || t.free != et.free) {
        out.push_back(fmt::format(
            "NUMA node {} {}: reserved {} / free {} in the state, {} / {} from the assignments",
            id, type, t.reserved, t.free, et.reserved, et.free));
      }
    }
    for (const auto& [type, _] : s->second.memory_map) {
      if (!e.memory_map.count(type)) {
        out.push_back(fmt::format("NUMA node {}: {} is in the state but not on this node", id, type));
        *layout = true;
      }
    }
    if (s->second.number_of_assignments != e.number_of_assignments) {
      out.push_back(fmt::format("NUMA node {}: numberOfAssignments {} in the state, {} expected",
                                id, s->second.number_of_assignments, e.number_of_assignments));
    }
    std::set<int> a(s->second.cells.begin(), s->second.cells.end());
    std::set<int> b(e.cells.begin(), e.cells.end());
    if (a != b) {
      out.push_back(fmt::format("NUMA node {}: cells [{}] in the state, [{}] expected", id,
                                fmt::join(a, ","), fmt::join(b, ",")));
    }
  }
  for (const auto& [id, _] : stored) {
    if (!expected.count(id)) {
      out.push_back(fmt::format("NUMA node {} is in the state but not on this node", id));
      *layout = true;
    }
  }
  return out;
}

std::set<std::string> MemoryPods(const memorymanager::MemoryState& st) {
  std::set<std::string> pods;
  for (const auto& [uid, _] : st.assignments) pods.insert(uid);
  for (const auto& [uid, _] : st.pod_assignments) pods.insert(uid);
  return pods;
}

void ValidateStaticMemory(const memorymanager::MemoryState& state, Managers& m,
                          const RunningPods* running, std::vector<Finding>& out,
                          std::vector<MemoryDrift>& drift) {
  memorymanager::StaticPolicy& policy = *m.memory;
  memorymanager::MemoryState copy = state;
  absl::Status s = policy.Start(copy);
  policy.ClearNotices();
  std::vector<std::string> incomplete;
  if (m.plrm) {
    for (const auto& [uid, _] : state.pod_assignments) {
      if (state.ContainerEntryCount(uid) == 0) incomplete.push_back(uid);
    }
  }
  if (!s.ok()) {
    std::string msg(s.message());
    Finding f = Fatal(kMemoryFile, "machine-state-mismatch");
    f.kubelet_message = msg;
    f.effect =
        "the kubelet refuses to start: the memory manager's Start fails (log: \"Invalid state, "
        "please drain node and remove policy state file\")";
    f.advice = kRestartAdvice;
    f.repairable = true;
    if (msg.find("machine state can not be empty") != std::string::npos) {
      f.problem = "empty-machine-state";
      f.message = "the machine state is empty but containers hold memory assignments";
    } else if (msg.find("does not exist") != std::string::npos) {
      f.problem = "numa-layout-changed";
      f.message = "an assignment uses a NUMA node or memory type this node does not have";
      f.advice = "`podtopo state repair --yes` drops that pod's assignments (restart the pod); "
                 "or drain the node and delete the file";
    } else {
      bool capacity = false, reservation = false, layout = false;
      auto expected = ExpectedMachineState(policy, state, m.plrm, nullptr);
      if (expected.ok()) {
        f.details = DiffMachineStates(state.machine_state, *expected, &capacity, &reservation,
                                      &layout, &drift);
        // An incomplete pod-level entry whose memory the machine state still holds.
        if (!incomplete.empty()) {
          memorymanager::MemoryState with = state;
          for (const auto& uid : incomplete) {
            with.assignments[uid]["(pod)"] = *state.GetPodMemoryBlocks(uid);
          }
          auto e2 = ExpectedMachineState(policy, with, false, nullptr);
          if (e2.ok() && memorymanager::AreMachineStatesEqual(state.machine_state, *e2)) {
            f.details.push_back(fmt::format(
                "the machine state still holds the memory of the incomplete pod-level entries "
                "of {} (k/k #141993)",
                fmt::join(incomplete, ", ")));
          }
        }
      }
      if (capacity) {
        f.problem = "memory-capacity-drift";
        f.message =
            "the memory of a NUMA node differs from the checkpoint (k/k #131253: the kernel "
            "reports slightly different memory after a reboot, or memory/hugepages changed)";
      } else if (reservation) {
        f.problem = "reserved-memory-changed";
        f.message = "reservedMemory (or kube/system-reserved, eviction) changed since the "
                    "state was written";
      } else if (layout) {
        f.problem = "numa-layout-changed";
        f.message = "the NUMA nodes or hugepage sizes of this node differ from the checkpoint";
      } else {
        f.message = "the machine state's reserved/free memory does not match the assignments";
      }
    }
    out.push_back(std::move(f));
  }
  for (const auto& uid : incomplete) {
    Finding f;
    f.severity = Severity::kWarning;
    f.file = kMemoryFile;
    f.problem = "incomplete-pod-entry";
    f.message = fmt::format(
        "pod {} has pod-level memory blocks ({}) but no container entries: an incomplete write "
        "(k/k #141993; the kubelet writes the pod entry, then the containers, then the machine "
        "state)",
        uid, memorymanager::BlocksString(*state.GetPodMemoryBlocks(uid)));
    f.effect =
        "the kubelet starts and accepts it as a restored allocation: when it re-admits the pod, "
        "AllocatePod does nothing, so its containers get no memory blocks and the machine state "
        "never charges the pod";
    f.advice = "`podtopo state repair --yes` drops the entry (the fix proposed in k/k #141994); "
               "the kubelet then allocates the pod afresh";
    f.repairable = true;
    out.push_back(std::move(f));
  }
  AddStalePods(kMemoryFile, "memory", MemoryPods(state), running,
               "`podtopo state repair --running-pods FILE --yes` releases it now", out);
}

MemoryAnalysis AnalyzeMemory(const std::string& path, const absl::StatusOr<std::string>& bytes,
                             Managers& m, const RunningPods* running) {
  MemoryAnalysis a;
  a.file.name = kMemoryFile;
  a.file.path = path;
  const checkpoint::MemoryLoadOptions& lo = m.memory_load;
  if (!bytes.ok()) {
    absl::Status kubelet_error =
        absl::IsNotFound(bytes.status())
            ? absl::OkStatus()
            : checkpoint::LoadMemoryCheckpointFile(path, lo).status();
    a.findings.push_back(
        UnreadableCheckpoint(kMemoryFile, "memory manager", bytes.status(), kubelet_error, a.file));
    return a;
  }
  a.file.exists = true;
  a.file.read_ok = true;
  a.file.bytes = *bytes;
  auto kubelet = checkpoint::RestoreMemoryCheckpoint(*bytes, path, lo);
  checkpoint::ChecksumReport inspect = checkpoint::InspectMemoryCheckpoint(*bytes);
  a.file.version = inspect.version;
  a.file.policy_name = inspect.policy_name;
  a.file.checksum = inspect.algorithm;
  const std::string kubelet_msg = kubelet.ok() ? "" : std::string(kubelet.status().message());
  if (!inspect.error.ok()) {
    Finding f = Fatal(kMemoryFile, IsChecksumError(inspect.error) ? "checksum" : "corrupt");
    f.message = fmt::format("the checkpoint does not load: {}", inspect.error.message());
    f.details.push_back(inspect.algorithm);
    f.kubelet_message = kubelet_msg;
    f.effect = "the kubelet refuses to start";
    f.advice =
        "podtopo does not repair a checkpoint whose contents cannot be trusted: drain the node "
        "(kubectl drain), delete the file, restart the kubelet, then uncordon";
    a.findings.push_back(std::move(f));
    return a;
  }
  std::map<std::string, std::string> pod_blocks;  // as pod_sets in AnalyzeCpu
  if (NamesPodEntries(m, kubelet::CheckpointFile::kMemory, a.file.version)) {
    auto all = checkpoint::RestoreMemoryCheckpoint(*bytes, path, {inspect.policy_name, true});
    if (all.ok()) {
      for (const auto& [uid, blocks] : all->pod_entries) {
        uint64_t bytes_held = 0;
        for (const auto& b : blocks) bytes_held += b.size;
        pod_blocks[uid] = fmt::format("memory blocks ({} in {} block(s))", Bytes(bytes_held),
                                      blocks.size());
      }
    }
  }
  if (!AddVersionRead(kMemoryFile, m, kubelet::CheckpointFile::kMemory, pod_blocks, kubelet_msg,
                      a.file, a.findings)) {
    return a;
  }
  checkpoint::MemoryLoadOptions own = lo;
  own.configured_policy = inspect.policy_name;
  auto decoded = checkpoint::RestoreMemoryCheckpoint(*bytes, path, own);
  if (!decoded.ok()) {
    Finding f = Fatal(kMemoryFile, "corrupt");
    f.message = std::string(decoded.status().message());
    f.kubelet_message = kubelet_msg.empty() ? f.message : kubelet_msg;
    f.effect = "the kubelet refuses to start";
    f.advice = "drain the node, delete the file and restart the kubelet";
    a.findings.push_back(std::move(f));
    return a;
  }
  a.cp = *decoded;
  if (inspect.policy_name != m.memory_policy) {
    Finding f = Fatal(kMemoryFile, "policy-mismatch");
    f.message = fmt::format(
        "the checkpoint was written by the {} policy but the kubelet is configured with {}",
        GoQuote(inspect.policy_name), GoQuote(m.memory_policy));
    f.kubelet_message = kubelet_msg;
    f.effect = "the kubelet refuses to start";
    f.repairable = true;
    f.advice = fmt::format(
        "`podtopo state repair --yes` writes an empty {} state{}", m.memory_policy,
        decoded->entries.empty() ? " (no pod holds pinned memory, so no pod is affected)"
                                 : "; pods with pinned memory keep it until restarted - drain "
                                   "first");
    a.findings.push_back(std::move(f));
    return a;
  }
  if (m.memory.has_value()) {
    ValidateStaticMemory(MemoryStateFromCheckpoint(*decoded), m, running, a.findings, a.drift);
  }
  if (!m.plrm && a.file.pod_entries_dropped.empty()) {
    std::set<std::string> pods;
    for (const auto& [uid, _] : pod_blocks) pods.insert(uid);
    AddPodLevelRollback(kMemoryFile, pods, a.findings);
  }
  return a;
}

// ---------------------------------------------------------------------------------------
// Repair planning.

void AddUnique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

bool HasFatal(const std::vector<Finding>& findings, const std::string& file) {
  for (const auto& f : findings) {
    if (f.file == file && f.severity == Severity::kFatal) return true;
  }
  return false;
}

// Plans the CPU file. Returns the new checkpoint, or nullopt when unchanged.
std::optional<checkpoint::CpuCheckpoint> PlanCpu(const CheckReport& r, const Managers& m,
                                                 const RunningPods* running, RepairPlan& plan) {
  const std::string& path = r.cpu_file.path;
  for (const auto& f : r.findings) {
    if (f.file == kCpuFile && f.severity == Severity::kFatal && !f.repairable) {
      plan.unresolved.push_back(fmt::format("{}: {} - {}", path, f.message, f.advice));
      return std::nullopt;
    }
  }
  std::optional<checkpoint::CpuCheckpoint> cp = r.cpu;
  bool changed = false;
  if (!cp && r.cpu_v1) {
    const checkpoint::CpuCheckpointV1& v1 = *r.cpu_v1;
    checkpoint::CpuCheckpoint migrated;
    migrated.policy_name = v1.policy_name;
    migrated.default_cpu_set = v1.default_cpu_set;
    if (!v1.entries.empty() && (running == nullptr || running->containers.empty())) {
      plan.unresolved.push_back(fmt::format(
          "{}: the V1 checkpoint's entries are keyed by container ID; give --running-pods with "
          "`crictl ps -a -o json` or `kubectl get pods -o json` so they can be mapped to pods",
          path));
      return std::nullopt;
    }
    for (const auto& [id, cpus] : v1.entries) {
      auto it = running->containers.find(id);
      if (it == running->containers.end()) {
        plan.steps.push_back(fmt::format(
            "{}: V1 entry of container {} ({}) dropped: the container is not running; its CPUs "
            "return to the shared pool",
            path, id, cpus));
        continue;
      }
      migrated.entries[it->second.first][it->second.second] = cpus;
      plan.steps.push_back(fmt::format("{}: V1 entry of container {} -> pod {} container {} ({})",
                                       path, id, it->second.first, it->second.second, cpus));
    }
    plan.steps.push_back(fmt::format("{}: migrate the V1 checkpoint to V4", path));
    cp = migrated;
    changed = true;
  }
  if (!cp) return std::nullopt;

  if (cp->policy_name != m.cpu_policy) {
    checkpoint::CpuCheckpoint fresh;
    fresh.policy_name = m.cpu_policy;
    if (m.cpu != nullptr) fresh.default_cpu_set = ExpectedCpus(m).String();
    plan.steps.push_back(fmt::format(
        "{}: policy {} -> {}: write an empty {} state{}", path, GoQuote(cp->policy_name),
        GoQuote(m.cpu_policy), m.cpu_policy,
        m.cpu != nullptr ? fmt::format(" (default cpuset {}: every CPU{})",
                                       fresh.default_cpu_set.empty() ? "\"\"" : fresh.default_cpu_set,
                                       m.strict ? " but the reserved ones" : "")
                         : ""));
    for (const auto& entry : cp->entries) AddUnique(plan.restart_pods, entry.first);
    return fresh;
  }
  if (m.cpu == nullptr) return changed ? cp : std::nullopt;

  auto parsed = CpuStateFromCheckpoint(*cp, path);
  if (!parsed.ok()) {
    plan.unresolved.push_back(std::string(parsed.status().message()));
    return std::nullopt;
  }
  cpumanager::CpuState st = *parsed;
  if (running != nullptr) {
    for (const auto& uid : CpuPods(st)) {
      if (running->uids.count(uid)) continue;
      CpuSet freed;
      if (auto it = st.GetCpuAssignments().find(uid); it != st.GetCpuAssignments().end()) {
        for (const auto& [name, cpus] : it->second) freed.UnionWith(cpus);
      }
      if (auto b = st.GetPodCpuSet(uid)) freed.UnionWith(*b);
      st.DeletePod(uid);
      plan.steps.push_back(fmt::format(
          "{}: pod {} is not running: drop its entries, CPUs {} return to the shared pool", path,
          uid, freed.String()));
      changed = true;
    }
  }
  if (m.plrm) {
    std::vector<std::string> incomplete;
    for (const auto& [uid, cpus] : st.GetPodCpuAssignments()) {
      if (!st.HasContainerEntries(uid)) incomplete.push_back(uid);
    }
    for (const auto& uid : incomplete) {
      plan.steps.push_back(fmt::format(
          "{}: pod {} has an incomplete pod-level entry ({}) and no container entries: drop it; "
          "its CPUs return to the shared pool",
          path, uid, st.GetPodCpuSet(uid)->String()));
      st.DeletePod(uid);
      changed = true;
    }
  } else if (!st.GetPodCpuAssignments().empty()) {
    st.SetPodCpuAssignments({});  // not loaded by the kubelet; not written either
  }
  cpumanager::CpuState probe = st;
  bool invalid = !m.cpu->Start(probe).ok();
  if (!changed && !invalid) return std::nullopt;

  // Normalize against this node: exclusive CPUs that still exist and are not reserved stay.
  const CpuSet usable = m.all_cpus.Difference(m.reserved);
  cpumanager::CpuState next;
  CpuSet assigned;
  for (const auto& [uid, containers] : st.GetCpuAssignments()) {
    for (const auto& [name, cpus] : containers) {
      CpuSet keep = cpus.Intersection(usable);
      if (keep != cpus) {
        CpuSet lost = cpus.Difference(usable);
        std::string why = lost.Intersects(m.reserved) && !lost.Difference(m.reserved).IsEmpty()
                              ? "reserved or not on this node"
                          : lost.Intersects(m.reserved) ? "reserved"
                                                        : "not on this node";
        plan.steps.push_back(fmt::format(
            "{}: pod {} container {}: cpuset {} -> {} (CPU(s) {}: {})", path, uid, name,
            cpus.String(), keep.IsEmpty() ? "(entry dropped)" : keep.String(), lost.String(), why));
        AddUnique(plan.restart_pods, uid);
      }
      if (keep.IsEmpty()) continue;
      next.SetCpuSet(uid, name, keep);
      assigned.UnionWith(keep);
    }
  }
  if (m.plrm) {
    for (const auto& [uid, cpus] : st.GetPodCpuAssignments()) {
      if (!next.HasContainerEntries(uid)) {
        plan.steps.push_back(fmt::format(
            "{}: pod {}: pod-level set {} dropped (none of its containers keeps an entry)", path,
            uid, cpus.String()));
        AddUnique(plan.restart_pods, uid);
        continue;
      }
      CpuSet keep = cpus.Intersection(usable);
      if (keep != cpus) {
        plan.steps.push_back(fmt::format("{}: pod {}: pod-level set {} -> {}", path, uid,
                                         cpus.String(), keep.String()));
        AddUnique(plan.restart_pods, uid);
      }
      next.SetPodCpuSet(uid, keep);
      assigned.UnionWith(keep);
    }
  }
  CpuSet def = ExpectedCpus(m).Difference(assigned);
  if (def != st.GetDefaultCpuSet()) {
    plan.steps.push_back(fmt::format("{}: default cpuset {} -> {}", path,
                                     st.GetDefaultCpuSet().IsEmpty() ? "\"\"" : st.GetDefaultCpuSet().String(),
                                     def.IsEmpty() ? "\"\"" : def.String()));
  }
  next.SetDefaultCpuSet(def);
  return CpuCheckpointFromState(next, m.cpu_policy);
}

std::optional<checkpoint::MemoryCheckpoint> PlanMemory(const CheckReport& r, Managers& m,
                                                       const RunningPods* running,
                                                       RepairPlan& plan) {
  const std::string& path = r.memory_file.path;
  for (const auto& f : r.findings) {
    if (f.file == kMemoryFile && f.severity == Severity::kFatal && !f.repairable) {
      plan.unresolved.push_back(fmt::format("{}: {} - {}", path, f.message, f.advice));
      return std::nullopt;
    }
  }
  if (!r.memory) return std::nullopt;
  const checkpoint::MemoryCheckpoint& cp = *r.memory;
  if (cp.policy_name != m.memory_policy) {
    checkpoint::MemoryCheckpoint fresh;
    fresh.policy_name = m.memory_policy;
    if (m.memory.has_value()) {
      memorymanager::MemoryState st;
      st.machine_state = m.memory->DefaultMachineState();
      fresh = MemoryCheckpointFromState(st, m.memory_policy);
    }
    plan.steps.push_back(fmt::format("{}: policy {} -> {}: write an empty {} state{}", path,
                                     GoQuote(cp.policy_name), GoQuote(m.memory_policy),
                                     m.memory_policy,
                                     m.memory.has_value()
                                         ? " (the default machine state of this node)"
                                         : ""));
    for (const auto& [uid, _] : cp.entries) AddUnique(plan.restart_pods, uid);
    return fresh;
  }
  if (!m.memory.has_value()) return std::nullopt;
  memorymanager::StaticPolicy& policy = *m.memory;
  memorymanager::MemoryState st = MemoryStateFromCheckpoint(cp);
  bool changed = false;
  if (running != nullptr) {
    for (const auto& uid : MemoryPods(st)) {
      if (running->uids.count(uid)) continue;
      st.DeletePod(uid);
      plan.steps.push_back(
          fmt::format("{}: pod {} is not running: drop its entries and release its memory", path,
                      uid));
      changed = true;
    }
  }
  if (m.plrm) {
    std::vector<std::string> incomplete;
    for (const auto& [uid, _] : st.pod_assignments) {
      if (st.ContainerEntryCount(uid) == 0) incomplete.push_back(uid);
    }
    for (const auto& uid : incomplete) {
      plan.steps.push_back(fmt::format(
          "{}: pod {} has an incomplete pod-level entry ({}) and no container entries: drop it "
          "(k/k #141993)",
          path, uid, memorymanager::BlocksString(*st.GetPodMemoryBlocks(uid))));
      st.pod_assignments.erase(uid);
      changed = true;
    }
  } else {
    st.pod_assignments.clear();  // not loaded by the kubelet; not written either
  }
  // Assignments on NUMA nodes or memory types this node does not have.
  memorymanager::NumaNodeMap def = policy.DefaultMachineState();
  std::vector<std::string> unplaceable;
  for (const auto& uid : MemoryPods(st)) {
    bool bad = false;
    auto check = [&](const std::vector<memorymanager::Block>& blocks) {
      for (const auto& b : blocks) {
        for (int n : b.numa_affinity) {
          auto it = def.find(n);
          if (it == def.end() || !it->second.memory_map.count(b.type)) bad = true;
        }
      }
    };
    if (auto it = st.assignments.find(uid); it != st.assignments.end()) {
      for (const auto& [name, blocks] : it->second) check(blocks);
    }
    if (const auto* pb = st.GetPodMemoryBlocks(uid)) check(*pb);
    if (bad) unplaceable.push_back(uid);
  }
  for (const auto& uid : unplaceable) {
    st.DeletePod(uid);
    plan.steps.push_back(fmt::format(
        "{}: pod {} uses a NUMA node or memory type this node does not have: drop its entries",
        path, uid));
    AddUnique(plan.restart_pods, uid);
    changed = true;
  }
  memorymanager::MemoryState probe = st;
  bool invalid = !policy.Start(probe).ok();
  policy.ClearNotices();
  if (!changed && !invalid) return std::nullopt;
  uint64_t unreserved = 0;
  auto expected = ExpectedMachineState(policy, st, m.plrm, &unreserved);
  if (!expected.ok()) {
    plan.unresolved.push_back(fmt::format("{}: {}", path, expected.status().message()));
    return std::nullopt;
  }
  bool capacity = false, reservation = false, layout = false;
  std::vector<std::string> diff =
      DiffMachineStates(st.machine_state, *expected, &capacity, &reservation, &layout);
  if (!diff.empty()) {
    plan.steps.push_back(fmt::format(
        "{}: rebuild the machine state from this node's memory and the configured reservation, "
        "then charge the assignments of the {} remaining pod(s) as the kubelet's validateState "
        "does:",
        path, MemoryPods(st).size()));
    for (const auto& d : diff) plan.steps.push_back("    " + d);
  }
  if (unreserved > 0) {
    plan.steps.push_back(fmt::format(
        "{}: warning: the assignments exceed this node's free memory by {} ({}); the kubelet "
        "starts but the NUMA nodes are overcommitted - restart or move pods",
        path, unreserved, Bytes(unreserved)));
  }
  st.machine_state = *expected;
  return MemoryCheckpointFromState(st, m.memory_policy);
}

absl::Status WriteExclusive(const std::string& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InternalError(fmt::format("{}: cannot create backup: {}", path, std::strerror(errno)));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(path.c_str());
      return absl::InternalError(fmt::format("{}: cannot write backup: {}", path, std::strerror(e)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(path.c_str());
    return absl::InternalError(fmt::format("{}: cannot sync backup", path));
  }
  return absl::OkStatus();
}

}  // namespace

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kFatal:
      return "fatal";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
  }
  return "info";
}

bool CheckReport::KubeletStarts() const {
  for (const auto& f : findings) {
    if (f.severity == Severity::kFatal) return false;
  }
  return true;
}

bool CheckReport::HasWarnings() const {
  for (const auto& f : findings) {
    if (f.severity == Severity::kWarning) return true;
  }
  return false;
}

namespace {

// The pods a restart of the configured version allocates again, from the checkpoints alone:
// report.restart_at_risk, and one warning per pod (a detail per upstream issue).
void AddRestartRisks(const config::KubeletConfig& config, const Managers& m, CheckReport& r) {
  if (!m.plrm) return;  // pod entries are ignored
  const kubelet::Behavior b = config.VersionBehavior();
  // pod uid -> (file, the versioned behaviour it falls under), CPU file first.
  std::map<std::string, std::vector<std::pair<const char*, bool kubelet::Behavior::*>>> pods;
  if (r.cpu.has_value() && !b.cpu_restore_keeps_pod_cpus) {
    for (const auto& [uid, _] : r.cpu->pod_entries) {
      pods[uid].emplace_back(kCpuFile, &kubelet::Behavior::cpu_restore_keeps_pod_cpus);
    }
  }
  if (r.memory.has_value() && !b.memory_restore_keeps_pod_blocks) {
    for (const auto& [uid, _] : r.memory->pod_entries) {
      pods[uid].emplace_back(kMemoryFile, &kubelet::Behavior::memory_restore_keeps_pod_blocks);
    }
  }
  for (const auto& [uid, risks] : pods) {
    Finding f = Warning(risks.front().first, "restart-reallocates-pod");
    f.message = fmt::format(
        "a restart of kubelet {} allocates pod {} again: the running pod is moved or rejected",
        config.kubelet_version, PodLabel(m, uid));
    std::set<std::string> fixed_in;
    for (const auto& [file, field] : risks) {
      r.restart_at_risk.emplace_back(uid, kubelet::IssueTag(field));
      f.details.push_back(fmt::format("{}: {} ({})", file,
                                      kubelet::FindVersionedBehavior(field)->summary,
                                      kubelet::DescribeVersioned(field)));
      fixed_in.insert(kubelet::FixedIn(field));
    }
    f.effect = "the kubelet starts; at its next start it admits the pod again as a new pod";
    f.advice = fmt::format(
        "before restarting the kubelet, `podtopo state restart --kubelet-dir {}{}` shows where "
        "the pod goes; kubelet {} keeps it",
        r.kubelet_dir, r.record_file.exists ? "" : " --pods POD-FILE...",
        fmt::join(fixed_in, ", "));
    r.findings.push_back(std::move(f));
  }
  std::sort(r.restart_at_risk.begin(), r.restart_at_risk.end());
}

}  // namespace

absl::StatusOr<CheckReport> Check(const std::string& kubelet_dir, const Environment& env,
                                  const RunningPods* running) {
  struct stat st{};
  if (::stat(kubelet_dir.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: {}", kubelet_dir, errno == ENOENT ? "no such directory" : std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(fmt::format("{}: not a directory", kubelet_dir));
  }
  auto managers = BuildManagers(env);
  if (!managers.ok()) return managers.status();
  Managers& m = **managers;
  CheckReport r;
  r.kubelet_dir = kubelet_dir;
  r.node_cpus = m.all_cpus;
  r.reserved_cpus = m.reserved;
  r.record_file.name = kPodRecordFile;
  r.record_file.path = JoinPath(kubelet_dir, kPodRecordFile);
  absl::StatusOr<std::string> record = ReadFile(r.record_file.path);
  r.record_file.exists = !absl::IsNotFound(record.status());
  r.record_file.read_ok = record.ok();
  if (record.ok()) {
    // Names for the findings only: a record that does not parse is the repair's concern.
    if (auto entries = ParsePodRecord(*record, r.record_file.path); entries.ok()) {
      for (const auto& e : *entries) m.pod_names[e.pod.uid] = e.pod.Key();
    }
    r.record_file.bytes = std::move(*record);
  }
  const std::string cpu_path = JoinPath(kubelet_dir, kCpuFile);
  const std::string mem_path = JoinPath(kubelet_dir, kMemoryFile);
  CpuAnalysis cpu = AnalyzeCpu(cpu_path, ReadFile(cpu_path), m, running);
  MemoryAnalysis mem = AnalyzeMemory(mem_path, ReadFile(mem_path), m, running);
  r.cpu_file = std::move(cpu.file);
  r.cpu = std::move(cpu.cp);
  r.cpu_v1 = std::move(cpu.v1);
  r.memory_file = std::move(mem.file);
  r.memory = std::move(mem.cp);
  r.memory_drift = std::move(mem.drift);
  for (auto& f : cpu.findings) r.findings.push_back(std::move(f));
  for (auto& f : mem.findings) r.findings.push_back(std::move(f));
  AddRestartRisks(env.config, m, r);
  return r;
}

namespace {

// The pods that hold an entry in either checkpoint.
std::set<std::string> PodsWithEntries(const std::optional<checkpoint::CpuCheckpoint>& cpu,
                                      const std::optional<checkpoint::MemoryCheckpoint>& memory) {
  std::set<std::string> uids;
  if (cpu.has_value()) {
    for (const auto& [uid, _] : cpu->entries) uids.insert(uid);
    for (const auto& [uid, _] : cpu->pod_entries) uids.insert(uid);
  }
  if (memory.has_value()) {
    for (const auto& [uid, _] : memory->entries) uids.insert(uid);
    for (const auto& [uid, _] : memory->pod_entries) uids.insert(uid);
  }
  return uids;
}

// podtopo's record without the pods the planned checkpoints drop (they held entries, hold
// none after the repair, and are not running): one truth about the directory.
void PlanRecord(const CheckReport& report, const RunningPods* running, RepairPlan& plan) {
  if (running == nullptr || !report.record_file.exists) return;
  const std::string& path = report.record_file.path;
  if (!report.record_file.read_ok) {
    plan.unresolved.push_back(fmt::format(
        "{}: podtopo's record cannot be read, so the pods this repair drops stay in it (podtopo "
        "would admit them again): fix or remove the file",
        path));
    return;
  }
  auto record = ParsePodRecord(report.record_file.bytes, path);
  if (!record.ok()) {
    plan.unresolved.push_back(fmt::format(
        "{} (the pods this repair drops stay in podtopo's record, and podtopo would admit them "
        "again: fix or remove the file)",
        record.status().message()));
    return;
  }
  const std::set<std::string> before = PodsWithEntries(report.cpu, report.memory);
  const std::set<std::string> after =
      PodsWithEntries(plan.cpu.has_value() ? plan.cpu : report.cpu,
                      plan.memory.has_value() ? plan.memory : report.memory);
  std::vector<PodRecordEntry> kept;
  for (PodRecordEntry& e : *record) {
    const std::string& uid = e.pod.uid;
    if (before.count(uid) && !after.count(uid) && !running->uids.count(uid)) {
      plan.steps.push_back(fmt::format(
          "{}: pod {} ({}) is not running: drop it from podtopo's record with its entries",
          path, e.pod.Key(), uid));
      continue;
    }
    kept.push_back(std::move(e));
  }
  if (kept.size() != record->size()) plan.record_bytes = MarshalPodRecord(kept);
}

}  // namespace

absl::StatusOr<RepairPlan> PlanRepair(const CheckReport& report, const Environment& env,
                                      const RunningPods* running) {
  auto managers = BuildManagers(env);
  if (!managers.ok()) return managers.status();
  Managers& m = **managers;
  RepairPlan plan;
  if (auto cpu = PlanCpu(report, m, running, plan)) {
    // Nothing the kubelet wrote is dropped: unmodelled members and baselines stay.
    if (report.cpu.has_value()) checkpoint::KeepUnmodelled(*report.cpu, *cpu);
    // In the format the configured version writes (1.36: V3 / V2; later: V4).
    auto bytes = checkpoint::MarshalCpuCheckpoint(*cpu, CpuWriteOptionsFor(env.config));
    if (!bytes.ok()) {
      plan.unresolved.push_back(
          fmt::format("{}: {}", report.cpu_file.path, bytes.status().message()));
    } else {
      // The planned file must pass the kubelet's start-up checks.
      CpuAnalysis again = AnalyzeCpu(report.cpu_file.path, *bytes, m, nullptr);
      if (HasFatal(again.findings, kCpuFile)) {
        for (const auto& f : again.findings) {
          if (f.severity != Severity::kFatal) continue;
          plan.unresolved.push_back(fmt::format(
              "{}: after the repair the kubelet would still refuse to start: {}{}",
              report.cpu_file.path, f.kubelet_message.empty() ? f.message : f.kubelet_message,
              f.problem == "empty-default-cpuset" ||
                      (f.kubelet_message.rfind("default cpuset cannot be empty", 0) == 0)
                  ? " (every CPU is held exclusively: drain the node)"
                  : ""));
        }
      } else {
        plan.cpu = *cpu;
        plan.cpu_bytes = *bytes;
      }
    }
  }
  if (auto mem = PlanMemory(report, m, running, plan)) {
    if (report.memory.has_value()) checkpoint::KeepUnmodelled(*report.memory, *mem);
    auto bytes = checkpoint::MarshalMemoryCheckpoint(*mem, MemoryWriteOptionsFor(env.config));
    if (!bytes.ok()) {
      plan.unresolved.push_back(
          fmt::format("{}: {}", report.memory_file.path, bytes.status().message()));
    } else {
      MemoryAnalysis again = AnalyzeMemory(report.memory_file.path, *bytes, m, nullptr);
      if (HasFatal(again.findings, kMemoryFile)) {
        for (const auto& f : again.findings) {
          if (f.severity != Severity::kFatal) continue;
          plan.unresolved.push_back(fmt::format(
              "{}: after the repair the kubelet would still refuse to start: {}",
              report.memory_file.path, f.kubelet_message.empty() ? f.message : f.kubelet_message));
        }
      } else {
        plan.memory = *mem;
        plan.memory_bytes = *bytes;
      }
    }
  }
  PlanRecord(report, running, plan);
  return plan;
}

absl::StatusOr<RepairResult> ApplyRepair(const CheckReport& report, const RepairPlan& plan,
                                         const std::string& timestamp) {
  RepairResult result;
  struct Job {
    const FileStatus* file;
    const std::optional<std::string>* bytes;
  };
  // The record first: a stop after it leaves stale checkpoint entries, which podtopo releases
  // at its next start; never a recorded pod without its entries.
  for (const Job& job : {Job{&report.record_file, &plan.record_bytes},
                         Job{&report.cpu_file, &plan.cpu_bytes},
                         Job{&report.memory_file, &plan.memory_bytes}}) {
    if (!job.bytes->has_value()) continue;
    const std::string& path = job.file->path;
    absl::StatusOr<std::string> current = ReadFile(path);
    bool exists_now = current.ok();
    if (!current.ok() && !absl::IsNotFound(current.status())) return current.status();
    if (exists_now != job.file->exists || (exists_now && *current != job.file->bytes)) {
      return absl::FailedPreconditionError(fmt::format(
          "{}: the file changed since it was checked (is the kubelet running?); nothing written "
          "to it",
          path));
    }
    if (exists_now) {
      std::string backup = fmt::format("{}.podtopo-backup-{}", path, timestamp);
      for (int i = 1; FileExists(backup); ++i) {
        backup = fmt::format("{}.podtopo-backup-{}-{}", path, timestamp, i);
      }
      if (absl::Status s = WriteExclusive(backup, *current); !s.ok()) return s;
      absl::StatusOr<std::string> check = ReadFile(backup);
      if (!check.ok() || *check != *current) {
        return absl::DataLossError(fmt::format(
            "{}: the backup does not read back identical; {} left unchanged", backup, path));
      }
      result.backups.push_back(backup);
    }
    if (absl::Status s = WriteFileAtomically(path, **job.bytes, 0600); !s.ok()) return s;
    result.written.push_back(path);
  }
  return result;
}

std::string UtcTimestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace podtopo::state
