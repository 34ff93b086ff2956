#include "cpuset/cpuset.h"

#include <algorithm>

#include "fmt/format.h"
#include "util/go_strconv.h"
#include "util/popcount.h"

namespace podtopo {
namespace {

absl::Status CheckId(int64_t id, std::string_view piece) {
  if (id < 0 || id > CpuSet::kMaxCpuId) {
    return absl::InvalidArgumentError(fmt::format(
        "cpu id {} in \"{}\" is outside the supported range 0-{}", id, piece, CpuSet::kMaxCpuId));
  }
  return absl::OkStatus();
}

}  // namespace

CpuSet::CpuSet(std::initializer_list<int> ids) {
  for (int id : ids) Add(id);
}

CpuSet::CpuSet(const std::vector<int>& ids) {
  for (int id : ids) Add(id);
}

CpuSet CpuSet::Range(int first, int last) {
  CpuSet s;
  if (first < 0) first = 0;
  if (last > kMaxCpuId) last = kMaxCpuId;
  if (first > last) return s;
  s.words_.resize(static_cast<size_t>(last) / 64 + 1, 0);
  for (int w = first / 64; w <= last / 64; ++w) {
    int lo = std::max(first, w * 64) - w * 64;
    int hi = std::min(last, w * 64 + 63) - w * 64;
    uint64_t mask = (hi == 63 ? ~uint64_t{0} : ((uint64_t{1} << (hi + 1)) - 1)) &
                    ~((uint64_t{1} << lo) - 1);
    s.words_[static_cast<size_t>(w)] |= mask;
  }
  return s;
}

absl::StatusOr<CpuSet> CpuSet::Parse(std::string_view text) {
  CpuSet result;
  if (text.empty()) return result;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view piece =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t dash = piece.find('-');
    if (dash == std::string_view::npos) {
      auto id = GoAtoi(piece);
      if (!id.ok()) return id.status();
      if (auto s = CheckId(*id, piece); !s.ok()) return s;
      result.Add(static_cast<int>(*id));
    } else {
      auto first = GoAtoi(piece.substr(0, dash));
      if (!first.ok()) return first.status();
      auto last = GoAtoi(piece.substr(dash + 1));
      if (!last.ok()) return last.status();
      if (*first > *last) {
        return absl::InvalidArgumentError(
            fmt::format("invalid range {} ({} > {})", GoQuote(piece), *first, *last));
      }
      if (auto s = CheckId(*first, piece); !s.ok()) return s;
      if (auto s = CheckId(*last, piece); !s.ok()) return s;
      result.UnionWith(Range(static_cast<int>(*first), static_cast<int>(*last)));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return result;
}

std::string CpuSet::String() const {
  std::string out;
  int run_start = -1, prev = -2;
  auto flush = [&] {
    if (run_start < 0) return;
    if (!out.empty()) out.push_back(',');
    fmt::format_to(std::back_inserter(out), "{}", run_start);
    if (prev != run_start) fmt::format_to(std::back_inserter(out), "-{}", prev);
  };
  ForEach([&](int id) {
    if (id != prev + 1) {
      flush();
      run_start = id;
    }
    prev = id;
  });
  flush();
  return out;
}

void CpuSet::Add(int cpu) {
  if (cpu < 0 || cpu > kMaxCpuId) return;
  size_t w = static_cast<size_t>(cpu) >> 6;
  if (w >= words_.size()) words_.resize(w + 1, 0);
  words_[w] |= uint64_t{1} << (cpu & 63);
}

void CpuSet::Remove(int cpu) {
  if (!Contains(cpu)) return;
  words_[static_cast<size_t>(cpu) >> 6] &= ~(uint64_t{1} << (cpu & 63));
  Trim();
}

CpuSet CpuSet::Union(const CpuSet& other) const {
  CpuSet r = *this;
  r.UnionWith(other);
  return r;
}

CpuSet CpuSet::Intersection(const CpuSet& other) const {
  CpuSet r = *this;
  r.IntersectWith(other);
  return r;
}

CpuSet CpuSet::Difference(const CpuSet& other) const {
  CpuSet r = *this;
  r.Subtract(other);
  return r;
}

CpuSet& CpuSet::UnionWith(const CpuSet& other) {
  if (other.words_.size() > words_.size()) words_.resize(other.words_.size(), 0);
  for (size_t i = 0; i < other.words_.size(); ++i) words_[i] |= other.words_[i];
  return *this;
}

CpuSet& CpuSet::IntersectWith(const CpuSet& other) {
  if (words_.size() > other.words_.size()) words_.resize(other.words_.size());
  for (size_t i = 0; i < words_.size(); ++i) words_[i] &= other.words_[i];
  Trim();
  return *this;
}

CpuSet& CpuSet::Subtract(const CpuSet& other) {
  size_t n = std::min(words_.size(), other.words_.size());
  for (size_t i = 0; i < n; ++i) words_[i] &= ~other.words_[i];
  Trim();
  return *this;
}

int CpuSet::IntersectionSize(const CpuSet& other) const {
  size_t n = std::min(words_.size(), other.words_.size());
  int count = 0;
  for (size_t i = 0; i < n; ++i) count += PopCount64(words_[i] & other.words_[i]);
  return count;
}

bool CpuSet::Intersects(const CpuSet& other) const {
  size_t n = std::min(words_.size(), other.words_.size());
  for (size_t i = 0; i < n; ++i) {
    if (words_[i] & other.words_[i]) return true;
  }
  return false;
}

bool CpuSet::IsSubsetOf(const CpuSet& other) const {
  for (size_t i = 0; i < words_.size(); ++i) {
    uint64_t o = i < other.words_.size() ? other.words_[i] : 0;
    if (words_[i] & ~o) return false;
  }
  return true;
}

std::vector<int> CpuSet::List() const {
  std::vector<int> out;
  out.reserve(static_cast<size_t>(Size()));
  ForEach([&](int id) { out.push_back(id); });
  return out;
}

int CpuSet::Min() const {
  for (size_t w = 0; w < words_.size(); ++w) {
    if (words_[w] != 0) return static_cast<int>(w * 64 + std::countr_zero(words_[w]));
  }
  return -1;
}

bool operator<(const CpuSet& a, const CpuSet& b) {
  std::vector<int> la = a.List(), lb = b.List();
  return la < lb;
}

}  // namespace podtopo
