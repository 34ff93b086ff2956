// The simulated node's NodeResourceTopology comes from the agent's accounting: for the same pods
// it equals what `podtopo agent` computes from a PodResources answer, a pod-level bubble
// counted once.
#include "kubenode/node_nrt.h"

#include "agent/node_resource_topology.h"
#include "agent/test_util.h"
#include "gtest/gtest.h"

namespace podtopo::kubenode {
namespace {

TEST(NodeNrt, EqualsTheAgentsAccountingOfTheSameAnswers) {
  // The docs' pod-level-resource-demo and pod-scope-mixed on preset:demo, as a v1.37 kubelet
  // reports them, through the agent's Observation.
  agent::testutil::DocsNode d = agent::testutil::AdmitDocsPods(podresources::Compat::k1_37);
  std::vector<agent::ZoneAccount> agent_zones =
      agent::AccountZones(d.topology, d.config, agent::testutil::ObservationOf(d));
  std::vector<agent::ZoneAccount> zones = ZonesOf(*d.node);
  ASSERT_EQ(zones.size(), agent_zones.size());
  for (size_t i = 0; i < zones.size(); ++i) {
    EXPECT_EQ(zones[i].cpu.capacity, agent_zones[i].cpu.capacity) << i;
    EXPECT_EQ(zones[i].cpu.allocatable, agent_zones[i].cpu.allocatable) << i;
    EXPECT_EQ(zones[i].cpu.available, agent_zones[i].cpu.available) << i;
    EXPECT_EQ(zones[i].free_cpus.String(), agent_zones[i].free_cpus.String()) << i;
    for (const auto& [type, a] : agent_zones[i].memory) {
      EXPECT_EQ(zones[i].memory[type].available, a.available) << i << " " << type;
    }
  }
  // node-0: 16 CPUs, CPU 0 reserved; the seed pod's bubble 1,33 and pod-scope-mixed's bubble
  // 2-3,34-35 (main-app's exclusive 2,34 inside it, reported by the container too): 15 - 6 = 9,
  // each pod counted once.
  EXPECT_EQ(zones[0].cpu.allocatable, 15u);
  EXPECT_EQ(zones[0].cpu.available, 9u);
  EXPECT_EQ(zones[0].free_cpus.Size(), 9u);
  EXPECT_TRUE(zones[0].free_cpus.Intersection(d.node->ReservedCpus()).IsEmpty());
}

TEST(NodeNrt, ReleasedPodsFreeTheirCpusAndMemory) {
  agent::testutil::DocsNode d = agent::testutil::AdmitDocsPods(podresources::Compat::k1_37);
  std::vector<Node::PodName> all;
  for (const auto& a : d.node->AdmittedPods()) all.push_back({a.namespace_name, a.name});
  ASSERT_TRUE(d.node->Remove(all).ok());
  for (const auto& z : ZonesOf(*d.node)) {
    EXPECT_EQ(z.cpu.available, z.cpu.allocatable) << z.numa;
    for (const auto& [type, a] : z.memory) EXPECT_EQ(a.available, a.allocatable) << type;
  }
  nlohmann::ordered_json nrt = NodeResourceTopologyOf(*d.node, "sim-a");
  EXPECT_EQ(nrt["metadata"]["name"], "sim-a");
  EXPECT_EQ(nrt["zones"][0]["resources"][0]["name"], "cpu");
  EXPECT_EQ(nrt["zones"][0]["resources"][0]["available"], "15");
}

}  // namespace
}  // namespace podtopo::kubenode
