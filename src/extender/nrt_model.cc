#include "extender/nrt_model.h"

#include <algorithm>
#include <set>

#include "extender/nrt_attributes.h"
#include "fmt/format.h"
#include "memorymanager/memory_state.h"
#include "resource/quantity.h"
#include "topology/presets.h"

namespace podtopo::extender {
namespace {

struct ZoneResource {
  int64_t capacity = 0, allocatable = 0, available = 0;
};

struct Zone {
  int numa = 0;
  std::map<std::string, ZoneResource> resources;
  std::optional<CpuSet> free_cpus;  // podtopo.io/free-cpus
  std::vector<std::pair<int, uint64_t>> costs;
};

std::string Str(const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : ""; }

absl::StatusOr<int64_t> QuantityValue(const nlohmann::json& j, const std::string& where) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (!j.is_string()) {
    return absl::InvalidArgumentError(fmt::format("{}: must be a quantity string", where));
  }
  auto q = Quantity::Parse(j.get<std::string>());
  if (!q.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: \"{}\": {}", where, j.get<std::string>(), std::string(q.status().message())));
  }
  if (q->Sign() < 0) {
    return absl::InvalidArgumentError(fmt::format("{}: must not be negative", where));
  }
  return q->Value();
}

// "node-3" -> 3.
std::optional<int> ZoneNuma(const std::string& name) {
  if (name.rfind("node-", 0) != 0 || name.size() == 5 || name.size() > 9) return std::nullopt;
  int v = 0;
  for (char c : name.substr(5)) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

bool IsMemory(const std::string& name) {
  return name == "memory" || memorymanager::IsHugePageResourceName(name);
}

// The synthetic topology of an NRT without a known digest (see the header).
NodeTopology SyntheticTopology(const std::vector<Zone>& zones, const std::string& name) {
  NodeTopology t;
  t.source = "NodeResourceTopology " + name + " (synthetic)";
  int cpu = 0;
  for (const Zone& z : zones) {
    auto it = z.resources.find("cpu");
    int64_t n = it == z.resources.end() ? 0 : it->second.capacity;
    for (int64_t i = 0; i < n && cpu <= CpuSet::kMaxCpuId; ++i, ++cpu) {
      t.cpus.AddCpu(cpu, CpuInfo{z.numa, z.numa, cpu, z.numa});
    }
    NumaNode node;
    node.id = z.numa;
    for (const auto& [res, r] : z.resources) {
      if (res == "memory") {
        node.memory += static_cast<uint64_t>(r.capacity);
      } else if (memorymanager::IsHugePageResourceName(res)) {
        node.memory += static_cast<uint64_t>(r.capacity);
        node.hugepages[res] = static_cast<uint64_t>(r.capacity);
      } else if (res != "cpu") {
        for (int64_t i = 0; i < r.capacity && i < 4096; ++i) {
          t.devices.push_back({res, fmt::format("{}-numa{}-{}", res, z.numa, i), z.numa});
        }
      }
    }
    t.numa_nodes.push_back(std::move(node));
  }
  // Distances from the costs, in numa_nodes order (10 local / 20 remote when not given).
  for (auto& n : t.numa_nodes) {
    const Zone* z = nullptr;
    for (const Zone& zz : zones) {
      if (zz.numa == n.id) z = &zz;
    }
    for (const auto& m : t.numa_nodes) {
      uint64_t d = n.id == m.id ? 10 : 20;
      if (z != nullptr) {
        for (const auto& [to, c] : z->costs) {
          if (to == m.id) d = c;
        }
      }
      n.distances.push_back(d);
    }
  }
  t.cpus.SetCountsFromCpus();
  return t;
}

}  // namespace

TopologyCatalog::TopologyCatalog(const NodePool* pool) {
  for (const std::string& name : PresetNames()) {
    auto t = Preset(name);
    if (!t.ok()) continue;
    std::string digest = CpuTopologyDigest(*t);
    by_digest_.emplace(digest, std::make_shared<const NodeTopology>(std::move(*t)));
  }
  if (pool != nullptr) {
    for (const PoolEntry& e : pool->entries()) {
      by_digest_.emplace(e.digest, std::make_shared<const NodeTopology>(e.topology));
    }
  }
}

