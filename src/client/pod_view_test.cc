#include "client/pod_view.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/property.h"

namespace podtopo::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

CpuSet Cpus(const std::string& text) { return CpuSet::Parse(text).value(); }

void AddCpus(google::protobuf::RepeatedField<int64_t>* field, const std::string& text) {
  for (int id : Cpus(text).List()) field->Add(id);
}

void AddMemory(google::protobuf::RepeatedPtrField<v1::ContainerMemory>* field,
               const std::string& type, uint64_t size, std::vector<int64_t> numa) {
  auto* m = field->Add();
  m->set_memory_type(type);
  m->set_size(size);
  for (auto id : numa) m->mutable_topology()->add_nodes()->set_id(id);
}

constexpr uint64_t kGi = 1ull << 30;

// A NUMA map of two nodes: 0-7 and 8-15.
NumaMap TwoNodes() { return {{0, Cpus("0-7")}, {1, Cpus("8-15")}}; }

// The pod-scope-mixed pod as a v1.37 kubelet reports it (kep5526.md §8.2, docs example).
v1::PodResources PodScopeMixed() {
  v1::PodResources pod;
  pod.set_namespace_("default");
  pod.set_name("pod-scope-mixed");
  AddCpus(pod.mutable_cpu_ids(), "2-5");
  AddMemory(pod.mutable_memory(), "memory", 4 * kGi, {0});
  pod.add_containers()->set_name("metrics-sidecar");
  pod.add_containers()->set_name("logging-sidecar");
  auto* app = pod.add_containers();
  app->set_name("main-app");
  AddCpus(app->mutable_cpu_ids(), "2-3");
  AddMemory(app->mutable_memory(), "memory", 2 * kGi, {0});
  return pod;
}

TEST(PodViewTest, PodLevelAllocationIsCountedOnce) {
  auto view = BuildPodView(PodScopeMixed(), TwoNodes());
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_TRUE(view->pod_level);
  EXPECT_EQ(view->pod_cpus, Cpus("2-5"));
  EXPECT_EQ(view->exclusive_container_cpus, Cpus("2-3"));
  EXPECT_EQ(view->shared_pool, Cpus("4-5"));
  // The bubble, not bubble + main-app's subset.
  EXPECT_EQ(view->usage_cpus, Cpus("2-5"));
  EXPECT_EQ(view->usage_memory.at("memory"), 4 * kGi);
  ASSERT_EQ(view->containers.size(), 3u);
  EXPECT_EQ(view->containers[0].pool, Pool::kPodShared);
  EXPECT_EQ(view->containers[0].cpus, Cpus("4-5"));
  EXPECT_TRUE(view->containers[0].reported_cpus.IsEmpty());
  EXPECT_EQ(view->containers[1].pool, Pool::kPodShared);
  EXPECT_EQ(view->containers[2].pool, Pool::kExclusive);
  EXPECT_EQ(view->containers[2].cpus, Cpus("2-3"));
  ASSERT_EQ(view->numa.size(), 1u);
  EXPECT_THAT(view->numa[0].numa, ElementsAre(0));
  EXPECT_EQ(view->numa[0].cpus, Cpus("2-5"));
  EXPECT_EQ(view->numa[0].memory.at("memory"), 4 * kGi);
  EXPECT_TRUE(view->warnings.empty());
}

