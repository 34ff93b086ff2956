#include "topology/topology_json.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/property.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Read(const std::string& text) {
  auto node = ReadTopologyJson(text, "node.json");
  return node.ok() ? "OK" : std::string(node.status().message());
}

TEST(TopologyJson, MinimalCpusOnly) {
  auto node = ReadTopologyJson(R"({"cpus": [
      {"id": 0, "core": 0, "socket": 0, "numa": 0},
      {"id": 1, "core": 0, "socket": 0, "numa": 0, "uncore": 7},
      {"id": 2, "core": 2, "socket": 1, "numa": 1}]})",
                               "node.json");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->source, "node.json");
  EXPECT_EQ(node->cpus.Info(0)->uncore, 0);  // defaults to the socket
  EXPECT_EQ(node->cpus.Info(1)->uncore, 7);
  EXPECT_EQ(node->cpus.Info(2)->uncore, 1);
  // Header counts from the map.
  EXPECT_EQ(node->cpus.num_cpus, 3);
  EXPECT_EQ(node->cpus.num_cores, 2);
  EXPECT_EQ(node->cpus.num_sockets, 2);
  EXPECT_EQ(node->cpus.num_numa_nodes, 2);
  EXPECT_EQ(node->cpus.num_uncore_caches, 3);
  // numaNodes derived from the CPUs, memory 0.
  ASSERT_EQ(node->numa_nodes.size(), 2u);
  EXPECT_EQ(node->numa_nodes[1].id, 1);
  EXPECT_EQ(node->numa_nodes[1].memory, 0u);
  EXPECT_TRUE(node->numa_nodes[1].distances.empty());
  EXPECT_TRUE(node->warnings.empty());
}

const char kFull[] = R"({
  "cpus": [
    {"id": 0, "core": 0, "socket": 0, "numa": 0, "uncore": 0},
    {"id": 1, "core": 1, "socket": 1, "numa": 1, "uncore": 1},
    {"id": 2, "core": 0, "socket": 0, "numa": 0, "uncore": 0},
    {"id": 3, "core": 1, "socket": 1, "numa": 1, "uncore": 1}
  ],
  "numaNodes": [
    {"id": 0, "memory": 17179869184, "hugepages": {"hugepages-1Gi": 2147483648, "hugepages-2Mi": 0}, "distances": [10, 21]},
    {"id": 1, "memory": 17179869184, "hugepages": {}, "distances": [21, 10]}
  ],
  "devices": [
    {"resource": "example.com/gpu", "id": "gpu0", "numa": 1},
    {"resource": "example.com/nic", "id": "vf-\"7\""}
  ]
}
)";

TEST(TopologyJson, WriterFormatIsStable) {
  auto node = ReadTopologyJson(kFull, "node.json");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(WriteTopologyJson(*node), kFull);
}

TEST(TopologyJson, FullDocument) {
  auto node = ReadTopologyJson(kFull, "node.json");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.CpusInCore(1).String(), "1,3");
  EXPECT_EQ(node->numa_nodes[0].hugepages.at("hugepages-1Gi"), uint64_t{2} << 30);
  EXPECT_EQ(node->numa_nodes[1].distances, (std::vector<uint64_t>{21, 10}));
  ASSERT_EQ(node->devices.size(), 2u);
  EXPECT_EQ(node->devices[0].numa, 1);
  EXPECT_EQ(node->devices[1].id, "vf-\"7\"");
  EXPECT_EQ(node->devices[1].numa, -1);
}

