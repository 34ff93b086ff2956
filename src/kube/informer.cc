#include "kube/informer.h"

#include <algorithm>
#include <utility>

#include "fmt/format.h"

namespace podtopo::kube {
namespace {

std::string ResourceVersionOf(const nlohmann::json& object) {
  auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return "";
  auto rv = m->find("resourceVersion");
  return rv != m->end() && rv->is_string() ? rv->get<std::string>() : "";
}

std::string WithQuery(const std::string& path, const std::string& query) {
  return path + (path.find('?') == std::string::npos ? "?" : "&") + query;
}

}  // namespace

const char* TypeName(WatchEvent::Type type) {
  switch (type) {
    case WatchEvent::Type::kAdded: return "ADDED";
    case WatchEvent::Type::kModified: return "MODIFIED";
    case WatchEvent::Type::kDeleted: return "DELETED";
  }
  return "?";
}

std::string KeyOf(const nlohmann::json& object) {
  if (!object.is_object()) return "";
  auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return "";
  auto name = m->find("name");
  if (name == m->end() || !name->is_string()) return "";
  auto ns = m->find("namespace");
  if (ns != m->end() && ns->is_string() && !ns->get<std::string>().empty()) {
    return ns->get<std::string>() + "/" + name->get<std::string>();
  }
  return name->get<std::string>();
}

Informer::Informer(std::unique_ptr<ApiClient> client, InformerOptions options, Handler handler)
    : client_(std::move(client)), options_(std::move(options)), handler_(std::move(handler)) {}

absl::StatusOr<std::unique_ptr<Informer>> Informer::Start(Credentials credentials,
                                                          InformerOptions options,
                                                          Handler handler) {
  if (options.path.empty() || options.path[0] != '/') {
    return absl::InvalidArgumentError(
        fmt::format("informer path {:?}: expected an API path such as /api/v1/pods", options.path));
  }
  if (options.backoff_initial.count() <= 0) options.backoff_initial = std::chrono::milliseconds(1);
  options.backoff_max = std::max(options.backoff_max, options.backoff_initial);
  auto client = ApiClient::Create(std::move(credentials), {.timeout = options.list_timeout,
                                                           .user_agent = "podtopo-informer"});
  if (!client.ok()) return client.status();
  auto informer = std::unique_ptr<Informer>(
      new Informer(std::move(*client), std::move(options), std::move(handler)));
  informer->thread_ = std::thread([p = informer.get()] { p->Loop(); });
  return informer;
}

Informer::~Informer() { Stop(); }

void Informer::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  client_->Cancel();
  if (thread_.joinable()) thread_.join();
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> l(mu_);
  return cv_.wait_for(l, timeout, [this] { return stats_.synced || stopping_; }) && stats_.synced;
}

std::vector<nlohmann::json> Informer::Snapshot() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<nlohmann::json> out;
  out.reserve(cache_.size());
  for (const auto& [key, object] : cache_) out.push_back(object);
  return out;
}

InformerStats Informer::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

bool Informer::SleepFor(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> l(mu_);
  return !cv_.wait_for(l, d, [this] { return stopping_; });
}

void Informer::Deliver(WatchEvent event) {
  std::string key = KeyOf(event.object);
  if (key.empty()) return;  // not an object: nothing to key it by
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return;
    if (event.type == WatchEvent::Type::kDeleted) {
      cache_.erase(key);
    } else {
      cache_[key] = event.object;
    }
    ++stats_.events;
  }
  handler_(event);
}

void Informer::Failed(const absl::Status& status) {
  std::lock_guard<std::mutex> l(mu_);
  if (stopping_) return;
  ++stats_.errors;
  stats_.last_error = std::string(status.message());
}

absl::StatusOr<std::string> Informer::List() {
  auto r = client_->Get(options_.path);
  if (!r.ok()) return r.status();
  if (!r->ok()) return r->Error();
  auto list = nlohmann::json::parse(r->body, nullptr, false);
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
    return absl::DataLossError(
        fmt::format("GET {}{}: the answer is not a list (no items)", client_->server(), options_.path));
  }
  std::string rv = list.contains("metadata") ? ResourceVersionOf(list) : "";
  // The diff against the cache, computed first, delivered after.
  std::map<std::string, const nlohmann::json*> listed;
  for (const auto& item : list["items"]) {
    std::string key = KeyOf(item);
    if (!key.empty()) listed[key] = &item;
  }
  std::vector<WatchEvent> events;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [key, object] : cache_) {
      if (!listed.count(key)) events.push_back({WatchEvent::Type::kDeleted, object});
    }
    for (const auto& [key, item] : listed) {
      auto it = cache_.find(key);
      if (it == cache_.end()) {
        events.push_back({WatchEvent::Type::kAdded, *item});
      } else if (ResourceVersionOf(it->second) != ResourceVersionOf(*item) ||
                 ResourceVersionOf(*item).empty()) {
        events.push_back({WatchEvent::Type::kModified, *item});
      }
    }
  }
  for (auto& e : events) Deliver(std::move(e));
  {
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.lists;
    stats_.synced = true;
  }
  cv_.notify_all();
  return rv;
}