std::shared_ptr<const NodeTopology> TopologyCatalog::Find(const std::string& digest) const {
  auto it = by_digest_.find(digest);
  return it == by_digest_.end() ? nullptr : it->second;
}

absl::StatusOr<NodeSpec> ReadNrt(
    const nlohmann::json& nrt, const TopologyCatalog& catalog, const NodePool* pool,
    const std::function<absl::StatusOr<EmptyNode>(const NodeSpec&)>& empty,
    std::map<std::string, config::KubeletConfig>* config_cache) {
  if (!nrt.is_object()) return absl::InvalidArgumentError("NodeResourceTopology: not an object");
  NodeSpec spec;
  const nlohmann::json* meta = nrt.contains("metadata") ? &nrt["metadata"] : nullptr;
  if (meta == nullptr || !meta->is_object() || !meta->contains("name") ||
      Str((*meta)["name"]).empty()) {
    return absl::InvalidArgumentError("NodeResourceTopology: metadata.name: missing");
  }
  spec.name = Str((*meta)["name"]);
  const std::string what = "NodeResourceTopology " + spec.name;
  std::map<std::string, std::string> labels;
  if (meta->contains("labels") && (*meta)["labels"].is_object()) {
    for (const auto& [k, v] : (*meta)["labels"].items()) labels[k] = Str(v);
  }
  std::map<std::string, std::string> attrs;
  if (nrt.contains("attributes")) {
    if (!nrt["attributes"].is_array()) {
      return absl::InvalidArgumentError(what + ": attributes: must be a list");
    }
    for (const auto& a : nrt["attributes"]) {
      if (a.is_object() && a.contains("name")) {
        attrs[Str(a["name"])] = a.contains("value") ? Str(a["value"]) : "";
      }
    }
  }
  std::vector<Zone> zones;
  if (!nrt.contains("zones") || !nrt["zones"].is_array()) {
    return absl::InvalidArgumentError(what + ": zones: missing or not a list");
  }
  for (size_t i = 0; i < nrt["zones"].size(); ++i) {
    const auto& zj = nrt["zones"][i];
    const std::string zw = fmt::format("{}: zones[{}]", what, i);
    if (!zj.is_object()) return absl::InvalidArgumentError(zw + ": not an object");
    if (zj.contains("type") && Str(zj["type"]) != "Node") continue;
    auto numa = ZoneNuma(zj.contains("name") ? Str(zj["name"]) : "");
    if (!numa.has_value()) {
      return absl::InvalidArgumentError(zw + ".name: must be node-<NUMA id>");
    }
    Zone z;
    z.numa = *numa;
    if (zj.contains("resources") && zj["resources"].is_array()) {
      for (size_t r = 0; r < zj["resources"].size(); ++r) {
        const auto& rj = zj["resources"][r];
        const std::string rw = fmt::format("{}.resources[{}]", zw, r);
        if (!rj.is_object() || !rj.contains("name")) {
          return absl::InvalidArgumentError(rw + ".name: missing");
        }
        ZoneResource zr;
        for (auto [field, out] : {std::pair{"capacity", &zr.capacity},
                                  std::pair{"allocatable", &zr.allocatable},
                                  std::pair{"available", &zr.available}}) {
          if (!rj.contains(field)) continue;
          auto v = QuantityValue(rj[field], rw + "." + field);
          if (!v.ok()) return v.status();
          *out = *v;
        }
        if (!rj.contains("allocatable")) zr.allocatable = zr.capacity;
        z.resources[Str(rj["name"])] = zr;
      }
    }
    if (zj.contains("attributes") && zj["attributes"].is_array()) {
      for (const auto& a : zj["attributes"]) {
        if (!a.is_object() || !a.contains("name") || Str(a["name"]) != kAttrFreeCpus) continue;
        std::string v = a.contains("value") ? Str(a["value"]) : "";
        if (v == kNoFreeCpus) v = "";
        auto set = CpuSet::Parse(v);
        if (!set.ok()) {
          return absl::InvalidArgumentError(fmt::format(
              "{}.attributes {}: \"{}\": {}", zw, kAttrFreeCpus, v, std::string(set.status().message())));
        }
        z.free_cpus = *set;
      }
    }
    if (zj.contains("costs") && zj["costs"].is_array()) {
      for (const auto& c : zj["costs"]) {
        if (!c.is_object() || !c.contains("name") || !c.contains("value")) continue;
        auto to = ZoneNuma(Str(c["name"]));
        if (to.has_value() && c["value"].is_number_unsigned()) {
          z.costs.push_back({*to, c["value"].get<uint64_t>()});
        }
      }
    }
    zones.push_back(std::move(z));
  }
  if (zones.empty()) return absl::InvalidArgumentError(what + ": zones: no zone of type Node");
  // The kubelet's NUMA masks have 64 bits (bitmask.go): no node has more NUMA nodes.
  if (zones.size() > 64) {
    return absl::InvalidArgumentError(
        fmt::format("{}: zones: {} NUMA zones, more than the 64 a kubelet supports", what,
                    zones.size()));
  }
  std::sort(zones.begin(), zones.end(), [](const Zone& a, const Zone& b) { return a.numa < b.numa; });
  for (size_t i = 1; i < zones.size(); ++i) {
    if (zones[i].numa == zones[i - 1].numa) {
      return absl::InvalidArgumentError(
          fmt::format("{}: zones: node-{} appears twice", what, zones[i].numa));
    }
  }
  // A node model is quadratic in its CPUs (cpumanager's topology index): an object claiming
  // more CPUs than any machine has ("8Gi" CPUs from a buggy exporter) is refused, not modelled.
  int64_t cpus = 0;
  for (const Zone& z : zones) {
    auto it = z.resources.find("cpu");
    if (it == z.resources.end()) continue;
    cpus += std::max<int64_t>(0, std::min<int64_t>(it->second.capacity, kMaxNodeCpus + 1));
    if (cpus > kMaxNodeCpus) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: zones node-{}: cpu capacity {}: more than the {} CPUs podtopo models on a node",
          what, z.numa, it->second.capacity, kMaxNodeCpus));
    }
  }

  const PoolEntry* entry = pool != nullptr ? pool->Match(spec.name, labels) : nullptr;

  // Topology.
  const std::string digest = attrs.count(kAttrCpuTopologyDigest) ? attrs[kAttrCpuTopologyDigest] : "";
  if (!digest.empty()) spec.topology = catalog.Find(digest);
  if (spec.topology != nullptr) {
    spec.topology_key = digest;
  } else if (entry != nullptr) {
    spec.topology = std::make_shared<const NodeTopology>(entry->topology);
    spec.topology_key = entry->digest;
    spec.approximations.push_back(
        digest.empty()
            ? fmt::format("no {} attribute: topology from {} ({})", kAttrCpuTopologyDigest,
                          entry->where, entry->topology.source)
            : fmt::format("topology digest {} is no preset's nor --node-pool entry's: topology "
                          "from {} ({})", digest, entry->where, entry->topology.source));
  } else {
    auto synthetic = std::make_shared<const NodeTopology>(SyntheticTopology(zones, spec.name));
    spec.topology_key = CpuTopologyDigest(*synthetic);
    spec.topology = std::move(synthetic);
    spec.approximations.push_back(
        digest.empty() ? fmt::format("no {} attribute and no --node-pool entry: synthetic "
                                     "topology from the zones (one thread per core)",
                                     kAttrCpuTopologyDigest)
                       : fmt::format("topology digest {} is no preset's nor --node-pool "
                                     "entry's: synthetic topology from the zones (one thread "
                                     "per core)", digest));
  }
  const NodeTopology& topo = *spec.topology;

  // Configuration.
  if (attrs.count(kAttrKubeletConfig)) {
    const std::string& text = attrs[kAttrKubeletConfig];
    const config::KubeletConfig* hit = nullptr;
    if (config_cache != nullptr) {
      if (auto it = config_cache->find(text); it != config_cache->end()) hit = &it->second;
    }
    if (hit != nullptr) {
      spec.config = *hit;
    } else {
      auto c = ParseKubeletConfigAttribute(text, what);
      if (!c.ok()) return c.status();
      spec.config = std::move(*c);
      if (config_cache != nullptr && config_cache->size() < 1024) config_cache->emplace(text, spec.config);
    }
    spec.config.kubelet_version = attrs.count(kAttrKubeletVersion) ? attrs[kAttrKubeletVersion] : "";
  } else if (entry != nullptr && entry->config.has_value()) {
    spec.config = *entry->config;
    if (attrs.count(kAttrKubeletVersion)) spec.config.kubelet_version = attrs[kAttrKubeletVersion];
    spec.approximations.push_back(fmt::format("no {} attribute: kubelet configuration from {}",
                                              kAttrKubeletConfig, entry->where));
  } else {
    config::KubeletConfig& c = spec.config;
    c.topology_manager_policy =
        attrs.count("topologyManagerPolicy") ? attrs["topologyManagerPolicy"] : "none";
    c.topology_manager_scope =
        attrs.count("topologyManagerScope") ? attrs["topologyManagerScope"] : "container";
    if (topo.NumaIds().size() > 8) {
      c.topology_manager_policy_options["max-allowable-numa-nodes"] =
          std::to_string(topo.NumaIds().size());
    }
    c.kubelet_version = attrs.count(kAttrKubeletVersion) ? attrs[kAttrKubeletVersion] : "";
    c.eviction_hard.clear();
    CpuSet reserved;
    if (attrs.count(kAttrReservedCpus)) {
      auto r = CpuSet::Parse(attrs[kAttrReservedCpus]);
      if (!r.ok()) {
        return absl::InvalidArgumentError(fmt::format("{}: attributes {}: {}", what,
                                                      kAttrReservedCpus, std::string(r.status().message())));
      }
      reserved = *r;
    } else {
      for (const Zone& z : zones) {
        auto it = z.resources.find("cpu");
        if (it == z.resources.end()) continue;
        int64_t n = it->second.capacity - it->second.allocatable;
        for (int cpu : topo.cpus.CpusInNuma(z.numa).List()) {
          if (n-- <= 0) break;
          reserved.Add(cpu);
        }
      }
    }
    if (!reserved.IsEmpty()) {
      c.cpu_manager_policy = "static";
      c.reserved_system_cpus = reserved.String();
    }
    uint64_t reserved_memory = 0;
    for (const Zone& z : zones) {
      config::MemoryReservation r{z.numa, {}};
      for (const auto& [res, zr] : z.resources) {
        if (!IsMemory(res) || zr.capacity <= zr.allocatable) continue;
        r.limits[res] = Quantity::FromInt(zr.capacity - zr.allocatable, Quantity::Format::kBinarySI);
        if (res == "memory") reserved_memory += static_cast<uint64_t>(zr.capacity - zr.allocatable);
      }
      if (!r.limits.empty()) c.reserved_memory.push_back(std::move(r));
    }
    if (reserved_memory > 0) {
      c.memory_manager_policy = "Static";
      std::map<std::string, int64_t> sums;
      for (const auto& r : c.reserved_memory) {
        for (const auto& [res, q] : r.limits) sums[res] += q.Value();
      }
      for (const auto& [res, v] : sums) {
        c.system_reserved[res] = Quantity::FromInt(v, Quantity::Format::kBinarySI).String();
      }
    } else {
      c.reserved_memory.clear();
    }
    spec.approximations.push_back(fmt::format(
        "no {} attribute: kubelet configuration derived from the NRT (cpuManagerPolicy {}, "
        "memoryManagerPolicy {}, topologyManagerPolicy {}, scope {})",
        kAttrKubeletConfig, c.cpu_manager_policy, c.memory_manager_policy,
        c.topology_manager_policy, c.topology_manager_scope));
  }
  spec.config_key = KubeletConfigAttribute(spec.config) + "|" + spec.config.kubelet_version;
  spec.kubelet = spec.config.kubelet_version.empty() ? "podtopo"
                                                     : "kubelet " + spec.config.kubelet_version;

  // State: CPUs.
  auto facts = empty(spec);
  if (!facts.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: the kubelet would not start: {}", what, std::string(facts.status().message())));
  }
  if (spec.config.cpu_manager_policy == "static") {
    CpuSet allocatable = topo.cpus.AllCpus().Difference(facts->reserved_cpus);
    CpuSet free;
    bool guessed = false;
    for (const Zone& z : zones) {
      CpuSet zone_alloc = topo.cpus.CpusInNuma(z.numa).Intersection(allocatable);
      if (z.free_cpus.has_value()) {
        free.UnionWith(z.free_cpus->Intersection(zone_alloc));
        if (!z.free_cpus->IsSubsetOf(zone_alloc)) {
          spec.approximations.push_back(fmt::format(
              "zone node-{}: free CPUs {} are not all allocatable CPUs of that NUMA node",
              z.numa, z.free_cpus->String()));
        }
        continue;
      }
      auto it = z.resources.find("cpu");
      int64_t n = it == z.resources.end() ? 0 : it->second.available;
      std::vector<int> ids = zone_alloc.List();
      for (auto c = ids.rbegin(); c != ids.rend() && n > 0; ++c, --n) free.Add(*c);
      guessed = true;
    }
    if (guessed) {
      spec.approximations.push_back(fmt::format(
          "no {} attribute: a zone's free CPUs taken to be its highest-numbered allocatable CPUs",
          kAttrFreeCpus));
    }
    spec.occupied.cpus = allocatable.Difference(free);
  }

  // State: memory.
  if (spec.config.memory_manager_policy == "Static") {
    const auto* alloc = &facts->memory;
    for (const Zone& z : zones) {
      auto node = alloc->find(z.numa);
      for (const auto& [res, zr] : z.resources) {
        if (!IsMemory(res)) continue;
        uint64_t model = 0;
        if (node != alloc->end()) {
          auto t = node->second.find(res);
          if (t != node->second.end()) model = t->second;
        }
        uint64_t available = static_cast<uint64_t>(zr.available);
        if (available > model) {
          spec.approximations.push_back(fmt::format(
              "zone node-{}: {} available {} exceeds the model's allocatable {}: clamped", z.numa,
              res, available, model));
          available = model;
        }
        if (model > available) spec.occupied.memory[z.numa][res] = model - available;
      }
    }
    // Under single-numa-node every memory allocation sits on one NUMA node; under the other
    // policies some may span several, grouped in a way the NRT does not publish.
    if (!spec.occupied.memory.empty() && spec.config.topology_manager_policy != "single-numa-node") {
      spec.approximations.push_back(
          "memory held on the node may belong to multi-NUMA allocations, whose grouping the NRT "
          "does not publish: modelled as single-NUMA blocks");
    }
  }

  // State: devices.
  for (const Zone& z : zones) {
    for (const auto& [res, zr] : z.resources) {
      if (res == "cpu" || IsMemory(res)) continue;
      std::vector<std::string> ids;
      for (const Device& d : topo.devices) {
        if (d.resource == res && d.numa == z.numa) ids.push_back(d.id);
      }
      std::sort(ids.begin(), ids.end());
      int64_t held = static_cast<int64_t>(ids.size()) - zr.available;
      for (size_t i = 0; held > 0 && i < ids.size(); ++i, --held) {
        spec.occupied.devices[res].push_back(ids[i]);
      }
    }
  }

  std::string key = spec.occupied.cpus.String() + ";";
  for (const auto& [numa, types] : spec.occupied.memory) {
    for (const auto& [type, bytes] : types) key += fmt::format("{}:{}={},", numa, type, bytes);
  }
  key += ";";
  for (const auto& [res, ids] : spec.occupied.devices) {
    key += res + "=";
    for (const auto& id : ids) key += id + ",";
  }
  spec.state_key = std::move(key);
  return spec;
}

}  // namespace podtopo::extender