TEST(TopologyJson, UnsortedInputIsSortedAndDistancesFollow) {
  // Entry 0 is node 1, entry 1 is node 0; distances[k] refers to the k-th entry.
  auto node = ReadTopologyJson(R"({"cpus": [
      {"id": 5, "core": 5, "socket": 1, "numa": 1}, {"id": 0, "core": 0, "socket": 0, "numa": 0}],
      "numaNodes": [{"id": 1, "distances": [10, 30]}, {"id": 0, "distances": [30, 11]}],
      "devices": [{"resource": "b", "id": "2"}, {"resource": "a", "id": "9"}, {"resource": "a", "id": "1"}]})",
                               "node.json");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->NumaIds(), (std::vector<int>{0, 1}));
  EXPECT_EQ(node->numa_nodes[0].distances, (std::vector<uint64_t>{11, 30}));
  EXPECT_EQ(node->numa_nodes[1].distances, (std::vector<uint64_t>{30, 10}));
  EXPECT_EQ(WriteTopologyJson(*node),
            "{\n"
            "  \"cpus\": [\n"
            "    {\"id\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, \"uncore\": 0},\n"
            "    {\"id\": 5, \"core\": 5, \"socket\": 1, \"numa\": 1, \"uncore\": 1}\n"
            "  ],\n"
            "  \"numaNodes\": [\n"
            "    {\"id\": 0, \"memory\": 0, \"hugepages\": {}, \"distances\": [11, 30]},\n"
            "    {\"id\": 1, \"memory\": 0, \"hugepages\": {}, \"distances\": [30, 10]}\n"
            "  ],\n"
            "  \"devices\": [\n"
            "    {\"resource\": \"a\", \"id\": \"1\"},\n"
            "    {\"resource\": \"a\", \"id\": \"9\"},\n"
            "    {\"resource\": \"b\", \"id\": \"2\"}\n"
            "  ]\n"
            "}\n");
}

TEST(TopologyJson, CoreIdThatIsNotTheLowestThreadIsAWarning) {
  // topoQuadSocketFourWayHT has such ids; they are accepted.
  auto node = ReadTopologyJson(R"({"cpus": [
      {"id": 1, "core": 64, "socket": 0, "numa": 0}, {"id": 64, "core": 64, "socket": 0, "numa": 0}]})",
                               "node.json");
  ASSERT_TRUE(node.ok()) << node.status();
  ASSERT_EQ(node->warnings.size(), 1u);
  EXPECT_THAT(node->warnings[0], StartsWith("node.json: cpus[0].core: core 64 is not the lowest"));
}

TEST(TopologyJson, SocketMinusOneIsAccepted) {
  auto node = ReadTopologyJson(R"({"cpus": [{"id": 0, "core": 0, "socket": -1, "numa": 0}]})",
                               "node.json");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.Info(0)->socket, -1);
  EXPECT_EQ(node->cpus.Info(0)->uncore, -1);
}

TEST(TopologyJson, MissingFileNamesIt) {
  auto node = ReadTopologyJsonFile("/nonexistent/node.json");
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(std::string(node.status().message()), StartsWith("/nonexistent/node.json: "));
}

struct BadJson {
  std::string name;
  std::string json;
  std::string error;  // exact message, or a prefix when it ends with "..."
};
void PrintTo(const BadJson& c, std::ostream* os) { *os << c.name; }

class TopologyJsonBad : public ::testing::TestWithParam<BadJson> {};

TEST_P(TopologyJsonBad, ClearError) {
  const BadJson& c = GetParam();
  if (c.error.size() > 3 && c.error.substr(c.error.size() - 3) == "...") {
    EXPECT_THAT(Read(c.json), StartsWith(c.error.substr(0, c.error.size() - 3)));
  } else {
    EXPECT_EQ(Read(c.json), c.error);
  }
}

