#include "api/pod_yaml.h"


#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/property.h"
#include "api/pod_gates.h"
#include "config/feature_gates.h"
#include "config/kubelet_config.h"
#include "testing/testing.h"
#include "util/file.h"

namespace podtopo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<Pod> MustParse(const std::string& yaml, const std::string& source = "pod.yaml",
                           const PodLoadOptions& options = {}) {
  absl::StatusOr<std::vector<Pod>> pods = ParsePods(yaml, source, options);
  EXPECT_TRUE(pods.ok()) << pods.status();
  return pods.ok() ? *pods : std::vector<Pod>{};
}

Pod MustParseOne(const std::string& yaml, const PodLoadOptions& options = {}) {
  std::vector<Pod> pods = MustParse(yaml, "pod.yaml", options);
  EXPECT_EQ(pods.size(), 1u);
  return pods.empty() ? Pod() : pods[0];
}

std::string ErrorOf(const std::string& yaml, const std::string& source = "pod.yaml",
                    const PodLoadOptions& options = {}) {
  absl::StatusOr<std::vector<Pod>> pods = ParsePods(yaml, source, options);
  EXPECT_FALSE(pods.ok()) << "expected an error for:\n" << yaml;
  if (pods.ok()) return "";
  EXPECT_EQ(pods.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(pods.status().message());
}

std::string Str(const ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? "<absent>" : it->second.String();
}

// The v1.36 pod-level defaulting rules (PodLevelResourcesFixDefaulting off).
const PodLoadOptions k136{.gates = {.fix_defaulting = false}};

// A pod around `spec_body` (already indented by two spaces).
std::string PodWithSpec(const std::string& spec_body, const std::string& name = "demo") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n" + spec_body;
}

// ---------------------------------------------------------------------------------------
// Real manifests.

TEST(PodYamlTest, SeedPodLevelResourceDemo) {
  const std::string path = testing::SharedDir() + "/seed/pod-level-resource-demo.yaml";
  absl::StatusOr<std::vector<Pod>> pods = LoadPods(path);
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->size(), 1u);
  const Pod& pod = (*pods)[0];
  EXPECT_EQ(pod.name, "pod-level-resource-demo");
  EXPECT_EQ(pod.namespace_name, "default");
  EXPECT_EQ(pod.source, path);
  // uuid.uuid5(uuid.NAMESPACE_URL, "podtopo://pods/default/pod-level-resource-demo")
  EXPECT_EQ(pod.uid, "b385c6d1-89e3-5d0a-a83c-5d5745f7b44b");
  EXPECT_EQ(pod.labels.at("app"), "numa-sensitive-demo");
  ASSERT_TRUE(pod.resources.has_value());
  EXPECT_EQ(Str(pod.resources->requests, "cpu"), "2");
  EXPECT_EQ(Str(pod.resources->requests, "memory"), "2Gi");
  EXPECT_EQ(Str(pod.resources->limits, "cpu"), "2");
  EXPECT_EQ(Str(pod.resources->limits, "memory"), "2Gi");
  EXPECT_TRUE(pod.init_containers.empty());
  ASSERT_EQ(pod.containers.size(), 2u);
  EXPECT_EQ(pod.containers[0].name, "worker");
  EXPECT_EQ(pod.containers[1].name, "telemetry-sidecar");
  for (const Container& c : pod.containers) {
    EXPECT_EQ(c.kind, ContainerKind::kApp);
    EXPECT_EQ(c.image, "busybox:1.36");
    EXPECT_THAT(c.command, ElementsAre("sh", "-c"));
    ASSERT_EQ(c.args.size(), 1u);
    EXPECT_THAT(c.args[0], HasSubstr("while true"));
    EXPECT_TRUE(c.resources.requests.empty());
    EXPECT_TRUE(c.resources.limits.empty());
    EXPECT_FALSE(IsContainerEquivalentQosGuaranteed(c));
  }
  EXPECT_TRUE(pod.HasPodLevelResources());
  EXPECT_EQ(GetPodQos(pod), QosClass::kGuaranteed);
  EXPECT_EQ(GetPodQos(pod, {.pod_level_resources = false}), QosClass::kBestEffort);
}

TEST(PodYamlTest, DocsExamplePodScopeMixed) {
  absl::StatusOr<std::vector<Pod>> pods =
      LoadPods(testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml");
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->size(), 1u);
  const Pod& pod = (*pods)[0];
  EXPECT_EQ(pod.name, "pod-scope-mixed");
  EXPECT_EQ(pod.uid, "d906daa8-1e76-5313-adcb-57a3c323ff6b");
  ASSERT_TRUE(pod.resources.has_value());
  EXPECT_EQ(Str(pod.resources->requests, "cpu"), "4");
  EXPECT_EQ(Str(pod.resources->limits, "memory"), "4Gi");
  ASSERT_EQ(pod.init_containers.size(), 2u);
  EXPECT_EQ(pod.init_containers[0].name, "metrics-sidecar");
  EXPECT_EQ(pod.init_containers[1].name, "logging-sidecar");
  for (const Container& c : pod.init_containers) {
    EXPECT_EQ(c.kind, ContainerKind::kSidecar);
    EXPECT_TRUE(c.IsRestartableInit());
    EXPECT_FALSE(IsContainerEquivalentQosGuaranteed(c));
  }
  ASSERT_EQ(pod.containers.size(), 1u);
  EXPECT_EQ(pod.containers[0].name, "main-app");
  EXPECT_TRUE(IsContainerEquivalentQosGuaranteed(pod.containers[0]));
  EXPECT_TRUE(pod.containers[0].resources.requests.at("cpu").IsInteger());
  EXPECT_EQ(GetPodQos(pod), QosClass::kGuaranteed);
}

// ---------------------------------------------------------------------------------------
// Documents and lists.

constexpr char kSmallPod[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: NAME
spec:
  containers:
  - name: c
    image: busybox
)";

std::string SmallPod(const std::string& name) {
  std::string s = kSmallPod;
  s.replace(s.find("NAME"), 4, name);
  return s;
}

// A manifest that is not UTF-8 is refused (go-yaml and encoding/json refuse it): read as it was,
// every JSON podtopo wrote of it threw, and `podtopo serve` died writing its rejection (found by
// the pod_manifest fuzz campaign; fuzz/regressions/pod_manifest/crash-48efb1e8...).
TEST(PodYamlTest, InvalidUtf8IsRefusedNamingTheLineAndColumn) {
  for (const std::string& text :
       {std::string("apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n  labels: {a: \"x\xff\"}\n"),
        std::string("{\"apiVersion\": \"v1\", \"kind\": \"Pod\",\n \"metadata\": {\"name\": \"b\x97\"}}")}) {
    absl::StatusOr<std::vector<Pod>> pods = ParsePods(text, "bad.yaml");
    ASSERT_FALSE(pods.ok()) << text;
    EXPECT_THAT(std::string(pods.status().message()), ::testing::StartsWith("bad.yaml: line "));
    EXPECT_THAT(std::string(pods.status().message()), ::testing::HasSubstr("invalid UTF-8"));
  }
}

TEST(PodYamlTest, MultiDocumentFile) {
  std::vector<Pod> pods =
      MustParse("---\n" + SmallPod("a") + "---\n# only a comment\n---\n" + SmallPod("b"));
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0].name, "a");
  EXPECT_EQ(pods[1].name, "b");
  EXPECT_EQ(pods[0].source, "pod.yaml#1");
  EXPECT_EQ(pods[1].source, "pod.yaml#3");
  EXPECT_NE(pods[0].uid, pods[1].uid);
}

TEST(PodYamlTest, ListOfPods) {
  const std::string yaml = R"(apiVersion: v1
kind: List
metadata:
  resourceVersion: ""
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: one, namespace: team-a, uid: 11111111-2222-3333-4444-555555555555}
  spec:
    containers: [{name: c, image: x}]
  status: {phase: Running, qosClass: BestEffort}
- apiVersion: v1
  kind: Pod
  metadata: {name: two}
  spec:
    containers: [{name: c, image: x}]
)";
  std::vector<Pod> pods = MustParse(yaml + "---\n" + SmallPod("three"));
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_EQ(pods[0].Key(), "team-a/one");
  EXPECT_EQ(pods[0].uid, "11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(pods[0].source, "pod.yaml#1.items[0]");
  EXPECT_EQ(pods[1].Key(), "default/two");
  EXPECT_EQ(pods[1].source, "pod.yaml#1.items[1]");
  EXPECT_EQ(pods[2].source, "pod.yaml#2");
}

TEST(PodYamlTest, OtherKindsAreSkippedOrErrorsWhenStrict) {
  std::map<std::string, int> skipped;
  std::vector<Pod> pods = MustParse(
      SmallPod("a") + "---\napiVersion: v1\nkind: Service\n---\napiVersion: v1\nkind: Service\n"
                      "---\napiVersion: v1\nkind: ConfigMap\n",
      "pod.yaml", {.skipped_kinds = &skipped});
  EXPECT_EQ(pods.size(), 1u);
  EXPECT_EQ(skipped, (std::map<std::string, int>{{"ConfigMap", 1}, {"Service", 2}}));
  EXPECT_THAT(ErrorOf("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n",
                      "pod.yaml", {.strict = true}),
              HasSubstr("1 object of a kind podtopo does not read (--strict: other kinds are "
                        "errors; podtopo reads Pod, Deployment"));
  EXPECT_THAT(ErrorOf("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n",
                      "pod.yaml", {.strict = true}),
              HasSubstr("\n  pod.yaml: document 1: Service (items[0])"));
  // Issue 22 item 12.5: --strict names every object it refuses, not only the first.
  const std::string refused =
      ErrorOf(SmallPod("a") +
                  "---\napiVersion: v1\nkind: Service\nmetadata: {name: s1}\n---\napiVersion: v1\n"
                  "kind: ConfigMap\nmetadata: {name: cm}\n---\napiVersion: v1\nkind: List\nitems:\n"
                  "- {apiVersion: v1, kind: Pod, metadata: {name: b}, spec: {containers: [{name: c, "
                  "image: i}]}}\n- {apiVersion: v1, kind: Service, metadata: {name: s2}}\n",
              "pod.yaml", {.strict = true});
  EXPECT_THAT(refused, HasSubstr("pod.yaml: 3 objects of a kind podtopo does not read"));
  EXPECT_THAT(refused, HasSubstr("\n  pod.yaml: document 2: Service s1\n"));
  EXPECT_THAT(refused, HasSubstr("\n  pod.yaml: document 3: ConfigMap cm\n"));
  EXPECT_THAT(refused, HasSubstr("\n  pod.yaml: document 4: Service s2 (items[1])"));
  EXPECT_THAT(ErrorOf("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n"),
              HasSubstr("no pods (the input is empty, holds only empty documents or lists, "
                        "workloads with no replicas, or only objects podtopo skips: 1 Service)"));
  EXPECT_THAT(ErrorOf(SmallPod("a") + "---\napiVersion: apps/v1\nkind: Deployment\n"),
              HasSubstr("pod.yaml: document 2: Deployment: metadata.name: Required value"));
  EXPECT_THAT(ErrorOf("apiVersion: apps/v1\nkind: Pod\nmetadata: {name: a}\n"),
              HasSubstr("apiVersion: Unsupported value: \"apps/v1\""));
  EXPECT_THAT(ErrorOf("metadata: {name: a}\nspec: {}\n"), HasSubstr("kind: Required value"));
  EXPECT_THAT(ErrorOf("kind: Pod\nmetadata: {name: a}\n"),
              HasSubstr("apiVersion: Required value"));
  EXPECT_THAT(ErrorOf("- a\n- b\n"), HasSubstr("document 1: [0]: expected a map, got a string"));
  EXPECT_THAT(ErrorOf("just a string\n"), HasSubstr("expected a Kubernetes object"));
  EXPECT_THAT(ErrorOf("apiVersion: v1\nkind: List\nitems: {a: b}\n"),
              HasSubstr("items: expected a list, got a map"));
  EXPECT_THAT(ErrorOf("apiVersion: v1\nkind: List\nitems:\n- null\n"),
              HasSubstr("items[0]: expected an object, got null"));
}

