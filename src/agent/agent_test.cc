// `podtopo agent` end to end: the built binary against the built `podtopo serve` as the kubelet
// (v1.37 and `--compat 1.36`), its metrics against `podtopo client`'s numbers, the
// NodeResourceTopology file against /nrt, the kubelet going away and coming back, SIGTERM; and
// in process, against a PodResources server of the test's own, a malformed answer and the live
// picture in headless Chromium.
#include "agent/agent.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <regex>

#include "agent/observed_picture.h"
#include "agent/test_util.h"
#include "grpcpp/server.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "podresources/v1/api.grpc.pb.h"
#include "render/node_picture.h"
#include "serve/test_util.h"
#include "testing/process.h"
#include "testing/testing.h"
#include "util/file.h"

namespace podtopo::agent {
namespace {

using ::podtopo::testing::MakeTempDir;
using ::podtopo::testing::RunCommand;
using ::podtopo::testing::SourceDir;

// A free loopback port (bound then released: the agent binds it a moment later).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

struct HttpResponse {
  int status = 0;  // 0: no answer
  std::string body;
};

// GET http://127.0.0.1:PORT/PATH (HTTP/1.0, the body up to the close).
HttpResponse Get(int port, const std::string& path) {
  HttpResponse r;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return r;
  }
  std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return r;
  }
  std::string all;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) all.append(buf, static_cast<size_t>(n));
  close(fd);
  auto end = all.find("\r\n\r\n");
  if (all.rfind("HTTP/1.", 0) != 0 || end == std::string::npos) return r;
  r.status = std::stoi(all.substr(9, 3));
  r.body = all.substr(end + 4);
  return r;
}

using ::podtopo::serve::testutil::WaitFor;

using ::podtopo::testing::SpawnProcess;
using ::podtopo::testing::WaitExit;

// The value of one sample line ("NAME{LABELS} VALUE"); nullopt when absent.
std::optional<double> Sample(const std::string& text, const std::string& series) {
  auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::stod(text.substr(at + series.size() + 2));
}

// `podtopo serve` with the docs' two example pods, as the kubelet.
class Kubelet {
 public:
  Kubelet(const std::string& dir, const std::string& compat) : dir_(dir), compat_(compat) {
    std::filesystem::create_directories(dir + "/pods");
    for (const char* f : {"pod-level-resource-demo.yaml", "pod-scope-mixed.yaml"}) {
      std::filesystem::copy_file(SourceDir() + "/docs/examples/" + f, dir + "/pods/" + f,
                                 std::filesystem::copy_options::overwrite_existing);
    }
  }
  ~Kubelet() { Kill(); }
  std::string socket() const { return dir_ + "/pod-resources/kubelet.sock"; }
  void Start() {
    pid_ = SpawnProcess({PODTOPO_BINARY, "serve", "--socket", socket(), "--pods-dir", dir_ + "/pods",
                  "--state-dir", dir_ + "/state", "--node", "preset:demo", "--compat", compat_},
                 dir_ + "/serve.log");
  }
  void Kill() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }

 private:
  std::string dir_, compat_;
  pid_t pid_ = -1;
};

TEST(AgentBinaryTest, HelpListsTheFlagsOfTheContract) {
  auto r = RunCommand(std::string(PODTOPO_BINARY) + " agent --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* flag : {"--podresources-socket", "--node", "--config", "--kubelet-dir",
                           "--metrics-addr", "--nrt-out", "--nrt-name", "--interval"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("/var/lib/kubelet/pod-resources/kubelet.sock"), std::string::npos);
  auto bad = RunCommand(std::string(PODTOPO_BINARY) +
                        " agent --metrics-addr 127.0.0.1:1 --interval soon");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--interval \"soon\""), std::string::npos) << bad.err;
}

class AgentServeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AgentServeTest, MetricsEqualTheClientsAndItOutlivesTheKubelet) {
  std::string dir = MakeTempDir("podtopo-agent");
  Kubelet kubelet(dir, GetParam());
  kubelet.Start();
  int port = FreePort();
  std::string nrt_file = dir + "/nrt/node-a.yaml";
  std::filesystem::create_directories(dir + "/nrt");
  pid_t agent = SpawnProcess({PODTOPO_BINARY, "agent", "--podresources-socket", kubelet.socket(),
                       "--node", "preset:demo", "--metrics-addr", "127.0.0.1:" + std::to_string(port),
                       "--nrt-out", nrt_file, "--nrt-name", "node-a", "--interval", "200ms",
                       "--kubelet-dir", dir + "/state"},
                      dir + "/agent.log");
  auto log = [&] { return ::podtopo::testing::ReadFileOrEmpty(dir + "/agent.log"); };
  std::string metrics;
  ASSERT_TRUE(WaitFor([&] {
    metrics = Get(port, "/metrics").body;
    return metrics.find("pod=\"pod-scope-mixed\"") != std::string::npos &&
           metrics.find("pod=\"pod-level-resource-demo\"") != std::string::npos;
  })) << metrics << log();
  EXPECT_EQ(Sample(metrics, "podtopo_podresources_up"), 1.0);

