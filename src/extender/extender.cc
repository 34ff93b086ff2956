#include "extender/extender.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "admission/node.h"
#include "api/pod.h"
#include "api/pod_yaml.h"
#include "extender/node_pool.h"
#include "extender/nrt_model.h"
#include "fmt/format.h"

namespace podtopo::extender {
namespace {

using Clock = std::chrono::steady_clock;

// The identity every evaluation admits the pod under: verdicts are shared between pods of one
// shape, and no reserved pod is ever named so.
constexpr char kProbeNamespace[] = "podtopo.io";
constexpr char kProbeName[] = "extender-probe";
constexpr char kProbeUid[] = "podtopo-extender-probe";
// Pods remembered from Filter/Prioritize for Bind (which names the pod only), newest last.
constexpr size_t kRememberedPods = 4096;

// Go's encoding/json matches object keys to fields case-insensitively (exact match first).
const nlohmann::json* Field(const nlohmann::json& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  auto exact = obj.find(std::string(name));
  if (exact != obj.end()) return &*exact;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& k = it.key();
    if (k.size() == name.size() &&
        std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return &*it;
    }
  }
  return nullptr;
}

// Appends the JSON-escaped text of `s` (no quotes).
void AppendJsonEscaped(std::string& out, std::string_view s);

void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  AppendJsonEscaped(out, s);
  out += '"';
}

void AppendJsonEscaped(std::string& out, std::string_view s) {
  // Node names never need escaping: one append.
  if (std::none_of(s.begin(), s.end(), [](char ch) {
        unsigned char c = static_cast<unsigned char>(ch);
        return c < 0x20 || c == '"' || c == '\\';
      })) {
    out += s;
    return;
  }
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += ch;
        }
    }
  }
}

