// The admission pipeline end to end: KEP-5526 and documentation examples with their exact
// cpusets on the kubelet's test topologies. Every expected cpuset below is derived by hand from
// the kubelet's algorithms (spec/cpumanager.md §3, spec/kep5526.md §4); the derivation is
// written next to each case.
#include "admission/node.h"

#include <filesystem>

#include "api/pod_yaml.h"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "testing/topologies.h"
#include "topology/presets.h"

namespace podtopo {
namespace {

constexpr uint64_t kGi = uint64_t{1} << 30;

// topoDualSocketHT as a real node would report it: 12 CPUs, socket s = CPUs of parity s,
// core k = {k, k+6}, NUMA = socket; 16 GiB per NUMA node.
NodeTopology DualSocketHT() {
  NodeTopology node;
  node.cpus = testing::FakeTopology("topoDualSocketHT");
  node.cpus.SetCountsFromCpus();
  for (int id : {0, 1}) {
    NumaNode n;
    n.id = id;
    n.memory = 16 * kGi;
    n.distances = id == 0 ? std::vector<uint64_t>{10, 20} : std::vector<uint64_t>{20, 10};
    node.numa_nodes.push_back(n);
  }
  node.source = "test:dual-socket-ht";
  return node;
}

Pod ParseOne(const std::string& yaml) {
  auto pods = ParsePods(yaml, "test.yaml");
  EXPECT_TRUE(pods.ok()) << pods.status();
  EXPECT_EQ(pods->size(), 1u);
  return pods->front();
}

std::unique_ptr<Node> NewNode(config::KubeletConfig cfg, NodeTopology topo = DualSocketHT()) {
  auto node = Node::Create(std::move(topo), std::move(cfg), {});
  EXPECT_TRUE(node.ok()) << node.status();
  return node.ok() ? std::move(*node) : nullptr;
}

const ContainerAllocation& C(const PodAllocation& a, const std::string& name) {
  for (const auto& c : a.containers) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no container " << name;
  static ContainerAllocation none;
  return none;
}

// A pod-level pod: pod budget `cpu`/`memory`, and containers given as
// "name:kind:cpu:memory" ("-" for no resources; kind app|init|sidecar).
std::string PodYaml(const std::string& name, const std::string& cpu, const std::string& memory,
                    const std::vector<std::string>& containers) {
  std::string init, apps;
  for (const auto& spec : containers) {
    std::vector<std::string> f;
    size_t start = 0;
    while (true) {
      size_t colon = spec.find(':', start);
      f.push_back(spec.substr(start, colon - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    std::string c = "  - name: " + f[0] + "\n    image: busybox\n";
    if (f[1] == "sidecar") c += "    restartPolicy: Always\n";
    if (f[2] != "-") {
      c += "    resources:\n      requests: {cpu: \"" + f[2] + "\", memory: \"" + f[3] +
           "\"}\n      limits: {cpu: \"" + f[2] + "\", memory: \"" + f[3] + "\"}\n";
    }
    (f[1] == "app" ? apps : init) += c;
  }
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
                  "\nspec:\n  resources:\n    requests: {cpu: \"" + cpu + "\", memory: \"" +
                  memory + "\"}\n    limits: {cpu: \"" + cpu + "\", memory: \"" + memory + "\"}\n";
  if (!init.empty()) y += "  initContainers:\n" + init;
  y += "  containers:\n" + apps;
  return y;
}

TEST(NodeTest, SeedPodLandsInThePodSharedPool) {
  auto node = NewNode(config::SeedDefault());
  ASSERT_NE(node, nullptr);
  // Reserved: takeByTopology(all, 1) takes CPU 0 (the lowest, most-filled core).
  EXPECT_EQ(node->ReservedCpus().String(), "0");
  auto pods = LoadPods(testing::SharedDir() + "/seed/pod-level-resource-demo.yaml");
  ASSERT_TRUE(pods.ok()) << pods.status();
  auto a = node->Admit(pods->front());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->admitted) << a->reason << ": " << a->message;
  EXPECT_EQ(a->qos, QosClass::kGuaranteed);
  // Hints {0}p {1}p {0,1} from CPU and memory; single-numa-node keeps {0} (narrowest first).
  ASSERT_TRUE(a->topology_hint.has_value());
  ASSERT_TRUE(a->topology_hint->affinity.has_value());
  EXPECT_EQ(a->topology_hint->affinity->GetBits(), std::vector<int>{0});
  EXPECT_TRUE(a->topology_hint->preferred);
  // Bubble: free NUMA 0 CPUs are 2,4,6,8,10; the free whole cores are {2,8} and {4,10}; the
  // first in the sorted order is core 2 -> 2,8.
  EXPECT_EQ(a->cpus.String(), "2,8");
  // Neither container has requests == limits: both share the pod's pool.
  EXPECT_EQ(C(*a, "worker").cpus.String(), "2,8");
  EXPECT_EQ(C(*a, "worker").assignment, "pod_shared");
  EXPECT_EQ(C(*a, "telemetry-sidecar").cpus.String(), "2,8");
  EXPECT_EQ(C(*a, "telemetry-sidecar").assignment, "pod_shared");
  EXPECT_EQ(node->DefaultCpuSet().String(), "0-1,3-7,9-11");
  ASSERT_EQ(a->memory.size(), 1u);
  EXPECT_EQ(a->memory[0], (MemoryBlockView{"memory", 2 * kGi, {0}}));
}

TEST(NodeTest, DocsPodScopeMixed) {
  auto node = NewNode(config::SeedDefault());
  ASSERT_NE(node, nullptr);
  auto pods = LoadPods(testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml");
  ASSERT_TRUE(pods.ok()) << pods.status();
  auto a = node->Admit(pods->front());
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->admitted) << a->reason << ": " << a->message;
  // Bubble of 4 on NUMA 0: the free whole cores {2,8} and {4,10}.
  EXPECT_EQ(a->cpus.String(), "2,4,8,10");
  // main-app: 2 exclusive CPUs, the first free whole core of the bubble (core 2).
  EXPECT_EQ(C(*a, "main-app").cpus.String(), "2,8");
  EXPECT_EQ(C(*a, "main-app").assignment, "pod_exclusive");
  // Both sidecars share what is left.
  EXPECT_EQ(C(*a, "metrics-sidecar").cpus.String(), "4,10");
  EXPECT_EQ(C(*a, "metrics-sidecar").assignment, "pod_shared");
  EXPECT_EQ(C(*a, "logging-sidecar").cpus.String(), "4,10");
  EXPECT_EQ(node->DefaultCpuSet().String(), "0-1,3,5-7,9,11");
  // Memory: 4Gi pod budget on NUMA 0; main-app 2Gi of it; the shared pool the other 2Gi.
  ASSERT_EQ(a->memory.size(), 1u);
  EXPECT_EQ(a->memory[0], (MemoryBlockView{"memory", 4 * kGi, {0}}));
  ASSERT_EQ(C(*a, "main-app").memory.size(), 1u);
  EXPECT_EQ(C(*a, "main-app").memory[0], (MemoryBlockView{"memory", 2 * kGi, {0}}));
  ASSERT_EQ(C(*a, "metrics-sidecar").memory.size(), 1u);
  EXPECT_EQ(C(*a, "metrics-sidecar").memory[0], (MemoryBlockView{"memory", 2 * kGi, {0}}));
}

TEST(NodeTest, KepFiveCpuPod) {
  auto node = NewNode(config::SeedDefault());
  ASSERT_NE(node, nullptr);
  auto a = node->Admit(ParseOne(
      PodYaml("kep5", "5", "5Gi", {"c1:app:3:1Gi", "c2:app:-:-", "c3:app:-:-"})));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->admitted) << a->reason << ": " << a->message;
  // Bubble: all 5 free CPUs of NUMA 0 (cores {2,8}, {4,10}, then the lone 6).
  EXPECT_EQ(a->cpus.String(), "2,4,6,8,10");
  // c1: whole core {2,8} first, then the CPU of the fullest core: 6 (core 0 has only it).
  EXPECT_EQ(C(*a, "c1").cpus.String(), "2,6,8");
  EXPECT_EQ(C(*a, "c2").cpus.String(), "4,10");
  EXPECT_EQ(C(*a, "c3").cpus.String(), "4,10");
  EXPECT_EQ(node->DefaultCpuSet().String(), "0-1,3,5,7,9,11");
}

config::KubeletConfig WithPolicy(const std::string& policy) {
  config::KubeletConfig cfg = config::SeedDefault();
  cfg.topology_manager_policy = policy;
  return cfg;
}

TEST(NodeTest, EmptySharedPoolIsRejectedPerPolicy) {
  const std::string yaml =
      PodYaml("empty-pool", "5", "5Gi", {"c1:app:3:1Gi", "c2:app:2:1Gi", "c3:app:-:-"});
  const std::string message =
      "pod rejected, sum of exclusive container cpu requests equals pod budget, leaving no "
      "cpus for shared containers";
  // The CPU provider answers {"cpu": []}: restricted and single-numa-node cannot merge a
  // preferred hint and reject at the Topology Manager.
  for (const char* policy : {"single-numa-node", "restricted"}) {
    SCOPED_TRACE(policy);
    auto node = NewNode(WithPolicy(policy));
    ASSERT_NE(node, nullptr);
    auto a = node->Admit(ParseOne(yaml));
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_FALSE(a->admitted);
    EXPECT_EQ(a->reason, "TopologyAffinityError");
    EXPECT_EQ(a->message,
              "Pod was rejected: Pod Scope pod with pod-level resources failed admission under "
              "pod-scope topology manager");
    EXPECT_EQ(node->DefaultCpuSet().String(), "0-11");
  }
  // best-effort admits the merge; AllocatePod then fails with the validation's own error.
  auto node = NewNode(WithPolicy("best-effort"));
  ASSERT_NE(node, nullptr);
  auto a = node->Admit(ParseOne(yaml));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->admitted);
  EXPECT_EQ(a->reason, "EmptyPodSharedPoolError");
  EXPECT_EQ(a->message, "Pod was rejected: " + message);
  EXPECT_EQ(node->DefaultCpuSet().String(), "0-11");
  EXPECT_TRUE(node->AdmittedPods().empty());
}

TEST(NodeTest, InitAndSidecarOrderMatters) {
  struct Case {
    const char* name;
    const char* budget;
    std::vector<std::string> containers;
    const char* reason;  // "" = admitted
  } cases[] = {
      // sidecar 2 then a shared init: the init finds the budget used up.
      {"sidecar-then-init", "2", {"s:sidecar:2:1Gi", "i:init:-:-", "a:app:-:-"},
       "TopologyAffinityError"},
      // the same with a budget of 3 leaves one CPU for the init and the app.
      {"sidecar-then-init-3", "3", {"s:sidecar:2:1Gi", "i:init:-:-", "a:app:-:-"}, ""},
      // an exclusive init and a shared app share the budget over time.
      {"exclusive-init-shared-app", "2", {"i:init:1:1Gi", "a:app:-:-"}, ""},
      // the init first may use the whole budget; the sidecar of 1 and the app fit after it.
      {"big-init-then-sidecar", "2", {"i:init:2:1Gi", "s:sidecar:1:1Gi", "a:app:-:-"}, ""},
      // two sidecars, one exclusive with the whole budget, one shared: nothing left.
      {"two-sidecars", "2", {"s1:sidecar:2:1Gi", "s2:sidecar:-:-", "a:app:-:-"},
       "TopologyAffinityError"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto node = NewNode(config::SeedDefault());
    ASSERT_NE(node, nullptr);
    auto a = node->Admit(ParseOne(PodYaml(c.name, c.budget, "4Gi", c.containers)));
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->admitted, std::string(c.reason).empty()) << a->reason << ": " << a->message;
    EXPECT_EQ(a->reason, c.reason);
  }
}

TEST(NodeTest, SidecarThenSharedInitCpusets) {
  auto node = NewNode(config::SeedDefault());
  ASSERT_NE(node, nullptr);
  auto a = node->Admit(ParseOne(
      PodYaml("order", "3", "4Gi", {"s:sidecar:2:1Gi", "i:init:-:-", "a:app:-:-"})));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->admitted) << a->reason << ": " << a->message;
  // Bubble of 3 on NUMA 0: core {2,8}, then 6 (the fullest core's CPU).
  EXPECT_EQ(a->cpus.String(), "2,6,8");
  // The sidecar takes the whole core {2,8} for the pod's life; the shared init runs on the
  // bubble minus the sidecars declared before it; the app gets the final shared pool.
  EXPECT_EQ(C(*a, "s").cpus.String(), "2,8");
  EXPECT_EQ(C(*a, "s").assignment, "pod_exclusive");
  EXPECT_EQ(C(*a, "i").cpus.String(), "6");
  EXPECT_EQ(C(*a, "a").cpus.String(), "6");
  EXPECT_EQ(C(*a, "a").assignment, "pod_shared");
}

TEST(NodeTest, GateOffGivesNoAlignment) {
  config::KubeletConfig cfg = config::SeedDefault();
  cfg.feature_gates["PodLevelResourceManagers"] = false;
  auto node = NewNode(cfg);
  ASSERT_NE(node, nullptr);
  auto pods = LoadPods(testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml");
  ASSERT_TRUE(pods.ok()) << pods.status();
  auto a = node->Admit(pods->front());
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->admitted) << a->reason << ": " << a->message;
  // Both managers skip pods with pod-level resources: no bubble, every container in the node's
  // shared pool, which still holds every CPU (reserved included).
  EXPECT_TRUE(a->cpus.IsEmpty());
  for (const auto& c : a->containers) {
    EXPECT_EQ(c.assignment, "node_shared") << c.name;
    EXPECT_EQ(c.cpus.String(), "0-11") << c.name;
    EXPECT_TRUE(c.memory.empty()) << c.name;
  }
  EXPECT_EQ(node->DefaultCpuSet().String(), "0-11");
}

TEST(NodeTest, ContainerScopeUsesTheNodePool) {
  config::KubeletConfig cfg = config::SeedDefault();
  cfg.topology_manager_scope = "container";
  auto node = NewNode(cfg);
  ASSERT_NE(node, nullptr);
  auto pods = LoadPods(testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml");
  ASSERT_TRUE(pods.ok()) << pods.status();
  auto a = node->Admit(pods->front());
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->admitted) << a->reason << ": " << a->message;
  // No bubble; main-app gets 2 exclusive CPUs from the node pool (hint NUMA 0, core {2,8});
  // the sidecars run in the node's shared pool.
  EXPECT_TRUE(a->cpus.IsEmpty());
  EXPECT_EQ(C(*a, "main-app").cpus.String(), "2,8");
  EXPECT_EQ(C(*a, "main-app").assignment, "node_exclusive");
  EXPECT_EQ(C(*a, "metrics-sidecar").assignment, "node_shared");
  EXPECT_EQ(C(*a, "metrics-sidecar").cpus.String(), "0-1,3-7,9-11");
  EXPECT_EQ(node->DefaultCpuSet().String(), "0-1,3-7,9-11");
}

TEST(NodeTest, NonIntegralPodBudgetGetsNoCpuBubble) {
  auto node = NewNode(config::SeedDefault());
  ASSERT_NE(node, nullptr);
  auto a = node->Admit(ParseOne(PodYaml("frac", "1500m", "1Gi", {"c:app:-:-"})));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->admitted) << a->reason << ": " << a->message;
  EXPECT_EQ(a->qos, QosClass::kGuaranteed);
  // podGuaranteedCPUs is 0 for 1.5 CPUs: no CPU bubble; memory is still pinned at pod level.
  EXPECT_TRUE(a->cpus.IsEmpty());
  EXPECT_EQ(C(*a, "c").assignment, "node_shared");
  EXPECT_EQ(node->DefaultCpuSet().String(), "0-11");
  ASSERT_EQ(a->memory.size(), 1u);
  EXPECT_EQ(a->memory[0].size, kGi);
}

