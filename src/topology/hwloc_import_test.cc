#include "topology/hwloc_import.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"
#include "testing/testing.h"
#include "topology/sysfs_discovery.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string TestData(const std::string& rel) {
  return testing::SourceDir() + "/src/topology/testdata/" + rel;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void ExpectSameNode(const NodeTopology& a, const NodeTopology& b) {
  EXPECT_EQ(a.cpus.AllCpus(), b.cpus.AllCpus());
  a.cpus.AllCpus().ForEach([&](int cpu) {
    ASSERT_NE(b.cpus.Info(cpu), nullptr) << "cpu " << cpu;
    const CpuInfo& x = *a.cpus.Info(cpu);
    const CpuInfo& y = *b.cpus.Info(cpu);
    EXPECT_EQ(x.core, y.core) << "core of cpu " << cpu;
    EXPECT_EQ(x.socket, y.socket) << "socket of cpu " << cpu;
    EXPECT_EQ(x.numa, y.numa) << "NUMA node of cpu " << cpu;
    EXPECT_EQ(x.uncore, y.uncore) << "uncore of cpu " << cpu;
  });
  EXPECT_EQ(a.cpus.num_cpus, b.cpus.num_cpus);
  EXPECT_EQ(a.cpus.num_cores, b.cpus.num_cores);
  EXPECT_EQ(a.cpus.num_sockets, b.cpus.num_sockets);
  EXPECT_EQ(a.cpus.num_numa_nodes, b.cpus.num_numa_nodes);
  EXPECT_EQ(a.cpus.num_uncore_caches, b.cpus.num_uncore_caches);
  ASSERT_EQ(a.numa_nodes.size(), b.numa_nodes.size());
  for (size_t i = 0; i < a.numa_nodes.size(); ++i) {
    EXPECT_EQ(a.numa_nodes[i].id, b.numa_nodes[i].id);
    EXPECT_EQ(a.numa_nodes[i].memory, b.numa_nodes[i].memory) << "node " << a.numa_nodes[i].id;
    EXPECT_EQ(a.numa_nodes[i].hugepages, b.numa_nodes[i].hugepages)
        << "node " << a.numa_nodes[i].id;
    EXPECT_EQ(a.numa_nodes[i].distances, b.numa_nodes[i].distances)
        << "node " << a.numa_nodes[i].id;
  }
}

// testdata/xml/T.xml is lstopo's export of testdata/sysfs/T (see make_sysfs_fixtures.py):
// the import must give what sysfs discovery gives, memory and hugepages included.
class XmlMatchesSysfs : public ::testing::TestWithParam<std::string> {};

TEST_P(XmlMatchesSysfs, SameNode) {
  auto from_xml = ImportHwlocXml(TestData("xml/" + GetParam() + ".xml"));
  ASSERT_TRUE(from_xml.ok()) << from_xml.status();
  auto from_sysfs = DiscoverSysfs(TestData("sysfs/" + GetParam()));
  ASSERT_TRUE(from_sysfs.ok()) << from_sysfs.status();
  ExpectSameNode(*from_xml, *from_sysfs);
  EXPECT_EQ(from_xml->source, TestData("xml/" + GetParam() + ".xml"));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, XmlMatchesSysfs,
                         ::testing::Values("intel-2s4c2t", "amd-1s2n4ccx", "cpuless-numa",
                                           "power-2n64c4t-nopkg"),
                         [](const auto& info) { return testing::TestName(info.param, info.index); });

// A POWER LPAR with physical_package_id = -1 on every CPU: lstopo exports 64 Packages without
// an os_index (one per core). cadvisor, and so the kubelet, sees one socket, id -1; the
// Packages' logical indexes (0..63) are not socket ids.
TEST(ImportHwlocXml, PowerPackagesWithoutOsIndexAreOneSocket) {
  const std::string xml = ReadText(TestData("xml/power-2n64c4t-nopkg.xml"));
  size_t packages = 0;
  for (size_t at = xml.find("type=\"Package\""); at != std::string::npos;
       at = xml.find("type=\"Package\"", at + 1)) {
    ++packages;
  }
  ASSERT_EQ(packages, 64u);                                      // the export's shape
  ASSERT_EQ(xml.find("type=\"Package\" os_index"), std::string::npos);  // none has an os_index
  auto node = ImportHwlocXml(TestData("xml/power-2n64c4t-nopkg.xml"));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.num_cpus, 256);
  EXPECT_EQ(node->cpus.num_cores, 64);
  EXPECT_EQ(node->cpus.num_sockets, 1);
  EXPECT_EQ(node->cpus.num_numa_nodes, 2);
  node->cpus.AllCpus().ForEach([&](int cpu) {
    EXPECT_EQ(node->cpus.Info(cpu)->socket, -1) << "cpu " << cpu;
    EXPECT_EQ(node->cpus.Info(cpu)->uncore, -1) << "cpu " << cpu;  // no L3: the socket id
  });
  EXPECT_EQ(node->cpus.CpusInSocket(-1).Size(), 256);
  EXPECT_EQ(node->cpus.CpusInCore(4).String(), "4-7");
}

