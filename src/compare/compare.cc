#include "compare/compare.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "api/pod_yaml.h"
#include "fmt/format.h"
#include "resource/human_bytes.h"
#include "topology/topology_json.h"

namespace podtopo::compare {
namespace {

// Runs fn(0..n-1) on up to `threads` threads (0 = one per hardware thread).
void ParallelFor(int n, int threads, const std::function<void(int)>& fn) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, n);
  if (threads <= 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = next++; i < n; i = next++) fn(i);
    });
  }
  for (auto& th : pool) th.join();
}

bool IsExclusive(const std::string& assignment) {
  return assignment == "node_exclusive" || assignment == "pod_exclusive";
}

// Counts one pod's result into `t` (node-level counts come from CountNode).
void CountPod(const PodAllocation& a, Tally* t) {
  ++t->pods;
  if (!a.admitted) {
    ++t->rejected[a.reason];
    return;
  }
  ++t->admitted;
  CpuSet exclusive;
  std::map<std::string, CpuSet> by_kind;
  for (const auto& c : a.containers) {
    if (!IsExclusive(c.assignment)) continue;
    exclusive.UnionWith(c.cpus);
    by_kind[ContainerKindName(c.kind)].UnionWith(c.cpus);
  }
  t->exclusive_cpus += exclusive.Size();
  for (const auto& [kind, cpus] : by_kind) t->exclusive_cpus_by_kind[kind] += cpus.Size();
  t->pod_shared_pool_cpus += a.cpus.Difference(exclusive).Size();
  if (a.topology_hint.has_value() && a.topology_hint->preferred) ++t->aligned_pods;
}

void CountNode(const Node& node, Tally* t) {
  t->node_shared_pool_cpus += node.DefaultCpuSet().Size();
  for (const auto& [numa, types] : node.MemoryTables()) {
    for (const auto& [type, table] : types) {
      MemoryUse& use = t->memory[numa][type];
      use.allocatable += table.allocatable;
      use.allocated += table.allocatable - table.free;
    }
  }
}

absl::Status WithContext(const std::string& config, const std::string& node,
                         const absl::Status& s) {
  return absl::Status(s.code(),
                      fmt::format("--config {} on node {}: {}", config, node, std::string(s.message())));
}

// An empty node of `topology` under `cfg`, named in its errors as WithContext names them.
// compare reads no admission trace (AdmissionTrace is for `admit -o wide` and `explain`), so
// the node builds none.
absl::StatusOr<std::unique_ptr<Node>> EmptyNode(const Configuration& cfg, const FleetNode& node) {
  auto created = Node::Create(*node.topology, cfg.config, {});
  if (!created.ok()) return WithContext(cfg.name, node.name, created.status());
  (*created)->set_tracing(false);
  return created;
}

// The pods of every configuration must be the same pods (only their defaulting may differ).
absl::Status CheckSamePods(const CompareRequest& request) {
  if (request.configs.empty()) return absl::InvalidArgumentError("no --config given");
  const auto& first = request.configs.front();
  for (const auto& c : request.configs) {
    if (c.pods == nullptr) {
      return absl::InvalidArgumentError(fmt::format("--config {}: no pods", c.name));
    }
    const std::vector<Pod>& pods = *c.pods;
    const std::vector<Pod>& first_pods = *first.pods;
    bool same = pods.size() == first_pods.size();
    for (size_t i = 0; same && c.pods != first.pods && i < pods.size(); ++i) {
      same = pods[i].name == first_pods[i].name &&
             pods[i].namespace_name == first_pods[i].namespace_name &&
             pods[i].node_name == first_pods[i].node_name;
    }
    if (!same) {
      return absl::InvalidArgumentError(fmt::format(
          "--config {}: its pods are not those of --config {} (every configuration runs the same "
          "pods)",
          c.name, first.name));
    }
  }
  return absl::OkStatus();
}

PodOutcome OutcomeOf(const PodAllocation& a, int node) {
  return PodOutcome{a.namespace_name + "/" + a.name, node, a.admitted, a.reason,
                    a.admitted && !a.cpus.IsEmpty(), a.admitted && !a.memory.empty()};
}

