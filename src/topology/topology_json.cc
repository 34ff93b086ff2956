#include "topology/topology_json.h"

#include <algorithm>
#include <climits>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <set>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "topology/hugepages.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace podtopo {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxJsonBytes = size_t{64} << 20;
constexpr int kMaxDepth = 32;

// nlohmann's parser recurses per nesting level; refuse absurd nesting before it does.
std::optional<size_t> TooDeep(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

std::string Shown(const Json& j) {
  std::string s = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 40) + "...";
  return s;
}

class Reader {
 public:
  explicit Reader(std::string name) : name_(std::move(name)) {}
  absl::StatusOr<NodeTopology> Run(const std::string& text);

 private:
  absl::Status Error(const std::string& path, const std::string& msg) const {
    return absl::InvalidArgumentError(fmt::format("{}: {}: {}", name_, path, msg));
  }
  absl::Status CheckKeys(const Json& obj, const std::string& path,
                         std::initializer_list<const char*> allowed) const;
  absl::StatusOr<const Json*> Object(const Json& j, const std::string& path) const {
    if (!j.is_object()) return Error(path, fmt::format("expected an object, got {}", Shown(j)));
    return &j;
  }
  absl::StatusOr<int64_t> Int(const Json& j, const std::string& path, int64_t min,
                              int64_t max) const;
  absl::StatusOr<uint64_t> Uint(const Json& j, const std::string& path) const;
  absl::StatusOr<std::string> String(const Json& j, const std::string& path) const;

  absl::Status ReadCpus(const Json& cpus);
  absl::Status ReadNumaNodes(const Json& nodes);
  absl::Status ReadDevices(const Json& devices);

  std::string name_;
  NodeTopology out_;
  std::map<int, size_t> cpu_index_;  // cpu id -> index in "cpus"
};

absl::Status Reader::CheckKeys(const Json& obj, const std::string& path,
                               std::initializer_list<const char*> allowed) const {
  for (const auto& [key, _] : obj.items()) {
    // (An init-capture: clang 14 cannot capture a structured binding.)
    if (std::none_of(allowed.begin(), allowed.end(),
                     [&key = key](const char* a) { return key == a; })) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      std::string where = path.empty() ? key : path + "." + key;
      return Error(where, fmt::format("unknown key (expected {})", list));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Reader::Int(const Json& j, const std::string& path, int64_t min,
                                    int64_t max) const {
  int64_t v;
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(max)) {
      return Error(path, fmt::format("out of range [{}, {}]: {}", min, max, u));
    }
    v = static_cast<int64_t>(u);
  } else if (j.is_number_integer()) {
    v = j.get<int64_t>();
  } else {
    return Error(path, fmt::format("expected an integer, got {}", Shown(j)));
  }
  if (v < min || v > max) return Error(path, fmt::format("out of range [{}, {}]: {}", min, max, v));
  return v;
}

absl::StatusOr<uint64_t> Reader::Uint(const Json& j, const std::string& path) const {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer()) {
    return Error(path, fmt::format("expected an unsigned integer, got {}", Shown(j)));
  }
  return Error(path, fmt::format("expected an unsigned integer (at most {}), got {}", UINT64_MAX,
                                 Shown(j)));
}

absl::StatusOr<std::string> Reader::String(const Json& j, const std::string& path) const {
  if (!j.is_string()) return Error(path, fmt::format("expected a string, got {}", Shown(j)));
  std::string s = j.get<std::string>();
  if (s.empty()) return Error(path, "empty string");
  return s;
}

