// Agreement with lstopo on hwloc's Linux test corpus (../shared/fixtures/hwloc-linux).
//
// For each selected fixture the sysfs snapshot (NAME.tar.bz2) is extracted into a temporary
// directory, DiscoverSysfs runs on its sys/ folder, and the result is compared with lstopo's
// own rendering of the same snapshot (NAME.console): the PUs, and for each PU its package,
// core and NUMA node, by physical ids (P#), plus the number of packages, cores and NUMA nodes.
// The .xml exports go through ImportHwlocXml and are compared with the console of the same
// machine or with the numbers in the XML itself.
//
// lstopo and the kubelet legitimately differ in a few places; each case says why:
//   * cgroup cpusets: lstopo shows only the allowed PUs, the kubelet (and podtopo) the whole
//     machine. There every PU lstopo shows must still agree, but counts are not compared.
//   * no node<N> directories: cadvisor reports each package as its own NUMA node.
//   * L3: podtopo's uncore id is cadvisor's (socket id unless an L3 with a sysfs id is shared
//     by part of a NUMA node), so only "PUs under one lstopo L3 share an uncore id" holds in
//     general; where the kernel exported cache ids, the uncore groups equal lstopo's L3s.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/sysfs_fixture.h"
#include "testing/testing.h"
#include "topology/hwloc_import.h"
#include "topology/sysfs_discovery.h"

namespace podtopo {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string FixtureDir() { return testing::HwlocFixtureDir(); }

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---------------------------------------------------------------------------------------
// lstopo console parsing.

struct ConsolePu {
  int pu = -1;       // P#
  int package = -1;  // P# of the enclosing Package, -1 when none
  int core = -1;     // L# of the enclosing Core (unique), -1 when none
  int numa = -1;     // P# of the NUMANode local to the PU
  int l3 = -1;       // L# of the enclosing L3 cache, -1 when none
};

struct ConsoleTopology {
  std::vector<ConsolePu> pus;
  std::set<int> numa_nodes;              // P# of every NUMANode line, CPU-less ones included
  std::map<int, double> numa_local_bytes;  // P# -> local= value
  std::map<int, double> numa_local_unit;   // P# -> unit of local= (rounding tolerance)
};

struct ConsoleObject {
  std::string type;
  int logical = -1;
  int physical = -1;
  double depth = 0;  // indentation; objects merged on one line with " + " nest inside
  std::vector<int> numa_children;  // P# of NUMANode children, in order
};

// Parses lines like `    Core L#3 (P#1)`, `  L2 L#0 (2048KB) + Core L#0 + PU L#0 (P#0)` and
// `NUMANode L#1 (P#1 local=8192MiB total=8192MiB)`; other lines (the summary lstopo prints
// after the tree) are ignored.
ConsoleTopology ParseConsole(const std::string& text) {
  static const std::regex kObject(R"(^([A-Za-z][A-Za-z0-9]*)(?: L#(\d+))?(?: \((.*))?$)");
  static const std::regex kPhysical(R"(^P#(\d+))");
  static const std::regex kLocal(R"(local=([0-9.]+)([KMGTP]?i?B))");
  static const std::regex kSplit(R"( \+ (?=[A-Z][A-Za-z0-9]* L#))");
  ConsoleTopology out;
  std::vector<ConsoleObject> stack;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    std::string body = line.substr(indent);
    if (body.rfind("Machine", 0) != 0 && body.find(" L#") == std::string::npos) continue;
    std::vector<std::string> segments;
    std::sregex_token_iterator it(body.begin(), body.end(), kSplit, -1), end;
    for (; it != end; ++it) segments.push_back(*it);
    for (size_t k = 0; k < segments.size(); ++k) {
      std::smatch m;
      if (!std::regex_match(segments[k], m, kObject)) break;
      ConsoleObject obj;
      obj.type = m[1];
      obj.logical = m[2].matched ? std::stoi(m[2]) : -1;
      std::string attrs = m[3].matched ? std::string(m[3]) : "";
      std::smatch p;
      if (std::regex_search(attrs, p, kPhysical)) obj.physical = std::stoi(p[1]);
      obj.depth = static_cast<double>(indent) + 0.01 * static_cast<double>(k);
      while (!stack.empty() && stack.back().depth >= obj.depth) stack.pop_back();
      if (obj.type == "NUMANode") {
        out.numa_nodes.insert(obj.physical);
        std::smatch l;
        if (std::regex_search(attrs, l, kLocal)) {
          static const std::map<std::string, double> kUnits = {
              {"B", 1},         {"KB", 1e3},        {"MB", 1e6},        {"GB", 1e9},
              {"TB", 1e12},     {"KiB", 1024.0},    {"MiB", 1048576.0}, {"GiB", 1073741824.0},
              {"TiB", 1099511627776.0}};
          auto u = kUnits.find(l[2]);
          if (u != kUnits.end()) {
            out.numa_local_bytes[obj.physical] = std::stod(l[1]) * u->second;
            out.numa_local_unit[obj.physical] = u->second;
          }
        }
        // Memory-side caches (MemCache) sit between a NUMANode and its CPU-side parent.
        for (auto a = stack.rbegin(); a != stack.rend(); ++a) {
          if (a->type == "MemCache") continue;
          a->numa_children.push_back(obj.physical);
          break;
        }
        continue;  // memory objects have no CPU children
      }
      if (obj.type == "PU") {
        ConsolePu pu;
        pu.pu = obj.physical;
        for (auto a = stack.rbegin(); a != stack.rend(); ++a) {
          if (a->type == "Package" && pu.package < 0) pu.package = a->physical;
          if (a->type == "Core" && pu.core < 0) pu.core = a->logical;
          if ((a->type == "L3Cache" || a->type == "L3") && pu.l3 < 0) pu.l3 = a->logical;
          if (pu.numa < 0 && !a->numa_children.empty()) pu.numa = a->numa_children.front();
        }
        out.pus.push_back(pu);
      }
      stack.push_back(std::move(obj));
    }
  }
  return out;
}