// What `to`'s kubelet reads of the checkpoints `from`'s kubelet wrote for `written`'s pods;
// nullopt when the two name the same version (or none).
std::optional<CheckpointCompatibility> CompatibilityOf(const config::KubeletConfig& from,
                                                       const config::KubeletConfig& to,
                                                       const ConfigResult& written) {
  const kubelet::KubeletVersion* v_from = from.Version();
  const kubelet::KubeletVersion* v_to = to.Version();
  if (v_from == nullptr || v_to == nullptr || v_from == v_to) return std::nullopt;
  CheckpointCompatibility c;
  c.from_version = v_from->name;
  c.to_version = v_to->name;
  for (auto file : {kubelet::CheckpointFile::kCpu, kubelet::CheckpointFile::kMemory}) {
    CheckpointFileRead r;
    r.file = file;
    r.written = kubelet::WrittenCheckpointFormat(
        *v_from, file, from.FeatureEnabled("PodLevelResourceManagers"));
    r.read = kubelet::ReadCheckpointFormat(
        *v_to, file, to.FeatureEnabled("PodLevelResourceManagers"), r.written);
    if (r.read.mode == kubelet::ReadMode::kLegacyPart) {
      for (const PodOutcome& p : written.pods) {
        if (file == kubelet::CheckpointFile::kCpu ? p.pod_cpu_entry : p.pod_memory_entry) {
          r.pods_dropped.push_back(p.pod);
        }
      }
    }
    c.files.push_back(std::move(r));
  }
  return c;
}

// Every configuration after the first: what it reads of the first one's checkpoints.
void AddCompatibility(const CompareRequest& request, CompareResult& result) {
  for (size_t c = 1; c < result.configs.size(); ++c) {
    result.configs[c].checkpoints_from_first = CompatibilityOf(
        request.configs[0].config, request.configs[c].config, result.configs[0]);
  }
}

// ---------------------------------------------------------------------------------------
// Nodes that get the same answers (see compare.h, "Identical nodes").

