// The node's containers and the extra intent for verify (verify/discovery.h).
#include "verify/discovery.h"

#include "client/podresources_client.h"
#include "cri/cri_client.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "util/file.h"

namespace podtopo::verify {
namespace {

constexpr char kPodUid[] = "io.kubernetes.pod.uid";
constexpr char kPodName[] = "io.kubernetes.pod.name";
constexpr char kPodNamespace[] = "io.kubernetes.pod.namespace";
constexpr char kContainerName[] = "io.kubernetes.container.name";

std::string Label(const google::protobuf::Map<std::string, std::string>& labels, const char* key) {
  auto it = labels.find(key);
  return it == labels.end() ? "" : it->second;
}

}  // namespace

absl::StatusOr<std::vector<ContainerRef>> ContainersFromFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  std::vector<ContainerRef> out;
  try {
    nlohmann::json j = nlohmann::json::parse(*text);
    for (const auto& c : j) {
      ContainerRef r;
      r.pod_namespace = c.at("namespace").get<std::string>();
      r.pod = c.at("pod").get<std::string>();
      r.pod_uid = c.at("podUid").get<std::string>();
      r.name = c.at("container").get<std::string>();
      r.id = c.at("containerId").get<std::string>();
      r.cgroups_path = c.value("cgroupsPath", "");
      r.pid = c.value("pid", 0);
      out.push_back(std::move(r));
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", path, e.what()));
  }
  return out;
}

absl::Status ContainersFromRuntime(const std::string& endpoint,
                                   std::vector<ContainerRef>& out,
                                   std::vector<std::string>& problems) {
  auto cri = cri::CriClient::Connect(endpoint, {std::chrono::milliseconds(5000)});
  if (!cri.ok()) return cri.status();
  ::runtime::v1::ContainerFilter filter;
  filter.mutable_state()->set_state(::runtime::v1::CONTAINER_RUNNING);
  auto list = (*cri)->ListContainers(filter);
  if (!list.ok()) {
    return absl::Status(list.status().code(),
                        fmt::format("--runtime-endpoint {}: {}", endpoint,
                                    std::string(list.status().message())));
  }
  for (const auto& c : list->containers()) {
    if (c.state() != ::runtime::v1::CONTAINER_RUNNING) continue;  // the filter may be ignored
    ContainerRef r;
    r.id = c.id();
    r.pod_uid = Label(c.labels(), kPodUid);
    r.pod = Label(c.labels(), kPodName);
    r.pod_namespace = Label(c.labels(), kPodNamespace);
    r.name = Label(c.labels(), kContainerName);
    if (r.name.empty()) r.name = c.metadata().name();
    if (r.pod_uid.empty()) {
      problems.push_back(fmt::format("container {}: no {} label (not a Kubernetes container); "
                                     "skipped", c.id(), kPodUid));
      continue;
    }
    auto status = (*cri)->ContainerStatus(c.id(), /*verbose=*/true);
    if (!status.ok()) {
      problems.push_back(fmt::format("container {} ({}/{}/{}): gone during the scan or not "
                                     "readable: {}", c.id(), r.pod_namespace, r.pod, r.name,
                                     std::string(status.status().message())));
      continue;
    }
    auto info = status->info().find("info");
    if (info != status->info().end()) {
      nlohmann::json j = nlohmann::json::parse(info->second, nullptr, /*allow_exceptions=*/false);
      if (j.is_object()) {
        if (j.contains("pid") && j["pid"].is_number_integer()) r.pid = j["pid"].get<int>();
        auto spec = j.find("runtimeSpec");
        if (spec != j.end() && spec->is_object() && spec->contains("linux") &&
            (*spec)["linux"].is_object() && (*spec)["linux"].contains("cgroupsPath") &&
            (*spec)["linux"]["cgroupsPath"].is_string()) {
          r.cgroups_path = (*spec)["linux"]["cgroupsPath"].get<std::string>();
        }
      }
    }
    out.push_back(std::move(r));
  }
  return absl::OkStatus();
}

absl::Status AddPodResources(const std::string& socket, Intent& intent) {
  auto client = client::PodResourcesClient::Connect({.socket = socket});
  if (!client.ok()) return client.status();
  auto list = (*client)->List();
  if (!list.ok()) return list.status();
  for (const auto& pod : list->pod_resources()) {
    for (const auto& c : pod.containers()) {
      Intent::Reported r;
      for (int64_t cpu : c.cpu_ids()) {
        if (cpu >= 0 && cpu <= CpuSet::kMaxCpuId) r.cpus.Add(static_cast<int>(cpu));
      }
      for (const auto& m : c.memory()) {
        for (const auto& n : m.topology().nodes()) {
          if (n.id() >= 0 && n.id() <= CpuSet::kMaxCpuId) r.mems.Add(static_cast<int>(n.id()));
        }
      }
      intent.reported[pod.namespace_() + "/" + pod.name() + "/" + c.name()] = r;
    }
  }
  return absl::OkStatus();
}

}  // namespace podtopo::verify