TEST(ParseConsole, MergedLinesAndNuma) {
  ConsoleTopology t = ParseConsole(
      "Machine (P#0 total=64GiB)\n"
      "  Package L#0 (P#3 CPUModel=\"Intel(R) Xeon(R) (a + b)\")\n"
      "    NUMANode L#0 (P#2 local=32GiB total=32GiB)\n"
      "    L3 L#0 (30MB)\n"
      "      L2 L#0 (2048KB) + L1d L#0 (48KB) + Core L#0\n"
      "        PU L#0 (P#0)\n"
      "        PU L#1 (P#8)\n"
      "      L2 L#1 (2048KB) + Core L#1 + PU L#2 (P#1)\n"
      "depth 0:          1 Machine (type #0)\n");
  ASSERT_EQ(t.pus.size(), 3u);
  EXPECT_EQ(t.pus[1].pu, 8);
  EXPECT_EQ(t.pus[1].package, 3);
  EXPECT_EQ(t.pus[1].numa, 2);
  EXPECT_EQ(t.pus[1].core, 0);
  EXPECT_EQ(t.pus[2].core, 1);
  EXPECT_EQ(t.pus[2].l3, 0);
  EXPECT_EQ(t.numa_nodes, (std::set<int>{2}));
  EXPECT_DOUBLE_EQ(t.numa_local_bytes[2], 32.0 * 1073741824.0);
}

// ---------------------------------------------------------------------------------------
// Comparison.

struct Agreement {
  bool restricted = false;  // cgroup cpuset: lstopo shows part of the machine
  bool compare_memory = true;
  // lstopo shows online PUs of a NUMA node that has no node<N> directory (the node is
  // offline); cadvisor only takes CPUs from node<N> directories, so the kubelet does not
  // have them.
  bool numa_less_pus_absent = false;
};

