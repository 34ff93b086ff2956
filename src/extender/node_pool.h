// `--node-pool FILE`: what the extender knows of nodes beyond their NodeResourceTopology.
//
// A YAML list; each entry names nodes (a name glob, a label selector, or both: all must
// match) and says what they are:
//   - nodes: "gpu-*"                   # fnmatch(3) glob on the node name (optional)
//     labels: {pool: gpu}              # every pair must be in the NRT's metadata.labels
//     node: preset:gb200               # a --node SPEC (topology/node_source.h)
//     config: kubelet-gb200.yaml       # the nodes' KubeletConfiguration (optional)
//     kubeletVersion: "1.37"           # optional; kubelet/version.h names
// Relative paths (node files, config) resolve against the pool file's directory. An entry
// serves twice: its topology is matched by digest against any NRT's
// podtopo.io/cpu-topology-digest (as the built-in presets are), and for a node it names, its
// topology and configuration stand in for what the NRT does not carry (an NRT of another
// exporter: no digest, no podtopo.io/kubelet-config). The first entry that matches wins.
//
// Example:
//   absl::StatusOr<NodePool> pool = NodePool::Load("pool.yaml");
//   const PoolEntry* e = pool->Match("gpu-7", labels);    // nullptr when none names it
//
// Thread safety: immutable after Load.
#ifndef PODTOPO_EXTENDER_NODE_POOL_H_
#define PODTOPO_EXTENDER_NODE_POOL_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "config/kubelet_config.h"
#include "topology/node_topology.h"

namespace podtopo::extender {

struct PoolEntry {
  std::string where;  // "pool.yaml: entry 2", for messages
  std::string nodes_glob;
  std::map<std::string, std::string> labels;
  NodeTopology topology;
  std::string digest;  // CpuTopologyDigest(topology)
  std::optional<config::KubeletConfig> config;  // with kubelet_version set when given
};

class NodePool {
 public:
  // Errors (kInvalidArgument / kNotFound) name the file, the entry and the field:
  //   pool.yaml: entry 2: config: kubelet.yaml: <the reader's error>
  static absl::StatusOr<NodePool> Load(const std::string& path);
  // The same from text; `path` names it and anchors relative paths.
  static absl::StatusOr<NodePool> Parse(const std::string& text, const std::string& path);

  // The first entry naming the node.
  const PoolEntry* Match(const std::string& node,
                         const std::map<std::string, std::string>& labels) const;
  const std::vector<PoolEntry>& entries() const { return entries_; }

 private:
  std::vector<PoolEntry> entries_;
};

}  // namespace podtopo::extender

#endif  // PODTOPO_EXTENDER_NODE_POOL_H_
