// The NodeResourceTopology object: the v1alpha2 CRD's schema (testdata/, transcribed from the
// CRD), the exporters' conventions, and pod-level bubbles counted once where the exporters'
// sum-of-containers method miscounts.
#include "agent/node_resource_topology.h"
#include "topology/node_source.h"

#include <filesystem>
#include <fstream>
#include <regex>

#include "resource/quantity.h"

#include "agent/test_util.h"
#include "api/pod_yaml.h"
#include "extender/extender.h"
#include "extender/nrt_model.h"
#include "topology/topology_json.h"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "yaml-cpp/yaml.h"

namespace podtopo::agent {
namespace {

using podresources::Compat;

// A structural-schema check of `v` against the OpenAPI v3 `schema` (the subset the CRD uses:
// type object/array/string/integer, properties, required, items, anyOf, pattern,
// x-kubernetes-int-or-string). Unknown fields are errors: the API server would prune them,
// and the scheduler would never see them. Errors name the path.
void Validate(const YAML::Node& schema, const YAML::Node& v, const std::string& path,
              std::vector<std::string>* errors) {
  auto is_int = [](const YAML::Node& n) {
    if (!n.IsScalar() || n.Tag() == "!") return false;  // quoted: a string
    try {
      n.as<int64_t>();
      return true;
    } catch (...) {
      return false;
    }
  };
  auto type_ok = [&](const std::string& type, const YAML::Node& n) {
    if (type == "object") return n.IsMap();
    if (type == "array") return n.IsSequence();
    if (type == "string") return n.IsScalar();
    if (type == "integer") return is_int(n);
    return false;
  };
  if (schema["x-kubernetes-int-or-string"] && schema["x-kubernetes-int-or-string"].as<bool>()) {
    if (!v.IsScalar()) {
      errors->push_back(path + ": not an integer or a string");
      return;
    }
  } else if (schema["type"] && !type_ok(schema["type"].as<std::string>(), v)) {
    errors->push_back(path + ": not of type " + schema["type"].as<std::string>());
    return;
  }
  if (schema["pattern"] && v.IsScalar() &&
      !std::regex_match(v.as<std::string>(), std::regex(schema["pattern"].as<std::string>()))) {
    errors->push_back(path + ": \"" + v.as<std::string>() + "\" does not match the pattern");
  }
  if (schema["required"]) {
    for (const auto& r : schema["required"]) {
      if (!v[r.as<std::string>()]) errors->push_back(path + ": missing " + r.as<std::string>());
    }
  }
  if (v.IsMap() && schema["properties"]) {
    for (const auto& kv : v) {
      std::string key = kv.first.as<std::string>();
      YAML::Node sub = schema["properties"][key];
      if (!sub) {
        errors->push_back(path + "." + key + ": not in the schema");
        continue;
      }
      Validate(sub, kv.second, path + "." + key, errors);
    }
  }
  if (v.IsSequence() && schema["items"]) {
    for (size_t i = 0; i < v.size(); ++i) {
      Validate(schema["items"], v[i], path + "[" + std::to_string(i) + "]", errors);
    }
  }
}

YAML::Node Schema() {
  return YAML::LoadFile(::podtopo::testing::SourceDir() +
                        "/src/agent/testdata/noderesourcetopology-v1alpha2-schema.yaml");
}

// The sum-of-containers method of the Resource Topology Exporter and the NFD topology-updater
// (their resourcemonitor adds up every container's cpu_ids per NUMA node; they do not read the
// pod-level fields): the CPUs of NUMA node `numa` they take as used.
int SumOfContainersCpus(const std::vector<v1::PodResources>& pods, const CpuSet& numa_cpus) {
  int n = 0;
  for (const auto& p : pods) {
    for (const auto& c : p.containers()) {
      for (int64_t id : c.cpu_ids()) n += numa_cpus.Contains(static_cast<int>(id));
    }
  }
  return n;
}

const YAML::Node Resource(const YAML::Node& nrt, int zone, const std::string& name) {
  for (const auto& r : nrt["zones"][zone]["resources"]) {
    if (r["name"].as<std::string>() == name) return r;
  }
  return YAML::Node();
}

// The value of top-level attribute `name` (nullopt when absent).
std::optional<std::string> Attr(const YAML::Node& nrt, const std::string& name) {
  for (const auto& a : nrt["attributes"]) {
    if (a["name"].as<std::string>() == name) return a["value"].as<std::string>();
  }
  return std::nullopt;
}

class NrtTest : public ::testing::TestWithParam<Compat> {};

TEST_P(NrtTest, DocsPodsMatchTheSchemaAndCountBubblesOnce) {
  testutil::DocsNode d = testutil::AdmitDocsPods(GetParam());
  Observation o = testutil::ObservationOf(d);
  auto zones = AccountZones(d.topology, d.config, o);
  std::string yaml = NrtYaml(WithNodeOwner(
      BuildNodeResourceTopology("node-a", d.config, zones, CpuTopologyDigest(d.topology)),
      "node-a", "0b5e-uid"));
  YAML::Node nrt = YAML::Load(yaml);
  std::vector<std::string> errors;
  Validate(Schema(), nrt, "NodeResourceTopology", &errors);
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors) << "\n" << yaml;

