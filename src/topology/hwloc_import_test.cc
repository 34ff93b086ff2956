#include "topology/hwloc_import.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/property.h"
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

// A Core object whose PUs two NUMANodes share out (a fuzz finding: the topology written from
// it did not read back) is refused, naming the core, the PUs and the nodes.
TEST(ImportHwlocXml, CoreSplitByNumaNodesIsRefused) {
  // Each PU of the Core is in a Group with its own NUMANode (hwloc keeps that shape).
  auto group = [](const std::string& i, const std::string& set) {
    const std::string sets = "cpuset=\"" + set + "\" complete_cpuset=\"" + set +
                             "\" nodeset=\"" + set + "\" complete_nodeset=\"" + set + "\"";
    return "      <object type=\"Group\" " + sets + ">\n        <object type=\"NUMANode\" os_index=\"" +
           i + "\" " + sets + " local_memory=\"1073741824\"/>\n        <object type=\"PU\" os_index=\"" +
           i + "\" " + sets + "/>\n      </object>\n";
  };
  const std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
      "<topology version=\"2.0\">\n"
      "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x00000003\" "
      "complete_cpuset=\"0x00000003\" allowed_cpuset=\"0x00000003\" nodeset=\"0x00000003\" "
      "complete_nodeset=\"0x00000003\" allowed_nodeset=\"0x00000003\">\n"
      "    <object type=\"Core\" os_index=\"0\" cpuset=\"0x00000003\" "
      "complete_cpuset=\"0x00000003\" nodeset=\"0x00000003\" complete_nodeset=\"0x00000003\">\n" +
      group("0", "0x00000001") + group("1", "0x00000002") +
      "    </object>\n"
      "  </object>\n</topology>\n";
  auto node = ImportHwlocXmlText(xml, "split.xml");
  ASSERT_FALSE(node.ok()) << "imported a core on two NUMA nodes";
  EXPECT_EQ(std::string(node.status().message()),
            "split.xml: Core L#0: its PUs are on different NUMA nodes: PU 0 on NUMANode 0, PU 1 "
            "on NUMANode 1 (a core is on one NUMA node)");
}

// The import child (one per process, forked again after a failure).
using internal::HwlocImportTestAction;

// Whether process `pid` is gone: reaped, not a zombie left behind.
bool ProcessGone(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string line;
    std::getline(stat, line);
    size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z') {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a zombie: not reaped (yet)
      continue;
    }
    return false;
  }
  return false;
}

void ExpectGoodImport(const std::string& name) {
  auto node = ImportHwlocXmlText(kValid, name);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cpus.AllCpus().String(), "0-1");
  EXPECT_EQ(node->source, name);
}

TEST(HwlocImportChild, OneChildServesEveryImport) {
  ExpectGoodImport("a.xml");
  pid_t pid = internal::HwlocImportChildPid();
  ASSERT_GT(pid, 0);
  ExpectGoodImport("b.xml");
  EXPECT_EQ(internal::HwlocImportChildPid(), pid);
  auto bad = ImportHwlocXmlText(Xml(kNuma), "nopu.xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), StartsWith("nopu.xml: no PU objects"));
  EXPECT_EQ(internal::HwlocImportChildPid(), pid);
  ExpectGoodImport("c.xml");
  EXPECT_EQ(internal::HwlocImportChildPid(), pid);
}

TEST(HwlocImportChild, CrashIsAnErrorAndTheNextImportWorks) {
  ExpectGoodImport("before.xml");
  pid_t pid = internal::HwlocImportChildPid();
  auto crashed =
      internal::ImportHwlocXmlInChildForTest(kValid, "crash.xml", HwlocImportTestAction::kCrash);
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(crashed.status().message()),
              StartsWith("crash.xml: not a valid hwloc XML topology (hwloc crashed loading it: "));
  // What the child printed on stderr before it died is in the error.
  EXPECT_THAT(std::string(crashed.status().message()),
              HasSubstr("[hwloc: test: crashing on purpose]"));
  EXPECT_EQ(internal::HwlocImportChildPid(), -1);
  EXPECT_TRUE(ProcessGone(pid));
  ExpectGoodImport("after.xml");
  EXPECT_NE(internal::HwlocImportChildPid(), pid);
}

