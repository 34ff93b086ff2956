#include "config/kubelet_config.h"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "config/feature_gates.h"
#include "util/file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/property.h"
#include "testing/testing.h"

namespace podtopo::config {
namespace {

using ::testing::HasSubstr;

constexpr char kHeader[] =
    "apiVersion: kubelet.config.k8s.io/v1beta1\n"
    "kind: KubeletConfiguration\n";

ParsedKubeletConfig Parse(const std::string& body) {
  return ParseKubeletConfig(std::string(kHeader) + body, "kubelet-config.yaml");
}

// Parse findings followed by Validate findings.
std::vector<Finding> AllFindings(const std::string& body, const ResourceList* capacity = nullptr) {
  ParsedKubeletConfig p = Parse(body);
  std::vector<Finding> all = p.findings;
  std::vector<Finding> v = p.config.Validate(capacity);
  all.insert(all.end(), v.begin(), v.end());
  return all;
}

std::string Dump(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) out += f.ToString() + "\n";
  return out;
}

const Finding* FindMessage(const std::vector<Finding>& findings, const std::string& text) {
  for (const Finding& f : findings) {
    if (f.message.find(text) != std::string::npos) return &f;
  }
  return nullptr;
}

Quantity Q(const char* text) { return Quantity::Parse(text).value(); }

// ---------------------------------------------------------------------------------------
// The seed article's file and podtopo's default.

TEST(KubeletConfigTest, SeedArticleFileGetsDidYouMeanMemoryManagerPolicy) {
  const std::string path = testing::SharedDir() + "/seed/kubelet-config-as-in-article.yaml";
  absl::StatusOr<ParsedKubeletConfig> parsed = LoadKubeletConfig(path);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Finding* unknown = FindMessage(parsed->findings, "did you mean memoryManagerPolicy");
  ASSERT_NE(unknown, nullptr) << Dump(parsed->findings);
  EXPECT_EQ(unknown->severity, Finding::Severity::kWarning);
  EXPECT_EQ(unknown->field, "memoryManager");
  EXPECT_EQ(unknown->line, 12);
  const std::string text = unknown->ToString();
  EXPECT_THAT(text, HasSubstr("kubelet-config-as-in-article.yaml:12:1"));
  EXPECT_THAT(text, HasSubstr("unknown field \"memoryManager\" (did you mean memoryManagerPolicy?)"));
  EXPECT_THAT(text, HasSubstr("write `memoryManagerPolicy: Static`"));
  EXPECT_THAT(text, HasSubstr("keeps its default \"None\""));
  // The kubelet also refuses the file: it has no kind / apiVersion.
  EXPECT_NE(FindMessage(parsed->findings, "Object 'Kind' is missing"), nullptr);
  EXPECT_NE(FindMessage(parsed->findings, "apiVersion is missing"), nullptr);
  // The rest decodes: memoryManagerPolicy stays None, the gates and policies are read.
  const KubeletConfig& c = parsed->config;
  EXPECT_EQ(c.memory_manager_policy, "None");
  EXPECT_EQ(c.cpu_manager_policy, "static");
  EXPECT_EQ(c.cpu_manager_reconcile_period, Duration::Seconds(5));
  EXPECT_EQ(c.topology_manager_policy, "single-numa-node");
  EXPECT_EQ(c.topology_manager_scope, "pod");
  EXPECT_TRUE(c.FeatureEnabled(kPodLevelResourceManagers));
  EXPECT_TRUE(c.FeatureEnabled(kPodLevelResources));  // default on in v1.37
  // Validation: the static CPU policy has no reservation.
  std::vector<Finding> v = c.Validate();
  const Finding* cpu = FindMessage(v, "[cpumanager] unable to determine reserved CPU resources");
  ASSERT_NE(cpu, nullptr) << Dump(v);
  EXPECT_THAT(cpu->message,
              HasSubstr("the static policy requires systemreserved.cpu + kubereserved.cpu to be "
                        "greater than zero"));
  EXPECT_EQ(cpu->field, "cpuManagerPolicy");
  EXPECT_EQ(cpu->line, 9);
  EXPECT_EQ(FindMessage(v, "memorymanager"), nullptr) << Dump(v);
}

TEST(KubeletConfigTest, ExampleFileIsTheSeedDefault) {
  const std::string path = testing::SourceDir() + "/docs/examples/kubelet-config.yaml";
  absl::StatusOr<ParsedKubeletConfig> parsed = LoadKubeletConfig(path);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->findings.empty()) << Dump(parsed->findings);
  EXPECT_TRUE(parsed->config.SameSettings(SeedDefault())) << parsed->config.ToYaml() << "\nvs\n"
                                                          << SeedDefault().ToYaml();
  EXPECT_TRUE(parsed->config.Validate().empty()) << Dump(parsed->config.Validate());
  const ResourceList capacity = {{"cpu", Q("64")},
                                 {"memory", Q("64Gi")},
                                 {"ephemeral-storage", Q("100Gi")}};
  EXPECT_FALSE(HasErrors(parsed->config.Validate(&capacity)));
}

TEST(KubeletConfigTest, SeedDefaultHasTheDesignedSettings) {
  const KubeletConfig c = SeedDefault();
  EXPECT_TRUE(c.FeatureEnabled(kPodLevelResources));
  EXPECT_TRUE(c.FeatureEnabled(kPodLevelResourceManagers));
  EXPECT_EQ(c.cpu_manager_policy, "static");
  EXPECT_EQ(c.memory_manager_policy, "Static");
  EXPECT_EQ(c.topology_manager_policy, "single-numa-node");
  EXPECT_EQ(c.topology_manager_scope, "pod");
  EXPECT_EQ(c.NumReservedCpus(), 1);
  const ResourceList capacity = {{"cpu", Q("64")}, {"memory", Q("64Gi")}};
  ResourceList reservation = c.NodeAllocatableReservation(capacity);
  EXPECT_EQ(reservation.at("cpu").String(), "1");
  EXPECT_EQ(reservation.at("memory").String(), "1124Mi");
  Quantity reserved;
  for (const MemoryReservation& r : c.reserved_memory) reserved.Add(r.limits.at("memory"));
  EXPECT_EQ(reserved.Cmp(reservation.at("memory")), 0);
  EXPECT_TRUE(c.Validate().empty()) << Dump(c.Validate());
  // ToYaml writes it back.
  ParsedKubeletConfig again = ParseKubeletConfig(c.ToYaml(), "roundtrip.yaml");
  EXPECT_TRUE(again.findings.empty()) << Dump(again.findings);
  EXPECT_TRUE(again.config.SameSettings(c)) << c.ToYaml();
}

// ---------------------------------------------------------------------------------------
// Defaults and feature gates.

TEST(KubeletConfigTest, V1Beta1Defaults) {
  ParsedKubeletConfig p = Parse("");
  EXPECT_TRUE(p.findings.empty()) << Dump(p.findings);
  const KubeletConfig& c = p.config;
  EXPECT_EQ(c.cpu_manager_policy, "none");
  EXPECT_EQ(c.memory_manager_policy, "None");
  EXPECT_EQ(c.topology_manager_policy, "none");
  EXPECT_EQ(c.topology_manager_scope, "container");
  EXPECT_EQ(c.cpu_manager_reconcile_period, Duration::Seconds(10));
  EXPECT_EQ(c.eviction_hard.at("memory.available"), "100Mi");
  EXPECT_EQ(c.eviction_hard.at("nodefs.available"), "10%");
  EXPECT_EQ(c.eviction_hard.size(), 4u);
  EXPECT_TRUE(c.Validate().empty()) << Dump(c.Validate());
  EXPECT_EQ(c.NumReservedCpus(), 0);
}

