// PodResources requests against the server's handlers (the code behind the socket, without
// one): byte 0 picks the call (List wire bytes, Get, GetAllocatableResources, v1alpha1 List;
// bit 2: with the running-pod filter), the rest is the request's protobuf encoding. Checked:
// List answers exactly the published encoding when its request decodes and INVALID_ARGUMENT
// when it does not; Get answers a pod iff it is served, with the pod List reports, else
// NOT_FOUND naming it; nothing else changes the answer.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "config/kubelet_config.h"
#include "fmt/format.h"
#include "fuzz/fuzz_target.h"
#include "podresources/report.h"
#include "podresources/server.h"
#include "topology/node_source.h"

namespace podtopo::fuzz {
namespace {

// Two pods on the demo node: the docs' pod-scope-mixed (pod-level bubble, one exclusive
// container, two sidecars in the pod's shared pool) and a Guaranteed container-level pod.
constexpr char kPods[] = R"(
apiVersion: v1
kind: Pod
metadata: {name: pod-scope-mixed}
spec:
  resources: {requests: {cpu: "4", memory: 4Gi}, limits: {cpu: "4", memory: 4Gi}}
  initContainers:
  - {name: metrics-sidecar, image: pause, restartPolicy: Always}
  - {name: logging-sidecar, image: pause, restartPolicy: Always}
  containers:
  - name: main-app
    image: pause
    resources: {requests: {cpu: "2", memory: 2Gi}, limits: {cpu: "2", memory: 2Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: prod}
spec:
  containers:
  - name: db
    image: pause
    resources: {requests: {cpu: "2", memory: 1Gi}, limits: {cpu: "2", memory: 1Gi}}
)";

struct Fixture {
  std::shared_ptr<const podresources::ServedState> state;
  std::unique_ptr<podresources::PodResourcesServer> all;
  std::unique_ptr<podresources::PodResourcesServer> filtered;  // only "db" runs
};

Fixture* MakeFixture() {
  auto* f = new Fixture;
  absl::StatusOr<NodeTopology> topo = LoadNode("preset:demo");
  FUZZ_CHECK(topo.ok(), topo.status().ToString());
  absl::StatusOr<std::unique_ptr<Node>> node = Node::Create(*topo, config::SeedDefault(), {});
  FUZZ_CHECK(node.ok(), node.status().ToString());
  absl::StatusOr<std::vector<Pod>> pods = ParsePods(kPods, "fixture.yaml");
  FUZZ_CHECK(pods.ok(), pods.status().ToString());
  serve::NodeSnapshot snap;
  std::string db_uid;
  for (const Pod& pod : *pods) {
    absl::StatusOr<PodAllocation> a = (*node)->Admit(pod);
    FUZZ_CHECK(a.ok() && a->admitted, "the fixture pods must be admitted");
    snap.pods.push_back(serve::AdmittedPod{pod, *a});
    if (pod.name == "db") db_uid = pod.uid;
  }
  podresources::AllocatableView view;
  view.cpus = (*node)->AllocatableCpus();
  f->state = podresources::BuildServedState(snap, {.pod_level_gate = true}, {},
                                            podresources::BuildAllocatable(view));
  f->all = std::make_unique<podresources::PodResourcesServer>(
      podresources::PodResourcesServer::Options{.qps = 0});
  f->all->Publish(f->state);
  f->filtered = std::make_unique<podresources::PodResourcesServer>(
      podresources::PodResourcesServer::Options{
          .qps = 0, .is_running = [db_uid](const std::string& uid) { return uid == db_uid; }});
  f->filtered->Publish(f->state);
  return f;
}

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

}  // namespace
}  // namespace podtopo::fuzz

PODTOPO_FUZZ_TARGET(podresources_server) {
  static Fixture* const f = MakeFixture();
  if (size == 0) return 0;
  const int call = data[0] & 3;
  const bool filter = data[0] & 4;
  podresources::PodResourcesServer& server = filter ? *f->filtered : *f->all;
  const std::string bytes(AsText(data + 1, size - 1));
  v1::ListPodResourcesResponse list;
  FUZZ_CHECK(server.List({}, &list).ok(), "List of an empty request failed");
  switch (call) {
    case 0: {
      grpc::Slice slice(bytes);
      grpc::ByteBuffer request(&slice, 1), response;
      grpc::Status s = server.ListWire(request, &response);
      v1::ListPodResourcesRequest parsed;
      if (!parsed.ParseFromString(bytes)) {
        FUZZ_CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT,
                   fmt::format("an undecodable List request answered {}", static_cast<int>(s.error_code())));
        break;
      }
      FUZZ_CHECK(s.ok(), s.error_message());
      v1::ListPodResourcesResponse got;
      FUZZ_CHECK(got.ParseFromString(Flatten(response)), "List's wire answer does not decode");
      FUZZ_CHECK(got.SerializeAsString() == list.SerializeAsString(),
                 "List's wire answer differs from List");
      FUZZ_CHECK(filter || Flatten(response) == f->state->list_wire, "List is not the published encoding");
      break;
    }
    case 1: {
      v1::GetPodResourcesRequest request;
      if (!request.ParseFromString(bytes)) break;
      v1::GetPodResourcesResponse response;
      grpc::Status s = server.Get(request, &response);
      const v1::PodResources* want = nullptr;
      for (const auto& p : list.pod_resources()) {
        if (p.name() == request.pod_name() && p.namespace_() == request.pod_namespace()) want = &p;
      }
      if (want == nullptr) {
        // Not in List: Get still answers for a pod the node knows that List leaves out
        // (not running, or rejected: k/k server_v1.go Get reads the pod manager), else
        // NOT_FOUND naming the pod.
        if (s.ok()) {
          FUZZ_CHECK(response.pod_resources().name() == request.pod_name() &&
                         response.pod_resources().namespace_() == request.pod_namespace(),
                     "Get answered for another pod than the one asked for");
        } else {
          FUZZ_CHECK(s.error_code() == grpc::StatusCode::NOT_FOUND &&
                         s.error_message().find(request.pod_name()) != std::string::npos,
                     fmt::format("Get of a pod List does not report: code {} {:?}",
                                 static_cast<int>(s.error_code()), s.error_message()));
        }
      } else {
        FUZZ_CHECK(s.ok(), s.error_message());
        FUZZ_CHECK(response.pod_resources().SerializeAsString() == want->SerializeAsString(),
                   "Get's pod differs from List's");
      }
      break;
    }
    case 2: {
      v1::AllocatableResourcesRequest request;
      if (!request.ParseFromString(bytes)) break;
      v1::AllocatableResourcesResponse response;
      FUZZ_CHECK(server.GetAllocatableResources(request, &response).ok(), "GetAllocatable failed");
      FUZZ_CHECK(response.SerializeAsString() == f->state->allocatable.SerializeAsString(),
                 "GetAllocatable is not the published answer");
      break;
    }
    case 3: {
      v1alpha1::ListPodResourcesRequest request;
      if (!request.ParseFromString(bytes)) break;
      v1alpha1::ListPodResourcesResponse response;
      FUZZ_CHECK(server.ListV1alpha1(request, &response).ok(), "v1alpha1 List failed");
      FUZZ_CHECK(response.pod_resources_size() == list.pod_resources_size(),
                 "v1alpha1 and v1 List report different pods");
      break;
    }
  }
  return 0;
}
