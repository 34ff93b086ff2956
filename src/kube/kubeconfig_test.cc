// Kubeconfig and in-cluster credentials (testdata/*.kubeconfig), and the API errors' text.
#include "kube/kubeconfig.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/api_client.h"
#include "testing/testing.h"

namespace podtopo::kube {
namespace {

using ::testing::HasSubstr;

std::string Data(const std::string& name) {
  return podtopo::testing::SourceDir() + "/src/kube/testdata/" + name;
}

TEST(Kubeconfig, TokenAndRelativeCaFile) {
  auto c = LoadKubeconfig(Data("token.kubeconfig"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");  // trailing slash dropped
  EXPECT_EQ(c->ca_pem, "fake-ca\n");               // ca.crt beside the kubeconfig
  EXPECT_EQ(c->token, "s3cret");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
  EXPECT_THAT(c->source, HasSubstr("token.kubeconfig"));
  EXPECT_EQ(BearerToken(*c).value(), "s3cret");
}

TEST(Kubeconfig, InlineData) {
  auto c = LoadKubeconfig(Data("data.kubeconfig"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://kube.example:443");
  EXPECT_EQ(c->ca_pem, "CA-PEM");
  EXPECT_EQ(c->client_cert_pem, "CERT-PEM");
  EXPECT_EQ(c->client_key_pem, "KEY-PEM");
  EXPECT_EQ(BearerToken(*c).value(), "");
}

TEST(Kubeconfig, TokenFileIsReadOnEveryCall) {
  auto c = LoadKubeconfig(Data("tokenfile.kubeconfig"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->token_file, Data("token"));
  EXPECT_EQ(BearerToken(*c).value(), "rotating-token-1");  // whitespace trimmed

  std::string dir = ::testing::TempDir() + "/kube_token";
  std::filesystem::create_directories(dir);
  Credentials moved = *c;
  moved.token_file = dir + "/token";
  std::ofstream(moved.token_file) << "first";
  EXPECT_EQ(BearerToken(moved).value(), "first");
  std::ofstream(moved.token_file) << "second\n";
  EXPECT_EQ(BearerToken(moved).value(), "second");
  std::ofstream(moved.token_file) << "";
  EXPECT_THAT(BearerToken(moved).status().message(), HasSubstr("is empty"));
  std::filesystem::remove(moved.token_file);
  EXPECT_THAT(BearerToken(moved).status().message(), HasSubstr(moved.token_file));
}

struct Bad {
  const char* file;
  const char* field;  // the field the message names
  const char* what;
};

class BadKubeconfig : public ::testing::TestWithParam<Bad> {};

TEST_P(BadKubeconfig, NamesTheFileAndTheField) {
  const Bad& b = GetParam();
  auto c = LoadKubeconfig(Data(b.file));
  ASSERT_FALSE(c.ok());
  std::string m(c.status().message());
  EXPECT_THAT(m, HasSubstr("kubeconfig " + Data(b.file)));
  EXPECT_THAT(m, HasSubstr(b.field));
  EXPECT_THAT(m, HasSubstr(b.what));
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BadKubeconfig,
    ::testing::Values(
        Bad{"bad-no-current-context.kubeconfig", "current-context", "missing"},
        Bad{"bad-unknown-context.kubeconfig", "current-context", "no context named \"y\""},
        Bad{"bad-unknown-cluster.kubeconfig", "contexts[x].context.cluster",
            "no cluster named \"d\""},
        Bad{"bad-missing-ca-file.kubeconfig", "clusters[c].cluster.certificate-authority",
            "no-such-ca.crt"},
        Bad{"bad-bad-base64.kubeconfig", "clusters[c].cluster.certificate-authority-data",
            "base64"},
        Bad{"bad-exec.kubeconfig", "users[u].user.exec", "not supported"},
        Bad{"bad-cert-without-key.kubeconfig", "users[u].user",
            "client-certificate without client-key"},
        Bad{"bad-no-server.kubeconfig", "clusters[c].cluster.server", "missing"},
        Bad{"bad-not-yaml.kubeconfig", "", "line"},
        Bad{"bad-insecure-typo.kubeconfig", "insecure-skip-tls-verify", "not true or false"},
        Bad{"no-such.kubeconfig", "", "No such file"}));

TEST(Kubeconfig, NotAMap) {
  auto c = ParseKubeconfig("- a\n- b\n", "k.yaml", ".");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("kubeconfig k.yaml: expected a map"));
}

TEST(InCluster, EnvAndServiceAccountFiles) {
  std::string dir = ::testing::TempDir() + "/kube_sa";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/ca.crt") << "SA-CA";
  std::ofstream(dir + "/token") << "tok-1\n";
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_FALSE(InCluster());
  EXPECT_THAT(InClusterCredentials(dir).status().message(), HasSubstr("KUBERNETES_SERVICE_HOST"));
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  EXPECT_TRUE(InCluster());
  auto c = InClusterCredentials(dir);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->ca_pem, "SA-CA");
  EXPECT_EQ(BearerToken(*c).value(), "tok-1");
  std::ofstream(dir + "/token") << "tok-2";  // the kubelet rotates the bound token
  EXPECT_EQ(BearerToken(*c).value(), "tok-2");
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  EXPECT_EQ(InClusterCredentials(dir)->server, "https://[fd00::1]:443");
  std::filesystem::remove(dir + "/ca.crt");
  EXPECT_THAT(InClusterCredentials(dir).status().message(), HasSubstr(dir + "/ca.crt"));
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
}

TEST(ApiResponse, ErrorNamesServerPathCodeAndStatusMessage) {
  Response r{403,
             R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"nodes \"n1\" is forbidden: User \"x\" cannot get resource \"nodes\"","reason":"Forbidden","code":403})",
             "GET", "https://127.0.0.1:6443/api/v1/nodes/n1"};
  absl::Status s = r.Error();
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "GET https://127.0.0.1:6443/api/v1/nodes/n1: HTTP 403 Forbidden: nodes \"n1\" is "
            "forbidden: User \"x\" cannot get resource \"nodes\"");
  Response plain{502, "bad gateway\n", "PATCH", "https://h/x"};
  EXPECT_EQ(plain.Error().message(), "PATCH https://h/x: HTTP 502 Bad Gateway: bad gateway");
  EXPECT_EQ(plain.Error().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE((Response{201, "", "POST", "u"}).Error().ok());
  EXPECT_EQ(EscapePathSegment("node-1.a"), "node-1.a");
  EXPECT_EQ(EscapePathSegment("a/b c"), "a%2Fb%20c");
}

TEST(ApiClient, TransportErrorNamesServerAndPath) {
  Credentials c;
  c.server = "https://127.0.0.1:1";  // nothing listens on port 1
  c.source = "test";
  auto client = ApiClient::Create(c, {.timeout = std::chrono::milliseconds(2000)});
  ASSERT_TRUE(client.ok());
  auto r = (*client)->Get("/api/v1/nodes/n1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("GET https://127.0.0.1:1/api/v1/nodes/n1: "));
}

TEST(ApiClient, CancelEndsARequestInFlight) {
  // A listener that never answers: the request would wait for its 30 s timeout.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  Credentials c;
  c.server = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  c.source = "test";
  auto client = ApiClient::Create(c, {.timeout = std::chrono::seconds(30)}).value();
  auto start = std::chrono::steady_clock::now();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    client->Cancel();
  });
  auto r = client->Get("/api/v1/nodes/n1");
  canceller.join();
  close(fd);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_THAT(client->Get("/x").status().message(), HasSubstr("cancelled"));
}

}  // namespace
}  // namespace podtopo::kube
