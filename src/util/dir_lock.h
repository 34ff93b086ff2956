// The lock of a state directory: one podtopo process at a time writes a --state-dir.
//
// Every process that writes a state dir (serve, nri, admit, remove: wherever a Node is created
// on it without read_only) holds an exclusive flock(2) on DIR/podtopo.lock for as long as it
// uses the directory; the file holds "PID DESCRIPTION" of the holder, so that the next one is
// refused with a sentence that names it:
//   state dir /var/lib/podtopo is in use by podtopo serve (pid 4242)
// The lock goes with the process (also when it is killed): the file itself stays, and a stale
// file locks nothing. Readers (explain, state check) take no lock: every file in the directory
// is replaced atomically.
//
// Within one process, a second Acquire of the same directory (the daemon, then the Node it
// creates on the directory) shares the first one's lock: the lock is between processes.
//
//   absl::StatusOr<std::shared_ptr<DirLock>> lock = DirLock::Acquire("/var/lib/podtopo");
//   if (!lock.ok()) return lock.status();  // kFailedPrecondition: in use by another process
//
// Thread safety: Acquire may be called from any thread.
#ifndef PODTOPO_UTIL_DIR_LOCK_H_
#define PODTOPO_UTIL_DIR_LOCK_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace podtopo {

inline constexpr char kDirLockFile[] = "podtopo.lock";

class DirLock {
 public:
  // Locks `dir` for this process, without waiting. Returns a null lock when there is nothing
  // to lock: `dir` does not exist, or this user can neither create nor open its lock file (a
  // read-only directory: such a process cannot write the directory either, and its reads are
  // those of any reader). Errors:
  //   kFailedPrecondition  "state dir DIR is in use by podtopo serve (pid N)" (another process
  //                        holds the lock; "by another process" when the file names none)
  //   kInternal            flock or open failed otherwise, naming the lock file
  static absl::StatusOr<std::shared_ptr<DirLock>> Acquire(const std::string& dir);

  ~DirLock();  // unlocks (and closes) the lock file
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  DirLock(int fd, dev_t dev, ino_t ino) : fd_(fd), dev_(dev), ino_(ino) {}
  int fd_;
  dev_t dev_;  // the directory's identity, for the sharing within this process
  ino_t ino_;
};

}  // namespace podtopo

#endif  // PODTOPO_UTIL_DIR_LOCK_H_
