// Helpers for the podresources and serve tests: a Node on the demo preset and the docs' pods.
#ifndef PODTOPO_PODRESOURCES_TEST_UTIL_H_
#define PODTOPO_PODRESOURCES_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "config/kubelet_config.h"
#include "gtest/gtest.h"
#include "serve/runtime_hooks.h"
#include "testing/testing.h"
#include "topology/node_source.h"
#include "util/file.h"

namespace podtopo::podresources::testutil {

inline std::string MixedPodPath() {
  return ::podtopo::testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml";
}

inline Pod LoadOnePod(const std::string& path) {
  auto pods = LoadPods(path);
  EXPECT_TRUE(pods.ok()) << pods.status();
  return pods.ok() && !pods->empty() ? pods->front() : Pod{};
}

inline Pod ParseOnePod(const std::string& yaml) {
  auto pods = ParsePods(yaml, "test.yaml");
  EXPECT_TRUE(pods.ok()) << pods.status();
  return pods.ok() && !pods->empty() ? pods->front() : Pod{};
}

inline config::KubeletConfig PodScope() { return config::SeedDefault(); }
inline config::KubeletConfig ContainerScope() {
  auto c = config::SeedDefault();
  c.topology_manager_scope = "container";
  return c;
}
inline config::KubeletConfig GateOff() {
  auto c = config::SeedDefault();
  c.feature_gates["PodLevelResourceManagers"] = false;
  return c;
}

inline std::unique_ptr<Node> MakeNode(const config::KubeletConfig& cfg) {
  auto topo = LoadNode("preset:demo");
  EXPECT_TRUE(topo.ok()) << topo.status();
  auto node = Node::Create(*topo, cfg, {});
  EXPECT_TRUE(node.ok()) << node.status();
  return node.ok() ? std::move(*node) : nullptr;
}

// Admits `pod` on `node` and returns it as the daemon keeps it.
inline serve::AdmittedPod AdmitOrDie(Node& node, const Pod& pod) {
  auto a = node.Admit(pod);
  EXPECT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a.ok() && a->admitted) << (a.ok() ? a->reason + ": " + a->message : "");
  return serve::AdmittedPod{pod, a.ok() ? *a : PodAllocation{}};
}

inline std::vector<int64_t> Ids(const google::protobuf::RepeatedField<int64_t>& f) {
  return std::vector<int64_t>(f.begin(), f.end());
}

}  // namespace podtopo::podresources::testutil

#endif  // PODTOPO_PODRESOURCES_TEST_UTIL_H_
