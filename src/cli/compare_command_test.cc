// `podtopo compare` against `podtopo admit`: over random workloads, nodes and pairs of
// configurations, compare's totals (and its one node) equal what admit's -o json gives under
// each configuration, counted here from admit's output as the contract defines the counts.
// Also: the command's errors and exit codes.

#include <filesystem>
#include <set>
#include <sstream>

#include "cli/cli_testing.h"
#include "cpuset/cpuset.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rapidcheck.h"
#include "testing/property.h"
#include "testing/testing.h"
#include "util/file.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;

using Result = cli::CliResult;
using cli::RunCli;

std::string Example(const std::string& f) { return testing::SourceDir() + "/docs/examples/" + f; }

// The configurations the property draws from: the docs' two, and the seed one with container
// scope, with the best-effort and restricted Topology Manager policies, and without the
// Memory Manager.
const std::vector<std::string>& ConfigFiles() {
  static const std::vector<std::string> files = [] {
    std::string dir = testing::MakeTempDir("podtopo-compare-configs");
    std::string seed = testing::ReadFileOrEmpty(Example("kubelet-config.yaml"));
    auto variant = [&](const std::string& name, const std::string& from, const std::string& to) {
      std::string text = seed;
      size_t at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      text.replace(at, from.size(), to);
      std::string path = dir + "/" + name;
      EXPECT_TRUE(WriteFileAtomically(path, text).ok());
      return path;
    };
    return std::vector<std::string>{
        Example("kubelet-config.yaml"),
        Example("kubelet-config-gate-off.yaml"),
        variant("container-scope.yaml", "topologyManagerScope: pod", "topologyManagerScope: container"),
        variant("best-effort.yaml", "topologyManagerPolicy: single-numa-node",
                "topologyManagerPolicy: best-effort"),
        variant("restricted.yaml", "topologyManagerPolicy: single-numa-node",
                "topologyManagerPolicy: restricted"),
        variant("no-memory-manager.yaml",
                "memoryManagerPolicy: Static", "memoryManagerPolicy: None"),
    };
  }();
  return files;
}

// requests = limits (guaranteed), or limits twice the requests.
std::string Resources(int cpu_milli, int memory_mi, bool guaranteed) {
  auto list = [](int milli, int mi) {
    std::string cpu = milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
    return fmt::format("{{cpu: \"{}\", memory: {}Mi}}", cpu, mi);
  };
  return fmt::format("{{requests: {}, limits: {}}}", list(cpu_milli, memory_mi),
                     guaranteed ? list(cpu_milli, memory_mi) : list(2 * cpu_milli, 2 * memory_mi));
}

// A random pod manifest: with or without pod-level resources, a main container, sidecars
// (restartable init containers), Guaranteed or Burstable or no container resources.
rc::Gen<std::string> GenPod(int index) {
  return rc::gen::exec([index] {
    std::string name = fmt::format("p{}", index);
    bool pod_level = *rc::gen::arbitrary<bool>();
    int sidecars = *rc::gen::inRange(0, 3);
    std::string out = fmt::format("apiVersion: v1\nkind: Pod\nmetadata: {{name: {}}}\nspec:\n", name);
    int pod_cpu = *rc::gen::inRange(4, 9);  // room for 3 one-CPU containers
    int pod_mem = 512 * *rc::gen::inRange(1, 9);
    if (pod_level) {
      bool guaranteed = *rc::gen::inRange(0, 4) != 0;
      out += "  resources: " + Resources(pod_cpu * 1000, pod_mem, guaranteed) + "\n";
    }
    // A container's resources: none, Guaranteed whole CPUs, or Burstable millicores; under
    // pod-level resources they stay within the pod's.
    auto container = [&](const std::string& cname, bool sidecar) {
      std::string c = fmt::format("  - name: {}\n    image: x\n", cname);
      if (sidecar) c += "    restartPolicy: Always\n";
      int kind = *rc::gen::inRange(0, 3);
      if (kind == 1) {
        int cpu = pod_level ? 1 : *rc::gen::inRange(1, 5);
        c += "    resources: " + Resources(cpu * 1000, pod_level ? 128 : 256 * *rc::gen::inRange(1, 5), true) + "\n";
      } else if (kind == 2) {
        c += "    resources: " + Resources(100 * *rc::gen::inRange(1, 5), 64, false) + "\n";
      }
      return c;
    };
    if (sidecars > 0) {
      out += "  initContainers:\n";
      for (int s = 0; s < sidecars; ++s) out += container(fmt::format("side{}", s), true);
    }
    out += "  containers:\n" + container("main", false);
    return out;
  });
}

