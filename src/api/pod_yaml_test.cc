#include "api/pod_yaml.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"
#include "testing/testing.h"
#include "util/file.h"

namespace podtopo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<Pod> MustParse(const std::string& yaml, const std::string& source = "pod.yaml") {
  absl::StatusOr<std::vector<Pod>> pods = ParsePods(yaml, source);
  EXPECT_TRUE(pods.ok()) << pods.status();
  return pods.ok() ? *pods : std::vector<Pod>{};
}

Pod MustParseOne(const std::string& yaml) {
  std::vector<Pod> pods = MustParse(yaml);
  EXPECT_EQ(pods.size(), 1u);
  return pods.empty() ? Pod() : pods[0];
}

std::string ErrorOf(const std::string& yaml, const std::string& source = "pod.yaml") {
  absl::StatusOr<std::vector<Pod>> pods = ParsePods(yaml, source);
  EXPECT_FALSE(pods.ok()) << "expected an error for:\n" << yaml;
  if (pods.ok()) return "";
  EXPECT_EQ(pods.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(pods.status().message());
}

std::string Str(const ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? "<absent>" : it->second.String();
}

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
  EXPECT_EQ(GetPodQos(pod, /*pod_level_resources_enabled=*/false), QosClass::kBestEffort);
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

TEST(PodYamlTest, OtherKindsAreErrors) {
  EXPECT_THAT(ErrorOf(SmallPod("a") + "---\napiVersion: apps/v1\nkind: Deployment\n"),
              HasSubstr("pod.yaml: document 2: kind: kind \"Deployment\" is not supported"));
  EXPECT_THAT(ErrorOf("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n"),
              HasSubstr("document 1: items[0].kind: kind \"Service\" is not supported"));
  EXPECT_THAT(ErrorOf("apiVersion: apps/v1\nkind: Pod\nmetadata: {name: a}\n"),
              HasSubstr("apiVersion: Unsupported value: \"apps/v1\""));
  EXPECT_THAT(ErrorOf("metadata: {name: a}\nspec: {}\n"), HasSubstr("kind: Required value"));
  EXPECT_THAT(ErrorOf("kind: Pod\nmetadata: {name: a}\n"),
              HasSubstr("apiVersion: Required value"));
  EXPECT_THAT(ErrorOf("- a\n- b\n"), HasSubstr("expected a Kubernetes object"));
  EXPECT_THAT(ErrorOf("just a string\n"), HasSubstr("expected a Kubernetes object"));
  EXPECT_THAT(ErrorOf("apiVersion: v1\nkind: List\nitems: {a: b}\n"),
              HasSubstr("items: expected a list, got a map"));
  EXPECT_THAT(ErrorOf("apiVersion: v1\nkind: List\nitems:\n- null\n"),
              HasSubstr("items[0]: expected a Pod, got null"));
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
  EXPECT_EQ(GetPodQos(pod, true, /*fix_kubelet_qos_class=*/false), QosClass::kBestEffort);
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

  // A pod-level limit already set (cpu) stops all limit defaulting (IsPodLevelLimitsSet).
  Pod some = MustParseOne(PodWithSpec(R"(  resources:
    requests: {cpu: "2", memory: 2Gi}
    limits: {cpu: "2"}
  containers:
  - name: a
    resources: {limits: {cpu: "1", memory: 1Gi}}
)"));
  EXPECT_EQ(Str(some.resources->limits, "memory"), "<absent>");
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
  Pod pod = MustParseOne(PodWithSpec(R"(  resources:
    requests: {cpu: "2", memory: 2Gi}
  containers:
  - name: a
    resources: {limits: {cpu: "1", memory: 1Gi, hugepages-2Mi: 4Mi}}
  - name: b
    resources: {limits: {cpu: "1", memory: 1Gi, hugepages-2Mi: 2Mi}}
)"));
  EXPECT_EQ(Str(pod.resources->limits, "hugepages-2Mi"), "6Mi");
  // defaultPodRequests runs after defaultHugePagePodLimits, so the hugepages request follows
  // the defaulted limit...
  EXPECT_EQ(Str(pod.resources->requests, "hugepages-2Mi"), "6Mi");
  // ...and defaultPodLimits then sees pod-level limits already set (the hugepages one), so
  // cpu and memory limits are NOT defaulted from the containers: the pod is Burstable. This
  // is the API server's order (SetDefaults_Pod), quirk included.
  EXPECT_EQ(Str(pod.resources->limits, "cpu"), "<absent>");
  EXPECT_EQ(GetPodQos(pod), QosClass::kBurstable);
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

RC_GTEST_PROP(PodYamlPropertyTest, ArbitraryTextNeverCrashes, (const std::string& text)) {
  absl::StatusOr<std::vector<Pod>> pods = ParsePods(text, "rc.yaml");
  if (!pods.ok()) {
    const std::string message(pods.status().message());
    RC_ASSERT(message.rfind("rc.yaml: ", 0) == 0);
    RC_ASSERT(message.find("bad_alloc") == std::string::npos);
  }
}

// YAML punctuation soup: the inputs that make yaml-cpp misbehave (loops, huge allocations).
RC_GTEST_PROP(PodYamlPropertyTest, YamlSyntaxSoupNeverHangs, ()) {
  static const std::string kAlphabet = "[]{},:-?&*!|>'\"#%@ \n\ta0.~";
  const std::string text = *rc::gen::container<std::string>(rc::gen::elementOf(kAlphabet));
  absl::StatusOr<std::vector<Pod>> pods = ParsePods(text, "soup.yaml");
  if (!pods.ok()) {
    const std::string message(pods.status().message());
    RC_ASSERT(message.rfind("soup.yaml: ", 0) == 0);
    RC_ASSERT(message.find("bad_alloc") == std::string::npos);  // seen under `ulimit -v`
  }
}

RC_GTEST_PROP(PodYamlPropertyTest, MutatedPodsNeverCrash, (size_t position, char replacement)) {
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
  const std::string dir = testing::MakeTempDir("pod-yaml-stdin");
  const std::string path = dir + "/in.yaml";
  {
    std::ofstream out(path);
    out << SmallPod("from-stdin") << "---\n" << SmallPod("second");
  }
  const int saved = ::dup(0);
  ASSERT_GE(saved, 0);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_GE(::dup2(fd, 0), 0);
  ::close(fd);
  absl::StatusOr<std::vector<Pod>> pods = LoadPods("-");
  ::dup2(saved, 0);
  ::close(saved);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->size(), 2u);
  EXPECT_EQ((*pods)[0].name, "from-stdin");
  EXPECT_EQ((*pods)[0].source, "<stdin>#1");
}

TEST(PodYamlFileTest, StdinErrorsSayStdin) {
  const std::string dir = testing::MakeTempDir("pod-yaml-stdin");
  const std::string path = dir + "/in.yaml";
  {
    std::ofstream out(path);
    out << PodWithSpec("  containers: [{name: c, resources: {requests: {cpu: 2x}}}]\n");
  }
  const int saved = ::dup(0);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ::dup2(fd, 0);
  ::close(fd);
  absl::StatusOr<std::vector<Pod>> pods = LoadPods("-");
  ::dup2(saved, 0);
  ::close(saved);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(pods.ok());
  EXPECT_THAT(std::string(pods.status().message()),
              HasSubstr("<stdin>: document 1: spec.containers[0].resources.requests.cpu"));
}

}  // namespace
}  // namespace podtopo