TEST(PodYamlTest, NoPods) {
  for (const std::string& yaml : {std::string(""), std::string("\n\n"), std::string("---\n---\n"),
                                  std::string("# comment\n"),
                                  std::string("apiVersion: v1\nkind: List\nitems: []\n"),
                                  std::string("apiVersion: v1\nkind: List\n")}) {
    EXPECT_THAT(ErrorOf(yaml, "empty.yaml"), HasSubstr("empty.yaml: no pods")) << yaml;
  }
}

TEST(PodYamlTest, DuplicatePodsInOneFile) {
  EXPECT_THAT(ErrorOf(SmallPod("a") + "---\n" + SmallPod("a")),
              HasSubstr("pod.yaml: document 2: metadata.name: Duplicate value: \"a\" (pod "
                        "default/a is already defined in document 1)"));
  // The same name in two namespaces is fine.
  std::string other_ns = SmallPod("a");
  other_ns.replace(other_ns.find("  name: a"), 9, "  name: a\n  namespace: other");
  EXPECT_EQ(MustParse(SmallPod("a") + "---\n" + other_ns).size(), 2u);
}

// ---------------------------------------------------------------------------------------
// Fields.

TEST(PodYamlTest, ContainersOfAllKindsAndUnknownFieldsIgnored) {
  Pod pod = MustParseOne(R"(apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: team-a
  labels: {app: web, tier: "1"}
  annotations: {anything: goes}
  ownerReferences: [{kind: ReplicaSet, name: rs}]
spec:
  nodeName: node-1
  volumes: [{name: v, emptyDir: {}}]
  initContainers:
  - name: setup
    image: busybox
    restartPolicy: Never
  - name: proxy
    image: envoy
    restartPolicy: Always
    ports: [{containerPort: 8080}]
  containers:
  - name: app
    image: nginx
    command: [nginx]
    args: ["-g", "daemon off;"]
    restartPolicy: OnFailure
    env: [{name: A, value: "1"}]
    resources:
      claims: [{name: gpu}]
  ephemeralContainers:
  - name: debug
    image: busybox
    resources: {}
status:
  qosClass: Guaranteed
)");
  EXPECT_EQ(pod.Key(), "team-a/web");
  EXPECT_EQ(pod.uid, "64bf23b1-44af-533a-86b8-0426f777159f");
  EXPECT_EQ(pod.labels.size(), 2u);
  EXPECT_EQ(pod.labels.at("tier"), "1");
  EXPECT_FALSE(pod.resources.has_value());
  ASSERT_EQ(pod.init_containers.size(), 2u);
  EXPECT_EQ(pod.init_containers[0].kind, ContainerKind::kInit);
  EXPECT_EQ(pod.init_containers[1].kind, ContainerKind::kSidecar);
  ASSERT_EQ(pod.containers.size(), 1u);
  EXPECT_EQ(pod.containers[0].kind, ContainerKind::kApp);
  EXPECT_THAT(pod.containers[0].args, ElementsAre("-g", "daemon off;"));
  ASSERT_EQ(pod.ephemeral_containers.size(), 1u);
  EXPECT_EQ(pod.ephemeral_containers[0].kind, ContainerKind::kEphemeral);
  EXPECT_EQ(GetPodQos(pod), QosClass::kBestEffort);  // status.qosClass is not read
}

TEST(PodYamlTest, EmptyAndNullPodLevelStanzas) {
  Pod null_stanza = MustParseOne(PodWithSpec("  resources: null\n  containers: [{name: c}]\n"));
  EXPECT_FALSE(null_stanza.resources.has_value());
  Pod empty_stanza = MustParseOne(PodWithSpec("  resources: {}\n  containers: [{name: c}]\n"));
  ASSERT_TRUE(empty_stanza.resources.has_value());
  EXPECT_TRUE(empty_stanza.resources->requests.empty());
  EXPECT_FALSE(empty_stanza.HasPodLevelResources());
}

TEST(PodYamlTest, Issue135082EmptyPodLevelResourcesKeepContainerQos) {
  // The pod of k/k #135082: `resources: {}` with a Guaranteed container.
  Pod pod = MustParseOne(R"(apiVersion: v1
kind: Pod
metadata:
  name:      pause-plr
spec:
  resources: {}
  containers:
    - name:    pause
      image: registry.k8s.io/pause:latest
      resources:
        requests:
          cpu:    100m
          memory: 50Mi
        limits:
          cpu:    100m
          memory: 50Mi
)");
  EXPECT_EQ(GetPodQos(pod), QosClass::kGuaranteed);
  EXPECT_EQ(GetPodQos(pod, {.fix_kubelet_qos_class = false}), QosClass::kBestEffort);
  Pod requests_only = MustParseOne(
      PodWithSpec("  resources: {requests: {}}\n  containers: [{name: c, resources: {limits: "
                  "{cpu: 1, memory: 1Gi}}}]\n"));
  EXPECT_EQ(GetPodQos(requests_only), QosClass::kGuaranteed);
}

