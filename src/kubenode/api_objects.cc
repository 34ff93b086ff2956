#include "kubenode/api_objects.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string_view>

#include "absl/time/time.h"
#include "admission/pod_requests.h"
#include "api/pod_gates.h"
#include "api/pod_yaml.h"
#include "fmt/format.h"

#ifndef PODTOPO_VERSION_STRING
#define PODTOPO_VERSION_STRING "0.1.0"
#endif

namespace podtopo::kubenode {
namespace {

std::tm Utc(Clock::time_point t) {
  std::time_t s = Clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  return tm;
}

nlohmann::json ResourcesJson(const ResourceList& list, int max_pods) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, q] : list) j[name] = q.CanonicalString();
  j["pods"] = std::to_string(max_pods);
  return j;
}

// A stable id from the node's name, shaped as a machine id (32 hex digits).
std::string IdOf(const std::string& what, const std::string& name) {
  size_t a = std::hash<std::string>{}(what + "/" + name);
  size_t b = std::hash<std::string>{}(name + "/" + what);
  return fmt::format("{:016x}{:016x}", a, b);
}

std::string KernelVersion() {
  utsname u{};
  return uname(&u) == 0 ? std::string(u.release) : std::string();
}

// "v1.37.0" for 1.37.0, "v1.37.0" for 1.37 (the newest patch podtopo knows of that minor).
std::string KubeletVersionString(const config::KubeletConfig& config) {
  std::string v = config.kubelet_version;
  if (v.empty()) return "v0.0.0-podtopo";
  if (std::count(v.begin(), v.end(), '.') == 1) v += ".0";
  return "v" + v;
}

std::string ContainerId(const nlohmann::json& object, const std::string& name) {
  return fmt::format("podtopo://{}/{}", PodUid(object), name);
}

std::string StringAt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string Rfc3339(Clock::time_point t) {
  std::tm tm = Utc(t);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string Rfc3339Micro(Clock::time_point t) {
  std::tm tm = Utc(t);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count() %
                1000000;
  if (micros < 0) micros += 1000000;
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micros);
}

nlohmann::json NodeCapacityJson(const NodeTopology& topology, const config::KubeletConfig& config) {
  return ResourcesJson(NodeCapacity(topology), config.max_pods);
}

nlohmann::json NodeAllocatableJson(const NodeTopology& topology,
                                   const config::KubeletConfig& config) {
  return ResourcesJson(NodeAllocatable(topology, config), config.max_pods);
}

nlohmann::json NodeConditions(Clock::time_point since, Clock::time_point now) {
  auto condition = [&](const char* type, const char* status, const char* reason,
                       const char* message) {
    return nlohmann::json{{"type", type},
                          {"status", status},
                          {"lastHeartbeatTime", Rfc3339(now)},
                          {"lastTransitionTime", Rfc3339(since)},
                          {"reason", reason},
                          {"message", message}};
  };
  // The kubelet's own reasons and messages (nodestatus/setters.go).
  return nlohmann::json::array(
      {condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                 "kubelet has sufficient memory available"),
       condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
       condition("PIDPressure", "False", "KubeletHasSufficientPID",
                 "kubelet has sufficient PID available"),
       condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")});
}

nlohmann::json NodeStatus(const NodeIdentity& id, const NodeTopology& topology,
                          const config::KubeletConfig& config, Clock::time_point since,
                          Clock::time_point now) {
  return {
      {"capacity", NodeCapacityJson(topology, config)},
      {"allocatable", NodeAllocatableJson(topology, config)},
      {"conditions", NodeConditions(since, now)},
      {"addresses", nlohmann::json::array({{{"type", "InternalIP"}, {"address", id.address}},
                                           {{"type", "Hostname"}, {"address", id.name}}})},
      {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 0}}}}},
      {"nodeInfo",
       {{"machineID", IdOf("machine", id.name)},
        {"systemUUID", IdOf("system", id.name)},
        {"bootID", IdOf("boot", id.name)},
        {"kernelVersion", KernelVersion()},
        {"osImage", "podtopo simulated node"},
        {"containerRuntimeVersion", "podtopo://" PODTOPO_VERSION_STRING},
        {"kubeletVersion", KubeletVersionString(config)},
        {"kubeProxyVersion", ""},
        {"operatingSystem", "linux"},
        {"architecture", "amd64"}}},
  };
}

nlohmann::json NodeLabels(const NodeIdentity& id, const config::KubeletConfig& config) {
  nlohmann::json labels = {{"kubernetes.io/hostname", id.name},
                           {"kubernetes.io/os", "linux"},
                           {"kubernetes.io/arch", "amd64"},
                           {"beta.kubernetes.io/os", "linux"},
                           {"beta.kubernetes.io/arch", "amd64"},
                           {"node.podtopo.io/simulated", "true"}};
  if (!config.kubelet_version.empty()) labels["podtopo.io/kubelet-version"] = config.kubelet_version;
  return labels;
}

