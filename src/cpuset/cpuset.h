// CpuSet: a set of logical CPU ids, as k8s.io/utils/cpuset models it.
//
// The kubelet writes every cpuset (state, checkpoints, logs, CRI calls) in the Linux list
// format: ids sorted ascending, runs of consecutive ids collapsed to "a-b", pieces joined by
// ",", no spaces. The empty set is "". CpuSet parses and prints exactly that format,
// including the kubelet's error texts, and stores ids as bit words so that set algebra
// costs a handful of word operations instead of map walks.
//
// Example:
//   absl::StatusOr<CpuSet> cpus = CpuSet::Parse("5,4,3,2,1,8");   // ok
//   cpus->String();                                                // "1-5,8"
//   cpus->Difference(CpuSet::Parse("2-3").value()).String();        // "1,4-5,8"
//   CpuSet::Parse("3-0").status().message();  // invalid range "3-0" (3 > 0)
//
// Thread safety: a value type; const methods may be called concurrently.
#ifndef PODTOPO_CPUSET_CPUSET_H_
#define PODTOPO_CPUSET_CPUSET_H_

#include <bit>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "util/popcount.h"

namespace podtopo {

class CpuSet {
 public:
  // The largest CPU id podtopo accepts. Linux's NR_CPUS tops out at 8192; anything larger in
  // a cpuset string is a typo or an attack, and the kubelet would try to allocate it.
  static constexpr int kMaxCpuId = 65535;

  CpuSet() = default;
  CpuSet(std::initializer_list<int> ids);
  explicit CpuSet(const std::vector<int>& ids);

  // All ids in [first, last]. Empty when first > last.
  static CpuSet Range(int first, int last);

  // Parses the Linux list format exactly as cpuset.Parse does: "" is empty; each
  // comma-separated piece is "N" or "A-B" with A <= B; overlaps and any order are fine;
  // there is no whitespace trimming. Errors (kInvalidArgument) carry the kubelet's text,
  // e.g. `strconv.Atoi: parsing "1.3": invalid syntax` or `invalid range "3-0" (3 > 0)`.
  static absl::StatusOr<CpuSet> Parse(std::string_view text);

  // The canonical list format ("1-3,5-6,8"); "" for the empty set.
  std::string String() const;

  bool Contains(int cpu) const {
    if (cpu < 0) return false;
    size_t w = static_cast<size_t>(cpu) >> 6;
    return w < words_.size() && (words_[w] >> (cpu & 63)) & 1;
  }
  // REQUIRES: 0 <= cpu <= kMaxCpuId.
  void Add(int cpu);
  void Remove(int cpu);
  void Clear() { words_.clear(); }

  int Size() const {
    int n = 0;
    for (uint64_t w : words_) n += PopCount64(w);
    return n;
  }
  bool IsEmpty() const { return words_.empty(); }

  CpuSet Union(const CpuSet& other) const;
  CpuSet Intersection(const CpuSet& other) const;
  CpuSet Difference(const CpuSet& other) const;
  CpuSet& UnionWith(const CpuSet& other);
  CpuSet& IntersectWith(const CpuSet& other);
  CpuSet& Subtract(const CpuSet& other);
  // |this ∩ other| without building the intersection.
  int IntersectionSize(const CpuSet& other) const;
  bool Intersects(const CpuSet& other) const;
  bool IsSubsetOf(const CpuSet& other) const;

  // Ids ascending.
  std::vector<int> List() const;
  // Smallest id, or -1 when empty.
  int Min() const;
  // Calls f(id) for each id ascending.
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      uint64_t bits = words_[w];
      while (bits != 0) {
        int b = std::countr_zero(bits);
        f(static_cast<int>(w * 64 + b));
        bits &= bits - 1;
      }
    }
  }

  friend bool operator==(const CpuSet& a, const CpuSet& b) { return a.words_ == b.words_; }
  friend bool operator!=(const CpuSet& a, const CpuSet& b) { return !(a == b); }
  // Orders by the id lists (lexicographic on sorted ids), for use as a map key.
  friend bool operator<(const CpuSet& a, const CpuSet& b);

 private:
  void Trim() {
    while (!words_.empty() && words_.back() == 0) words_.pop_back();
  }
  // Invariant: no trailing zero word, so equal sets have equal word vectors.
  // Eight inline words hold ids 0-511 without a heap allocation: every preset (numa64 has 512
  // CPUs, each core's second thread numbered 256 above the first). With four, every set that
  // named a CPU >= 256 allocated on each copy, union and difference (issue 22 item 14e).
  absl::InlinedVector<uint64_t, 8> words_;
};

}  // namespace podtopo

#endif  // PODTOPO_CPUSET_CPUSET_H_