// The contract's counts, from admit -o json.
struct Counts {
  int pods = 0, admitted = 0, exclusive = 0, pod_shared = 0, aligned = 0, node_shared = 0;
  std::map<std::string, int> rejected;
};

Counts FromAdmit(const nlohmann::json& j) {
  Counts c;
  for (const auto& p : j["pods"]) {
    ++c.pods;
    if (!p["admitted"].get<bool>()) {
      ++c.rejected[p["reason"].get<std::string>()];
      continue;
    }
    ++c.admitted;
    CpuSet exclusive;
    for (const auto& ct : p["containers"]) {
      std::string a = ct["assignment"];
      if (a == "node_exclusive" || a == "pod_exclusive") {
        exclusive.UnionWith(CpuSet::Parse(ct["cpus"].get<std::string>()).value());
      }
    }
    c.exclusive += exclusive.Size();
    c.pod_shared += CpuSet::Parse(p["cpus"].get<std::string>()).value().Difference(exclusive).Size();
    if (p["topologyHint"].is_object() && p["topologyHint"]["preferred"].get<bool>()) ++c.aligned;
  }
  c.node_shared = CpuSet::Parse(j["node"]["defaultCpuSet"].get<std::string>()).value().Size();
  return c;
}

Counts FromCompare(const nlohmann::json& t) {
  Counts c;
  c.pods = t["pods"];
  c.admitted = t["admitted"];
  c.exclusive = t["exclusiveCpus"];
  c.pod_shared = t["podSharedPoolCpus"];
  c.aligned = t["alignedPods"];
  c.node_shared = t["nodeSharedPoolCpus"];
  for (const auto& [reason, n] : t["rejected"].items()) c.rejected[reason] = n;
  return c;
}

void ExpectSame(const Counts& compare, const Counts& admit) {
  RC_ASSERT(compare.pods == admit.pods);
  RC_ASSERT(compare.admitted == admit.admitted);
  RC_ASSERT(compare.rejected == admit.rejected);
  RC_ASSERT(compare.exclusive == admit.exclusive);
  RC_ASSERT(compare.pod_shared == admit.pod_shared);
  RC_ASSERT(compare.aligned == admit.aligned);
  RC_ASSERT(compare.node_shared == admit.node_shared);
}

