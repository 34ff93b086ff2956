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
#include "verify/discovery.h"
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
    if (absl::Status s = verify::AddPodResources(f.podresources_socket, *intent); !s.ok()) {
      discovery_problems.push_back(fmt::format("--podresources-socket {}: {}", f.podresources_socket,
                                               std::string(s.message())));
    }
  }
  std::vector<verify::ContainerRef> refs;
  if (!f.containers_file.empty()) {
    auto file = verify::ContainersFromFile(f.containers_file);
    if (!file.ok()) {
      return ctx.Fail(fmt::format("--containers: {}", std::string(file.status().message())));
    }
    refs = std::move(*file);
  } else {
    absl::Status s = verify::ContainersFromRuntime(f.runtime_endpoint, refs, discovery_problems);
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
