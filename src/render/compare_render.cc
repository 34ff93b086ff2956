#include "render/compare_render.h"

#include <algorithm>
#include <set>

#include "fmt/format.h"
#include "render/admission_render.h"
#include "render/node_picture.h"
#include "resource/human_bytes.h"

namespace podtopo {
namespace {

using compare::CapacityRow;
using compare::CheckpointCompatibility;
using compare::CompareResult;
using compare::ConfigResult;
using compare::Tally;

// Nodes listed one by one in the table up to this many; beyond, only those that differ.
constexpr size_t kTableNodes = 20;

const char* PlacementName(const CompareResult& r) {
  return r.first_fit_used ? "first-fit" : "nodeName";
}

std::string PlacementText(const CompareResult& r, size_t nodes) {
  if (r.first_fit_used) {
    return fmt::format(
        "placement: first-fit over {} nodes (pods without spec.nodeName go to the first node, in "
        "--node order, that admits them; not the kube-scheduler's placement)",
        nodes);
  }
  return nodes == 1 ? "placement: every pod on the one node"
                    : fmt::format("placement: by spec.nodeName over {} nodes", nodes);
}

nlohmann::ordered_json TallyJson(const Tally& t) {
  nlohmann::ordered_json j;
  j["pods"] = t.pods;
  j["admitted"] = t.admitted;
  j["rejected"] = nlohmann::ordered_json::object();
  for (const auto& [reason, n] : t.rejected) j["rejected"][reason] = n;
  j["exclusiveCpus"] = t.exclusive_cpus;
  j["podSharedPoolCpus"] = t.pod_shared_pool_cpus;
  j["alignedPods"] = t.aligned_pods;
  j["nodeSharedPoolCpus"] = t.node_shared_pool_cpus;
  j["exclusiveCpusByKind"] = nlohmann::ordered_json::object();
  for (const auto& [kind, n] : t.exclusive_cpus_by_kind) j["exclusiveCpusByKind"][kind] = n;
  j["memory"] = nlohmann::ordered_json::array();
  for (const auto& [numa, types] : t.memory) {
    for (const auto& [type, use] : types) {
      j["memory"].push_back({{"numa", numa},
                             {"type", type},
                             {"allocated", use.allocated},
                             {"allocatable", use.allocatable}});
    }
  }
  return j;
}

int ExclusiveOf(const Tally& t, const std::string& kind) {
  auto it = t.exclusive_cpus_by_kind.find(kind);
  return it == t.exclusive_cpus_by_kind.end() ? 0 : it->second;
}

// Every rejection reason of any configuration, in name order.
std::vector<std::string> Reasons(const CompareResult& r) {
  std::set<std::string> s;
  for (const auto& c : r.configs) {
    for (const auto& [reason, n] : c.total.rejected) s.insert(reason);
  }
  return {s.begin(), s.end()};
}

// Aligns columns with two spaces between them; the last column is not padded.
std::string Columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size());
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// The totals side by side: one row per count, one column per configuration.
std::vector<std::vector<std::string>> TotalRows(const CompareResult& r) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {""};
  for (const auto& c : r.configs) head.push_back(c.config);
  rows.push_back(head);
  auto add = [&](const std::string& label, auto value) {
    std::vector<std::string> row = {label};
    for (const auto& c : r.configs) row.push_back(value(c.total));
    rows.push_back(std::move(row));
  };
  auto num = [](int n) { return std::to_string(n); };
  add("pods", [&](const Tally& t) { return num(t.pods); });
  add("admitted", [&](const Tally& t) { return num(t.admitted); });
  add("rejected", [&](const Tally& t) { return num(t.Rejected()); });
  for (const auto& reason : Reasons(r)) {
    add("  " + reason, [&](const Tally& t) {
      auto it = t.rejected.find(reason);
      return num(it == t.rejected.end() ? 0 : it->second);
    });
  }
  add("exclusive CPUs", [&](const Tally& t) { return num(t.exclusive_cpus); });
  add("  main containers", [&](const Tally& t) { return num(ExclusiveOf(t, "app")); });
  add("  sidecars", [&](const Tally& t) { return num(ExclusiveOf(t, "sidecar")); });
  add("  init containers", [&](const Tally& t) { return num(ExclusiveOf(t, "init")); });
  add("CPUs in pod shared pools", [&](const Tally& t) { return num(t.pod_shared_pool_cpus); });
  add("node shared pool left (CPUs)", [&](const Tally& t) { return num(t.node_shared_pool_cpus); });
  add("NUMA-aligned pods", [&](const Tally& t) { return num(t.aligned_pods); });
  std::set<std::pair<int, std::string>> memory_rows;
  for (const auto& c : r.configs) {
    for (const auto& [numa, types] : c.total.memory) {
      for (const auto& [type, use] : types) memory_rows.insert({numa, type});
    }
  }
  for (const auto& [numa, type] : memory_rows) {
    // (Copies: clang 14 cannot capture structured bindings.)
    add(fmt::format("{} pinned on NUMA {}", type, numa),
        [&, numa = numa, type = type](const Tally& t) {
          auto n = t.memory.find(numa);
          if (n == t.memory.end() || !n->second.contains(type)) return std::string("-");
          const auto& use = n->second.at(type);
          return fmt::format("{} of {}", HumanBytes(use.allocated),
                             HumanBytes(use.allocatable));
        });
  }
  return rows;
}

