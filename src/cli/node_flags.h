// Flags shared by the commands that run pods through a node: --node, --config, --state-dir
// and -o, and the loading of the node, the kubelet configuration and the pods they name.
#ifndef PODTOPO_CLI_NODE_FLAGS_H_
#define PODTOPO_CLI_NODE_FLAGS_H_

#include <memory>
#include <string>
#include <vector>

#include "admission/node.h"
#include "config/kubelet_config.h"
#include "cli/cli.h"
#include "render/admission_render.h"

namespace CLI {
class App;
}

namespace podtopo::cli {

struct NodeFlags {
  std::string node = "preset:demo";
  std::string config;     // "" = podtopo's default (the seed configuration, corrected)
  std::string state_dir;  // "" = in memory only
  std::string output = "table";
  bool strict = false;  // --strict (AddStrictFlag), for the commands that read pods

  // Registers --node, --config, --state-dir and -o on `cmd`.
  void Add(CLI::App* cmd, bool with_output = true);
  // Loads the node and the configuration (printing config warnings on ctx.err) and creates
  // the Node; on error reports it through ctx and returns null.
  std::unique_ptr<Node> CreateNode(Context& ctx) const;
};

// The kubelet configuration of a --config flag ("" = the seed default): prints its findings on
// ctx.err; on a load error or an error finding reports through ctx and returns false.
bool LoadConfigFlag(const std::string& path, config::KubeletConfig* cfg, Context& ctx);

// Registers --strict (the pod inputs' "other kinds are errors") on `cmd`.
void AddStrictFlag(CLI::App* cmd, bool& strict);

// Loads every pod of every file ("-" = stdin), defaulted with `cfg`'s pod gates
// (api/pod_gates.h) and with DaemonSets expanded for `node_names`. Prints one line on
// ctx.err per kind skipped (over all files); on error reports through ctx, returns false.
bool LoadAllPods(const std::vector<std::string>& files, const config::KubeletConfig& cfg,
                 bool strict, std::vector<Pod>* pods, Context& ctx,
                 const std::vector<std::string>& node_names = {});

// Writes the pods and the node's pools in the chosen format (table, wide, json, yaml).
void PrintAllocations(const std::vector<PodAllocation>& pods, const Node& node,
                      const std::string& format, Context& ctx);

}  // namespace podtopo::cli

#endif  // PODTOPO_CLI_NODE_FLAGS_H_
