#include "util/unix_socket.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;

TEST(UnixSocketPathTest, PathsAndUnixUris) {
  EXPECT_EQ(*UnixSocketPath("--socket", "/run/k.sock"), "/run/k.sock");
  EXPECT_EQ(*UnixSocketPath("--socket", "sv/k.sock"), "sv/k.sock");
  EXPECT_EQ(*UnixSocketPath("--socket", "unix:///run/k.sock"), "/run/k.sock");
  EXPECT_EQ(*UnixSocketPath("--socket", "unix:sv/k.sock"), "sv/k.sock");
  // What its writer means; gRPC would read host "sv" and dial /k.sock.
  EXPECT_EQ(*UnixSocketPath("--socket", "unix://sv/k.sock"), "sv/k.sock");
}

TEST(UnixSocketPathTest, ErrorsNameTheFlag) {
  for (const char* bad : {"", "unix://", "unix:", "tcp://127.0.0.1:10250"}) {
    absl::StatusOr<std::string> path = UnixSocketPath("--cri", bad);
    ASSERT_FALSE(path.ok()) << bad;
    EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(path.status().message()), HasSubstr("--cri \"")) << bad;
  }
  absl::StatusOr<std::string> long_path = UnixSocketPath("--socket", "/" + std::string(120, 'x'));
  ASSERT_FALSE(long_path.ok());
  EXPECT_THAT(std::string(long_path.status().message()), HasSubstr("at most 107"));
}

TEST(GrpcUnixTargetTest, RelativePathsStayRelativeAndReservedCharactersAreEscaped) {
  EXPECT_EQ(GrpcUnixTarget("/run/k.sock"), "unix:/run/k.sock");
  EXPECT_EQ(GrpcUnixTarget("sv/kubelet.sock"), "unix:sv/kubelet.sock");
  EXPECT_EQ(GrpcUnixTarget("a b/k%1?.sock"), "unix:a%20b/k%251%3F.sock");
}

class SocketDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "podtopo-sock-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // A socket bound at `path`, listening when `listen_on`; the caller closes it.
  int Bind(const std::string& path, bool listen_on) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    if (listen_on) {
      EXPECT_EQ(listen(fd, 4), 0);
    }
    return fd;
  }
  std::string dir_;
};

constexpr UnixSocketRole kRole{"NRI socket", "containerd", "--socket"};

TEST_F(SocketDir, CheckSaysWhatIsWrong) {
  absl::Status s = CheckUnixSocket(dir_ + "/none.sock", kRole);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "no NRI socket at " + dir_ + "/none.sock: is containerd running?");
  std::ofstream(dir_ + "/file") << "x";
  s = CheckUnixSocket(dir_ + "/file", kRole);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("is not a socket (it is a regular file): pass containerd's NRI socket "
                        "with --socket"));
  int stale = Bind(dir_ + "/stale.sock", false);
  s = CheckUnixSocket(dir_ + "/stale.sock", kRole);
  close(stale);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr("(a stale socket)"));
}

TEST_F(SocketDir, ListenerIsThisProcessOnlyWhileItListens) {
  const std::string path = dir_ + "/live.sock";
  int fd = Bind(path, true);
  EXPECT_EQ(UnixSocketListener(path), getpid());
  EXPECT_TRUE(CheckUnixSocket(path, kRole).ok());
  close(fd);
  EXPECT_EQ(UnixSocketListener(path), std::nullopt);  // the file stays, nobody listens
  EXPECT_EQ(UnixSocketListener(dir_ + "/none.sock"), std::nullopt);
}

// A relative path is checked relative to the working directory.
TEST_F(SocketDir, RelativePath) {
  int fd = Bind(dir_ + "/rel.sock", true);
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  absl::Status s = CheckUnixSocket("rel.sock", kRole);
  std::filesystem::current_path(cwd);
  close(fd);
  EXPECT_TRUE(s.ok()) << s;
}

}  // namespace
}  // namespace podtopo
