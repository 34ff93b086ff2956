// The Memory Manager's state model (kubelet memorymanager/state/state.go) and the default
// machine state the Static policy derives from the node (getDefaultMachineState).
//
// MemoryState is what the kubelet keeps in memory and checkpoints to memory_manager_state:
// the per-NUMA-node machine state, the container assignments and (KEP-5526) the pod-level
// assignments. Field names follow the checkpoint JSON ("total", "systemReserved", ...).
//
// Example:
//   std::vector<MachineNumaNode> nodes = {{0, 3ull << 30, {{1048576, 1}}}};  // 3Gi, 1x1Gi page
//   SystemReservedMemory reserved = {{0, {{"memory", 512ull << 20}}}};
//   NumaNodeMap ms = DefaultMachineState(nodes, reserved);
//   // ms[0].memory_map["memory"].allocatable == 1.5Gi; ms[0].memory_map["hugepages-1Gi"].free == 1Gi
//
// Thread safety: value types.
#ifndef PODTOPO_MEMORYMANAGER_MEMORY_STATE_H_
#define PODTOPO_MEMORYMANAGER_MEMORY_STATE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "topology/node_topology.h"

namespace podtopo::memorymanager {

// MemoryTable: one memory type ("memory", "hugepages-2Mi", ...) on one NUMA node, in bytes.
struct MemoryTable {
  uint64_t total = 0;            // "total" (TotalMemSize)
  uint64_t system_reserved = 0;  // "systemReserved"
  uint64_t allocatable = 0;      // "allocatable"
  uint64_t reserved = 0;         // "reserved": held by assignments
  uint64_t free = 0;             // "free"

  friend bool operator==(const MemoryTable&, const MemoryTable&) = default;
};

// NUMANodeState.
struct NumaNodeState {
  // +1 per (block, node of the block) allocated on this node.
  int number_of_assignments = 0;
  // Memory type -> table. Ordered, so walks are deterministic.
  std::map<std::string, MemoryTable> memory_map;
  // The group of NUMA nodes this node is allocated with ([id] when unused / single-NUMA).
  std::vector<int> cells;

  friend bool operator==(const NumaNodeState&, const NumaNodeState&) = default;
};

// NUMANodeMap: NUMA node id -> state ("machineState").
using NumaNodeMap = std::map<int, NumaNodeState>;

// Block: memory of one type assigned on a set of NUMA nodes.
struct Block {
  std::vector<int> numa_affinity;  // "numaAffinity"
  std::string type;                // "type"
  uint64_t size = 0;               // "size"

  friend bool operator==(const Block&, const Block&) = default;
};

// ContainerMemoryAssignments: podUID -> container name -> blocks ("entries").
using ContainerMemoryAssignments =
    std::map<std::string, std::map<std::string, std::vector<Block>>>;
// PodMemoryAssignments: podUID -> the pod's blocks ("podEntries[uid].memoryBlocks", KEP-5526).
using PodMemoryAssignments = std::map<std::string, std::vector<Block>>;

// SystemReservedMemory: NUMA node id -> memory type -> reserved bytes (systemReservedMemory).
using SystemReservedMemory = std::map<int, std::map<std::string, uint64_t>>;

// The whole Memory Manager state (state.State). Lookups distinguish "no entry" (nullptr) from
// an entry with an empty block list, as the Go state does (nil vs empty slice).
struct MemoryState {
  NumaNodeMap machine_state;
  ContainerMemoryAssignments assignments;
  PodMemoryAssignments pod_assignments;

