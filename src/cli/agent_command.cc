// podtopo agent: the node agent (docs/agent.md).
#include <cstdlib>
#include <optional>
#include <unistd.h>

#include <ostream>

#include "CLI/CLI.hpp"
#include "agent/agent.h"
#include "agent/allocator.h"
#include "kube/kubeconfig.h"
#include "cli/cli.h"
#include "cli/daemon_run.h"
#include "cli/node_flags.h"
#include "client/podresources_client.h"
#include "spdlog/spdlog.h"
#include "topology/node_source.h"
#include "config/duration.h"
#include "util/host_name.h"
#include "util/unix_socket.h"

namespace podtopo::cli {
namespace {

struct AgentFlags {
  std::string socket = client::kDefaultSocket;
  std::string node = "local";
  std::string config;
  std::string kubelet_dir;
  std::string kubelet_version;
  std::string metrics_addr;
  std::string nrt_out;
  std::string nrt_name;
  std::string interval = "10s";
  std::string kubeconfig;
  std::string service_account_dir = kube::kServiceAccountDir;
  std::string nrt_resync = "5m";
  std::string log_level = "info";
  bool verify = false;
  std::string runtime_endpoint = "unix:///run/containerd/containerd.sock";
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string verify_sample = "0s";
  std::string proc_root = "/proc";  // hidden, tests
  std::string containers_file;      // hidden, tests
};

void RunAgent(const AgentFlags& f, Context& ctx) {
  // Before any thread starts: the agent lives under a DaemonSet's memory limit.
  const std::string allocator = agent::UseSmallFootprintAllocator();
  auto interval = config::Duration::Parse(f.interval);
  if (!interval.ok() || interval->nanos() < config::Duration::kMillisecond) {
    return ctx.Fail(fmt::format("--interval {:?}: expected a duration of at least 1ms such as 10s or 500ms",
                                f.interval));
  }
  absl::StatusOr<std::string> socket = UnixSocketPath("--podresources-socket", f.socket);
  if (!socket.ok()) return ctx.Fail(socket.status());
  auto topology = LoadNode(f.node);
  if (!topology.ok()) return ctx.Fail(topology.status());
  std::optional<config::KubeletConfig> loaded = LoadConfigFlag(f.config, &f.kubelet_version, ctx);
  if (!loaded.has_value()) return;
  config::KubeletConfig cfg = std::move(*loaded);
  auto sample = config::Duration::Parse(f.verify_sample);
  if (!sample.ok() || sample->nanos() < 0 || sample->nanos() >= interval->nanos() ||
      sample->nanos() > 10 * config::Duration::kSecond) {
    return ctx.Fail(fmt::format("--verify-sample {:?}: expected a duration from 0s to 10s, "
                                "shorter than --interval, such as 100ms",
                                f.verify_sample));
  }
  auto resync = config::Duration::Parse(f.nrt_resync);
  if (!resync.ok() || resync->nanos() < config::Duration::kMillisecond) {
    return ctx.Fail(fmt::format("--nrt-resync {:?}: expected a duration of at least 1ms such as 5m",
                                f.nrt_resync));
  }
  // Where to publish: --kubeconfig, else the pod's service account when in a pod.
  std::optional<kube::Credentials> publish;
  if (!f.kubeconfig.empty()) {
    auto c = kube::LoadKubeconfig(f.kubeconfig);
    if (!c.ok()) return ctx.Fail(fmt::format("--kubeconfig: {}", std::string(c.status().message())));
    publish = std::move(*c);
  }
  if (!StartLogging(f.log_level, ctx)) return;
  if (f.kubeconfig.empty() && kube::InCluster()) {
    // In a pod without --kubeconfig: its service account. A pod without a token mounted
    // (automountServiceAccountToken: false) still runs the agent, without publishing.
    auto c = kube::InClusterCredentials(f.service_account_dir);
    if (c.ok()) {
      publish = std::move(*c);
    } else {
      spdlog::warn("not publishing the NodeResourceTopology: {}", std::string(c.status().message()));
    }
  }
  spdlog::debug("allocator: {}, set for a small footprint (docs/agent.md, Memory)", allocator);
  StopSignals stop;  // before the agent's threads start

  agent::AgentOptions o;
  o.socket = *socket;
  o.listen = f.metrics_addr;
  o.nrt_out = f.nrt_out;
  const char* node_name = std::getenv("NODE_NAME");
  o.nrt_name = !f.nrt_name.empty()                          ? f.nrt_name
               : node_name != nullptr && node_name[0] != 0 ? std::string(node_name)
                                                             : HostName();
  o.publish = std::move(publish);
  o.publisher.node_name = o.nrt_name;
  o.publisher.resync = std::chrono::milliseconds(resync->nanos() / config::Duration::kMillisecond);
  o.kubelet_dir = f.kubelet_dir;
  o.interval = std::chrono::milliseconds(interval->nanos() / config::Duration::kMillisecond);
  o.verify.enabled = f.verify;
  if (!f.kubelet_dir.empty()) o.verify.kubelet_dir = f.kubelet_dir;
  o.verify.runtime_endpoint = f.runtime_endpoint;
  o.verify.containers_file = f.containers_file;
  o.verify.podresources_socket = *socket;
  o.verify.cgroup_root = f.cgroup_root;
  o.verify.proc_root = f.proc_root;
  o.verify.sample =
      std::chrono::milliseconds(sample->nanos() / config::Duration::kMillisecond);
  auto a = agent::Agent::Start(std::move(*topology), std::move(cfg), std::move(o));
  if (!a.ok()) return ctx.Fail(a.status());
  spdlog::info("polling {} every {}", *socket, f.interval);
  stop.Wait();
  (*a)->Stop();
  spdlog::info("stopped");
  spdlog::default_logger()->flush();
}

constexpr char kAgentDescription[] =
    "Node agent: poll the kubelet's PodResources API, serve Prometheus metrics, the "
    "NodeResourceTopology object and the live node picture";

// The agent's flags on `cmd`, whose callback runs it: `podtopo agent` and `podtopo-agent`.
void AddAgentFlags(CLI::App* cmd, Context& ctx) {
  auto f = std::make_shared<AgentFlags>();
  cmd->add_option("--podresources-socket", f->socket,
                  "the kubelet's PodResources socket (a path, relative or absolute, or unix:PATH)")
      ->capture_default_str();
  cmd->add_option("--node", f->node,
                  "the node's topology (preset:NAME | FILE.json | FILE.xml | sysfs:DIR | local)")
      ->capture_default_str();
  cmd->add_option("--config", f->config,
                  "the kubelet's KubeletConfiguration (reserved CPUs, Topology Manager policy "
                  "and scope; default: the seed configuration)");
  AddKubeletVersionFlag(cmd, f->kubelet_version);
  cmd->add_option("--kubelet-dir", f->kubelet_dir,
                  "check cpu_manager_state and memory_manager_state here every interval "
                  "(podtopo_checkpoint_* metrics)");
  cmd->add_option("--metrics-addr", f->metrics_addr,
                  "serve /metrics, /nrt and / on HOST:PORT (:PORT = 127.0.0.1:PORT)")
      ->required();
  cmd->add_option("--nrt-out", f->nrt_out,
                  "write the NodeResourceTopology (v1alpha2) YAML here atomically after every poll");
  cmd->add_option("--nrt-name", f->nrt_name,
                  "the object's name, the node's name (default: env NODE_NAME, else the host name)");
  cmd->add_option("--kubeconfig", f->kubeconfig,
                  "publish the NodeResourceTopology to this kubeconfig's API server (server-side "
                  "apply); in a pod without it: the pod's service account");
  cmd->add_option("--service-account-dir", f->service_account_dir,
                  "in a pod (KUBERNETES_SERVICE_HOST set) without --kubeconfig: the service "
                  "account's token and ca.crt (the token is re-read on every request)")
      ->capture_default_str();
  cmd->add_option("--nrt-resync", f->nrt_resync,
                  "write the NodeResourceTopology again after this long even if unchanged")
      ->capture_default_str();
  cmd->add_option("--interval", f->interval, "time between polls (Go duration)")
      ->capture_default_str();
  cmd->add_option("--log-level", f->log_level, "trace | debug | info | warn | error | off")
      ->capture_default_str();
  cmd->add_flag("--verify", f->verify,
               "run podtopo verify's checks after every poll (podtopo_verify_* metrics): the "
               "intent of --kubelet-dir (default /var/lib/kubelet) and PodResources, the "
               "containers of --runtime-endpoint, their cgroups under --cgroup-root");
  cmd->add_option("--runtime-endpoint", f->runtime_endpoint,
                  "with --verify: the CRI runtime's socket, which lists the running containers")
      ->capture_default_str();
  cmd->add_option("--cgroup-root", f->cgroup_root,
                  "with --verify: where cgroups are mounted (v1: with cpuset/ and memory/; v2: "
                  "the unified tree)")
      ->capture_default_str();
  cmd->add_option("--verify-sample", f->verify_sample,
                  "with --verify: a window over which to measure the CPU time of host tasks that "
                  "may run on exclusive CPUs (0s: affinity only; shorter than --interval)")
      ->capture_default_str();
  // For tests and fixture nodes, as `podtopo verify`'s.
  cmd->add_option("--proc-root", f->proc_root, "")->group("");
  cmd->add_option("--containers", f->containers_file, "")->group("");
  cmd->callback([f, &ctx] { RunAgent(*f, ctx); });
}

}  // namespace

void AddAgentCommand(CLI::App& app, Context& ctx) {
  AddAgentFlags(app.add_subcommand("agent", kAgentDescription), ctx);
}

int RunAgentProgram(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app{std::string("podtopo-agent: ") + kAgentDescription + " (the flags of `podtopo agent`)"};
  app.set_version_flag("--version", "podtopo-agent 0.1.0 (kubelet v1.37 semantics)");
  Context ctx{&out, &err};
  if (argc > 1 && std::string(argv[1]) == "agent") {  // `podtopo agent ...` with the new name
    ctx.Fail("podtopo-agent takes the flags of `podtopo agent` without the word agent: "
             "podtopo-agent --metrics-addr ... (podtopo-agent --help)");
    return ctx.exit_code;
  }
  AddAgentFlags(&app, ctx);
  return ParseAndRun(app, argc, argv, ctx);
}

}  // namespace podtopo::cli
