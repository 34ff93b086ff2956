// The lock of a state directory: one podtopo process at a time writes a --state-dir.
//
// Every process that writes a state dir (serve, nri, admit, remove, show: wherever a Node is
// created on it without read_only) holds an exclusive flock(2) on the directory itself for as
// long as it uses it, so that the next one is refused with a sentence naming the holder (found
// in /proc/locks):
//   state dir /var/lib/podtopo is in use by podtopo serve (pid 4242): one process at a time
//   may write it
// No file is added to the directory (it may be the kubelet's own), and the lock goes with the
// process, also when it is killed. Readers (explain, state check) take no lock: every file in
// the directory is replaced atomically.
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

class DirLock {
 public:
  // Locks `dir` for this process, without waiting. Returns a null lock when there is nothing
  // to lock: `dir` does not exist or cannot be opened (such a process cannot write it either).
  // Errors:
  //   kFailedPrecondition  "state dir DIR is in use by podtopo serve (pid N): ..." (another
  //                        process holds the lock; "by another process" when /proc/locks
  //                        names none)
  //   kInternal            fstat or flock failed otherwise, naming the directory
  static absl::StatusOr<std::shared_ptr<DirLock>> Acquire(const std::string& dir);

  ~DirLock();  // unlocks (closes the directory)
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  DirLock(int fd, dev_t dev, ino_t ino) : fd_(fd), dev_(dev), ino_(ino) {}
  int fd_;  // the directory, open
  dev_t dev_;  // the directory's identity, for the sharing within this process
  ino_t ino_;
};

}  // namespace podtopo

#endif  // PODTOPO_UTIL_DIR_LOCK_H_
