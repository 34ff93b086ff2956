// Hugepage resource names, as the kubelet spells them.
//
// The kubelet names a hugepage size "hugepages-" + the page size as a Kubernetes BinarySI
// quantity (resource.NewQuantity(bytes, BinarySI).String()): 2 MiB pages are
// "hugepages-2Mi", 1 GiB pages "hugepages-1Gi", 64 KiB pages "hugepages-64Ki".
//
// Example:
//   HugepageResourceName(2097152)              // "hugepages-2Mi"
//   HugepageSizeFromResourceName("hugepages-1Gi")  // 1073741824
#ifndef PODTOPO_TOPOLOGY_HUGEPAGES_H_
#define PODTOPO_TOPOLOGY_HUGEPAGES_H_

#include <cstdint>
#include <optional>
#include <string>

namespace podtopo {

// The BinarySI text of an integer byte count: the largest suffix (Ki, Mi, Gi, Ti, Pi, Ei)
// that divides it exactly, or the plain number ("1536Ki", "2Mi", "1000").
std::string BinarySiString(uint64_t bytes);

// "hugepages-" + BinarySiString(page_size_bytes).
std::string HugepageResourceName(uint64_t page_size_bytes);

// The page size in bytes of a name HugepageResourceName produces; nullopt for anything else
// (no "hugepages-" prefix, no BinarySI suffix, zero, overflow).
std::optional<uint64_t> HugepageSizeFromResourceName(const std::string& name);

}  // namespace podtopo

#endif  // PODTOPO_TOPOLOGY_HUGEPAGES_H_