PODTOPO_PROPERTY(CompareCommandProperty, TotalsEqualAdmitUnderEachConfiguration, ()) {
  const int n = *rc::gen::inRange(1, 20);
  std::string manifest;
  for (int i = 0; i < n; ++i) manifest += (i ? "---\n" : "") + *GenPod(i);
  const auto& configs = ConfigFiles();
  const int a = *rc::gen::inRange(0, static_cast<int>(configs.size()));
  const int b = *rc::gen::inRange(0, static_cast<int>(configs.size()));
  const std::string node = *rc::gen::element<std::string>("preset:demo", "preset:dual-socket-ht",
                                                          "preset:single-socket-ht");
  static const std::string dir = testing::MakeTempDir("podtopo-compare-property");
  const std::string pods = dir + "/pods.yaml";
  RC_ASSERT(WriteFileAtomically(pods, manifest).ok());

  Result cmp = RunCli({"compare", pods, "--node", node, "--config", configs[a], "--config",
                       configs[b], "-o", "json"});
  RC_LOG() << "compare: " << cmp.err << "\n" << manifest;
  RC_ASSERT(cmp.code == 0);
  nlohmann::json cj = nlohmann::json::parse(cmp.out);
  RC_ASSERT(cj["results"].size() == 2u);
  RC_CLASSIFY(cj["results"][0]["total"] != cj["results"][1]["total"], "configurations differ");
  RC_CLASSIFY(cj["results"][0]["total"]["admitted"] != n, "some pod rejected");
  int index = 0;
  for (int c : {a, b}) {
    Result adm = RunCli({"admit", pods, "--node", node, "--config", configs[c], "-o", "json"});
    RC_LOG() << "admit: " << adm.err;
    RC_ASSERT(adm.code == 0 || adm.code == 3);
    Counts want = FromAdmit(nlohmann::json::parse(adm.out));
    const auto& result = cj["results"][index++];
    RC_ASSERT(result["config"] == configs[c]);
    ExpectSame(FromCompare(result["total"]), want);
    RC_ASSERT(result["nodes"].size() == 1u);
    ExpectSame(FromCompare(result["nodes"][0]), want);
    RC_ASSERT(result["nodes"][0]["defaultCpuSet"] ==
              nlohmann::json::parse(adm.out)["node"]["defaultCpuSet"]);
  }
}

// Nodes run on threads; the output is the same bytes whatever their number (every format),
// on a fleet whose nodes get different pods and reach different verdicts.
TEST(CompareCommand, OutputIsTheSameForAnyNumberOfThreads) {
  std::string dir = testing::MakeTempDir("podtopo-compare-threads");
  std::string list = "apiVersion: v1\nkind: List\nitems:\n";
  const int kNodes = 24;
  for (int n = 0; n < kNodes; ++n) {
    // Node n gets n % 7 + 1 pods of 4 to 7 CPUs: some nodes fill up, others do not.
    for (int i = 0; i <= n % 7; ++i) {
      const int cpu = 4 + (n + i) % 4;
      list += fmt::format(
          "- apiVersion: v1\n  kind: Pod\n  metadata: {{name: p{}-{}, namespace: t}}\n  spec:\n"
          "    nodeName: w-{}\n    resources: {{limits: {{cpu: \"{}\", memory: 1Gi}}}}\n"
          "    initContainers: [{{name: side, image: x, restartPolicy: Always}}]\n"
          "    containers:\n    - name: main\n      image: x\n      resources: {{limits: "
          "{{cpu: \"{}\", memory: 512Mi}}}}\n",
          n, i, n, cpu * 3, cpu * 2);
    }
  }
  const std::string pods = dir + "/pods.yaml";
  ASSERT_TRUE(WriteFileAtomically(pods, list).ok());
  for (const std::string format : {"json", "table", "html"}) {
    std::vector<std::string> args = {"compare", pods, "--node",
                                     fmt::format("w=preset:single-socket-ht*{}", kNodes),
                                     "--config", Example("kubelet-config-gate-off.yaml"),
                                     "--config", Example("kubelet-config.yaml"), "-o", format};
    args.push_back("--threads");
    args.push_back("1");
    Result one = RunCli(args);
    ASSERT_EQ(one.code, 0) << one.err;
    for (const std::string threads : {"2", "7", "64"}) {
      args.back() = threads;
      Result many = RunCli(args);
      ASSERT_EQ(many.code, 0) << many.err;
      EXPECT_EQ(many.out, one.out) << format << " with " << threads << " threads";
    }
    if (format == "json") {
      // The fleet is not trivial: nodes differ, and some pods are refused.
      auto j = nlohmann::json::parse(one.out);
      std::set<std::string> node_tallies;
      for (const auto& node : j["results"][1]["nodes"]) {
        nlohmann::json t = node;
        t.erase("node");
        node_tallies.insert(t.dump());
      }
      EXPECT_GT(node_tallies.size(), 3u);
      EXPECT_LT(j["results"][1]["total"]["admitted"].get<int>(),
                j["results"][1]["total"]["pods"].get<int>());
    }
  }
  std::filesystem::remove_all(dir);
}

