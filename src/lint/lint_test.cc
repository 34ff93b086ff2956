#include "lint/lint.h"

#include <string>
#include <vector>

#include "admission/node.h"
#include "api/pod_gates.h"
#include "api/pod_yaml.h"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "topology/node_source.h"

namespace podtopo::lint {
namespace {

std::string SeedConfigPath() {
  return testing::SharedDir() + "/seed/kubelet-config-as-in-article.yaml";
}
std::string TutorialConfigPath() {
  return testing::SourceDir() + "/docs/examples/kubelet-config.yaml";
}
std::string SeedPodPath() { return testing::SharedDir() + "/seed/pod-level-resource-demo.yaml"; }
std::string MixedPodPath() { return testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml"; }

// The tutorial configuration without comments; tests edit it with Edit().
constexpr char kBase[] = R"(apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
featureGates:
  PodLevelResources: true
  PodLevelResourceManagers: true
cpuManagerPolicy: static
cpuManagerReconcilePeriod: 5s
memoryManagerPolicy: Static
topologyManagerPolicy: single-numa-node
topologyManagerScope: pod
systemReserved:
  cpu: "1"
  memory: 1Gi
evictionHard:
  memory.available: 100Mi
reservedMemory:
  - numaNode: 0
    limits:
      memory: 1124Mi
)";

// kBase with one line replaced (the line must exist).
std::string Edit(const std::string& from, const std::string& to) {
  std::string s = kBase;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

NodeTopology Demo() { return LoadNode("preset:demo").value(); }

Pod PodFrom(const std::string& yaml) {
  auto pods = ParsePods(yaml, "pod.yaml");
  EXPECT_TRUE(pods.ok()) << pods.status();
  return pods.ok() ? pods->front() : Pod{};
}

std::vector<Pod> PodsFromFile(const std::string& path) {
  auto pods = LoadPods(path);
  EXPECT_TRUE(pods.ok()) << pods.status();
  return pods.ok() ? *pods : std::vector<Pod>{};
}

LintReport LintText(const std::string& config_yaml, const std::vector<Pod>& pods = {}) {
  return Lint(config::ParseKubeletConfig(config_yaml, "kubelet.yaml"), Demo(), pods);
}

std::vector<Finding> WithCode(const LintReport& r, const std::string& code) {
  std::vector<Finding> out;
  for (const Finding& f : r.findings) {
    if (f.code == code) out.push_back(f);
  }
  return out;
}

std::string Dump(const LintReport& r) { return RenderLintTable(r); }

// A pod with pod-level resources `cpu`/`mem` and the given container YAML lines.
std::string PodYaml(const std::string& cpu, const std::string& mem, const std::string& body,
                    const std::string& limit_cpu = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  resources:\n"
         "    requests:\n      cpu: \"" +
         cpu + "\"\n      memory: " + mem + "\n    limits:\n      cpu: \"" +
         (limit_cpu.empty() ? cpu : limit_cpu) + "\"\n      memory: " + mem + "\n" + body;
}

constexpr char kNoResources[] = "  containers:\n  - name: app\n    image: x\n";

std::string Guaranteed(const std::string& name, const std::string& cpu, const std::string& mem) {
  return "  - name: " + name + "\n    image: x\n    resources:\n      requests: {cpu: \"" + cpu +
         "\", memory: " + mem + "}\n      limits: {cpu: \"" + cpu + "\", memory: " + mem + "}\n";
}

// ---- the seed and the tutorial configurations ----

TEST(LintSeed, FlagsMemoryManagerWithSuggestion) {
  auto parsed = config::LoadKubeletConfig(SeedConfigPath());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  LintReport r = Lint(*parsed, Demo(), PodsFromFile(SeedPodPath()));
  auto unknown = WithCode(r, "unknown-field");
  ASSERT_EQ(unknown.size(), 1u) << Dump(r);
  EXPECT_EQ(unknown[0].field, "memoryManager");
  EXPECT_EQ(unknown[0].severity, Severity::kWarning);
  EXPECT_NE(unknown[0].message.find("did you mean memoryManagerPolicy?"), std::string::npos);
  EXPECT_NE(unknown[0].hint.find("memoryManagerPolicy: Static"), std::string::npos);
  EXPECT_EQ(unknown[0].line, 12);
  EXPECT_EQ(unknown[0].file, SeedConfigPath());
  // Its consequence: the Memory Manager stays None.
  auto none = WithCode(r, "memory-policy-none");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].message.find("memoryManager"), std::string::npos);
  // The static CPU policy has no reservation and the file has no apiVersion/kind: errors.
  EXPECT_EQ(WithCode(r, "cpu-reservation").size(), 1u);
  EXPECT_EQ(WithCode(r, "missing-type-meta").size(), 2u);
  EXPECT_EQ(WithCode(r, "gate-implicit").size(), 1u);
  EXPECT_TRUE(r.HasErrors());
}

TEST(LintSeed, SeedPodRoles) {
  auto parsed = config::LoadKubeletConfig(SeedConfigPath());
  ASSERT_TRUE(parsed.ok());
  LintReport r = Lint(*parsed, Demo(), PodsFromFile(SeedPodPath()));
  ASSERT_EQ(r.pods.size(), 1u);
  const PodRoles& p = r.pods[0];
  EXPECT_EQ(p.pod, "default/pod-level-resource-demo");
  EXPECT_EQ(p.qos, QosClass::kGuaranteed);
  EXPECT_EQ(p.bubble_cpus, 2);
  ASSERT_EQ(p.containers.size(), 2u);
  EXPECT_EQ(p.containers[0].name, "worker");
  EXPECT_EQ(p.containers[0].role, "pod_shared");
  EXPECT_EQ(p.containers[1].name, "telemetry-sidecar");
  EXPECT_EQ(p.containers[1].role, "pod_shared");
  auto info = WithCode(r, "no-exclusive-container");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_NE(info[0].message.find("worker"), std::string::npos);
  EXPECT_NE(info[0].message.find("2-CPU"), std::string::npos);
}

TEST(LintTutorial, CleanWithoutPods) {
  auto parsed = config::LoadKubeletConfig(TutorialConfigPath());
  ASSERT_TRUE(parsed.ok());
  LintReport r = Lint(*parsed, Demo(), {});
  EXPECT_EQ(r.Count(Severity::kError), 0) << Dump(r);
  EXPECT_EQ(r.Count(Severity::kWarning), 0) << Dump(r);
}

TEST(LintTutorial, CleanWithTheDocsPods) {
  auto parsed = config::LoadKubeletConfig(TutorialConfigPath());
  ASSERT_TRUE(parsed.ok());
  std::vector<Pod> pods = PodsFromFile(SeedPodPath());
  for (Pod& p : PodsFromFile(MixedPodPath())) pods.push_back(p);
  LintReport r = Lint(*parsed, Demo(), pods);
  EXPECT_EQ(r.Count(Severity::kError), 0) << Dump(r);
  EXPECT_EQ(r.Count(Severity::kWarning), 0) << Dump(r);
  ASSERT_EQ(r.pods.size(), 2u);
  const PodRoles& mixed = r.pods[1];
  EXPECT_EQ(mixed.bubble_cpus, 4);
  ASSERT_EQ(mixed.containers.size(), 3u);
  EXPECT_EQ(mixed.containers[0].name, "metrics-sidecar");
  EXPECT_EQ(mixed.containers[0].kind, ContainerKind::kSidecar);
  EXPECT_EQ(mixed.containers[0].role, "pod_shared");
  EXPECT_EQ(mixed.containers[1].role, "pod_shared");
  EXPECT_EQ(mixed.containers[2].name, "main-app");
  EXPECT_EQ(mixed.containers[2].role, "pod_exclusive");
  EXPECT_EQ(mixed.containers[2].exclusive_cpus, 2);
}

TEST(LintTutorial, BaseEqualsTutorial) {
  // kBase (which the per-check tests edit) has the tutorial's settings.
  auto tutorial = config::LoadKubeletConfig(TutorialConfigPath());
  ASSERT_TRUE(tutorial.ok());
  EXPECT_TRUE(config::ParseKubeletConfig(kBase, "b").config.SameSettings(tutorial->config));
}

// ---- roles agree with the admission pipeline (the CPU Manager's ClassifyContainer) ----

TEST(LintRoles, MatchAdmission) {
  const std::vector<std::string> configs = {
      kBase,
      Edit("topologyManagerScope: pod", "topologyManagerScope: container"),
      Edit("topologyManagerPolicy: single-numa-node", "topologyManagerPolicy: none"),
      Edit("  PodLevelResourceManagers: true", "  PodLevelResourceManagers: false"),
      Edit("topologyManagerPolicy: single-numa-node", "topologyManagerPolicy: best-effort"),
  };
  std::vector<Pod> pods = PodsFromFile(SeedPodPath());
  for (Pod& p : PodsFromFile(MixedPodPath())) pods.push_back(p);
  pods.push_back(
      PodFrom(PodYaml("4", "4Gi",
                      "  initContainers:\n" + Guaranteed("side", "1", "1Gi") +
                          "    restartPolicy: Always\n  containers:\n" +
                          Guaranteed("main", "2", "2Gi") + "  - name: shared\n    image: x\n")));
  pods.push_back(
      PodFrom("apiVersion: v1\nkind: Pod\nmetadata:\n  name: classic\nspec:\n"
              "  containers:\n" +
              Guaranteed("a", "2", "1Gi") + Guaranteed("b", "500m", "1Gi")));
  pods.push_back(PodFrom(PodYaml("1500m", "2Gi", kNoResources)));
  pods.push_back(PodFrom(
      PodYaml("2", "2Gi", std::string("  containers:\n") + Guaranteed("a", "1", "1Gi"), "3")));
  for (size_t ci = 0; ci < configs.size(); ++ci) {
    auto parsed = config::ParseKubeletConfig(configs[ci], "kubelet.yaml");
    for (const Pod& pod : pods) {
      auto node = Node::Create(Demo(), parsed.config, {});
      ASSERT_TRUE(node.ok()) << node.status();
      auto admitted = (*node)->Admit(pod);
      ASSERT_TRUE(admitted.ok()) << admitted.status();
      ASSERT_TRUE(admitted->admitted) << pod.name << " config " << ci << ": " << admitted->message;
      PodRoles roles = ClassifyPod(parsed.config, pod);
      ASSERT_EQ(roles.containers.size(), admitted->containers.size());
      for (size_t i = 0; i < roles.containers.size(); ++i) {
        const ContainerAllocation& a = admitted->containers[i];
        EXPECT_EQ(roles.containers[i].name, a.name);
        EXPECT_EQ(roles.containers[i].role, a.assignment)
            << "config " << ci << " pod " << pod.name << " container " << a.name;
        if (roles.containers[i].exclusive_cpus > 0) {
          EXPECT_EQ(roles.containers[i].exclusive_cpus, a.cpus.Size()) << a.name;
        }
      }
      EXPECT_EQ(roles.bubble_cpus, admitted->cpus.Size()) << pod.name << " config " << ci;
    }
  }
}

// k/k #135082 (PodLevelResourcesFixKubeletQOSClass): `spec.resources: {}` with a 2/2-CPU
// container. lint, admit and the report all take the QoS from GetPodQos with the
// configuration's gates, so they agree: Guaranteed with the v1.37 default (the fix on),
// BestEffort with the fix off.
void ExpectSameQosEverywhere(const std::string& config_yaml, QosClass expected) {
  const std::string yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: empty}\nspec:\n"
                           "  resources: {}\n  containers:\n" +
                           Guaranteed("main", "2", "1Gi");
  auto parsed = config::ParseKubeletConfig(config_yaml, "kubelet.yaml");
  auto pods = ParsePods(yaml, "pod.yaml", {.gates = PodGatesFromConfig(parsed.config)});
  ASSERT_TRUE(pods.ok()) << pods.status();
  const Pod& pod = pods->front();
  PodRoles roles = ClassifyPod(parsed.config, pod);
  EXPECT_EQ(QosClassName(roles.qos), std::string(QosClassName(expected)));
  auto node = Node::Create(Demo(), parsed.config, {});
  ASSERT_TRUE(node.ok()) << node.status();
  auto admitted = (*node)->Admit(pod);
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  EXPECT_EQ(QosClassName(admitted->qos), std::string(QosClassName(expected)));
  LintReport report = Lint(parsed, Demo(), {pod});
  ASSERT_EQ(report.pods.size(), 1u);
  EXPECT_EQ(report.pods[0].qos, expected);
  ASSERT_EQ(roles.containers.size(), 1u);
  ASSERT_EQ(admitted->containers.size(), 1u);
  const int exclusive = expected == QosClass::kGuaranteed ? 2 : 0;
  EXPECT_EQ(roles.containers[0].exclusive_cpus, exclusive);
  if (exclusive > 0) EXPECT_EQ(admitted->containers[0].cpus.Size(), exclusive);
}

