// Explain tests: every rejection reason podtopo produces, and the seed pod on the default node.
//
// The node is the `demo` preset: 4 NUMA nodes of 16 CPUs (8 cores x 2 threads) and 16Gi each.
// The seed configuration reserves 1 CPU (CPU 0, on NUMA 0) and 1124Mi of memory on NUMA 0, so
// NUMA 0 has 15 free CPUs and the others 16. The assertions check those facts (numbers, masks,
// CPUs), not whole texts.
#include "explain/explain.h"

#include <filesystem>

#include "api/pod_yaml.h"
#include "cpuset/cpuset.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "topology/node_source.h"
#include "util/file.h"

namespace podtopo::explain {
namespace {

using ::testing::HasSubstr;

std::string Testdata(const std::string& name) {
  return testing::SourceDir() + "/src/explain/testdata/" + name;
}

config::KubeletConfig Config(const std::string& path) {
  auto c = config::LoadKubeletConfig(path);
  EXPECT_TRUE(c.ok()) << c.status();
  return c->config;
}

config::KubeletConfig SeedConfig() {
  return Config(testing::SourceDir() + "/docs/examples/kubelet-config.yaml");
}

std::vector<Pod> Pods(const std::string& path) {
  auto p = LoadPods(path);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : std::vector<Pod>{};
}

std::vector<Explanation> ExplainFile(const std::string& pods, const config::KubeletConfig& config,
                             const std::string& state_dir = "") {
  auto node = LoadNode("preset:demo");
  EXPECT_TRUE(node.ok());
  auto ex = ExplainPods({*node, config, state_dir}, Pods(pods));
  EXPECT_TRUE(ex.ok()) << ex.status();
  return ex.ok() ? *ex : std::vector<Explanation>{};
}

const ContainerView& C(const Explanation& e, const std::string& name) {
  for (const auto& c : e.containers) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no container " << name;
  static ContainerView none;
  return none;
}

const MaskCheck* Mask(const Step& s, std::vector<int> numa) {
  for (const auto& m : s.masks) {
    if (m.numa == numa) return &m;
  }
  return nullptr;
}

const Suggestion* Suggested(const Explanation& e, const std::string& kind) {
  for (const auto& s : e.suggestions) {
    if (s.kind == kind) return &s;
  }
  return nullptr;
}

// A pod of one container "app": `cpus` whole CPUs, 1Gi memory and `gpus` example.com/gpu, all
// requests equal to limits (Guaranteed).
std::string GpuPod(const std::string& name, int cpus, int gpus) {
  std::string resources = fmt::format("{{cpu: \"{}\", memory: 1Gi{}}}", cpus,
                                      gpus > 0 ? fmt::format(", example.com/gpu: \"{}\"", gpus)
                                               : "");
  return fmt::format(R"(apiVersion: v1
kind: Pod
metadata: {{name: {}}}
spec:
  containers:
  - name: app
    image: busybox
    resources:
      requests: {}
      limits: {}
)",
                     name, resources, resources);
}

std::string AllWhy(const MaskCheck& m) {
  std::string out;
  for (const auto& w : m.why) out += w + "\n";
  return out;
}

TEST(ExplainTest, SeedPodOnDefaultNode) {
  for (const std::string& path :
       {std::string(testing::SharedDir() + "/seed/pod-level-resource-demo.yaml"),
        testing::SourceDir() + "/docs/examples/pod-level-resource-demo.yaml"}) {
    SCOPED_TRACE(path);
    auto ex = ExplainFile(path, SeedConfig());
    ASSERT_EQ(ex.size(), 1u);
    const Explanation& e = ex[0];
    EXPECT_TRUE(e.admitted);
    EXPECT_EQ(e.qos, "Guaranteed");
    EXPECT_THAT(e.qos_why, HasSubstr("spec.resources"));
    EXPECT_TRUE(e.pod_level);
    EXPECT_EQ(e.scope, "pod");
    EXPECT_EQ(e.pod_budget, "2 CPUs, memory 2Gi");
    // worker declares nothing of its own: the pod shared pool, not exclusive cores.
    const ContainerView& worker = C(e, "worker");
    EXPECT_EQ(worker.placement, "pod-shared");
    EXPECT_EQ(worker.exclusive_cpus, 0);
    EXPECT_THAT(worker.why, HasSubstr("declares no cpu or memory requests"));
    EXPECT_THAT(worker.why, HasSubstr("not on exclusive cores"));
    const ContainerView& sidecar = C(e, "telemetry-sidecar");
    EXPECT_EQ(sidecar.placement, "pod-shared");
    // Both share the pod's 2 CPUs.
    EXPECT_EQ(worker.cpus, e.pod_cpus);
    EXPECT_EQ(sidecar.cpus, e.pod_cpus);
    auto cpus = CpuSet::Parse(e.pod_cpus);
    ASSERT_TRUE(cpus.ok());
    EXPECT_EQ(cpus->Size(), 2);
    // One pod-scope merge: cpu 2 CPUs and memory 2Gi fit on every single node; the narrowest
    // lowest preferred mask is NUMA 0.
    ASSERT_EQ(e.steps.size(), 1u);
    const Step& s = e.steps[0];
    EXPECT_EQ(s.container, "");
    bool saw_cpu = false, saw_memory = false;
    for (const auto& r : s.hints) {
      if (r.provider == "cpu") {
        saw_cpu = true;
        EXPECT_EQ(r.request, "2 CPUs");
        // Every non-empty mask of 4 nodes: 15 hints, the 4 single nodes preferred.
        EXPECT_EQ(r.hints.size(), 15u);
        int preferred = 0;
        for (const auto& h : r.hints) preferred += h.preferred;
        EXPECT_EQ(preferred, 4);
      }
      if (r.provider == "memory") {
        saw_memory = true;
        EXPECT_EQ(r.resource, "memory");
        EXPECT_EQ(r.request, "2Gi");
      }
    }
    EXPECT_TRUE(saw_cpu);
    EXPECT_TRUE(saw_memory);
    ASSERT_TRUE(s.merged.numa.has_value());
    EXPECT_EQ(*s.merged.numa, std::vector<int>{0});
    EXPECT_TRUE(s.merged.preferred);
    EXPECT_TRUE(s.masks.empty());
    EXPECT_TRUE(e.suggestions.empty());
    std::string text = RenderText(e);
    EXPECT_THAT(text, HasSubstr("worker (app): pod shared pool"));
    EXPECT_THAT(text, HasSubstr("merged: NUMA 0 (preferred) -> admit"));
  }
}

TEST(ExplainTest, SingleNumaNodePodScopeNoNodeHoldsTheBudget) {
  auto ex = ExplainFile(Testdata("big-pod-level.yaml"), SeedConfig());
  ASSERT_EQ(ex.size(), 1u);
  const Explanation& e = ex[0];
  EXPECT_FALSE(e.admitted);
  EXPECT_EQ(e.reason, "TopologyAffinityError");
  ASSERT_EQ(e.steps.size(), 1u);
  const Step& s = e.steps[0];
  EXPECT_FALSE(s.admit);
  // single-numa-node tries the single nodes only.
  ASSERT_EQ(s.masks.size(), 4u);
  EXPECT_THAT(AllWhy(*Mask(s, {0})), HasSubstr("cpu: need 20, free 15 on NUMA 0"));
  for (int n : {1, 2, 3}) {
    EXPECT_THAT(AllWhy(*Mask(s, {n})),
                HasSubstr(fmt::format("cpu: need 20, free 16 on NUMA {}", n)));
    EXPECT_FALSE(Mask(s, {n})->fits);
  }
  EXPECT_THAT(e.decision, HasSubstr("single-numa-node"));
  EXPECT_THAT(e.decision, HasSubstr("no single NUMA node holds the request"));
  // The largest request one node holds: 16 CPUs on NUMA 1 (NUMA 0 has 15).
  const Suggestion* smaller = Suggested(e, "smaller-request");
  ASSERT_NE(smaller, nullptr);
  EXPECT_TRUE(smaller->verified);
  EXPECT_THAT(smaller->text, HasSubstr("cpu 16 (instead of 20)"));
  EXPECT_THAT(smaller->text, HasSubstr("NUMA 1"));
  // best-effort admits it across two nodes; restricted does not (cpu prefers 2 nodes,
  // memory 1).
  const Suggestion* policy = Suggested(e, "policy");
  ASSERT_NE(policy, nullptr);
  EXPECT_THAT(policy->text, HasSubstr("best-effort"));
  for (const auto& sug : e.suggestions) EXPECT_THAT(sug.text, ::testing::Not(HasSubstr("restricted")));
  // Even an empty demo node cannot hold 20 CPUs on one NUMA node; larger NUMA nodes would
  // (checked with the demo node's CPUs and memory as one NUMA node).
  const Suggestion* node = Suggested(e, "node");
  ASSERT_NE(node, nullptr);
  EXPECT_TRUE(node->verified);
  EXPECT_THAT(node->text, HasSubstr("16 allocatable CPUs"));
  EXPECT_THAT(node->text, HasSubstr("a node with larger NUMA nodes admits it"));
  EXPECT_THAT(RenderText(e), HasSubstr("cpu: need 20, free 15 on NUMA 0"));
}

TEST(ExplainTest, RestrictedPodScopeMergedHintNotPreferred) {
  auto ex = ExplainFile(Testdata("big-pod-level.yaml"), Config(Testdata("restricted-pod.yaml")));
  ASSERT_EQ(ex.size(), 1u);
  const Explanation& e = ex[0];
  EXPECT_EQ(e.reason, "TopologyAffinityError");
  const Step& s = e.steps.at(0);
  // The merged hint is the best non-preferred mask, two nodes wide.
  ASSERT_TRUE(s.merged.numa.has_value());
  EXPECT_EQ(*s.merged.numa, (std::vector<int>{0, 1}));
  EXPECT_FALSE(s.merged.preferred);
  EXPECT_EQ(s.masks.size(), 15u);
  const MaskCheck* pair = Mask(s, {0, 1});
  ASSERT_NE(pair, nullptr);
  EXPECT_TRUE(pair->fits);
  EXPECT_FALSE(pair->preferred);
  EXPECT_THAT(AllWhy(*pair), HasSubstr("memory: fits, but the hint is not preferred"));
  EXPECT_THAT(AllWhy(*Mask(s, {2})), HasSubstr("cpu: need 20, free 16 on NUMA 2"));
  EXPECT_THAT(e.decision, HasSubstr("restricted admits only a preferred merged hint"));
  EXPECT_THAT(e.decision, HasSubstr("cpu 2 NUMA nodes, memory 1 NUMA node"));
  const Suggestion* policy = Suggested(e, "policy");
  ASSERT_NE(policy, nullptr);
  EXPECT_THAT(policy->text, HasSubstr("best-effort"));
}

// Issue 22 item 12.4: best-effort admits a pod whose merged hint is not preferred; the decision
// says so (the old code: "admitted: best-effort accepted the merged hint NUMA 0,1").
TEST(ExplainTest, BestEffortSaysTheAdmittedHintIsNotPreferred) {
  auto ex = ExplainFile(Testdata("big-pod-level.yaml"), Config(Testdata("best-effort-pod.yaml")));
  ASSERT_EQ(ex.size(), 1u);
  const Explanation& e = ex[0];
  EXPECT_TRUE(e.admitted);
  ASSERT_EQ(e.steps.size(), 1u);
  EXPECT_FALSE(e.steps[0].merged.preferred);
  EXPECT_THAT(e.decision, HasSubstr("best-effort accepted the merged hint NUMA 0,1 (not preferred)"));
  EXPECT_THAT(e.decision, HasSubstr("restricted and single-numa-node would reject it"));
}

// Issue 22 item 12.4: align-by-socket puts the CPUs on NUMA 1 of the hint's socket 0 while the
// merged hint is NUMA 0; explain says so, where the old text only listed the CPUs.
TEST(ExplainTest, AlignBySocketSaysWhyTheCpusAreOffTheHintedNumaNode) {
  auto ex = ExplainFile(Testdata("two-cpus.yaml"), Config(Testdata("align-by-socket.yaml")));
  ASSERT_EQ(ex.size(), 1u);
  const Explanation& e = ex[0];
  ASSERT_TRUE(e.admitted) << e.message;
  ASSERT_EQ(e.steps.size(), 1u);
  ASSERT_TRUE(e.steps[0].merged.numa.has_value());
  EXPECT_EQ(*e.steps[0].merged.numa, std::vector<int>{0});
  const ContainerView& app = C(e, "app");
  // The CPUs really are off the hint: every one of them on NUMA 1 (8-15,40-47).
  auto cpus = CpuSet::Parse(app.cpus);
  ASSERT_TRUE(cpus.ok()) << app.cpus;
  EXPECT_TRUE(cpus->IsSubsetOf(*CpuSet::Parse("8-15,40-47"))) << app.cpus;
  EXPECT_THAT(app.cpus_off_hint,
              HasSubstr(fmt::format("CPUs {} are on NUMA 1, outside the merged hint NUMA 0",
                                    app.cpus)));
  EXPECT_THAT(app.cpus_off_hint, HasSubstr("align-by-socket"));
  EXPECT_THAT(app.cpus_off_hint, HasSubstr("socket 0: NUMA 0,1"));
  EXPECT_THAT(RenderText(e), HasSubstr("where: CPUs " + app.cpus));
  EXPECT_EQ(ToJson(e)["containers"][0]["cpusOffHint"], app.cpus_off_hint);

  // Without the option the CPUs stay on the hinted node and nothing is said.
  config::KubeletConfig plain = Config(Testdata("align-by-socket.yaml"));
  plain.cpu_manager_policy_options.erase("align-by-socket");
  auto ex2 = ExplainFile(Testdata("two-cpus.yaml"), plain);
  ASSERT_EQ(ex2.size(), 1u);
  const ContainerView& app2 = C(ex2[0], "app");
  EXPECT_TRUE(CpuSet::Parse(app2.cpus)->IsSubsetOf(*CpuSet::Parse("0-7,32-39"))) << app2.cpus;
  EXPECT_EQ(app2.cpus_off_hint, "");
}

// The other way CPUs land off the hint: best-effort admits a hint whose NUMA nodes have too
// few free CPUs (the device sits on NUMA 0, whose CPUs a first pod took), and the CPU Manager
// takes the rest from the other NUMA nodes. explain says how many the hint had.
TEST(ExplainTest, CpusOffTheHintBecauseItsNumaNodesHadTooFew) {
  auto node = LoadNode("preset:demo");
  ASSERT_TRUE(node.ok());
  node->devices = {{"example.com/gpu", "gpu0", 0}};
  auto pods = ParsePods(GpuPod("fill", 13, 0) + "---\n" + GpuPod("gpu", 4, 1), "gpu.yaml");
  ASSERT_TRUE(pods.ok()) << pods.status();
  auto ex = ExplainPods({*node, Config(Testdata("best-effort-container.yaml")), ""}, *pods);
  ASSERT_TRUE(ex.ok()) << ex.status();
  ASSERT_EQ(ex->size(), 2u);
  const Explanation& fill = (*ex)[0];
  ASSERT_TRUE(fill.admitted);
  EXPECT_EQ(C(fill, "app").cpus_off_hint, "");
  const Explanation& e = (*ex)[1];
  ASSERT_TRUE(e.admitted) << e.message;
  ASSERT_EQ(*e.steps.at(0).merged.numa, std::vector<int>{0});
  const ContainerView& app = C(e, "app");
  auto cpus = CpuSet::Parse(app.cpus);
  ASSERT_TRUE(cpus.ok());
  auto numa0 = CpuSet::Parse("0-7,32-39");
  CpuSet off = cpus->Difference(*numa0);
  ASSERT_FALSE(off.IsEmpty()) << app.cpus;
  // NUMA 0 had 15 allocatable CPUs (CPU 0 reserved), the first pod took 13: 2 left for 4.
  EXPECT_EQ(cpus->Intersection(*numa0).Size(), 2) << app.cpus;
  EXPECT_THAT(app.cpus_off_hint, HasSubstr(fmt::format("CPUs {} are on NUMA", off.String())));
  EXPECT_THAT(app.cpus_off_hint, HasSubstr("outside the merged hint NUMA 0"));
  EXPECT_THAT(app.cpus_off_hint, HasSubstr("(it had 2 free) were fewer than the 4 requested"));
  EXPECT_THAT(app.cpus_off_hint, HasSubstr("took the other 2 from the rest of the node"));
  EXPECT_THAT(app.cpus_off_hint, ::testing::Not(HasSubstr("align-by-socket")));
}

TEST(ExplainTest, SingleNumaNodeContainerScope) {
  auto ex = ExplainFile(Testdata("container-big.yaml"),
                Config(Testdata("single-numa-node-container.yaml")));
  ASSERT_EQ(ex.size(), 1u);
  const Explanation& e = ex[0];
  EXPECT_EQ(e.reason, "TopologyAffinityError");
  EXPECT_EQ(e.scope, "container");
  // One merge per container; helper's passed and took 2 CPUs of NUMA 0 before app's failed.
  ASSERT_EQ(e.steps.size(), 2u);
  EXPECT_EQ(e.steps[0].container, "helper");
  EXPECT_TRUE(e.steps[0].admit);
  EXPECT_EQ(e.steps[1].container, "app");
  EXPECT_FALSE(e.steps[1].admit);
  EXPECT_THAT(AllWhy(*Mask(e.steps[1], {0})), HasSubstr("cpu: need 20, free 13 on NUMA 0"));
  EXPECT_THAT(AllWhy(*Mask(e.steps[1], {3})), HasSubstr("cpu: need 20, free 16 on NUMA 3"));
  EXPECT_THAT(e.decision, HasSubstr("(container app)"));
  EXPECT_EQ(C(e, "app").placement, "exclusive");
  EXPECT_EQ(C(e, "app").exclusive_cpus, 20);
  const Suggestion* smaller = Suggested(e, "smaller-request");
  ASSERT_NE(smaller, nullptr);
  EXPECT_TRUE(smaller->verified);
  EXPECT_THAT(smaller->text, HasSubstr("container app cpu 16 (instead of 20)"));
}

TEST(ExplainTest, RestrictedContainerScopeMemoryGroupRules) {
  auto ex = ExplainFile(Testdata("container-big.yaml"), Config(Testdata("restricted-container.yaml")));
  ASSERT_EQ(ex.size(), 1u);
  const Explanation& e = ex[0];
  EXPECT_EQ(e.reason, "TopologyAffinityError");
  const Step& s = e.steps.at(1);
  // helper's memory sits alone on NUMA 0, so NUMA 0 cannot join a multi-NUMA memory mask.
  const MaskCheck* m01 = Mask(s, {0, 1});
  ASSERT_NE(m01, nullptr);
  EXPECT_FALSE(m01->fits);
  EXPECT_THAT(AllWhy(*m01), HasSubstr("NUMA 0 already holds single-NUMA memory allocations"));
  const MaskCheck* m12 = Mask(s, {1, 2});
  ASSERT_NE(m12, nullptr);
  EXPECT_TRUE(m12->fits);
  EXPECT_FALSE(m12->preferred);
  ASSERT_TRUE(s.merged.numa.has_value());
  EXPECT_EQ(*s.merged.numa, (std::vector<int>{1, 2}));
}

TEST(ExplainTest, SmtAlignmentError) {
  auto ex = ExplainFile(Testdata("odd-cpus.yaml"), Config(Testdata("full-pcpus-only.yaml")));
  ASSERT_EQ(ex.size(), 1u);
  const Explanation& e = ex[0];
  EXPECT_EQ(e.reason, "SMTAlignmentError");
  ASSERT_TRUE(e.allocation_failure.has_value());
  EXPECT_EQ(e.allocation_failure->provider, "cpu");
  EXPECT_THAT(e.allocation_failure->message, HasSubstr("requested 3 cpus"));
  EXPECT_THAT(e.decision, HasSubstr("2 CPUs per core"));
  // The merge itself admitted it.
  ASSERT_EQ(e.steps.size(), 1u);
  EXPECT_TRUE(e.steps[0].admit);
  const Suggestion* smaller = Suggested(e, "smaller-request");
  ASSERT_NE(smaller, nullptr);
  EXPECT_TRUE(smaller->verified);
  EXPECT_THAT(smaller->text, HasSubstr("cpu 2 (instead of 3)"));
  const Suggestion* option = Suggested(e, "cpu-policy-option");
  ASSERT_NE(option, nullptr);
  EXPECT_TRUE(option->verified);
  EXPECT_THAT(option->text, HasSubstr("full-pcpus-only"));
}

TEST(ExplainTest, EmptyPodSharedPoolErrorUnderBestEffort) {
  auto ex = ExplainFile(Testdata("empty-shared-pool.yaml"), Config(Testdata("best-effort-pod.yaml")));
  ASSERT_EQ(ex.size(), 1u);
  const Explanation& e = ex[0];
  EXPECT_EQ(e.reason, "EmptyPodSharedPoolError");
  EXPECT_EQ(C(e, "app").placement, "pod-exclusive");
  EXPECT_EQ(C(e, "app").exclusive_cpus, 4);
  EXPECT_EQ(C(e, "logger").placement, "pod-shared");
  ASSERT_TRUE(e.allocation_failure.has_value());
  EXPECT_EQ(e.allocation_failure->provider, "cpu");
  EXPECT_THAT(e.decision, HasSubstr("shared pool would be empty"));
  EXPECT_THAT(e.decision, HasSubstr("logger"));
  // The CPU Manager offered no placement for the pod.
  bool no_placement = false;
  for (const auto& r : e.steps.at(0).hints) {
    no_placement |= r.provider == "cpu" && r.state == "no-placement";
  }
  EXPECT_TRUE(no_placement);
  const Suggestion* larger = Suggested(e, "larger-budget");
  ASSERT_NE(larger, nullptr);
  EXPECT_TRUE(larger->verified);
  EXPECT_THAT(larger->text, HasSubstr("cpu 5 (instead of 4)"));
}

TEST(ExplainTest, EmptySharedPoolIsATopologyAffinityErrorUnderSingleNumaNode) {
  auto ex = ExplainFile(Testdata("empty-shared-pool.yaml"), SeedConfig());
  ASSERT_EQ(ex.size(), 1u);
  const Explanation& e = ex[0];
  EXPECT_EQ(e.reason, "TopologyAffinityError");
  ASSERT_EQ(e.steps.at(0).masks.size(), 4u);
  EXPECT_THAT(AllWhy(e.steps[0].masks[0]), HasSubstr("shared pool would get no CPUs"));
  EXPECT_THAT(e.decision, HasSubstr("shared pool would be empty"));
  const Suggestion* larger = Suggested(e, "larger-budget");
  ASSERT_NE(larger, nullptr);
  EXPECT_TRUE(larger->verified);
}

// Issue 22 item 9: for the docs' shop/all-in-main (4 CPUs, the main container takes all of
// them) explain advised "a node with larger NUMA nodes", which a 4-CPU pod on 16-CPU NUMA
// nodes does not need and which would not help. Every advice is checked by an admission.
TEST(ExplainTest, NoAdviceThatWouldNotHelp) {
  auto ex = ExplainFile(testing::SourceDir() + "/docs/examples/pod-sidecar-list.yaml",
                        SeedConfig());
  const Explanation* e = nullptr;
  for (const auto& x : ex) {
    if (x.pod == "shop/all-in-main") e = &x;
  }
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->reason, "TopologyAffinityError");
  for (const auto& sug : e->suggestions) {
    EXPECT_THAT(sug.text, ::testing::Not(HasSubstr("larger NUMA nodes admits"))) << sug.kind;
    EXPECT_THAT(sug.text, ::testing::Not(HasSubstr("a smaller request"))) << sug.kind;
  }
  const Suggestion* node = Suggested(*e, "node");
  ASSERT_NE(node, nullptr);
  EXPECT_FALSE(node->verified);
  EXPECT_THAT(node->text, HasSubstr("the pod itself must change"));
  // What does help is checked: a larger pod budget.
  const Suggestion* larger = Suggested(*e, "larger-budget");
  ASSERT_NE(larger, nullptr);
  EXPECT_TRUE(larger->verified);
  EXPECT_THAT(larger->text, HasSubstr("cpu 5 (instead of 4)"));
}

