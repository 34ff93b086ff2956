// The kubelet's fake CPU topologies (../shared/vectors/cpu_topologies.json), loaded with
// their header counts exactly as the Go literals set them.
#ifndef PODTOPO_TESTING_TOPOLOGIES_H_
#define PODTOPO_TESTING_TOPOLOGIES_H_

#include <string>

#include "topology/cpu_topology.h"

namespace podtopo::testing {

// Aborts with a message for an unknown name.
const CpuTopology& FakeTopology(const std::string& name);

}  // namespace podtopo::testing

#endif  // PODTOPO_TESTING_TOPOLOGIES_H_