TEST(KubeletConfigTest, FeatureGateDefaultsOfV137) {
  const KubeletConfig c;
  EXPECT_TRUE(c.FeatureEnabled("PodLevelResources"));
  EXPECT_FALSE(c.FeatureEnabled("PodLevelResourceManagers"));
  EXPECT_FALSE(c.FeatureEnabled("CPUManagerPolicyAlphaOptions"));
  EXPECT_TRUE(c.FeatureEnabled("CPUManagerPolicyBetaOptions"));
  EXPECT_TRUE(c.FeatureEnabled("CPUManagerPolicyOptions"));
  EXPECT_FALSE(c.FeatureEnabled("TopologyManagerPolicyAlphaOptions"));
  EXPECT_TRUE(c.FeatureEnabled("TopologyManagerPolicyBetaOptions"));
  EXPECT_TRUE(c.FeatureEnabled("TopologyManagerPolicyOptions"));
  EXPECT_TRUE(c.FeatureEnabled("MemoryManager"));
  EXPECT_TRUE(c.FeatureEnabled("InPlacePodVerticalScaling"));
  EXPECT_FALSE(c.FeatureEnabled("NoSuchGate"));
  EXPECT_FALSE(c.FeatureEnabled("podlevelresources"));  // case-sensitive
}

TEST(KubeletConfigTest, AllAlphaAndAllBetaApplyToUnsetGates) {
  KubeletConfig c = Parse("featureGates:\n  AllAlpha: true\n  CPUManagerPolicyBetaOptions: false\n"
                          "  AllBeta: false\n  PodLevelResources: true\n")
                        .config;
  EXPECT_TRUE(c.FeatureEnabled("CPUManagerPolicyAlphaOptions"));
  EXPECT_FALSE(c.FeatureEnabled("CPUManagerPolicyBetaOptions"));
  EXPECT_FALSE(c.FeatureEnabled("TopologyManagerPolicyBetaOptions"));  // AllBeta: false
  EXPECT_TRUE(c.FeatureEnabled("PodLevelResources"));                  // explicit wins
  EXPECT_TRUE(c.FeatureEnabled("MemoryManager"));                      // GA: untouched
}

TEST(KubeletConfigTest, GateTableIsSortedAndUnique) {
  auto gates = KnownFeatureGates();
  ASSERT_GT(gates.size(), 250u);
  for (size_t i = 1; i < gates.size(); ++i) {
    EXPECT_LT(gates[i - 1].name, gates[i].name);
  }
  for (const FeatureGateSpec& g : gates) {
    if (g.stage == GateStage::kAlpha) {
      EXPECT_FALSE(g.default_value) << g.name;
    }
    if (g.locked) {  // GA and deprecated gates lock before removal
      EXPECT_TRUE(g.stage == GateStage::kGA || g.stage == GateStage::kDeprecated) << g.name;
    }
  }
}

// The rules component-base's AddDependencies enforces when the kubelet registers its gates
// (a table breaking them would make the kubelet panic at init): every gate is known, no gate
// depends on a less stable one (Deprecated < Alpha < Beta < GA), a default-on gate only on
// default-on gates, a locked gate only on locked gates; lists sorted, no cycles.
int StabilityOrder(GateStage s) {
  switch (s) {
    case GateStage::kDeprecated: return 0;
    case GateStage::kAlpha: return 1;
    case GateStage::kBeta: return 2;
    case GateStage::kGA: return 3;
  }
  return -1;
}

TEST(KubeletConfigTest, GateDependenciesFollowAddDependenciesRules) {
  size_t with_deps = 0;
  for (const FeatureGateSpec& g : KnownFeatureGates()) {
    std::span<const std::string_view> deps = FeatureGateDependencies(g.name);
    if (!deps.empty()) ++with_deps;
    for (size_t i = 0; i < deps.size(); ++i) {
      if (i > 0) EXPECT_LT(deps[i - 1], deps[i]) << g.name;
      const FeatureGateSpec* d = FindFeatureGate(deps[i]);
      ASSERT_NE(d, nullptr) << g.name << " depends on unknown " << deps[i];
      EXPECT_LE(StabilityOrder(g.stage), StabilityOrder(d->stage)) << g.name << " -> " << d->name;
      if (g.default_value) EXPECT_TRUE(d->default_value) << g.name << " -> " << d->name;
      if (g.locked) EXPECT_TRUE(d->locked) << g.name << " -> " << d->name;
      EXPECT_TRUE(FeatureGateDependencies(d->name).empty() ||
                  FeatureGateDependencies(d->name)[0] != g.name)
          << "cycle " << g.name << " <-> " << d->name;
    }
  }
  EXPECT_GT(with_deps, 30u);
  // The gates that need PodLevelResources in v1.37.
  std::vector<std::string_view> need_plr;
  for (const FeatureGateSpec& g : KnownFeatureGates()) {
    for (std::string_view d : FeatureGateDependencies(g.name)) {
      if (d == "PodLevelResources") need_plr.push_back(g.name);
    }
  }
  EXPECT_THAT(need_plr, ::testing::ElementsAre("InPlacePodLevelResourcesVerticalScaling",
                                               "PodLevelResourceManagers",
                                               "PodLevelResourcesFixDefaulting",
                                               "PodLevelResourcesFixKubeletQOSClass"));
  // The defaults satisfy every dependency.
  EXPECT_TRUE(KubeletConfig().GateDependencyProblems().empty());
  EXPECT_TRUE(SeedDefault().GateDependencyProblems().empty());
}

// k/k #140848 (and #140631): v1.37 configurations that name the two default-on KEP-2837 fix
// gates load; PodLevelResources: false alone is refused, as the 1.37 kubelet panics at start
// ("... is enabled, but depends on features that are disabled: [PodLevelResources]").
TEST(KubeletConfigTest, Issue140848FixGatesOfV137Load) {
  std::vector<Finding> all = AllFindings(
      "featureGates:\n  PodLevelResourcesFixKubeletQOSClass: true\n"
      "  PodLevelResourcesFixDefaulting: true\n");
  EXPECT_FALSE(HasErrors(all)) << Dump(all);
  ParsedKubeletConfig p = Parse("featureGates:\n  PodLevelResourcesFixDefaulting: false\n");
  EXPECT_FALSE(HasErrors(p.findings)) << Dump(p.findings);
  EXPECT_FALSE(p.config.FeatureEnabled("PodLevelResourcesFixDefaulting"));
  EXPECT_TRUE(p.config.FeatureEnabled("PodLevelResourcesFixKubeletQOSClass"));  // default on
  EXPECT_TRUE(KubeletConfig().FeatureEnabled("PodLevelResourcesFixDefaulting"));
}

TEST(KubeletConfigTest, Issue140848PodLevelResourcesOffAloneIsRefused) {
  std::vector<Finding> v = AllFindings("featureGates:\n  PodLevelResources: false\n");
  ASSERT_TRUE(HasErrors(v)) << Dump(v);
  std::vector<std::string> messages;
  for (const Finding& f : v) {
    if (f.severity != Finding::Severity::kError) continue;
    messages.push_back(f.message);
    // Each error points at the line that turned PodLevelResources off.
    EXPECT_EQ(f.field, "featureGates.PodLevelResources");
    EXPECT_EQ(f.line, 4);
    EXPECT_THAT(f.ToString(), HasSubstr("kubelet-config.yaml:4:"));
  }
  EXPECT_THAT(messages,
              ::testing::ElementsAre(
                  "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features "
                  "that are disabled: [PodLevelResources]",
                  "PodLevelResourcesFixDefaulting is enabled, but depends on features that are "
                  "disabled: [PodLevelResources]",
                  "PodLevelResourcesFixKubeletQOSClass is enabled, but depends on features that "
                  "are disabled: [PodLevelResources]"));
  // Turning the dependents off together loads (the e2e fix of #140853 / #140631).
  std::vector<Finding> ok = AllFindings(
      "featureGates:\n  PodLevelResources: false\n  PodLevelResourcesFixDefaulting: false\n"
      "  PodLevelResourcesFixKubeletQOSClass: false\n"
      "  InPlacePodLevelResourcesVerticalScaling: false\n");
  EXPECT_FALSE(HasErrors(ok)) << Dump(ok);
}

