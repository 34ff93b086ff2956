#include "testing/topologies.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "testing/testing.h"

namespace podtopo::testing {

const CpuTopology& FakeTopology(const std::string& name) {
  static std::mutex mu;
  static auto* cache = new std::map<std::string, CpuTopology>();
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(name); it != cache->end()) return it->second;
  static const nlohmann::json* all =
      new nlohmann::json(LoadVectors("cpu_topologies.json")["topologies"]);
  if (!all->contains(name)) {
    std::fprintf(stderr, "unknown fake topology %s\n", name.c_str());
    std::abort();
  }
  const auto& j = (*all)[name];
  CpuTopology topo;
  for (const auto& c : j["cpus"]) {
    topo.AddCpu(c["cpu"].get<int>(), CpuInfo{.numa = c["numa"].get<int>(),
                                             .socket = c["socket"].get<int>(),
                                             .core = c["core"].get<int>(),
                                             .uncore = c["uncore"].get<int>()});
  }
  topo.num_cpus = j["NumCPUs"].get<int>();
  topo.num_sockets = j["NumSockets"].get<int>();
  topo.num_cores = j["NumCores"].get<int>();
  topo.num_numa_nodes = j["NumNUMANodes"].get<int>();
  topo.num_uncore_caches = j["NumUncoreCache"].get<int>();
  return cache->emplace(name, std::move(topo)).first->second;
}

}  // namespace podtopo::testing
