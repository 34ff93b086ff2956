// PodResources answers as `podtopo client` reads them: byte 0 picks the message (List, Get or
// GetAllocatableResources response), the rest is its protobuf encoding, as a server (any
// kubelet, or a broken one) could send it. Checked: every pod either builds a view or fails
// with an error naming it; a view never counts a CPU twice (the pod shared pool and the
// exclusive containers are disjoint; the usage is the pod's set when the pod reports one);
// the tables and JSON render.
#include <string>

#include "client/client_render.h"
#include "client/pod_view.h"
#include "fmt/format.h"
#include "fuzz/fuzz_target.h"

namespace podtopo::fuzz {
namespace {

using client::PodView;

void CheckView(const PodView& v) {
  FUZZ_CHECK(!v.shared_pool.Intersects(v.exclusive_container_cpus),
             fmt::format("{}/{}: shared pool {} overlaps the exclusive CPUs {}", v.namespace_,
                         v.name, v.shared_pool.String(), v.exclusive_container_cpus.String()));
  if (!v.pod_cpus.IsEmpty()) {
    FUZZ_CHECK(v.usage_cpus == v.pod_cpus,
               fmt::format("{}/{}: usage {} is not the pod's CPUs {}", v.namespace_, v.name,
                           v.usage_cpus.String(), v.pod_cpus.String()));
  }
  uint64_t blocks = 0, sum = 0;
  for (const auto& b : v.usage_blocks) blocks += b.size;
  for (const auto& [type, bytes] : v.usage_memory) sum += bytes;
  FUZZ_CHECK(blocks == sum, fmt::format("{}/{}: memory usage {} is not its blocks' {}",
                                        v.namespace_, v.name, sum, blocks));
}

}  // namespace
}  // namespace podtopo::fuzz

PODTOPO_FUZZ_TARGET(podresources_answer) {
  if (size == 0) return 0;
  const std::string bytes(AsText(data + 1, size - 1));
  client::NumaMap numa{{0, CpuSet::Range(0, 3)}, {1, CpuSet::Range(4, 7)}};
  std::vector<v1::PodResources> pods;
  switch (data[0] % 3) {
    case 0: {
      v1::ListPodResourcesResponse r;
      if (!r.ParseFromString(bytes)) return 0;
      pods.assign(r.pod_resources().begin(), r.pod_resources().end());
      break;
    }
    case 1: {
      v1::GetPodResourcesResponse r;
      if (!r.ParseFromString(bytes)) return 0;
      pods.push_back(r.pod_resources());
      break;
    }
    case 2: {
      v1::AllocatableResourcesResponse r;
      if (!r.ParseFromString(bytes)) return 0;
      for (const client::NumaMap& m : {numa, client::NumaMap{}}) {
        absl::StatusOr<client::AllocatableView> a = client::BuildAllocatableView(r, m);
        if (!a.ok()) continue;
        (void)client::RenderAllocatableTable(*a);
        (void)client::AllocatableJson(*a).dump();
      }
      return 0;
    }
  }
  for (const client::NumaMap& m : {numa, client::NumaMap{}}) {
    std::vector<PodView> views;
    for (const v1::PodResources& p : pods) {
      absl::StatusOr<PodView> v = client::BuildPodView(p, m);
      if (!v.ok()) {
        FUZZ_CHECK(!v.status().message().empty(), "an error without a message");
        continue;
      }
      CheckView(*v);
      (void)client::RenderPodDetail(*v);
      (void)client::PodJson(*v).dump();
      views.push_back(std::move(*v));
    }
    client::NodeUsage usage = client::SumUsage(views, m);
    (void)client::RenderPodsTable(views, usage, nullptr, false);
    (void)client::RenderPodsTable(views, usage, nullptr, true);
    (void)client::ListJson(views, usage, nullptr).dump();
  }
  return 0;
}