// k/k #140631: the dependent gate's own line is named when the file sets it.
TEST(KubeletConfigTest, Issue140631DependentGateSetInTheFileIsNamed) {
  std::vector<Finding> v = AllFindings(
      "featureGates:\n  PodLevelResources: false\n  PodLevelResourcesFixDefaulting: false\n"
      "  InPlacePodLevelResourcesVerticalScaling: false\n"
      "  PodLevelResourcesFixKubeletQOSClass: true\n");
  const Finding* f = FindMessage(v, "PodLevelResourcesFixKubeletQOSClass is enabled");
  ASSERT_NE(f, nullptr) << Dump(v);
  EXPECT_EQ(f->field, "featureGates.PodLevelResourcesFixKubeletQOSClass");
  EXPECT_EQ(f->line, 7);
  EXPECT_EQ(std::count_if(v.begin(), v.end(),
                          [](const Finding& x) { return x.severity == Finding::Severity::kError; }),
            1)
      << Dump(v);
  // AllBeta: false turns PodLevelResources and its beta dependents off together: no error.
  EXPECT_FALSE(HasErrors(AllFindings("featureGates:\n  AllBeta: false\n")));
}

// ---------------------------------------------------------------------------------------
// Every validation error (Validate), table-driven.

struct ValidationCase {
  const char* name;
  const char* body;
  const char* field;
  const char* message;  // substring of the expected error
};