// One short cell per node and configuration: "15/20 admitted, 45 excl, 15 pod-shared, 3 left".
std::string NodeCell(const Tally& t) {
  std::string s = fmt::format("{}/{} admitted", t.admitted, t.pods);
  for (const auto& [reason, n] : t.rejected) s += fmt::format(", {} {}", n, reason);
  return s + fmt::format("; CPUs {} excl, {} pod-shared, {} node-shared", t.exclusive_cpus,
                         t.pod_shared_pool_cpus, t.node_shared_pool_cpus);
}

// Nodes whose tallies differ between the configurations (all of them for a small fleet).
std::vector<size_t> NodesToList(const CompareResult& r, size_t* differing) {
  std::vector<size_t> out;
  const size_t n = r.configs.empty() ? 0 : r.configs[0].nodes.size();
  *differing = 0;
  for (size_t j = 0; j < n; ++j) {
    bool differs = false;
    for (const auto& c : r.configs) differs |= !(c.nodes[j].tally == r.configs[0].nodes[j].tally);
    *differing += differs;
    if (n <= kTableNodes || (differs && out.size() < kTableNodes)) out.push_back(j);
  }
  return out;
}

std::string ReplicasText(const CapacityRow& row, size_t c) {
  return row.stopped_by[c].empty()
             ? std::to_string(row.replicas[c])
             : fmt::format("{} (next: {})", row.replicas[c], row.stopped_by[c]);
}

// The per-node table: a header and one row per listed node (see NodesToList).
std::vector<std::vector<std::string>> NodeRows(const CompareResult& r,
                                               const std::vector<size_t>& listed) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"NODE"};
  for (const auto& c : r.configs) head.push_back(c.config);
  rows.push_back(head);
  for (size_t j : listed) {
    std::vector<std::string> row = {r.configs[0].nodes[j].node};
    for (const auto& c : r.configs) row.push_back(NodeCell(c.nodes[j].tally));
    rows.push_back(std::move(row));
  }
  return rows;
}

// The capacity table: a header and one row per workload and shape.
std::vector<std::vector<std::string>> CapacityRows(const CompareResult& r,
                                                   const std::vector<CapacityRow>& capacity) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"WORKLOAD", "SHAPE"};
  for (const auto& c : r.configs) head.push_back(c.config);
  rows.push_back(head);
  for (const auto& row : capacity) {
    std::vector<std::string> line = {row.workload, row.shape};
    for (size_t c = 0; c < r.configs.size(); ++c) line.push_back(ReplicasText(row, c));
    rows.push_back(std::move(line));
  }
  return rows;
}