TEST(ImportHwlocXml, IntelDetails) {
  auto node = ImportHwlocXml(TestData("xml/intel-2s4c2t.xml"));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.CpusInCore(3).String(), "3,11");
  EXPECT_EQ(node->cpus.CpusInSocket(1).String(), "4-7,12-15");
  ASSERT_EQ(node->numa_nodes.size(), 2u);
  EXPECT_EQ(node->numa_nodes[0].hugepages.at("hugepages-2Mi"), uint64_t{512} << 21);
  EXPECT_EQ(node->numa_nodes[1].hugepages.at("hugepages-1Gi"), uint64_t{4} << 30);
  EXPECT_EQ(node->numa_nodes[1].distances, (std::vector<uint64_t>{21, 10}));
}

// ---------------------------------------------------------------------------------------
// Malformed input.

std::string Xml(const std::string& objects) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
         "<topology version=\"2.0\">\n"
         "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x00000003\" "
         "complete_cpuset=\"0x00000003\" allowed_cpuset=\"0x00000003\" nodeset=\"0x00000001\" "
         "complete_nodeset=\"0x00000001\" allowed_nodeset=\"0x00000001\">\n" +
         objects + "  </object>\n</topology>\n";
}

const char kNuma[] =
    "    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x00000003\" "
    "complete_cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" "
    "local_memory=\"1073741824\"/>\n";

std::string Pu(const std::string& os_index, const std::string& cpuset) {
  return "    <object type=\"PU\" os_index=\"" + os_index + "\" cpuset=\"" + cpuset +
         "\" complete_cpuset=\"" + cpuset +
         "\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\"/>\n";
}

TEST(ImportHwlocXml, MinimalValid) {
  auto node = ImportHwlocXmlText(Xml(std::string(kNuma) + Pu("0", "0x00000001") +
                                     Pu("1", "0x00000002")),
                                 "min.xml");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.AllCpus().String(), "0-1");
  // No Core objects: every PU is its own core; no Package: socket 0.
  EXPECT_EQ(node->cpus.num_cores, 2);
  EXPECT_EQ(node->cpus.Info(1)->socket, 0);
  EXPECT_EQ(node->numa_nodes[0].memory, uint64_t{1} << 30);
}

TEST(ImportHwlocXml, Version3IsReadAs2) {
  std::string xml = Xml(std::string(kNuma) + Pu("0", "0x00000001") + Pu("1", "0x00000002"));
  xml.replace(xml.find("version=\"2.0\""), 13, "version=\"3.0\"");
  auto node = ImportHwlocXmlText(xml, "v3.xml");
  ASSERT_TRUE(node.ok()) << node.status();
  ASSERT_FALSE(node->warnings.empty());
  EXPECT_EQ(node->warnings[0], "v3.xml: hwloc 3.0 XML read with hwloc 2.x's reader");
  EXPECT_EQ(node->cpus.num_cpus, 2);
}

TEST(ImportHwlocXml, HwlocMessagesAreAttachedToErrors) {
  // hwloc explains XML errors on stderr when HWLOC_XML_VERBOSE is set; the import collects
  // what it prints into the error.
  setenv("HWLOC_XML_VERBOSE", "1", 1);
  std::string xml = ReadText(TestData("xml/amd-1s2n4ccx.xml")).substr(0, 3000);
  auto node = ImportHwlocXmlText(xml, "cut.xml");
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(std::string(node.status().message()),
              StartsWith("cut.xml: not an hwloc XML topology (hwloc could not load it: "));
  EXPECT_THAT(std::string(node.status().message()), HasSubstr("[hwloc: "));
  unsetenv("HWLOC_XML_VERBOSE");
}