const ValidationCase kValidationCases[] = {
    {"unknown_gate", "featureGates:\n  PodLevelResourceManager: true\n",
     "featureGates.PodLevelResourceManager",
     "unrecognized feature gate: PodLevelResourceManager (did you mean "
     "PodLevelResourceManagers?)"},
    {"locked_gate", "featureGates:\n  MemoryManager: false\n", "featureGates.MemoryManager",
     "cannot set feature gate MemoryManager to false, feature is locked to true"},
    {"gate_dependency",
     "featureGates:\n  PodLevelResources: false\n  PodLevelResourceManagers: true\n",
     "featureGates.PodLevelResourceManagers",
     "PodLevelResourceManagers is enabled, but depends on features that are disabled: "
     "[PodLevelResources]"},
    {"locked_deprecated_gate", "featureGates:\n  DisableCPUQuotaWithExclusiveCPUs: false\n",
     "featureGates.DisableCPUQuotaWithExclusiveCPUs",
     "cannot set feature gate DisableCPUQuotaWithExclusiveCPUs to false, feature is locked to "
     "true"},
    {"cpu_policy_unknown", "cpuManagerPolicy: Static\n", "cpuManagerPolicy",
     "unknown policy: \"Static\""},
    {"max_pods_negative", "maxPods: -1\n", "maxPods",
     "invalid configuration: maxPods (--max-pods) -1 must not be a negative number"},
    {"cpu_none_with_options", "cpuManagerPolicyOptions:\n  full-pcpus-only: \"true\"\n",
     "cpuManagerPolicyOptions", "None policy: received unsupported options=map[full-pcpus-only:true]"},
    {"cpu_static_no_reservation", "cpuManagerPolicy: static\n", "cpuManagerPolicy",
     "the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero"},
    {"cpu_static_zero_reservation",
     "cpuManagerPolicy: static\nsystemReserved:\n  cpu: \"0\"\nkubeReserved:\n  cpu: 0m\n",
     "cpuManagerPolicy", "[cpumanager] unable to determine reserved CPU resources for static policy"},
    {"cpu_option_unknown",
     "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\ncpuManagerPolicyOptions:\n  "
     "full-pcpu-only: \"true\"\n",
     "cpuManagerPolicyOptions.full-pcpu-only",
     "unknown CPU Manager Policy option: \"full-pcpu-only\" (did you mean full-pcpus-only?)"},
    {"cpu_option_alpha_gate",
     "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\ncpuManagerPolicyOptions:\n  "
     "align-by-socket: \"true\"\n",
     "cpuManagerPolicyOptions.align-by-socket",
     "CPU Manager Policy Alpha-level Options not enabled, but option \"align-by-socket\" provided"},
    {"cpu_option_beta_gate",
     "featureGates:\n  CPUManagerPolicyBetaOptions: false\ncpuManagerPolicy: static\n"
     "reservedSystemCPUs: \"0\"\ncpuManagerPolicyOptions:\n  strict-cpu-reservation: \"true\"\n",
     "cpuManagerPolicyOptions.strict-cpu-reservation",
     "CPU Manager Policy Beta-level Options not enabled, but option \"strict-cpu-reservation\" "
     "provided"},
    {"cpu_option_bad_bool",
     "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\ncpuManagerPolicyOptions:\n  "
     "full-pcpus-only: enabled!\n",
     "cpuManagerPolicyOptions.full-pcpus-only",
     "bad value for option \"full-pcpus-only\": strconv.ParseBool: parsing \"enabled!\": invalid "
     "syntax"},
    {"cpu_options_exclusive",
     "featureGates:\n  CPUManagerPolicyAlphaOptions: true\ncpuManagerPolicy: static\n"
     "reservedSystemCPUs: \"0\"\ncpuManagerPolicyOptions:\n  full-pcpus-only: \"true\"\n"
     "  distribute-cpus-across-cores: \"true\"\n",
     "cpuManagerPolicyOptions",
     "static policy options full-pcpus-only and distribute-cpus-across-cores can not be used at "
     "the same time"},
    {"cpu_options_exclusive_uncore_numa",
     "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\ncpuManagerPolicyOptions:\n"
     "  prefer-align-cpus-by-uncorecache: \"true\"\n  distribute-cpus-across-numa: \"1\"\n",
     "cpuManagerPolicyOptions",
     "static policy options prefer-align-cpus-by-uncorecache and distribute-cpus-across-numa can "
     "not be used at the same time"},
    {"align_by_socket_single_numa",
     "featureGates:\n  CPUManagerPolicyAlphaOptions: true\ncpuManagerPolicy: static\n"
     "reservedSystemCPUs: \"0\"\ntopologyManagerPolicy: single-numa-node\n"
     "cpuManagerPolicyOptions:\n  align-by-socket: \"true\"\n",
     "cpuManagerPolicyOptions.align-by-socket",
     "Topolgy manager single-numa-node policy is incompatible with CPUManager align-by-socket "
     "policy option"},
    {"memory_policy_best_effort", "memoryManagerPolicy: BestEffort\n", "memoryManagerPolicy",
     "policy \"BestEffort\" is not available for platform \"linux\""},
    {"memory_policy_unknown", "memoryManagerPolicy: static\n", "memoryManagerPolicy",
     "unknown policy: \"static\""},
    {"reserved_memory_type",
     "reservedMemory:\n  - numaNode: 0\n    limits:\n      cpu: \"1\"\n",
     "reservedMemory[0].limits.cpu",
     "invalid configuration: the limit type \"cpu\" for NUMA node 0 is not supported, only "
     "[memory hugepages-<HugePageSize>] is accepted"},
    {"reserved_memory_zero", "reservedMemory:\n  - numaNode: 1\n    limits:\n      memory: 0Gi\n",
     "reservedMemory[0].limits.memory",
     "invalid configuration: reserved memory may not be zero for NUMA node 1 and resource "
     "\"memory\""},
    {"reserved_memory_duplicate",
     "reservedMemory:\n  - numaNode: 0\n    limits:\n      memory: 1Gi\n  - numaNode: 0\n"
     "    limits:\n      memory: 2Gi\n",
     "reservedMemory[1].limits.memory",
     "invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and "
     "resource \"memory\""},
    {"static_memory_without_reservation", "memoryManagerPolicy: Static\n", "reservedMemory",
     "the total amount \"0\" of type \"memory\" is not equal to the value \"100Mi\" determined "
     "by Node Allocatable feature"},
    {"static_memory_wrong_sum",
     "memoryManagerPolicy: Static\nsystemReserved:\n  memory: 1Gi\nreservedMemory:\n"
     "  - numaNode: 0\n    limits:\n      memory: 1Gi\n",
     "reservedMemory",
     "the total amount \"1Gi\" of type \"memory\" is not equal to the value \"1124Mi\" "
     "determined by Node Allocatable feature"},
    {"static_memory_hugepages_sum",
     "memoryManagerPolicy: Static\nreservedMemory:\n  - numaNode: 0\n    limits:\n"
     "      memory: 100Mi\n      hugepages-2Mi: 4Mi\n",
     "reservedMemory",
     "the total amount \"4Mi\" of type \"hugepages-2Mi\" is not equal to the value \"0\" "
     "determined by Node Allocatable feature"},
    {"static_memory_nothing_reserved",
     "memoryManagerPolicy: Static\nevictionHard:\n  memory.available: \"0%\"\n", "reservedMemory",
     "[memorymanager] you should specify the system reserved memory"},
    {"static_memory_not_int64",
     "memoryManagerPolicy: Static\nevictionHard:\n  memory.available: \"100%\"\n"
     "systemReserved:\n  memory: 1.5Gi\nreservedMemory:\n  - numaNode: 0\n    limits:\n"
     "      memory: 1.5Gi\n",
     "reservedMemory[0].limits.memory", "could not covert a variable of type Quantity to int64"},
    {"topology_policy", "topologyManagerPolicy: singlenumanode\n", "topologyManagerPolicy",
     "invalid configuration: topologyManagerPolicy (--topology-manager-policy) \"singlenumanode\" "
     "must be one of: [\"none\" \"best-effort\" \"restricted\" \"single-numa-node\"]"},
    {"topology_scope", "topologyManagerScope: Pod\n", "topologyManagerScope",
     "invalid configuration: topologyManagerScope (--topology-manager-scope) \"Pod\" must be one "
     "of: \"container\", or \"pod\""},
    {"topology_option_bool",
     "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions:\n"
     "  prefer-closest-numa-nodes: \"yes\"\n",
     "topologyManagerPolicyOptions.prefer-closest-numa-nodes",
     "bad value for option \"prefer-closest-numa-nodes\": strconv.ParseBool: parsing \"yes\": "
     "invalid syntax"},
    {"topology_option_min",
     "topologyManagerPolicy: best-effort\ntopologyManagerPolicyOptions:\n"
     "  max-allowable-numa-nodes: \"4\"\n",
     "topologyManagerPolicyOptions.max-allowable-numa-nodes",
     "the minimum value of \"max-allowable-numa-nodes\" should not be less than 8"},
    {"topology_option_int",
     "topologyManagerPolicy: best-effort\ntopologyManagerPolicyOptions:\n"
     "  max-allowable-numa-nodes: eight\n",
     "topologyManagerPolicyOptions.max-allowable-numa-nodes",
     "unable to convert policy option to integer \"max-allowable-numa-nodes\": strconv.Atoi: "
     "parsing \"eight\": invalid syntax"},
    {"topology_option_unknown",
     "topologyManagerPolicy: single-numa-node\ntopologyManagerPolicyOptions:\n"
     "  prefer-closest-numa-node: \"true\"\n",
     "topologyManagerPolicyOptions.prefer-closest-numa-node",
     "unknown Topology Manager Policy option: \"prefer-closest-numa-node\""},
    {"reserved_cpus", "reservedSystemCPUs: 0-\n", "reservedSystemCPUs",
     "invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) 0-, error: "},
    {"kube_reserved_negative", "kubeReserved:\n  memory: -1Gi\n", "kubeReserved",
     "resource quantity for \"memory\" cannot be negative: -1Gi"},
    {"kube_reserved_bad_quantity", "kubeReserved:\n  cpu: one\n", "kubeReserved",
     "failed to parse quantity \"one\" for \"cpu\" resource: invalid quantity \"one\""},
    {"system_reserved_huge", "systemReserved:\n  cpu: \"1e400\"\n", "systemReserved",
     "failed to parse quantity \"1e400\" for \"cpu\" resource: quantity \"1e400\" is too large"},
    {"system_reserved_resource", "systemReserved:\n  nvidia.com/gpu: \"1\"\n", "systemReserved",
     "cannot reserve \"nvidia.com/gpu\" resource"},
    {"eviction_signal", "evictionHard:\n  memory.availble: 100Mi\n", "evictionHard",
     "unsupported eviction signal memory.availble"},
    {"eviction_zero", "evictionHard:\n  memory.available: \"0\"\n", "evictionHard",
     "eviction threshold memory.available must be positive: 0"},
    {"eviction_negative", "evictionHard:\n  memory.available: -100Mi\n", "evictionHard",
     "eviction threshold memory.available must be positive: -100Mi"},
    {"eviction_percent", "evictionHard:\n  nodefs.available: 101%\n", "evictionHard",
     "eviction percentage threshold nodefs.available must be <= 100%: 101%"},
};

class ValidationTest : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(ValidationTest, ReportsTheKubeletError) {
  const ValidationCase& c = GetParam();
  ParsedKubeletConfig p = Parse(c.body);
  EXPECT_FALSE(HasErrors(p.findings)) << Dump(p.findings);
  std::vector<Finding> v = p.config.Validate();
  const Finding* f = FindMessage(v, c.message);
  ASSERT_NE(f, nullptr) << "want: " << c.message << "\ngot:\n" << Dump(v);
  EXPECT_EQ(f->severity, Finding::Severity::kError);
  EXPECT_EQ(f->field, c.field);
  EXPECT_GT(f->line, 2) << "no position for " << f->field;  // the body starts on line 3
  EXPECT_THAT(f->ToString(), HasSubstr("kubelet-config.yaml:"));
  EXPECT_TRUE(HasErrors(v));
  EXPECT_FALSE(ErrorsToStatus(v).ok());
}

INSTANTIATE_TEST_SUITE_P(KubeletChecks, ValidationTest, ::testing::ValuesIn(kValidationCases),
                         [](const ::testing::TestParamInfo<ValidationCase>& info) {
                           return testing::TestName(info.param.name, info.index);
                         });

