#include "cli/daemon_run.h"

#include <pthread.h>

#include "fmt/format.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace podtopo::cli {

bool StartLogging(const std::string& level_name, Context& ctx) {
  auto level = spdlog::level::from_str(level_name);
  if (level == spdlog::level::off && level_name != "off") {
    ctx.Fail(fmt::format("--log-level {:?}: expected trace, debug, info, warn, error or off",
                         level_name));
    return false;
  }
  auto logger = spdlog::get("podtopo");
  if (logger == nullptr) logger = spdlog::stderr_logger_mt("podtopo");
  spdlog::set_default_logger(logger);
  spdlog::set_level(level);
  return true;
}

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGTERM);
  sigaddset(&set_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

int StopSignals::Wait() {
  int sig = 0;
  while (sigwait(&set_, &sig) != 0) {
  }
  spdlog::info("{}: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  return sig;
}

}  // namespace podtopo::cli
