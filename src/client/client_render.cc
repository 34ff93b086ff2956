#include "client/client_render.h"

#include <algorithm>

#include "fmt/format.h"
#include "render/admission_render.h"

namespace podtopo::client {
namespace {

using Json = nlohmann::ordered_json;

// Columns separated by two spaces, each as wide as its widest cell; no trailing blanks.
std::string Columns(const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line = indent;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string NumaKey(const std::vector<int64_t>& numa) {
  if (numa.empty()) return "?";
  std::vector<std::string> ids;
  for (auto id : numa) ids.push_back(std::to_string(id));
  return Join(ids, "+");
}

std::string CpusCell(const CpuSet& cpus) {
  if (cpus.IsEmpty()) return "-";
  return fmt::format("{} ({})", cpus.String(), cpus.Size());
}

std::string BlockText(const MemoryBlock& b) {
  std::string text = fmt::format("{}={}", b.type, FormatBytes(b.size));
  if (!b.numa.empty()) text += "@" + NumaKey(b.numa);
  return text;
}

std::string BlocksCell(const std::vector<MemoryBlock>& blocks) {
  if (blocks.empty()) return "-";
  std::vector<std::string> parts;
  for (const auto& b : blocks) parts.push_back(BlockText(b));
  return Join(parts, ",");
}

std::string MemoryCell(const std::map<std::string, uint64_t>& memory) {
  if (memory.empty()) return "-";
  std::vector<std::string> parts;
  for (const auto& [type, bytes] : memory)
    parts.push_back(fmt::format("{}={}", type, FormatBytes(bytes)));
  return Join(parts, ",");
}

// "0: 4 CPUs, memory=4Gi; 1: 2 CPUs"
std::string NumaCell(const std::vector<NumaTotals>& numa) {
  if (numa.empty()) return "-";
  std::vector<std::string> parts;
  for (const auto& t : numa) {
    std::vector<std::string> what;
    if (!t.cpus.IsEmpty())
      what.push_back(fmt::format("{} CPU{}", t.cpus.Size(), t.cpus.Size() == 1 ? "" : "s"));
    for (const auto& [type, bytes] : t.memory)
      what.push_back(fmt::format("{}={}", type, FormatBytes(bytes)));
    parts.push_back(fmt::format("{}: {}", NumaKey(t.numa), Join(what, " ")));
  }
  return Join(parts, "; ");
}

std::string Level(const PodView& pod) {
  if (pod.pod_level) return "pod";
  bool legacy = false, any = false;
  for (const auto& c : pod.containers) {
    legacy |= c.pool == Pool::kLegacyShared;
    any |= c.pool == Pool::kExclusive || c.pool == Pool::kLegacyShared;
  }
  if (legacy) return "legacy";
  return any ? "container" : "none";
}

std::string ExclusiveCell(const PodView& pod) {
  std::vector<std::string> parts;
  for (const auto& c : pod.containers) {
    if (c.pool != Pool::kExclusive) continue;
    parts.push_back(c.reported_cpus.IsEmpty() ? c.name + "=memory"
                                              : c.name + "=" + c.reported_cpus.String());
  }
  return parts.empty() ? "-" : Join(parts, ",");
}

std::string DevicesCell(const ContainerView& c) {
  std::vector<std::string> parts;
  for (const auto& d : c.devices) {
    std::string text = d.resource + "=" + Join(d.ids, ",");
    if (!d.numa.empty()) text += "@" + NumaKey(d.numa);
    parts.push_back(text);
  }
  for (const auto& claim : c.claims) {
    parts.push_back(fmt::format("claim {}/{}{}{}", claim.namespace_, claim.name,
                                claim.devices.empty() ? "" : "=", Join(claim.devices, ",")));
  }
  return parts.empty() ? "-" : Join(parts, " ");
}

std::string ContainerCpus(const PodView& pod, const ContainerView& c) {
  switch (c.pool) {
    case Pool::kExclusive:
      return c.reported_cpus.IsEmpty() ? "(node shared pool)" : c.reported_cpus.String();
    case Pool::kPodShared:
      return c.cpus.IsEmpty() ? "(pod shared pool: empty)" : c.cpus.String() + " (pod shared pool)";
    case Pool::kLegacyShared:
      return c.reported_cpus.String() + " (shared, pre-1.37 report)";
    case Pool::kNodeShared:
      return "(node shared pool)";
  }
  return "-";
}

Json Cpus(const CpuSet& cpus) { return cpus.String(); }

Json NumaNodes(const std::vector<int64_t>& numa) { return Json(numa); }

Json BlockJson(const MemoryBlock& b) {
  return Json{{"memoryType", b.type}, {"size", b.size}, {"numaNodes", NumaNodes(b.numa)}};
}

Json BlocksJson(const std::vector<MemoryBlock>& blocks) {
  Json arr = Json::array();
  for (const auto& b : blocks) arr.push_back(BlockJson(b));
  return arr;
}

Json MemoryJson(const std::map<std::string, uint64_t>& memory) {
  Json obj = Json::object();
  for (const auto& [type, bytes] : memory) obj[type] = bytes;
  return obj;
}

Json NumaJson(const std::vector<NumaTotals>& numa) {
  Json arr = Json::array();
  for (const auto& t : numa) {
    arr.push_back(Json{{"numaNodes", NumaNodes(t.numa)},
                       {"cpus", Cpus(t.cpus)},
                       {"cpuCount", t.cpus.Size()},
                       {"memory", MemoryJson(t.memory)}});
  }
  return arr;
}

Json DevicesJson(const std::vector<DeviceView>& devices) {
  Json arr = Json::array();
  for (const auto& d : devices) {
    arr.push_back(Json{{"resourceName", d.resource}, {"deviceIds", d.ids}, {"numaNodes", d.numa}});
  }
  return arr;
}

Json Warnings(const std::vector<std::string>& w) { return Json(w); }

}  // namespace

std::string RenderPodDetail(const PodView& pod) {
  std::string out = fmt::format("{}/{}  ", pod.namespace_, pod.name);
  if (pod.pod_level) {
    out += fmt::format("pod-level allocation: CPUs {}, memory {}\n", CpusCell(pod.pod_cpus),
                       BlocksCell(pod.pod_memory));
  } else {
    out += Level(pod) == "none" ? "no exclusive resources\n" : "container-level allocations only\n";
  }
  std::vector<std::vector<std::string>> rows = {{"CONTAINER", "POOL", "CPUS", "MEMORY", "DEVICES"}};
  for (const auto& c : pod.containers) {
    rows.push_back(
        {c.name, PoolName(c.pool), ContainerCpus(pod, c), BlocksCell(c.memory), DevicesCell(c)});
  }
  out += Columns(rows, "  ");
  std::vector<std::string> summary;
  if (!pod.shared_pool.IsEmpty() || pod.pod_level) {
    summary.push_back("shared pool " + CpusCell(pod.shared_pool));
  }
  summary.push_back(fmt::format("node usage: CPUs {}, memory {}", CpusCell(pod.usage_cpus),
                                MemoryCell(pod.usage_memory)));
  summary.push_back("NUMA " + NumaCell(pod.numa));
  out += "  " + Join(summary, "   ") + "\n";
  return out;
}

std::string RenderPodsTable(const std::vector<PodView>& pods, const NodeUsage& usage,
                            const AllocatableView* allocatable, bool wide) {
  std::string out;
  if (wide) {
    for (const auto& p : pods) out += RenderPodDetail(p) + "\n";
  } else {
    std::vector<std::vector<std::string>> rows = {{"NAMESPACE", "NAME", "LEVEL", "CPUS",
                                                   "SHARED POOL", "EXCLUSIVE CONTAINERS", "MEMORY",
                                                   "NUMA"}};
    for (const auto& p : pods) {
      rows.push_back({p.namespace_, p.name, Level(p), CpusCell(p.usage_cpus),
                      p.shared_pool.IsEmpty() ? "-" : p.shared_pool.String(), ExclusiveCell(p),
                      MemoryCell(p.usage_memory), NumaCell(p.numa)});
    }
    if (pods.empty()) {
      out += "no pods\n";
    } else {
      out += Columns(rows, "");
    }
  }
  std::string node = fmt::format("node: {} pod{}, exclusive CPUs {}", pods.size(),
                                 pods.size() == 1 ? "" : "s", CpusCell(usage.cpus));
  if (allocatable != nullptr) {
    node += fmt::format(" of {} allocatable", allocatable->cpus.Size());
  }
  node += fmt::format(", memory {}", MemoryCell(usage.memory));
  if (!usage.numa.empty()) node += "; NUMA " + NumaCell(usage.numa);
  out += node + "\n";
  return out;
}

std::string RenderAllocatableTable(const AllocatableView& a) {
  std::string out = fmt::format("allocatable CPUs {}\n", CpusCell(a.cpus));
  std::vector<std::vector<std::string>> rows = {{"NUMA", "CPUS", "MEMORY"}};
  for (const auto& t : a.numa) {
    rows.push_back({NumaKey(t.numa), CpusCell(t.cpus), MemoryCell(t.memory)});
  }
  if (!a.numa.empty()) out += Columns(rows, "");
  if (!a.devices.empty()) {
    std::vector<std::vector<std::string>> dev = {{"RESOURCE", "DEVICES", "NUMA"}};
    for (const auto& d : a.devices) {
      dev.push_back({d.resource, Join(d.ids, ","), d.numa.empty() ? "-" : NumaKey(d.numa)});
    }
    out += Columns(dev, "");
  }
  return out;
}

nlohmann::ordered_json PodJson(const PodView& pod) {
  Json containers = Json::array();
  for (const auto& c : pod.containers) {
    Json claims = Json::array();
    for (const auto& cl : c.claims) {
      claims.push_back(
          Json{{"claimName", cl.name}, {"claimNamespace", cl.namespace_}, {"devices", cl.devices}});
    }
    containers.push_back(Json{{"name", c.name},
                              {"pool", PoolName(c.pool)},
                              {"reportedCpus", Cpus(c.reported_cpus)},
                              {"cpus", Cpus(c.cpus)},
                              {"memory", BlocksJson(c.memory)},
                              {"devices", DevicesJson(c.devices)},
                              {"dynamicResources", claims}});
  }
  return Json{{"namespace", pod.namespace_},
              {"name", pod.name},
              {"level", Level(pod)},
              {"podLevel", pod.pod_level},
              {"podCpus", Cpus(pod.pod_cpus)},
              {"podMemory", BlocksJson(pod.pod_memory)},
              {"exclusiveContainerCpus", Cpus(pod.exclusive_container_cpus)},
              {"sharedPoolCpus", Cpus(pod.shared_pool)},
              {"containers", containers},
              {"usage", Json{{"cpus", Cpus(pod.usage_cpus)},
                             {"cpuCount", pod.usage_cpus.Size()},
                             {"memory", MemoryJson(pod.usage_memory)}}},
              {"numa", NumaJson(pod.numa)},
              {"warnings", Warnings(pod.warnings)}};
}

nlohmann::ordered_json ListJson(const std::vector<PodView>& pods, const NodeUsage& usage,
                                const AllocatableView* allocatable) {
  Json arr = Json::array();
  for (const auto& p : pods) arr.push_back(PodJson(p));
  Json node{{"usage", Json{{"cpus", Cpus(usage.cpus)},
                           {"cpuCount", usage.cpus.Size()},
                           {"memory", MemoryJson(usage.memory)}}},
            {"numa", NumaJson(usage.numa)},
            {"allocatable", allocatable == nullptr ? Json(nullptr) : AllocatableJson(*allocatable)},
            {"warnings", Warnings(usage.warnings)}};
  return Json{{"pods", arr}, {"node", node}};
}

nlohmann::ordered_json AllocatableJson(const AllocatableView& a) {
  return Json{{"cpus", Cpus(a.cpus)},           {"cpuCount", a.cpus.Size()},
              {"memory", BlocksJson(a.memory)}, {"devices", DevicesJson(a.devices)},
              {"numa", NumaJson(a.numa)},       {"warnings", Warnings(a.warnings)}};
}

}  // namespace podtopo::client