// An input hwloc 2.9 itself crashes on (SIGSEGV in hwloc_bitmap_compare_first, found by the
// hwloc_xml fuzz target): an error naming the file, then the next import works.
TEST(HwlocImportChild, HwlocCrashingOnAnInputIsAnError) {
  std::string xml = ReadText(testing::SourceDir() +
                             "/fuzz/regressions/hwloc_xml/crash-2d3cf3d767a9485ae500f064a0f9227b84889749");
  ASSERT_FALSE(xml.empty());
  auto node = ImportHwlocXmlText(xml, "crash.xml");
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(std::string(node.status().message()), StartsWith("crash.xml: not "));
  // hwloc 2.9.0 (Debian 12) crashes; a fixed hwloc may refuse the file instead.
  if (std::string(node.status().message()).find("crashed") != std::string::npos) {
    EXPECT_THAT(std::string(node.status().message()),
                StartsWith("crash.xml: not a valid hwloc XML topology (hwloc crashed loading it: "
                           "Segmentation fault)"));
  }
  ExpectGoodImport("after.xml");
}

TEST(HwlocImportChild, ExitWithoutAnswerIsAnError) {
  auto gone =
      internal::ImportHwlocXmlInChildForTest(kValid, "exit.xml", HwlocImportTestAction::kExit);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(gone.status().message(), "exit.xml: the hwloc import process failed");
  ExpectGoodImport("after.xml");
}

TEST(HwlocImportChild, BadAnswerIsAnErrorAndTheChildIsReplaced) {
  ExpectGoodImport("before.xml");
  pid_t pid = internal::HwlocImportChildPid();
  auto bad = internal::ImportHwlocXmlInChildForTest(kValid, "bad-answer.xml",
                                                    HwlocImportTestAction::kBadAnswer);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              StartsWith("bad-answer.xml: bad report from the hwloc import: "));
  EXPECT_TRUE(ProcessGone(pid));
  ExpectGoodImport("after.xml");
  EXPECT_NE(internal::HwlocImportChildPid(), pid);
}

TEST(HwlocImportChild, HangIsKilledAtTheTimeout) {
  ExpectGoodImport("before.xml");
  pid_t pid = internal::HwlocImportChildPid();
  internal::SetHwlocImportTimeoutForTest(1000);
  auto hung =
      internal::ImportHwlocXmlInChildForTest(kValid, "hang.xml", HwlocImportTestAction::kHang);
  internal::SetHwlocImportTimeoutForTest(60000);
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.status().message(), "hang.xml: hwloc did not finish loading it within 1 s");
  EXPECT_TRUE(ProcessGone(pid));
  ExpectGoodImport("after.xml");
}

// A child killed from outside between imports (SIGKILL, the OOM killer) is replaced; writing
// to its closed socket is no SIGPIPE here (the test process keeps SIGPIPE's default action).
TEST(HwlocImportChild, ChildKilledBetweenImportsIsReplaced) {
  ASSERT_EQ(::signal(SIGPIPE, SIG_DFL), SIG_DFL) << "the test wants SIGPIPE's default action";
  for (int round = 0; round < 5; ++round) {
    ExpectGoodImport("before.xml");
    pid_t pid = internal::HwlocImportChildPid();
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    if (round % 2 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ExpectGoodImport("after.xml");
    EXPECT_TRUE(ProcessGone(pid));
  }
}

// The child holds no file of this process: a pipe open when it was forked sees end of file
// as soon as this process closes its write end.
TEST(HwlocImportChild, ChildKeepsNoFileOfTheProcess) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  // Fork a new child now, while the pipe is open.
  auto crashed =
      internal::ImportHwlocXmlInChildForTest(kValid, "crash.xml", HwlocImportTestAction::kCrash);
  ASSERT_FALSE(crashed.ok());
  ExpectGoodImport("forked-with-the-pipe.xml");
  ASSERT_GT(internal::HwlocImportChildPid(), 0);
  ::close(fds[1]);
  char c;
  EXPECT_EQ(::read(fds[0], &c, 1), 0);  // would block while the child held the write end
  ::close(fds[0]);
}

