#include "topologymanager/bitmask.h"

#include "fmt/format.h"

namespace podtopo::topologymanager {
namespace {

constexpr char kBitRangeError[] = "bit number must be in range 0-63";

bool ValidBit(int bit) { return bit >= 0 && bit < 64; }

}  // namespace

absl::Status BitMask::Add(const std::vector<int>& bits) {
  uint64_t mask = value_;
  for (int bit : bits) {
    if (!ValidBit(bit)) return absl::InvalidArgumentError(kBitRangeError);
    mask |= uint64_t{1} << bit;
  }
  value_ = mask;
  return absl::OkStatus();
}

absl::Status BitMask::Remove(const std::vector<int>& bits) {
  uint64_t mask = value_;
  for (int bit : bits) {
    if (!ValidBit(bit)) return absl::InvalidArgumentError(kBitRangeError);
    mask &= ~(uint64_t{1} << bit);
  }
  value_ = mask;
  return absl::OkStatus();
}

bool BitMask::AnySet(const std::vector<int>& bits) const {
  for (int bit : bits) {
    if (IsSet(bit)) return true;
  }
  return false;
}

std::vector<int> BitMask::GetBits() const {
  std::vector<int> bits;
  bits.reserve(Count());
  for (uint64_t rest = value_; rest != 0; rest &= rest - 1) bits.push_back(std::countr_zero(rest));
  return bits;
}

std::string BitMask::String() const {
  constexpr int kGrouping = 2;
  for (int shift = 64 - kGrouping; shift > 0; shift -= kGrouping) {
    if (value_ > (uint64_t{1} << shift)) {
      return fmt::format("{:0{}b}", value_, shift + kGrouping);
    }
  }
  return fmt::format("{:0{}b}", value_, kGrouping);
}

absl::StatusOr<BitMask> NewBitMask(const std::vector<int>& bits) {
  BitMask mask;
  absl::Status status = mask.Add(bits);
  if (!status.ok()) return status;
  return mask;
}

BitMask And(BitMask first, const std::vector<BitMask>& masks) {
  for (BitMask m : masks) first.And(m);
  return first;
}

BitMask Or(BitMask first, const std::vector<BitMask>& masks) {
  for (BitMask m : masks) first.Or(m);
  return first;
}

absl::Status IterateBitMasks(const std::vector<int>& bits,
                             const std::function<void(BitMask)>& callback) {
  for (int bit : bits) {
    if (!ValidBit(bit)) return absl::InvalidArgumentError(kBitRangeError);
  }
  std::vector<int> accum;
  // Picks bits[start..] recursively until `size` bits are accumulated.
  std::function<void(size_t, size_t)> iterate = [&](size_t start, size_t size) {
    if (accum.size() == size) {
      BitMask mask;
      for (int bit : accum) mask.Or(BitMask::FromUint64(uint64_t{1} << bit));
      callback(mask);
      return;
    }
    for (size_t i = start; i < bits.size(); ++i) {
      accum.push_back(bits[i]);
      iterate(i + 1, size);
      accum.pop_back();
    }
  };
  for (size_t size = 1; size <= bits.size(); ++size) iterate(0, size);
  return absl::OkStatus();
}

std::ostream& operator<<(std::ostream& os, BitMask mask) {
  os << "{";
  bool first = true;
  for (int bit : mask.GetBits()) {
    if (!first) os << ",";
    os << bit;
    first = false;
  }
  return os << "}";
}

}  // namespace podtopo::topologymanager
