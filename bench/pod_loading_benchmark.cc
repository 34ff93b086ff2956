// Pods in bulk (issue "The largest machines", item 6): `podtopo admit` of 10,000 pods from one
// JSON List, as `kubectl get pods -A -o json` writes it (status, managedFields,
// ownerReferences, nodeName included), on preset:demo with the default configuration.
//
//  * BM_AdmitWholeProcess/json: the podtopo binary, start to exit (`podtopo admit pods.json
//    -o json`), output written to a file. Goal: under 1 s. Wall time; the child's CPU time
//    (user + system) is the counter cpu_s.
//  * BM_AdmitWholeProcess/yaml: the same List as `kubectl get -o yaml` writes it.
//  * BM_ParseJson / BM_ParseYaml: ParsePods alone on the two, to show where the time goes.
//  * BM_AdmitPipeline: parse + admit + JSON rendering in this process (no process start).
//
// Every benchmark checks its result first (the pod count, and for admission how many pods
// were admitted and that the others were rejected with a reason).
//
//   cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DPODTOPO_BUILD_BENCHMARKS=ON
//   cmake --build build-bench -j2 --target pod_loading_benchmark podtopo
//   build-bench/bench/pod_loading_benchmark
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>
#include <vector>

#include "admission/node.h"
#include "api/pod_gates.h"
#include "api/pod_yaml.h"
#include "config/kubelet_config.h"
#include "fmt/format.h"
#include "kubectl_output.h"
#include "nlohmann/json.hpp"
#include "render/admission_render.h"
#include "topology/node_source.h"

namespace podtopo {
namespace {

constexpr int kPods = 10000;

// One pod as the API server returns it. Every 4th pod has pod-level resources; all are
// Guaranteed, so each goes through the node-fit check and the Topology Manager.
nlohmann::json PodObject(int i) {
  nlohmann::json container = {
      {"name", "app"},
      {"image", "registry.example/app:1.2.3"},
      {"imagePullPolicy", "IfNotPresent"},
      {"resources",
       {{"limits", {{"cpu", "1"}, {"memory", "256Mi"}}},
        {"requests", {{"cpu", "1"}, {"memory", "256Mi"}}}}},
      {"terminationMessagePath", "/dev/termination-log"}};
  nlohmann::json spec = {{"containers", nlohmann::json::array({container})},
                         {"nodeName", "node-a"},
                         {"restartPolicy", "Always"},
                         {"schedulerName", "default-scheduler"}};
  if (i % 4 == 0) {
    spec["resources"] = {{"limits", {{"cpu", "2"}, {"memory", "512Mi"}}},
                         {"requests", {{"cpu", "2"}, {"memory", "512Mi"}}}};
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", fmt::format("web-7d4b9c8f5-{:05d}", i)},
            {"namespace", fmt::format("team-{}", i % 20)},
            {"uid", fmt::format("00000000-0000-4000-8000-{:012d}", i)},
            {"labels", {{"app", "web"}, {"pod-template-hash", "7d4b9c8f5"}}},
            {"ownerReferences",
             {{{"apiVersion", "apps/v1"},
               {"kind", "ReplicaSet"},
               {"name", "web-7d4b9c8f5"},
               {"uid", "11111111-2222-4333-8444-555555555555"},
               {"controller", true}}}},
            {"managedFields",
             {{{"manager", "kube-controller-manager"},
               {"operation", "Update"},
               {"fieldsType", "FieldsV1"},
               {"fieldsV1", {{"f:metadata", {{"f:labels", nlohmann::json::object()}}}}}}}}}},
          {"spec", spec},
          {"status",
           {{"phase", "Running"}, {"qosClass", "Guaranteed"}, {"podIP", "10.0.0.1"}}}};
}

nlohmann::json PodList() {
  nlohmann::json items = nlohmann::json::array();
  for (int i = 0; i < kPods; ++i) items.push_back(PodObject(i));
  return bench::KubectlList(std::move(items));
}

const std::string& JsonText() {
  static const std::string text = PodList().dump(2);
  return text;
}

// The same List as `kubectl get -o yaml` writes it (for the comparison).
const std::string& YamlText() {
  static const std::string text = bench::KubectlYaml(PodList());
  return text;
}

std::string TempDir() {
  static const std::string dir = bench::MakeTempDir("podtopo-bench");
  return dir;
}

