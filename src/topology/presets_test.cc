#include "topology/presets.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "testing/topologies.h"
#include "topology/node_source.h"
#include "topology/topology_json.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kGiB = uint64_t{1} << 30;

struct KubeletPreset {
  std::string preset;
  std::string fake;  // name in ../shared/vectors/cpu_topologies.json
};
void PrintTo(const KubeletPreset& c, std::ostream* os) { *os << c.preset; }

class KubeletTestMachine : public ::testing::TestWithParam<KubeletPreset> {};

TEST_P(KubeletTestMachine, CpuMapEqualsTheKubeletsFakeTopology) {
  auto node = Preset(GetParam().preset);
  ASSERT_TRUE(node.ok()) << node.status();
  const CpuTopology& fake = testing::FakeTopology(GetParam().fake);
  ASSERT_EQ(node->cpus.AllCpus(), fake.AllCpus());
  fake.AllCpus().ForEach([&](int cpu) {
    EXPECT_EQ(*node->cpus.Info(cpu), *fake.Info(cpu)) << "cpu " << cpu;
  });
  // A real node's header counts: from the map (the Go literals' may differ).
  const CpuTopology& t = node->cpus;
  EXPECT_EQ(t.num_cpus, fake.AllCpus().Size());
  EXPECT_EQ(t.num_cores, static_cast<int>(fake.Cores().size()));
  EXPECT_EQ(t.num_sockets, static_cast<int>(fake.Sockets().size()));
  EXPECT_EQ(t.num_numa_nodes, static_cast<int>(fake.NumaNodes().size()));
  EXPECT_EQ(t.num_uncore_caches, static_cast<int>(fake.UncoreCaches().size()));
  // One NUMA node entry per NUMA node of the map, 16 GiB each, distances 10/20.
  EXPECT_EQ(node->NumaIds(), fake.NumaNodes());
  for (size_t i = 0; i < node->numa_nodes.size(); ++i) {
    const NumaNode& n = node->numa_nodes[i];
    EXPECT_EQ(n.memory, 16 * kGiB);
    EXPECT_TRUE(n.hugepages.empty());
    ASSERT_EQ(n.distances.size(), node->numa_nodes.size());
    for (size_t j = 0; j < n.distances.size(); ++j) EXPECT_EQ(n.distances[j], i == j ? 10u : 20u);
  }
  EXPECT_EQ(node->source, "preset:" + GetParam().preset);
}

INSTANTIATE_TEST_SUITE_P(
    Presets, KubeletTestMachine,
    ::testing::Values(
        KubeletPreset{"single-socket-ht", "topoSingleSocketHT"},
        KubeletPreset{"dual-socket-ht", "topoDualSocketHT"},
        KubeletPreset{"dual-socket-no-ht", "topoDualSocketNoHT"},
        KubeletPreset{"dual-socket-multi-numa-per-socket-ht", "topoDualSocketMultiNumaPerSocketHT"},
        KubeletPreset{"quad-socket-four-way-ht", "topoQuadSocketFourWayHT"}),
    [](const ::testing::TestParamInfo<KubeletPreset>& info) {
      return testing::TestName(info.param.preset, info.index);
    });

TEST(Presets, KubeletMachineSizes) {
  // DESIGN.md: single-socket-ht 8 CPUs, dual-socket-ht 12, multi-NUMA 80 CPUs on 4 NUMA nodes.
  EXPECT_EQ(Preset("single-socket-ht")->cpus.num_cpus, 8);
  EXPECT_EQ(Preset("dual-socket-ht")->cpus.num_cpus, 12);
  EXPECT_EQ(Preset("dual-socket-multi-numa-per-socket-ht")->cpus.num_cpus, 80);
  EXPECT_EQ(Preset("dual-socket-multi-numa-per-socket-ht")->numa_nodes.size(), 4u);
}

