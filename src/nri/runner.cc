#include "nri/runner.h"

#include <cctype>

#include "fmt/format.h"
#include "spdlog/spdlog.h"

namespace podtopo::nri {

absl::Status ValidateRegistration(const std::string& name, const std::string& index) {
  if (index.size() != 2 || !std::isdigit(static_cast<unsigned char>(index[0])) ||
      !std::isdigit(static_cast<unsigned char>(index[1]))) {
    return absl::InvalidArgumentError(
        fmt::format("--index {:?}: expected two digits (00-99), the plugin's order", index));
  }
  if (name.empty()) return absl::InvalidArgumentError("--name: expected a non-empty name");
  for (char ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') {
      return absl::InvalidArgumentError(
          fmt::format("--name {:?}: expected letters, digits, '-', '_' and '.'", name));
    }
  }
  return absl::OkStatus();
}

Runner::Runner(Plugin* plugin, RunnerOptions options)
    : plugin_(plugin), options_(std::move(options)) {}

void Runner::Stop() {
  stop_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  cv_.notify_all();
}

absl::Status Runner::Serve(Connection& conn) {
  conn.Start([this](const std::string& service, const std::string& method,
                    const std::string& payload) -> absl::StatusOr<std::string> {
    if (service != kPluginService) {
      return absl::UnimplementedError(fmt::format("podtopo: service {} is not served", service));
    }
    auto out = plugin_->Handle(method, payload);
    spdlog::debug("{}: {}", method, out.ok() ? "ok" : std::string(out.status().message()));
    std::lock_guard<std::mutex> lock(mu_);
    updates_ready_ = true;
    cv_.notify_all();
    return out;
  });
  nriapi::RegisterPluginRequest reg;
  reg.set_plugin_name(options_.name);
  reg.set_plugin_idx(options_.index);
  auto r = conn.Call(kRuntimeService, "RegisterPlugin", reg.SerializeAsString(),
                     options_.call_timeout);
  if (!r.ok()) return r.status();
  registrations_++;
  spdlog::info("registered with {} as {}-{}", options_.socket, options_.index, options_.name);
  // Unsolicited updates are sent from here, never from the thread answering the runtime.
  while (!stop_) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_ || updates_ready_; });
      updates_ready_ = false;
    }
    if (auto closed = conn.WaitFor(std::chrono::milliseconds(0)); closed.has_value()) {
      return *closed;
    }
    std::vector<nriapi::ContainerUpdate> updates = plugin_->TakeUnsolicitedUpdates();
    if (updates.empty()) continue;
    nriapi::UpdateContainersRequest req;
    for (auto& u : updates) *req.add_update() = std::move(u);
    auto reply = conn.Call(kRuntimeService, "UpdateContainers", req.SerializeAsString(),
                           options_.call_timeout);
    if (!reply.ok()) {
      spdlog::warn("UpdateContainers ({} containers): {}", req.update_size(), std::string(reply.status().message()));
      continue;
    }
    nriapi::UpdateContainersResponse resp;
    if (resp.ParseFromString(*reply) && resp.failed_size() > 0) {
      spdlog::warn("UpdateContainers: {} of {} updates failed", resp.failed_size(), req.update_size());
    }
  }
  return absl::OkStatus();
}

absl::Status Runner::Run() {
  bool told = false;
  while (!stop_) {
    auto conn = Connection::Dial(options_.socket);
    absl::Status why;
    if (conn.ok()) {
      told = false;
      why = Serve(**conn);
      (*conn)->Close();
      if (stop_) break;
      spdlog::warn("NRI connection ended: {}; reconnecting", std::string(why.message()));
    } else if (!told) {
      spdlog::warn("{}; retrying every {} ms", std::string(conn.status().message()), options_.retry.count());
      told = true;
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, options_.retry, [this] { return stop_.load(); });
  }
  spdlog::info("stopped; containers keep their cpusets");
  return absl::OkStatus();
}

}  // namespace podtopo::nri
