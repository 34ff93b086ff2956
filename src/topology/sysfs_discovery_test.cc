#include "topology/sysfs_discovery.h"

#include <unistd.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/property.h"
#include "testing/testing.h"
#include "topology/sysfs_source.h"

namespace podtopo {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;

std::string Fixture(const std::string& name) {
  return testing::SourceDir() + "/src/topology/testdata/sysfs/" + name;
}

// (cpu, core, socket, numa, uncore) for every CPU of the map, ascending.
using Row = std::tuple<int, int, int, int, int>;
std::vector<Row> Rows(const CpuTopology& t) {
  std::vector<Row> rows;
  t.AllCpus().ForEach([&](int cpu) {
    const CpuInfo* i = t.Info(cpu);
    rows.emplace_back(cpu, i->core, i->socket, i->numa, i->uncore);
  });
  return rows;
}

struct Counts {
  int cpus, cores, sockets, numa, uncore;
};
void ExpectCounts(const CpuTopology& t, Counts c) {
  EXPECT_EQ(t.num_cpus, c.cpus);
  EXPECT_EQ(t.num_cores, c.cores);
  EXPECT_EQ(t.num_sockets, c.sockets);
  EXPECT_EQ(t.num_numa_nodes, c.numa);
  EXPECT_EQ(t.num_uncore_caches, c.uncore);
}

TEST(DiscoverSysfsFixture, IntelTwoSocketsHyperThreads) {
  auto node = DiscoverSysfs(Fixture("intel-2s4c2t"));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->source, "sysfs:" + Fixture("intel-2s4c2t"));
  // cpu c and c+8 are one core; sysfs core_ids {0,1,8,9} restart per socket, the kubelet's
  // core id is the lowest thread. The L3 (cache id 0 and 2) spans the whole NUMA node, so it
  // is a node cache for cadvisor and the uncore id is the socket id. CPU 16 is offline.
  std::vector<Row> want;
  for (int c = 0; c < 8; ++c) want.emplace_back(c, c, c / 4, c / 4, c / 4);
  for (int c = 0; c < 8; ++c) want.emplace_back(c + 8, c, c / 4, c / 4, c / 4);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(Rows(node->cpus), want);
  ExpectCounts(node->cpus, {.cpus = 16, .cores = 8, .sockets = 2, .numa = 2, .uncore = 2});
  ASSERT_EQ(node->numa_nodes.size(), 2u);
  EXPECT_EQ(node->numa_nodes[0].id, 0);
  EXPECT_EQ(node->numa_nodes[0].memory, 32 * kGiB);
  EXPECT_THAT(node->numa_nodes[0].hugepages,
              ElementsAre(Pair("hugepages-1Gi", 2 * kGiB), Pair("hugepages-2Mi", 512 * 2 * kMiB)));
  EXPECT_EQ(node->numa_nodes[0].distances, (std::vector<uint64_t>{10, 21}));
  EXPECT_EQ(node->numa_nodes[1].id, 1);
  EXPECT_EQ(node->numa_nodes[1].memory, 32 * kGiB - 4 * kMiB);
  EXPECT_THAT(node->numa_nodes[1].hugepages,
              ElementsAre(Pair("hugepages-1Gi", 4 * kGiB), Pair("hugepages-2Mi", 0u)));
  EXPECT_EQ(node->numa_nodes[1].distances, (std::vector<uint64_t>{21, 10}));
  EXPECT_TRUE(node->warnings.empty()) << node->warnings[0];
}

TEST(DiscoverSysfsFixture, AmdSeveralL3PerNuma) {
  auto node = DiscoverSysfs(Fixture("amd-1s2n4ccx"));
  ASSERT_TRUE(node.ok()) << node.status();
  // 8 cores, cpu c and c+8 siblings; NUMA n = cores 4n..4n+3; L3 (CCX) k = cores 2k, 2k+1,
  // shared by 4 CPUs of a NUMA node of 8, so the uncore id is the L3 id.
  std::vector<Row> want;
  for (int c = 0; c < 8; ++c) want.emplace_back(c, c, 0, c / 4, c / 2);
  for (int c = 0; c < 8; ++c) want.emplace_back(c + 8, c, 0, c / 4, c / 2);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(Rows(node->cpus), want);
  ExpectCounts(node->cpus, {.cpus = 16, .cores = 8, .sockets = 1, .numa = 2, .uncore = 4});
  EXPECT_EQ(node->cpus.CpusInUncore(1).String(), "2-3,10-11");
  ASSERT_EQ(node->numa_nodes.size(), 2u);
  EXPECT_EQ(node->numa_nodes[0].memory, 64 * kGiB);
  EXPECT_EQ(node->numa_nodes[1].memory, 64 * kGiB);
  EXPECT_THAT(node->numa_nodes[0].hugepages,
              ElementsAre(Pair("hugepages-1Gi", 0u), Pair("hugepages-2Mi", 2 * kGiB)));
  EXPECT_EQ(node->numa_nodes[0].distances, (std::vector<uint64_t>{10, 12}));
  EXPECT_EQ(node->numa_nodes[1].distances, (std::vector<uint64_t>{12, 10}));
}

