// The demo's pods, embedded at build time from docs/examples/ (see src/cli/CMakeLists.txt).
#ifndef PODTOPO_CLI_DEMO_PODS_H_
#define PODTOPO_CLI_DEMO_PODS_H_

#include <string>
#include <utility>
#include <vector>

namespace podtopo::cli {

// (file name, YAML text) of each demo pod, in admission order.
const std::vector<std::pair<std::string, std::string>>& DemoPods();

}  // namespace podtopo::cli

#endif  // PODTOPO_CLI_DEMO_PODS_H_
