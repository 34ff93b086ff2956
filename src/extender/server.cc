#include "extender/server.h"

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <algorithm>
#include <utility>

#include "CivetServer.h"
#include "fmt/format.h"
#include "metrics/kubelet_metrics.h"
#include "nlohmann/json.hpp"
#include "prometheus/histogram.h"
#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace podtopo::extender {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// The verbs we count; anything else is "other" (a scanner must not grow the label set).
constexpr const char* kVerbs[] = {"filter", "prioritize", "bind", "healthz", "readyz", "metrics"};

std::string VerbOf(std::string_view path) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  for (const char* v : kVerbs) {
    if (path == v) return v;
  }
  return "other";
}

// The protocol's error field: ExtenderFilterResult's is tagged "error", ExtenderBindingResult's
// is untagged ("Error"). The scheduler reads neither for a non-200 answer, but a person does.
std::string ErrorBody(const std::string& verb, const std::string& message) {
  return nlohmann::json{{verb == "bind" ? "Error" : "error", message}}.dump() + "\n";
}

MetricFamily Family(const char* name, const char* help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

void Add(MetricFamily& f, std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  if (f.type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
}

// Extender requests take microseconds to a few milliseconds; the scheduler's own timeout is
// 5 s by default (httpTimeout).
const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries b = {0.0001, 0.00025, 0.0005, 0.001,
                                                           0.0025, 0.005,   0.01,   0.025,
                                                           0.05,   0.1,     0.25,   1,  5};
  return b;
}

}  // namespace

class Server::Impl : public CivetHandler {
 public:
  Impl(Extender* extender, ServerOptions options)
      : extender_(extender), options_(std::move(options)) {
    for (const char* v : {"filter", "prioritize", "bind"}) {
      latency_.emplace(v, std::make_unique<prometheus::Histogram>(LatencyBuckets()));
    }
  }

  absl::Status Listen() {
    auto addr = metrics::ListenAddress(options_.listen, options_.flag);
    if (!addr.ok()) return addr.status();
    if (options_.threads < 1) {
      return absl::InvalidArgumentError(fmt::format("threads {}: expected at least 1", options_.threads));
    }
    try {
      // No keep-alive: a refused body (413) is left unread, and the connection must end with
      // the answer. Loopback or in-cluster connections are cheap.
      server_ = std::make_unique<CivetServer>(std::vector<std::string>{
          "listening_ports", *addr, "num_threads", std::to_string(options_.threads),
          "enable_keep_alive", "no", "request_timeout_ms", "30000"});
    } catch (const std::exception& e) {
      return absl::UnavailableError(fmt::format("{} {}: cannot listen: {}", options_.flag, *addr,
                                                metrics::ListenFailure(*addr, e.what())));
    }
    std::vector<int> ports = server_->getListeningPorts();
    port_ = ports.empty() ? 0 : ports.front();
    address_ = fmt::format("{}:{}", addr->substr(0, addr->rfind(':')), port_);
    server_->addHandler("/", this);
    return absl::OkStatus();
  }

  void Stop() {
    if (server_ != nullptr) {
      server_->close();
      server_.reset();
    }
  }

  const std::string& address() const { return address_; }
  int port() const { return port_; }

