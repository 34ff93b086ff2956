#include "compare/compare.h"

#include <random>

#include "api/pod_yaml.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/testing.h"

namespace podtopo::compare {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<Pod> Example(const std::string& name) {
  auto pods = LoadPods(testing::SourceDir() + "/docs/examples/" + name);
  EXPECT_TRUE(pods.ok()) << pods.status();
  return pods.ok() ? *pods : std::vector<Pod>{};
}

// `n` copies of `pod` named NAME-0 ... on `node`.
std::vector<Pod> Copies(const Pod& pod, int n, const std::string& node = "") {
  std::vector<Pod> out;
  for (int i = 0; i < n; ++i) {
    Pod p = pod;
    p.name = pod.name + "-" + std::to_string(i);
    p.uid = DeterministicPodUid(p.namespace_name, p.name);
    p.node_name = node;
    out.push_back(std::move(p));
  }
  return out;
}

config::KubeletConfig GateOff() {
  config::KubeletConfig c = config::SeedDefault();
  c.feature_gates["PodLevelResourceManagers"] = false;
  return c;
}

config::KubeletConfig ContainerScope() {
  config::KubeletConfig c = config::SeedDefault();
  c.topology_manager_scope = "container";
  return c;
}

CompareRequest Request(const std::vector<std::string>& nodes, const std::vector<Pod>& pods) {
  CompareRequest r;
  r.fleet = LoadFleet(nodes).value();
  auto shared = std::make_shared<const std::vector<Pod>>(pods);
  r.configs = {{"seed", config::SeedDefault(), shared},
               {"gate-off", GateOff(), shared},
               {"container-scope", ContainerScope(), shared}};
  return r;
}

// What `admit` gives: the pods through one Node in order.
Tally AdmitTally(const std::vector<Pod>& pods, const std::string& node,
                 const config::KubeletConfig& cfg) {
  auto n = Node::Create(*LoadFleet({node}).value()[0].topology, cfg, {});
  EXPECT_TRUE(n.ok()) << n.status();
  std::vector<PodAllocation> results;
  for (const auto& p : pods) results.push_back((*n)->Admit(p).value());
  return TallyOf(results, **n);
}

TEST(Compare, OneNodeEqualsAdmitUnderEachConfiguration) {
  std::vector<Pod> pods = Copies(Example("pod-scope-mixed.yaml")[0], 18);
  for (const auto& p : Example("pod-level-resource-demo.yaml")) pods.push_back(p);
  CompareRequest req = Request({"preset:demo"}, pods);
  auto result = Compare(req);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->configs.size(), 3u);
  EXPECT_FALSE(result->first_fit_used);
  for (size_t c = 0; c < req.configs.size(); ++c) {
    const ConfigResult& cr = result->configs[c];
    EXPECT_EQ(cr.config, req.configs[c].name);
    Tally want = AdmitTally(pods, "preset:demo", req.configs[c].config);
    EXPECT_EQ(cr.total, want) << cr.config;
    ASSERT_EQ(cr.nodes.size(), 1u);
    EXPECT_EQ(cr.nodes[0].tally, want);
    EXPECT_EQ(cr.nodes[0].node, "preset:demo");
    EXPECT_EQ(cr.total.pods, 19);
    EXPECT_EQ(cr.total.admitted + cr.total.Rejected(), 19);
    EXPECT_EQ(cr.pods.size(), 19u);
  }
  // Under the seed configuration 15 pod-scope-mixed pods fit (3 on NUMA 0 beside the reserved
  // CPU, 4 on each other NUMA node); a 16th would need 64 of the 63 allocatable CPUs.
  const Tally& seed = result->configs[0].total;
  EXPECT_EQ(seed.admitted, 15 + 1);
  EXPECT_THAT(seed.rejected, ElementsAre(std::pair<const std::string, int>("OutOfcpu", 3)));
  EXPECT_EQ(seed.exclusive_cpus, 15 * 2);            // main-app's 2 CPUs
  EXPECT_EQ(seed.pod_shared_pool_cpus, 15 * 2 + 2);  // the sidecars' 2 + the seed pod's 2
  EXPECT_EQ(seed.exclusive_cpus_by_kind.at("app"), 30);
  EXPECT_EQ(seed.exclusive_cpus_by_kind.count("sidecar"), 0u);
  EXPECT_EQ(seed.aligned_pods, 16);
  EXPECT_EQ(seed.node_shared_pool_cpus, 64 - 62);
  EXPECT_EQ(seed.memory.at(1).at("memory").allocated, uint64_t{16} << 30);
}

