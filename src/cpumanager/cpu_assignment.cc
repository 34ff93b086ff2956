#include "cpumanager/cpu_assignment.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "kubelet/admission_error.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "fmt/format.h"
#include "util/popcount.h"

// Implementation notes.
//
// The kubelet's cpuAccumulator keeps `details = CPUDetails.KeepOnly(available)`, a map, and
// recomputes every sorted element list from it by filtering the map. Here the accumulator
// keeps the available CPUs as bit words plus a per-element count of available CPUs (kept up
// to date on every take), and derives the same sorted lists from a per-topology index
// (dense element numbers, per-element CPU masks, parent -> child candidate lists). An
// element shows up in a list exactly when the kubelet's KeepOnly view would contain it: when
// at least one of its available CPUs lies in the parent element. Lists may therefore hold
// duplicates on topologies whose cores or NUMA nodes straddle sockets, as in the kubelet.
//
// The index is cached per thread and validated by comparing the full topology content, so
// a hit is exact and a changed topology simply builds a new index.

namespace podtopo::cpumanager {
namespace {

using Word = uint64_t;

enum Kind { kNuma = 0, kSocket = 1, kCore = 2, kUncore = 3, kNumKinds = 4 };

int PopCount(const Word* a, int words) {
  int n = 0;
  for (int i = 0; i < words; ++i) n += PopCount64(a[i]);
  return n;
}

bool Intersects(const Word* a, const Word* b, int words) {
  for (int i = 0; i < words; ++i) {
    if ((a[i] & b[i]) != 0) return true;
  }
  return false;
}

int IntersectionCount(const Word* a, const Word* b, int words) {
  int n = 0;
  for (int i = 0; i < words; ++i) n += PopCount64(a[i] & b[i]);
  return n;
}

template <typename F>
void ForEachBit(const Word* a, int words, F&& f) {
  for (int w = 0; w < words; ++w) {
    Word bits = a[w];
    while (bits != 0) {
      f(w * 64 + std::countr_zero(bits));
      bits &= bits - 1;
    }
  }
}

// ------------------------------------------------------------------------------------------
// Per-topology index.

}  // namespace

// Named (not anonymous) so that TopologyTables (cpu_assignment.h) can hold one.
namespace assignment_internal {

// Candidate children of each parent element: the child elements sharing at least one CPU
// with the parent in the full topology. `inter[i]` is -1 when the child lies entirely in
// the parent (then "child has an available CPU in the parent" is "child count > 0"), else the
// word offset of mask(child) & mask(parent) in `inter_masks`.
struct Relation {
  std::vector<int> begin;  // parent p: entries [begin[p], begin[p + 1])
  std::vector<int> child;  // ascending per parent
  std::vector<int> inter;
  std::vector<Word> inter_masks;
};

struct TopoIndex {
  int words = 1;
  int num_cpus_in_map = 0;
  int cpus_per_core = 0;
  int cpus_per_socket = 0;
  int cpus_per_uncore = 0;
  bool numa_first = true;

  std::array<std::vector<int>, kNumKinds> ids;      // element ids ascending (dense order)
  std::array<std::vector<Word>, kNumKinds> masks;   // words per element
  std::array<std::vector<int>, kNumKinds> sizes;    // CPUs per element in the full topology
  std::array<std::vector<int>, kNumKinds> elem_of;  // by cpu id (words * 64 entries), -1 = none
  // The non-zero words of each element's mask: element e owns entries
  // [sparse_begin[e], sparse_begin[e + 1]) of (sparse_word, sparse_mask).
  std::array<std::vector<int>, kNumKinds> sparse_begin, sparse_word;
  std::array<std::vector<Word>, kNumKinds> sparse_mask;
  Relation socket_numas, numa_sockets, socket_cores, numa_cores, numa_uncores, uncore_cores;
  std::vector<int> numa_socket;  // the only socket of a NUMA node, -1 when it spans several
  // Cores nest in the parents sortAvailableCores walks (sockets when NUMA-first, NUMA nodes
  // otherwise), and those parents nest in the top level. Then the sorted core list never
  // repeats an element and taking CPUs of one parent's cores changes no other parent's
  // counts, so the list can be produced parent by parent while taking.
  bool cores_nest = false;
  std::vector<Word> all;

  // The topology this index was built from (exact cache validation).
  std::array<int, 5> header{};
  CpuSet all_set;
  std::vector<int> cpu_ids;
  std::vector<CpuInfo> infos;