// physical_package_id = -1 on every CPU (POWER LPARs): cadvisor's GetSockets counts one
// distinct value and the CPUs keep socket id -1, as the kubelet's CPU topology does.
TEST(DiscoverSysfsFixture, PowerWithoutPackageIdsIsOneSocket) {
  auto node = DiscoverSysfs(Fixture("power-2n64c4t-nopkg"));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.num_cpus, 256);
  EXPECT_EQ(node->cpus.num_cores, 64);
  EXPECT_EQ(node->cpus.num_sockets, 1);
  EXPECT_EQ(node->cpus.CpusInSocket(-1).Size(), 256);
  EXPECT_EQ(node->cpus.CpusInCore(252).String(), "252-255");
  EXPECT_EQ(node->cpus.Info(255)->numa, 1);
}

TEST(DiscoverSysfsFixture, CpuLessNumaNodeIsKept) {
  auto node = DiscoverSysfs(Fixture("cpuless-numa"));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(Rows(node->cpus), (std::vector<Row>{{0, 0, 0, 0, 0},
                                                 {1, 1, 0, 0, 0},
                                                 {2, 2, 0, 0, 0},
                                                 {3, 3, 0, 0, 0}}));
  // num_numa_nodes counts NUMA nodes in the CPU map, as topology.Discover does.
  ExpectCounts(node->cpus, {.cpus = 4, .cores = 4, .sockets = 1, .numa = 1, .uncore = 1});
  ASSERT_EQ(node->numa_nodes.size(), 2u);
  EXPECT_EQ(node->numa_nodes[1].id, 1);
  EXPECT_EQ(node->numa_nodes[1].memory, 64 * kGiB);
  EXPECT_TRUE(node->numa_nodes[1].hugepages.empty());
  EXPECT_EQ(node->numa_nodes[1].distances, (std::vector<uint64_t>{20, 10}));
  EXPECT_TRUE(node->cpus.CpusInNuma(1).IsEmpty());
  // No cache directories: cadvisor ignores that, the uncore id falls back to the socket.
  ASSERT_FALSE(node->warnings.empty());
  EXPECT_THAT(node->warnings[0], HasSubstr("devices/system/cpu/cpu0/cache: not found"));
}

TEST(DiscoverSysfsFixture, ThisMachineCopy) {
  // A copy of the build machine's /sys (2 vCPU AMD EPYC VM, one L3 shared by both CPUs).
  auto node = DiscoverSysfs(Fixture("local"));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(Rows(node->cpus), (std::vector<Row>{{0, 0, 0, 0, 0}, {1, 1, 0, 0, 0}}));
  ExpectCounts(node->cpus, {.cpus = 2, .cores = 2, .sockets = 1, .numa = 1, .uncore = 1});
  ASSERT_EQ(node->numa_nodes.size(), 1u);
  EXPECT_EQ(node->numa_nodes[0].memory, uint64_t{5334812} * 1024);  // node0/meminfo MemTotal
  EXPECT_THAT(node->numa_nodes[0].hugepages,
              ElementsAre(Pair("hugepages-1Gi", 0u), Pair("hugepages-2Mi", 0u)));
  EXPECT_EQ(node->numa_nodes[0].distances, (std::vector<uint64_t>{10}));
  EXPECT_TRUE(node->warnings.empty());
}

TEST(DiscoverSysfsFixture, RealSysMatchesOnlineCpuCount) {
  if (access("/sys/devices/system/cpu/online", R_OK) != 0) GTEST_SKIP() << "no /sys here";
  auto node = DiscoverSysfs("/sys");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.num_cpus, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(node->cpus.AllCpus().Size(), node->cpus.num_cpus);
}

