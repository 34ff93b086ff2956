#include "explain/explain.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <set>

#include "kubelet/admission_error.h"
#include "fmt/format.h"
#include "topologymanager/policy.h"
#include "topologymanager/scope.h"

namespace podtopo::explain {
namespace {

using topologymanager::TopologyHint;

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string NumaList(const std::vector<int>& ids) {
  std::vector<std::string> s;
  for (int id : ids) s.push_back(std::to_string(id));
  return Join(s, ",");
}

HintView ViewOf(const TopologyHint& h) {
  HintView v;
  v.preferred = h.preferred;
  if (h.affinity.has_value()) v.numa = h.affinity->GetBits();
  return v;
}

std::string HintText(const HintView& h) {
  return FormatNuma(h.numa) + (h.preferred ? " (preferred)" : " (not preferred)");
}

std::string Plural(int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string QuantityText(const ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? std::string() : it->second.String();
}

bool Has(const ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it != list.end() && !it->second.IsZero();
}

// ---- QoS ----

std::string QosWhy(const Pod& pod, bool pod_level_gate, QosClass qos) {
  if (pod_level_gate && pod.HasPodLevelResources()) {
    const ResourceRequirements& r = *pod.resources;
    std::vector<std::string> problems;
    for (const char* res : {kResourceCpu, kResourceMemory}) {
      if (!Has(r.limits, res)) {
        problems.push_back(fmt::format("spec.resources sets no {} limit", res));
      } else if (Has(r.requests, res) && r.requests.at(res).Cmp(r.limits.at(res)) != 0) {
        problems.push_back(fmt::format("its {} request {} differs from its limit {}", res,
                                       r.requests.at(res).String(), r.limits.at(res).String()));
      }
    }
    std::string head = "the pod sets spec.resources, which alone decides the QoS class (KEP-2837)";
    if (qos == QosClass::kGuaranteed) {
      return fmt::format("{}: its limits set cpu {} and memory {}, and every request equals its "
                         "limit",
                         head, QuantityText(r.limits, kResourceCpu),
                         QuantityText(r.limits, kResourceMemory));
    }
    if (problems.empty()) return head;
    return fmt::format("{}: {}", head, Join(problems, "; "));
  }
  if (qos == QosClass::kGuaranteed) {
    return "every container sets cpu and memory limits and its requests equal them";
  }
  if (qos == QosClass::kBestEffort) {
    return "no container sets a cpu or memory request or limit";
  }
  for (const Container* c : pod.InitAndAppContainers()) {
    for (const char* res : {kResourceCpu, kResourceMemory}) {
      const ResourceRequirements& r = c->resources;
      if (!Has(r.limits, res)) {
        return fmt::format("container {} sets no {} limit (Guaranteed needs cpu and memory "
                           "limits on every container, requests equal to limits)",
                           c->name, res);
      }
      if (Has(r.requests, res) && r.requests.at(res).Cmp(r.limits.at(res)) != 0) {
        return fmt::format("container {}'s {} request {} differs from its limit {}", c->name,
                           res, r.requests.at(res).String(), r.limits.at(res).String());
      }
    }
  }
  return "requests and limits do not all match";
}

// Why a container is not Guaranteed on its own (KEP-5526 §2.3), or "" when it is and its CPU
// request is integral.
std::string Ineligibility(const Container& c) {
  const ResourceRequirements& r = c.resources;
  bool any = Has(r.requests, kResourceCpu) || Has(r.limits, kResourceCpu) ||
             Has(r.requests, kResourceMemory) || Has(r.limits, kResourceMemory);
  if (!any) return "it declares no cpu or memory requests or limits of its own";
  std::vector<std::string> problems;
  for (const char* res : {kResourceCpu, kResourceMemory}) {
    if (!Has(r.requests, res)) {
      problems.push_back(fmt::format("it has no {} request", res));
    } else if (!Has(r.limits, res)) {
      problems.push_back(fmt::format("its {} request {} has no matching limit", res,
                                     r.requests.at(res).String()));
    } else if (r.requests.at(res).Cmp(r.limits.at(res)) != 0) {
      problems.push_back(fmt::format("its {} request {} is not equal to its limit {}", res,
                                     r.requests.at(res).String(), r.limits.at(res).String()));
    }
  }
  if (!problems.empty()) return Join(problems, " and ");
  const Quantity& cpu = r.requests.at(kResourceCpu);
  if (cpu.MilliValue() % 1000 != 0) {
    return fmt::format("its CPU request {} is not a whole number of CPUs", cpu.String());
  }
  return "";
}

std::string PlacementOf(const std::string& assignment) {
  if (assignment == "node_exclusive") return "exclusive";
  if (assignment == "pod_exclusive") return "pod-exclusive";
  if (assignment == "pod_shared") return "pod-shared";
  return "node-shared";
}

std::string MemoryText(const std::map<std::string, uint64_t>& m) {
  std::vector<std::string> parts;
  for (const auto& [type, size] : m) parts.push_back(fmt::format("{} {}", type, FormatSize(size)));
  return Join(parts, ", ");
}

// Why `cpus`, taken for the merged hint of `ms`, lie outside the hint's NUMA nodes; "" when
// they do not (or the hint allows any node). The CPU Manager takes a request first from the
// CPUs aligned with the hint (its NUMA nodes, or with align-by-socket their sockets), then the
// rest from anywhere: so a CPU off the hint is either in the hint's socket under align-by-socket,
// or one the aligned CPUs were too few to give. `requested` and the step's snapshot give the
// counts ("" free count when `count_known` is false: earlier containers of the same merge took
// some).
std::string OffHint(const AdmissionTrace& t, const MergeStep& ms, const CpuSet& cpus,
                    int requested, bool count_known) {
  const std::optional<topologymanager::BitMask>& affinity = ms.result.hint.affinity;
  if (!affinity.has_value() || cpus.IsEmpty()) return "";
  std::vector<int> hint = affinity->GetBits();
  std::set<int> hint_sockets;
  for (int numa : hint) {
    if (auto it = t.numa_socket.find(numa); it != t.numa_socket.end()) {
      hint_sockets.insert(it->second);
    }
  }
  CpuSet by_socket, short_of;
  std::vector<int> socket_numas, short_numas;
  for (const auto& [numa, numa_cpus] : t.numa_cpus) {
    if (std::find(hint.begin(), hint.end(), numa) != hint.end()) continue;
    CpuSet there = cpus.Intersection(numa_cpus);
    if (there.IsEmpty()) continue;
    auto socket = t.numa_socket.find(numa);
    if (t.align_by_socket && socket != t.numa_socket.end() &&
        hint_sockets.count(socket->second) > 0) {
      by_socket.UnionWith(there);
      socket_numas.push_back(numa);
    } else {
      short_of.UnionWith(there);
      short_numas.push_back(numa);
    }
  }
  std::vector<std::string> parts;
  if (!by_socket.IsEmpty()) {
    std::vector<std::string> sockets;
    for (int socket : hint_sockets) {
      std::vector<int> numas;
      for (const auto& [numa, s] : t.numa_socket) {
        if (s == socket) numas.push_back(numa);
      }
      sockets.push_back(fmt::format("socket {}: NUMA {}", socket, NumaList(numas)));
    }
    parts.push_back(fmt::format(
        "CPUs {} are on NUMA {}, outside the merged hint {}: align-by-socket aligns exclusive "
        "CPUs with the hint's whole socket ({}), not only its NUMA nodes, and the CPU Manager's "
        "packing chose these there",
        by_socket.String(), NumaList(socket_numas), FormatNuma(hint), Join(sockets, "; ")));
  }
  if (!short_of.IsEmpty()) {
    std::string free;
    if (count_known) {
      int n = 0;
      for (const NumaSnapshot& snap : ms.numa) {
        if (std::find(hint.begin(), hint.end(), snap.id) != hint.end()) n += snap.cpus_free;
      }
      free = fmt::format(" (it had {} free)", n);
    }
    parts.push_back(fmt::format(
        "CPUs {} are on NUMA {}, outside the merged hint {}: the {} aligned with the hint{} "
        "were fewer than the {} requested, so the CPU Manager took the other {} from the rest "
        "of the node",
        short_of.String(), NumaList(short_numas), FormatNuma(hint),
        t.align_by_socket ? "CPUs of the hint's sockets" : "CPUs of the hint's NUMA nodes", free,
        requested, short_of.Size()));
  }
  return Join(parts, "; ");
}

ContainerView Classify(const AdmissionTrace& t, QosClass qos, const Container& c,
                       const ContainerAllocation* a) {
  ContainerView v;
  v.name = c.name;
  v.kind = ContainerKindName(c.kind);
  if (auto it = t.container_cpus.find(c.name); it != t.container_cpus.end()) {
    v.exclusive_cpus = it->second;
  }
  const int n = v.exclusive_cpus;
  const bool pod_level_set = t.pod_level_resources_gate && t.pod.HasPodLevelResources();
  if (c.kind == ContainerKind::kEphemeral) {
    v.placement = "node-shared";
    v.why = "ephemeral containers never get pinned CPUs: it runs on the node's shared pool";
  } else if (t.cpu_policy != "static") {
    v.placement = "node-shared";
    v.why = "cpuManagerPolicy is none: no container gets exclusive CPUs";
  } else if (qos != QosClass::kGuaranteed) {
    v.placement = "node-shared";
    v.why = fmt::format("the pod is {}: only Guaranteed pods get exclusive CPUs, so it runs on "
                        "the node's shared pool",
                        QosClassName(qos));
  } else if (pod_level_set && !t.pod_level_managers_gate) {
    v.placement = "node-shared";
    v.why = "the pod sets spec.resources but the PodLevelResourceManagers gate is off: the CPU "
            "Manager leaves such pods on the node's shared pool";
  } else if (t.pod_level_path) {
    if (t.pod_cpus == 0) {
      v.placement = "node-shared";
      v.why = fmt::format("the pod-level CPU request {} is not a whole number of CPUs, so the "
                          "pod gets no CPUs of its own; every container runs on the node's "
                          "shared pool",
                          QuantityText(t.pod.resources->requests, kResourceCpu));
    } else if (n > 0) {
      v.placement = "pod-exclusive";
      v.why = fmt::format("its cpu and memory requests equal its limits and its CPU request is "
                          "a whole number, so it gets {} of the pod's {} CPUs for itself",
                          Plural(n, "exclusive CPU", "exclusive CPUs"), t.pod_cpus);
    } else {
      v.placement = "pod-shared";
      std::string reason = Ineligibility(c);
      if (reason.empty()) reason = "it requests no whole CPUs";
      v.why = fmt::format("{}, so it is not Guaranteed on its own (exclusive CPUs need cpu and "
                          "memory requests equal to limits and a whole number of CPUs); it lands "
                          "in the pod's shared pool (the pod's CPUs that no exclusive container "
                          "took), not on exclusive cores",
                          reason);
      if (c.kind == ContainerKind::kInit) {
        v.why += "; as a regular init container it runs on all the pod's CPUs except the slices "
                 "of sidecars declared before it";
      }
    }
  } else if (n > 0) {
    v.placement = "exclusive";
    v.why = fmt::format("the pod is Guaranteed and its CPU request {} is a whole number, so it "
                        "gets {} from the node",
                        QuantityText(c.resources.requests, kResourceCpu),
                        Plural(n, "exclusive CPU", "exclusive CPUs"));
  } else {
    v.placement = "node-shared";
    std::string reason;
    if (pod_level_set) reason = Ineligibility(c);
    if (reason.empty()) {
      if (!Has(c.resources.requests, kResourceCpu)) {
        reason = "it requests no CPU";
      } else {
        reason = fmt::format("its CPU request {} is not a whole number of CPUs",
                             c.resources.requests.at(kResourceCpu).String());
      }
    }
    v.why = reason + ", so it runs on the node's shared pool";
  }
  if (a != nullptr) {
    v.placement = PlacementOf(a->assignment);
    v.cpus = a->cpus.String();
  }
  if (t.memory_policy == "Static" && qos == QosClass::kGuaranteed &&
      c.kind != ContainerKind::kEphemeral) {
    auto it = t.container_memory.find(c.name);
    if (it != t.container_memory.end() && !it->second.empty()) {
      v.memory = (t.pod_level_path ? "exclusive " : "pinned ") + MemoryText(it->second);
    } else if (t.pod_level_path && !t.pod_memory.empty()) {
      v.memory = "the pod's shared memory";
    }
  }
  return v;
}

// ---- hints and masks ----

std::string RequestText(const MergeStep& s, const std::string& provider,
                        const std::string& resource) {
  if (provider == "cpu") return Plural(s.cpu_request, "CPU", "CPUs");
  if (provider == "memory") {
    auto it = s.memory_request.find(resource);
    return it == s.memory_request.end() ? "" : FormatSize(it->second);
  }
  auto it = s.device_request.find(resource);
  return it == s.device_request.end() ? "" : std::to_string(it->second);
}

std::vector<ResourceHints> HintsOf(const MergeStep& s) {
  std::vector<ResourceHints> out;
  for (const auto& p : s.providers) {
    if (!p.hints.has_value() || p.hints->empty()) {
      out.push_back({p.provider, "", "no-preference", "", {}});
      continue;
    }
    for (const auto& [res, list] : *p.hints) {
      ResourceHints r{p.provider, res, "", RequestText(s, p.provider, res), {}};
      if (!list.has_value()) {
        r.state = "no-preference";
      } else if (list->empty()) {
        r.state = "no-placement";
      } else {
        r.state = "hints";
        r.set = *list;
        if (list->listed() || std::popcount(list->nodes()) <= kListedNumaNodes) {
          for (const auto& h : list->Enumerate()) r.hints.push_back(ViewOf(h));
        } else {
          // 2^N masks: the preferred ones only (the rest is what covers the request).
          for (const auto& m : list->PreferredMasks(kListedHints)) {
            r.hints.push_back(ViewOf(TopologyHint{m, true}));
          }
          r.summarized = true;
        }
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

const NumaSnapshot* Numa(const MergeStep& s, int id) {
  for (const auto& n : s.numa) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

std::string OnNuma(const std::vector<int>& mask) { return "on " + FormatNuma(mask); }

// Why `resource` of `provider` offers no hint on exactly `mask`.
std::string Shortage(const AdmissionTrace& t, const MergeStep& s, const ResourceHints& r,
                     const std::vector<int>& mask) {
  if (r.provider == "cpu") {
    if (r.state == "no-placement") {
      if (!t.cpu_shared_pool_error.empty() && s.container.empty()) {
        return "cpu: no placement on any NUMA node: the pod's shared pool would get no CPUs (" +
               t.cpu_shared_pool_error + ")";
      }
      return "cpu: no placement on any NUMA node (the CPUs already assigned to this pod do not "
             "match its request)";
    }
    int free = 0;
    for (int id : mask) {
      if (const NumaSnapshot* n = Numa(s, id)) free += n->cpus_free;
    }
    if (free + s.cpu_reusable >= s.cpu_request) {
      return fmt::format("cpu: need {}, free {} {}, but the init-container CPUs this pod "
                         "reuses lie outside it",
                         s.cpu_request, free, OnNuma(mask));
    }
    return fmt::format("cpu: need {}, free {} {}", s.cpu_request, free, OnNuma(mask));
  }
  if (r.provider == "memory") {
    const std::string& type = r.resource;
    uint64_t need = s.memory_request.count(type) ? s.memory_request.at(type) : 0;
    if (r.state == "no-placement") {
      uint64_t exclusive = 0;
      bool shared = false;
      for (const Container* c : t.pod.InitAndAppContainers()) {
        auto it = t.container_memory.find(c->name);
        if (it != t.container_memory.end() && it->second.count(type)) {
          if (c->kind != ContainerKind::kInit) exclusive += it->second.at(type);
        } else {
          shared = true;
        }
      }
      if (s.container.empty() && t.pod_level_path && shared && exclusive >= need) {
        return fmt::format("{}: no placement on any NUMA node: the exclusive containers take "
                           "{} of the pod's {}, leaving nothing for its shared containers",
                           type, FormatSize(exclusive), FormatSize(need));
      }
      return type + ": no placement on any NUMA node";
    }
    uint64_t allocatable = 0, free = 0;
    for (int id : mask) {
      if (const NumaSnapshot* n = Numa(s, id)) {
        if (n->memory_allocatable.count(type)) allocatable += n->memory_allocatable.at(type);
        if (n->memory_free.count(type)) free += n->memory_free.at(type);
      }
    }
    if (allocatable < need) {
      return fmt::format("{}: need {}, allocatable only {} {}", type, FormatSize(need),
                         FormatSize(allocatable), OnNuma(mask));
    }
    for (int id : mask) {
      const NumaSnapshot* n = Numa(s, id);
      if (n == nullptr) continue;
      if (mask.size() == 1 && !n->memory_group.empty()) {
        return fmt::format("{}: NUMA {} already serves a multi-NUMA memory allocation ({}) and "
                           "cannot serve a single-NUMA one",
                           type, id, FormatNuma(n->memory_group));
      }
      if (mask.size() > 1 && n->memory_assignments > 0) {
        if (n->memory_group.empty()) {
          return fmt::format("{}: NUMA {} already holds single-NUMA memory allocations and "
                             "cannot join a multi-NUMA one",
                             type, id);
        }
        if (n->memory_group != mask) {
          return fmt::format("{}: NUMA {} belongs to the memory group {}", type, id,
                             FormatNuma(n->memory_group));
        }
      }
    }
    return fmt::format("{}: need {}, free {} {}", type, FormatSize(need), FormatSize(free),
                       OnNuma(mask));
  }
  // devices
  if (r.state == "no-placement") return r.resource + ": no placement on any NUMA node";
  int64_t need = s.device_request.count(r.resource) ? s.device_request.at(r.resource) : 0;
  int free = 0;
  for (int id : mask) {
    if (const NumaSnapshot* n = Numa(s, id)) {
      if (n->devices_free.count(r.resource)) free += n->devices_free.at(r.resource);
    }
  }
  return fmt::format("{}: need {}, free {} {}", r.resource, need, free, OnNuma(mask));
}

std::vector<MaskCheck> CheckMasks(const AdmissionTrace& t, const MergeStep& s,
                                  const std::vector<ResourceHints>& hints) {
  const bool single = t.topology_policy == topologymanager::kPolicySingleNumaNode;
  std::vector<std::vector<int>> masks;
  const auto& ids = t.numa_ids;
  if (single || ids.size() > 8) {
    for (int id : ids) masks.push_back({id});
  } else {
    for (uint64_t bits = 1; bits < (uint64_t{1} << ids.size()); ++bits) {
      std::vector<int> m;
      for (size_t i = 0; i < ids.size(); ++i) {
        if (bits & (uint64_t{1} << i)) m.push_back(ids[i]);
      }
      masks.push_back(std::move(m));
    }
    std::stable_sort(masks.begin(), masks.end(),
                     [](const auto& a, const auto& b) { return a.size() < b.size(); });
  }
  std::vector<MaskCheck> out;
  for (const auto& mask : masks) {
    MaskCheck m;
    m.numa = mask;
    m.fits = true;
    m.preferred = true;
    for (const ResourceHints& r : hints) {
      if (r.state == "no-preference") continue;
      const HintView* found = nullptr;
      HintView from_set;
      if (r.set.has_value() && !r.set->listed()) {
        uint64_t bits = 0;
        for (int id : mask) bits |= uint64_t{1} << id;
        if (r.set->Qualifies(bits)) {
          from_set.numa = mask;
          from_set.preferred = r.set->Preferred(bits);
          found = &from_set;
        }
      } else {
        for (const HintView& h : r.hints) {
          if (!h.numa.has_value() || *h.numa == mask) {
            found = &h;
            if (h.preferred) break;
          }
        }
      }
      std::string label = r.resource.empty() ? r.provider : r.resource;
      if (found == nullptr) {
        m.fits = false;
        m.preferred = false;
        m.why.push_back(Shortage(t, s, r, mask));
        continue;
      }
      if (!found->preferred) {
        m.preferred = false;
        int narrowest = 0;
        for (const HintView& h : r.hints) {
          if (h.preferred && h.numa.has_value()) {
            narrowest = static_cast<int>(h.numa->size());
            break;
          }
        }
        if (single) m.fits = false;
        if (narrowest > 0) {
          m.why.push_back(fmt::format("{}: fits, but the hint is not preferred: {} fits on {} "
                                      "on this node",
                                      label, r.request.empty() ? "the request" : r.request,
                                      Plural(narrowest, "NUMA node", "NUMA nodes")));
        } else {
          m.why.push_back(fmt::format("{}: fits, but the hint is not preferred", label));
        }
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::string DecisionForMerge(const AdmissionTrace& t, const Step& s) {
  std::string where = s.container.empty() ? "" : fmt::format(" (container {})", s.container);
  if (t.topology_policy == topologymanager::kPolicySingleNumaNode) {
    std::string out = fmt::format(
        "single-numa-node admits a pod only when one NUMA node holds everything the providers "
        "align (a preferred single-NUMA hint from each of them); no single NUMA node holds the "
        "request{}",
        where);
    // Resources that each fit somewhere, but never on the same node.
    std::vector<std::string> parts;
    std::set<int> common;
    bool first = true, all_somewhere = true;
    for (const ResourceHints& r : s.hints) {
      if (r.state != "hints") continue;
      std::set<int> nodes;
      for (const HintView& h : r.hints) {
        if (h.preferred && h.numa.has_value() && h.numa->size() == 1) nodes.insert((*h.numa)[0]);
      }
      if (nodes.empty()) {
        all_somewhere = false;
        break;
      }
      parts.push_back(fmt::format("{} fits on NUMA {}", r.resource.empty() ? r.provider
                                                                           : r.resource,
                                  NumaList(std::vector<int>(nodes.begin(), nodes.end()))));
      if (first) {
        common = nodes;
        first = false;
      } else {
        std::set<int> both;
        for (int n : nodes) {
          if (common.count(n)) both.insert(n);
        }
        common = both;
      }
    }
    if (all_somewhere && parts.size() > 1 && common.empty()) {
      out += fmt::format(" ({}: no node has them all)", Join(parts, ", "));
    }
    return out;
  }
  std::string out =
      fmt::format("restricted admits only a preferred merged hint; the best merged hint{} is "
                  "{}, not preferred: no NUMA mask is preferred by every provider",
                  where, FormatNuma(s.merged.numa));
  // Providers whose narrowest preferred hints differ in width can never agree.
  std::vector<std::string> widths;
  std::set<size_t> distinct;
  for (const ResourceHints& r : s.hints) {
    if (r.state != "hints") continue;
    for (const HintView& h : r.hints) {
      if (h.preferred && h.numa.has_value()) {
        widths.push_back(fmt::format("{} {}", r.resource.empty() ? r.provider : r.resource,
                                     Plural(static_cast<int64_t>(h.numa->size()), "NUMA node",
                                            "NUMA nodes")));
        distinct.insert(h.numa->size());
        break;
      }
    }
  }
  if (distinct.size() > 1) {
    out += fmt::format(" (their preferred hints have different widths: {})", Join(widths, ", "));
  }
  return out;
}

std::string FitAmount(const std::string& res, int64_t v) {
  if (res == kResourceCpu) {
    if (v % 1000 == 0) return Plural(v / 1000, "CPU", "CPUs");
    return fmt::format("{}m CPU", v);
  }
  if (res == kResourceMemory || res.rfind(kHugePagesPrefix, 0) == 0) {
    return FormatSize(static_cast<uint64_t>(std::max<int64_t>(v, 0)));
  }
  return std::to_string(v);
}

}  // namespace

std::string FormatNuma(const std::optional<std::vector<int>>& numa) {
  if (!numa.has_value()) return "any NUMA node";
  return "NUMA " + NumaList(*numa);
}

std::string FormatSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (bytes == 0) return "0";
  int unit = -1;
  while (bytes % 1024 == 0 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  return unit < 0 ? std::to_string(bytes) : fmt::format("{}{}", bytes, kUnits[unit]);
}

Explanation Explain(const PodAllocation& result) {
  Explanation e;
  e.pod = result.namespace_name + "/" + result.name;
  e.admitted = result.admitted;
  e.reason = result.reason;
  e.message = result.message;
  e.qos = QosClassName(result.qos);
  e.pod_cpus = result.cpus.String();
  if (result.trace == nullptr) {
    e.note = "already admitted on this node (found in the state dir); shown as it is";
    for (const auto& c : result.containers) {
      ContainerView v;
      v.name = c.name;
      v.kind = ContainerKindName(c.kind);
      v.placement = PlacementOf(c.assignment);
      v.cpus = c.cpus.String();
      e.containers.push_back(std::move(v));
    }
    e.decision = "admitted earlier";
    return e;
  }
  const AdmissionTrace& t = *result.trace;
  e.qos_why = QosWhy(t.pod, t.pod_level_resources_gate, result.qos);
  e.policy = t.topology_policy;
  e.scope = t.scope;
  e.pod_level = t.pod_level_path;
  if (t.pod_level_path) {
    std::vector<std::string> parts;
    if (t.pod_cpus > 0) parts.push_back(Plural(t.pod_cpus, "CPU", "CPUs"));
    if (!t.pod_memory.empty()) parts.push_back(MemoryText(t.pod_memory));
    e.pod_budget = Join(parts, ", ");
  }
  auto find_alloc = [&](const std::string& name) -> const ContainerAllocation* {
    for (const auto& c : result.containers) {
      if (c.name == name) return &c;
    }
    return nullptr;
  };
  for (const Container* c : t.pod.InitAndAppContainers()) {
    e.containers.push_back(Classify(t, result.qos, *c, find_alloc(c->name)));
  }
  for (const Container& c : t.pod.ephemeral_containers) {
    e.containers.push_back(Classify(t, result.qos, c, find_alloc(c.name)));
  }
  for (const MergeStep& ms : t.merges) {
    Step s;
    s.container = ms.container;
    s.hints = HintsOf(ms);
    s.merged = ViewOf(ms.result.hint);
    s.admit = ms.result.admit;
    if (!s.admit) {
      s.masks = CheckMasks(t, ms, s.hints);
      s.masks_total = static_cast<int>(s.masks.size());
    }
    e.steps.push_back(std::move(s));
  }
  e.node_fit = t.node_fit;
  e.allocation_failure = t.allocation_failure;
  if (result.admitted) {
    auto merge_of = [&](const std::string& container) -> const MergeStep* {
      for (const MergeStep& ms : t.merges) {
        if (ms.container == container) return &ms;
      }
      return nullptr;
    };
    if (t.pod_level_path) {
      if (const MergeStep* ms = merge_of("")) {
        e.pod_cpus_off_hint = OffHint(t, *ms, result.cpus, t.pod_cpus, true);
      }
    } else {
      const bool per_container = t.scope == topologymanager::kScopeContainer;
      for (ContainerView& v : e.containers) {
        const ContainerAllocation* a = find_alloc(v.name);
        const MergeStep* ms = merge_of(per_container ? v.name : "");
        if (a == nullptr || ms == nullptr || v.placement != "exclusive") continue;
        v.cpus_off_hint = OffHint(t, *ms, a->cpus, v.exclusive_cpus, per_container);
      }
    }
  }

  if (t.node_fit.has_value()) {
    const NodeFitShortage& f = *t.node_fit;
    int64_t left = std::max<int64_t>(0, f.capacity - f.used);
    e.decision = fmt::format(
        "the node-fit check (it runs before the resource managers) found too little {}: the "
        "pod requests {}, the pods already on the node use {} of {} allocatable, {} left",
        f.resource, FitAmount(f.resource, f.requested), FitAmount(f.resource, f.used),
        FitAmount(f.resource, f.capacity), FitAmount(f.resource, left));
  } else if (!e.steps.empty() && !e.steps.back().admit) {
    e.decision = DecisionForMerge(t, e.steps.back());
    if (t.pod_level_path && !t.cpu_shared_pool_error.empty()) {
      e.decision += fmt::format("; the CPU Manager offered no placement because the pod's "
                                "shared pool would be empty ({})",
                                t.cpu_shared_pool_error);
    }
  } else if (t.allocation_failure.has_value()) {
    const AllocationFailure& f = *t.allocation_failure;
    std::string who = f.container.empty() ? "the pod" : "container " + f.container;
    if (f.reason == kReasonSmtAlignment) {
      e.decision = fmt::format("full-pcpus-only: exclusive CPUs are handed out in whole "
                               "physical cores ({} CPUs per core); the {} manager refused {}: {}",
                               t.cpus_per_core, f.provider, who, f.message);
    } else if (f.reason == kReasonEmptyPodSharedPool) {
      std::vector<std::string> shared;
      for (const auto& c : e.containers) {
        if (c.placement == "pod-shared") shared.push_back(c.name);
      }
      e.decision = fmt::format(
          "the pod's shared pool would be empty: the {} manager refused {} ({}); containers "
          "that need the shared pool: {}",
          f.provider, who, f.message, shared.empty() ? "none" : Join(shared, ", "));
    } else {
      e.decision = fmt::format("the {} manager failed to allocate {} after the merge admitted "
                               "it: {}",
                               f.provider, who, f.message);
      if (f.provider == "memory" && !t.merges.empty()) {
        const MergeStep& ms = t.merges.back();
        for (const auto& [type, need] : ms.memory_request) {
          std::vector<std::string> per_numa;
          bool groups = false, used_single = false;
          for (const NumaSnapshot& n : ms.numa) {
            groups |= !n.memory_group.empty();
            used_single |= n.memory_group.empty() && n.memory_assignments > 0;
            uint64_t free = n.memory_free.count(type) ? n.memory_free.at(type) : 0;
            per_numa.push_back(fmt::format(
                "NUMA {}: {} free{}", n.id, FormatSize(free),
                n.memory_group.empty() ? "" : " (group " + NumaList(n.memory_group) + ")"));
          }
          std::vector<std::string> rules;
          if (groups) rules.push_back("a node of a multi-NUMA group cannot serve alone");
          if (used_single) {
            rules.push_back("a node holding single-NUMA memory cannot join a multi-NUMA mask");
          }
          e.decision += fmt::format(
              "; {}: need {}; {}: no NUMA mask holds it{}, so the Memory Manager gave no hint "
              "(no preference) and the merge followed the other providers",
              type, FormatSize(need), Join(per_numa, ", "),
              rules.empty() ? "" : " (" + Join(rules, "; ") + ")");
        }
      }
    }
  } else if (result.admitted) {
    if (e.steps.empty()) {
      e.decision = "admitted: topologyManagerPolicy none aligns nothing";
    } else {
      const Step& s = e.steps.back();
      e.decision = fmt::format("admitted: {} accepted the merged hint {}", t.topology_policy,
                               HintText(s.merged));
      if (!s.merged.preferred) {
        // Only best-effort (and none) admit a hint that is not preferred.
        e.decision += fmt::format(
            ": no NUMA mask is preferred by every provider, and {} admits the pod anyway "
            "(restricted and single-numa-node would reject it)",
            t.topology_policy);
      }
    }
  } else {
    e.decision = result.reason + ": " + result.message;
  }
  return e;
}

// ---- what-ifs ----

namespace {

class Replayer {
 public:
  Replayer(const Scenario& scenario, const std::vector<Pod>& before)
      : scenario_(scenario), before_(before) {}

  // Admits `pod` on a fresh copy of the node with `config`: the scenario's state and the pods
  // admitted before it, or an empty node.
  std::optional<PodAllocation> Run(const Pod& pod, const config::KubeletConfig& config,
                                   bool empty_node = false) const {
    Node::Options o;
    o.state_dir = empty_node ? "" : scenario_.state_dir;
    o.read_only = true;
    auto node = Node::Create(scenario_.topology, config, o);
    if (!node.ok()) return std::nullopt;
    if (!empty_node) {
      // The variant must see the same node: every pod admitted before must still be admitted.
      for (const Pod& p : before_) {
        auto r = (*node)->Admit(p);
        if (!r.ok() || !r->admitted) return std::nullopt;
      }
    }
    auto r = (*node)->Admit(pod);
    if (!r.ok()) return std::nullopt;
    return std::move(*r);
  }
  std::optional<PodAllocation> Run(const Pod& pod) const { return Run(pod, scenario_.config); }
  // Admits `pod` on an empty node of another shape.
  static std::optional<PodAllocation> RunOnEmpty(const Pod& pod, const NodeTopology& topology,
                                                 const config::KubeletConfig& config) {
    auto node = Node::Create(topology, config, {});
    if (!node.ok()) return std::nullopt;
    auto r = (*node)->Admit(pod);
    if (!r.ok()) return std::nullopt;
    return std::move(*r);
  }

 private:
  const Scenario& scenario_;
  const std::vector<Pod>& before_;
};

// The merged hint stored for `container` ("" = the pod's).
std::string MergedOf(const PodAllocation& a, const std::string& container = "") {
  if (!container.empty()) {
    for (const auto& c : a.containers) {
      if (c.name == container && c.topology_hint.has_value()) {
        return HintText(ViewOf(*c.topology_hint));
      }
    }
  }
  if (a.topology_hint.has_value()) return HintText(ViewOf(*a.topology_hint));
  return "no NUMA hint";
}

// The requirements whose `resource` the admission measured in `step` (pod level, the step's
// container, or the container asking most).
ResourceRequirements* Target(Pod& pod, const AdmissionTrace& t, const std::string& container,
                             const std::string& resource, std::string* name) {
  if (t.pod_level_path && pod.resources.has_value()) {
    *name = "the pod's spec.resources";
    return &*pod.resources;
  }
  Container* best = nullptr;
  auto consider = [&](Container& c) {
    if (!container.empty() && c.name != container) return;
    auto it = c.resources.requests.find(resource);
    if (it == c.resources.requests.end()) return;
    if (best == nullptr || it->second.Cmp(best->resources.requests.at(resource)) > 0) best = &c;
  };
  for (auto& c : pod.init_containers) consider(c);
  for (auto& c : pod.containers) consider(c);
  if (best == nullptr) return nullptr;
  *name = "container " + best->name;
  return &best->resources;
}

// Sets `resource` of `r` to `q` in requests, and in limits when a limit is set.
void SetAmount(ResourceRequirements& r, const std::string& resource, const Quantity& q) {
  r.requests[resource] = q;
  if (r.limits.count(resource)) r.limits[resource] = q;
}

Quantity CurrentOf(const ResourceRequirements& r, const std::string& resource) {
  auto it = r.requests.find(resource);
  return it == r.requests.end() ? Quantity() : it->second;
}

// The pod with `resource` of its measured requirements changed by `delta` (cpu: CPUs,
// memory: bytes, devices: count); nullopt when no requirement names it or it would drop to 0.
std::optional<Pod> Adjust(const Pod& pod, const AdmissionTrace& t, const std::string& container,
                          const std::string& resource, int64_t delta, std::string* what) {
  Pod copy = pod;
  std::string name;
  ResourceRequirements* r = Target(copy, t, container, resource, &name);
  if (r == nullptr) return std::nullopt;
  Quantity cur = CurrentOf(*r, resource);
  Quantity next;
  if (resource == kResourceCpu) {
    int64_t milli = cur.MilliValue() + delta * 1000;
    if (milli <= 0) return std::nullopt;
    next = milli % 1000 == 0 ? Quantity::FromInt(milli / 1000) : Quantity::FromMilli(milli);
  } else if (resource == kResourceMemory || resource.rfind(kHugePagesPrefix, 0) == 0) {
    int64_t v = cur.Value() + delta;
    if (v <= 0) return std::nullopt;
    next = Quantity::FromInt(v, Quantity::Format::kBinarySI);
  } else {
    int64_t v = cur.Value() + delta;
    if (v <= 0) return std::nullopt;
    next = Quantity::FromInt(v);
  }
  SetAmount(*r, resource, next);
  // The API server refuses pod-level requests below the containers' aggregate.
  if (t.pod_level_path && copy.resources.has_value()) {
    ResourceList agg = AggregateContainerRequests(copy);
    if (agg.count(resource) && agg.at(resource).Cmp(next) > 0) return std::nullopt;
  }
  *what = fmt::format("{} {} {} (instead of {})", name, resource, next.String(), cur.String());
  return copy;
}

std::optional<Pod> AdjustAll(const Pod& pod, const AdmissionTrace& t, const std::string& container,
                             const std::map<std::string, int64_t>& deltas, std::string* what) {
  Pod p = pod;
  std::vector<std::string> parts;
  for (const auto& [res, d] : deltas) {
    if (d == 0) continue;
    std::string part;
    auto next = Adjust(p, t, container, res, d, &part);
    if (!next.has_value()) return std::nullopt;
    p = std::move(*next);
    parts.push_back(part);
  }
  if (parts.empty()) return std::nullopt;
  *what = Join(parts, " and ");
  return p;
}

void SuggestSmallerForMerge(const AdmissionTrace& t, const Explanation& e, const Replayer& rp,
                            std::vector<Suggestion>& out) {
  const MergeStep* ms = nullptr;
  for (const auto& m : t.merges) {
    if (!m.result.admit) ms = &m;
  }
  if (ms == nullptr) return;
  if (t.pod_level_path && !t.cpu_shared_pool_error.empty()) return;
  struct Candidate {
    std::vector<int> mask;
    std::map<std::string, int64_t> deltas;  // resource -> negative change
    double kept = 0;
  };
  std::vector<Candidate> candidates;
  const Step& step = e.steps.back();
  for (const MaskCheck& m : step.masks) {
    if (m.fits) continue;
    Candidate c;
    c.mask = m.numa;
    int terms = 0;
    bool possible = true;
    if (ms->cpu_request > 0) {
      int free = ms->cpu_reusable;
      for (int id : m.numa) free += Numa(*ms, id) ? Numa(*ms, id)->cpus_free : 0;
      if (free <= 0) possible = false;
      if (free < ms->cpu_request) c.deltas[kResourceCpu] = free - ms->cpu_request;
      c.kept += std::min(1.0, static_cast<double>(free) / ms->cpu_request);
      ++terms;
    }
    for (const auto& [type, need] : ms->memory_request) {
      uint64_t free = 0;
      for (int id : m.numa) {
        const NumaSnapshot* n = Numa(*ms, id);
        if (n != nullptr && n->memory_free.count(type)) free += n->memory_free.at(type);
      }
      if (free == 0) possible = false;
      if (free < need) {
        // Whole MiB keep the suggestion readable.
        uint64_t fit = free / (1 << 20) * (1 << 20);
        if (fit == 0) possible = false;
        c.deltas[type] = static_cast<int64_t>(fit) - static_cast<int64_t>(need);
      }
      c.kept += std::min(1.0, static_cast<double>(free) / static_cast<double>(need));
      ++terms;
    }
    for (const auto& [res, need] : ms->device_request) {
      int free = 0;
      for (int id : m.numa) {
        const NumaSnapshot* n = Numa(*ms, id);
        if (n != nullptr && n->devices_free.count(res)) free += n->devices_free.at(res);
      }
      if (free <= 0) possible = false;
      if (free < need) c.deltas[res] = free - need;
      c.kept += std::min(1.0, static_cast<double>(free) / static_cast<double>(need));
      ++terms;
    }
    if (!possible || c.deltas.empty() || terms == 0) continue;
    c.kept /= terms;
    candidates.push_back(std::move(c));
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.kept > b.kept; });
  int tries = 0;
  for (const Candidate& c : candidates) {
    if (tries >= 4) break;
    std::map<std::string, int64_t> deltas = c.deltas;
    for (int extra = 0; extra < 3 && tries < 8; ++extra, ++tries) {
      std::string what;
      auto pod = AdjustAll(t.pod, t, ms->container, deltas, &what);
      if (!pod.has_value()) break;
      auto r = rp.Run(*pod);
      if (r.has_value() && r->admitted) {
        out.push_back({"smaller-request",
                       fmt::format("request {}: it fits {}; checked: admitted with hint {}", what,
                                   OnNuma(c.mask), MergedOf(*r, ms->container)),
                       true});
        return;
      }
      if (!deltas.count(kResourceCpu)) break;
      deltas[kResourceCpu] -= 1;  // the CPU take may need one CPU less (SMT, reservations)
    }
  }
}

void SuggestPolicies(const AdmissionTrace& t, const Replayer& rp, const Scenario& sc,
                     std::vector<Suggestion>& out) {
  for (const char* p : {topologymanager::kPolicyBestEffort, topologymanager::kPolicyRestricted,
                        topologymanager::kPolicySingleNumaNode}) {
    if (t.topology_policy == p) continue;
    config::KubeletConfig cfg = sc.config;
    cfg.topology_manager_policy = p;
    auto r = rp.Run(t.pod, cfg);
    if (!r.has_value() || !r->admitted) continue;
    std::string note = p == std::string(topologymanager::kPolicyBestEffort)
                           ? "; best-effort admits whatever the alignment, so CPUs and memory "
                             "may sit on different NUMA nodes"
                           : "";
    std::string container = t.merges.empty() ? "" : t.merges.back().container;
    out.push_back({"policy",
                   fmt::format("topologyManagerPolicy: {} admits it: merged hint {}{}; checked", p,
                               MergedOf(*r, container), note),
                   true});
  }
}

// The what-if "a node with larger NUMA nodes": this node's CPUs, memory and devices on one
// NUMA node (and one socket), its reserved memory moved there. The largest NUMA node this
// node's resources make: if the pod does not fit there, larger NUMA nodes do not help.
std::pair<NodeTopology, config::KubeletConfig> AsOneNumaNode(const NodeTopology& topology,
                                                            const config::KubeletConfig& config) {
  NodeTopology one;
  one.source = topology.source + " with its NUMA nodes as one";
  for (int cpu : topology.cpus.AllCpus().List()) {
    CpuInfo info = *topology.cpus.Info(cpu);
    info.numa = 0;
    info.socket = 0;
    one.cpus.AddCpu(cpu, info);
  }
  one.cpus.SetCountsFromCpus();
  NumaNode merged;
  merged.distances = {10};
  for (const NumaNode& n : topology.numa_nodes) {
    merged.memory += n.memory;
    for (const auto& [type, bytes] : n.hugepages) merged.hugepages[type] += bytes;
  }
  one.numa_nodes = {merged};
  one.devices = topology.devices;
  for (Device& d : one.devices) {
    if (d.numa >= 0) d.numa = 0;
  }
  config::KubeletConfig cfg = config;
  if (!cfg.reserved_memory.empty()) {
    config::MemoryReservation all;
    for (const auto& r : config.reserved_memory) {
      for (const auto& [type, q] : r.limits) {
        auto [it, inserted] = all.limits.emplace(type, q);
        if (!inserted) it->second.Add(q);
      }
    }
    cfg.reserved_memory = {all};
  }
  return {std::move(one), std::move(cfg)};
}

// The first `n` of `ids` (all when fewer).
std::vector<int> FirstOf(const std::vector<int>& ids, int64_t n) {
  return std::vector<int>(ids.begin(),
                          ids.begin() + static_cast<std::ptrdiff_t>(
                                            std::min<int64_t>(n, static_cast<int64_t>(ids.size()))));
}

// `topology` with `amount` more of `resource` (in the node-fit check's units), spread over its
// NUMA nodes: whole cores of CPUs (as many threads as its cores have), memory, hugepages (also
// counted in the NUMA node's memory, as sysfs counts them), or devices of an extended
// resource. `added` says what was added, or why nothing could be.
std::optional<NodeTopology> WithMore(const NodeTopology& topology, const std::string& resource,
                                     int64_t amount, std::string* added) {
  NodeTopology more = topology;
  std::vector<int> numas = topology.cpus.NumaNodes();
  if (amount <= 0 || numas.empty()) {
    *added = "nothing is missing";
    return std::nullopt;
  }
  more.source = topology.source + " with more " + resource;
  if (resource == kResourceCpu) {
    const int per_core = std::max(1, topology.cpus.CpusPerCore());
    const int64_t cpus = (amount + 999) / 1000;
    const int64_t cores = (cpus + per_core - 1) / per_core;
    const std::vector<int> all = topology.cpus.AllCpus().List();
    std::vector<int> core_ids = topology.cpus.Cores();
    int next_cpu = all.empty() ? 0 : all.back() + 1;
    int next_core = core_ids.empty() ? 0 : core_ids.back() + 1;
    for (int64_t k = 0; k < cores; ++k) {
      int numa = numas[static_cast<size_t>(k) % numas.size()];
      CpuInfo info = *topology.cpus.Info(topology.cpus.CpusInNuma(numa).Min());
      info.core = next_core++;
      for (int th = 0; th < per_core; ++th) more.cpus.AddCpu(next_cpu++, info);
    }
    more.cpus.SetCountsFromCpus();
    *added = fmt::format("{} more cores ({} CPUs) spread over NUMA {}", cores, cores * per_core,
                         NumaList(FirstOf(numas, cores)));
    return more;
  }
  const bool hugepages = resource.rfind(kHugePagesPrefix, 0) == 0;
  if (resource == kResourceMemory || hugepages) {
    if (more.numa_nodes.empty()) {
      *added = "the node has no NUMA nodes to add memory to";
      return std::nullopt;
    }
    // Per NUMA node, rounded up to 1Gi: a multiple of every hugepage size.
    const uint64_t gi = uint64_t{1} << 30;
    const uint64_t n = more.numa_nodes.size();
    const uint64_t each = (static_cast<uint64_t>(amount) + n - 1) / n;
    const uint64_t per_numa = (each + gi - 1) / gi * gi;
    for (NumaNode& node : more.numa_nodes) {
      node.memory += per_numa;
      if (hugepages) node.hugepages[resource] += per_numa;
    }
    *added = fmt::format("{} more {} on each of the {} NUMA nodes", FormatSize(per_numa),
                         resource, n);
    return more;
  }
  if (resource == "pods" || resource == "ephemeral-storage") {
    *added = fmt::format("podtopo does not model the node's {}", resource);
    return std::nullopt;
  }
  for (int64_t k = 0; k < amount; ++k) {
    more.devices.push_back({resource, fmt::format("podtopo-added-{}", k),
                            numas[static_cast<size_t>(k) % numas.size()]});
  }
  *added = fmt::format("{} more {} devices spread over NUMA {}", amount, resource,
                       NumaList(FirstOf(numas, amount)));
  return more;
}

void SuggestEmptyNode(const AdmissionTrace& t, const Replayer& rp, const Scenario& sc,
                      std::vector<Suggestion>& out) {
  auto r = rp.Run(t.pod, sc.config, /*empty_node=*/true);
  if (r.has_value() && r->admitted) {
    int free_numa = 0;
    if (r->topology_hint.has_value() && r->topology_hint->affinity.has_value()) {
      free_numa = r->topology_hint->affinity->Count();
    }
    std::string need =
        free_numa > 0 ? fmt::format("a node of this shape with {} free admits it",
                                    Plural(free_numa, "NUMA node", "NUMA nodes"))
                      : "a node of this shape with nothing else on it admits it";
    out.push_back({"empty-node",
                   fmt::format("{}: checked on an empty node (hint {})", need, MergedOf(*r)),
                   true});
    return;
  }
  std::string detail;
  if (r.has_value() && r->trace != nullptr && !r->trace->merges.empty() &&
      !r->trace->merges.back().numa.empty()) {
    // The largest NUMA node of the shape, per resource.
    int cpus = 0;
    std::map<std::string, uint64_t> memory;
    for (const NumaSnapshot& n : r->trace->merges.back().numa) {
      cpus = std::max(cpus, n.cpus_allocatable);
      for (const auto& [type, a] : n.memory_allocatable) memory[type] = std::max(memory[type], a);
    }
    std::vector<std::string> parts{Plural(cpus, "allocatable CPU", "allocatable CPUs")};
    for (const auto& [type, a] : memory) parts.push_back(fmt::format("{} {}", FormatSize(a), type));
    detail = fmt::format(" (its largest NUMA node has {})", Join(parts, ", "));
  }
  std::string reason = r.has_value() ? r->reason : "";
  std::string need;
  bool verified = false;
  if (reason == kReasonTopologyAffinity) {
    // Advice only when admitting the pod on larger NUMA nodes says it helps.
    auto [one, one_config] = AsOneNumaNode(sc.topology, sc.config);
    auto larger = Replayer::RunOnEmpty(t.pod, one, one_config);
    verified = larger.has_value() && larger->admitted;
    need = verified ? "a node with larger NUMA nodes admits it (checked with this node's CPUs "
                      "and memory as one NUMA node)"
                    : "the pod itself must change (larger NUMA nodes would not help: checked "
                      "with this node's CPUs and memory as one NUMA node)";
    if (!verified) detail.clear();  // the NUMA nodes' size is not what rejects it
  } else if (reason.rfind("OutOf", 0) == 0 && r->trace != nullptr &&
             r->trace->node_fit.has_value()) {
    // Advice only as checked: the same node with the missing amount added.
    const NodeFitShortage& f = *r->trace->node_fit;
    const int64_t missing = f.requested - (f.capacity - f.used);
    std::string added;
    std::optional<NodeTopology> more = WithMore(sc.topology, f.resource, missing, &added);
    std::optional<PodAllocation> bigger;
    if (more.has_value()) bigger = Replayer::RunOnEmpty(t.pod, *more, sc.config);
    verified = bigger.has_value() && bigger->admitted;
    if (verified) {
      need = fmt::format("a node with {} more allocatable {} admits it (checked with {})",
                         FitAmount(f.resource, missing), f.resource, added);
    } else if (bigger.has_value()) {
      need = fmt::format("more allocatable {} alone would not help: with {} the node still "
                         "rejects it ({}: {})",
                         f.resource, added, bigger->reason, bigger->message);
    } else {
      need = fmt::format("it needs {} more allocatable {} (not checked: {}), or a smaller "
                         "request",
                         FitAmount(f.resource, missing), f.resource,
                         more.has_value() ? "the larger node could not be built" : added);
    }
    detail.clear();
  } else {
    need = "the pod itself must change";
    detail.clear();
  }
  out.push_back({"node",
                 fmt::format("even an empty node of this shape rejects it{}{}: {}",
                             reason.empty() ? "" : " with " + reason, detail, need),
                 verified});
}

// The pod-level budget raised until its shared containers get something (EmptyPodSharedPool).
void SuggestLargerBudget(const AdmissionTrace& t, const Replayer& rp, bool memory,
                         std::vector<Suggestion>& out) {
  std::string res = memory ? std::string(kResourceMemory) : std::string(kResourceCpu);
  int64_t step = memory ? (int64_t{256} << 20) : 1;
  for (int k = 1; k <= 4; ++k) {
    std::string what;
    auto pod = Adjust(t.pod, t, "", res, k * step, &what);
    if (!pod.has_value()) break;
    auto r = rp.Run(*pod);
    if (r.has_value() && r->admitted) {
      out.push_back({"larger-budget",
                     fmt::format("raise {} so the shared containers get some: checked, admitted "
                                 "with hint {}",
                                 what, MergedOf(*r)),
                     true});
      return;
    }
  }
}

std::vector<Suggestion> Suggest(const PodAllocation& result, const Explanation& e,
                                const Scenario& sc, const Replayer& rp) {
  std::vector<Suggestion> out;
  if (result.admitted || result.trace == nullptr) return out;
  const AdmissionTrace& t = *result.trace;
  if (t.node_fit.has_value()) {
    const NodeFitShortage& f = *t.node_fit;
    int64_t left = f.capacity - f.used;
    if (left > 0 && f.resource != "pods") {
      int64_t delta = left - f.requested;  // in fit units
      std::string what;
      std::optional<Pod> pod;
      if (f.resource == kResourceCpu) {
        // Whole CPUs keep exclusive CPUs possible.
        int64_t whole = left / 1000;
        if (whole > 0) pod = Adjust(t.pod, t, "", kResourceCpu, whole - f.requested / 1000, &what);
        if (f.requested % 1000 != 0) pod.reset();
      } else {
        pod = Adjust(t.pod, t, "", f.resource, delta, &what);
      }
      Suggestion s{"smaller-request",
                   fmt::format("request at most {} of {} (requested {}, {} used of {} "
                               "allocatable)",
                               FitAmount(f.resource, left), f.resource,
                               FitAmount(f.resource, f.requested), FitAmount(f.resource, f.used),
                               FitAmount(f.resource, f.capacity)),
                   false};
      if (pod.has_value()) {
        auto r = rp.Run(*pod);
        if (r.has_value() && r->admitted) {
          s.text = fmt::format("request {}: checked, admitted", what);
          s.verified = true;
        } else if (r.has_value()) {
          s.text += fmt::format("; but with {} the node still rejects it ({})", what, r->reason);
        }
      }
      out.push_back(std::move(s));
    }
    SuggestEmptyNode(t, rp, sc, out);
    return out;
  }
  const bool merge_rejected = !t.merges.empty() && !t.merges.back().result.admit;
  if (merge_rejected) {
    if (t.pod_level_path && !t.cpu_shared_pool_error.empty()) {
      SuggestLargerBudget(t, rp, /*memory=*/false, out);
    }
    SuggestSmallerForMerge(t, e, rp, out);
    SuggestPolicies(t, rp, sc, out);
    SuggestEmptyNode(t, rp, sc, out);
    return out;
  }
  if (t.allocation_failure.has_value()) {
    const AllocationFailure& f = *t.allocation_failure;
    if (f.reason == kReasonSmtAlignment) {
      int cpc = std::max(1, t.cpus_per_core);
      int want = f.container.empty() ? t.pod_cpus
                                     : (t.container_cpus.count(f.container)
                                            ? t.container_cpus.at(f.container)
                                            : 0);
      std::vector<int> sizes;
      if (want % cpc != 0) {
        if (want - want % cpc > 0) sizes.push_back(want - want % cpc);
        sizes.push_back(want + cpc - want % cpc);
      } else {
        for (int n = want - cpc; n > 0 && sizes.size() < 3; n -= cpc) sizes.push_back(n);
      }
      for (int n : sizes) {
        std::string what;
        auto pod = Adjust(t.pod, t, f.container, kResourceCpu, n - want, &what);
        if (!pod.has_value()) continue;
        auto r = rp.Run(*pod);
        if (r.has_value() && r->admitted) {
          out.push_back({"smaller-request",
                         fmt::format("request {} (a multiple of {} CPUs per core): checked, "
                                     "admitted with hint {}",
                                     what, cpc, MergedOf(*r)),
                         true});
          break;
        }
      }
      config::KubeletConfig cfg = sc.config;
      if (cfg.cpu_manager_policy_options.erase("full-pcpus-only") > 0) {
        auto r = rp.Run(t.pod, cfg);
        if (r.has_value() && r->admitted) {
          out.push_back({"cpu-policy-option",
                         "cpuManagerPolicyOptions without full-pcpus-only admits it (its CPUs "
                         "may then share physical cores with other containers); checked",
                         true});
        }
      }
    } else if (f.reason == kReasonEmptyPodSharedPool) {
      SuggestLargerBudget(t, rp, f.message.find("cpu") == std::string::npos, out);
    } else if (f.provider == "memory" && !t.merges.empty()) {
      // The most memory one NUMA node still has free.
      const MergeStep& ms = t.merges.back();
      for (const auto& [type, need] : ms.memory_request) {
        uint64_t best = 0;
        int best_numa = -1;
        for (const NumaSnapshot& n : ms.numa) {
          uint64_t free = n.memory_free.count(type) ? n.memory_free.at(type) : 0;
          if (n.memory_group.empty() && free > best) {
            best = free;
            best_numa = n.id;
          }
        }
        best = best / (1 << 20) * (1 << 20);
        if (best == 0 || best >= need) continue;
        std::string what;
        auto pod = Adjust(t.pod, t, f.container, type,
                          static_cast<int64_t>(best) - static_cast<int64_t>(need), &what);
        if (!pod.has_value()) continue;
        auto r = rp.Run(*pod);
        if (r.has_value() && r->admitted) {
          out.push_back({"smaller-request",
                         fmt::format("request {}: it fits on NUMA {}; checked: admitted with "
                                     "hint {}",
                                     what, best_numa, MergedOf(*r, f.container)),
                         true});
        }
      }
    }
    SuggestPolicies(t, rp, sc, out);
    SuggestEmptyNode(t, rp, sc, out);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<Explanation>> ExplainPods(const Scenario& scenario,
                                                     const std::vector<Pod>& pods) {
  Node::Options o;
  o.state_dir = scenario.state_dir;
  o.read_only = true;
  auto node = Node::Create(scenario.topology, scenario.config, o);
  if (!node.ok()) return node.status();
  std::vector<Pod> before;
  std::vector<Explanation> out;
  for (const Pod& pod : pods) {
    auto r = (*node)->Admit(pod);
    if (!r.ok()) return r.status();
    Explanation e = Explain(*r);
    e.kubelet_version = scenario.config.kubelet_version;
    if (r->admitted) e.version_notes = VersionNotes(pod, scenario.config);
    if (r->replaced) {
      e.note = fmt::format(
          "pod {} changed; admitting it again (the state dir holds it with another spec: that "
          "allocation is released first)",
          pod.Key());
    }
    if (r->trace == nullptr) {
      // Already admitted (state dir): explain it as if it arrived now on the node without it,
      // and keep the CPUs it holds.
      Node::Options ro;
      ro.state_dir = scenario.state_dir;
      ro.read_only = true;
      auto again = Node::Create(scenario.topology, scenario.config, ro);
      bool ok = again.ok();
      for (const Pod& p : before) {
        if (!ok) break;
        auto b = (*again)->Admit(p);
        ok = b.ok() && b->admitted;
      }
      if (ok) ok = (*again)->Remove(pod.namespace_name, pod.name).ok();
      std::optional<PodAllocation> fresh;
      if (ok) {
        auto a = (*again)->Admit(pod);
        if (a.ok() && a->trace != nullptr) fresh = std::move(*a);
      }
      if (fresh.has_value()) {
        Explanation full = Explain(*fresh);
        full.admitted = r->admitted;
        full.reason = r->reason;
        full.message = r->message;
        full.pod_cpus = r->cpus.String();
        for (auto& c : full.containers) {
          for (const auto& held : r->containers) {
            if (held.name == c.name) {
              c.placement = PlacementOf(held.assignment);
              c.cpus = held.cpus.String();
            }
          }
        }
        full.note = "already admitted on this node (found in the state dir): its CPUs are the "
                    "ones it holds; the hints are recomputed as if it arrived now";
        e = std::move(full);
      }
    }
    Replayer rp(scenario, before);
    e.suggestions = Suggest(*r, e, scenario, rp);
    if (r->admitted && r->trace != nullptr) before.push_back(pod);
    out.push_back(std::move(e));
  }
  return out;
}

// ---- rendering ----

std::vector<std::string> VersionNotes(const Pod& pod, const config::KubeletConfig& config) {
  std::vector<std::string> notes;
  const kubelet::KubeletVersion* v = config.Version();
  if (v == nullptr) return notes;
  const bool pod_level = config.FeatureEnabled("PodLevelResources") &&
                         config.FeatureEnabled("PodLevelResourceManagers") &&
                         pod.HasPodLevelResources() && config.topology_manager_scope == "pod" &&
                         config.topology_manager_policy != "none";
  if (!pod_level) return notes;
  const kubelet::Behavior& b = v->behavior;
  if (config.cpu_manager_policy == "static" && !b.cpu_restore_keeps_pod_cpus) {
    notes.push_back(fmt::format(
        "kubelet {} allocates this pod's CPUs again when it restarts ({}): the running pod is "
        "moved or rejected; `podtopo state restart` shows which",
        v->name, kubelet::DescribeVersioned(&kubelet::Behavior::cpu_restore_keeps_pod_cpus)));
  }
  if (config.memory_manager_policy == "Static" && !b.memory_restore_keeps_pod_blocks) {
    notes.push_back(fmt::format(
        "kubelet {} reserves this pod's memory again when it restarts ({})", v->name,
        kubelet::DescribeVersioned(&kubelet::Behavior::memory_restore_keeps_pod_blocks)));
  }
  return notes;
}

std::string RenderText(const Explanation& e) {
  std::string out;
  auto line = [&](int indent, const std::string& s) {
    out += std::string(static_cast<size_t>(indent), ' ') + s + "\n";
  };
  line(0, fmt::format("Pod {}: {}{}", e.pod,
                      e.admitted ? "ADMITTED" : fmt::format("REJECTED ({})", e.reason),
                      e.kubelet_version.empty() ? "" : " by kubelet " + e.kubelet_version));
  for (const std::string& n : e.version_notes) line(2, "Version: " + n);
  if (!e.admitted && !e.message.empty()) line(2, e.message);
  if (!e.note.empty()) line(2, "Note: " + e.note);
  if (!e.qos_why.empty()) {
    line(2, fmt::format("QoS class: {} ({})", e.qos, e.qos_why));
  } else {
    line(2, "QoS class: " + e.qos);
  }
  if (!e.policy.empty()) {
    std::string tm = fmt::format("Topology Manager: policy {}, scope {}", e.policy, e.scope);
    if (e.pod_level) {
      tm += fmt::format("; pod-level resources (KEP-5526): one budget for the whole pod{}",
                        e.pod_budget.empty() ? "" : " (" + e.pod_budget + ")");
    }
    line(2, tm);
  }
  if (e.admitted && !e.pod_cpus.empty()) line(2, "Pod CPUs: " + e.pod_cpus);
  if (!e.pod_cpus_off_hint.empty()) line(4, "where: " + e.pod_cpus_off_hint);
  line(2, "Containers:");
  static const std::map<std::string, std::string> kPlacement = {
      {"exclusive", "exclusive CPUs"},
      {"pod-exclusive", "exclusive slice of the pod's CPUs"},
      {"pod-shared", "pod shared pool"},
      {"node-shared", "node shared pool"}};
  for (const auto& c : e.containers) {
    std::string head = fmt::format("{} ({}): {}{}", c.name, c.kind,
                                   e.admitted ? "" : "would get ",
                                   kPlacement.count(c.placement) ? kPlacement.at(c.placement)
                                                                 : c.placement);
    if (!c.cpus.empty()) head += ", CPUs " + c.cpus;
    if (!c.memory.empty()) head += "; memory: " + c.memory;
    line(4, head);
    if (!c.why.empty()) line(6, "why: " + c.why);
    if (!c.cpus_off_hint.empty()) line(6, "where: " + c.cpus_off_hint);
  }
  for (const auto& s : e.steps) {
    line(2, s.container.empty() ? "Hints (pod):" : fmt::format("Hints (container {}):",
                                                               s.container));
    for (const auto& r : s.hints) {
      std::string label = r.resource.empty() || r.resource == r.provider
                              ? r.provider
                              : r.provider + "/" + r.resource;
      std::string req = r.request.empty() ? "" : " for " + r.request;
      if (r.state == "no-preference") {
        line(4, fmt::format("{}: no preference", label));
      } else if (r.state == "no-placement") {
        line(4, fmt::format("{}{}: no placement possible", label, req));
      } else {
        // Preferred hints in full; the wider non-preferred ones counted (-o json lists all).
        std::vector<std::string> preferred, other;
        for (const auto& h : r.hints) (h.preferred ? preferred : other).push_back(FormatNuma(h.numa));
        std::string text = preferred.empty() ? "no preferred hint"
                                             : Join(preferred, ", ") + " (preferred)";
        if (!other.empty()) {
          text += other.size() <= 3 ? "; not preferred: " + Join(other, ", ")
                                    : fmt::format("; {} wider masks not preferred", other.size());
        } else if (r.summarized) {
          text += "; not preferred: every wider mask that holds the request";
        }
        line(4, fmt::format("{}{}: {}", label, req, text));
      }
    }
    line(4, fmt::format("merged: {}{} -> {}", FormatNuma(s.merged.numa),
                        s.merged.preferred ? " (preferred)" : " (not preferred)",
                        s.admit ? "admit" : "reject"));
    if (!s.masks.empty()) {
      line(4, e.policy == topologymanager::kPolicySingleNumaNode
                  ? "NUMA masks tried (single-numa-node keeps only preferred single-NUMA hints):"
                  : "NUMA masks tried:");
      const size_t kMax = 15;
      bool same = s.masks.size() > 1 && !s.masks[0].fits;
      for (const MaskCheck& m : s.masks) same = same && !m.fits && m.why == s.masks[0].why;
      if (same) {
        std::vector<std::string> all;
        for (const MaskCheck& m : s.masks) all.push_back(FormatNuma(m.numa));
        line(6, fmt::format("{}: none fits - {}", Join(all, "; "), Join(s.masks[0].why, "; ")));
      }
      for (size_t i = 0; !same && i < s.masks.size() && i < kMax; ++i) {
        const MaskCheck& m = s.masks[i];
        std::string verdict = m.preferred ? "fits (preferred)"
                              : m.fits    ? "fits (not preferred)"
                                          : "does not fit";
        line(6, fmt::format("{}: {}{}", FormatNuma(m.numa), verdict,
                            m.why.empty() ? "" : " - " + Join(m.why, "; ")));
      }
      if (!same && s.masks.size() > kMax) {
        line(6, fmt::format("... {} more masks (-o json lists them all)", s.masks.size() - kMax));
      }
    }
  }
  line(2, "Decision: " + e.decision);
  if (!e.suggestions.empty()) {
    line(2, "Smallest changes that would fit:");
    for (const auto& s : e.suggestions) line(4, "- " + s.text);
  }
  return out;
}

nlohmann::ordered_json ToJson(const Explanation& e) {
  using J = nlohmann::ordered_json;
  auto hint = [](const HintView& h) {
    J j;
    j["numaNodes"] = h.numa.has_value() ? J(*h.numa) : J(nullptr);
    j["preferred"] = h.preferred;
    return j;
  };
  J j;
  j["pod"] = e.pod;
  j["kubeletVersion"] = e.kubelet_version.empty() ? J(nullptr) : J(e.kubelet_version);
  j["versionNotes"] = e.version_notes;
  j["admitted"] = e.admitted;
  j["reason"] = e.reason;
  j["message"] = e.message;
  j["qosClass"] = e.qos;
  j["qosReason"] = e.qos_why;
  j["topologyManagerPolicy"] = e.policy;
  j["scope"] = e.scope;
  j["podLevel"] = e.pod_level;
  j["podBudget"] = e.pod_budget;
  j["cpus"] = e.pod_cpus;
  j["cpusOffHint"] = e.pod_cpus_off_hint;
  J containers = J::array();
  for (const auto& c : e.containers) {
    J cj;
    cj["name"] = c.name;
    cj["kind"] = c.kind;
    cj["placement"] = c.placement;
    cj["cpus"] = c.cpus;
    cj["exclusiveCpus"] = c.exclusive_cpus;
    cj["memory"] = c.memory;
    cj["reason"] = c.why;
    cj["cpusOffHint"] = c.cpus_off_hint;
    containers.push_back(std::move(cj));
  }
  j["containers"] = std::move(containers);
  J steps = J::array();
  for (const auto& s : e.steps) {
    J sj;
    sj["container"] = s.container;
    J hints = J::array();
    for (const auto& r : s.hints) {
      J rj;
      rj["provider"] = r.provider;
      rj["resource"] = r.resource;
      rj["state"] = r.state;
      rj["request"] = r.request;
      J hs = J::array();
      for (const auto& h : r.hints) hs.push_back(hint(h));
      rj["hints"] = std::move(hs);
      hints.push_back(std::move(rj));
    }
    sj["providers"] = std::move(hints);
    sj["mergedHint"] = hint(s.merged);
    sj["admit"] = s.admit;
    J masks = J::array();
    for (const auto& m : s.masks) {
      J mj;
      mj["numaNodes"] = m.numa;
      mj["fits"] = m.fits;
      mj["preferred"] = m.preferred;
      mj["why"] = m.why;
      masks.push_back(std::move(mj));
    }
    sj["masksTried"] = std::move(masks);
    steps.push_back(std::move(sj));
  }
  j["mergeSteps"] = std::move(steps);
  if (e.node_fit.has_value()) {
    j["nodeFit"] = {{"resource", e.node_fit->resource},
                    {"requested", e.node_fit->requested},
                    {"used", e.node_fit->used},
                    {"capacity", e.node_fit->capacity}};
  } else {
    j["nodeFit"] = nullptr;
  }
  if (e.allocation_failure.has_value()) {
    j["allocationFailure"] = {{"provider", e.allocation_failure->provider},
                              {"container", e.allocation_failure->container},
                              {"reason", e.allocation_failure->reason},
                              {"message", e.allocation_failure->message}};
  } else {
    j["allocationFailure"] = nullptr;
  }
  j["decision"] = e.decision;
  J sug = J::array();
  for (const auto& s : e.suggestions) {
    sug.push_back({{"kind", s.kind}, {"text", s.text}, {"verified", s.verified}});
  }
  j["suggestions"] = std::move(sug);
  j["note"] = e.note;
  return j;
}

std::string RenderJson(const std::vector<Explanation>& explanations) {
  nlohmann::ordered_json pods = nlohmann::ordered_json::array();
  for (const auto& e : explanations) pods.push_back(ToJson(e));
  nlohmann::ordered_json j;
  // The version every pod was predicted for (the same for all: one node).
  j["kubeletVersion"] = explanations.empty() || explanations[0].kubelet_version.empty()
                            ? nlohmann::ordered_json(nullptr)
                            : nlohmann::ordered_json(explanations[0].kubelet_version);
  j["pods"] = std::move(pods);
  return j.dump(2) + "\n";
}

}  // namespace podtopo::explain
