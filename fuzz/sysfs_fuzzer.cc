// sysfs trees (`--node sysfs:DIR`), discovered as cadvisor does. The input is a whole tree
// serialized as records `path NUL contents NUL` (a path ending in '/' is an empty directory;
// fuzz/make_corpus.py writes the fixture trees this way). Checked: discovery either succeeds
// or fails with an error naming the tree; a discovered topology is written as topology JSON
// and read back to the same text.
#include <string>

#include "fuzz/fuzz_target.h"
#include "fuzz/topology_fuzzer_util.h"
#include "topology/sysfs_discovery.h"
#include "topology/sysfs_source.h"

PODTOPO_FUZZ_TARGET(sysfs) {
  std::string_view text = AsText(data, size);
  FakeSysfs fs("sysfs:fuzz");
  while (!text.empty()) {
    size_t end = text.find('\0');
    std::string path(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    end = text.find('\0');
    std::string contents(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (path.empty()) continue;
    if (path.back() == '/') {
      path.pop_back();
      fs.AddDir(path);
    } else {
      fs.Set(path, std::move(contents));
    }
  }
  absl::StatusOr<NodeTopology> node = DiscoverSysfs(fs);
  if (!node.ok()) {
    FUZZ_CHECK(node.status().message().find("sysfs:fuzz") != std::string_view::npos,
               fmt::format("the error does not name the tree: {}", node.status().ToString()));
    return 0;
  }
  CheckTopologyRoundTrip(*node, "sysfs");
  return 0;
}
