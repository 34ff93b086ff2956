// CPU take on T256, the inputs of ../shared/spec/kubelet-perf.md "CPU take on T256".
//
// T256: 128 cores c = 0..127, socket c/64, NUMA c/16, uncore = NUMA, threads c and c+128.
// all = 0-255. frag (the fragmented free set): in NUMA 0-3 every core's sibling is
// taken (CPUs 0-63 free as lone threads); in NUMA 4-7 every even core is taken whole.
// The kubelet spends 0.5-4 ms per take on these inputs; the goal is <= 5 us.
//
// Each benchmark checks once that the result is the kubelet's (as listed in
// kubelet-perf.md) and aborts otherwise, so a fast wrong answer cannot be reported.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "benchmark/benchmark.h"
#include "cpumanager/cpu_assignment.h"

namespace podtopo::cpumanager {
namespace {

const CpuTopology& T256() {
  static const CpuTopology* topo = [] {
    auto* t = new CpuTopology();
    for (int c = 0; c < 128; ++c) {
      CpuInfo info{.numa = c / 16, .socket = c / 64, .core = c, .uncore = c / 16};
      t->AddCpu(c, info);
      t->AddCpu(c + 128, info);
    }
    t->SetCountsFromCpus();
    return t;
  }();
  return *topo;
}

const CpuSet& All() {
  static const CpuSet* all = new CpuSet(CpuSet::Range(0, 255));
  return *all;
}

const CpuSet& Frag() {
  static const CpuSet* frag = [] {
    auto* s = new CpuSet(CpuSet::Range(0, 63));
    for (int c = 65; c < 128; c += 2) {
      s->Add(c);
      s->Add(c + 128);
    }
    return s;
  }();
  return *frag;
}

CpuSet Odd(int first, int last) {
  CpuSet s;
  for (int c = first; c <= last; c += 2) s.Add(c);
  return s;
}

void Check(const absl::StatusOr<CpuSet>& got, const CpuSet& want, const char* what) {
  if (!got.ok() || *got != want) {
    std::fprintf(stderr, "%s: got %s, the kubelet gives %s\n", what,
                 got.ok() ? got->String().c_str() : got.status().ToString().c_str(),
                 want.String().c_str());
    std::abort();
  }
}

void Packed(benchmark::State& state, const char* what, const CpuSet& free, int n, bool uncore,
            const CpuSet& want) {
  Check(TakeByTopologyNumaPacked(T256(), free, n, CpuSortingStrategy::kPacked, uncore), want, what);
  for (auto _ : state) {
    auto got = TakeByTopologyNumaPacked(T256(), free, n, CpuSortingStrategy::kPacked, uncore);
    benchmark::DoNotOptimize(got);
  }
}

void Distributed(benchmark::State& state, const char* what, const CpuSet& free, int n,
                 const CpuSet& want) {
  Check(TakeByTopologyNumaDistributed(T256(), free, n, 2, CpuSortingStrategy::kPacked, false, 0),
        want, what);
  for (auto _ : state) {
    auto got =
        TakeByTopologyNumaDistributed(T256(), free, n, 2, CpuSortingStrategy::kPacked, false, 0);
    benchmark::DoNotOptimize(got);
  }
}

void BM_PackedAll8(benchmark::State& state) {
  Packed(state, "BM_PackedAll8", All(), 8, false, CpuSet::Parse("0-3,128-131").value());
}
void BM_PackedFrag4(benchmark::State& state) {
  Packed(state, "BM_PackedFrag4", Frag(), 4, false, CpuSet::Parse("65,67,193,195").value());
}
void BM_PackedFrag16(benchmark::State& state) {
  Packed(state, "BM_PackedFrag16", Frag(), 16, false, Odd(65, 79).Union(Odd(193, 207)));
}
void BM_PackedFrag48(benchmark::State& state) {
  Packed(state, "BM_PackedFrag48", Frag(), 48, false, Odd(65, 111).Union(Odd(193, 239)));
}
void BM_UncoreAll16(benchmark::State& state) {
  Packed(state, "BM_UncoreAll16", All(), 16, true, CpuSet::Parse("0-7,128-135").value());
}
void BM_UncoreFrag16(benchmark::State& state) {
  Packed(state, "BM_UncoreFrag16", Frag(), 16, true, Odd(65, 79).Union(Odd(193, 207)));
}
void BM_DistributedG2All16(benchmark::State& state) {
  Distributed(state, "BM_DistributedG2All16", All(), 16, CpuSet::Parse("0-7,128-135").value());
}
void BM_DistributedG2All48(benchmark::State& state) {
  Distributed(state, "BM_DistributedG2All48", All(), 48,
              CpuSet::Parse("0-11,16-27,128-139,144-155").value());
}

BENCHMARK(BM_PackedAll8);
BENCHMARK(BM_PackedFrag4);
BENCHMARK(BM_PackedFrag16);
BENCHMARK(BM_PackedFrag48);
BENCHMARK(BM_UncoreAll16);
BENCHMARK(BM_UncoreFrag16);
BENCHMARK(BM_DistributedG2All16);
BENCHMARK(BM_DistributedG2All48);

}  // namespace
}  // namespace podtopo::cpumanager

BENCHMARK_MAIN();
