#include "render/admission_render.h"

#include <algorithm>

#include "explain/explain.h"
#include "fmt/format.h"
#include "resource/human_bytes.h"

namespace podtopo {
namespace {

nlohmann::ordered_json HintJson(const std::optional<topologymanager::TopologyHint>& hint) {
  if (!hint.has_value()) return nullptr;
  nlohmann::ordered_json j;
  if (hint->affinity.has_value()) {
    j["affinity"] = hint->affinity->GetBits();
  } else {
    j["affinity"] = nullptr;
  }
  j["preferred"] = hint->preferred;
  return j;
}

nlohmann::ordered_json MemoryJson(const std::vector<MemoryBlockView>& blocks) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& b : blocks) {
    nlohmann::ordered_json j;
    j["type"] = b.type;
    j["size"] = b.size;
    j["numaNodes"] = b.numa_nodes;
    arr.push_back(std::move(j));
  }
  return arr;
}

std::string FormatMemory(const std::vector<MemoryBlockView>& blocks) {
  if (blocks.empty()) return "-";
  std::string out;
  for (const auto& b : blocks) {
    if (!out.empty()) out += " ";
    std::string nodes;
    for (int n : b.numa_nodes) nodes += (nodes.empty() ? "" : ",") + std::to_string(n);
    std::string type = b.type == "memory" ? "" : b.type + ":";
    out += fmt::format("{}{}@{}", type, HumanBytes(b.size), nodes.empty() ? "-" : nodes);
  }
  return out;
}

std::string Or(const std::string& s, const char* dash = "-") { return s.empty() ? dash : s; }

}  // namespace

std::string FormatHint(const std::optional<topologymanager::TopologyHint>& hint) {
  if (!hint.has_value()) return "-";
  std::string s;
  if (!hint->affinity.has_value()) {
    s = "any";
  } else {
    std::string nodes;
    for (int b : hint->affinity->GetBits()) nodes += (nodes.empty() ? "" : ",") + std::to_string(b);
    s = "NUMA " + nodes;
  }
  return s + (hint->preferred ? " (preferred)" : " (not preferred)");
}

nlohmann::ordered_json PodAllocationJson(const PodAllocation& pod) {
  nlohmann::ordered_json j;
  j["namespace"] = pod.namespace_name;
  j["name"] = pod.name;
  j["uid"] = pod.uid;
  j["admitted"] = pod.admitted;
  j["reason"] = pod.reason;
  j["message"] = pod.message;
  j["qosClass"] = QosClassName(pod.qos);
  j["topologyHint"] = HintJson(pod.topology_hint);
  j["cpus"] = pod.cpus.String();
  j["memory"] = MemoryJson(pod.memory);
  nlohmann::ordered_json containers = nlohmann::ordered_json::array();
  for (const auto& c : pod.containers) {
    nlohmann::ordered_json cj;
    cj["name"] = c.name;
    cj["kind"] = ContainerKindName(c.kind);
    cj["cpus"] = c.cpus.String();
    cj["assignment"] = c.assignment;
    cj["memory"] = MemoryJson(c.memory);
    if (!c.devices.empty()) cj["devices"] = c.devices;
    cj["topologyHint"] = HintJson(c.topology_hint);
    containers.push_back(std::move(cj));
  }
  j["containers"] = std::move(containers);
  return j;
}

nlohmann::ordered_json AdmissionJson(const std::vector<PodAllocation>& pods,
                                     const NodePools& node) {
  nlohmann::ordered_json j;
  j["kubeletVersion"] = node.kubelet_version.empty()
                            ? nlohmann::ordered_json(nullptr)
                            : nlohmann::ordered_json(node.kubelet_version);
  j["pods"] = nlohmann::ordered_json::array();
  for (const auto& p : pods) j["pods"].push_back(PodAllocationJson(p));
  j["node"]["defaultCpuSet"] = node.default_cpu_set.String();
  j["node"]["reservedCpus"] = node.reserved_cpus.String();
  return j;
}

