// The CLI contract of ../shared/DESIGN.md, driven through the built binary: exit statuses,
// the -o json schema, bad input naming the file and field with nothing written, and the
// kubelet's refusal of a corrupted or mismatched checkpoint.

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/testing.h"

namespace podtopo {
namespace {

using Result = testing::CommandResult;
using testing::ReadFileOrEmpty;

// Runs `podtopo <args>`, optionally with `stdin_text`.
Result Podtopo(const std::string& args, const std::string& stdin_text = "") {
  return testing::RunCommand(std::string(PODTOPO_BINARY) + " " + args, stdin_text);
}

std::string Examples() { return testing::SourceDir() + "/docs/examples"; }

TEST(CliTest, AdmitJsonSchemaAndExitZero) {
  Result r = Podtopo("admit " + Examples() + "/pod-scope-mixed.yaml -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& pod = j["pods"][0];
  for (const char* key : {"namespace", "name", "uid", "admitted", "reason", "message", "qosClass",
                          "topologyHint", "cpus", "memory", "containers"}) {
    EXPECT_TRUE(pod.contains(key)) << key;
  }
  EXPECT_EQ(pod["admitted"], true);
  EXPECT_EQ(pod["qosClass"], "Guaranteed");
  // preset:demo, reserved CPU 0; the bubble is 4 CPUs of NUMA 0 in whole cores.
  EXPECT_EQ(pod["cpus"], "1-2,33-34");
  EXPECT_EQ(j["node"]["reservedCpus"], "0");
  EXPECT_EQ(j["node"]["defaultCpuSet"], "0,3-32,35-63");
  for (const auto& c : pod["containers"]) {
    for (const char* key : {"name", "kind", "cpus", "assignment", "memory"}) {
      EXPECT_TRUE(c.contains(key)) << key;
    }
  }
}

// The demo (issue 5): both pods admitted on the default node, the table, an explanation that
// says where each container runs and why, and the picture written.
TEST(CliTest, DemoPrintsTableExplanationAndWritesPicture) {
  std::string html = testing::MakeTempDir("podtopo-demo") + "/demo.html";
  Result r = Podtopo("demo --html " + html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The table: both pods admitted; main-app exclusive, the seed's worker in the pod pool.
  EXPECT_NE(r.out.find("default/pod-level-resource-demo  Admitted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("default/pod-scope-mixed          Admitted"), std::string::npos) << r.out;
  // The explanation: the seed's worker lands in the pod shared pool, not on exclusive cores.
  size_t worker = r.out.find("    worker (app): pod shared pool");
  ASSERT_NE(worker, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not on exclusive cores", worker), std::string::npos);
  EXPECT_NE(r.out.find("main-app (app): exclusive slice of the pod's CPUs"), std::string::npos);
  EXPECT_NE(r.out.find("merged: NUMA 0 (preferred) -> admit"), std::string::npos);
  EXPECT_NE(r.out.find("Picture of the node: " + html), std::string::npos);
  EXPECT_NE(ReadFileOrEmpty(html).find("<svg"), std::string::npos);
}

// The README's picture is the demo's node as podtopo draws it today (regenerate with the
// command below when the drawing changes).
TEST(CliTest, ReadmePictureIsCurrent) {
  Result r = Podtopo("admit " + Examples() + "/pod-level-resource-demo.yaml " + Examples() +
                     "/pod-scope-mixed.yaml -o svg");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == ReadFileOrEmpty(testing::SourceDir() + "/docs/images/demo.svg"))
      << "docs/images/demo.svg is stale: build/podtopo admit docs/examples/pod-level-resource-demo.yaml "
         "docs/examples/pod-scope-mixed.yaml -o svg > docs/images/demo.svg";
}

// The README's compare picture is what podtopo draws today for the docs' examples, gate off
// vs on (run from the repository root: the configurations are named as given).
TEST(CliTest, ReadmeComparePictureIsCurrent) {
  const std::string command =
      "compare docs/examples/pod-*.yaml --config docs/examples/kubelet-config-gate-off.yaml "
      "--config docs/examples/kubelet-config.yaml -o svg";
  Result r = testing::RunCommand("cd " + testing::SourceDir() + " && " + PODTOPO_BINARY + " " +
                                 command);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("shop/all-in-main"), std::string::npos);
  EXPECT_TRUE(r.out == ReadFileOrEmpty(testing::SourceDir() + "/docs/images/compare.svg"))
      << "docs/images/compare.svg is stale: build/podtopo " << command
      << " > docs/images/compare.svg";
}

// The contract's compare shape (DESIGN.md, "Contract additions"), through the binary.
TEST(CliTest, CompareJsonResultsPerConfiguration) {
  Result r = Podtopo("compare " + Examples() + "/pod-scope-mixed.yaml --node preset:demo --config " +
                     Examples() + "/kubelet-config.yaml --config " + Examples() +
                     "/kubelet-config-gate-off.yaml -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 2u);
  const auto& on = j["results"][0];
  EXPECT_EQ(on["total"]["pods"], 1);
  EXPECT_EQ(on["total"]["admitted"], 1);
  EXPECT_EQ(on["total"]["exclusiveCpus"], 2);      // main-app
  EXPECT_EQ(on["total"]["podSharedPoolCpus"], 2);  // the sidecars' pool
  EXPECT_EQ(on["total"]["alignedPods"], 1);
  EXPECT_EQ(on["nodes"][0]["node"], "preset:demo");
  EXPECT_EQ(j["results"][1]["total"]["exclusiveCpus"], 0);  // gate off: the pod runs shared
  EXPECT_EQ(j["results"][1]["nodes"][0]["defaultCpuSet"], "0-63");
}

TEST(CliTest, RejectionExitsThree) {
  // 40 CPUs do not fit one NUMA node of preset:demo (16 CPUs) under single-numa-node.
  std::string pod = R"(apiVersion: v1
kind: Pod
metadata: {name: wide}
spec:
  resources:
    requests: {cpu: "40", memory: 1Gi}
    limits: {cpu: "40", memory: 1Gi}
  containers:
  - {name: c, image: busybox}
)";
  Result r = Podtopo("admit - -o json", pod);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pods"][0]["admitted"], false);
  EXPECT_EQ(j["pods"][0]["reason"], "TopologyAffinityError");
}

TEST(CliTest, BadInputExitsOneNamingFileAndFieldAndWritesNothing) {
  std::string dir = testing::MakeTempDir("podtopo-cli-bad");
  std::string bad = dir + "/bad.yaml";
  std::ofstream(bad) << "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n"
                        "  - name: c\n    resources: {requests: {cpu: 2x}}\n";
  Result r = Podtopo("admit " + bad + " --state-dir " + dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.yaml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spec.containers[0].resources.requests.cpu"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/cpu_manager_state"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/podtopo_pods.json"));
  std::filesystem::remove_all(dir);
}

TEST(CliTest, CorruptedCheckpointIsRefusedAndLeftAlone) {
  std::string dir = testing::MakeTempDir("podtopo-cli-ckpt");
  Result first = Podtopo("admit " + Examples() + "/pod-level-resource-demo.yaml --state-dir " + dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::string path = dir + "/cpu_manager_state";
  std::string good = ReadFileOrEmpty(path);
  ASSERT_FALSE(good.empty());
  // Change one CPU in the data without fixing the checksum.
  std::string corrupt = good;
  auto pos = corrupt.find("\\\"defaultCpuSet\\\":\\\"");
  ASSERT_NE(pos, std::string::npos) << corrupt;
  corrupt.insert(pos + 20, "5,");
  std::ofstream(path) << corrupt;
  Result r = Podtopo("admit " + Examples() + "/pod-scope-mixed.yaml --state-dir " + dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("checkpoint is corrupted"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  EXPECT_EQ(ReadFileOrEmpty(path), corrupt);

  // A different CPU Manager policy than the checkpoint's is refused the same way.
  std::ofstream(path) << good;
  std::string cfg = dir + "/kubelet.yaml";
  std::ofstream(cfg) << "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                        "featureGates: {PodLevelResourceManagers: true}\n"
                        "cpuManagerPolicy: none\nmemoryManagerPolicy: Static\n"
                        "systemReserved: {cpu: \"1\", memory: 1Gi}\n"
                        "reservedMemory: [{numaNode: 0, limits: {memory: 1124Mi}}]\n"
                        "topologyManagerPolicy: single-numa-node\ntopologyManagerScope: pod\n";
  r = Podtopo("show --state-dir " + dir + " --config " + cfg);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("configured policy \"none\" differs from state checkpoint policy "
                       "\"static\""),
            std::string::npos)
      << r.err;
  EXPECT_EQ(ReadFileOrEmpty(path), good);
  std::filesystem::remove_all(dir);
}

TEST(CliTest, TakeCpusAndMergeHints) {
  Result r = Podtopo("debug take-cpus --node preset:dual-socket-ht --available 1-5,7-11 --count 1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "2\n");
  r = Podtopo("debug take-cpus --node preset:dual-socket-ht --available 1-2 --count 4");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "not enough cpus available to satisfy request: requested=4, available=2\n");
  r = Podtopo("debug merge-hints",
              R"({"policy":"best-effort","numaNodes":[0,1],"providers":[{"cpu":[{"affinity":[0],)"
              R"("preferred":true},{"affinity":[0,1],"preferred":false}]},{"memory":null}]})");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["affinity"], nlohmann::json::array({0}));
  EXPECT_EQ(j["preferred"], true);
  EXPECT_EQ(j["admit"], true);
  // --policy overrides stdin: restricted rejects a non-preferred merge.
  r = Podtopo("debug merge-hints --policy restricted",
              R"({"policy":"best-effort","numaNodes":[0,1],"providers":[{"cpu":[{"affinity":[0],)"
              R"("preferred":true}]},{"memory":[{"affinity":[1],"preferred":true}]}]})");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["admit"], false);
}

TEST(CliTest, RemoveAndShowWithStateDir) {
  std::string dir = testing::MakeTempDir("podtopo-cli-rm");
  ASSERT_EQ(Podtopo("admit " + Examples() + "/pod-scope-mixed.yaml --state-dir " + dir).exit_code,
            0);
  Result show = Podtopo("show --state-dir " + dir + " -o json");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(nlohmann::json::parse(show.out)["pods"].size(), 1u);
  Result rm = Podtopo("remove default/pod-scope-mixed --state-dir " + dir + " -o json");
  ASSERT_EQ(rm.exit_code, 0) << rm.err;
  auto j = nlohmann::json::parse(rm.out);
  EXPECT_TRUE(j["pods"].empty());
  EXPECT_EQ(j["node"]["defaultCpuSet"], "0-63");
  Result again = Podtopo("remove default/pod-scope-mixed --state-dir " + dir);
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("pod default/pod-scope-mixed is not admitted"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Issue 11: admission on the largest machines answers (the kubelet's 2^N walk never ends at
// 34 NUMA nodes, k/k #135541). Every policy and scope, a GPU pod, a CPU-only pod and a
// pod-level (KEP-5526) GPU pod, on preset:gb200 and preset:numa64, as whole processes. Not
// timed: they must just finish, each pod on one NUMA node (bench/ has the times).
TEST(CliTest, LargeNumaAdmissionsAnswer) {
  const std::string dir = testing::MakeTempDir("podtopo-large-numa");
  struct Machine {
    const char* preset;
    const char* gpu;
    const char* max_nodes;
  };
  for (const Machine& m : {Machine{"gb200", "nvidia.com/gpu", "34"},
                           Machine{"numa64", "example.com/gpu", "64"}}) {
    const std::string pods = dir + "/" + m.preset + "-pods.yaml";
    std::ofstream(pods) << fmt::format(R"(apiVersion: v1
kind: Pod
metadata: {{name: gpu}}
spec:
  containers:
  - name: c
    image: busybox
    resources:
      requests: {{cpu: "4", memory: 4Gi, {0}: "1"}}
      limits: {{cpu: "4", memory: 4Gi, {0}: "1"}}
---
apiVersion: v1
kind: Pod
metadata: {{name: cpu-only}}
spec:
  containers:
  - name: c
    image: busybox
    resources:
      requests: {{cpu: "6", memory: 4Gi}}
      limits: {{cpu: "6", memory: 4Gi}}
---
apiVersion: v1
kind: Pod
metadata: {{name: pod-level}}
spec:
  resources:
    requests: {{cpu: "4", memory: 4Gi}}
    limits: {{cpu: "4", memory: 4Gi}}
  containers:
  - name: gpu
    image: busybox
    resources:
      requests: {{cpu: "2", memory: 2Gi, {0}: "1"}}
      limits: {{cpu: "2", memory: 2Gi, {0}: "1"}}
  - name: sidecar
    image: busybox
)",
                                       m.gpu);
    for (const char* policy : {"none", "best-effort", "restricted", "single-numa-node"}) {
      for (const char* scope : {"pod", "container"}) {
        const std::string config = dir + "/" + m.preset + "-" + policy + "-" + scope + ".yaml";
        std::ofstream(config) << fmt::format(R"(apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
memoryManagerPolicy: Static
topologyManagerPolicy: {0}
topologyManagerScope: {1}
topologyManagerPolicyOptions: {{max-allowable-numa-nodes: "{2}"}}
featureGates: {{PodLevelResourceManagers: true}}
systemReserved: {{cpu: "1", memory: 1Gi}}
evictionHard: {{memory.available: 100Mi}}
reservedMemory:
  - numaNode: 0
    limits: {{memory: 1124Mi}}
)",
                                             policy, scope, m.max_nodes);
        Result r = Podtopo(fmt::format("admit {} --node preset:{} --config {} -o json", pods,
                                       m.preset, config));
        const std::string what = fmt::format("{} {} {}", m.preset, policy, scope);
        ASSERT_EQ(r.exit_code, 0) << what << "\n" << r.err << r.out;
        auto j = nlohmann::json::parse(r.out);
        ASSERT_EQ(j["pods"].size(), 3u) << what;
        for (const auto& pod : j["pods"]) {
          EXPECT_EQ(pod["admitted"], true) << what << pod.dump();
          // One NUMA node holds each pod (none merges nothing: no hint).
          if (std::string(policy) == "none") {
            EXPECT_TRUE(pod["topologyHint"].is_null()) << what << pod.dump();
          } else {
            EXPECT_EQ(pod["topologyHint"]["affinity"].size(), 1u) << what << pod.dump();
            EXPECT_EQ(pod["topologyHint"]["preferred"], true) << what << pod.dump();
          }
        }
        if (std::string(policy) != "none") {
          // The GPU pod on a Grace / socket with a GPU.
          EXPECT_EQ(j["pods"][0]["topologyHint"].dump(), R"({"affinity":[0],"preferred":true})")
              << what;
        }
      }
    }
  }
}

}  // namespace
}  // namespace podtopo