// Admitted / rejected counts of an `admit -o json` output; false when it does not hold
// every pod, or a rejected pod has no reason.
bool CheckAdmitJson(const std::string& text, int* admitted) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("pods") || j["pods"].size() != kPods) return false;
  *admitted = 0;
  for (const auto& p : j["pods"]) {
    if (p["admitted"].get<bool>()) {
      ++*admitted;
    } else if (p["reason"].get<std::string>().empty()) {
      return false;
    }
  }
  return *admitted > 0 && *admitted < kPods;
}

void BM_AdmitWholeProcess(benchmark::State& st, const std::string& syntax) {
  const std::string pods = TempDir() + "/pods." + syntax;
  const std::string out = TempDir() + "/out.json";
  std::ofstream(pods) << (syntax == "json" ? JsonText() : YamlText());
  const std::vector<std::string> args = {"admit", pods, "-o", "json"};
  // exit 3: some pods are rejected (a node holds at most 110 pods, and CPUs run out).
  if (bench::RunPodtopo(args, out).exit_code != 3) {
    return st.SkipWithError("podtopo admit did not exit 3");
  }
  int admitted = 0;
  if (!CheckAdmitJson(bench::ReadAll(out), &admitted)) {
    return st.SkipWithError("podtopo admit -o json does not report every pod");
  }
  double cpu = 0;
  for (auto _ : st) cpu += bench::RunPodtopo(args, out).cpu_seconds;
  st.counters["admitted"] = admitted;
  st.counters["cpu_s"] = benchmark::Counter(cpu, benchmark::Counter::kAvgIterations);
  st.counters["pods_per_s"] = benchmark::Counter(kPods, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ParseJson(benchmark::State& st) {
  auto pods = ParsePods(JsonText(), "pods.json");
  if (!pods.ok() || pods->size() != kPods || pods->back().node_name != "node-a") {
    return st.SkipWithError("the JSON List does not give 10,000 pods");
  }
  for (auto _ : st) benchmark::DoNotOptimize(ParsePods(JsonText(), "pods.json"));
  st.counters["pods_per_s"] = benchmark::Counter(kPods, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ParseYaml(benchmark::State& st) {
  auto pods = ParsePods(YamlText(), "pods.yaml");
  if (!pods.ok() || pods->size() != kPods || pods->back().node_name != "node-a") {
    return st.SkipWithError(pods.ok() ? "the YAML List does not give 10,000 pods"
                                      : std::string(pods.status().message()).c_str());
  }
  for (auto _ : st) benchmark::DoNotOptimize(ParsePods(YamlText(), "pods.yaml"));
  st.counters["pods_per_s"] = benchmark::Counter(kPods, benchmark::Counter::kIsIterationInvariantRate);
}

// Parse + admit every pod + render -o json, in this process.
std::string AdmitPipeline() {
  config::KubeletConfig cfg = config::SeedDefault();
  auto pods = ParsePods(JsonText(), "pods.json", {.gates = PodGatesFromConfig(cfg)});
  if (!pods.ok()) return "";
  auto node = Node::Create(LoadNode("preset:demo").value(), cfg, {});
  if (!node.ok()) return "";
  std::vector<PodAllocation> results;
  results.reserve(pods->size());
  for (const Pod& pod : *pods) {
    auto r = (*node)->Admit(pod);
    if (!r.ok()) return "";
    results.push_back(std::move(*r));
  }
  return RenderAdmissionJson(results, {(*node)->DefaultCpuSet(), (*node)->ReservedCpus()});
}

void BM_AdmitPipeline(benchmark::State& st) {
  int admitted = 0;
  if (!CheckAdmitJson(AdmitPipeline(), &admitted)) {
    return st.SkipWithError("the pipeline does not report every pod");
  }
  for (auto _ : st) benchmark::DoNotOptimize(AdmitPipeline());
  st.counters["admitted"] = admitted;
  st.counters["pods_per_s"] = benchmark::Counter(kPods, benchmark::Counter::kIsIterationInvariantRate);
}

// The work is in the child process: measure wall time.
BENCHMARK_CAPTURE(BM_AdmitWholeProcess, json, std::string("json"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(10)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AdmitWholeProcess, yaml, std::string("yaml"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(10)
    ->UseRealTime();
BENCHMARK(BM_ParseJson)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseYaml)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AdmitPipeline)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace podtopo

BENCHMARK_MAIN();