// Standard input is read once, however many sets of pod gates the configurations have.
TEST(CompareCommand, ReadsStdinOnceForEveryConfiguration) {
  Result r;
  ASSERT_TRUE(testing::WithStdin(testing::ReadFileOrEmpty(Example("pod-scope-mixed.yaml")), [&] {
    r = RunCli({"compare", "-", "--config", Example("kubelet-config-gate-off.yaml"), "--config",
                Example("kubelet-config.yaml"), "-o", "json"});
  }));
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["results"][0]["total"]["pods"], 1);
  EXPECT_EQ(j["results"][1]["total"]["pods"], 1);
}

// `kubectl get all -o yaml`: pods next to their ReplicaSet and Deployment count once, and
// stderr says which controllers were not expanded.
TEST(CompareCommand, KubectlGetAllCountsEachPodOnce) {
  const std::string dir = testing::MakeTempDir("podtopo-compare-all");
  const std::string all = dir + "/all.yaml";
  std::string text = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-5f7d-aaaaa
    namespace: shop
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-5f7d, uid: rs-1, controller: true}]
  spec:
    containers: [{name: c, image: x, resources: {limits: {cpu: "1", memory: 1Gi}}}]
- apiVersion: v1
  kind: Service
  metadata: {name: web, namespace: shop}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: shop, uid: d-1}
  spec:
    replicas: 1
    template:
      spec:
        containers: [{name: c, image: x, resources: {limits: {cpu: "1", memory: 1Gi}}}]
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: web-5f7d
    namespace: shop
    uid: rs-1
    ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d-1, controller: true}]
  spec:
    replicas: 1
    template:
      spec:
        containers: [{name: c, image: x, resources: {limits: {cpu: "1", memory: 1Gi}}}]
)";
  ASSERT_TRUE(WriteFileAtomically(all, text).ok());
  Result r = RunCli({"compare", all, "--config", Example("kubelet-config-gate-off.yaml"),
                     "--config", Example("kubelet-config.yaml"), "-o", "json"});
  std::filesystem::remove_all(dir);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["results"][0]["total"]["pods"], 1);
  EXPECT_EQ(j["results"][0]["total"]["exclusiveCpus"], 1);
  EXPECT_THAT(r.err, HasSubstr("podtopo: did not expand 1 Deployment object: the ReplicaSets it "
                               "owns are in the input and stand for it\n"));
  EXPECT_THAT(r.err, HasSubstr("podtopo: did not expand 1 ReplicaSet object: the pods it owns "
                               "are in the input and stand for it\n"));
  EXPECT_THAT(r.err, HasSubstr("skipped 1 Service object"));
}

TEST(CompareCommand, OtherKindsAreOneStderrLinePerKindAndErrorsWhenStrict) {
  const std::string dir = testing::MakeTempDir("podtopo-compare-kinds");
  const std::string helm = dir + "/chart.yaml";
  ASSERT_TRUE(WriteFileAtomically(helm, R"(---
# Source: shop/templates/pod.yaml
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: x, resources: {limits: {cpu: "1", memory: 1Gi}}}]
---
# Source: shop/templates/service.yaml
apiVersion: v1
kind: Service
metadata: {name: web}
---
# Source: shop/templates/config.yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: web}
---
# Source: shop/templates/metrics.yaml
apiVersion: v1
kind: Service
metadata: {name: metrics}
)").ok());
  const std::vector<std::string> args = {"compare", helm, "--config",
                                         Example("kubelet-config-gate-off.yaml"), "--config",
                                         Example("kubelet-config.yaml"), "-o", "json"};
  Result r = RunCli(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["results"][0]["total"]["pods"], 1);
  // One line per kind, whatever the number of configurations and objects.
  EXPECT_EQ(r.err,
            "podtopo: skipped 1 ConfigMap object (podtopo reads pods and workload controllers; "
            "--strict makes this an error)\n"
            "podtopo: skipped 2 Service objects (podtopo reads pods and workload controllers; "
            "--strict makes this an error)\n");
  std::vector<std::string> strict = args;
  strict.push_back("--strict");
  Result s = RunCli(strict);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(s.code, 1);
  EXPECT_EQ(s.out, "");
  EXPECT_THAT(s.err, HasSubstr(helm + ": document 2"));
  EXPECT_THAT(s.err, HasSubstr("shop/templates/service.yaml"));
  EXPECT_THAT(s.err, HasSubstr("objects of a kind podtopo does not read"));
  EXPECT_THAT(s.err, HasSubstr(": Service "));
  EXPECT_THAT(s.err, HasSubstr(": ConfigMap "));
}