std::string RenderAdmissionJson(const std::vector<PodAllocation>& pods, const NodePools& node) {
  return AdmissionJson(pods, node).dump(2) + "\n";
}

std::string RenderAdmissionTable(const std::vector<PodAllocation>& pods, const NodePools& node,
                                 bool wide) {
  // Column widths adapt to the longest entry so that the table lines up at a glance.
  constexpr int kCols = 7;
  struct Row {
    std::string cols[kCols];
  };
  const int cols = wide ? kCols : kCols - 1;
  std::vector<Row> rows;
  rows.push_back({{"POD / CONTAINER", "STATUS", "QOS / KIND", "NUMA / ASSIGNMENT", "CPUS",
                   "MEMORY", "HINT / DEVICES"}});
  std::vector<std::string> notes;
  for (const auto& p : pods) {
    std::string status = p.admitted ? "Admitted" : "Rejected: " + p.reason;
    rows.push_back({{p.namespace_name + "/" + p.name, status, QosClassName(p.qos),
                     FormatHint(p.topology_hint), Or(p.cpus.String()), FormatMemory(p.memory),
                     ""}});
    for (const auto& c : p.containers) {
      std::string devices;
      for (const auto& [res, ids] : c.devices) {
        std::string list;
        for (const auto& id : ids) list += (list.empty() ? "" : ",") + id;
        devices += fmt::format(" {}={}", res, list);
      }
      std::string mem = FormatMemory(c.memory);
      std::string last = FormatHint(c.topology_hint) + devices;
      if (!wide) mem += devices;
      rows.push_back({{"  " + c.name, "", ContainerKindName(c.kind), c.assignment,
                       Or(c.cpus.String()), mem, last}});
    }
    if (!p.admitted && !p.message.empty()) {
      notes.push_back(fmt::format("{}/{}: {}", p.namespace_name, p.name, p.message));
    }
    // The pod's shared memory pool is listed on every container that shares it: summing the
    // MEMORY column would count it once per container (issue 22 item 12.13).
    std::vector<std::string> sharing;
    std::string shared_memory;
    for (const auto& c : p.containers) {
      if (c.assignment != "pod_shared" || c.memory.empty()) continue;
      sharing.push_back(c.name);
      shared_memory = FormatMemory(c.memory);
    }
    if (p.admitted && sharing.size() > 1) {
      notes.push_back(fmt::format(
          "{}/{}: MEMORY lists the pod's shared pool ({}) on each of {}; the pod's row ({}) "
          "counts it once",
          p.namespace_name, p.name, shared_memory, fmt::join(sharing, ", "),
          FormatMemory(p.memory)));
    }
  }
  size_t width[kCols] = {};
  for (const auto& r : rows) {
    for (int i = 0; i < cols; ++i) width[i] = std::max(width[i], r.cols[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (int i = 0; i < cols; ++i) {
      line += r.cols[i];
      if (i < cols - 1) line += std::string(width[i] - r.cols[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out += fmt::format("\nnode: default (shared) cpuset {}   reserved {}{}\n",
                     Or(node.default_cpu_set.String(), "(empty)"),
                     Or(node.reserved_cpus.String(), "(none)"),
                     node.kubelet_version.empty() ? "" : "   kubelet " + node.kubelet_version);
  for (const auto& n : notes) out += n + "\n";
  if (wide) {
    // The explanation of every pod this run admitted or rejected (explain/explain.h); the
    // what-if suggestions need re-runs and are left to `podtopo explain`.
    for (const auto& p : pods) {
      if (p.trace == nullptr) continue;
      out += "\n" + explain::RenderText(explain::Explain(p));
      if (!p.admitted) {
        out += "  (podtopo explain with the same flags computes the smallest change that fits)\n";
      }
    }
  }
  return out;
}

}  // namespace podtopo
