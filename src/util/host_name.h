// This host's name (gethostname), "localhost" when it has none: the agent's default object name
// and the host part of a simulated node's Lease instance.
#ifndef PODTOPO_UTIL_HOST_NAME_H_
#define PODTOPO_UTIL_HOST_NAME_H_

#include <string>

namespace podtopo {

std::string HostName();

}  // namespace podtopo

#endif  // PODTOPO_UTIL_HOST_NAME_H_