absl::Status Reader::ReadCpus(const Json& cpus) {
  if (!cpus.is_array()) return Error("cpus", fmt::format("expected an array, got {}", Shown(cpus)));
  if (cpus.empty()) return Error("cpus", "no CPUs");
  struct CoreSeen {
    size_t index;  // first entry of the core
    int socket, numa, min_thread;
  };
  std::map<int, CoreSeen> cores;
  for (size_t i = 0; i < cpus.size(); ++i) {
    std::string path = fmt::format("cpus[{}]", i);
    PODTOPO_ASSIGN_OR_RETURN(const Json* c, Object(cpus[i], path));
    PODTOPO_RETURN_IF_ERROR(CheckKeys(*c, path, {"id", "core", "socket", "numa", "uncore"}));
    for (const char* key : {"id", "core", "socket", "numa"}) {
      if (!c->contains(key)) return Error(path + "." + key, "missing");
    }
    PODTOPO_ASSIGN_OR_RETURN(int64_t id, Int((*c)["id"], path + ".id", 0, CpuSet::kMaxCpuId));
    PODTOPO_ASSIGN_OR_RETURN(int64_t core,
                             Int((*c)["core"], path + ".core", 0, CpuSet::kMaxCpuId));
    PODTOPO_ASSIGN_OR_RETURN(int64_t socket, Int((*c)["socket"], path + ".socket", -1, INT_MAX));
    PODTOPO_ASSIGN_OR_RETURN(int64_t numa, Int((*c)["numa"], path + ".numa", 0, CpuSet::kMaxCpuId));
    int64_t uncore = socket;
    if (c->contains("uncore")) {
      PODTOPO_ASSIGN_OR_RETURN(uncore, Int((*c)["uncore"], path + ".uncore", -1, INT_MAX));
    }
    auto [it, inserted] = cpu_index_.emplace(static_cast<int>(id), i);
    if (!inserted) {
      return Error(path + ".id", fmt::format("duplicate CPU {} (also cpus[{}])", id, it->second));
    }
    auto [core_it, new_core] = cores.emplace(
        static_cast<int>(core), CoreSeen{i, static_cast<int>(socket), static_cast<int>(numa),
                                         static_cast<int>(id)});
    if (!new_core) {
      CoreSeen& seen = core_it->second;
      if (seen.socket != socket) {
        return Error(path + ".socket",
                     fmt::format("core {} spans sockets {} (cpus[{}]) and {}", core, seen.socket,
                                 seen.index, socket));
      }
      if (seen.numa != numa) {
        return Error(path + ".numa", fmt::format("core {} spans NUMA nodes {} (cpus[{}]) and {}",
                                                 core, seen.numa, seen.index, numa));
      }
      seen.min_thread = std::min(seen.min_thread, static_cast<int>(id));
    }
    out_.cpus.AddCpu(static_cast<int>(id),
                     CpuInfo{.numa = static_cast<int>(numa), .socket = static_cast<int>(socket),
                             .core = static_cast<int>(core), .uncore = static_cast<int>(uncore)});
  }
  for (const auto& [core, seen] : cores) {
    if (core != seen.min_thread) {
      out_.warnings.push_back(fmt::format(
          "{}: cpus[{}].core: core {} is not the lowest thread of its core ({}); the kubelet "
          "numbers cores by their lowest thread",
          name_, seen.index, core, seen.min_thread));
    }
  }
  return absl::OkStatus();
}

absl::Status Reader::ReadNumaNodes(const Json& nodes) {
  if (!nodes.is_array()) {
    return Error("numaNodes", fmt::format("expected an array, got {}", Shown(nodes)));
  }
  std::vector<NumaNode> read;
  std::map<int, size_t> seen;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string path = fmt::format("numaNodes[{}]", i);
    PODTOPO_ASSIGN_OR_RETURN(const Json* n, Object(nodes[i], path));
    PODTOPO_RETURN_IF_ERROR(CheckKeys(*n, path, {"id", "memory", "hugepages", "distances"}));
    if (!n->contains("id")) return Error(path + ".id", "missing");
    NumaNode node;
    PODTOPO_ASSIGN_OR_RETURN(int64_t id, Int((*n)["id"], path + ".id", 0, CpuSet::kMaxCpuId));
    node.id = static_cast<int>(id);
    if (auto [it, inserted] = seen.emplace(node.id, i); !inserted) {
      return Error(path + ".id",
                   fmt::format("duplicate NUMA node {} (also numaNodes[{}])", id, it->second));
    }
    if (n->contains("memory")) {
      PODTOPO_ASSIGN_OR_RETURN(node.memory, Uint((*n)["memory"], path + ".memory"));
    }
    if (n->contains("hugepages")) {
      const Json& h = (*n)["hugepages"];
      PODTOPO_RETURN_IF_ERROR(Object(h, path + ".hugepages").status());
      for (const auto& [key, value] : h.items()) {
        std::string hpath = path + ".hugepages." + key;
        if (!HugepageSizeFromResourceName(key).has_value()) {
          return Error(hpath, "not a hugepage resource name (hugepages-2Mi, hugepages-1Gi, ...)");
        }
        PODTOPO_ASSIGN_OR_RETURN(node.hugepages[key], Uint(value, hpath));
      }
    }
    if (n->contains("distances")) {
      const Json& d = (*n)["distances"];
      if (!d.is_array()) {
        return Error(path + ".distances", fmt::format("expected an array, got {}", Shown(d)));
      }
      if (!d.empty() && d.size() != nodes.size()) {
        return Error(path + ".distances", fmt::format("{} entries for {} NUMA nodes", d.size(),
                                                      nodes.size()));
      }
      for (size_t k = 0; k < d.size(); ++k) {
        PODTOPO_ASSIGN_OR_RETURN(uint64_t v, Uint(d[k], fmt::format("{}.distances[{}]", path, k)));
        node.distances.push_back(v);
      }
    }
    read.push_back(std::move(node));
  }
  // Sort by id; distances[k] refers to the k-th entry as written, so permute the columns too.
  std::vector<size_t> order(read.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return read[a].id < read[b].id; });
  for (size_t i : order) {
    NumaNode node = read[i];
    if (!node.distances.empty()) {
      std::vector<uint64_t> permuted;
      for (size_t k : order) permuted.push_back(read[i].distances[k]);
      node.distances = std::move(permuted);
    }
    out_.numa_nodes.push_back(std::move(node));
  }
  return absl::OkStatus();
}