  bool handlePost(CivetServer*, struct mg_connection* conn) override {
    const auto start = std::chrono::steady_clock::now();
    const mg_request_info* info = mg_get_request_info(conn);
    const std::string path = info->local_uri != nullptr ? info->local_uri : "/";
    const std::string verb = VerbOf(path);
    HttpAnswer answer = Post(conn, info, path, verb);
    // Observed and counted before the answer is written: a client that has its answer sees it
    // in /metrics.
    if (auto it = latency_.find(verb); it != latency_.end()) {
      it->second->Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    Reply(conn, verb, answer.status, "application/json", answer.body);
    return true;
  }

  bool handleGet(CivetServer*, struct mg_connection* conn) override {
    const mg_request_info* info = mg_get_request_info(conn);
    const std::string path = info->local_uri != nullptr ? info->local_uri : "/";
    const std::string verb = VerbOf(path);
    if (verb == "healthz") {
      Reply(conn, verb, 200, "text/plain; charset=utf-8", "ok\n");
    } else if (verb == "readyz") {
      std::string waiting;
      for (const SourceStatus& s : Sources()) {
        if (s.synced) continue;
        waiting += fmt::format("{} not listed yet{}\n", s.name,
                               s.last_error.empty() ? "" : ": " + s.last_error);
      }
      if (waiting.empty()) {
        Reply(conn, verb, 200, "text/plain; charset=utf-8", "ok\n");
      } else {
        Reply(conn, verb, 503, "text/plain; charset=utf-8", waiting);
      }
    } else if (verb == "metrics") {
      // Counted before rendering, so that a scrape sees itself.
      Count(verb, 200);
      std::string text = MetricsText();
      Write(conn, 200, "text/plain; version=0.0.4; charset=utf-8", text);
    } else if (verb == "filter" || verb == "prioritize" || verb == "bind") {
      Reply(conn, verb, 405, "application/json",
            ErrorBody(verb, fmt::format("GET {}: the extender protocol POSTs to {}", path, path)));
    } else {
      Reply(conn, verb, 404, "text/plain; charset=utf-8",
            fmt::format("not found: {}: POST /filter, /prioritize, /bind; GET /healthz, "
                        "/readyz, /metrics\n",
                        path));
    }
    return true;
  }

  std::string MetricsText() const {
    std::vector<MetricFamily> out;
    auto requests = Family("podtopo_extender_requests_total",
                           "HTTP requests answered, by verb (filter, prioritize, bind, healthz, "
                           "readyz, metrics, other) and status code",
                           MetricType::Counter);
    {
      std::lock_guard<std::mutex> l(mu_);
      for (const auto& [key, n] : requests_) {
        Add(requests, {{"code", std::to_string(key.second)}, {"verb", key.first}},
            static_cast<double>(n));
      }
    }
    out.push_back(std::move(requests));

    auto latency = Family("podtopo_extender_request_duration_seconds",
                          "Time from a request's headers to its answer, body read and decision "
                          "made included (not the writing of the answer), by verb",
                          MetricType::Histogram);
    for (const auto& [verb, h] : latency_) {
      ClientMetric m = h->Collect();
      m.label = {{"verb", verb}};
      latency.metric.push_back(std::move(m));
    }
    out.push_back(std::move(latency));

    const ExtenderStats s = extender_->Stats();
    auto counter = [&](const char* name, const char* help, uint64_t v) {
      auto f = Family(name, help, MetricType::Counter);
      Add(f, {}, static_cast<double>(v));
      out.push_back(std::move(f));
    };
    auto gauge = [&](const char* name, const char* help, double v) {
      auto f = Family(name, help, MetricType::Gauge);
      Add(f, {}, v);
      out.push_back(std::move(f));
    };
    counter("podtopo_extender_nodes_filtered_total",
            "Candidate nodes evaluated by /filter (one per node per request)", s.nodes_filtered);
    counter("podtopo_extender_nodes_failed_total",
            "Candidate nodes /filter answered as failed (the kubelet would reject the pod, or the "
            "node has no NodeResourceTopology)",
            s.nodes_failed);
    counter("podtopo_extender_nodes_approximate_total",
            "Candidate nodes decided from an NRT of another exporter (per-NUMA totals, not "
            "podtopo's exact attributes): the answer is approximate",
            s.nodes_approximate);
    counter("podtopo_extender_bad_requests_total",
            "Requests the extender could not read (bad JSON, missing fields, too many nodes, too "
            "large)",
            s.bad_requests + too_large_.load());
    counter("podtopo_extender_bind_errors_total",
            "Bindings the API server refused or that could not be sent", bind_errors_.load());
    gauge("podtopo_extender_nodes_known", "NodeResourceTopology objects held",
          static_cast<double>(s.nodes_known));
    gauge("podtopo_extender_reservations",
          "Pods bound through the extender whose resources are reserved until their node's "
          "NodeResourceTopology shows them",
          static_cast<double>(s.reservations));

    auto errors = Family("podtopo_extender_informer_errors_total",
                         "Failed list or watch calls of an informer, by resource",
                         MetricType::Counter);
    auto synced = Family("podtopo_extender_informer_synced",
                         "1 once the informer's first list was delivered, by resource",
                         MetricType::Gauge);
    for (const SourceStatus& src : Sources()) {
      Add(errors, {{"resource", src.name}}, static_cast<double>(src.errors));
      Add(synced, {{"resource", src.name}}, src.synced ? 1 : 0);
    }
    out.push_back(std::move(errors));
    out.push_back(std::move(synced));
    return prometheus::TextSerializer().Serialize(out);
  }

 private:
  std::vector<SourceStatus> Sources() const {
    return options_.sources ? options_.sources() : std::vector<SourceStatus>{};
  }

  // Reads the body within the limit and hands it to the Extender.
  HttpAnswer Post(struct mg_connection* conn, const mg_request_info* info, const std::string& path,
                  const std::string& verb) {
    const bool known = verb == "filter" || verb == "prioritize" || verb == "bind";
    if (!known) {
      return {404, ErrorBody(verb, fmt::format("POST {}: not found: the extender serves POST /filter, "
                                         "/prioritize and /bind",
                                         path))};
    }
    if (verb == "bind" && !options_.bind) {
      return {404, ErrorBody(verb, "POST /bind: this extender does not bind (no bindVerb)")};
    }
    const size_t limit = options_.max_request_bytes;
    if (info->content_length > 0 && static_cast<uint64_t>(info->content_length) > limit) {
      ++too_large_;
      return {413, ErrorBody(verb, fmt::format("POST {}: the request body of {} bytes is larger than "
                                         "the limit of {} bytes",
                                         path, info->content_length, limit))};
    }
    // Read straight into the body (civetweb's threads have small stacks: no big buffer there).
    std::string body;
    if (info->content_length > 0) body.reserve(static_cast<size_t>(info->content_length));
    constexpr size_t kChunk = 64 << 10;
    for (;;) {
      const size_t had = body.size();
      body.resize(had + kChunk);
      int n = mg_read(conn, body.data() + had, kChunk);
      body.resize(had + static_cast<size_t>(std::max(n, 0)));
      if (n < 0) {
        return {400, ErrorBody(verb, fmt::format("POST {}: reading the request body failed after {} "
                                                 "bytes",
                                                 path, body.size()))};
      }
      if (n == 0) break;
      if (body.size() > limit) {
        ++too_large_;
        return {413, ErrorBody(verb, fmt::format("POST {}: the request body is larger than the "
                                                 "limit of {} bytes",
                                                 path, limit))};
      }
    }
    return OnBigStack([&] {
      if (verb == "filter") return extender_->Filter(body);
      if (verb == "prioritize") return extender_->Prioritize(body);
      return extender_->Bind(body, [this](const BindingArgs& args) {
        absl::Status s = options_.bind(args);
        if (!s.ok()) ++bind_errors_;
        return s;
      });
    });
  }

  // civetweb runs handlers on threads with a small fixed stack (its USE_STACK_SIZE build
  // option; Debian's overflows on a 20-CPU pod's JSON at -O0), and a hostile request may nest
  // JSON deeply. The decision runs on a thread of the default stack size (8 MiB); starting one
  // costs tens of microseconds, against milliseconds for a filter of thousands of nodes.
  static HttpAnswer OnBigStack(const std::function<HttpAnswer()>& work) {
    HttpAnswer answer;
    std::thread t([&] { answer = work(); });
    t.join();
    return answer;
  }

  void Count(const std::string& verb, int status) {
    std::lock_guard<std::mutex> l(mu_);
    ++requests_[{verb, status}];
  }

  void Reply(struct mg_connection* conn, const std::string& verb, int status, const char* type,
             const std::string& body) {
    Count(verb, status);
    Write(conn, status, type, body);
  }

  static void Write(struct mg_connection* conn, int status, const char* type,
                    const std::string& body) {
    mg_printf(conn,
              "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: "
              "no-store\r\nConnection: close\r\n\r\n",
              status, mg_get_response_code_text(conn, status), type, body.size());
    mg_write(conn, body.data(), body.size());
  }

  Extender* const extender_;
  const ServerOptions options_;
  std::unique_ptr<CivetServer> server_;
  std::string address_;
  int port_ = 0;
  std::map<std::string, std::unique_ptr<prometheus::Histogram>> latency_;  // fixed at construction
  std::atomic<uint64_t> too_large_{0}, bind_errors_{0};
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // under mu_
};

absl::StatusOr<std::unique_ptr<Server>> Server::Start(Extender* extender, ServerOptions options) {
  if (extender == nullptr) return absl::InvalidArgumentError("Server::Start: no extender");
  auto impl = std::make_unique<Impl>(extender, std::move(options));
  if (absl::Status s = impl->Listen(); !s.ok()) return s;
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() { Stop(); }
void Server::Stop() { impl_->Stop(); }
const std::string& Server::address() const { return impl_->address(); }
int Server::port() const { return impl_->port(); }
std::string Server::MetricsText() const { return impl_->MetricsText(); }

}  // namespace podtopo::extender