TEST(Presets, Demo) {
  auto node = Preset("demo");
  ASSERT_TRUE(node.ok()) << node.status();
  const CpuTopology& t = node->cpus;
  EXPECT_EQ(t.AllCpus().String(), "0-63");
  EXPECT_EQ(t.num_cpus, 64);
  EXPECT_EQ(t.num_cores, 32);
  EXPECT_EQ(t.num_sockets, 2);
  EXPECT_EQ(t.num_numa_nodes, 4);
  EXPECT_EQ(t.num_uncore_caches, 4);
  // First threads 0-31 socket by socket, siblings 32-63: CPU c and c+32 are one core.
  for (int c = 0; c < 32; ++c) {
    EXPECT_EQ(t.CpusInCore(c), CpuSet({c, c + 32})) << "core " << c;
    EXPECT_EQ(t.Info(c)->numa, c / 8);
    EXPECT_EQ(t.Info(c + 32)->socket, c / 16);
    EXPECT_EQ(t.Info(c)->uncore, t.Info(c)->numa);
  }
  EXPECT_EQ(t.CpusInSocket(0).String(), "0-15,32-47");
  EXPECT_EQ(t.CpusInNuma(3).String(), "24-31,56-63");
  ASSERT_EQ(node->numa_nodes.size(), 4u);
  for (const NumaNode& n : node->numa_nodes) {
    EXPECT_EQ(n.memory, 16 * kGiB);
    EXPECT_TRUE(n.hugepages.empty());
  }
  EXPECT_EQ(node->numa_nodes[0].distances, (std::vector<uint64_t>{10, 11, 21, 21}));
  EXPECT_EQ(node->numa_nodes[3].distances, (std::vector<uint64_t>{21, 21, 11, 10}));
}

TEST(Presets, T256) {
  // spec/kubelet-perf.md: core c: socket c/64, NUMA c/16, uncore = NUMA, threads c and c+128.
  auto node = Preset("t256");
  ASSERT_TRUE(node.ok()) << node.status();
  const CpuTopology& t = node->cpus;
  EXPECT_EQ(t.num_cpus, 256);
  EXPECT_EQ(t.num_cores, 128);
  EXPECT_EQ(t.num_sockets, 2);
  EXPECT_EQ(t.num_numa_nodes, 8);
  EXPECT_EQ(t.num_uncore_caches, 8);
  for (int c = 0; c < 128; ++c) {
    EXPECT_EQ(t.CpusInCore(c), CpuSet({c, c + 128}));
    EXPECT_EQ(*t.Info(c + 128),
              (CpuInfo{.numa = c / 16, .socket = c / 64, .core = c, .uncore = c / 16}));
  }
  EXPECT_EQ(node->numa_nodes.size(), 8u);
}

TEST(Presets, Numa34) {
  auto node = Preset("numa34");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.num_cpus, 144);
  EXPECT_EQ(node->cpus.num_numa_nodes, 2);
  EXPECT_EQ(node->cpus.CpusInCore(5), CpuSet({5, 77}));
  ASSERT_EQ(node->numa_nodes.size(), 34u);
  for (size_t i = 0; i < 34; ++i) {
    const NumaNode& n = node->numa_nodes[i];
    EXPECT_EQ(n.id, static_cast<int>(i));
    EXPECT_EQ(n.memory, (i < 2 ? 64 : 16) * kGiB);
    EXPECT_EQ(node->cpus.CpusInNuma(n.id).IsEmpty(), i >= 2);
    ASSERT_EQ(n.distances.size(), 34u);
    for (size_t j = 0; j < 34; ++j) {
      EXPECT_EQ(n.distances[j], node->numa_nodes[j].distances[i]) << i << "," << j;
      EXPECT_EQ(n.distances[j] == 10, i == j);
    }
  }
}

TEST(Presets, EveryPresetRoundTripsThroughJson) {
  for (const std::string& name : PresetNames()) {
    SCOPED_TRACE(name);
    auto node = Preset(name);
    ASSERT_TRUE(node.ok()) << node.status();
    std::string text = WriteTopologyJson(*node);
    auto back = ReadTopologyJson(text, name + ".json");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(WriteTopologyJson(*back), text);
    EXPECT_EQ(back->cpus.num_cores, node->cpus.num_cores);
  }
}

// Issue 11: the GB200 compute tray of k/k #135541 and the 64-NUMA limit.
TEST(Presets, Gb200) {
  auto node = Preset("gb200");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.num_cpus, 144);
  EXPECT_EQ(node->cpus.num_sockets, 2);
  EXPECT_EQ(node->cpus.num_numa_nodes, 2);
  EXPECT_EQ(node->cpus.CpusInCore(5), CpuSet({5}));  // Grace: no SMT
  EXPECT_EQ(node->cpus.CpusInNuma(1), CpuSet::Range(72, 143));
  ASSERT_EQ(node->numa_nodes.size(), 34u);
  for (size_t i = 0; i < 34; ++i) {
    const NumaNode& n = node->numa_nodes[i];
    EXPECT_EQ(n.memory, (i < 2 ? 480 : 23) * kGiB);
    EXPECT_EQ(node->cpus.CpusInNuma(n.id).IsEmpty(), i >= 2);
    for (size_t j = 0; j < 34; ++j) EXPECT_EQ(n.distances[j], node->numa_nodes[j].distances[i]);
  }
  ASSERT_EQ(node->devices.size(), 4u);
  EXPECT_EQ(node->devices[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(node->devices[1].numa, 0);
  EXPECT_EQ(node->devices[2].numa, 1);
}

TEST(Presets, Numa64) {
  auto node = Preset("numa64");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.num_cpus, 512);
  EXPECT_EQ(node->cpus.num_sockets, 4);
  EXPECT_EQ(node->cpus.num_numa_nodes, 64);
  EXPECT_EQ(node->cpus.CpusInCore(5), CpuSet({5, 261}));
  EXPECT_EQ(node->cpus.CpusInNuma(63).Size(), 8);
  ASSERT_EQ(node->numa_nodes.size(), 64u);
  EXPECT_EQ(node->numa_nodes[63].distances[0], 32u);
  EXPECT_EQ(node->numa_nodes[15].distances[0], 12u);
  ASSERT_EQ(node->devices.size(), 8u);
  EXPECT_EQ(node->devices[7].numa, 56);
}

