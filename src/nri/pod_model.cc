#include "nri/pod_model.h"

#include "fmt/format.h"

namespace podtopo::nri {
namespace {

// "2MB" -> "hugepages-2Mi", "1GB" -> "hugepages-1Gi" (runc's page size names).
std::string HugePageResource(const std::string& page_size) {
  std::string s = page_size;
  if (s.size() > 2 && s.substr(s.size() - 2) == "KB") return "hugepages-" + s.substr(0, s.size() - 2) + "Ki";
  if (s.size() > 2 && s.substr(s.size() - 2) == "MB") return "hugepages-" + s.substr(0, s.size() - 2) + "Mi";
  if (s.size() > 2 && s.substr(s.size() - 2) == "GB") return "hugepages-" + s.substr(0, s.size() - 2) + "Gi";
  return "hugepages-" + s;
}

int64_t CeilDiv(uint64_t a, uint64_t b) { return static_cast<int64_t>((a + b - 1) / b); }

nlohmann::json Manifest(const nriapi::PodSandbox& sandbox, nlohmann::json spec) {
  nlohmann::json pod = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata",
                         {{"name", sandbox.name()},
                          {"namespace", sandbox.namespace_().empty() ? "default"
                                                                      : sandbox.namespace_()},
                          {"uid", sandbox.uid()}}},
                        {"spec", std::move(spec)}};
  return pod;
}

absl::StatusOr<Pod> ParseOne(const nlohmann::json& manifest, const std::string& source,
                             const PodLoadOptions& options) {
  auto pods = ParsePods(manifest.dump(), source, options);
  if (!pods.ok()) return pods.status();
  if (pods->size() != 1) {
    return absl::InvalidArgumentError(fmt::format("{}: expected one pod", source));
  }
  return std::move(pods->front());
}

}  // namespace

nlohmann::json ResourcesFromNri(const nriapi::LinuxResources& r) {
  nlohmann::json requests = nlohmann::json::object(), limits = nlohmann::json::object();
  if (r.has_cpu()) {
    const nriapi::LinuxCPU& cpu = r.cpu();
    if (cpu.has_shares() && cpu.shares().value() > 2) {
      requests["cpu"] = fmt::format("{}m", CeilDiv(cpu.shares().value() * 1000, 1024));
    }
    uint64_t period = cpu.has_period() && cpu.period().value() > 0 ? cpu.period().value() : 100000;
    if (cpu.has_quota() && cpu.quota().value() > 0) {
      limits["cpu"] = fmt::format(
          "{}m", CeilDiv(static_cast<uint64_t>(cpu.quota().value()) * 1000, period));
    }
  }
  if (r.has_memory() && r.memory().has_limit() && r.memory().limit().value() > 0) {
    std::string bytes = std::to_string(r.memory().limit().value());
    limits["memory"] = bytes;
    requests["memory"] = bytes;
  }
  for (const nriapi::HugepageLimit& h : r.hugepage_limits()) {
    if (h.limit() == 0) continue;
    std::string name = HugePageResource(h.page_size());
    limits[name] = std::to_string(h.limit());
    requests[name] = std::to_string(h.limit());
  }
  nlohmann::json out = nlohmann::json::object();
  if (!requests.empty()) out["requests"] = requests;
  if (!limits.empty()) out["limits"] = limits;
  return out;
}

absl::StatusOr<std::optional<Pod>> PodFromAnnotation(const nriapi::PodSandbox& sandbox,
                                                     const PodLoadOptions& options) {
  auto it = sandbox.annotations().find(kPodSpecAnnotation);
  if (it == sandbox.annotations().end()) return std::optional<Pod>();
  std::string source = fmt::format("pod {}/{} annotation {}", sandbox.namespace_(),
                                   sandbox.name(), kPodSpecAnnotation);
  nlohmann::json spec = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (spec.is_discarded() || !spec.is_object()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: expected a JSON object (the pod spec: initContainers, containers, "
                    "resources)", source));
  }
  auto pod = ParseOne(Manifest(sandbox, std::move(spec)), source, options);
  if (!pod.ok()) return pod.status();
  return std::optional<Pod>(std::move(*pod));
}

absl::StatusOr<Pod> RecoveredPod(const nriapi::PodSandbox& sandbox,
                                 const std::vector<SeenContainer>& containers,
                                 const PodLoadOptions& options) {
  nlohmann::json init = nlohmann::json::array(), app = nlohmann::json::array();
  // The containers that exited before a later one was created ran to completion first: init.
  size_t last_exited = 0;
  for (size_t i = 0; i < containers.size(); ++i) {
    if (containers[i].exited) last_exited = i + 1;
  }
  if (last_exited == containers.size() && last_exited > 0) last_exited--;  // a pod has an app
  for (size_t i = 0; i < containers.size(); ++i) {
    nlohmann::json c = {{"name", containers[i].name},
                        {"image", "nri"},
                        {"resources", ResourcesFromNri(containers[i].resources)}};
    (i < last_exited ? init : app).push_back(std::move(c));
  }
  nlohmann::json spec = {{"containers", app}};
  if (!init.empty()) spec["initContainers"] = init;
  auto pod_level = sandbox.annotations().find(kPodLevelAnnotation);
  if (pod_level != sandbox.annotations().end() && pod_level->second != "false") {
    if (pod_level->second != "true") {
      return absl::InvalidArgumentError(fmt::format(
          "pod {}/{} annotation {}: {:?}: expected \"true\" or \"false\"", sandbox.namespace_(),
          sandbox.name(), kPodLevelAnnotation, pod_level->second));
    }
    nlohmann::json resources = sandbox.linux().has_pod_resources()
                                   ? ResourcesFromNri(sandbox.linux().pod_resources())
                                   : nlohmann::json::object();
    if (resources.empty()) {
      return absl::InvalidArgumentError(fmt::format(
          "pod {}/{} annotation {}: the runtime passed no pod resources for the sandbox",
          sandbox.namespace_(), sandbox.name(), kPodLevelAnnotation));
    }
    spec["resources"] = std::move(resources);
  }
  return ParseOne(Manifest(sandbox, std::move(spec)),
                  fmt::format("pod {}/{} (recovered from NRI)", sandbox.namespace_(),
                              sandbox.name()),
                  options);
}

}  // namespace podtopo::nri
