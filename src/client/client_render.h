// Text and JSON of `podtopo client` (see docs/client.md).
//
//   table  one line per pod: its level (pod / container / none), the CPUs it takes from the
//          node counted once, the derived pod shared pool, its exclusive containers, memory
//          and per-NUMA totals; then a node line.
//   wide   one block per pod with a row for every container: its pool and the CPUs it runs
//          on (pod-shared containers show the pod shared pool).
//   json   the same data with stable camelCase keys (schema in docs/client.md).
//
// Example:
//   std::string text = RenderPodsTable(views, SumUsage(views, numa), &allocatable, false);
#ifndef PODTOPO_CLIENT_CLIENT_RENDER_H_
#define PODTOPO_CLIENT_CLIENT_RENDER_H_

#include <string>
#include <vector>

#include "client/pod_view.h"
#include "nlohmann/json.hpp"

namespace podtopo::client {

// `allocatable` may be null (not fetched or not served).
std::string RenderPodsTable(const std::vector<PodView>& pods, const NodeUsage& usage,
                            const AllocatableView* allocatable, bool wide);
// One pod in the wide layout (what `client get` prints).
std::string RenderPodDetail(const PodView& pod);
std::string RenderAllocatableTable(const AllocatableView& allocatable);

nlohmann::ordered_json PodJson(const PodView& pod);
nlohmann::ordered_json ListJson(const std::vector<PodView>& pods, const NodeUsage& usage,
                                const AllocatableView* allocatable);
nlohmann::ordered_json AllocatableJson(const AllocatableView& allocatable);

}  // namespace podtopo::client

#endif  // PODTOPO_CLIENT_CLIENT_RENDER_H_
