// podtopo nri: the external NRI plugin (docs/nri.md).
#include <signal.h>

#include <thread>

#include "CLI/CLI.hpp"
#include "cli/cli.h"
#include "cli/daemon_run.h"
#include "cli/node_flags.h"
#include "nri/plugin.h"
#include "nri/runner.h"
#include "spdlog/spdlog.h"
#include "topology/node_source.h"
#include "util/unix_socket.h"

namespace podtopo::cli {
namespace {

struct NriFlags {
  std::string socket;
  std::string config;
  std::string node = "local";
  std::string state_dir;
  std::string name = "podtopo";
  std::string index = "10";
  std::string cgroup_mount = "/sys/fs/cgroup";
  std::string log_level = "info";
};

void RunNri(const NriFlags& f, Context& ctx) {
  if (absl::Status s = nri::ValidateRegistration(f.name, f.index); !s.ok()) return ctx.Fail(s);
  absl::StatusOr<std::string> socket = UnixSocketPath("--socket", f.socket);
  if (!socket.ok()) return ctx.Fail(socket.status());
  auto topology = LoadNode(f.node);
  if (!topology.ok()) return ctx.Fail(topology.status());
  std::optional<config::KubeletConfig> cfg = LoadConfigFlag(f.config, /*kubelet_version=*/nullptr, ctx);
  if (!cfg.has_value()) return;
  if (!PrepareStateDir("--state-dir", f.state_dir, StateDirUse::kCreate, ctx)) return;
  if (!StartLogging(f.log_level, ctx)) return;
  spdlog::info("placing containers as {}", kubelet::kAllocatorBehavior);
  nri::PluginOptions po;
  po.state_dir = f.state_dir;
  po.cgroup_mount = f.cgroup_mount;
  auto plugin = nri::Plugin::Create(std::move(*topology), std::move(*cfg), po);
  if (!plugin.ok()) return ctx.Fail(plugin.status());
  StopSignals stop;  // before the runner's threads start
  nri::RunnerOptions ro;
  ro.socket = *socket;
  ro.name = f.name;
  ro.index = f.index;
  nri::Runner runner(plugin->get(), ro);
  std::thread run([&runner] { (void)runner.Run(); });
  stop.Wait();
  runner.Stop();
  run.join();
  spdlog::default_logger()->flush();
}

}  // namespace

void AddNriCommand(CLI::App& app, Context& ctx) {
  auto f = std::make_shared<NriFlags>();
  CLI::App* cmd = app.add_subcommand(
      "nri",
      "External NRI plugin (containerd 1.7+): place every CRI pod and container as the "
      "kubelet's Topology, CPU and Memory Managers would, through cpuset adjustments");
  cmd->add_option("--socket", f->socket,
                  "the runtime's NRI socket (containerd: socket_path of io.containerd.nri.v1.nri, "
                  "usually /var/run/nri/nri.sock)")
      ->required();
  cmd->add_option("--config", f->config,
                  "the KubeletConfiguration whose managers podtopo applies (cpuManagerPolicy, "
                  "topologyManagerPolicy/Scope, reserved CPUs, memory; default: the seed "
                  "configuration)");
  cmd->add_option("--node", f->node,
                  "the node's topology (local | sysfs:DIR | FILE.json | FILE.xml | preset:NAME)")
      ->capture_default_str();
  cmd->add_option("--state-dir", f->state_dir,
                  "keep cpu_manager_state, memory_manager_state and podtopo_pods.json here (the "
                  "kubelet's formats; default: in memory)");
  cmd->add_option("--name", f->name, "plugin name; registered as INDEX-NAME")->capture_default_str();
  cmd->add_option("--index", f->index, "plugin index (two digits; lower runs first)")
      ->capture_default_str();
  cmd->add_option("--cgroup-mount", f->cgroup_mount,
                  "where the cgroup v1 hierarchies are mounted (exited containers are read there)")
      ->capture_default_str();
  cmd->add_option("--log-level", f->log_level, "trace | debug | info | warn | error | off")
      ->capture_default_str();
  cmd->callback([f, &ctx] { RunNri(*f, ctx); });
}

}  // namespace podtopo::cli
