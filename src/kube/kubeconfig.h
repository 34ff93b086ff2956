// How podtopo reaches a Kubernetes API server: the server's URL, how to trust it and how to
// authenticate, from a kubeconfig file or from the pod's service account (in-cluster).
//
// Kubeconfig (LoadKubeconfig): the current-context's cluster and user.
//   cluster: server, certificate-authority | certificate-authority-data, insecure-skip-tls-verify
//   user:    token | tokenFile, client-certificate | client-certificate-data,
//            client-key | client-key-data
// File paths are relative to the kubeconfig's directory, as kubectl reads them. Files are read
// at load, except tokenFile, which ApiClient re-reads on every request. Other ways to
// authenticate (exec, auth-provider, username/password) are refused, naming the field. Every
// error names the kubeconfig file and the field: "kubeconfig /k/admin.kubeconfig:
// users[admin].user.client-key: /k/admin.key: open: No such file or directory".
//
// In-cluster (InClusterCredentials): https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
// trusting DIR/ca.crt, with the bearer token DIR/token, re-read on every request (bound
// service-account tokens rotate; the kubelet rewrites the file). DIR defaults to
// /var/run/secrets/kubernetes.io/serviceaccount.
//
// Example:
//   absl::StatusOr<Credentials> c = LoadKubeconfig("cp/admin.kubeconfig");
//   absl::StatusOr<Credentials> c = InClusterCredentials();
//   absl::StatusOr<std::string> token = BearerToken(*c);   // "" when none
#ifndef PODTOPO_KUBE_KUBECONFIG_H_
#define PODTOPO_KUBE_KUBECONFIG_H_

#include <string>

#include "absl/status/statusor.h"

namespace podtopo::kube {

inline constexpr char kServiceAccountDir[] = "/var/run/secrets/kubernetes.io/serviceaccount";

struct Credentials {
  std::string server;          // "https://127.0.0.1:6443" (no trailing slash)
  std::string source;          // for messages: "kubeconfig FILE" or "in-cluster service account"
  std::string ca_pem;          // "" = the system's trusted CAs
  bool insecure_skip_tls_verify = false;
  std::string token;           // a static bearer token
  std::string token_file;      // a bearer token file, re-read on every request
  std::string client_cert_pem;  // client certificate authentication (both or neither)
  std::string client_key_pem;
};

// The kubeconfig at `path` (its current-context).
absl::StatusOr<Credentials> LoadKubeconfig(const std::string& path);

// Parses kubeconfig `text`; `path` names it in errors, relative paths are resolved against
// `dir`.
absl::StatusOr<Credentials> ParseKubeconfig(const std::string& text, const std::string& path,
                                            const std::string& dir);

// The pod's service account: env KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT,
// `sa_dir`/ca.crt and `sa_dir`/token. Error when the variables are unset (not in a pod) or a
// file is missing, naming it.
absl::StatusOr<Credentials> InClusterCredentials(const std::string& sa_dir = kServiceAccountDir);

// True when KUBERNETES_SERVICE_HOST is set (running in a pod).
bool InCluster();

// The bearer token to send now: `token`, or the current content of `token_file` (trimmed);
// "" when neither is set. Error naming the file when it cannot be read or is empty.
absl::StatusOr<std::string> BearerToken(const Credentials& c);

}  // namespace podtopo::kube

#endif  // PODTOPO_KUBE_KUBECONFIG_H_
