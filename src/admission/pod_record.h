// podtopo's record of admitted pods (`<state-dir>/podtopo_pods.json`).
//
// The kubelet learns its pods from the API server; podtopo keeps them itself, so that `show`,
// `remove` and a later `admit` against the same state directory know which pods hold the
// checkpointed CPUs and memory. The record lists, in admission order, each pod's resource
// model (the parts of the manifest the managers read), the Topology Manager hint stored for
// each container and the devices each container holds.
//
// Format (version 1):
//   {"version": 1, "pods": [{"pod": {...}, "hints": {"ctr": {"affinity": [0] | null,
//                                                          "preferred": true}},
//                            "devices": {"ctr": {"example.com/gpu": ["gpu0"]}}}]}
#ifndef PODTOPO_ADMISSION_POD_RECORD_H_
#define PODTOPO_ADMISSION_POD_RECORD_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/pod.h"
#include "nlohmann/json.hpp"
#include "topologymanager/topology_hint.h"

namespace podtopo {

inline constexpr char kPodRecordFile[] = "podtopo_pods.json";

struct PodRecordEntry {
  Pod pod;
  std::map<std::string, topologymanager::TopologyHint> hints;  // container -> stored hint
  std::map<std::string, std::map<std::string, std::vector<std::string>>> devices;
};

nlohmann::ordered_json PodToJson(const Pod& pod);
// Errors name `source` and the JSON path.
absl::StatusOr<Pod> PodFromJson(const nlohmann::json& j, const std::string& source,
                                const std::string& path);

std::string MarshalPodRecord(const std::vector<PodRecordEntry>& entries);
absl::StatusOr<std::vector<PodRecordEntry>> ParsePodRecord(const std::string& text,
                                                           const std::string& source);

}  // namespace podtopo

#endif  // PODTOPO_ADMISSION_POD_RECORD_H_
