// Rendering of `podtopo compare` (compare/compare.h): the table, the JSON of the contract,
// and the report as SVG charts and as a self-contained HTML page.
//
// JSON (../shared/DESIGN.md, "Contract additions"), keys in this order:
//   {"placement": "nodeName" | "first-fit",
//    "results": [{"config",
//                 "total": TALLY,
//                 "nodes": [{"node", TALLY..., "defaultCpuSet", "reservedCpus"}]}],
//    "differences": [{"from", "to", "changes": ["sidecars no longer hold 14 exclusive CPUs"]}],
//    "capacity": [{"workload", "shape", "replicas": [N, ...], "stoppedBy": ["OutOfcpu", ...]}]}
//   TALLY = "pods", "admitted", "rejected": {REASON: N}, "exclusiveCpus", "podSharedPoolCpus",
//           "alignedPods", "nodeSharedPoolCpus", "exclusiveCpusByKind": {KIND: N},
//           "memory": [{"numa", "type", "allocated", "allocatable"}]
// "capacity" is there with --capacity only; its lists follow the order of "results".
// "differences" compares every configuration with the first.
//
// The chart (CompareChart) is laid out once and printed by RenderCompareSvg; the HTML page
// holds the same SVG inline, then the tables. Four charts, one bar per configuration:
// pods (admitted, rejected by reason), CPUs (exclusive by container kind, pod shared pools,
// the node shared pool left), NUMA-aligned pods, and memory pinned per NUMA node; then the
// differences in words. Every bar carries a hover <title>; output is deterministic.
//
// Example:
//   CompareChart chart = BuildCompareChart(result);
//   std::string svg = RenderCompareSvg(chart);             // "<svg xmlns=...>...</svg>\n"
//   std::string html = RenderCompareHtml(result, chart, nullptr);
#ifndef PODTOPO_RENDER_COMPARE_RENDER_H_
#define PODTOPO_RENDER_COMPARE_RENDER_H_

#include <string>
#include <string_view>
#include <vector>

#include "compare/compare.h"
#include "nlohmann/json.hpp"

namespace podtopo {

// Fills of the charts' segments.
inline constexpr std::string_view kChartAdmittedColor = "#2e7d32";
inline constexpr std::string_view kChartAppExclusiveColor = "#1565c0";
inline constexpr std::string_view kChartSidecarExclusiveColor = "#ef6c00";
inline constexpr std::string_view kChartInitExclusiveColor = "#6d4c41";
inline constexpr std::string_view kChartPodSharedColor = "#64b5f6";
inline constexpr std::string_view kChartNodeSharedColor = "#d0d0d0";
inline constexpr std::string_view kChartAlignedColor = "#00897b";
inline constexpr std::string_view kChartNotAlignedColor = "#b2dfdb";
inline constexpr std::string_view kChartMemoryColor = "#7fb2d9";
inline constexpr std::string_view kChartMemoryFreeColor = "#eeeeee";
// Rejection reasons take these in the order of their names.
inline constexpr std::string_view kChartReasonColors[] = {"#c62828", "#8e24aa", "#f9a825",
                                                          "#ad1457", "#5d4037", "#37474f"};

struct ChartRect {
  std::string chart;    // "pods", "cpus", "aligned", "memory", "legend"
  std::string segment;  // "admitted", "TopologyAffinityError", "app", "pod-shared", ...
  std::string config;   // the configuration of the bar ("" for legend swatches)
  int x = 0, y = 0, w = 0, h = 0;
  std::string fill;
  std::string title;
};

struct ChartText {
  int x = 0, y = 0;
  std::string text;
  int size = 12;
  bool bold = false;
  bool end_anchor = false;  // right-aligned at x
};

struct CompareChart {
  int width = 0, height = 0;
  std::vector<ChartRect> rects;
  std::vector<ChartText> texts;
};

nlohmann::ordered_json CompareJson(const compare::CompareResult& result,
                                   const std::vector<compare::CapacityRow>* capacity);
// Pretty-printed, with a trailing newline.
std::string RenderCompareJson(const compare::CompareResult& result,
                              const std::vector<compare::CapacityRow>* capacity);
// Totals side by side, the differences, the nodes (every node up to 20, else those whose
// counts differ between configurations) and the capacity table.
std::string RenderCompareTable(const compare::CompareResult& result,
                               const std::vector<compare::CapacityRow>* capacity);

CompareChart BuildCompareChart(const compare::CompareResult& result);
std::string RenderCompareSvg(const CompareChart& chart);
// A self-contained page: the chart's SVG inline and the tables; no script, no external
// reference (the SVG namespace URI is the only "http" in it).
std::string RenderCompareHtml(const compare::CompareResult& result, const CompareChart& chart,
                              const std::vector<compare::CapacityRow>* capacity);

}  // namespace podtopo

#endif  // PODTOPO_RENDER_COMPARE_RENDER_H_