  const Word* Mask(Kind k, int e) const {
    return masks[k].data() + static_cast<size_t>(e) * static_cast<size_t>(words);
  }
  int NumElems(Kind k) const { return static_cast<int>(ids[k].size()); }
};

}  // namespace assignment_internal

namespace {

using assignment_internal::Relation;
using assignment_internal::TopoIndex;

int ElemId(const CpuInfo& info, Kind k) {
  switch (k) {
    case kNuma:
      return info.numa;
    case kSocket:
      return info.socket;
    case kCore:
      return info.core;
    default:
      return info.uncore;
  }
}

void BuildRelation(const TopoIndex& t, Kind parent, Kind child, Relation* r) {
  const int np = t.NumElems(parent);
  std::vector<std::pair<int, int>> pairs;
  pairs.reserve(t.cpu_ids.size());
  for (int cpu : t.cpu_ids) {
    pairs.emplace_back(t.elem_of[parent][cpu], t.elem_of[child][cpu]);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  r->begin.assign(static_cast<size_t>(np) + 1, 0);
  for (const auto& [p, c] : pairs) r->begin[p + 1]++;
  for (int p = 0; p < np; ++p) r->begin[p + 1] += r->begin[p];
  for (const auto& [p, c] : pairs) {
    const Word* pm = t.Mask(parent, p);
    const Word* cm = t.Mask(child, c);
    bool subset = true;
    for (int w = 0; w < t.words; ++w) subset = subset && (cm[w] & ~pm[w]) == 0;
    r->child.push_back(c);
    if (subset) {
      r->inter.push_back(-1);
    } else {
      r->inter.push_back(static_cast<int>(r->inter_masks.size()));
      for (int w = 0; w < t.words; ++w) r->inter_masks.push_back(cm[w] & pm[w]);
    }
  }
}

std::unique_ptr<TopoIndex> BuildIndex(const CpuTopology& topo) {
  auto t = std::make_unique<TopoIndex>();
  t->header = {topo.num_cpus, topo.num_cores, topo.num_sockets, topo.num_numa_nodes,
               topo.num_uncore_caches};
  t->all_set = topo.AllCpus();
  int max_cpu = -1;
  topo.AllCpus().ForEach([&](int cpu) {
    t->cpu_ids.push_back(cpu);
    t->infos.push_back(*topo.Info(cpu));
    max_cpu = cpu;
  });
  t->words = std::max(1, (max_cpu + 64) / 64);
  t->num_cpus_in_map = static_cast<int>(t->cpu_ids.size());
  t->cpus_per_core = topo.CpusPerCore();
  t->cpus_per_socket = topo.CpusPerSocket();
  t->cpus_per_uncore = topo.CpusPerUncore();
  t->numa_first = topo.num_sockets >= topo.num_numa_nodes;
  const size_t bits = static_cast<size_t>(t->words) * 64;
  t->all.assign(static_cast<size_t>(t->words), 0);
  for (int cpu : t->cpu_ids) t->all[static_cast<size_t>(cpu) / 64] |= Word{1} << (cpu % 64);

  for (int k = 0; k < kNumKinds; ++k) {
    auto& ids = t->ids[k];
    for (const CpuInfo& info : t->infos) ids.push_back(ElemId(info, static_cast<Kind>(k)));
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    t->elem_of[k].assign(bits, -1);
    t->masks[k].assign(ids.size() * static_cast<size_t>(t->words), 0);
    t->sizes[k].assign(ids.size(), 0);
    for (size_t i = 0; i < t->cpu_ids.size(); ++i) {
      int cpu = t->cpu_ids[i];
      int e = static_cast<int>(
          std::lower_bound(ids.begin(), ids.end(), ElemId(t->infos[i], static_cast<Kind>(k))) -
          ids.begin());
      t->elem_of[k][cpu] = e;
      t->masks[k][static_cast<size_t>(e) * static_cast<size_t>(t->words) +
                  static_cast<size_t>(cpu) / 64] |= Word{1} << (cpu % 64);
      t->sizes[k][e]++;
    }
    t->sparse_begin[k].assign(1, 0);
    for (size_t e = 0; e < ids.size(); ++e) {
      const Word* mask = t->Mask(static_cast<Kind>(k), static_cast<int>(e));
      for (int w = 0; w < t->words; ++w) {
        if (mask[w] == 0) continue;
        t->sparse_word[k].push_back(w);
        t->sparse_mask[k].push_back(mask[w]);
      }
      t->sparse_begin[k].push_back(static_cast<int>(t->sparse_word[k].size()));
    }
  }
  BuildRelation(*t, kSocket, kNuma, &t->socket_numas);
  BuildRelation(*t, kNuma, kSocket, &t->numa_sockets);
  BuildRelation(*t, kSocket, kCore, &t->socket_cores);
  BuildRelation(*t, kNuma, kCore, &t->numa_cores);
  BuildRelation(*t, kNuma, kUncore, &t->numa_uncores);
  BuildRelation(*t, kUncore, kCore, &t->uncore_cores);
  auto nests = [&](const Relation& r, Kind child) {
    std::vector<int> parents_of(static_cast<size_t>(t->NumElems(child)), 0);
    for (size_t i = 0; i < r.child.size(); ++i) {
      if (r.inter[i] >= 0) return false;
      if (++parents_of[r.child[i]] > 1) return false;
    }
    return true;
  };
  t->cores_nest = t->numa_first ? nests(t->numa_sockets, kSocket) && nests(t->socket_cores, kCore)
                                : nests(t->socket_numas, kNuma) && nests(t->numa_cores, kCore);
  t->numa_socket.assign(static_cast<size_t>(t->NumElems(kNuma)), -1);
  for (int m = 0; m < t->NumElems(kNuma); ++m) {
    const Relation& r = t->numa_sockets;
    if (r.begin[m + 1] - r.begin[m] == 1) {
      t->numa_socket[m] = r.child[r.begin[static_cast<size_t>(m)]];
    }
  }
  return t;
}

bool IndexMatches(const TopoIndex& t, const CpuTopology& topo) {
  if (t.header != std::array<int, 5>{topo.num_cpus, topo.num_cores, topo.num_sockets,
                                     topo.num_numa_nodes, topo.num_uncore_caches}) {
    return false;
  }
  if (t.all_set != topo.AllCpus()) return false;
  for (size_t i = 0; i < t.cpu_ids.size(); ++i) {
    if (!(*topo.Info(t.cpu_ids[i]) == t.infos[i])) return false;
  }
  return true;
}

// The index of `topo`, from a small per-thread cache (shared with TopologyTables).
const std::shared_ptr<const TopoIndex>& GetSharedIndex(const CpuTopology& topo) {
  constexpr size_t kCacheSize = 4;
  thread_local std::vector<std::shared_ptr<const TopoIndex>> cache;
  for (size_t i = 0; i < cache.size(); ++i) {
    if (IndexMatches(*cache[i], topo)) {
      if (i != 0)
        std::rotate(cache.begin(), cache.begin() + static_cast<long>(i),
                    cache.begin() + static_cast<long>(i) + 1);
      return cache.front();
    }
  }
  cache.insert(cache.begin(), BuildIndex(topo));
  if (cache.size() > kCacheSize) cache.pop_back();
  return cache.front();
}

const TopoIndex& GetIndex(const CpuTopology& topo) { return *GetSharedIndex(topo); }

// ------------------------------------------------------------------------------------------
// The accumulator (cpuAccumulator).

enum class Outcome {
  kOk,
  kNotEnough,    // "not enough cpus available to satisfy request"
  kFailed,       // "failed to allocate cpus" (unreachable on sane input, kept for fidelity)
  kDivideByZero  // the kubelet would panic: CPUsPerCore() == 0 in takePartialUncore
};

uint64_t SortKey(int count, int elem) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(count)) << 32) | static_cast<uint32_t>(elem);
}

void SortKeys(uint64_t* b, uint64_t* e) {
  if (e - b <= 24) {
    for (uint64_t* i = b + 1; i < e; ++i) {
      uint64_t v = *i;
      uint64_t* j = i;
      while (j > b && *(j - 1) > v) {
        *j = *(j - 1);
        --j;
      }
      *j = v;
    }
  } else {
    std::sort(b, e);
  }
}

