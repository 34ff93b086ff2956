#include "kube/kubeconfig.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "fmt/format.h"
#include "util/file.h"
#include "yaml-cpp/yaml.h"

namespace podtopo::kube {
namespace {

constexpr size_t kMaxFile = 1 << 20;

class Reader {
 public:
  Reader(std::string path, std::string dir) : path_(std::move(path)), dir_(std::move(dir)) {}

  absl::Status Error(const std::string& field, const std::string& what) const {
    return absl::InvalidArgumentError(
        field.empty() ? fmt::format("kubeconfig {}: {}", path_, what)
                      : fmt::format("kubeconfig {}: {}: {}", path_, field, what));
  }

  // A string field of `map` (absent: ""); error when it is not a scalar.
  absl::StatusOr<std::string> String(const YAML::Node& map, const std::string& field,
                                     const std::string& key) const {
    YAML::Node v = map[key];
    if (!v || v.IsNull()) return std::string();
    if (!v.IsScalar()) return Error(field + "." + key, "expected a string");
    return v.Scalar();
  }

  // The entry of list `key` (clusters, users, contexts) whose name is `name`, and its `inner`
  // map ("cluster", "user", "context").
  absl::StatusOr<YAML::Node> Named(const YAML::Node& root, const std::string& key,
                                   const std::string& name, const std::string& inner,
                                   const std::string& referenced_by) const {
    YAML::Node list = root[key];
    if (list && !list.IsNull() && !list.IsSequence()) return Error(key, "expected a list");
    if (list && list.IsSequence()) {
      for (size_t i = 0; i < list.size(); ++i) {
        YAML::Node e = list[i];
        if (!e.IsMap()) return Error(fmt::format("{}[{}]", key, i), "expected a map");
        if (e["name"] && e["name"].IsScalar() && e["name"].Scalar() == name) {
          YAML::Node m = e[inner];
          std::string field = fmt::format("{}[{}].{}", key, name, inner);
          if (!m || !m.IsMap()) return Error(field, "missing or not a map");
          return m;
        }
      }
    }
    return Error(referenced_by, fmt::format("no {} named {:?} in {}", inner, name, key));
  }

  std::string Resolve(const std::string& file) const {
    if (file.empty() || file[0] == '/' || dir_.empty()) return file;
    return (std::filesystem::path(dir_) / file).string();
  }

  // The content of `file_key` (a path) or `data_key` (base64) of `map`: "" when neither.
  absl::StatusOr<std::string> FileOrData(const YAML::Node& map, const std::string& field,
                                         const std::string& file_key,
                                         const std::string& data_key) const {
    auto data = String(map, field, data_key);
    if (!data.ok()) return data.status();
    if (!data->empty()) {
      std::string decoded;
      std::string compact = *data;
      compact.erase(std::remove_if(compact.begin(), compact.end(),
                                   [](unsigned char c) { return absl::ascii_isspace(c); }),
                    compact.end());
      if (!absl::Base64Unescape(compact, &decoded) || decoded.empty()) {
        return Error(field + "." + data_key, "not valid base64");
      }
      return decoded;
    }
    auto file = String(map, field, file_key);
    if (!file.ok()) return file.status();
    if (file->empty()) return std::string();
    std::string resolved = Resolve(*file);
    auto content = ReadSmallFile(resolved, kMaxFile);
    if (!content.ok()) {
      return Error(field + "." + file_key, std::string(std::string(content.status().message())));
    }
    if (content->empty()) return Error(field + "." + file_key, fmt::format("{} is empty", resolved));
    return *content;
  }

