#include "cri/cri_client.h"

#include <unistd.h>

#include <filesystem>

#include "grpcpp/grpcpp.h"

#include "gtest/gtest.h"

namespace podtopo::cri {
namespace {

TEST(CriClientEndpoint, AcceptsUnixUrisAndPaths) {
  for (const char* ok : {"unix:///run/containerd/containerd.sock", "/run/containerd.sock",
                         "unix://relative.sock", "unix:relative.sock", "sv/containerd.sock"}) {
    EXPECT_TRUE(CriClient::Connect(ok, {}).ok()) << ok;
  }
}

TEST(CriClientEndpoint, RejectsOtherForms) {
  for (const char* bad : {"", "tcp://1.2.3.4:5", "unix://", "unix:"}) {
    auto client = CriClient::Connect(bad, {});
    ASSERT_FALSE(client.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(client.status())) << bad;
    EXPECT_NE(client.status().message().find("--cri"), absl::string_view::npos)
        << client.status();
  }
}

// `--cri sv/containerd.sock`: the relative path is dialled (not host "sv"), so a runtime
// there answers.
TEST(CriClientEndpoint, RelativePathReachesTheRuntime) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("podtopo-cri-rel-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "sv");
  grpc::ServerBuilder builder;
  ::runtime::v1::RuntimeService::Service service;  // every call: UNIMPLEMENTED
  builder.AddListeningPort("unix://" + (dir / "sv/containerd.sock").string(),
                           grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  auto client = CriClient::Connect("unix://sv/containerd.sock",
                                   {.timeout = std::chrono::milliseconds(3000)});
  absl::Status version = client.ok() ? (*client)->Version().status() : client.status();
  std::filesystem::current_path(cwd);
  server->Shutdown();
  std::filesystem::remove_all(dir);
  // The server answered (it implements nothing): not "unavailable" after the deadline.
  EXPECT_TRUE(absl::IsUnimplemented(version)) << version;
}

TEST(CriClient, AbsentRuntimeIsUnavailableAndNamesTheRpc) {
  std::string sock = (std::filesystem::temp_directory_path() / "podtopo-no-such-runtime.sock");
  auto client = CriClient::Connect("unix://" + sock, {.timeout = std::chrono::milliseconds(300)});
  ASSERT_TRUE(client.ok()) << client.status();
  auto v = (*client)->Version();
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(IsRuntimeUnavailable(v.status())) << v.status();
  EXPECT_NE(v.status().message().find("CRI Version"), absl::string_view::npos) << v.status();
  auto img = (*client)->ImagePresent("docker.io/library/busybox:latest");
  ASSERT_FALSE(img.ok());
  EXPECT_NE(img.status().message().find("CRI ImageStatus"), absl::string_view::npos);
}

TEST(IsRuntimeUnavailable, IncludesContainerdStarting) {
  EXPECT_TRUE(IsRuntimeUnavailable(
      FromGrpc("ListPodSandbox",
               grpc::Status(grpc::StatusCode::UNKNOWN, "server is not initialized yet"))));
  EXPECT_FALSE(IsRuntimeUnavailable(
      FromGrpc("CreateContainer", grpc::Status(grpc::StatusCode::UNKNOWN, "runc failed"))));
  EXPECT_FALSE(IsRuntimeUnavailable(absl::NotFoundError("x")));
}

TEST(FromGrpc, KeepsTheCode) {
  absl::Status s = FromGrpc("StartContainer", grpc::Status(grpc::StatusCode::NOT_FOUND, "gone"));
  EXPECT_TRUE(absl::IsNotFound(s));
  EXPECT_EQ(s.message(), "CRI StartContainer: NOT_FOUND: gone");
  EXPECT_TRUE(FromGrpc("X", grpc::Status::OK).ok());
}

}  // namespace
}  // namespace podtopo::cri
