// PodResources List at 1000 pods, server side: the handler (rate limiter, published-state
// lookup, copy of the prebuilt response) without the network, plus the protobuf encoding gRPC
// does after it, and the rebuild the daemon does after each pod change.
//
// The 1000 pods are the docs' pod-scope-mixed pod repeated: a 4-CPU / 4Gi pod-level bubble,
// two sidecars in the pod shared pool and main-app with 2 exclusive CPUs and 2Gi.
#include <benchmark/benchmark.h>

#include "podresources/report.h"
#include "podresources/server.h"

namespace podtopo::podresources {
namespace {

constexpr uint64_t kGi = 1ull << 30;

serve::NodeSnapshot Pods(int n) {
  serve::NodeSnapshot s;
  for (int i = 0; i < n; ++i) {
    serve::AdmittedPod p;
    p.pod.name = "pod-scope-mixed-" + std::to_string(i);
    p.pod.namespace_name = "bench";
    p.pod.uid = "uid-" + std::to_string(i);
    p.pod.init_containers = {Container{.name = "metrics-sidecar", .kind = ContainerKind::kSidecar},
                             Container{.name = "logging-sidecar", .kind = ContainerKind::kSidecar}};
    p.pod.containers = {Container{.name = "main-app"}};
    const int base = (i * 4) % 4096;
    p.allocation.admitted = true;
    p.allocation.cpus = CpuSet::Range(base, base + 3);
    p.allocation.memory = {{"memory", 4 * kGi, {i % 2}}};
    for (const char* side : {"metrics-sidecar", "logging-sidecar"}) {
      p.allocation.containers.push_back({.name = side,
                                         .kind = ContainerKind::kSidecar,
                                         .cpus = CpuSet::Range(base + 2, base + 3),
                                         .assignment = "pod_shared",
                                         .memory = {{"memory", 2 * kGi, {i % 2}}}});
    }
    p.allocation.containers.push_back({.name = "main-app",
                                       .cpus = CpuSet::Range(base, base + 1),
                                       .assignment = "pod_exclusive",
                                       .memory = {{"memory", 2 * kGi, {i % 2}}}});
    s.pods.push_back(std::move(p));
  }
  return s;
}

std::shared_ptr<const ServedState> State(int n) {
  AllocatableView view;
  view.cpus = CpuSet::Range(2, 127);
  return BuildServedState(Pods(n), {.pod_level_gate = true}, {}, BuildAllocatable(view));
}

// What the socket serves: the pre-encoded response, shared (no copy, no encoding).
void BM_ListWire(benchmark::State& st) {
  PodResourcesServer server({.qps = 0});
  server.Publish(State(static_cast<int>(st.range(0))));
  grpc::ByteBuffer req;
  for (auto _ : st) {
    grpc::ByteBuffer resp;
    grpc::Status s = server.ListWire(req, &resp);
    benchmark::DoNotOptimize(resp);
    if (!s.ok() || resp.Length() == 0) st.SkipWithError("List failed");
  }
}
BENCHMARK(BM_ListWire)->Arg(1000)->Unit(benchmark::kMicrosecond);

// The same with a running-pod filter (--cri): the running pods' encodings concatenated.
void BM_ListWireFiltered(benchmark::State& st) {
  PodResourcesServer server({.qps = 0, .is_running = [](const std::string&) { return true; }});
  server.Publish(State(1000));
  grpc::ByteBuffer req;
  for (auto _ : st) {
    grpc::ByteBuffer resp;
    server.ListWire(req, &resp);
    benchmark::DoNotOptimize(resp);
  }
}
BENCHMARK(BM_ListWireFiltered)->Unit(benchmark::kMicrosecond);

// The typed handler (a message copy), for comparison.
void BM_ListHandler(benchmark::State& st) {
  PodResourcesServer server({.qps = 0});
  server.Publish(State(static_cast<int>(st.range(0))));
  v1::ListPodResourcesRequest req;
  for (auto _ : st) {
    v1::ListPodResourcesResponse resp;
    grpc::Status s = server.List(req, &resp);
    benchmark::DoNotOptimize(resp);
    if (!s.ok() || resp.pod_resources_size() != st.range(0)) st.SkipWithError("List failed");
  }
}
BENCHMARK(BM_ListHandler)->Arg(1000)->Arg(100)->Unit(benchmark::kMicrosecond);

// Handler plus the wire encoding gRPC performs on the response.
void BM_ListHandlerAndEncode(benchmark::State& st) {
  PodResourcesServer server({.qps = 0});
  server.Publish(State(static_cast<int>(st.range(0))));
  v1::ListPodResourcesRequest req;
  std::string wire;
  for (auto _ : st) {
    v1::ListPodResourcesResponse resp;
    server.List(req, &resp);
    resp.SerializeToString(&wire);
    benchmark::DoNotOptimize(wire);
  }
  st.counters["bytes"] = static_cast<double>(wire.size());
}
BENCHMARK(BM_ListHandlerAndEncode)->Arg(1000)->Unit(benchmark::kMicrosecond);

// With the rate limiter on (the kubelet's 100 qps / burst 10 is not hit: huge qps).
void BM_ListHandlerRateLimited(benchmark::State& st) {
  PodResourcesServer server({.qps = 1e12, .burst = 1000000});
  server.Publish(State(1000));
  for (auto _ : st) {
    v1::ListPodResourcesResponse resp;
    server.List({}, &resp);
    benchmark::DoNotOptimize(resp);
  }
}
BENCHMARK(BM_ListHandlerRateLimited)->Unit(benchmark::kMicrosecond);

// What the daemon does after a pod change: rebuild the served state.
void BM_RebuildServedState(benchmark::State& st) {
  serve::NodeSnapshot snap = Pods(1000);
  AllocatableView view;
  view.cpus = CpuSet::Range(2, 127);
  auto alloc = BuildAllocatable(view);
  for (auto _ : st) {
    auto s = BuildServedState(snap, {.pod_level_gate = true}, {}, alloc);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_RebuildServedState)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace podtopo::podresources

BENCHMARK_MAIN();