TEST(LintRoles, K8s135082EmptyPodResourcesSameQosAsAdmit) {
  ExpectSameQosEverywhere(kBase, QosClass::kGuaranteed);
}

TEST(LintRoles, K8s135082EmptyPodResourcesWithoutTheFixIsBestEffortEverywhere) {
  ExpectSameQosEverywhere(
      Edit("  PodLevelResources: true\n",
           "  PodLevelResources: true\n  PodLevelResourcesFixKubeletQOSClass: false\n"),
      QosClass::kBestEffort);
}

TEST(LintRoles, CpuPolicyNoneIsNodeShared) {
  auto parsed =
      config::ParseKubeletConfig(Edit("cpuManagerPolicy: static", "cpuManagerPolicy: none"), "k");
  PodRoles roles = ClassifyPod(parsed.config, PodsFromFile(MixedPodPath()).front());
  for (const ContainerRole& c : roles.containers) EXPECT_EQ(c.role, "node_shared") << c.name;
  EXPECT_EQ(roles.bubble_cpus, 0);
}

// ---- one test per check: firing and not firing ----

TEST(LintChecks, GateDependency) {
  LintReport fires = LintText(Edit("  PodLevelResources: true", "  PodLevelResources: false"));
  auto f = WithCode(fires, "gate-dependency");
  // PodLevelResourceManagers (on in the file) and the three default-on gates of v1.37 that
  // depend on PodLevelResources (k/k #140848, #140631).
  ASSERT_EQ(f.size(), 4u) << Dump(fires);
  const std::string together =
      "featureGates: {InPlacePodLevelResourcesVerticalScaling: false, "
      "PodLevelResourceManagers: false, PodLevelResourcesFixDefaulting: false, "
      "PodLevelResourcesFixKubeletQOSClass: false}";
  for (const auto& x : f) {
    EXPECT_EQ(x.severity, Severity::kError);
    EXPECT_NE(x.hint.find("set featureGates.PodLevelResources: true"), std::string::npos) << x.hint;
    EXPECT_NE(x.hint.find(together), std::string::npos) << x.hint;
  }
  EXPECT_EQ(f[0].message,
            "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that "
            "are disabled: [PodLevelResources]");
  EXPECT_EQ(f[0].field, "featureGates.PodLevelResources");
  EXPECT_EQ(f[1].field, "featureGates.PodLevelResourceManagers");
  EXPECT_TRUE(WithCode(LintText(kBase), "gate-dependency").empty());
}