HttpAnswer ErrorAnswer(int status, const char* key, const std::string& message) {
  // dump with replace: a message quoting hostile bytes stays valid JSON.
  nlohmann::json j = {{key, message}};
  return {status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

// Whether an admitted pod holds something an NRT shows.
bool HoldsVisible(const PodAllocation& a) {
  if (!a.cpus.IsEmpty() || !a.memory.empty()) return true;
  for (const auto& c : a.containers) {
    if (c.assignment != "node_shared" && !c.assignment.empty()) return true;
    if (!c.memory.empty() || !c.devices.empty()) return true;
  }
  return false;
}

// The NUMA-fit score of an admitted pod (docs/scheduler-decides.md): 0..10.
int Score(const Node& node, const PodAllocation& a) {
  const NodeTopology& topo = node.topology();
  std::set<int> numa;
  CpuSet cpus = a.cpus;
  for (const auto& c : a.containers) {
    if (c.assignment != "node_shared" && !c.assignment.empty()) cpus.UnionWith(c.cpus);
    for (const auto& b : c.memory) numa.insert(b.numa_nodes.begin(), b.numa_nodes.end());
    for (const auto& [res, ids] : c.devices) {
      for (const auto& id : ids) {
        for (const Device& d : topo.devices) {
          if (d.resource == res && d.id == id && d.numa >= 0) numa.insert(d.numa);
        }
      }
    }
  }
  for (const auto& b : a.memory) numa.insert(b.numa_nodes.begin(), b.numa_nodes.end());
  for (int n : topo.cpus.NumaNodesOf(cpus)) numa.insert(n);
  if (numa.empty()) return 5;
  const int alignment = numa.size() == 1 ? 6 : numa.size() == 2 ? 3 : 1;
  CpuSet alloc = node.AllocatableCpus().Intersection(
      topo.cpus.CpusInNumas(std::vector<int>(numa.begin(), numa.end())));
  double leftover = 0;
  if (alloc.Size() > 0) {
    leftover = static_cast<double>(node.DefaultCpuSet().IntersectionSize(alloc)) / alloc.Size();
  }
  return alignment + static_cast<int>(std::lround(4.0 * (1.0 - leftover)));
}

}  // namespace

// The cache's parts (named: Extender::Impl holds them).
namespace internal {

struct Verdict {
  bool fits = false;
  int score = 0;
  std::string message;  // why not, without the kubelet version ("" when it fits)
};

// One Node in one state, shared by every node whose topology, configuration, state and
// reservations are the same. `mu` serialises the evaluations (Admit + Remove).
struct Model {
  std::mutex mu;
  std::unique_ptr<Node> node;  // null when it could not be built
  std::string error;           // why not
  std::unordered_map<std::string, Verdict> verdicts;  // by pod shape
};

struct Reservation {
  Pod pod;
  Clock::time_point expires;
  std::string state_key_at_bind;  // the node's NRT state when the pod was bound
  bool visible = false;           // holds exclusive CPUs, pinned memory or devices
};

struct NodeEntry {
  absl::Status error;  // the NRT could not be read
  NodeSpec spec;
  std::string suffix;  // " (kubelet 1.37)" plus the approximations, for messages
  bool approximate = false;
  std::vector<Reservation> reservations;
  std::shared_ptr<Model> model;
};

}  // namespace internal

using internal::Model;
using internal::NodeEntry;
using internal::Reservation;
using internal::Verdict;

class Extender::Impl {
 public:
  ExtenderOptions options;
  std::optional<NodePool> pool;
  std::unique_ptr<TopologyCatalog> catalog;

  mutable std::shared_mutex mu;  // nodes, models, empty_cache, reservation index
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, NodeEntry, NameHash, std::equal_to<>> nodes;
  std::unordered_map<std::string, std::weak_ptr<Model>> models;
  std::map<std::string, EmptyNode> empty_cache;
  std::map<std::string, config::KubeletConfig> config_cache;  // podtopo.io/kubelet-config
  std::unordered_map<std::string, std::string> reserved_uids;  // pod uid -> node
  std::atomic<int64_t> next_expiry{INT64_MAX};  // Clock rep of the earliest reservation expiry

  std::mutex pods_mu;
  std::unordered_map<std::string, Pod> pods_by_uid;
  std::deque<std::string> pod_order;

  std::atomic<uint64_t> filter_requests{0}, prioritize_requests{0}, bind_requests{0},
      bad_requests{0}, nodes_filtered{0}, nodes_failed{0}, nodes_approximate{0}, admissions{0};

  Clock::time_point Now() const { return options.now ? options.now() : Clock::now(); }

  // What an empty node of this topology and configuration has (nrt_model.h EmptyNode).
  absl::StatusOr<EmptyNode> EmptyNodeOf(const NodeSpec& spec) {
    const std::string key = spec.topology_key + "|" + spec.config_key;
    if (auto it = empty_cache.find(key); it != empty_cache.end()) return it->second;
    auto node = Node::Create(*spec.topology, spec.config, {});
    if (!node.ok()) return node.status();
    EmptyNode out;
    for (const auto& [numa, types] : (*node)->MemoryTables()) {
      for (const auto& [type, t] : types) out.memory[numa][type] = t.allocatable;
    }
    out.reserved_cpus = (*node)->ReservedCpus();
    empty_cache.emplace(key, out);
    return out;
  }

  // The model of `entry` (its spec and reservations), shared when one exists. Caller holds mu
  // exclusively.
  std::shared_ptr<Model> ModelFor(NodeEntry& entry) {
    std::string key = entry.spec.Key();
    for (const Reservation& r : entry.reservations) {
      key += "|" + r.pod.uid + "=" + PodSpecFingerprint(r.pod);
    }
    if (auto it = models.find(key); it != models.end()) {
      if (auto m = it->second.lock()) return m;
    }
    auto m = std::make_shared<Model>();
    Node::Options o;
    o.occupied = &entry.spec.occupied;
    auto node = Node::Create(*entry.spec.topology, entry.spec.config, o);
    if (!node.ok()) {
      m->error = std::string(node.status().message());
    } else {
      m->node = std::move(*node);
      m->node->set_tracing(false);
      for (Reservation& r : entry.reservations) {
        auto a = m->node->Admit(r.pod);
        r.visible = a.ok() && a->admitted && HoldsVisible(*a);
      }
    }
    models[key] = m;
    if (models.size() > 2 * nodes.size() + 64) {  // drop keys of models no node uses
      for (auto it = models.begin(); it != models.end();) {
        it = it->second.expired() ? models.erase(it) : std::next(it);
      }
    }
    return m;
  }

  // next_expiry is a lower bound: releases leave it early (ExpireReservations then finds
  // nothing due and recomputes it); only a new reservation lowers it.
  void RecomputeExpiry() {
    int64_t next = INT64_MAX;
    for (const auto& [name, e] : nodes) {
      for (const auto& r : e.reservations) {
        next = std::min<int64_t>(next, r.expires.time_since_epoch().count());
      }
    }
    next_expiry = next;
  }

  // Drops expired reservations (cheap when none is due).
  void ExpireReservations() {
    const Clock::time_point now = Now();
    if (now.time_since_epoch().count() < next_expiry.load()) return;
    std::unique_lock lock(mu);
    for (auto& [name, e] : nodes) {
      size_t before = e.reservations.size();
      std::erase_if(e.reservations, [&](const Reservation& r) {
        if (r.expires > now) return false;
        reserved_uids.erase(r.pod.uid);
        return true;
      });
      if (e.reservations.size() != before && e.error.ok()) e.model = ModelFor(e);
    }
    RecomputeExpiry();
  }

  void ReleaseReservation(const std::string& uid) {
    std::unique_lock lock(mu);
    auto it = reserved_uids.find(uid);
    if (it == reserved_uids.end()) return;
    auto node = nodes.find(it->second);
    reserved_uids.erase(it);
    if (node == nodes.end()) return;
    std::erase_if(node->second.reservations,
                  [&](const Reservation& r) { return r.pod.uid == uid; });
    if (node->second.error.ok()) node->second.model = ModelFor(node->second);
  }

  void RememberPod(const Pod& pod) {
    if (pod.uid.empty()) return;
    std::lock_guard lock(pods_mu);
    if (pods_by_uid.insert_or_assign(pod.uid, pod).second) pod_order.push_back(pod.uid);
    while (pod_order.size() > kRememberedPods) {
      pods_by_uid.erase(pod_order.front());
      pod_order.pop_front();
    }
  }

  // One verdict of `model` for the probe pod; caller holds model.mu.
  const Verdict& Evaluate(Model& model, const std::string& shape, const Pod& probe) {
    if (auto it = model.verdicts.find(shape); it != model.verdicts.end()) return it->second;
    Verdict v;
    if (model.node == nullptr) {
      v.message = "cannot model the node: " + model.error;
    } else {
      ++admissions;
      auto a = model.node->Admit(probe);
      if (!a.ok()) {
        v.message = "cannot evaluate: " + std::string(a.status().message());
      } else if (!a->admitted) {
        v.message = fmt::format("would be rejected: {}: {}", a->reason, a->message);
      } else {
        v.fits = true;
        v.score = Score(*model.node, *a);
        (void)model.node->Remove(kProbeNamespace, kProbeName);
      }
    }
    return model.verdicts.emplace(shape, std::move(v)).first->second;
  }

  // What Filter and Prioritize share: the request read.
  struct Request {
    Pod pod;
    Pod probe;
    std::string shape;
    bool by_names = true;
    std::vector<std::string_view> names;        // into `root`
    std::vector<const nlohmann::json*> items;  // with Nodes: the NodeList items
    nlohmann::json root;
  };

  // The start of /filter and /prioritize: the body read (an answer to return when it cannot
  // be: counted in bad_requests), the pod remembered for /bind, expired reservations dropped.
  std::optional<HttpAnswer> Begin(std::string_view body, Request& req) {
    if (auto bad = ReadArgs(body, req)) {
      ++bad_requests;
      return bad;
    }
    RememberPod(req.pod);
    ExpireReservations();
    return std::nullopt;
  }

  // Reads an ExtenderArgs body; nullopt with *error set (status, message) when it cannot.
  std::optional<HttpAnswer> ReadArgs(std::string_view body, Request& req) {
    if (body.size() > options.max_request_bytes) {
      return ErrorAnswer(413, "error",
                         fmt::format("request body of {} bytes exceeds the limit of {} bytes "
                                     "(max_request_bytes)",
                                     body.size(), options.max_request_bytes));
    }
    try {
      req.root = nlohmann::json::parse(body);
    } catch (const nlohmann::json::exception& e) {
      return ErrorAnswer(400, "error", fmt::format("request body is not JSON: {}", e.what()));
    }
    if (!req.root.is_object()) {
      return ErrorAnswer(400, "error", "request body: must be an ExtenderArgs object");
    }
    const nlohmann::json* pod = Field(req.root, "pod");
    if (pod == nullptr || pod->is_null()) return ErrorAnswer(400, "error", "pod: missing");
    if (!pod->is_object()) return ErrorAnswer(400, "error", "pod: must be a Pod object");
    const nlohmann::json* names = Field(req.root, "nodenames");
    const nlohmann::json* list = Field(req.root, "nodes");
    if (names != nullptr && !names->is_null()) {
      if (!names->is_array()) return ErrorAnswer(400, "error", "nodenames: must be a list");
      if (names->size() > options.max_nodes) {
        return ErrorAnswer(400, "error",
                           fmt::format("nodenames: {} nodes, more than max_nodes {}",
                                       names->size(), options.max_nodes));
      }
      req.names.reserve(names->size());
      for (size_t i = 0; i < names->size(); ++i) {
        if (!(*names)[i].is_string()) {
          return ErrorAnswer(400, "error", fmt::format("nodenames[{}]: must be a string", i));
        }
        req.names.push_back((*names)[i].get_ref<const std::string&>());
      }
    } else if (list != nullptr && !list->is_null()) {
      req.by_names = false;
      const nlohmann::json* items = Field(*list, "items");
      if (!list->is_object() || (items != nullptr && !items->is_null() && !items->is_array())) {
        return ErrorAnswer(400, "error", "nodes: must be a NodeList with items");
      }
      if (items != nullptr && items->is_array()) {
        if (items->size() > options.max_nodes) {
          return ErrorAnswer(400, "error",
                             fmt::format("nodes.items: {} nodes, more than max_nodes {}",
                                         items->size(), options.max_nodes));
        }
        for (size_t i = 0; i < items->size(); ++i) {
          const nlohmann::json* meta = Field((*items)[i], "metadata");
          const nlohmann::json* name = meta != nullptr ? Field(*meta, "name") : nullptr;
          if (name == nullptr || !name->is_string()) {
            return ErrorAnswer(400, "error",
                               fmt::format("nodes.items[{}].metadata.name: missing", i));
          }
          req.names.push_back(name->get_ref<const std::string&>());
          req.items.push_back(&(*items)[i]);
        }
      }
    } else {
      return ErrorAnswer(400, "error", "nodenames or nodes: missing (no candidate nodes)");
    }
    // The pod, through the manifest reader every command uses (JSON is read as is). A pod
    // from an informer has no TypeMeta.
    nlohmann::json pj = *pod;
    const nlohmann::json* kind = Field(pj, "kind");
    if (kind != nullptr && (!kind->is_string() || kind->get<std::string>() != "Pod")) {
      return ErrorAnswer(400, "error", "pod.kind: must be Pod");
    }
    if (kind == nullptr) pj["kind"] = "Pod";
    if (Field(pj, "apiVersion") == nullptr) pj["apiVersion"] = "v1";
    auto pods = ParsePods(pj.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "pod");
    if (!pods.ok()) return ErrorAnswer(400, "error", std::string(pods.status().message()));
    if (pods->size() != 1) return ErrorAnswer(400, "error", "pod: must be one Pod");
    req.pod = std::move((*pods)[0]);
    req.probe = req.pod;
    req.probe.namespace_name = kProbeNamespace;
    req.probe.name = kProbeName;
    req.probe.uid = kProbeUid;
    req.shape = PodSpecFingerprint(req.probe);
    return std::nullopt;
  }

  // Per candidate node: the verdict (nullptr with `why` set when there is no model).
  struct NodeAnswer {
    const Verdict* verdict = nullptr;
    const NodeEntry* entry = nullptr;
    std::string why;
  };

  // Evaluates every candidate; caller holds mu shared.
  std::vector<NodeAnswer> EvaluateAll(const Request& req) {
    std::vector<NodeAnswer> out(req.names.size());
    std::unordered_map<const Model*, const Verdict*> memo;
    for (size_t i = 0; i < req.names.size(); ++i) {
      const std::string_view name = req.names[i];
      auto it = nodes.find(name);
      if (it == nodes.end()) {
        out[i].why = fmt::format("no NodeResourceTopology for node {}", name);
        continue;
      }
      const NodeEntry& e = it->second;
      out[i].entry = &e;
      if (!e.error.ok()) {
        out[i].why = fmt::format("NodeResourceTopology of node {} cannot be read: {}", name,
                                 std::string(e.error.message()));
        continue;
      }
      Model* m = e.model.get();
      auto known = memo.find(m);
      if (known != memo.end()) {
        out[i].verdict = known->second;
        continue;
      }
      std::lock_guard lock(m->mu);
      const Verdict& v = Evaluate(*m, req.shape, req.probe);
      memo.emplace(m, &v);
      out[i].verdict = &v;
    }
    return out;
  }
};

Extender::Extender(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Extender::~Extender() = default;

absl::StatusOr<std::unique_ptr<Extender>> Extender::Create(ExtenderOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  if (!impl->options.node_pool_file.empty()) {
    auto pool = NodePool::Load(impl->options.node_pool_file);
    if (!pool.ok()) return pool.status();
    impl->pool = std::move(*pool);
  }
  impl->catalog = std::make_unique<TopologyCatalog>(impl->pool ? &*impl->pool : nullptr);
  return std::unique_ptr<Extender>(new Extender(std::move(impl)));
}

void Extender::UpsertNrt(const nlohmann::json& nrt) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  auto spec = ReadNrt(nrt, *m.catalog, m.pool ? &*m.pool : nullptr,
                      [&](const NodeSpec& s) { return m.EmptyNodeOf(s); }, &m.config_cache);
  std::string name;
  if (spec.ok()) {
    name = spec->name;
  } else {
    const nlohmann::json* meta = Field(nrt, "metadata");
    const nlohmann::json* n = meta != nullptr ? Field(*meta, "name") : nullptr;
    if (n == nullptr || !n->is_string()) return;  // nameless: nothing to file it under
    name = n->get<std::string>();
  }
  NodeEntry& e = m.nodes[name];
  if (!spec.ok()) {
    e.error = spec.status();
    e.model.reset();
    for (const auto& r : e.reservations) m.reserved_uids.erase(r.pod.uid);
    e.reservations.clear();
    return;
  }
  e.error = absl::OkStatus();
  // A reservation ends when the node publishes another state: the NRT now counts the pod.
  std::erase_if(e.reservations, [&](const Reservation& r) {
    if (r.state_key_at_bind == spec->state_key) return false;
    m.reserved_uids.erase(r.pod.uid);
    return true;
  });
  e.spec = std::move(*spec);
  e.approximate = !e.spec.approximations.empty();
  e.suffix = " (" + e.spec.kubelet + ")";
  if (e.approximate) {
    e.suffix += "; approximate:";
    for (size_t i = 0; i < e.spec.approximations.size(); ++i) {
      e.suffix += (i == 0 ? " " : "; ") + e.spec.approximations[i];
    }
  }
  e.model = m.ModelFor(e);
}

void Extender::DeleteNrt(const std::string& name) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  auto it = m.nodes.find(name);
  if (it == m.nodes.end()) return;
  for (const auto& r : it->second.reservations) m.reserved_uids.erase(r.pod.uid);
  m.nodes.erase(it);
}

