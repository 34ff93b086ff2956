#include "render/topology_table.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "fmt/format.h"
#include "resource/human_bytes.h"
#include "topology/hugepages.h"

namespace podtopo {
namespace {

constexpr size_t kCpusWidth = 40;  // wrap cpusets longer than this at commas
constexpr size_t kCoresWidth = 64;

// A cell may span several lines; a row is as tall as its tallest cell.
using Cell = std::vector<std::string>;
using Row = std::vector<Cell>;

std::string Table(const std::vector<std::string>& header, const std::vector<Row>& rows) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const Row& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      for (const std::string& line : row[c]) width[c] = std::max(width[c], line.size());
    }
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) {
      line += cells[c];
      if (c + 1 < cells.size()) line += std::string(width[c] - cells[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(header);
  for (const Row& row : rows) {
    size_t height = 1;
    for (const Cell& cell : row) height = std::max(height, cell.size());
    for (size_t l = 0; l < height; ++l) {
      std::vector<std::string> cells;
      for (const Cell& cell : row) cells.push_back(l < cell.size() ? cell[l] : "");
      emit(cells);
    }
  }
  return out;
}

// Splits "a,b,c" into lines of at most `width` characters, breaking after commas.
Cell Wrap(const std::vector<std::string>& items, const std::string& sep, size_t width) {
  Cell lines;
  std::string line;
  for (size_t i = 0; i < items.size(); ++i) {
    std::string piece = items[i] + (i + 1 < items.size() ? sep : "");
    if (!line.empty() && line.size() + piece.size() > width) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      lines.push_back(line);
      line.clear();
    }
    line += piece;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line.empty() ? "-" : line);
  return lines;
}

Cell CpusCell(const CpuSet& cpus) {
  std::string text = cpus.String();
  if (text.empty()) return {"-"};
  std::vector<std::string> pieces;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    pieces.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return Wrap(pieces, ",", kCpusWidth);
}

std::string Plural(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string HugepagesText(const NumaNode& n) {
  if (n.hugepages.empty()) return "-";
  // Largest page size first.
  std::vector<std::pair<uint64_t, std::string>> sizes;
  for (const auto& [name, bytes] : n.hugepages) {
    auto size = HugepageSizeFromResourceName(name);
    std::string text;
    if (size.has_value() && bytes % *size == 0) {
      text = fmt::format("{} x {}", bytes / *size, BinarySiString(*size));
    } else {
      text = fmt::format("{} {}", name, HumanBytes(bytes));
    }
    sizes.emplace_back(size.value_or(0), text);
  }
  std::sort(sizes.begin(), sizes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (const auto& [_, text] : sizes) out += (out.empty() ? "" : ", ") + text;
  return out;
}

}  // namespace

std::string RenderTopologyTable(const NodeTopology& node) {
  const CpuTopology& t = node.cpus;
  // Every NUMA node of the machine, as the table below, the picture and -o json list them;
  // the CPU topology's count (num_numa_nodes) has only those with CPUs.
  const int numa_total = std::max(static_cast<int>(node.numa_nodes.size()), t.num_numa_nodes);
  std::string numa = Plural(numa_total, "NUMA node", "NUMA nodes");
  if (numa_total != t.num_numa_nodes) {
    numa += fmt::format(" ({} with CPUs, {} memory-only)", t.num_numa_nodes,
                        numa_total - t.num_numa_nodes);
  }
  std::string out = fmt::format(
      "Node {}: {}, {}, {}, {}, {}\n", node.source.empty() ? "(unnamed)" : node.source,
      Plural(t.num_cpus, "CPU", "CPUs"), Plural(t.num_cores, "core", "cores"),
      Plural(t.num_sockets, "socket", "sockets"), numa,
      Plural(t.num_uncore_caches, "uncore cache", "uncore caches"));

  // CPU table: groups of (socket, NUMA, uncore).
  using Key = std::tuple<int, int, int>;
  std::map<Key, CpuSet> groups;
  t.AllCpus().ForEach([&](int cpu) {
    const CpuInfo* i = t.Info(cpu);
    groups[{i->socket, i->numa, i->uncore}].Add(cpu);
  });
  std::vector<Row> rows;
  std::optional<int> last_socket;
  std::optional<std::pair<int, int>> last_numa;
  for (const auto& [key, cpus] : groups) {
    auto [socket, numa, uncore] = key;
    std::vector<std::string> cores;
    for (int core : t.CoresOf(cpus)) {
      CpuSet threads = t.CpusInCore(core).Intersection(cpus);
      cores.push_back(threads == CpuSet({core}) ? std::to_string(core)
                                                 : fmt::format("{}({})", core, threads.String()));
    }
    bool new_socket = !last_socket || *last_socket != socket;
    bool new_numa = new_socket || !last_numa || *last_numa != std::make_pair(socket, numa);
    rows.push_back(Row{{new_socket ? std::to_string(socket) : ""},
                       {new_numa ? std::to_string(numa) : ""},
                       {std::to_string(uncore)},
                       CpusCell(cpus),
                       Wrap(cores, " ", kCoresWidth)});
    last_socket = socket;
    last_numa = std::make_pair(socket, numa);
  }
  out += "\n" + Table({"SOCKET", "NUMA", "UNCORE", "CPUS", "CORES(THREADS)"}, rows);

  // NUMA table.
  std::vector<NumaNode> numa_nodes = node.numa_nodes;
  if (numa_nodes.empty()) {
    for (int id : t.NumaNodes()) numa_nodes.push_back(NumaNode{.id = id});
  }
  rows.clear();
  for (const NumaNode& n : numa_nodes) {
    std::vector<std::string> distances;
    for (uint64_t d : n.distances) distances.push_back(std::to_string(d));
    CpuSet cpus = t.CpusInNuma(n.id);
    rows.push_back(Row{{std::to_string(n.id)},
                       cpus.IsEmpty() ? Cell{"- (memory only)"} : CpusCell(cpus),
                       {HumanBytes(n.memory)},
                       {HugepagesText(n)},
                       Wrap(distances, " ", kCoresWidth)});
  }
  out += "\n" + Table({"NUMA", "CPUS", "MEMORY", "HUGEPAGES", "DISTANCES"}, rows);

  if (!node.devices.empty()) {
    std::vector<Device> devices = node.devices;
    std::stable_sort(devices.begin(), devices.end(), [](const Device& a, const Device& b) {
      return std::tie(a.resource, a.id) < std::tie(b.resource, b.id);
    });
    rows.clear();
    for (const Device& d : devices) {
      rows.push_back(Row{{d.resource}, {d.id}, {d.numa < 0 ? "-" : std::to_string(d.numa)}});
    }
    out += "\n" + Table({"DEVICE RESOURCE", "ID", "NUMA"}, rows);
  }
  if (!node.warnings.empty()) {
    out += "\nWarnings:\n";
    for (const std::string& w : node.warnings) out += "  " + w + "\n";
  }
  return out;
}

}  // namespace podtopo
