// Node capacity, allocatable and the kubelet's node-fit admission check.
//
// Before any resource manager runs, a kubelet checks that a pod fits the node's allocatable
// resources next to the pods it already runs (lifecycle predicate, the scheduler's
// noderesources Fits): the pod count, cpu (millicores), memory and every scalar resource
// (hugepages, extended resources the node has). The first shortage rejects the pod with reason
// "OutOf<resource>" and the message
//   Node didn't have enough resource: cpu, requested: 2000, used: 62000, capacity: 63000
#ifndef PODTOPO_ADMISSION_POD_REQUESTS_H_
#define PODTOPO_ADMISSION_POD_REQUESTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kubelet/admission_error.h"
#include "admission/trace.h"
#include "api/pod.h"
#include "config/kubelet_config.h"
#include "topology/node_topology.h"

namespace podtopo {

// cpu (number of CPUs), memory (Σ NUMA memory), hugepages-* (Σ per size), one count per
// device resource.
ResourceList NodeCapacity(const NodeTopology& topology);
// capacity − (system + kube reserved + hard eviction), floored at 0; memory also loses the
// hugepage totals, as the kubelet's node status setter does.
ResourceList NodeAllocatable(const NodeTopology& topology, const config::KubeletConfig& config);

// The node-fit check over PodRequests (api/pod.h). nullopt when the pod fits; else the
// rejection, and `shortage` (when non-null) gets the numbers of the message.
std::optional<AdmitResult> CheckNodeFit(const Pod& pod, const std::vector<const Pod*>& admitted,
                                        const ResourceList& allocatable,
                                        bool pod_level_resources, int max_pods,
                                        NodeFitShortage* shortage = nullptr);

// What one pod uses in the fit check: PodRequests in the check's units (cpu millicores,
// Value() otherwise), per resource.
using FitAmounts = std::map<std::string, int64_t>;
FitAmounts PodFitAmounts(const Pod& pod, bool pod_level_resources);
// The same check for a caller that keeps the admitted pods' count and the sum of their
// PodFitAmounts up to date (Node) instead of summing them again for every pod. `request` is
// the pod's PodFitAmounts.
std::optional<AdmitResult> CheckNodeFit(const FitAmounts& request, int64_t admitted_pods,
                                        const FitAmounts& used, const ResourceList& allocatable,
                                        int max_pods, NodeFitShortage* shortage = nullptr);

}  // namespace podtopo

#endif  // PODTOPO_ADMISSION_POD_REQUESTS_H_