TEST(DiscoverSysfsFixture, MissingRoot) {
  auto node = DiscoverSysfs("/nonexistent/podtopo");
  ASSERT_FALSE(node.ok());
  EXPECT_TRUE(absl::IsNotFound(node.status()));
  EXPECT_EQ(node.status().message(), "sysfs:/nonexistent/podtopo: devices/system/cpu: not found");
}

// ---------------------------------------------------------------------------------------
// In-memory trees.

// A small valid machine: 2 sockets x 2 cores x 2 threads, cpu c and c+4 siblings, NUMA node
// per socket, private L3 per core pair... built file by file so each test can break one.
FakeSysfs SmallMachine() {
  FakeSysfs fs;
  fs.Set("devices/system/cpu/online", "0-7\n");
  for (int cpu = 0; cpu < 8; ++cpu) {
    int core = cpu % 4;
    std::string base = "devices/system/cpu/cpu" + std::to_string(cpu);
    fs.Set(base + "/topology/core_id", std::to_string(core % 2) + "\n");
    fs.Set(base + "/topology/physical_package_id", std::to_string(core / 2) + "\n");
  }
  fs.Set("devices/system/node/node0/cpulist", "0-1,4-5\n");
  fs.Set("devices/system/node/node0/meminfo", "Node 0 MemTotal:        1048576 kB\n");
  fs.Set("devices/system/node/node0/distance", "10 20\n");
  fs.Set("devices/system/node/node1/cpulist", "2-3,6-7\n");
  fs.Set("devices/system/node/node1/meminfo", "Node 1 MemTotal:        2097152 kB\n");
  fs.Set("devices/system/node/node1/distance", "20 10\n");
  return fs;
}

void SetCache(FakeSysfs& fs, int cpu, int index, int level, int id, const std::string& map) {
  std::string base =
      "devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" + std::to_string(index);
  fs.Set(base + "/id", std::to_string(id) + "\n");
  fs.Set(base + "/level", std::to_string(level) + "\n");
  fs.Set(base + "/size", "1024K\n");
  fs.Set(base + "/type", "Unified\n");
  fs.Set(base + "/shared_cpu_map", map + "\n");
}

std::string ErrorOf(const FakeSysfs& fs) {
  auto node = DiscoverSysfs(fs);
  if (node.ok()) return "OK";
  return std::string(node.status().message());
}

TEST(DiscoverSysfsFake, SmallMachine) {
  auto node = DiscoverSysfs(SmallMachine());
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(Rows(node->cpus), (std::vector<Row>{{0, 0, 0, 0, 0},
                                                 {1, 1, 0, 0, 0},
                                                 {2, 2, 1, 1, 1},
                                                 {3, 3, 1, 1, 1},
                                                 {4, 0, 0, 0, 0},
                                                 {5, 1, 0, 0, 0},
                                                 {6, 2, 1, 1, 1},
                                                 {7, 3, 1, 1, 1}}));
  ExpectCounts(node->cpus, {.cpus = 8, .cores = 4, .sockets = 2, .numa = 2, .uncore = 2});
  EXPECT_EQ(node->numa_nodes[1].memory, 2 * kGiB);
  EXPECT_EQ(node->source, "sysfs:fake");
}

TEST(DiscoverSysfsFake, OfflineCpusAreExcluded) {
  FakeSysfs fs = SmallMachine();
  fs.Set("devices/system/cpu/online", "0-2,4-7\n");
  auto node = DiscoverSysfs(fs);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.AllCpus().String(), "0-2,4-7");
  // CPU 3 is offline: its sibling 7 is alone, and being the lowest thread it is the core id.
  EXPECT_EQ(node->cpus.CpusInCore(7).String(), "7");
  EXPECT_EQ(node->cpus.Info(7)->core, 7);
  ExpectCounts(node->cpus, {.cpus = 7, .cores = 4, .sockets = 2, .numa = 2, .uncore = 2});
}

TEST(DiscoverSysfsFake, NoOnlineFileMeansAllOnline) {
  FakeSysfs fs = SmallMachine();
  fs.Remove("devices/system/cpu/online");
  auto node = DiscoverSysfs(fs);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.AllCpus().String(), "0-7");
}

