// podtopo probe and probe diff in process: the contract's exit codes (0, 3 over
// --max-latency, 1 bad input naming the flag), -o json, and diff of two real reports.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/cli_testing.h"
#include "nlohmann/json.hpp"
#include "testing/testing.h"

namespace podtopo::cli {
namespace {

// Short runs: 200ms of wake-ups, a 16 MiB chase buffer.
std::vector<std::string> Short(std::vector<std::string> more) {
  std::vector<std::string> args = {"probe", "--duration=200ms", "--buffer=16M"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(ProbeCommand, JsonReportExitsZero) {
  CliResult r = RunCli(Short({"-o", "json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"cpus", "mems", "schedFifo", "memoryLatencyNs", "wakeup",
                          "involuntarySwitches", "bufferBytes"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
}

TEST(ProbeCommand, MaxLatencyCrossedExitsThreeAndTheTableSaysWhere) {
  CliResult r = RunCli(Short({"--max-latency=1ns", "--no-memory", "--cpus=0"}));
  EXPECT_EQ(r.code, kExitRejected) << r.err;
  EXPECT_NE(r.out.find("max over --max-latency 1ns"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("over --max-latency 1ns on CPU 0"), std::string::npos) << r.out;
}

TEST(ProbeCommand, BadInputExitsOneNamingTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"probe", "--cpus=4096"}, "podtopo: --cpus 4096: CPU 4096 is not among the CPUs"},
           {{"probe", "--mems=77"}, "podtopo: --mems 77: NUMA node 77 does not exist here"},
           {{"probe", "--interval=1"}, "podtopo: --interval 1: time: missing unit"},
           {{"probe", "--duration=soon"}, "podtopo: --duration soon: time: invalid duration"},
           {{"probe", "--max-latency=-5us"}, "podtopo: --max-latency -5us: must be above 0s"},
           {{"probe", "-o", "yaml"}, "podtopo: --output: yaml not in {table,json}"},
       }) {
    CliResult r = RunCli(c.args);
    EXPECT_EQ(r.code, kExitBadInput) << c.args.back();
    EXPECT_EQ(r.err.rfind(c.message, 0), 0u) << r.err;
    EXPECT_EQ(r.out, "") << c.args.back();
  }
}

TEST(ProbeCommand, DiffOfTwoRealReports) {
  std::string dir = testing::MakeTempDir("probe-diff");
  for (const char* name : {"before", "after"}) {
    CliResult r = RunCli(Short({"-o", "json", "--cpus=0"}));
    ASSERT_EQ(r.code, 0) << r.err;
    std::ofstream(dir + "/" + name + ".json") << r.out;
  }
  CliResult d = RunCli({"probe", "diff", dir + "/before.json", dir + "/after.json"});
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_NE(d.out.find("MEMORY LATENCY (ns per load)"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("WAKE-UP LATENCY (us)"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("figure"), std::string::npos) << d.out;
  CliResult j = RunCli({"probe", "diff", "-o", "json", dir + "/before.json", dir + "/after.json"});
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["wakeup"][0]["cpu"], "0");
  std::ofstream(dir + "/bad.json") << "{\"wakeup\": {}}";
  CliResult bad = RunCli({"probe", "diff", dir + "/bad.json", dir + "/after.json"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("bad.json: \"memoryLatencyNs\" missing or not an object"),
            std::string::npos)
      << bad.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace podtopo::cli