TEST(ExplainTest, OutOfCpu) {
  auto ex = ExplainFile(Testdata("too-much-cpu.yaml"), SeedConfig());
  ASSERT_EQ(ex.size(), 1u);
  const Explanation& e = ex[0];
  EXPECT_EQ(e.reason, "OutOfcpu");
  ASSERT_TRUE(e.node_fit.has_value());
  EXPECT_EQ(e.node_fit->resource, "cpu");
  EXPECT_EQ(e.node_fit->requested, 100000);
  EXPECT_EQ(e.node_fit->capacity, 63000);  // 64 CPUs - 1 reserved
  EXPECT_EQ(e.node_fit->used, 0);
  EXPECT_TRUE(e.steps.empty());  // the managers never ran
  EXPECT_THAT(e.decision, HasSubstr("63 CPUs left"));
  const Suggestion* smaller = Suggested(e, "smaller-request");
  ASSERT_NE(smaller, nullptr);
  EXPECT_THAT(smaller->text, HasSubstr("at most 63 CPUs"));
  // 63 exclusive CPUs would still need 4 NUMA nodes under single-numa-node.
  EXPECT_FALSE(smaller->verified);
  EXPECT_THAT(smaller->text, HasSubstr("TopologyAffinityError"));
  // Issue 22 item 9: "a node with more allocatable cpu" is checked too. With the 37 missing
  // CPUs added (19 cores of 2 threads) single-numa-node still cannot place 100 CPUs.
  const Suggestion* node = Suggested(e, "node");
  ASSERT_NE(node, nullptr);
  EXPECT_FALSE(node->verified);
  EXPECT_THAT(node->text, HasSubstr("more allocatable cpu alone would not help: with 19 more "
                                    "cores (38 CPUs) spread over NUMA 0,1,2,3 the node still "
                                    "rejects it (TopologyAffinityError"));
}

