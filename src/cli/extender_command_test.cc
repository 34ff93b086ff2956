// podtopo extender's flags in process: every bad value is refused with exit 1 and a message
// naming the flag, before anything connects or listens (docs/scheduler.md).
#include <cstdlib>
#include <fstream>
#include <string>

#include "cli/cli_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "netinet/in.h"
#include "sys/socket.h"
#include "unistd.h"

namespace podtopo::cli {
namespace {

using ::testing::HasSubstr;

// A kubeconfig for a server nobody answers at (the informers retry in the background).
std::string UnreachableKubeconfig() {
  std::string path = ::podtopo::testing::MakeTempDir("podtopo-extender-cli") + "/kubeconfig";
  std::ofstream(path) << "apiVersion: v1\nkind: Config\n"
                         "clusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\", "
                         "insecure-skip-tls-verify: true}}]\n"
                         "users: [{name: u, user: {token: t}}]\n"
                         "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                         "current-context: x\n";
  return path;
}

class ExtenderCommandTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("KUBERNETES_SERVICE_HOST"); }
};

TEST_F(ExtenderCommandTest, BadListenValuesNameTheFlag) {
  for (const char* bad : {"./extender.sock", "/run/x.sock", "http://127.0.0.1:8888", "localhost",
                          "127.0.0.1:70000", ""}) {
    CliResult r = RunCli({"extender", "--listen", bad, "--kubeconfig", UnreachableKubeconfig()});
    EXPECT_EQ(r.code, 1) << bad;
    EXPECT_THAT(r.err, HasSubstr("--listen")) << bad << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("expected HOST:PORT")) << r.err;
  }
}

TEST_F(ExtenderCommandTest, CredentialsAreRequiredOutsideAPod) {
  CliResult r = RunCli({"extender", "--listen", "127.0.0.1:0"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--kubeconfig: required outside a pod")) << r.err;
  r = RunCli({"extender", "--listen", "127.0.0.1:0", "--kubeconfig", "/nonexistent/kubeconfig"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/kubeconfig")) << r.err;
}

TEST_F(ExtenderCommandTest, BadValuesOfTheOtherFlags) {
  const std::string k = UnreachableKubeconfig();
  struct Case {
    std::vector<std::string> flags;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"--reservation-ttl", "5"}, "--reservation-ttl \"5\""},
           {{"--reservation-ttl", "500ms"}, "at least 1s"},
           {{"--max-request-bytes", "12k"}, "--max-request-bytes \"12k\""},
           {{"--max-request-bytes", "10"}, "from 1024"},
           {{"--max-nodes", "0"}, "--max-nodes"},
           {{"--threads", "0"}, "--threads 0"},
           {{"--node-pool", "/nonexistent/pool.yaml"}, "/nonexistent/pool.yaml"},
           {{"--log-level", "loud"}, "--log-level"}}) {
    std::vector<std::string> args = {"extender", "--listen", "127.0.0.1:0", "--kubeconfig", k};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    CliResult r = RunCli(args);
    EXPECT_EQ(r.code, 1) << c.flags[0];
    EXPECT_THAT(r.err, HasSubstr(c.says)) << c.flags[0] << ": " << r.err;
  }
}

TEST_F(ExtenderCommandTest, APortInUseIsSaidSo) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string port = std::to_string(ntohs(a.sin_port));
  CliResult r = RunCli({"extender", "--listen", "127.0.0.1:" + port, "--kubeconfig",
                        UnreachableKubeconfig(), "--log-level", "off"});
  close(fd);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--listen 127.0.0.1:" + port)) << r.err;
  EXPECT_THAT(r.err, HasSubstr("in use")) << r.err;
}

}  // namespace
}  // namespace podtopo::cli