  EXPECT_EQ(nrt["apiVersion"].as<std::string>(), "topology.node.k8s.io/v1alpha2");
  EXPECT_EQ(nrt["kind"].as<std::string>(), "NodeResourceTopology");
  EXPECT_EQ(nrt["metadata"]["name"].as<std::string>(), "node-a");
  EXPECT_EQ(nrt["topologyPolicies"][0].as<std::string>(), "SingleNUMANodePodLevel");
  EXPECT_EQ(nrt["attributes"][0]["name"].as<std::string>(), "topologyManagerPolicy");
  EXPECT_EQ(nrt["attributes"][0]["value"].as<std::string>(), d.config.topology_manager_policy);
  EXPECT_EQ(nrt["attributes"][1]["name"].as<std::string>(), "topologyManagerScope");
  EXPECT_EQ(nrt["attributes"][1]["value"].as<std::string>(), "pod");
  ASSERT_EQ(nrt["zones"].size(), d.topology.numa_nodes.size());
  for (size_t i = 0; i < nrt["zones"].size(); ++i) {
    EXPECT_EQ(nrt["zones"][i]["name"].as<std::string>(), "node-" + std::to_string(i));
    EXPECT_EQ(nrt["zones"][i]["type"].as<std::string>(), "Node");
    ASSERT_EQ(nrt["zones"][i]["costs"].size(), d.topology.numa_nodes.size());
    for (size_t j = 0; j < d.topology.numa_nodes.size(); ++j) {
      EXPECT_EQ(nrt["zones"][i]["costs"][j]["value"].as<uint64_t>(),
                d.topology.numa_nodes[i].distances[j]);
    }
  }

  // Both pods sit on NUMA node 0: the seed pod's 2-CPU bubble and pod-scope-mixed's 4-CPU
  // bubble, 2Gi and 4Gi of memory. CPU 0 is reserved.
  CpuSet numa0 = d.topology.cpus.CpusInNuma(0);
  ASSERT_EQ(numa0.Size(), 16);
  YAML::Node cpu = Resource(nrt, 0, "cpu");
  EXPECT_EQ(cpu["capacity"].as<std::string>(), "16");
  EXPECT_EQ(cpu["allocatable"].as<std::string>(), "15");
  EXPECT_EQ(cpu["available"].as<std::string>(), "9");  // 15 - (2 + 4), each pod once
  EXPECT_EQ(Resource(nrt, 1, "cpu")["available"].as<std::string>(), "16");
  // podtopo's attributes: the free CPU ids of each zone are exactly `available`, and the
  // topology digest; the owner reference names the Node.
  for (size_t i = 0; i < nrt["zones"].size(); ++i) {
    ASSERT_EQ(nrt["zones"][i]["attributes"][0]["name"].as<std::string>(), kAttrFreeCpus);
    std::string value = nrt["zones"][i]["attributes"][0]["value"].as<std::string>();
    auto free = CpuSet::Parse(value == kNoFreeCpus ? "" : value);
    ASSERT_TRUE(free.ok());
    EXPECT_EQ(std::to_string(free->Size()), Resource(nrt, i, "cpu")["available"].as<std::string>());
    EXPECT_TRUE(free->IsSubsetOf(d.topology.cpus.CpusInNuma(static_cast<int>(i))));
  }
  EXPECT_EQ(Attr(nrt, kAttrFreeCpus), std::nullopt);  // a zone attribute only
  EXPECT_EQ(Attr(nrt, kAttrCpuTopologyDigest), CpuTopologyDigest(d.topology));
  EXPECT_EQ(nrt["metadata"]["ownerReferences"][0]["kind"].as<std::string>(), "Node");
  EXPECT_EQ(nrt["metadata"]["ownerReferences"][0]["uid"].as<std::string>(), "0b5e-uid");

