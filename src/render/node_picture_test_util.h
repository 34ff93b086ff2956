// The scene of the picture tests: preset t256 (256 CPUs, 2 sockets, 8 NUMA nodes, 128 cores x
// 2 threads) with 1Gi of 2Mi hugepages and one example.com/gpu per NUMA node, the seed
// configuration with reservedSystemCPUs 0,128, and pods of every kind admitted in order:
// the docs' pod-scope-mixed (pod bubble: exclusive main-app + hatched shared pool), the
// seed pod (shared pool only), a Guaranteed 8-CPU container, a GPU job and a Burstable pod.
#ifndef PODTOPO_RENDER_NODE_PICTURE_TEST_UTIL_H_
#define PODTOPO_RENDER_NODE_PICTURE_TEST_UTIL_H_

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "admission/node.h"
#include "api/pod_yaml.h"
#include "config/kubelet_config.h"
#include "testing/testing.h"
#include "topology/presets.h"
#include "util/file.h"

namespace podtopo::testutil {

struct Scene {
  std::unique_ptr<Node> node;
  std::vector<PodAllocation> results;  // in admission order
};

inline constexpr const char* kExtraPods = R"(apiVersion: v1
kind: Pod
metadata:
  name: exclusive-app
spec:
  containers:
  - name: app
    image: busybox
    resources:
      requests: {cpu: "8", memory: 2Gi}
      limits: {cpu: "8", memory: 2Gi}
---
apiVersion: v1
kind: Pod
metadata:
  name: gpu-job
spec:
  containers:
  - name: trainer
    image: busybox
    resources:
      requests: {cpu: "2", memory: 1Gi, hugepages-2Mi: 256Mi, example.com/gpu: "1"}
      limits: {cpu: "2", memory: 1Gi, hugepages-2Mi: 256Mi, example.com/gpu: "1"}
---
apiVersion: v1
kind: Pod
metadata:
  name: burstable-web
spec:
  containers:
  - name: web
    image: nginx
    resources:
      requests: {cpu: 500m, memory: 256Mi}
)";

inline absl::StatusOr<Scene> BigScene(bool reverse = false) {
  auto topo = Preset("t256");
  if (!topo.ok()) return topo.status();
  for (auto& n : topo->numa_nodes) n.hugepages["hugepages-2Mi"] = 1ull << 30;
  for (int n = 0; n < 8; ++n) {
    topo->devices.push_back(Device{"example.com/gpu", "gpu" + std::to_string(n), n});
  }
  config::KubeletConfig cfg = config::SeedDefault();
  cfg.reserved_system_cpus = "0,128";
  std::vector<Pod> pods;
  for (const char* file : {"docs/examples/pod-scope-mixed.yaml",
                           "docs/examples/pod-level-resource-demo.yaml"}) {
    auto loaded = LoadPods(testing::SourceDir() + "/" + file);
    if (!loaded.ok()) return loaded.status();
    for (auto& p : *loaded) pods.push_back(std::move(p));
  }
  auto extra = ParsePods(kExtraPods, "picture-scene.yaml");
  if (!extra.ok()) return extra.status();
  for (auto& p : *extra) pods.push_back(std::move(p));
  if (reverse) std::reverse(pods.begin(), pods.end());
  auto node = Node::Create(*std::move(topo), cfg, {});
  if (!node.ok()) return node.status();
  Scene scene;
  scene.node = std::move(*node);
  for (const auto& p : pods) {
    auto r = scene.node->Admit(p);
    if (!r.ok()) return r.status();
    if (!r->admitted) {
      return absl::InternalError("scene pod " + p.name + " rejected: " + r->reason + ": " +
                                 r->message);
    }
    scene.results.push_back(std::move(*r));
  }
  return scene;
}

}  // namespace podtopo::testutil

#endif  // PODTOPO_RENDER_NODE_PICTURE_TEST_UTIL_H_