nlohmann::json NodeObject(const NodeIdentity& id, const NodeTopology& topology,
                          const config::KubeletConfig& config, Clock::time_point now) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", id.name}, {"labels", NodeLabels(id, config)}}},
          {"spec", nlohmann::json::object()},
          {"status", NodeStatus(id, topology, config, now, now)}};
}

nlohmann::json LeaseObject(const std::string& node_name, const std::string& node_uid,
                           Clock::time_point renew, int duration_seconds,
                           const std::string& instance) {
  nlohmann::json metadata = {{"name", node_name}, {"namespace", "kube-node-lease"}};
  if (!instance.empty()) metadata["annotations"] = {{kLeaseInstanceAnnotation, instance}};
  if (!node_uid.empty()) {
    metadata["ownerReferences"] = nlohmann::json::array(
        {{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node_name}, {"uid", node_uid}}});
  }
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", std::move(metadata)},
          {"spec",
           {{"holderIdentity", node_name},
            {"leaseDurationSeconds", duration_seconds},
            {"renewTime", Rfc3339Micro(renew)}}}};
}

std::string LeaseInstance(const std::string& host, long pid, uint64_t token) {
  return fmt::format("{}:{}:{:016x}", host, pid, token);
}

std::optional<std::string> LeaseConflict(const nlohmann::json& lease, const std::string& node_name,
                                         const std::string& instance, const std::string& host,
                                         Clock::time_point now,
                                         const std::function<bool(long)>& alive) {
  if (!lease.is_object()) return std::nullopt;
  const nlohmann::json* spec = lease.contains("spec") && lease["spec"].is_object() ? &lease["spec"] : nullptr;
  if (spec == nullptr) return std::nullopt;
  std::string holder;
  if (auto m = lease.find("metadata"); m != lease.end() && m->is_object()) {
    if (auto a = m->find("annotations"); a != m->end() && a->is_object()) {
      holder = StringAt(*a, kLeaseInstanceAnnotation);
    }
  }
  if (holder == instance || holder == kLeaseReleased) return std::nullopt;
  // Expired: nobody renews it.
  absl::Time renewed;
  std::string error;
  const std::string renew_text = StringAt(*spec, "renewTime");
  if (renew_text.empty() || !absl::ParseTime(absl::RFC3339_full, renew_text, &renewed, &error)) {
    return std::nullopt;
  }
  long duration = 40;
  if (auto d = spec->find("leaseDurationSeconds"); d != spec->end() && d->is_number_integer()) {
    duration = d->get<long>();
  }
  const absl::Time at = absl::FromChrono(now);
  const double age = absl::ToDoubleSeconds(at - renewed);
  const double left = duration - age;
  if (left <= 0) return std::nullopt;
  // A serve of this host that is gone (killed, then started again before the Lease expired).
  if (!holder.empty()) {
    const size_t colon = holder.find(':');
    const size_t colon2 = colon == std::string::npos ? colon : holder.find(':', colon + 1);
    if (colon != std::string::npos && colon2 != std::string::npos && holder.substr(0, colon) == host) {
      char* end = nullptr;
      const std::string pid_text = holder.substr(colon + 1, colon2 - colon - 1);
      const long pid = std::strtol(pid_text.c_str(), &end, 10);
      if (end != nullptr && *end == '\0' && pid > 0 && !alive(pid)) return std::nullopt;
      // This very pid on this host (a container restarted: pid 1 again) is an earlier run.
      if (instance.rfind(holder.substr(0, colon2 + 1), 0) == 0) return std::nullopt;
    }
  }
  const std::string times = fmt::format(
      "its Lease kube-node-lease/{} was renewed {:.0f} s ago and expires in {:.0f} s", node_name,
      std::max(0.0, age), std::max(1.0, left));
  if (holder.empty()) {
    return fmt::format("Node {} has a live Lease held by {:?} and not by a podtopo serve (no {} "
                       "annotation; {}): a kubelet may run this node; use another --node-name",
                       node_name, StringAt(*spec, "holderIdentity"), kLeaseInstanceAnnotation, times);
  }
  return fmt::format("Node {} is played by another podtopo serve ({} {}; {}): stop it or use "
                     "another --node-name",
                     node_name, kLeaseInstanceAnnotation, holder, times);
}