TEST(NodeTest, BurstablePodLevelGetsNothing) {
  auto node = NewNode(config::SeedDefault());
  ASSERT_NE(node, nullptr);
  auto a = node->Admit(ParseOne(R"(apiVersion: v1
kind: Pod
metadata: {name: burst}
spec:
  resources:
    requests: {cpu: "1", memory: 1Gi}
    limits: {cpu: "2", memory: 1Gi}
  containers:
  - name: c
    image: busybox
)"));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->admitted) << a->reason << ": " << a->message;
  EXPECT_EQ(a->qos, QosClass::kBurstable);
  EXPECT_TRUE(a->cpus.IsEmpty());
  EXPECT_TRUE(a->memory.empty());
  EXPECT_EQ(C(*a, "c").assignment, "node_shared");
  EXPECT_EQ(node->DefaultCpuSet().String(), "0-11");
}

TEST(NodeTest, NodeFitRejectsBeforeTheManagers) {
  auto node = NewNode(config::SeedDefault());
  ASSERT_NE(node, nullptr);
  // Allocatable cpu = 12 - 1 reserved = 11 CPUs.
  auto a = node->Admit(ParseOne(PodYaml("huge", "12", "1Gi", {"c:app:-:-"})));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->admitted);
  EXPECT_EQ(a->reason, "OutOfcpu");
  EXPECT_EQ(a->message,
            "Pod was rejected: Node didn't have enough resource: cpu, requested: 12000, used: 0, "
            "capacity: 11000");
}

