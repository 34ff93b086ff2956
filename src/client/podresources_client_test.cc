// PodResourcesClient against an in-process fake PodResourcesLister on a unix socket, and the
// errors before connecting (no socket, not a socket, stale socket, permission denied).
#include "client/podresources_client.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "podresources/v1alpha1/api.grpc.pb.h"

namespace podtopo::client {
namespace {

using ::testing::HasSubstr;

std::string Message(const absl::Status& s) { return std::string(s.message()); }

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "podtopo-client-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A fake kubelet: List/Get/GetAllocatable answer from fields; `status` (when set) is returned
// by every call instead; `delay` holds every answer.
class FakeLister final : public v1::PodResourcesLister::Service {
 public:
  v1::ListPodResourcesResponse list;
  v1::AllocatableResourcesResponse allocatable;
  grpc::Status status = grpc::Status::OK;
  std::chrono::milliseconds delay{0};

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* out) override {
    std::this_thread::sleep_for(delay);
    if (!status.ok()) return status;
    *out = list;
    return grpc::Status::OK;
  }
  grpc::Status Get(grpc::ServerContext*, const v1::GetPodResourcesRequest* req,
                   v1::GetPodResourcesResponse* out) override {
    std::this_thread::sleep_for(delay);
    if (!status.ok()) return status;
    for (const auto& p : list.pod_resources()) {
      if (p.name() == req->pod_name() && p.namespace_() == req->pod_namespace()) {
        *out->mutable_pod_resources() = p;
        return grpc::Status::OK;
      }
    }
    // The kubelet's words and code (server_v1.go).
    return grpc::Status(grpc::StatusCode::UNKNOWN, "pod " + req->pod_name() + " in namespace " +
                                                       req->pod_namespace() + " not found");
  }
  grpc::Status GetAllocatableResources(grpc::ServerContext*, const v1::AllocatableResourcesRequest*,
                                       v1::AllocatableResourcesResponse* out) override {
    std::this_thread::sleep_for(delay);
    if (!status.ok()) return status;
    *out = allocatable;
    return grpc::Status::OK;
  }
};

class ClientTest : public ::testing::Test {
 protected:
  void Start(grpc::Service* service) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(service);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
  }
  ClientOptions Options(int timeout_ms = 5000) {
    return ClientOptions{.socket = socket_, .timeout = std::chrono::milliseconds(timeout_ms)};
  }

  TempDir dir_;
  std::string socket_ = dir_ / "kubelet.sock";
  FakeLister fake_;
  std::unique_ptr<grpc::Server> server_;
};

v1::PodResources Pod(const std::string& ns, const std::string& name) {
  v1::PodResources p;
  p.set_namespace_(ns);
  p.set_name(name);
  for (int id : {2, 3, 4, 5}) p.add_cpu_ids(id);
  auto* c = p.add_containers();
  c->set_name("main-app");
  c->add_cpu_ids(2);
  c->add_cpu_ids(3);
  return p;
}

TEST_F(ClientTest, ListGetAndAllocatable) {
  *fake_.list.add_pod_resources() = Pod("default", "pod-scope-mixed");
  *fake_.list.add_pod_resources() = Pod("kube-system", "other");
  for (int id = 1; id < 16; ++id) fake_.allocatable.add_cpu_ids(id);
  Start(&fake_);
  auto client = PodResourcesClient::Connect(Options());
  ASSERT_TRUE(client.ok()) << client.status();
  auto list = (*client)->List();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->pod_resources_size(), 2);
  EXPECT_EQ(list->pod_resources(1).name(), "other");
  auto pod = (*client)->Get("default", "pod-scope-mixed");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->cpu_ids_size(), 4);
  EXPECT_EQ(pod->containers(0).cpu_ids_size(), 2);
  auto alloc = (*client)->GetAllocatableResources();
  ASSERT_TRUE(alloc.ok());
  EXPECT_EQ(alloc->cpu_ids_size(), 15);
}

// A socket path relative to the working directory (`client --socket sv/kubelet.sock`) is
// dialled as that path, at once: "unix://sv/kubelet.sock" would name host "sv" and wait for
// the whole timeout.
TEST_F(ClientTest, RelativeSocketPath) {
  Start(&fake_);
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(std::filesystem::path(socket_).parent_path().parent_path());
  const std::string relative =
      std::filesystem::path(socket_).parent_path().filename().string() + "/kubelet.sock";
  auto client = PodResourcesClient::Connect({.socket = relative,
                                             .timeout = std::chrono::milliseconds(2000)});
  const bool listed = client.ok() && (*client)->List().ok();
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE(listed);
}

TEST_F(ClientTest, UnknownPodIsNotFound) {
  Start(&fake_);
  auto client = PodResourcesClient::Connect(Options());
  ASSERT_TRUE(client.ok());
  auto pod = (*client)->Get("default", "nope");
  ASSERT_EQ(pod.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(pod.status()), HasSubstr("pod nope in namespace default not found"));
}

TEST_F(ClientTest, RateLimitIsResourceExhaustedWithAHint) {
  fake_.status = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "rejected by rate limit");
  Start(&fake_);
  auto client = PodResourcesClient::Connect(Options());
  ASSERT_TRUE(client.ok());
  auto list = (*client)->List();
  ASSERT_EQ(list.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Message(list.status()), HasSubstr("List on " + socket_ + ": rejected by rate limit"));
  EXPECT_THAT(Message(list.status()), HasSubstr("retry later"));
}

