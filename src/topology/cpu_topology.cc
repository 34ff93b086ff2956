#include "topology/cpu_topology.h"

#include <set>

namespace podtopo {

void CpuTopology::AddCpu(int cpu, const CpuInfo& info) {
  if (cpu < 0 || cpu > CpuSet::kMaxCpuId) return;
  if (const CpuInfo* old = Info(cpu)) {
    by_numa_[old->numa].Remove(cpu);
    by_socket_[old->socket].Remove(cpu);
    by_core_[old->core].Remove(cpu);
    by_uncore_[old->uncore].Remove(cpu);
    for (auto* m : {&by_numa_, &by_socket_, &by_core_, &by_uncore_}) {
      std::erase_if(*m, [](const auto& kv) { return kv.second.IsEmpty(); });
    }
  }
  if (static_cast<size_t>(cpu) >= info_.size()) info_.resize(static_cast<size_t>(cpu) + 1);
  info_[static_cast<size_t>(cpu)] = info;
  all_.Add(cpu);
  by_numa_[info.numa].Add(cpu);
  by_socket_[info.socket].Add(cpu);
  by_core_[info.core].Add(cpu);
  by_uncore_[info.uncore].Add(cpu);
}

void CpuTopology::SetCountsFromCpus() {
  num_cpus = all_.Size();
  num_cores = static_cast<int>(by_core_.size());
  num_sockets = static_cast<int>(by_socket_.size());
  num_numa_nodes = static_cast<int>(by_numa_.size());
  num_uncore_caches = static_cast<int>(by_uncore_.size());
}

std::vector<int> CpuTopology::Keys(const std::map<int, CpuSet>& m) {
  std::vector<int> out;
  out.reserve(m.size());
  for (const auto& [id, _] : m) out.push_back(id);
  return out;
}

const CpuSet& CpuTopology::Lookup(const std::map<int, CpuSet>& m, int id) {
  static const CpuSet* const kEmpty = new CpuSet();
  auto it = m.find(id);
  return it == m.end() ? *kEmpty : it->second;
}

CpuSet CpuTopology::CpusInNumas(const std::vector<int>& ids) const {
  CpuSet out;
  for (int id : ids) out.UnionWith(CpusInNuma(id));
  return out;
}

CpuSet CpuTopology::CpusInSockets(const std::vector<int>& ids) const {
  CpuSet out;
  for (int id : ids) out.UnionWith(CpusInSocket(id));
  return out;
}

namespace {
std::vector<int> ElementsOf(const std::map<int, CpuSet>& m, const CpuSet& cpus) {
  std::vector<int> out;
  for (const auto& [id, set] : m) {
    if (set.Intersects(cpus)) out.push_back(id);
  }
  return out;
}
}  // namespace

std::vector<int> CpuTopology::NumaNodesOf(const CpuSet& cpus) const {
  return ElementsOf(by_numa_, cpus);
}
std::vector<int> CpuTopology::SocketsOf(const CpuSet& cpus) const {
  return ElementsOf(by_socket_, cpus);
}
std::vector<int> CpuTopology::CoresOf(const CpuSet& cpus) const {
  return ElementsOf(by_core_, cpus);
}
std::vector<int> CpuTopology::UncoreCachesOf(const CpuSet& cpus) const {
  return ElementsOf(by_uncore_, cpus);
}

bool CpuTopology::AreNumaNodesInSameSocket(const std::vector<int>& numas) const {
  CpuSet cpus;
  for (int id : numas) {
    if (by_numa_.find(id) == by_numa_.end()) return false;
    cpus.UnionWith(CpusInNuma(id));
  }
  return SocketsOf(cpus).size() <= 1;
}

}  // namespace podtopo
