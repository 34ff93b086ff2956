// podtopo verify: the kubelet's intent against what each running container has (docs/verify.md).
// The joining and the checks are src/verify (pure); this file finds the containers through the
// CRI runtime, asks PodResources when given, and prints.
#include <fstream>
#include <iostream>

#include "CLI/CLI.hpp"
#include "cli/cli.h"
#include "client/podresources_client.h"
#include "config/duration.h"
#include "cri/cri_client.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "util/file.h"
#include "verify/verify.h"

namespace podtopo::cli {
namespace {

struct VerifyFlags {
  std::string kubelet_dir = "/var/lib/kubelet";
  std::string runtime_endpoint = "unix:///run/containerd/containerd.sock";
  std::string podresources_socket;
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string proc_root = "/proc";
  std::string sample = "0s";
  std::string output = "table";
  std::string containers_file;
};

constexpr char kPodUid[] = "io.kubernetes.pod.uid";
constexpr char kPodName[] = "io.kubernetes.pod.name";
constexpr char kPodNamespace[] = "io.kubernetes.pod.namespace";
constexpr char kContainerName[] = "io.kubernetes.container.name";

std::string Label(const google::protobuf::Map<std::string, std::string>& labels, const char* key) {
  auto it = labels.find(key);
  return it == labels.end() ? "" : it->second;
}

// The containers of --containers FILE (tests, or a node whose runtime is read otherwise):
// [{"namespace","pod","podUid","container","containerId","cgroupsPath"?,"pid"?}].
bool ContainersFromFile(const std::string& path, std::vector<verify::ContainerRef>& out,
                        Context& ctx) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    ctx.Fail(fmt::format("--containers: {}", std::string(text.status().message())));
    return false;
  }
  try {
    nlohmann::json j = nlohmann::json::parse(*text);
    for (const auto& c : j) {
      verify::ContainerRef r;
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
    ctx.Fail(fmt::format("--containers {}: {}", path, e.what()));
    return false;
  }
  return true;
}

// The running containers the CRI runtime lists, with their labels, pid and cgroupsPath.
// Errors: the runtime cannot be reached (nothing to verify). A container that goes away
// between the list and its status is a problem of the report.
absl::Status ContainersFromRuntime(const std::string& endpoint,
                                   std::vector<verify::ContainerRef>& out,
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
    verify::ContainerRef r;
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

// PodResources List as extra intent: exclusive CPUs and memory NUMA nodes per container.
absl::Status AddPodResources(const std::string& socket, verify::Intent& intent) {
  auto client = client::PodResourcesClient::Connect({.socket = socket});
  if (!client.ok()) return client.status();
  auto list = (*client)->List();
  if (!list.ok()) return list.status();
  for (const auto& pod : list->pod_resources()) {
    for (const auto& c : pod.containers()) {
      verify::Intent::Reported r;
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

void RunVerify(const VerifyFlags& f, Context& ctx) {
  auto sample = config::Duration::Parse(f.sample);
  if (!sample.ok() || sample->nanos() < 0 || sample->nanos() > config::Duration::kMinute) {
    return ctx.Fail(fmt::format("--sample {:?}: expected a duration from 0s to 1m such as 1s or "
                                "500ms", f.sample));
  }
  auto intent = verify::LoadIntent(f.kubelet_dir);
  if (!intent.ok()) return ctx.Fail(intent.status());
  std::vector<std::string> discovery_problems;
  if (!f.podresources_socket.empty()) {
    if (absl::Status s = AddPodResources(f.podresources_socket, *intent); !s.ok()) {
      discovery_problems.push_back(fmt::format("--podresources-socket {}: {}", f.podresources_socket,
                                               std::string(s.message())));
    }
  }
  std::vector<verify::ContainerRef> refs;
  if (!f.containers_file.empty()) {
    if (!ContainersFromFile(f.containers_file, refs, ctx)) return;
  } else {
    absl::Status s = ContainersFromRuntime(f.runtime_endpoint, refs, discovery_problems);
    if (!s.ok()) {
      return ctx.Fail(fmt::format(
          "cannot list the node's containers through the CRI runtime (--runtime-endpoint {}): {}",
          f.runtime_endpoint, std::string(s.message())));
    }
  }
  if (intent->cpu_policy.empty() && intent->memory_policy.empty() && intent->reported.empty()) {
    discovery_problems.push_back(fmt::format(
        "no intent: neither {}/cpu_manager_state nor memory_manager_state could be read, and no "
        "PodResources answer; only the tasks' affinity and the memory placement are checked",
        f.kubelet_dir));
  }
  verify::Reality reality({.cgroup_root = f.cgroup_root, .proc_root = f.proc_root});
  verify::Report report =
      verify::Verify(*intent, refs, reality,
                     {.sample = std::chrono::milliseconds(sample->nanos() / 1000000)});
  report.problems.insert(report.problems.begin(), discovery_problems.begin(),
                         discovery_problems.end());
  if (f.output == "json") {
    *ctx.out << verify::ReportJson(report).dump(2) << "\n";
  } else if (f.output == "html") {
    *ctx.out << verify::ReportHtml(report);
  } else {
    *ctx.out << verify::ReportTable(report);
  }
  if (!report.problems.empty() && f.output != "table") {
    *ctx.err << fmt::format("podtopo: warning: {} problem(s) reading the node, the report is "
                            "partial (first: {})\n", report.problems.size(), report.problems[0]);
  }
  ctx.exit_code = report.findings.empty() ? kExitOk : kExitRejected;
}

}  // namespace

void AddVerifyCommand(CLI::App& app, Context& ctx) {
  auto f = std::make_shared<VerifyFlags>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Join what the kubelet intends (checkpoints, PodResources) with what each running "
      "container has (cgroup cpuset, its tasks' affinity, memory per NUMA node, foreign tasks on "
      "exclusive CPUs). Exit 0: no finding; 3: findings; 1: bad input or nothing reachable");
  cmd->add_option("--kubelet-dir", f->kubelet_dir,
                  "the kubelet's root directory (cpu_manager_state, memory_manager_state)")
      ->capture_default_str();
  cmd->add_option("--runtime-endpoint", f->runtime_endpoint,
                  "the CRI runtime's socket, which lists the running containers")
      ->capture_default_str();
  cmd->add_option("--podresources-socket", f->podresources_socket,
                  "the kubelet's PodResources socket (optional: its List is extra intent), e.g. "
                  "/var/lib/kubelet/pod-resources/kubelet.sock");
  cmd->add_option("--cgroup-root", f->cgroup_root,
                  "where cgroups are mounted (v1: with cpuset/ and memory/; v2: the unified tree)")
      ->capture_default_str();
  cmd->add_option("--sample", f->sample,
                  "a window over which to measure the CPU time of host tasks that may run on "
                  "exclusive CPUs (0s: affinity only)")
      ->capture_default_str();
  cmd->add_option("-o,--output", f->output, "table | json | html")
      ->check(CLI::IsMember({"table", "json", "html"}))
      ->capture_default_str();
  // For tests and fixture nodes (docs/verify.md): /proc elsewhere, and the containers from a
  // JSON file instead of the runtime.
  cmd->add_option("--proc-root", f->proc_root, "")->group("");
  cmd->add_option("--containers", f->containers_file, "")->group("");
  cmd->callback([f, &ctx] { RunVerify(*f, ctx); });
}

}  // namespace podtopo::cli
