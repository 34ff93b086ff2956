// The kubelet's `reservedMemory` setting: config validation, the startup check against the
// Node Allocatable reservation, and the conversion into per-NUMA system-reserved bytes
// (kubelet config/validation/validation_reserved_memory.go and memorymanager/memory_manager.go).
//
// Example (2 NUMA nodes, kube-reserved + system-reserved + hard eviction = 2Gi of memory):
//   std::vector<MemoryReservation> r = {{0, {{"memory", Quantity::Parse("1Gi").value()}}},
//                                       {1, {{"memory", Quantity::Parse("1Gi").value()}}}};
//   auto reserved = GetSystemReservedMemory({0, 1}, {{"memory", Quantity::Parse("2Gi").value()}}, r);
//   // (*reserved)[0]["memory"] == 1073741824
//   GetSystemReservedMemory({0, 1}, {}, r).status().message()
//   // the total amount "2Gi" of type "memory" is not equal to the value "0" determined by
//   // Node Allocatable feature
//
// Where the kubelet walks a Go map (and so may report a different type first on each run),
// podtopo walks resource names in sorted order.
#ifndef PODTOPO_MEMORYMANAGER_RESERVED_MEMORY_H_
#define PODTOPO_MEMORYMANAGER_RESERVED_MEMORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/pod.h"
#include "memorymanager/memory_state.h"
#include "resource/quantity.h"

namespace podtopo::memorymanager {

// kubeletconfig.MemoryReservation: one `reservedMemory` entry.
struct MemoryReservation {
  int32_t numa_node = 0;
  ResourceList limits;  // "memory", "hugepages-<size>" -> quantity
};

// validateReservedMemoryConfiguration: every problem, in entry order (resources of one entry
// in sorted order):
//   invalid configuration: the limit type "cpu" for NUMA node 0 is not supported, only
//     [memory hugepages-<HugePageSize>] is accepted
//   invalid configuration: reserved memory may not be zero for NUMA node 0 and resource "memory"
//   invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and
//     resource "memory"
// Empty when the configuration is valid.
std::vector<std::string> ValidateReservedMemoryConfiguration(
    const std::vector<MemoryReservation>& reserved_memory);

// validateReservedMemory (at Memory Manager start, Static policy only). `numa_ids` are the
// machine's NUMA node ids. Errors (kInvalidArgument):
//   the reserved memory configuration references a NUMA node 2 that does not exist on this machine
//   the total amount "12" of type "memory" is not equal to the value "5" determined by Node
//     Allocatable feature
// The check covers every type of `reserved_memory` and the memory / hugepages-* types of
// `node_allocatable_reservation`; totals print as Quantity.String() in the format Go's
// Quantity.Add gives them.
absl::Status ValidateReservedMemory(const std::vector<int>& numa_ids,
                                    const ResourceList& node_allocatable_reservation,
                                    const std::vector<MemoryReservation>& reserved_memory);

// convertReserved: node id -> type -> bytes, with an (empty) entry for every machine node.
// A quantity that is not a whole int64 -> kInvalidArgument
// "could not covert a variable of type Quantity to int64" (sic, the kubelet's text).
absl::StatusOr<SystemReservedMemory> ConvertReserved(
    const std::vector<int>& numa_ids, const std::vector<MemoryReservation>& reserved_memory);

// getSystemReservedMemory: ValidateReservedMemory, then ConvertReserved.
absl::StatusOr<SystemReservedMemory> GetSystemReservedMemory(
    const std::vector<int>& numa_ids, const ResourceList& node_allocatable_reservation,
    const std::vector<MemoryReservation>& reserved_memory);

// One hard eviction threshold with operator "<" (evictionapi.Threshold): signal
// "memory.available" or "nodefs.available"; the value is a quantity or a percentage of the
// capacity (float32 as in Go).
struct HardEvictionThreshold {
  std::string signal;
  std::optional<Quantity> quantity;
  float percentage = 0;
};

// containerManager.GetNodeAllocatableReservation: for every resource of `capacity`,
// system-reserved + kube-reserved + hard-eviction reservation (memory.available -> memory,
// nodefs.available -> ephemeral-storage; a percentage is int64(capacity * percentage), BinarySI);
// zero sums are left out. The result's format follows Go's Quantity.Add (the first non-zero
// addend's format). The exact eviction-percentage handling is UNCONFIRMED (spec §B.1).
ResourceList NodeAllocatableReservation(const ResourceList& capacity,
                                        const ResourceList& system_reserved,
                                        const ResourceList& kube_reserved,
                                        const std::vector<HardEvictionThreshold>& hard_eviction);

// Quantity.AsInt64: the value when it is a whole number that fits int64.
std::optional<int64_t> QuantityAsInt64(const Quantity& q);
// a + b with Go's Quantity.Add format rule: a zero `a` takes b's format.
Quantity GoQuantityAdd(const Quantity& a, const Quantity& b);

}  // namespace podtopo::memorymanager

#endif  // PODTOPO_MEMORYMANAGER_RESERVED_MEMORY_H_