TEST(LintChecks, GateOffWhilePodsUsePodLevelResources) {
  const std::string off =
      Edit("  PodLevelResourceManagers: true", "  PodLevelResourceManagers: false");
  LintReport fires = LintText(off, PodsFromFile(SeedPodPath()));
  auto f = WithCode(fires, "gate-off-pod-level");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_EQ(f[0].pod, "default/pod-level-resource-demo");
  EXPECT_NE(f[0].message.find("PodLevelResourceManagers"), std::string::npos);
  EXPECT_EQ(WithCode(fires, "gate-off").size(), 1u);
  EXPECT_EQ(fires.pods[0].containers[0].role, "node_shared");
  // A pod without pod-level resources does not trip it; nor does the gate on.
  LintReport classic = LintText(off, {PodFrom("apiVersion: v1\nkind: Pod\nmetadata:\n  name: c\n"
                                              "spec:\n  containers:\n" +
                                              Guaranteed("a", "1", "1Gi"))});
  EXPECT_TRUE(WithCode(classic, "gate-off-pod-level").empty());
  EXPECT_TRUE(WithCode(LintText(kBase, PodsFromFile(SeedPodPath())), "gate-off-pod-level").empty());
  EXPECT_TRUE(WithCode(LintText(kBase), "gate-off").empty());
}

