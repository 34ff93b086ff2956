// Whole admission cost at every scale (issue 11): Node::Admit of a pod-level (KEP-5526) pod of
// 3 containers under Topology Manager pod scope and single-numa-node, with exclusive CPUs,
// exclusive memory and one device, on preset:demo, preset:t256 (each plus 2 devices on NUMA 0
// and 1), preset:gb200 and preset:numa64; and `explain` of the same pod on gb200.
// Each iteration admits and then removes the pod (so the node is the same every time): the
// figure is admit + remove. Every benchmark checks the admission's answer first.
//
// BM_AdmitVersion/PRESET/VERSION admits the same pod on demo and t256 as each kubelet version
// decides (--kubelet-version; kubelet/version.h): versions are data read where a decision
// differs, so every version keeps the figure of the default one (issue 23).
//
// Goals: <= 20 us on demo and t256, <= 1 ms on gb200, <= 10 ms on numa64; explain on gb200
// <= 50 ms. BM_Admit runs untraced, as `podtopo admit` without -o wide; BM_AdmitTraced with
// the trace explain and -o wide show. Figures (docs/performance.md has the tables and the
// instruction counts): idle, 3 Dec 2026, main aa5d1b8, CPU time, RelWithDebInfo -O2 -g1,
// tcmalloc: demo 9.2-9.3 us (90.0 k instructions), t256 10.0-10.2 us (100.8 k), gb200 12.5 us
// (127.2 k), numa64 18.6 us (219.8 k), explain gb200 0.071 ms.
// The kubelet: kubelet-perf.md times no whole admission. On gb200 and numa64 it walks 2^34
// (2^64) masks per provider and never answers (k/k #135541); on t256 its merge alone walks
// 192 x 255 x 255 = 12.5 M hint combinations, about 2.4 s at the ~190 ns per combination
// kubelet-perf.md measured (an estimate: ~50,000x this benchmark's t256 figure).
//
//   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
//     -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DPODTOPO_BUILD_BENCHMARKS=ON
//   cmake --build build --target admission_benchmark && build/bench/admission_benchmark
#include <cstdlib>
#include <string>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "benchmark/benchmark.h"
#include "explain/explain.h"
#include "kubelet/version.h"
#include "topology/presets.h"

namespace podtopo {
namespace {

std::string PodYaml(const std::string& device) {
  return R"(apiVersion: v1
kind: Pod
metadata: {name: bench, uid: bench-uid}
spec:
  resources:
    requests: {cpu: "6", memory: 6Gi}
    limits: {cpu: "6", memory: 6Gi}
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: "2", memory: 2Gi, )" + device + R"(: "1"}
      limits: {cpu: "2", memory: 2Gi, )" + device + R"(: "1"}
  - name: helper
    image: busybox
    resources:
      requests: {cpu: "2", memory: 2Gi}
      limits: {cpu: "2", memory: 2Gi}
  - name: shared
    image: busybox
)";
}

struct Setup {
  NodeTopology topology;
  config::KubeletConfig config;
  Pod pod;
};

// `version`: the kubelet version the admission decides as ("" = the library's default, the
// fixed behaviour).
Setup Make(const std::string& preset, const std::string& version = "") {
  Setup s;
  s.topology = Preset(preset).value();
  std::string device = "example.com/gpu";
  if (preset == "gb200") device = "nvidia.com/gpu";
  if (s.topology.devices.empty()) {
    s.topology.devices.push_back({device, "gpu0", 0});
    s.topology.devices.push_back({device, "gpu1", 1});
  }
  s.config = config::SeedDefault();  // pod scope, single-numa-node, static CPU and memory
  s.config.kubelet_version = version;
  s.config.topology_manager_policy_options["max-allowable-numa-nodes"] =
      std::to_string(std::max<size_t>(8, s.topology.numa_nodes.size()));
  s.pod = ParsePods(PodYaml(device), "bench.yaml").value().front();
  return s;
}

// `traced`: with the admission trace (`explain`, `admit -o wide`); without it as `podtopo
// admit` runs otherwise (Node::set_tracing).
void AdmitAndRemove(benchmark::State& state, const std::string& preset, bool traced,
                    const std::string& version = "") {
  Setup s = Make(preset, version);
  auto node = Node::Create(s.topology, s.config, {});
  if (!node.ok()) {
    state.SkipWithError(std::string(node.status().message()).c_str());
    return;
  }
  (*node)->set_tracing(traced);
  // The answer first: admitted, on one NUMA node (the reserved CPU is on NUMA 0).
  {
    auto a = (*node)->Admit(s.pod);
    if (!a.ok() || !a->admitted || !a->topology_hint || !a->topology_hint->affinity ||
        a->topology_hint->affinity->Count() != 1 || a->containers.size() != 3 ||
        a->containers[0].devices.size() != 1 || (a->trace != nullptr) != traced) {
      state.SkipWithError("unexpected admission result");
      return;
    }
    (void)(*node)->Remove(s.pod.namespace_name, s.pod.name);
  }
  for (auto _ : state) {
    auto a = (*node)->Admit(s.pod);
    benchmark::DoNotOptimize(a);
    auto r = (*node)->Remove(s.pod.namespace_name, s.pod.name);
    benchmark::DoNotOptimize(r);
  }
}

void BM_Admit(benchmark::State& state, const std::string& preset) {
  AdmitAndRemove(state, preset, false);
}

void BM_AdmitTraced(benchmark::State& state, const std::string& preset) {
  AdmitAndRemove(state, preset, true);
}

void BM_ExplainGb200(benchmark::State& state) {
  Setup s = Make("gb200");
  explain::Scenario scenario{s.topology, s.config, ""};
  {
    auto e = explain::ExplainPods(scenario, {s.pod});
    if (!e.ok() || e->size() != 1 || explain::RenderText(e->front()).find("merged: NUMA 0") ==
                                         std::string::npos) {
      state.SkipWithError("unexpected explanation");
      return;
    }
  }
  for (auto _ : state) {
    auto e = explain::ExplainPods(scenario, {s.pod});
    std::string text = explain::RenderText(e->front());
    benchmark::DoNotOptimize(text);
  }
}

BENCHMARK_CAPTURE(BM_Admit, demo, std::string("demo"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, t256, std::string("t256"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, gb200, std::string("gb200"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Admit, numa64, std::string("numa64"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AdmitTraced, demo, std::string("demo"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AdmitTraced, t256, std::string("t256"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AdmitTraced, gb200, std::string("gb200"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AdmitTraced, numa64, std::string("numa64"))->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ExplainGb200)->Unit(benchmark::kMillisecond);

// One BM_AdmitVersion per known version and preset.
const bool kVersionBenchmarks = [] {
  for (const kubelet::KubeletVersion& v : kubelet::KubeletVersions()) {
    for (const char* preset : {"demo", "t256"}) {
      const std::string name = std::string(v.name);
      benchmark::RegisterBenchmark(
          ("BM_AdmitVersion/" + std::string(preset) + "/" + name).c_str(),
          [preset, name](benchmark::State& state) { AdmitAndRemove(state, preset, false, name); })
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return true;
}();

}  // namespace
}  // namespace podtopo

BENCHMARK_MAIN();
