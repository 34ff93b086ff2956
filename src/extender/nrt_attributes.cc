#include "extender/nrt_attributes.h"

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "topology/topology_json.h"

namespace podtopo::extender {

std::string CpuTopologyDigest(const NodeTopology& topology) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  for (unsigned char c : WriteTopologyJson(topology)) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("fnv1a64:{:016x}", h);
}

std::string KubeletConfigAttribute(const config::KubeletConfig& c) {
  nlohmann::ordered_json j;
  j["apiVersion"] = c.api_version;
  j["kind"] = c.kind;
  if (!c.feature_gates.empty()) j["featureGates"] = c.feature_gates;
  j["cpuManagerPolicy"] = c.cpu_manager_policy;
  if (!c.cpu_manager_policy_options.empty()) {
    j["cpuManagerPolicyOptions"] = c.cpu_manager_policy_options;
  }
  j["memoryManagerPolicy"] = c.memory_manager_policy;
  j["topologyManagerPolicy"] = c.topology_manager_policy;
  j["topologyManagerScope"] = c.topology_manager_scope;
  if (!c.topology_manager_policy_options.empty()) {
    j["topologyManagerPolicyOptions"] = c.topology_manager_policy_options;
  }
  if (!c.reserved_system_cpus.empty()) j["reservedSystemCPUs"] = c.reserved_system_cpus;
  if (!c.system_reserved.empty()) j["systemReserved"] = c.system_reserved;
  if (!c.kube_reserved.empty()) j["kubeReserved"] = c.kube_reserved;
  // Always written: an empty evictionHard reads back as "none", a missing one as the defaults.
  j["evictionHard"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : c.eviction_hard) j["evictionHard"][k] = v;
  if (c.merge_default_eviction_settings) j["mergeDefaultEvictionSettings"] = true;
  if (!c.reserved_memory.empty()) {
    auto list = nlohmann::ordered_json::array();
    for (const config::MemoryReservation& r : c.reserved_memory) {
      nlohmann::ordered_json limits = nlohmann::ordered_json::object();
      for (const auto& [k, q] : r.limits) limits[k] = q.String();
      list.push_back({{"numaNode", r.numa_node}, {"limits", limits}});
    }
    j["reservedMemory"] = list;
  }
  return j.dump();
}

absl::StatusOr<config::KubeletConfig> ParseKubeletConfigAttribute(const std::string& value,
                                                                  const std::string& source) {
  config::ParsedKubeletConfig parsed = config::ParseKubeletConfig(value, source);
  if (config::HasErrors(parsed.findings)) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: attribute {}: {}", source, kAttrKubeletConfig,
        std::string(config::ErrorsToStatus(parsed.findings).message())));
  }
  return parsed.config;
}

}  // namespace podtopo::extender