TEST(KubeletConfigTest, ValidConfigurationsPass) {
  const char* bodies[] = {
      // Static CPU policy with a reserved cpuset and options.
      "cpuManagerPolicy: static\nreservedSystemCPUs: \"0,32\"\ncpuManagerPolicyOptions:\n"
      "  full-pcpus-only: \"true\"\n  distribute-cpus-across-numa: \"false\"\n",
      // Fractional reservation rounds up.
      "cpuManagerPolicy: static\nkubeReserved:\n  cpu: 500m\n",
      // Topology options.
      "topologyManagerPolicy: restricted\ntopologyManagerScope: pod\n"
      "topologyManagerPolicyOptions:\n  prefer-closest-numa-nodes: \"true\"\n"
      "  max-allowable-numa-nodes: \"8\"\n",
      // Static memory over two nodes with hugepages.
      "memoryManagerPolicy: Static\nkubeReserved:\n  memory: 500Mi\nsystemReserved:\n"
      "  memory: 524Mi\nreservedMemory:\n  - numaNode: 0\n    limits:\n      memory: 512Mi\n"
      "  - numaNode: 1\n    limits:\n      memory: 612Mi\n",
      // Eviction disabled with 0%; gates set to their defaults.
      "evictionHard:\n  memory.available: \"0%\"\nfeatureGates:\n  PodLevelResources: true\n"
      "  CPUManagerPolicyBetaOptions: true\n",
  };
  for (const char* body : bodies) {
    std::vector<Finding> all = AllFindings(body);
    EXPECT_FALSE(HasErrors(all)) << body << "\n" << Dump(all);
  }
  EXPECT_EQ(Parse("cpuManagerPolicy: static\nkubeReserved:\n  cpu: 500m\n").config.NumReservedCpus(),
            1);
}

TEST(KubeletConfigTest, WarningsAndInfos) {
  std::vector<Finding> v = AllFindings("featureGates:\n  InPlacePodVerticalScaling: true\n");
  const Finding* ga = FindMessage(v, "Setting GA feature gate InPlacePodVerticalScaling=true");
  ASSERT_NE(ga, nullptr) << Dump(v);
  EXPECT_EQ(ga->severity, Finding::Severity::kWarning);
  EXPECT_FALSE(HasErrors(v));
  v = AllFindings("topologyManagerPolicyOptions:\n  bogus: \"1\"\n");
  EXPECT_FALSE(HasErrors(v)) << Dump(v);  // the none policy never reads its options
  ASSERT_NE(FindMessage(v, "ignored"), nullptr);
  v = AllFindings("memoryManagerPolicy: Static\nevictionHard:\n  memory.available: 5%\n");
  EXPECT_FALSE(HasErrors(v)) << Dump(v);
  ASSERT_NE(FindMessage(v, "not checked against Node Allocatable"), nullptr);
  // With the capacity known the percentage is resolved: 5% of 10Gi with float32 0.05, as the
  // kubelet computes it, is 536870920 (8 bytes above 512Mi).
  const ResourceList capacity = {{"cpu", Q("8")}, {"memory", Q("10Gi")}};
  v = AllFindings("memoryManagerPolicy: Static\nevictionHard:\n  memory.available: 5%\n",
                  &capacity);
  ASSERT_NE(FindMessage(v, "the total amount \"0\" of type \"memory\" is not equal to the value "
                           "\"536870920\""),
            nullptr)
      << Dump(v);
}

// ---------------------------------------------------------------------------------------
// Decoding: YAML errors, types, unknown fields.

// go-yaml refuses a file that is not UTF-8; yaml-cpp took it and ToYaml() wrote U+FFFD back
// (found by the kubelet_config fuzz target, fuzz/regressions/kubelet_config/crash-3461aae7...).
TEST(KubeletConfigDecodeTest, InvalidUtf8IsAnErrorAtItsLineAndColumn) {
  ParsedKubeletConfig p = ParseKubeletConfig(
      "kind: KubeletConfiguration\nevictionHard:\n  memory.available: 1\xff\xff\n",
      "bad.yaml");
  ASSERT_TRUE(HasErrors(p.findings));
  const Finding& f = p.findings.front();
  EXPECT_THAT(f.message, HasSubstr("invalid UTF-8 (byte 0xff)"));
  EXPECT_EQ(f.line, 3);
  EXPECT_EQ(f.column, 22);
  EXPECT_TRUE(p.config.eviction_hard.empty() ||
              !p.config.eviction_hard.count("memory.available") ||
              p.config.eviction_hard.at("memory.available").find('\xff') == std::string::npos);
  // Valid UTF-8, U+FFFD itself included, is fine.
  p = ParseKubeletConfig(
      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
      "# caf\xc3\xa9 \xef\xbf\xbd\n",
      "ok.yaml");
  EXPECT_FALSE(HasErrors(p.findings)) << Dump(p.findings);
}

// sigs.k8s.io/yaml refuses a key that is not a string, number or boolean, so the kubelet does
// not start. podtopo warned and dropped the entry; then `evictionHard:` holding only such a key
// decoded as an explicit empty map, which ToYaml() left out, and it read back as the defaults
// (found by the kubelet_config fuzz target, fuzz/regressions/kubelet_config/crash-75075a1d...).
TEST(KubeletConfigDecodeTest, KeyThatIsNotAStringNumberOrBoolIsAnError) {
  const std::string head =
      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
  for (const auto& [body, what] : std::vector<std::pair<std::string, std::string>>{
           {"evictionHard:\n: container\n", "empty (null)"},
           {"evictionHard:\n  ~: 100Mi\n", "empty (null)"},
           {"? [a, b]\n: 1\n", "a sequence"},
           {"kubeReserved:\n  ? {a: 1}\n  : 1\n", "a mapping"}}) {
    ParsedKubeletConfig p = ParseKubeletConfig(head + body, "keys.yaml");
    ASSERT_TRUE(HasErrors(p.findings)) << body;
    bool named = false;
    for (const Finding& f : p.findings) {
      named |= f.severity == Finding::Severity::kError &&
               f.message.find("a mapping key is " + what) != std::string::npos &&
               f.message.find("unsupported map key") != std::string::npos && f.line > 0;
    }
    EXPECT_TRUE(named) << body << Dump(p.findings);
  }
}