// Compares a podtopo topology with lstopo's console rendering of the same machine.
void ExpectAgreement(const NodeTopology& node, const ConsoleTopology& console, Agreement how,
                     bool numa_is_package) {
  const CpuTopology& t = node.cpus;
  ASSERT_FALSE(console.pus.empty());
  std::set<int> console_pus;
  std::set<int> packages;
  std::map<int, std::set<int>> console_core;  // core L# -> PU P#s
  std::map<int, std::set<int>> console_l3;    // L3 L# -> PU P#s
  std::set<int> numas_with_cpus;
  for (const ConsolePu& p : console.pus) {
    SCOPED_TRACE(testing::TestName("PU", static_cast<size_t>(p.pu)));
    // num_sockets counts the packages of all online CPUs (cadvisor GetSockets).
    packages.insert(p.package);
    if (how.numa_less_pus_absent && p.numa < 0) {
      EXPECT_EQ(t.Info(p.pu), nullptr) << "PU P#" << p.pu << " is in no NUMA node";
      continue;
    }
    console_pus.insert(p.pu);
    if (p.core >= 0) console_core[p.core].insert(p.pu);  // lstopo --merge may drop Cores
    if (p.l3 >= 0) console_l3[p.l3].insert(p.pu);
    const CpuInfo* info = t.Info(p.pu);
    ASSERT_NE(info, nullptr) << "lstopo shows PU P#" << p.pu << ", podtopo does not";
    if (p.package >= 0) EXPECT_EQ(info->socket, p.package) << "package of PU P#" << p.pu;
    int want_numa = numa_is_package ? p.package : p.numa;
    numas_with_cpus.insert(want_numa);
    // A cgroup may also hide the NUMA node of allowed PUs (no NUMANode line above them).
    if (!(how.restricted && want_numa < 0)) {
      EXPECT_EQ(info->numa, want_numa) << "NUMA node of PU P#" << p.pu;
    }
  }
  // Cores: the PUs under one lstopo Core are exactly one podtopo core, whose id is the
  // lowest of them.
  for (const auto& [core, pus] : console_core) {
    if (pus.empty()) continue;
    int id = *pus.begin();
    const CpuInfo* info = t.Info(id);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->core, id) << "core id of PU P#" << id;
    CpuSet want(std::vector<int>(pus.begin(), pus.end()));
    if (how.restricted) {
      EXPECT_TRUE(want.IsSubsetOf(t.CpusInCore(info->core))) << "core of PU P#" << id;
    } else {
      EXPECT_EQ(t.CpusInCore(info->core), want) << "core of PU P#" << id;
    }
  }
  // L3: all PUs under one lstopo L3 share one uncore id.
  for (const auto& [l3, pus] : console_l3) {
    std::set<int> uncores;
    for (int pu : pus) uncores.insert(t.Info(pu)->uncore);
    EXPECT_EQ(uncores.size(), 1u) << "PUs of lstopo L3 L#" << l3 << " have several uncore ids";
  }
  if (how.restricted) return;

  EXPECT_EQ(t.AllCpus(), CpuSet(std::vector<int>(console_pus.begin(), console_pus.end())));
  EXPECT_EQ(t.num_cpus, static_cast<int>(console_pus.size()));
  EXPECT_EQ(t.num_sockets, static_cast<int>(packages.size()));
  if (!console_core.empty()) EXPECT_EQ(t.num_cores, static_cast<int>(console_core.size()));
  EXPECT_EQ(t.num_numa_nodes, static_cast<int>(numas_with_cpus.size()));
  if (!numa_is_package) {
    std::vector<int> ids = node.NumaIds();
    std::set<int> ours(ids.begin(), ids.end());
    EXPECT_EQ(ours, console.numa_nodes) << "NUMA nodes, CPU-less ones included";
    if (how.compare_memory) {
      for (const auto& [id, bytes] : console.numa_local_bytes) {
        const NumaNode* n = node.FindNuma(id);
        ASSERT_NE(n, nullptr);
        // lstopo prints local= rounded to its unit; hwloc's local memory is MemTotal.
        EXPECT_NEAR(static_cast<double>(n->memory), bytes, console.numa_local_unit.at(id))
            << "memory of NUMA node " << id;
      }
    }
  }
}

