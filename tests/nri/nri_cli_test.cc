// `podtopo nri` from outside: the contract's flags, bad flags, and SIGTERM while the runtime is
// not there yet.
#include <signal.h>

#include <chrono>
#include <thread>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "testing/process.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

TEST(NriCli, HelpListsEveryContractFlag) {
  auto r = testing::RunCommand(fmt::format("{} nri --help", PODTOPO_BINARY));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* flag : {"--socket", "--config", "--node", "--state-dir", "--name", "--index"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag << " missing from:\n" << r.out;
  }
  EXPECT_NE(r.out.find("--name TEXT=podtopo"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--index TEXT=10"), std::string::npos) << r.out;
  auto top = testing::RunCommand(fmt::format("{} --help", PODTOPO_BINARY));
  EXPECT_NE(top.out.find("\n  nri "), std::string::npos) << top.out;
}

TEST(NriCli, SocketIsRequired) {
  auto r = testing::RunCommand(fmt::format("{} nri", PODTOPO_BINARY));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--socket"), std::string::npos) << r.err;
}

TEST(NriCli, BadIndexAndNameAreRefusedBeforeConnecting) {
  auto r = testing::RunCommand(fmt::format("{} nri --socket /nonexistent.sock --index 7", PODTOPO_BINARY));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--index \"7\": expected two digits"), std::string::npos) << r.err;
  auto n = testing::RunCommand(fmt::format("{} nri --socket /x.sock --name 'a b'", PODTOPO_BINARY));
  EXPECT_EQ(n.exit_code, 1);
  EXPECT_NE(n.err.find("--name"), std::string::npos) << n.err;
}

TEST(NriCli, BadConfigNamesTheFile) {
  std::string dir = testing::MakeTempDir("nri-cli");
  std::string cfg = dir + "/bad.yaml";
  ASSERT_EQ(testing::RunCommand(fmt::format("printf 'cpuManagerPolicy: [\\n' > {}", cfg)).exit_code, 0);
  auto r = testing::RunCommand(fmt::format("{} nri --socket /x.sock --config {}", PODTOPO_BINARY, cfg));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.yaml"), std::string::npos) << r.err;
}

TEST(NriCli, WaitsForTheRuntimeAndStopsCleanlyOnSigterm) {
  std::string dir = testing::MakeTempDir("nri-cli");
  std::string log = dir + "/nri.log";
  pid_t pid = testing::SpawnProcess({PODTOPO_BINARY, "nri", "--socket", dir + "/absent.sock",
                                     "--node", "preset:demo", "--state-dir", dir + "/state"},
                                    log);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (testing::ReadFileOrEmpty(log).find("retrying every 500 ms") == std::string::npos) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << testing::ReadFileOrEmpty(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGTERM);
  EXPECT_EQ(testing::WaitExit(pid), 0) << testing::ReadFileOrEmpty(log);
  std::string out = testing::ReadFileOrEmpty(log);
  EXPECT_NE(out.find("absent.sock"), std::string::npos) << out;
  EXPECT_NE(out.find("containers keep their cpusets"), std::string::npos) << out;
}

}  // namespace
}  // namespace podtopo
