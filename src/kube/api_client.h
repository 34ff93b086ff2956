// A small client of the Kubernetes API server over libcurl (HTTP/1.1 or 2, TLS by OpenSSL):
// one request at a time on one kept-alive connection, authenticated as Credentials say
// (kube/kubeconfig.h). The token file is re-read on every request, so a rotated bound token is
// used as soon as the kubelet writes it.
//
// Every call returns the HTTP status and body for any HTTP answer; a transport failure
// (refused, TLS, timeout) is an UnavailableError naming the server and the path. A non-2xx
// answer becomes an error with Response::Error(): "PATCH https://127.0.0.1:6443/apis/...:
// HTTP 403 Forbidden: noderesourcetopologies.topology.node.k8s.io "n" is forbidden: ...",
// using the API's Status message when the body is one.
//
// The core library does no network I/O; this library sits outside it (agent, and later the
// extender and `serve --kubeconfig`).
//
// Example:
//   auto client = ApiClient::Create(LoadKubeconfig(path).value());
//   absl::StatusOr<Response> r = (*client)->Get("/api/v1/nodes/n1");
//   if (r.ok() && !r->ok()) return r->Error();
//
// Thread safety: calls are serialized by a mutex (one connection).
#ifndef PODTOPO_KUBE_API_CLIENT_H_
#define PODTOPO_KUBE_API_CLIENT_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "kube/kubeconfig.h"

namespace podtopo::kube {

struct Response {
  long status = 0;  // HTTP status code
  std::string body;
  std::string method, url;  // for Error()

  bool ok() const { return status >= 200 && status < 300; }
  // "METHOD URL: HTTP CODE REASON: MESSAGE" (the Status object's message, else the body's
  // first 200 bytes). The code maps to absl: 401 Unauthenticated, 403 PermissionDenied,
  // 404 NotFound, 409 AlreadyExists/Aborted, 422 InvalidArgument, 5xx and 429 Unavailable.
  absl::Status Error() const;
};

inline constexpr char kApplyPatch[] = "application/apply-patch+yaml";
inline constexpr char kMergePatch[] = "application/merge-patch+json";

struct ClientOptions {
  std::chrono::milliseconds timeout{10000};  // whole request
  std::string user_agent = "podtopo";
};

class ApiClient {
 public:
  // Error: the credentials cannot be used (no server).
  static absl::StatusOr<std::unique_ptr<ApiClient>> Create(Credentials credentials,
                                                           ClientOptions options = {});
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // `path` starts with '/' and may carry a query ("/apis/...?fieldManager=podtopo").
  absl::StatusOr<Response> Get(const std::string& path);
  absl::StatusOr<Response> Post(const std::string& path, const std::string& json);
  absl::StatusOr<Response> Put(const std::string& path, const std::string& json);
  // DELETE with a DeleteOptions body ({"gracePeriodSeconds": 0, "preconditions": {"uid": U}}).
  absl::StatusOr<Response> DeleteWithOptions(const std::string& path, const std::string& json);
  absl::StatusOr<Response> Patch(const std::string& path, const std::string& body,
                                 const std::string& content_type);
  absl::StatusOr<Response> Delete(const std::string& path);

  // A GET whose 2xx body is handed to `on_data` as it arrives (a watch: one JSON event per
  // line), instead of being kept; `on_data` returns false to end the request early (that is
  // not an error). A non-2xx body is kept in Response::body as for Get. `timeout` bounds the
  // whole request (a watch asks the server for a shorter timeoutSeconds). A stream in
  // progress holds this client's connection: use one client per stream.
  absl::StatusOr<Response> Stream(const std::string& path,
                                  const std::function<bool(std::string_view)>& on_data,
                                  std::chrono::milliseconds timeout);

  // Makes the request in progress, and every later one, fail at once (UnavailableError
  // "cancelled"): for a prompt shutdown. Any thread.
  void Cancel() { cancelled_ = true; }

  const Credentials& credentials() const { return credentials_; }
  const std::string& server() const { return credentials_.server; }

 private:
  ApiClient(Credentials credentials, ClientOptions options);
  absl::StatusOr<Response> Do(const char* method, const std::string& path, const std::string* body,
                              const char* content_type,
                              const std::function<bool(std::string_view)>* on_data = nullptr,
                              std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  const Credentials credentials_;
  const ClientOptions options_;
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  void* curl_ = nullptr;  // CURL*, under mu_
};

// Percent-encodes a path segment (names are DNS labels, but be safe).
std::string EscapePathSegment(const std::string& s);

}  // namespace podtopo::kube

#endif  // PODTOPO_KUBE_API_CLIENT_H_