 private:
  std::string path_, dir_;
};

std::string TrimSlash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

absl::StatusOr<Credentials> ParseKubeconfig(const std::string& text, const std::string& path,
                                            const std::string& dir) {
  Reader r(path, dir);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return r.Error("", fmt::format("not YAML: line {}: {}", e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) return r.Error("", "expected a map (apiVersion: v1, kind: Config)");
  try {
    auto current = r.String(root, "", "current-context");
    if (!current.ok()) return current.status();
    if (current->empty()) return r.Error("current-context", "missing (kubectl config use-context NAME)");
    auto context = r.Named(root, "contexts", *current, "context", "current-context");
    if (!context.ok()) return context.status();
    std::string cfield = fmt::format("contexts[{}].context", *current);
    auto cluster_name = r.String(*context, cfield, "cluster");
    if (!cluster_name.ok()) return cluster_name.status();
    if (cluster_name->empty()) return r.Error(cfield + ".cluster", "missing");
    auto user_name = r.String(*context, cfield, "user");
    if (!user_name.ok()) return user_name.status();

    Credentials c;
    c.source = "kubeconfig " + path;
    auto cluster = r.Named(root, "clusters", *cluster_name, "cluster", cfield + ".cluster");
    if (!cluster.ok()) return cluster.status();
    std::string kfield = fmt::format("clusters[{}].cluster", *cluster_name);
    auto server = r.String(*cluster, kfield, "server");
    if (!server.ok()) return server.status();
    if (server->empty()) return r.Error(kfield + ".server", "missing");
    if (server->rfind("https://", 0) != 0 && server->rfind("http://", 0) != 0) {
      return r.Error(kfield + ".server", fmt::format("{:?} is not an http(s):// URL", *server));
    }
    c.server = TrimSlash(*server);
    auto ca = r.FileOrData(*cluster, kfield, "certificate-authority", "certificate-authority-data");
    if (!ca.ok()) return ca.status();
    c.ca_pem = *ca;
    auto insecure = r.String(*cluster, kfield, "insecure-skip-tls-verify");
    if (!insecure.ok()) return insecure.status();
    if (*insecure == "true") {
      c.insecure_skip_tls_verify = true;
    } else if (!insecure->empty() && *insecure != "false") {
      return r.Error(kfield + ".insecure-skip-tls-verify", fmt::format("{:?} is not true or false", *insecure));
    }

    if (!user_name->empty()) {
      auto user = r.Named(root, "users", *user_name, "user", cfield + ".user");
      if (!user.ok()) return user.status();
      std::string ufield = fmt::format("users[{}].user", *user_name);
      for (const char* unsupported : {"exec", "auth-provider", "username", "password"}) {
        if ((*user)[unsupported]) {
          return r.Error(ufield + "." + unsupported,
                         "not supported by podtopo (use token, tokenFile or a client certificate)");
        }
      }
      auto token = r.String(*user, ufield, "token");
      if (!token.ok()) return token.status();
      c.token = *token;
      auto token_file = r.String(*user, ufield, "tokenFile");
      if (!token_file.ok()) return token_file.status();
      if (!token_file->empty()) c.token_file = r.Resolve(*token_file);
      auto cert = r.FileOrData(*user, ufield, "client-certificate", "client-certificate-data");
      if (!cert.ok()) return cert.status();
      auto key = r.FileOrData(*user, ufield, "client-key", "client-key-data");
      if (!key.ok()) return key.status();
      if (cert->empty() != key->empty()) {
        return r.Error(ufield, cert->empty() ? "client-key without client-certificate"
                                             : "client-certificate without client-key");
      }
      c.client_cert_pem = *cert;
      c.client_key_pem = *key;
      if (c.token.empty() && !c.token_file.empty()) {
        if (auto t = BearerToken(c); !t.ok()) return r.Error(ufield + ".tokenFile", std::string(std::string(t.status().message())));
      }
    }
    return c;
  } catch (const YAML::Exception& e) {
    return r.Error("", fmt::format("line {}: {}", e.mark.line + 1, e.msg));
  }
}

absl::StatusOr<Credentials> LoadKubeconfig(const std::string& path) {
  auto text = ReadSmallFile(path, kMaxFile);
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("kubeconfig {}", std::string(text.status().message())));
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  return ParseKubeconfig(*text, path, dir);
}

bool InCluster() {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  return host != nullptr && host[0] != '\0';
}

absl::StatusOr<Credentials> InClusterCredentials(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || host[0] == '\0' || port == nullptr || port[0] == '\0') {
    return absl::FailedPreconditionError(
        "in-cluster service account: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are "
        "not set (not in a pod; give --kubeconfig)");
  }
  Credentials c;
  c.source = "in-cluster service account";
  std::string h = host;
  if (h.find(':') != std::string::npos && h.front() != '[') h = "[" + h + "]";  // IPv6
  c.server = fmt::format("https://{}:{}", h, port);
  std::string ca = sa_dir + "/ca.crt";
  auto pem = ReadSmallFile(ca, kMaxFile);
  if (!pem.ok()) {
    return absl::FailedPreconditionError(fmt::format(
        "in-cluster service account: {}", std::string(pem.status().message())));
  }
  c.ca_pem = *pem;
  c.token_file = sa_dir + "/token";
  if (auto t = BearerToken(c); !t.ok()) return t.status();
  return c;
}

absl::StatusOr<std::string> BearerToken(const Credentials& c) {
  if (!c.token.empty()) return c.token;
  if (c.token_file.empty()) return std::string();
  auto t = ReadSmallFile(c.token_file, kMaxFile);
  if (!t.ok()) {
    return absl::UnauthenticatedError(
        fmt::format("{}: token file: {}", c.source, std::string(t.status().message())));
  }
  std::string token(absl::StripAsciiWhitespace(*t));
  if (token.empty()) {
    return absl::UnauthenticatedError(fmt::format("{}: token file {} is empty", c.source, c.token_file));
  }
  return token;
}

}  // namespace podtopo::kube
