// Drives the built `podtopo serve` binary: socket mode, graceful SIGTERM, bad flags.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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

// A spawned process's log ("" until it has written one).
std::string Log(const std::string& path) { return ReadFile(path).value_or(""); }

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

// A second `serve` on the same state dir is refused naming the first (issue 22): it neither
// replaces the first one's live socket nor admits into its checkpoints. `admit --state-dir`
// is refused the same way while the daemon runs.
TEST(ServeBinaryTest, StateDirAndLiveSocketAreNotTakenOver) {
  TempDir dir;
  std::string socket = dir.path() + "/pod-resources/kubelet.sock";
  std::string pods = dir.path() + "/pods";
  std::string state = dir.path() + "/state";
  std::filesystem::create_directories(pods);
  const std::string example = ::podtopo::testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml";
  testutil::WriteManifest(pods, "mixed.yaml", *ReadFile(example));
  pid_t first = SpawnProcess({PODTOPO_BINARY, "serve", "--socket", socket, "--pods-dir", pods,
                              "--state-dir", state},
                             dir.path() + "/log1");
  auto stub = v1::PodResourcesLister::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  auto listed = [&] {
    grpc::ClientContext ctx;
    v1::ListPodResourcesResponse r;
    return stub->List(&ctx, {}, &r).ok() && r.pod_resources_size() == 1;
  };
  ASSERT_TRUE(WaitFor(listed)) << *ReadFile(dir.path() + "/log1");

  // Same socket, same state dir.
  pid_t second = SpawnProcess({PODTOPO_BINARY, "serve", "--socket", socket, "--pods-dir", pods,
                               "--state-dir", state},
                              dir.path() + "/log2");
  EXPECT_EQ(WaitExit(second), 1);
  std::string log2 = *ReadFile(dir.path() + "/log2");
  EXPECT_NE(log2.find("state dir " + state + " is in use by podtopo serve (pid " +
                      std::to_string(first) + ")"),
            std::string::npos)
      << log2;
  // Same socket, another state dir: the live socket is not unlinked as stale.
  pid_t third = SpawnProcess({PODTOPO_BINARY, "serve", "--socket", socket, "--pods-dir", pods,
                              "--state-dir", dir.path() + "/state3"},
                             dir.path() + "/log3");
  EXPECT_EQ(WaitExit(third), 1);
  std::string log3 = *ReadFile(dir.path() + "/log3");
  EXPECT_NE(log3.find("--socket " + socket + " is in use by podtopo serve (pid " +
                      std::to_string(first) + ")"),
            std::string::npos)
      << log3;
  // admit into the daemon's state dir.
  pid_t admit = SpawnProcess({PODTOPO_BINARY, "admit", example, "--state-dir", state},
                             dir.path() + "/log4");
  EXPECT_EQ(WaitExit(admit), 1);
  std::string log4 = *ReadFile(dir.path() + "/log4");
  EXPECT_NE(log4.find("is in use by podtopo serve (pid " + std::to_string(first) + ")"),
            std::string::npos)
      << log4;

  // Readers need no lock: show and explain read the daemon's state dir while it runs.
  auto show = ::podtopo::testing::RunCommand(std::string(PODTOPO_BINARY) + " show --state-dir " +
                                             state);
  EXPECT_EQ(show.exit_code, 0) << show.out << show.err;
  EXPECT_NE(show.out.find("default/pod-scope-mixed  Admitted"), std::string::npos) << show.out;
  auto explain = ::podtopo::testing::RunCommand(std::string(PODTOPO_BINARY) + " explain " +
                                                example + " --state-dir " + state);
  EXPECT_EQ(explain.exit_code, 0) << explain.out << explain.err;
  EXPECT_NE(explain.out.find("already admitted on this node"), std::string::npos) << explain.out;

  EXPECT_TRUE(listed()) << "the first daemon still serves on its socket";
  ASSERT_EQ(kill(first, SIGTERM), 0);
  EXPECT_EQ(WaitExit(first), 0);
  // Once it is gone, the directory is free again.
  pid_t after = SpawnProcess({PODTOPO_BINARY, "admit", example, "--state-dir", state},
                             dir.path() + "/log5");
  EXPECT_EQ(WaitExit(after), 0) << *ReadFile(dir.path() + "/log5");
}

