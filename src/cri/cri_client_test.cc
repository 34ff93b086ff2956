#include "cri/cri_client.h"

#include <filesystem>

#include "gtest/gtest.h"

namespace podtopo::cri {
namespace {

TEST(ValidateEndpoint, AcceptsAbsoluteUnixSocket) {
  EXPECT_TRUE(ValidateEndpoint("unix:///run/containerd/containerd.sock").ok());
}

TEST(ValidateEndpoint, RejectsOtherForms) {
  for (const char* bad : {"", "/run/containerd.sock", "tcp://1.2.3.4:5", "unix://relative.sock",
                          "unix://"}) {
    absl::Status s = ValidateEndpoint(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad;
    EXPECT_NE(s.message().find("--cri"), absl::string_view::npos) << s;
  }
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
