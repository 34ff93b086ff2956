#include "agent/agent.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "CivetServer.h"
#include "agent/agent_metrics.h"
#include "agent/allocator.h"
#include "agent/node_resource_topology.h"
#include "agent/observed_picture.h"
#include "agent/verify_metrics.h"
#include "client/podresources_client.h"
#include "fmt/format.h"
#include "metrics/kubelet_metrics.h"
#include "render/node_picture.h"
#include "spdlog/spdlog.h"
#include "state/kubelet_state.h"
#include "util/file.h"

namespace podtopo::agent {

class Agent::Impl : public CivetHandler {
 public:
  Impl(NodeTopology topology, config::KubeletConfig config, AgentOptions options)
      : topology_(std::move(topology)),
        config_(std::move(config)),
        options_(std::move(options)),
        numa_map_(NumaMapOf(topology_)),
        digest_(CpuTopologyDigest(topology_)) {}

  absl::Status StartPublishing() {
    if (!options_.publish) return absl::OkStatus();
    auto client = kube::ApiClient::Create(*options_.publish, {.timeout = std::chrono::seconds(10)});
    if (!client.ok()) return client.status();
    spdlog::info("publishing NodeResourceTopology {} to {} ({})", options_.publisher.node_name,
                 (*client)->server(), options_.publish->source);
    publisher_ = NrtPublisher::Start(std::move(*client), options_.publisher);
    return absl::OkStatus();
  }

  absl::Status Listen() {
    auto addr = metrics::ListenAddress(options_.listen);
    if (!addr.ok()) return addr.status();
    try {
      server_ = std::make_unique<CivetServer>(std::vector<std::string>{
          "listening_ports", *addr, "num_threads", "4", "enable_keep_alive", "no"});
    } catch (const std::exception& e) {
      return absl::UnavailableError(fmt::format("--metrics-addr {}: cannot listen: {}", *addr,
                                                metrics::ListenFailure(*addr, e.what())));
    }
    server_->addHandler("/", this);
    spdlog::info("serving http://{}/metrics, /nrt and /", *addr);
    return absl::OkStatus();
  }

  void StartPolling() {
    poller_ = std::thread([this] { Loop(); });
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (poller_.joinable()) poller_.join();
    if (publisher_ != nullptr) publisher_->Stop();
    if (server_ != nullptr) {
      server_->close();
      server_.reset();
    }
  }

  Response Handle(const std::string& path) const {
    std::lock_guard<std::mutex> l(mu_);
    if (path == "/metrics") {
      AgentStatus s = status_;
      s.observation = current_ ? &*current_ : nullptr;
      s.zones = current_ ? &zones_ : nullptr;
      if (publisher_ != nullptr) s.publish = publisher_->Stats();
      return {200, "text/plain; version=0.0.4; charset=utf-8", RenderMetricsText(s)};
    }
    if (path == "/nrt") {
      if (!current_) return Unavailable("text/plain; charset=utf-8", fault_ + "\n");
      return {200, "application/yaml", nrt_yaml_};
    }
    if (path == "/" || path == "/index.html") {
      if (!current_) {
        return Unavailable("text/html; charset=utf-8",
                           fmt::format("<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
                                       "<meta http-equiv=\"refresh\" content=\"{}\">"
                                       "<title>podtopo agent</title></head><body><h1>No current "
                                       "picture</h1><p>{}</p></body></html>\n",
                                       RefreshSeconds(), EscapeXml(fault_)));
      }
      return {200, "text/html; charset=utf-8", page_};
    }
    return {404, "text/plain; charset=utf-8", "not found: /metrics, /nrt or /\n"};
  }

  bool handleGet(CivetServer*, struct mg_connection* conn) override {
    const mg_request_info* info = mg_get_request_info(conn);
    Response r = Handle(info->local_uri != nullptr ? info->local_uri : "/");
    const char* reason = r.status == 200 ? "OK" : r.status == 404 ? "Not Found" : "Service Unavailable";
    mg_printf(conn,
              "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: "
              "no-store\r\nConnection: close\r\n\r\n",
              r.status, reason, r.content_type.c_str(), r.body.size());
    mg_write(conn, r.body.data(), r.body.size());
    return true;
  }

 private:
  Response Unavailable(const char* type, std::string body) const {
    return {503, type, std::move(body)};
  }
  int RefreshSeconds() const {
    return std::max<int>(1, static_cast<int>((options_.interval.count() + 999) / 1000));
  }

  void Loop() {
    std::unique_lock<std::mutex> l(mu_);
    while (!stopping_) {
      l.unlock();
      PollOnce();
      ReturnFreeMemory();  // the poll's transient strings (agent/allocator.h)
      l.lock();
      cv_.wait_for(l, options_.interval, [this] { return stopping_; });
    }
  }

