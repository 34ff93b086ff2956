// Flags shared by the commands that run pods through a node: --node, --config, --state-dir
// and -o, and the loading of the node, the kubelet configuration and the pods they name.
#ifndef PODTOPO_CLI_NODE_FLAGS_H_
#define PODTOPO_CLI_NODE_FLAGS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "config/kubelet_config.h"
#include "cli/cli.h"
#include "render/admission_render.h"

namespace CLI {
class App;
}

namespace podtopo::cli {

// What a command does with the state directory it is given (--state-dir, --kubelet-dir); the
// rule is in docs/state.md "The state directory".
enum class StateDirUse {
  // show, remove, explain, state check|show|repair: they read a node that exists, so the
  // directory must exist.
  kExisting,
  // admit, serve, nri: they start (or continue) a node there; a missing directory is created
  // with its parents (mkdir -p).
  kCreate,
};

// THE state-directory check of every command: "" (no state dir) passes; a missing directory
// is an error for kExisting ("--state-dir: state dir X does not exist") and created for
// kCreate; a path that is not a directory is an error for both. `flag` names the option in
// the message. On error reports it through ctx and returns false.
bool PrepareStateDir(const std::string& flag, const std::string& dir, StateDirUse use,
                     Context& ctx);

struct NodeFlags {
  std::string node = "preset:demo";
  std::string config;     // "" = podtopo's default (the seed configuration, corrected)
  std::string state_dir;  // "" = in memory only
  std::string output = "table";
  bool strict = false;  // --strict (AddStrictFlag), for the commands that read pods
  std::string kubelet_version;  // --kubelet-version; "" = the newest released

  // Registers --node, --config, --state-dir, --kubelet-version and -o on `cmd`.
  void Add(CLI::App* cmd, bool with_output = true);
  // Prepares the state dir for `use` (PrepareStateDir), loads the node and the configuration
  // (printing config warnings on ctx.err) and creates the Node; on error reports it through
  // ctx and returns null. `read_only` (show, explain): the state dir is read, never written,
  // and not locked, so these work beside a `serve` or `nri` that holds the directory.
  std::unique_ptr<Node> CreateNode(StateDirUse use, Context& ctx, bool read_only = false) const;
};

// Registers --strict (the pod inputs' "other kinds are errors") on `cmd`.
void AddStrictFlag(CLI::App* cmd, bool& strict);

// Loads every pod of every file ("-" = stdin), defaulted with `cfg`'s pod gates
// (api/pod_gates.h) and with DaemonSets expanded for `node_names`. Prints one line on
// ctx.err per kind skipped (over all files) and a warning per field that is no field of its
// object (api/pod_yaml.h UnknownField; with `strict` they are errors), or returns those in
// `unknown_fields` when set. Two different pods (SamePodSpec, api/pod.h) with one
// namespace/name are an error naming both sources; the same pod given twice is kept. On error
// reports through ctx, returns false.
bool LoadAllPods(const std::vector<std::string>& files, const config::KubeletConfig& cfg,
                 bool strict, std::vector<Pod>* pods, Context& ctx,
                 const std::vector<std::string>& node_names = {},
                 std::vector<UnknownField>* unknown_fields = nullptr);

// The pods of every file under each of several configurations (`podtopo compare`): each file
// is read and parsed once (api/manifest_tree.h), then its pods are read under each distinct
// set of pod gates (api/pod_gates.h), one list per set, shared read-only by the configurations
// that have it: result[i] is configs[i]'s. Skipped kinds and unknown fields are printed once;
// pods are checked as LoadAllPods checks them. On error reports through ctx and returns nullopt.
std::optional<std::vector<std::shared_ptr<const std::vector<Pod>>>> LoadPodsUnderConfigs(
    const std::vector<std::string>& files, const std::vector<config::KubeletConfig>& configs,
    bool strict, Context& ctx, const std::vector<std::string>& node_names = {});

// Registers --kubelet-version (kubelet/version.h) on `cmd`: every command that decides or
// reads state predicts one kubelet version.
void AddKubeletVersionFlag(CLI::App* cmd, std::string& version);
// The table name of a --kubelet-version value ("" = the newest released, "v1.37.0" =
// "1.37.0"). Error: "--kubelet-version: unknown kubelet version "X": podtopo knows ...".
absl::StatusOr<std::string> ResolveKubeletVersion(const std::string& flag_value);

// Loads a --config file (printing its findings on ctx.err); "" = podtopo's default (the seed
// configuration, corrected). `kubelet_version` is the --kubelet-version value the configuration
// is read by (ResolveKubeletVersion); nullptr where podtopo is the allocator (`serve --cri`,
// `nri`): no kubelet version, the fixed behaviour. On error reports it through ctx and returns
// nullopt.
std::optional<config::KubeletConfig> LoadConfigFlag(const std::string& path,
                                                    const std::string* kubelet_version,
                                                    Context& ctx);

// Node::Admit, saying on ctx.err when it replaced a pod the node held with another spec
// (PodAllocation::replaced): "podtopo: pod NS/NAME changed; admitting it again".
absl::StatusOr<PodAllocation> AdmitPod(Node& node, const Pod& pod, Context& ctx);

// Writes the pods and the node's pools in the chosen format (table, wide, json, yaml).
void PrintAllocations(const std::vector<PodAllocation>& pods, const Node& node,
                      const std::string& format, Context& ctx);

}  // namespace podtopo::cli

#endif  // PODTOPO_CLI_NODE_FLAGS_H_