TEST(ExplainTest, OutOfMemory) {
  auto ex = ExplainFile(Testdata("too-much-memory.yaml"), SeedConfig());
  ASSERT_EQ(ex.size(), 1u);
  const Explanation& e = ex[0];
  EXPECT_EQ(e.reason, "OutOfmemory");
  ASSERT_TRUE(e.node_fit.has_value());
  EXPECT_EQ(e.node_fit->requested, int64_t{100} << 30);
  // 4 x 16Gi - systemReserved 1Gi - eviction 100Mi.
  EXPECT_EQ(e.node_fit->capacity, (int64_t{64} << 30) - (int64_t{1} << 30) - (int64_t{100} << 20));
  EXPECT_THAT(e.decision, HasSubstr("64412Mi"));
}

TEST(ExplainTest, OutOfExtendedResource) {
  auto ex = ExplainFile(Testdata("hugepages.yaml"), SeedConfig());
  ASSERT_EQ(ex.size(), 1u);
  const Explanation& e = ex[0];
  EXPECT_EQ(e.reason, "OutOfhugepages-2Mi");
  ASSERT_TRUE(e.node_fit.has_value());
  EXPECT_EQ(e.node_fit->requested, int64_t{64} << 20);
  EXPECT_EQ(e.node_fit->capacity, 0);
  const Suggestion* node = Suggested(e, "node");
  ASSERT_NE(node, nullptr);
  // Issue 22 item 9: checked by admitting the pod on the node with the hugepages added.
  EXPECT_TRUE(node->verified);
  EXPECT_THAT(node->text, HasSubstr("a node with 64Mi more allocatable hugepages-2Mi admits it "
                                    "(checked with 1Gi more hugepages-2Mi on each of the 4 NUMA "
                                    "nodes)"));
}