TEST(PodYamlTest, QuantitiesAsNumbersAndStrings) {
  Pod pod = MustParseOne(PodWithSpec(R"(  containers:
  - name: c
    resources:
      requests: {cpu: 0.5, memory: 1e9, example.com/gpu: 1}
      limits: {cpu: "1", memory: 1G, example.com/gpu: "1"}
)"));
  const Container& c = pod.containers[0];
  EXPECT_EQ(c.resources.requests.at("cpu").MilliValue(), 500);
  EXPECT_EQ(c.resources.requests.at("memory").Value(), 1000000000);
  EXPECT_EQ(c.resources.limits.at("memory").Value(), 1000000000);
  EXPECT_EQ(c.resources.requests.at("example.com/gpu").Value(), 1);
}

TEST(PodYamlTest, UnquotedNumbersReadAsKubectlSendsThem) {
  // go-yaml v2 (kubectl) reads these plain scalars as integers: octal, hex, binary, '_'.
  Pod pod = MustParseOne(PodWithSpec(R"(  containers:
  - name: c
    resources:
      requests: {cpu: 010, memory: 0x100, example.com/a: 0b11, example.com/b: 1_000}
      limits: {cpu: "010", example.com/a: 3, example.com/b: "1000"}
)"));
  const ResourceList& requests = pod.containers[0].resources.requests;
  EXPECT_EQ(requests.at("cpu").MilliValue(), 8000);       // plain 010 is octal
  EXPECT_EQ(pod.containers[0].resources.limits.at("cpu").MilliValue(), 10000);  // quoted
  EXPECT_EQ(requests.at("memory").Value(), 256);
  EXPECT_EQ(requests.at("example.com/a").Value(), 3);
  EXPECT_EQ(requests.at("example.com/b").Value(), 1000);
  // A plain number that is not an integer literal keeps its text: 08 and 1.5e3.
  Pod floats = MustParseOne(PodWithSpec(
      "  containers: [{name: c, resources: {requests: {cpu: 08, memory: 1.5e3}}}]\n"));
  EXPECT_EQ(floats.containers[0].resources.requests.at("cpu").MilliValue(), 8000);
  EXPECT_EQ(floats.containers[0].resources.requests.at("memory").Value(), 1500);
}

TEST(PodYamlTest, WrongTypesAreErrors) {
  EXPECT_THAT(ErrorOf(PodWithSpec("  containers: {name: c}\n")),
              HasSubstr("spec.containers: expected a list of containers, got a map"));
  EXPECT_THAT(ErrorOf(PodWithSpec("  containers: [{name: 12}]\n")),
              HasSubstr("spec.containers[0].name: expected a string, got the number 12 (quote "
                        "it: \"12\")"));
  EXPECT_THAT(ErrorOf(PodWithSpec("  containers: [{name: c, command: sh}]\n")),
              HasSubstr("spec.containers[0].command: expected a list of strings, got a string"));
  EXPECT_THAT(ErrorOf(PodWithSpec("  containers: [{name: c, args: [--port, 8080]}]\n")),
              HasSubstr("spec.containers[0].args[1]: expected a string, got the number 8080"));
  EXPECT_THAT(ErrorOf(PodWithSpec("  containers: [{name: c, resources: [a]}]\n")),
              HasSubstr("spec.containers[0].resources: expected a map, got a list"));
  EXPECT_THAT(
      ErrorOf(PodWithSpec("  containers: [{name: c, resources: {requests: {cpu: [1]}}}]\n")),
      HasSubstr("spec.containers[0].resources.requests.cpu: expected a quantity"));
  EXPECT_THAT(ErrorOf(PodWithSpec("  containers: [{name: c}]\n  resources: {limits: 4}\n")),
              HasSubstr("spec.resources.limits: expected a map, got the number 4"));
  EXPECT_THAT(ErrorOf("apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {on: yes}}\n"
                      "spec: {containers: [{name: c}]}\n"),
              HasSubstr("metadata.labels.on: expected a string, got the boolean yes"));
  EXPECT_THAT(ErrorOf("apiVersion: v1\nkind: Pod\nmetadata: [a]\nspec: {containers: [{name: c}]}\n"),
              HasSubstr("metadata: expected a map, got a list"));
  EXPECT_THAT(ErrorOf("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: 3\n"),
              HasSubstr("spec: expected a map, got the number 3"));
  EXPECT_THAT(ErrorOf("apiVersion: 1\nkind: Pod\nmetadata: {name: a}\n"),
              HasSubstr("apiVersion: expected a string, got the number 1"));
  EXPECT_THAT(ErrorOf(PodWithSpec("  containers: [{name: c, name: d}]\n")),
              HasSubstr("spec.containers[0]: duplicate key \"name\""));
  EXPECT_THAT(ErrorOf(PodWithSpec("  containers: [null]\n")),
              HasSubstr("spec.containers[0]: expected a container, got null"));
}

TEST(PodYamlTest, AllProblemsOfADocumentAreReported) {
  std::string error = ErrorOf(PodWithSpec(R"(  containers:
  - name: a
    resources: {requests: {cpu: 2x}}
  - name: b
    resources: {requests: {memory: lots}}
)"),
                              "p.yaml");
  EXPECT_THAT(error, HasSubstr("p.yaml: document 1: spec.containers[0].resources.requests.cpu: "
                               "\"2x\""));
  EXPECT_THAT(error, HasSubstr("\np.yaml: document 1: spec.containers[1].resources.requests."
                               "memory: \"lots\""));
}

TEST(PodYamlTest, InvalidQuantityNamesFieldAndText) {
  std::string error = ErrorOf("---\n" + SmallPod("ok") + "---\n" + PodWithSpec(R"(  containers:
  - name: a
  - name: b
    resources:
      requests:
        cpu: 2x
)"));
  EXPECT_THAT(error, HasSubstr("pod.yaml: document 2: spec.containers[1].resources.requests.cpu: "
                               "\"2x\""));
  EXPECT_THAT(error, HasSubstr("quantities must match"));
  EXPECT_THAT(ErrorOf(PodWithSpec("  containers: [{name: c, resources: {limits: {memory: "
                                  "1e400}}}]\n")),
              HasSubstr("spec.containers[0].resources.limits.memory"));
}

// ---------------------------------------------------------------------------------------
// Defaulting.

TEST(PodYamlDefaultingTest, ContainerRequestsDefaultToLimits) {
  Pod pod = MustParseOne(PodWithSpec(R"(  initContainers:
  - name: i
    resources: {limits: {cpu: "1", memory: 1Gi}, requests: {cpu: 500m}}
  containers:
  - name: c
    resources: {limits: {cpu: "2", memory: 2Gi, hugepages-2Mi: 4Mi}}
)"));
  EXPECT_EQ(Str(pod.init_containers[0].resources.requests, "cpu"), "500m");
  EXPECT_EQ(Str(pod.init_containers[0].resources.requests, "memory"), "1Gi");
  EXPECT_EQ(Str(pod.containers[0].resources.requests, "cpu"), "2");
  EXPECT_EQ(Str(pod.containers[0].resources.requests, "memory"), "2Gi");
  EXPECT_EQ(Str(pod.containers[0].resources.requests, "hugepages-2Mi"), "4Mi");
  EXPECT_EQ(GetPodQos(pod), QosClass::kBurstable);
}

TEST(PodYamlDefaultingTest, PodRequestsFromContainersWithSidecarFormula) {
  Pod pod = MustParseOne(PodWithSpec(R"(  resources:
    limits: {cpu: "8", memory: 8Gi}
  initContainers:
  - name: init
    resources: {requests: {cpu: "3"}}
  - name: side
    restartPolicy: Always
    resources: {requests: {cpu: "1", memory: 1Gi}}
  containers:
  - name: app
    resources: {requests: {cpu: "2", memory: 1Gi}}
)"));
  ASSERT_TRUE(pod.resources.has_value());
  // max(2 + 1, 3) = 3 cpu; memory 1Gi + 1Gi = 2Gi.
  EXPECT_EQ(Str(pod.resources->requests, "cpu"), "3");
  EXPECT_EQ(Str(pod.resources->requests, "memory"), "2Gi");
  EXPECT_EQ(GetPodQos(pod), QosClass::kBurstable);
}

TEST(PodYamlDefaultingTest, PodRequestsFromPodLimitsWhenContainersRequestNothing) {
  Pod pod = MustParseOne(PodWithSpec(R"(  resources:
    limits: {cpu: "4", memory: 4Gi}
  containers:
  - name: a
  - name: b
    resources: {requests: {cpu: "1"}}
)"));
  EXPECT_EQ(Str(pod.resources->requests, "cpu"), "1");       // from the containers
  EXPECT_EQ(Str(pod.resources->requests, "memory"), "4Gi");  // from the pod limit
  EXPECT_EQ(GetPodQos(pod), QosClass::kBurstable);

  Pod only_limits = MustParseOne(PodWithSpec(R"(  resources:
    limits: {cpu: "4", memory: 4Gi}
  containers: [{name: a}]
)"));
  EXPECT_EQ(Str(only_limits.resources->requests, "cpu"), "4");
  EXPECT_EQ(GetPodQos(only_limits), QosClass::kGuaranteed);
}

TEST(PodYamlDefaultingTest, PodLimitsFromContainersOnlyWhenAllHaveLimits) {
  Pod all = MustParseOne(PodWithSpec(R"(  resources:
    requests: {cpu: "2", memory: 2Gi}
  initContainers:
  - name: s
    restartPolicy: Always
    resources: {limits: {cpu: 500m, memory: 512Mi}}
  containers:
  - name: a
    resources: {limits: {cpu: "1", memory: 1Gi}}
  - name: b
    resources: {limits: {cpu: 500m}}
)"));
  EXPECT_EQ(Str(all.resources->limits, "cpu"), "2");           // 1 + 0.5 + 0.5
  EXPECT_EQ(Str(all.resources->limits, "memory"), "<absent>");  // b has no memory limit
  EXPECT_EQ(GetPodQos(all), QosClass::kBurstable);

  // v1.36: a pod-level limit already set (cpu) stops all limit defaulting
  // (IsPodLevelLimitsSet). v1.37 (#140514) defaults each resource on its own:
  // max(pod request 2Gi, container limits 1Gi).
  const std::string some_yaml = PodWithSpec(R"(  resources:
    requests: {cpu: "2", memory: 2Gi}
    limits: {cpu: "2"}
  containers:
  - name: a
    resources: {limits: {cpu: "1", memory: 1Gi}}
)");
  EXPECT_EQ(Str(MustParseOne(some_yaml, k136).resources->limits, "memory"), "<absent>");
  EXPECT_EQ(Str(MustParseOne(some_yaml).resources->limits, "memory"), "2Gi");
}

TEST(PodYamlDefaultingTest, PodLevelGuaranteedThroughDefaulting) {
  // Requests only at pod level; every container sets both limits -> pod limits default to
  // the container sums, which equal the requests -> Guaranteed.
  Pod pod = MustParseOne(PodWithSpec(R"(  resources:
    requests: {cpu: "2", memory: 2Gi}
  containers:
  - name: a
    resources: {limits: {cpu: "1", memory: 1Gi}}
  - name: b
    resources: {limits: {cpu: "1", memory: 1Gi}}
)"));
  EXPECT_EQ(Str(pod.resources->limits, "cpu"), "2");
  EXPECT_EQ(Str(pod.resources->limits, "memory"), "2Gi");
  EXPECT_EQ(GetPodQos(pod), QosClass::kGuaranteed);
}

TEST(PodYamlDefaultingTest, HugepagePodLimitsFromContainers) {
  const std::string yaml = PodWithSpec(R"(  resources:
    requests: {cpu: "2", memory: 2Gi}
  containers:
  - name: a
    resources: {limits: {cpu: "1", memory: 1Gi, hugepages-2Mi: 4Mi}}
  - name: b
    resources: {limits: {cpu: "1", memory: 1Gi, hugepages-2Mi: 2Mi}}
)");
  Pod pod = MustParseOne(yaml, k136);
  EXPECT_EQ(Str(pod.resources->limits, "hugepages-2Mi"), "6Mi");
  // defaultPodRequests runs after defaultHugePagePodLimits, so the hugepages request follows
  // the defaulted limit...
  EXPECT_EQ(Str(pod.resources->requests, "hugepages-2Mi"), "6Mi");
  // ...and defaultPodLimits then sees pod-level limits already set (the hugepages one), so
  // cpu and memory limits are NOT defaulted from the containers: the pod is Burstable. This
  // is the API server's order (SetDefaults_Pod), quirk included.
  EXPECT_EQ(Str(pod.resources->limits, "cpu"), "<absent>");
  EXPECT_EQ(GetPodQos(pod), QosClass::kBurstable);
  // v1.37 (#140514) defaults cpu and memory limits per resource, hugepages limit or not.
  Pod v137 = MustParseOne(yaml);
  EXPECT_EQ(Str(v137.resources->limits, "hugepages-2Mi"), "6Mi");
  EXPECT_EQ(Str(v137.resources->limits, "cpu"), "2");
  EXPECT_EQ(Str(v137.resources->limits, "memory"), "2Gi");
  EXPECT_EQ(GetPodQos(v137), QosClass::kGuaranteed);
}

TEST(PodYamlDefaultingTest, QuantitiesRoundUpToMilli) {
  Pod pod = MustParseOne(PodWithSpec(R"(  containers:
  - name: a
    resources: {requests: {cpu: 0.0001, memory: 100}}
)"));
  EXPECT_EQ(pod.containers[0].resources.requests.at("cpu").MilliValue(), 1);
  EXPECT_EQ(Str(pod.containers[0].resources.requests, "cpu"), "1m");
  EXPECT_EQ(Str(pod.containers[0].resources.requests, "memory"), "100");
}

TEST(PodYamlDefaultingTest, NoPodLevelStanzaMeansNoPodLevelDefaulting) {
  Pod pod = MustParseOne(PodWithSpec(R"(  containers:
  - name: a
    resources: {limits: {cpu: "1", memory: 1Gi}}
)"));
  EXPECT_FALSE(pod.resources.has_value());
  EXPECT_EQ(GetPodQos(pod), QosClass::kGuaranteed);
}

TEST(PodYamlDefaultingTest, DeterministicUid) {
  // Independent oracle: Python's uuid.uuid5(uuid.NAMESPACE_URL, "podtopo://pods/default/demo").
  EXPECT_EQ(DeterministicPodUid("default", "demo"), "a81db5b9-370a-5a65-bc6e-77d06cbaba21");
  EXPECT_EQ(MustParseOne(SmallPod("demo")).uid, "a81db5b9-370a-5a65-bc6e-77d06cbaba21");
  EXPECT_EQ(MustParseOne(SmallPod("demo")).uid, MustParseOne(SmallPod("demo")).uid);
}

// ---------------------------------------------------------------------------------------
// Validation.

struct ValidationCase {
  std::string name;
  std::string yaml;
  std::string expected;  // substring of the error
};

std::vector<ValidationCase> ValidationCases() {
  return {
      {"missing name", "apiVersion: v1\nkind: Pod\nmetadata: {}\nspec: {containers: [{name: c}]}\n",
       "document 1: metadata.name: Required value"},
      {"missing metadata", "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: c}]}\n",
       "metadata.name: Required value"},
      {"generateName",
       "apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-}\nspec: {containers: [{name: "
       "c}]}\n",
       "metadata.name: Required value (generateName is not supported"},
      {"invalid pod name", SmallPod("Web_1"), "metadata.name: Invalid value: \"Web_1\""},
      {"invalid namespace",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: Team}\nspec: {containers: "
       "[{name: c}]}\n",
       "metadata.namespace: Invalid value: \"Team\""},
      {"invalid label",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {\"bad key!\": v}}\nspec: "
       "{containers: [{name: c}]}\n",
       "metadata.labels[bad key!]: Invalid value"},
      {"no spec", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n",
       "spec.containers: Required value"},
      {"no containers", PodWithSpec("  containers: []\n"), "spec.containers: Required value"},
      {"missing container name", PodWithSpec("  containers: [{image: x}]\n"),
       "spec.containers[0].name: Required value"},
      {"invalid container name", PodWithSpec("  containers: [{name: My_App}]\n"),
       "spec.containers[0].name: Invalid value: \"My_App\""},
      {"duplicate app names", PodWithSpec("  containers: [{name: c}, {name: c}]\n"),
       "spec.containers[1].name: Duplicate value: \"c\" (also spec.containers[0].name)"},
      {"duplicate across init and app",
       PodWithSpec("  initContainers: [{name: c}]\n  containers: [{name: c}]\n"),
       "spec.containers[0].name: Duplicate value: \"c\" (also spec.initContainers[0].name)"},
      {"duplicate ephemeral",
       PodWithSpec("  containers: [{name: c}]\n  ephemeralContainers: [{name: c}]\n"),
       "spec.ephemeralContainers[0].name: Duplicate value: \"c\""},
      {"negative quantity",
       PodWithSpec("  containers: [{name: c, resources: {requests: {memory: -1Gi}}}]\n"),
       "spec.containers[0].resources.requests.memory: Invalid value: \"-1Gi\": must be greater "
       "than or equal to 0"},
      {"request above limit",
       PodWithSpec("  containers: [{name: c, resources: {requests: {cpu: \"3\"}, limits: {cpu: "
                   "\"2\"}}}]\n"),
       "spec.containers[0].resources.requests.cpu: Invalid value: \"3\": must be less than or "
       "equal to cpu limit of 2"},
      {"unknown container resource",
       PodWithSpec("  containers: [{name: c, resources: {requests: {cpus: \"1\"}}}]\n"),
       "spec.containers[0].resources.requests.cpus: Invalid value: \"cpus\": must be a standard "
       "resource for containers"},
      {"hugepages request without limit",
       PodWithSpec("  containers: [{name: c, resources: {requests: {memory: 1Gi, hugepages-2Mi: "
                   "2Mi}}}]\n"),
       "spec.containers[0].resources.limits.hugepages-2Mi: Required value: Limit must be set "
       "for non overcommitable resources"},
      {"hugepages request differs from limit",
       PodWithSpec("  containers: [{name: c, resources: {requests: {memory: 1Gi, hugepages-2Mi: "
                   "2Mi}, limits: {hugepages-2Mi: 4Mi}}}]\n"),
       "spec.containers[0].resources.requests.hugepages-2Mi: Invalid value: \"2Mi\": must be "
       "equal to hugepages-2Mi limit of 4Mi"},
      {"hugepages not a multiple of the page size",
       PodWithSpec("  containers: [{name: c, resources: {limits: {memory: 1Gi, hugepages-2Mi: "
                   "3Mi}}}]\n"),
       "3Mi is not positive integer multiple of hugepages-2Mi"},
      {"hugepages without cpu or memory",
       PodWithSpec("  containers: [{name: c, resources: {limits: {hugepages-2Mi: 2Mi}}}]\n"),
       "spec.containers[0].resources: Forbidden: HugePages require cpu or memory"},
      {"extended resource not an integer",
       PodWithSpec("  containers: [{name: c, resources: {limits: {example.com/gpu: 500m}}}]\n"),
       "spec.containers[0].resources.limits[example.com/gpu]: Invalid value: \"500m\": must be "
       "an integer"},
      {"extended resource request differs from limit",
       PodWithSpec("  containers: [{name: c, resources: {requests: {example.com/gpu: \"1\"}, "
                   "limits: {example.com/gpu: \"2\"}}}]\n"),
       "must be equal to example.com/gpu limit of 2"},
      {"unsupported pod-level resource",
       PodWithSpec("  resources: {limits: {example.com/gpu: \"1\"}}\n  containers: [{name: "
                   "c}]\n"),
       "spec.resources.limits[example.com/gpu]: Unsupported value: \"example.com/gpu\": "
       "supported values: \"cpu\", \"hugepages-\", \"memory\""},
      {"ephemeral-storage at pod level",
       PodWithSpec("  resources: {requests: {ephemeral-storage: 1Gi}}\n  containers: [{name: "
                   "c}]\n"),
       "spec.resources.requests.ephemeral-storage: Unsupported value"},
      {"pod-level request above limit",
       PodWithSpec("  resources: {requests: {cpu: \"4\"}, limits: {cpu: \"2\"}}\n  containers: "
                   "[{name: c}]\n"),
       "spec.resources.requests.cpu: Invalid value: \"4\": must be less than or equal to cpu "
       "limit of 2"},
      {"aggregate requests above pod request",
       PodWithSpec(R"(  resources: {requests: {cpu: "1", memory: 576Mi}}
  containers:
  - name: a
    resources: {requests: {cpu: "1", memory: 512Mi}}
  - name: b
    resources: {requests: {cpu: 500m}}
)"),
       "spec.resources.requests.cpu: Invalid value: \"1\": must be greater than or equal to "
       "aggregate container requests of 1500m"},
      {"aggregate with sidecar formula above pod request",
       PodWithSpec(R"(  resources: {requests: {cpu: "3"}}
  initContainers:
  - name: s
    restartPolicy: Always
    resources: {requests: {cpu: "1"}}
  - name: i
    resources: {requests: {cpu: "3"}}
  containers:
  - name: a
    resources: {requests: {cpu: "1"}}
)"),
       "must be greater than or equal to aggregate container requests of 4"},
      {"container limit above pod limit",
       PodWithSpec(R"(  resources: {limits: {cpu: "2", memory: 2Gi}}
  containers:
  - name: a
    resources: {limits: {memory: 4Gi}, requests: {memory: 1Gi}}
)"),
       "spec.containers[0].resources.limits.memory: Invalid value: \"4Gi\": must be less than "
       "or equal to pod limits of 2Gi"},
      {"aggregate hugepages limits above pod limit",
       PodWithSpec(R"(  resources: {limits: {cpu: "2", memory: 2Gi, hugepages-2Mi: 2Mi}}
  containers:
  - name: a
    resources: {limits: {memory: 1Gi, hugepages-2Mi: 2Mi}}
  - name: b
    resources: {limits: {memory: 1Gi, hugepages-2Mi: 2Mi}}
)"),
       "spec.resources.limits.hugepages-2Mi: Invalid value: \"2Mi\": must be greater than or "
       "equal to aggregate container limits of 4Mi"},
      {"pod-level hugepages request differs from limit",
       PodWithSpec("  resources: {requests: {memory: 1Gi, hugepages-2Mi: 2Mi}, limits: {memory: "
                   "1Gi, hugepages-2Mi: 4Mi}}\n  containers: [{name: c}]\n"),
       "spec.resources.requests.hugepages-2Mi: Invalid value: \"2Mi\": must be equal to "
       "hugepages-2Mi limit of 4Mi"},
      {"pod-level negative",
       PodWithSpec("  resources: {limits: {cpu: \"-1\"}}\n  containers: [{name: c}]\n"),
       "spec.resources.limits.cpu: Invalid value: \"-1\": must be greater than or equal to 0"},
      {"windows pod with pod-level resources",
       PodWithSpec("  os: {name: windows}\n  resources: {limits: {cpu: \"1\"}}\n  containers: "
                   "[{name: c}]\n"),
       "spec.resources: Forbidden: may not be set for a windows pod"},
      {"ephemeral container with resources",
       PodWithSpec("  containers: [{name: c}]\n  ephemeralContainers: [{name: d, resources: "
                   "{limits: {cpu: \"1\"}}}]\n"),
       "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral "
       "Container"},
      {"ephemeral container with restartPolicy",
       PodWithSpec("  containers: [{name: c}]\n  ephemeralContainers: [{name: d, restartPolicy: "
                   "Always}]\n"),
       "spec.ephemeralContainers[0].restartPolicy: Forbidden: cannot be set for an Ephemeral "
       "Container"},
      {"unknown init restartPolicy",
       PodWithSpec("  initContainers: [{name: i, restartPolicy: Sometimes}]\n  containers: "
                   "[{name: c}]\n"),
       "spec.initContainers[0].restartPolicy: Unsupported value: \"Sometimes\""},
      {"unknown app restartPolicy",
       PodWithSpec("  containers: [{name: c, restartPolicy: always}]\n"),
       "spec.containers[0].restartPolicy: Unsupported value: \"always\""},
  };
}

class PodYamlValidationTest : public ::testing::TestWithParam<size_t> {};

TEST_P(PodYamlValidationTest, RejectsWithFieldPath) {
  const ValidationCase c = ValidationCases()[GetParam()];
  const std::string error = ErrorOf(c.yaml, "pod.yaml");
  EXPECT_THAT(error, HasSubstr(c.expected)) << c.name;
  EXPECT_THAT(error, ::testing::StartsWith("pod.yaml: document 1: ")) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Validation, PodYamlValidationTest,
                         ::testing::Range<size_t>(0, ValidationCases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return testing::TestName(ValidationCases()[info.param].name,
                                                    info.param);
                         });

TEST(PodYamlValidationTest, ValidEdgeCasesAreAccepted) {
  // Pod-level request equal to the aggregate, container limit equal to the pod limit,
  // hugepages with memory, zero quantities, extended resources with equal request/limit.
  Pod pod = MustParseOne(PodWithSpec(R"(  resources:
    requests: {cpu: "2", memory: 2Gi, hugepages-1Gi: 1Gi}
    limits: {cpu: "2", memory: 2Gi, hugepages-1Gi: 1Gi}
  containers:
  - name: a
    resources:
      requests: {cpu: "1", memory: 1Gi, example.com/gpu: "1"}
      limits: {cpu: "2", memory: 2Gi, hugepages-1Gi: 1Gi, example.com/gpu: "1"}
  - name: b
    resources: {requests: {cpu: "1", memory: "0"}}
)"));
  EXPECT_EQ(GetPodQos(pod), QosClass::kGuaranteed);
  EXPECT_EQ(Str(pod.containers[0].resources.requests, "hugepages-1Gi"), "1Gi");
}

// ---------------------------------------------------------------------------------------
// Malformed input never crashes.

TEST(PodYamlRobustnessTest, MalformedYamlNamesTheLine) {
  std::string error = ErrorOf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [a\n", "bad.yaml");
  EXPECT_THAT(error, HasSubstr("bad.yaml: line "));
  EXPECT_THAT(error, HasSubstr("malformed YAML"));
  EXPECT_THAT(ErrorOf("a: b\n\tc: d\n", "tab.yaml"), HasSubstr("tab.yaml: line 2"));
  EXPECT_THAT(ErrorOf("a: b: c\n"), HasSubstr("malformed YAML"));
  // yaml-cpp 0.7's LoadAll would loop forever and exhaust memory on these
  // (jbeder/yaml-cpp#1040).
  for (const std::string& stray : {std::string(","), std::string(",\n"), std::string(", a"),
                                   SmallPod("a") + "---\n,\n"}) {
    EXPECT_THAT(ErrorOf(stray, "comma.yaml"), HasSubstr("comma.yaml: line ")) << stray;
  }
  EXPECT_THAT(ErrorOf("a: [1, 2\n", "cut.yaml"), HasSubstr("cut.yaml: line "));
}

TEST(PodYamlRobustnessTest, EveryTruncationOfTheSeedIsHandled) {
  absl::StatusOr<std::string> seed =
      ReadFile(testing::SharedDir() + "/seed/pod-level-resource-demo.yaml");
  ASSERT_TRUE(seed.ok()) << seed.status();
  size_t accepted = 0;
  for (size_t n = 0; n <= seed->size(); ++n) {
    absl::StatusOr<std::vector<Pod>> pods = ParsePods(seed->substr(0, n), "cut.yaml");
    if (pods.ok()) {
      ++accepted;
      EXPECT_EQ(pods->size(), 1u);
    } else {
      EXPECT_THAT(std::string(pods.status().message()), ::testing::StartsWith("cut.yaml: "));
    }
  }
  EXPECT_GT(accepted, 0u);  // at least the full file
}

TEST(PodYamlRobustnessTest, DeepNestingIsAnError) {
  std::string deep = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: "
                     "c, args: " +
                     std::string(100000, '[') + std::string(100000, ']') + "}]}\n";
  absl::StatusOr<std::vector<Pod>> pods = ParsePods(deep, "deep.yaml");
  EXPECT_FALSE(pods.ok());
  std::string nested_maps;
  for (int i = 0; i < 50000; ++i) nested_maps += "{a: ";
  pods = ParsePods(nested_maps, "deep.yaml");
  EXPECT_FALSE(pods.ok());
}

TEST(PodYamlRobustnessTest, HugeAndStrangeInputs) {
  // Many containers.
  std::string many = "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  containers:\n";
  for (int i = 0; i < 2000; ++i) {
    many += fmt::format("  - name: c{}\n    resources: {{requests: {{cpu: 1m}}}}\n", i);
  }
  std::vector<Pod> pods = MustParse(many);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].containers.size(), 2000u);
  EXPECT_EQ(AggregateContainerRequests(pods[0]).at("cpu").MilliValue(), 2000);

  // Enormous quantities: rejected or summed without overflow.
  std::string huge = PodWithSpec(R"(  resources: {requests: {cpu: 9e20}}
  containers:
  - name: a
    resources: {requests: {cpu: 9e20}}
  - name: b
    resources: {requests: {cpu: 9e20}}
)");
  EXPECT_THAT(ErrorOf(huge), HasSubstr("aggregate container requests"));
  // Binary-SI input is capped at 2^63-1 as Go's ParseQuantity caps it.
  absl::StatusOr<std::vector<Pod>> capped =
      ParsePods(PodWithSpec("  containers: [{name: c, resources: {limits: {memory: "
                            "99999999999999999999999999999999999Ei}}}]\n"),
                "x");
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ((*capped)[0].containers[0].resources.requests.at("memory").Value(),
            std::numeric_limits<int64_t>::max());
  EXPECT_THAT(ErrorOf(PodWithSpec("  containers: [{name: c, resources: {limits: {cpu: "
                                  "1e400}}}]\n")),
              HasSubstr("spec.containers[0].resources.limits.cpu: quantity \"1e400\" is too "
                        "large"));
  // Binary garbage and NUL bytes.
  static constexpr char kBinary[] = "\x00\x01\x02\xff\xfe: [";
  EXPECT_FALSE(ParsePods(std::string(kBinary, sizeof(kBinary) - 1), "bin").ok());
  static constexpr char kNul[] = "apiVersion: v1\nkind: Pod\x00\n";
  EXPECT_FALSE(ParsePods(std::string(kNul, sizeof(kNul) - 1), "nul").ok());
  // Aliases and anchors work like any YAML.
  Pod anchored = MustParseOne(R"(apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers:
  - name: a
    resources: &r {requests: {cpu: "1"}, limits: {cpu: "1"}}
  - name: b
    resources: *r
)");
  EXPECT_EQ(Str(anchored.containers[1].resources.limits, "cpu"), "1");
}

PODTOPO_PROPERTY(PodYamlPropertyTest, ArbitraryTextNeverCrashes, (const std::string& text)) {
  absl::StatusOr<std::vector<Pod>> pods = ParsePods(text, "rc.yaml");
  if (!pods.ok()) {
    const std::string message(pods.status().message());
    RC_ASSERT(message.rfind("rc.yaml: ", 0) == 0);
    RC_ASSERT(message.find("bad_alloc") == std::string::npos);
  }
}

// YAML punctuation soup: the inputs that make yaml-cpp misbehave (loops, huge allocations).
PODTOPO_PROPERTY(PodYamlPropertyTest, YamlSyntaxSoupNeverHangs, ()) {
  static const std::string kAlphabet = "[]{},:-?&*!|>'\"#%@ \n\ta0.~";
  const std::string text = *rc::gen::container<std::string>(rc::gen::elementOf(kAlphabet));
  absl::StatusOr<std::vector<Pod>> pods = ParsePods(text, "soup.yaml");
  if (!pods.ok()) {
    const std::string message(pods.status().message());
    RC_ASSERT(message.rfind("soup.yaml: ", 0) == 0);
    RC_ASSERT(message.find("bad_alloc") == std::string::npos);  // seen under `ulimit -v`
  }
}

PODTOPO_PROPERTY(PodYamlPropertyTest, MutatedPodsNeverCrash, (size_t position, char replacement)) {
  const std::string base = R"(apiVersion: v1
kind: Pod
metadata: {name: m, labels: {a: b}}
spec:
  resources: {requests: {cpu: "2", memory: 2Gi}, limits: {cpu: "2", memory: 2Gi}}
  initContainers: [{name: s, restartPolicy: Always, resources: {requests: {cpu: 500m}}}]
  containers:
  - name: main
    resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "1", memory: 1Gi}}
)";
  std::string text = base;
  text[position % text.size()] = replacement;
  absl::StatusOr<std::vector<Pod>> pods = ParsePods(text, "m.yaml");
  if (pods.ok()) {
    for (const Pod& pod : *pods) {
      RC_ASSERT(!pod.uid.empty());
      RC_ASSERT(!pod.containers.empty());
      GetPodQos(pod);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Files and stdin.

TEST(PodYamlFileTest, MissingFile) {
  absl::StatusOr<std::vector<Pod>> pods = LoadPods("/nonexistent/pods.yaml");
  ASSERT_FALSE(pods.ok());
  EXPECT_THAT(std::string(pods.status().message()), HasSubstr("/nonexistent/pods.yaml"));
}

TEST(PodYamlFileTest, ReadsStdin) {
  absl::StatusOr<std::vector<Pod>> pods = absl::UnknownError("not read");
  ASSERT_TRUE(testing::WithStdin(SmallPod("from-stdin") + "---\n" + SmallPod("second"),
                                 [&] { pods = LoadPods("-"); }));
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->size(), 2u);
  EXPECT_EQ((*pods)[0].name, "from-stdin");
  EXPECT_EQ((*pods)[0].source, "<stdin>#1");
}

TEST(PodYamlFileTest, StdinErrorsSayStdin) {
  absl::StatusOr<std::vector<Pod>> pods = std::vector<Pod>();
  ASSERT_TRUE(testing::WithStdin(
      PodWithSpec("  containers: [{name: c, resources: {requests: {cpu: 2x}}}]\n"),
      [&] { pods = LoadPods("-"); }));
  ASSERT_FALSE(pods.ok());
  EXPECT_THAT(std::string(pods.status().message()),
              HasSubstr("<stdin>: document 1: spec.containers[0].resources.requests.cpu"));
}


// ---------------------------------------------------------------------------------------
// v1.37 pod-level defaulting (PodLevelResourcesFixDefaulting, k/k #140514).

// k/k #140514: pod-level requests above the containers' aggregated limits. v1.37 defaults
// the pod-level limits to max(pod request, aggregated container limits), so the pod is
// valid and Guaranteed; the v1.36 rules default them to the container limits (4 CPUs) and
// the API server refuses the pod.
TEST(PodLevelDefaultingTest, K8s140514PodRequestAboveContainerLimitsIsGuaranteed) {
  const std::string yaml = PodWithSpec(R"(  resources:
    requests: {cpu: "6", memory: 2Gi}
  containers:
  - name: a
    resources: {limits: {cpu: "2", memory: 512Mi}}
  - name: b
    resources: {limits: {cpu: "2", memory: 512Mi}}
)");
  Pod pod = MustParseOne(yaml);
  EXPECT_EQ(Str(pod.resources->limits, "cpu"), "6");
  EXPECT_EQ(Str(pod.resources->limits, "memory"), "2Gi");
  EXPECT_EQ(GetPodQos(pod), QosClass::kGuaranteed);

  EXPECT_THAT(ErrorOf(yaml, "pod.yaml", k136),
              HasSubstr("spec.resources.requests.cpu: Invalid value: \"6\": must be less than or "
                        "equal to cpu limit of 4"));
}

// The same pod read with the gates of a kubelet configuration: the default (v1.37) and one
// that turns the fix gates off.
TEST(PodLevelDefaultingTest, K8s140514GatesComeFromTheKubeletConfiguration) {
  config::KubeletConfig cfg = config::SeedDefault();
  EXPECT_TRUE(PodGatesFromConfig(cfg).fix_defaulting);
  EXPECT_TRUE(PodGatesFromConfig(cfg).fix_kubelet_qos_class);
  cfg.feature_gates[config::kPodLevelResourcesFixDefaulting] = false;
  cfg.feature_gates[config::kPodLevelResourcesFixKubeletQOSClass] = false;
  EXPECT_FALSE(PodGatesFromConfig(cfg).fix_defaulting);
  EXPECT_FALSE(PodGatesFromConfig(cfg).fix_kubelet_qos_class);
  cfg.feature_gates[config::kPodLevelResources] = false;
  EXPECT_FALSE(PodGatesFromConfig(cfg).pod_level_resources);
}

// With PodLevelResources off the API server drops spec.resources: no pod-level defaulting
// and no pod-level validation (a pod request below the containers' is not an error).
TEST(PodLevelDefaultingTest, PodLevelResourcesOffNeitherDefaultsNorValidates) {
  Pod pod = MustParseOne(PodWithSpec(R"(  resources:
    requests: {cpu: "1"}
  containers:
  - name: a
    resources: {limits: {cpu: "2", memory: 1Gi}}
)"),
                         {.gates = {.pod_level_resources = false}});
  EXPECT_EQ(Str(pod.resources->limits, "cpu"), "<absent>");
  EXPECT_EQ(GetPodQos(pod, {.pod_level_resources = false}), QosClass::kGuaranteed);
}

// v1.37 defaults the pod-level requests once any pod-level value is set (k/k #140850: the
// e2e test "partial request defaulting" expects memory to be filled in from the containers
// when only cpu is set at pod level); v1.36 only when pod-level limits are set.
TEST(PodLevelDefaultingTest, K8s140850PartialPodLevelRequestsAreCompleted) {
  const std::string yaml = PodWithSpec(R"(  resources:
    requests: {cpu: "1"}
  containers:
  - name: a
    resources: {requests: {cpu: 500m, memory: 256Mi}}
)");
  EXPECT_EQ(Str(MustParseOne(yaml).resources->requests, "memory"), "256Mi");
  EXPECT_EQ(Str(MustParseOne(yaml, k136).resources->requests, "memory"), "<absent>");
  // No container limits: no pod-level limit can be derived in either version.
  EXPECT_TRUE(MustParseOne(yaml).resources->limits.empty());
}

// v1.37 defaults the pod level from container values already rounded to milli-units
// (PrepareForCreate runs after the defaulters); v1.36 aggregates the raw values first
// (SetDefaults_Pod runs before the generated defaulters round the containers' lists).
TEST(PodLevelDefaultingTest, K8s140514AggregatesRoundedContainerValues) {
  const std::string yaml = PodWithSpec(R"(  resources:
    limits: {memory: 1Gi}
  containers:
  - name: a
    resources: {requests: {cpu: 0.0004}}
  - name: b
    resources: {requests: {cpu: 0.0004}}
)");
  EXPECT_EQ(Str(MustParseOne(yaml).resources->requests, "cpu"), "2m");
  // v1.36: the raw sum (0.8m) rounds to 1m, below the rounded containers' 2m: refused.
  EXPECT_THAT(ErrorOf(yaml, "pod.yaml", k136),
              HasSubstr("spec.resources.requests.cpu: Invalid value: \"1m\": must be greater "
                        "than or equal to aggregate container requests of 2m"));
}

// The worked examples of KEP-2837's "Clarifying Tricky Cases" (kubernetes/enhancements,
// keps/sig-node/2837-pod-level-resource-spec/README.md at 01c120f9), transcribed: memory
// only, "Gi" units, regular containers. They hold under both rule sets.
struct KepCase {
  const char* name;
  const char* spec;      // the pod spec body
  const char* request;   // expected pod-level memory request ("" = error expected)
  const char* limit;     // expected pod-level memory limit ("<absent>" when not derivable)
  const char* error;     // expected error substring when request is ""
};

class Kep2837ExamplesTest : public ::testing::TestWithParam<KepCase> {};

TEST_P(Kep2837ExamplesTest, DefaultsAndValidatesAsTheKepSays) {
  const KepCase& c = GetParam();
  for (const PodLoadOptions& options : {PodLoadOptions{}, k136}) {
    const std::string yaml = PodWithSpec(c.spec);
    if (std::string(c.request).empty()) {
      EXPECT_THAT(ErrorOf(yaml, "pod.yaml", options), HasSubstr(c.error)) << c.name;
      continue;
    }
    Pod pod = MustParseOne(yaml, options);
    ASSERT_TRUE(pod.resources.has_value()) << c.name;
    EXPECT_EQ(Str(pod.resources->requests, "memory"), c.request) << c.name;
    EXPECT_EQ(Str(pod.resources->limits, "memory"), c.limit) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kep, Kep2837ExamplesTest,
    ::testing::Values(
        // 1. Pod limit only: the request defaults to the limit.
        KepCase{"1_pod_limit_only", R"(  resources: {limits: {memory: 100Gi}}
  containers: [{name: a}, {name: b}]
)", "100Gi", "100Gi", ""},
        // 2. Pod limit 100Gi, container limits 60Gi each: requests default to 120Gi > limit.
        KepCase{"2_container_limits_above_pod_limit", R"(  resources: {limits: {memory: 100Gi}}
  containers:
  - {name: a, resources: {limits: {memory: 60Gi}}}
  - {name: b, resources: {limits: {memory: 60Gi}}}
)", "", "", "must be less than or equal to memory limit of 100Gi"},
        // 3. Pod limit, container requests 50Gi each: pod request is their sum, 100Gi.
        KepCase{"3_container_requests", R"(  resources: {limits: {memory: 100Gi}}
  containers:
  - {name: a, resources: {requests: {memory: 50Gi}}}
  - {name: b, resources: {requests: {memory: 50Gi}}}
)", "100Gi", "100Gi", ""},
        // 4. Pod request only: no limit can be derived.
        KepCase{"4_pod_request_only", R"(  resources: {requests: {memory: 100Gi}}
  containers: [{name: a}, {name: b}]
)", "100Gi", "<absent>", ""},
        // 5. Pod request 100Gi, container limits 60Gi each (requests default to them): the
        // aggregated container requests (120Gi) exceed the pod request.
        KepCase{"5_container_limits_above_pod_request", R"(  resources: {requests: {memory: 100Gi}}
  containers:
  - {name: a, resources: {limits: {memory: 60Gi}}}
  - {name: b, resources: {limits: {memory: 60Gi}}}
)", "", "", "must be greater than or equal to aggregate container requests of 120Gi"},
        // 6. Pod limit, one container with request and limit 50Gi: pod request 50Gi.
        KepCase{"6_one_container_resourced", R"(  resources: {limits: {memory: 100Gi}}
  containers:
  - {name: a, resources: {requests: {memory: 50Gi}, limits: {memory: 50Gi}}}
  - {name: b}
)", "50Gi", "100Gi", ""},
        // 7. Pod request, one container with a limit: no pod limit (not all containers).
        KepCase{"7_one_container_limit", R"(  resources: {requests: {memory: 100Gi}}
  containers:
  - {name: a, resources: {limits: {memory: 50Gi}}}
  - {name: b}
)", "100Gi", "<absent>", ""},
        // 8. Pod request, containers unset: no pod limit.
        KepCase{"8_containers_unset", R"(  resources: {requests: {memory: 100Gi}}
  containers: [{name: a}, {name: b}]
)", "100Gi", "<absent>", ""},
        // 9. Pod limit, a sidecar and containers with requests 10 + 20 + 20: pod request 50Gi
        // (KEP-753 formula).
        KepCase{"9_sidecar_formula", R"(  resources: {limits: {memory: 100Gi}}
  initContainers:
  - {name: s, restartPolicy: Always, resources: {requests: {memory: 10Gi}}}
  containers:
  - {name: a, resources: {requests: {memory: 20Gi}}}
  - {name: b, resources: {requests: {memory: 20Gi}}}
)", "50Gi", "100Gi", ""}),
    [](const ::testing::TestParamInfo<KepCase>& info) { return std::string(info.param.name); });


// ---------------------------------------------------------------------------------------
// Workload controllers (expanded to the pods their controllers create).

// A pod template of one Guaranteed container (indented for `spec.template` of a workload).
std::string Template(const std::string& indent = "  ") {
  return indent + "template:\n" + indent + "  metadata: {labels: {app: web}}\n" + indent +
         "  spec:\n" + indent +
         "    containers: [{name: c, resources: {limits: {cpu: \"1\", memory: 1Gi}}}]\n";
}

std::vector<std::string> Names(const std::vector<Pod>& pods) {
  std::vector<std::string> out;
  for (const Pod& p : pods) out.push_back(p.name);
  return out;
}

// The characters of k8s.io/apimachinery/pkg/util/rand (generated names, SafeEncodeString).
constexpr char kSafe[] = "[bcdfghjklmnpqrstvwxz2456789]";

// Deployment: its ReplicaSet is `<deployment>-<pod-template-hash>` and the ReplicaSet's pods
// `<replicaset>-<5 random characters>` (kubernetes.io/docs/concepts/workloads/controllers/
// deployment: "the name of the ReplicaSet is always formatted as [DEPLOYMENT-NAME]-[HASH]";
// pkg/controller/deployment/sync.go; names.SimpleNameGenerator). Replicas default to 1.
TEST(WorkloadTest, DeploymentPodsAreNamedLikeTheController) {
  const std::string yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, "
                           "namespace: shop}\nspec:\n  replicas: 3\n" +
                           Template();
  std::vector<Pod> pods = MustParse(yaml, "deploy.yaml");
  ASSERT_EQ(pods.size(), 3u);
  const std::string hash = pods[0].labels.at("pod-template-hash");
  // SafeEncodeString of a decimal uint32 hash: 1 to 10 characters of the digits' images.
  EXPECT_THAT(hash, ::testing::MatchesRegex("[456789bcdf]{1,10}"));
  std::set<std::string> names;
  for (const Pod& pod : pods) {
    EXPECT_THAT(pod.name, ::testing::MatchesRegex("web-" + hash + "-" + kSafe + "{5}"));
    EXPECT_EQ(pod.namespace_name, "shop");
    EXPECT_EQ(pod.controller_kind, "Deployment");
    EXPECT_EQ(pod.controller_name, "web");
    EXPECT_EQ(pod.labels.at("app"), "web");
    EXPECT_EQ(GetPodQos(pod), QosClass::kGuaranteed);
    EXPECT_EQ(pod.source, "deploy.yaml#1");
    names.insert(pod.name);
  }
  EXPECT_EQ(names.size(), 3u);
  // Deterministic: the same manifest, the same names; another template, another hash.
  EXPECT_EQ(Names(MustParse(yaml, "deploy.yaml")), Names(pods));
  std::string other = yaml;
  other.replace(other.find("memory: 1Gi"), 11, "memory: 2Gi");
  EXPECT_NE(MustParse(other)[0].labels.at("pod-template-hash"), hash);
  // replicas: 0 gives no pods; no replicas field gives 1 (SetDefaults_Deployment).
  std::string one = yaml;
  one.replace(one.find("  replicas: 3\n"), 14, "");
  EXPECT_EQ(MustParse(one).size(), 1u);
}

TEST(WorkloadTest, ReplicaSetAndReplicationControllerPodsAreNameSuffix) {
  std::vector<Pod> rs = MustParse("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: "
                                  "web-7d4b9c8f5}\nspec:\n  replicas: 2\n" +
                                  Template());
  ASSERT_EQ(rs.size(), 2u);
  for (const Pod& pod : rs) {
    EXPECT_THAT(pod.name, ::testing::MatchesRegex(std::string("web-7d4b9c8f5-") + kSafe + "{5}"));
    EXPECT_EQ(pod.controller_kind, "ReplicaSet");
  }
  std::vector<Pod> rc =
      MustParse("apiVersion: v1\nkind: ReplicationController\nmetadata: {name: old}\nspec:\n" +
                Template());
  ASSERT_EQ(rc.size(), 1u);  // replicas default to 1
  EXPECT_THAT(rc[0].name, ::testing::MatchesRegex(std::string("old-") + kSafe + "{5}"));
}

// StatefulSet pods are `<statefulset>-<ordinal>`, ordinals from spec.ordinals.start
// (kubernetes.io/docs/concepts/workloads/controllers/statefulset, "Ordinal Index").
TEST(WorkloadTest, StatefulSetPodsAreNameOrdinal) {
  std::vector<Pod> pods = MustParse("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: "
                                    "db}\nspec:\n  replicas: 3\n" +
                                    Template());
  EXPECT_THAT(Names(pods), ElementsAre("db-0", "db-1", "db-2"));
  EXPECT_EQ(pods[1].labels.at("statefulset.kubernetes.io/pod-name"), "db-1");
  pods = MustParse("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  "
                   "replicas: 2\n  ordinals: {start: 5}\n" +
                   Template());
  EXPECT_THAT(Names(pods), ElementsAre("db-5", "db-6"));
}

// DaemonSet: one pod per node, bound to it (spec.nodeName).
TEST(WorkloadTest, DaemonSetHasOnePodPerNode) {
  const std::string yaml =
      "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n" + Template();
  std::vector<Pod> pods = MustParse(yaml, "ds.yaml", {.node_names = {"node-a", "node-b"}});
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0].node_name, "node-a");
  EXPECT_EQ(pods[1].node_name, "node-b");
  EXPECT_THAT(pods[0].name, ::testing::MatchesRegex(std::string("agent-") + kSafe + "{5}"));
  EXPECT_NE(pods[0].name, pods[1].name);
  std::vector<Pod> one = MustParse(yaml);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].node_name, "");
}

// Job: SetDefaults_Job (parallelism 1; completions 1 when neither is set) and the
// controller's active pods min(parallelism, completions); a work queue (completions unset)
// runs `parallelism` pods; Indexed pods are `<job>-<index>-<suffix>`
// (kubernetes.io/docs/concepts/workloads/controllers/job, "Parallel execution for Jobs").
TEST(WorkloadTest, JobRunsParallelismCappedByCompletions) {
  auto job = [](const std::string& fields) {
    return MustParse("apiVersion: batch/v1\nkind: Job\nmetadata: {name: pi}\nspec:\n" + fields +
                     Template());
  };
  EXPECT_EQ(job("").size(), 1u);
  EXPECT_EQ(job("  completions: 5\n").size(), 1u);
  EXPECT_EQ(job("  completions: 5\n  parallelism: 3\n").size(), 3u);
  EXPECT_EQ(job("  completions: 2\n  parallelism: 4\n").size(), 2u);
  EXPECT_EQ(job("  parallelism: 4\n").size(), 4u);
  EXPECT_THAT(ErrorOf("apiVersion: batch/v1\nkind: Job\nmetadata: {name: pi}\nspec:\n  "
                      "parallelism: 4\n  suspend: true\n" +
                      Template()),
              HasSubstr("no pods"));  // a suspended Job runs none
  std::vector<Pod> pods = job("  completions: 3\n  parallelism: 3\n  completionMode: Indexed\n");
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_THAT(pods[2].name, ::testing::MatchesRegex(std::string("pi-2-") + kSafe + "{5}"));
  EXPECT_EQ(pods[2].labels.at("batch.kubernetes.io/job-completion-index"), "2");
  EXPECT_EQ(pods[0].labels.at("job-name"), "pi");
  EXPECT_THAT(ErrorOf("apiVersion: batch/v1\nkind: Job\nmetadata: {name: pi}\nspec:\n  "
                      "completionMode: Indexed\n" +
                      Template()),
              HasSubstr("Job pi: spec.completions: Required value"));
}

TEST(WorkloadTest, CronJobRunsItsJobTemplate) {
  std::vector<Pod> pods = MustParse(
      "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: \"0 "
      "1 * * *\"\n  jobTemplate:\n    spec:\n      parallelism: 2\n      completions: 2\n" +
      Template("      "));
  ASSERT_EQ(pods.size(), 2u);
  // The Job is `<cronjob>-<number>`, its pods `<job>-<suffix>`.
  EXPECT_THAT(pods[0].name,
              ::testing::MatchesRegex(std::string("nightly-[0-9]{8}-") + kSafe + "{5}"));
  EXPECT_EQ(pods[0].controller_kind, "CronJob");
}

TEST(WorkloadTest, PodTemplateIsOnePod) {
  std::vector<Pod> pods = MustParse(
      "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: tpl}\n" + Template(""));
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].name, "tpl");
  EXPECT_EQ(pods[0].controller_kind, "PodTemplate");
}

// The template is defaulted and validated like a pod, and errors name the file, the
// document (with Helm's `# Source:`), the object and the field.
TEST(WorkloadTest, TemplateErrorsNameFileDocumentObjectAndField) {
  const std::string helm = "---\n# Source: shop/templates/svc.yaml\napiVersion: v1\nkind: "
                           "Service\nmetadata: {name: web}\n---\n# Source: "
                           "shop/templates/web.yaml\napiVersion: apps/v1\nkind: Deployment\n"
                           "metadata: {name: web}\nspec:\n  template:\n    spec:\n      "
                           "containers: [{name: c, resources: {requests: {cpu: 2x}}}]\n";
  EXPECT_THAT(ErrorOf(helm, "out.yaml"),
              HasSubstr("out.yaml: document 2 (shop/templates/web.yaml): Deployment web: "
                        "spec.template.spec.containers[0].resources.requests.cpu: \"2x\""));
  // Defaulting reaches the template: pod-level requests above the container limits.
  std::vector<Pod> pods = MustParse(
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    "
      "spec:\n      resources: {requests: {cpu: \"6\", memory: 2Gi}}\n      containers: [{name: "
      "c, resources: {limits: {cpu: \"4\", memory: 1Gi}}}]\n");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(Str(pods[0].resources->limits, "cpu"), "6");
  EXPECT_EQ(GetPodQos(pods[0]), QosClass::kGuaranteed);
  EXPECT_THAT(ErrorOf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
                      "  replicas: -1\n" +
                      Template()),
              HasSubstr("Deployment web: spec.replicas: Invalid value: -1"));
  EXPECT_THAT(ErrorOf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
                      "  replicas: \"3\"\n" +
                      Template()),
              HasSubstr("spec.replicas: expected an integer, got a string"));
  EXPECT_THAT(ErrorOf("apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: web}\n"),
              HasSubstr("apiVersion: Unsupported value: \"extensions/v1beta1\": a Deployment has "
                        "apiVersion: apps/v1"));
}

// `kubectl get pods -A -o yaml`: a List with status, managedFields, ownerReferences and
// spec.nodeName, which is kept; `kubectl get deploy -o yaml` lists Deployments.
TEST(WorkloadTest, KubectlListOutputIsRead) {
  std::vector<Pod> pods = MustParse(R"(apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-7d4b9c8f5-x2x4k
    namespace: shop
    uid: 0b7c3f2e-8f52-4d0a-9a0e-4c2d1b3a5f6e
    ownerReferences:
    - {apiVersion: apps/v1, kind: ReplicaSet, name: web-7d4b9c8f5, uid: 1, controller: true}
    managedFields:
    - {manager: kube-controller-manager, operation: Update, fieldsV1: {f:metadata: {}}}
  spec:
    nodeName: node-a
    containers: [{name: c, resources: {limits: {cpu: "1", memory: 1Gi}}}]
  status: {phase: Running, qosClass: Guaranteed, podIP: 10.0.0.3}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: api}
  spec:
    replicas: 2
)" + Template("    "));
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_EQ(pods[0].node_name, "node-a");
  EXPECT_EQ(pods[0].controller_kind, "");
  EXPECT_EQ(pods[1].controller_kind, "Deployment");
  EXPECT_EQ(pods[2].source, "pod.yaml#1.items[1]");
  // A typed list (the API's DeploymentList) whose items carry no kind.
  pods = MustParse("apiVersion: apps/v1\nkind: DeploymentList\nitems:\n- metadata: {name: a}\n"
                   "  spec:\n" +
                   Template("    "));
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].controller_name, "a");
}

// `kubectl get all -o yaml`: a Deployment, its ReplicaSet and the ReplicaSet's pods. The pods
// (with their real nodeName) are read once; a controller whose dependents are in the input
// is not expanded again.
TEST(WorkloadTest, ControllersNextToTheirPodsAreNotExpandedTwice) {
  auto owned_by = [](const std::string& kind, const std::string& name, const std::string& uid) {
    return "    ownerReferences:\n    - {apiVersion: apps/v1, kind: " + kind + ", name: " + name +
           ", uid: " + uid + ", controller: true, blockOwnerDeletion: true}\n";
  };
  auto pod = [&](const std::string& name, const std::string& owner) {
    return "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: " + name +
           "\n    namespace: shop\n" + owner +
           "  spec:\n    nodeName: node-a\n    containers: [{name: c, resources: {limits: {cpu: "
           "\"1\", memory: 1Gi}}}]\n";
  };
  auto controller = [&](const std::string& kind, const std::string& name, const std::string& uid,
                        const std::string& owner, int replicas) {
    return "- apiVersion: apps/v1\n  kind: " + kind + "\n  metadata:\n    name: " + name +
           "\n    namespace: shop\n    uid: " + uid + "\n" + owner + "  spec:\n    replicas: " +
           std::to_string(replicas) + "\n" + Template("    ");
  };
  const std::string all =
      "apiVersion: v1\nkind: List\nitems:\n" +
      pod("web-5f7d-aaaaa", owned_by("ReplicaSet", "web-5f7d", "rs-1")) +
      pod("web-5f7d-bbbbb", owned_by("ReplicaSet", "web-5f7d", "rs-1")) +
      controller("Deployment", "web", "d-1", "", 2) +
      controller("ReplicaSet", "web-5f7d", "rs-1", owned_by("Deployment", "web", "d-1"), 2) +
      // The rollout's old ReplicaSet: its pods are not listed, so it is expanded.
      controller("ReplicaSet", "web-old", "rs-0", owned_by("Deployment", "web", "d-1"), 1) +
      // A Deployment nothing in the input belongs to, and one whose ReplicaSet names another
      // object of the same name (another uid: a Deployment deleted and created again).
      controller("Deployment", "api", "d-2", "", 3) +
      controller("Deployment", "db", "d-new", "", 1) +
      controller("ReplicaSet", "db-77", "rs-2", owned_by("Deployment", "db", "d-old"), 1);
  std::map<std::string, int> not_expanded;
  PodLoadOptions options;
  options.not_expanded = &not_expanded;
  std::vector<Pod> pods = MustParse(all, "all.yaml", options);
  std::map<std::string, int> by_controller;
  for (const Pod& p : pods) ++by_controller[p.controller_kind + " " + p.controller_name];
  EXPECT_EQ(by_controller, (std::map<std::string, int>{{" ", 2},  // the listed pods
                                                       {"ReplicaSet web-old", 1},
                                                       {"Deployment api", 3},
                                                       {"Deployment db", 1},
                                                       {"ReplicaSet db-77", 1}}));
  EXPECT_EQ(pods[0].node_name, "node-a");
  EXPECT_EQ(not_expanded, (std::map<std::string, int>{{"Deployment", 1}, {"ReplicaSet", 1}}));
  // Without the pods, the ReplicaSet stands for the Deployment; without both, the Deployment
  // is expanded.
  const std::string no_pods =
      "apiVersion: v1\nkind: List\nitems:\n" + controller("Deployment", "web", "d-1", "", 4) +
      controller("ReplicaSet", "web-5f7d", "rs-1", owned_by("Deployment", "web", "d-1"), 2);
  pods = MustParse(no_pods, "all.yaml");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0].controller_kind, "ReplicaSet");
  // Owners in another namespace, and references that are not the controller, do not count.
  std::string other_ns = no_pods;
  other_ns.replace(other_ns.rfind("namespace: shop"), 15, "namespace: dev");
  EXPECT_EQ(MustParse(other_ns, "all.yaml").size(), 6u);
  std::string not_controller = no_pods;
  not_controller.replace(not_controller.find("controller: true"), 16, "controller: false");
  EXPECT_EQ(MustParse(not_controller, "all.yaml").size(), 6u);
  // The same rule in JSON.
  std::string json = R"({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r", "uid": "u"},
     "spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "c"}]}}}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "r-x", "ownerReferences": [
       {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u",
        "controller": true}]},
     "spec": {"containers": [{"name": "c"}]}}]})";
  pods = MustParse(json, "all.json");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].name, "r-x");
}

