#include "devicemanager/device_manager.h"

#include "gtest/gtest.h"

namespace podtopo::devicemanager {
namespace {

using topologymanager::BitMask;
using topologymanager::TopologyHint;

constexpr char kGpu[] = "example.com/gpu";

Container GpuContainer(const std::string& name, int count, ContainerKind kind = ContainerKind::kApp) {
  Container c;
  c.name = name;
  c.kind = kind;
  c.resources.limits[kGpu] = Quantity::FromInt(count);
  c.resources.requests[kGpu] = Quantity::FromInt(count);
  return c;
}

Pod PodWith(std::vector<Container> init, std::vector<Container> apps) {
  Pod p;
  p.name = "p";
  p.uid = "uid-p";
  p.init_containers = std::move(init);
  p.containers = std::move(apps);
  return p;
}

TopologyHint Hint(uint64_t mask, bool preferred) {
  return TopologyHint{BitMask::FromUint64(mask), preferred};
}

DeviceManager TwoNumaTwoGpus() {
  return DeviceManager({{kGpu, "gpu0", 0}, {kGpu, "gpu1", 1}}, {0, 1});
}

TEST(DeviceManagerTest, SingleDeviceRequestPrefersEachSingleNode) {
  DeviceManager dm = TwoNumaTwoGpus();
  Pod pod = PodWith({}, {GpuContainer("c", 1)});
  HintMap hints = dm.GetTopologyHints(pod, pod.containers[0]);
  ASSERT_TRUE(hints.count(kGpu));
  ASSERT_TRUE(hints[kGpu].has_value());
  std::vector<TopologyHint> want = {Hint(0b01, true), Hint(0b10, true), Hint(0b11, false)};
  EXPECT_EQ(hints[kGpu]->Enumerate(), want);
}

TEST(DeviceManagerTest, TwoDevicesNeedBothNodes) {
  DeviceManager dm = TwoNumaTwoGpus();
  Pod pod = PodWith({}, {GpuContainer("c", 2)});
  HintMap hints = dm.GetTopologyHints(pod, pod.containers[0]);
  std::vector<TopologyHint> want = {Hint(0b11, true)};
  EXPECT_EQ(hints[kGpu]->Enumerate(), want);
}

TEST(DeviceManagerTest, TooManyDevicesGivesEmptyHintList) {
  DeviceManager dm = TwoNumaTwoGpus();
  Pod pod = PodWith({}, {GpuContainer("c", 3)});
  HintMap hints = dm.GetTopologyHints(pod, pod.containers[0]);
  ASSERT_TRUE(hints[kGpu].has_value());
  EXPECT_TRUE(hints[kGpu]->empty());
}

TEST(DeviceManagerTest, DevicesWithoutNumaHaveNoPreference) {
  DeviceManager dm({{kGpu, "gpu0", -1}}, {0, 1});
  Pod pod = PodWith({}, {GpuContainer("c", 1)});
  HintMap hints = dm.GetTopologyHints(pod, pod.containers[0]);
  ASSERT_TRUE(hints.count(kGpu));
  EXPECT_FALSE(hints[kGpu].has_value());
}

TEST(DeviceManagerTest, AllocationFollowsTheHintAndUsedDevicesShrinkHints) {
  DeviceManager dm = TwoNumaTwoGpus();
  Pod a = PodWith({}, {GpuContainer("c", 1)});
  ASSERT_TRUE(dm.Allocate(a, a.containers[0], Hint(0b10, true)).ok());
  EXPECT_EQ(dm.ContainerDevices("uid-p", "c").at(kGpu), std::vector<std::string>{"gpu1"});

  Pod b = PodWith({}, {GpuContainer("d", 1)});
  b.uid = "uid-b";
  HintMap hints = dm.GetTopologyHints(b, b.containers[0]);
  // gpu1 is taken: only masks holding NUMA 0 can serve one device; minimum size stays 1.
  std::vector<TopologyHint> want = {Hint(0b01, true), Hint(0b11, false)};
  EXPECT_EQ(hints[kGpu]->Enumerate(), want);

  Pod c = PodWith({}, {GpuContainer("e", 2)});
  c.uid = "uid-c";
  auto s = dm.Allocate(c, c.containers[0], Hint(0b01, true));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "requested number of devices unavailable for example.com/gpu. Requested: 2, "
            "Available: 1");
  EXPECT_TRUE(dm.ContainerDevices("uid-c", "e").empty());
}

TEST(DeviceManagerTest, InitContainerDevicesAreReusedByAppContainers) {
  DeviceManager dm = TwoNumaTwoGpus();
  Pod pod = PodWith({GpuContainer("init", 1, ContainerKind::kInit)}, {GpuContainer("app", 1)});
  ASSERT_TRUE(dm.Allocate(pod, pod.init_containers[0], Hint(0b10, true)).ok());
  ASSERT_TRUE(dm.Allocate(pod, pod.containers[0], Hint(0b01, true)).ok());
  EXPECT_EQ(dm.ContainerDevices("uid-p", "app").at(kGpu), std::vector<std::string>{"gpu1"});
  EXPECT_EQ(dm.AllocatedDevices()[kGpu].size(), 1u);
}

TEST(DeviceManagerTest, SidecarDevicesAreNotReused) {
  DeviceManager dm = TwoNumaTwoGpus();
  Pod pod = PodWith({GpuContainer("side", 1, ContainerKind::kSidecar)}, {GpuContainer("app", 1)});
  ASSERT_TRUE(dm.Allocate(pod, pod.init_containers[0], Hint(0b01, true)).ok());
  ASSERT_TRUE(dm.Allocate(pod, pod.containers[0], Hint(0b01, true)).ok());
  EXPECT_EQ(dm.ContainerDevices("uid-p", "side").at(kGpu), std::vector<std::string>{"gpu0"});
  EXPECT_EQ(dm.ContainerDevices("uid-p", "app").at(kGpu), std::vector<std::string>{"gpu1"});
  dm.RemoveContainer("uid-p", "side");
  dm.RemoveContainer("uid-p", "app");
  EXPECT_TRUE(dm.AllocatedDevices().empty());
}

TEST(DeviceManagerTest, PodHintsUseTheSidecarFormula) {
  DeviceManager dm({{kGpu, "g0", 0}, {kGpu, "g1", 0}, {kGpu, "g2", 1}, {kGpu, "g3", 1}}, {0, 1});
  // max(app 1 + sidecar 1, init 1 + sidecars before it 0) = 2.
  Pod pod = PodWith({GpuContainer("init", 1, ContainerKind::kInit),
                     GpuContainer("side", 1, ContainerKind::kSidecar)},
                    {GpuContainer("app", 1)});
  EXPECT_EQ(PodLimits(pod).at(kGpu).Value(), 2);
  HintMap hints = dm.GetPodTopologyHints(pod);
  std::vector<TopologyHint> want = {Hint(0b01, true), Hint(0b10, true), Hint(0b11, false)};
  EXPECT_EQ(hints[kGpu]->Enumerate(), want);
}

}  // namespace
}  // namespace podtopo::devicemanager