void AppendField(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

void AppendResources(std::string& out, const ResourceList& list) {
  AppendField(out, std::to_string(list.size()));
  for (const auto& [name, q] : list) {
    AppendField(out, name);
    // The quantity as every reader sees it: its text, its canonical text, its format and
    // Go's int64 representation.
    AppendField(out, q.String());
    AppendField(out, q.CanonicalString());
    AppendField(out, std::to_string(static_cast<int>(q.format())));
    const std::optional<int64_t> go_int = q.AsInt64();
    AppendField(out, go_int.has_value() ? std::to_string(*go_int) : "-");
  }
}

void AppendRequirements(std::string& out, const ResourceRequirements& r) {
  AppendResources(out, r.requests);
  AppendResources(out, r.limits);
}

// Everything of a pod but its identity (namespace, name, uid, labels, source, spec.nodeName,
// controller), as one string: equal strings, equal pods for admission.
std::string AdmissionSignature(const Pod& pod) {
  std::string out;
  if (pod.resources.has_value()) {
    out += 'R';
    AppendRequirements(out, *pod.resources);
  } else {
    out += '-';
  }
  for (const auto* list : {&pod.init_containers, &pod.containers, &pod.ephemeral_containers}) {
    AppendField(out, std::to_string(list->size()));
    for (const Container& c : *list) {
      AppendField(out, ContainerKindName(c.kind));
      AppendField(out, c.name);
      AppendField(out, c.image);
      AppendField(out, std::to_string(c.command.size()));
      for (const auto& a : c.command) AppendField(out, a);
      AppendField(out, std::to_string(c.args.size()));
      for (const auto& a : c.args) AppendField(out, a);
      AppendRequirements(out, c.resources);
    }
  }
  return out;
}

// For each pod, a number shared by the pods with the same AdmissionSignature.
std::vector<int> SignatureClasses(const std::vector<Pod>& pods) {
  std::unordered_map<std::string, int> classes;
  std::vector<int> out;
  out.reserve(pods.size());
  for (const Pod& p : pods) {
    out.push_back(classes.emplace(AdmissionSignature(p), static_cast<int>(classes.size()))
                      .first->second);
  }
  return out;
}

// True when no two of the pods `indices` share a namespace/name or a uid (the admission then
// sees each as a new pod, as on any other node).
bool DistinctIdentities(const std::vector<Pod>& pods, const std::vector<int>& indices) {
  std::unordered_set<std::string> keys, uids;
  for (int i : indices) {
    if (!keys.insert(pods[i].Key()).second || !uids.insert(pods[i].uid).second) return false;
  }
  return true;
}

// For one configuration: for each node, the node whose run stands for it (itself when it
// runs). A node stands for the later nodes of the same topology whose pods have, in order,
// the same admission signatures, when the pods of both have distinct identities.
std::vector<int> Representatives(const CompareRequest& request, const std::vector<Pod>& pods,
                                 const std::vector<std::vector<int>>& pods_of) {
  const std::vector<int> classes = SignatureClasses(pods);
  std::map<std::pair<const NodeTopology*, std::vector<int>>, int> first;
  std::vector<int> out(pods_of.size());
  for (size_t j = 0; j < pods_of.size(); ++j) {
    out[j] = static_cast<int>(j);
    if (!DistinctIdentities(pods, pods_of[j])) continue;
    std::vector<int> sequence;
    sequence.reserve(pods_of[j].size());
    for (int i : pods_of[j]) sequence.push_back(classes[i]);
    out[j] = first.emplace(std::make_pair(request.fleet[j].topology.get(), std::move(sequence)),
                           static_cast<int>(j))
                 .first->second;
  }
  return out;
}

// One configuration on one node: the pods `indices` in order.
absl::StatusOr<NodeResult> RunNode(const Configuration& cfg, const FleetNode& fleet_node,
                                   int node_index, const std::vector<int>& indices,
                                   std::vector<PodOutcome>* outcomes) {
  auto node = EmptyNode(cfg, fleet_node);
  if (!node.ok()) return node.status();
  NodeResult r;
  r.node = fleet_node.name;
  for (int i : indices) {
    auto a = (*node)->Admit((*cfg.pods)[i]);
    if (!a.ok()) return WithContext(cfg.name, fleet_node.name, a.status());
    CountPod(*a, &r.tally);
    (*outcomes)[i] = OutcomeOf(*a, node_index);
  }
  CountNode(**node, &r.tally);
  r.default_cpu_set = (*node)->DefaultCpuSet();
  r.reserved_cpus = (*node)->ReservedCpus();
  return r;
}

// One configuration on the whole fleet, pods in input order, first-fit pods offered to each
// node in turn.
absl::Status RunFirstFit(const Configuration& cfg, const std::vector<FleetNode>& fleet,
                         const std::vector<int>& where, ConfigResult* out) {
  std::vector<std::unique_ptr<Node>> nodes;
  for (const auto& f : fleet) {
    auto node = EmptyNode(cfg, f);
    if (!node.ok()) return node.status();
    nodes.push_back(std::move(*node));
  }
  out->nodes.resize(fleet.size());
  Tally unplaced;
  for (size_t i = 0; i < cfg.pods->size(); ++i) {
    const Pod& pod = (*cfg.pods)[i];
    if (where[i] != kFirstFitNode) {
      auto a = nodes[where[i]]->Admit(pod);
      if (!a.ok()) return WithContext(cfg.name, fleet[where[i]].name, a.status());
      CountPod(*a, &out->nodes[where[i]].tally);
      out->pods[i] = OutcomeOf(*a, where[i]);
      continue;
    }
    std::optional<PodAllocation> first_rejection;
    bool placed = false;
    for (size_t j = 0; j < nodes.size() && !placed; ++j) {
      auto a = nodes[j]->Admit(pod);
      if (!a.ok()) return WithContext(cfg.name, fleet[j].name, a.status());
      if (a->admitted) {
        CountPod(*a, &out->nodes[j].tally);
        out->pods[i] = OutcomeOf(*a, static_cast<int>(j));
        placed = true;
      } else if (!first_rejection.has_value()) {
        first_rejection = std::move(*a);
      }
    }
    if (!placed) {
      CountPod(*first_rejection, &unplaced);
      out->pods[i] = OutcomeOf(*first_rejection, -1);
    }
  }
  for (size_t j = 0; j < nodes.size(); ++j) {
    NodeResult& r = out->nodes[j];
    r.node = fleet[j].name;
    CountNode(*nodes[j], &r.tally);
    r.default_cpu_set = nodes[j]->DefaultCpuSet();
    r.reserved_cpus = nodes[j]->ReservedCpus();
    out->total.Add(r.tally);
  }
  out->total.Add(unplaced);
  return absl::OkStatus();
}

std::string Pods(size_t n) { return n == 1 ? "1 pod" : fmt::format("{} pods", n); }

// "default/a, default/b, default/c and 4 more"
std::string SomeNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 3) out += fmt::format(" and {} more", names.size() - 3);
  return out;
}