TEST(DiscoverSysfsFake, CpusWithoutTopologyFilesAreSkipped) {
  FakeSysfs fs = SmallMachine();
  fs.Remove("devices/system/cpu/cpu7/topology/core_id");
  fs.Remove("devices/system/cpu/cpu6/topology/physical_package_id");
  auto node = DiscoverSysfs(fs);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.AllCpus().String(), "0-5");
  EXPECT_EQ(node->cpus.num_cpus, 6);
}

TEST(DiscoverSysfsFake, NodeCpuLinksWhenNoCpulist) {
  FakeSysfs fs = SmallMachine();
  fs.Remove("devices/system/node/node1/cpulist");
  for (int cpu : {2, 3, 6, 7}) fs.AddDir("devices/system/node/node1/cpu" + std::to_string(cpu));
  auto node = DiscoverSysfs(fs);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.CpusInNuma(1).String(), "2-3,6-7");
}

TEST(DiscoverSysfsFake, NoNodeDirectoriesMeansOneNodePerPackage) {
  FakeSysfs fs;
  fs.Set("devices/system/cpu/online", "0-2\n");
  for (int cpu = 0; cpu < 4; ++cpu) {
    std::string base = "devices/system/cpu/cpu" + std::to_string(cpu);
    fs.Set(base + "/topology/core_id", std::to_string(cpu % 2) + "\n");
    fs.Set(base + "/topology/physical_package_id", cpu < 2 ? "3\n" : "5\n");
  }
  auto node = DiscoverSysfs(fs);
  ASSERT_TRUE(node.ok()) << node.status();
  // cadvisor getCPUTopology: node id = package id, no memory; NumCores = number of cpu<N>
  // directories (4, the offline CPU 3 included) while the map has the 3 online CPUs.
  EXPECT_EQ(Rows(node->cpus), (std::vector<Row>{{0, 0, 3, 3, 3}, {1, 1, 3, 3, 3}, {2, 2, 5, 5, 5}}));
  ExpectCounts(node->cpus, {.cpus = 4, .cores = 3, .sockets = 2, .numa = 2, .uncore = 2});
  ASSERT_EQ(node->numa_nodes.size(), 2u);
  EXPECT_EQ(node->numa_nodes[0].id, 3);
  EXPECT_EQ(node->numa_nodes[1].id, 5);
  EXPECT_EQ(node->numa_nodes[0].memory, 0u);
  ASSERT_FALSE(node->warnings.empty());
  EXPECT_THAT(node->warnings.back(), HasSubstr("no node<N> directories"));
}

// Without node<N> directories a package id becomes a NUMA node id; one that no NUMA node id
// can be (found by the sysfs fuzz target: 196611) is an error naming the file, not a topology
// that its own JSON cannot read back.
TEST(DiscoverSysfsFake, PackageIdThatCannotBeANumaNodeIdIsAnError) {
  for (const char* pkg : {"196611", "-1"}) {
    FakeSysfs fs("sysfs:fake");
    fs.Set("devices/system/cpu/online", "0-1\n");
    for (int cpu = 0; cpu < 2; ++cpu) {
      std::string base = "devices/system/cpu/cpu" + std::to_string(cpu);
      fs.Set(base + "/topology/core_id", std::to_string(cpu) + "\n");
      fs.Set(base + "/topology/physical_package_id", cpu == 0 ? "0\n" : std::string(pkg) + "\n");
    }
    auto node = DiscoverSysfs(fs);
    ASSERT_FALSE(node.ok()) << pkg;
    EXPECT_THAT(node.status().message(),
                HasSubstr("sysfs:fake: devices/system/cpu/cpu1/topology/physical_package_id: "
                          "package " + std::string(pkg) + " cannot be a NUMA node id"));
    EXPECT_THAT(node.status().message(), HasSubstr("NUMA node ids are 0 to 65535"));
  }
}

