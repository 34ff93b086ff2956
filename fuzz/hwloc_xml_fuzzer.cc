// lstopo XML (`--node file.xml`), imported as podtopo always imports it: hwloc runs in the
// import child process (hwloc 2.9 crashes on some malformed XML; one child serves every input
// and is forked again after a crash), so a crash or a hang of hwloc is an error here, never a
// crash of podtopo. Checked: the error names the file; an
// imported topology is written as topology JSON and read back to the same text.
// Coverage: libFuzzer only sees the parent's side (the decode of the child's report and the
// checks); the child's is invisible to it, so this target mutates mostly blindly from the
// seed corpus (docs/reliability.md).
#include <string>

#include "fuzz/fuzz_target.h"
#include "fuzz/topology_fuzzer_util.h"
#include "topology/hwloc_import.h"

PODTOPO_FUZZ_TARGET(hwloc_xml) {
  absl::StatusOr<NodeTopology> node = ImportHwlocXmlText(std::string(AsText(data, size)), "fuzz.xml");
  if (!node.ok()) {
    FUZZ_CHECK(node.status().message().find("fuzz.xml") == 0,
               fmt::format("the error does not name the file: {}", node.status().ToString()));
    return 0;
  }
  CheckTopologyRoundTrip(*node, "lstopo XML");
  return 0;
}
