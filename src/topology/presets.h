// Built-in nodes for `--node preset:NAME` (DESIGN.md, "Node input"). Embedded in the code.
//
//   demo                                  2 sockets x 2 NUMA nodes per socket x 8 cores x 2
//                                         threads = 64 CPUs, numbered as Linux numbers Intel
//                                         servers: first threads 0-31 socket by socket, their
//                                         siblings 32-63 (CPU c and c+32 are one core); NUMA
//                                         node n holds cores 8n..8n+7; uncore id = NUMA id;
//                                         16 GiB per NUMA node, no hugepages; distances 10
//                                         local, 11 same socket, 21 other socket.
//   single-socket-ht                      the kubelet's test machines, CPU for CPU as in
//   dual-socket-ht                        pkg/kubelet/cm/cpumanager/policy_test.go
//   dual-socket-no-ht                     (topoSingleSocketHT, topoDualSocketHT,
//   dual-socket-multi-numa-per-socket-ht  topoDualSocketNoHT, topoDualSocketMultiNumaPerSocketHT,
//   quad-socket-four-way-ht               topoQuadSocketFourWayHT), uncore ids included (0, as
//                                         the Go literals leave them); as real nodes their
//                                         header counts come from the CPU map (the Go literals'
//                                         counts differ for some); 16 GiB per NUMA node, no
//                                         hugepages, distances 10 local / 20 remote.
//   t256                                  spec/kubelet-perf.md T256: 128 cores c, socket c/64,
//                                         NUMA c/16, uncore = NUMA, threads c and c+128; 16 GiB
//                                         per NUMA node, distances 10/11/21.
//   numa34                                2 sockets x 36 cores x 2 threads (CPU c and c+72),
//                                         one NUMA node (64 GiB) per socket, plus 32
//                                         memory-only NUMA nodes 2..33 (16 GiB, CXL-like, 2-17
//                                         near socket 0, 18-33 near socket 1): 34 NUMA nodes
//                                         for the Topology Manager merge benchmark.
//   gb200                                 an NVIDIA GB200 compute tray (k/k #135541): 2 Grace
//                                         CPUs of 72 cores, no SMT, NUMA 0-1 (480 GiB each);
//                                         32 memory-only NUMA nodes 2-33 of GPU HBM (23 GiB,
//                                         8 per GPU); nvidia.com/gpu gpu0-1 on NUMA 0, gpu2-3
//                                         on NUMA 1; distances 10 / 40 Grace-Grace / 80 near /
//                                         120 far. Needs max-allowable-numa-nodes >= 34.
//   numa64                                64 NUMA nodes (the mask's limit): 4 sockets x 16
//                                         nodes x 4 cores x 2 threads (CPU c and c+256), 8 GiB
//                                         each, distances 10/12/32; example.com/gpu gpu0-7 on
//                                         NUMA 0, 8, ..., 56.
//
// Example:
//   absl::StatusOr<NodeTopology> node = Preset("demo");   // source "preset:demo"
//   Preset("nope").status().message();  // unknown preset "nope" (known: demo, dual-socket-ht, ...)
#ifndef PODTOPO_TOPOLOGY_PRESETS_H_
#define PODTOPO_TOPOLOGY_PRESETS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "topology/node_topology.h"

namespace podtopo {

// The preset names, sorted.
std::vector<std::string> PresetNames();

// A built-in node. kNotFound for an unknown name, listing the known ones.
absl::StatusOr<NodeTopology> Preset(const std::string& name);

}  // namespace podtopo

#endif  // PODTOPO_TOPOLOGY_PRESETS_H_
