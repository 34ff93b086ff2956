#include "lint/lint.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kubelet/admission_error.h"
#include "admission/node.h"
#include "admission/pod_requests.h"
#include "api/pod_gates.h"
#include "config/feature_gates.h"
#include "cpumanager/policy_options.h"
#include "cpumanager/static_policy.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "util/format.h"

namespace podtopo::lint {
namespace {

using config::KubeletConfig;

// ---------------------------------------------------------------------------------------
// Small helpers.

Severity FromConfig(config::Finding::Severity s) {
  switch (s) {
    case config::Finding::Severity::kError:
      return Severity::kError;
    case config::Finding::Severity::kWarning:
      return Severity::kWarning;
    case config::Finding::Severity::kInfo:
      return Severity::kInfo;
  }
  return Severity::kError;
}

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool Contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

std::optional<Quantity> Get(const ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  if (it == list.end()) return std::nullopt;
  return it->second;
}

// requests/limits of one resource: "2/2", "500m/1", "-/-".
std::string ReqLim(const ResourceRequirements& r, const std::string& name) {
  auto req = Get(r.requests, name);
  auto lim = Get(r.limits, name);
  return fmt::format("{}/{}", req ? req->String() : "-", lim ? lim->String() : "-");
}

std::string ResourcesText(const ResourceRequirements& r) {
  if (r.requests.empty() && r.limits.empty()) return "no resources";
  return fmt::format("requests/limits cpu {}, memory {}", ReqLim(r, kResourceCpu),
                     ReqLim(r, kResourceMemory));
}

bool IsIntegralCpu(const Quantity& q) { return q.Value() * 1000 == q.MilliValue(); }

std::string Plural(int n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string MemoryText(uint64_t bytes) {
  return Quantity::FromInt(static_cast<int64_t>(bytes), Quantity::Format::kBinarySI).String();
}

std::string ContainerField(const Pod& pod, const Container& c) {
  for (size_t i = 0; i < pod.init_containers.size(); ++i) {
    if (&pod.init_containers[i] == &c) return fmt::format("spec.initContainers[{}]", i);
  }
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    if (&pod.containers[i] == &c) return fmt::format("spec.containers[{}]", i);
  }
  return "spec";
}

// The Topology Manager's effective scope: policy none runs the "none" scope.
std::string EffectiveScope(const KubeletConfig& cfg) {
  if (cfg.topology_manager_policy == "none") return "none";
  return cfg.topology_manager_scope;
}

// A static policy to ask GuaranteedCpus / PodGuaranteedCpus / ValidatePodScopeResources:
// those read only the gates, never the topology, the options or the reservation.
std::unique_ptr<cpumanager::StaticPolicy> SizingPolicy(const KubeletConfig& cfg) {
  cpumanager::StaticPolicyConfig pc;
  pc.gates.pod_level_resources = cfg.FeatureEnabled(config::kPodLevelResources);
  pc.gates.pod_level_resource_managers = cfg.FeatureEnabled(config::kPodLevelResourceManagers);
  pc.gates.fix_kubelet_qos_class = PodGatesFromConfig(cfg).fix_kubelet_qos_class;
  auto created = cpumanager::StaticPolicy::Create(CpuTopology(), pc, nullptr);
  if (!created.ok()) return nullptr;  // cannot happen without options and reservations
  return std::move(*created);
}

// ---------------------------------------------------------------------------------------
// The lint itself.

class Linter {
 public:
  Linter(const config::ParsedKubeletConfig& parsed, const NodeTopology& node)
      : parsed_(parsed), cfg_(parsed.config), node_(node) {
    report_.config_file = cfg_.source;
    report_.node = node.source;
    plr_ = cfg_.FeatureEnabled(config::kPodLevelResources);
    plrm_ = cfg_.FeatureEnabled(config::kPodLevelResourceManagers);
    cpu_static_ = cfg_.cpu_manager_policy == "static";
    mem_static_ = cfg_.memory_manager_policy == "Static";
    scope_ = EffectiveScope(cfg_);
    single_numa_ = cfg_.topology_manager_policy == "single-numa-node";
    capacity_ = NodeCapacity(node_);
    sizing_ = SizingPolicy(cfg_);
    auto options = cpumanager::NewStaticPolicyOptions(cfg_.cpu_manager_policy_options,
                                                      cpumanager::OptionGates::AllEnabled());
    full_pcpus_only_ = options.ok() && options->full_physical_cpus_only;
    ComputeReservedCpus();
  }

  LintReport Run(const std::vector<Pod>& pods) {
    DecodeFindings();
    ValidateFindings();
    ChecklistFindings();
    for (const Pod& pod : pods) LintPod(pod);
    return std::move(report_);
  }

 private:
  // ---- findings ----

  Finding& AddConfig(Severity severity, std::string code, const std::string& field,
                     std::string message, std::string hint) {
    Finding f;
    f.severity = severity;
    f.code = std::move(code);
    f.file = cfg_.source;
    f.field = field;
    // The most specific remembered position of the field or a parent.
    std::string key = field;
    while (!key.empty()) {
      if (auto it = cfg_.positions.find(key); it != cfg_.positions.end()) {
        f.line = it->second.first;
        f.column = it->second.second;
        break;
      }
      const size_t cut = key.find_last_of(".[");
      if (cut == std::string::npos || cut == 0) break;
      key.resize(cut);
    }
    f.message = std::move(message);
    f.hint = std::move(hint);
    report_.findings.push_back(std::move(f));
    return report_.findings.back();
  }

  void AddPod(Severity severity, std::string code, const Pod& pod, const Container* container,
              std::string field, std::string message, std::string hint) {
    Finding f;
    f.severity = severity;
    f.code = std::move(code);
    f.file = pod.source;
    f.field = std::move(field);
    f.pod = pod.Key();
    if (container != nullptr) f.container = container->name;
    f.message = std::move(message);
    f.hint = std::move(hint);
    report_.findings.push_back(std::move(f));
  }

