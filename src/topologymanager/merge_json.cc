#include "topologymanager/merge_json.h"

#include <algorithm>
#include <set>
#include <utility>

#include "fmt/format.h"

namespace podtopo::topologymanager {
namespace {

using nlohmann::json;

absl::Status Error(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", path, what));
}

std::string TypeName(const json& j) {
  if (j.is_number_integer()) return "integer";
  if (j.is_number_float()) return "number";
  return j.type_name();  // null, boolean, string, array, object
}

std::string Key(const std::string& path, const std::string& key) {
  std::string quoted = json(key).dump();
  return fmt::format("{}[{}]", path, quoted);
}

std::string Index(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }

std::string Field(const std::string& path, const char* field) {
  return path.empty() ? field : fmt::format("{}.{}", path, field);
}

std::string IdList(const std::vector<int>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out + "]";
}

// A NUMA node id: an integer in 0..63.
absl::StatusOr<int> ParseNodeId(const json& j, const std::string& path) {
  if (!j.is_number_integer()) {
    return Error(path, fmt::format("expected a NUMA node id (integer), got {}", TypeName(j)));
  }
  if (j.is_number_unsigned() ? j.get<uint64_t>() > 63 : (j.get<int64_t>() < 0 ||
                                                         j.get<int64_t>() > 63)) {
    return Error(path, fmt::format("NUMA node id {} is out of range 0-63", j.dump()));
  }
  return j.get<int>();
}

absl::StatusOr<std::string> OptionValue(const json& j, const std::string& path) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_boolean()) return std::string(j.get<bool>() ? "true" : "false");
  if (j.is_number_integer()) return j.dump();
  return Error(path, fmt::format("expected a string, boolean or integer, got {}", TypeName(j)));
}

absl::StatusOr<TopologyHint> ParseHint(const json& j, const std::string& path,
                                       const std::set<int>& nodes,
                                       const std::vector<int>& node_list) {
  if (!j.is_object()) {
    return Error(path, fmt::format("expected a hint object {{\"affinity\": [...], "
                                   "\"preferred\": bool}}, got {}",
                                   TypeName(j)));
  }
  TopologyHint hint;
  for (const auto& [key, value] : j.items()) {
    if (key == "affinity") {
      const std::string apath = Field(path, "affinity");
      if (value.is_null()) continue;
      if (!value.is_array()) {
        return Error(apath, fmt::format("expected an array of NUMA node ids or null, got {}",
                                        TypeName(value)));
      }
      BitMask mask;
      for (size_t i = 0; i < value.size(); ++i) {
        absl::StatusOr<int> id = ParseNodeId(value[i], Index(apath, i));
        if (!id.ok()) return id.status();
        if (nodes.count(*id) == 0) {
          return Error(Index(apath, i), fmt::format("NUMA node {} is not in numaNodes {}", *id,
                                                    IdList(node_list)));
        }
        mask.Or(BitMask::FromUint64(uint64_t{1} << *id));
      }
      hint.affinity = mask;
    } else if (key == "preferred") {
      if (!value.is_boolean()) {
        return Error(Field(path, "preferred"),
                     fmt::format("expected true or false, got {}", TypeName(value)));
      }
      hint.preferred = value.get<bool>();
    } else {
      return Error(path, fmt::format("unknown field \"{}\" (a hint has \"affinity\" and "
                                     "\"preferred\")",
                                     key));
    }
  }
  return hint;
}

}  // namespace

absl::StatusOr<MergeRequest> ParseMergeRequest(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(fmt::format("merge-hints input: invalid JSON: {}", e.what()));
  }
  return MergeRequestFromJson(doc);
}

