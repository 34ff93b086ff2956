// The live picture of the node that `podtopo agent` serves at `/`: an observation turned into
// render's ObservedNode, so that the page is the same HTML/SVG as `admit -o html`.
//
//   reserved      the node's CPUs that GetAllocatableResources leaves out (else the
//                 configuration's reservedSystemCPUs)
//   default set   the allocatable CPUs no pod holds for itself
//   pods          every pod holding CPUs or memory (Guaranteed: the static CPU and Memory
//                 Managers pin nothing else); a pod's bubble is its pod-level cpu_ids (for a
//                 pre-1.37 server, the CPUs of its legacy-shared containers as well); exclusive
//                 containers are pod_exclusive inside a bubble, node_exclusive otherwise;
//                 pod-shared and legacy-shared containers are pod_shared
//   memory bars   per NUMA node and type: allocatable, and allocatable minus available pinned
//
// Example:
//   NodePicture pic = BuildObservedPicture(topology, ObservedNodeOf(o, zones, topology));
#ifndef PODTOPO_AGENT_OBSERVED_PICTURE_H_
#define PODTOPO_AGENT_OBSERVED_PICTURE_H_

#include <vector>

#include "agent/observation.h"
#include "render/node_picture.h"

namespace podtopo::agent {

ObservedNode ObservedNodeOf(const Observation& o, const std::vector<ZoneAccount>& zones,
                            const NodeTopology& topology);

}  // namespace podtopo::agent

#endif  // PODTOPO_AGENT_OBSERVED_PICTURE_H_