class Accumulator {
 public:
  // Starts an accumulation of `n` CPUs over `available` (bit words, `t.words` long; CPUs
  // outside the topology are dropped, as CPUDetails.KeepOnly does).
  void Reset(const TopoIndex& t, const Word* available, int n, CpuSortingStrategy strategy) {
    t_ = &t;
    w_ = t.words;
    spread_ = strategy != CpuSortingStrategy::kPacked;
    spread_by_cpu_id_ = strategy == CpuSortingStrategy::kSpreadByCpuId;
    need_ = n;
    avail_.assign(static_cast<size_t>(w_), 0);
    result_.assign(static_cast<size_t>(w_), 0);
    for (int i = 0; i < w_; ++i) avail_[i] = available[i] & t.all[i];
    // NUMA nodes, sockets and uncore caches are few: count them with masks. Core counts are
    // only needed by some steps and are filled in on first use (CountAllCores, CountCoresOf).
    for (Kind k : {kNuma, kSocket, kUncore}) {
      auto& counts = count_[k];
      const size_t num = t.ids[k].size();
      counts.resize(num);
      const auto& begin = t.sparse_begin[k];
      const auto& word = t.sparse_word[k];
      const auto& mask = t.sparse_mask[k];
      for (size_t e = 0; e < num; ++e) {
        int n_avail = 0;
        for (int i = begin[e]; i < begin[e + 1]; ++i) {
          n_avail += PopCount64(avail_[word[static_cast<size_t>(i)]] & mask[i]);
        }
        counts[e] = n_avail;
      }
    }
    all_cores_counted_ = false;
    if (core_stamp_.size() != t.ids[kCore].size() || stamp_ == ~uint32_t{0}) {
      core_stamp_.assign(t.ids[kCore].size(), 0);
      count_[kCore].assign(t.ids[kCore].size(), 0);
      stamp_ = 0;
    }
    ++stamp_;  // invalidates every core count
  }

  int need() const { return need_; }
  bool IsSatisfied() const { return need_ < 1; }
  bool IsFailed() const { return need_ > PopCount(avail_.data(), w_); }
  const Word* avail() const { return avail_.data(); }
  const Word* result() const { return result_.data(); }
  int Count(Kind k, int e) const { return count_[k][e]; }

  // take(cpus): result ∪= cpus; details -= cpus; need -= |cpus|.
  void Take(const Word* cpus) {
    int taken = 0;
    for (int w = 0; w < w_; ++w) {
      const Word c = cpus[w];
      if (c == 0) continue;
      Word removed = avail_[w] & c;
      if (removed != c) taken += PopCount64(c & ~removed);  // CPUs that were not available
      result_[w] |= c;
      avail_[w] &= ~c;
      while (removed != 0) {
        Forget(w * 64 + std::countr_zero(removed));
        ++taken;
        removed &= removed - 1;
      }
    }
    need_ -= taken;
  }

  void TakeCpu(int cpu) {
    size_t w = static_cast<size_t>(cpu) / 64;
    Word bit = Word{1} << (cpu % 64);
    if ((avail_[w] & bit) != 0) {
      avail_[w] &= ~bit;
      Forget(cpu);
    }
    result_[w] |= bit;
    need_ -= 1;
  }

  // takeByTopologyNUMAPacked after the accumulator has been reset.
  Outcome RunPacked(bool prefer_align_by_uncore_cache) {
    if (IsSatisfied()) return Outcome::kOk;
    if (IsFailed()) return Outcome::kNotEnough;
    if (t_->numa_first) {
      TakeFullNumas();
    } else {
      TakeFullSockets();
    }
    if (IsSatisfied()) return Outcome::kOk;
    if (t_->numa_first) {
      TakeFullSockets();
    } else {
      TakeFullNumas();
    }
    if (IsSatisfied()) return Outcome::kOk;
    if (prefer_align_by_uncore_cache) {
      if (!TakeUncoreCache()) return Outcome::kDivideByZero;
      if (IsSatisfied()) return Outcome::kOk;
    }
    if (!spread_) {
      TakeFullCores();
      if (IsSatisfied()) return Outcome::kOk;
    }
    TakeRemainingCpus();
    if (IsSatisfied()) return Outcome::kOk;
    return Outcome::kFailed;
  }

  // sortAvailableNUMANodes() into numa_list_.
  const std::vector<int>& SortNumas() {
    if (t_->numa_first) {
      TopSorted(kNuma, &numa_list_);
    } else {
      SortSockets();
      numa_list_.clear();
      for (int s : socket_list_) AppendChildren(t_->socket_numas, kNuma, s, &numa_list_);
    }
    return numa_list_;
  }

 private:
  void Forget(int cpu) {
    const size_t c = static_cast<size_t>(cpu);
    count_[kNuma][t_->elem_of[kNuma][c]]--;
    count_[kSocket][t_->elem_of[kSocket][c]]--;
    count_[kUncore][t_->elem_of[kUncore][c]]--;
    const size_t core = static_cast<size_t>(t_->elem_of[kCore][c]);
    if (core_stamp_[core] == stamp_) count_[kCore][core]--;
  }

  // Core counts are computed on first use: all at once, or (cores_nest) per parent.
  void CountAllCores() {
    if (all_cores_counted_) return;
    auto& counts = count_[kCore];
    std::fill(counts.begin(), counts.end(), 0);
    std::fill(core_stamp_.begin(), core_stamp_.end(), stamp_);
    const int* core_of = t_->elem_of[kCore].data();
    ForEachBit(avail_.data(), w_, [&](int cpu) { counts[core_of[cpu]]++; });
    all_cores_counted_ = true;
  }

  // REQUIRES: cores nest in `parent` (the cores of r's parent are all inside it).
  void CountCoresOf(const Relation& r, Kind parent_kind, int parent) {
    if (all_cores_counted_) return;
    auto& counts = count_[kCore];
    const size_t b = static_cast<size_t>(r.begin[parent]);
    const size_t e = static_cast<size_t>(r.begin[parent + 1]);
    if (b == e || core_stamp_[r.child[b]] == stamp_) return;
    for (size_t i = b; i < e; ++i) {
      counts[r.child[i]] = 0;
      core_stamp_[r.child[i]] = stamp_;
    }
    const int* core_of = t_->elem_of[kCore].data();
    const auto& sb = t_->sparse_begin[parent_kind];
    for (int i = sb[parent]; i < sb[parent + 1]; ++i) {
      const int w = t_->sparse_word[parent_kind][i];
      Word bits = avail_[w] & t_->sparse_mask[parent_kind][i];
      while (bits != 0) {
        counts[core_of[w * 64 + std::countr_zero(bits)]]++;
        bits &= bits - 1;
      }
    }
  }

