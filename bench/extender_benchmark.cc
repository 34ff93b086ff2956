// `podtopo extender` at cluster scale (issue 25 item 5): one Filter request, whole (JSON body
// in, JSON body out), of one pod against 5,000 nodes named by NodeNames (the scheduler's
// nodeCacheCapable form). The nodes are 40 kinds: four presets (demo, dual-socket-ht, t256,
// gb200), each in ten occupancies (0-9 pods of 1-8 exclusive CPUs already admitted); node i is
// kind i % 40, so nodes share models as a real fleet of identical machines does.
//
//   BM_FilterCold  the first request after the 5,000 NRTs were read: every kind's verdict
//                  is computed (40 admissions) plus the lookups; setup (UpsertNrt x 5,000) is
//                  not timed.
//   BM_FilterWarm  the same request again: every verdict is cached.
//   BM_Prioritize  warm, the HostPriorityList answer.
//   BM_UpsertNrt   reading one NRT into its node (the informer's cost per event).
// Goals: a request <= 5 ms, <= 1 us per node. Figures in docs/performance.md ("The extender").
//
//   cmake --build build --target extender_benchmark && build/bench/extender_benchmark
#include <random>
#include <string>
#include <vector>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "benchmark/benchmark.h"
#include "extender/extender.h"
#include "extender/nrt_model.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "topology/presets.h"

namespace podtopo::extender {
namespace {

constexpr int kNodes = 5000;
constexpr int kKinds = 40;

nlohmann::json PodJson(const std::string& name, int cpu, int mem_gi) {
  nlohmann::json r = {{"cpu", std::to_string(cpu)}, {"memory", fmt::format("{}Gi", mem_gi)}};
  return {{"metadata", {{"name", name}, {"namespace", "default"}, {"uid", name + "-uid"}}},
          {"spec",
           {{"containers",
             {{{"name", "main"}, {"image", "x"}, {"resources", {{"requests", r}, {"limits", r}}}}}}}}};
}

// The 40 kinds' NRTs, built once.
const std::vector<nlohmann::json>& Kinds() {
  static const std::vector<nlohmann::json> kinds = [] {
    std::vector<nlohmann::json> out;
    std::mt19937 g(25);
    const char* presets[] = {"demo", "dual-socket-ht", "t256", "gb200"};
    for (int k = 0; k < kKinds; ++k) {
      NodeTopology topo = Preset(presets[k % 4]).value();
      config::KubeletConfig cfg = config::SeedDefault();
      cfg.kubelet_version = "1.37";
      cfg.topology_manager_policy_options["max-allowable-numa-nodes"] =
          std::to_string(std::max<size_t>(8, topo.numa_nodes.size()));
      auto node = Node::Create(topo, cfg, {}).value();
      node->set_tracing(false);
      for (int p = 0; p < k / 4; ++p) {
        int cpu = std::uniform_int_distribution<int>(1, 8)(g);
        nlohmann::json pj = PodJson(fmt::format("fill-{}", p), cpu, 1);
        pj["apiVersion"] = "v1";
        pj["kind"] = "Pod";
        auto pod = ParsePods(pj.dump(), "bench")->front();
        (void)node->Admit(pod);
      }
      out.push_back(NrtOfNode("kind", *node));
    }
    return out;
  }();
  return kinds;
}

std::unique_ptr<Extender> Fleet() {
  auto ext = Extender::Create({}).value();
  for (int i = 0; i < kNodes; ++i) {
    nlohmann::json nrt = Kinds()[i % kKinds];
    nrt["metadata"]["name"] = fmt::format("node-{:05d}", i);
    ext->UpsertNrt(nrt);
  }
  return ext;
}

std::string Request() {
  std::vector<std::string> names;
  for (int i = 0; i < kNodes; ++i) names.push_back(fmt::format("node-{:05d}", i));
  return nlohmann::json{{"pod", PodJson("bench", 12, 4)}, {"nodenames", names}}.dump();
}

void Check(benchmark::State& state, const HttpAnswer& a) {
  auto j = nlohmann::json::parse(a.body);
  size_t passed = j["nodenames"].size(), failed = j["failedNodes"].size();
  if (a.status != 200 || passed + failed != kNodes || passed == 0 || failed == 0) {
    state.SkipWithError("unexpected answer");
  }
  state.counters["passed"] = static_cast<double>(passed);
}

void BM_FilterCold(benchmark::State& state) {
  const std::string body = Request();
  for (auto _ : state) {
    state.PauseTiming();
    auto ext = Fleet();
    state.ResumeTiming();
    HttpAnswer a = ext->Filter(body);
    benchmark::DoNotOptimize(a);
    state.PauseTiming();
    Check(state, a);
    ext.reset();
    state.ResumeTiming();
  }
  state.counters["ns_per_node"] = benchmark::Counter(
      kNodes, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_FilterCold)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_FilterWarm(benchmark::State& state) {
  const std::string body = Request();
  auto ext = Fleet();
  Check(state, ext->Filter(body));
  for (auto _ : state) {
    HttpAnswer a = ext->Filter(body);
    benchmark::DoNotOptimize(a);
  }
  state.counters["ns_per_node"] = benchmark::Counter(
      kNodes, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_FilterWarm)->Unit(benchmark::kMillisecond);

void BM_Prioritize(benchmark::State& state) {
  const std::string body = Request();
  auto ext = Fleet();
  (void)ext->Filter(body);
  for (auto _ : state) {
    HttpAnswer a = ext->Prioritize(body);
    benchmark::DoNotOptimize(a);
  }
}
BENCHMARK(BM_Prioritize)->Unit(benchmark::kMillisecond);

void BM_UpsertNrt(benchmark::State& state) {
  auto ext = Extender::Create({}).value();
  nlohmann::json nrt = Kinds()[9];
  int i = 0;
  for (auto _ : state) {
    nrt["metadata"]["name"] = fmt::format("node-{}", i++ % kNodes);
    ext->UpsertNrt(nrt);
  }
}
BENCHMARK(BM_UpsertNrt)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace podtopo::extender

BENCHMARK_MAIN();
