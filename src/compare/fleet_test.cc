#include "compare/fleet.h"

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "topology/presets.h"
#include "topology/topology_json.h"
#include "util/file.h"

namespace podtopo::compare {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Names(const std::vector<FleetNode>& fleet) {
  std::vector<std::string> out;
  for (const auto& n : fleet) out.push_back(n.name);
  return out;
}

std::string TopologyTestdata() { return testing::SourceDir() + "/src/topology/testdata"; }

TEST(LoadFleet, NamesCountsAndUnnamedSpecs) {
  auto fleet = LoadFleet({"a=preset:demo", "big=preset:dual-socket-ht*3", "preset:single-socket-ht"});
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  EXPECT_THAT(Names(*fleet),
              ElementsAre("a", "big-0", "big-1", "big-2", "preset:single-socket-ht"));
  EXPECT_EQ((*fleet)[0].topology->cpus.AllCpus().Size(), 64);
  EXPECT_EQ((*fleet)[1].topology->cpus.AllCpus().Size(), 12);
  EXPECT_EQ((*fleet)[4].topology->cpus.AllCpus().Size(), 8);
  // The nodes of one SPEC*COUNT share one topology, read once.
  EXPECT_EQ((*fleet)[1].topology, (*fleet)[3].topology);
  EXPECT_EQ((*fleet)[2].source, "preset:dual-socket-ht");

  auto unnamed = LoadFleet({"preset:demo*2"});
  ASSERT_TRUE(unnamed.ok()) << unnamed.status();
  EXPECT_THAT(Names(*unnamed), ElementsAre("preset:demo-0", "preset:demo-1"));
}

TEST(LoadFleet, BadFlagsNameTheFlag) {
  auto dup = LoadFleet({"a=preset:demo", "a=preset:dual-socket-ht"});
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(dup.status().message(),
              HasSubstr("--node a=preset:dual-socket-ht: a node named \"a\" is already given by "
                        "--node a=preset:demo"));
  // x-1 from x*2 collides with a node named x-1.
  EXPECT_FALSE(LoadFleet({"x=preset:demo*2", "x-1=preset:demo"}).ok());
  for (const char* bad : {"preset:demo*0", "preset:demo*", "preset:demo*1x", "preset:demo*100001"}) {
    auto r = LoadFleet({bad});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr(std::string("--node ") + bad + ": the count"));
  }
  auto unknown = LoadFleet({"n=preset:nope"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("--node n=preset:nope: unknown preset"));
  EXPECT_THAT(LoadFleet({"=preset:demo"}).status().message(), HasSubstr("name before '='"));
  EXPECT_THAT(LoadFleet({}).status().message(), HasSubstr("no --node"));
}

TEST(LoadFleet, DirectoryOfNodeFiles) {
  std::string dir = testing::MakeTempDir("podtopo-fleet");
  auto demo = Preset("demo");
  ASSERT_TRUE(demo.ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/b-json.json", WriteTopologyJson(*demo)).ok());
  fs::copy_file(TopologyTestdata() + "/xml/intel-2s4c2t.xml", dir + "/a-xml.xml");
  fs::copy(TopologyTestdata() + "/sysfs/intel-2s4c2t", dir + "/c-sysfs",
           fs::copy_options::recursive);
  ASSERT_TRUE(WriteFileAtomically(dir + "/.hidden", "not a node").ok());
  auto fleet = LoadFleet({dir});
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  EXPECT_THAT(Names(*fleet), ElementsAre("a-xml", "b-json", "c-sysfs"));
  EXPECT_EQ((*fleet)[1].topology->cpus.AllCpus().Size(), 64);
  EXPECT_EQ((*fleet)[2].source, dir + "/c-sysfs");
  EXPECT_EQ((*fleet)[0].topology->cpus.AllCpus().Size(),
            (*fleet)[2].topology->cpus.AllCpus().Size());

  // A directory takes no NAME= or *COUNT.
  EXPECT_THAT(LoadFleet({"x=" + dir}).status().message(), HasSubstr("named after their files"));
  // A bad file stops the whole fleet, naming the flag and the file.
  ASSERT_TRUE(WriteFileAtomically(dir + "/d-bad.json", "{\"cpus\": [{\"id\": \"x\"}]}").ok());
  auto bad = LoadFleet({dir});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("--node " + dir + ": " + dir + "/d-bad.json"));
  fs::remove(dir + "/d-bad.json");
  fs::create_directory(dir + "/e-empty");
  EXPECT_THAT(LoadFleet({dir}).status().message(),
              HasSubstr(dir + "/e-empty: a directory that is not a sysfs dump"));
  fs::remove_all(dir);
  fs::create_directory(dir);
  EXPECT_THAT(LoadFleet({dir}).status().message(), HasSubstr("holds no node file"));
  fs::remove_all(dir);
}

Pod MakePod(const std::string& name, const std::string& node) {
  Pod p;
  p.name = name;
  p.node_name = node;
  p.source = "pods.yaml#1";
  return p;
}

TEST(AssignPods, ByNodeNameOneNodeAndFirstFit) {
  auto fleet = LoadFleet({"a=preset:demo", "b=preset:demo"});
  ASSERT_TRUE(fleet.ok());
  std::vector<Pod> pods = {MakePod("p0", "b"), MakePod("p1", "a")};
  auto where = AssignPods(pods, *fleet, Placement::kByNodeName);
  ASSERT_TRUE(where.ok()) << where.status();
  EXPECT_THAT(*where, ElementsAre(1, 0));

  pods.push_back(MakePod("p2", ""));
  auto missing = AssignPods(pods, *fleet, Placement::kByNodeName);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              HasSubstr("pods.yaml#1: pod default/p2: spec.nodeName: not set"));
  EXPECT_THAT(missing.status().message(), HasSubstr("--place first-fit"));
  auto first_fit = AssignPods(pods, *fleet, Placement::kFirstFit);
  ASSERT_TRUE(first_fit.ok());
  EXPECT_THAT(*first_fit, ElementsAre(1, 0, kFirstFitNode));

  // One node takes every pod without a node.
  auto one = LoadFleet({"a=preset:demo"});
  ASSERT_TRUE(one.ok());
  std::vector<Pod> two = {MakePod("p0", ""), MakePod("p1", "a")};
  EXPECT_THAT(AssignPods(two, *one, Placement::kByNodeName).value(), ElementsAre(0, 0));

  pods.push_back(MakePod("p3", "zz"));
  auto unknown = AssignPods(pods, *fleet, Placement::kFirstFit);
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("pods.yaml#1: pod default/p3: spec.nodeName: no --node is named \"zz\" "
                        "(nodes: a, b)"));
}

}  // namespace
}  // namespace podtopo::compare