// `evictionHard: {}` means "no hard eviction thresholds" (the kubelet defaults only a nil map);
// ToYaml() must keep it, or it reads back as the kubelet's default thresholds.
TEST(KubeletConfigDecodeTest, EmptyEvictionHardSurvivesToYaml) {
  ParsedKubeletConfig p = ParseKubeletConfig(
      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
      "evictionHard: {}\n",
      "empty.yaml");
  ASSERT_FALSE(HasErrors(p.findings)) << Dump(p.findings);
  EXPECT_TRUE(p.config.eviction_hard.empty());
  ParsedKubeletConfig again = ParseKubeletConfig(p.config.ToYaml(), "printed.yaml");
  EXPECT_FALSE(HasErrors(again.findings)) << Dump(again.findings);
  EXPECT_TRUE(again.config.eviction_hard.empty()) << p.config.ToYaml();
  EXPECT_TRUE(again.config.SameSettings(p.config)) << p.config.ToYaml();
  // Left out, it is the kubelet's defaults, and ToYaml() writes those.
  ParsedKubeletConfig absent = ParseKubeletConfig(
      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n", "absent.yaml");
  EXPECT_EQ(absent.config.eviction_hard, KubeletConfig::DefaultEvictionHard());
  EXPECT_EQ(ParseKubeletConfig(absent.config.ToYaml(), "p.yaml").config.eviction_hard,
            KubeletConfig::DefaultEvictionHard());
}

TEST(KubeletConfigDecodeTest, SyntaxErrorHasLineNumber) {
  ParsedKubeletConfig p = ParseKubeletConfig(
      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
      "cpuManagerPolicy: [static\n",
      "bad.yaml");
  ASSERT_TRUE(HasErrors(p.findings));
  const Finding& f = p.findings.front();
  EXPECT_THAT(f.message, HasSubstr("YAML syntax error"));
  EXPECT_GE(f.line, 3);
  EXPECT_THAT(f.ToString(), HasSubstr("bad.yaml:"));
  // Bad indentation.
  p = ParseKubeletConfig("kind: KubeletConfiguration\n  cpuManagerPolicy: static\n x: 1\n",
                         "indent.yaml");
  ASSERT_TRUE(HasErrors(p.findings));
  EXPECT_GT(p.findings.front().line, 0);
}

TEST(KubeletConfigDecodeTest, StrayCommaIsAnErrorNotAHang) {
  // yaml-cpp's LoadAll never returns on these.
  for (const char* text : {",", ",\n", "{a: 1},\n", "kind: KubeletConfiguration\n---\n,\n"}) {
    ParsedKubeletConfig p = ParseKubeletConfig(text, "comma.yaml");
    EXPECT_NE(FindMessage(p.findings, "YAML syntax error"), nullptr) << text << Dump(p.findings);
  }
  EXPECT_TRUE(HasErrors(ParseKubeletConfig(",", "comma.yaml").findings));
}

TEST(KubeletConfigDecodeTest, TruncatedFiles) {
  absl::StatusOr<std::string> text =
      ReadSmallFile(testing::SourceDir() + "/docs/examples/kubelet-config.yaml");
  ASSERT_TRUE(text.ok());
  // Every prefix decodes without crashing; a cut inside a quoted scalar is a syntax error.
  for (size_t n = 0; n <= text->size(); ++n) {
    ParsedKubeletConfig p = ParseKubeletConfig(text->substr(0, n), "cut.yaml");
    for (const Finding& f : p.findings) EXPECT_FALSE(f.message.empty());
  }
  const size_t quote = text->find("cpu: \"1\"");
  ASSERT_NE(quote, std::string::npos);
  ParsedKubeletConfig p = ParseKubeletConfig(text->substr(0, quote + 7), "cut.yaml");
  ASSERT_TRUE(HasErrors(p.findings)) << Dump(p.findings);
  EXPECT_THAT(p.findings.front().message, HasSubstr("YAML syntax error"));
  // A cut before kind: the kubelet refuses the file.
  p = ParseKubeletConfig(text->substr(0, text->find("kind:")), "cut.yaml");
  EXPECT_NE(FindMessage(p.findings, "Object 'Kind' is missing"), nullptr) << Dump(p.findings);
}

TEST(KubeletConfigDecodeTest, WrongTypes) {
  struct Case {
    const char* body;
    const char* field;
    const char* message;
  };
  const Case cases[] = {
      {"cpuManagerPolicy: [1]\n", "cpuManagerPolicy",
       "json: cannot unmarshal array into Go struct field KubeletConfiguration.cpuManagerPolicy "
       "of type string"},
      {"cpuManagerPolicy: 1\n", "cpuManagerPolicy",
       "json: cannot unmarshal number into Go struct field KubeletConfiguration.cpuManagerPolicy "
       "of type string"},
      {"memoryManagerPolicy: {policy: Static}\n", "memoryManagerPolicy",
       "cannot unmarshal object into Go struct field KubeletConfiguration.memoryManagerPolicy"},
      {"topologyManagerScope: yes\n", "topologyManagerScope", "cannot unmarshal bool"},
      {"reservedSystemCPUs: 0\n", "reservedSystemCPUs",
       "cannot unmarshal number into Go struct field KubeletConfiguration.reservedSystemCPUs of "
       "type string"},
      {"featureGates:\n  PodLevelResources: \"true\"\n", "featureGates.PodLevelResources",
       "json: cannot unmarshal string into Go struct field KubeletConfiguration.featureGates of "
       "type bool"},
      {"featureGates: [PodLevelResources]\n", "featureGates", "cannot unmarshal array"},
      {"cpuManagerPolicyOptions:\n  full-pcpus-only: true\n",
       "cpuManagerPolicyOptions.full-pcpus-only",
       "json: cannot unmarshal bool into Go struct field "
       "KubeletConfiguration.cpuManagerPolicyOptions of type string"},
      {"systemReserved:\n  cpu: 1\n", "systemReserved.cpu", "cannot unmarshal number"},
      {"cpuManagerReconcilePeriod: 5\n", "cpuManagerReconcilePeriod",
       "json: cannot unmarshal number into Go value of type string"},
      {"cpuManagerReconcilePeriod: 5 seconds\n", "cpuManagerReconcilePeriod",
       "time: unknown unit \" seconds\" in duration \"5 seconds\""},
      {"cpuManagerReconcilePeriod: \"10\"\n", "cpuManagerReconcilePeriod",
       "time: missing unit in duration \"10\""},
      {"reservedMemory: {numaNode: 0}\n", "reservedMemory", "cannot unmarshal object"},
      {"reservedMemory:\n  - numaNode: \"0\"\n", "reservedMemory[0].numaNode",
       "json: cannot unmarshal string into Go struct field "
       "MemoryReservation.reservedMemory.numaNode of type int32"},
      {"reservedMemory:\n  - numaNode: 99999999999\n", "reservedMemory[0].numaNode",
       "json: cannot unmarshal number 99999999999 into Go struct field "
       "MemoryReservation.reservedMemory.numaNode of type int32"},
      {"reservedMemory:\n  - numaNode: 1.5\n", "reservedMemory[0].numaNode",
       "cannot unmarshal number 1.5"},
      {"reservedMemory:\n  - limits: [1Gi]\n", "reservedMemory[0].limits", "cannot unmarshal array"},
      {"reservedMemory:\n  - limits:\n      memory: [1Gi]\n", "reservedMemory[0].limits.memory",
       "cannot unmarshal array"},
      {"reservedMemory:\n  - limits:\n      memory: lots\n", "reservedMemory[0].limits.memory",
       "invalid quantity \"lots\""},
      {"reservedMemory:\n  - limits:\n      memory: 99999999999999999999999999999999\n",
       "reservedMemory[0].limits.memory", "is too large"},
      {"mergeDefaultEvictionSettings: \"true\"\n", "mergeDefaultEvictionSettings",
       "cannot unmarshal string"},
      {"kind: [KubeletConfiguration]\n", "kind", "cannot unmarshal array"},
      {"maxPods: \"250\"\n", "maxPods",
       "json: cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of type "
       "int32"},
      {"maxPods: 2.5\n", "maxPods",
       "json: cannot unmarshal number 2.5 into Go struct field KubeletConfiguration.maxPods of "
       "type int32"},
      {"maxPods: 4294967296\n", "maxPods", "cannot unmarshal number 4294967296"},
  };
  for (const Case& c : cases) {
    ParsedKubeletConfig p = Parse(c.body);
    const Finding* f = FindMessage(p.findings, c.message);
    ASSERT_NE(f, nullptr) << c.body << "\n" << Dump(p.findings);
    EXPECT_EQ(f->severity, Finding::Severity::kError) << c.body;
    EXPECT_EQ(f->field, c.field) << c.body;
    EXPECT_GE(f->line, 3) << c.body;
  }
  // A field that fails to decode keeps its default.
  EXPECT_EQ(Parse("cpuManagerPolicy: [1]\n").config.cpu_manager_policy, "none");
  EXPECT_EQ(Parse("maxPods: [1]\n").config.max_pods, 110);
  EXPECT_EQ(Parse("maxPods: 250\n").config.max_pods, 250);
  EXPECT_EQ(Parse("maxPods: 0x10\n").config.max_pods, 16);
}

TEST(KubeletConfigDecodeTest, ScalarsDecodeAsGoYaml) {
  KubeletConfig c = Parse("featureGates:\n  PodLevelResourceManagers: yes\n  "
                          "CPUManagerPolicyAlphaOptions: on\n  TopologyManagerPolicyBetaOptions: Off\n"
                          "reservedMemory:\n  - numaNode: 0x1\n    limits:\n      memory: 1073741824\n"
                          "      hugepages-1Gi: 2Gi\n"
                          "cpuManagerPolicy: \"static\"\nreservedSystemCPUs: '0'\n"
                          "cpuManagerPolicy: 'static'\n")
                      .config;
  EXPECT_TRUE(c.FeatureEnabled("PodLevelResourceManagers"));
  EXPECT_TRUE(c.FeatureEnabled("CPUManagerPolicyAlphaOptions"));
  EXPECT_FALSE(c.FeatureEnabled("TopologyManagerPolicyBetaOptions"));
  ASSERT_EQ(c.reserved_memory.size(), 1u);
  EXPECT_EQ(c.reserved_memory[0].numa_node, 1);
  EXPECT_EQ(c.reserved_memory[0].limits.at("memory").String(), "1073741824");  // DecimalSI
  EXPECT_EQ(c.reserved_memory[0].limits.at("hugepages-1Gi").String(), "2Gi");
  EXPECT_EQ(c.reserved_system_cpus, "0");
  EXPECT_EQ(c.cpu_manager_policy, "static");
  // Empty policies and a zero period take the v1beta1 defaults.
  KubeletConfig d = Parse("cpuManagerPolicy: \"\"\nmemoryManagerPolicy: ''\n"
                          "cpuManagerReconcilePeriod: 0s\n").config;
  EXPECT_EQ(d.cpu_manager_policy, "none");
  EXPECT_EQ(d.memory_manager_policy, "None");
  EXPECT_EQ(d.cpu_manager_reconcile_period, Duration::Seconds(10));
  // null leaves the default.
  EXPECT_EQ(Parse("cpuManagerPolicy: ~\ntopologyManagerScope:\n").config.topology_manager_scope,
            "container");
}

TEST(KubeletConfigDecodeTest, UnknownFieldsGetSuggestions) {
  struct Case {
    const char* body;
    const char* field;
    const char* message;
  };
  const Case cases[] = {
      {"memoryManager:\n  policy: Static\n", "memoryManager",
       "did you mean memoryManagerPolicy?"},
      {"cpuManagerPolcy: static\n", "cpuManagerPolcy", "did you mean cpuManagerPolicy?"},
      {"CPUManagerPolicy: static\n", "CPUManagerPolicy", "did you mean cpuManagerPolicy?"},
      {"cpu-manager-policy: static\n", "cpu-manager-policy", "did you mean cpuManagerPolicy?"},
      {"topologyManager:\n  scope: pod\n", "topologyManager", "did you mean topologyManagerScope?"},
      {"cpuManager:\n  reconcilePeriod: 5s\n", "cpuManager",
       "did you mean cpuManagerReconcilePeriod?"},
      {"reservedMemory:\n  - numa: 0\n", "reservedMemory[0].numa", "did you mean numaNode?"},
      {"evictionHrad:\n  memory.available: 1Gi\n", "evictionHrad", "did you mean evictionHard?"},
  };
  for (const Case& c : cases) {
    ParsedKubeletConfig p = Parse(c.body);
    const Finding* f = FindMessage(p.findings, c.message);
    ASSERT_NE(f, nullptr) << c.body << "\n" << Dump(p.findings);
    EXPECT_EQ(f->severity, Finding::Severity::kWarning);
    EXPECT_EQ(f->field, c.field);
    EXPECT_THAT(f->message, HasSubstr("unknown field"));
    EXPECT_FALSE(HasErrors(p.findings)) << Dump(p.findings);
  }
  // Nothing close: no suggestion.
  ParsedKubeletConfig p = Parse("fooBarBaz: 1\n");
  ASSERT_EQ(p.findings.size(), 1u);
  EXPECT_EQ(p.findings[0].message.find("did you mean"), std::string::npos);
}

TEST(KubeletConfigDecodeTest, UnmodelledFieldsAreAcceptedSilently) {
  ParsedKubeletConfig p = Parse(
      "address: 0.0.0.0\nport: 10250\ncgroupDriver: systemd\nclusterDNS: [10.96.0.10]\n"
      "clusterDomain: cluster.local\nauthentication:\n  anonymous:\n    enabled: false\n"
      "authorization:\n  mode: Webhook\nmaxPods: 110\nlogging:\n  format: json\n"
      "shutdownGracePeriod: 30s\ncontainerRuntimeEndpoint: unix:///run/containerd/containerd.sock\n"
      "registerWithTaints: []\nevictionSoft: {}\nfailSwapOn: false\nrotateCertificates: true\n");
  EXPECT_TRUE(p.findings.empty()) << Dump(p.findings);
  EXPECT_GT(KnownKubeletConfigFields().size(), 120u);
}

TEST(KubeletConfigDecodeTest, TypeMetaAndDocuments) {
  ParsedKubeletConfig p = ParseKubeletConfig("", "empty.yaml");
  ASSERT_EQ(p.findings.size(), 1u);
  EXPECT_THAT(p.findings[0].message, HasSubstr("empty"));
  EXPECT_TRUE(HasErrors(p.findings));
  p = ParseKubeletConfig("# only a comment\n\n", "empty.yaml");
  EXPECT_TRUE(HasErrors(p.findings));
  p = ParseKubeletConfig("- a\n- b\n", "list.yaml");
  ASSERT_TRUE(HasErrors(p.findings));
  EXPECT_THAT(p.findings[0].message, HasSubstr("found a sequence"));
  p = ParseKubeletConfig("just text\n", "scalar.yaml");
  ASSERT_TRUE(HasErrors(p.findings));
  p = ParseKubeletConfig(
      "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n", "v1.yaml");
  EXPECT_NE(FindMessage(p.findings, "is registered for version \"kubelet.config.k8s.io/v1\""),
            nullptr)
      << Dump(p.findings);
  p = ParseKubeletConfig("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeProxyConfiguration\n",
                         "kind.yaml");
  EXPECT_NE(FindMessage(p.findings, "no kind \"KubeProxyConfiguration\""), nullptr);
  p = ParseKubeletConfig(std::string(kHeader) + "---\n" + kHeader, "two.yaml");
  ASSERT_EQ(p.findings.size(), 1u) << Dump(p.findings);
  EXPECT_EQ(p.findings[0].severity, Finding::Severity::kWarning);
  EXPECT_THAT(p.findings[0].message, HasSubstr("2 YAML documents"));
}

TEST(KubeletConfigDecodeTest, DuplicateFieldsWarnAndLastWins) {
  ParsedKubeletConfig p = Parse("cpuManagerPolicy: none\ncpuManagerPolicy: static\n");
  ASSERT_EQ(p.findings.size(), 1u) << Dump(p.findings);
  EXPECT_EQ(p.findings[0].severity, Finding::Severity::kWarning);
  EXPECT_THAT(p.findings[0].message, HasSubstr("duplicate field \"cpuManagerPolicy\""));
  EXPECT_EQ(p.findings[0].line, 4);
  EXPECT_EQ(p.config.cpu_manager_policy, "static");
}

TEST(KubeletConfigDecodeTest, LoadErrors) {
  absl::StatusOr<ParsedKubeletConfig> missing = LoadKubeletConfig("/nonexistent/kubelet.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/nonexistent/kubelet.yaml"));
}

