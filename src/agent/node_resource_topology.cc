#include "agent/node_resource_topology.h"

#include <map>

#include "extender/nrt_attributes.h"
#include "fmt/format.h"
#include "resource/quantity.h"
#include "render/json_yaml.h"

namespace podtopo::agent {
namespace {

nlohmann::ordered_json Resource(const std::string& name, const Amount& a, bool bytes) {
  auto q = [&](uint64_t v) {
    return Quantity::FromInt(static_cast<int64_t>(v),
                             bytes ? Quantity::Format::kBinarySI : Quantity::Format::kDecimalSI)
        .String();
  };
  return {{"name", name},
          {"capacity", q(a.capacity)},
          {"allocatable", q(a.allocatable)},
          {"available", q(a.available)}};
}

}  // namespace

std::string TopologyPolicyName(const std::string& policy, const std::string& scope) {
  std::string level = scope == "pod" ? "PodLevel" : "ContainerLevel";
  if (policy == "single-numa-node") return "SingleNUMANode" + level;
  if (policy == "restricted") return "Restricted" + level;
  if (policy == "best-effort") return "BestEffort" + level;
  return "None";
}

std::string FreeCpusValue(const CpuSet& free) {
  return free.IsEmpty() ? kNoFreeCpus : free.String();
}

std::string CpuTopologyDigest(const NodeTopology& topology) {
  return extender::CpuTopologyDigest(topology);
}

nlohmann::ordered_json WithNodeOwner(nlohmann::ordered_json nrt, const std::string& node_name,
                                     const std::string& node_uid) {
  nrt["metadata"]["ownerReferences"] = nlohmann::ordered_json::array(
      {{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node_name}, {"uid", node_uid}}});
  return nrt;
}

nlohmann::ordered_json BuildNodeResourceTopology(const std::string& name,
                                                 const config::KubeletConfig& config,
                                                 const std::vector<ZoneAccount>& zones,
                                                 const std::string& cpu_topology_digest) {
  nlohmann::ordered_json nrt;
  nrt["apiVersion"] = "topology.node.k8s.io/v1alpha2";
  nrt["kind"] = "NodeResourceTopology";
  nrt["metadata"] = {{"name", name}};
  nrt["topologyPolicies"] = nlohmann::ordered_json::array(
      {TopologyPolicyName(config.topology_manager_policy, config.topology_manager_scope)});
  nrt["attributes"] = nlohmann::ordered_json::array(
      {{{"name", "topologyManagerPolicy"}, {"value", config.topology_manager_policy}},
       {{"name", "topologyManagerScope"}, {"value", config.topology_manager_scope}}});
  if (!cpu_topology_digest.empty()) {
    nrt["attributes"].push_back({{"name", kAttrCpuTopologyDigest}, {"value", cpu_topology_digest}});
  }
  if (!config.kubelet_version.empty()) {
    nrt["attributes"].push_back({{"name", kAttrKubeletVersion}, {"value", config.kubelet_version}});
  }
  if (auto reserved = config.ReservedSystemCpuSet(); reserved.ok() && !reserved->IsEmpty()) {
    nrt["attributes"].push_back({{"name", kAttrReservedCpus}, {"value", reserved->String()}});
  }
  // Every kubelet-config field admission reads, so that `podtopo extender` rebuilds the node's
  // exact admission (extender/nrt_attributes.h).
  nrt["attributes"].push_back(
      {{"name", extender::kAttrKubeletConfig}, {"value", extender::KubeletConfigAttribute(config)}});
  auto list = nlohmann::ordered_json::array();
  for (const auto& z : zones) {
    nlohmann::ordered_json zone;
    zone["name"] = fmt::format("node-{}", z.numa);
    zone["type"] = "Node";
    if (!z.distances.empty()) {
      auto costs = nlohmann::ordered_json::array();
      for (const auto& [to, d] : z.distances) {
        costs.push_back({{"name", fmt::format("node-{}", to)}, {"value", d}});
      }
      zone["costs"] = costs;
    }
    // Resources sorted by name, as the exporters sort them.
    std::map<std::string, nlohmann::ordered_json> by_name;
    by_name["cpu"] = Resource("cpu", z.cpu, false);
    for (const auto& [type, a] : z.memory) by_name[type] = Resource(type, a, true);
    for (const auto& [res, a] : z.devices) by_name[res] = Resource(res, a, false);
    auto resources = nlohmann::ordered_json::array();
    for (auto& [n, r] : by_name) resources.push_back(std::move(r));
    zone["resources"] = resources;
    zone["attributes"] = nlohmann::ordered_json::array(
        {{{"name", kAttrFreeCpus}, {"value", FreeCpusValue(z.free_cpus)}}});
    list.push_back(std::move(zone));
  }
  nrt["zones"] = list;
  return nrt;
}

std::string NrtYaml(const nlohmann::ordered_json& nrt) {
  return JsonToYaml(nrt);
}

}  // namespace podtopo::agent
