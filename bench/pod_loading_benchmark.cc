// Pods in bulk (issue "The largest machines", item 6): `podtopo admit` of 10,000 pods from one
// JSON List, as `kubectl get pods -A -o json` writes it (status, managedFields,
// ownerReferences, nodeName included), on preset:demo with the default configuration.
//
//  * BM_AdmitWholeProcess: the podtopo binary, start to exit (`podtopo admit pods.json -o
//    json`), output written to a file. Goal: under 1 s.
//  * BM_ParseJson / BM_ParseYaml: ParsePods alone on the same List (JSON, and the same List
//    as YAML), to show where the time goes.
//  * BM_AdmitPipeline: parse + admit + JSON rendering in this process (no process start).
//
// Every benchmark checks its result first (the pod count, and for admission how many pods
// were admitted and that the others were rejected with a reason).
//
//   cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DPODTOPO_BUILD_BENCHMARKS=ON
//   cmake --build build-bench -j2 --target pod_loading_benchmark podtopo
//   build-bench/bench/pod_loading_benchmark
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "admission/node.h"
#include "api/pod_gates.h"
#include "api/pod_yaml.h"
#include "config/kubelet_config.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "render/admission_render.h"
#include "topology/node_source.h"

extern char** environ;

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
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}, {"metadata", {{"resourceVersion", ""}}}};
}

const std::string& JsonText() {
  static const std::string text = PodList().dump(2);
  return text;
}

// The same List in block YAML (for the comparison only).
void ToYaml(const nlohmann::json& j, int indent, std::string& out);
void ToYamlValue(const nlohmann::json& v, int indent, std::string& out) {
  if (v.is_object() || v.is_array()) {
    if (v.empty()) {
      out += v.is_object() ? " {}\n" : " []\n";
      return;
    }
    out += "\n";
    ToYaml(v, indent + 2, out);
  } else {
    out += " " + v.dump() + "\n";
  }
}
void ToYaml(const nlohmann::json& j, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      out += pad + "\"" + k + "\":";
      ToYamlValue(v, indent, out);
    }
  } else {
    for (const auto& v : j) {
      if (v.is_object() && !v.empty()) {
        std::string inner;
        ToYaml(v, indent + 2, inner);
        inner.replace(indent, 2, "- ");
        out += inner;
      } else {
        out += pad + "-";
        ToYamlValue(v, indent, out);
      }
    }
  }
}

const std::string& YamlText() {
  static const std::string text = [] {
    std::string out;
    ToYaml(PodList(), 0, out);
    return out;
  }();
  return text;
}

std::string TempDir() {
  static const std::string dir = [] {
    std::string d = (std::filesystem::temp_directory_path() / "podtopo-bench-XXXXXX").string();
    if (mkdtemp(d.data()) == nullptr) std::abort();
    return d;
  }();
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

int RunPodtopo(const std::vector<std::string>& args, const std::string& out_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv;
  std::string binary = PODTOPO_BINARY;
  argv.push_back(binary.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ) != 0) return -1;
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void BM_AdmitWholeProcess(benchmark::State& st) {
  const std::string pods = TempDir() + "/pods.json";
  const std::string out = TempDir() + "/out.json";
  std::ofstream(pods) << JsonText();
  const std::vector<std::string> args = {"admit", pods, "-o", "json"};
  // exit 3: some pods are rejected (a node holds at most 110 pods, and CPUs run out).
  if (RunPodtopo(args, out) != 3) return st.SkipWithError("podtopo admit did not exit 3");
  int admitted = 0;
  if (!CheckAdmitJson(ReadAll(out), &admitted)) {
    return st.SkipWithError("podtopo admit -o json does not report every pod");
  }
  for (auto _ : st) benchmark::DoNotOptimize(RunPodtopo(args, out));
  st.counters["admitted"] = admitted;
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
BENCHMARK(BM_AdmitWholeProcess)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();
BENCHMARK(BM_ParseJson)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseYaml)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_AdmitPipeline)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace podtopo

BENCHMARK_MAIN();