TEST(Compare, FleetThreadsDoNotChangeTheResult) {
  Pod mixed = Example("pod-scope-mixed.yaml")[0];
  std::vector<Pod> pods;
  for (int n = 0; n < 6; ++n) {
    for (auto& p : Copies(mixed, 3 + 3 * n, "n-" + std::to_string(n))) {
      p.name += "-on-" + std::to_string(n);
      pods.push_back(p);
    }
  }
  CompareRequest req = Request({"n=preset:demo*6"}, pods);
  req.threads = 1;
  auto serial = Compare(req);
  ASSERT_TRUE(serial.ok()) << serial.status();
  req.threads = 4;
  auto parallel = Compare(req);
  ASSERT_TRUE(parallel.ok()) << parallel.status();
  for (size_t c = 0; c < req.configs.size(); ++c) {
    const ConfigResult& s = serial->configs[c];
    const ConfigResult& p = parallel->configs[c];
    EXPECT_EQ(s.total, p.total);
    ASSERT_EQ(s.nodes.size(), 6u);
    Tally sum;
    for (size_t j = 0; j < 6; ++j) {
      EXPECT_EQ(s.nodes[j].tally, p.nodes[j].tally);
      EXPECT_EQ(s.nodes[j].default_cpu_set, p.nodes[j].default_cpu_set);
      sum.Add(s.nodes[j].tally);
      // Each node ran only its own pods.
      std::vector<Pod> mine;
      for (const auto& pod : pods) {
        if (pod.node_name == s.nodes[j].node) mine.push_back(pod);
      }
      EXPECT_EQ(s.nodes[j].tally, AdmitTally(mine, "preset:demo", req.configs[c].config));
    }
    EXPECT_EQ(sum, s.total);
    for (size_t i = 0; i < pods.size(); ++i) {
      EXPECT_EQ(s.pods[i].admitted, p.pods[i].admitted);
      EXPECT_EQ(s.pods[i].node, p.pods[i].node);
      EXPECT_EQ(s.pods[i].pod, pods[i].Key());
    }
  }
  // n-5 was given 18 pods: 15 fit.
  EXPECT_EQ(serial->configs[0].nodes[5].tally.admitted, 15);
}

// Random fleets where some nodes get the same pods (renamed, relabelled) in the same order:
// sharing one run between identical nodes gives what running every node gives.
TEST(Compare, IdenticalNodesGiveWhatEachNodeGives) {
  std::vector<Pod> templates = Example("pod-scope-mixed.yaml");
  for (const auto& p : Example("pod-level-resource-demo.yaml")) templates.push_back(p);
  for (const auto& p : Example("pod-sidecar-list.yaml")) templates.push_back(p);
  Pod big = templates[0];
  big.resources->requests["cpu"] = *Quantity::Parse("8");
  big.resources->limits["cpu"] = *Quantity::Parse("8000m");  // same value, other text
  templates.push_back(big);
  ASSERT_GE(templates.size(), 4u);
  std::mt19937 rng(12);
  for (int round = 0; round < 6; ++round) {
    // Three pod sequences; each node gets one of them under its own names.
    std::vector<std::vector<int>> sequences(3);
    for (auto& seq : sequences) {
      const int n = 1 + static_cast<int>(rng() % 22);
      for (int k = 0; k < n; ++k) seq.push_back(static_cast<int>(rng() % templates.size()));
    }
    const std::vector<std::string> names = {"a-0", "a-1", "a-2", "a-3", "a-4", "a-5", "b-0", "b-1"};
    std::vector<Pod> pods;
    for (const std::string& node : names) {
      const auto& seq = sequences[rng() % sequences.size()];
      for (size_t k = 0; k < seq.size(); ++k) {
        Pod p = templates[seq[k]];
        p.name = fmt::format("{}-{}-{}", p.name, node, k);
        p.namespace_name = rng() % 2 ? "default" : "team-" + node;
        p.uid = DeterministicPodUid(p.namespace_name, p.name);
        p.labels["node"] = node;
        p.node_name = node;
        pods.push_back(std::move(p));
      }
    }
    // In the last rounds two pods of a-5 share a uid: that node runs on its own.
    if (round >= 4) {
      std::vector<size_t> on_a5;
      for (size_t i = 0; i < pods.size(); ++i) {
        if (pods[i].node_name == "a-5") on_a5.push_back(i);
      }
      if (on_a5.size() >= 2) pods[on_a5[1]].uid = pods[on_a5[0]].uid;
    }
    CompareRequest req = Request({"a=preset:demo*6", "b=preset:dual-socket-ht*2"}, pods);
    req.share_identical_nodes = false;
    auto each = Compare(req);
    ASSERT_TRUE(each.ok()) << each.status();
    req.share_identical_nodes = true;
    auto shared = Compare(req);
    ASSERT_TRUE(shared.ok()) << shared.status();
    for (size_t c = 0; c < req.configs.size(); ++c) {
      const ConfigResult& e = each->configs[c];
      const ConfigResult& s = shared->configs[c];
      EXPECT_EQ(e.total, s.total) << round << " " << e.config;
      ASSERT_EQ(e.nodes.size(), s.nodes.size());
      for (size_t j = 0; j < e.nodes.size(); ++j) {
        EXPECT_EQ(e.nodes[j].node, s.nodes[j].node);
        EXPECT_EQ(e.nodes[j].tally, s.nodes[j].tally) << round << " " << e.nodes[j].node;
        EXPECT_EQ(e.nodes[j].default_cpu_set, s.nodes[j].default_cpu_set);
        EXPECT_EQ(e.nodes[j].reserved_cpus, s.nodes[j].reserved_cpus);
      }
      ASSERT_EQ(e.pods.size(), s.pods.size());
      for (size_t i = 0; i < e.pods.size(); ++i) {
        EXPECT_EQ(e.pods[i].pod, s.pods[i].pod);
        EXPECT_EQ(e.pods[i].node, s.pods[i].node);
        EXPECT_EQ(e.pods[i].admitted, s.pods[i].admitted) << round << " " << e.pods[i].pod;
        EXPECT_EQ(e.pods[i].reason, s.pods[i].reason);
      }
      EXPECT_EQ(Differences(each->configs[0], e), Differences(shared->configs[0], s));
    }
  }
}