  int exporters = SumOfContainersCpus(d.reported, numa0);
  if (GetParam() == Compat::k1_36) {
    // A v1.36 kubelet reports the pod shared pool on every container in it: the seed pod's
    // two containers 2 CPUs each, pod-scope-mixed's main-app 2 and each sidecar 2.
    EXPECT_EQ(exporters, 10) << "the exporters over-count: 15 - 10 = 5 available, not 9";
  } else {
    // A v1.37 kubelet reports only exclusive containers' CPUs: the exporters miss the pools.
    EXPECT_EQ(exporters, 2);
  }
  uint64_t gi = 1ull << 30;
  YAML::Node mem = Resource(nrt, 0, "memory");
  ASSERT_TRUE(mem) << yaml;
  uint64_t alloc = 0;
  for (const auto& b : o.allocatable->memory) {
    if (b.type == "memory" && b.numa == std::vector<int64_t>{0}) alloc = b.size;
  }
  EXPECT_EQ(mem["allocatable"].as<std::string>(),
            Quantity::FromInt(static_cast<int64_t>(alloc), Quantity::Format::kBinarySI).String());
  EXPECT_EQ(mem["available"].as<std::string>(),
            Quantity::FromInt(static_cast<int64_t>(alloc - 6 * gi), Quantity::Format::kBinarySI)
                .String());
}

INSTANTIATE_TEST_SUITE_P(Kubelets, NrtTest, ::testing::Values(Compat::k1_37, Compat::k1_36),
                         [](const auto& info) {
                           return info.param == Compat::k1_37 ? "v1_37" : "v1_36";
                         });

// The agent's object is what `podtopo extender` reads: with its topology known (here through a
// --node-pool entry holding the node's topology JSON), the extender rebuilds the node exactly
// (no approximation) and its verdicts are the node's own; and its zones are those of
// extender::NrtOfNode, the helper the extender's tests build their NRTs with.
TEST_P(NrtTest, TheExtenderReadsItBackExactly) {
  if (GetParam() != Compat::k1_37) GTEST_SKIP() << "v1.37's report only (the node model's)";
  testutil::DocsNode d = testutil::AdmitDocsPods(GetParam());
  Observation o = testutil::ObservationOf(d);
  auto zones = AccountZones(d.topology, d.config, o);
  nlohmann::json nrt = nlohmann::json::parse(
      BuildNodeResourceTopology("node-a", d.config, zones, CpuTopologyDigest(d.topology)).dump());
  nlohmann::json mine = extender::NrtOfNode("node-a", *d.node);
  ASSERT_EQ(nrt["zones"].size(), mine["zones"].size());
  for (size_t i = 0; i < nrt["zones"].size(); ++i) {
    EXPECT_EQ(nrt["zones"][i]["resources"], mine["zones"][i]["resources"]) << "zone " << i;
    EXPECT_EQ(nrt["zones"][i]["attributes"], mine["zones"][i]["attributes"]) << "zone " << i;
  }

  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("podtopo-nrt-ext-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "node.json") << WriteTopologyJson(d.topology);
  std::ofstream(dir / "pool.yaml") << "- node: node.json\n";
  auto ext = extender::Extender::Create({.node_pool_file = (dir / "pool.yaml").string()});
  ASSERT_TRUE(ext.ok()) << ext.status();
  (*ext)->UpsertNrt(nrt);
  int admitted = 0, rejected = 0;
  for (int cpu : {2, 4, 9, 14, 20}) {
    nlohmann::json pod = {
        {"metadata", {{"name", "cand"}, {"uid", "cand-uid"}}},
        {"spec",
         {{"containers",
           {{{"name", "c"},
             {"resources",
              {{"limits", {{"cpu", std::to_string(cpu)}, {"memory", "1Gi"}}}}}}}}}}};
    nlohmann::json manifest = pod;
    manifest["apiVersion"] = "v1";
    manifest["kind"] = "Pod";
    auto want = d.node->Admit(ParsePods(manifest.dump(), "cand").value().front());
    ASSERT_TRUE(want.ok()) << want.status();
    if (want->admitted) ASSERT_TRUE(d.node->Remove("default", "cand").ok());
    auto got = nlohmann::json::parse(
        (*ext)->Filter(nlohmann::json{{"pod", pod}, {"nodenames", {"node-a"}}}.dump()).body);
    EXPECT_EQ(got["nodenames"].size() == 1, want->admitted) << cpu << " CPUs: " << got.dump();
    (want->admitted ? admitted : rejected)++;
  }
  EXPECT_GT(admitted, 0);
  EXPECT_GT(rejected, 0);
  EXPECT_EQ((*ext)->Stats().nodes_approximate, 0u);
  fs::remove_all(dir);
}

TEST(NrtSchemaTest, TheCheckRejectsWhatTheCrdRejects) {
  std::vector<std::string> errors;
  Validate(Schema(), YAML::Load(R"(
apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
zones:
- name: node-0
  resources:
  - {name: cpu, capacity: "16", allocatable: "1.5.5", available: 3}
  costs: [{name: node-0, value: "ten"}]
  extra: 1
)"),
           "nrt", &errors);
  std::string all = ::testing::PrintToString(errors);
  EXPECT_NE(all.find("nrt.zones[0]: missing type"), std::string::npos) << all;
  EXPECT_NE(all.find("allocatable: \\\"1.5.5\\\" does not match"), std::string::npos) << all;
  EXPECT_NE(all.find("costs[0].value: not of type integer"), std::string::npos) << all;
  EXPECT_NE(all.find("nrt.zones[0].extra: not in the schema"), std::string::npos) << all;
  errors.clear();
  Validate(Schema(), YAML::Load("kind: NodeResourceTopology\n"), "nrt", &errors);
  EXPECT_EQ(errors, std::vector<std::string>{"nrt: missing zones"});
}

TEST(NrtTest, NoFreeCpusIsNotAnEmptyString) {
  EXPECT_EQ(FreeCpusValue(CpuSet()), "none");
  EXPECT_EQ(FreeCpusValue(CpuSet::Parse("1-3,5").value()), "1-3,5");
}

TEST(NrtTest, TopologyDigestFollowsTheTopology) {
  auto demo = LoadNode("preset:demo");
  ASSERT_TRUE(demo.ok());
  std::string digest = CpuTopologyDigest(*demo);
  EXPECT_EQ(digest.size(), std::string("fnv1a64:").size() + 16);
  EXPECT_EQ(digest, CpuTopologyDigest(*LoadNode("preset:demo")));
  auto other = LoadNode("preset:gb200");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(digest, CpuTopologyDigest(*other));
}

TEST(NrtTest, PolicyNamesAreTheExportersOnes) {
  EXPECT_EQ(TopologyPolicyName("single-numa-node", "container"), "SingleNUMANodeContainerLevel");
  EXPECT_EQ(TopologyPolicyName("restricted", "pod"), "RestrictedPodLevel");
  EXPECT_EQ(TopologyPolicyName("best-effort", "container"), "BestEffortContainerLevel");
  EXPECT_EQ(TopologyPolicyName("none", "pod"), "None");
}

}  // namespace
}  // namespace podtopo::agent
