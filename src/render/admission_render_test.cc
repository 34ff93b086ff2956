#include "render/admission_render.h"

#include "api/pod_yaml.h"
#include "config/kubelet_config.h"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "topology/node_source.h"

namespace podtopo {
namespace {

PodAllocation Sample() {
  PodAllocation p;
  p.namespace_name = "default";
  p.name = "demo";
  p.uid = "u1";
  p.admitted = true;
  p.qos = QosClass::kGuaranteed;
  p.topology_hint = topologymanager::TopologyHint{topologymanager::BitMask::FromUint64(1), true};
  p.cpus = CpuSet::Parse("2-5").value();
  p.memory = {{"memory", uint64_t{2} << 30, {0}}};
  ContainerAllocation main;
  main.name = "main";
  main.kind = ContainerKind::kApp;
  main.cpus = CpuSet::Parse("2-3").value();
  main.assignment = "pod_exclusive";
  main.memory = {{"memory", uint64_t{1} << 30, {0}}};
  ContainerAllocation logger;
  logger.name = "logger";
  logger.kind = ContainerKind::kSidecar;
  logger.cpus = CpuSet::Parse("4-5").value();
  logger.assignment = "pod_shared";
  p.containers = {logger, main};
  return p;
}

TEST(AdmissionRenderTest, JsonFollowsTheContract) {
  nlohmann::ordered_json j =
      AdmissionJson({Sample()}, {CpuSet::Parse("0-1,6-63").value(), CpuSet({0})});
  const auto& pod = j["pods"][0];
  // Keys in the contract's order.
  std::vector<std::string> keys;
  for (const auto& [k, _] : pod.items()) keys.push_back(k);
  std::vector<std::string> want = {"namespace", "name",    "uid",          "admitted",
                                   "reason",    "message", "qosClass",     "topologyHint",
                                   "cpus",      "memory",  "containers"};
  EXPECT_EQ(keys, want);
  EXPECT_EQ(pod["qosClass"], "Guaranteed");
  EXPECT_EQ(pod["topologyHint"]["affinity"], nlohmann::ordered_json::array({0}));
  EXPECT_EQ(pod["topologyHint"]["preferred"], true);
  EXPECT_EQ(pod["cpus"], "2-5");
  EXPECT_EQ(pod["memory"][0]["size"], uint64_t{2} << 30);
  EXPECT_EQ(pod["memory"][0]["numaNodes"], nlohmann::ordered_json::array({0}));
  EXPECT_EQ(pod["containers"][1]["name"], "main");
  EXPECT_EQ(pod["containers"][1]["kind"], "app");
  EXPECT_EQ(pod["containers"][1]["assignment"], "pod_exclusive");
  EXPECT_EQ(pod["containers"][0]["kind"], "sidecar");
  EXPECT_EQ(pod["containers"][0]["memory"], nlohmann::ordered_json::array());
  EXPECT_EQ(j["node"]["defaultCpuSet"], "0-1,6-63");
  EXPECT_EQ(j["node"]["reservedCpus"], "0");
}

TEST(AdmissionRenderTest, TableShowsVerdictsPoolsAndReasons) {
  PodAllocation rejected;
  rejected.namespace_name = "default";
  rejected.name = "big";
  rejected.reason = "TopologyAffinityError";
  rejected.message = "Pod was rejected: Resources cannot be allocated with Topology locality";
  std::string t = RenderAdmissionTable({Sample(), rejected}, {CpuSet::Parse("0-1").value(), {}});
  EXPECT_NE(t.find("default/demo"), std::string::npos);
  EXPECT_NE(t.find("Admitted"), std::string::npos);
  EXPECT_NE(t.find("NUMA 0 (preferred)"), std::string::npos);
  EXPECT_NE(t.find("pod_exclusive"), std::string::npos);
  EXPECT_NE(t.find("2Gi@0"), std::string::npos);
  EXPECT_NE(t.find("Rejected: TopologyAffinityError"), std::string::npos);
  EXPECT_NE(t.find("default/big: Pod was rejected: Resources cannot be allocated"),
            std::string::npos);
  EXPECT_NE(t.find("default (shared) cpuset 0-1"), std::string::npos);
}

// Issue 22 item 12.4: a merged hint that is not preferred (best-effort admits it) says so in
// the table; the old code printed "NUMA 0,1" alone.
TEST(AdmissionRenderTest, TableSaysWhenTheHintIsNotPreferred) {
  PodAllocation p = Sample();
  p.topology_hint = topologymanager::TopologyHint{topologymanager::BitMask::FromUint64(3), false};
  p.containers[1].topology_hint = p.topology_hint;
  std::string t = RenderAdmissionTable({p}, {}, /*wide=*/true);
  EXPECT_NE(t.find("NUMA 0,1 (not preferred)"), std::string::npos) << t;
  EXPECT_EQ(FormatHint(p.topology_hint), "NUMA 0,1 (not preferred)");
  EXPECT_EQ(FormatHint(Sample().topology_hint), "NUMA 0 (preferred)");
}

// Issue 22 item 12.13: the pod's shared memory appears on each sidecar that shares it; the table
// says so, and that the pod's row counts it once. One container alone gets no note.
TEST(AdmissionRenderTest, SharedPodMemoryOnSeveralContainersIsExplained) {
  PodAllocation p = Sample();
  p.memory = {{"memory", uint64_t{4} << 30, {0}}};
  p.containers[0].memory = {{"memory", uint64_t{2} << 30, {0}}};
  ContainerAllocation metrics = p.containers[0];
  metrics.name = "metrics";
  p.containers.insert(p.containers.begin(), metrics);
  std::string t = RenderAdmissionTable({p}, {});
  EXPECT_NE(t.find("default/demo: MEMORY lists the pod's shared pool (2Gi@0) on each of "
                   "metrics, logger; the pod's row (4Gi@0) counts it once"),
            std::string::npos)
      << t;
  EXPECT_EQ(RenderAdmissionTable({Sample()}, {}).find("shared pool"), std::string::npos);
}

TEST(AdmissionRenderTest, WideAddsContainerHints) {
  PodAllocation p = Sample();
  p.containers[1].topology_hint =
      topologymanager::TopologyHint{topologymanager::BitMask::FromUint64(2), false};
  p.containers[1].devices["example.com/gpu"] = {"gpu1"};
  std::string narrow = RenderAdmissionTable({p}, {});
  std::string wide = RenderAdmissionTable({p}, {}, /*wide=*/true);
  EXPECT_EQ(narrow.find("HINT / DEVICES"), std::string::npos);
  EXPECT_NE(narrow.find("example.com/gpu=gpu1"), std::string::npos);
  EXPECT_NE(wide.find("HINT / DEVICES"), std::string::npos);
  EXPECT_NE(wide.find("NUMA 1 (not preferred) example.com/gpu=gpu1"), std::string::npos);
}

TEST(AdmissionRenderTest, WideExplainsTracedAdmissionsTableAndJsonDoNot) {
  auto topology = LoadNode("preset:demo");
  ASSERT_TRUE(topology.ok());
  auto node = Node::Create(*topology, config::SeedDefault(), {});
  ASSERT_TRUE(node.ok());
  auto pods = LoadPods(testing::SourceDir() + "/docs/examples/pod-level-resource-demo.yaml");
  ASSERT_TRUE(pods.ok());
  auto a = (*node)->Admit(pods->at(0));
  ASSERT_TRUE(a.ok());
  ASSERT_NE(a->trace, nullptr);
  NodePools pools{(*node)->DefaultCpuSet(), (*node)->ReservedCpus()};
  std::string wide = RenderAdmissionTable({*a}, pools, /*wide=*/true);
  std::string table = RenderAdmissionTable({*a}, pools);
  EXPECT_NE(wide.find("worker (app): pod shared pool"), std::string::npos);
  EXPECT_NE(wide.find("merged: NUMA 0 (preferred) -> admit"), std::string::npos);
  EXPECT_EQ(table.find("pod shared pool"), std::string::npos);
  // The trace is not part of the JSON contract.
  PodAllocation untraced = *a;
  untraced.trace = nullptr;
  EXPECT_EQ(RenderAdmissionJson({*a}, pools), RenderAdmissionJson({untraced}, pools));
}

}  // namespace
}  // namespace podtopo