  Finding FromConfigFinding(const config::Finding& cf, std::string code, std::string hint) {
    Finding f;
    f.severity = FromConfig(cf.severity);
    f.code = std::move(code);
    f.file = cf.source.empty() ? cfg_.source : cf.source;
    f.field = cf.field;
    f.line = cf.line;
    f.column = cf.column;
    f.message = cf.message;
    f.hint = std::move(hint);
    return f;
  }

  // ---- the configuration ----

  void DecodeFindings() {
    for (const config::Finding& cf : parsed_.findings) {
      std::string code = "config-decode";
      std::string hint;
      if (Contains(cf.message, "unknown field")) {
        code = "unknown-field";
        const size_t at = cf.message.find("(did you mean ");
        if (at != std::string::npos) {
          const size_t start = at + 14;
          const size_t end = cf.message.find('?', start);
          const std::string suggestion = cf.message.substr(start, end - start);
          hint = fmt::format(
              "rename it to {}; the kubelet ignores unknown fields, so the setting has no "
              "effect as written",
              suggestion);
          if (const size_t w = cf.message.find("; write `"); w != std::string::npos) {
            hint = fmt::format(
                "replace it with {}; the kubelet ignores unknown fields, so the "
                "setting has no effect as written",
                cf.message.substr(w + 8));
          }
        } else {
          hint =
              "remove it, or check its spelling against KubeletConfiguration "
              "(kubelet.config.k8s.io/v1beta1)";
        }
      } else if (Contains(cf.message, "duplicate field")) {
        code = "duplicate-field";
        hint = "keep one of the entries (the kubelet uses the last one)";
      } else if (Contains(cf.message, "is missing: the kubelet refuses")) {
        code = "missing-type-meta";
        hint = fmt::format("start the file with apiVersion: {} and kind: {}",
                           config::kKubeletConfigApiVersion, config::kKubeletConfigKind);
      } else if (cf.severity == config::Finding::Severity::kError) {
        hint = "fix the field's value: the kubelet refuses to start with this file";
      }
      report_.findings.push_back(FromConfigFinding(cf, std::move(code), std::move(hint)));
    }
  }

  // "set featureGates.PodLevelResources: true, or turn off together with it: featureGates:
  // {InPlacePodLevelResourcesVerticalScaling: false, ...}": every enabled gate that depends
  // on a disabled gate of this finding's gate, so that one edit loads.
  std::string GateDependencyHint(const std::string& message) const {
    const std::string gate = message.substr(0, message.find(' '));
    const auto problems = cfg_.GateDependencyProblems();
    std::vector<std::string> disabled;
    for (const auto& p : problems) {
      if (p.gate == gate) disabled = p.disabled;
    }
    std::vector<std::string> on;
    std::string enable;
    for (const std::string& d : disabled) {
      enable += fmt::format("{}featureGates.{}: true", enable.empty() ? "" : " and ", d);
      for (const auto& p : problems) {
        if (std::find(p.disabled.begin(), p.disabled.end(), d) != p.disabled.end() &&
            std::find(on.begin(), on.end(), p.gate) == on.end()) {
          on.push_back(p.gate);
        }
      }
    }
    std::vector<std::string> off;
    for (const std::string& g : on) off.push_back(g + ": false");
    return fmt::format(
        "set {}, or turn these gates off together with {}: featureGates: {{{}}} (the v1.37 "
        "kubelet panics at start otherwise)",
        enable, disabled.size() == 1 ? "it" : "them", fmt::join(off, ", "));
  }

  void ValidateFindings() {
    const ResourceList reservation = cfg_.NodeAllocatableReservation(capacity_);
    bool validate_errors = false;
    for (const config::Finding& cf : cfg_.Validate(&capacity_)) {
      const std::string& field = cf.field;
      std::string code = "kubelet-config-invalid";
      std::string hint = "fix the field: the kubelet refuses to start with this configuration";
      if (StartsWith(field, "featureGates")) {
        if (Contains(cf.message, "but depends on features that are disabled")) {
          code = "gate-dependency";
          hint = GateDependencyHint(cf.message);
        } else {
          code = "feature-gate";
          hint = cf.severity == config::Finding::Severity::kError
                     ? "remove the gate or correct its name (see the v1.37 feature gate list)"
                     : "remove the setting: the gate is always at its default";
        }
      } else if (StartsWith(field, "cpuManagerPolicyOptions") ||
                 (field == "cpuManagerPolicy" && Contains(cf.message, "option"))) {
        code = "cpu-policy-options";
        hint =
            "remove or correct the option (enable CPUManagerPolicyAlphaOptions / "
            "CPUManagerPolicyBetaOptions for a non-stable option)";
      } else if (field == "cpuManagerPolicy" && Contains(cf.message, "reserv")) {
        code = "cpu-reservation";
        hint =
            "reserve CPUs for the system: reservedSystemCPUs: \"0\" (or systemReserved.cpu / "
            "kubeReserved.cpu, e.g. \"1\")";
      } else if (field == "cpuManagerPolicy") {
        code = "cpu-policy";
        hint = "use cpuManagerPolicy: static (or none)";
      } else if (StartsWith(field, "reservedMemory") ||
                 (field == "memoryManagerPolicy" && Contains(cf.message, "reserved"))) {
        code = "memory-reservation";
        hint = MemoryReservationHint(reservation);
      } else if (field == "memoryManagerPolicy") {
        code = "memory-policy";
        hint = "use memoryManagerPolicy: Static (or None)";
      } else if (StartsWith(field, "topologyManagerPolicyOptions")) {
        code = "topology-policy-options";
        hint = cf.severity == config::Finding::Severity::kInfo
                   ? "remove the options or choose a topologyManagerPolicy other than none"
                   : "remove or correct the option (enable TopologyManagerPolicyAlphaOptions / "
                     "TopologyManagerPolicyBetaOptions for a non-stable option)";
      } else if (StartsWith(field, "topologyManager")) {
        code = "topology-policy";
        hint =
            "use topologyManagerPolicy single-numa-node, restricted or best-effort and "
            "topologyManagerScope pod or container";
      }
      report_.findings.push_back(FromConfigFinding(cf, std::move(code), std::move(hint)));
      validate_errors |= cf.severity == config::Finding::Severity::kError;
    }
    if (validate_errors) return;
    // What the managers check against the machine at start (NUMA node count, reserved CPU
    // ids, sockets versus NUMA nodes): build the node's managers as the kubelet does.
    auto created = Node::Create(node_, cfg_, {});
    if (!created.ok()) {
      // Node::Create names the field first ("topologyManagerPolicy: ...").
      std::string message(created.status().message());
      std::string field;
      if (const size_t colon = message.find(": "); colon != std::string::npos) {
        const std::string first = message.substr(0, colon);
        for (std::string_view known : config::KnownKubeletConfigFields()) {
          if (known == first) field = first;
        }
        if (!field.empty()) message = message.substr(colon + 2);
      }
      // Too many NUMA nodes: Node::Create's message ends with the fix; it is the hint here.
      std::string hint = NumaNodeLimitFix(node_, cfg_);
      if (!hint.empty() && message.size() > hint.size() + 2 &&
          message.compare(message.size() - hint.size() - 2, std::string::npos, "; " + hint) == 0) {
        message.resize(message.size() - hint.size() - 2);
      }
      if (hint.empty()) {
        hint =
            "adjust the configuration to this node (e.g. reservedSystemCPUs within the node's "
            "CPUs, align-by-socket only on a node with no more sockets than NUMA nodes)";
      }
      AddConfig(Severity::kError, "node-startup", field,
                fmt::format("the kubelet would not start on {}: {}", node_.source, message),
                std::move(hint));
    }
  }