  // True when element e of kind k has an available CPU.
  bool HasAvailable(Kind k, int e) const {
    const auto& sb = t_->sparse_begin[k];
    for (int i = sb[e]; i < sb[e + 1]; ++i) {
      if ((avail_[t_->sparse_word[k][static_cast<size_t>(i)]] & t_->sparse_mask[k][i]) != 0) {
        return true;
      }
    }
    return false;
  }

  // Elements of kind k with available CPUs, sorted by (available count, id).
  void TopSorted(Kind k, std::vector<int>* out) {
    keys_.clear();
    const auto& c = count_[k];
    for (size_t e = 0; e < c.size(); ++e) {
      if (c[e] > 0) keys_.push_back(SortKey(c[e], static_cast<int>(e)));
    }
    SortKeys(keys_.data(), keys_.data() + keys_.size());
    out->clear();
    for (uint64_t key : keys_) out->push_back(static_cast<int>(static_cast<uint32_t>(key)));
  }

  // Appends the children of `parent` that have an available CPU inside it, sorted by
  // (available count of the child, id): sort(details.XInY(parent)).
  void AppendChildren(const Relation& r, Kind ck, int parent, std::vector<int>* out) {
    keys_.clear();
    const auto& c = count_[ck];
    for (int i = r.begin[parent]; i < r.begin[parent + 1]; ++i) {
      int e = r.child[i];
      int n = c[e];
      if (n == 0) continue;
      int inter = r.inter[i];
      if (inter >= 0 && !Intersects(r.inter_masks.data() + inter, avail_.data(), w_)) continue;
      keys_.push_back(SortKey(n, e));
    }
    SortKeys(keys_.data(), keys_.data() + keys_.size());
    for (uint64_t key : keys_) out->push_back(static_cast<int>(static_cast<uint32_t>(key)));
  }

  const std::vector<int>& SortSockets() {
    if (t_->numa_first) {
      SortNumas();
      socket_list_.clear();
      for (int m : numa_list_) AppendChildren(t_->numa_sockets, kSocket, m, &socket_list_);
    } else {
      TopSorted(kSocket, &socket_list_);
    }
    return socket_list_;
  }

  const std::vector<int>& SortCores() {
    CountAllCores();
    core_list_.clear();
    if (t_->numa_first) {
      SortSockets();
      for (int s : socket_list_) AppendChildren(t_->socket_cores, kCore, s, &core_list_);
    } else {
      SortNumas();
      for (int m : numa_list_) AppendChildren(t_->numa_cores, kCore, m, &core_list_);
    }
    return core_list_;
  }

  const std::vector<int>& SortUncores() {
    SortNumas();
    uncore_list_.clear();
    for (int m : numa_list_) AppendChildren(t_->numa_uncores, kUncore, m, &uncore_list_);
    return uncore_list_;
  }

  // sortAvailableCPUsPacked / sortAvailableCPUsSpread into cpu_list_.
  void SortCpus() {
    cpu_list_.clear();
    auto append_available = [&](const Word* mask, std::vector<int>* out) {
      for (int w = 0; w < w_; ++w) {
        Word bits = mask[w] & avail_[w];
        while (bits != 0) {
          out->push_back(w * 64 + std::countr_zero(bits));
          bits &= bits - 1;
        }
      }
    };
    if (spread_by_cpu_id_) {
      SortSockets();
      for (int s : socket_list_) append_available(t_->Mask(kSocket, s), &cpu_list_);
    } else if (spread_) {
      // k/k #140766: socket by socket, the socket's cores (sorted as sortAvailableCores sorts
      // a parent's cores) take turns, one available CPU each, lowest id first, until all are
      // used up.
      CountAllCores();
      SortSockets();
      for (int s : socket_list_) {
        core_list_.clear();
        AppendChildren(t_->socket_cores, kCore, s, &core_list_);
        core_cpus_.clear();
        core_begin_.clear();
        for (int c : core_list_) {
          core_begin_.push_back(core_cpus_.size());
          append_available(t_->Mask(kCore, c), &core_cpus_);
        }
        core_begin_.push_back(core_cpus_.size());
        for (size_t round = 0;; ++round) {
          bool dealt = false;
          for (size_t i = 0; i + 1 < core_begin_.size(); ++i) {
            if (core_begin_[i] + round >= core_begin_[i + 1]) continue;
            cpu_list_.push_back(core_cpus_[core_begin_[i] + round]);
            dealt = true;
          }
          if (!dealt) break;
        }
      }
    } else {
      SortCores();
      for (int c : core_list_) append_available(t_->Mask(kCore, c), &cpu_list_);
    }
  }

  // The takeFull* steps: the free list is computed once, then each free element whose full
  // topology size is still needed is taken whole (all its topology CPUs).
  void TakeFullNumas() {
    SortNumas();
    free_.clear();
    for (int m : numa_list_) {
      if (Count(kNuma, m) == t_->sizes[kNuma][m]) free_.push_back(m);
    }
    TakeFree(kNuma);
  }

  void TakeFullSockets() {
    SortSockets();
    free_.clear();
    for (int s : socket_list_) {
      if (Count(kSocket, s) == t_->cpus_per_socket) free_.push_back(s);
    }
    TakeFree(kSocket);
  }

  // The parents whose cores sortAvailableCores lists, in order, and their relation.
  const std::vector<int>& SortCoreParents(const Relation** r, Kind* kind) {
    if (t_->numa_first) {
      *r = &t_->socket_cores;
      *kind = kSocket;
      return SortSockets();
    }
    *r = &t_->numa_cores;
    *kind = kNuma;
    return SortNumas();
  }

  void TakeFullCores() {
    if (t_->cores_nest) {
      // Parent by parent; identical to the up-front list (see TopoIndex::cores_nest).
      const Relation* r;
      Kind kind;
      const std::vector<int>& parents = SortCoreParents(&r, &kind);
      for (int p : parents) {
        if (need_ < 1) return;  // nothing can be taken any more
        CountCoresOf(*r, kind, p);
        core_list_.clear();
        AppendChildren(*r, kCore, p, &core_list_);
        free_.clear();
        for (int c : core_list_) {
          if (Count(kCore, c) == t_->cpus_per_core) free_.push_back(c);
        }
        TakeFree(kCore);
      }
      return;
    }
    SortCores();
    free_.clear();
    for (int c : core_list_) {
      if (Count(kCore, c) == t_->cpus_per_core) free_.push_back(c);
    }
    TakeFree(kCore);
  }

