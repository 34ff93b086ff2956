#include "metrics/kubelet_metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "gtest/gtest.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "testing/testing.h"
#include "topology/node_source.h"

namespace podtopo::metrics {
namespace {

// The value of the sample `name{labels}` in the registry's text exposition; -1 when absent.
double Value(prometheus::Registry& r, const std::string& name_and_labels) {
  std::string text = prometheus::TextSerializer().Serialize(r.Collect());
  size_t pos = 0;
  while ((pos = text.find(name_and_labels + " ", pos)) != std::string::npos) {
    if (pos == 0 || text[pos - 1] == '\n') {
      return std::stod(text.substr(pos + name_and_labels.size() + 1));
    }
    pos += name_and_labels.size();
  }
  return -1;
}

PodAllocation Admit(Node& node, const Pod& pod) {
  auto a = node.Admit(pod);
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : PodAllocation{};
}

Pod Mixed() {
  auto pods = LoadPods(::podtopo::testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml");
  EXPECT_TRUE(pods.ok());
  return pods.ok() ? pods->front() : Pod{};
}

std::unique_ptr<Node> MakeNode(const config::KubeletConfig& cfg) {
  auto node = Node::Create(*LoadNode("preset:demo"), cfg, {});
  EXPECT_TRUE(node.ok()) << node.status();
  return node.ok() ? std::move(*node) : nullptr;
}

TEST(KubeletMetricsTest, PodScopeMixedPodCountsPodAllocationsAndAssignments) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto cfg = config::SeedDefault();
  KubeletMetrics m(registry, cfg);
  auto node = MakeNode(cfg);
  Pod pod = Mixed();
  PodAllocation a = Admit(*node, pod);
  ASSERT_TRUE(a.admitted);
  m.RecordAdmission(pod, a, 0.3);
  auto& r = *registry;
  EXPECT_EQ(Value(r, "kubelet_topology_manager_admission_requests_total"), 1);
  EXPECT_EQ(Value(r, "kubelet_topology_manager_admission_errors_total"), 0);
  EXPECT_EQ(Value(r, "kubelet_topology_manager_admission_duration_ms_count"), 1);
  // 3 containers (2 sidecars, main-app), all from the pod's bubble.
  EXPECT_EQ(Value(r, "kubelet_resource_manager_allocations_total{resource_name=\"cpu\",source=\"pod\"}"), 3);
  EXPECT_EQ(Value(r, "kubelet_resource_manager_container_assignments{assignment_type=\"pod_exclusive\",resource_name=\"cpu\"}"), 1);
  EXPECT_EQ(Value(r, "kubelet_resource_manager_container_assignments{assignment_type=\"pod_shared\",resource_name=\"cpu\"}"), 2);
  EXPECT_EQ(Value(r, "kubelet_resource_manager_container_assignments{assignment_type=\"pod_exclusive\",resource_name=\"memory\"}"), 1);
  EXPECT_EQ(Value(r, "kubelet_resource_manager_container_assignments{assignment_type=\"pod_shared\",resource_name=\"memory\"}"), 2);
  EXPECT_EQ(Value(r, "kubelet_cpu_manager_pinning_requests_total"), 1);
  EXPECT_EQ(Value(r, "kubelet_memory_manager_pinning_requests_total"), 1);
  EXPECT_EQ(Value(r, "kubelet_resource_manager_allocations_total{resource_name=\"cpu\",source=\"node\"}"), -1);
}

TEST(KubeletMetricsTest, ContainerScopeCountsNodeExclusive) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto cfg = config::SeedDefault();
  cfg.topology_manager_scope = "container";
  KubeletMetrics m(registry, cfg);
  auto node = MakeNode(cfg);
  auto pods = ParsePods(R"(
apiVersion: v1
kind: Pod
metadata: {name: g}
spec:
  containers:
  - name: a
    resources: {limits: {cpu: "2", memory: 1Gi}}
)", "g.yaml");
  ASSERT_TRUE(pods.ok());
  PodAllocation a = Admit(*node, pods->front());
  ASSERT_TRUE(a.admitted);
  m.RecordAdmission(pods->front(), a, 0.1);
  auto& r = *registry;
  EXPECT_EQ(Value(r, "kubelet_resource_manager_allocations_total{resource_name=\"cpu\",source=\"node\"}"), 1);
  EXPECT_EQ(Value(r, "kubelet_resource_manager_container_assignments{assignment_type=\"node_exclusive\",resource_name=\"cpu\"}"), 1);
  EXPECT_EQ(Value(r, "kubelet_resource_manager_allocations_total{resource_name=\"memory\",source=\"node\"}"), 1);
  EXPECT_EQ(Value(r, "kubelet_cpu_manager_pinning_requests_total"), 1);
}

TEST(KubeletMetricsTest, RejectionCountsTopologyManagerError) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto cfg = config::SeedDefault();
  KubeletMetrics m(registry, cfg);
  PodAllocation a;
  a.admitted = false;
  a.reason = "TopologyAffinityError";
  a.message = "Resources cannot be allocated with Topology locality";
  m.RecordAdmission(Mixed(), a, 0.2);
  // A node-fit rejection never reaches the Topology Manager.
  PodAllocation out;
  out.admitted = false;
  out.reason = "OutOfcpu";
  m.RecordAdmission(Mixed(), out, 0.2);
  EXPECT_EQ(Value(*registry, "kubelet_topology_manager_admission_requests_total"), 1);
  EXPECT_EQ(Value(*registry, "kubelet_topology_manager_admission_errors_total"), 1);
}

