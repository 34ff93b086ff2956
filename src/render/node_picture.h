// Pictures of a node: who owns which CPU, as SVG and as a self-contained HTML page
// (`podtopo topology|admit|show -o svg|html`, and the demo's podtopo-demo.html).
//
// A NodePicture is the laid-out model; RenderSvg / RenderHtml only print it. The layout nests
// sockets > NUMA nodes > L3 (uncore) groups > cores > hardware threads, one rectangle each,
// on an integer pixel grid. Every CPU is filled by its owner:
//   * reserved CPUs (reservedSystemCPUs)                         dark grey
//   * the node's shared pool (the CPU Manager's default set)      light grey
//   * a pod's exclusive containers (exclusive slices, pod or node) the pod's colour
//   * a pod's shared pool (its bubble minus the exclusive slices)  the pod's colour, hatched
// Each pod's colour is derived from its namespace/name (FNV-1a into a palette of 12
// distinguishable colours; pods whose slot is taken move to the next free one, in key order,
// and past 12 pods hues come from the hash), so a pod keeps its colour across runs.
// Device-plugin devices sit on their NUMA node, filled with the colour of the pod holding
// them. Each NUMA node has one bar per memory type (memory, hugepages-*): allocatable
// vs allocated from the Memory Manager's tables, or the capacity alone when the Memory
// Manager is off or for a topology-only picture. Every CPU, core, group, bar, device and pod
// carries a hover <title>; a legend lists the owners and the pods.
//
// Output is deterministic (same input, same bytes) and every text is XML-escaped. A CPU
// rectangle shows its number in its upper half (on a plain plate, LabelPlateOf, where the CPU
// is hatched); its lower half is plain fill, and
// PictureCpu::sample_x/sample_y is a point there (used by the screenshot test).
//
// Example:
//   auto node = Node::Create(LoadNode("preset:t256").value(), cfg, {}).value();
//   node->Admit(pod);
//   NodePicture pic = BuildNodePicture(*node, node->AdmittedPods());
//   std::string svg = RenderSvg(pic);     // "<svg xmlns=...>...</svg>\n"
//   std::string html = RenderHtml(pic);   // "<!DOCTYPE html>..." with the SVG inline
//   pic.cpus[0].fill;                     // "#555555" when CPU 0 is reserved
#ifndef PODTOPO_RENDER_NODE_PICTURE_H_
#define PODTOPO_RENDER_NODE_PICTURE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "admission/node.h"
#include "cpuset/cpuset.h"
#include "topology/node_topology.h"