// Issue 22 item 9: the advice for a missing extended resource is checked with the devices
// added; a missing amount that alignment cannot place is said not to help.
TEST(ExplainTest, MoreAllocatableAdviceIsChecked) {
  auto node = LoadNode("preset:demo");
  ASSERT_TRUE(node.ok());
  node->devices = {{"example.com/gpu", "gpu0", 0}};
  auto pods = ParsePods(GpuPod("three-gpus", 2, 3), "gpus.yaml");
  ASSERT_TRUE(pods.ok()) << pods.status();
  // best-effort: 3 devices on any NUMA nodes admit it.
  auto ex = ExplainPods({*node, Config(Testdata("best-effort-container.yaml")), ""}, *pods);
  ASSERT_TRUE(ex.ok()) << ex.status();
  const Explanation& e = (*ex)[0];
  EXPECT_EQ(e.reason, "OutOfexample.com/gpu");
  const Suggestion* s = Suggested(e, "node");
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->verified) << s->text;
  EXPECT_THAT(s->text, HasSubstr("a node with 2 more allocatable example.com/gpu admits it "
                                 "(checked with 2 more example.com/gpu devices spread over "
                                 "NUMA 0,1)"));
  // single-numa-node: the added devices land on other NUMA nodes than gpu0, so no single node
  // holds 3, and the suggestion says more devices alone do not help.
  auto strict = ExplainPods({*node, SeedConfig(), ""}, *pods);
  ASSERT_TRUE(strict.ok()) << strict.status();
  const Suggestion* s2 = Suggested((*strict)[0], "node");
  ASSERT_NE(s2, nullptr);
  EXPECT_FALSE(s2->verified);
  EXPECT_THAT(s2->text, HasSubstr("more allocatable example.com/gpu alone would not help"));
  EXPECT_THAT(s2->text, HasSubstr("TopologyAffinityError"));
}