struct FixtureCase {
  std::string name;     // NAME.tar.bz2
  std::string console;  // NAME.console to compare with
  Agreement how;
  bool cpumap_only = false;  // node<N> directories hold only cpumap (see the test)
  std::string skip;          // non-empty: skip with this reason
};
void PrintTo(const FixtureCase& c, std::ostream* os) { *os << c.name; }

class HwlocSysfsFixture : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(HwlocSysfsFixture, DiscoveryAgreesWithLstopo) {
  const FixtureCase& c = GetParam();
  std::string tarball = FixtureDir() + "/" + c.name + ".tar.bz2";
  if (!fs::exists(tarball)) GTEST_SKIP() << tarball << " is absent";
  if (!c.skip.empty()) GTEST_SKIP() << c.skip;
  testing::SysfsFixture fx(tarball);
  ASSERT_TRUE(fx.ok()) << "could not extract " << tarball;
  auto node = DiscoverSysfs(fx.sys());
  if (c.cpumap_only) {
    // cadvisor globs node<N>/cpu<M> and finds no CPU in any NUMA node, so the kubelet refuses
    // to start on this kernel; podtopo says the same. Then compare the rest of the machine
    // with the cpulist files a newer kernel would have.
    ASSERT_FALSE(node.ok());
    EXPECT_THAT(std::string(node.status().message()), HasSubstr("could not detect number of cpus"));
    ASSERT_GT(fx.AddCpulistFromCpumap(), 0);
    node = DiscoverSysfs(fx.sys());
  }
  ASSERT_TRUE(node.ok()) << node.status();
  ConsoleTopology console = ParseConsole(ReadText(FixtureDir() + "/" + c.console + ".console"));
  ExpectAgreement(*node, console, c.how, !fx.HasNodeDirs());

  if (fx.HasCacheIds() && !c.how.restricted) {
    // With cache ids the kubelet's uncore groups are lstopo's L3s, except that an L3 covering
    // a whole NUMA node collapses to the socket id.
    std::map<int, std::set<int>> console_l3;
    for (const ConsolePu& p : console.pus) {
      if (p.l3 >= 0 && node->cpus.Info(p.pu) != nullptr) console_l3[p.l3].insert(p.pu);
    }
    for (const auto& [l3, pus] : console_l3) {
      const CpuInfo* first = node->cpus.Info(*pus.begin());
      ASSERT_NE(first, nullptr);
      CpuSet want(std::vector<int>(pus.begin(), pus.end()));
      if (want == node->cpus.CpusInNuma(first->numa)) {
        EXPECT_EQ(first->uncore, first->socket) << "L3 L#" << l3 << " is a node cache";
      } else {
        EXPECT_EQ(node->cpus.CpusInUncore(first->uncore), want) << "uncore of L3 L#" << l3;
      }
    }
  }
}

const Agreement kFull{};
const Agreement kRestricted{.restricted = true};
const Agreement kOfflineNuma{.numa_less_pus_absent = true};

