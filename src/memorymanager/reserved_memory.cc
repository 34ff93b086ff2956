#include "memorymanager/reserved_memory.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "util/go_strconv.h"

namespace podtopo::memorymanager {

std::optional<int64_t> QuantityAsInt64(const Quantity& q) { return q.AsInt64(); }

Quantity GoQuantityAdd(const Quantity& a, const Quantity& b) {
  // Go's Add: a zero receiver takes the addend's format; the cached text is dropped, so the
  // sum prints canonically ("+1Gi" + 0 prints "1Gi").
  Quantity sum = a.IsZero() ? Quantity::FromInt(0, b.format()) : a;
  sum.Add(b);
  return sum;
}

std::vector<std::string> ValidateReservedMemoryConfiguration(
    const std::vector<MemoryReservation>& reserved_memory) {
  std::vector<std::string> errors;
  std::map<int32_t, std::set<std::string>> seen;
  for (const MemoryReservation& r : reserved_memory) {
    std::set<std::string>& types = seen[r.numa_node];
    for (const auto& [name, q] : r.limits) {
      if (!IsMemoryResourceName(name)) {
        errors.push_back(fmt::format(
            "invalid configuration: the limit type {} for NUMA node {} is not supported, only "
            "[memory hugepages-<HugePageSize>] is accepted",
            GoQuote(name), r.numa_node));
      }
      if (q.IsZero()) {
        errors.push_back(fmt::format(
            "invalid configuration: reserved memory may not be zero for NUMA node {} and "
            "resource {}",
            r.numa_node, GoQuote(name)));
      }
      if (types.count(name) > 0) {
        errors.push_back(fmt::format(
            "invalid configuration: the reserved memory has a duplicate value for NUMA node {} "
            "and resource {}",
            r.numa_node, GoQuote(name)));
      }
      types.insert(name);
    }
  }
  return errors;
}

absl::Status ValidateReservedMemory(const std::vector<int>& numa_ids,
                                    const ResourceList& node_allocatable_reservation,
                                    const std::vector<MemoryReservation>& reserved_memory) {
  // getTotalMemoryTypeReserved: the kubelet adds the running total INTO each new quantity, so
  // the sum carries the format of the latest non-zero entry.
  std::set<int> nodes(numa_ids.begin(), numa_ids.end());
  std::map<std::string, Quantity> totals;
  for (const MemoryReservation& r : reserved_memory) {
    if (nodes.count(r.numa_node) == 0) {
      return absl::InvalidArgumentError(fmt::format(
          "the reserved memory configuration references a NUMA node {} that does not exist on "
          "this machine",
          r.numa_node));
    }
    for (const auto& [name, q] : r.limits) {
      auto it = totals.find(name);
      totals[name] = it == totals.end() ? q : GoQuantityAdd(q, it->second);
    }
  }

  std::set<std::string> types;
  for (const auto& [name, q] : totals) types.insert(name);
  for (const auto& [name, q] : node_allocatable_reservation) {
    if (IsMemoryResourceName(name)) types.insert(name);
  }

  for (const std::string& type : types) {
    Quantity allocatable;  // NewQuantity(0, DecimalSI)
    if (auto it = node_allocatable_reservation.find(type);
        it != node_allocatable_reservation.end()) {
      allocatable = GoQuantityAdd(allocatable, it->second);
    }
    Quantity reserved;
    if (auto it = totals.find(type); it != totals.end()) {
      reserved = GoQuantityAdd(reserved, it->second);
    }
    if (allocatable.Cmp(reserved) != 0) {
      return absl::InvalidArgumentError(fmt::format(
          "the total amount {} of type {} is not equal to the value {} determined by Node "
          "Allocatable feature",
          GoQuote(reserved.String()), GoQuote(type), GoQuote(allocatable.String())));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<SystemReservedMemory> ConvertReserved(
    const std::vector<int>& numa_ids, const std::vector<MemoryReservation>& reserved_memory) {
  SystemReservedMemory converted;
  for (int id : numa_ids) converted[id];
  for (const MemoryReservation& r : reserved_memory) {
    for (const auto& [name, q] : r.limits) {
      std::optional<int64_t> v = QuantityAsInt64(q);
      if (!v.has_value()) {
        return absl::InvalidArgumentError(
            "could not covert a variable of type Quantity to int64");
      }
      // The kubelet would panic on a node missing from the machine (nil map); ValidateReservedMemory
      // rejects that first, and a direct call just gets the entry.
      converted[r.numa_node][name] = static_cast<uint64_t>(*v);
    }
  }
  return converted;
}

absl::StatusOr<SystemReservedMemory> GetSystemReservedMemory(
    const std::vector<int>& numa_ids, const ResourceList& node_allocatable_reservation,
    const std::vector<MemoryReservation>& reserved_memory) {
  absl::Status valid =
      ValidateReservedMemory(numa_ids, node_allocatable_reservation, reserved_memory);
  if (!valid.ok()) return valid;
  return ConvertReserved(numa_ids, reserved_memory);
}

ResourceList NodeAllocatableReservation(const ResourceList& capacity,
                                        const ResourceList& system_reserved,
                                        const ResourceList& kube_reserved,
                                        const std::vector<HardEvictionThreshold>& hard_eviction) {
  // hardEvictionReservation.
  ResourceList eviction;
  for (const HardEvictionThreshold& t : hard_eviction) {
    std::string resource;
    if (t.signal == "memory.available") {
      resource = kResourceMemory;
    } else if (t.signal == "nodefs.available") {
      resource = "ephemeral-storage";
    } else {
      continue;
    }
    if (t.quantity.has_value()) {
      eviction[resource] = *t.quantity;
    } else {
      Quantity cap;
      if (auto it = capacity.find(resource); it != capacity.end()) cap = it->second;
      double value = static_cast<double>(cap.Value()) * static_cast<double>(t.percentage);
      eviction[resource] =
          Quantity::FromInt(static_cast<int64_t>(value), Quantity::Format::kBinarySI);
    }
  }

  ResourceList result;
  for (const auto& [name, cap] : capacity) {
    Quantity value;
    for (const ResourceList* list :
         std::initializer_list<const ResourceList*>{&system_reserved, &kube_reserved, &eviction}) {
      if (auto it = list->find(name); it != list->end()) value = GoQuantityAdd(value, it->second);
    }
    if (!value.IsZero()) result[name] = value;
  }
  return result;
}

}  // namespace podtopo::memorymanager
