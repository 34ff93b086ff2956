#include "topology/hwloc_import.h"

#include <hwloc.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "fmt/format.h"
#include "topology/hugepages.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace podtopo {
namespace {

constexpr size_t kMaxXmlBytes = size_t{256} << 20;

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
  absl::Status ReadNumaNodes();
  absl::StatusOr<int> NumaOf(hwloc_obj_t pu, unsigned cpu) const;
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

absl::StatusOr<int> Importer::NumaOf(hwloc_obj_t pu, unsigned cpu) const {
  hwloc_obj_t any = nullptr;
  for (hwloc_obj_t numa : numa_objs_) {
    if (numa->cpuset == nullptr || !hwloc_bitmap_isset(numa->cpuset, cpu)) continue;
    if (numa->subtype == nullptr || numa->subtype[0] == '\0') return static_cast<int>(numa->os_index);
    if (any == nullptr) any = numa;
  }
  if (any != nullptr) return static_cast<int>(any->os_index);
  return Error(fmt::format("{}: no NUMANode holds P#{}", Label(pu), cpu));
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
  for (int i = 0; i < npu; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    PODTOPO_ASSIGN_OR_RETURN(int cpu, Index(pu, CpuSet::kMaxCpuId));
    if (out_.cpus.Info(cpu) != nullptr) {
      return Error(fmt::format("{}: second PU with os_index {}", Label(pu), cpu));
    }
    PODTOPO_ASSIGN_OR_RETURN(int numa, NumaOf(pu, static_cast<unsigned>(cpu)));
    Pending p{.cpu = static_cast<unsigned>(cpu),
              .pu = pu,
              .core = hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_CORE, pu),
              .package = hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_PACKAGE, pu),
              .l3 = hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_L3CACHE, pu),
              .numa = numa};
    pending.push_back(p);
    ++pus_per_numa[numa];
    out_.cpus.AddCpu(cpu, CpuInfo{.numa = numa});  // placeholder for the duplicate check
  }
  for (const Pending& p : pending) {
    int socket = 0;
    if (p.package != nullptr) {
      socket = p.package->os_index != HWLOC_UNKNOWN_INDEX && p.package->os_index <= INT_MAX
                   ? static_cast<int>(p.package->os_index)
                   : static_cast<int>(p.package->logical_index);
    }
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
  ReadDistances();
  return std::move(out_);
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

absl::StatusOr<NodeTopology> ImportHwlocXml(const std::string& path) {
  PODTOPO_ASSIGN_OR_RETURN(std::string xml, ReadSmallFile(path, kMaxXmlBytes));
  return ImportHwlocXmlText(xml, path);
}

}  // namespace podtopo
