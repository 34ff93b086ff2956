// podtopo compare on a fleet, whole process: 1,000 nodes (preset:demo*1000) x 100 pods each
// (a kubectl-style List with spec.nodeName, 100,000 pods) x 2 configurations (the docs'
// PodLevelResourceManagers gate off and on), -o json to a file. Issue 12's goal: <= 5 s on
// the 2-core machine.
//
// Before timing, the result is checked: every configuration counts 100,000 pods, and its
// admitted total is 1,000 times what `podtopo admit` admits of one node's 100 pods under that
// configuration.
//
//   build-bench/bench/compare_fleet_benchmark --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "nlohmann/json.hpp"

namespace {

constexpr int kNodes = 1000;
constexpr int kPodsPerNode = 100;

std::string SourceDir() { return PODTOPO_SOURCE_DIR; }

// One node's 100 pods: 8 pod-scope-mixed pods (4-CPU bubble, main-app exclusive, two
// sidecars), 16 one-CPU Guaranteed pods, 6 sidecar pods with Guaranteed sidecars, and 70
// Burstable pods.
std::string NodePods(int node, bool with_node_name) {
  std::string out;
  auto item = [&](const std::string& name, const std::string& spec) {
    out += "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: " + name +
           "\n    namespace: bench\n  spec:\n";
    if (with_node_name) out += "    nodeName: node-" + std::to_string(node) + "\n";
    out += spec;
  };
  const std::string n = std::to_string(node);
  for (int i = 0; i < 8; ++i) {
    item("mixed-" + n + "-" + std::to_string(i),
         "    resources:\n      requests: {cpu: \"4\", memory: 4Gi}\n      limits: {cpu: \"4\", "
         "memory: 4Gi}\n    initContainers:\n    - {name: metrics, image: x, restartPolicy: "
         "Always}\n    - {name: logging, image: x, restartPolicy: Always}\n    containers:\n    - "
         "name: main\n      image: x\n      resources:\n        requests: {cpu: \"2\", memory: "
         "2Gi}\n        limits: {cpu: \"2\", memory: 2Gi}\n");
  }
  for (int i = 0; i < 16; ++i) {
    item("one-" + n + "-" + std::to_string(i),
         "    containers:\n    - name: app\n      image: x\n      resources:\n        requests: "
         "{cpu: \"1\", memory: 256Mi}\n        limits: {cpu: \"1\", memory: 256Mi}\n");
  }
  for (int i = 0; i < 6; ++i) {
    item("sidecars-" + n + "-" + std::to_string(i),
         "    initContainers:\n    - name: proxy\n      image: x\n      restartPolicy: Always\n   "
         "   resources:\n        requests: {cpu: \"1\", memory: 128Mi}\n        limits: {cpu: "
         "\"1\", memory: 128Mi}\n    containers:\n    - name: app\n      image: x\n      "
         "resources:\n        requests: {cpu: \"1\", memory: 256Mi}\n        limits: {cpu: \"1\", "
         "memory: 256Mi}\n");
  }
  for (int i = 0; i < 70; ++i) {
    item("web-" + n + "-" + std::to_string(i),
         "    containers:\n    - name: app\n      image: x\n      resources:\n        requests: "
         "{cpu: 100m, memory: 64Mi}\n");
  }
  return out;
}

std::string List(const std::string& items) {
  return "apiVersion: v1\nkind: List\nitems:\n" + items;
}

std::string Run(const std::string& command, int* status) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) {
    *status = -1;
    return out;
  }
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

struct Fixture {
  std::string dir;
  std::string command;
};

Fixture& Setup() {
  static Fixture f = [] {
    Fixture fx;
    fx.dir = (std::filesystem::temp_directory_path() / "podtopo-compare-bench").string();
    std::filesystem::create_directories(fx.dir);
    std::string items;
    for (int node = 0; node < kNodes; ++node) items += NodePods(node, true);
    std::ofstream(fx.dir + "/fleet.yaml") << List(items);
    std::ofstream(fx.dir + "/one-node.yaml") << List(NodePods(0, false));
    const std::string off = SourceDir() + "/docs/examples/kubelet-config-gate-off.yaml";
    const std::string on = SourceDir() + "/docs/examples/kubelet-config.yaml";
    fx.command = std::string(PODTOPO_BINARY) + " compare " + fx.dir + "/fleet.yaml --node node=preset:demo*" +
                 std::to_string(kNodes) + " --config " + off + " --config " + on + " -o json";

    // Check the result before timing anything.
    int status = 0;
    std::string out = Run(fx.command, &status);
    if (status != 0) {
      std::cerr << "compare failed (" << status << "): " << fx.command << "\n";
      std::exit(1);
    }
    auto j = nlohmann::json::parse(out);
    int c = 0;
    for (const std::string& cfg : {off, on}) {
      std::string admit = Run(std::string(PODTOPO_BINARY) + " admit " + fx.dir + "/one-node.yaml --config " + cfg + " -o json", &status);
      int admitted = 0;
      for (const auto& p : nlohmann::json::parse(admit)["pods"]) admitted += p["admitted"].get<bool>();
      const auto& total = j["results"][c++]["total"];
      if (total["pods"] != kNodes * kPodsPerNode || total["admitted"] != kNodes * admitted) {
        std::cerr << "unexpected result for " << cfg << ": " << total.dump() << ", admit gives "
                  << admitted << " per node\n";
        std::exit(1);
      }
      std::cerr << cfg << ": " << total["admitted"] << " of " << total["pods"] << " admitted\n";
    }
    return fx;
  }();
  return f;
}

void BM_CompareFleetWholeProcess(benchmark::State& state) {
  Fixture& f = Setup();
  const std::string command = f.command + " > " + f.dir + "/out.json";
  for (auto _ : state) {
    int rc = std::system(command.c_str());
    if (rc != 0) {
      state.SkipWithError("compare failed");
      break;
    }
  }
  state.counters["pods"] = kNodes * kPodsPerNode;
}
BENCHMARK(BM_CompareFleetWholeProcess)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
