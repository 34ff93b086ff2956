#include "state/running_pods.h"

#include <cctype>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "util/file.h"

namespace podtopo::state {
namespace {

using nlohmann::json;

absl::Status FieldError(const std::string& path, const std::string& field,
                        const std::string& what) {
  return absl::InvalidArgumentError(fmt::format("{}: {}: {}", path, field, what));
}

std::string StripScheme(const std::string& id) {
  size_t p = id.find("://");
  return p == std::string::npos ? id : id.substr(p + 3);
}

// A pod UID as Kubernetes writes it: non-empty, no spaces or control characters.
bool PlausibleUid(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (unsigned char c : s) {
    if (c <= ' ' || c == 0x7f || c == '"' || c == '{' || c == '}') return false;
  }
  return true;
}

absl::Status AddPod(const json& pod, const std::string& where, const std::string& path,
                    RunningPods& out) {
  if (!pod.is_object()) return FieldError(path, where, "expected an object");
  auto md = pod.find("metadata");
  if (md == pod.end() || !md->is_object()) {
    return FieldError(path, where + ".metadata", "missing or not an object");
  }
  auto uid = md->find("uid");
  if (uid == md->end() || !uid->is_string()) {
    return FieldError(path, where + ".metadata.uid", "missing or not a string");
  }
  const std::string u = uid->get<std::string>();
  if (!PlausibleUid(u)) return FieldError(path, where + ".metadata.uid", "not a pod UID");
  out.uids.insert(u);
  auto status = pod.find("status");
  if (status == pod.end() || !status->is_object()) return absl::OkStatus();
  for (const char* key : {"initContainerStatuses", "containerStatuses"}) {
    auto list = status->find(key);
    if (list == status->end() || list->is_null()) continue;
    if (!list->is_array()) {
      return FieldError(path, fmt::format("{}.status.{}", where, key), "expected a list");
    }
    for (size_t i = 0; i < list->size(); ++i) {
      const json& c = (*list)[i];
      std::string field = fmt::format("{}.status.{}[{}]", where, key, i);
      if (!c.is_object()) return FieldError(path, field, "expected an object");
      auto name = c.find("name");
      auto id = c.find("containerID");
      if (name == c.end() || !name->is_string()) {
        return FieldError(path, field + ".name", "missing or not a string");
      }
      if (id == c.end() || id->is_null()) continue;  // not started yet
      if (!id->is_string()) return FieldError(path, field + ".containerID", "not a string");
      std::string cid = StripScheme(id->get<std::string>());
      if (!cid.empty()) out.containers[cid] = {u, name->get<std::string>()};
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RunningPods> ParseJson(const json& doc, const std::string& path) {
  RunningPods out;
  if (!doc.is_object()) return FieldError(path, "(document)", "expected a JSON object");
  if (auto containers = doc.find("containers"); containers != doc.end()) {
    out.format = "crictl-ps";
    if (!containers->is_array()) return FieldError(path, "containers", "expected a list");
    for (size_t i = 0; i < containers->size(); ++i) {
      const json& c = (*containers)[i];
      std::string field = fmt::format("containers[{}]", i);
      if (!c.is_object()) return FieldError(path, field, "expected an object");
      auto labels = c.find("labels");
      if (labels == c.end() || !labels->is_object()) {
        return FieldError(path, field + ".labels", "missing or not an object");
      }
      auto uid = labels->find("io.kubernetes.pod.uid");
      if (uid == labels->end() || !uid->is_string() || !PlausibleUid(uid->get<std::string>())) {
        return FieldError(path, field + ".labels[\"io.kubernetes.pod.uid\"]",
                          "missing or not a pod UID");
      }
      out.uids.insert(uid->get<std::string>());
      auto id = c.find("id");
      if (id == c.end() || !id->is_string()) {
        return FieldError(path, field + ".id", "missing or not a string");
      }
      std::string name;
      if (auto n = labels->find("io.kubernetes.container.name");
          n != labels->end() && n->is_string()) {
        name = n->get<std::string>();
      } else if (auto md = c.find("metadata"); md != c.end() && md->is_object() &&
                                                 md->contains("name") &&
                                                 (*md)["name"].is_string()) {
        name = (*md)["name"].get<std::string>();
      } else {
        return FieldError(path, field + ".labels[\"io.kubernetes.container.name\"]",
                          "missing or not a string");
      }
      out.containers[StripScheme(id->get<std::string>())] = {uid->get<std::string>(), name};
    }
    return out;
  }
  if (auto items = doc.find("items"); items != doc.end()) {
    if (!items->is_array() && !items->is_null()) {
      return FieldError(path, "items", "expected a list");
    }
    std::string kind = doc.value("kind", std::string());
    out.format = kind.empty() ? "crictl-pods" : "kubectl";
    if (items->is_null()) return out;
    for (size_t i = 0; i < items->size(); ++i) {
      absl::Status s = AddPod((*items)[i], fmt::format("items[{}]", i), path, out);
      if (!s.ok()) return s;
    }
    return out;
  }
  if (doc.value("kind", std::string()) == "Pod") {
    out.format = "kubectl";
    absl::Status s = AddPod(doc, "(pod)", path, out);
    if (!s.ok()) return s;
    return out;
  }
  return FieldError(path, "(document)",
                    "not a pod list: expected \"items\" (kubectl get pods -o json, crictl pods "
                    "-o json), \"containers\" (crictl ps -o json) or a Pod");
}

}  // namespace

absl::StatusOr<RunningPods> ParseRunningPods(std::string_view text, const std::string& path) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    json doc;
    try {
      doc = json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {
      return absl::InvalidArgumentError(fmt::format("{}: invalid JSON: {}", path, e.what()));
    }
    return ParseJson(doc, path);
  }
  RunningPods out;
  out.format = "text";
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    pos = end + 1;
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
      line.remove_suffix(1);
    }
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) {
      line.remove_prefix(1);
    }
    if (line.empty() || line.front() == '#') continue;
    if (!PlausibleUid(line)) {
      return absl::InvalidArgumentError(fmt::format(
          "{}:{}: not a pod UID: \"{}\" (expected one pod UID per line)", path, line_no,
          std::string(line.substr(0, 80))));
    }
    out.uids.insert(std::string(line));
  }
  return out;
}

absl::StatusOr<RunningPods> LoadRunningPods(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseRunningPods(*text, path);
}

}  // namespace podtopo::state