  void TakeFullUncore() {
    SortUncores();
    free_.clear();
    for (int u : uncore_list_) {
      if (Count(kUncore, u) == t_->sizes[kUncore][u]) free_.push_back(u);
    }
    TakeFree(kUncore);
  }

  void TakeFree(Kind k) {
    for (int e : free_) {
      if (need_ < t_->sizes[k][e]) continue;
      Take(t_->Mask(k, e));
    }
  }

  // takeUncoreCache. False when the kubelet would panic (integer divide by zero).
  bool TakeUncoreCache() {
    const int per_uncore = t_->cpus_per_uncore;
    SortUncores();
    outer_uncores_ = uncore_list_;
    for (int u : outer_uncores_) {
      if (need_ >= per_uncore) TakeFullUncore();
      if (IsSatisfied()) return true;
      if (!TakePartialUncore(u)) return false;
      if (IsSatisfied()) return true;
    }
    return true;
  }

  // takePartialUncore(u).
  bool TakePartialUncore(int u) {
    const int per_core = t_->cpus_per_core;
    if (per_core <= 0) return false;  // Go: integer divide by zero (or a negative slice bound)
    const int cores_needed = (need_ + per_core - 1) / per_core;
    // details.CoresNeededInUncoreCache(cores_needed, u): the lowest core ids with an
    // available CPU in u; then details.CPUsInCores(those cores).
    picked_.assign(static_cast<size_t>(w_), 0);
    const Relation& r = t_->uncore_cores;
    int taken_cores = 0;
    for (int i = r.begin[u]; i < r.begin[u + 1] && taken_cores < cores_needed; ++i) {
      int c = r.child[i];
      int inter = r.inter[i];
      bool listed = inter < 0 ? HasAvailable(kCore, c)
                              : Intersects(r.inter_masks.data() + inter, avail_.data(), w_);
      if (!listed) continue;
      ++taken_cores;
      const Word* cm = t_->Mask(kCore, c);
      for (int w = 0; w < w_; ++w) picked_[w] |= cm[w] & avail_[w];
    }
    int free_cpus = PopCount(picked_.data(), w_);
    if (need_ % 2 != 0 && per_core > 1 && free_cpus > need_) {
      // Drop the highest CPU (only one).
      for (int w = w_ - 1; w >= 0; --w) {
        if (picked_[w] != 0) {
          picked_[w] &= ~(Word{1} << (63 - std::countl_zero(picked_[w])));
          break;
        }
      }
      --free_cpus;
    }
    if (free_cpus == need_) Take(picked_.data());
    return true;
  }

  void TakeRemainingCpus() {
    if (t_->cores_nest && !spread_) {
      const Relation* r;
      Kind kind;
      const std::vector<int>& parents = SortCoreParents(&r, &kind);
      for (int p : parents) {
        CountCoresOf(*r, kind, p);
        core_list_.clear();
        AppendChildren(*r, kCore, p, &core_list_);
        for (int c : core_list_) {
          const Word* mask = t_->Mask(kCore, c);
          for (int w = 0; w < w_; ++w) {
            Word bits = mask[w] & avail_[w];
            while (bits != 0) {
              TakeCpu(w * 64 + std::countr_zero(bits));
              if (IsSatisfied()) return;
              bits &= bits - 1;
            }
          }
        }
      }
      return;
    }
    SortCpus();
    for (int cpu : cpu_list_) {
      TakeCpu(cpu);
      if (IsSatisfied()) return;
    }
  }

  const TopoIndex* t_ = nullptr;
  int w_ = 1;
  bool spread_ = false;
  bool spread_by_cpu_id_ = false;
  int need_ = 0;
  bool all_cores_counted_ = false;
  uint32_t stamp_ = 0;
  std::vector<uint32_t> core_stamp_;  // core counts are valid where stamp == stamp_
  std::vector<Word> avail_, result_, picked_;
  std::array<std::vector<int>, kNumKinds> count_;
  std::vector<uint64_t> keys_;
  std::vector<int> numa_list_, socket_list_, core_list_, uncore_list_, cpu_list_, outer_uncores_,
      free_;
  std::vector<int> core_cpus_;       // the spread sort: one socket's cores' CPUs, core by core
  std::vector<size_t> core_begin_;   // where each core's CPUs start in core_cpus_
};

// ------------------------------------------------------------------------------------------
// Go's iterateCombinations, with its slice aliasing.
//
// The kubelet builds each combination with `append(accum, n[i])` on a slice that starts
// empty. append writes in place while len < cap, so combinations that share a prefix can
// share a backing array, and a slice the caller saved (bestCombo, bestLocalRemainder) keeps
// changing as later combinations are written (until k/k #141238 made the kubelet copy them).
// GoSlice models such a saved slice: the id of its backing array and its visible elements;
// the walker rewrites the elements of a watched slice whenever an in-place append writes into
// its array. A copied slice is simply not watched.

struct GoSlice {
  int64_t array = -1;  // -1: nil
  absl::InlinedVector<int, 16> elems;
  bool IsNil() const { return array < 0; }
};

// Go's growslice for []int (8-byte elements), appending one element to a full slice of
// capacity `cap`: the new capacity after size-class rounding.
int GoGrowCap(int cap) {
  const int64_t new_len = static_cast<int64_t>(cap) + 1;
  int64_t newcap = cap;
  const int64_t doublecap = 2 * newcap;
  if (new_len > doublecap) {
    newcap = new_len;
  } else if (cap < 256) {
    newcap = doublecap;
  } else {
    while (newcap < new_len) newcap += (newcap + 3 * 256) >> 2;
  }
  static constexpr int kSizeClasses[] = {
      8,     16,    24,    32,    48,    64,    80,    96,    112,   128,   144,   160,
      176,   192,   208,   224,   240,   256,   288,   320,   352,   384,   416,   448,
      480,   512,   576,   640,   704,   768,   896,   1024,  1152,  1280,  1408,  1536,
      1792,  2048,  2304,  2688,  3072,  3200,  3456,  4096,  4864,  5376,  6144,  6528,
      6784,  6912,  8192,  9472,  9728,  10240, 10880, 12288, 13568, 14336, 16384, 18432,
      19072, 20480, 21760, 24576, 27264, 28672, 32768};
  int64_t bytes = newcap * 8;
  for (int size : kSizeClasses) {
    if (bytes <= size) return size / 8;
  }
  return static_cast<int>((bytes + 8191) / 8192 * 8192 / 8);
}

