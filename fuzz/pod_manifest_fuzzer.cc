// Pod manifests, YAML and JSON (ParsePods; JSON is YAML's flow style): a file either parses
// into pods or fails with an error naming the file; every parsed pod survives podtopo's own
// JSON form (PodToJson -> PodFromJson -> PodToJson gives the same text), and the QoS and the
// effective requests of every pod can be computed.
#include <set>
#include <string>

#include "admission/pod_record.h"
#include "api/pod.h"
#include "api/pod_yaml.h"
#include "fmt/format.h"
#include "fuzz/fuzz_target.h"

PODTOPO_FUZZ_TARGET(pod_manifest) {
  const std::string text(AsText(data, size));
  absl::StatusOr<std::vector<Pod>> pods = ParsePods(text, "fuzz.yaml");
  if (!pods.ok()) {
    FUZZ_CHECK(pods.status().message().find("fuzz.yaml") == 0,
               fmt::format("the error does not name the file: {}", pods.status().ToString()));
    return 0;
  }
  FUZZ_CHECK(!pods->empty(), "ParsePods succeeded with no pods");
  std::set<std::string> keys;
  for (const Pod& pod : *pods) {
    FUZZ_CHECK(!pod.uid.empty() && !pod.name.empty(), "a pod without a name or uid");
    FUZZ_CHECK(keys.insert(pod.namespace_name + "/" + pod.name).second,
               "two pods with the same namespace/name were accepted");
    std::string json = PodToJson(pod).dump();
    absl::StatusOr<Pod> back = PodFromJson(nlohmann::json::parse(json), "record", "pod");
    FUZZ_CHECK(back.ok(), fmt::format("PodToJson {} does not read back: {}", json,
                                      back.status().ToString()));
    std::string again = PodToJson(*back).dump();
    FUZZ_CHECK(again == json, fmt::format("pod JSON round trip:\n{}\n{}", json, again));
    (void)GetPodQos(pod);
    (void)PodRequests(pod);
    (void)PodLimits(pod);
  }
  return 0;
}