TEST(Compare, FirstFitFillsNodesInOrder) {
  Pod mixed = Example("pod-scope-mixed.yaml")[0];
  std::vector<Pod> pods = Copies(mixed, 20);
  Pod huge = mixed;
  huge.name = "huge";
  huge.uid = DeterministicPodUid("default", "huge");
  huge.resources->requests["cpu"] = *Quantity::Parse("100");
  huge.resources->limits["cpu"] = *Quantity::Parse("100");
  pods.push_back(huge);
  CompareRequest req = Request({"a=preset:demo", "b=preset:demo"}, pods);
  EXPECT_THAT(Compare(req).status().message(), HasSubstr("--place first-fit"));
  req.placement = Placement::kFirstFit;
  auto result = Compare(req);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->first_fit_used);
  const ConfigResult& seed = result->configs[0];
  EXPECT_EQ(seed.nodes[0].tally.admitted, 15);
  EXPECT_EQ(seed.nodes[0].tally.pods, 15);  // the rejections that moved pods on are not counted
  EXPECT_EQ(seed.nodes[1].tally.admitted, 5);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(seed.pods[i].node, 0) << i;
  for (int i = 15; i < 20; ++i) EXPECT_EQ(seed.pods[i].node, 1) << i;
  // No node admits the huge pod: rejected in the total only, with the first node's reason.
  EXPECT_FALSE(seed.pods[20].admitted);
  EXPECT_EQ(seed.pods[20].node, -1);
  EXPECT_EQ(seed.pods[20].reason, "OutOfcpu");
  EXPECT_EQ(seed.total.pods, 21);
  EXPECT_EQ(seed.total.admitted, 20);
  EXPECT_EQ(seed.total.rejected.at("OutOfcpu"), 1);
}

TEST(Compare, ConfigurationInvalidForTheNodeNamesBoth) {
  CompareRequest req = Request({"small=preset:single-socket-ht"}, Example("pod-scope-mixed.yaml"));
  config::MemoryReservation r;
  r.numa_node = 3;
  req.configs[1].config.reserved_memory = {r};
  auto result = Compare(req);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("--config gate-off on node small: "));
  auto fewer = std::make_shared<std::vector<Pod>>(*req.configs[1].pods);
  fewer->pop_back();
  req.configs[1].pods = fewer;
  EXPECT_THAT(Compare(req).status().message(), HasSubstr("its pods are not those of --config seed"));
}