std::string Cpus(const std::string& entries) { return R"({"cpus": [)" + entries + "]}"; }
const std::string kCpu0 = R"({"id": 0, "core": 0, "socket": 0, "numa": 0})";
std::string WithNuma(const std::string& numa) {
  return R"({"cpus": [)" + kCpu0 + R"(], "numaNodes": [)" + numa + "]}";
}
std::string WithDevices(const std::string& devices) {
  return R"({"cpus": [)" + kCpu0 + R"(], "devices": [)" + devices + "]}";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TopologyJsonBad,
    ::testing::Values(
        BadJson{"Empty", "", "node.json: invalid JSON: parse error at line 1, column 1..."},
        BadJson{"NotJson", "cpus: [0]", "node.json: invalid JSON: parse error at line 1..."},
        BadJson{"Truncated", R"({"cpus": [{"id": 0, "core")",
                "node.json: invalid JSON: parse error at line 1, column 27..."},
        BadJson{"Binary", std::string("{\"cpus\": \"\xff\xfe\"}"),
                "node.json: invalid JSON: parse error..."},
        BadJson{"DeeplyNested", std::string(100000, '[') + std::string(100000, ']'),
                "node.json: invalid JSON: nested deeper than 32 levels at byte 32"},
        BadJson{"TopLevelArray", "[1]",
                "node.json: expected a JSON object at the top level, got [1]"},
        BadJson{"UnknownTopKey", R"({"cpus": [], "nodes": []})",
                "node.json: nodes: unknown key (expected cpus, numaNodes, devices)"},
        BadJson{"MissingCpus", R"({"numaNodes": []})", "node.json: cpus: missing"},
        BadJson{"NoCpus", R"({"cpus": []})", "node.json: cpus: no CPUs"},
        BadJson{"CpusNotArray", R"({"cpus": {"0": 1}})",
                "node.json: cpus: expected an array, got {\"0\":1}"},
        BadJson{"CpuNotObject", Cpus("3"), "node.json: cpus[0]: expected an object, got 3"},
        BadJson{"UnknownCpuKey", Cpus(R"({"id": 0, "core": 0, "socket": 0, "numa": 0, "thread": 1})"),
                "node.json: cpus[0].thread: unknown key (expected id, core, socket, numa, "
                "uncore)"},
        BadJson{"MissingCore", Cpus(R"({"id": 0, "socket": 0, "numa": 0})"),
                "node.json: cpus[0].core: missing"},
        BadJson{"SocketString",
                Cpus(kCpu0 + "," + R"({"id": 1, "core": 1, "socket": "1", "numa": 0})"),
                "node.json: cpus[1].socket: expected an integer, got \"1\""},
        BadJson{"SocketFloat", Cpus(R"({"id": 0, "core": 0, "socket": 1.5, "numa": 0})"),
                "node.json: cpus[0].socket: expected an integer, got 1.5"},
        BadJson{"SocketNull", Cpus(R"({"id": 0, "core": 0, "socket": null, "numa": 0})"),
                "node.json: cpus[0].socket: expected an integer, got null"},
        BadJson{"NegativeId", Cpus(R"({"id": -1, "core": 0, "socket": 0, "numa": 0})"),
                "node.json: cpus[0].id: out of range [0, 65535]: -1"},
        BadJson{"HugeId", Cpus(R"({"id": 4294967296, "core": 0, "socket": 0, "numa": 0})"),
                "node.json: cpus[0].id: out of range [0, 65535]: 4294967296"},
        BadJson{"HugerThanUint64",
                Cpus(R"({"id": 99999999999999999999, "core": 0, "socket": 0, "numa": 0})"),
                "node.json: cpus[0].id: expected an integer, got 1e+20"},
        BadJson{"SocketBelowMinusOne", Cpus(R"({"id": 0, "core": 0, "socket": -2, "numa": 0})"),
                "node.json: cpus[0].socket: out of range [-1, 2147483647]: -2"},
        BadJson{"NegativeNuma", Cpus(R"({"id": 0, "core": 0, "socket": 0, "numa": -1})"),
                "node.json: cpus[0].numa: out of range [0, 65535]: -1"},
        BadJson{"DuplicateCpu", Cpus(kCpu0 + "," + kCpu0),
                "node.json: cpus[1].id: duplicate CPU 0 (also cpus[0])"},
        BadJson{"CoreSpansSockets",
                Cpus(kCpu0 + "," + R"({"id": 1, "core": 0, "socket": 1, "numa": 0})"),
                "node.json: cpus[1].socket: core 0 spans sockets 0 (cpus[0]) and 1"},
        BadJson{"CoreSpansNuma",
                Cpus(kCpu0 + "," + R"({"id": 1, "core": 0, "socket": 0, "numa": 1})"),
                "node.json: cpus[1].numa: core 0 spans NUMA nodes 0 (cpus[0]) and 1"},
        BadJson{"NumaNotListed", WithNuma(R"({"id": 1})"),
                "node.json: cpus[0].numa: NUMA node 0 is not in numaNodes"},
        BadJson{"NumaNodesNotArray", R"({"cpus": [)" + kCpu0 + R"(], "numaNodes": {}})",
                "node.json: numaNodes: expected an array, got {}"},
        BadJson{"NumaMissingId", WithNuma(R"({"memory": 5})"), "node.json: numaNodes[0].id: missing"},
        BadJson{"NumaDuplicate", WithNuma(R"({"id": 0}, {"id": 0})"),
                "node.json: numaNodes[1].id: duplicate NUMA node 0 (also numaNodes[0])"},
        BadJson{"NumaUnknownKey", WithNuma(R"({"id": 0, "cpus": "0-3"})"),
                "node.json: numaNodes[0].cpus: unknown key (expected id, memory, hugepages, "
                "distances)"},
        BadJson{"MemoryNegative", WithNuma(R"({"id": 0, "memory": -5})"),
                "node.json: numaNodes[0].memory: expected an unsigned integer, got -5"},
        BadJson{"MemoryHuge", WithNuma(R"({"id": 0, "memory": 18446744073709551616})"),
                "node.json: numaNodes[0].memory: expected an unsigned integer (at most "
                "18446744073709551615), got 1.8446744073709552e+19"},
        BadJson{"MemoryString", WithNuma(R"({"id": 0, "memory": "16Gi"})"),
                "node.json: numaNodes[0].memory: expected an unsigned integer (at most "
                "18446744073709551615), got \"16Gi\""},
        BadJson{"HugepagesNotObject", WithNuma(R"({"id": 0, "hugepages": [1]})"),
                "node.json: numaNodes[0].hugepages: expected an object, got [1]"},
        BadJson{"HugepagesBadName", WithNuma(R"({"id": 0, "hugepages": {"hugepages-2M": 0}})"),
                "node.json: numaNodes[0].hugepages.hugepages-2M: not a hugepage resource name "
                "(hugepages-2Mi, hugepages-1Gi, ...)"},
        BadJson{"HugepagesNegative", WithNuma(R"({"id": 0, "hugepages": {"hugepages-2Mi": -1}})"),
                "node.json: numaNodes[0].hugepages.hugepages-2Mi: expected an unsigned integer, "
                "got -1"},
        BadJson{"DistancesTooShort", WithNuma(R"({"id": 0, "distances": [10]}, {"id": 1})"),
                "node.json: numaNodes[0].distances: 1 entries for 2 NUMA nodes"},
        BadJson{"DistancesWrongLength",
                WithNuma(R"({"id": 0, "distances": [10, 20, 30]}, {"id": 1})"),
                "node.json: numaNodes[0].distances: 3 entries for 2 NUMA nodes"},
        BadJson{"DistancesNotArray", WithNuma(R"({"id": 0, "distances": "10 20"})"),
                "node.json: numaNodes[0].distances: expected an array, got \"10 20\""},
        BadJson{"DistanceNegative", WithNuma(R"({"id": 0, "distances": [-10]})"),
                "node.json: numaNodes[0].distances[0]: expected an unsigned integer, got -10"},
        BadJson{"DevicesNotArray", R"({"cpus": [)" + kCpu0 + R"(], "devices": "gpu0"})",
                "node.json: devices: expected an array, got \"gpu0\""},
        BadJson{"DeviceMissingResource", WithDevices(R"({"id": "gpu0"})"),
                "node.json: devices[0].resource: missing"},
        BadJson{"DeviceEmptyId", WithDevices(R"({"resource": "x/gpu", "id": ""})"),
                "node.json: devices[0].id: empty string"},
        BadJson{"DeviceIdNumber", WithDevices(R"({"resource": "x/gpu", "id": 7})"),
                "node.json: devices[0].id: expected a string, got 7"},
        BadJson{"DeviceUnknownNuma", WithDevices(R"({"resource": "x/gpu", "id": "g", "numa": 3})"),
                "node.json: devices[0].numa: NUMA node 3 does not exist"},
        BadJson{"DeviceNumaBelowMinusOne",
                WithDevices(R"({"resource": "x/gpu", "id": "g", "numa": -2})"),
                "node.json: devices[0].numa: out of range [-1, 65535]: -2"},
        BadJson{"DeviceDuplicate",
                WithDevices(R"({"resource": "x/gpu", "id": "g"}, {"resource": "x/gpu", "id": "g"})"),
                "node.json: devices[1].id: duplicate device g of x/gpu (also devices[0])"},
        BadJson{"DeviceUnknownKey", WithDevices(R"({"resource": "x/gpu", "id": "g", "node": 0})"),
                "node.json: devices[0].node: unknown key (expected resource, id, numa)"}),
    [](const ::testing::TestParamInfo<BadJson>& info) { return info.param.name; });

