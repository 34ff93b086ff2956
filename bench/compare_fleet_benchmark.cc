// podtopo compare on a fleet, whole process (issue 12's goal: 1,000 nodes x 100 pods x 2
// configurations in <= 5 s on the 2-core machine).
//
// The shape: `podtopo compare pods --node node=preset:demo*1000 --config gate-off --config
// gate-on -o json`, the docs' two configurations (PodLevelResourceManagers off and on), and
// 100,000 pods in one List as `kubectl get pods -A` writes it (metadata with uid, labels and
// ownerReferences, managedFields, spec.nodeName, status), 100 per node:
//   8 pod-level pods (4-CPU Guaranteed bubble, main container 2 exclusive CPUs, 2 sidecars)
//  14 one-CPU Guaranteed pods
//   6 pods with a one-CPU Guaranteed sidecar and a one-CPU app container
//  72 Burstable pods of 50m
// which ask 61.6 CPUs of preset:demo's 63 allocatable (64 less systemReserved 1), so every pod
// can fit; what does not fit under a configuration is a real rejection (NUMA alignment), not
// an over-asked node.
//
//  * BM_CompareFleet/json: the List as `-o json` (4-space indent, as kubectl writes it).
//  * BM_CompareFleet/yaml: the same List as `-o yaml`.
// Wall time (UseRealTime; the work is in the child), and the child's CPU time (user + system)
// as the counter cpu_s.
//
// Figures (docs/performance.md, "Fleets"): idle, 3 Dec 2026, main aa5d1b8, RelWithDebInfo
// -O2 -g1, tcmalloc, 3 runs: JSON 1.68-1.78 s wall / 2.5 cpu_s, YAML 2.19-2.38 s / 3.8-4.0.
//
// Before timing, each input's result is checked: both configurations count 100,000 pods, the
// admitted total and every rejection reason are 1,000 times what `podtopo admit` gives for one
// node's 100 pods under that configuration, and the JSON and YAML inputs give the same bytes.
//
//   cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DPODTOPO_BUILD_BENCHMARKS=ON
//   cmake --build build-bench -j2 --target compare_fleet_benchmark podtopo
//   build-bench/bench/compare_fleet_benchmark --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "kubectl_output.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace podtopo::bench {
namespace {

constexpr int kNodes = 1000;
constexpr int kPodsPerNode = 100;

nlohmann::json Limits(const std::string& cpu, const std::string& memory) {
  return {{"cpu", cpu}, {"memory", memory}};
}

nlohmann::json Container(const std::string& name, const nlohmann::json& resources) {
  nlohmann::json c = {{"image", "registry.example/" + name + ":1.4.2"},
                      {"imagePullPolicy", "IfNotPresent"},
                      {"name", name},
                      {"resources", resources},
                      {"terminationMessagePath", "/dev/termination-log"},
                      {"terminationMessagePolicy", "File"}};
  return c;
}

nlohmann::json Guaranteed(const std::string& cpu, const std::string& memory) {
  return {{"limits", Limits(cpu, memory)}, {"requests", Limits(cpu, memory)}};
}

int64_t next_uid = 0;

// One pod as the API server returns it; `node` < 0: without spec.nodeName.
nlohmann::json PodObject(const std::string& name, int node, nlohmann::json spec) {
  spec["dnsPolicy"] = "ClusterFirst";
  spec["restartPolicy"] = "Always";
  spec["schedulerName"] = "default-scheduler";
  spec["serviceAccountName"] = "default";
  spec["terminationGracePeriodSeconds"] = 30;
  if (node >= 0) spec["nodeName"] = fmt::format("node-{}", node);
  const std::string rs = name.substr(0, name.rfind('-'));
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"creationTimestamp", "2026-11-30T08:00:00Z"},
            {"labels", {{"app", rs}, {"pod-template-hash", "7d4b9c8f5"}}},
            {"managedFields",
             {{{"apiVersion", "v1"},
               {"fieldsType", "FieldsV1"},
               {"fieldsV1", {{"f:metadata", {{"f:labels", nlohmann::json::object()}}}}},
               {"manager", "kube-controller-manager"},
               {"operation", "Update"}}}},
            {"name", name},
            {"namespace", "bench"},
            {"ownerReferences",
             {{{"apiVersion", "apps/v1"},
               {"blockOwnerDeletion", true},
               {"controller", true},
               {"kind", "ReplicaSet"},
               {"name", rs},
               {"uid", "11111111-2222-4333-8444-555555555555"}}}},
            {"resourceVersion", "123456"},
            {"uid", fmt::format("00000000-0000-4000-8000-{:012d}", next_uid++)}}},
          {"spec", std::move(spec)},
          {"status",
           {{"conditions",
             {{{"status", "True"}, {"type", "Ready"}},
              {{"status", "True"}, {"type", "PodScheduled"}}}},
            {"phase", "Running"},
            {"podIP", "10.0.0.1"},
            {"startTime", "2026-11-30T08:00:01Z"}}}};
}