TEST(ExplainTest, UnexpectedAdmissionErrorFromMemoryGroups) {
  // Pods are explained in order: the first two take memory groups {0,1} and {2,3}.
  auto ex = ExplainFile(Testdata("memory-groups.yaml"), Config(Testdata("best-effort-container.yaml")));
  ASSERT_EQ(ex.size(), 3u);
  EXPECT_TRUE(ex[0].admitted);
  EXPECT_EQ(*ex[0].steps.at(0).merged.numa, (std::vector<int>{0, 1}));
  EXPECT_TRUE(ex[1].admitted);
  EXPECT_EQ(*ex[1].steps.at(0).merged.numa, (std::vector<int>{2, 3}));
  const Explanation& e = ex[2];
  EXPECT_EQ(e.reason, "UnexpectedAdmissionError");
  ASSERT_TRUE(e.allocation_failure.has_value());
  EXPECT_EQ(e.allocation_failure->provider, "memory");
  EXPECT_EQ(e.allocation_failure->container, "app");
  EXPECT_THAT(e.decision, HasSubstr("need 11776Mi"));
  EXPECT_THAT(e.decision, HasSubstr("group 0,1"));
  // The Memory Manager gave no hint for it.
  bool memory_no_preference = false;
  for (const auto& r : e.steps.at(0).hints) {
    memory_no_preference |= r.provider == "memory" && r.state == "no-preference";
  }
  EXPECT_TRUE(memory_no_preference);
  // Alone on the node it fits.
  const Suggestion* empty = Suggested(e, "empty-node");
  ASSERT_NE(empty, nullptr);
  EXPECT_TRUE(empty->verified);
}

