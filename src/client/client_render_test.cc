#include "client/client_render.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace podtopo::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kGi = 1ull << 30;

PodView MixedView() {
  v1::PodResources pod;
  pod.set_namespace_("default");
  pod.set_name("pod-scope-mixed");
  for (int id : {2, 3, 4, 5}) pod.add_cpu_ids(id);
  auto* m = pod.add_memory();
  m->set_memory_type("memory");
  m->set_size(4 * kGi);
  m->mutable_topology()->add_nodes()->set_id(0);
  pod.add_containers()->set_name("metrics-sidecar");
  pod.add_containers()->set_name("logging-sidecar");
  auto* app = pod.add_containers();
  app->set_name("main-app");
  app->add_cpu_ids(2);
  app->add_cpu_ids(3);
  return BuildPodView(pod, {{0, CpuSet::Range(0, 7)}}).value();
}

TEST(ClientRenderTest, TableShowsThePodOnceWithItsSharedPool) {
  std::vector<PodView> pods = {MixedView()};
  std::string text = RenderPodsTable(pods, SumUsage(pods, {}), nullptr, false);
  EXPECT_THAT(text, HasSubstr("NAMESPACE  NAME"));
  EXPECT_THAT(text,
              HasSubstr("default    pod-scope-mixed  pod    2-5 (4)  4-5          main-app=2-3"));
  EXPECT_THAT(text, HasSubstr("memory=4Gi"));
  EXPECT_THAT(text, HasSubstr("0: 4 CPUs memory=4Gi"));
  EXPECT_THAT(text, HasSubstr("node: 1 pod, exclusive CPUs 2-5 (4), memory memory=4Gi"));
  // Never 6 CPUs (4 + main-app's 2).
  EXPECT_THAT(text, Not(HasSubstr("(6)")));
}

TEST(ClientRenderTest, WideShowsEveryContainersCpus) {
  std::string text = RenderPodDetail(MixedView());
  EXPECT_THAT(text, HasSubstr("metrics-sidecar  pod-shared  4-5 (pod shared pool)"));
  EXPECT_THAT(text, HasSubstr("logging-sidecar  pod-shared  4-5 (pod shared pool)"));
  EXPECT_THAT(text, HasSubstr("main-app         exclusive   2-3"));
  EXPECT_THAT(text, HasSubstr("shared pool 4-5 (2)"));
}

TEST(ClientRenderTest, JsonKeysAreStableCamelCase) {
  auto json = PodJson(MixedView());
  EXPECT_EQ(json["podCpus"], "2-5");
  EXPECT_EQ(json["sharedPoolCpus"], "4-5");
  EXPECT_EQ(json["podLevel"], true);
  EXPECT_EQ(json["usage"]["cpuCount"], 4);
  EXPECT_EQ(json["containers"][0]["pool"], "pod-shared");
  EXPECT_EQ(json["containers"][0]["reportedCpus"], "");
  EXPECT_EQ(json["containers"][0]["cpus"], "4-5");
  EXPECT_EQ(json["containers"][2]["reportedCpus"], "2-3");
  EXPECT_EQ(json["podMemory"][0]["memoryType"], "memory");
  EXPECT_EQ(json["podMemory"][0]["size"], 4 * kGi);
  EXPECT_EQ(json["numa"][0]["numaNodes"][0], 0);
  std::vector<std::string> keys;
  for (auto it = json.begin(); it != json.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"namespace", "name", "level", "podLevel", "podCpus",
                                            "podMemory", "exclusiveContainerCpus", "sharedPoolCpus",
                                            "containers", "usage", "numa", "warnings"}));
}

TEST(ClientRenderTest, AllocatableTable) {
  v1::AllocatableResourcesResponse r;
  for (int id = 1; id < 8; ++id) r.add_cpu_ids(id);
  auto* m = r.add_memory();
  m->set_memory_type("memory");
  m->set_size(30 * kGi);
  m->mutable_topology()->add_nodes()->set_id(0);
  auto view = BuildAllocatableView(r, {{0, CpuSet::Range(0, 7)}}).value();
  std::string text = RenderAllocatableTable(view);
  EXPECT_THAT(text, HasSubstr("allocatable CPUs 1-7 (7)"));
  EXPECT_THAT(text, HasSubstr("0     1-7 (7)  memory=30Gi"));
}

}  // namespace
}  // namespace podtopo::client