absl::StatusOr<Pod> PodFromApi(const nlohmann::json& object, const config::KubeletConfig& config) {
  if (!object.is_object()) return absl::InvalidArgumentError("pod from the API server: not an object");
  nlohmann::json copy = object;
  // List items carry no kind or apiVersion; status and managedFields are not read.
  copy["apiVersion"] = "v1";
  copy["kind"] = "Pod";
  copy.erase("status");
  if (auto m = copy.find("metadata"); m != copy.end() && m->is_object()) m->erase("managedFields");
  std::string name = "pod";
  if (object.contains("metadata") && object["metadata"].is_object()) {
    name = fmt::format("pod {}/{}", StringAt(object["metadata"], "namespace"),
                       StringAt(object["metadata"], "name"));
  }
  auto pods = ParsePods(copy.dump(), name + " (from the API server)",
                        {.gates = PodGatesFromConfig(config)});
  if (!pods.ok()) return pods.status();
  if (pods->size() != 1) {
    return absl::InvalidArgumentError(
        fmt::format("{} (from the API server): {} pods read, expected one", name, pods->size()));
  }
  return std::move(pods->front());
}

std::string PodPhase(const nlohmann::json& object) {
  auto s = object.find("status");
  return s != object.end() && s->is_object() ? StringAt(*s, "phase") : std::string();
}

bool PodTerminating(const nlohmann::json& object) {
  auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return false;
  auto d = m->find("deletionTimestamp");
  return d != m->end() && !d->is_null();
}

std::string PodUid(const nlohmann::json& object) {
  auto m = object.find("metadata");
  return m != object.end() && m->is_object() ? StringAt(*m, "uid") : std::string();
}

nlohmann::json AdmittedStatusPatch(const nlohmann::json& object, const std::string& host_ip,
                                   Clock::time_point start) {
  const std::string t = Rfc3339(start);
  auto condition = [&](const char* type) {
    return nlohmann::json{
        {"type", type}, {"status", "True"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", t}};
  };
  nlohmann::json init = nlohmann::json::array();
  nlohmann::json app = nlohmann::json::array();
  const nlohmann::json spec = object.value("spec", nlohmann::json::object());
  auto status_of = [&](const nlohmann::json& c, bool running) {
    std::string name = StringAt(c, "name");
    nlohmann::json state =
        running ? nlohmann::json{{"running", {{"startedAt", t}}}}
                : nlohmann::json{{"terminated",
                                  {{"exitCode", 0},
                                   {"reason", "Completed"},
                                   {"startedAt", t},
                                   {"finishedAt", t},
                                   {"containerID", ContainerId(object, name)}}}};
    return nlohmann::json{{"name", name},
                          {"state", std::move(state)},
                          {"lastState", nlohmann::json::object()},
                          {"ready", running},
                          {"restartCount", 0},
                          {"image", StringAt(c, "image")},
                          {"imageID", ""},
                          {"containerID", ContainerId(object, name)},
                          {"started", running}};
  };
  if (auto it = spec.find("initContainers"); it != spec.end() && it->is_array()) {
    for (const auto& c : *it) {
      init.push_back(status_of(c, StringAt(c, "restartPolicy") == "Always"));
    }
  }
  if (auto it = spec.find("containers"); it != spec.end() && it->is_array()) {
    for (const auto& c : *it) app.push_back(status_of(c, true));
  }
  nlohmann::json status = {
      {"phase", "Running"},
      {"conditions", nlohmann::json::array({condition("Initialized"), condition("Ready"),
                                            condition("ContainersReady"),
                                            condition("PodScheduled")})},
      {"hostIP", host_ip},
      {"startTime", t},
      {"containerStatuses", std::move(app)},
      // Clears a reason or message left by an earlier rejection of a pod of the same uid.
      {"reason", nullptr},
      {"message", nullptr}};
  if (!init.empty()) status["initContainerStatuses"] = std::move(init);
  return {{"status", std::move(status)}};
}

nlohmann::json RejectedStatusPatch(const PodAllocation& rejected, Clock::time_point start) {
  return {{"status",
           {{"phase", "Failed"},
            {"reason", rejected.reason},
            {"message", rejected.message},
            {"startTime", Rfc3339(start)}}}};
}

nlohmann::json RejectionEvent(const PodAllocation& rejected, const std::string& node_name,
                              Clock::time_point t) {
  constexpr std::string_view kPrefix = "Pod was rejected: ";
  std::string message = rejected.message;
  if (message.rfind(kPrefix, 0) == 0) message.erase(0, kPrefix.size());
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"generateName", rejected.name + "."}, {"namespace", rejected.namespace_name}}},
          {"involvedObject",
           {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"namespace", rejected.namespace_name},
            {"name", rejected.name},
            {"uid", rejected.uid}}},
          {"reason", rejected.reason},
          {"message", message},
          {"type", "Warning"},
          {"source", {{"component", "kubelet"}, {"host", node_name}}},
          {"firstTimestamp", Rfc3339(t)},
          {"lastTimestamp", Rfc3339(t)},
          {"count", 1}};
}

nlohmann::json DeleteNowBody(const std::string& uid) {
  return {{"apiVersion", "v1"},
          {"kind", "DeleteOptions"},
          {"gracePeriodSeconds", 0},
          {"preconditions", {{"uid", uid}}}};
}

}  // namespace podtopo::kubenode
