// k/k #140989's node, for the `state restart` and upgrade/rollback CLI tests: `cpus` CPUs on
// one NUMA node of 8Gi, 1 reserved; a configuration (static / Static, best-effort, pod scope)
// with PodLevelResourceManagers on or off; and the pod, 2 CPUs and 1Gi with pod-level
// resources (its container asks nothing, so it runs in the pod's shared pool).
#ifndef PODTOPO_STATE_NODE140989_TESTING_H_
#define PODTOPO_STATE_NODE140989_TESTING_H_

#include <fstream>
#include <string>

#include "nlohmann/json.hpp"

namespace podtopo::testing {

inline constexpr char kPod140989Uid[] = "6f1c1a52-0000-4000-8000-000000000001";

// Writes node.json, on.yaml (gate on), off.yaml (gate off) and pod.yaml into `dir`.
inline void WriteNode140989(const std::string& dir, int cpus) {
  nlohmann::json node;
  for (int i = 0; i < cpus; ++i) {
    node["cpus"].push_back({{"id", i}, {"core", i}, {"socket", 0}, {"numa", 0}, {"uncore", 0}});
  }
  node["numaNodes"] = {{{"id", 0}, {"memory", 8LL << 30}, {"hugepages", nlohmann::json::object()},
                        {"distances", {10}}}};
  std::ofstream(dir + "/node.json") << node.dump();
  for (bool gate : {true, false}) {
    std::ofstream(dir + (gate ? "/on.yaml" : "/off.yaml"))
        << "apiVersion: kubelet.config.k8s.io/v1beta1\n"
           "kind: KubeletConfiguration\n"
           "featureGates: {PodLevelResourceManagers: "
        << (gate ? "true" : "false")
        << "}\n"
           "cpuManagerPolicy: static\n"
           "memoryManagerPolicy: Static\n"
           "topologyManagerPolicy: best-effort\n"
           "topologyManagerScope: pod\n"
           "systemReserved: {cpu: \"1\", memory: 1Gi}\n"
           "evictionHard: {memory.available: 100Mi}\n"
           "reservedMemory: [{numaNode: 0, limits: {memory: 1124Mi}}]\n";
  }
  std::ofstream(dir + "/pod.yaml") << "apiVersion: v1\n"
                                      "kind: Pod\n"
                                      "metadata: {name: p, namespace: default, uid: "
                                   << kPod140989Uid
                                   << "}\n"
                                      "spec:\n"
                                      "  resources:\n"
                                      "    requests: {cpu: \"2\", memory: 1Gi}\n"
                                      "    limits: {cpu: \"2\", memory: 1Gi}\n"
                                      "  containers:\n"
                                      "  - name: app\n"
                                      "    image: busybox\n";
}

}  // namespace podtopo::testing

#endif  // PODTOPO_STATE_NODE140989_TESTING_H_