// ---- chart layout ----

constexpr int kMargin = 16;
constexpr int kBarHeight = 18;
constexpr int kRowGap = 6;
constexpr int kBarWidth = 560;
constexpr int kCharWidth = 7;  // of 12px text, for the label column

struct Segment {
  std::string segment;
  std::string label;  // legend text
  std::string fill;
  double value = 0;
  std::string value_text;
};

class Layout {
 public:
  explicit Layout(const CompareResult& r) {
    size_t longest = 12;
    for (const auto& c : r.configs) longest = std::max(longest, c.config.size());
    label_w_ = static_cast<int>(std::min<size_t>(longest, 48)) * kCharWidth + 12;
    chart_.width = kMargin * 2 + label_w_ + kBarWidth + 210;
    y_ = kMargin;
  }

  void Heading(const std::string& text, int size) {
    y_ += size + 4;
    chart_.texts.push_back({kMargin, y_, text, size, true, false});
    y_ += 6;
  }
  void Line(const std::string& text) {
    y_ += 15;
    chart_.texts.push_back({kMargin, y_, text, 12, false, false});
  }
  void Gap(int px) { y_ += px; }

  // One labelled bar per row: segments scaled to `scale` (the widest row's total).
  // `label` names the row in hover titles; the drawn label is the configuration.
  void Bar(const std::string& chart, const std::string& config, const std::string& label,
           const std::vector<Segment>& segments, double scale, const std::string& total_text,
           double background = 0) {
    const int x0 = kMargin + label_w_;
    chart_.texts.push_back({x0 - 8, y_ + 13, Shorten(config), 12, false, true});
    if (background > 0 && scale > 0) {
      int w = static_cast<int>(background / scale * kBarWidth + 0.5);
      chart_.rects.push_back({chart, "free", config, x0, y_, std::max(w, 1), kBarHeight,
                              std::string(kChartMemoryFreeColor),
                              fmt::format("{}: {}", label, total_text)});
    }
    int x = x0;
    double acc = 0;
    for (const auto& s : segments) {
      if (s.value <= 0 || scale <= 0) continue;
      // Edges from the running sum, so that rounding never makes a row longer than its total.
      int x_end = x0 + static_cast<int>((acc + s.value) / scale * kBarWidth + 0.5);
      acc += s.value;
      if (x_end <= x) x_end = x + 1;
      chart_.rects.push_back({chart, s.segment, config, x, y_, x_end - x, kBarHeight, s.fill,
                              fmt::format("{}: {}: {}", label, s.label, s.value_text)});
      x = x_end;
    }
    chart_.texts.push_back({x0 + kBarWidth + 8, y_ + 13, total_text, 12, false, false});
    y_ += kBarHeight + kRowGap;
  }

  void Legend(const std::string& chart, const std::vector<Segment>& entries) {
    int x = kMargin + label_w_;
    y_ += 2;
    for (const auto& e : entries) {
      int text_w = static_cast<int>(e.label.size()) * 6 + 24;
      if (x + 14 + text_w > chart_.width - kMargin) {
        x = kMargin + label_w_;
        y_ += 18;
      }
      chart_.rects.push_back({"legend", e.segment, "", x, y_, 12, 12, e.fill, e.label});
      chart_.texts.push_back({x + 16, y_ + 10, e.label, 11, false, false});
      x += 16 + text_w;
    }
    y_ += 26;
  }

  CompareChart Done() {
    chart_.height = y_ + kMargin;
    return std::move(chart_);
  }

 private:
  std::string Shorten(const std::string& s) const {
    size_t max = static_cast<size_t>((label_w_ - 12) / kCharWidth);
    return s.size() <= max ? s : "…" + s.substr(s.size() - max + 1);
  }

  CompareChart chart_;
  int label_w_ = 0;
  int y_ = 0;
};