// Writing then reading gives the same topology back. (Device ids are ASCII here: the writer
// emits UTF-8 JSON and replaces invalid byte sequences with U+FFFD.)
PODTOPO_PROPERTY(TopologyJsonProperty, RoundTrip, ()) {
  NodeTopology node;
  const int numa_count = *rc::gen::inRange(1, 5);
  const int cores = *rc::gen::inRange(1, 40);
  const int threads = *rc::gen::inRange(1, 3);
  for (int c = 0; c < cores; ++c) {
    const int numa = *rc::gen::inRange(0, numa_count);
    const int socket = *rc::gen::inRange(-1, 4);
    const int uncore = *rc::gen::inRange(-1, 8);
    for (int t = 0; t < threads; ++t) {
      node.cpus.AddCpu(c + t * cores,
                       CpuInfo{.numa = numa, .socket = socket, .core = c, .uncore = uncore});
    }
  }
  node.cpus.SetCountsFromCpus();
  for (int n = 0; n < numa_count; ++n) {
    NumaNode nn{.id = n, .memory = *rc::gen::arbitrary<uint64_t>(), .hugepages = {},
                .distances = {}};
    if (*rc::gen::arbitrary<bool>()) nn.hugepages["hugepages-2Mi"] = *rc::gen::arbitrary<uint64_t>();
    for (int k = 0; k < numa_count; ++k) nn.distances.push_back(*rc::gen::inRange(10, 100));
    node.numa_nodes.push_back(nn);
  }
  node.devices.push_back(Device{.resource = "example.com/dev", .id = *rc::gen::nonEmpty(rc::gen::container<std::string>(rc::gen::inRange<char>(' ', '~' + 1))),
                                .numa = *rc::gen::inRange(-1, numa_count)});
  std::string text = WriteTopologyJson(node);
  auto back = ReadTopologyJson(text, "rt.json");
  if (!back.ok()) RC_FAIL(std::string(back.status().message()) + "\n" + text);
  RC_ASSERT(WriteTopologyJson(*back) == text);
  RC_ASSERT(back->cpus.AllCpus() == node.cpus.AllCpus());
  node.cpus.AllCpus().ForEach([&](int cpu) { RC_ASSERT(*back->cpus.Info(cpu) == *node.cpus.Info(cpu)); });
  RC_ASSERT(back->cpus.num_cores == node.cpus.num_cores);
  RC_ASSERT(back->numa_nodes.size() == node.numa_nodes.size());
  for (size_t i = 0; i < node.numa_nodes.size(); ++i) {
    RC_ASSERT(back->numa_nodes[i].memory == node.numa_nodes[i].memory);
    RC_ASSERT(back->numa_nodes[i].hugepages == node.numa_nodes[i].hugepages);
    RC_ASSERT(back->numa_nodes[i].distances == node.numa_nodes[i].distances);
  }
  RC_ASSERT(back->devices.size() == 1u);
  RC_ASSERT(back->devices[0].id == node.devices[0].id);
}

// Arbitrary text never crashes the reader; errors name the file.
PODTOPO_PROPERTY(TopologyJsonProperty, ArbitraryTextNeverCrashes, (const std::string& text)) {
  auto node = ReadTopologyJson(text, "x.json");
  if (!node.ok()) RC_ASSERT(std::string(node.status().message()).rfind("x.json: ", 0) == 0);
}

// Mutations of a valid document never crash either.
PODTOPO_PROPERTY(TopologyJsonProperty, MutatedDocumentsNeverCrash,
              (std::vector<std::pair<unsigned, char>> edits)) {
  std::string text = kFull;
  for (const auto& [pos, ch] : edits) text[pos % text.size()] = ch;
  auto node = ReadTopologyJson(text, "x.json");
  if (!node.ok()) RC_ASSERT(std::string(node.status().message()).rfind("x.json: ", 0) == 0);
}

}  // namespace
}  // namespace podtopo