  std::string MemoryReservationHint(const ResourceList& reservation) const {
    std::string memory = "0";
    if (auto it = reservation.find(kResourceMemory); it != reservation.end()) {
      memory = it->second.String();
    }
    std::string hint = fmt::format(
        "make reservedMemory's memory entries sum to {} (systemReserved + kubeReserved + "
        "evictionHard memory.available on this node), e.g. reservedMemory: [{{numaNode: 0, "
        "limits: {{memory: {}}}}}]",
        memory, memory);
    for (const auto& [type, q] : reservation) {
      if (IsHugePageResourceName(type)) {
        hint += fmt::format("; and {} entries summing to {}", type, q.String());
      }
    }
    if (memory == "0") {
      hint +=
          "; reserve some memory first (systemReserved.memory, kubeReserved.memory or "
          "evictionHard memory.available)";
    }
    return hint;
  }

  void ChecklistFindings() {
    // Gates.
    const bool plr_written = cfg_.feature_gates.contains(config::kPodLevelResources);
    if (!plrm_) {
      AddConfig(Severity::kInfo, "gate-off", "featureGates.PodLevelResourceManagers",
                "PodLevelResourceManagers is off (the v1.37 default): pods with pod-level "
                "resources are admitted without NUMA alignment, pod CPU bubbles or exclusive "
                "CPUs",
                "set featureGates: {PodLevelResources: true, PodLevelResourceManagers: true}");
    } else if (!plr_written && plr_) {
      AddConfig(Severity::kInfo, "gate-implicit", "featureGates",
                "PodLevelResourceManagers relies on PodLevelResources being on by default "
                "(true in v1.37); the API server and scheduler need it too",
                "write featureGates.PodLevelResources: true explicitly");
    }

    // CPU Manager.
    if (cfg_.cpu_manager_policy == "none") {
      AddConfig(Severity::kWarning, "cpu-policy-none", "cpuManagerPolicy",
                "cpuManagerPolicy is none: no container gets exclusive CPUs and no pod gets a "
                "CPU bubble; every container runs on all CPUs",
                "set cpuManagerPolicy: static with a CPU reservation (reservedSystemCPUs or "
                "systemReserved.cpu)");
    }

    // Memory Manager.
    if (cfg_.memory_manager_policy == "None") {
      std::string why;
      const config::Finding* misspelt = nullptr;
      for (const config::Finding& cf : parsed_.findings) {
        if (Contains(cf.message, "did you mean memoryManagerPolicy")) {
          why = fmt::format(" (`{}` is not a KubeletConfiguration field, so it was ignored)",
                            cf.field);
          misspelt = &cf;
        }
      }
      Finding& f =
          AddConfig(Severity::kWarning, "memory-policy-none", "memoryManagerPolicy",
                    fmt::format("memoryManagerPolicy is None{}: pod and container memory is not "
                                "pinned to the NUMA node of their CPUs",
                                why),
                    "set memoryManagerPolicy: Static with reservedMemory equal to "
                    "systemReserved + kubeReserved + evictionHard memory.available");
      if (f.line == 0 && misspelt != nullptr) {
        f.line = misspelt->line;
        f.column = misspelt->column;
      }
    }

    // Topology Manager.
    if (cfg_.topology_manager_policy == "none") {
      AddConfig(Severity::kWarning, "topology-policy-none", "topologyManagerPolicy",
                "topologyManagerPolicy is none: resources are not NUMA-aligned and pod scope "
                "(the pod bubble) is never used",
                "set topologyManagerPolicy: single-numa-node (or restricted / best-effort) and "
                "topologyManagerScope: pod");
    } else if (plrm_ && cfg_.topology_manager_scope == "container") {
      AddConfig(Severity::kInfo, "topology-scope-container", "topologyManagerScope",
                "topologyManagerScope is container: pod-level budgets are enforced by the pod "
                "cgroup but not used for allocation; Guaranteed containers get exclusive CPUs "
                "from the node pool and the others run in the node shared pool",
                "set topologyManagerScope: pod for one NUMA-aligned bubble per pod");
    }

    // Options that cannot act under single-numa-node (only single-NUMA hints are admitted).
    if (single_numa_) {
      auto set_true = [](const std::map<std::string, std::string>& m, const char* name) {
        auto it = m.find(name);
        return it != m.end() && (it->second == "true" || it->second == "1" || it->second == "t" ||
                                 it->second == "T" || it->second == "TRUE" || it->second == "True");
      };
      if (set_true(cfg_.topology_manager_policy_options, "prefer-closest-numa-nodes")) {
        AddConfig(Severity::kInfo, "option-no-effect",
                  "topologyManagerPolicyOptions.prefer-closest-numa-nodes",
                  "prefer-closest-numa-nodes chooses among hints that span several NUMA nodes; "
                  "single-numa-node admits only single-NUMA hints, so the option never acts",
                  "drop the option, or use topologyManagerPolicy restricted / best-effort");
      }
    }
  }

