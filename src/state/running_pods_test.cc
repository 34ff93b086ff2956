#include "state/running_pods.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace podtopo::state {
namespace {

using ::testing::HasSubstr;

TEST(RunningPods, PlainTextOneUidPerLine) {
  auto r = ParseRunningPods("# comment\n  uid-a  \n\nuid-b\n", "pods.txt");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->format, "text");
  EXPECT_EQ(r->uids, (std::set<std::string>{"uid-a", "uid-b"}));
  EXPECT_TRUE(r->containers.empty());
}

TEST(RunningPods, EmptyTextMeansNoPodRuns) {
  auto r = ParseRunningPods("", "pods.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->uids.empty());
}

TEST(RunningPods, TextRejectsSomethingThatIsNotAUidWithTheLine) {
  auto r = ParseRunningPods("uid-a\nthis is not a uid\n", "pods.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("pods.txt:2: not a pod UID"));
}

TEST(RunningPods, KubectlListWithContainerIds) {
  auto r = ParseRunningPods(R"({"apiVersion":"v1","kind":"List","items":[
    {"metadata":{"name":"a","uid":"uid-a"},"status":{"containerStatuses":[
      {"name":"app","containerID":"containerd://abc123"},{"name":"waiting"}]}},
    {"metadata":{"name":"b","uid":"uid-b"}}]})",
                            "pods.json");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->format, "kubectl");
  EXPECT_EQ(r->uids, (std::set<std::string>{"uid-a", "uid-b"}));
  ASSERT_EQ(r->containers.count("abc123"), 1u);
  EXPECT_EQ(r->containers.at("abc123"), std::make_pair(std::string("uid-a"), std::string("app")));
}

TEST(RunningPods, CrictlPodsAndPs) {
  auto pods = ParseRunningPods(R"({"items":[{"id":"sb","metadata":{"name":"a","uid":"uid-a"}}]})",
                               "pods.json");
  ASSERT_TRUE(pods.ok()) << pods.status();
  EXPECT_EQ(pods->format, "crictl-pods");
  EXPECT_EQ(pods->uids.count("uid-a"), 1u);
  auto ps = ParseRunningPods(R"({"containers":[{"id":"c1","metadata":{"name":"app"},
    "labels":{"io.kubernetes.pod.uid":"uid-a","io.kubernetes.container.name":"app"}}]})",
                             "ps.json");
  ASSERT_TRUE(ps.ok()) << ps.status();
  EXPECT_EQ(ps->format, "crictl-ps");
  EXPECT_EQ(ps->containers.at("c1").second, "app");
}

TEST(RunningPods, BadJsonNamesFileAndField) {
  auto r = ParseRunningPods(R"({"items":[{"metadata":{"uid":42}}]})", "pods.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "pods.json: items[0].metadata.uid: missing or not a string");
  auto ps = ParseRunningPods(R"({"containers":[{"id":"c1","labels":{}}]})", "ps.json");
  ASSERT_FALSE(ps.ok());
  EXPECT_THAT(std::string(ps.status().message()),
              HasSubstr("ps.json: containers[0].labels[\"io.kubernetes.pod.uid\"]"));
  auto syntax = ParseRunningPods("{\"items\": [", "pods.json");
  ASSERT_FALSE(syntax.ok());
  EXPECT_THAT(std::string(syntax.status().message()), HasSubstr("pods.json: invalid JSON"));
  auto other = ParseRunningPods(R"({"kind":"Node"})", "pods.json");
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(std::string(other.status().message()), HasSubstr("not a pod list"));
}

}  // namespace
}  // namespace podtopo::state