TEST(CompareCommand, HookSmokeAndOutputs) {
  std::string dir = testing::MakeTempDir("podtopo-compare-cli");
  std::string cfg = dir + "/c.yaml", pod = dir + "/p.yaml";
  ASSERT_TRUE(WriteFileAtomically(cfg, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n").ok());
  ASSERT_TRUE(WriteFileAtomically(pod, "apiVersion: v1\nkind: Pod\nmetadata: {name: smoke}\nspec:\n  containers:\n  - {name: c, image: x}\n").ok());
  Result r = RunCli({"compare", pod, "--node", "preset:demo", "--config", cfg, "--config", cfg, "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["results"][0]["total"]["pods"], 1);
  EXPECT_EQ(j["differences"][0]["changes"], nlohmann::json::array());
  Result table = RunCli({"compare", pod, "--config", cfg, "--config", cfg});
  EXPECT_EQ(table.code, 0);
  EXPECT_THAT(table.out, HasSubstr("no difference"));
  Result html = RunCli({"compare", pod, "--config", cfg, "--config", cfg, "-o", "html"});
  EXPECT_THAT(html.out, ::testing::StartsWith("<!DOCTYPE html>"));
  std::filesystem::remove_all(dir);
}

// Issue 22 item 12.3: docs/compare.md's example says its memory in readable units, one
// formatter (HumanBytes) for the totals and the differences. The old code: "8704Mi of 15260Mi",
// "pins 27136Mi to NUMA nodes instead of 8704Mi".
TEST(CompareCommand, MemoryAmountsAreInReadableUnits) {
  Result r = RunCli({"compare", Example("pod-level-resource-demo.yaml"),
                     Example("pod-scope-mixed.yaml"), Example("pod-sidecar-list.yaml"),
                     "--config", Example("kubelet-config-gate-off.yaml"), "--config",
                     Example("kubelet-config.yaml")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("8.5Gi of 14.9Gi"));
  EXPECT_THAT(r.out, HasSubstr("the Memory Manager pins 26.5Gi to NUMA nodes instead of 8.5Gi"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("8704Mi")));
}

// Issue 23 item 3: two configurations of different kubelet versions. A rollback 1.37 -> 1.36
// reads the V4 / V3 files through their inline legacy parts (k/k #139102, #139626): the pods
// holding pod-level entries lose them, and only those. The upgrade back reads everything.
TEST(CompareCommand, Issue139102_CheckpointCompatibilityBetweenVersions) {
  const std::vector<std::string> pods = {Example("pod-level-resource-demo.yaml"),
                                         Example("pod-scope-mixed.yaml"),
                                         Example("pod-sidecar-list.yaml")};
  auto run = [&](const std::string& first, const std::string& second) {
    std::vector<std::string> args = {"compare"};
    args.insert(args.end(), pods.begin(), pods.end());
    for (const std::string& v : {first, second}) {
      args.insert(args.end(), {"--config", Example("kubelet-config.yaml"), "--kubelet-version", v});
    }
    args.insert(args.end(), {"-o", "json"});
    Result r = RunCli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  nlohmann::json down = run("1.37", "1.36");
  const nlohmann::json& c = down["differences"][0]["checkpoints"];
  ASSERT_TRUE(c.is_object()) << down["differences"].dump(2);
  EXPECT_EQ(c["fromVersion"], "1.37");
  EXPECT_EQ(c["toVersion"], "1.36");
  ASSERT_EQ(c["files"].size(), 2u);
  EXPECT_EQ(c["files"][0]["file"], "cpu_manager_state");
  EXPECT_EQ(c["files"][0]["written"], 4);
  EXPECT_EQ(c["files"][0]["read"], "legacy-part");
  EXPECT_EQ(c["files"][0]["readAs"], 2);
  EXPECT_EQ(c["files"][0]["upstream"], "k/k #139102");
  EXPECT_EQ(c["files"][1]["written"], 3);
  EXPECT_EQ(c["files"][1]["readAs"], 1);
  EXPECT_EQ(c["files"][1]["upstream"], "k/k #139626");
  // The pods that lose entries: the admitted pods with spec.resources (all-in-main has them
  // but is rejected, docs/compare.md; legacy-db has none).
  for (int f : {0, 1}) {
    std::set<std::string> dropped;
    for (const auto& p : c["files"][f]["podEntriesDropped"]) {
      std::string pod = p.get<std::string>();
      dropped.insert(pod.substr(pod.find('/') + 1));
    }
    EXPECT_EQ(dropped, (std::set<std::string>{"pod-level-resource-demo", "pod-scope-mixed",
                                              "api-0", "api-1"}))
        << c.dump(2);
  }
  // The upgrade reads 1.36's V3 / V2 fully; the same version twice says nothing.
  nlohmann::json up = run("1.36", "1.37");
  EXPECT_EQ(up["differences"][0]["checkpoints"]["files"][0]["written"], 3);
  EXPECT_EQ(up["differences"][0]["checkpoints"]["files"][0]["read"], "full");
  EXPECT_TRUE(up["differences"][0]["checkpoints"]["files"][0]["podEntriesDropped"].empty());
  EXPECT_TRUE(run("1.37", "1.37")["differences"][0]["checkpoints"].is_null());
}

TEST(CompareCommand, BadInputExitsOneAndWritesNothing) {
  std::string dir = testing::MakeTempDir("podtopo-compare-bad");
  std::string on = Example("kubelet-config.yaml"), off = Example("kubelet-config-gate-off.yaml");
  std::string pods = Example("pod-scope-mixed.yaml");
  auto expect_bad = [&](std::vector<std::string> args, const std::string& message) {
    Result r = RunCli(args);
    EXPECT_EQ(r.code, 1) << message;
    EXPECT_EQ(r.out, "") << message;
    EXPECT_THAT(r.err, HasSubstr(message));
  };
  expect_bad({"compare", pods, "--config", on}, "give --config at least twice");
  std::filesystem::create_directories(dir + "/fleet");
  ASSERT_TRUE(WriteFileAtomically(dir + "/fleet/a.json", "{\"cpus\": 3}").ok());
  // Nothing is written in any format (the report is written only once everything is read).
  for (const std::string format : {"table", "json", "html", "svg"}) {
    expect_bad({"compare", pods, "--node", dir + "/fleet", "--config", off, "--config", on, "-o",
                format},
               "--node " + dir + "/fleet: " + dir + "/fleet/a.json");
  }
  expect_bad({"compare", pods, "--node", "a=preset:demo", "--node", "b=preset:demo", "--config",
              off, "--config", on},
             "pod default/pod-scope-mixed: spec.nodeName: not set");
  std::string bound = dir + "/bound.yaml";
  ASSERT_TRUE(WriteFileAtomically(bound, "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n  nodeName: gone\n  containers:\n  - {name: c, image: x}\n").ok());
  expect_bad({"compare", bound, "--node", "a=preset:demo", "--config", off, "--config", on},
             bound + ": pod default/b: spec.nodeName: no --node is named \"gone\"");
  std::string bad_cfg = dir + "/bad.yaml";
  ASSERT_TRUE(WriteFileAtomically(bad_cfg, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: [1]\n").ok());
  expect_bad({"compare", pods, "--config", off, "--config", bad_cfg}, bad_cfg);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace podtopo
