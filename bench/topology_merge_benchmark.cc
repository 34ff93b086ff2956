// Topology Manager merge benchmarks (spec/kubelet-perf.md, "Topology Manager merge").
//
// Each benchmark builds the policy as the kubelet's NewManager would, checks the merged hint
// once against the kubelet's result (SkipWithError on a mismatch), then times Policy::Merge.
//
// Rows of kubelet-perf.md: NUMA nodes 0..N-1, no distances, 4 providers, provider i answers
// {"resource-i": one hint per mask m = 1..2^N-1 in increasing order}.
//   singles:  preferred iff popcount(m) == 1        -> {0}, preferred, admit
//   disjoint: provider i prefers only m == 1 << i   -> {0}, not preferred (restricted rejects)
// The kubelet walks (2^N-1)^4 permutations: 10.2 ms at N = 4, 3.0 s at N = 6, 258 s at N = 8.
//
// 34 NUMA nodes: a 2-socket machine whose nodes 0 and 1 hold the CPUs (and hugepages), plus
// 32 CPU-less nodes 2..33 (CXL memory expanders / GPU memory exposed as NUMA nodes). Four GPUs;
// GPU g reports NUMA nodes {g/2} + {2+8g .. 9+8g}. max-allowable-numa-nodes = 34. Providers in
// the kubelet's order (device manager, CPU manager, memory manager), each listing only the
// masks such a provider would produce for a small request (the kubelet's providers iterate all
// 2^34 masks; here every provider is cut to masks of at most 2 nodes, in IterateBitMasks order):
//   device "nvidia.com/gpu" (1 GPU): every mask of 1 or 2 nodes touching some GPU's nodes
//       (all 34 single nodes and all 561 pairs); single nodes preferred.
//   cpu: masks over the CPU nodes {0}, {1}, {0,1}.
//   memory: all 595 masks of 1 or 2 nodes; single nodes preferred.
//   hugepages-1Gi: {0}, {1}, {0,1} (pages only on the CPU nodes).
// "aligned": cpu fits one node ({0},{1} preferred)              -> {0}, preferred, admit.
// "split":   cpu needs both CPU nodes ({0,1} the only preferred)  -> no mask is preferred by
//            every resource; bestNonPreferredAffinityCount = 2 (cpu's narrowest), and {0,1}
//            (count 2) is reachable (cpu {0,1} & gpu {0,1} & memory {0,1} & hugepages {0,1})
//            -> {0,1}, not preferred; best-effort admits, restricted rejects.
// "pairs-disjoint" (stress, not realistic): 4 providers each listing all 595 masks of <= 2
// nodes, provider i preferring only {i} -> {0}, not preferred. The kubelet: 595^4 = 1.25e11
// permutations (about 7 hours at 200 ns each).
#include <bit>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "topologymanager/policy.h"

namespace podtopo::topologymanager {
namespace {

BitMask Mask(std::initializer_list<int> bits) { return *NewBitMask(bits); }

std::vector<NUMANode> Nodes(int n) {
  std::vector<NUMANode> nodes;
  for (int i = 0; i < n; ++i) nodes.push_back({i, std::nullopt});
  return nodes;
}

ProvidersHints PerfProviders(int n, bool disjoint) {
  ProvidersHints providers;
  for (int i = 0; i < 4; ++i) {
    std::vector<TopologyHint> hints;
    for (uint64_t m = 1; m < (uint64_t{1} << n); ++m) {
      bool preferred = disjoint ? m == (uint64_t{1} << i) : std::popcount(m) == 1;
      hints.push_back({BitMask::FromUint64(m), preferred});
    }
    std::map<std::string, HintList> resources;
    resources["resource-" + std::to_string(i)] = hints;
    providers.push_back(resources);
  }
  return providers;
}

bool Check(benchmark::State& state, const Policy& policy, const ProvidersHints& providers,
           const TopologyHint& want, bool want_admit) {
  MergeResult got = policy.Merge(providers);
  if (!(got.hint == want) || got.admit != want_admit) {
    std::ostringstream os;
    os << policy.Name() << ": got " << got.hint << " admit " << got.admit << ", want " << want
       << " admit " << want_admit;
    state.SkipWithError(os.str().c_str());
    return false;
  }
  return true;
}

void SetCombinations(benchmark::State& state, double combinations) {
  state.counters["kubelet_permutations"] = combinations;
}

void BM_MergeSingles(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto policy = NewPolicy(kPolicyBestEffort, Nodes(n), {});
  if (!policy.ok()) {
    state.SkipWithError(std::string(policy.status().message()).c_str());
    return;
  }
  ProvidersHints providers = PerfProviders(n, /*disjoint=*/false);
  if (!Check(state, **policy, providers, {Mask({0}), true}, true)) return;
  for (auto _ : state) benchmark::DoNotOptimize((*policy)->Merge(providers));
  SetCombinations(state, std::pow(std::pow(2.0, n) - 1, 4));
}
BENCHMARK(BM_MergeSingles)->DenseRange(4, 8)->Unit(benchmark::kMicrosecond);

void BM_MergeDisjoint(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto policy = NewPolicy(kPolicyBestEffort, Nodes(n), {});
  auto restricted = NewPolicy(kPolicyRestricted, Nodes(n), {});
  if (!policy.ok() || !restricted.ok()) {
    state.SkipWithError("policy construction failed");
    return;
  }
  ProvidersHints providers = PerfProviders(n, /*disjoint=*/true);
  if (!Check(state, **policy, providers, {Mask({0}), false}, true)) return;
  if (!Check(state, **restricted, providers, {Mask({0}), false}, false)) return;
  for (auto _ : state) benchmark::DoNotOptimize((*policy)->Merge(providers));
  SetCombinations(state, std::pow(std::pow(2.0, n) - 1, 4));
}
BENCHMARK(BM_MergeDisjoint)->Arg(4)->Arg(6)->Arg(8)->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------------------------
// 34 NUMA nodes.

constexpr int kNodes34 = 34;

// Masks of 1 then 2 nodes out of `nodes`, in IterateBitMasks order.
std::vector<BitMask> SmallMasks(const std::vector<int>& nodes) {
  std::vector<BitMask> masks;
  for (int a : nodes) masks.push_back(Mask({a}));
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t j = i + 1; j < nodes.size(); ++j) masks.push_back(Mask({nodes[i], nodes[j]}));
  }
  return masks;
}