  // ---- the node ----

  void ComputeReservedCpus() {
    absl::StatusOr<CpuSet> explicit_set = cfg_.ReservedSystemCpuSet();
    if (explicit_set.ok() && !explicit_set->IsEmpty()) {
      reserved_cpus_ = *explicit_set;
      return;
    }
    if (!cpu_static_) return;
    cpumanager::StaticPolicyConfig pc;
    pc.num_reserved_cpus = cfg_.NumReservedCpus();
    auto policy = cpumanager::StaticPolicy::Create(node_.cpus, pc, nullptr);
    if (policy.ok()) reserved_cpus_ = (*policy)->reserved_cpus();
  }

  // NUMA id -> allocatable CPUs (CPUs minus reserved).
  std::map<int, int> NumaCpus() const {
    std::map<int, int> out;
    for (int id : node_.cpus.NumaNodes()) {
      out[id] = node_.cpus.CpusInNuma(id).Difference(reserved_cpus_).Size();
    }
    return out;
  }

  // NUMA id -> allocatable memory (memory minus reservedMemory of that node).
  std::map<int, uint64_t> NumaMemory() const {
    std::map<int, uint64_t> out;
    for (const NumaNode& n : node_.numa_nodes) {
      uint64_t reserved = 0;
      for (const config::MemoryReservation& r : cfg_.reserved_memory) {
        if (r.numa_node != n.id) continue;
        if (auto q = Get(r.limits, kResourceMemory); q && q->Sign() > 0) {
          reserved += static_cast<uint64_t>(q->Value());
        }
      }
      out[n.id] = n.memory > reserved ? n.memory - reserved : 0;
    }
    return out;
  }

  // ---- pods ----