INSTANTIATE_TEST_SUITE_P(
    Linux, HwlocSysfsFixture,
    ::testing::Values(
        FixtureCase{"16amd64-8n2c", "16amd64-8n2c", kFull},
        FixtureCase{"16em64t-4s2c2t", "16em64t-4s2c2t", kFull},
        FixtureCase{"64amd64-4s2n4ca2co", "64amd64-4s2n4ca2co", kFull},
        FixtureCase{"96em64t-4no4pa3ca2co", "96em64t-4no4pa3ca2co", kFull, true, ""},
        FixtureCase{"48amd64-4pa2n6c-sparse", "48amd64-4pa2n6c-sparse", kFull},
        FixtureCase{"8em64t-2s2ca2c", "8em64t-2s2ca2c", kFull},
        FixtureCase{"8em64t-2s4c-asymcaches", "8em64t-2s4c-asymcaches", kFull},
        FixtureCase{"16em64t-4s2c2t-offlines", "16em64t-4s2c2t-offlines", kFull},
        FixtureCase{"40intel64-4n10c+pci-conflicts", "40intel64-4n10c+pci-conflicts", kFull},
        FixtureCase{"32intel64-2p8co2t+8ve", "32intel64-2p8co2t+8ve", kFull},
        FixtureCase{"20em64t-hybrid-1p6c2t+2ca4co1t", "20em64t-hybrid-1p6c2t+2ca4co1t", kFull},
        FixtureCase{"fakecpuid1f-64intel64-2p4d2n2c2t", "fakecpuid1f-64intel64-2p4d2n2c2t", kFull},
        FixtureCase{"64fake-4n2s2ca2c2t", "64fake-4n2s2ca2c2t", kFull, true, ""},
        FixtureCase{"memorysidecaches", "memorysidecaches", kFull},
        FixtureCase{"offline-cpu0-node0", "offline-cpu0-node0", kOfflineNuma},
        FixtureCase{"16amd64-8n2c-cpusets", "16amd64-8n2c-cpusets", kRestricted},
        FixtureCase{"16em64t-4s2ca2c-cpusetreorder", "16em64t-4s2ca2c-cpusetreorder", kRestricted},
        FixtureCase{"16amd64-4n4c-cgroup-distance-merge", "16amd64-4n4c-cgroup-distance-merge",
                    kRestricted}),
    [](const ::testing::TestParamInfo<FixtureCase>& info) {
      return testing::TestName(info.param.name, info.index);
    });

// ---------------------------------------------------------------------------------------
// lstopo XML exports through ImportHwlocXml.

struct XmlCase {
  std::string xml;      // NAME.xml
  std::string console;  // the console of the same machine ("" = none)
  Agreement how;
};
void PrintTo(const XmlCase& c, std::ostream* os) { *os << c.xml; }

class HwlocXmlFixture : public ::testing::TestWithParam<XmlCase> {};

TEST_P(HwlocXmlFixture, ImportAgreesWithLstopo) {
  const XmlCase& c = GetParam();
  std::string path = FixtureDir() + "/" + c.xml + ".xml";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent";
  auto node = ImportHwlocXml(path);
  ASSERT_TRUE(node.ok()) << node.status();
  ConsoleTopology console = ParseConsole(ReadText(FixtureDir() + "/" + c.console + ".console"));
  ExpectAgreement(*node, console, c.how, /*numa_is_package=*/false);
}

INSTANTIATE_TEST_SUITE_P(
    Linux, HwlocXmlFixture,
    ::testing::Values(XmlCase{"16em64t-4s2c2t-xml", "16em64t-4s2c2t", kFull},
                      XmlCase{"16em64t-4s2c2t-offlines-xml", "16em64t-4s2c2t-offlines", kFull},
                      // The export was taken in the same cgroup the console was: both show
                      // the same restricted machine, where some allowed PUs have no NUMA
                      // node left (the import drops them, as cadvisor would).
                      XmlCase{"16amd64-8n2c-cpusets-xml", "16amd64-8n2c-cpusets", kOfflineNuma}),
    [](const ::testing::TestParamInfo<XmlCase>& info) {
      return testing::TestName(info.param.xml, info.index);
    });

// The numbers an XML states about itself, read with regular expressions (independently of
// hwloc): PU os_indexes, Core/Package/NUMANode counts.
struct XmlNumbers {
  std::vector<int> pus;
  int cores = 0, packages = 0;
  std::vector<int> numa_nodes;
};
XmlNumbers CountXml(const std::string& xml) {
  XmlNumbers n;
  static const std::regex kObj(R"re(<object type="(\w+)"(?: os_index="(\d+)")?)re");
  for (std::sregex_iterator it(xml.begin(), xml.end(), kObj), end; it != end; ++it) {
    std::string type = (*it)[1];
    if (type == "PU") n.pus.push_back(std::stoi((*it)[2]));
    if (type == "Core") ++n.cores;
    if (type == "Package") ++n.packages;
    if (type == "NUMANode") n.numa_nodes.push_back(std::stoi((*it)[2]));
  }
  std::sort(n.pus.begin(), n.pus.end());
  std::sort(n.numa_nodes.begin(), n.numa_nodes.end());
  return n;
}