  // GetMemoryBlocks: the container's blocks, or nullptr when it has no entry.
  const std::vector<Block>* GetMemoryBlocks(const std::string& pod_uid,
                                            const std::string& container_name) const;
  // SetMemoryBlocks: creates or replaces the container's entry.
  void SetMemoryBlocks(const std::string& pod_uid, const std::string& container_name,
                       std::vector<Block> blocks);
  // GetPodMemoryBlocks: the pod's blocks, or nullptr when it has no pod entry.
  const std::vector<Block>* GetPodMemoryBlocks(const std::string& pod_uid) const;
  void SetPodMemoryBlocks(const std::string& pod_uid, std::vector<Block> blocks);
  // Delete: removes the container's entry (and the pod's map when it becomes empty).
  void Delete(const std::string& pod_uid, const std::string& container_name);
  // DeletePod: removes the pod's container entries and its pod entry.
  void DeletePod(const std::string& pod_uid);
  // Number of container entries the pod has.
  size_t ContainerEntryCount(const std::string& pod_uid) const;

  friend bool operator==(const MemoryState&, const MemoryState&) = default;
};

// One hugepage pool of a NUMA node as cadvisor reports it (HugePagesInfo).
struct HugePagesInfo {
  uint64_t page_size_kib = 0;  // PageSize, KiB
  uint64_t num_pages = 0;      // NumPages
};

// One NUMA node as cadvisor reports it (MachineInfo.Topology[i]): id, total memory in bytes
// (hugepages included) and hugepage pools.
struct MachineNumaNode {
  int id = 0;
  uint64_t memory = 0;
  std::vector<HugePagesInfo> hugepages;
};

// The hugepage resource name of a page size: "hugepages-" + BinarySI quantity of
// page_size_kib*1024 ("hugepages-2Mi", "hugepages-1Gi", "hugepages-64Ki").
std::string HugePageResourceName(uint64_t page_size_kib);

// True for "memory" and "hugepages-*" (the types the Memory Manager pins).
bool IsMemoryResourceName(const std::string& name);
// corev1helper.IsHugePageResourceName: has the "hugepages-" prefix.
bool IsHugePageResourceName(const std::string& name);

// The cadvisor-style node list of a NodeTopology. Every NUMA node is included, also the
// CPU-less ones (they still have memory). Hugepage pools come from NumaNode::hugepages
// ("hugepages-2Mi" -> total bytes): the page size is parsed from the name.
// Errors (kInvalidArgument) name the node and resource: a name that is not
// "hugepages-<quantity>", a page size that is not a positive multiple of 1KiB, or a total
// that is not a whole number of pages.
absl::StatusOr<std::vector<MachineNumaNode>> MachineNumaNodesFromTopology(
    const NodeTopology& topology);

// getDefaultMachineState: per node (in list order) Cells=[id], no assignments; each hugepage
// size gets total = pages*size, allocatable = free = total - systemReserved; "memory" gets
// total = node memory, allocatable = free = memory - systemReserved["memory"] - all hugepage
// totals. uint64 arithmetic wraps on underflow exactly as in Go.
NumaNodeMap DefaultMachineState(const std::vector<MachineNumaNode>& nodes,
                                const SystemReservedMemory& system_reserved);

// areMachineStatesEqual: same node ids; per node equal NumberOfAssignments, Cells (as sets),
// memory-map keys, and per type equal total/systemReserved/allocatable; free and reserved are
// compared as SUMS over the node's Cells group (nodes of the group missing in either state
// count as zero). When `why` is given it receives a short description of the first difference.
bool AreMachineStatesEqual(const NumaNodeMap& a, const NumaNodeMap& b, std::string* why = nullptr);

// Blocks as multisets: same blocks regardless of order (upstream tests compare this way).
bool SameBlocks(const std::vector<Block>& a, const std::vector<Block>& b);
// Assignments equal up to block order inside each container.
bool SameAssignments(const ContainerMemoryAssignments& a, const ContainerMemoryAssignments& b);

// Short human-readable forms for messages and test failures.
std::string BlockString(const Block& block);           // "{memory 1073741824 @ [0,1]}"
std::string BlocksString(const std::vector<Block>& blocks);
std::string MachineStateString(const NumaNodeMap& state);

}  // namespace podtopo::memorymanager

#endif  // PODTOPO_MEMORYMANAGER_MEMORY_STATE_H_
