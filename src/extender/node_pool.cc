#include "extender/node_pool.h"

#include <fnmatch.h>

#include <filesystem>

#include "extender/nrt_attributes.h"
#include "fmt/format.h"
#include "topology/node_source.h"
#include "util/file.h"
#include "yaml-cpp/yaml.h"

namespace podtopo::extender {
namespace {

std::string Resolve(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || dir.empty()) return path;
  return (std::filesystem::path(dir) / path).string();
}

// A --node SPEC with its file part resolved against the pool's directory.
std::string ResolveSpec(const std::string& dir, const std::string& spec) {
  if (spec.rfind("preset:", 0) == 0 || spec == "local" || spec == "-") return spec;
  if (spec.rfind("sysfs:", 0) == 0) return "sysfs:" + Resolve(dir, spec.substr(6));
  return Resolve(dir, spec);
}

absl::StatusOr<std::string> Scalar(const YAML::Node& n, const std::string& where,
                                   const char* field) {
  if (!n.IsScalar()) {
    return absl::InvalidArgumentError(fmt::format("{}: {}: must be a string", where, field));
  }
  return n.Scalar();
}

}  // namespace

absl::StatusOr<NodePool> NodePool::Load(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  return Parse(*text, path);
}

absl::StatusOr<NodePool> NodePool::Parse(const std::string& text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}:{}: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  if (!root.IsSequence()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: must be a YAML list of node entries (nodes, labels, node, config)", path));
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  NodePool pool;
  int index = 0;
  for (const YAML::Node& item : root) {
    ++index;
    PoolEntry e;
    e.where = fmt::format("{}: entry {}", path, index);
    if (!item.IsMap()) return absl::InvalidArgumentError(e.where + ": must be a map");
    std::string spec, config_path, version;
    for (const auto& kv : item) {
      const std::string key = kv.first.as<std::string>("");
      if (key == "nodes") {
        auto v = Scalar(kv.second, e.where, "nodes");
        if (!v.ok()) return v.status();
        e.nodes_glob = *v;
      } else if (key == "labels") {
        if (!kv.second.IsMap()) {
          return absl::InvalidArgumentError(e.where + ": labels: must be a map of strings");
        }
        for (const auto& l : kv.second) {
          auto v = Scalar(l.second, e.where, "labels");
          if (!v.ok()) return v.status();
          e.labels[l.first.as<std::string>("")] = *v;
        }
      } else if (key == "node") {
        auto v = Scalar(kv.second, e.where, "node");
        if (!v.ok()) return v.status();
        spec = *v;
      } else if (key == "config") {
        auto v = Scalar(kv.second, e.where, "config");
        if (!v.ok()) return v.status();
        config_path = *v;
      } else if (key == "kubeletVersion") {
        auto v = Scalar(kv.second, e.where, "kubeletVersion");
        if (!v.ok()) return v.status();
        version = *v;
      } else {
        return absl::InvalidArgumentError(fmt::format(
            "{}: unknown field \"{}\" (known: nodes, labels, node, config, kubeletVersion)",
            e.where, key));
      }
    }
    if (spec.empty()) return absl::InvalidArgumentError(e.where + ": node: missing");
    auto topology = LoadNode(ResolveSpec(dir, spec));
    if (!topology.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: node: {}", e.where, std::string(topology.status().message())));
    }
    e.topology = std::move(*topology);
    e.digest = CpuTopologyDigest(e.topology);
    if (!config_path.empty()) {
      auto parsed = config::LoadKubeletConfig(Resolve(dir, config_path));
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            fmt::format("{}: config: {}", e.where, std::string(parsed.status().message())));
      }
      if (config::HasErrors(parsed->findings)) {
        return absl::InvalidArgumentError(fmt::format(
            "{}: config: {}", e.where, std::string(config::ErrorsToStatus(parsed->findings).message())));
      }
      e.config = std::move(parsed->config);
    }
    if (!version.empty()) {
      if (!kubelet::ParseKubeletVersion(version).ok()) {
        return absl::InvalidArgumentError(fmt::format(
            "{}: kubeletVersion: {}", e.where,
            std::string(kubelet::ParseKubeletVersion(version).status().message())));
      }
      if (!e.config.has_value()) e.config.emplace();
      e.config->kubelet_version = version;
    }
    pool.entries_.push_back(std::move(e));
  }
  return pool;
}

const PoolEntry* NodePool::Match(const std::string& node,
                                 const std::map<std::string, std::string>& labels) const {
  for (const PoolEntry& e : entries_) {
    if (e.nodes_glob.empty() && e.labels.empty()) continue;  // digest-only entry
    if (!e.nodes_glob.empty() && fnmatch(e.nodes_glob.c_str(), node.c_str(), 0) != 0) continue;
    bool ok = true;
    for (const auto& [k, v] : e.labels) {
      auto it = labels.find(k);
      if (it == labels.end() || it->second != v) ok = false;
    }
    if (ok) return &e;
  }
  return nullptr;
}

}  // namespace podtopo::extender