// maxPods is the node's pod capacity: the next pod is rejected with OutOfpods.
TEST(NodeTest, MaxPodsIsThePodCapacity) {
  config::KubeletConfig cfg = config::SeedDefault();
  cfg.max_pods = 2;
  auto node = NewNode(cfg);
  ASSERT_NE(node, nullptr);
  for (const char* name : {"a", "b", "c"}) {
    auto a = node->Admit(ParseOne(PodYaml(name, "100m", "64Mi", {"c:app:-:-"})));
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->admitted, std::string(name) != "c") << name;
    if (std::string(name) == "c") {
      EXPECT_EQ(a->reason, "OutOfpods");
      EXPECT_EQ(a->message,
                "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 2, "
                "capacity: 2");
    }
  }
}

TEST(NodeTest, RemoveReleasesTheBubbleAndStateSurvivesARestart) {
  std::string dir = testing::MakeTempDir("podtopo-node");
  {
    auto node = Node::Create(DualSocketHT(), config::SeedDefault(), {dir});
    ASSERT_TRUE(node.ok()) << node.status();
    auto pods = LoadPods(testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml");
    ASSERT_TRUE(pods.ok());
    auto a = (*node)->Admit(pods->front());
    ASSERT_TRUE(a.ok() && a->admitted);
  }
  {
    // A restarted node restores the pod with the same CPUs and does not allocate twice.
    auto node = Node::Create(DualSocketHT(), config::SeedDefault(), {dir});
    ASSERT_TRUE(node.ok()) << node.status();
    auto pods = (*node)->AdmittedPods();
    ASSERT_EQ(pods.size(), 1u);
    EXPECT_EQ(pods[0].cpus.String(), "2,4,8,10");
    EXPECT_EQ(C(pods[0], "main-app").cpus.String(), "2,8");
    EXPECT_EQ((*node)->DefaultCpuSet().String(), "0-1,3,5-7,9,11");
    auto removed = (*node)->Remove("default", "pod-scope-mixed");
    ASSERT_TRUE(removed.ok()) << removed.status();
    // The allocation as it was (issue 22 item 14: only the name was filled).
    EXPECT_EQ(removed->cpus.String(), "2,4,8,10");
    EXPECT_EQ(C(*removed, "main-app").cpus.String(), "2,8");
    EXPECT_EQ((*node)->DefaultCpuSet().String(), "0-11");
  }
  {
    auto node = Node::Create(DualSocketHT(), config::SeedDefault(), {dir});
    ASSERT_TRUE(node.ok()) << node.status();
    EXPECT_TRUE((*node)->AdmittedPods().empty());
    EXPECT_EQ((*node)->DefaultCpuSet().String(), "0-11");
  }
  std::filesystem::remove_all(dir);
}

// A container-scope pod with `cpus` exclusive CPUs (and 1Gi), requests == limits.
Pod ExclusivePod(const std::string& name, int cpus) {
  return ParseOne(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n  containers:\n  - name: "
      "app\n    image: busybox\n    resources:\n      requests: {cpu: \"" + std::to_string(cpus) +
      "\", memory: 1Gi}\n      limits: {cpu: \"" + std::to_string(cpus) + "\", memory: 1Gi}\n");
}

config::KubeletConfig ContainerScope(std::map<std::string, std::string> options) {
  config::KubeletConfig cfg = config::SeedDefault();
  cfg.topology_manager_scope = "container";
  cfg.topology_manager_policy = "best-effort";
  cfg.cpu_manager_policy_options = std::move(options);
  return cfg;
}

// k/k #129078 (fix #129079): on the demo node (64 CPUs, CPU c and c+32 one core, CPU 0
// reserved so core {0,32} is not free) a 60-CPU container is admitted with full-pcpus-only;
// after a restart its own CPUs were no longer "free physical CPUs" and re-admission failed
// with SMTAlignmentError. The restarted node now keeps the pod and its CPUs.
TEST(NodeTest, Issue129078_FullPcpusOnlyContainerScopePodSurvivesRestart) {
  const std::string dir = testing::MakeTempDir("podtopo-node");
  const config::KubeletConfig cfg = ContainerScope({{"full-pcpus-only", "true"}});
  auto demo = Preset("demo");
  ASSERT_TRUE(demo.ok());
  std::string cpus;
  {
    auto node = Node::Create(*demo, cfg, {dir});
    ASSERT_TRUE(node.ok()) << node.status();
    auto a = (*node)->Admit(ExclusivePod("big", 60));
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(a->admitted) << a->message;
    cpus = C(*a, "app").cpus.String();
    EXPECT_EQ(C(*a, "app").cpus.Size(), 60);
  }
  auto node = Node::Create(*demo, cfg, {dir});
  ASSERT_TRUE(node.ok()) << node.status();
  auto pods = (*node)->AdmittedPods();
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(C(pods[0], "app").cpus.String(), cpus);
  std::filesystem::remove_all(dir);
}

// k/k #141196: with strict-cpu-reservation a pod taking every unreserved CPU emptied the
// shared pool, and the state dir could not be loaded again ("default cpuset cannot be empty").
// The pod is refused instead (the fix proposed in k/k #141197, not merged); the state stays.
TEST(NodeTest, Issue141196_StrictReservationRefusesToEmptyTheSharedPool) {
  const std::string dir = testing::MakeTempDir("podtopo-node");
  const config::KubeletConfig cfg = ContainerScope({{"strict-cpu-reservation", "true"}});
  auto demo = Preset("demo");
  ASSERT_TRUE(demo.ok());
  {
    auto node = Node::Create(*demo, cfg, {dir});
    ASSERT_TRUE(node.ok()) << node.status();
    auto a = (*node)->Admit(ExclusivePod("all", 63));
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_FALSE(a->admitted);
    EXPECT_EQ(a->reason, "UnexpectedAdmissionError");
    EXPECT_NE(a->message.find("would leave the node's shared pool (default cpuset 1-63) empty"),
              std::string::npos)
        << a->message;
    auto b = (*node)->Admit(ExclusivePod("most", 62));
    ASSERT_TRUE(b.ok() && b->admitted) << (b.ok() ? b->message : b.status().ToString());
    EXPECT_EQ((*node)->DefaultCpuSet().Size(), 1);
  }
  auto node = Node::Create(*demo, cfg, {dir});
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ((*node)->AdmittedPods().size(), 1u);
  std::filesystem::remove_all(dir);
}

// No upstream issue: with align-by-socket the CPUs may land on another NUMA node of the socket
// than the memory. The kubelet admits such a pod, but after a restart the hints regenerated
// from the allocation (cpu: NUMA 1 / 0,1; memory: NUMA 0) no longer merge to a preferred
// hint and restricted rejects the running pod. podtopo refuses it at admission.
TEST(NodeTest, PodThatARestartWouldRejectIsRefused) {
  auto topo = Preset("dual-socket-multi-numa-per-socket-ht");
  ASSERT_TRUE(topo.ok());
  config::KubeletConfig cfg = config::SeedDefault();
  cfg.feature_gates["CPUManagerPolicyAlphaOptions"] = true;
  cfg.cpu_manager_policy_options = {{"align-by-socket", "true"},
                                    {"distribute-cpus-across-numa", "true"}};
  cfg.topology_manager_policy = "restricted";
  auto node = NewNode(cfg, *topo);
  ASSERT_NE(node, nullptr);
  auto a = node->Admit(ParseOne(PodYaml("p0", "1", "1Gi", {"app0:app:500m:128Mi"})));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->admitted);
  EXPECT_EQ(a->reason, "TopologyAffinityError");
  EXPECT_NE(a->message.find("after a kubelet restart the re-admission of the running pod fails"),
            std::string::npos)
      << a->message;
  EXPECT_NE(a->message.find("devices: no preference; cpu: NUMA 1 (preferred), NUMA 0,1 (preferred), 6 not "
                            "preferred; memory: NUMA 0 (preferred)"), std::string::npos)
      << a->message;
  EXPECT_EQ(node->DefaultCpuSet().String(), "0-79");  // nothing left behind
}