TEST(KubeletMetricsTest, ResourceManagerFamiliesOnlyWithTheGate) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto cfg = config::SeedDefault();
  cfg.feature_gates["PodLevelResourceManagers"] = false;
  KubeletMetrics m(registry, cfg);
  m.RecordAdmission(Mixed(), PodAllocation{.admitted = true}, 0.1);
  std::string text = prometheus::TextSerializer().Serialize(registry->Collect());
  EXPECT_EQ(text.find("resource_manager_"), std::string::npos);
  EXPECT_NE(text.find("kubelet_topology_manager_admission_requests_total"), std::string::npos);
}

TEST(KubeletMetricsTest, PodResourcesEndpointCounters) {
  auto registry = std::make_shared<prometheus::Registry>();
  KubeletMetrics m(registry, config::SeedDefault());
  m.RecordPodResourcesRequest("v1", "list", false);
  m.RecordPodResourcesRequest("v1", "get", true);
  m.RecordPodResourcesRequest("v1alpha1", "list", false);
  auto& r = *registry;
  EXPECT_EQ(Value(r, "kubelet_pod_resources_endpoint_requests_total{server_api_version=\"v1\"}"), 2);
  EXPECT_EQ(Value(r, "kubelet_pod_resources_endpoint_requests_list{server_api_version=\"v1alpha1\"}"), 1);
  EXPECT_EQ(Value(r, "kubelet_pod_resources_endpoint_errors_get{server_api_version=\"v1\"}"), 1);
}

TEST(KubeletMetricsTest, ExposeRejectsBadAddresses) {
  auto registry = std::make_shared<prometheus::Registry>();
  EXPECT_FALSE(Expose("127.0.0.1:notaport", registry).ok());
  EXPECT_FALSE(Expose("127.0.0.1:99999", registry).ok());
}

// A port another process listens on: said in words, not civetweb's "null context".
TEST(KubeletMetricsTest, ExposeOnABusyPortSaysSo) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof(sa);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len), 0);
  const std::string port = std::to_string(ntohs(sa.sin_port));
  auto exposer = Expose("127.0.0.1:" + port, std::make_shared<prometheus::Registry>());
  close(fd);
  ASSERT_FALSE(exposer.ok());
  EXPECT_NE(exposer.status().message().find("port " + port + " is in use"),
            absl::string_view::npos)
      << exposer.status();
  EXPECT_EQ(exposer.status().message().find("null context"), absl::string_view::npos);
}

}  // namespace
}  // namespace podtopo::metrics
