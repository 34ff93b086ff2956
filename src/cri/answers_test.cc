#include "cri/answers.h"

#include "gtest/gtest.h"

namespace podtopo::cri {
namespace {

namespace criv1 = ::runtime::v1;

constexpr char kUid[] = "io.kubernetes.pod.uid";
constexpr char kName[] = "io.kubernetes.container.name";

criv1::PodSandbox* Sandbox(criv1::ListPodSandboxResponse& r, const std::string& id,
                           const std::string& uid, int64_t created,
                           criv1::PodSandboxState state = criv1::SANDBOX_READY) {
  criv1::PodSandbox* sb = r.add_items();
  sb->set_id(id);
  if (!uid.empty()) (*sb->mutable_labels())[kUid] = uid;
  sb->set_created_at(created);
  sb->set_state(state);
  return sb;
}

std::vector<std::string> RemovedIds(const SandboxChoice& c) {
  std::vector<std::string> ids;
  for (const auto& [uid, id] : c.removed) ids.push_back(id);
  return ids;
}

TEST(CriAnswersTest, KeepsTheNewestReadySandboxOfEachWantedPod) {
  criv1::ListPodSandboxResponse r;
  Sandbox(r, "old", "u1", 1);
  Sandbox(r, "new", "u1", 5);
  Sandbox(r, "notready", "u1", 9, criv1::SANDBOX_NOTREADY);
  Sandbox(r, "unwanted", "u2", 3);
  Sandbox(r, "unlabelled", "", 3);
  SandboxChoice c = ChooseSandboxes(r, kUid, [](const std::string& uid) { return uid == "u1"; });
  ASSERT_EQ(c.kept.size(), 1u);
  EXPECT_EQ(c.kept.at("u1")->id(), "new");
  EXPECT_EQ(RemovedIds(c), (std::vector<std::string>{"old", "notready", "unwanted", "unlabelled"}));
}

// A broken runtime listing one sandbox twice must not have it both kept and removed (removing
// the pod's running sandbox), nor removed twice; a sandbox without an id is left alone.
TEST(CriAnswersTest, ASandboxListedTwiceIsReadOnceAndOneWithoutIdIsIgnored) {
  criv1::ListPodSandboxResponse r;
  Sandbox(r, "x", "u1", 5);
  Sandbox(r, "x", "u1", 5);
  Sandbox(r, "x", "u1", 9, criv1::SANDBOX_NOTREADY);
  Sandbox(r, "", "u1", 7);
  SandboxChoice c = ChooseSandboxes(r, kUid, [](const std::string&) { return true; });
  ASSERT_EQ(c.kept.size(), 1u);
  EXPECT_EQ(c.kept.at("u1")->id(), "x");
  EXPECT_TRUE(c.removed.empty());
}

TEST(CriAnswersTest, NewestContainerOfEachNameInTheSandbox) {
  criv1::ListContainersResponse r;
  auto add = [&](const std::string& id, const std::string& sandbox, const std::string& name,
                 int64_t created) {
    criv1::Container* c = r.add_containers();
    c->set_id(id);
    c->set_pod_sandbox_id(sandbox);
    if (!name.empty()) (*c->mutable_labels())[kName] = name;
    c->set_created_at(created);
  };
  add("a1", "s", "app", 1);
  add("a2", "s", "app", 4);
  add("a3", "s", "app", 4);  // equal: the first listed stays
  add("side", "s", "sidecar", 2);
  add("other", "t", "app", 9);
  add("nolabel", "s", "", 9);
  add("", "s", "app", 10);
  auto newest = NewestContainers(r, "s", kName);
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest.at("app")->id(), "a2");
  EXPECT_EQ(newest.at("sidecar")->id(), "side");
}

TEST(CriAnswersTest, ReportedCpusetIsCanonicalWhenItParses) {
  criv1::ContainerStatusResponse r;
  EXPECT_EQ(ReportedCpuset(r), "");
  r.mutable_status()->mutable_resources()->mutable_linux()->set_cpuset_cpus("3,0-1,2");
  EXPECT_EQ(ReportedCpuset(r), "0-3");
  r.mutable_status()->mutable_resources()->mutable_linux()->set_cpuset_cpus("zero");
  EXPECT_EQ(ReportedCpuset(r), "zero");
}

}  // namespace
}  // namespace podtopo::cri
