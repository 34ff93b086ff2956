// `podtopo agent`: a node agent that watches a real kubelet through its PodResources socket
// and tells the rest of the cluster (docs/agent.md; contract in ../shared/DESIGN.md).
//
// Every interval it polls (agent/observation.h: List, GetAllocatableResources, each pod counted
// once by client::BuildPodView), optionally checks the kubelet's checkpoints as the kubelet
// would at start (state::Check), and then publishes, from that one poll:
//   GET /metrics  Prometheus text (agent/agent_metrics.h)
//   GET /nrt      the NodeResourceTopology object, YAML (agent/node_resource_topology.h)
//   GET /         the live picture of the node: the same HTML/SVG as `admit -o html`, with the
//                 real pods' exclusive CPUs and pod shared pools, reloading every interval
// with --kubeconfig (or in a pod, its service account) applies the object to the API server
// (agent/nrt_publisher.h), with --verify runs `podtopo verify`'s core after every poll
// (agent/verify_metrics.h), and, with --nrt-out, writes the NodeResourceTopology YAML
// atomically (temp file, fsync, rename).
//
// Faults (socket gone, kubelet restarting, a call failing, a malformed answer) never stop the
// agent: the poll's numbers are dropped at once, so nothing older than one interval is served
// as current (/nrt and / answer 503 naming the fault, /metrics keeps only
// podtopo_podresources_up 0 and the error counters), the fault is logged once when it starts and
// once when the kubelet is back, and the next poll reconnects. The --nrt-out file keeps the last
// good object (a reader can compare its mtime with the interval).
//
// Example:
//   auto agent = Agent::Start(LoadNode("local").value(), config::SeedDefault(),
//                             {.socket = client::kDefaultSocket, .listen = "127.0.0.1:9102"});
//   (*agent)->Stop();
//
// Thread safety: Start/Stop from one thread; the HTTP handlers run on the server's threads and
// read the last published state under a mutex.
#ifndef PODTOPO_AGENT_AGENT_H_
#define PODTOPO_AGENT_AGENT_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "agent/nrt_publisher.h"
#include "agent/verify_metrics.h"
#include "config/kubelet_config.h"
#include "kube/kubeconfig.h"
#include "topology/node_topology.h"

namespace podtopo::agent {

struct AgentOptions {
  std::string socket;
  std::string listen;       // HOST:PORT (":PORT" binds 127.0.0.1)
  std::string nrt_out;      // "" = no file
  std::string nrt_name;     // metadata.name of the object
  std::string kubelet_dir;  // "" = no checkpoint check
  std::chrono::milliseconds interval{10000};
  // Publish the NodeResourceTopology to this API server (agent/nrt_publisher.h), named
  // publisher.node_name; nullopt = do not publish.
  std::optional<kube::Credentials> publish;
  PublisherOptions publisher;
  // --verify: run the verify core after every poll (podtopo_verify_* metrics). When its
  // podresources_socket is set, PodResources' List is extra intent (asked only after a
  // successful poll).
  AgentVerifyOptions verify;
};

class Agent {
 public:
  // Binds the listener (error: the address, naming it), then polls at once and every interval.
  static absl::StatusOr<std::unique_ptr<Agent>> Start(NodeTopology topology,
                                                      config::KubeletConfig config,
                                                      AgentOptions options);
  ~Agent();
  // Stops polling and serving; returns when both have stopped.
  void Stop();

  // What the handlers serve (HTTP status and body).
  struct Response {
    int status = 200;
    std::string content_type;
    std::string body;
  };
  Response Handle(const std::string& path) const;

  class Impl;

 private:
  explicit Agent(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace podtopo::agent

#endif  // PODTOPO_AGENT_AGENT_H_