// A container with exclusive memory but a fractional CPU (requests = limits = 500m, 128Mi): the
// server reports its memory and no cpu_ids. Its CPUs are the pod's shared pool, not the node's.
TEST(PodViewTest, ExclusiveMemoryWithSharedCpusIsInThePodSharedPool) {
  v1::PodResources pod;
  pod.set_namespace_("default");
  pod.set_name("mixed-small");
  AddCpus(pod.mutable_cpu_ids(), "1");
  AddMemory(pod.mutable_memory(), "memory", 256 * 1024 * 1024, {0});
  pod.add_containers()->set_name("sidecar");
  auto* app = pod.add_containers();
  app->set_name("main-app");
  AddMemory(app->mutable_memory(), "memory", 128 * 1024 * 1024, {0});
  auto view = BuildPodView(pod, TwoNodes());
  ASSERT_TRUE(view.ok()) << view.status();
  ASSERT_EQ(view->containers.size(), 2u);
  EXPECT_EQ(view->containers[1].pool, Pool::kPodShared);
  EXPECT_EQ(view->containers[1].cpus, Cpus("1"));
  EXPECT_EQ(view->shared_pool, Cpus("1"));
  // Memory is counted once: the pod's 256Mi, not 256Mi + 128Mi.
  EXPECT_EQ(view->usage_memory.at("memory"), 256u * 1024 * 1024);
}

// The unit-test example of kep5526.md §8.2: pod CpuIds [12,23,30,31,32], exclusive container
// [12,23,30], shared container [].
TEST(PodViewTest, KepUnitTestExample) {
  v1::PodResources pod;
  pod.set_name("p");
  for (int id : {12, 23, 30, 31, 32}) pod.add_cpu_ids(id);
  AddMemory(pod.mutable_memory(), "memory", 2147483648ull, {1});
  auto* excl = pod.add_containers();
  excl->set_name("exclusive");
  for (int id : {12, 23, 30}) excl->add_cpu_ids(id);
  pod.add_containers()->set_name("shared");
  auto view = BuildPodView(pod, {});
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->shared_pool, Cpus("31-32"));
  EXPECT_EQ(view->usage_cpus.Size(), 5);
  EXPECT_EQ(view->usage_memory.at("memory"), 2147483648ull);
  // No NUMA map: CPUs under "unknown", memory under its own node.
  ASSERT_EQ(view->numa.size(), 2u);
  EXPECT_THAT(view->numa[0].numa, ElementsAre(1));
  EXPECT_TRUE(view->numa[1].numa.empty());
  EXPECT_EQ(view->numa[1].cpus.Size(), 5);
}

// An older kubelet (or the gate off): container-level fields only.
TEST(PodViewTest, ContainerLevelOnlyServer) {
  v1::PodResources pod;
  pod.set_name("guaranteed");
  auto* a = pod.add_containers();
  a->set_name("a");
  AddCpus(a->mutable_cpu_ids(), "2-3");
  AddMemory(a->mutable_memory(), "memory", kGi, {0});
  auto* b = pod.add_containers();
  b->set_name("b");
  AddCpus(b->mutable_cpu_ids(), "8,9");
  AddMemory(b->mutable_memory(), "memory", kGi, {1});
  AddMemory(b->mutable_memory(), "hugepages-2Mi", 512ull << 20, {1});
  pod.add_containers()->set_name("c");
  auto view = BuildPodView(pod, TwoNodes());
  ASSERT_TRUE(view.ok());
  EXPECT_FALSE(view->pod_level);
  EXPECT_EQ(view->usage_cpus, Cpus("2-3,8-9"));
  EXPECT_TRUE(view->shared_pool.IsEmpty());
  EXPECT_EQ(view->usage_memory.at("memory"), 2 * kGi);
  EXPECT_EQ(view->usage_memory.at("hugepages-2Mi"), 512ull << 20);
  EXPECT_EQ(view->containers[0].pool, Pool::kExclusive);
  EXPECT_EQ(view->containers[2].pool, Pool::kNodeShared);
  ASSERT_EQ(view->numa.size(), 2u);
  EXPECT_EQ(view->numa[0].cpus, Cpus("2-3"));
  EXPECT_EQ(view->numa[1].cpus, Cpus("8-9"));
  EXPECT_EQ(view->numa[1].memory.at("hugepages-2Mi"), 512ull << 20);
}

