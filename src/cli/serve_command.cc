// podtopo serve: a simulated kubelet node serving the PodResources API (docs/serve.md), or,
// with --kubeconfig and --node-name, a simulated node on a real control plane
// (kubenode/kube_node.h; docs/serve.md "A simulated node on a real control plane").
#include <optional>
#include <ostream>

#include "CLI/CLI.hpp"
#include "cli/cli.h"
#include "cli/daemon_run.h"
#include "cli/node_flags.h"
#include "config/kubelet_config.h"
#include "kube/kubeconfig.h"
#include "kubenode/kube_node.h"
#include "serve/daemon.h"
#include "serve/runtime_hooks.h"
#include "spdlog/spdlog.h"
#include "topology/node_source.h"
#include "util/unix_socket.h"

namespace podtopo::cli {
namespace {

struct ServeOpts {
  NodeFlags flags;
  std::string socket;
  std::string pods_dir;
  std::string metrics_addr;
  std::string compat = "1.37";
  std::string cri;
  double qps = 100;
  int burst = 10;
  std::string log_level = "info";
  // A simulated node on a real control plane.
  std::string kubeconfig;
  std::string node_name;
  std::string node_address = "127.0.0.1";
  double heartbeat_seconds = 10;
};

// Flags of the pods-dir mode that mean nothing to a node on a control plane.
struct ModeFlag {
  const char* name;
  bool set;
};

// `serve --kubeconfig FILE --node-name NAME`: registers the Node, admits the pods bound to it,
// publishes its NodeResourceTopology; SIGTERM stops it.
void RunKubeNode(const ServeOpts& o, CLI::App* cmd, Context& ctx) {
  for (ModeFlag f : {ModeFlag{"--socket", !o.socket.empty()}, {"--pods-dir", !o.pods_dir.empty()},
                     {"--cri", !o.cri.empty()}, {"--metrics-addr", !o.metrics_addr.empty()},
                     {"--compat", cmd->count("--compat") > 0},
                     {"--rate-limit-qps", cmd->count("--rate-limit-qps") > 0},
                     {"--rate-limit-burst", cmd->count("--rate-limit-burst") > 0}}) {
    if (f.set) {
      return ctx.Fail(fmt::format(
          "{}: not used with --kubeconfig: a node on a control plane gets its pods from the API "
          "server and serves no PodResources socket (run serve without --kubeconfig for that)",
          f.name));
    }
  }
  if (o.node_name.empty()) {
    return ctx.Fail("--kubeconfig needs --node-name NAME: the Node this simulated node registers");
  }
  if (o.heartbeat_seconds <= 0) return ctx.Fail("--heartbeat: must be positive");
  auto credentials = kube::LoadKubeconfig(o.kubeconfig);
  if (!credentials.ok()) {
    return ctx.Fail(fmt::format("--kubeconfig: {}", std::string(credentials.status().message())));
  }
  auto topology = LoadNode(o.flags.node);
  if (!topology.ok()) return ctx.Fail(topology.status());
  std::optional<config::KubeletConfig> cfg =
      LoadConfigFlag(o.flags.config, &o.flags.kubelet_version, ctx);
  if (!cfg.has_value()) return;
  if (!PrepareStateDir("--state-dir", o.flags.state_dir, StateDirUse::kCreate, ctx)) return;
  if (!StartLogging(o.log_level, ctx)) return;
  const std::string version = cfg->kubelet_version;

  StopSignals stop;
  kubenode::KubeNodeOptions ko;
  ko.node_name = o.node_name;
  ko.state_dir = o.flags.state_dir;
  ko.address = o.node_address;
  ko.heartbeat = std::chrono::milliseconds(static_cast<int64_t>(o.heartbeat_seconds * 1000));
  auto node = kubenode::KubeNode::Start(*std::move(credentials), *std::move(topology),
                                        *std::move(cfg), ko);
  if (!node.ok()) {
    return ctx.Fail(fmt::format("node {} on {}: {}", o.node_name, o.kubeconfig,
                                std::string(node.status().message())));
  }
  spdlog::info("ready: node {} on {} ({}), decisions of kubelet {}", o.node_name, o.kubeconfig,
               o.flags.node, version);
  stop.Wait();
  (*node)->Stop();
  kubenode::KubeNodeStats s = (*node)->Stats();
  spdlog::info("stopped: {} pods held, {} admitted, {} rejected, {} released", s.pods, s.admitted,
               s.rejected, s.released);
  spdlog::default_logger()->flush();
}

void RunServe(const ServeOpts& o, CLI::App* cmd, Context& ctx) {
  if (!o.kubeconfig.empty()) return RunKubeNode(o, cmd, ctx);
  if (!o.node_name.empty()) {
    return ctx.Fail("--node-name: needs --kubeconfig FILE (the API server the node registers "
                    "with)");
  }
  const char* without = " (or --kubeconfig FILE --node-name NAME: a simulated node on a real "
                        "control plane)";
  if (o.socket.empty()) return ctx.Fail(fmt::format("--socket is required{}", without));
  if (o.pods_dir.empty()) return ctx.Fail(fmt::format("--pods-dir is required{}", without));
  auto topology = LoadNode(o.flags.node);
  if (!topology.ok()) return ctx.Fail(topology.status());
  // As the allocator (--cri) podtopo follows the fixed behaviour, not a kubelet version's bugs.
  if (!o.cri.empty() && !o.flags.kubelet_version.empty()) {
    return ctx.Fail(fmt::format(
        "--kubelet-version {}: serve --cri places real containers and follows the fixed "
        "behaviour ({}); it predicts no kubelet version. Drop --kubelet-version, or run serve "
        "without --cri to simulate that kubelet",
        o.flags.kubelet_version, kubelet::kAllocatorBehavior));
  }
  std::optional<config::KubeletConfig> loaded =
      LoadConfigFlag(o.flags.config, o.cri.empty() ? &o.flags.kubelet_version : nullptr, ctx);
  if (!loaded.has_value()) return;
  config::KubeletConfig cfg = std::move(*loaded);
  const std::string cfg_version = cfg.kubelet_version;
  if (o.qps > 0 && o.burst < 1) {
    return ctx.Fail("--rate-limit-burst: must be at least 1 when --rate-limit-qps is above 0");
  }
  absl::StatusOr<std::string> socket = UnixSocketPath("--socket", o.socket);
  if (!socket.ok()) return ctx.Fail(socket.status());
  if (!PrepareStateDir("--state-dir", o.flags.state_dir, StateDirUse::kCreate, ctx)) return;
  if (!StartLogging(o.log_level, ctx)) return;

  serve::DaemonOptions d;
  d.socket_path = *socket;
  d.pods_dir = o.pods_dir;
  d.state_dir = o.flags.state_dir;
  d.metrics_addr = o.metrics_addr;
  d.compat = o.compat == "1.36" ? podresources::Compat::k1_36 : podresources::Compat::k1_37;
  d.qps = o.qps;
  d.burst = o.burst;
  d.strict = o.flags.strict;
  if (!o.cri.empty()) {
    auto hooks = serve::MakeRuntimeHooks({o.cri, cfg, o.flags.state_dir});
    if (!hooks.ok()) return ctx.Fail(hooks.status());
    d.hooks = std::move(*hooks);
  }

  // SIGTERM / SIGINT are taken by stop.Wait(): blocked before any thread starts.
  StopSignals stop;

  auto daemon = serve::Daemon::Start(std::move(*topology), std::move(cfg), std::move(d));
  if (!daemon.ok()) return ctx.Fail(daemon.status());
  if (absl::Status s = (*daemon)->WaitRestored(); !s.ok()) {
    (*daemon)->Stop();
    return ctx.Fail(s);
  }
  spdlog::info("ready: watching {} ({})", o.pods_dir,
               o.cri.empty() ? fmt::format("decisions of kubelet {}", cfg_version)
                             : std::string(kubelet::kAllocatorBehavior));
  stop.Wait();
  (*daemon)->Stop();
  spdlog::info("stopped");
  spdlog::default_logger()->flush();
}

}  // namespace

void AddServeCommand(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ServeOpts>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Run a simulated kubelet node: admit the pods of a directory, serve PodResources; or, with "
      "--kubeconfig, admit the pods an API server binds to Node --node-name");
  cmd->add_option("--socket", o->socket,
                  "PodResources unix socket (the kubelet's: "
                  "/var/lib/kubelet/pod-resources/kubelet.sock); required without --kubeconfig");
  cmd->add_option("--pods-dir", o->pods_dir,
                  "directory of pod manifests, watched with inotify; required without --kubeconfig");
  cmd->add_option("--kubeconfig", o->kubeconfig,
                  "play Node --node-name on this kubeconfig's API server: register it, admit the "
                  "pods bound to it (Running or Failed with the kubelet's reason), publish its "
                  "NodeResourceTopology");
  cmd->add_option("--node-name", o->node_name, "the Node to register (with --kubeconfig)");
  cmd->add_option("--node-address", o->node_address,
                  "the Node's InternalIP and its pods' hostIP (with --kubeconfig)")
      ->capture_default_str();
  cmd->add_option("--heartbeat", o->heartbeat_seconds,
                  "seconds between Lease renewals and pod resyncs (with --kubeconfig)")
      ->capture_default_str();
  o->flags.Add(cmd, /*with_output=*/false);
  cmd->add_option("--metrics-addr", o->metrics_addr,
                  "serve prometheus metrics on HOST:PORT (:PORT = 127.0.0.1:PORT); off if unset");
  cmd->add_option("--compat", o->compat, "kubelet version whose PodResources reporting to serve")
      ->check(CLI::IsMember({"1.36", "1.37"}))
      ->capture_default_str();
  AddStrictFlag(cmd, o->flags.strict);
  cmd->add_option("--cri", o->cri,
                  "run admitted pods on this CRI runtime endpoint (unix:///run/containerd/"
                  "containerd.sock, or a path, relative or absolute)");
  cmd->add_option("--rate-limit-qps", o->qps, "PodResources rate limit (0 = off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--rate-limit-burst", o->burst, "PodResources rate limit burst")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--log-level", o->log_level, "trace | debug | info | warn | error | off")
      ->capture_default_str();
  cmd->callback([o, cmd, &ctx] { RunServe(*o, cmd, ctx); });
}

}  // namespace podtopo::cli
