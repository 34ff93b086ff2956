// The extender against the kubelet's own admission: every verdict Filter gives must be the one
// Node::Admit gives on the node the NodeResourceTopology describes.
#include "extender/extender.h"

#include <atomic>
#include <random>
#include <thread>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "extender/nrt_attributes.h"
#include "extender/nrt_model.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/property.h"
#include "topology/presets.h"

namespace podtopo::extender {
namespace {

using nlohmann::json;

std::unique_ptr<Node> MakeNode(const std::string& preset, config::KubeletConfig cfg) {
  auto topo = Preset(preset);
  EXPECT_TRUE(topo.ok()) << topo.status();
  auto node = Node::Create(*topo, std::move(cfg), {});
  EXPECT_TRUE(node.ok()) << node.status();
  return std::move(*node);
}

config::KubeletConfig Seed(const std::string& version = "1.37") {
  config::KubeletConfig c = config::SeedDefault();
  c.kubelet_version = version;
  return c;
}

// A Guaranteed pod: `containers` containers of `cpu` CPUs and `mem_gi` GiB each.
json PodJson(const std::string& name, const std::string& uid, int containers, int cpu,
             int mem_gi) {
  json pod = {{"metadata", {{"name", name}, {"namespace", "default"}, {"uid", uid}}},
              {"spec", {{"containers", json::array()}}}};
  for (int i = 0; i < containers; ++i) {
    json r = {{"cpu", std::to_string(cpu)}, {"memory", fmt::format("{}Gi", mem_gi)}};
    pod["spec"]["containers"].push_back(
        {{"name", fmt::format("c{}", i)}, {"image", "busybox"},
         {"resources", {{"requests", r}, {"limits", r}}}});
  }
  return pod;
}

Pod ToPod(const json& j) {
  json p = j;
  p["apiVersion"] = "v1";
  p["kind"] = "Pod";
  auto pods = ParsePods(p.dump(), "test");
  EXPECT_TRUE(pods.ok()) << pods.status();
  return (*pods)[0];
}

std::string Args(const json& pod, const std::vector<std::string>& nodes) {
  return json{{"pod", pod}, {"nodenames", nodes}}.dump();
}

std::unique_ptr<Extender> NewExtender(ExtenderOptions o = {}) {
  auto e = Extender::Create(std::move(o));
  EXPECT_TRUE(e.ok()) << e.status();
  return std::move(*e);
}

json Body(const HttpAnswer& a) {
  EXPECT_TRUE(json::accept(a.body)) << a.body;
  return json::parse(a.body);
}

// Fills `node` with the pods `g` draws until one is rejected or `count` are admitted.
void Occupy(Node& node, std::mt19937& g, int count, int max_cpu) {
  for (int i = 0; i < count; ++i) {
    int cpu = std::uniform_int_distribution<int>(1, max_cpu)(g);
    int mem = std::uniform_int_distribution<int>(1, 3)(g);
    Pod p = ToPod(PodJson(fmt::format("fill-{}", i), fmt::format("uid-fill-{}", i), 1, cpu, mem));
    auto a = node.Admit(p);
    ASSERT_TRUE(a.ok()) << a.status();
  }
}

TEST(ExtenderTest, KubeletConfigAttributeRoundTrips) {
  config::KubeletConfig c = Seed();
  c.cpu_manager_policy_options = {{"full-pcpus-only", "true"}};
  c.topology_manager_policy_options = {{"prefer-closest-numa-nodes", "true"}};
  c.reserved_system_cpus = "0,32";
  c.system_reserved = {{"cpu", "2"}, {"memory", "1Gi"}};
  auto back = ParseKubeletConfigAttribute(KubeletConfigAttribute(c), "NRT n");
  ASSERT_TRUE(back.ok()) << back.status();
  // Every admission field comes back (cpuManagerReconcilePeriod, which admission does not
  // read, is not carried).
  EXPECT_EQ(KubeletConfigAttribute(*back), KubeletConfigAttribute(c));
  EXPECT_EQ(back->reserved_system_cpus, "0,32");
  EXPECT_EQ(back->cpu_manager_policy_options, c.cpu_manager_policy_options);
  EXPECT_EQ(back->reserved_memory, c.reserved_memory);
  EXPECT_EQ(back->eviction_hard, c.eviction_hard);
  EXPECT_EQ(back->feature_gates, c.feature_gates);
  auto bad = ParseKubeletConfigAttribute(R"({"cpuManagerPolicy": [1]})", "NRT n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cpuManagerPolicy"), std::string::npos) << bad.status();
}

TEST(ExtenderTest, ExactNodeIsModelledExactly) {
  std::mt19937 g(7);
  auto node = MakeNode("demo", Seed());
  Occupy(*node, g, 5, 6);
  auto ext = NewExtender();
  ext->UpsertNrt(NrtOfNode("n1", *node));
  HttpAnswer a = ext->Filter(Args(PodJson("p", "u1", 1, 2, 1), {"n1"}));
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(ext->Stats().nodes_approximate, 0u);
  EXPECT_EQ(ext->Stats().nodes_known, 1u);
}

// The property: on random occupancy and random pods, Filter's verdict and message are
// Node::Admit's. The generator is steered (small pods on even draws, large ones on odd) so that
// both verdicts occur for every seed, and the test checks that they did. The pods are
// Guaranteed with whole CPUs: everything they request is visible in the NRT (shared-pool
// requests are not: the node-level fit of those is kube-scheduler's NodeResourcesFit's).
TEST(ExtenderTest, FilterVerdictEqualsNodeAdmit) {
  for (uint32_t seed : testing::PropertySeeds(20261207)) {
    std::mt19937 g(seed);
    int fits = 0, fails = 0;
    for (int round = 0; round < 12; ++round) {
      const char* preset = round % 3 == 0 ? "demo" : round % 3 == 1 ? "dual-socket-ht" : "t256";
      auto node = MakeNode(preset, Seed(round % 2 == 0 ? "1.37" : "1.36"));
      Occupy(*node, g, std::uniform_int_distribution<int>(0, 8)(g), 8);
      auto ext = NewExtender();
      ext->UpsertNrt(NrtOfNode("n", *node));
      for (int k = 0; k < 4; ++k) {
        int containers = std::uniform_int_distribution<int>(1, 2)(g);
        int cpu = std::uniform_int_distribution<int>(1, k % 2 == 0 ? 6 : 20)(g);
        json pj = PodJson("cand", fmt::format("uid-c-{}-{}", round, k), containers, cpu,
                          std::uniform_int_distribution<int>(1, 4)(g));
        auto want = node->Admit(ToPod(pj));
        ASSERT_TRUE(want.ok()) << want.status();
        if (want->admitted) ASSERT_TRUE(node->Remove("default", "cand").ok());
        json got = Body(ext->Filter(Args(pj, {"n"})));
        const bool passed = got["nodenames"].size() == 1;
        ASSERT_EQ(passed, want->admitted)
            << "seed " << seed << " round " << round << " " << preset << ": " << got.dump()
            << " kubelet: " << want->reason << " " << want->message;
        if (!passed) {
          std::string why = got["failedNodes"]["n"];
          EXPECT_NE(why.find(want->reason + ": " + want->message), std::string::npos) << why;
        }
        (want->admitted ? fits : fails)++;
      }
    }
    EXPECT_GT(fits, 0) << "seed " << seed;
    EXPECT_GT(fails, 0) << "seed " << seed;
  }
}

TEST(ExtenderTest, RejectionNamesTheKubeletAndItsMessage) {
  auto node = MakeNode("demo", Seed("1.37"));
  auto ext = NewExtender();
  ext->UpsertNrt(NrtOfNode("small", *node));
  // 17 exclusive CPUs: more than one NUMA node of demo (16) with single-numa-node.
  json got = Body(ext->Filter(Args(PodJson("big", "u-big", 1, 17, 1), {"small", "ghost"})));
  EXPECT_EQ(got["nodenames"].size(), 0u);
  EXPECT_EQ(got["failedNodes"]["small"],
            "would be rejected: TopologyAffinityError: Pod was rejected: Resources cannot be "
            "allocated with Topology locality (kubelet 1.37)");
  EXPECT_EQ(got["failedNodes"]["ghost"], "no NodeResourceTopology for node ghost");
}

TEST(ExtenderTest, PodFitsOnlyOnTheNumaLayoutThatHoldsIt) {
  auto ext = NewExtender();
  auto demo = MakeNode("demo", Seed());  // 16 CPUs per NUMA node
  auto t256 = MakeNode("t256", Seed());  // 32 CPUs per NUMA node
  ext->UpsertNrt(NrtOfNode("demo-1", *demo));
  ext->UpsertNrt(NrtOfNode("t256-1", *t256));
  json got = Body(ext->Filter(Args(PodJson("p", "u", 1, 24, 2), {"demo-1", "t256-1"})));
  EXPECT_EQ(got["nodenames"], json::array({"t256-1"})) << got.dump();
  EXPECT_TRUE(got["failedNodes"].contains("demo-1"));
  json scores = Body(ext->Prioritize(Args(PodJson("p", "u", 1, 24, 2), {"demo-1", "t256-1"})));
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_EQ(scores[0]["host"], "demo-1");
  EXPECT_EQ(scores[0]["score"], 0);
  EXPECT_GT(scores[1]["score"].get<int>(), 0);
  EXPECT_LE(scores[1]["score"].get<int>(), 10);
}

TEST(ExtenderTest, PodLevelResourcesPodIsAdmittedAsTheKubeletDoes) {
  // KEP-5526: a pod-level budget of 4 CPUs shared by two containers without their own
  // resources. kube-apiserver 1.20 drops spec.resources, so only a request like this one (as a
  // newer API server would send it) exercises it.
  json pod = {{"metadata", {{"name", "pl"}, {"uid", "u-pl"}}},
              {"spec",
               {{"resources",
                 {{"requests", {{"cpu", "4"}, {"memory", "2Gi"}}},
                  {"limits", {{"cpu", "4"}, {"memory", "2Gi"}}}}},
                {"containers",
                 {{{"name", "a"}, {"image", "x"}}, {{"name", "b"}, {"image", "x"}}}}}}};
  auto node = MakeNode("demo", Seed());
  std::mt19937 g(3);
  Occupy(*node, g, 3, 4);
  auto ext = NewExtender();
  ext->UpsertNrt(NrtOfNode("n", *node));
  auto want = node->Admit(ToPod(pod));
  ASSERT_TRUE(want.ok());
  ASSERT_TRUE(want->admitted) << want->reason << ": " << want->message;
  EXPECT_EQ(want->cpus.Size(), 4) << "the pod-level bubble";
  json got = Body(ext->Filter(Args(pod, {"n"})));
  EXPECT_EQ(got["nodenames"].size() == 1, want->admitted) << got.dump();
  // The same pod whose budget no NUMA node can hold.
  pod["spec"]["resources"]["requests"]["cpu"] = "40";
  pod["spec"]["resources"]["limits"]["cpu"] = "40";
  got = Body(ext->Filter(Args(pod, {"n"})));
  EXPECT_EQ(got["nodenames"].size(), 0u) << got.dump();
}

TEST(ExtenderTest, ReservationSendsTheSecondIdenticalPodElsewhere) {
  std::chrono::steady_clock::time_point now{};
  ExtenderOptions o;
  o.reservation_ttl = std::chrono::seconds(30);
  o.now = [&] { return now; };
  auto ext = NewExtender(o);
  // Node a: demo filled with 8-CPU pods until exactly one NUMA node can take a 12-CPU pod.
  auto a = MakeNode("demo", Seed());
  for (int i = 0; i < 4; ++i) {
    auto p = a->Admit(ToPod(PodJson(fmt::format("f{}", i), fmt::format("uf{}", i), 1, 8, 1)));
    ASSERT_TRUE(p.ok() && p->admitted);
  }
  {  // The premise, on the node itself: one 12-CPU pod fits, a second does not.
    ASSERT_TRUE(a->Admit(ToPod(PodJson("x1", "ux1", 1, 12, 1)))->admitted);
    ASSERT_FALSE(a->Admit(ToPod(PodJson("x2", "ux2", 1, 12, 1)))->admitted);
    ASSERT_TRUE(a->Remove("default", "x1").ok());
  }
  auto b = MakeNode("t256", Seed());
  ext->UpsertNrt(NrtOfNode("a", *a));
  ext->UpsertNrt(NrtOfNode("b", *b));
  json first = Body(ext->Filter(Args(PodJson("p1", "u1", 1, 12, 1), {"a", "b"})));
  ASSERT_EQ(first["nodenames"], json::array({"a", "b"})) << first.dump();
  BindingArgs seen;
  HttpAnswer bound = ext->Bind(
      R"({"PodName":"p1","PodNamespace":"default","PodUID":"u1","Node":"a"})",
      [&](const BindingArgs& args) {
        seen = args;
        return absl::OkStatus();
      });
  EXPECT_EQ(bound.status, 200) << bound.body;
  EXPECT_EQ(seen.node, "a");
  EXPECT_EQ(ext->Stats().reservations, 1u);
  json second = Body(ext->Filter(Args(PodJson("p2", "u2", 1, 12, 1), {"a", "b"})));
  EXPECT_EQ(second["nodenames"], json::array({"b"})) << second.dump();
  // The node's NRT is republished unchanged: the pod is not in it yet, the reservation stays.
  ext->UpsertNrt(NrtOfNode("a", *a));
  EXPECT_EQ(ext->Stats().reservations, 1u);
  // The kubelet admits p1: the new NRT shows it, the reservation ends and the model is the NRT.
  ASSERT_TRUE(a->Admit(ToPod(PodJson("p1", "u1", 1, 12, 1)))->admitted);
  ext->UpsertNrt(NrtOfNode("a", *a));
  EXPECT_EQ(ext->Stats().reservations, 0u);
  second = Body(ext->Filter(Args(PodJson("p2", "u2", 1, 12, 1), {"a", "b"})));
  EXPECT_EQ(second["nodenames"], json::array({"b"})) << second.dump();
  // Removed on the node: fits again.
  ASSERT_TRUE(a->Remove("default", "p1").ok());
  ext->UpsertNrt(NrtOfNode("a", *a));
  second = Body(ext->Filter(Args(PodJson("p2", "u2", 1, 12, 1), {"a", "b"})));
  EXPECT_EQ(second["nodenames"], json::array({"a", "b"})) << second.dump();
}

TEST(ExtenderTest, ReservationEndsWithTtlOrWhenThePodGoes) {
  std::chrono::steady_clock::time_point now{};
  ExtenderOptions o;
  o.reservation_ttl = std::chrono::seconds(30);
  o.now = [&] { return now; };
  auto ext = NewExtender(o);
  auto a = MakeNode("demo", Seed());
  ext->UpsertNrt(NrtOfNode("a", *a));
  auto ok = [](const BindingArgs&) { return absl::OkStatus(); };
  for (const char* uid : {"u1", "u2"}) {
    ASSERT_EQ(ext->Filter(Args(PodJson(uid, uid, 1, 4, 1), {"a"})).status, 200);
    ext->Bind(json{{"PodName", uid}, {"PodNamespace", "default"}, {"PodUID", uid}, {"Node", "a"}}
                  .dump(),
              ok);
  }
  EXPECT_EQ(ext->Stats().reservations, 2u);
  ext->ObservePod(json{{"metadata", {{"uid", "u1"}}}, {"status", {{"phase", "Failed"}}}}, false);
  EXPECT_EQ(ext->Stats().reservations, 1u);
  // Running with exclusive CPUs: kept until the NRT shows them (or the TTL).
  ext->ObservePod(json{{"metadata", {{"uid", "u2"}}}, {"status", {{"phase", "Running"}}}}, false);
  EXPECT_EQ(ext->Stats().reservations, 1u);
  now += std::chrono::seconds(31);
  ext->Filter(Args(PodJson("p", "u9", 1, 1, 1), {"a"}));
  EXPECT_EQ(ext->Stats().reservations, 0u);
  // A failed bind reserves nothing and says why.
  HttpAnswer failed = ext->Bind(R"({"PodName":"u9","PodUID":"u9","Node":"a"})",
                                [](const BindingArgs&) {
                                  return absl::UnavailableError("API server says no");
                                });
  EXPECT_EQ(failed.status, 200);
  EXPECT_EQ(Body(failed)["Error"], "API server says no");
  EXPECT_EQ(ext->Stats().reservations, 0u);
}

TEST(ExtenderTest, ForeignNrtIsApproximateAndSaysSo) {
  // An NRT as the Resource Topology Exporter writes it: no podtopo attributes.
  json nrt = {{"metadata", {{"name", "rte-1"}}},
              {"attributes",
               {{{"name", "topologyManagerPolicy"}, {"value", "single-numa-node"}},
                {{"name", "topologyManagerScope"}, {"value", "pod"}}}},
              {"zones", json::array()}};
  for (int n = 0; n < 2; ++n) {
    nrt["zones"].push_back(
        {{"name", fmt::format("node-{}", n)},
         {"type", "Node"},
         {"resources",
          {{{"name", "cpu"}, {"capacity", "8"}, {"allocatable", n == 0 ? "7" : "8"},
            {"available", "6"}},
           {{"name", "memory"}, {"capacity", "8Gi"}, {"allocatable", "7Gi"},
            {"available", "7Gi"}}}}});
  }
  auto ext = NewExtender();
  ext->UpsertNrt(nrt);
  json got = Body(ext->Filter(Args(PodJson("p", "u", 1, 7, 1), {"rte-1"})));
  ASSERT_TRUE(got["failedNodes"].contains("rte-1")) << got.dump();
  std::string why = got["failedNodes"]["rte-1"];
  EXPECT_NE(why.find("TopologyAffinityError"), std::string::npos) << why;
  EXPECT_NE(why.find("approximate: no podtopo.io/cpu-topology-digest"), std::string::npos) << why;
  EXPECT_EQ(ext->Stats().nodes_approximate, 1u);
  got = Body(ext->Filter(Args(PodJson("p", "u", 1, 6, 1), {"rte-1"})));
  EXPECT_EQ(got["nodenames"], json::array({"rte-1"})) << got.dump();
}

TEST(ExtenderTest, NodeListInNodeListOut) {
  auto node = MakeNode("demo", Seed());
  auto ext = NewExtender();
  ext->UpsertNrt(NrtOfNode("n1", *node));
  json nodes = {{"items",
                 {{{"metadata", {{"name", "n1"}, {"labels", {{"a", "b"}}}}}},
                  {{"metadata", {{"name", "n2"}}}}}}};
  json got = Body(ext->Filter(json{{"Pod", PodJson("p", "u", 1, 2, 1)}, {"Nodes", nodes}}.dump()));
  ASSERT_TRUE(got.contains("nodes")) << got.dump();
  EXPECT_FALSE(got.contains("nodenames"));
  ASSERT_EQ(got["nodes"]["items"].size(), 1u);
  EXPECT_EQ(got["nodes"]["items"][0], nodes["items"][0]);
  EXPECT_TRUE(got["failedNodes"].contains("n2"));
}

TEST(ExtenderTest, BadRequestsAreAnsweredNotCrashedOn) {
  ExtenderOptions o;
  o.max_nodes = 3;
  o.max_request_bytes = 4096;
  auto ext = NewExtender(o);
  auto error = [&](std::string_view body, int status) {
    HttpAnswer a = ext->Filter(body);
    EXPECT_EQ(a.status, status) << body << " -> " << a.body;
    return Body(a).value("error", "");
  };
  EXPECT_NE(error("{nope", 400).find("not JSON"), std::string::npos);
  EXPECT_EQ(error(R"({"nodenames": ["a"]})", 400), "pod: missing");
  EXPECT_EQ(error(R"({"pod": {"metadata": {"name": "p"}}, "nodenames": [1]})", 400),
            "nodenames[0]: must be a string");
  EXPECT_NE(error(Args(PodJson("p", "u", 1, 1, 1), {"a", "b", "c", "d"}), 400).find("max_nodes"),
            std::string::npos);
  EXPECT_NE(error(std::string(5000, ' '), 413).find("max_request_bytes"), std::string::npos);
  json bad = PodJson("p", "u", 1, 1, 1);
  bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2x";
  std::string why = error(Args(bad, {"a"}), 400);
  EXPECT_NE(why.find("spec.containers[0].resources.requests.cpu"), std::string::npos) << why;
  // Unknown fields are ignored.
  json extra = json::parse(Args(PodJson("p", "u", 1, 1, 1), {"a"}));
  extra["futureField"] = {1, 2};
  extra["pod"]["spec"]["someNewThing"] = true;
  EXPECT_EQ(ext->Filter(extra.dump()).status, 200);
  HttpAnswer bind = ext->Bind(R"({"PodName": 3})", [](const BindingArgs&) {
    return absl::OkStatus();
  });
  EXPECT_EQ(bind.status, 400);
  EXPECT_EQ(Body(bind)["Error"], "PodName: missing or not a string");
  EXPECT_GE(ext->Stats().bad_requests, 6u);
}

TEST(ExtenderTest, IdenticalNodesShareOneModelAndOneVerdict) {
  auto node = MakeNode("demo", Seed());
  auto ext = NewExtender();
  std::vector<std::string> names;
  for (int i = 0; i < 50; ++i) {
    names.push_back(fmt::format("n{}", i));
    ext->UpsertNrt(NrtOfNode(names.back(), *node));
  }
  json got = Body(ext->Filter(Args(PodJson("p", "u", 1, 2, 1), names)));
  EXPECT_EQ(got["nodenames"].size(), 50u);
  EXPECT_EQ(ext->Stats().models, 1u);
  EXPECT_EQ(ext->Stats().admissions, 1u);
  got = Body(ext->Filter(Args(PodJson("q", "u2", 1, 2, 1), names)));  // same shape: cached
  EXPECT_EQ(ext->Stats().admissions, 1u);
}

// Filter, Prioritize and Bind from several threads while NRTs change: every answer is whole.
TEST(ExtenderTest, ConcurrentRequestsWhileNrtsChange) {
  auto empty = MakeNode("demo", Seed());
  auto busy = MakeNode("demo", Seed());
  std::mt19937 g(11);
  Occupy(*busy, g, 6, 8);
  const json states[] = {NrtOfNode("n", *empty), NrtOfNode("n", *busy)};
  auto ext = NewExtender();
  for (int i = 0; i < 8; ++i) {
    json nrt = states[i % 2];
    nrt["metadata"]["name"] = fmt::format("n{}", i);
    ext->UpsertNrt(nrt);
  }
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) names.push_back(fmt::format("n{}", i));
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 40; ++k) {
        std::string uid = fmt::format("t{}-{}", t, k);
        json pod = PodJson(uid, uid, 1, 1 + (k % 6), 1);
        HttpAnswer a = k % 2 == 0 ? ext->Filter(Args(pod, names)) : ext->Prioritize(Args(pod, names));
        if (a.status != 200 || !json::accept(a.body)) ++bad;
        if (k % 5 == 0) {
          ext->Bind(json{{"PodName", uid}, {"PodUID", uid}, {"Node", names[k % 8]}}.dump(),
                    [](const BindingArgs&) { return absl::OkStatus(); });
        }
      }
    });
  }
  for (int k = 0; k < 60; ++k) {
    json nrt = states[k % 2];
    nrt["metadata"]["name"] = names[k % 8];
    ext->UpsertNrt(nrt);
    ext->ObservePod(json{{"metadata", {{"uid", fmt::format("t0-{}", k)}}}}, true);
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(ext->Stats().nodes_known, 8u);
}

