// Runner: `podtopo nri`'s life cycle around a Plugin: connect to the runtime's NRI socket,
// register as NN-NAME, serve the runtime's requests, send the plugin's unsolicited updates, and
// reconnect (every `retry`) when the runtime goes away or is not there yet, until Stop().
// Each new connection gets Configure and Synchronize again, so a restarted runtime is adopted.
//
// Example:
//   Runner r(plugin.get(), {.socket = "/var/run/nri/nri.sock", .name = "podtopo", .index = "10"});
//   std::thread t([&] { r.Run(); });
//   ...
//   r.Stop(); t.join();       // the containers keep their cpusets
#ifndef PODTOPO_NRI_RUNNER_H_
#define PODTOPO_NRI_RUNNER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "nri/connection.h"
#include "nri/plugin.h"

namespace podtopo::nri {

struct RunnerOptions {
  std::string socket;
  std::string name = "podtopo";
  std::string index = "10";
  std::chrono::milliseconds retry{500};
  std::chrono::milliseconds call_timeout{5000};
};

// Checks --name and --index as NRI does: a two-digit index, a name without '-' prefix issues.
absl::Status ValidateRegistration(const std::string& name, const std::string& index);

class Runner {
 public:
  Runner(Plugin* plugin, RunnerOptions options);
  // Runs until Stop(); returns OK after Stop().
  absl::Status Run();
  void Stop();
  // Connections registered so far (tests).
  int registrations() const { return registrations_.load(); }

 private:
  // One connection's lifetime; returns why it ended.
  absl::Status Serve(Connection& conn);

  Plugin* plugin_;
  RunnerOptions options_;
  std::atomic<bool> stop_{false};
  std::atomic<int> registrations_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool updates_ready_ = false;
};

}  // namespace podtopo::nri

#endif  // PODTOPO_NRI_RUNNER_H_