TEST(LintChecks, GateImplicit) {
  LintReport fires = LintText(Edit("  PodLevelResources: true\n", ""));
  EXPECT_EQ(WithCode(fires, "gate-implicit").size(), 1u) << Dump(fires);
  EXPECT_TRUE(WithCode(LintText(kBase), "gate-implicit").empty());
}

TEST(LintChecks, CpuPolicyNone) {
  LintReport fires = LintText(Edit("cpuManagerPolicy: static", "cpuManagerPolicy: none"));
  auto f = WithCode(fires, "cpu-policy-none");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_EQ(f[0].line, 6);
  EXPECT_TRUE(WithCode(LintText(kBase), "cpu-policy-none").empty());
}

TEST(LintChecks, CpuReservation) {
  LintReport fires = LintText(Edit("  cpu: \"1\"\n", ""));
  auto f = WithCode(fires, "cpu-reservation");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_EQ(f[0].severity, Severity::kError);
  EXPECT_NE(f[0].hint.find("reservedSystemCPUs"), std::string::npos);
  // reservedSystemCPUs alone is a reservation.
  LintReport with_cpus = LintText(Edit("  cpu: \"1\"\n", "") + "reservedSystemCPUs: \"0\"\n");
  EXPECT_TRUE(WithCode(with_cpus, "cpu-reservation").empty()) << Dump(with_cpus);
  EXPECT_TRUE(WithCode(LintText(kBase), "cpu-reservation").empty());
}

TEST(LintChecks, MemoryReservationAgainstReservedAndEviction) {
  // 1Gi system-reserved + 100Mi hard eviction = 1124Mi, not 1Gi.
  LintReport fires = LintText(Edit("memory: 1124Mi", "memory: 1Gi"));
  auto f = WithCode(fires, "memory-reservation");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_EQ(f[0].severity, Severity::kError);
  EXPECT_NE(f[0].message.find("1124Mi"), std::string::npos);
  EXPECT_NE(f[0].hint.find("1124Mi"), std::string::npos);
  // Eviction threshold changed: 1Gi + 200Mi.
  LintReport eviction = LintText(Edit("memory.available: 100Mi", "memory.available: 200Mi"));
  auto g = WithCode(eviction, "memory-reservation");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_NE(g[0].hint.find("1224Mi"), std::string::npos);
  EXPECT_TRUE(WithCode(LintText(kBase), "memory-reservation").empty());
}

TEST(LintChecks, MemoryPolicyNone) {
  LintReport fires = LintText(Edit("memoryManagerPolicy: Static\n", "") /* reservedMemory stays */);
  EXPECT_EQ(WithCode(fires, "memory-policy-none").size(), 1u) << Dump(fires);
  EXPECT_TRUE(WithCode(LintText(kBase), "memory-policy-none").empty());
}

TEST(LintChecks, TopologyPolicyNone) {
  LintReport fires =
      LintText(Edit("topologyManagerPolicy: single-numa-node", "topologyManagerPolicy: none"));
  auto f = WithCode(fires, "topology-policy-none");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_TRUE(WithCode(LintText(kBase), "topology-policy-none").empty());
}

