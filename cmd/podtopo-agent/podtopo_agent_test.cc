// podtopo-agent, the program the DaemonSet and the systemd unit run: the flags and errors of
// `podtopo agent`, and none of the libraries it links statically loaded at run time (its
// memory, tests/agent/agent_rss_test.py, depends on it).

#include <regex>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

testing::CommandResult Sh(const std::string& command) { return testing::RunCommand(command); }

// The long flags a --help text lists.
std::set<std::string> Flags(const std::string& help) {
  std::set<std::string> flags;
  std::regex flag("(--[a-z][a-z-]*)");
  for (auto it = std::sregex_iterator(help.begin(), help.end(), flag); it != std::sregex_iterator();
       ++it) {
    flags.insert((*it)[1]);
  }
  flags.erase("--help");
  flags.erase("--version");
  return flags;
}

TEST(PodtopoAgentTest, TakesTheFlagsOfPodtopoAgent) {
  auto alone = Sh(std::string(PODTOPO_AGENT_BINARY) + " --help");
  auto sub = Sh(std::string(PODTOPO_BINARY) + " agent --help");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  EXPECT_NE(alone.out.find("podtopo-agent"), std::string::npos) << alone.out;
  std::set<std::string> flags = Flags(alone.out);
  EXPECT_TRUE(flags.count("--podresources-socket") && flags.count("--kubeconfig") &&
              flags.count("--metrics-addr"))
      << alone.out;
  EXPECT_EQ(flags, Flags(sub.out));
}

TEST(PodtopoAgentTest, VersionNamesTheProgram) {
  auto r = Sh(std::string(PODTOPO_AGENT_BINARY) + " --version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("podtopo-agent 0.1.0", 0), 0u) << r.out;
}

TEST(PodtopoAgentTest, BadFlagsExitOneNamingTheFlag) {
  // The same checks as `podtopo agent`: nothing starts.
  auto r = Sh(std::string(PODTOPO_AGENT_BINARY) +
               " --metrics-addr 127.0.0.1:0 --interval 0s --podresources-socket /nonexistent");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--interval \"0s\""), std::string::npos) << r.err;
  r = Sh(std::string(PODTOPO_AGENT_BINARY) + " --metrics-addr 127.0.0.1:0 --nrt-out");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--nrt-out"), std::string::npos) << r.err;
  r = Sh(std::string(PODTOPO_AGENT_BINARY) + " --metrics-addr 127.0.0.1:0 --no-such-flag");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--no-such-flag"), std::string::npos) << r.err;
  r = Sh(std::string(PODTOPO_AGENT_BINARY) + " agent --metrics-addr 127.0.0.1:0");  // a habit
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("without the word agent"), std::string::npos) << r.err;
}

TEST(PodtopoAgentTest, LoadsNoGrpcProtobufAbseilOrYamlCppLibrary) {
  // The dynamic loader lists what it would load (what ldd does) and exits.
  auto r = Sh("LD_TRACE_LOADED_OBJECTS=1 " + std::string(PODTOPO_AGENT_BINARY));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.out.find("libc.so"), std::string::npos) << r.out;
  for (const char* lib : {"libgrpc", "libgpr", "libprotobuf", "libabsl_", "libyaml-cpp", "libre2",
                          "libcares", "libupb", "libtcmalloc"}) {
    EXPECT_EQ(r.out.find(lib), std::string::npos)
        << lib << " is loaded: the link did not take its static archive "
        << "(cmake/link_static_archives.sh)\n"
        << r.out;
  }
}

}  // namespace
}  // namespace podtopo
