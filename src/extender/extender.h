// The exact admission behind `podtopo extender`: a kube-scheduler extender (the HTTP
// extender protocol of kube-scheduler 1.20, k8s.io/kube-scheduler/extender/v1) that fails every
// node whose kubelet would reject the pod with TopologyAffinityError, and scores the others by
// NUMA fit. A library: requests come in as bodies, answers go out as bodies; the HTTP server,
// the informers and the CLI (src/cli, src/serve) sit on top. No network I/O.
//
// What it knows of a node is its NodeResourceTopology (UpsertNrt, from an informer), read back
// into a Node (admission/node.h) whose state equals the NRT (extender/nrt_model.h says how,
// and where it is only approximate). Filter runs the pod through that Node's Admit, the path
// every podtopo command uses, and keeps the verdict by (node state, pod resource shape):
// nodes whose topology, kubelet configuration and state are identical share one Node and one
// verdict, so a request of 5,000 nodes costs a few distinct admissions plus lookups
// (docs/performance.md, "The extender").
//
// The protocol (field names as kube-scheduler 1.20 sends and reads them; Go's decoder matches
// keys case-insensitively, so this reader does too):
//   ExtenderArgs          {"pod": v1.Pod, "nodes": v1.NodeList} | {"pod", "nodenames": [..]}
//   ExtenderFilterResult  {"nodes"|"nodenames", "failedNodes": {node: why}, "error": ".."}
//                         (answered in the form asked: NodeNames in -> NodeNames out)
//   HostPriorityList      [{"host": node, "score": 0..10}]  (MaxExtenderPriority = 10)
//   ExtenderBindingArgs   {"PodName", "PodNamespace", "PodUID", "Node"}  (no JSON tags upstream)
//   ExtenderBindingResult {"Error": ".."}
// A request the extender cannot read gets HTTP 400 and that verb's error field naming what is
// wrong ({"error": "pod: spec.containers[0]...: ..."}, for bind {"Error": ..}); a body over
// max_request_bytes gets 413. Unknown fields are ignored.
//
// Example:
//   auto ext = Extender::Create({}).value();
//   ext->UpsertNrt(nrt_json);                       // from the NRT informer
//   HttpAnswer a = ext->Filter(R"({"pod": {...}, "nodenames": ["node-a"]})");
//   // a.body: {"nodenames":[],"failedNodes":{"node-a":"would be rejected: TopologyAffinityError:
//   //          Resources cannot be allocated with Topology locality (kubelet 1.37)"}}
//
// Thread safety: every method may be called from any thread.
#ifndef PODTOPO_EXTENDER_EXTENDER_H_
#define PODTOPO_EXTENDER_EXTENDER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace podtopo::extender {

// One HTTP answer: status code and a JSON body (the protocol's result object, or for a request
// the extender cannot read: HTTP 400 with the error naming what is wrong).
struct HttpAnswer {
  int status = 200;
  std::string body;
};

// What POST /bind received (ExtenderBindingArgs).
struct BindingArgs {
  std::string pod_namespace, pod_name, pod_uid, node;
};

struct ExtenderOptions {
  std::string node_pool_file;            // "" = none: --node-pool, extender/node_pool.h
  size_t max_request_bytes = 64 << 20;   // larger bodies: HTTP 413 with a clear error
  size_t max_nodes = 20000;              // more nodes in one request: HTTP 400
  std::chrono::seconds reservation_ttl{60};
  // The clock reservations expire by (tests set it); default std::chrono::steady_clock.
  std::function<std::chrono::steady_clock::time_point()> now;
};

struct ExtenderStats {
  uint64_t filter_requests = 0, prioritize_requests = 0, bind_requests = 0, bad_requests = 0;
  // Per node evaluated in Filter: all, failed, and answered by an approximate model.
  uint64_t nodes_filtered = 0, nodes_failed = 0, nodes_approximate = 0;
  size_t nodes_known = 0;     // NRT objects held
  size_t reservations = 0;    // pods bound by us, not yet seen in their node's NRT
  // Beyond the API brief: distinct node models held and verdicts computed (cache misses).
  size_t models = 0;
  uint64_t admissions = 0;
};

class Extender {
 public:
  // Loads the node pool (errors name the file and field).
  static absl::StatusOr<std::unique_ptr<Extender>> Create(ExtenderOptions options);
  ~Extender();

  // NodeResourceTopology objects as the API server returns them (JSON), from the NRT informer.
  // An NRT that cannot be read is kept as such: Filter fails its node with the reason.
  void UpsertNrt(const nlohmann::json& nrt);
  void DeleteNrt(const std::string& name);
  // Pods from a pod informer: a pod we bound that is now Failed/Succeeded/deleted releases its
  // reservation; Running releases it when it holds nothing the NRT shows (no exclusive CPUs,
  // pinned memory or devices), else the node's next changed NRT does.
  void ObservePod(const nlohmann::json& pod, bool deleted);
  // POST /filter, /prioritize: the request body in, the answer out. Never throws.
  HttpAnswer Filter(std::string_view body);
  HttpAnswer Prioritize(std::string_view body);
  // POST /bind: parses the body; calls `bind` (which POSTs the Binding to the API server);
  // on success reserves the pod's resources on that node until its NRT shows them.
  HttpAnswer Bind(std::string_view body,
                  const std::function<absl::Status(const BindingArgs&)>& bind);
  ExtenderStats Stats() const;

  class Impl;

 private:
  explicit Extender(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace podtopo::extender

#endif  // PODTOPO_EXTENDER_EXTENDER_H_