  void PollOnce() {
    ObserveError error;
    absl::StatusOr<Observation> o = absl::UnavailableError("not connected");
    if (client_ == nullptr) {
      auto timeout = std::min<std::chrono::milliseconds>(options_.interval,
                                                         std::chrono::milliseconds(5000));
      auto c = client::PodResourcesClient::Connect({.socket = options_.socket, .timeout = timeout});
      if (c.ok()) {
        client_ = std::move(*c);
      } else {
        error = {"connect", c.status()};
        o = c.status();
      }
    }
    if (client_ != nullptr) o = Observe(*client_, numa_map_, &error);
    if (!o.ok()) client_.reset();  // reconnect next time (the kubelet may have restarted)

    std::optional<CheckpointHealth> health;
    std::string checkpoint_error;
    if (!options_.kubelet_dir.empty()) {
      auto report = state::Check(options_.kubelet_dir, {topology_, config_}, nullptr);
      if (report.ok()) {
        CheckpointHealth h;
        h.kubelet_starts = report->KubeletStarts();
        for (const auto& f : report->findings) {
          ++h.findings[{f.file, state::SeverityName(f.severity)}];
        }
        h.kubelet_version = config_.kubelet_version;
        h.restart_at_risk = report->restart_at_risk;
        for (const auto& [uid, issue] : h.restart_at_risk) {
          if (warned_at_risk_.insert(uid + issue).second) {
            spdlog::warn("a restart of kubelet {} re-allocates pod {} ({}): `podtopo state "
                         "restart` shows where it goes",
                         config_.kubelet_version, uid, issue);
          }
        }
        health = h;
      } else {
        checkpoint_error = std::string(report.status().message());
      }
    }

    // verify's core (it may sleep for its sampling window): on a copy of its status, so that
    // scrapes meanwhile see the previous run.
    std::optional<VerifyStatus> verify;
    if (options_.verify.enabled) {
      {
        std::lock_guard<std::mutex> l(mu_);
        verify = status_.verify.value_or(VerifyStatus{});
      }
      AgentVerifyOptions vo = options_.verify;
      if (!o.ok()) vo.podresources_socket.clear();
      std::string message = RunVerify(vo, *verify);
      if (message != verify_fault_) {
        if (!message.empty()) {
          spdlog::warn("{}", message);
        } else {
          spdlog::info("verify: the node reads in full again");
        }
      }
      verify_fault_ = message;
    }

    // Everything derived from this poll is built outside the lock.
    std::vector<ZoneAccount> zones;
    std::string yaml, page;
    if (o.ok()) {
      zones = AccountZones(topology_, config_, *o);
      nlohmann::ordered_json nrt =
          BuildNodeResourceTopology(options_.nrt_name, config_, zones, digest_);
      yaml = NrtYaml(nrt);
      if (publisher_ != nullptr) publisher_->Offer(std::move(nrt));
      page = RenderHtml(BuildObservedPicture(topology_, ObservedNodeOf(*o, zones, topology_)));
      std::string refresh = fmt::format("<meta http-equiv=\"refresh\" content=\"{}\">",
                                        RefreshSeconds());
      if (auto head = page.find("<head>"); head != std::string::npos) {
        page.insert(head + 6, refresh);
      }
      if (!options_.nrt_out.empty()) {
        if (absl::Status s = WriteFileAtomically(options_.nrt_out, yaml); !s.ok()) {
          spdlog::error("--nrt-out: {}", std::string(s.message()));
        }
      }
      for (const auto& w : o->warnings) {
        if (warned_.insert(w).second) spdlog::warn("{}", w);
      }
    }

    std::lock_guard<std::mutex> l(mu_);
    ++status_.polls;
    status_.checkpoint_checked = !options_.kubelet_dir.empty();
    status_.checkpoint = health;
    if (!checkpoint_error.empty()) {
      ++status_.errors["checkpoint"];
      if (checkpoint_error != checkpoint_fault_) spdlog::error("checkpoints: {}", checkpoint_error);
    }
    checkpoint_fault_ = checkpoint_error;
    if (verify) status_.verify = std::move(verify);
    if (o.ok()) {
      if (!status_.up && status_.polls > 1) spdlog::info("PodResources API on {} is back", options_.socket);
      status_.up = true;
      status_.last_success_seconds =
          std::chrono::duration<double>(o->time.time_since_epoch()).count();
      current_ = std::move(*o);
      zones_ = std::move(zones);
      nrt_yaml_ = std::move(yaml);
      page_ = std::move(page);
      fault_.clear();
    } else {
      ++status_.errors[error.call];
      std::string fault = fmt::format("{} failed: {}", error.call, std::string(error.status.message()));
      if (fault != fault_) spdlog::error("{} (keeps polling every {} ms)", fault, options_.interval.count());
      status_.up = false;
      current_.reset();
      zones_.clear();
      nrt_yaml_.clear();
      page_.clear();
      fault_ = fault;
    }
  }

  const NodeTopology topology_;
  const config::KubeletConfig config_;
  const AgentOptions options_;
  const client::NumaMap numa_map_;
  const std::string digest_;                            // CpuTopologyDigest(topology_)
  std::unique_ptr<NrtPublisher> publisher_;             // set before polling starts
  std::unique_ptr<client::PodResourcesClient> client_;  // poller thread only
  std::set<std::string> warned_;                        // poller thread only
  std::string verify_fault_;                            // poller thread only
  std::unique_ptr<CivetServer> server_;
  std::thread poller_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  AgentStatus status_;
  std::optional<Observation> current_;
  std::vector<ZoneAccount> zones_;
  std::string nrt_yaml_, page_, fault_, checkpoint_fault_;
  std::set<std::string> warned_at_risk_;  // pods (uid + issue) already logged as at risk
};

Agent::Agent(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Agent::~Agent() { Stop(); }

absl::StatusOr<std::unique_ptr<Agent>> Agent::Start(NodeTopology topology,
                                                    config::KubeletConfig config,
                                                    AgentOptions options) {
  if (options.interval.count() <= 0) {
    return absl::InvalidArgumentError("--interval: must be positive");
  }
  auto impl = std::make_unique<Impl>(std::move(topology), std::move(config), std::move(options));
  if (absl::Status s = impl->Listen(); !s.ok()) return s;
  if (absl::Status s = impl->StartPublishing(); !s.ok()) return s;
  impl->StartPolling();
  return std::unique_ptr<Agent>(new Agent(std::move(impl)));
}

void Agent::Stop() {
  if (impl_ != nullptr) impl_->Stop();
}

Agent::Response Agent::Handle(const std::string& path) const { return impl_->Handle(path); }

}  // namespace podtopo::agent
