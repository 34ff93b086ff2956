// Starting and stopping processes in the tests that drive built binaries (podtopo serve, agent).
#ifndef PODTOPO_TESTING_PROCESS_H_
#define PODTOPO_TESTING_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace podtopo::testing {

// Starts `argv` (argv[0] a path, no shell) in the background with its stderr appended to `log`;
// returns its pid (the child exits 127 when it cannot exec).
pid_t SpawnProcess(const std::vector<std::string>& argv, const std::string& log);
// Waits up to 20 s for `pid` to exit: its exit status, -1 when a signal ended it, -2 when it
// had to be killed (SIGKILL) after the 20 s.
int WaitExit(pid_t pid);

}  // namespace podtopo::testing

#endif  // PODTOPO_TESTING_PROCESS_H_