  void LintPod(const Pod& pod) {
    const size_t first_finding = report_.findings.size();
    PodRoles roles = ClassifyPod(cfg_, pod);
    const bool pod_level = pod.HasPodLevelResources();
    const bool pod_path = plrm_ && plr_ && pod_level;  // the pod-level resource managers act
    const bool bubble_path = pod_path && scope_ == "pod" && cpu_static_;
    const bool managed = cpu_static_ || mem_static_;
    std::map<std::string, const ContainerRole*> role_of;
    for (const ContainerRole& r : roles.containers) role_of[r.name] = &r;

    // Gate off while the pod uses pod-level resources.
    if (pod_level && !pod_path && managed) {
      const char* gate = !plrm_ ? config::kPodLevelResourceManagers : config::kPodLevelResources;
      AddPod(
          Severity::kWarning, "gate-off-pod-level", pod, nullptr, "spec.resources",
          fmt::format("the pod sets spec.resources ({}) but the {} feature gate is off: the "
                      "kubelet admits it without NUMA alignment, bubble or exclusive CPUs; "
                      "all {} run in the node shared pool",
                      ResourcesText(*pod.resources), gate,
                      Plural(static_cast<int>(roles.containers.size()), "container", "containers")),
          fmt::format("enable featureGates.{}: true (and PodLevelResources) on this node",
                      config::kPodLevelResourceManagers));
    }

    // Not Guaranteed at pod level.
    if (pod_path && managed && roles.qos != QosClass::kGuaranteed) {
      AddPod(Severity::kWarning, "pod-not-guaranteed", pod, nullptr, "spec.resources",
             fmt::format("the pod is {} (spec.resources {}): the resource managers give it no "
                         "bubble, no exclusive CPUs and no NUMA-pinned memory",
                         QosClassName(roles.qos), ResourcesText(*pod.resources)),
             "set spec.resources requests equal to limits for both cpu and memory");
    }

    // Non-integral pod budget.
    if (bubble_path && roles.qos == QosClass::kGuaranteed) {
      if (auto cpu = Get(pod.resources->requests, kResourceCpu); cpu && !IsIntegralCpu(*cpu)) {
        const int64_t down = cpu->MilliValue() / 1000;
        AddPod(Severity::kWarning, "non-integral-budget", pod, nullptr,
               "spec.resources.requests.cpu",
               fmt::format("the pod's cpu budget {} is not a whole number of CPUs: the CPU "
                           "Manager allocates no bubble and every container runs in the node "
                           "shared pool",
                           cpu->String()),
               down > 0 ? fmt::format("use a whole number of CPUs in spec.resources (cpu: \"{}\" "
                                      "or \"{}\")",
                                      down, down + 1)
                        : "use a whole number of CPUs in spec.resources (cpu: \"1\")");
      }
    }

    // Containers: non-integral exclusive candidates and sidecars holding exclusive cores.
    if (cpu_static_ && roles.qos == QosClass::kGuaranteed) {
      for (const Container* c : pod.InitAndAppContainers()) {
        const ContainerRole* role = role_of[c->name];
        auto cpu = Get(c->resources.requests, kResourceCpu);
        const bool candidate = pod_level && plrm_ ? IsContainerEquivalentQosGuaranteed(*c)
                                                  : cpu.has_value() && cpu->Sign() > 0;
        if (candidate && cpu && !IsIntegralCpu(*cpu) && role != nullptr &&
            role->exclusive_cpus == 0 && (!pod_level || pod_path)) {
          AddPod(Severity::kInfo, "non-integral-container-cpu", pod, c,
                 ContainerField(pod, *c) + ".resources.requests.cpu",
                 fmt::format("container {} asks for cpu {}, not a whole number of CPUs: it runs "
                             "in the {} instead of on exclusive CPUs",
                             c->name, cpu->String(),
                             role->role == "pod_shared" ? "pod shared pool" : "node shared pool"),
                 "use a whole number of CPUs (requests == limits) if it needs exclusive cores");
        }
        const bool sidecar = c->IsRestartableInit() ||
                             (c->kind == ContainerKind::kApp && Contains(c->name, "sidecar"));
        if (sidecar && role != nullptr && role->exclusive_cpus > 0) {
          AddPod(Severity::kWarning, "sidecar-exclusive", pod, c,
                 ContainerField(pod, *c) + ".resources",
                 fmt::format("sidecar {} ({}{}) holds {} {} for the pod's whole life", c->name,
                             c->IsRestartableInit() ? "restartable init container; " : "",
                             ResourcesText(c->resources),
                             Plural(role->exclusive_cpus, "exclusive CPU", "exclusive CPUs"),
                             role->role == "pod_exclusive"
                                 ? fmt::format("of the pod's {}-CPU bubble", roles.bubble_cpus)
                                 : "from the node pool"),
                 "drop the sidecar's cpu/memory requests and limits (or make requests lower "
                 "than limits) so that it shares the pod pool, and keep exclusive cores for the "
                 "latency-critical container");
        }
      }
    }

    // The pod bubble: empty shared pool, all shared, idle remainder, SMT alignment.
    if (bubble_path && roles.bubble_cpus > 0 && sizing_ != nullptr) {
      LintBubble(pod, roles);
    }

    // Budgets larger than one NUMA node.
    if (single_numa_) LintNumaFit(pod, roles, pod_path);

    // full-pcpus-only on the container path.
    if (cpu_static_ && full_pcpus_only_ && !bubble_path) {
      const int per_core = node_.cpus.CpusPerCore();
      std::string reason;  // the admission's, asked once for the pod
      for (const Container* c : pod.InitAndAppContainers()) {
        const ContainerRole* role = role_of[c->name];
        if (role == nullptr || role->exclusive_cpus == 0 || per_core <= 0) continue;
        if (role->exclusive_cpus % per_core != 0) {
          if (reason.empty()) reason = RejectionReason(pod, kReasonSmtAlignment);
          AddPod(Severity::kError, "smt-misaligned", pod, c,
                 ContainerField(pod, *c) + ".resources.requests.cpu",
                 fmt::format("{}: SMT Alignment Error: requested {} cpus not multiple cpus per "
                             "core = {} (full-pcpus-only; container {}): the kubelet rejects "
                             "the pod",
                             reason, role->exclusive_cpus, per_core, c->name),
                 fmt::format("request a multiple of {} CPUs", per_core));
        }
      }
    }

    // Every other rejection (OutOfcpu, OutOfmemory, OutOfhugepages-*, a budget no NUMA
    // combination holds, ...) when no check above found an error in this pod: what the
    // admission says on an empty node of this shape, reason and message as admit gives them.
    const bool has_error =
        std::any_of(report_.findings.begin() + static_cast<std::ptrdiff_t>(first_finding),
                    report_.findings.end(),
                    [](const Finding& f) { return f.severity == Severity::kError; });
    if (!has_error) {
      if (std::optional<PodAllocation> rejection = RejectionOnEmptyNode(pod)) {
        AddPod(Severity::kError, "pod-rejected", pod, nullptr, "spec",
               fmt::format("{}: {} (on an empty node of this shape)", rejection->reason,
                           rejection->message),
               "`podtopo explain` shows each resource's hints and what would admit the pod");
      }
    }

    report_.pods.push_back(std::move(roles));
  }

  // How the admission (Node::Admit, on an empty node of this shape under this configuration)
  // rejects `pod`; nullopt when it admits it or the node cannot be built (node-startup says
  // why).
  std::optional<PodAllocation> RejectionOnEmptyNode(const Pod& pod) const {
    auto node = Node::Create(node_, cfg_, {});
    if (!node.ok()) return std::nullopt;
    (*node)->set_tracing(false);
    auto r = (*node)->Admit(pod);
    if (!r.ok() || r->admitted) return std::nullopt;
    return std::move(*r);
  }

  // The reason the admission gives for rejecting `pod` on an empty node (admit, explain and
  // compare say the same), or `fallback` when the admission cannot tell.
  std::string RejectionReason(const Pod& pod, std::string_view fallback) const {
    const std::optional<PodAllocation> rejection = RejectionOnEmptyNode(pod);
    return rejection.has_value() ? rejection->reason : std::string(fallback);
  }