TEST(LintChecks, TopologyScopeContainer) {
  LintReport fires = LintText(Edit("topologyManagerScope: pod", "topologyManagerScope: container"));
  auto f = WithCode(fires, "topology-scope-container");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_TRUE(WithCode(LintText(kBase), "topology-scope-container").empty());
}

TEST(LintChecks, TopologyPolicyInvalid) {
  LintReport fires = LintText(Edit("topologyManagerScope: pod", "topologyManagerScope: node"));
  auto f = WithCode(fires, "topology-policy");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_EQ(f[0].severity, Severity::kError);
  EXPECT_TRUE(WithCode(LintText(kBase), "topology-policy").empty());
}

TEST(LintChecks, CpuOptionCompatibility) {
  const std::string align = Edit("  PodLevelResourceManagers: true",
                                 "  PodLevelResourceManagers: true\n"
                                 "  CPUManagerPolicyAlphaOptions: true") +
                            "cpuManagerPolicyOptions:\n  align-by-socket: \"true\"\n";
  LintReport fires = LintText(align);
  auto f = WithCode(fires, "cpu-policy-options");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_NE(f[0].message.find("single-numa-node"), std::string::npos);
  EXPECT_TRUE(WithCode(LintText(kBase), "cpu-policy-options").empty());
}

TEST(LintChecks, OptionNoEffectUnderSingleNumaNode) {
  const std::string opts = std::string(kBase) +
                           "topologyManagerPolicyOptions:\n  prefer-closest-numa-nodes: \"true\"\n"
                           "cpuManagerPolicyOptions:\n  distribute-cpus-across-numa: \"true\"\n";
  LintReport fires = LintText(opts);
  auto f = WithCode(fires, "option-no-effect");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_EQ(f[0].field, "topologyManagerPolicyOptions.prefer-closest-numa-nodes");
  EXPECT_EQ(fires.Count(Severity::kError), 0) << Dump(fires);
  std::string restricted = opts;
  restricted.replace(restricted.find("single-numa-node"), 16, "restricted");
  EXPECT_TRUE(WithCode(LintText(restricted), "option-no-effect").empty());
  EXPECT_TRUE(WithCode(LintText(kBase), "option-no-effect").empty());
}

TEST(LintChecks, NodeStartup) {
  // The Topology Manager refuses more than 8 NUMA nodes unless max-allowable-numa-nodes says so.
  auto parsed = config::ParseKubeletConfig(kBase, "kubelet.yaml");
  LintReport fires = Lint(parsed, LoadNode("preset:numa34").value(), {});
  auto f = WithCode(fires, "node-startup");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_EQ(f[0].field, "topologyManagerPolicy");
  EXPECT_NE(f[0].message.find("more than 8 NUMA Nodes"), std::string::npos);
  EXPECT_NE(f[0].message.find("preset:numa34"), std::string::npos);
  const std::string allowed = Edit("  PodLevelResourceManagers: true",
                                   "  PodLevelResourceManagers: true\n"
                                   "  TopologyManagerPolicyBetaOptions: true") +
                              "topologyManagerPolicyOptions:\n  max-allowable-numa-nodes: \"34\"\n";
  LintReport ok = Lint(config::ParseKubeletConfig(allowed, "kubelet.yaml"),
                       LoadNode("preset:numa34").value(), {});
  EXPECT_TRUE(WithCode(ok, "node-startup").empty()) << Dump(ok);
  EXPECT_TRUE(WithCode(LintText(kBase), "node-startup").empty());
}

// Issue 11: on preset:gb200 (34 NUMA nodes) the NUMA fit answers, and its per-NUMA amounts
// stay one line (equal neighbours grouped).
TEST(LintChecks, NumaFitOnGb200GroupsEqualNodes) {
  const std::string allowed = std::string(kBase) +
                              "topologyManagerPolicyOptions:\n  max-allowable-numa-nodes: \"34\"\n";
  Pod big = PodFrom(PodYaml("8", "600Gi", kNoResources));
  LintReport fires = Lint(config::ParseKubeletConfig(allowed, "kubelet.yaml"),
                          LoadNode("preset:gb200").value(), {big});
  EXPECT_TRUE(WithCode(fires, "node-startup").empty()) << Dump(fires);
  auto f = WithCode(fires, "budget-exceeds-numa");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_EQ(f[0].field, "spec.resources.requests.memory");
  EXPECT_NE(f[0].message.find("NUMA 1: 480Gi, NUMA 2-33: 23Gi"), std::string::npos) << f[0].message;
}

TEST(LintChecks, UnknownAndDuplicateFields) {
  LintReport fires = LintText(std::string(kBase) +
                              "topologyManagerPolicyy: restricted\n"
                              "cpuManagerPolicy: static\n");
  auto u = WithCode(fires, "unknown-field");
  ASSERT_EQ(u.size(), 1u) << Dump(fires);
  EXPECT_NE(u[0].hint.find("topologyManagerPolicy"), std::string::npos);
  EXPECT_EQ(WithCode(fires, "duplicate-field").size(), 1u);
  EXPECT_TRUE(WithCode(LintText(kBase), "unknown-field").empty());
  EXPECT_TRUE(WithCode(LintText(kBase), "duplicate-field").empty());
}