// ---------------------------------------------------------------------------------------
// Reservations and eviction.

TEST(KubeletConfigReservationTest, NodeAllocatableReservation) {
  KubeletConfig c = Parse("systemReserved:\n  cpu: 500m\n  memory: 1Gi\nkubeReserved:\n"
                          "  cpu: 600m\n  memory: 512Mi\n  ephemeral-storage: 1Gi\n")
                        .config;
  const ResourceList capacity = {{"cpu", Q("64")},
                                 {"memory", Q("64Gi")},
                                 {"ephemeral-storage", Q("100Gi")},
                                 {"hugepages-2Mi", Q("0")}};
  ResourceList r = c.NodeAllocatableReservation(capacity);
  EXPECT_EQ(r.at("cpu").String(), "1100m");
  EXPECT_EQ(r.at("memory").String(), "1636Mi");  // 1Gi + 512Mi + 100Mi (default eviction)
  // 1Gi + 10% of 100Gi, where 10% is float32 0.1 as in the kubelet: 10737418400, not 10Gi.
  EXPECT_EQ(r.at("ephemeral-storage").String(), "11811160224");
  EXPECT_EQ(r.count("hugepages-2Mi"), 0u);  // zero sums are left out
  EXPECT_EQ(c.NumReservedCpus(), 2);        // ceil(1100m)
  // Without capacity entries nothing is reserved.
  EXPECT_TRUE(c.NodeAllocatableReservation({}).empty());
}