  void LintBubble(const Pod& pod, const PodRoles& roles) {
    const int total = roles.bubble_cpus;
    int long_running_exclusive = 0;
    std::vector<std::string> exclusive, shared;
    for (const ContainerRole& r : roles.containers) {
      if (r.kind == ContainerKind::kInit) continue;
      if (r.exclusive_cpus > 0) {
        long_running_exclusive += r.exclusive_cpus;
        exclusive.push_back(fmt::format("{} ({})", r.name, r.exclusive_cpus));
      } else {
        shared.push_back(r.name);
      }
    }
    absl::Status valid = sizing_->ValidatePodScopeResources(pod);
    if (!valid.ok()) {
      // The reason is the admission's (admit, explain and compare say the same): under
      // single-numa-node and restricted the Topology Manager's merge rejects the pod first
      // (the CPU Manager offers no placement), under best-effort the CPU Manager's check.
      const std::string reason = RejectionReason(pod, kReasonEmptyPodSharedPool);
      std::string amounts;
      if (!shared.empty()) {
        amounts = fmt::format(
            "; exclusive long-running containers take {} of the pod's {} CPUs ({}) and {} "
            "need{} the pod shared pool",
            long_running_exclusive, total, fmt::join(exclusive, ", "), fmt::join(shared, ", "),
            shared.size() == 1 ? "s" : "");
      }
      std::string hint =
          shared.empty()
              ? "make the pod budget cover the largest exclusive init container plus the "
                "sidecars' exclusive CPUs, or give the shared init containers room"
              : fmt::format(
                    "raise spec.resources cpu to at least {} (requests and limits), or "
                    "lower an exclusive container's cpu",
                    long_running_exclusive + 1);
      AddPod(Severity::kError, "empty-shared-pool", pod, nullptr, "spec.resources.requests.cpu",
             fmt::format("{}: {}{}", reason,
                         reason == kReasonEmptyPodSharedPool
                             ? std::string(valid.message())
                             : fmt::format("the pod's shared pool would be empty ({})",
                                           valid.message()),
                         amounts),
             std::move(hint));
      return;
    }
    if (exclusive.empty()) {
      AddPod(Severity::kInfo, "no-exclusive-container", pod, nullptr, "spec.containers",
             fmt::format("no container has exclusive CPUs: {} share{} the pod's {}-CPU bubble "
                         "(NUMA-aligned, CFS quota on); a container needs cpu and memory "
                         "requests equal to limits with a whole number of CPUs for an exclusive "
                         "slice",
                         fmt::join(shared, ", "), shared.size() == 1 ? "s" : "", total),
             "give the latency-critical container resources with requests == limits (integral "
             "cpu, and memory) inside the pod budget");
    } else if (shared.empty() && long_running_exclusive < total) {
      AddPod(Severity::kInfo, "idle-budget", pod, nullptr, "spec.resources.requests.cpu",
             fmt::format("exclusive containers take {} of the pod's {} CPUs and no container "
                         "uses the pod shared pool: {} reserved but idle",
                         long_running_exclusive, total,
                         Plural(total - long_running_exclusive, "CPU stays", "CPUs stay")),
             fmt::format("lower spec.resources cpu to {}", long_running_exclusive));
    }
    if (full_pcpus_only_) {
      const int per_core = node_.cpus.CpusPerCore();
      if (per_core > 0 && total % per_core != 0) {
        AddPod(Severity::kError, "smt-misaligned", pod, nullptr, "spec.resources.requests.cpu",
               fmt::format("{}: SMT Alignment Error: requested {} cpus not multiple cpus per "
                           "core = {} (full-pcpus-only checks the pod budget): the kubelet "
                           "rejects the pod",
                           RejectionReason(pod, kReasonSmtAlignment), total, per_core),
               fmt::format("use a pod cpu budget that is a multiple of {}", per_core));
      }
    }
  }

  // "NUMA 0: 71, NUMA 1: 72, NUMA 2-33: 0": consecutive NUMA ids with the same amount are
  // one entry, so 34 or 64 NUMA nodes stay one readable line.
  static std::vector<std::string> PerNuma(const std::map<int, std::string>& texts) {
    std::vector<std::string> out;
    for (auto it = texts.begin(); it != texts.end();) {
      auto end = std::next(it);
      int last = it->first;
      while (end != texts.end() && end->first == last + 1 && end->second == it->second) {
        last = end->first;
        ++end;
      }
      out.push_back(last == it->first ? fmt::format("NUMA {}: {}", it->first, it->second)
                                      : fmt::format("NUMA {}-{}: {}", it->first, last, it->second));
      it = end;
    }
    return out;
  }

  void LintNumaFit(const Pod& pod, const PodRoles& roles, bool pod_path) {
    // What must fit in one NUMA node: the pod (pod scope) or each exclusive container.
    struct Unit {
      const Container* container;  // null = the whole pod
      std::string field;
      int cpus = 0;
      std::optional<Quantity> memory;
    };
    std::vector<Unit> units;
    const bool guaranteed = roles.qos == QosClass::kGuaranteed;
    if (scope_ == "pod") {
      Unit u{nullptr, "spec.resources.requests", 0, std::nullopt};
      if (pod_path) {
        u.cpus = roles.bubble_cpus;
        if (guaranteed && mem_static_) u.memory = Get(pod.resources->requests, kResourceMemory);
      } else if (!pod.HasPodLevelResources() && guaranteed) {
        u.field = "spec.containers";
        if (cpu_static_ && sizing_ != nullptr) u.cpus = sizing_->PodGuaranteedCpus(pod);
        if (mem_static_) u.memory = Get(PodRequests(pod, plr_), kResourceMemory);
      }
      if (!cpu_static_) u.cpus = 0;
      units.push_back(std::move(u));
    } else if (scope_ == "container" && guaranteed && (!pod.HasPodLevelResources() || pod_path)) {
      for (const ContainerRole& r : roles.containers) {
        const Container* c = pod.FindContainer(r.name);
        if (c == nullptr) continue;
        Unit u{c, ContainerField(pod, *c) + ".resources.requests", r.exclusive_cpus, std::nullopt};
        if (mem_static_ && IsContainerEquivalentQosGuaranteed(*c)) {
          u.memory = Get(c->resources.requests, kResourceMemory);
        }
        units.push_back(std::move(u));
      }
    }

    const std::map<int, int> numa_cpus = NumaCpus();
    const std::map<int, uint64_t> numa_memory = NumaMemory();
    for (const Unit& u : units) {
      const std::string what = u.container == nullptr
                                   ? "the pod's budget"
                                   : fmt::format("container {}", u.container->name);
      if (u.cpus > 0 && !numa_cpus.empty()) {
        int best = 0;
        std::map<int, std::string> texts;
        for (const auto& [id, n] : numa_cpus) {
          best = std::max(best, n);
          texts[id] = std::to_string(n);
        }
        std::vector<std::string> per = PerNuma(texts);
        if (u.cpus > best) {
          AddPod(Severity::kError, "budget-exceeds-numa", pod, u.container, u.field + ".cpu",
                 fmt::format("{} of {} CPUs does not fit in one NUMA node of {}: at most {} "
                             "allocatable CPUs per NUMA node ({}); single-numa-node rejects the "
                             "pod with TopologyAffinityError",
                             what, u.cpus, node_.source, best, fmt::join(per, ", ")),
                 fmt::format("request at most {} CPUs, or use topologyManagerPolicy restricted "
                             "or best-effort, or a node with larger NUMA nodes",
                             best));
        }
      }
      if (u.memory.has_value() && u.memory->Sign() > 0 && !numa_memory.empty()) {
        uint64_t best = 0;
        std::map<int, std::string> texts;
        for (const auto& [id, m] : numa_memory) {
          best = std::max(best, m);
          texts[id] = MemoryText(m);
        }
        std::vector<std::string> per = PerNuma(texts);
        if (static_cast<uint64_t>(std::max<int64_t>(u.memory->Value(), 0)) > best) {
          AddPod(Severity::kError, "budget-exceeds-numa", pod, u.container, u.field + ".memory",
                 fmt::format("{} of {} memory does not fit in one NUMA node of {}: at most {} "
                             "allocatable per NUMA node ({}, after reservedMemory); "
                             "single-numa-node rejects the pod with TopologyAffinityError",
                             what, u.memory->String(), node_.source, MemoryText(best),
                             fmt::join(per, ", ")),
                 fmt::format("request at most {} of memory, or use topologyManagerPolicy "
                             "restricted or best-effort, or a node with larger NUMA nodes",
                             MemoryText(best)));
        }
      }
    }
  }

