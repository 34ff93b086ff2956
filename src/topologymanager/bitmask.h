// BitMask: the Topology Manager's NUMA affinity mask (kubelet topologymanager/bitmask).
//
// A mask is a uint64: bit i set <=> NUMA node i is part of the affinity. Valid bits are 0..63;
// the kubelet's functions that take bit numbers fail with "bit number must be in range 0-63"
// outside that range, and so do ours. The ordering helpers (IsNarrowerThan, IsLessThan) are the
// ones the kubelet's hint merge relies on.
//
// Example:
//   absl::StatusOr<BitMask> m = NewBitMask({0, 2});   // 0b101
//   m->Count();            // 2
//   m->GetBits();          // {0, 2}
//   m->String();           // "0101" (the kubelet's formatting quirk)
//   IterateBitMasks({0, 1}, [](BitMask b) { ... });   // {0}, {1}, {0,1}
//
// Thread safety: a value type.
#ifndef PODTOPO_TOPOLOGYMANAGER_BITMASK_H_
#define PODTOPO_TOPOLOGYMANAGER_BITMASK_H_

#include <bit>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/popcount.h"

namespace podtopo::topologymanager {

class BitMask {
 public:
  // The empty mask (NewEmptyBitMask).
  constexpr BitMask() = default;
  // The mask whose uint64 representation is `value`.
  static constexpr BitMask FromUint64(uint64_t value) { return BitMask(value); }

  // Sets / clears the given bits. Error "bit number must be in range 0-63" when a bit is out of
  // range; the mask is then left unchanged.
  absl::Status Add(const std::vector<int>& bits);
  absl::Status Remove(const std::vector<int>& bits);

  // In-place bitwise and / or with `other`.
  void And(BitMask other) { value_ &= other.value_; }
  void Or(BitMask other) { value_ |= other.value_; }
  void Clear() { value_ = 0; }
  void Fill() { value_ = ~uint64_t{0}; }

  bool IsEmpty() const { return value_ == 0; }
  // False for a bit outside 0..63.
  bool IsSet(int bit) const { return bit >= 0 && bit < 64 && ((value_ >> bit) & 1) != 0; }
  bool AnySet(const std::vector<int>& bits) const;
  bool IsEqual(BitMask other) const { return value_ == other.value_; }
  // Fewer bits set; with equally many bits, the numerically smaller mask (more lower-numbered
  // bits) is narrower. A strict total order on masks.
  bool IsNarrowerThan(BitMask other) const {
    int a = Count(), b = other.Count();
    return a == b ? IsLessThan(other) : a < b;
  }
  bool IsLessThan(BitMask other) const { return value_ < other.value_; }
  bool IsGreaterThan(BitMask other) const { return value_ > other.value_; }
  int Count() const { return PopCount64(value_); }
  // Set bits in ascending order.
  std::vector<int> GetBits() const;
  // The kubelet's String(): binary, zero-padded to the width of the first even shift s (62 down
  // to 2) with value > 1<<s, plus 2; else width 2. 4 -> "100", 5 -> "0101".
  std::string String() const;

  uint64_t value() const { return value_; }

  friend constexpr bool operator==(BitMask a, BitMask b) { return a.value_ == b.value_; }
  friend constexpr BitMask operator&(BitMask a, BitMask b) { return BitMask(a.value_ & b.value_); }
  friend constexpr BitMask operator|(BitMask a, BitMask b) { return BitMask(a.value_ | b.value_); }

 private:
  explicit constexpr BitMask(uint64_t value) : value_(value) {}
  uint64_t value_ = 0;
};

// NewBitMask(bits...): a mask with the given bits; "bit number must be in range 0-63" otherwise.
absl::StatusOr<BitMask> NewBitMask(const std::vector<int>& bits);
inline absl::StatusOr<BitMask> NewBitMask(std::initializer_list<int> bits) {
  return NewBitMask(std::vector<int>(bits));
}
inline BitMask NewEmptyBitMask() { return BitMask(); }

// Package-level And / Or: `first` combined with every mask of `masks`.
BitMask And(BitMask first, const std::vector<BitMask>& masks);
BitMask Or(BitMask first, const std::vector<BitMask>& masks);

// IterateBitMasks: for size = 1..bits.size(), calls `callback` with every combination of that
// many entries of `bits`, combinations in lexicographic order of positions in `bits` (for
// {0,1,2}: {0},{1},{2},{0,1},{0,2},{1,2},{0,1,2}). This is the order in which the kubelet's
// hint providers list their hints. Entries are not de-duplicated (as in the kubelet).
// Error "bit number must be in range 0-63" (before any callback) when an entry is out of range;
// the kubelet would hand its callback a nil mask instead.
absl::Status IterateBitMasks(const std::vector<int>& bits,
                             const std::function<void(BitMask)>& callback);

// GoogleTest / logging: prints the set bits, e.g. "{0,2}".
std::ostream& operator<<(std::ostream& os, BitMask mask);

}  // namespace podtopo::topologymanager

#endif  // PODTOPO_TOPOLOGYMANAGER_BITMASK_H_