TEST(Presets, UnknownListsNames) {
  auto node = Preset("nope");
  ASSERT_FALSE(node.ok());
  EXPECT_TRUE(absl::IsNotFound(node.status()));
  EXPECT_EQ(node.status().message(),
            "unknown preset \"nope\" (known: demo, dual-socket-ht, dual-socket-multi-numa-per-"
            "socket-ht, dual-socket-no-ht, gb200, numa34, numa64, quad-socket-four-way-ht, "
            "single-socket-ht, t256)");
}

// ---------------------------------------------------------------------------------------
// LoadNode.

std::string TestData(const std::string& rel) {
  return testing::SourceDir() + "/src/topology/testdata/" + rel;
}

TEST(LoadNode, EveryForm) {
  auto preset = LoadNode("preset:dual-socket-ht");
  ASSERT_TRUE(preset.ok()) << preset.status();
  EXPECT_EQ(preset->cpus.num_cpus, 12);

  auto sysfs = LoadNode("sysfs:" + TestData("sysfs/amd-1s2n4ccx"));
  ASSERT_TRUE(sysfs.ok()) << sysfs.status();
  EXPECT_EQ(sysfs->cpus.num_uncore_caches, 4);

  auto xml = LoadNode(TestData("xml/intel-2s4c2t.xml"));
  ASSERT_TRUE(xml.ok()) << xml.status();
  EXPECT_EQ(xml->cpus.num_cpus, 16);

  std::string dir = testing::MakeTempDir("podtopo-node");
  std::string json = dir + "/node.json";
  std::ofstream(json) << WriteTopologyJson(*preset);
  auto from_json = LoadNode(json);
  ASSERT_TRUE(from_json.ok()) << from_json.status();
  EXPECT_EQ(from_json->source, json);
  EXPECT_EQ(WriteTopologyJson(*from_json), WriteTopologyJson(*preset));

  // Other names: sniffed.
  std::ofstream(dir + "/node.topo") << WriteTopologyJson(*preset);
  auto sniffed = LoadNode(dir + "/node.topo");
  ASSERT_TRUE(sniffed.ok()) << sniffed.status();
  EXPECT_EQ(sniffed->cpus.num_cpus, 12);
  std::ofstream(dir + "/node.txt") << "hello";
  EXPECT_EQ(LoadNode(dir + "/node.txt").status().message(),
            dir + "/node.txt: neither topology JSON nor hwloc XML (name it FILE.json or FILE.xml)");
  std::filesystem::remove_all(dir);
}

TEST(LoadNode, Local) {
  auto node = LoadNode("local");
  if (!node.ok() && absl::IsNotFound(node.status())) GTEST_SKIP() << "no /sys here";
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->source, "sysfs:/sys");
  EXPECT_GT(node->cpus.num_cpus, 0);
}

TEST(LoadNode, Errors) {
  EXPECT_THAT(std::string(LoadNode("preset:nope").status().message()),
              StartsWith("unknown preset \"nope\" (known: demo, "));
  EXPECT_EQ(LoadNode("banana").status().message(),
            "node spec \"banana\": expected preset:NAME, FILE.json, FILE.xml, sysfs:DIR or local");
  EXPECT_EQ(LoadNode("").status().message(),
            "node spec \"\": expected preset:NAME, FILE.json, FILE.xml, sysfs:DIR or local");
  EXPECT_THAT(std::string(LoadNode("/nonexistent/n.json").status().message()),
              StartsWith("/nonexistent/n.json: "));
  EXPECT_THAT(std::string(LoadNode("/nonexistent/n.xml").status().message()),
              StartsWith("/nonexistent/n.xml: "));
  EXPECT_EQ(LoadNode("sysfs:/nonexistent").status().message(),
            "sysfs:/nonexistent: devices/system/cpu: not found");
}

}  // namespace
}  // namespace podtopo
