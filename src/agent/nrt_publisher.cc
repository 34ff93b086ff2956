#include "agent/nrt_publisher.h"

#include "agent/node_resource_topology.h"
#include "fmt/format.h"
#include "spdlog/spdlog.h"

namespace podtopo::agent {
namespace {

using Clock = std::chrono::steady_clock;

std::string ReasonOfStatus(long code, bool nrt_path) {
  if (code == 401) return "unauthorized";
  if (code == 403) return "forbidden";
  if (code == 404) return nrt_path ? "crd_missing" : "node_not_found";
  if (code == 429 || code >= 500) return "server";
  return "rejected";
}

}  // namespace

NrtPublisher::NrtPublisher(std::unique_ptr<kube::ApiClient> client, PublisherOptions options)
    : client_(std::move(client)), options_(std::move(options)) {
  stats_.server = client_->server();
}

std::unique_ptr<NrtPublisher> NrtPublisher::Start(std::unique_ptr<kube::ApiClient> client,
                                                  PublisherOptions options) {
  auto p = std::unique_ptr<NrtPublisher>(new NrtPublisher(std::move(client), std::move(options)));
  p->thread_ = std::thread([raw = p.get()] { raw->Loop(); });
  return p;
}

NrtPublisher::~NrtPublisher() { Stop(); }

void NrtPublisher::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  client_->Cancel();  // a request in flight ends now, not at its timeout
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NrtPublisher::Offer(nlohmann::ordered_json nrt) {
  std::string text = nrt.dump();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (text == desired_text_) return;
    desired_ = std::move(nrt);
    desired_text_ = std::move(text);
  }
  cv_.notify_all();
}

PublishStats NrtPublisher::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

std::string NrtPublisher::Apply(const nlohmann::ordered_json& nrt, std::string* message) {
  auto fail = [&](const absl::Status& s, const std::string& reason) {
    *message = std::string(s.message());
    return reason;
  };
  std::string name = kube::EscapePathSegment(options_.node_name);
  auto node = client_->Get("/api/v1/nodes/" + name);
  if (!node.ok()) {
    return fail(node.status(),
                node.status().code() == absl::StatusCode::kUnauthenticated ? "token" : "transport");
  }
  if (!node->ok()) return fail(node->Error(), ReasonOfStatus(node->status, false));
  auto j = nlohmann::json::parse(node->body, nullptr, false);
  std::string uid;
  if (j.is_object() && j["metadata"].is_object() && j["metadata"]["uid"].is_string()) {
    uid = j["metadata"]["uid"].get<std::string>();
  }
  if (uid.empty()) {
    *message = fmt::format("GET {}/api/v1/nodes/{}: the answer has no metadata.uid",
                           client_->server(), name);
    return "rejected";
  }
  std::string path = fmt::format(
      "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies/{}?fieldManager=podtopo&force=true",
      name);
  auto r = client_->Patch(path, WithNodeOwner(nrt, options_.node_name, uid).dump(),
                          kube::kApplyPatch);
  if (!r.ok()) {
    return fail(r.status(),
                r.status().code() == absl::StatusCode::kUnauthenticated ? "token" : "transport");
  }
  if (!r->ok()) return fail(r->Error(), ReasonOfStatus(r->status, true));
  return "";
}

void NrtPublisher::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  Clock::time_point last_write{};   // of the last success
  Clock::time_point retry_at{};     // after a failure
  std::chrono::milliseconds backoff{0};
  bool written_once = false;
  while (!stopping_) {
    Clock::time_point now = Clock::now();
    Clock::time_point due = Clock::time_point::max();
    if (desired_) {
      if (backoff.count() > 0) {
        due = retry_at;
      } else if (desired_text_ != written_text_ || !written_once) {
        due = now;
      } else {
        due = last_write + options_.resync;
      }
    }
    if (due > now) {
      if (due == Clock::time_point::max()) {
        cv_.wait(l);
      } else {
        cv_.wait_until(l, due);
      }
      continue;  // re-evaluate: new object, stop, or time
    }
    nlohmann::ordered_json nrt = *desired_;
    std::string text = desired_text_;
    l.unlock();
    std::string message;
    std::string reason = Apply(nrt, &message);
    l.lock();
    if (reason.empty()) {
      if (!stats_.last_error.empty()) spdlog::info("NodeResourceTopology: writing to {} works again", stats_.server);
      ++stats_.writes;
      stats_.last_success_seconds =
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      stats_.last_error.clear();
      written_text_ = text;
      written_once = true;
      last_write = Clock::now();
      backoff = std::chrono::milliseconds(0);
      spdlog::debug("NodeResourceTopology {} applied", options_.node_name);
    } else {
      ++stats_.errors[reason];
      backoff = backoff.count() == 0 ? options_.backoff_initial
                                     : std::min(backoff * 2, options_.backoff_max);
      retry_at = Clock::now() + backoff;
      if (message != stats_.last_error) {
        spdlog::error("NodeResourceTopology: {} ({}; retrying with back-off up to {} ms)", message,
                      reason, options_.backoff_max.count());
      }
      stats_.last_error = message;
    }
  }
}

}  // namespace podtopo::agent