TEST(LintChecks, EmptySharedPool) {
  // The kubelet's own case: budget 5, exclusive 3 + 2, one shared container.
  Pod pod = PodFrom(PodYaml("5", "6Gi",
                            std::string("  containers:\n") + Guaranteed("a", "3", "2Gi") +
                                Guaranteed("b", "2", "2Gi") + "  - name: c\n    image: x\n"));
  LintReport fires = LintText(kBase, {pod});
  auto f = WithCode(fires, "empty-shared-pool");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_EQ(f[0].severity, Severity::kError);
  EXPECT_NE(f[0].message.find("leaving no cpus for shared containers"), std::string::npos);
  EXPECT_NE(f[0].message.find("5 of the pod's 5 CPUs"), std::string::npos);
  EXPECT_NE(f[0].hint.find("at least 6"), std::string::npos);
  // Budget 6 leaves one CPU for c; the docs' pod is fine; container scope does not check it.
  Pod roomy = PodFrom(PodYaml("6", "6Gi",
                              std::string("  containers:\n") + Guaranteed("a", "3", "2Gi") +
                                  Guaranteed("b", "2", "2Gi") + "  - name: c\n    image: x\n"));
  EXPECT_TRUE(WithCode(LintText(kBase, {roomy}), "empty-shared-pool").empty());
  EXPECT_TRUE(WithCode(LintText(kBase, PodsFromFile(MixedPodPath())), "empty-shared-pool").empty());
  EXPECT_TRUE(
      WithCode(
          LintText(Edit("topologyManagerScope: pod", "topologyManagerScope: container"), {pod}),
          "empty-shared-pool")
          .empty());
}

TEST(LintChecks, PodNotGuaranteed) {
  Pod burstable = PodFrom(PodYaml("2", "2Gi", kNoResources, "4"));
  LintReport fires = LintText(kBase, {burstable});
  auto f = WithCode(fires, "pod-not-guaranteed");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_NE(f[0].message.find("Burstable"), std::string::npos);
  EXPECT_EQ(fires.pods[0].containers[0].role, "node_shared");
  EXPECT_TRUE(WithCode(LintText(kBase, PodsFromFile(SeedPodPath())), "pod-not-guaranteed").empty());
}

TEST(LintChecks, NonIntegralBudget) {
  LintReport fires = LintText(kBase, {PodFrom(PodYaml("1500m", "2Gi", kNoResources))});
  auto f = WithCode(fires, "non-integral-budget");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_EQ(f[0].field, "spec.resources.requests.cpu");
  EXPECT_NE(f[0].message.find("1500m"), std::string::npos);
  EXPECT_NE(f[0].hint.find("\"1\" or \"2\""), std::string::npos);
  EXPECT_EQ(fires.pods[0].bubble_cpus, 0);
  EXPECT_TRUE(
      WithCode(LintText(kBase, PodsFromFile(SeedPodPath())), "non-integral-budget").empty());
}

TEST(LintChecks, NonIntegralContainerCpu) {
  Pod pod = PodFrom(PodYaml("4", "4Gi",
                            std::string("  containers:\n") + Guaranteed("half", "500m", "1Gi") +
                                Guaranteed("two", "2", "1Gi")));
  LintReport fires = LintText(kBase, {pod});
  auto f = WithCode(fires, "non-integral-container-cpu");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_EQ(f[0].container, "half");
  EXPECT_EQ(f[0].field, "spec.containers[0].resources.requests.cpu");
  EXPECT_TRUE(WithCode(LintText(kBase, PodsFromFile(MixedPodPath())), "non-integral-container-cpu")
                  .empty());
}

TEST(LintChecks, BudgetExceedsOneNumaNode) {
  // preset:demo: 4 NUMA nodes of 16 CPUs and 16Gi; CPU 0 and 1124Mi of NUMA 0 reserved.
  Pod big = PodFrom(PodYaml("20", "18Gi", kNoResources));
  LintReport fires = LintText(kBase, {big});
  auto f = WithCode(fires, "budget-exceeds-numa");
  ASSERT_EQ(f.size(), 2u) << Dump(fires);
  EXPECT_EQ(f[0].field, "spec.resources.requests.cpu");
  EXPECT_NE(f[0].message.find("20 CPUs"), std::string::npos);
  EXPECT_NE(f[0].message.find("at most 16"), std::string::npos);
  EXPECT_NE(f[0].message.find("NUMA 0: 15"), std::string::npos);
  EXPECT_EQ(f[1].field, "spec.resources.requests.memory");
  EXPECT_NE(f[1].message.find("18Gi"), std::string::npos);
  EXPECT_NE(f[1].message.find("NUMA 0: 15260Mi"), std::string::npos);
  // Not under restricted; not for a pod that fits.
  EXPECT_TRUE(WithCode(LintText(Edit("topologyManagerPolicy: single-numa-node",
                                     "topologyManagerPolicy: restricted"),
                                {big}),
                       "budget-exceeds-numa")
                  .empty());
  EXPECT_TRUE(WithCode(LintText(kBase, {PodFrom(PodYaml("16", "14Gi", kNoResources))}),
                       "budget-exceeds-numa")
                  .empty());
  // Container scope: the exclusive container is the unit.
  Pod wide = PodFrom(PodYaml("24", "8Gi",
                             std::string("  containers:\n") + Guaranteed("big", "18", "4Gi") +
                                 "  - name: rest\n    image: x\n"));
  LintReport container_scope =
      LintText(Edit("topologyManagerScope: pod", "topologyManagerScope: container"), {wide});
  auto g = WithCode(container_scope, "budget-exceeds-numa");
  ASSERT_EQ(g.size(), 1u) << Dump(container_scope);
  EXPECT_EQ(g[0].container, "big");
}

