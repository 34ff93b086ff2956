#include "kubenode/node_nrt.h"

#include "agent/node_resource_topology.h"
#include "client/pod_view.h"
#include "podresources/report.h"

namespace podtopo::kubenode {

agent::Observation ObservationOf(const Node& node) {
  const NodeTopology& topology = node.topology();
  const config::KubeletConfig& config = node.config();
  podresources::ReportingRules rules;
  rules.pod_level_gate = config.FeatureEnabled("PodLevelResourceManagers") &&
                         config.FeatureEnabled("PodLevelResources");
  const podresources::DeviceNuma device_numa = podresources::DeviceNumaMap(topology);
  const client::NumaMap numa_map = agent::NumaMapOf(topology);

  agent::Observation o;
  for (const PodAllocation& a : node.AdmittedPods()) {
    const Pod* pod = node.FindPod(a.namespace_name, a.name);
    if (pod == nullptr) continue;
    auto view = client::BuildPodView(podresources::BuildPodResources({*pod, a}, rules, device_numa),
                                     numa_map);
    if (view.ok()) o.pods.push_back(std::move(*view));
  }
  // GetAllocatableResources, as serve/daemon.cc answers it.
  podresources::AllocatableView allocatable;
  allocatable.cpus = node.AllocatableCpus();
  for (const auto& [numa, types] : node.MemoryTables()) {
    for (const auto& [type, t] : types) {
      if (t.allocatable > 0) allocatable.memory.push_back({type, t.allocatable, {numa}});
    }
  }
  allocatable.devices = topology.devices;
  auto view = client::BuildAllocatableView(podresources::BuildAllocatable(allocatable), numa_map);
  if (view.ok()) o.allocatable = std::move(*view);
  o.usage = client::SumUsage(o.pods, numa_map);
  o.time = std::chrono::system_clock::now();
  return o;
}

std::vector<agent::ZoneAccount> ZonesOf(const Node& node) {
  return agent::AccountZones(node.topology(), node.config(), ObservationOf(node));
}

nlohmann::ordered_json NodeResourceTopologyOf(const Node& node, const std::string& name) {
  return agent::BuildNodeResourceTopology(name, node.config(), ZonesOf(node),
                                          agent::CpuTopologyDigest(node.topology()));
}

}  // namespace podtopo::kubenode