TEST(ExplainTest, SingleNumaNodeCpuAndMemoryFreeOnDifferentNodes) {
  auto ex = ExplainFile(Testdata("memory-cpu-split.yaml"), SeedConfig());
  ASSERT_EQ(ex.size(), 5u);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(ex[i].admitted) << ex[i].pod;
  const Explanation& e = ex[4];
  EXPECT_EQ(e.reason, "TopologyAffinityError");
  const Step& s = e.steps.at(0);
  // 12Gi taken on NUMA 0-2: NUMA 0 keeps 16Gi - 1124Mi - 12Gi = 2972Mi, NUMA 1 and 2 4Gi;
  // NUMA 3's 16 CPUs are all taken.
  EXPECT_THAT(AllWhy(*Mask(s, {0})), HasSubstr("memory: need 6Gi, free 2972Mi on NUMA 0"));
  EXPECT_THAT(AllWhy(*Mask(s, {1})), HasSubstr("memory: need 6Gi, free 4Gi on NUMA 1"));
  EXPECT_THAT(AllWhy(*Mask(s, {3})), HasSubstr("cpu: need 2, free 0 on NUMA 3"));
  EXPECT_THAT(e.decision,
              HasSubstr("cpu fits on NUMA 0,1,2, memory fits on NUMA 3: no node has them all"));
  const Suggestion* smaller = Suggested(e, "smaller-request");
  ASSERT_NE(smaller, nullptr);
  EXPECT_TRUE(smaller->verified);
  EXPECT_THAT(smaller->text, HasSubstr("memory 4Gi (instead of 6Gi)"));
}