TEST(KubeletConfigReservationTest, ReservedSystemCpusOverrideCpuReservations) {
  KubeletConfig c =
      Parse("reservedSystemCPUs: \"0,32\"\nkubeReserved:\n  cpu: 500m\nsystemReserved:\n"
            "  cpu: \"4\"\n")
          .config;
  EXPECT_EQ(c.NumReservedCpus(), 2);
  EXPECT_EQ(c.SystemReserved()->at("cpu").String(), "2");
  EXPECT_EQ(c.KubeReserved()->count("cpu"), 0u);
  EXPECT_EQ(c.ReservedSystemCpuSet()->String(), "0,32");
}

TEST(KubeletConfigReservationTest, EvictionDefaultingAndMerging) {
  KubeletConfig replaced = Parse("evictionHard:\n  nodefs.available: 5%\n").config;
  EXPECT_EQ(replaced.eviction_hard.size(), 1u);
  EXPECT_EQ(replaced.eviction_hard.count("memory.available"), 0u);
  KubeletConfig merged =
      Parse("mergeDefaultEvictionSettings: true\nevictionHard:\n  nodefs.available: 5%\n").config;
  EXPECT_EQ(merged.eviction_hard.at("memory.available"), "100Mi");
  EXPECT_EQ(merged.eviction_hard.at("nodefs.available"), "5%");
  KubeletConfig emptied = Parse("evictionHard: {}\n").config;
  EXPECT_TRUE(emptied.eviction_hard.empty());
  auto thresholds = Parse("").config.HardEvictionThresholds();
  ASSERT_TRUE(thresholds.ok());
  ASSERT_EQ(thresholds->size(), 4u);
  for (const EvictionThreshold& t : *thresholds) {
    if (t.signal == "memory.available") {
      EXPECT_EQ(t.quantity->String(), "100Mi");
    }
    if (t.signal == "nodefs.available") {
      EXPECT_FLOAT_EQ(t.percentage, 0.1f);
    }
  }
  // 0% and 100% switch a signal off.
  EXPECT_TRUE(Parse("evictionHard:\n  memory.available: 100%\n").config.HardEvictionThresholds()->empty());
}

// ---------------------------------------------------------------------------------------
// Properties: arbitrary input never crashes; generated configs round-trip through YAML.

PODTOPO_PROPERTY(KubeletConfigProperty, ArbitraryTextNeverCrashes, ()) {
  const std::string text = *rc::gen::container<std::string>(rc::gen::element(
      'a', 'k', ':', ' ', '\n', '-', '[', ']', '{', '}', '"', '\'', '1', '0', '.', '%', '#', '&',
      '*', '!', '|', '>', '\t', ','));
  ParsedKubeletConfig p = ParseKubeletConfig(text, "fuzz.yaml");
  for (const Finding& f : p.findings) RC_ASSERT(!f.message.empty());
  std::vector<Finding> v = p.config.Validate();
  for (const Finding& f : v) RC_ASSERT(!f.message.empty());
}

PODTOPO_PROPERTY(KubeletConfigProperty, FieldsWithArbitraryValuesNeverCrash, ()) {
  static const std::vector<std::string> kFields = {
      "featureGates", "cpuManagerPolicy", "cpuManagerPolicyOptions", "cpuManagerReconcilePeriod",
      "memoryManagerPolicy", "reservedMemory", "topologyManagerPolicy", "topologyManagerScope",
      "topologyManagerPolicyOptions", "reservedSystemCPUs", "kubeReserved", "systemReserved",
      "evictionHard", "mergeDefaultEvictionSettings", "maxPods"};
  static const std::vector<std::string> kValues = {
      "static", "\"\"", "~", "[]", "{}", "[1, {a: b}]", "{cpu: 1}", "{cpu: \"-1\"}",
      "{memory: 1e400}", "- numaNode: -1\n  limits: {memory: 1Gi}", "{PodLevelResources: no}",
      "5s", "-5s", "1e3", "yes", "0x10", "\"0-3,5\"", "{memory.available: \"10%\"}", ".inf"};
  std::string body;
  const int n = *rc::gen::inRange(1, 6);
  for (int i = 0; i < n; ++i) {
    body += *rc::gen::elementOf(kFields) + ": " + *rc::gen::elementOf(kValues) + "\n";
  }
  ParsedKubeletConfig p = Parse(body);
  std::vector<Finding> v = p.config.Validate();
  for (const Finding& f : v) RC_ASSERT(!f.ToString().empty());
  (void)p.config.NodeAllocatableReservation({{"cpu", Q("4")}, {"memory", Q("8Gi")}});
  (void)p.config.NumReservedCpus();
}

PODTOPO_PROPERTY(KubeletConfigProperty, ToYamlRoundTrips, ()) {
  KubeletConfig c;
  c.cpu_manager_policy = *rc::gen::element<std::string>("none", "static", "x y");
  c.memory_manager_policy = *rc::gen::element<std::string>("None", "Static", "yes");
  c.topology_manager_policy =
      *rc::gen::element<std::string>("none", "best-effort", "restricted", "single-numa-node");
  c.topology_manager_scope = *rc::gen::element<std::string>("container", "pod");
  c.cpu_manager_reconcile_period = Duration(*rc::gen::inRange<int64_t>(1, int64_t{1} << 50));
  if (*rc::gen::arbitrary<bool>()) c.cpu_manager_policy_options["full-pcpus-only"] = "true";
  if (*rc::gen::arbitrary<bool>()) c.reserved_system_cpus = "0-1";
  if (*rc::gen::arbitrary<bool>()) c.feature_gates["PodLevelResourceManagers"] = true;
  if (*rc::gen::arbitrary<bool>()) c.kube_reserved["cpu"] = "1500m";
  c.max_pods = *rc::gen::element<int32_t>(0, 110, 250);
  MemoryReservation r;
  r.numa_node = *rc::gen::inRange(0, 8);
  r.limits["memory"] = Quantity::FromInt(*rc::gen::inRange<int64_t>(1, int64_t{1} << 40),
                                         Quantity::Format::kBinarySI);
  c.reserved_memory.push_back(r);
  ParsedKubeletConfig back = ParseKubeletConfig(c.ToYaml(), "generated.yaml");
  RC_ASSERT(!HasErrors(back.findings));
  RC_ASSERT(back.config.SameSettings(c));
}

}  // namespace
}  // namespace podtopo::config
