// --node-pool files and the NRT reader's errors and approximations.
#include <filesystem>
#include <fstream>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "extender/extender.h"
#include "extender/node_pool.h"
#include "extender/nrt_attributes.h"
#include "extender/nrt_model.h"
#include "gtest/gtest.h"
#include "topology/presets.h"

namespace podtopo::extender {
namespace {

namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("podtopo-extender-" + name + "-" +
                                            std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

void Write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

TEST(NodePoolTest, RelativePathsResolveAgainstThePoolFile) {
  fs::path d = TempDir("pool");
  fs::create_directories(d / "cfg");
  Write(d / "cfg" / "kubelet.yaml",
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        "cpuManagerPolicy: static\nsystemReserved: {cpu: \"1\"}\n"
        "topologyManagerPolicy: restricted\n");
  Write(d / "pool.yaml",
        "- nodes: \"gpu-*\"\n  node: preset:gb200\n"
        "- labels: {pool: big}\n  node: preset:t256\n  config: cfg/kubelet.yaml\n"
        "  kubeletVersion: \"1.36\"\n");
  auto pool = NodePool::Load((d / "pool.yaml").string());
  ASSERT_TRUE(pool.ok()) << pool.status();
  ASSERT_EQ(pool->entries().size(), 2u);
  EXPECT_EQ(pool->Match("gpu-3", {})->topology.source, "preset:gb200");
  EXPECT_EQ(pool->Match("cpu-3", {}), nullptr);
  const PoolEntry* big = pool->Match("x", {{"pool", "big"}});
  ASSERT_NE(big, nullptr);
  ASSERT_TRUE(big->config.has_value());
  EXPECT_EQ(big->config->topology_manager_policy, "restricted");
  EXPECT_EQ(big->config->kubelet_version, "1.36");
  fs::remove_all(d);
}

TEST(NodePoolTest, ErrorsNameTheFileEntryAndField) {
  auto bad = NodePool::Parse("- node: preset:nope\n", "/p/pool.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("/p/pool.yaml: entry 1: node: unknown preset"),
            std::string::npos)
      << bad.status();
  bad = NodePool::Parse("- node: preset:demo\n  config: missing.yaml\n", "/p/pool.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("/p/pool.yaml: entry 1: config: "), std::string::npos)
      << bad.status();
  EXPECT_NE(bad.status().message().find("/p/missing.yaml"), std::string::npos) << bad.status();
  bad = NodePool::Parse("- nodes: a\n  nod: preset:demo\n", "pool.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown field \"nod\""), std::string::npos);
  bad = NodePool::Parse("- node: preset:demo\n  kubeletVersion: \"0.1\"\n", "pool.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("entry 1: kubeletVersion"), std::string::npos);
  EXPECT_FALSE(NodePool::Parse("{a: b}", "pool.yaml").ok());
  auto e = Extender::Create({.node_pool_file = "/nonexistent/pool.yaml"});
  EXPECT_FALSE(e.ok());
}

TEST(NodePoolTest, PoolGivesWhatAForeignNrtLacks) {
  fs::path d = TempDir("pool2");
  Write(d / "kubelet.yaml",
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n"
        "topologyManagerPolicy: single-numa-node\n");
  Write(d / "pool.yaml", "- nodes: \"rte-*\"\n  node: preset:demo\n  config: kubelet.yaml\n");
  auto topo = Preset("demo");
  config::KubeletConfig cfg;
  cfg.cpu_manager_policy = "static";
  cfg.reserved_system_cpus = "0";
  cfg.topology_manager_policy = "single-numa-node";
  auto node = Node::Create(*topo, cfg, {});
  ASSERT_TRUE(node.ok()) << node.status();
  nlohmann::json nrt = NrtOfNode("rte-1", **node);
  // Strip podtopo's attributes: what another exporter publishes.
  nrt["attributes"] = nlohmann::json::array();
  for (auto& z : nrt["zones"]) z.erase("attributes");
  auto ext = Extender::Create({.node_pool_file = (d / "pool.yaml").string()});
  ASSERT_TRUE(ext.ok()) << ext.status();
  (*ext)->UpsertNrt(nrt);
  nlohmann::json pod = {{"metadata", {{"name", "p"}, {"uid", "u"}}},
                        {"spec",
                         {{"containers",
                           {{{"name", "c"},
                             {"resources",
                              {{"requests", {{"cpu", "17"}, {"memory", "1Gi"}}},
                               {"limits", {{"cpu", "17"}, {"memory", "1Gi"}}}}}}}}}}};
  auto a = (*ext)->Filter(nlohmann::json{{"pod", pod}, {"nodenames", {"rte-1"}}}.dump());
  nlohmann::json got = nlohmann::json::parse(a.body);
  std::string why = got["failedNodes"]["rte-1"];
  EXPECT_NE(why.find("TopologyAffinityError"), std::string::npos) << why;
  EXPECT_NE(why.find("topology from " + (d / "pool.yaml").string() + ": entry 1"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("kubelet configuration from"), std::string::npos) << why;
  EXPECT_NE(why.find("highest-numbered"), std::string::npos) << why;
  fs::remove_all(d);
}

TEST(NrtModelTest, BadNrtFailsItsNodeWithTheField) {
  auto ext = Extender::Create({});
  ASSERT_TRUE(ext.ok());
  nlohmann::json nrt = {
      {"metadata", {{"name", "n"}}},
      {"zones",
       {{{"name", "node-0"},
         {"type", "Node"},
         {"resources", {{{"name", "cpu"}, {"capacity", "4x"}}}}}}}};
  (*ext)->UpsertNrt(nrt);
  (*ext)->UpsertNrt(nlohmann::json::array());  // nameless junk: ignored
  nlohmann::json pod = {{"metadata", {{"name", "p"}}},
                        {"spec", {{"containers", {{{"name", "c"}}}}}}};
  auto a = (*ext)->Filter(nlohmann::json{{"pod", pod}, {"nodenames", {"n"}}}.dump());
  nlohmann::json got = nlohmann::json::parse(a.body);
  std::string why = got["failedNodes"]["n"];
  EXPECT_NE(why.find("zones[0].resources[0].capacity: \"4x\""), std::string::npos) << why;
}

// Found by the extender_request fuzzer (fuzz/regressions/extender_request/cpu-capacity-8Gi):
// a zone claiming "8Gi" CPUs made the model a 65,536-CPU node, whose index took 512 MiB.
TEST(NrtModelTest, AnNrtClaimingMoreCpusThanAnyNodeIsRefused) {
  auto ext = Extender::Create({});
  ASSERT_TRUE(ext.ok());
  auto zone = [](int numa, const std::string& cpus) {
    return nlohmann::json{{"name", "node-" + std::to_string(numa)},
                          {"type", "Node"},
                          {"resources", {{{"name", "cpu"}, {"capacity", cpus}}}}};
  };
  nlohmann::json nrt = {{"metadata", {{"name", "n"}}}, {"zones", {zone(0, "8"), zone(1, "8Gi")}}};
  (*ext)->UpsertNrt(nrt);
  nlohmann::json pod = {{"metadata", {{"name", "p"}}},
                        {"spec", {{"containers", {{{"name", "c"}}}}}}};
  auto a = (*ext)->Filter(nlohmann::json{{"pod", pod}, {"nodenames", {"n"}}}.dump());
  nlohmann::json got = nlohmann::json::parse(a.body);
  std::string why = got["failedNodes"]["n"];
  EXPECT_NE(why.find("zones node-1: cpu capacity 8589934592: more than the 4096 CPUs"),
            std::string::npos)
      << why;
  // At the bound, in all: modelled.
  nlohmann::json big = {{"metadata", {{"name", "m"}}}, {"zones", {zone(0, "2048"), zone(1, "2048")}}};
  (*ext)->UpsertNrt(big);
  a = (*ext)->Filter(nlohmann::json{{"pod", pod}, {"nodenames", {"m"}}}.dump());
  got = nlohmann::json::parse(a.body);
  EXPECT_FALSE(got["failedNodes"].contains("m")) << got.dump();
}

TEST(NrtModelTest, MemoryHeldUnderAMultiNumaPolicyIsApproximate) {
  auto topo = Preset("demo");
  config::KubeletConfig cfg = config::SeedDefault();
  cfg.topology_manager_policy = "restricted";
  auto node = Node::Create(*topo, cfg, {});
  ASSERT_TRUE(node.ok()) << node.status();
  auto read = [&] {
    TopologyCatalog catalog(nullptr);
    return ReadNrt(nlohmann::json(NrtOfNode("n", **node)), catalog, nullptr,
                   [&](const NodeSpec&) {
                     EmptyNode e;
                     for (const auto& [numa, types] : (*node)->MemoryTables()) {
                       for (const auto& [type, t] : types) e.memory[numa][type] = t.allocatable;
                     }
                     e.reserved_cpus = (*node)->ReservedCpus();
                     return absl::StatusOr<EmptyNode>(e);
                   });
  };
  auto empty = read();
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->approximations.empty());
  auto pod = ParsePods(
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{"
      "\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"cpu\":\"2\","
      "\"memory\":\"1Gi\"}}}]}}",
      "p");
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_TRUE((*node)->Admit(pod->front())->admitted);
  auto busy = read();
  ASSERT_TRUE(busy.ok()) << busy.status();
  ASSERT_EQ(busy->approximations.size(), 1u);
  EXPECT_NE(busy->approximations[0].find("multi-NUMA"), std::string::npos);
  EXPECT_EQ(busy->occupied.memory.at(0).at("memory"), uint64_t{1} << 30);
  EXPECT_EQ(busy->occupied.cpus.Size(), 2);
}

}  // namespace
}  // namespace podtopo::extender