absl::Status Reader::ReadDevices(const Json& devices) {
  if (!devices.is_array()) {
    return Error("devices", fmt::format("expected an array, got {}", Shown(devices)));
  }
  std::map<std::pair<std::string, std::string>, size_t> seen;
  for (size_t i = 0; i < devices.size(); ++i) {
    std::string path = fmt::format("devices[{}]", i);
    PODTOPO_ASSIGN_OR_RETURN(const Json* d, Object(devices[i], path));
    PODTOPO_RETURN_IF_ERROR(CheckKeys(*d, path, {"resource", "id", "numa"}));
    for (const char* key : {"resource", "id"}) {
      if (!d->contains(key)) return Error(path + "." + key, "missing");
    }
    Device dev;
    PODTOPO_ASSIGN_OR_RETURN(dev.resource, String((*d)["resource"], path + ".resource"));
    PODTOPO_ASSIGN_OR_RETURN(dev.id, String((*d)["id"], path + ".id"));
    if (d->contains("numa")) {
      PODTOPO_ASSIGN_OR_RETURN(int64_t numa,
                               Int((*d)["numa"], path + ".numa", -1, CpuSet::kMaxCpuId));
      dev.numa = static_cast<int>(numa);
      if (dev.numa >= 0 && out_.FindNuma(dev.numa) == nullptr) {
        return Error(path + ".numa", fmt::format("NUMA node {} does not exist", dev.numa));
      }
    }
    if (auto [it, inserted] = seen.emplace(std::make_pair(dev.resource, dev.id), i); !inserted) {
      return Error(path + ".id", fmt::format("duplicate device {} of {} (also devices[{}])",
                                             dev.id, dev.resource, it->second));
    }
    out_.devices.push_back(std::move(dev));
  }
  return absl::OkStatus();
}

absl::StatusOr<NodeTopology> Reader::Run(const std::string& text) {
  out_.source = name_;
  if (auto at = TooDeep(text)) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: invalid JSON: nested deeper than {} levels at byte {}", name_, kMaxDepth, *at));
  }
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> from "parse".
    if (size_t close = what.find("] "); what.rfind("[json.", 0) == 0 && close != std::string::npos) {
      what = what.substr(close + 2);
    }
    return absl::InvalidArgumentError(fmt::format("{}: invalid JSON: {}", name_, what));
  }
  if (!root.is_object()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: expected a JSON object at the top level, got {}", name_, Shown(root)));
  }
  PODTOPO_RETURN_IF_ERROR(CheckKeys(root, "", {"cpus", "numaNodes", "devices"}));
  if (!root.contains("cpus")) return Error("cpus", "missing");
  PODTOPO_RETURN_IF_ERROR(ReadCpus(root["cpus"]));
  if (root.contains("numaNodes")) {
    PODTOPO_RETURN_IF_ERROR(ReadNumaNodes(root["numaNodes"]));
    for (const auto& [cpu, index] : cpu_index_) {
      int numa = out_.cpus.Info(cpu)->numa;
      if (out_.FindNuma(numa) == nullptr) {
        return Error(fmt::format("cpus[{}].numa", index),
                     fmt::format("NUMA node {} is not in numaNodes", numa));
      }
    }
  } else {
    for (int id : out_.cpus.NumaNodes()) out_.numa_nodes.push_back(NumaNode{.id = id, .hugepages = {}, .distances = {}});
  }
  if (root.contains("devices")) PODTOPO_RETURN_IF_ERROR(ReadDevices(root["devices"]));
  out_.cpus.SetCountsFromCpus();
  return std::move(out_);
}

}  // namespace

