// --node-pool files and the NRT reader's errors and approximations.
#include <filesystem>
#include <fstream>

#include "admission/node.h"
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

}  // namespace
}  // namespace podtopo::extender