// A v1.36 kubelet with a pod-level allocation: no pod fields, and both sidecars report the
// pod shared pool as their cpu_ids. Counted once, recognised as shared.
TEST(PodViewTest, LegacyV136SharedPoolIsCountedOnce) {
  v1::PodResources pod;
  pod.set_name("pod-scope-mixed");
  for (const char* name : {"metrics-sidecar", "logging-sidecar"}) {
    auto* s = pod.add_containers();
    s->set_name(name);
    AddCpus(s->mutable_cpu_ids(), "4-5");
    AddMemory(s->mutable_memory(), "memory", 2 * kGi, {0});
  }
  auto* app = pod.add_containers();
  app->set_name("main-app");
  AddCpus(app->mutable_cpu_ids(), "2-3");
  AddMemory(app->mutable_memory(), "memory", 2 * kGi, {0});
  auto view = BuildPodView(pod, TwoNodes());
  ASSERT_TRUE(view.ok());
  EXPECT_FALSE(view->pod_level);
  EXPECT_EQ(view->containers[0].pool, Pool::kLegacyShared);
  EXPECT_EQ(view->containers[1].pool, Pool::kLegacyShared);
  EXPECT_EQ(view->containers[2].pool, Pool::kExclusive);
  EXPECT_EQ(view->usage_cpus, Cpus("2-5"));
  EXPECT_EQ(view->shared_pool, Cpus("4-5"));
  EXPECT_EQ(view->exclusive_container_cpus, Cpus("2-3"));
  // main-app's 2Gi + the sidecars' identical 2Gi block once.
  EXPECT_EQ(view->usage_memory.at("memory"), 4 * kGi);
}

TEST(PodViewTest, WarnsAboutInconsistentAnswers) {
  v1::PodResources pod = PodScopeMixed();
  pod.mutable_containers(2)->add_cpu_ids(9);  // outside the bubble
  auto view = BuildPodView(pod, {{0, Cpus("0-3")}});
  ASSERT_TRUE(view.ok());
  ASSERT_EQ(view->warnings.size(), 2u);
  EXPECT_THAT(view->warnings[0],
              HasSubstr("container main-app reports CPUs 9 outside the pod's CPUs 2-5"));
  EXPECT_THAT(view->warnings[1], HasSubstr("CPUs 4-5 are on no NUMA node"));
  // Usage is still the pod's set.
  EXPECT_EQ(view->usage_cpus, Cpus("2-5"));
}

TEST(PodViewTest, RejectsImpossibleCpuIds) {
  v1::PodResources pod;
  pod.set_namespace_("ns");
  pod.set_name("p");
  pod.add_cpu_ids(-1);
  auto view = BuildPodView(pod, {});
  ASSERT_FALSE(view.ok());
  EXPECT_THAT(std::string(view.status().message()), HasSubstr("pod ns/p: cpu_ids holds -1"));
  v1::PodResources pod2;
  pod2.add_containers()->set_name("c");
  pod2.mutable_containers(0)->add_cpu_ids(int64_t{1} << 40);
  view = BuildPodView(pod2, {});
  ASSERT_FALSE(view.ok());
  EXPECT_THAT(std::string(view.status().message()), HasSubstr("container c: cpu_ids holds"));
}

TEST(PodViewTest, MultiNumaBlocksAreTotalledUnderTheirGroup) {
  v1::PodResources pod;
  auto* c = pod.add_containers();
  c->set_name("big");
  AddCpus(c->mutable_cpu_ids(), "6-9");
  AddMemory(c->mutable_memory(), "memory", 40 * kGi, {1, 0});
  auto view = BuildPodView(pod, TwoNodes());
  ASSERT_TRUE(view.ok());
  ASSERT_EQ(view->numa.size(), 3u);
  EXPECT_EQ(view->numa[0].cpus, Cpus("6-7"));
  EXPECT_EQ(view->numa[1].cpus, Cpus("8-9"));
  EXPECT_THAT(view->numa[2].numa, ElementsAre(0, 1));
  EXPECT_EQ(view->numa[2].memory.at("memory"), 40 * kGi);
}