namespace podtopo::extender {

nlohmann::json NrtOfNode(const std::string& name, const Node& node) {
  const NodeTopology& topo = node.topology();
  const config::KubeletConfig& config = node.config();
  nlohmann::json nrt;
  nrt["apiVersion"] = "topology.node.k8s.io/v1alpha2";
  nrt["kind"] = "NodeResourceTopology";
  nrt["metadata"] = {{"name", name}};
  nrt["attributes"] = nlohmann::json::array(
      {{{"name", "topologyManagerPolicy"}, {"value", config.topology_manager_policy}},
       {{"name", "topologyManagerScope"}, {"value", config.topology_manager_scope}},
       {{"name", kAttrCpuTopologyDigest}, {"value", CpuTopologyDigest(topo)}}});
  if (!config.kubelet_version.empty()) {
    nrt["attributes"].push_back({{"name", kAttrKubeletVersion}, {"value", config.kubelet_version}});
  }
  if (auto r = config.ReservedSystemCpuSet(); r.ok() && !r->IsEmpty()) {
    nrt["attributes"].push_back({{"name", kAttrReservedCpus}, {"value", r->String()}});
  }
  nrt["attributes"].push_back(
      {{"name", kAttrKubeletConfig}, {"value", KubeletConfigAttribute(config)}});

  const CpuSet allocatable = node.AllocatableCpus();
  const CpuSet free = node.DefaultCpuSet().Intersection(allocatable);
  const auto tables = node.MemoryTables();
  std::map<std::string, std::set<std::string>> held;
  for (const PodAllocation& p : node.AdmittedPods()) {
    for (const auto& c : p.containers) {
      for (const auto& [res, ids] : c.devices) held[res].insert(ids.begin(), ids.end());
    }
  }
  auto zones = nlohmann::json::array();
  std::vector<int> ids = topo.NumaIds();
  if (ids.empty()) ids = topo.cpus.NumaNodes();
  for (size_t i = 0; i < ids.size(); ++i) {
    const int numa = ids[i];
    nlohmann::json zone;
    zone["name"] = fmt::format("node-{}", numa);
    zone["type"] = "Node";
    std::map<std::string, nlohmann::json> resources;
    auto put = [&](const std::string& res, uint64_t cap, uint64_t alloc, uint64_t avail,
                   bool bytes) {
      auto q = [&](uint64_t v) {
        return Quantity::FromInt(static_cast<int64_t>(v), bytes ? Quantity::Format::kBinarySI
                                                                : Quantity::Format::kDecimalSI)
            .String();
      };
      resources[res] = {{"name", res}, {"capacity", q(cap)}, {"allocatable", q(alloc)},
                        {"available", q(avail)}};
    };
    const CpuSet numa_cpus = topo.cpus.CpusInNuma(numa);
    const CpuSet numa_free = free.Intersection(numa_cpus);
    put("cpu", static_cast<uint64_t>(numa_cpus.Size()),
        static_cast<uint64_t>(allocatable.IntersectionSize(numa_cpus)),
        static_cast<uint64_t>(numa_free.Size()), false);
    if (const NumaNode* n = topo.FindNuma(numa)) {
      uint64_t huge = 0;
      for (const auto& [res, bytes] : n->hugepages) huge += bytes;
      std::map<std::string, uint64_t> capacity = n->hugepages;
      capacity["memory"] = n->memory > huge ? n->memory - huge : 0;
      auto t = tables.find(numa);
      for (const auto& [res, cap] : capacity) {
        uint64_t alloc = cap, avail = cap;
        if (t != tables.end()) {
          auto m = t->second.find(res);
          if (m != t->second.end()) {
            alloc = m->second.allocatable;
            avail = m->second.free;
          }
        }
        put(res, cap, alloc, avail, true);
      }
    }
    std::map<std::string, std::pair<uint64_t, uint64_t>> devices;  // res -> (all, free)
    for (const Device& d : topo.devices) {
      if (d.numa != numa) continue;
      auto& [all, avail] = devices[d.resource];
      ++all;
      if (!held[d.resource].count(d.id)) ++avail;
    }
    for (const auto& [res, n] : devices) put(res, n.first, n.first, n.second, false);
    auto list = nlohmann::json::array();
    for (auto& [res, r] : resources) list.push_back(std::move(r));
    zone["resources"] = list;
    if (const NumaNode* n = topo.FindNuma(numa); n != nullptr && !n->distances.empty()) {
      auto costs = nlohmann::json::array();
      for (size_t j = 0; j < n->distances.size() && j < topo.numa_nodes.size(); ++j) {
        costs.push_back({{"name", fmt::format("node-{}", topo.numa_nodes[j].id)},
                         {"value", n->distances[j]}});
      }
      zone["costs"] = costs;
    }
    zone["attributes"] = nlohmann::json::array(
        {{{"name", kAttrFreeCpus},
          {"value", numa_free.IsEmpty() ? std::string(kNoFreeCpus) : numa_free.String()}}});
    zones.push_back(std::move(zone));
  }
  nrt["zones"] = zones;
  return nrt;
}

}  // namespace podtopo::extender
