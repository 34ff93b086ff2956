#include "admission/pod_record.h"

#include "util/format.h"

namespace podtopo {
namespace {

using topologymanager::BitMask;
using topologymanager::TopologyHint;

nlohmann::ordered_json ResourceListJson(const ResourceList& list) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, q] : list) j[name] = q.String();
  return j;
}

nlohmann::ordered_json RequirementsJson(const ResourceRequirements& r) {
  nlohmann::ordered_json j;
  j["requests"] = ResourceListJson(r.requests);
  j["limits"] = ResourceListJson(r.limits);
  return j;
}

absl::Status Bad(const std::string& source, const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(fmt::format("{}: {}: {}", source, path, what));
}

absl::StatusOr<ResourceList> ResourceListFrom(const nlohmann::json& j, const std::string& source,
                                              const std::string& path) {
  ResourceList out;
  if (j.is_null()) return out;
  if (!j.is_object()) return Bad(source, path, "expected an object");
  for (const auto& [name, v] : j.items()) {
    if (!v.is_string()) return Bad(source, path + "." + name, "expected a quantity string");
    auto q = Quantity::Parse(v.get<std::string>());
    if (!q.ok()) return Bad(source, path + "." + name, std::string(q.status().message()));
    out[name] = *q;
  }
  return out;
}

absl::StatusOr<ResourceRequirements> RequirementsFrom(const nlohmann::json& j,
                                                      const std::string& source,
                                                      const std::string& path) {
  ResourceRequirements r;
  if (!j.is_object()) return Bad(source, path, "expected an object");
  auto req = ResourceListFrom(j.value("requests", nlohmann::json()), source, path + ".requests");
  if (!req.ok()) return req.status();
  auto lim = ResourceListFrom(j.value("limits", nlohmann::json()), source, path + ".limits");
  if (!lim.ok()) return lim.status();
  r.requests = std::move(*req);
  r.limits = std::move(*lim);
  return r;
}

absl::StatusOr<std::string> StringField(const nlohmann::json& j, const char* key,
                                        const std::string& source, const std::string& path,
                                        bool required = true) {
  if (!j.contains(key)) {
    if (!required) return std::string();
    return Bad(source, path + "." + key, "missing");
  }
  if (!j[key].is_string()) return Bad(source, path + "." + key, "expected a string");
  return j[key].get<std::string>();
}

nlohmann::ordered_json HintJson(const TopologyHint& h) {
  nlohmann::ordered_json j;
  j["affinity"] = h.affinity.has_value() ? nlohmann::ordered_json(h.affinity->GetBits())
                                         : nlohmann::ordered_json(nullptr);
  j["preferred"] = h.preferred;
  return j;
}

}  // namespace

nlohmann::ordered_json PodToJson(const Pod& pod) {
  nlohmann::ordered_json j;
  j["name"] = pod.name;
  j["namespace"] = pod.namespace_name;
  j["uid"] = pod.uid;
  if (!pod.labels.empty()) j["labels"] = pod.labels;
  if (pod.resources.has_value()) j["resources"] = RequirementsJson(*pod.resources);
  auto containers = [](const std::vector<Container>& list) {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& c : list) {
      nlohmann::ordered_json cj;
      cj["name"] = c.name;
      cj["kind"] = ContainerKindName(c.kind);
      if (!c.image.empty()) cj["image"] = c.image;
      if (!c.command.empty()) cj["command"] = c.command;
      if (!c.args.empty()) cj["args"] = c.args;
      cj["resources"] = RequirementsJson(c.resources);
      arr.push_back(std::move(cj));
    }
    return arr;
  };
  j["initContainers"] = containers(pod.init_containers);
  j["containers"] = containers(pod.containers);
  j["ephemeralContainers"] = containers(pod.ephemeral_containers);
  if (!pod.source.empty()) j["source"] = pod.source;
  return j;
}