// A pod as kube-scheduler 1.20 marshals it from its informer: no TypeMeta, Go's zero values
// (creationTimestamp null, empty resources), and many fields podtopo does not read.
TEST(ExtenderTest, PodAsTheSchedulerSendsIt) {
  json pod = json::parse(R"({
    "metadata": {"name": "web-1", "namespace": "prod", "uid": "9d1c", "resourceVersion": "812",
                 "creationTimestamp": null, "labels": {"app": "web"},
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                      "name": "web", "uid": "r1", "controller": true}],
                 "managedFields": [{"manager": "kube-controller-manager", "operation": "Update"}]},
    "spec": {"volumes": [{"name": "t", "secret": {"secretName": "t"}}],
             "containers": [{"name": "app", "image": "nginx", "resources":
                               {"limits": {"cpu": "2", "memory": "1Gi"},
                                "requests": {"cpu": "2", "memory": "1Gi"}},
                             "terminationMessagePath": "/dev/termination-log",
                             "imagePullPolicy": "Always"},
                            {"name": "side", "image": "envoy", "resources": {}}],
             "restartPolicy": "Always", "schedulerName": "default-scheduler",
             "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                              "effect": "NoExecute", "tolerationSeconds": 300}],
             "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"},
    "status": {"phase": "Pending", "qosClass": "Burstable"}})");
  auto node = MakeNode("demo", Seed());
  auto ext = NewExtender();
  ext->UpsertNrt(NrtOfNode("n", *node));
  HttpAnswer a = ext->Filter(Args(pod, {"n"}));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(Body(a)["nodenames"], json::array({"n"}));
  HttpAnswer p = ext->Prioritize(Args(pod, {"n"}));
  ASSERT_EQ(p.status, 200) << p.body;
  EXPECT_EQ(Body(p)[0]["score"], 5) << "Burstable: nothing NUMA-pinned";
}

}  // namespace
}  // namespace podtopo::extender