// The child ends when the process that uses it exits (its socket's end of file).
TEST(HwlocImportChild, ChildEndsWithItsProcess) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t user = ::fork();
  ASSERT_GE(user, 0);
  if (user == 0) {
    ::close(fds[0]);
    auto node = ImportHwlocXmlText(kValid, "x.xml");
    pid_t child = node.ok() ? internal::HwlocImportChildPid() : -1;
    (void)!::write(fds[1], &child, sizeof(child));
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t child = -1;
  ASSERT_EQ(::read(fds[0], &child, sizeof(child)), static_cast<ssize_t>(sizeof(child)));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(user, &status, 0), user);
  ASSERT_GT(child, 0);
  // Reparented to init (or a subreaper), which reaps it; gone or a zombie there, not running.
  bool ended = false;
  for (int i = 0; i < 500 && !ended; ++i) {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string line;
    if (!stat || !std::getline(stat, line)) {
      ended = true;
      break;
    }
    size_t paren = line.rfind(')');
    ended = paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(ended) << "import child " << child << " still runs after its process exited";
}

// Run by ChildIsReapedWhenItsProcessExits in a process of its own: imports, writes the
// child's pid, returns (and the process exits normally).
TEST(HwlocImportChild, DISABLED_HelperImportsAndExits) {
  const char* out = std::getenv("PODTOPO_TEST_IMPORT_CHILD_PID_FILE");
  if (out == nullptr) GTEST_SKIP() << "run by ChildIsReapedWhenItsProcessExits";
  ExpectGoodImport("x.xml");
  std::ofstream(out) << internal::HwlocImportChildPid() << "\n";
}

// A process that exits normally reaps its import child: no zombie left to whatever reaps
// orphans (PID 1 of a container may not).
TEST(HwlocImportChild, ChildIsReapedWhenItsProcessExits) {
  std::string file = ::testing::TempDir() + "/import-child-pid-" + std::to_string(::getpid());
  std::string cmd = "PODTOPO_TEST_IMPORT_CHILD_PID_FILE=" + file +
                    " /proc/" + std::to_string(::getpid()) +
                    "/exe --gtest_also_run_disabled_tests "
                    "--gtest_filter=HwlocImportChild.DISABLED_HelperImportsAndExits >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(file);
  pid_t child = -1;
  in >> child;
  std::remove(file.c_str());
  ASSERT_GT(child, 0);
  std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
  EXPECT_FALSE(stat.good()) << "import child " << child << " is still there (a zombie?)";
}

// Several threads importing at once get each their own answer (the child serves them in turn),
// across a crash of the child among them.
TEST(HwlocImportChild, ThreadsImportingAtOnceGetTheirAnswers) {
  struct Case {
    std::string name, xml;
    absl::StatusOr<NodeTopology> want;
  };
  std::vector<Case> cases;
  for (const char* f : {"intel-2s4c2t", "amd-1s2n4ccx", "cpuless-numa"}) {
    std::string xml = ReadText(TestData(std::string("xml/") + f + ".xml"));
    cases.push_back({std::string(f) + ".xml", xml, ImportHwlocXmlText(xml, f + std::string(".xml"))});
  }
  cases.push_back({"nopu.xml", Xml(kNuma), ImportHwlocXmlText(Xml(kNuma), "nopu.xml")});
  cases.push_back({"min.xml", kValid, ImportHwlocXmlText(kValid, "min.xml")});
  for (const auto& c : cases) ASSERT_EQ(c.want.ok(), c.name != "nopu.xml") << c.want.status();
  constexpr int kThreads = 6, kRounds = 12;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        if (t == 0 && r == kRounds / 2) {
          auto crashed = internal::ImportHwlocXmlInChildForTest(kValid, "crash.xml",
                                                                HwlocImportTestAction::kCrash);
          if (crashed.ok()) failures[t] += "the crash import succeeded; ";
          continue;
        }
        const Case& c = cases[static_cast<size_t>(t + r) % cases.size()];
        auto got = ImportHwlocXmlText(c.xml, c.name);
        if (got.ok() != c.want.ok()) {
          failures[t] += c.name + ": " + got.status().ToString() + "; ";
        } else if (!got.ok()) {
          if (got.status() != c.want.status()) failures[t] += got.status().ToString() + "; ";
        } else if (got->cpus.AllCpus() != c.want->cpus.AllCpus() ||
                   got->numa_nodes.size() != c.want->numa_nodes.size() ||
                   got->source != c.name || got->warnings != c.want->warnings) {
          failures[t] += c.name + ": another answer; ";
        } else {
          ExpectSameNode(*got, *c.want);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

// Corrupting a real export anywhere never crashes: the import succeeds or names the file.
PODTOPO_PROPERTY(ImportHwlocXmlProperty, CorruptedExportsNeverCrash,
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