TEST(DiscoverSysfsFake, NodeIdsAreNumericNotGlobOrder) {
  FakeSysfs fs;
  for (int n : {2, 10}) {
    std::string cpu = std::to_string(n);
    fs.Set("devices/system/cpu/cpu" + cpu + "/topology/core_id", "0\n");
    fs.Set("devices/system/cpu/cpu" + cpu + "/topology/physical_package_id", cpu + "\n");
    fs.Set("devices/system/node/node" + cpu + "/cpulist", cpu + "\n");
    // Rows are indexed by node id: entries 2 and 10 matter, the others are filler.
    std::string row;
    for (int j = 0; j <= 10; ++j) {
      row += (j ? " " : "") + std::to_string(j == n ? 10 : (j == 2 || j == 10) ? 20 : 99);
    }
    fs.Set("devices/system/node/node" + cpu + "/distance", row + "\n");
  }
  auto node = DiscoverSysfs(fs);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->NumaIds(), (std::vector<int>{2, 10}));
  EXPECT_EQ(node->numa_nodes[0].distances, (std::vector<uint64_t>{10, 20}));
  EXPECT_EQ(node->numa_nodes[1].distances, (std::vector<uint64_t>{20, 10}));
  EXPECT_EQ(node->cpus.Info(10)->numa, 10);
}

TEST(DiscoverSysfsFake, L3SharedByPartOfTheNodeIsTheUncore) {
  FakeSysfs fs = SmallMachine();
  // One L3 per core (2 CPUs) on NUMA node 0 (4 CPUs): uncore caches, ids 7 and 9.
  for (int cpu : {0, 4}) SetCache(fs, cpu, 3, 3, 7, "00000011");
  for (int cpu : {1, 5}) SetCache(fs, cpu, 3, 3, 9, "00000022");
  // NUMA node 1: one L3 for the whole node (4 CPUs) with id 42: a node cache, uncore = socket.
  for (int cpu : {2, 3, 6, 7}) SetCache(fs, cpu, 3, 3, 42, "000000cc");
  auto node = DiscoverSysfs(fs);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.Info(0)->uncore, 7);
  EXPECT_EQ(node->cpus.Info(5)->uncore, 9);
  EXPECT_EQ(node->cpus.Info(2)->uncore, 1);
  EXPECT_EQ(node->cpus.Info(7)->uncore, 1);
  EXPECT_EQ(node->cpus.num_uncore_caches, 3);
  EXPECT_TRUE(node->warnings.empty());
}

TEST(DiscoverSysfsFake, UnreadableCacheStopsAtThatCoreLikeCadvisor) {
  FakeSysfs fs = SmallMachine();
  for (int cpu : {0, 4}) SetCache(fs, cpu, 3, 3, 7, "00000011");
  for (int cpu : {1, 5}) SetCache(fs, cpu, 3, 3, 9, "00000022");
  fs.Set("devices/system/cpu/cpu1/cache/index3/id", "x\n");
  auto node = DiscoverSysfs(fs);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.Info(0)->uncore, 7);  // processed before the bad file
  EXPECT_EQ(node->cpus.Info(1)->uncore, 0);  // socket id
  ASSERT_FALSE(node->warnings.empty());
  EXPECT_THAT(node->warnings[0],
              StartsWith("sysfs:fake: devices/system/cpu/cpu1/cache/index3/id: not an integer: \"x\""));
}

