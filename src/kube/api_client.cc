#include "kube/api_client.h"

#include <curl/curl.h>

#include <cctype>
#include <cstring>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace podtopo::kube {
namespace {

// curl_global_init once per process, before the first handle (it is not thread-safe in 7.88
// when called concurrently). Its memory is owned by libcurl and OpenSSL for the process's life.
void GlobalInit() {
  static const CURLcode init = curl_global_init(CURL_GLOBAL_DEFAULT);
  (void)init;
}

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// The write callback of Stream: a 2xx body goes to the caller's function as it arrives; any
// other body is kept for Response::Error.
struct StreamSink {
  void* curl;
  const std::function<bool(std::string_view)>* on_data;
  std::string* body;
  bool ended_by_caller = false;
};

size_t StreamTo(char* data, size_t size, size_t n, void* out) {
  auto* sink = static_cast<StreamSink*>(out);
  long code = 0;
  curl_easy_getinfo(static_cast<CURL*>(sink->curl), CURLINFO_RESPONSE_CODE, &code);
  if (code < 200 || code >= 300) {
    sink->body->append(data, size * n);
    return size * n;
  }
  if (!(*sink->on_data)(std::string_view(data, size * n))) {
    sink->ended_by_caller = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  return size * n;
}

int Progress(void* cancelled, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<std::atomic<bool>*>(cancelled)->load() ? 1 : 0;  // nonzero aborts
}

const char* Reason(long code) {
  switch (code) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

}  // namespace

absl::Status Response::Error() const {
  if (ok()) return absl::OkStatus();
  std::string message;
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.value("kind", "") == "Status" && j.contains("message") &&
      j["message"].is_string()) {
    message = j["message"].get<std::string>();
  } else {
    message = body.substr(0, 200);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  }
  const char* reason = Reason(status);
  std::string text = fmt::format("{} {}: HTTP {}{}{}{}{}", method, url, status, *reason ? " " : "",
                                 reason, message.empty() ? "" : ": ", message);
  switch (status) {
    case 401: return absl::UnauthenticatedError(text);
    case 403: return absl::PermissionDeniedError(text);
    case 404: return absl::NotFoundError(text);
    case 409: return absl::AbortedError(text);
    case 400:
    case 415:
    case 422: return absl::InvalidArgumentError(text);
    default:
      if (status == 429 || status >= 500) return absl::UnavailableError(text);
      return absl::UnknownError(text);
  }
}

ApiClient::ApiClient(Credentials credentials, ClientOptions options)
    : credentials_(std::move(credentials)), options_(std::move(options)) {}

ApiClient::~ApiClient() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

absl::StatusOr<std::unique_ptr<ApiClient>> ApiClient::Create(Credentials credentials,
                                                             ClientOptions options) {
  if (credentials.server.empty()) {
    return absl::InvalidArgumentError(fmt::format("{}: no server", credentials.source));
  }
  GlobalInit();
  auto client = std::unique_ptr<ApiClient>(new ApiClient(std::move(credentials), std::move(options)));
  client->curl_ = curl_easy_init();
  if (client->curl_ == nullptr) return absl::InternalError("curl_easy_init failed");
  return client;
}

absl::StatusOr<Response> ApiClient::Get(const std::string& path) {
  return Do("GET", path, nullptr, nullptr);
}
absl::StatusOr<Response> ApiClient::Post(const std::string& path, const std::string& json) {
  return Do("POST", path, &json, "application/json");
}
absl::StatusOr<Response> ApiClient::Put(const std::string& path, const std::string& json) {
  return Do("PUT", path, &json, "application/json");
}

absl::StatusOr<Response> ApiClient::DeleteWithOptions(const std::string& path,
                                                     const std::string& json) {
  return Do("DELETE", path, &json, "application/json");
}
absl::StatusOr<Response> ApiClient::Patch(const std::string& path, const std::string& body,
                                          const std::string& content_type) {
  return Do("PATCH", path, &body, content_type.c_str());
}
absl::StatusOr<Response> ApiClient::Delete(const std::string& path) {
  return Do("DELETE", path, nullptr, nullptr);
}

absl::StatusOr<Response> ApiClient::Stream(const std::string& path,
                                           const std::function<bool(std::string_view)>& on_data,
                                           std::chrono::milliseconds timeout) {
  return Do("GET", path, nullptr, nullptr, &on_data, timeout);
}

absl::StatusOr<Response> ApiClient::Do(const char* method, const std::string& path,
                                       const std::string* body, const char* content_type,
                                       const std::function<bool(std::string_view)>* on_data,
                                       std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) timeout = options_.timeout;
  Response r;
  r.method = method;
  r.url = credentials_.server + path;
  // The token now: a rotated token file is picked up on the next request.
  auto token = BearerToken(credentials_);
  if (!token.ok()) {
    return absl::UnauthenticatedError(fmt::format("{} {}: {}", method, r.url, std::string(token.status().message())));
  }

  std::lock_guard<std::mutex> l(mu_);
  if (cancelled_) return absl::UnavailableError(fmt::format("{} {}: cancelled", method, r.url));
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);  // keeps the connection cache
  char errbuf[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min<int64_t>(timeout.count(), 5000)));
  curl_easy_setopt(c, CURLOPT_USERAGENT, options_.user_agent.c_str());
  StreamSink sink{c, on_data, &r.body};
  if (on_data != nullptr) {
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, StreamTo);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  } else {
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Append);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  }
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, Progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &cancelled_);

  if (credentials_.insecure_skip_tls_verify) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!credentials_.ca_pem.empty()) {
    curl_blob ca{const_cast<char*>(credentials_.ca_pem.data()), credentials_.ca_pem.size(),
                 CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
  }
  if (!credentials_.client_cert_pem.empty()) {
    curl_blob cert{const_cast<char*>(credentials_.client_cert_pem.data()),
                   credentials_.client_cert_pem.size(), CURL_BLOB_COPY};
    curl_blob key{const_cast<char*>(credentials_.client_key_pem.data()),
                  credentials_.client_key_pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
    curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &key);
  }

  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  std::string auth;
  if (!token->empty()) {
    auth = "Authorization: Bearer " + *token;
    headers = curl_slist_append(headers, auth.c_str());
  }
  std::string type;
  if (content_type != nullptr) {
    type = std::string("Content-Type: ") + content_type;
    headers = curl_slist_append(headers, type.c_str());
  }
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);

  if (std::strcmp(method, "GET") == 0) {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
  }
  if (body != nullptr) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  }

  CURLcode rc = curl_easy_perform(c);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
  curl_slist_free_all(headers);
  if (rc == CURLE_WRITE_ERROR && sink.ended_by_caller) rc = CURLE_OK;
  if (rc != CURLE_OK) {
    std::string why = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc);
    return absl::UnavailableError(fmt::format("{} {}: {}", method, r.url, why));
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

std::string EscapePathSegment(const std::string& s) {
  std::string out;
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
      out += static_cast<char>(ch);
    } else {
      out += fmt::format("%{:02X}", ch);
    }
  }
  return out;
}

}  // namespace podtopo::kube