TEST(ExplainTest, UnexpectedAdmissionErrorWhenNoNodeHoldsTheMemory) {
  // Under single-numa-node too: the Memory Manager has no mask for 8Gi, so it gives no hint at
  // all ("no preference"), the merge follows the CPUs and its Allocate fails.
  auto ex = ExplainFile(Testdata("memory-fill.yaml"), SeedConfig());
  ASSERT_EQ(ex.size(), 5u);
  const Explanation& e = ex[4];
  EXPECT_EQ(e.reason, "UnexpectedAdmissionError");
  ASSERT_TRUE(e.allocation_failure.has_value());
  EXPECT_EQ(e.allocation_failure->provider, "memory");
  EXPECT_THAT(e.decision, HasSubstr("NUMA 1: 4Gi free"));
  EXPECT_THAT(e.decision, HasSubstr("NUMA 0: 2972Mi free"));
  const Suggestion* smaller = Suggested(e, "smaller-request");
  ASSERT_NE(smaller, nullptr);
  EXPECT_TRUE(smaller->verified);
  EXPECT_THAT(smaller->text, HasSubstr("memory 4Gi (instead of 8Gi)"));
}

TEST(ExplainTest, DeviceShortagePerNumaNode) {
  // The demo node with one device on each of NUMA 0, 1 and 2.
  auto node = LoadNode("preset:demo");
  ASSERT_TRUE(node.ok());
  node->devices = {{"example.com/gpu", "gpu0", 0},
                   {"example.com/gpu", "gpu1", 1},
                   {"example.com/gpu", "gpu2", 2}};
  auto pods = ParsePods(GpuPod("one-gpu", 2, 1) + "---\n" + GpuPod("two-gpus", 2, 2), "gpus.yaml");
  ASSERT_TRUE(pods.ok()) << pods.status();
  auto ex = ExplainPods({*node, SeedConfig(), ""}, *pods);
  ASSERT_TRUE(ex.ok()) << ex.status();
  ASSERT_EQ(ex->size(), 2u);
  // one-gpu lands on NUMA 0 (lowest single node with a device, CPUs and memory).
  EXPECT_TRUE((*ex)[0].admitted);
  EXPECT_EQ(*(*ex)[0].steps.at(0).merged.numa, std::vector<int>{0});
  const Explanation& e = (*ex)[1];
  EXPECT_EQ(e.reason, "TopologyAffinityError");
  const Step& s = e.steps.at(0);
  EXPECT_THAT(AllWhy(*Mask(s, {0})), HasSubstr("example.com/gpu: need 2, free 0 on NUMA 0"));
  EXPECT_THAT(AllWhy(*Mask(s, {1})), HasSubstr("example.com/gpu: need 2, free 1 on NUMA 1"));
  EXPECT_THAT(AllWhy(*Mask(s, {3})), HasSubstr("example.com/gpu: need 2, free 0 on NUMA 3"));
  const Suggestion* policy = Suggested(e, "policy");
  ASSERT_NE(policy, nullptr);
  EXPECT_THAT(policy->text, HasSubstr("best-effort"));
  bool device_hints = false;
  for (const auto& r : s.hints) {
    if (r.provider == "devices" && r.resource == "example.com/gpu") {
      device_hints = true;
      EXPECT_EQ(r.request, "2");
    }
  }
  EXPECT_TRUE(device_hints);
}