  const config::ParsedKubeletConfig& parsed_;
  const KubeletConfig& cfg_;
  const NodeTopology& node_;
  LintReport report_;
  bool plr_ = false, plrm_ = false, cpu_static_ = false, mem_static_ = false;
  bool single_numa_ = false, full_pcpus_only_ = false;
  std::string scope_;
  ResourceList capacity_;
  CpuSet reserved_cpus_;
  std::unique_ptr<cpumanager::StaticPolicy> sizing_;
};

}  // namespace

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
  }
  return "error";
}

int LintReport::Count(Severity severity) const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [&](const Finding& f) { return f.severity == severity; }));
}

PodRoles ClassifyPod(const KubeletConfig& cfg, const Pod& pod) {
  PodRoles out;
  out.pod = pod.Key();
  out.file = pod.source;
  const bool plr = cfg.FeatureEnabled(config::kPodLevelResources);
  const bool plrm = cfg.FeatureEnabled(config::kPodLevelResourceManagers);
  out.qos = GetPodQos(pod, PodGatesFromConfig(cfg));
  const std::vector<const Container*> containers = pod.InitAndAppContainers();
  auto all_shared = [&](const std::string& reason) {
    for (const Container* c : containers) {
      out.containers.push_back({c->name, c->kind, "node_shared", 0, reason});
    }
  };
  if (cfg.cpu_manager_policy != "static") {
    all_shared(fmt::format("cpuManagerPolicy is {}: no exclusive CPUs", cfg.cpu_manager_policy));
    return out;
  }
  std::unique_ptr<cpumanager::StaticPolicy> policy = SizingPolicy(cfg);
  if (policy == nullptr) {
    all_shared("the static policy could not be set up");
    return out;
  }
  const bool pod_level = pod.HasPodLevelResources();
  const bool skips = pod_level && (!plrm || !plr);
  const std::string scope = EffectiveScope(cfg);

  // Why a container gets no exclusive CPUs.
  auto shared_reason = [&](const Container& c) -> std::string {
    if (out.qos != QosClass::kGuaranteed) {
      return fmt::format("the pod is {}: no exclusive CPUs", QosClassName(out.qos));
    }
    const std::string res = ResourcesText(c.resources);
    if (plrm && pod_level && !IsContainerEquivalentQosGuaranteed(c)) {
      if (c.resources.requests.empty() && c.resources.limits.empty()) {
        return "declares no container resources";
      }
      return fmt::format("{}: cpu and memory requests do not both equal their limits", res);
    }
    auto cpu = Get(c.resources.requests, kResourceCpu);
    if (!cpu.has_value() || cpu->Sign() <= 0) return "no cpu request";
    if (!IsIntegralCpu(*cpu)) {
      return fmt::format("{}: cpu {} is not a whole number of CPUs", res, cpu->String());
    }
    return res;
  };

  if (scope == "pod" && plrm && pod_level) {
    // podScope.admitUsingPodResources -> AllocatePod.
    if (!plr) {
      all_shared(
          "the PodLevelResources gate is off: the CPU Manager skips pods with pod-level "
          "resources");
      return out;
    }
    const int total = policy->PodGuaranteedCpus(pod);
    if (total == 0) {
      std::string reason;
      if (out.qos != QosClass::kGuaranteed) {
        reason = fmt::format("the pod is {}: no CPU bubble", QosClassName(out.qos));
      } else if (auto cpu = Get(pod.resources->requests, kResourceCpu); cpu.has_value()) {
        reason = fmt::format("the pod's cpu budget {} is not a whole number of CPUs: no CPU bubble",
                             cpu->String());
      } else {
        reason = "the pod sets no cpu budget: no CPU bubble";
      }
      all_shared(reason);
      return out;
    }
    out.bubble_cpus = total;
    for (const Container* c : containers) {
      const int g = policy->GuaranteedCpus(pod, *c);
      if (g > 0) {
        out.containers.push_back(
            {c->name, c->kind, "pod_exclusive", g,
             fmt::format("{}: Guaranteed on its own, an exclusive slice of {} of the pod's {} "
                         "CPUs",
                         ResourcesText(c->resources), Plural(g, "CPU", "CPUs"), total)});
      } else {
        out.containers.push_back({c->name, c->kind, "pod_shared", 0,
                                  fmt::format("{}: shares the pod's pool", shared_reason(*c))});
      }
    }
    return out;
  }

  // Container path (none / container scope, or pod scope without pod-level resources).
  for (const Container* c : containers) {
    const int g = policy->GuaranteedCpus(pod, *c);
    if (g > 0 && skips) {
      out.containers.push_back(
          {c->name, c->kind, "node_shared", 0,
           fmt::format("the pod sets spec.resources but the {} gate is off: the CPU Manager "
                       "skips the pod",
                       !plrm ? config::kPodLevelResourceManagers : config::kPodLevelResources)});
    } else if (g > 0) {
      out.containers.push_back(
          {c->name, c->kind, "node_exclusive", g,
           fmt::format("{}: Guaranteed, {} exclusive from the node pool",
                       ResourcesText(c->resources), Plural(g, "CPU", "CPUs"))});
    } else {
      out.containers.push_back(
          {c->name, c->kind, "node_shared", 0,
           fmt::format("{}: runs in the node shared pool", shared_reason(*c))});
    }
  }
  return out;
}

