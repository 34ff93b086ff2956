#include "render/topology_table.h"

#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "topology/presets.h"
#include "topology/topology_json.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;

TEST(RenderTopologyTable, DualSocketHT) {
  auto node = Preset("dual-socket-ht");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(RenderTopologyTable(*node),
            "Node preset:dual-socket-ht: 12 CPUs, 6 cores, 2 sockets, 2 NUMA nodes, 1 uncore "
            "cache\n"
            "\n"
            "SOCKET  NUMA  UNCORE  CPUS          CORES(THREADS)\n"
            "0       0     0       0,2,4,6,8,10  0(0,6) 2(2,8) 4(4,10)\n"
            "1       1     0       1,3,5,7,9,11  1(1,7) 3(3,9) 5(5,11)\n"
            "\n"
            "NUMA  CPUS          MEMORY  HUGEPAGES  DISTANCES\n"
            "0     0,2,4,6,8,10  16Gi    -          10 20\n"
            "1     1,3,5,7,9,11  16Gi    -          20 10\n");
}

// Issue 22 item 10: the header counted only the NUMA nodes with CPUs ("2 NUMA nodes" for
// gb200, whose table, picture and -o json list 34).
TEST(RenderTopologyTable, HeaderCountsMemoryOnlyNumaNodes) {
  auto node = Preset("gb200");
  ASSERT_TRUE(node.ok());
  const std::string out = RenderTopologyTable(*node);
  const std::string header = out.substr(0, out.find('\n'));
  EXPECT_THAT(header, HasSubstr(fmt::format(", {} NUMA nodes (2 with CPUs, {} memory-only), ",
                                            node->numa_nodes.size(), node->numa_nodes.size() - 2)))
      << header;
  EXPECT_EQ(node->numa_nodes.size(), 34u);
  // One table row per NUMA node follows, as many as the header says.
  const size_t table = out.find("\nNUMA  ");
  ASSERT_NE(table, std::string::npos);
  size_t rows = 0;
  for (size_t at = out.find('\n', table + 1); at != std::string::npos && at + 1 < out.size();
       at = out.find('\n', at + 1)) {
    if (out[at + 1] >= '0' && out[at + 1] <= '9') ++rows;
  }
  EXPECT_EQ(rows, node->numa_nodes.size());
}

TEST(RenderTopologyTable, SocketAndNumaShownWhereTheyChange) {
  auto node = Preset("demo");
  ASSERT_TRUE(node.ok());
  std::string out = RenderTopologyTable(*node);
  EXPECT_THAT(out, HasSubstr("Node preset:demo: 64 CPUs, 32 cores, 2 sockets, 4 NUMA nodes, "
                             "4 uncore caches\n"));
  EXPECT_THAT(out, HasSubstr("\n0       0     0       0-7,32-39    0(0,32) 1(1,33) 2(2,34) "
                             "3(3,35) 4(4,36) 5(5,37) 6(6,38) 7(7,39)\n"
                             "        1     1       8-15,40-47   8(8,40) 9(9,41) 10(10,42) "
                             "11(11,43) 12(12,44) 13(13,45)\n"
                             "                                   14(14,46) 15(15,47)\n"));
  EXPECT_THAT(out, HasSubstr("\n1       2     2       16-23,48-55  16(16,48)"));
  EXPECT_THAT(out, HasSubstr("\n3     24-31,56-63  16Gi    -          21 21 11 10\n"));
}

TEST(RenderTopologyTable, MemoryOnlyNodesHugepagesDevicesWarnings) {
  auto node = ReadTopologyJson(R"({
    "cpus": [{"id": 0, "core": 0, "socket": 0, "numa": 0}, {"id": 1, "core": 1, "socket": 0, "numa": 0}],
    "numaNodes": [
      {"id": 0, "memory": 5462847488, "hugepages": {"hugepages-2Mi": 1073741824, "hugepages-1Gi": 2147483648}},
      {"id": 1, "memory": 68719476736}],
    "devices": [{"resource": "example.com/gpu", "id": "gpu1", "numa": 1},
                {"resource": "example.com/gpu", "id": "gpu0"}]})",
                               "n.json");
  ASSERT_TRUE(node.ok()) << node.status();
  node->warnings.push_back("something odd");
  std::string out = RenderTopologyTable(*node);
  EXPECT_THAT(out, HasSubstr("NUMA  CPUS             MEMORY  HUGEPAGES           DISTANCES\n"
                             "0     0-1              5.09Gi  2 x 1Gi, 512 x 2Mi  -\n"
                             "1     - (memory only)  64Gi    -                   -\n"));
  EXPECT_THAT(out, HasSubstr("DEVICE RESOURCE  ID    NUMA\n"
                             "example.com/gpu  gpu0  -\n"
                             "example.com/gpu  gpu1  1\n"));
  EXPECT_THAT(out, HasSubstr("\nWarnings:\n  something odd\n"));
}

TEST(RenderTopologyTable, LongCpusetsAndCoreListsWrap) {
  // The KNL test machine's NUMA nodes have scattered CPUs and 18 cores of 4 threads.
  auto node = Preset("quad-socket-four-way-ht");
  ASSERT_TRUE(node.ok());
  std::string out = RenderTopologyTable(*node);
  std::istringstream in(out);
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) {
    ++lines;
    EXPECT_LE(line.size(), 140u) << line;
  }
  EXPECT_GT(lines, 20u);
  // Core 0 is CPUs 0, 109, 169 and 229; core 64 (irregular id) is 1, 13, 25 and 38.
  EXPECT_THAT(out, HasSubstr(" 0(0,109,169,229) "));
  EXPECT_THAT(out, HasSubstr(" 64(1,13,25,38)\n"));
  EXPECT_THAT(out, HasSubstr("\n      275-276,283-284\n1     3-4,11-12,"));
}

}  // namespace
}  // namespace podtopo