  // The same numbers as `podtopo client list`.
  auto client = RunCommand(std::string(PODTOPO_BINARY) + " client list -o json --node preset:demo --socket " +
                           kubelet.socket());
  ASSERT_EQ(client.exit_code, 0) << client.err;
  auto list = nlohmann::json::parse(client.out);
  ASSERT_EQ(list["pods"].size(), 2u);
  for (const auto& p : list["pods"]) {
    std::string series = "podtopo_pod_cpus{namespace=\"" + p["namespace"].get<std::string>() +
                         "\",pod=\"" + p["name"].get<std::string>() + "\"}";
    EXPECT_EQ(Sample(metrics, series), p["usage"]["cpuCount"].get<double>()) << series;
  }
  EXPECT_EQ(Sample(metrics, "podtopo_pod_cpus{namespace=\"default\",pod=\"pod-scope-mixed\"}"), 4.0);
  EXPECT_EQ(Sample(metrics, "podtopo_numa_available_cpus{numa_node=\"0\"}"), 9.0);
  EXPECT_EQ(Sample(metrics, "podtopo_checkpoint_kubelet_would_start"), 1.0) << metrics;

  // The file and /nrt hold the same object.
  HttpResponse nrt = Get(port, "/nrt");
  EXPECT_EQ(nrt.status, 200);
  EXPECT_NE(nrt.body.find("available: \"9\""), std::string::npos) << nrt.body;
  ASSERT_TRUE(WaitFor([&] { return ::podtopo::testing::ReadFileOrEmpty(nrt_file) == Get(port, "/nrt").body; }));
  HttpResponse page = Get(port, "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("<svg"), std::string::npos);
  EXPECT_NE(page.body.find("http-equiv=\"refresh\""), std::string::npos);
  EXPECT_EQ(Get(port, "/nothing").status, 404);

  // The kubelet dies: within an interval or two nothing stale is served as current.
  kubelet.Kill();
  ASSERT_TRUE(WaitFor([&] {
    metrics = Get(port, "/metrics").body;
    return Sample(metrics, "podtopo_podresources_up") == 0.0;
  })) << metrics;
  EXPECT_EQ(metrics.find("podtopo_pod_cpus{"), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("podtopo_numa_available_cpus{"), std::string::npos) << metrics;
  EXPECT_EQ(Get(port, "/nrt").status, 503);
  EXPECT_EQ(Get(port, "/").status, 503);
  ASSERT_TRUE(WaitFor([&] {
    auto m = Get(port, "/metrics").body;
    return Sample(m, "podtopo_scrape_errors_total{call=\"connect\"}").value_or(0) +
               Sample(m, "podtopo_scrape_errors_total{call=\"list\"}").value_or(0) >= 2;
  }));

  // It comes back (its checkpoints restored): so does the agent's view.
  kubelet.Start();
  ASSERT_TRUE(WaitFor([&] {
    metrics = Get(port, "/metrics").body;
    return Sample(metrics, "podtopo_podresources_up") == 1.0 &&
           Sample(metrics, "podtopo_pod_cpus{namespace=\"default\",pod=\"pod-scope-mixed\"}") == 4.0;
  })) << metrics << log();
  EXPECT_NE(log().find("is back"), std::string::npos) << log();

  ASSERT_EQ(kill(agent, SIGTERM), 0);
  EXPECT_EQ(WaitExit(agent), 0) << log();
  EXPECT_NE(log().find("SIGTERM"), std::string::npos);
  if (!HasFailure()) std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Kubelets, AgentServeTest, ::testing::Values("1.37", "1.36"),
                         [](const auto& info) { return info.param == "1.37" ? "v1_37" : "v1_36"; });

// A PodResources server of the test's own: answers List and GetAllocatableResources with
// whatever the test sets.
class FakeLister final : public v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* r) override {
    std::lock_guard<std::mutex> l(mu);
    *r = list;
    return grpc::Status::OK;
  }
  grpc::Status GetAllocatableResources(grpc::ServerContext*,
                                       const v1::AllocatableResourcesRequest*,
                                       v1::AllocatableResourcesResponse* r) override {
    std::lock_guard<std::mutex> l(mu);
    *r = allocatable;
    return grpc::Status::OK;
  }
  std::mutex mu;
  v1::ListPodResourcesResponse list;
  v1::AllocatableResourcesResponse allocatable;
};

struct InProcess {
  testutil::DocsNode docs = testutil::AdmitDocsPods(podresources::Compat::k1_37);
  std::string dir = MakeTempDir("podtopo-agent-inproc");
  FakeLister lister;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<Agent> agent;