std::string Svg(const CompareChart& chart) {
  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"DejaVu Sans, Liberation Sans, Arial, sans-serif\" font-size=\"12\">\n",
      chart.width, chart.height);
  o += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
                   chart.width, chart.height);
  for (const auto& r : chart.rects) {
    o += fmt::format(
        "<rect class=\"bar {}\" data-segment=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
        "fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"1\"><title>{}</title></rect>\n",
        EscapeXml(r.chart), EscapeXml(r.segment), r.x, r.y, r.w, r.h, r.fill, EscapeXml(r.title));
  }
  for (const auto& t : chart.texts) {
    o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\"{}{}>{}</text>\n", t.x, t.y, t.size,
                     t.bold ? " font-weight=\"bold\"" : "",
                     t.end_anchor ? " text-anchor=\"end\"" : "", EscapeXml(t.text));
  }
  o += "</svg>\n";
  return o;
}

// What the later configuration's kubelet reads of the first's checkpoints; null when both
// run the same version.
nlohmann::ordered_json CheckpointsJson(const std::optional<CheckpointCompatibility>& c) {
  if (!c.has_value()) return nullptr;
  nlohmann::ordered_json j;
  j["fromVersion"] = c->from_version;
  j["toVersion"] = c->to_version;
  j["files"] = nlohmann::ordered_json::array();
  for (const auto& f : c->files) {
    nlohmann::ordered_json fj;
    fj["file"] = kubelet::CheckpointFileName(f.file);
    fj["written"] = f.written;
    fj["read"] = kubelet::ReadModeName(f.read.mode);
    fj["readAs"] = f.read.format_read;
    fj["upstream"] = f.read.upstream.empty() ? nlohmann::ordered_json(nullptr)
                                             : nlohmann::ordered_json(f.read.upstream);
    fj["kubeletError"] = f.read.kubelet_error.empty()
                             ? nlohmann::ordered_json(nullptr)
                             : nlohmann::ordered_json(f.read.kubelet_error);
    fj["podEntriesDropped"] = f.pods_dropped;
    j["files"].push_back(std::move(fj));
  }
  return j;
}

// "  checkpoints written by kubelet 1.37, read by kubelet 1.36:\n    cpu_manager_state: ..."
std::string CheckpointsText(const std::optional<CheckpointCompatibility>& c) {
  if (!c.has_value()) return "";
  std::string out = fmt::format("  checkpoints written by kubelet {}, read by kubelet {}:\n",
                                c->from_version, c->to_version);
  for (const auto& f : c->files) {
    out += fmt::format("    {}: V{} ", kubelet::CheckpointFileName(f.file), f.written);
    switch (f.read.mode) {
      case kubelet::ReadMode::kFull:
        out += "read fully\n";
        break;
      case kubelet::ReadMode::kLegacyPart:
        out += fmt::format("read as its inline V{} part ({})", f.read.format_read,
                           f.read.upstream);
        out += f.pods_dropped.empty()
                   ? "; no pod-level entry is lost\n"
                   : fmt::format("; pod-level entries lost: {}\n",
                                 fmt::join(f.pods_dropped, ", "));
        break;
      case kubelet::ReadMode::kRefused:
        out += fmt::format("refused: \"{}\": the kubelet does not start\n",
                           f.read.kubelet_error);
        break;
    }
  }
  return out;
}

}  // namespace