// ---------------------------------------------------------------------------------------
// JSON: the same pods, field paths and errors as YAML.

TEST(PodJsonTest, JsonListGivesTheSamePodsAsYaml) {
  const std::string yaml = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: a, labels: {app: x}}
  spec:
    nodeName: n1
    resources: {requests: {cpu: "6", memory: 2Gi}}
    initContainers: [{name: s, restartPolicy: Always, resources: {limits: {cpu: 500m, memory: 128Mi}}}]
    containers: [{name: c, resources: {limits: {cpu: 2, memory: 512Mi}}}]
)";
  const std::string json = R"({"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "labels": {"app": "x"}},
   "spec": {"nodeName": "n1", "resources": {"requests": {"cpu": "6", "memory": "2Gi"}},
            "initContainers": [{"name": "s", "restartPolicy": "Always",
                                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}}],
            "containers": [{"name": "c", "resources": {"limits": {"cpu": 2, "memory": "512Mi"}}}]}}
]})";
  Pod from_yaml = MustParseOne(yaml);
  Pod from_json = MustParseOne(json);
  EXPECT_EQ(from_json.Key(), from_yaml.Key());
  EXPECT_EQ(from_json.uid, from_yaml.uid);
  EXPECT_EQ(from_json.node_name, "n1");
  EXPECT_EQ(from_json.labels, from_yaml.labels);
  EXPECT_EQ(Str(from_json.resources->limits, "cpu"), Str(from_yaml.resources->limits, "cpu"));
  EXPECT_EQ(Str(from_json.resources->limits, "memory"), "2Gi");
  ASSERT_EQ(from_json.init_containers.size(), 1u);
  EXPECT_TRUE(from_json.init_containers[0].IsRestartableInit());
  EXPECT_EQ(GetPodQos(from_json), GetPodQos(from_yaml));
}