class CombinationWalker {
 public:
  // Calls f(combo, array_id) for every k-combination of items[0..n) in Go's order; f
  // returns true to break. `watched` (may be null) is kept in sync with in-place writes.
  template <typename F>
  void Walk(const int* items, int n, int k, GoSlice* watched, F&& f) {
    if (k < 1) return;
    items_ = items;
    n_ = n;
    k_ = k;
    watched_ = watched;
    path_.resize(static_cast<size_t>(k));
    array_.resize(static_cast<size_t>(k) + 1);
    cap_.resize(static_cast<size_t>(k) + 1);
    array_[0] = -1;
    cap_[0] = 0;
    Helper(0, 0, f);
  }

 private:
  template <typename F>
  bool Helper(int depth, int start, F& f) {
    if (depth == k_) return f(path_.data(), array_[k_]);
    const size_t d = static_cast<size_t>(depth);
    for (int i = start; i <= n_ - (k_ - depth); ++i) {
      const int x = items_[i];
      if (depth < cap_[d]) {  // append writes in place into the parent's array
        array_[d + 1] = array_[d];
        cap_[d + 1] = cap_[d];
        if (watched_ != nullptr && watched_->array == array_[d] && d < watched_->elems.size()) {
          watched_->elems[d] = x;
        }
      } else {  // a new backing array
        array_[d + 1] = next_array_++;
        cap_[d + 1] = GoGrowCap(cap_[d]);
      }
      path_[d] = x;
      if (Helper(depth + 1, i + 1, f)) return true;
    }
    return false;
  }

  const int* items_ = nullptr;
  int n_ = 0;
  int k_ = 0;
  GoSlice* watched_ = nullptr;
  int64_t next_array_ = 0;
  std::vector<int> path_;
  std::vector<int64_t> array_;
  std::vector<int> cap_;
};

// math.Round(v*1000)/1000. Go's math.Round rounds half away from zero; for the magnitudes
// here (|v*1000| < 2^52) truncation through int64 plus the exact fraction test gives the same
// value without a libm call.
double Round3(double v) {
  const double x = v * 1000;
  if (!(std::fabs(x) < 4503599627370496.0)) return std::round(x) / 1000;  // 2^52, NaN
  int64_t t = static_cast<int64_t>(x);
  const double frac = x - static_cast<double>(t);  // exact
  if (frac >= 0.5) {
    ++t;
  } else if (frac <= -0.5) {
    --t;
  }
  return static_cast<double>(t) / 1000;
}

// standardDeviation with the kubelet's rounding of the mean and the result:
//   mean = round3(Σx / n); stddev = round3(sqrt(Σ(x - mean)² / n)).
// The distributed search scores many combinations whose values share the same sum and
// often the same squared deviations, so the two rounding stages (pure functions of
// (Σx, n) and of (Σ(x - mean)², n)) are memoized; the arithmetic itself is unchanged.
class StandardDeviation {
 public:
  double operator()(const int* xs, int n) {
    int64_t isum = 0;  // the float64 sum of small integers is exact: sum them as integers
    for (int i = 0; i < n; ++i) isum += xs[i];
    if (isum != mean_sum_ || n != mean_n_) {
      mean_sum_ = isum;
      mean_n_ = n;
      mean_ = Round3(static_cast<double>(isum) / static_cast<double>(n));
    }
    double sq = 0;
    for (int i = 0; i < n; ++i) {
      const double d = static_cast<double>(xs[i]) - mean_;
      sq += d * d;
    }
    if (!(sq == result_sq_ && n == result_n_)) {
      result_sq_ = sq;
      result_n_ = n;
      result_ = Round3(std::sqrt(sq / static_cast<double>(n)));
    }
    return result_;
  }

 private:
  int64_t mean_sum_ = -1;
  int mean_n_ = 0;
  double mean_ = 0;
  double result_sq_ = -1;
  int result_n_ = 0;
  double result_ = 0;
};

// ------------------------------------------------------------------------------------------

struct Workspace {
  Accumulator outer, inner;
  CombinationWalker walker, sub_walker;
  std::vector<Word> words, numa_avail;
  std::vector<int> numas, present, base, whole, after, after2, remainder_combo, alloc_combo,
      alloc_remainder;
};

Workspace& GetWorkspace() {
  thread_local Workspace ws;
  return ws;
}

void ToWords(const TopoIndex& t, const CpuSet& set, std::vector<Word>* out) {
  out->assign(static_cast<size_t>(t.words), 0);
  const int limit = t.words * 64;
  set.ForEach([&](int cpu) {
    if (cpu < limit) (*out)[static_cast<size_t>(cpu) / 64] |= Word{1} << (cpu % 64);
  });
}

CpuSet ToCpuSet(const Word* words, int n) {
  CpuSet out;
  for (int w = n - 1; w >= 0; --w) {
    if (words[w] != 0) {
      out.Add(w * 64 + 63 - std::countl_zero(words[w]));  // sizes the set once
      break;
    }
  }
  // Long runs of CPUs as ranges, short ones CPU by CPU.
  for (int w = 0; w < n; ++w) {
    Word bits = words[w];
    while (bits != 0) {
      const int start = std::countr_zero(bits);
      const Word from_start = bits >> start;
      const int len = from_start == ~Word{0} >> start ? 64 - start : std::countr_one(from_start);
      const int first = w * 64 + start;
      if (len >= 4) {
        out.UnionWith(CpuSet::Range(first, first + len - 1));
      } else {
        for (int i = 0; i < len; ++i) out.Add(first + i);
      }
      bits = start + len >= 64 ? 0 : bits & (~Word{0} << (start + len));
    }
  }
  return out;
}

absl::Status NotEnough(int num_cpus, const CpuSet& available) {
  return absl::ResourceExhaustedError(
      fmt::format("not enough cpus available to satisfy request: requested={}, available={}",
                  num_cpus, available.Size()));
}

absl::StatusOr<CpuSet> Finish(Outcome outcome, const Accumulator& acc, const TopoIndex& t,
                              int num_cpus, const CpuSet& available) {
  switch (outcome) {
    case Outcome::kOk:
      return ToCpuSet(acc.result(), t.words);
    case Outcome::kNotEnough:
      return NotEnough(num_cpus, available);
    case Outcome::kFailed:
      return absl::InternalError("failed to allocate cpus");
    case Outcome::kDivideByZero:
      break;
  }
  return absl::InternalError(
      "cannot align by uncore cache: the topology's CPUsPerCore() is not positive (the "
      "kubelet would panic with an integer divide by zero)");
}