// Options::occupied: the node starts with resources held by pods it does not know, exactly as
// if such a pod held them (the extender rebuilds a node from its NodeResourceTopology so).
TEST(NodeOccupiedTest, StartsInTheGivenStateAndRefusesWhatCannotBeHeld) {
  // Seed configuration: CPU 0 reserved, single-numa-node, pod scope, memory Static.
  Node::Options::Occupied held;
  held.cpus = CpuSet{1, 2, 3, 7, 8, 9};  // NUMA 0 (even CPUs) keeps 4, 6, 10 free; NUMA 1 5, 11
  held.memory[1] = {{"memory", 15 * kGi}};
  Node::Options options;
  options.occupied = &held;
  auto node = Node::Create(DualSocketHT(), config::SeedDefault(), options);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ((*node)->DefaultCpuSet().String(), "0,4-6,10-11");
  EXPECT_TRUE((*node)->AdmittedPods().empty());
  EXPECT_EQ((*node)->MemoryTables().at(1).at("memory").reserved, 15 * kGi);
  // 3 exclusive CPUs fit NUMA 0 only (3 free there), and 2 GiB of memory fit there too.
  auto a = (*node)->Admit(ParseOne(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    resources:
      limits: {cpu: "3", memory: 2Gi}
)"));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->admitted) << a->reason << ": " << a->message;
  EXPECT_EQ(C(*a, "c").cpus, (CpuSet{4, 6, 10})) << C(*a, "c").cpus.String();
  // 2 CPUs and 2 GiB: none left on NUMA 0; NUMA 1 has 2 CPUs but 1 GiB of memory.
  auto b = (*node)->Admit(ParseOne(R"(apiVersion: v1
kind: Pod
metadata: {name: q}
spec:
  containers:
  - name: c
    resources:
      limits: {cpu: "2", memory: 2Gi}
)"));
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->admitted);
  EXPECT_EQ(b->reason, "TopologyAffinityError");

  Node::Options::Occupied reserved_cpu;
  reserved_cpu.cpus = CpuSet{0};
  options.occupied = &reserved_cpu;
  auto bad = Node::Create(DualSocketHT(), config::SeedDefault(), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("CPU 0 is not an allocatable CPU"), std::string::npos)
      << bad.status();
  Node::Options::Occupied too_much;
  too_much.memory[0] = {{"memory", 64 * kGi}};
  options.occupied = &too_much;
  bad = Node::Create(DualSocketHT(), config::SeedDefault(), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("on NUMA node 0 exceed its free"), std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace podtopo
