#include "topology/node_source.h"

#include "fmt/format.h"
#include "topology/hwloc_import.h"
#include "topology/presets.h"
#include "topology/sysfs_discovery.h"
#include "topology/topology_json.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace podtopo {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

absl::Status UnknownSpec(const std::string& spec) {
  return absl::InvalidArgumentError(fmt::format(
      "node spec \"{}\": expected preset:NAME, FILE.json, FILE.xml, sysfs:DIR or local", spec));
}

}  // namespace

absl::StatusOr<NodeTopology> LoadNode(const std::string& spec) {
  if (spec.rfind("preset:", 0) == 0) return Preset(spec.substr(7));
  if (spec == "local") return DiscoverSysfs("/sys");
  if (spec.rfind("sysfs:", 0) == 0) {
    if (spec.size() == 6) return UnknownSpec(spec);
    return DiscoverSysfs(spec.substr(6));
  }
  if (spec == "-" || EndsWith(spec, ".json")) return ReadTopologyJsonFile(spec);
  if (EndsWith(spec, ".xml")) return ImportHwlocXml(spec);
  if (spec.empty() || !FileExists(spec)) return UnknownSpec(spec);
  // Another file name: look at the content.
  PODTOPO_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(spec, size_t{256} << 20));
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return ReadTopologyJson(text, spec);
  if (first != std::string::npos && text[first] == '<') return ImportHwlocXmlText(text, spec);
  return absl::InvalidArgumentError(
      fmt::format("{}: neither topology JSON nor hwloc XML (name it FILE.json or FILE.xml)", spec));
}

}  // namespace podtopo
