// What the long-running commands (`serve`, `agent`) share: the --log-level flag's logger and
// the wait for SIGTERM / SIGINT.
//
// Example:
//   if (!StartLogging(flags.log_level, ctx)) return;
//   StopSignals stop;              // blocks SIGTERM and SIGINT before any thread starts
//   ... start the daemon's threads ...
//   int sig = stop.Wait();         // "SIGTERM: shutting down" is logged
#ifndef PODTOPO_CLI_DAEMON_RUN_H_
#define PODTOPO_CLI_DAEMON_RUN_H_

#include <signal.h>

#include <string>

#include "cli/cli.h"

namespace podtopo::cli {

// The "podtopo" stderr logger at `level` (trace, debug, info, warn, error, off) as the default
// logger. A bad level is reported through ctx (naming --log-level) and returns false.
bool StartLogging(const std::string& level, Context& ctx);

// Blocks SIGTERM and SIGINT in the calling thread (threads started later inherit the mask), so
// that Wait() takes them with sigwait.
class StopSignals {
 public:
  StopSignals();
  // Waits for SIGTERM or SIGINT, logs "<SIGNAL>: shutting down" and returns the signal.
  int Wait();

 private:
  sigset_t set_;
};

}  // namespace podtopo::cli

#endif  // PODTOPO_CLI_DAEMON_RUN_H_