TEST(ExplainTest, NeverWritesTheStateDir) {
  std::string dir = testing::MakeTempDir("explain");
  auto ex = ExplainFile(testing::SourceDir() + "/docs/examples/pod-level-resource-demo.yaml",
                SeedConfig(), dir);
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_TRUE(ex[0].admitted);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(ExplainTest, PodAlreadyInTheStateDirIsExplainedAndTheStateKept) {
  std::string dir = testing::MakeTempDir("explain-state");
  std::string seed = testing::SourceDir() + "/docs/examples/pod-level-resource-demo.yaml";
  std::string held;
  {
    auto node = Node::Create(LoadNode("preset:demo").value(), SeedConfig(), {dir});
    ASSERT_TRUE(node.ok()) << node.status();
    auto a = (*node)->Admit(Pods(seed).at(0));
    ASSERT_TRUE(a.ok() && a->admitted);
    held = a->cpus.String();
  }
  std::map<std::string, std::string> before;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    before[f.path().string()] = ReadFile(f.path().string()).value();
  }
  ASSERT_EQ(before.size(), 3u);
  auto ex = ExplainFile(seed, SeedConfig(), dir);
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_TRUE(ex[0].admitted);
  EXPECT_THAT(ex[0].note, HasSubstr("already admitted"));
  EXPECT_EQ(ex[0].pod_cpus, held);
  EXPECT_EQ(C(ex[0], "worker").cpus, held);
  EXPECT_THAT(C(ex[0], "worker").why, HasSubstr("not on exclusive cores"));
  EXPECT_EQ(ex[0].steps.size(), 1u);
  std::map<std::string, std::string> after;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    after[f.path().string()] = ReadFile(f.path().string()).value();
  }
  EXPECT_EQ(before, after);
}

TEST(ExplainTest, JsonIsStable) {
  auto ex = ExplainFile(Testdata("big-pod-level.yaml"), SeedConfig());
  ASSERT_EQ(ex.size(), 1u);
  nlohmann::ordered_json j = ToJson(ex[0]);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "pod", "kubeletVersion", "versionNotes", "admitted", "reason",
                      "message", "qosClass", "qosReason",
                      "topologyManagerPolicy", "scope", "podLevel", "podBudget", "cpus",
                      "cpusOffHint", "containers", "mergeSteps", "nodeFit", "allocationFailure", "decision",
                      "suggestions", "note"}));
  EXPECT_EQ(j["mergeSteps"][0]["masksTried"][0]["numaNodes"], nlohmann::ordered_json::array({0}));
  EXPECT_EQ(j["mergeSteps"][0]["masksTried"][0]["why"][0], "cpu: need 20, free 15 on NUMA 0");
  EXPECT_EQ(RenderJson(ex), RenderJson(ExplainFile(Testdata("big-pod-level.yaml"), SeedConfig())));
}

}  // namespace
}  // namespace podtopo::explain