TEST(PodJsonTest, JsonErrorsNameTheSameFieldsAsYaml) {
  auto json_pod = [](const std::string& container) {
    return R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [)" +
           container + "]}}";
  };
  EXPECT_THAT(ErrorOf(json_pod(R"({"name": "c", "resources": {"requests": {"cpu": "2x"}}})"),
                      "p.json"),
              HasSubstr("p.json: document 1: spec.containers[0].resources.requests.cpu: \"2x\""));
  EXPECT_THAT(ErrorOf(json_pod(R"({"name": 8080})"), "p.json"),
              HasSubstr("spec.containers[0].name: expected a string, got the number 8080"));
  EXPECT_THAT(ErrorOf(json_pod(R"({"name": true})"), "p.json"),
              HasSubstr("spec.containers[0].name: expected a string, got the boolean true"));
  EXPECT_THAT(ErrorOf(json_pod(R"({"name": "c", "name": "d"})"), "p.json"),
              HasSubstr("spec.containers[0]: duplicate key \"name\""));
  EXPECT_THAT(ErrorOf("{\"apiVersion\": \"v1\",\n \"kind\": \"Pod\" \"x\"}", "p.json"),
              HasSubstr("p.json: line 2, column 18: malformed JSON: syntax error while parsing "
                        "object - unexpected string literal"));
  // Numbers are quantities as the API server reads them.
  Pod pod = MustParseOne(json_pod(R"({"name": "c", "resources": {"limits": {"cpu": 1.5, "memory": 1073741824}}})"));
  EXPECT_EQ(Str(pod.containers[0].resources.limits, "cpu"), "1500m");
  EXPECT_EQ(Str(pod.containers[0].resources.limits, "memory"), "1073741824");
  // status and metadata.managedFields are not kept, but a label named status is.
  std::vector<Pod> listed = MustParse(
      R"({"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": "a", "labels": {"status": "up", "managedFields": "x"},
                       "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}]},
          "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Running"}}]})");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].labels.at("status"), "up");
  EXPECT_EQ(listed[0].labels.at("managedFields"), "x");
  // A syntax error inside a skipped field is still an error.
  EXPECT_THAT(ErrorOf(R"({"apiVersion": "v1", "kind": "Pod", "status": {"phase": "Run}})", "p.json"),
              HasSubstr("malformed JSON"));
  // Deep nesting stops with an error, not a crash.
  std::string deep = "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_THAT(ErrorOf(deep, "deep.json"), HasSubstr("nested deeper than 512 levels"));
}

}  // namespace
}  // namespace podtopo