// "sidecars no longer hold 14 exclusive CPUs", "... now hold 4 ...", "... hold 6 ... instead of 4"
void CountChange(const std::string& who, const std::string& what, int before, int after,
                 std::vector<std::string>* out) {
  if (before == after) return;
  if (after == 0) {
    out->push_back(fmt::format("{} no longer hold {} {}", who, before, what));
  } else if (before == 0) {
    out->push_back(fmt::format("{} now hold {} {}", who, after, what));
  } else {
    out->push_back(fmt::format("{} hold {} {} instead of {} ({:+d})", who, after, what, before,
                               after - before));
  }
}

int Get(const std::map<std::string, int>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

int Tally::Rejected() const {
  int n = 0;
  for (const auto& [reason, count] : rejected) n += count;
  return n;
}

void Tally::Add(const Tally& o) {
  pods += o.pods;
  admitted += o.admitted;
  for (const auto& [k, v] : o.rejected) rejected[k] += v;
  exclusive_cpus += o.exclusive_cpus;
  pod_shared_pool_cpus += o.pod_shared_pool_cpus;
  node_shared_pool_cpus += o.node_shared_pool_cpus;
  aligned_pods += o.aligned_pods;
  for (const auto& [k, v] : o.exclusive_cpus_by_kind) exclusive_cpus_by_kind[k] += v;
  for (const auto& [numa, types] : o.memory) {
    for (const auto& [type, use] : types) {
      memory[numa][type].allocated += use.allocated;
      memory[numa][type].allocatable += use.allocatable;
    }
  }
}

Tally TallyOf(const std::vector<PodAllocation>& results, const Node& node) {
  Tally t;
  for (const auto& r : results) CountPod(r, &t);
  CountNode(node, &t);
  return t;
}

absl::StatusOr<CompareResult> Compare(const CompareRequest& request) {
  if (auto s = CheckSamePods(request); !s.ok()) return s;
  const auto& fleet = request.fleet;
  auto where = AssignPods(*request.configs.front().pods, fleet, request.placement);
  if (!where.ok()) return where.status();

  CompareResult result;
  result.placement = request.placement;
  result.first_fit_used =
      std::find(where->begin(), where->end(), kFirstFitNode) != where->end();
  const int n_configs = static_cast<int>(request.configs.size());
  const int n_nodes = static_cast<int>(fleet.size());
  result.configs.resize(n_configs);
  for (int c = 0; c < n_configs; ++c) {
    result.configs[c].config = request.configs[c].name;
    result.configs[c].kubelet_version = request.configs[c].config.kubelet_version;
    result.configs[c].pods.resize(request.configs[c].pods->size());
  }

  if (result.first_fit_used) {
    std::vector<absl::Status> errors(n_configs);
    ParallelFor(n_configs, request.threads, [&](int c) {
      errors[c] = RunFirstFit(request.configs[c], fleet, *where, &result.configs[c]);
    });
    for (const auto& e : errors) {
      if (!e.ok()) return e;
    }
    AddCompatibility(request, result);
    return result;
  }

  std::vector<std::vector<int>> pods_of(n_nodes);
  for (size_t i = 0; i < where->size(); ++i) pods_of[(*where)[i]].push_back(static_cast<int>(i));
  // The (configuration, node) runs: one per node, or one per group of identical nodes.
  std::vector<std::vector<int>> stands_for(n_configs);
  auto same_pods_as_before = [&](int c) {
    return c > 0 && request.configs[c].pods == request.configs[c - 1].pods;
  };
  // Each list of pods on its own thread (the signatures of 100,000 pods take a while).
  ParallelFor(n_configs, request.threads, [&](int c) {
    if (same_pods_as_before(c)) return;  // copied below
    if (request.share_identical_nodes) {
      stands_for[c] = Representatives(request, *request.configs[c].pods, pods_of);
    } else {
      stands_for[c].resize(n_nodes);
      for (int j = 0; j < n_nodes; ++j) stands_for[c][j] = j;
    }
  });
  std::vector<std::pair<int, int>> work;  // (configuration, node) to run
  for (int c = 0; c < n_configs; ++c) {
    if (same_pods_as_before(c)) stands_for[c] = stands_for[c - 1];
    for (int j = 0; j < n_nodes; ++j) {
      if (stands_for[c][j] == j) work.emplace_back(c, j);
    }
  }
  std::vector<absl::StatusOr<NodeResult>> runs(static_cast<size_t>(n_configs) * n_nodes,
                                               absl::UnknownError("not run"));
  ParallelFor(static_cast<int>(work.size()), request.threads, [&](int k) {
    const auto [c, j] = work[k];
    runs[static_cast<size_t>(c) * n_nodes + j] =
        RunNode(request.configs[c], fleet[j], j, pods_of[j], &result.configs[c].pods);
  });
  // Each configuration's results on its own thread; the first failed run in (configuration,
  // node) order is the error.
  std::vector<absl::Status> errors(n_configs);
  ParallelFor(n_configs, request.threads, [&](int c) {
    ConfigResult& cr = result.configs[c];
    const std::vector<Pod>& pods = *request.configs[c].pods;
    cr.nodes.reserve(n_nodes);
    for (int j = 0; j < n_nodes; ++j) {
      const int rep = stands_for[c][j];
      const auto& run = runs[static_cast<size_t>(c) * n_nodes + rep];
      if (!run.ok()) {
        errors[c] = run.status();
        return;
      }
      cr.total.Add(run->tally);
      if (rep == j) {
        cr.nodes.push_back(*run);
        continue;
      }
      NodeResult copy = *run;
      copy.node = fleet[j].name;
      cr.nodes.push_back(std::move(copy));
      for (size_t k = 0; k < pods_of[j].size(); ++k) {
        const PodOutcome& same = cr.pods[pods_of[rep][k]];
        PodOutcome copied = same;
        copied.pod = pods[pods_of[j][k]].Key();
        copied.node = j;
        cr.pods[pods_of[j][k]] = std::move(copied);
      }
    }
  });
  for (const auto& e : errors) {
    if (!e.ok()) return e;
  }
  AddCompatibility(request, result);
  return result;
}

std::vector<std::string> Differences(const ConfigResult& before, const ConfigResult& after) {
  std::vector<std::string> out;
  // Pod by pod: verdicts and reasons that changed, grouped by the reason.
  std::map<std::string, std::vector<std::string>> now_rejected, now_admitted, other_reason;
  std::vector<std::string> moved;
  for (size_t i = 0; i < before.pods.size() && i < after.pods.size(); ++i) {
    const PodOutcome& b = before.pods[i];
    const PodOutcome& a = after.pods[i];
    if (b.admitted && !a.admitted) {
      now_rejected[a.reason].push_back(a.pod);
    } else if (!b.admitted && a.admitted) {
      now_admitted[b.reason].push_back(a.pod);
    } else if (!b.admitted && !a.admitted && a.reason != b.reason) {
      other_reason[fmt::format("{} instead of {}", a.reason, b.reason)].push_back(a.pod);
    } else if (b.admitted && a.admitted && a.node != b.node) {
      moved.push_back(a.pod);
    }
  }
  auto are = [](size_t n) { return n == 1 ? "is" : "are"; };
  for (const auto& [reason, pods] : now_rejected) {
    out.push_back(fmt::format("{} that {} admitted {} now rejected with {} ({})",
                              Pods(pods.size()), pods.size() == 1 ? "was" : "were",
                              are(pods.size()), reason, SomeNames(pods)));
  }
  for (const auto& [reason, pods] : now_admitted) {
    out.push_back(fmt::format("{} rejected with {} {} now admitted ({})", Pods(pods.size()),
                              reason, are(pods.size()), SomeNames(pods)));
  }
  for (const auto& [change, pods] : other_reason) {
    out.push_back(fmt::format("{} {} now rejected with {} ({})", Pods(pods.size()),
                              are(pods.size()), change, SomeNames(pods)));
  }
  if (!moved.empty()) {
    out.push_back(fmt::format("{} {} admitted on another node by the first-fit placement ({})",
                              Pods(moved.size()), are(moved.size()), SomeNames(moved)));
  }
  const Tally& tb = before.total;
  const Tally& ta = after.total;
  for (const auto& [kind, who] : std::vector<std::pair<std::string, std::string>>{
           {"sidecar", "sidecars"}, {"app", "main containers"}, {"init", "init containers"}}) {
    CountChange(who, "exclusive CPUs", Get(tb.exclusive_cpus_by_kind, kind),
                Get(ta.exclusive_cpus_by_kind, kind), &out);
  }
  CountChange("pod shared pools", "CPUs", tb.pod_shared_pool_cpus, ta.pod_shared_pool_cpus, &out);
  if (tb.node_shared_pool_cpus != ta.node_shared_pool_cpus) {
    out.push_back(fmt::format("the node shared pool{} {} CPUs left instead of {} ({:+d})",
                              after.nodes.size() == 1 ? " has" : "s have",
                              ta.node_shared_pool_cpus, tb.node_shared_pool_cpus,
                              ta.node_shared_pool_cpus - tb.node_shared_pool_cpus));
  }
  if (tb.aligned_pods != ta.aligned_pods) {
    out.push_back(fmt::format("{} {} NUMA-aligned instead of {} ({:+d})",
                              Pods(ta.aligned_pods), ta.aligned_pods == 1 ? "is" : "are",
                              tb.aligned_pods, ta.aligned_pods - tb.aligned_pods));
  }
  uint64_t mem_b = 0, mem_a = 0;
  for (const auto& [numa, types] : tb.memory) {
    for (const auto& [type, use] : types) mem_b += use.allocated;
  }
  for (const auto& [numa, types] : ta.memory) {
    for (const auto& [type, use] : types) mem_a += use.allocated;
  }
  if (mem_a != mem_b) {
    out.push_back(fmt::format("the Memory Manager pins {} to NUMA nodes instead of {}",
                              HumanBytes(mem_a), HumanBytes(mem_b)));
  }
  return out;
}

absl::StatusOr<std::vector<CapacityRow>> Capacity(const CompareRequest& request) {
  if (auto s = CheckSamePods(request); !s.ok()) return s;
  // Distinct shapes: nodes sharing a topology, or with the same topology JSON.
  struct Shape {
    std::string name;
    const FleetNode* node;
  };
  std::vector<Shape> shapes;
  std::vector<std::string> shape_json;
  for (const auto& f : request.fleet) {
    bool known = false;
    for (const auto& s : shapes) known |= s.node->topology == f.topology;
    if (known) continue;
    std::string json = WriteTopologyJson(*f.topology);
    if (std::find(shape_json.begin(), shape_json.end(), json) != shape_json.end()) continue;
    shape_json.push_back(std::move(json));
    shapes.push_back({f.source, &f});
  }
  // Workloads: each distinct pod (by namespace/name), first occurrence.
  std::vector<int> workloads;
  {
    std::set<std::string> seen;
    const auto& pods = *request.configs.front().pods;
    for (size_t i = 0; i < pods.size(); ++i) {
      if (seen.insert(pods[i].Key()).second) workloads.push_back(static_cast<int>(i));
    }
  }
  const int n_configs = static_cast<int>(request.configs.size());
  const int items = static_cast<int>(workloads.size() * shapes.size()) * n_configs;
  std::vector<absl::StatusOr<std::pair<int, std::string>>> runs(items, absl::UnknownError(""));
  ParallelFor(items, request.threads, [&](int k) {
    const int c = k % n_configs;
    const int s = (k / n_configs) % static_cast<int>(shapes.size());
    const int w = k / n_configs / static_cast<int>(shapes.size());
    const Configuration& cfg = request.configs[c];
    auto node = EmptyNode(cfg, *shapes[s].node);
    if (!node.ok()) {
      runs[k] = node.status();
      return;
    }
    const Pod& tmpl = (*cfg.pods)[workloads[w]];
    // A replica loop always ends: the node-fit check stops at maxPods (110 by default).
    for (int i = 0; i < 100000; ++i) {
      Pod replica = tmpl;
      replica.name = fmt::format("{}-r{}", tmpl.name, i);
      replica.uid = DeterministicPodUid(replica.namespace_name, replica.name);
      auto a = (*node)->Admit(replica);
      if (!a.ok()) {
        runs[k] = WithContext(cfg.name, shapes[s].node->name, a.status());
        return;
      }
      if (!a->admitted) {
        runs[k] = std::make_pair(i, a->reason);
        return;
      }
    }
    runs[k] = std::make_pair(100000, std::string());
  });
  std::vector<CapacityRow> rows;
  for (size_t w = 0; w < workloads.size(); ++w) {
    for (size_t s = 0; s < shapes.size(); ++s) {
      CapacityRow row;
      row.workload = (*request.configs.front().pods)[workloads[w]].Key();
      row.shape = shapes[s].name;
      for (int c = 0; c < n_configs; ++c) {
        auto& run = runs[(w * shapes.size() + s) * n_configs + c];
        if (!run.ok()) return run.status();
        row.replicas.push_back(run->first);
        row.stopped_by.push_back(run->second);
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace podtopo::compare