// One node's 100 pods (see the banner).
void NodePods(int node, nlohmann::json& items) {
  const std::string n = std::to_string(node);
  for (int i = 0; i < 8; ++i) {
    nlohmann::json spec = {
        {"resources", Guaranteed("4", "4Gi")},
        {"initContainers",
         {Container("metrics", nlohmann::json::object()), Container("logging", nlohmann::json::object())}},
        {"containers", {Container("main", Guaranteed("2", "2Gi"))}}};
    spec["initContainers"][0]["restartPolicy"] = "Always";
    spec["initContainers"][1]["restartPolicy"] = "Always";
    items.push_back(PodObject(fmt::format("mixed-{}-{}", n, i), node, std::move(spec)));
  }
  for (int i = 0; i < 14; ++i) {
    items.push_back(PodObject(fmt::format("one-{}-{}", n, i), node,
                              {{"containers", {Container("app", Guaranteed("1", "256Mi"))}}}));
  }
  for (int i = 0; i < 6; ++i) {
    nlohmann::json spec = {{"initContainers", {Container("proxy", Guaranteed("1", "128Mi"))}},
                           {"containers", {Container("app", Guaranteed("1", "256Mi"))}}};
    spec["initContainers"][0]["restartPolicy"] = "Always";
    items.push_back(PodObject(fmt::format("sidecars-{}-{}", n, i), node, std::move(spec)));
  }
  for (int i = 0; i < 72; ++i) {
    items.push_back(PodObject(
        fmt::format("web-{}-{}", n, i), node,
        {{"containers", {Container("app", {{"requests", Limits("50m", "64Mi")}})}}}));
  }
}

struct Fixture {
  std::string dir;
  std::string off, on;  // the configurations
  std::map<std::string, std::string> input;  // "json" | "yaml" -> path
};

std::vector<std::string> CompareArgs(const Fixture& f, const std::string& input) {
  return {"compare", f.input.at(input), "--node", fmt::format("node=preset:demo*{}", kNodes),
          "--config", f.off, "--config", f.on, "-o", "json"};
}

[[noreturn]] void Fail(const std::string& message) {
  std::cerr << "compare_fleet_benchmark: " << message << "\n";
  std::exit(1);
}

// Checks one input's compare output against `podtopo admit` of one node's pods.
void Check(const Fixture& f, const std::string& input, const std::string& one_node) {
  const std::string out = f.dir + "/check-" + input + ".json";
  ChildRun run = RunPodtopo(CompareArgs(f, input), out, f.dir + "/err.txt");
  if (run.exit_code != 0) Fail(input + ": compare failed: " + ReadAll(f.dir + "/err.txt"));
  const nlohmann::json j = nlohmann::json::parse(ReadAll(out));
  int c = 0;
  for (const std::string& cfg : {f.off, f.on}) {
    const std::string admit_out = f.dir + "/admit.json";
    ChildRun admit = RunPodtopo({"admit", one_node, "--config", cfg, "-o", "json"}, admit_out);
    if (admit.exit_code != 0 && admit.exit_code != 3) Fail("admit failed for " + cfg);
    int admitted = 0;
    std::map<std::string, int> rejected;
    const nlohmann::json admit_json = nlohmann::json::parse(ReadAll(admit_out));
    for (const auto& p : admit_json["pods"]) {
      if (p["admitted"].get<bool>()) {
        ++admitted;
      } else {
        rejected[p["reason"].get<std::string>()] += kNodes;
      }
    }
    const auto& total = j["results"][c++]["total"];
    if (total["pods"] != kNodes * kPodsPerNode || total["admitted"] != kNodes * admitted ||
        total["rejected"].get<std::map<std::string, int>>() != rejected) {
      Fail(fmt::format("{} under {}: {}; admit gives {} admitted of {} per node", input, cfg,
                       total.dump(), admitted, kPodsPerNode));
    }
    std::cerr << input << ", " << cfg << ": " << total["admitted"] << " of " << total["pods"]
              << " admitted, rejected " << total["rejected"].dump() << "\n";
  }
}

Fixture& Setup() {
  static Fixture f = [] {
    Fixture fx;
    fx.dir = MakeTempDir("podtopo-compare-fleet-bench");
    fx.off = std::string(PODTOPO_SOURCE_DIR) + "/docs/examples/kubelet-config-gate-off.yaml";
    fx.on = std::string(PODTOPO_SOURCE_DIR) + "/docs/examples/kubelet-config.yaml";
    nlohmann::json items = nlohmann::json::array();
    for (int node = 0; node < kNodes; ++node) NodePods(node, items);
    const nlohmann::json list = KubectlList(std::move(items));
    fx.input["json"] = fx.dir + "/fleet.json";
    fx.input["yaml"] = fx.dir + "/fleet.yaml";
    std::ofstream(fx.input["json"]) << list.dump(4);
    std::ofstream(fx.input["yaml"]) << KubectlYaml(list);
    nlohmann::json one = nlohmann::json::array();
    NodePods(-1, one);
    const std::string one_node = fx.dir + "/one-node.json";
    std::ofstream(one_node) << KubectlList(std::move(one)).dump(4);

    Check(fx, "json", one_node);
    Check(fx, "yaml", one_node);
    if (ReadAll(fx.dir + "/check-json.json") != ReadAll(fx.dir + "/check-yaml.json")) {
      Fail("the JSON and the YAML inputs give different results");
    }
    return fx;
  }();
  return f;
}

void BM_CompareFleet(benchmark::State& state, const std::string& input) {
  Fixture& f = Setup();
  const std::vector<std::string> args = CompareArgs(f, input);
  double cpu = 0;
  for (auto _ : state) {
    ChildRun run = RunPodtopo(args, f.dir + "/out.json");
    if (run.exit_code != 0) {
      state.SkipWithError("compare failed");
      break;
    }
    cpu += run.cpu_seconds;
  }
  state.counters["cpu_s"] = benchmark::Counter(cpu, benchmark::Counter::kAvgIterations);
  state.counters["pods"] = kNodes * kPodsPerNode;
}
BENCHMARK_CAPTURE(BM_CompareFleet, json, std::string("json"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_CompareFleet, yaml, std::string("yaml"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
}  // namespace podtopo::bench

BENCHMARK_MAIN();
