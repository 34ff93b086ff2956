// What a simulated node writes to the API server: its Node's resources as the kubelet computes
// them, and pods from the API server's JSON admitted and turned into status patches.
#include "kubenode/api_objects.h"

#include <set>

#include "admission/node.h"
#include "config/kubelet_config.h"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "topology/node_source.h"

namespace podtopo::kubenode {
namespace {

NodeTopology Preset(const std::string& spec) {
  auto t = LoadNode(spec);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

// A pod as the API server 1.20 lists it: no kind/apiVersion in a list item, defaulted fields
// podtopo does not read, status, managedFields.
nlohmann::json ApiPod(const std::string& name, const std::string& cpu, const std::string& memory) {
  nlohmann::json resources = {{"requests", {{"cpu", cpu}, {"memory", memory}}},
                              {"limits", {{"cpu", cpu}, {"memory", memory}}}};
  return {
      {"metadata",
       {{"name", name},
        {"namespace", "default"},
        {"uid", "6c1f0a52-uid-of-" + name},
        {"resourceVersion", "812"},
        {"creationTimestamp", "2026-12-07T11:00:00Z"},
        {"managedFields", nlohmann::json::array({{{"manager", "kubectl-create"}}})}}},
      {"spec",
       {{"nodeName", "sim-a"},
        {"restartPolicy", "Always"},
        {"terminationGracePeriodSeconds", 30},
        {"dnsPolicy", "ClusterFirst"},
        {"schedulerName", "default-scheduler"},
        {"tolerations", nlohmann::json::array({{{"key", "node.kubernetes.io/not-ready"},
                                                {"operator", "Exists"},
                                                {"effect", "NoExecute"},
                                                {"tolerationSeconds", 300}}})},
        {"initContainers",
         nlohmann::json::array({{{"name", "setup"}, {"image", "busybox"}, {"resources", resources}},
                                {{"name", "proxy"},
                                 {"image", "envoy"},
                                 {"restartPolicy", "Always"},
                                 {"resources", resources}}})},
        {"containers", nlohmann::json::array({{{"name", "main"},
                                               {"image", "nginx"},
                                               {"terminationMessagePath", "/dev/termination-log"},
                                               {"imagePullPolicy", "Always"},
                                               {"resources", resources}}})}}},
      {"status", {{"phase", "Pending"}, {"qosClass", "Guaranteed"}}}};
}

TEST(NodeResources, DemoWithTheSeedConfiguration) {
  NodeTopology demo = Preset("preset:demo");
  config::KubeletConfig seed = config::SeedDefault();
  // 64 CPUs, 4 NUMA nodes of 16 GiB; systemReserved cpu 1, memory 1Gi; eviction 100Mi.
  EXPECT_EQ(NodeCapacityJson(demo, seed),
            (nlohmann::json{{"cpu", "64"}, {"memory", "64Gi"}, {"pods", "110"}}));
  EXPECT_EQ(NodeAllocatableJson(demo, seed),
            (nlohmann::json{{"cpu", "63"}, {"memory", "64412Mi"}, {"pods", "110"}}));
}

TEST(NodeResources, PodsIsTheConfigurationsMaxPods) {
  NodeTopology demo = Preset("preset:demo");
  config::KubeletConfig cfg = config::SeedDefault();
  cfg.max_pods = 250;
  EXPECT_EQ(NodeCapacityJson(demo, cfg)["pods"], "250");
  EXPECT_EQ(NodeAllocatableJson(demo, cfg)["pods"], "250");
}

TEST(NodeResources, HugepagesAndDevicesAsTheKubeletReportsThem) {
  auto parsed = LoadNode(::podtopo::testing::SourceDir() + "/src/kubenode/testdata/hugepages-gpu.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  config::KubeletConfig cfg;  // no reservation, the default eviction threshold (100Mi)
  nlohmann::json cap = NodeCapacityJson(*parsed, cfg);
  EXPECT_EQ(cap["cpu"], "8");
  EXPECT_EQ(cap["memory"], "8Gi");
  EXPECT_EQ(cap["hugepages-2Mi"], "1Gi");
  EXPECT_EQ(cap["example.com/gpu"], "2");
  nlohmann::json alloc = NodeAllocatableJson(*parsed, cfg);
  // memory: 8Gi - 100Mi eviction - 1Gi of hugepages
  EXPECT_EQ(alloc["memory"], "7068Mi");
  EXPECT_EQ(alloc["hugepages-2Mi"], "1Gi");
  EXPECT_EQ(alloc["example.com/gpu"], "2");
}

TEST(NodeObject, ReadyWithLabelsAndNodeInfo) {
  config::KubeletConfig cfg = config::SeedDefault();
  cfg.kubelet_version = "1.37";
  auto t = Clock::time_point(std::chrono::seconds(1796641200));  // 2026-12-07T11:00:00Z
  nlohmann::json n = NodeObject({.name = "sim-a", .address = "10.0.0.7"}, Preset("preset:demo"),
                                cfg, t);
  EXPECT_EQ(n["metadata"]["name"], "sim-a");
  EXPECT_EQ(n["metadata"]["labels"]["kubernetes.io/hostname"], "sim-a");
  EXPECT_EQ(n["metadata"]["labels"]["podtopo.io/kubelet-version"], "1.37");
  EXPECT_EQ(n["status"]["nodeInfo"]["kubeletVersion"], "v1.37.0");
  EXPECT_EQ(n["status"]["addresses"][0],
            (nlohmann::json{{"type", "InternalIP"}, {"address", "10.0.0.7"}}));
  const nlohmann::json& ready = n["status"]["conditions"][3];
  EXPECT_EQ(ready["type"], "Ready");
  EXPECT_EQ(ready["status"], "True");
  EXPECT_EQ(ready["reason"], "KubeletReady");
  EXPECT_EQ(ready["lastHeartbeatTime"], "2026-12-07T11:00:00Z");
  for (const auto& c : n["status"]["conditions"]) {
    if (c["type"] != "Ready") EXPECT_EQ(c["status"], "False") << c;
  }
}

TEST(Times, Rfc3339) {
  auto t = Clock::time_point(std::chrono::seconds(1796641200)) + std::chrono::microseconds(42);
  EXPECT_EQ(Rfc3339(t), "2026-12-07T11:00:00Z");
  EXPECT_EQ(Rfc3339Micro(t), "2026-12-07T11:00:00.000042Z");
  nlohmann::json lease = LeaseObject("sim-a", "uid-1", t);
  EXPECT_EQ(lease["spec"]["renewTime"], "2026-12-07T11:00:00.000042Z");
  EXPECT_EQ(lease["spec"]["holderIdentity"], "sim-a");
  EXPECT_EQ(lease["metadata"]["ownerReferences"][0]["uid"], "uid-1");
}

TEST(LeaseConflict, ASecondServeOfTheSameNodeIsRefusedNamingTheFirst) {
  const auto t = Clock::time_point(std::chrono::seconds(1796641200));
  const std::string first = LeaseInstance("host1", 4242, 0xabc);
  EXPECT_EQ(first, "host1:4242:0000000000000abc");
  const std::string second = LeaseInstance("host2", 7, 0xdef);
  nlohmann::json lease = LeaseObject("sim-a", "uid-1", t, 40, first);
  EXPECT_EQ(lease["metadata"]["annotations"][kLeaseInstanceAnnotation], first);
  auto alive = [](long) { return true; };
  auto dead = [](long) { return false; };

  // Renewed 3 s ago by another serve: refused, naming it and the Lease's times.
  auto c = LeaseConflict(lease, "sim-a", second, "host2", t + std::chrono::seconds(3), alive);
  ASSERT_TRUE(c.has_value());
  EXPECT_NE(c->find("Node sim-a is played by another podtopo serve"), std::string::npos) << *c;
  EXPECT_NE(c->find(first), std::string::npos) << *c;
  EXPECT_NE(c->find("renewed 3 s ago and expires in 37 s"), std::string::npos) << *c;
  // The same serve renewing its own Lease.
  EXPECT_FALSE(LeaseConflict(lease, "sim-a", first, "host1", t, alive));
  // Expired: 40 s without renewal.
  EXPECT_FALSE(LeaseConflict(lease, "sim-a", second, "host2", t + std::chrono::seconds(41), alive));
  // Another host's serve whose pid happens to be gone here still holds it.
  EXPECT_TRUE(LeaseConflict(lease, "sim-a", second, "host2", t + std::chrono::seconds(3), dead));
  // On the holder's host: a serve killed and started again takes over; a running one does not.
  const std::string again = LeaseInstance("host1", 5000, 0x1);
  EXPECT_FALSE(LeaseConflict(lease, "sim-a", again, "host1", t + std::chrono::seconds(3), dead));
  EXPECT_TRUE(LeaseConflict(lease, "sim-a", again, "host1", t + std::chrono::seconds(3), alive));
  // A container restarted: the same host and pid (1), another token.
  nlohmann::json in_pod = LeaseObject("sim-a", "uid-1", t, 40, LeaseInstance("pod-x", 1, 0xa));
  EXPECT_FALSE(LeaseConflict(in_pod, "sim-a", LeaseInstance("pod-x", 1, 0xb), "pod-x",
                             t + std::chrono::seconds(3), alive));
  EXPECT_TRUE(LeaseConflict(in_pod, "sim-a", LeaseInstance("pod-y", 1, 0xb), "pod-y",
                            t + std::chrono::seconds(3), alive));
  // Released by a serve that stopped.
  nlohmann::json released = LeaseObject("sim-a", "uid-1", t, 40, kLeaseReleased);
  EXPECT_FALSE(LeaseConflict(released, "sim-a", second, "host2", t, alive));
  // No Lease yet, or one without a renewTime.
  EXPECT_FALSE(LeaseConflict(nlohmann::json(), "sim-a", second, "host2", t, alive));
  EXPECT_FALSE(LeaseConflict(nlohmann::json::parse(R"({"spec":{}})"), "sim-a", second, "host2", t, alive));
}

TEST(LeaseConflict, AKubeletsLiveLeaseIsNamed) {
  const auto t = Clock::time_point(std::chrono::seconds(1796641200));
  nlohmann::json kubelets = LeaseObject("node-1", "uid-1", t);  // no annotation, as a kubelet's
  auto c = LeaseConflict(kubelets, "node-1", LeaseInstance("h", 1, 1), "h",
                         t + std::chrono::seconds(10), [](long) { return true; });
  ASSERT_TRUE(c.has_value());
  EXPECT_NE(c->find("live Lease held by \"node-1\" and not by a podtopo serve"), std::string::npos)
      << *c;
  EXPECT_NE(c->find("a kubelet may run this node"), std::string::npos) << *c;
  EXPECT_FALSE(LeaseConflict(kubelets, "node-1", LeaseInstance("h", 1, 1), "h",
                             t + std::chrono::seconds(50), [](long) { return true; }));
}

TEST(PodFromApi, ReadsAnApiServerPodWithTheCommandsReader) {
  auto pod = PodFromApi(ApiPod("web", "2", "1Gi"), config::SeedDefault());
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->Key(), "default/web");
  EXPECT_EQ(pod->node_name, "sim-a");
  ASSERT_EQ(pod->init_containers.size(), 2u);
  EXPECT_EQ(pod->init_containers[0].kind, ContainerKind::kInit);
  EXPECT_EQ(pod->init_containers[1].kind, ContainerKind::kSidecar);
  ASSERT_EQ(pod->containers.size(), 1u);
  EXPECT_EQ(pod->containers[0].resources.limits.at("cpu").String(), "2");
  EXPECT_EQ(pod->uid, PodUid(ApiPod("web", "2", "1Gi")));
}

TEST(PodFromApi, PodLevelResourcesFromANewerApiServerAreRead) {
  // A 1.32+ API server keeps spec.resources (1.20's drops it before the node sees the pod).
  nlohmann::json object = ApiPod("bubble", "1", "1Gi");
  object["spec"]["resources"] = {{"limits", {{"cpu", "4"}, {"memory", "4Gi"}}}};
  auto pod = PodFromApi(object, config::SeedDefault());
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_TRUE(pod->HasPodLevelResources());
  EXPECT_EQ(pod->resources->limits.at("cpu").String(), "4");
  // Defaulted as a 1.37 API server does (PodLevelResourcesFixDefaulting): the missing pod-level
  // request is the containers' aggregated request, the sidecar (1) beside main (1).
  EXPECT_EQ(pod->resources->requests.at("cpu").String(), "2");
}

TEST(PodFromApi, ABadFieldIsNamed) {
  auto pod = PodFromApi(ApiPod("bad", "2x", "1Gi"), config::SeedDefault());
  ASSERT_FALSE(pod.ok());
  std::string m(pod.status().message());
  EXPECT_NE(m.find("pod default/bad (from the API server)"), std::string::npos) << m;
  EXPECT_NE(m.find("resources.requests.cpu"), std::string::npos) << m;
}

TEST(StatusPatch, AdmittedPodRuns) {
  nlohmann::json object = ApiPod("web", "2", "1Gi");
  auto t = Clock::time_point(std::chrono::seconds(1796641200));
  nlohmann::json s = AdmittedStatusPatch(object, "10.0.0.7", t)["status"];
  EXPECT_EQ(s["phase"], "Running");
  EXPECT_EQ(s["hostIP"], "10.0.0.7");
  EXPECT_EQ(s["startTime"], "2026-12-07T11:00:00Z");
  std::set<std::string> conditions;
  for (const auto& c : s["conditions"]) {
    EXPECT_EQ(c["status"], "True");
    conditions.insert(c["type"]);
  }
  EXPECT_EQ(conditions, (std::set<std::string>{"Initialized", "Ready", "ContainersReady",
                                               "PodScheduled"}));
  ASSERT_EQ(s["containerStatuses"].size(), 1u);
  EXPECT_EQ(s["containerStatuses"][0]["name"], "main");
  EXPECT_EQ(s["containerStatuses"][0]["image"], "nginx");
  EXPECT_TRUE(s["containerStatuses"][0]["state"].contains("running"));
  EXPECT_EQ(s["containerStatuses"][0]["ready"], true);
  ASSERT_EQ(s["initContainerStatuses"].size(), 2u);
  EXPECT_EQ(s["initContainerStatuses"][0]["state"]["terminated"]["reason"], "Completed");
  EXPECT_TRUE(s["initContainerStatuses"][1]["state"].contains("running")) << "the sidecar runs";
}

TEST(StatusPatch, RejectedPodFailsWithTheKubeletsReasonAndMessage) {
  // single-numa-node on demo (16 CPUs per NUMA node): 20 exclusive CPUs fit no NUMA node.
  auto node = Node::Create(Preset("preset:demo"), config::SeedDefault(), {});
  ASSERT_TRUE(node.ok()) << node.status();
  nlohmann::json object = ApiPod("big", "6", "1Gi");
  object["spec"]["initContainers"] = nlohmann::json::array();
  object["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "20";
  object["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "20";
  auto pod = PodFromApi(object, config::SeedDefault());
  ASSERT_TRUE(pod.ok()) << pod.status();
  auto a = (*node)->Admit(*pod);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_FALSE(a->admitted);
  nlohmann::json s = RejectedStatusPatch(*a, Clock::now())["status"];
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(s["reason"], "TopologyAffinityError");
  std::string message = s["message"];
  EXPECT_EQ(message.rfind("Pod was rejected: ", 0), 0u) << message;
  EXPECT_EQ(message, a->message);
  nlohmann::json event = RejectionEvent(*a, "sim-a", Clock::now());
  EXPECT_EQ(event["type"], "Warning");
  EXPECT_EQ(event["reason"], "TopologyAffinityError");
  EXPECT_EQ("Pod was rejected: " + event["message"].get<std::string>(), message);
  EXPECT_EQ(event["involvedObject"]["uid"], PodUid(object));
  EXPECT_EQ(event["source"]["host"], "sim-a");
}

TEST(PodState, PhaseTerminatingAndDeleteOptions) {
  nlohmann::json object = ApiPod("web", "1", "1Gi");
  EXPECT_EQ(PodPhase(object), "Pending");
  EXPECT_FALSE(PodTerminating(object));
  object["metadata"]["deletionTimestamp"] = "2026-12-07T11:41:00Z";
  EXPECT_TRUE(PodTerminating(object));
  EXPECT_EQ(DeleteNowBody("u-1"),
            (nlohmann::json{{"apiVersion", "v1"},
                            {"kind", "DeleteOptions"},
                            {"gracePeriodSeconds", 0},
                            {"preconditions", {{"uid", "u-1"}}}}));
}

}  // namespace
}  // namespace podtopo::kubenode
