// Randomized admit/remove sequences through the whole pipeline (10^5 operations by default,
// PODTOPO_PROPERTY_OPS overrides), checking after every operation:
//   - no CPU is in two exclusive sets (long-running containers of any pods; regular init
//     containers may reuse CPUs of their own pod by design);
//   - every pod shared pool lies inside its pod's bubble;
//   - per NUMA node and memory type, reserved + free == allocatable (never over-committed);
//   - the default set, the container sets and the pod sets cover every CPU, and the default set
//     shares no CPU with an exclusive set or a bubble.
#include <cstdlib>
#include <random>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "testing/topologies.h"

namespace podtopo {
namespace {

constexpr uint64_t kGi = uint64_t{1} << 30;

NodeTopology FromFake(const std::string& name) {
  NodeTopology node;
  node.cpus = testing::FakeTopology(name);
  node.cpus.SetCountsFromCpus();
  for (int id : node.cpus.NumaNodes()) node.numa_nodes.push_back({id, 16 * kGi, {}, {}});
  node.source = name;
  return node;
}

struct Gen {
  std::mt19937 rng;
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  bool Coin(int percent) { return Int(1, 100) <= percent; }
};

// A random pod: pod-level budget or not; containers exclusive (requests == limits, whole
// CPUs), fractional, or without resources; init containers and sidecars sometimes.
std::string RandomPod(Gen& g, int index) {
  bool pod_level = g.Coin(60);
  int budget = g.Int(1, 6);
  int budget_gi = g.Int(1, 4);
  std::string y = fmt::format("apiVersion: v1\nkind: Pod\nmetadata: {{name: p{}}}\nspec:\n", index);
  bool fractional = g.Coin(10);
  if (pod_level) {
    std::string cpu = fractional ? "1500m" : std::to_string(budget);
    y += fmt::format(
        "  resources:\n    requests: {{cpu: \"{0}\", memory: {1}Gi}}\n    limits: {{cpu: \"{0}\", "
        "memory: {1}Gi}}\n",
        cpu, budget_gi);
  }
  // CPUs still free for exclusive containers (aggregate requests may not exceed the budget).
  int left = pod_level && fractional ? 1 : budget;
  auto container = [&](const std::string& name, bool sidecar) {
    std::string c = fmt::format("  - name: {}\n    image: busybox\n", name);
    if (sidecar) c += "    restartPolicy: Always\n";
    int kind = g.Int(0, 2);
    if (pod_level) {
      if (kind == 0 && left > 1) {
        int n = g.Int(1, left - 1);
        left -= n;
        c += fmt::format(
            "    resources:\n      requests: {{cpu: \"{0}\", memory: 128Mi}}\n      limits: "
            "{{cpu: \"{0}\", memory: 128Mi}}\n",
            n);
      }
    } else if (kind == 0) {
      c += fmt::format(
          "    resources:\n      requests: {{cpu: \"{0}\", memory: 512Mi}}\n      limits: "
          "{{cpu: \"{0}\", memory: 512Mi}}\n",
          g.Int(1, 4));
    } else if (kind == 1) {
      c += "    resources:\n      requests: {cpu: 500m, memory: 128Mi}\n      limits: {cpu: "
           "500m, memory: 128Mi}\n";
    }
    return c;
  };
  std::string init;
  if (g.Coin(30)) init += container("init", false);
  if (g.Coin(30)) init += container("side", true);
  if (!init.empty()) y += "  initContainers:\n" + init;
  y += "  containers:\n";
  int apps = g.Int(1, 3);
  for (int i = 0; i < apps; ++i) y += container(fmt::format("app{}", i), false);
  return y;
}

void CheckInvariants(const Node& node, const std::string& where) {
  SCOPED_TRACE(where);
  const CpuSet all = node.topology().cpus.AllCpus();
  const CpuSet def = node.DefaultCpuSet();
  CpuSet covered = def;
  CpuSet exclusive;
  for (const auto& p : node.AdmittedPods()) {
    covered.UnionWith(p.cpus);
    ASSERT_FALSE(p.cpus.Intersects(def)) << p.name << " bubble " << p.cpus.String();
    for (const auto& c : p.containers) {
      covered.UnionWith(c.cpus);
      if (c.assignment == "pod_shared") {
        ASSERT_TRUE(c.cpus.IsSubsetOf(p.cpus))
            << p.name << "/" << c.name << " " << c.cpus.String() << " not in " << p.cpus.String();
      }
      bool exclusive_kind = c.assignment == "pod_exclusive" || c.assignment == "node_exclusive";
      if (exclusive_kind && c.kind != ContainerKind::kInit) {
        ASSERT_FALSE(c.cpus.Intersects(exclusive))
            << p.name << "/" << c.name << " " << c.cpus.String() << " overlaps another slice";
        ASSERT_FALSE(c.cpus.Intersects(def)) << p.name << "/" << c.name;
        exclusive.UnionWith(c.cpus);
      }
    }
  }
  ASSERT_EQ(covered, all) << "covered " << covered.String();
  for (const auto& [numa, types] : node.MemoryTables()) {
    for (const auto& [type, t] : types) {
      ASSERT_LE(t.reserved, t.allocatable) << "NUMA " << numa << " " << type;
      ASSERT_EQ(t.reserved + t.free, t.allocatable) << "NUMA " << numa << " " << type;
    }
  }
}

TEST(NodePropertyTest, RandomAdmitRemoveKeepsInvariants) {
  long total_ops = 100000;
  if (const char* env = std::getenv("PODTOPO_PROPERTY_OPS")) total_ops = std::atol(env);
  const std::vector<std::string> topologies = {"topoDualSocketHT", "topoSingleSocketHT",
                                               "topoDualSocketMultiNumaPerSocketHT",
                                               "topoQuadSocketFourWayHT"};
  const std::vector<std::string> scopes = {"pod", "container"};
  const std::vector<std::string> policies = {"single-numa-node", "best-effort", "restricted"};
  long per_run = total_ops / static_cast<long>(topologies.size() * scopes.size());
  Gen g{std::mt19937(20261130)};
  long admitted_count = 0, rejected_count = 0, removed_count = 0;
  for (const auto& topo : topologies) {
    for (const auto& scope : scopes) {
      config::KubeletConfig cfg = config::SeedDefault();
      cfg.topology_manager_scope = scope;
      cfg.topology_manager_policy = policies[static_cast<size_t>(g.Int(0, 2))];
      auto created = Node::Create(FromFake(topo), cfg, {});
      ASSERT_TRUE(created.ok()) << created.status();
      Node& node = **created;
      int next = 0;
      for (long op = 0; op < per_run; ++op) {
        auto pods = node.AdmittedPods();
        if (!pods.empty() && g.Coin(45)) {
          const auto& victim = pods[static_cast<size_t>(g.Int(0, static_cast<int>(pods.size()) - 1))];
          ASSERT_TRUE(node.Remove(victim.namespace_name, victim.name).ok());
          ++removed_count;
        } else {
          std::string yaml = RandomPod(g, next++);
          auto parsed = ParsePods(yaml, "random.yaml");
          ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << yaml;
          auto r = node.Admit(parsed->front());
          ASSERT_TRUE(r.ok()) << r.status() << "\n" << yaml;
          (r->admitted ? admitted_count : rejected_count)++;
        }
        CheckInvariants(node, fmt::format("{} {} {} op {}", topo, scope,
                                          cfg.topology_manager_policy, op));
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
  // The generator must exercise both outcomes, or the invariants prove little.
  EXPECT_GT(admitted_count, total_ops / 10);
  EXPECT_GT(rejected_count, 0);
  EXPECT_GT(removed_count, total_ops / 10);
}

}  // namespace
}  // namespace podtopo
