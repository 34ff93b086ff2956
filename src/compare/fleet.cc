#include "compare/fleet.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <system_error>

#include "fmt/format.h"
#include "topology/node_source.h"

namespace podtopo::compare {
namespace {

namespace fs = std::filesystem;

// At most this many nodes from one SPEC*COUNT.
constexpr int kMaxCount = 100000;

struct FlagParts {
  std::string name;  // "" when the flag names none
  std::string spec;
  int count = 0;  // 0 = no *COUNT
};

absl::StatusOr<FlagParts> SplitFlag(const std::string& flag) {
  FlagParts p;
  p.spec = flag;
  // NAME=SPEC: a name holds no '/' or ':', so `sysfs:/a=b` and `dumps/x=y.json` are SPECs.
  if (size_t eq = flag.find('='); eq != std::string::npos) {
    std::string name = flag.substr(0, eq);
    if (name.find_first_of("/:") == std::string::npos) {
      if (name.empty()) {
        return absl::InvalidArgumentError(fmt::format("--node {}: the name before '=' is empty", flag));
      }
      p.name = name;
      p.spec = flag.substr(eq + 1);
    }
  }
  if (size_t star = p.spec.rfind('*'); star != std::string::npos) {
    std::string digits = p.spec.substr(star + 1);
    int n = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || n < 1 ||
        n > kMaxCount) {
      return absl::InvalidArgumentError(fmt::format(
          "--node {}: the count after '*' must be a whole number from 1 to {}, not \"{}\"", flag,
          kMaxCount, digits));
    }
    p.count = n;
    p.spec = p.spec.substr(0, star);
  }
  if (p.spec.empty()) return absl::InvalidArgumentError(fmt::format("--node {}: no SPEC", flag));
  return p;
}

bool IsFleetDirectory(const std::string& spec) {
  if (spec.rfind("preset:", 0) == 0 || spec.rfind("sysfs:", 0) == 0 || spec == "local") {
    return false;
  }
  std::error_code ec;
  return fs::is_directory(spec, ec);
}

absl::Status Prefixed(const std::string& flag, const absl::Status& s) {
  return absl::Status(s.code(), fmt::format("--node {}: {}", flag, std::string(s.message())));
}

// The node files of a fleet directory, in name order: (name, SPEC for LoadNode, file).
absl::StatusOr<std::vector<FleetNode>> LoadDirectory(const std::string& flag,
                                                     const std::string& dir) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind('.', 0) == 0) continue;  // hidden
    entries.push_back(it->path());
  }
  if (ec) {
    return absl::InvalidArgumentError(
        fmt::format("--node {}: cannot list {}: {}", flag, dir, ec.message()));
  }
  std::sort(entries.begin(), entries.end());
  std::vector<FleetNode> out;
  for (const auto& path : entries) {
    std::string file = path.string();
    std::string spec;
    std::string name;
    if (fs::is_directory(path, ec)) {
      if (!fs::is_directory(path / "devices/system/cpu", ec)) {
        return absl::InvalidArgumentError(fmt::format(
            "--node {}: {}: a directory that is not a sysfs dump (no devices/system/cpu in it)",
            flag, file));
      }
      spec = "sysfs:" + file;
      name = path.filename().string();
    } else {
      spec = file;
      name = path.stem().string();
    }
    auto topology = LoadNode(spec);
    if (!topology.ok()) return Prefixed(flag, topology.status());
    out.push_back({name, file, std::make_shared<const NodeTopology>(std::move(*topology))});
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "--node {}: the directory holds no node file (FILE.json, FILE.xml or a sysfs dump)", flag));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<FleetNode>> LoadFleet(const std::vector<std::string>& flags) {
  std::vector<FleetNode> fleet;
  std::map<std::string, std::shared_ptr<const NodeTopology>> loaded;  // SPEC -> topology
  std::map<std::string, std::string> flag_of;                         // node name -> flag
  auto add = [&](FleetNode node, const std::string& flag) -> absl::Status {
    auto [it, inserted] = flag_of.emplace(node.name, flag);
    if (!inserted) {
      return absl::InvalidArgumentError(fmt::format(
          "--node {}: a node named \"{}\" is already given by --node {}", flag, node.name,
          it->second));
    }
    fleet.push_back(std::move(node));
    return absl::OkStatus();
  };
  for (const auto& flag : flags) {
    auto parts = SplitFlag(flag);
    if (!parts.ok()) return parts.status();
    if (IsFleetDirectory(parts->spec)) {
      if (!parts->name.empty() || parts->count != 0) {
        return absl::InvalidArgumentError(fmt::format(
            "--node {}: a directory's nodes are named after their files; give it without "
            "NAME= and *COUNT",
            flag));
      }
      auto nodes = LoadDirectory(flag, parts->spec);
      if (!nodes.ok()) return nodes.status();
      for (auto& n : *nodes) {
        if (auto s = add(std::move(n), flag); !s.ok()) return s;
      }
      continue;
    }
    auto& topology = loaded[parts->spec];
    if (topology == nullptr) {
      auto t = LoadNode(parts->spec);
      if (!t.ok()) return Prefixed(flag, t.status());
      topology = std::make_shared<const NodeTopology>(std::move(*t));
    }
    std::string base = parts->name.empty() ? parts->spec : parts->name;
    if (parts->count == 0) {
      if (auto s = add({base, parts->spec, topology}, flag); !s.ok()) return s;
      continue;
    }
    for (int i = 0; i < parts->count; ++i) {
      if (auto s = add({fmt::format("{}-{}", base, i), parts->spec, topology}, flag); !s.ok()) {
        return s;
      }
    }
  }
  if (fleet.empty()) return absl::InvalidArgumentError("no --node given");
  return fleet;
}

absl::StatusOr<std::vector<int>> AssignPods(const std::vector<Pod>& pods,
                                            const std::vector<FleetNode>& fleet,
                                            Placement placement) {
  std::map<std::string, int> index;
  for (size_t i = 0; i < fleet.size(); ++i) index[fleet[i].name] = static_cast<int>(i);
  std::vector<int> out;
  out.reserve(pods.size());
  int unplaced = 0;
  const Pod* first_unplaced = nullptr;
  for (const auto& pod : pods) {
    if (!pod.node_name.empty()) {
      auto it = index.find(pod.node_name);
      if (it == index.end()) {
        std::string names;
        for (size_t i = 0; i < fleet.size() && i < 5; ++i) {
          names += (i ? ", " : "") + fleet[i].name;
        }
        if (fleet.size() > 5) names += fmt::format(", ... ({} nodes)", fleet.size());
        return absl::InvalidArgumentError(fmt::format(
            "{}: pod {}: spec.nodeName: no --node is named \"{}\" (nodes: {})", pod.source,
            pod.Key(), pod.node_name, names));
      }
      out.push_back(it->second);
    } else if (fleet.size() == 1) {
      out.push_back(0);
    } else {
      if (unplaced++ == 0) first_unplaced = &pod;
      out.push_back(kFirstFitNode);
    }
  }
  if (unplaced > 0 && placement != Placement::kFirstFit) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: pod {}: spec.nodeName: not set, and {} pod(s) in all have no node; with {} nodes, "
        "give --place first-fit to place them on the first node that admits each (a first-fit "
        "placement, not the scheduler's), or set spec.nodeName",
        first_unplaced->source, first_unplaced->Key(), unplaced, fleet.size()));
  }
  return out;
}

}  // namespace podtopo::compare