ConfigResult Outcomes(const std::vector<std::pair<bool, std::string>>& verdicts) {
  ConfigResult r;
  r.nodes.resize(1);
  for (size_t i = 0; i < verdicts.size(); ++i) {
    r.pods.push_back({"default/p" + std::to_string(i), 0, verdicts[i].first, verdicts[i].second});
  }
  return r;
}

TEST(Differences, SaysWhatChangedInWords) {
  ConfigResult before = Outcomes({{true, ""}, {true, ""}, {true, ""}, {false, "OutOfcpu"},
                                  {false, "SMTAlignmentError"}, {true, ""}});
  ConfigResult after = Outcomes({{false, "EmptyPodSharedPoolError"},
                                 {false, "EmptyPodSharedPoolError"},
                                 {false, "EmptyPodSharedPoolError"}, {true, ""},
                                 {false, "TopologyAffinityError"}, {true, ""}});
  before.total.exclusive_cpus_by_kind = {{"sidecar", 14}, {"app", 10}};
  after.total.exclusive_cpus_by_kind = {{"app", 12}};
  before.total.pod_shared_pool_cpus = 0;
  after.total.pod_shared_pool_cpus = 6;
  before.total.node_shared_pool_cpus = 40;
  after.total.node_shared_pool_cpus = 46;
  before.total.aligned_pods = 4;
  after.total.aligned_pods = 3;
  before.total.memory[0]["memory"].allocated = uint64_t{4} << 30;
  after.total.memory[0]["memory"].allocated = uint64_t{6} << 30;
  EXPECT_THAT(
      Differences(before, after),
      ElementsAre("3 pods that were admitted are now rejected with EmptyPodSharedPoolError "
                  "(default/p0, default/p1, default/p2)",
                  "1 pod rejected with OutOfcpu is now admitted (default/p3)",
                  "1 pod is now rejected with TopologyAffinityError instead of SMTAlignmentError "
                  "(default/p4)",
                  "sidecars no longer hold 14 exclusive CPUs",
                  "main containers hold 12 exclusive CPUs instead of 10 (+2)",
                  "pod shared pools now hold 6 CPUs",
                  "the node shared pool has 46 CPUs left instead of 40 (+6)",
                  "3 pods are NUMA-aligned instead of 4 (-1)",
                  "the Memory Manager pins 6Gi to NUMA nodes instead of 4Gi"));
  EXPECT_THAT(Differences(before, before), IsEmpty());
}

TEST(Capacity, ReplicasPerWorkloadShapeAndConfiguration) {
  std::vector<Pod> pods = Example("pod-scope-mixed.yaml");
  for (const auto& p : Example("pod-level-resource-demo.yaml")) pods.push_back(p);
  CompareRequest req = Request({"a=preset:demo*3", "preset:dual-socket-ht"}, pods);
  auto rows = Capacity(req);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 4u);  // 2 workloads x 2 shapes (the 3 demo nodes are one shape)
  const CapacityRow& mixed_demo = (*rows)[0];
  EXPECT_EQ(mixed_demo.workload, "default/pod-scope-mixed");
  EXPECT_EQ(mixed_demo.shape, "preset:demo");
  // Seed: 4-CPU NUMA-aligned bubbles, 3 on NUMA 0 (CPU 0 reserved) + 4 on each other node;
  // the 16th would need 64 of the 63 allocatable CPUs.
  EXPECT_EQ(mixed_demo.replicas[0], 15);
  EXPECT_EQ(mixed_demo.stopped_by[0], "OutOfcpu");
  EXPECT_EQ((*rows)[1].shape, "preset:dual-socket-ht");
  // The seed pod (2 CPUs, 2Gi) on demo: 7 per NUMA node on NUMA 0 (15 free CPUs), 8 on the
  // others, as long as memory lasts (16Gi per NUMA node, less 1124Mi on NUMA 0).
  const CapacityRow& seed_demo = (*rows)[2];
  EXPECT_EQ(seed_demo.workload, "default/pod-level-resource-demo");
  EXPECT_EQ(seed_demo.replicas[0], 7 + 3 * 8);
  for (const auto& row : *rows) {
    ASSERT_EQ(row.replicas.size(), 3u);
    for (size_t c = 0; c < 3; ++c) {
      EXPECT_GT(row.replicas[c], 0) << row.workload << " " << row.shape << " " << c;
      EXPECT_FALSE(row.stopped_by[c].empty());
    }
  }
}

}  // namespace
}  // namespace podtopo::compare