// takeByTopologyNUMAPacked on `available` (bit words) with a ready workspace accumulator.
Outcome PackedOn(Accumulator& acc, const TopoIndex& t, const Word* available, int num_cpus,
                 CpuSortingStrategy strategy, bool prefer_uncore) {
  acc.Reset(t, available, num_cpus, strategy);
  return acc.RunPacked(prefer_uncore);
}

}  // namespace

TopologyTables::TopologyTables(const CpuTopology& topo) : index_(GetSharedIndex(topo)) {}
TopologyTables::~TopologyTables() = default;
TopologyTables::TopologyTables(const TopologyTables&) = default;
TopologyTables& TopologyTables::operator=(const TopologyTables&) = default;

absl::StatusOr<CpuSet> TakeByTopologyNumaPacked(const CpuTopology& topo, const CpuSet& available,
                                                int num_cpus, CpuSortingStrategy strategy,
                                                bool prefer_align_by_uncore_cache,
                                                const TopologyTables* tables) {
  const TopoIndex& t = tables != nullptr ? tables->index() : GetIndex(topo);
  Workspace& ws = GetWorkspace();
  ToWords(t, available, &ws.words);
  Outcome outcome =
      PackedOn(ws.outer, t, ws.words.data(), num_cpus, strategy, prefer_align_by_uncore_cache);
  return Finish(outcome, ws.outer, t, num_cpus, available);
}