TEST_F(ClientTest, FailedPreconditionKeepsTheServersWords) {
  fake_.status = grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "state not restored yet");
  Start(&fake_);
  auto client = PodResourcesClient::Connect(Options());
  ASSERT_TRUE(client.ok());
  auto alloc = (*client)->GetAllocatableResources();
  ASSERT_EQ(alloc.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(alloc.status()), HasSubstr("GetAllocatableResources on " + socket_ +
                                                 ": FailedPrecondition: state not restored yet"));
}

TEST_F(ClientTest, SlowServerHitsTheDeadline) {
  fake_.delay = std::chrono::milliseconds(1500);
  Start(&fake_);
  auto client = PodResourcesClient::Connect(Options(300));
  ASSERT_TRUE(client.ok()) << client.status();
  auto list = (*client)->List();
  ASSERT_EQ(list.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(Message(list.status()), HasSubstr("no answer within 300 ms"));
}

// A very old kubelet served only v1alpha1.PodResourcesLister.
class V1alpha1Only final : public v1alpha1::PodResourcesLister::Service {};

TEST_F(ClientTest, ServerWithoutTheServiceIsUnimplemented) {
  V1alpha1Only old;
  Start(&old);
  auto client = PodResourcesClient::Connect(Options());
  ASSERT_TRUE(client.ok()) << client.status();
  auto list = (*client)->List();
  ASSERT_EQ(list.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Message(list.status()), HasSubstr("an older kubelet?"));
}

TEST_F(ClientTest, ServerGoneAfterConnectingIsUnavailable) {
  Start(&fake_);
  auto client = PodResourcesClient::Connect(Options(2000));
  ASSERT_TRUE(client.ok());
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
  server_.reset();
  auto list = (*client)->List();
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(list.status().code(), ::testing::AnyOf(absl::StatusCode::kUnavailable,
                                                     absl::StatusCode::kDeadlineExceeded));
  EXPECT_THAT(Message(list.status()), HasSubstr("List on " + socket_));
}

TEST(CheckSocketTest, MissingSocket) {
  TempDir dir;
  absl::Status s = CheckSocket(dir / "kubelet.sock");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Message(s),
            "no PodResources socket at " + (dir / "kubelet.sock") + ": is the kubelet running?");
  auto client = PodResourcesClient::Connect({.socket = dir / "kubelet.sock"});
  EXPECT_EQ(client.status().code(), absl::StatusCode::kNotFound);
}

TEST(CheckSocketTest, RegularFileAndDirectoryAreNotSockets) {
  TempDir dir;
  std::ofstream(dir / "file") << "x";
  absl::Status s = CheckSocket(dir / "file");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(s), HasSubstr("is not a socket (it is a regular file)"));
  s = CheckSocket(dir.path());
  EXPECT_THAT(Message(s), HasSubstr("is not a socket (it is a directory)"));
}

// A socket file whose server is gone (bound, never listening): connect() is refused.
TEST(CheckSocketTest, StaleSocket) {
  TempDir dir;
  std::string path = dir / "kubelet.sock";
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  absl::Status s = CheckSocket(path);
  close(fd);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Message(s), HasSubstr("nothing listens on " + path + " (a stale socket)"));
}

TEST(CheckSocketTest, PathTooLong) {
  std::string path = "/tmp/" + std::string(200, 'x');
  TempDir dir;
  // Needs to exist as a socket to reach the length check: use a symlink with a long name.
  std::string long_dir = dir.path();
  while (long_dir.size() < 120) long_dir += "/dddddddddddddddddddd";
  std::filesystem::create_directories(long_dir);
  std::string short_sock = dir / "s.sock";
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, short_sock.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  std::filesystem::create_symlink(short_sock, long_dir + "/kubelet.sock");
  absl::Status s = CheckSocket(long_dir + "/kubelet.sock");
  close(fd);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(s), HasSubstr("a unix socket path has at most 107"));
}

// The kubelet's socket is 0600 root: another user is refused. As root, the check runs in a
// child that drops to nobody; otherwise the socket is made 0000.
TEST(CheckSocketTest, PermissionDenied) {
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  std::string path = dir / "kubelet.sock";
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  if (geteuid() != 0) {
    ASSERT_EQ(chmod(path.c_str(), 0), 0);
    absl::Status s = CheckSocket(path);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(Message(s), HasSubstr("permission denied on " + path));
    close(fd);
    return;
  }
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(pipefd[0]);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    absl::Status s = CheckSocket(path);
    std::string text = std::to_string(static_cast<int>(s.code())) + " " + Message(s);
    ssize_t ignored = write(pipefd[1], text.data(), text.size());
    (void)ignored;
    _exit(0);
  }
  close(pipefd[1]);
  std::string text;
  char buf[512];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof(buf))) > 0) text.append(buf, n);
  close(pipefd[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  close(fd);
  ASSERT_TRUE(WIFEXITED(wstatus));
  ASSERT_EQ(WEXITSTATUS(wstatus), 0) << "could not drop to uid 65534";
  EXPECT_THAT(text,
              HasSubstr(std::to_string(static_cast<int>(absl::StatusCode::kPermissionDenied)) +
                        " permission denied on " + path));
  EXPECT_THAT(text, HasSubstr("mode 0600"));
}

// A directory above the socket that this user cannot search.
TEST(CheckSocketTest, UnsearchableDirectoryIsPermissionDenied) {
  if (geteuid() == 0) {
    GTEST_SKIP() << "root searches every directory; covered by PermissionDenied";
  }
  TempDir dir;
  std::filesystem::create_directories(dir / "pod-resources");
  ASSERT_EQ(chmod((dir / "pod-resources").c_str(), 0), 0);
  absl::Status s = CheckSocket(dir / "pod-resources/kubelet.sock");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  chmod((dir / "pod-resources").c_str(), 0755);
}

}  // namespace
}  // namespace podtopo::client