std::vector<TopologyHint> SinglesPreferred(const std::vector<BitMask>& masks) {
  std::vector<TopologyHint> hints;
  for (BitMask m : masks) hints.push_back({m, m.Count() == 1});
  return hints;
}

ProvidersHints Providers34(bool cpu_split) {
  std::vector<int> all;
  for (int i = 0; i < kNodes34; ++i) all.push_back(i);
  // GPU g: NUMA nodes {g/2} + {2+8g .. 9+8g}; together they cover every node.
  std::vector<BitMask> gpu_nodes;
  for (int g = 0; g < 4; ++g) {
    BitMask m = Mask({g / 2});
    for (int k = 0; k < 8; ++k) m.Or(Mask({2 + 8 * g + k}));
    gpu_nodes.push_back(m);
  }
  std::vector<TopologyHint> gpu;
  for (BitMask m : SmallMasks(all)) {
    bool touches = false;
    for (BitMask g : gpu_nodes) touches = touches || !(m & g).IsEmpty();
    if (touches) gpu.push_back({m, m.Count() == 1});
  }
  std::vector<TopologyHint> cpu =
      cpu_split ? std::vector<TopologyHint>{{Mask({0, 1}), true}}
                : std::vector<TopologyHint>{{Mask({0}), true}, {Mask({1}), true},
                                            {Mask({0, 1}), false}};
  std::vector<TopologyHint> hugepages = {
      {Mask({0}), true}, {Mask({1}), true}, {Mask({0, 1}), false}};
  ProvidersHints providers;
  providers.push_back(std::map<std::string, HintList>{{"nvidia.com/gpu", gpu}});
  providers.push_back(std::map<std::string, HintList>{{"cpu", cpu}});
  providers.push_back(std::map<std::string, HintList>{
      {"memory", SinglesPreferred(SmallMasks(all))}, {"hugepages-1Gi", hugepages}});
  return providers;
}

double Product(const ProvidersHints& providers) {
  double product = 1;
  for (const auto& p : providers) {
    for (const auto& [name, list] : *p) {
      product *= list->listed() ? list->hints().size() : list->Enumerate().size();
    }
  }
  return product;
}

void BM_Merge34Numa(benchmark::State& state, bool cpu_split) {
  const std::map<std::string, std::string> options = {{kMaxAllowableNUMANodes, "34"}};
  auto best_effort = NewPolicy(kPolicyBestEffort, Nodes(kNodes34), options);
  auto restricted = NewPolicy(kPolicyRestricted, Nodes(kNodes34), options);
  if (!best_effort.ok() || !restricted.ok()) {
    state.SkipWithError("policy construction failed");
    return;
  }
  ProvidersHints providers = Providers34(cpu_split);
  TopologyHint want = cpu_split ? TopologyHint{Mask({0, 1}), false} : TopologyHint{Mask({0}), true};
  if (!Check(state, **best_effort, providers, want, true)) return;
  if (!Check(state, **restricted, providers, want, !cpu_split)) return;
  for (auto _ : state) benchmark::DoNotOptimize((*restricted)->Merge(providers));
  SetCombinations(state, Product(providers));
}
BENCHMARK_CAPTURE(BM_Merge34Numa, aligned, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Merge34Numa, split, true)->Unit(benchmark::kMicrosecond);

void BM_Merge34NumaPairsDisjoint(benchmark::State& state) {
  std::vector<int> all;
  for (int i = 0; i < kNodes34; ++i) all.push_back(i);
  std::vector<BitMask> masks = SmallMasks(all);
  ProvidersHints providers;
  for (int i = 0; i < 4; ++i) {
    std::vector<TopologyHint> hints;
    for (BitMask m : masks) hints.push_back({m, m == Mask({i})});
    providers.push_back(
        std::map<std::string, HintList>{{"resource-" + std::to_string(i), hints}});
  }
  auto policy = NewPolicy(kPolicyBestEffort, Nodes(kNodes34), {{kMaxAllowableNUMANodes, "34"}});
  if (!policy.ok()) {
    state.SkipWithError("policy construction failed");
    return;
  }
  // No mask is preferred by all four; B = 1 and every single node is reachable: {0}.
  if (!Check(state, **policy, providers, {Mask({0}), false}, true)) return;
  for (auto _ : state) benchmark::DoNotOptimize((*policy)->Merge(providers));
  SetCombinations(state, Product(providers));
}
BENCHMARK(BM_Merge34NumaPairsDisjoint)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace podtopo::topologymanager

BENCHMARK_MAIN();