namespace podtopo {
namespace {

// One pod's fields as text, to compare two readings.
std::string Describe(const Pod& p) {
  std::string out = fmt::format("{} uid={} src={} node={} ctl={}/{} labels={}", p.Key(), p.uid,
                                p.source, p.node_name, p.controller_kind, p.controller_name,
                                p.labels.size());
  auto list = [&](const ResourceList& l) {
    for (const auto& [name, q] : l) out += " " + name + "=" + q.String();
  };
  if (p.resources.has_value()) {
    out += " pod:";
    list(p.resources->requests);
    out += " /";
    list(p.resources->limits);
  }
  for (const Container* c : p.InitAndAppContainers()) {
    out += fmt::format(" [{} {}", c->name, ContainerKindName(c->kind));
    list(c->resources.requests);
    out += " /";
    list(c->resources.limits);
    out += "]";
  }
  return out;
}

// A List's items read on several threads give the pods, the counts and the first error of
// one thread, over random Lists of pods, controllers (expanded or not), skipped kinds and
// items that do not read.
PODTOPO_PROPERTY(PodYamlParallelItems, SameAsOneThread, ()) {
  auto item = [](int i) -> std::string {
    const std::string n = std::to_string(i);
    switch (*rc::gen::inRange(0, 9)) {
      case 0:
        return "- {kind: Service, apiVersion: v1, metadata: {name: s" + n + "}}\n";
      case 1:
        return "- {kind: Pod, apiVersion: v1, metadata: {name: bad" + n +
               "}, spec: {containers: [{name: c, resources: {limits: {cpu: 2x}}}]}}\n";
      case 2:
        return "- null\n";
      case 3:
        return "- {kind: ReplicaSet, apiVersion: apps/v1, metadata: {name: rs" + n +
               ", uid: u" + n + "}, spec: {replicas: 2, template: {spec: {containers: [{name: "
               "c}]}}}}\n- {kind: Pod, apiVersion: v1, metadata: {name: rs" + n +
               "-x, ownerReferences: [{kind: ReplicaSet, name: rs" + n + ", uid: u" + n +
               ", controller: true}]}, spec: {containers: [{name: c}]}}\n";
      case 4:
        return "- {kind: Deployment, apiVersion: apps/v1, metadata: {name: d" + n +
               "}, spec: {replicas: 3, template: {spec: {containers: [{name: c, resources: "
               "{limits: {cpu: '1', memory: 1Gi}}}]}}}}\n";
      case 5:
        return "- {kind: Pod, apiVersion: v1, metadata: {name: dup}, spec: {containers: [{name: "
               "c}]}}\n";
      default:
        return "- {kind: Pod, apiVersion: v1, metadata: {name: p" + n + ", labels: {a: b}}, spec: "
               "{nodeName: n" + n + ", resources: {requests: {cpu: '2'}}, containers: [{name: c, "
               "resources: {requests: {cpu: 500m}, limits: {memory: 1Gi}}}]}}\n";
    }
  };
  std::string text = "apiVersion: v1\nkind: List\nitems:\n";
  const int count = *rc::gen::inRange(1, 40);
  for (int i = 0; i < count; ++i) text += item(i);
  auto read = [&](size_t parallel_items, std::map<std::string, int>& skipped,
                  std::map<std::string, int>& not_expanded) {
    PodLoadOptions options;
    options.skipped_kinds = &skipped;
    options.not_expanded = &not_expanded;
    options.parallel_items = parallel_items;
    return ParsePods(text, "l.yaml", options);
  };
  std::map<std::string, int> skipped_one, skipped_many, not_expanded_one, not_expanded_many;
  auto one = read(SIZE_MAX, skipped_one, not_expanded_one);
  auto many = read(0, skipped_many, not_expanded_many);
  RC_ASSERT(one.ok() == many.ok());
  if (!one.ok()) {
    RC_ASSERT(one.status() == many.status());
    return;
  }
  RC_ASSERT(skipped_one == skipped_many);
  RC_ASSERT(not_expanded_one == not_expanded_many);
  RC_ASSERT(one->size() == many->size());
  for (size_t i = 0; i < one->size(); ++i) RC_ASSERT(Describe((*one)[i]) == Describe((*many)[i]));
}

// ---------------------------------------------------------------------------------------
// Fields that are no field of their object (issue 22 item 4): reported, errors with strict.

constexpr char kMisspeltPod[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: typo
  lables: {app: x}
spec:
  initcontainers:
  - name: sidecar
    image: busybox
    restartPolicy: Always
  containers:
  - name: main
    image: busybox
    resource:
      limits: {cpu: "2", memory: 1Gi}
)";

TEST(UnknownFieldsTest, MisspeltFieldsAreReportedWithTheNameMeant) {
  std::vector<UnknownField> unknown;
  Pod pod = MustParseOne(kMisspeltPod, {.unknown_fields = &unknown});
  EXPECT_TRUE(pod.init_containers.empty());  // read as the API objects say: not a field
  ASSERT_EQ(unknown.size(), 3u);
  EXPECT_EQ(unknown[0].field, "metadata.lables");
  EXPECT_EQ(unknown[0].suggestion, "labels");
  EXPECT_EQ(unknown[1].field, "spec.initcontainers");
  EXPECT_EQ(unknown[1].suggestion, "initContainers");
  EXPECT_EQ(unknown[2].field, "spec.containers[0].resource");
  EXPECT_EQ(unknown[2].suggestion, "resources");
  EXPECT_EQ(unknown[2].ToString(),
            "pod.yaml: document 1: spec.containers[0].resource: unknown field \"resource\" "
            "(did you mean resources?)");
}

TEST(UnknownFieldsTest, StrictMakesThemErrors) {
  std::string error = ErrorOf(kMisspeltPod, "pod.yaml", {.strict = true});
  EXPECT_THAT(error, HasSubstr("pod.yaml: document 1: spec.initcontainers: unknown field "
                               "\"initcontainers\" (did you mean initContainers?)"));
  EXPECT_THAT(error, HasSubstr("pod.yaml: document 1: spec.containers[0].resource: unknown "
                               "field \"resource\" (did you mean resources?) (--strict"));
}

TEST(UnknownFieldsTest, WorkloadTemplatesAndListsAreChecked) {
  std::vector<UnknownField> unknown;
  MustParse(R"({"apiVersion": "v1", "kind": "List", "item": [], "items": [
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
     "spec": {"replica": 2, "template": {"spec": {"containers": [
       {"name": "c", "image": "x", "resources": {"limit": {"cpu": "1"}}}]}}}},
    {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
     "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
       "containers": [{"name": "c", "image": "x"}], "ephemeralContainer": []}}}}}}]})",
            "all.json", {.unknown_fields = &unknown});
  std::vector<std::string> fields;
  for (const auto& u : unknown) fields.push_back(u.where + " " + u.field + " " + u.suggestion);
  EXPECT_THAT(fields,
              ElementsAre("document 1 item items", "document 1: Deployment web items[0].spec.replica replicas",
                          "document 1: Deployment web "
                          "items[0].spec.template.spec.containers[0].resources.limit limits",
                          "document 1: CronJob cj "
                          "items[1].spec.jobTemplate.spec.template.spec.ephemeralContainer "
                          "ephemeralContainers"));
}