absl::Status Informer::Watch(std::string* rv) {
  std::string query = fmt::format("watch=1&allowWatchBookmarks=true&timeoutSeconds={}",
                                  options_.watch_timeout.count());
  if (!rv->empty()) query += "&resourceVersion=" + EscapePathSegment(*rv);
  {
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.watches;
  }
  std::string pending;  // a line not yet complete
  absl::Status inner = absl::OkStatus();
  auto on_data = [&](std::string_view chunk) {
    pending.append(chunk);
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line(pending.data() + start, nl - start);
      if (line.find_first_not_of(" \r\t") == std::string_view::npos) continue;
      auto event = nlohmann::json::parse(line, nullptr, false);
      if (!event.is_object() || !event.contains("type") || !event["type"].is_string() ||
          !event.contains("object")) {
        inner = absl::DataLossError(fmt::format("watch {}: a line that is not a watch event: {}",
                                                options_.path, std::string(line.substr(0, 200))));
        return false;
      }
      const std::string type = event["type"].get<std::string>();
      nlohmann::json& object = event["object"];
      if (type == "ERROR") {
        long code = object.is_object() ? object.value("code", 0L) : 0L;
        std::string message = object.is_object() ? object.value("message", "") : "";
        inner = code == 410 ? absl::NotFoundError("gone: " + message)
                            : absl::UnavailableError(fmt::format("watch {}: ERROR {}: {}",
                                                                 options_.path, code, message));
        return false;
      }
      std::string object_rv = ResourceVersionOf(object);
      if (!object_rv.empty()) *rv = object_rv;
      if (type == "BOOKMARK") continue;
      WatchEvent::Type t;
      if (type == "ADDED") {
        t = WatchEvent::Type::kAdded;
      } else if (type == "MODIFIED") {
        t = WatchEvent::Type::kModified;
      } else if (type == "DELETED") {
        t = WatchEvent::Type::kDeleted;
      } else {
        continue;  // a type this version does not know
      }
      Deliver({t, std::move(object)});
    }
    pending.erase(0, start);
    std::lock_guard<std::mutex> l(mu_);
    return !stopping_;
  };
  auto r = client_->Stream(WithQuery(options_.path, query), on_data,
                           options_.watch_timeout + std::chrono::seconds(30));
  if (!inner.ok()) return inner;
  if (!r.ok()) return r.status();
  if (r->status == 410) return absl::NotFoundError("gone: " + r->body.substr(0, 200));
  if (!r->ok()) return r->Error();
  return absl::OkStatus();
}

void Informer::Loop() {
  std::chrono::milliseconds backoff = options_.backoff_initial;
  while (true) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_) return;
    }
    auto rv = List();
    if (!rv.ok()) {
      Failed(rv.status());
      if (!SleepFor(backoff)) return;
      backoff = std::min(backoff * 2, options_.backoff_max);
      continue;
    }
    backoff = options_.backoff_initial;
    std::string version = *rv;
    while (true) {
      const auto started = std::chrono::steady_clock::now();
      absl::Status s = Watch(&version);
      {
        std::lock_guard<std::mutex> l(mu_);
        if (stopping_) return;
      }
      if (s.ok()) {
        // The server's timeout: resume the watch. A server (or a proxy) that ends every
        // watch at once must not make this loop spin.
        if (std::chrono::steady_clock::now() - started < std::chrono::seconds(1) &&
            !SleepFor(std::chrono::seconds(1))) {
          return;
        }
        continue;
      }
      if (absl::IsNotFound(s)) break;             // 410 Gone: re-list at once
      Failed(s);
      if (!SleepFor(backoff)) return;
      backoff = std::min(backoff * 2, options_.backoff_max);
      break;                                      // re-list
    }
  }
}

}  // namespace podtopo::kube