TEST(PodViewTest, SumUsageAddsPodsOnce) {
  auto a = BuildPodView(PodScopeMixed(), TwoNodes()).value();
  v1::PodResources other;
  other.set_name("other");
  auto* c = other.add_containers();
  c->set_name("c");
  AddCpus(c->mutable_cpu_ids(), "8-9");
  AddMemory(c->mutable_memory(), "memory", kGi, {1});
  auto b = BuildPodView(other, TwoNodes()).value();
  NodeUsage usage = SumUsage({a, b}, TwoNodes());
  EXPECT_EQ(usage.cpus, Cpus("2-5,8-9"));
  EXPECT_EQ(usage.memory.at("memory"), 5 * kGi);
  ASSERT_EQ(usage.numa.size(), 2u);
  EXPECT_EQ(usage.numa[0].cpus.Size(), 4);
  EXPECT_EQ(usage.numa[1].memory.at("memory"), kGi);
  EXPECT_TRUE(usage.warnings.empty());
  // The same pod twice is an overlap, warned about.
  usage = SumUsage({a, a}, TwoNodes());
  ASSERT_EQ(usage.warnings.size(), 1u);
  EXPECT_THAT(usage.warnings[0], HasSubstr("uses CPUs 2-5 that another pod also uses"));
}

TEST(PodViewTest, AllocatableByNuma) {
  v1::AllocatableResourcesResponse r;
  AddCpus(r.mutable_cpu_ids(), "1-15");
  AddMemory(r.mutable_memory(), "memory", 30 * kGi, {0});
  AddMemory(r.mutable_memory(), "memory", 31 * kGi, {1});
  auto* d = r.add_devices();
  d->set_resource_name("example.com/gpu");
  d->add_device_ids("gpu0");
  d->mutable_topology()->add_nodes()->set_id(1);
  auto view = BuildAllocatableView(r, TwoNodes());
  ASSERT_TRUE(view.ok());
  ASSERT_EQ(view->numa.size(), 2u);
  EXPECT_EQ(view->numa[0].cpus, Cpus("1-7"));
  EXPECT_EQ(view->numa[1].memory.at("memory"), 31 * kGi);
  ASSERT_EQ(view->devices.size(), 1u);
  EXPECT_THAT(view->devices[0].numa, ElementsAre(1));
}

// Property: whatever split a pod-level pod reports, the node-wide CPUs are exactly the pod's
// set, the shared pool and the exclusive containers partition it, and every container is
// either exclusive with its own CPUs or pod-shared with the pool.
PODTOPO_PROPERTY(PodViewProperty, PodLevelNeverDoubleCounts, ()) {
  const int n = *rc::gen::inRange(1, 40);
  const int containers = *rc::gen::inRange(0, 6);
  v1::PodResources pod;
  pod.set_name("p");
  std::vector<int> owner(n);
  for (int i = 0; i < n; ++i) {
    pod.add_cpu_ids(i * 2);
    owner[i] = *rc::gen::inRange(-1, containers);  // -1: shared pool
  }
  for (int c = 0; c < containers; ++c) {
    auto* cr = pod.add_containers();
    cr->set_name("c" + std::to_string(c));
    for (int i = 0; i < n; ++i) {
      if (owner[i] == c) cr->add_cpu_ids(i * 2);
    }
  }
  auto view = BuildPodView(pod, {});
  RC_ASSERT(view.ok());
  RC_ASSERT(view->usage_cpus.Size() == n);
  RC_ASSERT(view->shared_pool.Union(view->exclusive_container_cpus) == view->pod_cpus);
  RC_ASSERT(!view->shared_pool.Intersects(view->exclusive_container_cpus));
  for (const auto& c : view->containers) {
    if (c.reported_cpus.IsEmpty()) {
      RC_ASSERT(c.pool == Pool::kPodShared);
      RC_ASSERT(c.cpus == view->shared_pool);
    } else {
      RC_ASSERT(c.pool == Pool::kExclusive);
    }
  }
  RC_ASSERT(view->warnings.empty());
}

}  // namespace
}  // namespace podtopo::client
