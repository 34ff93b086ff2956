// A NodeResourceTopology (JSON, as the API server returns it) read back into what a Node needs:
// the node's topology, its kubelet configuration and its current state (Node::Options::
// occupied), with every place where the NRT could not say exactly listed.
//
// Exact (podtopo's own NRT, agent/node_resource_topology.h): the topology is the preset or
// --node-pool entry whose CpuTopologyDigest equals podtopo.io/cpu-topology-digest; the
// configuration is podtopo.io/kubelet-config with podtopo.io/kubelet-version; the state is
//   CPUs:     occupied = allocatable CPUs (the topology minus the reserved ones) minus the
//             union of the zones' podtopo.io/free-cpus;
//   memory:   per zone and type, occupied = the Memory Manager's allocatable on that NUMA node
//             (the model's machine state) minus the NRT's available;
//   devices:  per zone and resource, capacity minus available devices are held; which ids is
//             chosen (the lowest): the device manager's hints count devices, not ids.
// One thing the NRT cannot say even then: how memory of multi-NUMA allocations is grouped (the
// Memory Manager's cells). Occupied memory is modelled as single-NUMA blocks, which is exact
// when every memory allocation on the node sits on one NUMA node: always so with the
// single-numa-node policy; under another policy a node with memory held is approximate.
//
// Approximate (each gives a line in NodeSpec::approximations):
//  * no digest, or one that no preset or pool entry has: the --node-pool entry naming the node
//    (its topology), else a synthetic topology from the zones: per zone `cpu` capacity CPUs,
//    one thread per core, one socket per zone, memory = memory + hugepages capacity, devices
//    <resource> x capacity, distances from the zones' costs;
//  * no podtopo.io/kubelet-config: the pool entry's config, else one derived from the NRT:
//    topologyManagerPolicy/Scope attributes, cpuManagerPolicy static with reservedSystemCPUs =
//    podtopo.io/reserved-cpus (else per zone the lowest capacity-allocatable CPUs; none at all:
//    policy none), memoryManagerPolicy Static with reservedMemory = capacity - allocatable per
//    zone (none reserved: policy None), evictionHard {};
//  * no podtopo.io/free-cpus: the zone's `available` free CPUs are taken to be its
//    highest-numbered allocatable CPUs;
//  * numbers that disagree with the model (available above the model's allocatable): clamped.
//
// Thread safety: pure functions over their inputs.
#ifndef PODTOPO_EXTENDER_NRT_MODEL_H_
#define PODTOPO_EXTENDER_NRT_MODEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "admission/node.h"
#include "config/kubelet_config.h"
#include "extender/node_pool.h"
#include "nlohmann/json.hpp"
#include "topology/node_topology.h"

namespace podtopo::extender {

// The most CPUs an NRT may claim in all (its zones' cpu capacity): beyond, ReadNrt refuses the
// object naming the zone. The largest machines have a few thousand; a node model is quadratic
// in its CPUs, so 65,536 claimed CPUs would take 512 MiB (found by the extender_request fuzzer).
inline constexpr int64_t kMaxNodeCpus = 4096;

// Topologies known by digest: the built-in presets and the pool's entries.
class TopologyCatalog {
 public:
  explicit TopologyCatalog(const NodePool* pool);
  // nullptr when no known topology has this digest.
  std::shared_ptr<const NodeTopology> Find(const std::string& digest) const;

 private:
  std::map<std::string, std::shared_ptr<const NodeTopology>> by_digest_;
};

struct NodeSpec {
  std::string name;
  std::shared_ptr<const NodeTopology> topology;
  std::string topology_key;  // the digest (of the synthetic topology too)
  config::KubeletConfig config;
  std::string config_key;    // KubeletConfigAttribute + version
  Node::Options::Occupied occupied;
  std::string state_key;     // occupied, as text
  std::vector<std::string> approximations;  // empty: exact
  std::string kubelet;       // "kubelet 1.37", or "podtopo" for no version

  // topology_key|config_key|state_key: nodes with equal keys are one model.
  std::string Key() const { return topology_key + "|" + config_key + "|" + state_key; }
};

// What an empty node of a topology and configuration has, for the state: the Memory Manager's
// allocatable bytes (NUMA -> type -> bytes) and the CPUs the static policy reserves (it picks
// them itself when reservedSystemCPUs is not set). Callers cache it by topology and config key.
struct EmptyNode {
  std::map<int, std::map<std::string, uint64_t>> memory;
  CpuSet reserved_cpus;
};

// Reads `nrt`. Errors (kInvalidArgument) name the NRT and the field:
//   NodeResourceTopology node-a: zones[1].resources[0].available: "x": <quantity error>
// `empty` describes an empty node of the topology/config pair (computed by the caller,
// cached): it is called once the topology and config are known. `config_cache`, when given,
// keeps podtopo.io/kubelet-config values already read (a fleet has few configurations).
absl::StatusOr<NodeSpec> ReadNrt(
    const nlohmann::json& nrt, const TopologyCatalog& catalog, const NodePool* pool,
    const std::function<absl::StatusOr<EmptyNode>(const NodeSpec&)>& empty,
    std::map<std::string, config::KubeletConfig>* config_cache = nullptr);

// The NodeResourceTopology podtopo's agent publishes for `node` in its present state (the
// same fields and attributes as agent/node_resource_topology.h; free CPUs, memory and devices
// from the node's managers), for tests, benchmarks and demos of the extender.
nlohmann::json NrtOfNode(const std::string& name, const Node& node);

}  // namespace podtopo::extender

#endif  // PODTOPO_EXTENDER_NRT_MODEL_H_