TEST(ImportHwlocXml, MissingFileNamesIt) {
  auto node = ImportHwlocXml("/nonexistent/node.xml");
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(std::string(node.status().message()), StartsWith("/nonexistent/node.xml: "));
}

struct BadXml {
  std::string name;
  std::string xml;
  std::string error;  // expected message prefix after "bad.xml: "
};

void PrintTo(const BadXml& c, std::ostream* os) { *os << c.name; }

class ImportHwlocXmlBad : public ::testing::TestWithParam<BadXml> {};

TEST_P(ImportHwlocXmlBad, ClearError) {
  auto node = ImportHwlocXmlText(GetParam().xml, "bad.xml");
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(std::string(node.status().message()), StartsWith("bad.xml: " + GetParam().error));
}

const std::string kValid =
    Xml(std::string(kNuma) + Pu("0", "0x00000001") + Pu("1", "0x00000002"));

INSTANTIATE_TEST_SUITE_P(
    Cases, ImportHwlocXmlBad,
    ::testing::Values(
        BadXml{"Empty", "", "not an hwloc XML topology (no <topology> element)"},
        BadXml{"Json", "{\"cpus\": []}", "not an hwloc XML topology (no <topology> element)"},
        BadXml{"Truncated", kValid.substr(0, kValid.size() / 2), "not an hwloc XML topology"},
        BadXml{"Binary", std::string("<topology\0\xff\xfe", 12), "not an hwloc XML topology"},
        BadXml{"NoPu", Xml(kNuma), "no PU objects"},
        BadXml{"PuHugeIndex",
               Xml(std::string(kNuma) + Pu("70000", "0x00000001") + Pu("1", "0x00000002")),
               "line 6: PU object: os_index 70000 is above 65535"},
        // "-1" is what hwloc's strtoul makes of it: 2^32-1, refused before hwloc copies
        // 512 MiB bitmaps for it.
        BadXml{"PuNegativeIndex",
               Xml(std::string(kNuma) + Pu("1", "0x00000002") + Pu("-1", "0x00000001")),
               "line 7: PU object: os_index 4294967295 is above 65535"},
        BadXml{"PuWithoutIndex",
               Xml(std::string(kNuma) + "    <object type=\"PU\" cpuset=\"0x00000001\"/>\n"),
               "line 6: PU object without an os_index"},
        // hwloc reads any type starting with "n" as NUMANode, and decodes &#9; in values.
        BadXml{"NumaNodeHugeIndexSpelledOtherwise",
               Xml("    <object type=\"node\" os_index=\"&#9;99999\" cpuset=\"0x00000003\"/>\n" +
                   Pu("0", "0x00000001")),
               "line 5: NUMANode object: os_index 99999 is above 65535"},
        BadXml{"PuDuplicateIndex",
               Xml(std::string(kNuma) + Pu("1", "0x00000001") + Pu("1", "0x00000002")),
               "PU L#1: second PU with os_index 1"},
        BadXml{"UnknownType",
               Xml(std::string(kNuma) + "    <object type=\"Banana\" os_index=\"0\"/>\n"),
               "not an hwloc XML topology"}),
    [](const ::testing::TestParamInfo<BadXml>& info) { return info.param.name; });

// Corrupting a real export anywhere never crashes: the import succeeds or names the file.
RC_GTEST_PROP(ImportHwlocXmlProperty, CorruptedExportsNeverCrash,
              (std::vector<std::pair<unsigned, char>> edits)) {
  static const std::string kBase = ReadText(TestData("xml/amd-1s2n4ccx.xml"));
  std::string xml = kBase;
  for (const auto& [pos, ch] : edits) {
    size_t at = pos % xml.size();
    if (ch == '\0') {
      xml.erase(at, 1 + pos % 7);  // a deletion
    } else {
      xml[at] = ch;
    }
    if (xml.empty()) xml = "x";
  }
  auto node = ImportHwlocXmlText(xml, "fuzz.xml");
  if (!node.ok()) {
    RC_ASSERT(std::string(node.status().message()).rfind("fuzz.xml: ", 0) == 0);
  }
}

}  // namespace
}  // namespace podtopo