bool IsUnreadable(const config::Finding& f) {
  if (f.severity != config::Finding::Severity::kError || !f.field.empty()) return false;
  return StartsWith(f.message, "YAML syntax error") || StartsWith(f.message, "the file is empty") ||
         StartsWith(f.message, "expected a KubeletConfiguration mapping") ||
         StartsWith(f.message, "cannot read YAML") || StartsWith(f.message, "cannot decode YAML");
}

LintReport Lint(const config::ParsedKubeletConfig& parsed, const NodeTopology& node,
                const std::vector<Pod>& pods) {
  return Linter(parsed, node).Run(pods);
}

// ---------------------------------------------------------------------------------------
// Output.

namespace {

std::string Location(const Finding& f) {
  std::string out = f.file;
  if (!out.empty() && f.line > 0) {
    out += fmt::format(":{}:{}", f.line, f.column);
  }
  return out;
}

}  // namespace

std::string RenderLintTable(const LintReport& report) {
  std::string out;
  for (const Finding& f : report.findings) {
    std::string subject;
    if (!f.pod.empty()) subject = f.pod + (f.container.empty() ? "" : "/" + f.container);
    if (!f.field.empty()) subject += (subject.empty() ? "" : " ") + f.field;
    std::string loc = Location(f);
    out +=
        fmt::format("{}{}{} [{}] {}{}{}\n", loc, loc.empty() ? "" : ": ", SeverityName(f.severity),
                    f.code, subject, subject.empty() ? "" : ": ", f.message);
    if (!f.hint.empty()) out += fmt::format("    fix: {}\n", f.hint);
  }
  if (report.findings.empty()) out += "no findings\n";

  if (!report.pods.empty()) {
    struct Row {
      std::string pod, qos, bubble, container, kind, role, cpus, why;
    };
    std::vector<Row> rows;
    rows.push_back({"POD", "QOS", "BUBBLE", "CONTAINER", "KIND", "ROLE", "CPUS", "WHY"});
    for (const PodRoles& p : report.pods) {
      bool first = true;
      for (const ContainerRole& c : p.containers) {
        rows.push_back({first ? p.pod : "", first ? QosClassName(p.qos) : "",
                        first ? (p.bubble_cpus > 0 ? std::to_string(p.bubble_cpus) : "-") : "",
                        c.name, ContainerKindName(c.kind), c.role,
                        c.exclusive_cpus > 0 ? std::to_string(c.exclusive_cpus) : "-", c.reason});
        first = false;
      }
      if (p.containers.empty()) {
        rows.push_back({p.pod, QosClassName(p.qos), "-", "-", "-", "-", "-", "no containers"});
      }
    }
    size_t w[7] = {0, 0, 0, 0, 0, 0, 0};
    for (const Row& r : rows) {
      const std::string* cols[7] = {&r.pod,  &r.qos,  &r.bubble, &r.container,
                                    &r.kind, &r.role, &r.cpus};
      for (int i = 0; i < 7; ++i) w[i] = std::max(w[i], cols[i]->size());
    }
    out += "\n";
    for (const Row& r : rows) {
      out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", r.pod,
                         w[0], r.qos, w[1], r.bubble, w[2], r.container, w[3], r.kind, w[4], r.role,
                         w[5], r.cpus, w[6], r.why);
    }
  }
  const int e = report.Count(Severity::kError);
  const int wn = report.Count(Severity::kWarning);
  const int i = report.Count(Severity::kInfo);
  out += fmt::format("\n{}, {}, {}\n", Plural(e, "error", "errors"),
                     Plural(wn, "warning", "warnings"), Plural(i, "info", "infos"));
  return out;
}

nlohmann::ordered_json LintJson(const LintReport& report) {
  nlohmann::ordered_json j;
  j["config"] = report.config_file;
  j["node"] = report.node;
  j["summary"] = {{"errors", report.Count(Severity::kError)},
                  {"warnings", report.Count(Severity::kWarning)},
                  {"infos", report.Count(Severity::kInfo)}};
  j["findings"] = nlohmann::ordered_json::array();
  for (const Finding& f : report.findings) {
    nlohmann::ordered_json o;
    o["severity"] = SeverityName(f.severity);
    o["code"] = f.code;
    o["file"] = f.file;
    o["field"] = f.field;
    o["line"] = f.line;
    o["column"] = f.column;
    o["pod"] = f.pod;
    o["container"] = f.container;
    o["message"] = f.message;
    o["hint"] = f.hint;
    j["findings"].push_back(std::move(o));
  }
  j["pods"] = nlohmann::ordered_json::array();
  for (const PodRoles& p : report.pods) {
    nlohmann::ordered_json o;
    o["pod"] = p.pod;
    o["file"] = p.file;
    o["qos"] = QosClassName(p.qos);
    o["bubbleCpus"] = p.bubble_cpus;
    o["containers"] = nlohmann::ordered_json::array();
    for (const ContainerRole& c : p.containers) {
      o["containers"].push_back({{"name", c.name},
                                 {"kind", ContainerKindName(c.kind)},
                                 {"role", c.role},
                                 {"exclusiveCpus", c.exclusive_cpus},
                                 {"reason", c.reason}});
    }
    j["pods"].push_back(std::move(o));
  }
  return j;
}

std::string RenderLintJson(const LintReport& report) { return LintJson(report).dump(2) + "\n"; }

}  // namespace podtopo::lint
