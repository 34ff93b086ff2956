#include "admission/pod_requests.h"

#include "api/pod_yaml.h"
#include "gtest/gtest.h"

namespace podtopo {
namespace {

constexpr uint64_t kGi = uint64_t{1} << 30;
constexpr uint64_t kMi = uint64_t{1} << 20;

NodeTopology TwoNodes() {
  NodeTopology node;
  for (int cpu = 0; cpu < 8; ++cpu) {
    node.cpus.AddCpu(cpu, {.numa = cpu / 4, .socket = cpu / 4, .core = cpu % 4 + cpu / 4 * 4,
                           .uncore = cpu / 4});
  }
  node.cpus.SetCountsFromCpus();
  NumaNode n0{0, 8 * kGi, {{"hugepages-2Mi", 512 * kMi}}, {10, 20}};
  NumaNode n1{1, 8 * kGi, {{"hugepages-2Mi", 0}}, {20, 10}};
  node.numa_nodes = {n0, n1};
  node.devices = {{"example.com/gpu", "g0", 0}};
  return node;
}

Pod OnePod(const std::string& yaml) {
  auto pods = ParsePods(yaml, "t.yaml");
  EXPECT_TRUE(pods.ok()) << pods.status();
  return pods->front();
}

TEST(PodRequestsTest, CapacityAndAllocatable) {
  NodeTopology node = TwoNodes();
  ResourceList cap = NodeCapacity(node);
  EXPECT_EQ(cap.at("cpu").Value(), 8);
  EXPECT_EQ(cap.at("memory").Value(), static_cast<int64_t>(16 * kGi));
  EXPECT_EQ(cap.at("hugepages-2Mi").Value(), static_cast<int64_t>(512 * kMi));
  EXPECT_EQ(cap.at("example.com/gpu").Value(), 1);
  // Seed reservation: 1 CPU and 1Gi system reserved, 100Mi hard eviction; allocatable memory
  // also loses the hugepages.
  ResourceList alloc = NodeAllocatable(node, config::SeedDefault());
  EXPECT_EQ(alloc.at("cpu").MilliValue(), 7000);
  EXPECT_EQ(alloc.at("memory").Value(),
            static_cast<int64_t>(16 * kGi - kGi - 100 * kMi - 512 * kMi));
}

TEST(PodRequestsTest, FitChecksCpuThenMemoryThenScalars) {
  NodeTopology node = TwoNodes();
  ResourceList alloc = NodeAllocatable(node, config::SeedDefault());
  Pod small = OnePod(R"(apiVersion: v1
kind: Pod
metadata: {name: small}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: "4", memory: 1Gi}}
)");
  EXPECT_FALSE(CheckNodeFit(small, {}, alloc, true, 110).has_value());
  // A second and third such pod: 8 CPUs > 7 allocatable.
  auto r = CheckNodeFit(small, {&small}, alloc, true, 110);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->reason, "OutOfcpu");
  EXPECT_EQ(r->message,
            "Node didn't have enough resource: cpu, requested: 4000, used: 4000, capacity: 7000");
  Pod gpus = OnePod(R"(apiVersion: v1
kind: Pod
metadata: {name: gpus}
spec:
  containers:
  - name: c
    resources: {limits: {example.com/gpu: "2"}}
)");
  r = CheckNodeFit(gpus, {}, alloc, true, 110);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->reason, "OutOfexample.com/gpu");
  // Extended resources the node does not have are left to other handlers.
  Pod other = OnePod(R"(apiVersion: v1
kind: Pod
metadata: {name: other}
spec:
  containers:
  - name: c
    resources: {limits: {vendor.io/fpga: "1"}}
)");
  EXPECT_FALSE(CheckNodeFit(other, {}, alloc, true, 110).has_value());
  r = CheckNodeFit(other, {&small}, alloc, true, 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->reason, "OutOfpods");
}

}  // namespace
}  // namespace podtopo