// The NUMA-fit finding agrees with admission on an empty node: an error exactly when the
// single-numa-node Topology Manager rejects the pod.
TEST(LintChecks, BudgetExceedsNumaMatchesAdmission) {
  const std::string gate_off =
      Edit("  PodLevelResourceManagers: true", "  PodLevelResourceManagers: false");
  const std::vector<std::string> configs = {
      kBase, Edit("topologyManagerScope: pod", "topologyManagerScope: container"), gate_off};
  for (const std::string& cfg_text : configs) {
    auto parsed = config::ParseKubeletConfig(cfg_text, "kubelet.yaml");
    for (const char* cpu : {"1", "8", "15", "16", "17", "32"}) {
      for (const char* mem : {"1Gi", "15260Mi", "16Gi", "16385Mi"}) {
        for (bool pod_level : {true, false}) {
          // Pod scope: the whole pod; container scope: one Guaranteed container.
          Pod pod = PodFrom(
              pod_level
                  ? PodYaml(cpu, mem, std::string("  containers:\n") + Guaranteed("a", cpu, mem))
                  : "apiVersion: v1\nkind: Pod\nmetadata:\n  name: c\nspec:\n"
                    "  containers:\n" +
                        Guaranteed("a", cpu, mem));
          auto node = Node::Create(Demo(), parsed.config, {});
          ASSERT_TRUE(node.ok()) << node.status();
          auto admitted = (*node)->Admit(pod);
          ASSERT_TRUE(admitted.ok());
          LintReport r = Lint(parsed, Demo(), {pod});
          const bool flagged = !WithCode(r, "budget-exceeds-numa").empty();
          EXPECT_EQ(flagged, !admitted->admitted)
              << "cpu " << cpu << " memory " << mem << " pod-level " << pod_level << " config\n"
              << cfg_text << ": " << admitted->reason << "\n"
              << Dump(r);
          if (!admitted->admitted) {
            EXPECT_EQ(admitted->reason, "TopologyAffinityError");
          }
        }
      }
    }
  }
}

TEST(LintChecks, SmtMisalignedBudget) {
  const std::string pcpus =
      std::string(kBase) + "cpuManagerPolicyOptions:\n  full-pcpus-only: \"true\"\n";
  LintReport fires = LintText(pcpus, {PodFrom(PodYaml("3", "2Gi", kNoResources))});
  auto f = WithCode(fires, "smt-misaligned");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_NE(f[0].message.find("requested 3 cpus not multiple cpus per core = 2"),
            std::string::npos);
  // Issue 22 item 8: the reason is the admission's, as admit, explain and compare give it.
  auto parsed = config::ParseKubeletConfig(pcpus, "kubelet.yaml");
  auto node = Node::Create(Demo(), parsed.config, {});
  ASSERT_TRUE(node.ok()) << node.status();
  auto admitted = (*node)->Admit(PodFrom(PodYaml("3", "2Gi", kNoResources)));
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  ASSERT_FALSE(admitted->admitted);
  EXPECT_EQ(f[0].message.rfind(admitted->reason + ": SMT Alignment Error", 0), 0u) << f[0].message;
  EXPECT_TRUE(
      WithCode(LintText(pcpus, {PodFrom(PodYaml("4", "2Gi", kNoResources))}), "smt-misaligned")
          .empty());
  EXPECT_TRUE(
      WithCode(LintText(kBase, {PodFrom(PodYaml("3", "2Gi", kNoResources))}), "smt-misaligned")
          .empty());
}

