// Drives the built `podtopo serve` binary: socket mode, graceful SIGTERM, bad flags.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "gtest/gtest.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "podresources/v1/api.grpc.pb.h"
#include "serve/test_util.h"
#include "testing/process.h"
#include "testing/testing.h"

namespace podtopo::serve {
namespace {

using testutil::TempDir;
using testutil::WaitFor;

using ::podtopo::testing::SpawnProcess;
using ::podtopo::testing::WaitExit;

TEST(ServeBinaryTest, ServesOn0600SocketAndShutsDownGracefullyOnSigterm) {
  TempDir dir;
  std::string socket = dir.path() + "/pod-resources/kubelet.sock";
  std::string pods = dir.path() + "/pods";
  std::filesystem::create_directories(pods);
  testutil::WriteManifest(pods, "mixed.yaml",
                          *ReadFile(::podtopo::testing::SourceDir() +
                                    "/docs/examples/pod-scope-mixed.yaml"));
  pid_t pid = SpawnProcess({PODTOPO_BINARY, "serve", "--socket", socket, "--pods-dir", pods,
                     "--state-dir", dir.path() + "/state"},
                    dir.path() + "/log");
  auto stub = v1::PodResourcesLister::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  v1::ListPodResourcesResponse r;
  ASSERT_TRUE(WaitFor([&] {
    grpc::ClientContext ctx;
    r.Clear();
    return stub->List(&ctx, {}, &r).ok() && r.pod_resources_size() == 1;
  })) << *ReadFile(dir.path() + "/log");
  EXPECT_EQ(r.pod_resources(0).cpu_ids_size(), 4);
  struct stat st;
  ASSERT_EQ(stat(socket.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);

  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_EQ(WaitExit(pid), 0);
  EXPECT_NE(access(socket.c_str(), F_OK), 0) << "socket removed";
  std::string log = *ReadFile(dir.path() + "/log");
  EXPECT_NE(log.find("SIGTERM"), std::string::npos) << log;
  // The allocation survives in the state dir.
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/state/cpu_manager_state"));
}

TEST(ServeBinaryTest, BadFlagsExitOneNamingTheFlag) {
  TempDir dir;
  pid_t pid = SpawnProcess({PODTOPO_BINARY, "serve", "--socket", dir.path() + "/s.sock", "--pods-dir",
                     dir.path() + "/pods", "--metrics-addr", "127.0.0.1:nope"},
                    dir.path() + "/log");
  EXPECT_EQ(WaitExit(pid), 1);
  EXPECT_NE(ReadFile(dir.path() + "/log")->find("--metrics-addr"), std::string::npos);
}

}  // namespace
}  // namespace podtopo::serve