absl::StatusOr<CpuSet> TakeByTopologyNumaDistributed(
    const CpuTopology& topo, const CpuSet& available, int num_cpus, int cpu_group_size,
    CpuSortingStrategy strategy, bool align_by_socket, int min_numas_from_hint,
    bool remainder_whole_groups, bool keep_best_combination, const TopologyTables* tables) {
  if (cpu_group_size <= 0) {
    return absl::InvalidArgumentError(fmt::format(
        "cpu group size must be positive, got {} (the kubelet would panic)", cpu_group_size));
  }
  const int g = cpu_group_size;
  const int n = num_cpus;
  // Requests that cannot be handed out in whole groups use the packed algorithm.
  if (n % g != 0) return TakeByTopologyNumaPacked(topo, available, n, strategy, false, tables);

  const TopoIndex& t = tables != nullptr ? tables->index() : GetIndex(topo);
  Workspace& ws = GetWorkspace();
  ToWords(t, available, &ws.words);
  Accumulator& acc = ws.outer;
  acc.Reset(t, ws.words.data(), n, strategy);
  if (acc.IsSatisfied()) return ToCpuSet(acc.result(), t.words);  // empty
  if (acc.IsFailed()) return NotEnough(n, available);

  const int num_numa = t.NumElems(kNuma);
  ws.numas = acc.SortNumas();
  const std::vector<int>& numas = ws.numas;

  // The NUMA nodes with available CPUs (the keys of availableAfterAllocation) and whether
  // the sorted list repeats any of them (only on topologies whose NUMA nodes straddle
  // sockets).
  ws.present.clear();
  for (int m = 0; m < num_numa; ++m) {
    if (acc.Count(kNuma, m) > 0) ws.present.push_back(m);
  }
  const bool numas_repeat = numas.size() != ws.present.size();
  const int num_present = static_cast<int>(ws.present.size());

  // rangeNUMANodesNeededToSatisfy(cpuGroupSize, minNUMAsFromHint).
  const int groups_total = (t.num_cpus_in_map - 1) / g + 1;
  const int groups_per_numa = (groups_total - 1) / num_numa + 1;
  const int groups_needed = (acc.need() - 1) / g + 1;
  int min_k = (groups_needed - 1) / groups_per_numa + 1;
  const int max_k = std::min(groups_needed, num_present);
  if (min_numas_from_hint > 0 && min_numas_from_hint > min_k && min_numas_from_hint <= max_k) {
    min_k = min_numas_from_hint;
  }

  // Available CPUs per NUMA node and their whole groups do not change during the search.
  ws.base.assign(static_cast<size_t>(num_numa), 0);
  ws.whole.assign(static_cast<size_t>(num_numa), 0);
  for (int m = 0; m < num_numa; ++m) {
    ws.base[m] = acc.Count(kNuma, m);
    ws.whole[m] = acc.Count(kNuma, m) / g * g;
  }
  const bool all_present = num_present == num_numa;
  ws.after.assign(static_cast<size_t>(num_numa), 0);
  ws.after2.assign(static_cast<size_t>(num_numa), 0);
  ws.numa_avail.assign(static_cast<size_t>(t.words), 0);
  absl::InlinedVector<int, 16> values;
  StandardDeviation standard_deviation;

  // The balance score: stddev of the leftover counts of every NUMA node with available CPUs.
  auto balance_of = [&](const std::vector<int>& after) {
    if (all_present) return standard_deviation(after.data(), num_numa);
    values.clear();
    for (int m : ws.present) values.push_back(after[m]);
    return standard_deviation(values.data(), static_cast<int>(values.size()));
  };

  bool hung = false;  // remainder_whole_groups off: the kubelet's sweep would never end
  for (int k = min_k; k <= max_k; ++k) {
    double best_balance = std::numeric_limits<double>::max();
    GoSlice best_remainder;
    GoSlice best_combo;
    bool best_in_one_socket = false;

    const int even_share = n / k / g * g;
    // Before k/k #141238 the saved slices alias the walk's backing arrays (see GoSlice).
    ws.walker.Walk(numas.data(), static_cast<int>(numas.size()), k,
                   keep_best_combination ? nullptr : &best_combo,
                   [&](const int* combo, int64_t combo_array) -> bool {
                     if (hung) return true;
                     if (best_balance == 0 && (!align_by_socket || best_in_one_socket)) return true;

                     // Enough CPUs overall, and enough in whole groups.
                     int cpus = 0;
                     if (numas_repeat) {
                       std::fill(ws.numa_avail.begin(), ws.numa_avail.end(), 0);
                       for (int i = 0; i < k; ++i) {
                         const Word* mask = t.Mask(kNuma, combo[i]);
                         for (int w = 0; w < t.words; ++w) ws.numa_avail[w] |= mask[w];
                       }
                       cpus = IntersectionCount(ws.numa_avail.data(), acc.avail(), t.words);
                     } else {
                       for (int i = 0; i < k; ++i) cpus += ws.base[combo[i]];
                     }
                     if (cpus < n) return false;
                     int64_t whole_cpus = 0;
                     for (int i = 0; i < k; ++i) whole_cpus += ws.whole[combo[i]];
                     if (whole_cpus < n) return false;

                     int distribution = even_share;
                     if (align_by_socket) {
                       for (int i = 0; i < k; ++i) {
                         distribution = std::min(distribution, ws.whole[combo[i]]);
                       }
                     }
                     for (int i = 0; i < k; ++i) {
                       if (ws.base[combo[i]] < distribution) return false;
                     }

                     std::copy(ws.base.begin(), ws.base.end(), ws.after.begin());
                     for (int i = 0; i < k; ++i) ws.after[combo[i]] -= distribution;
                     const int remainder = n - distribution * k;

                     ws.remainder_combo.clear();
                     for (int i = 0; i < k; ++i) {
                       if (ws.after[combo[i]] >= g) ws.remainder_combo.push_back(combo[i]);
                     }

                     double best_local_balance = std::numeric_limits<double>::max();
                     GoSlice best_local_remainder;
                     if (remainder == 0) best_local_balance = balance_of(ws.after);
                     for (int kk = static_cast<int>(ws.remainder_combo.size());
                          remainder > 0 && kk >= 1; --kk) {
                       ws.sub_walker.Walk(
                           ws.remainder_combo.data(), static_cast<int>(ws.remainder_combo.size()),
                           kk, keep_best_combination ? nullptr : &best_local_remainder,
                           [&](const int* subset, int64_t subset_array) -> bool {
                             // The subset must take the remainder in whole groups (k/k #140730).
                             int64_t available_groups = 0;
                             for (int i = 0; i < kk; ++i)
                               available_groups += ws.after[subset[i]] / g;
                             if (!remainder_whole_groups) {
                               // Before #140730 the test was the raw leftover count; a subset
                               // that passes it without whole groups is swept forever.
                               int64_t raw = 0;
                               for (int i = 0; i < kk; ++i) raw += ws.after[subset[i]];
                               if (raw < remainder) return false;
                               if (available_groups * g < remainder) {
                                 hung = true;
                                 return true;
                               }
                             }
                             if (available_groups * g < remainder) return false;
                             ws.after2 = ws.after;
                             int left = remainder;
                             while (left > 0) {
                               bool progress = false;
                               for (int i = 0; i < kk; ++i) {
                                 if (left == 0) break;
                                 int& a = ws.after2[subset[i]];
                                 if (a < g) continue;
                                 a -= g;
                                 left -= g;
                                 progress = true;
                               }
                               // Only reachable when the subset repeats a NUMA node; the kubelet
                               // would spin forever here. Treat the subset as unable to take the
                               // remainder.
                               if (!progress) return false;
                             }
                             const double balance = balance_of(ws.after2);
                             if (balance < best_local_balance) {
                               best_local_balance = balance;
                               best_local_remainder.array = subset_array;
                               best_local_remainder.elems.assign(subset, subset + kk);
                             }
                             return false;
                           });
                     }

                     if (hung) return true;
                     bool in_same_socket = false;
                     if (align_by_socket) {
                       const int s = t.numa_socket[combo[0]];
                       in_same_socket = s >= 0;
                       for (int i = 1; i < k && in_same_socket; ++i) {
                         in_same_socket = t.numa_socket[combo[i]] == s;
                       }
                     }
                     bool is_better = best_local_balance < best_balance;
                     if (align_by_socket && in_same_socket != best_in_one_socket)
                       is_better = in_same_socket;
                     if (is_better) {
                       best_balance = best_local_balance;
                       best_remainder = best_local_remainder;
                       best_combo.array = combo_array;
                       best_combo.elems.assign(combo, combo + k);
                       if (align_by_socket) best_in_one_socket = in_same_socket;
                     }
                     return false;
                   });

    if (hung) {
      return KubeletHangError(fmt::format(
          "takeByTopologyNUMADistributed never returns: taking {} CPUs in groups of {} from {} "
          "NUMA nodes, the remainder of {} CPUs is swept over NUMA nodes whose leftovers are "
          "not whole groups",
          n, g, k, n - (n / k / g * g) * k));
    }
    if (best_combo.IsNil()) continue;

    // Allocate from the saved combination, as the kubelet reads it (before k/k #141238
    // possibly overwritten by later combinations that shared its backing array).
    ws.alloc_combo.assign(best_combo.elems.begin(), best_combo.elems.end());
    ws.alloc_remainder.assign(best_remainder.elems.begin(), best_remainder.elems.end());
    const int combo_len = static_cast<int>(ws.alloc_combo.size());
    int distribution = n / combo_len / g * g;
    for (int m : ws.alloc_combo) distribution = std::min(distribution, acc.Count(kNuma, m) / g * g);

    auto take_from_numa = [&](int m, int count) {
      const Word* mask = t.Mask(kNuma, m);
      for (int w = 0; w < t.words; ++w) ws.numa_avail[w] = mask[w] & acc.avail()[w];
      Outcome outcome = PackedOn(ws.inner, t, ws.numa_avail.data(), count, strategy, false);
      if (outcome == Outcome::kOk) acc.Take(ws.inner.result());  // errors contribute nothing
    };
    for (int m : ws.alloc_combo) take_from_numa(m, distribution);

    int remainder = n - distribution * combo_len;
    while (remainder > 0) {
      bool progress = false;
      for (int m : ws.alloc_remainder) {
        if (remainder == 0) break;
        if (acc.Count(kNuma, m) < g) continue;
        take_from_numa(m, g);
        remainder -= g;
        progress = true;
      }
      // The kubelet would loop forever here (possible only after the slice aliasing above
      // swapped a NUMA node of the combination); stop and report the shortfall instead.
      if (!progress) break;
    }

    if (acc.need() > 0) {
      return absl::InternalError(
          fmt::format("accounting error, not enough CPUs allocated, remaining: {}", acc.need()));
    }
    if (acc.need() < 0) {
      return absl::InternalError(
          fmt::format("accounting error, too many CPUs allocated, remaining: {}", acc.need()));
    }
    return ToCpuSet(acc.result(), t.words);
  }

  // No combination of NUMA nodes works: fall back to packing.
  return TakeByTopologyNumaPacked(topo, available, n, strategy, false);
}

}  // namespace podtopo::cpumanager