absl::StatusOr<MergeRequest> MergeRequestFromJson(const json& doc) {
  if (!doc.is_object()) {
    return absl::InvalidArgumentError(
        fmt::format("merge-hints input: expected a JSON object, got {}", TypeName(doc)));
  }
  static const std::set<std::string> kFields = {"policy", "options", "numaNodes", "distances",
                                                "providers"};
  for (const auto& [key, value] : doc.items()) {
    if (kFields.count(key) == 0) {
      return absl::InvalidArgumentError(fmt::format(
          "merge-hints input: unknown field \"{}\" (expected policy, options, numaNodes, "
          "distances, providers)",
          key));
    }
  }
  MergeRequest request;

  if (doc.contains("policy") && !doc["policy"].is_null()) {
    if (!doc["policy"].is_string()) {
      return Error("policy", fmt::format("expected a string, got {}", TypeName(doc["policy"])));
    }
    request.policy = doc["policy"].get<std::string>();
  }

  if (doc.contains("options") && !doc["options"].is_null()) {
    const json& options = doc["options"];
    if (!options.is_object()) {
      return Error("options", fmt::format("expected an object, got {}", TypeName(options)));
    }
    for (const auto& [key, value] : options.items()) {
      absl::StatusOr<std::string> text = OptionValue(value, Key("options", key));
      if (!text.ok()) return text.status();
      request.options[key] = *text;
    }
  }

  if (!doc.contains("numaNodes") || doc["numaNodes"].is_null()) {
    return Error("numaNodes", "missing (the machine's NUMA node ids, e.g. [0, 1])");
  }
  const json& numa_nodes = doc["numaNodes"];
  if (!numa_nodes.is_array()) {
    return Error("numaNodes",
                 fmt::format("expected an array of NUMA node ids, got {}", TypeName(numa_nodes)));
  }
  std::set<int> nodes;
  for (size_t i = 0; i < numa_nodes.size(); ++i) {
    absl::StatusOr<int> id = ParseNodeId(numa_nodes[i], Index("numaNodes", i));
    if (!id.ok()) return id.status();
    if (!nodes.insert(*id).second) {
      return Error(Index("numaNodes", i), fmt::format("NUMA node {} is listed twice", *id));
    }
    request.numa_nodes.push_back(*id);
  }

  if (doc.contains("distances") && !doc["distances"].is_null()) {
    const json& distances = doc["distances"];
    const size_t n = request.numa_nodes.size();
    if (!distances.is_array()) {
      return Error("distances", fmt::format("expected an array of rows (one per numaNodes "
                                            "entry), got {}",
                                            TypeName(distances)));
    }
    if (distances.size() != n) {
      return Error("distances", fmt::format("expected {} rows (one per numaNodes entry), got {}",
                                            n, distances.size()));
    }
    std::vector<std::vector<uint64_t>> rows;
    for (size_t i = 0; i < n; ++i) {
      const json& row = distances[i];
      const std::string rpath = Index("distances", i);
      if (!row.is_array() || row.size() != n) {
        return Error(rpath, fmt::format("expected an array of {} distances, got {}", n,
                                        row.is_array() ? std::to_string(row.size()) + " entries"
                                                       : TypeName(row)));
      }
      std::vector<uint64_t> values;
      for (size_t j = 0; j < n; ++j) {
        const json& d = row[j];
        if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<int64_t>() >= 0)) {
          return Error(Index(rpath, j), fmt::format("expected a non-negative integer, got {}",
                                                    d.is_number() ? d.dump() : TypeName(d)));
        }
        values.push_back(d.get<uint64_t>());
      }
      rows.push_back(std::move(values));
    }
    request.distances = std::move(rows);
  }

  if (doc.contains("providers") && !doc["providers"].is_null()) {
    const json& providers = doc["providers"];
    if (!providers.is_array()) {
      return Error("providers",
                   fmt::format("expected an array of providers, got {}", TypeName(providers)));
    }
    for (size_t p = 0; p < providers.size(); ++p) {
      const json& provider = providers[p];
      const std::string ppath = Index("providers", p);
      if (provider.is_null()) {
        request.providers.push_back(std::nullopt);
        continue;
      }
      if (!provider.is_object()) {
        return Error(ppath, fmt::format("expected an object mapping resource names to hint "
                                        "lists, or null; got {}",
                                        TypeName(provider)));
      }
      std::map<std::string, HintList> resources;
      for (const auto& [resource, list] : provider.items()) {
        const std::string lpath = Key(ppath, resource);
        if (list.is_null()) {
          resources[resource] = std::nullopt;
          continue;
        }
        if (!list.is_array()) {
          return Error(lpath,
                       fmt::format("expected an array of hints or null, got {}", TypeName(list)));
        }
        std::vector<TopologyHint> hints;
        for (size_t h = 0; h < list.size(); ++h) {
          absl::StatusOr<TopologyHint> hint =
              ParseHint(list[h], Index(lpath, h), nodes, request.numa_nodes);
          if (!hint.ok()) return hint.status();
          hints.push_back(*hint);
        }
        resources[resource] = std::move(hints);
      }
      request.providers.push_back(std::move(resources));
    }
  }
  return request;
}

std::vector<NUMANode> MergeRequestTopology(const MergeRequest& request) {
  std::vector<NUMANode> topology;
  int max_id = -1;
  for (int id : request.numa_nodes) max_id = std::max(max_id, id);
  for (size_t i = 0; i < request.numa_nodes.size(); ++i) {
    NUMANode node{request.numa_nodes[i], std::nullopt};
    if (request.distances.has_value()) {
      // Rows as the kubelet indexes them: by node id.
      std::vector<uint64_t> row(static_cast<size_t>(max_id + 1), 0);
      for (size_t j = 0; j < request.numa_nodes.size(); ++j) {
        row[request.numa_nodes[j]] = (*request.distances)[i][j];
      }
      node.distances = std::move(row);
    }
    topology.push_back(std::move(node));
  }
  return topology;
}

absl::StatusOr<MergeResult> RunMergeRequest(const MergeRequest& request,
                                            const MergeOverrides& overrides) {
  std::optional<std::string> policy_name = overrides.policy ? overrides.policy : request.policy;
  if (!policy_name.has_value()) {
    return Error("policy", "missing (set \"policy\" in the input or pass --policy)");
  }
  std::map<std::string, std::string> options = request.options;
  for (const auto& [key, value] : overrides.options) options[key] = value;

  std::vector<NUMANode> topology = MergeRequestTopology(request);
  absl::StatusOr<std::unique_ptr<Policy>> policy = NewPolicy(*policy_name, topology, options);
  if (!policy.ok()) {
    std::string message(policy.status().message());
    if (!request.distances.has_value() &&
        message.find("error getting NUMA distances") != std::string::npos) {
      message += " (prefer-closest-numa-nodes needs \"distances\" in the input)";
    }
    return absl::InvalidArgumentError(message);
  }
  return (*policy)->Merge(request.providers);
}

nlohmann::ordered_json MergeResultToJson(const MergeResult& result) {
  nlohmann::ordered_json out;
  if (result.hint.affinity.has_value()) {
    out["affinity"] = result.hint.affinity->GetBits();
  } else {
    out["affinity"] = nullptr;
  }
  out["preferred"] = result.hint.preferred;
  out["admit"] = result.admit;
  return out;
}

absl::StatusOr<std::string> MergeHintsJson(const std::string& text,
                                           const MergeOverrides& overrides) {
  absl::StatusOr<MergeRequest> request = ParseMergeRequest(text);
  if (!request.ok()) return request.status();
  absl::StatusOr<MergeResult> result = RunMergeRequest(*request, overrides);
  if (!result.ok()) return result.status();
  return MergeResultToJson(*result).dump();
}

}  // namespace podtopo::topologymanager