  InProcess() {
    for (const auto& p : docs.reported) *lister.list.add_pod_resources() = p;
    lister.allocatable = docs.allocatable;
    grpc::ServerBuilder b;
    b.AddListeningPort("unix:" + dir + "/kubelet.sock", grpc::InsecureServerCredentials());
    b.RegisterService(&lister);
    server = b.BuildAndStart();
  }
  ~InProcess() {
    if (agent) agent->Stop();
    server->Shutdown();
    std::filesystem::remove_all(dir);
  }
  void StartAgent(int port) {
    auto a = Agent::Start(docs.topology, docs.config,
                          {.socket = dir + "/kubelet.sock",
                           .listen = "127.0.0.1:" + std::to_string(port),
                           .nrt_out = "",
                           .nrt_name = "node-a",
                           .kubelet_dir = "",
                           .interval = std::chrono::milliseconds(100)});
    ASSERT_TRUE(a.ok()) << a.status();
    agent = std::move(*a);
  }
};

TEST(AgentInProcessTest, AMalformedAnswerIsAFaultNotACrash) {
  InProcess p;
  p.StartAgent(FreePort());
  ASSERT_TRUE(WaitFor([&] {
    return Sample(p.agent->Handle("/metrics").body, "podtopo_podresources_up") == 1.0;
  }));
  {
    std::lock_guard<std::mutex> l(p.lister.mu);
    p.lister.list.mutable_pod_resources(0)->add_cpu_ids(int64_t{1} << 40);
  }
  std::string m;
  ASSERT_TRUE(WaitFor([&] {
    m = p.agent->Handle("/metrics").body;
    return Sample(m, "podtopo_scrape_errors_total{call=\"malformed\"}").value_or(0) >= 1;
  })) << m;
  m = p.agent->Handle("/metrics").body;
  EXPECT_EQ(Sample(m, "podtopo_podresources_up"), 0.0);
  EXPECT_EQ(m.find("podtopo_pod_cpus{"), std::string::npos);
  Agent::Response nrt = p.agent->Handle("/nrt");
  EXPECT_EQ(nrt.status, 503);
  EXPECT_NE(nrt.body.find("malformed"), std::string::npos) << nrt.body;
  {
    std::lock_guard<std::mutex> l(p.lister.mu);
    p.lister.list.mutable_pod_resources(0)->mutable_cpu_ids()->RemoveLast();
  }
  EXPECT_TRUE(WaitFor([&] {
    return Sample(p.agent->Handle("/metrics").body, "podtopo_podresources_up") == 1.0;
  }));
}

// The page at / in Debian's headless Chromium: the pods' colours where the picture puts their
// CPUs. Skipped (with the reason) without /usr/bin/chromium.
TEST(AgentInProcessTest, ChromiumShowsTheLivePicture) {
  const char* env = std::getenv("PODTOPO_CHROMIUM");
  std::string chromium = env != nullptr && *env != '\0' ? env : "/usr/bin/chromium";
  if (access(chromium.c_str(), X_OK) != 0) {
    GTEST_SKIP() << chromium << " is not installed (scripts/setup.sh installs Debian's chromium)";
  }
  InProcess p;
  int port = FreePort();
  p.StartAgent(port);
  ASSERT_TRUE(WaitFor([&] { return p.agent->Handle("/").status == 200; }));
  // The picture the page must show, built from the same answers.
  Observation o = testutil::ObservationOf(p.docs);
  auto zones = AccountZones(p.docs.topology, p.docs.config, o);
  NodePicture pic = BuildObservedPicture(p.docs.topology, ObservedNodeOf(o, zones, p.docs.topology));
  std::string page = p.agent->Handle("/").body;
  EXPECT_NE(page.find(RenderSvg(pic)), std::string::npos) << "the page holds the picture's SVG";

  // Chromium prints the DOM after the page loaded; the SVG's CPU rectangles carry their fills.
  std::string cmd = chromium + " --headless --no-sandbox --disable-gpu --no-first-run "
                    "--user-data-dir=" + p.dir + "/profile --dump-dom http://127.0.0.1:" +
                    std::to_string(port) + "/ 2>" + p.dir + "/chromium.err";
  // Chromium on a loaded 2-core machine has failed to start once in a full ctest run (exit
  // code only, its stderr was dropped): one more try, and its stderr when both fail.
  auto r = RunCommand(cmd);
  if (r.exit_code != 0) r = RunCommand(cmd);
  ASSERT_EQ(r.exit_code, 0) << ::podtopo::testing::ReadFileOrEmpty(p.dir + "/chromium.err");
  int checked = 0;
  for (const auto& pp : pic.pods) {
    pp.exclusive.ForEach([&](int cpu) {
      const PictureCpu* c = pic.FindCpu(cpu);
      std::regex rect("<rect[^>]*x=\"" + std::to_string(c->x) + "\" y=\"" + std::to_string(c->y) +
                      "\"[^>]*fill=\"" + pp.color + "\"");
      EXPECT_TRUE(std::regex_search(r.out, rect)) << pp.name << " CPU " << cpu;
      ++checked;
    });
  }
  EXPECT_EQ(checked, 2);  // main-app's two exclusive CPUs
  EXPECT_NE(r.out.find("pod-level-resource-demo"), std::string::npos);
}

}  // namespace
}  // namespace podtopo::agent