// Fields podtopo does not read but that the API objects have are no finding.
TEST(UnknownFieldsTest, FieldsOfTheApiObjectsAreKnown) {
  std::vector<UnknownField> unknown;
  MustParse(R"(apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  annotations: {a: b}
  ownerReferences: []
  finalizers: [x]
spec:
  serviceName: db
  replicas: 1
  ordinals: {start: 2}
  selector: {matchLabels: {app: db}}
  volumeClaimTemplates: [{metadata: {name: data}, whatever: 1}]
  template:
    metadata: {labels: {app: db}}
    spec:
      volumes: [{name: v, emptyDir: {}}]
      affinity: {nodeAffinity: {}}
      tolerations: [{key: k}]
      os: {name: linux}
      containers:
      - name: c
        image: x
        env: [{name: A, value: b}]
        ports: [{containerPort: 80}]
        livenessProbe: {exec: {command: [true]}}
        securityContext: {privileged: true}
        resources: {requests: {cpu: "1"}, claims: []}
      ephemeralContainers:
      - {name: e, image: x, targetContainerName: c}
status: {replicas: 1}
)",
            "sts.yaml", {.unknown_fields = &unknown});
  EXPECT_TRUE(unknown.empty()) << unknown[0].ToString();
}

// A file holding a JSON array of objects (docs/usage.md: a file starting with `[` is JSON)
// reads as a List's items.
TEST(PodYamlTest, TopLevelJsonArrayOfObjects) {
  std::vector<Pod> pods = MustParse(
      R"([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
            "spec": {"containers": [{"name": "c", "image": "x"}]}},
           {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"},
            "spec": {"containers": [{"name": "c", "image": "x"}]}}])",
      "pods.json");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[1].name, "b");
  EXPECT_THAT(ErrorOf(R"([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
                          "spec": {"containers": [{"name": "c", "image": 8}]}}])",
                      "pods.json"),
              HasSubstr("pods.json: document 1: [0].spec.containers[0].image: expected a string"));
}

