// Informer: keeps a local copy of one collection of API objects (NodeResourceTopologies, the
// pods bound to a node, ...) and tells a handler what changed, as client-go's informers do.
//
// The loop, on the informer's own thread with its own connection:
//   1. LIST the collection (GET path). The items are diffed with the cache: an object not
//      cached is kAdded, one whose metadata.resourceVersion changed is kModified, a cached one
//      that is no longer listed is kDeleted (it was deleted while we were not watching).
//   2. WATCH from the list's resourceVersion (GET path?watch=1&resourceVersion=RV
//      &allowWatchBookmarks=true&timeoutSeconds=T), one JSON event per line. ADDED, MODIFIED
//      and DELETED update the cache and reach the handler; BOOKMARK only moves the
//      resourceVersion. When the server ends the watch (its timeoutSeconds), it is resumed
//      from the last resourceVersion seen.
//   3. An ERROR event with code 410 (Gone: the resourceVersion is too old, etcd compacted it)
//      goes back to 1 at once. Any other failure (refused, TLS, HTTP 4xx/5xx, a line that is
//      not JSON) is counted, and the loop goes back to 1 after a back-off that doubles from
//      backoff_initial to backoff_max and resets after a successful list. A restarted API
//      server is caught up with by that re-list.
// The handler runs on the informer's thread, one event at a time, never under the informer's
// lock (it may call Snapshot()). Its events arrive in the server's order for each object.
//
// Example:
//   auto inf = Informer::Start(LoadKubeconfig(path).value(),
//                              {.path = "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1"},
//                              [](const WatchEvent& e) { ... e.type, KeyOf(e.object) ... });
//   (*inf)->WaitForSync(std::chrono::seconds(10));
//   (*inf)->Stop();
//
// Thread safety: every method may be called from any thread.
#ifndef PODTOPO_KUBE_INFORMER_H_
#define PODTOPO_KUBE_INFORMER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "kube/api_client.h"
#include "kube/kubeconfig.h"
#include "nlohmann/json.hpp"

namespace podtopo::kube {

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted };
  Type type = Type::kAdded;
  nlohmann::json object;  // the object; for kDeleted its last known state
};

// "ADDED", "MODIFIED", "DELETED".
const char* TypeName(WatchEvent::Type type);

struct InformerOptions {
  // A collection, optionally with a query: "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies",
  // "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1".
  std::string path;
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{std::chrono::seconds(30)};
  // The server ends each watch after this (timeoutSeconds); the informer then resumes it.
  std::chrono::seconds watch_timeout{300};
  // Whole LIST request.
  std::chrono::milliseconds list_timeout{std::chrono::seconds(30)};
};

struct InformerStats {
  uint64_t lists = 0;    // successful lists
  uint64_t watches = 0;  // watch requests started
  uint64_t events = 0;   // events delivered to the handler
  uint64_t errors = 0;   // failures (each followed by a back-off and a re-list)
  std::string last_error;
  bool synced = false;  // the first list was delivered
};

class Informer {
 public:
  using Handler = std::function<void(const WatchEvent&)>;
  // Error: the credentials cannot be used, or `path` does not start with '/'.
  static absl::StatusOr<std::unique_ptr<Informer>> Start(Credentials credentials,
                                                         InformerOptions options, Handler handler);
  ~Informer();  // Stop()
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // True once the first list was delivered to the handler; false after `timeout`.
  bool WaitForSync(std::chrono::milliseconds timeout);
  // The cache, sorted by key.
  std::vector<nlohmann::json> Snapshot() const;
  InformerStats Stats() const;
  // Ends the request in progress and the thread; the handler is not called afterwards.
  void Stop();

 private:
  Informer(std::unique_ptr<ApiClient> client, InformerOptions options, Handler handler);
  void Loop();
  // One list, delivered; the list's resourceVersion.
  absl::StatusOr<std::string> List();
  // Watches from *rv until the server ends the watch (ok), a 410 (kNotFound "gone"), or an
  // error.
  absl::Status Watch(std::string* rv);
  void Deliver(WatchEvent event);
  void Failed(const absl::Status& status);
  bool SleepFor(std::chrono::milliseconds d);  // false when stopping

  std::unique_ptr<ApiClient> client_;
  const InformerOptions options_;
  const Handler handler_;
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::string, nlohmann::json> cache_;  // key -> object
  InformerStats stats_;
};

// "namespace/name", or "name" for a cluster-scoped object; "" when the object has no name.
std::string KeyOf(const nlohmann::json& object);

}  // namespace podtopo::kube

#endif  // PODTOPO_KUBE_INFORMER_H_
