// What `podtopo agent` sees of a running node in one poll, and what it makes of it.
//
// Observe() reads the kubelet's PodResources API (List, then GetAllocatableResources) and
// builds every pod's view with client::BuildPodView, the one function that counts a pod's
// pod-level and container-level resources once (client/pod_view.h). It works against a v1.37
// kubelet and against an older one without the pod-level fields.
//
// AccountZones() turns an observation into the per-NUMA numbers that both the metrics and the
// NodeResourceTopology object publish, so that they can never disagree:
//   cpu        capacity    the NUMA node's CPUs (the node's topology)
//              allocatable capacity minus the reserved CPUs: the CPUs GetAllocatableResources
//                          reports on that node; without them (a kubelet whose CPU Manager
//                          policy is none), capacity minus the configuration's
//                          reservedSystemCPUs
//              available   allocatable minus the CPUs pods hold for themselves, each pod
//                          counted once (PodView::usage_cpus)
//   memory, hugepages-*    capacity from the topology (memory = MemTotal minus hugepages),
//              allocatable from GetAllocatableResources' blocks of that node (capacity when the
//              kubelet reports none), available = allocatable minus the pods' blocks counted
//              once (PodView::usage_blocks); a block spanning several NUMA nodes is taken from
//              its nodes in ascending order, as far as each node has room
//   devices    capacity = allocatable = the allocatable devices on that node; available
//              minus the devices pods hold.
//
// Example:
//   auto client = client::PodResourcesClient::Connect({.socket = sock}).value();
//   absl::StatusOr<Observation> o = Observe(*client, NumaMapOf(topology));
//   std::vector<ZoneAccount> zones = AccountZones(topology, config, *o);
//   zones[0].cpu.available;   // 31
#ifndef PODTOPO_AGENT_OBSERVATION_H_
#define PODTOPO_AGENT_OBSERVATION_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/pod_view.h"
#include "client/podresources_client.h"
#include "config/kubelet_config.h"
#include "topology/node_topology.h"

namespace podtopo::agent {

struct Observation {
  std::chrono::system_clock::time_point time;
  std::vector<client::PodView> pods;  // in the server's order
  client::NodeUsage usage;
  // nullopt when the server does not implement GetAllocatableResources.
  std::optional<client::AllocatableView> allocatable;
  // What the views noticed (a CPU on no known NUMA node, overlapping pods, ...).
  std::vector<std::string> warnings;
};

// Which call failed, for the scrape-error metric: "connect", "list", "get_allocatable",
// "malformed" (an answer BuildPodView rejects).
struct ObserveError {
  std::string call;
  absl::Status status;
};

// One poll. On error, the call that failed and its status (naming the socket).
absl::StatusOr<Observation> Observe(const client::PodResourcesClient& client,
                                    const client::NumaMap& numa_map, ObserveError* error);

// NUMA node id -> its CPUs, from the node's topology.
client::NumaMap NumaMapOf(const NodeTopology& topology);

struct Amount {
  uint64_t capacity = 0;
  uint64_t allocatable = 0;
  uint64_t available = 0;
};

struct ZoneAccount {
  int numa = 0;
  Amount cpu;                              // CPUs
  CpuSet free_cpus;                        // the allocatable CPUs no pod holds (cpu.available)
  std::map<std::string, Amount> memory;    // "memory", "hugepages-2Mi", ... -> bytes
  std::map<std::string, Amount> devices;   // resource name -> devices
  std::vector<std::pair<int, uint64_t>> distances;  // (NUMA node, distance), the node's row
};

// The per-NUMA accounting of `o` on `topology` (one entry per NUMA node, ascending).
std::vector<ZoneAccount> AccountZones(const NodeTopology& topology,
                                      const config::KubeletConfig& config, const Observation& o);

}  // namespace podtopo::agent

#endif  // PODTOPO_AGENT_OBSERVATION_H_
