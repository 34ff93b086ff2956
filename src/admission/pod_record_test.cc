#include "admission/pod_record.h"

#include "api/pod_yaml.h"
#include "gtest/gtest.h"

namespace podtopo {
namespace {

TEST(PodRecordTest, RoundTripKeepsPodsHintsAndDevices) {
  auto pods = ParsePods(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns, uid: u-1, labels: {app: x}}
spec:
  resources:
    requests: {cpu: "2", memory: 2Gi}
    limits: {cpu: "2", memory: 2Gi}
  initContainers:
  - {name: side, image: busybox, restartPolicy: Always}
  containers:
  - name: main
    image: busybox
    command: [sh, -c]
    args: [sleep 1]
    resources: {limits: {cpu: "1", memory: 1Gi, example.com/gpu: "1"}}
)",
                        "p.yaml");
  ASSERT_TRUE(pods.ok()) << pods.status();
  PodRecordEntry e;
  e.pod = pods->front();
  e.hints["main"] = {topologymanager::BitMask::FromUint64(0b10), true};
  e.hints["side"] = {std::nullopt, false};
  e.devices["main"]["example.com/gpu"] = {"gpu1"};
  std::string text = MarshalPodRecord({e});
  auto back = ParsePodRecord(text, "record.json");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 1u);
  const PodRecordEntry& got = back->front();
  EXPECT_EQ(PodToJson(got.pod), PodToJson(e.pod));
  EXPECT_EQ(got.pod.init_containers[0].kind, ContainerKind::kSidecar);
  EXPECT_EQ(got.hints.at("main"), e.hints.at("main"));
  EXPECT_EQ(got.hints.at("side"), e.hints.at("side"));
  EXPECT_EQ(got.devices, e.devices);
  EXPECT_EQ(MarshalPodRecord(*back), text);
}

TEST(PodRecordTest, BadRecordsNameTheField) {
  struct Case {
    const char* text;
    const char* want;
  } cases[] = {
      {"", "record.json: not valid JSON"},
      {"[]", "record.json: $: expected an object"},
      {R"({"version": 2, "pods": []})", "record.json: version: unsupported record version"},
      {R"({"version": 1, "pods": [{"pod": {"name": "p", "namespace": "d"}}]})",
       "record.json: pods[0].pod.uid: missing"},
      {R"({"version": 1, "pods": [{"pod": {"name": "p", "namespace": "d", "uid": "u",
           "containers": [{"name": "c", "kind": "weird"}]}}]})",
       "record.json: pods[0].pod.containers[0].kind: unknown container kind \"weird\""},
      {R"({"version": 1, "pods": [{"pod": {"name": "p", "namespace": "d", "uid": "u",
           "resources": {"requests": {"cpu": "lots"}}}}]})",
       "record.json: pods[0].pod.resources.requests.cpu:"},
      {R"({"version": 1, "pods": [{"pod": {"name": "p", "namespace": "d", "uid": "u"},
           "hints": {"c": {"affinity": [64], "preferred": true}}}]})",
       "record.json: pods[0].hints.c.affinity: bit number must be in range 0-63"},
  };
  for (const auto& c : cases) {
    auto r = ParsePodRecord(c.text, "record.json");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(std::string(r.status().message()).find(c.want), std::string::npos)
        << r.status().message();
  }
}

}  // namespace
}  // namespace podtopo