// Issue 22 item 12.3: a rejection no specific check covers (here hugepages the node does not
// have) is an error with the admission's reason and message; a pod that fits gets none.
TEST(LintChecks, AnyOtherRejectionIsTheAdmissions) {
  const std::string huge =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: huge}\nspec:\n  containers:\n  - name: c\n"
      "    image: x\n    resources:\n      requests: {cpu: \"2\", memory: 1Gi, hugepages-1Gi: 4Gi}\n"
      "      limits: {cpu: \"2\", memory: 1Gi, hugepages-1Gi: 4Gi}\n";
  LintReport r = LintText(kBase, {PodFrom(huge)});
  auto f = WithCode(r, "pod-rejected");
  ASSERT_EQ(f.size(), 1u) << Dump(r);
  EXPECT_EQ(f[0].severity, Severity::kError);
  EXPECT_EQ(f[0].message.rfind("OutOfhugepages-1Gi: Pod was rejected: Node didn't have enough "
                               "resource: hugepages-1Gi",
                               0),
            0u)
      << f[0].message;
  EXPECT_TRUE(WithCode(LintText(kBase, {PodFrom(PodYaml("4", "2Gi", kNoResources))}),
                       "pod-rejected")
                  .empty());
}

TEST(LintChecks, SidecarBurnsExclusiveCores) {
  Pod pod =
      PodFrom(PodYaml("4", "4Gi",
                      "  initContainers:\n" + Guaranteed("proxy", "1", "1Gi") +
                          "    restartPolicy: Always\n  containers:\n" +
                          Guaranteed("main", "2", "2Gi") + "  - name: shared\n    image: x\n"));
  LintReport fires = LintText(kBase, {pod});
  auto f = WithCode(fires, "sidecar-exclusive");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_EQ(f[0].container, "proxy");
  EXPECT_EQ(f[0].field, "spec.initContainers[0].resources");
  EXPECT_NE(f[0].message.find("1 exclusive CPU"), std::string::npos);
  EXPECT_NE(f[0].message.find("4-CPU bubble"), std::string::npos);
  EXPECT_TRUE(WithCode(LintText(kBase, PodsFromFile(MixedPodPath())), "sidecar-exclusive").empty());
}

TEST(LintChecks, IdleBudget) {
  Pod pod =
      PodFrom(PodYaml("4", "4Gi", std::string("  containers:\n") + Guaranteed("main", "2", "2Gi")));
  LintReport fires = LintText(kBase, {pod});
  auto f = WithCode(fires, "idle-budget");
  ASSERT_EQ(f.size(), 1u) << Dump(fires);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_NE(f[0].message.find("2 CPUs stay reserved but idle"), std::string::npos);
  EXPECT_TRUE(WithCode(LintText(kBase, PodsFromFile(MixedPodPath())), "idle-budget").empty());
}

TEST(LintChecks, NoExclusiveContainerNotForMixed) {
  EXPECT_TRUE(
      WithCode(LintText(kBase, PodsFromFile(MixedPodPath())), "no-exclusive-container").empty());
}

// ---- output ----

TEST(LintOutput, JsonShapeIsStable) {
  auto parsed = config::LoadKubeletConfig(SeedConfigPath());
  ASSERT_TRUE(parsed.ok());
  LintReport r = Lint(*parsed, Demo(), PodsFromFile(SeedPodPath()));
  nlohmann::ordered_json j = LintJson(r);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"config", "node", "summary", "findings", "pods"}));
  EXPECT_EQ(j["node"], "preset:demo");
  EXPECT_EQ(j["summary"]["errors"], r.Count(Severity::kError));
  for (const auto& f : j["findings"]) {
    std::vector<std::string> fk;
    for (const auto& [k, v] : f.items()) fk.push_back(k);
    EXPECT_EQ(fk, (std::vector<std::string>{"severity", "code", "file", "field", "line", "column",
                                            "pod", "container", "message", "hint"}));
  }
  const auto& c = j["pods"][0]["containers"][0];
  EXPECT_EQ(c["name"], "worker");
  EXPECT_EQ(c["role"], "pod_shared");
  EXPECT_EQ(c["exclusiveCpus"], 0);
  // Rendering twice gives the same bytes.
  EXPECT_EQ(RenderLintJson(r), RenderLintJson(Lint(*parsed, Demo(), PodsFromFile(SeedPodPath()))));
}

TEST(LintOutput, TableNamesLocationCodeAndFix) {
  auto parsed = config::LoadKubeletConfig(SeedConfigPath());
  ASSERT_TRUE(parsed.ok());
  std::string table = RenderLintTable(Lint(*parsed, Demo(), PodsFromFile(SeedPodPath())));
  EXPECT_NE(table.find(SeedConfigPath() + ":12:1: warning [unknown-field] memoryManager:"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("    fix: replace it with `memoryManagerPolicy: Static`"),
            std::string::npos);
  EXPECT_NE(table.find("worker"), std::string::npos);
  EXPECT_NE(table.find("3 errors, 2 warnings, 2 infos"), std::string::npos) << table;
}

TEST(LintOutput, UnreadableConfig) {
  auto parsed = config::ParseKubeletConfig("a: [1, 2\n", "bad.yaml");
  bool unreadable = false;
  for (const auto& f : parsed.findings) unreadable |= IsUnreadable(f);
  EXPECT_TRUE(unreadable);
  for (const auto& f : config::ParseKubeletConfig(kBase, "ok.yaml").findings) {
    EXPECT_FALSE(IsUnreadable(f)) << f.ToString();
  }
}

}  // namespace
}  // namespace podtopo::lint