// JSON refuses a trailing comma, and so does kubectl; YAML flow collections allow it, but a
// file that starts with `{` is not read as YAML past that error.
TEST(PodYamlTest, TrailingCommaInJsonIsAnError) {
  std::string error = ErrorOf(
      R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
  "spec": {"containers": [{"name": "c", "image": "x",}]}})",
      "pod.json");
  EXPECT_THAT(error, HasSubstr("pod.json: line 2, column 54: malformed JSON"));
  // It names the cause (issue 22 item 12.7: the message said only "unexpected '}'").
  EXPECT_THAT(error, HasSubstr("a trailing comma before '}'"));
  EXPECT_THAT(ErrorOf(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, }")",
                      "pod.json"),
              HasSubstr("trailing comma before '}'"));
  EXPECT_THAT(ErrorOf(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
  "spec": {"containers": [{"name": "c", "image": "x"},]}})",
                      "pod.json"),
              HasSubstr("trailing comma before ']'"));
  // Other malformed JSON says nothing of commas.
  EXPECT_THAT(ErrorOf(R"({"apiVersion": "v1", "kind": "Pod" "metadata": {}})", "pod.json"),
              Not(HasSubstr("comma")));
  ErrorOf(R"([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
             "spec": {"containers": [{"name": "c", "image": "x"}]}},])",
          "pods.json");
  // Flow-style YAML without a trailing comma still reads.
  MustParse("{apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: c, "
            "image: x}]}}");
}

// metadata.annotations are read (serve --cri hands them to the runtime), from a pod or a
// controller's template.
TEST(PodYamlTest, AnnotationsAreRead) {
  Pod pod = MustParseOne(R"(apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {podtopo.io/pod-spec: "{}", note: "x"}
spec:
  containers: [{name: c, image: x}]
)");
  EXPECT_EQ(pod.annotations, (std::map<std::string, std::string>{
                                 {"note", "x"}, {"podtopo.io/pod-spec", "{}"}}));
  std::vector<Pod> pods = MustParse(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: d, annotations: {on-the-deployment: "not copied"}}
spec:
  template:
    metadata: {annotations: {a: b}}
    spec: {containers: [{name: c, image: x}]}
)");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].annotations, (std::map<std::string, std::string>{{"a", "b"}}));
  EXPECT_THAT(ErrorOf(R"(apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {"bad key!": x}}
spec: {containers: [{name: c, image: x}]}
)"),
              HasSubstr("metadata.annotations[bad key!]: Invalid value: \"bad key!\""));
}

}  // namespace
}  // namespace podtopo