nlohmann::ordered_json CompareJson(const CompareResult& result,
                                   const std::vector<CapacityRow>* capacity) {
  nlohmann::ordered_json j;
  j["placement"] = PlacementName(result);
  j["results"] = nlohmann::ordered_json::array();
  for (const auto& c : result.configs) {
    nlohmann::ordered_json cj;
    cj["config"] = c.config;
    cj["kubeletVersion"] = c.kubelet_version.empty() ? nlohmann::ordered_json(nullptr)
                                                     : nlohmann::ordered_json(c.kubelet_version);
    cj["total"] = TallyJson(c.total);
    cj["nodes"] = nlohmann::ordered_json::array();
    for (const auto& n : c.nodes) {
      nlohmann::ordered_json nj;
      nj["node"] = n.node;
      nlohmann::ordered_json tally = TallyJson(n.tally);
      for (auto& [k, v] : tally.items()) nj[k] = v;
      nj["defaultCpuSet"] = n.default_cpu_set.String();
      nj["reservedCpus"] = n.reserved_cpus.String();
      cj["nodes"].push_back(std::move(nj));
    }
    j["results"].push_back(std::move(cj));
  }
  j["differences"] = nlohmann::ordered_json::array();
  for (size_t i = 1; i < result.configs.size(); ++i) {
    j["differences"].push_back({{"from", result.configs[0].config},
                                {"to", result.configs[i].config},
                                {"changes", compare::Differences(result.configs[0],
                                                                 result.configs[i])},
                                {"checkpoints",
                                 CheckpointsJson(result.configs[i].checkpoints_from_first)}});
  }
  if (capacity != nullptr) {
    j["capacity"] = nlohmann::ordered_json::array();
    for (const auto& row : *capacity) {
      nlohmann::ordered_json rj;
      rj["workload"] = row.workload;
      rj["shape"] = row.shape;
      rj["replicas"] = row.replicas;
      rj["stoppedBy"] = row.stopped_by;
      j["capacity"].push_back(std::move(rj));
    }
  }
  return j;
}

std::string RenderCompareJson(const CompareResult& result,
                              const std::vector<CapacityRow>* capacity) {
  return CompareJson(result, capacity).dump(2) + "\n";
}

std::string RenderCompareTable(const CompareResult& result,
                               const std::vector<CapacityRow>* capacity) {
  const size_t nodes = result.configs.empty() ? 0 : result.configs[0].nodes.size();
  std::string out = PlacementText(result, nodes) + "\n\n";
  out += Columns(TotalRows(result));
  for (size_t i = 1; i < result.configs.size(); ++i) {
    out += fmt::format("\nFrom {} to {}:\n", result.configs[0].config, result.configs[i].config);
    auto changes = compare::Differences(result.configs[0], result.configs[i]);
    if (changes.empty()) out += "  no difference: every pod gets the same verdict and every count is equal\n";
    for (const auto& c : changes) out += "  - " + c + "\n";
    out += CheckpointsText(result.configs[i].checkpoints_from_first);
  }
  if (nodes > 1) {
    size_t differing = 0;
    std::vector<size_t> listed = NodesToList(result, &differing);
    out += nodes <= kTableNodes
               ? "\nPer node:\n"
               : fmt::format("\nNodes whose counts differ between configurations: {} of {}{}\n",
                             differing, nodes,
                             differing > listed.size()
                                 ? fmt::format(" (the first {}; -o json has every node)",
                                               listed.size())
                                 : "");
    if (!listed.empty()) out += Columns(NodeRows(result, listed));
  }
  if (capacity != nullptr) {
    out += "\nCapacity: replicas of each workload that fit on an empty node of each shape\n";
    out += Columns(CapacityRows(result, *capacity));
  }
  return out;
}

