// Helpers for the serve tests: temp dirs, manifests, waiting for the daemon.
#ifndef PODTOPO_SERVE_TEST_UTIL_H_
#define PODTOPO_SERVE_TEST_UTIL_H_

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "util/file.h"

namespace podtopo::serve::testutil {

class TempDir {
 public:
  TempDir() {
    std::string t = "/tmp/podtopo-serve-XXXXXX";
    path_ = mkdtemp(t.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A Guaranteed pod with pod-level resources: `cpus` CPUs / `mem_gi` Gi for the pod, one
// exclusive app container with `app_cpus` CPUs / 1Gi and one sidecar in the pod shared pool.
inline std::string PodYaml(const std::string& name, int cpus, int app_cpus, int mem_gi = 2) {
  return fmt::format(R"(apiVersion: v1
kind: Pod
metadata:
  name: {0}
spec:
  resources:
    requests: {{cpu: "{1}", memory: {3}Gi}}
    limits: {{cpu: "{1}", memory: {3}Gi}}
  initContainers:
  - name: side
    image: busybox
    restartPolicy: Always
  containers:
  - name: app
    image: busybox
    resources:
      requests: {{cpu: "{2}", memory: 1Gi}}
      limits: {{cpu: "{2}", memory: 1Gi}}
)",
                     name, cpus, app_cpus, mem_gi);
}

// Writes `content` to dir/name atomically (temp file + rename: one IN_MOVED_TO event).
inline void WriteManifest(const std::string& dir, const std::string& name,
                          const std::string& content) {
  auto s = WriteFileAtomically(dir + "/" + name, content);
  if (!s.ok()) ADD_FAILURE() << s;
}

// Polls `done` until it holds or 20 s pass (no timing assertion: the caller asserts `done`).
inline bool WaitFor(const std::function<bool()>& done) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace podtopo::serve::testutil

#endif  // PODTOPO_SERVE_TEST_UTIL_H_
