// `podtopo verify` finding its containers through a CRI runtime: the built binary against
// FakeCri (src/runtime/fake_cri_test_util.h, an in-memory CRI server on a unix socket that
// writes each started container's cgroup v1 cpuset.cpus under a fake mount). The real
// containerd is tests/e2e/verify_e2e.py's.
#include <filesystem>

#include "cri/cri_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "podresources/v1/api.grpc.pb.h"
#include "runtime/fake_cri_test_util.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;
namespace v1 = ::runtime::v1;

constexpr char kDb[] = "aaaaaaaa-1111-4111-8111-111111111111";

TEST(VerifyCri, ContainersFromTheRuntimeAreJoinedToTheCheckpoints) {
  std::string dir = testing::MakeTempDir("verify-cri");
  std::string socket = dir + "/cri.sock";
  runtime::testing::FakeCri fake(socket, dir + "/cgroup");
  fake.Serve();
  auto cri = cri::CriClient::Connect("unix://" + socket, {});
  ASSERT_TRUE(cri.ok()) << cri.status();

  v1::PodSandboxConfig sb;
  sb.mutable_metadata()->set_name("db");
  sb.mutable_metadata()->set_namespace_("default");
  sb.mutable_metadata()->set_uid(kDb);
  (*sb.mutable_labels())["io.kubernetes.pod.uid"] = kDb;
  sb.mutable_linux()->set_cgroup_parent(std::string("/kubepods/pod") + kDb);
  auto sandbox = (*cri)->RunPodSandbox(sb);
  ASSERT_TRUE(sandbox.ok()) << sandbox.status();
  auto container = [&](const std::string& name, const std::string& cpus, bool labelled) {
    v1::ContainerConfig c;
    c.mutable_metadata()->set_name(name);
    auto& l = *c.mutable_labels();
    l["io.kubernetes.pod.uid"] = labelled ? kDb : "";
    if (labelled) {
      l["io.kubernetes.pod.name"] = "db";
      l["io.kubernetes.pod.namespace"] = "default";
      l["io.kubernetes.container.name"] = name;
    }
    c.add_command("sleep");
    c.mutable_linux()->mutable_resources()->set_cpuset_cpus(cpus);
    auto id = (*cri)->CreateContainer(*sandbox, c, sb);
    EXPECT_TRUE(id.ok()) << id.status();
    EXPECT_TRUE((*cri)->StartContainer(*id).ok());
    return *id;
  };
  std::string db = container("db", "1-3", true);  // the checkpoint says 2-3: drift
  container("stray", "0-7", false);               // no pod UID label: skipped, said so

  std::string fixture = std::string(PODTOPO_VERIFY_TESTDATA) + "/v1-cgroupfs-clean";
  std::string empty = testing::MakeTempDir("verify-cri-proc");
  auto r = testing::RunCommand(std::string(PODTOPO_BINARY) + " verify -o json --kubelet-dir " +
                               fixture + "/kubelet --runtime-endpoint unix://" + socket +
                               " --cgroup-root " + dir + "/cgroup --proc-root " + empty);
  ASSERT_EQ(r.exit_code, 3) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["containers"].size(), 1u) << r.out;
  EXPECT_EQ(j["containers"][0]["containerId"], db);
  EXPECT_EQ(j["containers"][0]["namespace"], "default");
  EXPECT_EQ(j["containers"][0]["cgroup"], std::string("kubepods/pod") + kDb + "/" + db);
  EXPECT_EQ(j["containers"][0]["intent"]["cpus"], "2-3");
  EXPECT_EQ(j["containers"][0]["actual"]["cpus"], "1-3");
  ASSERT_GE(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["kind"], "cpuset-drift");
  std::string problems = j["problems"].dump();
  EXPECT_THAT(problems, HasSubstr("no io.kubernetes.pod.uid label"));
  // The fake cgroup has cpuset.cpus only: the other files are problems, not a crash.
  EXPECT_THAT(problems, HasSubstr("cpuset.mems"));
  fake.Stop();
}

// A kubelet's PodResources that always answers List with `answer`.
class FixedPodResources final : public ::v1::PodResourcesLister::Service {
 public:
  explicit FixedPodResources(::v1::ListPodResourcesResponse answer) : answer_(std::move(answer)) {}
  grpc::Status List(grpc::ServerContext*, const ::v1::ListPodResourcesRequest*,
                    ::v1::ListPodResourcesResponse* r) override {
    *r = answer_;
    return grpc::Status::OK;
  }

 private:
  ::v1::ListPodResourcesResponse answer_;
};

TEST(VerifyCri, PodResourcesIsExtraIntent) {
  ::v1::ListPodResourcesResponse answer;
  auto* pod = answer.add_pod_resources();
  pod->set_name("db");
  pod->set_namespace_("default");
  auto* c = pod->add_containers();
  c->set_name("db");
  c->add_cpu_ids(2);
  auto* m = c->add_memory();
  m->set_memory_type("memory");
  m->set_size(1 << 30);
  m->mutable_topology()->add_nodes()->set_id(0);
  FixedPodResources service(answer);
  std::string dir = testing::MakeTempDir("verify-pr");
  grpc::ServerBuilder b;
  b.AddListeningPort("unix://" + dir + "/kubelet.sock", grpc::InsecureServerCredentials());
  b.RegisterService(&service);
  auto server = b.BuildAndStart();
  ASSERT_TRUE(server);

  std::string fixture = std::string(PODTOPO_VERIFY_TESTDATA) + "/v1-cgroupfs-clean";
  std::string empty = testing::MakeTempDir("verify-pr-proc");
  std::string node = " --cgroup-root " + fixture + "/cgroup --proc-root " + empty +
                     " --containers " + fixture + "/containers.json --podresources-socket " + dir +
                     "/kubelet.sock";
  // With the checkpoints: PodResources' CPU 2 against the checkpoint's 2-3.
  auto r = testing::RunCommand(std::string(PODTOPO_BINARY) + " verify -o json --kubelet-dir " +
                               fixture + "/kubelet" + node);
  ASSERT_EQ(r.exit_code, 3) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["findings"].size(), 1u) << r.out;
  EXPECT_EQ(j["findings"][0]["kind"], "intent-mismatch");
  EXPECT_EQ(j["findings"][0]["detail"], "PodResources reports CPUs 2, checkpoint 2-3");
  // Without checkpoints PodResources is the intent: the cgroup's 2-3 drifts from it.
  std::string no_checkpoints = testing::MakeTempDir("verify-pr-kubelet");
  r = testing::RunCommand(std::string(PODTOPO_BINARY) + " verify -o json --kubelet-dir " +
                          no_checkpoints + node);
  ASSERT_EQ(r.exit_code, 3) << r.out << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["containers"][0]["intent"]["source"], "podresources");
  EXPECT_EQ(j["containers"][0]["intent"]["mems"], "0");
  ASSERT_EQ(j["findings"].size(), 1u) << r.out;
  EXPECT_EQ(j["findings"][0]["detail"], "cgroup cpuset.cpus 2-3, PodResources 2");
  // A socket nobody serves: a problem of the report, not an error.
  server->Shutdown();
  r = testing::RunCommand(std::string(PODTOPO_BINARY) + " verify -o json --kubelet-dir " +
                          fixture + "/kubelet" + node);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("--podresources-socket"));
}

}  // namespace
}  // namespace podtopo
