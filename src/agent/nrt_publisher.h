// Publishes the agent's NodeResourceTopology to the API server (issue 25 item 1;
// docs/agent.md "Publishing to the API server").
//
// Each write is a server-side apply of the whole object, as field manager "podtopo", forced:
//   GET   /api/v1/nodes/NAME                        the Node's uid, for the owner reference
//   PATCH /apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies/NAME
//         ?fieldManager=podtopo&force=true          Content-Type application/apply-patch+yaml
// (JSON is YAML). NodeResourceTopology is cluster-scoped. The object is written when its
// content differs from the last one written, and again every `resync` (someone may have
// deleted or edited it; the Node may have been re-created with a new uid). A failure is retried
// after a back-off that doubles from `backoff_initial` to `backoff_max`, and resets on
// success; each failure is counted by reason:
//   transport       the API server did not answer (refused, TLS, timeout)
//   token           the token file could not be read
//   unauthorized    HTTP 401 (the token expired or is unknown)
//   forbidden       HTTP 403 (RBAC: deploy/podtopo-agent.yaml's ClusterRole)
//   node_not_found  the Node NAME does not exist
//   crd_missing     HTTP 404 on noderesourcetopologies (the CRD is not installed)
//   server          HTTP 5xx or 429
//   rejected        any other answer (the object was refused: 400, 409, 422, ...)
// Publishing runs on its own thread: a slow or absent API server never delays polling.
//
// Example:
//   auto p = NrtPublisher::Start(std::move(client), {.node_name = "n1"});
//   p->Offer(BuildNodeResourceTopology("n1", config, zones, digest));
//   PublishStats s = p->Stats();
//   p->Stop();
#ifndef PODTOPO_AGENT_NRT_PUBLISHER_H_
#define PODTOPO_AGENT_NRT_PUBLISHER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "kube/api_client.h"
#include "nlohmann/json.hpp"

namespace podtopo::agent {

struct PublisherOptions {
  std::string node_name;
  std::chrono::milliseconds resync{std::chrono::minutes(5)};
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{std::chrono::seconds(30)};
};

struct PublishStats {
  std::string server;
  uint64_t writes = 0;                      // successful applies
  std::map<std::string, uint64_t> errors;   // reason -> failures
  double last_success_seconds = 0;          // unix time; 0 = never
  std::string last_error;                   // "" after a success
};

// The reasons above, in the metric's order.
inline constexpr const char* kPublishErrorReasons[] = {
    "transport", "token", "unauthorized", "forbidden", "node_not_found", "crd_missing", "server",
    "rejected"};

class NrtPublisher {
 public:
  static std::unique_ptr<NrtPublisher> Start(std::unique_ptr<kube::ApiClient> client,
                                             PublisherOptions options);
  ~NrtPublisher();
  // The object to publish now (without owner references); the thread writes it if it changed.
  void Offer(nlohmann::ordered_json nrt);
  PublishStats Stats() const;
  void Stop();

 private:
  NrtPublisher(std::unique_ptr<kube::ApiClient> client, PublisherOptions options);
  void Loop();
  // One write of `nrt`: "" on success, else the failure's reason (and *message).
  std::string Apply(const nlohmann::ordered_json& nrt, std::string* message);

  std::unique_ptr<kube::ApiClient> client_;
  const PublisherOptions options_;
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::optional<nlohmann::ordered_json> desired_;
  std::string desired_text_;  // desired_, serialized
  std::string written_text_;  // the last object written, serialized
  PublishStats stats_;
};

}  // namespace podtopo::agent

#endif  // PODTOPO_AGENT_NRT_PUBLISHER_H_