absl::StatusOr<Pod> PodFromJson(const nlohmann::json& j, const std::string& source,
                                const std::string& path) {
  if (!j.is_object()) return Bad(source, path, "expected an object");
  Pod pod;
  auto name = StringField(j, "name", source, path);
  if (!name.ok()) return name.status();
  auto ns = StringField(j, "namespace", source, path);
  if (!ns.ok()) return ns.status();
  auto uid = StringField(j, "uid", source, path);
  if (!uid.ok()) return uid.status();
  pod.name = *name;
  pod.namespace_name = *ns;
  pod.uid = *uid;
  if (j.contains("labels")) {
    if (!j["labels"].is_object()) return Bad(source, path + ".labels", "expected an object");
    for (const auto& [k, v] : j["labels"].items()) {
      if (!v.is_string()) return Bad(source, path + ".labels." + k, "expected a string");
      pod.labels[k] = v.get<std::string>();
    }
  }
  if (j.contains("resources")) {
    auto r = RequirementsFrom(j["resources"], source, path + ".resources");
    if (!r.ok()) return r.status();
    pod.resources = std::move(*r);
  }
  auto containers = [&](const char* key, std::vector<Container>& out) -> absl::Status {
    if (!j.contains(key)) return absl::OkStatus();
    const auto& arr = j[key];
    std::string p = path + "." + key;
    if (!arr.is_array()) return Bad(source, p, "expected an array");
    for (size_t i = 0; i < arr.size(); ++i) {
      std::string cp = fmt::format("{}[{}]", p, i);
      const auto& cj = arr[i];
      if (!cj.is_object()) return Bad(source, cp, "expected an object");
      Container c;
      auto cname = StringField(cj, "name", source, cp);
      if (!cname.ok()) return cname.status();
      c.name = *cname;
      auto kind = StringField(cj, "kind", source, cp);
      if (!kind.ok()) return kind.status();
      if (*kind == "init") {
        c.kind = ContainerKind::kInit;
      } else if (*kind == "sidecar") {
        c.kind = ContainerKind::kSidecar;
      } else if (*kind == "app") {
        c.kind = ContainerKind::kApp;
      } else if (*kind == "ephemeral") {
        c.kind = ContainerKind::kEphemeral;
      } else {
        return Bad(source, cp + ".kind", fmt::format("unknown container kind \"{}\"", *kind));
      }
      auto image = StringField(cj, "image", source, cp, false);
      if (!image.ok()) return image.status();
      c.image = *image;
      for (const char* list : {"command", "args"}) {
        if (!cj.contains(list)) continue;
        if (!cj[list].is_array()) return Bad(source, cp + "." + list, "expected an array");
        for (const auto& s : cj[list]) {
          if (!s.is_string()) return Bad(source, cp + "." + list, "expected strings");
          (std::string(list) == "command" ? c.command : c.args).push_back(s.get<std::string>());
        }
      }
      if (cj.contains("resources")) {
        auto r = RequirementsFrom(cj["resources"], source, cp + ".resources");
        if (!r.ok()) return r.status();
        c.resources = std::move(*r);
      }
      out.push_back(std::move(c));
    }
    return absl::OkStatus();
  };
  if (auto s = containers("initContainers", pod.init_containers); !s.ok()) return s;
  if (auto s = containers("containers", pod.containers); !s.ok()) return s;
  if (auto s = containers("ephemeralContainers", pod.ephemeral_containers); !s.ok()) return s;
  if (j.contains("source") && j["source"].is_string()) pod.source = j["source"].get<std::string>();
  return pod;
}

std::string MarshalPodRecord(const std::vector<PodRecordEntry>& entries) {
  nlohmann::ordered_json j;
  j["version"] = 1;
  j["pods"] = nlohmann::ordered_json::array();
  for (const auto& e : entries) {
    nlohmann::ordered_json ej;
    ej["pod"] = PodToJson(e.pod);
    ej["hints"] = nlohmann::ordered_json::object();
    for (const auto& [name, h] : e.hints) ej["hints"][name] = HintJson(h);
    ej["devices"] = nlohmann::ordered_json::object();
    for (const auto& [name, devs] : e.devices) ej["devices"][name] = devs;
    j["pods"].push_back(std::move(ej));
  }
  return j.dump(1) + "\n";
}

absl::StatusOr<std::vector<PodRecordEntry>> ParsePodRecord(const std::string& text,
                                                           const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  if (!j.is_object()) return Bad(source, "$", "expected an object");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != 1) {
    return Bad(source, "version", "unsupported record version (expected 1)");
  }
  if (!j.contains("pods") || !j["pods"].is_array()) return Bad(source, "pods", "expected an array");
  std::vector<PodRecordEntry> out;
  for (size_t i = 0; i < j["pods"].size(); ++i) {
    const auto& ej = j["pods"][i];
    std::string p = fmt::format("pods[{}]", i);
    if (!ej.is_object()) return Bad(source, p, "expected an object");
    PodRecordEntry e;
    auto pod = PodFromJson(ej.value("pod", nlohmann::json()), source, p + ".pod");
    if (!pod.ok()) return pod.status();
    e.pod = std::move(*pod);
    if (ej.contains("hints")) {
      if (!ej["hints"].is_object()) return Bad(source, p + ".hints", "expected an object");
      for (const auto& [name, hj] : ej["hints"].items()) {
        std::string hp = p + ".hints." + name;
        if (!hj.is_object() || !hj.contains("preferred") || !hj["preferred"].is_boolean()) {
          return Bad(source, hp, "expected {\"affinity\": [...] | null, \"preferred\": bool}");
        }
        TopologyHint h;
        h.preferred = hj["preferred"].get<bool>();
        if (hj.contains("affinity") && !hj["affinity"].is_null()) {
          if (!hj["affinity"].is_array()) return Bad(source, hp + ".affinity", "expected an array");
          std::vector<int> bits;
          for (const auto& b : hj["affinity"]) {
            if (!b.is_number_integer()) return Bad(source, hp + ".affinity", "expected integers");
            bits.push_back(b.get<int>());
          }
          auto mask = topologymanager::NewBitMask(bits);
          if (!mask.ok()) return Bad(source, hp + ".affinity", std::string(mask.status().message()));
          h.affinity = *mask;
        }
        e.hints[name] = h;
      }
    }
    if (ej.contains("devices")) {
      if (!ej["devices"].is_object()) return Bad(source, p + ".devices", "expected an object");
      for (const auto& [name, dj] : ej["devices"].items()) {
        if (!dj.is_object()) return Bad(source, p + ".devices." + name, "expected an object");
        for (const auto& [res, ids] : dj.items()) {
          if (!ids.is_array()) return Bad(source, p + ".devices." + name, "expected arrays");
          for (const auto& id : ids) {
            if (!id.is_string()) return Bad(source, p + ".devices." + name, "expected strings");
            e.devices[name][res].push_back(id.get<std::string>());
          }
        }
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace podtopo
