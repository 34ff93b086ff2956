// Topology JSON (`--node file.json`): a file either reads or fails naming the file; a topology
// that reads is written and read back to the same text.
#include <string>

#include "fuzz/fuzz_target.h"
#include "fuzz/topology_fuzzer_util.h"
#include "topology/topology_json.h"

PODTOPO_FUZZ_TARGET(topology_json) {
  absl::StatusOr<NodeTopology> node = ReadTopologyJson(std::string(AsText(data, size)), "fuzz.json");
  if (!node.ok()) {
    FUZZ_CHECK(node.status().message().find("fuzz.json") == 0,
               fmt::format("the error does not name the file: {}", node.status().ToString()));
    return 0;
  }
  CheckTopologyRoundTrip(*node, "topology JSON");
  return 0;
}