void Extender::ObservePod(const nlohmann::json& pod, bool deleted) {
  Impl& m = *impl_;
  const nlohmann::json* meta = Field(pod, "metadata");
  const nlohmann::json* uid = meta != nullptr ? Field(*meta, "uid") : nullptr;
  if (uid == nullptr || !uid->is_string()) return;
  const std::string id = uid->get<std::string>();
  std::string phase;
  if (const nlohmann::json* status = Field(pod, "status")) {
    if (const nlohmann::json* p = Field(*status, "phase"); p != nullptr && p->is_string()) {
      phase = p->get<std::string>();
    }
  }
  bool release = deleted || phase == "Failed" || phase == "Succeeded";
  if (!release && phase == "Running") {
    std::shared_lock lock(m.mu);
    auto it = m.reserved_uids.find(id);
    if (it == m.reserved_uids.end()) return;
    auto node = m.nodes.find(it->second);
    if (node != m.nodes.end()) {
      for (const auto& r : node->second.reservations) {
        if (r.pod.uid == id && !r.visible) release = true;
      }
    }
  }
  if (release) m.ReleaseReservation(id);
}

HttpAnswer Extender::Filter(std::string_view body) {
  Impl& m = *impl_;
  ++m.filter_requests;
  Impl::Request req;
  if (auto bad = m.Begin(body, req)) return *bad;
  std::string passed, failed;
  uint64_t n_failed = 0, n_approx = 0;
  bool first_passed = true, first_failed = true;
  {
    std::shared_lock lock(m.mu);
    std::vector<Impl::NodeAnswer> answers = m.EvaluateAll(req);
    for (size_t i = 0; i < answers.size(); ++i) {
      const Impl::NodeAnswer& a = answers[i];
      if (a.entry != nullptr && a.entry->approximate) ++n_approx;
      if (a.verdict != nullptr && a.verdict->fits) {
        if (!first_passed) passed += ',';
        first_passed = false;
        if (req.by_names) {
          AppendJsonString(passed, req.names[i]);
        } else {
          passed += req.items[i]->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        }
        continue;
      }
      ++n_failed;
      if (!first_failed) failed += ',';
      first_failed = false;
      AppendJsonString(failed, req.names[i]);
      failed += ':';
      if (a.verdict == nullptr) {
        AppendJsonString(failed, a.why);
      } else {
        failed += '"';
        AppendJsonEscaped(failed, a.verdict->message);
        AppendJsonEscaped(failed, a.entry->suffix);
        failed += '"';
      }
    }
  }
  m.nodes_filtered += req.names.size();
  m.nodes_failed += n_failed;
  m.nodes_approximate += n_approx;
  std::string out;
  out.reserve(passed.size() + failed.size() + 64);
  if (req.by_names) {
    out += "{\"nodenames\":[";
    out += passed;
    out += "]";
  } else {
    out += "{\"nodes\":{\"metadata\":{},\"items\":[";
    out += passed;
    out += "]}";
  }
  out += ",\"failedNodes\":{";
  out += failed;
  out += "}}";
  return {200, std::move(out)};
}