absl::StatusOr<NodeTopology> ReadTopologyJson(const std::string& text, const std::string& name) {
  return Reader(name).Run(text);
}

absl::StatusOr<NodeTopology> ReadTopologyJsonFile(const std::string& path) {
  PODTOPO_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, kMaxJsonBytes));
  return ReadTopologyJson(text, path == "-" ? "<stdin>" : path);
}

namespace {

// `{"a": 1, "b": [1, 2]}`: one line, a space after each colon and comma, keys in the order
// given. Values are JSON text already.
std::string Entry(const std::vector<std::pair<const char*, std::string>>& fields) {
  std::string out = "{";
  for (size_t i = 0; i < fields.size(); ++i) {
    out += fmt::format("{}\"{}\": {}", i == 0 ? "" : ", ", fields[i].first, fields[i].second);
  }
  return out + "}";
}

std::string Quoted(const std::string& s) {
  return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Array(const std::vector<std::string>& lines) {
  std::string out = "[";
  for (size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? "\n    " : ",\n    ") + lines[i];
  return out + (lines.empty() ? "]" : "\n  ]");
}

}  // namespace

std::string WriteTopologyJson(const NodeTopology& node) {
  std::vector<std::string> cpus;
  node.cpus.AllCpus().ForEach([&](int cpu) {
    const CpuInfo* i = node.cpus.Info(cpu);
    cpus.push_back(Entry({{"id", std::to_string(cpu)},
                          {"core", std::to_string(i->core)},
                          {"socket", std::to_string(i->socket)},
                          {"numa", std::to_string(i->numa)},
                          {"uncore", std::to_string(i->uncore)}}));
  });
  std::vector<NumaNode> nodes = node.numa_nodes;
  if (nodes.empty()) {
    for (int id : node.cpus.NumaNodes()) nodes.push_back(NumaNode{.id = id, .hugepages = {}, .distances = {}});
  }
  // Sort by id, permuting distance columns along.
  std::vector<size_t> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return nodes[a].id < nodes[b].id; });
  std::vector<std::string> numa;
  for (size_t i : order) {
    const NumaNode& n = nodes[i];
    std::string hugepages = "{";
    for (const auto& [name, bytes] : n.hugepages) {
      hugepages += fmt::format("{}{}: {}", hugepages.size() > 1 ? ", " : "", Quoted(name), bytes);
    }
    hugepages += "}";
    std::string distances = "[";
    if (n.distances.size() == nodes.size()) {
      for (size_t k : order) {
        distances += fmt::format("{}{}", distances.size() > 1 ? ", " : "", n.distances[k]);
      }
    }
    distances += "]";
    numa.push_back(Entry({{"id", std::to_string(n.id)},
                          {"memory", std::to_string(n.memory)},
                          {"hugepages", hugepages},
                          {"distances", distances}}));
  }
  std::string out = "{\n  \"cpus\": " + Array(cpus) + ",\n  \"numaNodes\": " + Array(numa);
  if (!node.devices.empty()) {
    std::vector<Device> devices = node.devices;
    std::stable_sort(devices.begin(), devices.end(), [](const Device& a, const Device& b) {
      return std::tie(a.resource, a.id) < std::tie(b.resource, b.id);
    });
    std::vector<std::string> lines;
    for (const Device& d : devices) {
      std::vector<std::pair<const char*, std::string>> fields = {{"resource", Quoted(d.resource)},
                                                                 {"id", Quoted(d.id)}};
      if (d.numa >= 0) fields.emplace_back("numa", std::to_string(d.numa));
      lines.push_back(Entry(fields));
    }
    out += ",\n  \"devices\": " + Array(lines);
  }
  return out + "\n}\n";
}

}  // namespace podtopo