struct BadCase {
  std::string name;
  std::string file;      // relative path to overwrite ("" = none)
  std::string contents;  // new contents; "<remove>" deletes the file
  std::string error;     // expected message (exact)
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class DiscoverSysfsBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(DiscoverSysfsBad, ClearError) {
  const BadCase& c = GetParam();
  FakeSysfs fs = SmallMachine();
  if (c.contents == "<remove>") {
    fs.Remove(c.file);
  } else {
    fs.Set(c.file, c.contents);
  }
  EXPECT_EQ(ErrorOf(fs), c.error);
}

const std::string kCpu3Pkg = "devices/system/cpu/cpu3/topology/physical_package_id";
const std::string kCpu3Core = "devices/system/cpu/cpu3/topology/core_id";
const std::string kNode0 = "devices/system/node/node0";

INSTANTIATE_TEST_SUITE_P(
    Cases, DiscoverSysfsBad,
    ::testing::Values(
        BadCase{"PackageNotInteger", kCpu3Pkg, "abc\n",
                "sysfs:fake: " + kCpu3Pkg + ": not an integer: \"abc\""},
        BadCase{"PackageEmpty", kCpu3Pkg, "", "sysfs:fake: " + kCpu3Pkg + ": not an integer: \"\""},
        BadCase{"PackageBelowMinusOne", kCpu3Pkg, "-2\n",
                "sysfs:fake: " + kCpu3Pkg + ": out of range [-1, 2147483647]: \"-2\""},
        BadCase{"PackageHuge", kCpu3Pkg, "99999999999999999999999\n",
                "sysfs:fake: " + kCpu3Pkg +
                    ": out of range [-1, 2147483647]: \"99999999999999999999999\""},
        BadCase{"CoreIdTrailingGarbage", kCpu3Core, "12abc\n",
                "sysfs:fake: " + kCpu3Core + ": not an integer: \"12abc\""},
        BadCase{"CoreIdHugeFile", kCpu3Core, std::string(2 << 20, '1'),
                "sysfs:fake: " + kCpu3Core + ": file is larger than 1048576 bytes"},
        BadCase{"CoreIdBinary", kCpu3Core, std::string("\x01\xff\n", 3),
                "sysfs:fake: " + kCpu3Core + ": not an integer: \"\\x01\\xff\""},
        BadCase{"OnlineTruncated", "devices/system/cpu/online", "0-",
                "sysfs:fake: devices/system/cpu/online: strconv.Atoi: parsing \"\": invalid "
                "syntax"},
        BadCase{"OnlineEmpty", "devices/system/cpu/online", "\n",
                "sysfs:fake: devices/system/cpu/online: empty CPU list"},
        BadCase{"OnlineNegative", "devices/system/cpu/online", "-1\n",
                "sysfs:fake: devices/system/cpu/online: strconv.Atoi: parsing \"\": invalid "
                "syntax"},
        BadCase{"CpulistGarbage", kNode0 + "/cpulist", "0-1,x\n",
                "sysfs:fake: " + kNode0 +
                    "/cpulist: strconv.Atoi: parsing \"x\": invalid syntax"},
        BadCase{"CpulistOverlapsOtherNode", kNode0 + "/cpulist", "0-2,4-5\n",
                "sysfs:fake: devices/system/node/node1: CPU 2 is also listed by NUMA node 0"},
        BadCase{"CpulistHugeId", kNode0 + "/cpulist", "0-1,4-5,99999999\n",
                "sysfs:fake: " + kNode0 +
                    "/cpulist: cpu id 99999999 in \"99999999\" is outside the supported range "
                    "0-65535"},
        BadCase{"MeminfoNoMemTotal", kNode0 + "/meminfo", "Node 0 MemFree: 5 kB\n",
                "sysfs:fake: " + kNode0 + "/meminfo: no \"MemTotal: <N> kB\" line"},
        BadCase{"MeminfoNegative", kNode0 + "/meminfo", "Node 0 MemTotal: -5 kB\n",
                "sysfs:fake: " + kNode0 + "/meminfo: no \"MemTotal: <N> kB\" line"},
        BadCase{"MeminfoTruncated", kNode0 + "/meminfo", "Node 0 MemTotal:   1048",
                "sysfs:fake: " + kNode0 + "/meminfo: no \"MemTotal: <N> kB\" line"},
        BadCase{"MeminfoHuge", kNode0 + "/meminfo",
                "Node 0 MemTotal: 99999999999999999999999 kB\n",
                "sysfs:fake: " + kNode0 +
                    "/meminfo: MemTotal out of range for a 64-bit unsigned integer: "
                    "\"99999999999999999999999\""},
        BadCase{"MeminfoOverflowsBytes", kNode0 + "/meminfo",
                "Node 0 MemTotal: 18014398509481984 kB\n",
                "sysfs:fake: " + kNode0 +
                    "/meminfo: MemTotal 18014398509481984 kB does not fit in 64 bits as bytes"},
        BadCase{"DistanceNotNumber", kNode0 + "/distance", "10 abc\n",
                "sysfs:fake: " + kNode0 +
                    "/distance: distance [1]: not an unsigned integer: \"abc\""},
        BadCase{"DistanceNegative", kNode0 + "/distance", "10 -20\n",
                "sysfs:fake: " + kNode0 +
                    "/distance: distance [1]: not an unsigned integer: \"-20\""},
        BadCase{"DistanceEmpty", kNode0 + "/distance", "\n",
                "sysfs:fake: " + kNode0 + "/distance: distance [0]: not an unsigned integer: \"\""},
        BadCase{"DistanceDoubleSpace", kNode0 + "/distance", "10  20\n",
                "sysfs:fake: " + kNode0 + "/distance: distance [1]: not an unsigned integer: \"\""},
        BadCase{"HugepagesBadName", kNode0 + "/hugepages/giant/nr_hugepages", "1\n",
                "sysfs:fake: " + kNode0 +
                    "/hugepages/giant: not a hugepages-<size>kB directory"},
        BadCase{"HugepagesBadSize", kNode0 + "/hugepages/hugepages-twokB/nr_hugepages", "1\n",
                "sysfs:fake: " + kNode0 +
                    "/hugepages/hugepages-twokB: page size not an unsigned integer: \"two\""},
        BadCase{"HugepagesZeroSize", kNode0 + "/hugepages/hugepages-0kB/nr_hugepages", "1\n",
                "sysfs:fake: " + kNode0 + "/hugepages/hugepages-0kB: unsupported page size 0 kB"},
        BadCase{"HugepagesNegativeCount", kNode0 + "/hugepages/hugepages-2048kB/nr_hugepages",
                "-3\n",
                "sysfs:fake: " + kNode0 +
                    "/hugepages/hugepages-2048kB/nr_hugepages: negative page count -3"},
        BadCase{"HugepagesGarbageCount", kNode0 + "/hugepages/hugepages-2048kB/nr_hugepages",
                "lots\n",
                "sysfs:fake: " + kNode0 +
                    "/hugepages/hugepages-2048kB/nr_hugepages: not an integer: \"lots\""},
        BadCase{"HugepagesOverflow", kNode0 + "/hugepages/hugepages-1048576kB/nr_hugepages",
                "9223372036854775807\n",
                "sysfs:fake: " + kNode0 +
                    "/hugepages/hugepages-1048576kB/nr_hugepages: 9223372036854775807 pages of "
                    "1073741824 bytes do not fit in 64 bits"},
        BadCase{"CpuDirHugeNumber", "devices/system/cpu/cpu99999999999999/topology/core_id",
                "0\n",
                "sysfs:fake: devices/system/cpu/cpu99999999999999: CPU number out of range "
                "[0, 65535]: \"99999999999999\""},
        BadCase{"CpuDirectoryMissing", "devices/system/cpu", "<remove>",
                "sysfs:fake: devices/system/cpu: not found"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(DiscoverSysfsFake, NoUsableCpu) {
  FakeSysfs fs;
  fs.Set("devices/system/cpu/cpu0/topology/core_id", "0\n");  // no physical_package_id
  fs.Set("devices/system/node/node0/cpulist", "0\n");
  EXPECT_THAT(ErrorOf(fs), StartsWith("sysfs:fake: could not detect number of cpus"));
}

TEST(DiscoverSysfsFake, MissingNodeFilesAreTolerated) {
  FakeSysfs fs = SmallMachine();
  fs.Remove("devices/system/node/node0/meminfo");
  fs.Remove("devices/system/node/node0/distance");
  fs.Remove("devices/system/node/node1/distance");
  auto node = DiscoverSysfs(fs);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->numa_nodes[0].memory, 0u);
  EXPECT_TRUE(node->numa_nodes[0].distances.empty());
  EXPECT_THAT(node->warnings, Contains(HasSubstr("node0/meminfo: not found")));
}

TEST(DiscoverSysfsFake, DistanceRowsAreIndexedByNodeId) {
  // Nodes 0 and 2 (node 1 offline): the kubelet reads row[j] as the distance to node id j.
  FakeSysfs fs = SmallMachine();
  fs.Remove("devices/system/node/node1");
  fs.Set("devices/system/node/node2/cpulist", "2-3,6-7\n");
  fs.Set("devices/system/node/node0/distance", "10 15 20\n");
  fs.Set("devices/system/node/node2/distance", "20 15\n");  // too short for id 2
  auto node = DiscoverSysfs(fs);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->numa_nodes[0].distances, (std::vector<uint64_t>{10, 20}));
  EXPECT_TRUE(node->numa_nodes[1].distances.empty());
  EXPECT_THAT(node->warnings,
              Contains(HasSubstr("node2/distance: 2 distances, none for NUMA node 2")));
}

TEST(DiscoverSysfsFake, DuplicateNodeDirectories) {
  FakeSysfs fs = SmallMachine();
  fs.Set("devices/system/node/node01/cpulist", "\n");
  EXPECT_EQ(ErrorOf(fs), "sysfs:fake: devices/system/node/node1: second directory for NUMA node 1");
}

// Whatever bytes the files hold, discovery returns a topology or an error that names the
// tree; it never crashes.
// FakeSysfs answers as a tree of those paths would: checked against a naive reading (every
// path looked at) on random trees whose names share prefixes and hold characters that sort
// before and after '/' ("a-b", "a.b", "a/b", "a0").
PODTOPO_PROPERTY(FakeSysfsProperty, ListDirAndReadFileAgreeWithEveryPath,
              (std::vector<std::pair<std::vector<int>, bool>> raw)) {
  static const char* kNames[] = {"a", "a-b", "a.b", "a0", "b", "ab"};
  std::set<std::string> files, dirs;
  FakeSysfs fs;
  for (const auto& [parts, is_dir] : raw) {
    std::string path;
    for (size_t i = 0; i < parts.size() % 4 + 1; ++i) {
      int k = i < parts.size() ? parts[i] : 0;
      path += (path.empty() ? "" : "/") + std::string(kNames[static_cast<unsigned>(k) % 6]);
    }
    if (is_dir) {
      dirs.insert(path);
      fs.AddDir(path);
    } else if (!files.contains(path)) {
      files.insert(path);
      fs.Set(path, "x" + path);
    }
  }
  auto under = [](const std::string& p, const std::string& d) {
    return p.size() > d.size() && p.compare(0, d.size(), d) == 0 && p[d.size()] == '/';
  };
  auto check = [&] {
    std::set<std::string> queries = {"", "a", "a/a", "a-b", "zz"};
    for (const auto& f : files) queries.insert(f);
    for (const auto& d : dirs) queries.insert(d);
    for (const std::string& q : queries) {
      std::set<std::string> names;
      bool exists = dirs.contains(q);
      for (const auto* set : {&files, &dirs}) {
        for (const auto& p : *set) {
          if (!under(p, q)) continue;
          exists = true;
          std::string rest = p.substr(q.size() + 1);
          names.insert(rest.substr(0, rest.find('/')));
        }
      }
      auto listed = fs.ListDir(q);
      RC_ASSERT(listed.ok() == exists);
      if (exists) RC_ASSERT(*listed == std::vector<std::string>(names.begin(), names.end()));
      auto read = fs.ReadFile(q);
      if (files.contains(q)) {
        RC_ASSERT(read.ok());
        RC_ASSERT(*read == "x" + q);
      } else if (exists) {
        RC_ASSERT(read.status().message() == "is a directory");
      } else {
        RC_ASSERT(absl::IsNotFound(read.status()));
      }
    }
  };
  check();
  // Remove: a file, or a directory and everything under it.
  for (const std::string gone : {"a/a", "a", "b"}) {
    fs.Remove(gone);
    std::erase_if(files, [&](const std::string& p) { return p == gone || under(p, gone); });
    std::erase_if(dirs, [&](const std::string& p) { return p == gone || under(p, gone); });
    check();
  }
}

PODTOPO_PROPERTY(DiscoverSysfsProperty, ArbitraryFileContentsNeverCrash,
              (const std::vector<std::string>& contents)) {
  static const std::vector<std::string> kFiles = {
      "devices/system/cpu/online",
      "devices/system/cpu/cpu0/topology/core_id",
      "devices/system/cpu/cpu5/topology/physical_package_id",
      "devices/system/cpu/cpu1/cache/index3/id",
      "devices/system/cpu/cpu1/cache/index3/shared_cpu_map",
      "devices/system/cpu/cpu1/cache/index3/size",
      "devices/system/node/node0/cpulist",
      "devices/system/node/node1/meminfo",
      "devices/system/node/node1/distance",
      "devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages",
  };
  FakeSysfs fs = SmallMachine();
  for (int cpu : {1, 5}) SetCache(fs, cpu, 3, 3, 9, "00000022");
  for (size_t i = 0; i < contents.size(); ++i) fs.Set(kFiles[i % kFiles.size()], contents[i]);
  auto node = DiscoverSysfs(fs);
  if (node.ok()) {
    RC_ASSERT(node->cpus.AllCpus().Size() > 0);
  } else {
    RC_ASSERT(std::string(node.status().message()).rfind("sysfs:fake: ", 0) == 0);
  }
}

}  // namespace
}  // namespace podtopo
