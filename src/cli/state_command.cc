// podtopo state check|show|repair: the kubelet's checkpoints on a real node (src/state), read
// as --kubelet-version reads them (an older version reads newer files through their inline
// legacy part, or not at all: docs/state.md "Upgrades and rollbacks").
//
// Exit status: 0 the kubelet would start (check; for repair: after the plan / the writes),
// 1 bad input (flags, --node, --config, --running-pods, a failed write), 2 the kubelet would
// refuse to start (for repair: problems remain that it cannot fix), 4 `check --strict` found
// warnings but the kubelet would start. `state restart` (a kubelet restart predicted for
// --kubelet-version): 0 every pod kept, 3 a pod moved or rejected or resources leaked, 2 the
// kubelet does not start, 1 bad input.
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>

#include "CLI/CLI.hpp"
#include "admission/node.h"
#include "admission/pod_record.h"
#include "admission/state_files.h"
#include "cli/cli.h"
#include "cli/node_flags.h"
#include "config/kubelet_config.h"
#include "kubelet/version.h"
#include "nlohmann/json.hpp"
#include "resource/human_bytes.h"
#include "state/kubelet_state.h"
#include "topology/node_source.h"
#include "util/format.h"

namespace podtopo::cli {
namespace {

constexpr int kExitWouldNotStart = 2;
constexpr int kExitWarnings = 4;

using nlohmann::ordered_json;

struct StateOpts {
  std::string kubelet_dir;
  std::string node = "local";
  std::string config;
  std::string running_pods;
  std::string kubelet_version;
  std::vector<std::string> pods;  // restart: the pods that run on the node
  std::string output = "table";
  bool yes = false;
  bool strict = false;
};

void AddFlags(CLI::App* cmd, StateOpts& o, bool running_pods = true) {
  cmd->add_option("--kubelet-dir", o.kubelet_dir,
                  "the kubelet's root directory (holds cpu_manager_state, memory_manager_state)")
      ->required();
  cmd->add_option("--node", o.node, "preset:NAME | FILE.json | FILE.xml | sysfs:DIR | local")
      ->capture_default_str();
  cmd->add_option("--config", o.config,
                  "the node's KubeletConfiguration (default: podtopo's seed configuration)");
  if (running_pods) {
    cmd->add_option("--running-pods", o.running_pods,
                    "pods that really run: one UID per line, or kubectl get pods / crictl pods / "
                    "crictl ps -o json");
  }
  AddKubeletVersionFlag(cmd, o.kubelet_version);
  cmd->add_option("-o,--output", o.output, "table | json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
}

struct Loaded {
  state::Environment env;
  std::optional<state::RunningPods> running;
};

std::optional<Loaded> Load(const StateOpts& o, Context& ctx) {
  if (!PrepareStateDir("--kubelet-dir", o.kubelet_dir, StateDirUse::kExisting, ctx)) {
    return std::nullopt;
  }
  Loaded l;
  auto topo = LoadNode(o.node);
  if (!topo.ok()) {
    ctx.Fail(topo.status());
    return std::nullopt;
  }
  l.env.topology = std::move(*topo);
  std::optional<config::KubeletConfig> cfg = LoadConfigFlag(o.config, &o.kubelet_version, ctx);
  if (!cfg.has_value()) return std::nullopt;
  l.env.config = std::move(*cfg);
  if (!o.running_pods.empty()) {
    auto r = state::LoadRunningPods(o.running_pods);
    if (!r.ok()) {
      ctx.Fail(r.status());
      return std::nullopt;
    }
    l.running = std::move(*r);
  }
  return l;
}

std::string Reader(const config::KubeletConfig& cfg) {
  return cfg.kubelet_version.empty() ? "podtopo" : "kubelet " + cfg.kubelet_version;
}

std::string VersionName(const state::FileStatus& f) {
  if (!f.exists) return "missing";
  if (!f.read_ok) return "unreadable";
  if (f.version == 0) return "does not load";
  return fmt::format("V{}", f.version);
}

ordered_json FileJson(const state::FileStatus& f) {
  ordered_json j;
  j["file"] = f.name;
  j["path"] = f.path;
  j["exists"] = f.exists;
  j["version"] = f.version;
  j["policyName"] = f.policy_name;
  j["checksum"] = f.checksum;
  j["readAs"] = f.read_as;
  j["podEntriesDropped"] = f.pod_entries_dropped;
  return j;
}

ordered_json FindingJson(const state::Finding& f) {
  ordered_json j;
  j["severity"] = state::SeverityName(f.severity);
  j["file"] = f.file;
  j["problem"] = f.problem;
  j["message"] = f.message;
  j["details"] = f.details;
  j["kubeletMessage"] = f.kubelet_message;
  j["effect"] = f.effect;
  j["advice"] = f.advice;
  j["repairable"] = f.repairable;
  return j;
}

// `version_reader` names the kubelet that reads the files ("kubelet 1.36").
void PrintFiles(const state::CheckReport& r, const std::string& version_reader,
                std::ostream& out) {
  for (const state::FileStatus* f : {&r.cpu_file, &r.memory_file}) {
    out << fmt::format("{}: {}", f->path, VersionName(*f));
    if (!f->policy_name.empty()) out << fmt::format(", policy \"{}\"", f->policy_name);
    out << "\n";
    if (!f->checksum.empty()) out << fmt::format("  checksum: {}\n", f->checksum);
    if (f->read_as != 0 && f->read_as != f->version) {
      out << fmt::format("  read as: V{} (its inline legacy part), by {}\n", f->read_as,
                         version_reader);
    }
  }
}

void PrintFindings(const state::CheckReport& r, std::ostream& out) {
  for (const auto& f : r.findings) {
    if (f.severity == state::Severity::kInfo && f.problem == "missing") {
      out << fmt::format("\nINFO     {}: {} ({})\n", f.file, f.message, f.effect);
      continue;
    }
    std::string sev = state::SeverityName(f.severity);
    for (auto& c : sev) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out << fmt::format("\n{:<8} {} [{}]\n", sev, f.file, f.problem);
    out << fmt::format("  what:    {}\n", f.message);
    for (const auto& d : f.details) out << fmt::format("           - {}\n", d);
    if (!f.kubelet_message.empty()) out << fmt::format("  kubelet: {}\n", f.kubelet_message);
    if (!f.effect.empty()) out << fmt::format("  effect:  {}\n", f.effect);
    if (!f.advice.empty()) out << fmt::format("  safe:    {}\n", f.advice);
  }
}

// The memory each NUMA node has now against the checkpoint's machine state (a reboot: k/k
// #131253), for check and restart.
ordered_json DriftJson(const std::vector<state::MemoryDrift>& drift) {
  ordered_json arr = ordered_json::array();
  for (const state::MemoryDrift& d : drift) {
    ordered_json j;
    j["numaNode"] = d.numa_node;
    j["type"] = d.type;
    j["checkpointBytes"] = d.checkpoint_bytes;
    j["nodeBytes"] = d.node_bytes;
    j["deltaBytes"] = d.Delta();
    arr.push_back(std::move(j));
  }
  return arr;
}

constexpr char kDriftToleranceNote[] =
    "every kubelet version podtopo knows compares these totals exactly; KEP-6232's tolerance "
    "(gate MemoryManagerDriftTolerance, k/k #140473 and #142121) is in none of them";

void PrintDrift(const std::vector<state::MemoryDrift>& drift, const std::string& indent,
                std::ostream& out) {
  if (drift.empty()) return;
  out << fmt::format("{}memory the node has now against the checkpoint's machine state "
                     "(k/k #131253: the kernel reports other totals after a reboot):\n",
                     indent);
  for (const state::MemoryDrift& d : drift) {
    const int64_t delta = d.Delta();
    const uint64_t magnitude = delta < 0 ? static_cast<uint64_t>(-delta) : delta;
    out << fmt::format("{}  NUMA node {} {}: {} ({} B) in the checkpoint, {} {} on this node ({} "
                       "B)\n",
                       indent, d.numa_node, d.type, HumanBytes(d.checkpoint_bytes),
                       d.checkpoint_bytes, HumanBytes(magnitude), delta < 0 ? "less" : "more",
                       d.node_bytes);
  }
  out << fmt::format("{}{}\n", indent, kDriftToleranceNote);
}

std::string Verdict(const state::CheckReport& r) {
  if (r.KubeletStarts()) {
    return r.HasWarnings() ? "the kubelet would start, with warnings"
                           : "the kubelet would start";
  }
  return "the kubelet would NOT start";
}

void RunCheck(const StateOpts& o, Context& ctx) {
  auto l = Load(o, ctx);
  if (!l) return;
  auto r = state::Check(o.kubelet_dir, l->env, l->running ? &*l->running : nullptr);
  if (!r.ok()) return ctx.Fail(r.status());
  if (o.output == "json") {
    ordered_json j;
    j["kubeletDir"] = o.kubelet_dir;
    j["kubeletStarts"] = r->KubeletStarts();
    j["files"] = {FileJson(r->cpu_file), FileJson(r->memory_file)};
    j["findings"] = ordered_json::array();
    for (const auto& f : r->findings) j["findings"].push_back(FindingJson(f));
    j["memoryDrift"] = DriftJson(r->memory_drift);
    *ctx.out << j.dump(2) << "\n";
  } else {
    PrintFiles(*r, Reader(l->env.config), *ctx.out);
    PrintFindings(*r, *ctx.out);
    if (!r->memory_drift.empty()) {
      *ctx.out << "\n";
      PrintDrift(r->memory_drift, "", *ctx.out);
    }
    *ctx.out << "\n" << Verdict(*r) << "\n";
  }
  if (!r->KubeletStarts()) {
    ctx.exit_code = kExitWouldNotStart;
  } else if (o.strict && r->HasWarnings()) {
    ctx.exit_code = kExitWarnings;
  }
}

// ---- show ----------------------------------------------------------------------------

std::string Size(uint64_t b) {
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

std::string Affinity(const std::optional<std::vector<int>>& a) {
  if (!a) return "null";
  return fmt::format("{}", fmt::join(*a, ","));
}

ordered_json BlocksJson(const std::vector<checkpoint::MemoryBlock>& blocks) {
  ordered_json arr = ordered_json::array();
  for (const auto& b : blocks) {
    ordered_json j;
    j["type"] = b.type;
    j["size"] = b.size;
    j["numaNodes"] = b.numa_affinity ? ordered_json(*b.numa_affinity) : ordered_json(nullptr);
    arr.push_back(j);
  }
  return arr;
}

void RunShow(const StateOpts& o, Context& ctx) {
  auto l = Load(o, ctx);
  if (!l) return;
  auto r = state::Check(o.kubelet_dir, l->env, l->running ? &*l->running : nullptr);
  if (!r.ok()) return ctx.Fail(r.status());
  if (o.output == "json") {
    ordered_json j;
    ordered_json cpu = FileJson(r->cpu_file);
    if (r->cpu) {
      cpu["defaultCpuSet"] = r->cpu->default_cpu_set;
      cpu["reservedCpus"] = r->reserved_cpus.String();
      cpu["entries"] = ordered_json::array();
      for (const auto& [uid, containers] : r->cpu->entries) {
        for (const auto& [name, cpus] : containers) {
          cpu["entries"].push_back({{"podUid", uid}, {"container", name}, {"cpus", cpus}});
        }
      }
      cpu["podEntries"] = ordered_json::array();
      for (const auto& [uid, cpus] : r->cpu->pod_entries) {
        cpu["podEntries"].push_back({{"podUid", uid}, {"cpus", cpus}});
      }
    } else if (r->cpu_v1) {
      cpu["defaultCpuSet"] = r->cpu_v1->default_cpu_set;
      cpu["v1Entries"] = ordered_json::array();
      for (const auto& [id, cpus] : r->cpu_v1->entries) {
        cpu["v1Entries"].push_back({{"containerId", id}, {"cpus", cpus}});
      }
    }
    ordered_json mem = FileJson(r->memory_file);
    if (r->memory) {
      mem["machineState"] = ordered_json::array();
      for (const auto& [id, n] : r->memory->machine_state) {
        ordered_json node;
        node["numaNode"] = id;
        node["numberOfAssignments"] = n.number_of_assignments;
        node["cells"] = n.cells ? ordered_json(*n.cells) : ordered_json(nullptr);
        node["memory"] = ordered_json::array();
        for (const auto& [type, t] : n.memory_map) {
          node["memory"].push_back({{"type", type}, {"total", t.total},
                                    {"systemReserved", t.system_reserved},
                                    {"allocatable", t.allocatable}, {"reserved", t.reserved},
                                    {"free", t.free}});
        }
        mem["machineState"].push_back(node);
      }
      mem["entries"] = ordered_json::array();
      for (const auto& [uid, containers] : r->memory->entries) {
        for (const auto& [name, blocks] : containers) {
          mem["entries"].push_back(
              {{"podUid", uid}, {"container", name}, {"blocks", BlocksJson(blocks)}});
        }
      }
      mem["podEntries"] = ordered_json::array();
      for (const auto& [uid, blocks] : r->memory->pod_entries) {
        mem["podEntries"].push_back({{"podUid", uid}, {"blocks", BlocksJson(blocks)}});
      }
    }
    j["cpu"] = cpu;
    j["memory"] = mem;
    j["kubeletStarts"] = r->KubeletStarts();
    *ctx.out << j.dump(2) << "\n";
    return;
  }
  std::ostream& out = *ctx.out;
  PrintFiles(*r, Reader(l->env.config), out);
  out << "\nCPU MANAGER\n";
  if (r->cpu) {
    out << fmt::format("  default cpuset: {}\n",
                       r->cpu->default_cpu_set.empty() ? "\"\"" : r->cpu->default_cpu_set);
    if (!r->reserved_cpus.IsEmpty()) {
      out << fmt::format("  reserved (from the configuration): {}\n", r->reserved_cpus.String());
    }
    std::set<std::string> pods;
    for (const auto& [uid, _] : r->cpu->entries) pods.insert(uid);
    for (const auto& [uid, _] : r->cpu->pod_entries) pods.insert(uid);
    if (pods.empty()) out << "  no exclusive CPUs\n";
    else out << fmt::format("  {:<38} {:<24} {}\n", "POD UID", "CONTAINER", "CPUS");
    for (const auto& uid : pods) {
      if (auto it = r->cpu->pod_entries.find(uid); it != r->cpu->pod_entries.end()) {
        out << fmt::format("  {:<38} {:<24} {}\n", uid, "(pod)", it->second);
      }
      if (auto it = r->cpu->entries.find(uid); it != r->cpu->entries.end()) {
        for (const auto& [name, cpus] : it->second) {
          out << fmt::format("  {:<38} {:<24} {}\n", uid, name, cpus);
        }
      }
    }
  } else if (r->cpu_v1) {
    out << fmt::format("  V1 checkpoint, default cpuset: {}\n", r->cpu_v1->default_cpu_set);
    for (const auto& [id, cpus] : r->cpu_v1->entries) {
      out << fmt::format("  container {}: {}\n", id, cpus);
    }
  } else {
    out << "  (no readable state)\n";
  }
  out << "\nMEMORY MANAGER\n";
  if (r->memory) {
    if (r->memory->machine_state.empty()) out << "  empty machine state\n";
    else {
      out << fmt::format("  {:<5} {:<14} {:>10} {:>10} {:>12} {:>10} {:>10} {:<7} {}\n", "NUMA",
                         "TYPE", "TOTAL", "SYSRESV", "ALLOCATABLE", "RESERVED", "FREE", "CELLS",
                         "ASSIGNMENTS");
    }
    for (const auto& [id, n] : r->memory->machine_state) {
      for (const auto& [type, t] : n.memory_map) {
        out << fmt::format("  {:<5} {:<14} {:>10} {:>10} {:>12} {:>10} {:>10} {:<7} {}\n", id,
                           type, Size(t.total), Size(t.system_reserved), Size(t.allocatable),
                           Size(t.reserved), Size(t.free), Affinity(n.cells),
                           n.number_of_assignments);
      }
    }
    std::set<std::string> pods;
    for (const auto& [uid, _] : r->memory->entries) pods.insert(uid);
    for (const auto& [uid, _] : r->memory->pod_entries) pods.insert(uid);
    if (!pods.empty()) {
      out << fmt::format("\n  {:<38} {:<24} {:<14} {:>10} {}\n", "POD UID", "CONTAINER", "TYPE",
                         "SIZE", "NUMA");
    }
    auto print_blocks = [&](const std::string& uid, const std::string& name,
                            const std::vector<checkpoint::MemoryBlock>& blocks) {
      if (blocks.empty()) out << fmt::format("  {:<38} {:<24} (no blocks)\n", uid, name);
      for (const auto& b : blocks) {
        out << fmt::format("  {:<38} {:<24} {:<14} {:>10} {}\n", uid, name, b.type, Size(b.size),
                           Affinity(b.numa_affinity));
      }
    };
    for (const auto& uid : pods) {
      if (auto it = r->memory->pod_entries.find(uid); it != r->memory->pod_entries.end()) {
        print_blocks(uid, "(pod)", it->second);
      }
      if (auto it = r->memory->entries.find(uid); it != r->memory->entries.end()) {
        for (const auto& [name, blocks] : it->second) print_blocks(uid, name, blocks);
      }
    }
  } else {
    out << "  (no readable state)\n";
  }
  out << "\n" << Verdict(*r) << " (podtopo state check explains)\n";
}

// ---- repair --------------------------------------------------------------------------

// The files the plan rewrites, in the order ApplyRepair writes them.
std::vector<std::string> PlannedFiles(const state::CheckReport& r, const state::RepairPlan& plan) {
  std::vector<std::string> files;
  if (plan.record_bytes) files.push_back(r.record_file.path);
  if (plan.cpu_bytes) files.push_back(r.cpu_file.path);
  if (plan.memory_bytes) files.push_back(r.memory_file.path);
  return files;
}

void RunRepair(const StateOpts& o, Context& ctx) {
  auto l = Load(o, ctx);
  if (!l) return;
  const state::RunningPods* running = l->running ? &*l->running : nullptr;
  auto r = state::Check(o.kubelet_dir, l->env, running);
  if (!r.ok()) return ctx.Fail(r.status());
  auto plan = state::PlanRepair(*r, l->env, running);
  if (!plan.ok()) return ctx.Fail(plan.status());
  std::ostream& out = *ctx.out;
  const bool fixes_all = plan->unresolved.empty();
  if (o.output == "json") {
    ordered_json j;
    j["kubeletStartsNow"] = r->KubeletStarts();
    j["steps"] = plan->steps;
    j["unresolved"] = plan->unresolved;
    j["restartPods"] = plan->restart_pods;
    j["files"] = PlannedFiles(*r, *plan);
    j["applied"] = false;
    if (o.yes && plan->HasChanges()) {
      auto applied = state::ApplyRepair(*r, *plan, state::UtcTimestamp());
      if (!applied.ok()) return ctx.Fail(applied.status());
      j["applied"] = true;
      j["backups"] = applied->backups;
      auto after = state::Check(o.kubelet_dir, l->env, nullptr);
      if (after.ok()) j["kubeletStartsAfter"] = after->KubeletStarts();
      if (after.ok() && !after->KubeletStarts()) ctx.exit_code = kExitWouldNotStart;
    }
    *ctx.out << j.dump(2) << "\n";
    if (!fixes_all) ctx.exit_code = kExitWouldNotStart;
    return;
  }
  out << fmt::format("now: {}\n", Verdict(*r));
  if (!plan->HasChanges() && plan->unresolved.empty()) {
    out << "nothing to repair\n";
    return;
  }
  if (!plan->steps.empty()) {
    out << "\nplan:\n";
    for (const auto& s : plan->steps) out << "  " << s << "\n";
  }
  if (!plan->restart_pods.empty()) {
    out << "\npods whose exclusive CPUs or memory change (restart them after the kubelet is "
           "back):\n";
    for (const auto& p : plan->restart_pods) out << "  " << p << "\n";
  }
  if (!plan->unresolved.empty()) {
    out << "\ncannot repair:\n";
    for (const auto& s : plan->unresolved) out << "  " << s << "\n";
    ctx.exit_code = kExitWouldNotStart;
  }
  if (!plan->HasChanges()) return;
  if (!o.yes) {
    out << "\nnothing written (dry run); run again with --yes to write "
        << fmt::format("{}", fmt::join(PlannedFiles(*r, *plan), ", "))
        << " (stop the kubelet first; a backup of each file is kept)\n";
    return;
  }
  auto applied = state::ApplyRepair(*r, *plan, state::UtcTimestamp());
  if (!applied.ok()) return ctx.Fail(applied.status());
  out << "\n";
  for (size_t i = 0; i < applied->written.size(); ++i) {
    if (i < applied->backups.size()) out << "backup:  " << applied->backups[i] << "\n";
    out << "written: " << applied->written[i] << "\n";
  }
  auto after = state::Check(o.kubelet_dir, l->env, nullptr);
  if (!after.ok()) return ctx.Fail(after.status());
  out << "after the repair: " << Verdict(*after) << "\n";
  if (!after->KubeletStarts()) ctx.exit_code = kExitWouldNotStart;
}

std::string Or(const std::string& s) { return s.empty() ? "(empty)" : s; }

// ---- restart --------------------------------------------------------------------------

constexpr int kExitRestartHurts = 3;

std::string NumaList(const std::vector<int>& numa) {
  return numa.empty() ? "-" : fmt::format("{}", fmt::join(numa, ","));
}

// What the controllers see of a running pod the restarted kubelet rejects.
constexpr char kRejectedRunningPod[] =
    "the kubelet stops the pod's running containers; the pod ends Failed (its containers "
    "ContainerStatusUnknown), and a controller-owned pod is replaced by a new one, which is "
    "admitted afresh or rejected again (k/k #136592: replica storms)";

void RunRestart(const StateOpts& o, Context& ctx) {
  auto l = Load(o, ctx);
  if (!l) return;
  const config::KubeletConfig& cfg = l->env.config;
  const std::string& version = cfg.kubelet_version;
  std::vector<Pod> pods;
  const bool have_record =
      std::filesystem::exists(std::filesystem::path(o.kubelet_dir) / kPodRecordFile);
  if (o.pods.empty() && !have_record) {
    return ctx.Fail(fmt::format(
        "--kubelet-dir {}: no {} here (a kubelet's own directory has none): give the pods that "
        "run on the node with --pods (kubectl get pods -A -o json --field-selector "
        "spec.nodeName=NODE)",
        o.kubelet_dir, kPodRecordFile));
  }

  ordered_json j;
  j["kubeletVersion"] = version;
  std::ostringstream table;
  auto fail_start = [&](const std::string& error) {
    j["starts"] = false;
    j["error"] = error;
    j["pods"] = ordered_json::array();
    j["defaultCpuSetBefore"] = nullptr;
    j["defaultCpuSetAfter"] = nullptr;
    j["leakedCpus"] = nullptr;
    table << fmt::format("kubelet {} restarting with {}: it does NOT start\n  {}\n", version,
                         o.kubelet_dir, error);
    ctx.exit_code = kExitWouldNotStart;
  };
  // After a reboot (--node local or sysfs:): the memory the node has now.
  auto add_drift = [&](const state::CheckReport& r) {
    if (r.memory_drift.empty()) return;
    PrintDrift(r.memory_drift, "  ", table);
    table << fmt::format(
        "  safe: `podtopo state repair --kubelet-dir {} --node {}{} --yes` rebuilds the machine "
        "state from this node's memory and keeps every assignment (a backup is kept)\n",
        o.kubelet_dir, o.node, o.config.empty() ? "" : " --config " + o.config);
  };

  // Does it start: the checks of `state check`, then the managers' Start.
  auto check = state::Check(o.kubelet_dir, l->env, nullptr);
  if (!check.ok()) return ctx.Fail(check.status());
  // What this version reads of files another version wrote: the pods whose pod-level entries
  // a read through the inline legacy part drops (k/k #139102, #139626).
  j["checkpoints"] = ordered_json::array();
  std::map<std::string, std::vector<std::string>> dropped_by;  // pod uid -> upstream ids
  std::vector<std::string> read_notes;
  for (const auto& [f, id] : {std::pair{&check->cpu_file, "k/k#139102"},
                              std::pair{&check->memory_file, "k/k#139626"}}) {
    if (!f->exists) continue;
    j["checkpoints"].push_back({{"file", f->name}, {"format", f->version},
                                {"readAs", f->read_as},
                                {"podEntriesDropped", f->pod_entries_dropped}});
    if (f->read_as == 0 || f->read_as == f->version) continue;
    for (const std::string& uid : f->pod_entries_dropped) dropped_by[uid].push_back(id);
    read_notes.push_back(fmt::format(
        "{}: kubelet {} reads {} (V{}) through its inline V{} part: the pod-level entries of {} "
        "pod(s) are dropped",
        id, version, f->name, f->version, f->read_as, f->pod_entries_dropped.size()));
  }
  RestartReport report;
  if (!check->KubeletStarts()) {
    for (const state::Finding& f : check->findings) {
      if (f.severity != state::Severity::kFatal) continue;
      fail_start(fmt::format("{}: {}", f.file,
                             f.kubelet_message.empty() ? f.message : f.kubelet_message));
      break;
    }
    add_drift(*check);
  } else {
    if (!o.pods.empty() && !LoadAllPods(o.pods, cfg, /*strict=*/false, &pods, ctx)) return;
    Node::Options opts;
    opts.state_dir = o.kubelet_dir;
    opts.read_only = true;
    opts.restart = &report;
    if (!o.pods.empty()) opts.running_pods = &pods;
    auto node = Node::Create(l->env.topology, cfg, opts);
    if (!node.ok()) {
      if (node.status().code() != absl::StatusCode::kFailedPrecondition) {
        return ctx.Fail(node.status());
      }
      fail_start(std::string(node.status().message()));
    }
  }

  if (ctx.exit_code != kExitWouldNotStart) {
    j["starts"] = true;
    j["error"] = nullptr;
    bool hurts = !report.leaked_cpus.IsEmpty() || !report.leaked_memory.empty();
    j["pods"] = ordered_json::array();
    table << fmt::format("kubelet {} restarting with {}: it starts\n\n", version, o.kubelet_dir);
    std::vector<std::vector<std::string>> rows = {
        {"POD", "OUTCOME", "CPUS BEFORE", "CPUS AFTER", "MEMORY NUMA", "UPSTREAM"}};
    std::vector<std::string> notes;
    std::set<std::string> upstream_seen;
    for (RestartPod p : report.pods) {
      if (auto it = dropped_by.find(p.uid); it != dropped_by.end()) {
        p.upstream.insert(p.upstream.begin(), it->second.begin(), it->second.end());
      }
      hurts |= p.outcome != "kept";
      ordered_json pj;
      pj["namespace"] = p.namespace_name;
      pj["name"] = p.name;
      pj["outcome"] = p.outcome;
      pj["cpusBefore"] = p.cpus_before.String();
      pj["cpusAfter"] = p.outcome == "rejected" ? ordered_json(nullptr)
                                                : ordered_json(p.cpus_after.String());
      pj["memoryNumaBefore"] = p.memory_numa_before;
      pj["memoryNumaAfter"] = p.outcome == "rejected" ? ordered_json(nullptr)
                                                      : ordered_json(p.memory_numa_after);
      pj["reason"] = p.reason.empty() ? ordered_json(nullptr) : ordered_json(p.reason);
      pj["message"] = p.message.empty() ? ordered_json(nullptr) : ordered_json(p.message);
      pj["upstream"] = p.upstream;
      pj["then"] = p.outcome == "rejected" ? ordered_json(kRejectedRunningPod)
                                           : ordered_json(nullptr);
      j["pods"].push_back(std::move(pj));
      const bool rejected = p.outcome == "rejected";
      rows.push_back({p.namespace_name + "/" + p.name,
                      rejected ? "REJECTED" : p.outcome == "moved" ? "MOVED" : "kept",
                      p.cpus_before.IsEmpty() ? "-" : p.cpus_before.String(),
                      rejected ? "-" : p.cpus_after.IsEmpty() ? "-" : p.cpus_after.String(),
                      rejected ? NumaList(p.memory_numa_before)
                               : NumaList(p.memory_numa_before) + " -> " +
                                     NumaList(p.memory_numa_after),
                      fmt::format("{}", fmt::join(p.upstream, " "))});
      if (rejected) {
        notes.push_back(fmt::format("{}/{}: {}: {}\n    then: {}", p.namespace_name, p.name,
                                    p.reason, p.message, kRejectedRunningPod));
      }
      upstream_seen.insert(p.upstream.begin(), p.upstream.end());
    }
    j["defaultCpuSetBefore"] = report.default_before.String();
    j["defaultCpuSetAfter"] = report.default_after.String();
    j["leakedCpus"] = report.leaked_cpus.String();
    j["leakedMemory"] = ordered_json::object();
    for (const auto& [type, bytes] : report.leaked_memory) j["leakedMemory"][type] = bytes;
    std::vector<size_t> width(rows[0].size(), 0);
    for (const auto& r : rows) {
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    }
    for (const auto& r : rows) {
      std::string line;
      for (size_t i = 0; i < r.size(); ++i) {
        line += r[i];
        if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      table << line << "\n";
    }
    if (report.pods.empty()) table << "(no pods run on the node)\n";
    table << fmt::format("\ndefault cpuset: {} -> {}\n", Or(report.default_before.String()),
                         Or(report.default_after.String()));
    if (!report.leaked_cpus.IsEmpty()) {
      table << fmt::format("leaked CPUs: {} (in no pod's entry and not in the default set: no "
                           "pod can use them until the node is drained)\n",
                           report.leaked_cpus.String());
    }
    for (const auto& [type, bytes] : report.leaked_memory) {
      table << fmt::format("leaked {}: {} (reserved in the machine state a second time)\n", type,
                           HumanBytes(bytes));
    }
    for (const auto& n : notes) table << "\n" << n << "\n";
    for (const auto& n : read_notes) table << "\n" << n << "\n";
    for (const std::string& id : upstream_seen) {
      if (const kubelet::VersionedBehavior* b = kubelet::FindVersionedBehaviorByTag(id)) {
        table << fmt::format("\n{}: {}\n  {}\n", id, b->summary,
                             kubelet::DescribeVersioned(b->field));
      }
    }
    table << fmt::format("\n{}\n", hurts ? "the restart moves, rejects or leaks: see above"
                                         : "every pod keeps its CPUs and memory");
    if (hurts) ctx.exit_code = kExitRestartHurts;
  }
  j["memoryDrift"] = DriftJson(check->memory_drift);
  if (o.output == "json") {
    *ctx.out << j.dump(2) << "\n";
  } else {
    *ctx.out << table.str();
  }
}

}  // namespace

void AddStateCommands(CLI::App& app, Context& ctx) {
  CLI::App* st = app.add_subcommand(
      "state",
      "Check, show and repair the kubelet's cpu_manager_state and memory_manager_state "
      "(exit 0 the kubelet would start, 2 it would not, 1 bad input)");
  st->require_subcommand(1);
  auto check = std::make_shared<StateOpts>();
  CLI::App* cc = st->add_subcommand(
      "check", "Validate the checkpoints as the kubelet does at start (exit 2: it would not "
               "start; 4 with --strict: warnings)");
  AddFlags(cc, *check);
  cc->add_flag("--strict", check->strict, "exit 4 when there are warnings");
  cc->callback([check, &ctx] { RunCheck(*check, ctx); });

  auto show = std::make_shared<StateOpts>();
  CLI::App* sc = st->add_subcommand("show", "Print the checkpoints: pods, containers, CPUs, "
                                            "memory per NUMA node");
  AddFlags(sc, *show);
  sc->callback([show, &ctx] { RunShow(*show, ctx); });

  auto repair = std::make_shared<StateOpts>();
  CLI::App* rc = st->add_subcommand(
      "repair", "Plan a corrected state; with --yes write it (a byte-identical backup of each "
                "original is kept)");
  AddFlags(rc, *repair);
  rc->add_flag("--yes", repair->yes, "write the corrected checkpoints");
  rc->callback([repair, &ctx] { RunRepair(*repair, ctx); });

  auto restart = std::make_shared<StateOpts>();
  CLI::App* rs = st->add_subcommand(
      "restart",
      "Predict what a kubelet of --kubelet-version does when it restarts with these checkpoints "
      "and pods: whether it starts, each pod kept, moved or rejected, and what leaks. Writes "
      "nothing (exit 0 all kept, 3 moved/rejected/leaked, 2 it does not start, 1 bad input)");
  AddFlags(rs, *restart, /*running_pods=*/false);
  rs->add_option("--pods", restart->pods,
                 "the pods that run on the node: manifests or kubectl get pods -o json "
                 "(default: podtopo's record in --kubelet-dir)");
  rs->callback([restart, &ctx] { RunRestart(*restart, ctx); });
}

}  // namespace podtopo::cli