TEST(HwlocXmlExport, CgroupRestrictedExportMatchesItsOwnNumbers) {
  // 32amd64-4s2n4c-cgroup2 has no console. Its export was taken inside a cgroup allowing 6 of
  // the 32 PUs (and NUMA nodes 0-5): the XML only holds those, and that is what is imported.
  std::string path = FixtureDir() + "/32amd64-4s2n4c-cgroup2.xml";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent";
  auto node = ImportHwlocXml(path);
  ASSERT_TRUE(node.ok()) << node.status();
  XmlNumbers want = CountXml(ReadText(path));
  EXPECT_EQ(node->cpus.AllCpus().List(), want.pus);
  EXPECT_EQ(node->cpus.num_cores, want.cores);
  EXPECT_EQ(want.packages, 3);  // the XML keeps 3 Packages, only one holds allowed PUs
  EXPECT_EQ(node->cpus.num_sockets, 1);
  EXPECT_EQ(node->NumaIds(), want.numa_nodes);
  EXPECT_EQ(want.pus.size(), 6u);  // guards the regexes above
  // Distances come from the XML's NUMALatency matrix (6 nodes).
  ASSERT_EQ(node->numa_nodes[0].distances.size(), 6u);
  EXPECT_EQ(node->numa_nodes[0].distances, (std::vector<uint64_t>{10, 16, 16, 22, 16, 22}));
  // The sysfs snapshot of the same machine shows all of it, as the kubelet sees it.
  testing::SysfsFixture fx(FixtureDir() + "/32amd64-4s2n4c-cgroup2.tar.bz2");
  ASSERT_TRUE(fx.ok());
  auto whole = DiscoverSysfs(fx.sys());
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->cpus.num_cpus, 32);
  EXPECT_EQ(whole->numa_nodes.size(), 8u);
  for (int cpu : want.pus) {
    EXPECT_EQ(whole->cpus.Info(cpu)->numa, node->cpus.Info(cpu)->numa) << "cpu " << cpu;
    EXPECT_EQ(whole->cpus.Info(cpu)->socket, node->cpus.Info(cpu)->socket) << "cpu " << cpu;
    EXPECT_EQ(whole->cpus.Info(cpu)->core, node->cpus.Info(cpu)->core) << "cpu " << cpu;
  }
}

TEST(HwlocXmlExport, ExportAgreesWithSysfsSnapshotOfTheSameMachine) {
  // 40intel64-2g2n4c+pcilocality: an XML export and the sysfs snapshot it was made from.
  std::string base = FixtureDir() + "/40intel64-2g2n4c+pcilocality";
  if (!fs::exists(base + ".xml")) GTEST_SKIP() << base << ".xml is absent";
  auto from_xml = ImportHwlocXml(base + ".xml");
  ASSERT_TRUE(from_xml.ok()) << from_xml.status();
  testing::SysfsFixture fx(base + ".tar.bz2");
  ASSERT_TRUE(fx.ok());
  auto from_sysfs = DiscoverSysfs(fx.sys());
  ASSERT_TRUE(from_sysfs.ok()) << from_sysfs.status();
  EXPECT_EQ(from_xml->cpus.AllCpus(), from_sysfs->cpus.AllCpus());
  from_sysfs->cpus.AllCpus().ForEach([&](int cpu) {
    const CpuInfo* x = from_xml->cpus.Info(cpu);
    const CpuInfo* y = from_sysfs->cpus.Info(cpu);
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(*x, *y) << "cpu " << cpu;
  });
  EXPECT_EQ(from_xml->NumaIds(), from_sysfs->NumaIds());
  for (size_t i = 0; i < from_xml->numa_nodes.size(); ++i) {
    EXPECT_EQ(from_xml->numa_nodes[i].memory, from_sysfs->numa_nodes[i].memory);
    EXPECT_EQ(from_xml->numa_nodes[i].distances, from_sysfs->numa_nodes[i].distances);
  }
}

}  // namespace
}  // namespace podtopo