namespace podtopo {

// Fills of the node-level owners.
inline constexpr std::string_view kReservedColor = "#555555";
inline constexpr std::string_view kNodeSharedColor = "#d0d0d0";
// CPUs of a topology-only picture, and CPUs no pool accounts for.
inline constexpr std::string_view kUnassignedColor = "#ffffff";
// The background between the stripes of a pod's shared pool.
inline constexpr std::string_view kHatchBackground = "#ffffff";
// The colour of the plate a hatched CPU's number stands on (LabelPlateOf).
inline constexpr std::string_view kLabelPlateColor = "#ffffff";
// Memory bars: allocated part and the rest of the allocatable size.
inline constexpr std::string_view kAllocatedColor = "#7fb2d9";
inline constexpr std::string_view kBarBackground = "#f4f4f4";

enum class CpuOwner {
  kUnassigned,    // topology-only picture, or in no pool
  kReserved,      // reservedSystemCPUs
  kNodeShared,    // the default cpuset
  kPodExclusive,  // an exclusive slice of a pod's container (pod_exclusive / node_exclusive)
  kPodShared,     // the pod's bubble outside every exclusive slice
};
const char* CpuOwnerName(CpuOwner owner);  // "unassigned", "reserved", "node-shared", ...

struct PictureBox {
  std::string kind;  // "socket", "numa", "l3", "core", "memory-only"
  int x = 0, y = 0, w = 0, h = 0;
  std::string label;  // drawn in the box's header ("" for cores)
  std::string title;  // hover text
};

struct PictureCpu {
  int cpu = 0;
  int x = 0, y = 0, w = 0, h = 0;
  int sample_x = 0, sample_y = 0;  // a point of plain fill inside the rectangle
  CpuOwner owner = CpuOwner::kUnassigned;
  int pod = -1;      // index into NodePicture::pods for kPodExclusive / kPodShared
  std::string fill;  // "#rrggbb": the owner's colour (for kPodShared, the stripes' colour)
  std::string title;
};

// The plain plate under a hatched (kPodShared) CPU's number, in the CPU's upper half.
struct LabelPlate {
  int x = 0, y = 0, w = 0, h = 0;
};
LabelPlate LabelPlateOf(const PictureCpu& cpu);

struct PictureBar {
  int numa = 0;
  std::string type;  // "memory", "hugepages-2Mi", ...
  uint64_t total = 0;      // allocatable (Memory Manager) or capacity (otherwise)
  uint64_t allocated = 0;  // 0 without Memory Manager accounting
  bool accounted = false;  // true when the numbers come from the Memory Manager
  int x = 0, y = 0, w = 0, h = 0;
  int fill_w = 0;  // width of the allocated part
  std::string label;
  std::string title;
};

struct PictureDevice {
  std::string resource;
  std::string id;
  int numa = -1;
  int pod = -1;  // the pod holding it, or -1
  int x = 0, y = 0, w = 0, h = 0;
  std::string fill;
  std::string title;
};

struct PicturePod {
  std::string namespace_name;
  std::string name;
  bool admitted = false;
  std::string color;  // "#rrggbb" ("" for a rejected pod)
  CpuSet exclusive;   // union of its exclusive slices
  CpuSet shared;      // its shared pool
  std::string title;  // hover text: verdict, QoS, hint, CPUs, containers
  std::string summary;  // one line for the legend
};

struct LegendEntry {
  std::string swatch;  // "#rrggbb", "hatch:N" (pod N's shared pool), "bar", "device", ""
  std::string text;
  std::string title;
  int pod = -1;
  int x = 0, y = 0;  // top-left of the swatch
};

struct NodePicture {
  std::string heading;     // first line: node source and counts
  std::string subheading;  // second line: the kubelet configuration ("" topology-only)
  bool with_allocations = false;
  int width = 0, height = 0;
  std::vector<PictureBox> boxes;  // outer boxes before inner ones
  std::vector<PictureCpu> cpus;   // ascending by CPU id
  std::vector<PictureBar> bars;
  std::vector<PictureDevice> devices;
  std::vector<PicturePod> pods;  // in the given order, rejected pods included
  std::vector<LegendEntry> legend;
  int legend_y = 0;

  // nullptr for a CPU the picture does not show.
  const PictureCpu* FindCpu(int cpu) const;
};

// The picture of a node's hardware alone (every CPU kUnassigned, capacity bars).
NodePicture BuildTopologyPicture(const NodeTopology& topology);

// The picture of a node with its pools and `pods` (AdmittedPods(), or admit's results with
// rejected pods, which appear in the legend only).
NodePicture BuildNodePicture(const Node& node, const std::vector<PodAllocation>& pods);

// What an observer of a running node knows (`podtopo agent`, from the kubelet's PodResources
// API): its pools and its pods, without the kubelet's configuration or hints. Pods are drawn
// as admitted; their containers' assignments say who is exclusive and who shares the pod's
// pool (PodAllocation::cpus is the pod's bubble, empty for a pod without one).
struct ObservedNode {
  CpuSet default_set;
  CpuSet reserved;
  std::map<int, std::map<std::string, Node::MemoryTableView>> memory;  // allocatable, pinned
  std::vector<PodAllocation> pods;
  std::string subheading;
};
NodePicture BuildObservedPicture(const NodeTopology& topology, const ObservedNode& observed);

// The SVG document (one line per element, ending with a newline).
std::string RenderSvg(const NodePicture& picture);
// A self-contained HTML page: the SVG inline, a legend and the pod table; no external
// reference of any kind (the SVG namespace URI is the only "http" in it).
std::string RenderHtml(const NodePicture& picture);

// Text made safe for XML/HTML text and attribute values: & < > " ' escaped, control
// characters other than tab/newline and invalid UTF-8 bytes replaced by U+FFFD.
std::string EscapeXml(std::string_view text);

// A pod's stable base colour: palette slot FNV-1a("namespace/name") % 12.
std::string PodBaseColor(const std::string& namespace_name, const std::string& name);

}  // namespace podtopo

#endif  // PODTOPO_RENDER_NODE_PICTURE_H_