CompareChart BuildCompareChart(const CompareResult& result) {
  Layout l(result);
  const size_t nodes = result.configs.empty() ? 0 : result.configs[0].nodes.size();
  l.Heading(fmt::format("podtopo compare: {} configuration{}, {} node{}", result.configs.size(),
                        result.configs.size() == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s"),
            16);
  l.Line(PlacementText(result, nodes));
  l.Gap(8);

  // Pods.
  const std::vector<std::string> reasons = Reasons(result);
  auto reason_color = [&](const std::string& reason) {
    size_t i = std::find(reasons.begin(), reasons.end(), reason) - reasons.begin();
    return std::string(kChartReasonColors[i % std::size(kChartReasonColors)]);
  };
  double max_pods = 0;
  for (const auto& c : result.configs) max_pods = std::max<double>(max_pods, c.total.pods);
  l.Heading("Pods: admitted, and rejected by reason", 13);
  for (const auto& c : result.configs) {
    std::vector<Segment> segs = {{"admitted", "admitted", std::string(kChartAdmittedColor),
                                  double(c.total.admitted), std::to_string(c.total.admitted)}};
    for (const auto& [reason, n] : c.total.rejected) {
      segs.push_back({reason, reason, reason_color(reason), double(n), std::to_string(n)});
    }
    l.Bar("pods", c.config, c.config, segs, max_pods,
          fmt::format("{} of {} admitted", c.total.admitted, c.total.pods));
  }
  std::vector<Segment> pod_legend = {{"admitted", "admitted", std::string(kChartAdmittedColor)}};
  for (const auto& reason : reasons) pod_legend.push_back({reason, reason, reason_color(reason)});
  l.Legend("pods", pod_legend);

  // CPUs.
  auto cpu_segments = [](const Tally& t) {
    return std::vector<Segment>{
        {"app", "exclusive, main containers", std::string(kChartAppExclusiveColor),
         double(ExclusiveOf(t, "app")), std::to_string(ExclusiveOf(t, "app"))},
        {"sidecar", "exclusive, sidecars", std::string(kChartSidecarExclusiveColor),
         double(ExclusiveOf(t, "sidecar")), std::to_string(ExclusiveOf(t, "sidecar"))},
        {"init", "exclusive, init containers", std::string(kChartInitExclusiveColor),
         double(ExclusiveOf(t, "init")), std::to_string(ExclusiveOf(t, "init"))},
        {"pod-shared", "pod shared pools", std::string(kChartPodSharedColor),
         double(t.pod_shared_pool_cpus), std::to_string(t.pod_shared_pool_cpus)},
        {"node-shared", "node shared pool left", std::string(kChartNodeSharedColor),
         double(t.node_shared_pool_cpus), std::to_string(t.node_shared_pool_cpus)}};
  };
  double max_cpus = 0;
  for (const auto& c : result.configs) {
    double sum = 0;
    for (const auto& s : cpu_segments(c.total)) sum += s.value;
    max_cpus = std::max(max_cpus, sum);
  }
  l.Heading("CPUs: exclusive by container kind, pod shared pools, node shared pool left", 13);
  for (const auto& c : result.configs) {
    l.Bar("cpus", c.config, c.config, cpu_segments(c.total), max_cpus,
          fmt::format("{} exclusive, {} pod-shared", c.total.exclusive_cpus,
                      c.total.pod_shared_pool_cpus));
  }
  l.Legend("cpus", cpu_segments(Tally{}));

  // NUMA alignment.
  l.Heading("NUMA-aligned pods (merged hint preferred), of the admitted pods", 13);
  for (const auto& c : result.configs) {
    const Tally& t = c.total;
    l.Bar("aligned", c.config, c.config,
          {{"aligned", "NUMA-aligned", std::string(kChartAlignedColor), double(t.aligned_pods),
            std::to_string(t.aligned_pods)},
           {"not-aligned", "admitted, not aligned", std::string(kChartNotAlignedColor),
            double(t.admitted - t.aligned_pods), std::to_string(t.admitted - t.aligned_pods)}},
          max_pods, fmt::format("{} of {} admitted", t.aligned_pods, t.admitted));
  }
  l.Legend("aligned", {{"aligned", "NUMA-aligned", std::string(kChartAlignedColor)},
                       {"not-aligned", "admitted, not aligned",
                        std::string(kChartNotAlignedColor)}});

  // Memory per NUMA node.
  std::set<std::pair<int, std::string>> memory_rows;
  double max_memory = 0;
  for (const auto& c : result.configs) {
    for (const auto& [numa, types] : c.total.memory) {
      for (const auto& [type, use] : types) {
        memory_rows.insert({numa, type});
        max_memory = std::max<double>(max_memory, use.allocatable);
      }
    }
  }
  if (!memory_rows.empty()) {
    l.Heading(nodes == 1 ? "Memory pinned per NUMA node (Memory Manager)"
                         : "Memory pinned per NUMA node id, summed over the nodes",
              13);
    for (const auto& [numa, type] : memory_rows) {
      l.Line(fmt::format("NUMA {}{}", numa, type == "memory" ? "" : " " + type));
      l.Gap(4);
      for (const auto& c : result.configs) {
        auto n = c.total.memory.find(numa);
        compare::MemoryUse use;
        if (n != c.total.memory.end() && n->second.contains(type)) use = n->second.at(type);
        l.Bar("memory", c.config, fmt::format("{} · NUMA {} {}", c.config, numa, type),
              {{"allocated", "pinned", std::string(kChartMemoryColor), double(use.allocated),
                HumanBytes(use.allocated)}},
              max_memory,
              fmt::format("{} of {}", HumanBytes(use.allocated), HumanBytes(use.allocatable)),
              double(use.allocatable));
      }
    }
    l.Legend("memory", {{"allocated", "pinned to the NUMA node", std::string(kChartMemoryColor)},
                        {"free", "allocatable, free", std::string(kChartMemoryFreeColor)}});
  }

  // The differences in words.
  for (size_t i = 1; i < result.configs.size(); ++i) {
    l.Heading(fmt::format("From {} to {}", result.configs[0].config, result.configs[i].config), 13);
    auto changes = compare::Differences(result.configs[0], result.configs[i]);
    if (changes.empty()) l.Line("no difference: every pod gets the same verdict and every count is equal");
    for (const auto& c : changes) l.Line("• " + c);
    l.Gap(6);
  }
  return l.Done();
}

std::string RenderCompareSvg(const CompareChart& chart) { return Svg(chart); }

std::string RenderCompareHtml(const CompareResult& result, const CompareChart& chart,
                              const std::vector<CapacityRow>* capacity) {
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  o += "<title>podtopo compare</title>\n";
  o += "<style>\n"
       "body{font-family:\"DejaVu Sans\",\"Liberation Sans\",Arial,sans-serif;margin:16px;"
       "color:#222}\n"
       "h2{font-size:15px;margin-top:20px}\n"
       "table{border-collapse:collapse}\n"
       "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;"
       "font-size:13px}\n"
       "th{background:#f0f0f0}\n"
       "svg rect.bar:hover{stroke:#000;stroke-width:2}\n"
       "</style>\n</head>\n<body>\n";
  o += "<div class=\"chart\">\n" + Svg(chart) + "</div>\n";
  auto table = [&](const std::vector<std::vector<std::string>>& rows) {
    std::string t = "<table>\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      t += "<tr>";
      for (const auto& cell : rows[i]) {
        // An indented row label (a reason, a container kind) keeps its indentation.
        const bool sub = cell.rfind("  ", 0) == 0;
        t += i == 0 ? "<th>" : sub ? "<td style=\"padding-left:24px\">" : "<td>";
        t += EscapeXml(sub ? cell.substr(2) : cell) + (i == 0 ? "</th>" : "</td>");
      }
      t += "</tr>\n";
    }
    return t + "</table>\n";
  };
  o += "<h2>Totals</h2>\n" + table(TotalRows(result));
  const size_t nodes = result.configs.empty() ? 0 : result.configs[0].nodes.size();
  if (nodes > 1) {
    size_t differing = 0;
    std::vector<size_t> listed = NodesToList(result, &differing);
    o += nodes <= kTableNodes
             ? "<h2>Per node</h2>\n"
             : fmt::format("<h2>Nodes whose counts differ: {} of {}{}</h2>\n", differing, nodes,
                           differing > listed.size()
                               ? fmt::format(" (the first {})", listed.size())
                               : "");
    if (!listed.empty()) o += table(NodeRows(result, listed));
  }
  if (capacity != nullptr) {
    o += "<h2>Capacity: replicas that fit on an empty node of each shape</h2>\n";
    o += table(CapacityRows(result, *capacity));
  }
  o += "<p>Made by podtopo compare: every pod ran through the same admission as "
       "<code>podtopo admit</code>, once per configuration, on empty nodes.</p>\n";
  o += "</body>\n</html>\n";
  return o;
}

}  // namespace podtopo