HttpAnswer Extender::Prioritize(std::string_view body) {
  Impl& m = *impl_;
  ++m.prioritize_requests;
  Impl::Request req;
  if (auto bad = m.Begin(body, req)) return *bad;
  std::string out = "[";
  {
    std::shared_lock lock(m.mu);
    std::vector<Impl::NodeAnswer> answers = m.EvaluateAll(req);
    for (size_t i = 0; i < answers.size(); ++i) {
      if (i > 0) out += ',';
      out += "{\"host\":";
      AppendJsonString(out, req.names[i]);
      int score = answers[i].verdict != nullptr && answers[i].verdict->fits
                      ? answers[i].verdict->score
                      : 0;
      out += fmt::format(",\"score\":{}}}", score);
    }
  }
  out += "]";
  return {200, std::move(out)};
}

HttpAnswer Extender::Bind(std::string_view body,
                          const std::function<absl::Status(const BindingArgs&)>& bind) {
  Impl& m = *impl_;
  ++m.bind_requests;
  auto bad = [&](int status, const std::string& message) {
    ++m.bad_requests;
    return ErrorAnswer(status, "Error", message);
  };
  if (body.size() > m.options.max_request_bytes) {
    return bad(413, fmt::format("request body of {} bytes exceeds the limit of {} bytes "
                                "(max_request_bytes)",
                                body.size(), m.options.max_request_bytes));
  }
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    return bad(400, fmt::format("request body is not JSON: {}", e.what()));
  }
  if (!root.is_object()) return bad(400, "request body: must be an ExtenderBindingArgs object");
  BindingArgs args;
  for (auto [field, out] : {std::pair{"PodName", &args.pod_name},
                            std::pair{"PodNamespace", &args.pod_namespace},
                            std::pair{"PodUID", &args.pod_uid}, std::pair{"Node", &args.node}}) {
    const nlohmann::json* v = Field(root, field);
    if (v == nullptr || !v->is_string() || v->get<std::string>().empty()) {
      if (std::string_view(field) == "PodNamespace" && v == nullptr) continue;
      return bad(400, fmt::format("{}: missing or not a string", field));
    }
    *out = v->get<std::string>();
  }
  if (args.pod_namespace.empty()) args.pod_namespace = "default";

  // The scheduler binds asynchronously: the next pod's /filter may run before this pod's /bind
  // arrives, and then does not see this pod's reservation (a burst of pods would all pick the
  // same NUMA node). So the bind is where pods meet: under the lock the pod is admitted again on
  // the node as it is now (its NRT and the reservations) and reserved in the same step. A pod
  // that no longer fits is not bound; the scheduler retries it, and its next /filter sees the
  // reservations. The Binding is posted after the lock is released; if it fails, the
  // reservation is dropped again.
  std::optional<Pod> pod;
  {
    std::lock_guard lock(m.pods_mu);
    auto it = m.pods_by_uid.find(args.pod_uid);
    if (it != m.pods_by_uid.end()) pod = it->second;
  }
  bool reserved = false;
  if (pod.has_value()) {
    std::unique_lock lock(m.mu);
    auto it = m.nodes.find(args.node);
    if (it != m.nodes.end() && it->second.error.ok() && it->second.model != nullptr &&
        !m.reserved_uids.count(args.pod_uid)) {
      NodeEntry& e = it->second;
      Pod probe = *pod;
      probe.namespace_name = kProbeNamespace;
      probe.name = kProbeName;
      probe.uid = kProbeUid;
      {
        std::lock_guard model_lock(e.model->mu);
        const Verdict& v = m.Evaluate(*e.model, PodSpecFingerprint(probe), probe);
        if (!v.fits) {
          return ErrorAnswer(200, "Error",
                             fmt::format("not bound to {}: with the pods bound to it since the "
                                         "filter, the pod {}{}",
                                         args.node, v.message, e.suffix));
        }
      }
      pod->namespace_name = args.pod_namespace;
      pod->name = args.pod_name;
      e.reservations.push_back(
          Reservation{*pod, m.Now() + m.options.reservation_ttl, e.spec.state_key, false});
      m.reserved_uids[args.pod_uid] = args.node;
      e.model = m.ModelFor(e);
      const int64_t expires = e.reservations.back().expires.time_since_epoch().count();
      if (expires < m.next_expiry.load()) m.next_expiry = expires;
      reserved = true;
    }
  }
  absl::Status s = bind(args);
  if (!s.ok()) {
    if (reserved) m.ReleaseReservation(args.pod_uid);
    return ErrorAnswer(200, "Error", std::string(s.message()));
  }
  return {200, "{}"};
}

ExtenderStats Extender::Stats() const {
  const Impl& m = *impl_;
  ExtenderStats s;
  s.filter_requests = m.filter_requests;
  s.prioritize_requests = m.prioritize_requests;
  s.bind_requests = m.bind_requests;
  s.bad_requests = m.bad_requests;
  s.nodes_filtered = m.nodes_filtered;
  s.nodes_failed = m.nodes_failed;
  s.nodes_approximate = m.nodes_approximate;
  s.admissions = m.admissions;
  std::shared_lock lock(m.mu);
  s.nodes_known = m.nodes.size();
  s.reservations = m.reserved_uids.size();
  for (const auto& [k, w] : m.models) s.models += w.expired() ? 0 : 1;
  return s;
}

}  // namespace podtopo::extender