// `nri` takes the state dir as `serve` does (issue 22 item 3): refused while serve holds it, and
// while nri runs (here with no runtime to connect to, as before containerd starts), serve and
// admit are refused naming it.
TEST(ServeBinaryTest, NriAndServeDoNotShareAStateDir) {
  TempDir dir;
  std::string pods = dir.path() + "/pods";
  std::string state = dir.path() + "/state";
  std::filesystem::create_directories(pods);
  const std::string example =
      ::podtopo::testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml";
  testutil::WriteManifest(pods, "mixed.yaml", *ReadFile(example));
  const std::string serve_log = dir.path() + "/serve.log";
  pid_t serve = SpawnProcess({PODTOPO_BINARY, "serve", "--socket", dir.path() + "/k.sock",
                              "--pods-dir", pods, "--state-dir", state, "--node", "preset:demo"},
                             serve_log);
  ASSERT_TRUE(WaitFor([&] { return Log(serve_log).find("ready: watching") != std::string::npos; }))
      << Log(serve_log);
  pid_t nri = SpawnProcess({PODTOPO_BINARY, "nri", "--socket", dir.path() + "/nri.sock",
                            "--state-dir", state, "--node", "preset:demo"},
                           dir.path() + "/nri1.log");
  EXPECT_EQ(WaitExit(nri), 1);
  EXPECT_NE(Log(dir.path() + "/nri1.log")
                .find("state dir " + state + " is in use by podtopo serve (pid " +
                      std::to_string(serve) + ")"),
            std::string::npos)
      << Log(dir.path() + "/nri1.log");
  ASSERT_EQ(kill(serve, SIGTERM), 0);
  EXPECT_EQ(WaitExit(serve), 0);

  // nri holds the directory now.
  const std::string nri_log = dir.path() + "/nri2.log";
  nri = SpawnProcess({PODTOPO_BINARY, "nri", "--socket", dir.path() + "/nri.sock",
                      "--state-dir", state, "--node", "preset:demo"},
                     nri_log);
  ASSERT_TRUE(WaitFor([&] {
    return Log(nri_log).find("placing containers") != std::string::npos;
  })) << Log(nri_log);
  const std::string holder = "is in use by podtopo nri (pid " + std::to_string(nri) + ")";
  ASSERT_TRUE(WaitFor([&] {
    pid_t again = SpawnProcess({PODTOPO_BINARY, "admit", example, "--state-dir", state},
                               dir.path() + "/admit.log");
    return WaitExit(again) == 1 && Log(dir.path() + "/admit.log").find(holder) != std::string::npos;
  })) << Log(dir.path() + "/admit.log") << Log(nri_log);
  pid_t second = SpawnProcess({PODTOPO_BINARY, "serve", "--socket", dir.path() + "/k.sock",
                               "--pods-dir", pods, "--state-dir", state, "--node", "preset:demo"},
                              dir.path() + "/serve2.log");
  EXPECT_EQ(WaitExit(second), 1);
  EXPECT_NE(Log(dir.path() + "/serve2.log").find("state dir " + state + " " + holder),
            std::string::npos)
      << Log(dir.path() + "/serve2.log");
  ASSERT_EQ(kill(nri, SIGTERM), 0);
  EXPECT_EQ(WaitExit(nri), 0) << Log(nri_log);
}

// Warnings about a manifest (skipped kinds, unknown fields) are logged once per read of the
// file, not once more for the restore's first look at it.
TEST(ServeBinaryTest, ManifestWarningsAreLoggedOnce) {
  TempDir dir;
  std::string pods = dir.path() + "/pods";
  std::filesystem::create_directories(pods);
  testutil::WriteManifest(pods, "p.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: typo}
spec:
  containers:
  - name: main
    image: busybox
    resource: {limits: {cpu: "2", memory: 1Gi}}
---
apiVersion: v1
kind: Service
metadata: {name: s}
)");
  pid_t pid = SpawnProcess({PODTOPO_BINARY, "serve", "--socket", dir.path() + "/s.sock",
                            "--pods-dir", pods, "--state-dir", dir.path() + "/state"},
                           dir.path() + "/log");
  ASSERT_TRUE(WaitFor([&] {
    return Log(dir.path() + "/log").find("ready: watching") != std::string::npos;
  })) << Log(dir.path() + "/log");
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_EQ(WaitExit(pid), 0);
  std::string log = *ReadFile(dir.path() + "/log");
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("skipped 1 Service object(s)"), 1u) << log;
  EXPECT_EQ(count("spec.containers[0].resource: unknown field \"resource\" (did you mean "
                  "resources?)"),
            1u)
      << log;
}

// `--socket` relative to the working directory, for serve and client alike (issue 22): the
// client answers at once instead of waiting 10 s for host "sv".
TEST(ServeBinaryTest, RelativeSocketPaths) {
  TempDir dir;
  std::string pods = dir.path() + "/pods";
  std::filesystem::create_directories(pods);
  testutil::WriteManifest(pods, "mixed.yaml",
                          *ReadFile(::podtopo::testing::SourceDir() +
                                    "/docs/examples/pod-scope-mixed.yaml"));
  const std::string relative =
      std::filesystem::relative(dir.path() + "/sv/kubelet.sock").string();
  pid_t serve = SpawnProcess({PODTOPO_BINARY, "serve", "--socket", relative, "--pods-dir", pods},
                             dir.path() + "/log");
  ASSERT_TRUE(WaitFor([&] {
    return Log(dir.path() + "/log").find("ready: watching") != std::string::npos;
  })) << Log(dir.path() + "/log");
  for (const std::string& flag : {relative, "unix://" + relative, "unix:" + relative}) {
    const auto start = std::chrono::steady_clock::now();
    pid_t client = SpawnProcess({PODTOPO_BINARY, "client", "list", "--socket", flag, "--timeout",
                                 "5", "--node", "preset:demo"},
                                dir.path() + "/client.log");
    EXPECT_EQ(WaitExit(client), 0) << flag << ": " << *ReadFile(dir.path() + "/client.log");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4)) << flag;
  }
  ASSERT_EQ(kill(serve, SIGTERM), 0);
  EXPECT_EQ(WaitExit(serve), 0);
}

}  // namespace
}  // namespace podtopo::serve
