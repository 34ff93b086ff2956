#include "render/node_picture.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "fmt/format.h"
#include "render/admission_render.h"
#include "resource/human_bytes.h"

namespace podtopo {

LabelPlate LabelPlateOf(const PictureCpu& c) {
  LabelPlate p;
  p.w = static_cast<int>(std::to_string(c.cpu).size()) * 6 + 4;
  p.h = 10;
  p.x = c.x + (c.w - p.w) / 2;
  p.y = c.y + 2;
  return p;
}

namespace {

// Geometry (pixels). A thread is a cell; a core holds its threads side by side; an L3 group
// holds cores in a grid; a NUMA node stacks its groups, its memory bars and its devices; a
// socket holds its NUMA nodes two per row; sockets are stacked.
constexpr int kMargin = 10;
constexpr int kThreadW = 28;
constexpr int kThreadH = 24;
constexpr int kCorePad = 2;
constexpr int kCoreGap = 4;
constexpr int kGroupHeader = 14;
constexpr int kGroupPad = 4;
constexpr int kGroupTargetW = 540;  // an L3 group wraps its cores at about this width
constexpr int kNumaHeader = 18;
constexpr int kNumaPad = 6;
constexpr int kNumaMinInnerW = 288;
constexpr int kBarH = 14;
constexpr int kBarGap = 3;
constexpr int kDeviceH = 16;
constexpr int kSocketHeader = 20;
constexpr int kSocketPad = 8;
constexpr int kNumaPerRow = 2;
constexpr int kPageTargetW = 1200;
constexpr int kCharW = 6;  // approximate width of a 10px character
constexpr int kLegendRowH = 18;
constexpr int kLegendColW = 440;
constexpr size_t kLegendTextMax = 66;

// Twelve colours that stay apart from each other and from the greys of the node pools.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                    "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                    "#bcbd22", "#393b79", "#e7ba52", "#637939"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

uint32_t Fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

std::string HslHex(int hue, int sat_pct, int light_pct) {
  double s = sat_pct / 100.0, l = light_pct / 100.0;
  double c = (1 - std::abs(2 * l - 1)) * s;
  double hp = (hue % 360) / 60.0;
  double x = c * (1 - std::abs(std::fmod(hp, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (hp < 1) { r = c; g = x; }
  else if (hp < 2) { r = x; g = c; }
  else if (hp < 3) { g = c; b = x; }
  else if (hp < 4) { g = x; b = c; }
  else if (hp < 5) { r = x; b = c; }
  else { r = c; b = x; }
  double m = l - c / 2;
  auto to = [&](double v) { return static_cast<int>(std::lround((v + m) * 255)); };
  return fmt::format("#{:02x}{:02x}{:02x}", to(r), to(g), to(b));
}

// Black or white text, whichever reads better on `fill` ("#rrggbb").
const char* TextColorOn(std::string_view fill) {
  if (fill.size() != 7 || fill[0] != '#') return "#000000";
  auto hex = [&](size_t i) { return std::stoi(std::string(fill.substr(i, 2)), nullptr, 16); };
  int lum = (299 * hex(1) + 587 * hex(3) + 114 * hex(5)) / 1000;
  return lum < 120 ? "#ffffff" : "#000000";
}

std::string Shorten(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return s.substr(0, cut) + "\u2026";
}

int TextWidth(const std::string& s) { return static_cast<int>(s.size()) * kCharW; }

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string CpuList(const CpuSet& s) { return s.IsEmpty() ? "none" : s.String(); }

// ---- layout --------------------------------------------------------------------------

struct CoreL {
  int core = 0;
  std::vector<int> threads;
};
struct GroupL {
  int uncore = 0;
  CpuSet cpus;
  std::vector<CoreL> cores;
  int cols = 1, rows = 1, w = 0, h = 0;
};
struct NumaL {
  int numa = 0;
  CpuSet cpus;
  std::vector<GroupL> groups;
  bool draws_memory = false;  // first box of this NUMA id draws its bars and devices
  int h = 0;
};
struct SocketL {
  int socket = 0;
  std::vector<NumaL> numas;
  int h = 0;
};

// What BuildPicture needs besides the topology.
struct Pools {
  bool with_allocations = false;
  CpuSet default_set;
  CpuSet reserved;
  std::map<int, std::map<std::string, Node::MemoryTableView>> memory;
  std::vector<PodAllocation> pods;
  std::string subheading;
};

// Memory bar rows of one NUMA node, in drawing order: memory first, then hugepages by name.
std::vector<PictureBar> BarsFor(const NodeTopology& topo, const Pools& pools, int numa) {
  std::vector<PictureBar> bars;
  auto table = pools.memory.find(numa);
  if (pools.with_allocations && table != pools.memory.end()) {
    for (int pass = 0; pass < 2; ++pass) {
      for (const auto& [type, view] : table->second) {
        if ((type == "memory") != (pass == 0)) continue;
        PictureBar b;
        b.numa = numa;
        b.type = type;
        b.total = view.allocatable;
        b.allocated = view.reserved;
        b.accounted = true;
        bars.push_back(b);
      }
    }
    return bars;
  }
  const NumaNode* n = topo.FindNuma(numa);
  if (n == nullptr) return bars;
  PictureBar m;
  m.numa = numa;
  m.type = "memory";
  m.total = n->memory;
  bars.push_back(m);
  for (const auto& [type, size] : n->hugepages) {
    PictureBar h;
    h.numa = numa;
    h.type = type;
    h.total = size;
    bars.push_back(h);
  }
  return bars;
}

// Who uses memory of `type` on `numa`, for a bar's title: pod-level blocks when the pod has
// them, else its containers' blocks.
std::vector<std::string> MemoryUsers(const std::vector<PodAllocation>& pods, int numa,
                                     const std::string& type) {
  std::vector<std::string> users;
  for (const auto& p : pods) {
    if (!p.admitted) continue;
    uint64_t total = 0;
    bool spread = false;
    auto add = [&](const std::vector<MemoryBlockView>& blocks) {
      for (const auto& b : blocks) {
        if (b.type != type) continue;
        if (std::find(b.numa_nodes.begin(), b.numa_nodes.end(), numa) == b.numa_nodes.end()) {
          continue;
        }
        total += b.size;
        spread |= b.numa_nodes.size() > 1;
      }
    };
    if (!p.memory.empty()) {
      add(p.memory);
    } else {
      for (const auto& c : p.containers) add(c.memory);
    }
    if (total == 0) continue;
    users.push_back(fmt::format("{}/{} {}{}", p.namespace_name, p.name, HumanBytes(total),
                                spread ? " (a block spanning several NUMA nodes)" : ""));
  }
  return users;
}

NodePicture BuildPicture(const NodeTopology& topo, const Pools& pools) {
  NodePicture pic;
  pic.with_allocations = pools.with_allocations;
  const CpuTopology& ct = topo.cpus;
  auto count = [](size_t n, const char* one, const char* many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
  };
  pic.heading = fmt::format(
      "Node {}: {}, {}, {}, {}, {}", topo.source, count(ct.AllCpus().List().size(), "CPU", "CPUs"),
      count(ct.Cores().size(), "core", "cores"), count(ct.Sockets().size(), "socket", "sockets"),
      count(topo.numa_nodes.empty() ? ct.NumaNodes().size() : topo.numa_nodes.size(),
            "NUMA node", "NUMA nodes"),
      count(ct.UncoreCaches().size(), "uncore cache", "uncore caches"));
  pic.subheading = pools.subheading;

  // ---- pods: colours and CPU sets.
  for (const auto& p : pools.pods) {
    PicturePod pp;
    pp.namespace_name = p.namespace_name;
    pp.name = p.name;
    pp.admitted = p.admitted;
    if (p.admitted) {
      for (const auto& c : p.containers) {
        if (c.assignment == "pod_exclusive" || c.assignment == "node_exclusive") {
          pp.exclusive.UnionWith(c.cpus);
        }
      }
      pp.shared = p.cpus.Difference(pp.exclusive);
    }
    pic.pods.push_back(std::move(pp));
  }
  {
    // Palette slots by hash, collisions moved to the next free slot, pods taken in key order.
    std::vector<size_t> order;
    for (size_t i = 0; i < pic.pods.size(); ++i) {
      if (pic.pods[i].admitted) order.push_back(i);
    }
    auto key = [&](size_t i) { return pic.pods[i].namespace_name + "/" + pic.pods[i].name; };
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return key(a) < key(b); });
    std::vector<bool> used(kPaletteSize, false);
    size_t used_count = 0;
    for (size_t i : order) {
      uint32_t h = Fnv1a(key(i));
      if (used_count < kPaletteSize) {
        size_t slot = h % kPaletteSize;
        while (used[slot]) slot = (slot + 1) % kPaletteSize;
        used[slot] = true;
        ++used_count;
        pic.pods[i].color = kPalette[slot];
      } else {
        pic.pods[i].color = HslHex(static_cast<int>(h % 360), 55 + static_cast<int>(h / 360 % 25),
                                   35 + static_cast<int>(h / 9000 % 20));
      }
    }
  }
  for (size_t i = 0; i < pic.pods.size(); ++i) {
    const PodAllocation& p = pools.pods[i];
    PicturePod& pp = pic.pods[i];
    std::vector<std::string> lines;
    lines.push_back(fmt::format("Pod {}/{}{}", p.namespace_name, p.name,
                                p.uid.empty() ? "" : " (uid " + p.uid + ")"));
    if (!p.admitted) {
      lines.push_back(fmt::format("rejected: {}: {}", p.reason, p.message));
      pp.summary = fmt::format("{}/{}: rejected ({})", p.namespace_name, p.name, p.reason);
    } else {
      lines.push_back(fmt::format("admitted, QoS {}, NUMA hint {}", QosClassName(p.qos),
                                  FormatHint(p.topology_hint)));
      if (!p.cpus.IsEmpty()) {
        lines.push_back(fmt::format("pod CPUs {}: exclusive {}, shared pool {}", p.cpus.String(),
                                    CpuList(pp.exclusive), CpuList(pp.shared)));
      } else if (!pp.exclusive.IsEmpty()) {
        lines.push_back(fmt::format("exclusive CPUs {}", pp.exclusive.String()));
      }
      for (const auto& c : p.containers) {
        std::string line =
            c.kind_known ? fmt::format("  {} ({}): {} {}", c.name, ContainerKindName(c.kind),
                                       c.assignment, CpuList(c.cpus))
                         : fmt::format("  {}: {} {}", c.name, c.assignment, CpuList(c.cpus));
        for (const auto& [res, ids] : c.devices) {
          line += fmt::format(", {} {}", res, Join(ids, ","));
        }
        lines.push_back(line);
      }
      pp.summary = fmt::format("{}/{} ({})", p.namespace_name, p.name, QosClassName(p.qos));
    }
    pp.title = Join(lines, "\n");
  }

  // ---- CPU owners.
  struct Owner {
    CpuOwner kind = CpuOwner::kUnassigned;
    int pod = -1;
    std::vector<std::string> containers;
  };
  std::map<int, Owner> owners;
  if (pools.with_allocations) {
    for (size_t i = 0; i < pools.pods.size(); ++i) {
      const PodAllocation& p = pools.pods[i];
      if (!p.admitted) continue;
      for (const auto& c : p.containers) {
        bool exclusive = c.assignment == "pod_exclusive" || c.assignment == "node_exclusive";
        bool pod_shared = c.assignment == "pod_shared";
        if (!exclusive && !pod_shared) continue;
        c.cpus.ForEach([&](int cpu) {
          Owner& o = owners[cpu];
          if (exclusive) {
            if (o.kind != CpuOwner::kPodExclusive) {
              o = Owner{CpuOwner::kPodExclusive, static_cast<int>(i), {}};
            }
            if (o.pod == static_cast<int>(i)) o.containers.push_back(c.name);
          } else if (o.kind == CpuOwner::kUnassigned || o.kind == CpuOwner::kPodShared) {
            if (o.kind == CpuOwner::kUnassigned) o = Owner{CpuOwner::kPodShared, static_cast<int>(i), {}};
            if (o.pod == static_cast<int>(i)) o.containers.push_back(c.name);
          }
        });
      }
      p.cpus.ForEach([&](int cpu) {
        Owner& o = owners[cpu];
        if (o.kind == CpuOwner::kUnassigned) o = Owner{CpuOwner::kPodShared, static_cast<int>(i), {}};
      });
    }
  }

  // ---- layout: sizes.
  int max_threads = 1;
  for (int core : ct.Cores()) max_threads = std::max(max_threads, ct.CpusInCore(core).Size());
  const int core_w = 2 * kCorePad + max_threads * kThreadW + (max_threads - 1) * kCorePad;
  const int core_h = 2 * kCorePad + kThreadH;
  const int max_cols = std::max(1, (kGroupTargetW + kCoreGap) / (core_w + kCoreGap));

  std::set<int> numa_drawn;
  std::vector<SocketL> sockets;
  int numa_inner_w = kNumaMinInnerW;
  for (int s : ct.Sockets()) {
    SocketL sl;
    sl.socket = s;
    const CpuSet& scpus = ct.CpusInSocket(s);
    for (int n : ct.NumaNodesOf(scpus)) {
      NumaL nl;
      nl.numa = n;
      nl.cpus = scpus.Intersection(ct.CpusInNuma(n));
      nl.draws_memory = numa_drawn.insert(n).second;
      for (int u : ct.UncoreCachesOf(nl.cpus)) {
        GroupL g;
        g.uncore = u;
        g.cpus = nl.cpus.Intersection(ct.CpusInUncore(u));
        for (int c : ct.CoresOf(g.cpus)) {
          g.cores.push_back(CoreL{c, ct.CpusInCore(c).Intersection(g.cpus).List()});
        }
        int n_cores = static_cast<int>(g.cores.size());
        g.cols = std::min(std::max(n_cores, 1), max_cols);
        g.rows = (n_cores + g.cols - 1) / g.cols;
        g.w = 2 * kGroupPad + g.cols * core_w + (g.cols - 1) * kCoreGap;
        g.h = kGroupHeader + g.rows * core_h + (g.rows - 1) * kCoreGap + kGroupPad;
        numa_inner_w = std::max(numa_inner_w, g.w);
        nl.groups.push_back(std::move(g));
      }
      sl.numas.push_back(std::move(nl));
    }
    sockets.push_back(std::move(sl));
  }
  std::vector<int> memory_only;
  for (const auto& n : topo.numa_nodes) {
    if (!numa_drawn.count(n.id)) memory_only.push_back(n.id);
  }
  const int numa_w = numa_inner_w + 2 * kNumaPad;

  // Devices: per NUMA id, and those without a (known) NUMA node.
  std::map<std::pair<std::string, std::string>, int> device_pod;
  for (size_t i = 0; i < pools.pods.size(); ++i) {
    if (!pools.pods[i].admitted) continue;
    for (const auto& c : pools.pods[i].containers) {
      for (const auto& [res, ids] : c.devices) {
        for (const auto& id : ids) device_pod.emplace(std::make_pair(res, id), static_cast<int>(i));
      }
    }
  }
  std::map<int, std::vector<size_t>> devices_on;  // NUMA id (-1 = none) -> device indexes
  for (size_t i = 0; i < topo.devices.size(); ++i) {
    int numa = topo.devices[i].numa;
    if (numa >= 0 && topo.FindNuma(numa) == nullptr && !numa_drawn.count(numa)) numa = -1;
    devices_on[numa].push_back(i);
  }
  // Lays out the device boxes of one area starting at (x, y) within width w; returns height.
  auto place_devices = [&](const std::vector<size_t>& idx, int x0, int y0, int w, bool place) {
    int x = x0, y = y0;
    for (size_t i : idx) {
      const Device& d = topo.devices[i];
      int bw = std::min(w, 8 + TextWidth(Shorten(d.id, 40)));
      if (x > x0 && x + bw > x0 + w) {
        x = x0;
        y += kDeviceH + kBarGap;
      }
      if (place) {
        PictureDevice pd;
        pd.resource = d.resource;
        pd.id = d.id;
        pd.numa = d.numa;
        auto it = device_pod.find({d.resource, d.id});
        pd.pod = it == device_pod.end() ? -1 : it->second;
        pd.fill = pd.pod >= 0 ? pic.pods[static_cast<size_t>(pd.pod)].color
                              : std::string(kUnassignedColor);
        pd.x = x;
        pd.y = y;
        pd.w = bw;
        pd.h = kDeviceH;
        pd.title = fmt::format("Device {} {} on {}\n{}", d.resource, d.id,
                               d.numa >= 0 ? fmt::format("NUMA {}", d.numa) : "no NUMA node",
                               pd.pod >= 0 ? "allocated to " + pic.pods[static_cast<size_t>(pd.pod)].namespace_name +
                                                 "/" + pic.pods[static_cast<size_t>(pd.pod)].name
                                           : "free");
        pic.devices.push_back(std::move(pd));
      }
      x += bw + kCoreGap;
    }
    return idx.empty() ? 0 : y - y0 + kDeviceH + kBarGap;
  };
  auto numa_extra_h = [&](int numa) {
    int h = static_cast<int>(BarsFor(topo, pools, numa).size()) * (kBarH + kBarGap);
    auto it = devices_on.find(numa);
    if (it != devices_on.end()) h += place_devices(it->second, 0, 0, numa_inner_w, false);
    return h;
  };
  for (auto& sl : sockets) {
    for (auto& nl : sl.numas) {
      nl.h = kNumaHeader;
      for (const auto& g : nl.groups) nl.h += g.h + kBarGap;
      if (nl.draws_memory) nl.h += numa_extra_h(nl.numa);
      nl.h += kNumaPad - kBarGap;
    }
  }

  // ---- layout: positions.
  const int cols_max = std::max<int>(1, std::min<int>(kNumaPerRow, [&] {
    size_t m = 1;
    for (const auto& sl : sockets) m = std::max(m, sl.numas.size());
    return static_cast<int>(m);
  }()));
  const int socket_w = 2 * kSocketPad + cols_max * numa_w + (cols_max - 1) * kSocketPad;
  int y = kMargin + 20 + (pic.subheading.empty() ? 8 : 24);
  std::vector<PictureCpu> cpus;
  auto draw_numa = [&](const NumaL& nl, int nx, int ny, int nh) {
    const NumaNode* info = topo.FindNuma(nl.numa);
    std::string dist;
    if (info != nullptr && !info->distances.empty()) {
      std::vector<std::string> ds;
      for (auto d : info->distances) ds.push_back(std::to_string(d));
      dist = "\ndistances: " + Join(ds, " ");
    }
    pic.boxes.push_back(PictureBox{
        "numa", nx, ny, numa_w, nh,
        nl.cpus.IsEmpty() ? fmt::format("NUMA {} (no CPUs)", nl.numa)
                          : fmt::format("NUMA {} \u00b7 CPUs {}", nl.numa, nl.cpus.String()),
        fmt::format("NUMA node {}\nCPUs: {}{}{}", nl.numa, CpuList(nl.cpus),
                    info != nullptr ? "\nmemory: " + HumanBytes(info->memory) : "", dist)});
    int gy = ny + kNumaHeader;
    const int gx = nx + kNumaPad;
    for (const auto& g : nl.groups) {
      pic.boxes.push_back(PictureBox{"l3", gx, gy, g.w, g.h, fmt::format("L3 {}", g.uncore),
                                     fmt::format("L3 (uncore) cache {}\nCPUs: {}", g.uncore,
                                                 g.cpus.String())});
      for (size_t k = 0; k < g.cores.size(); ++k) {
        const CoreL& c = g.cores[k];
        int cx = gx + kGroupPad + static_cast<int>(k % static_cast<size_t>(g.cols)) * (core_w + kCoreGap);
        int cy = gy + kGroupHeader + static_cast<int>(k / static_cast<size_t>(g.cols)) * (core_h + kCoreGap);
        std::vector<std::string> ts;
        for (int t : c.threads) ts.push_back(std::to_string(t));
        pic.boxes.push_back(PictureBox{"core", cx, cy, core_w, core_h, "",
                                       fmt::format("core {}: threads {}", c.core, Join(ts, ","))});
        for (size_t t = 0; t < c.threads.size(); ++t) {
          PictureCpu pc;
          pc.cpu = c.threads[t];
          pc.x = cx + kCorePad + static_cast<int>(t) * (kThreadW + kCorePad);
          pc.y = cy + kCorePad;
          pc.w = kThreadW;
          pc.h = kThreadH;
          pc.sample_x = pc.x + pc.w / 2;
          pc.sample_y = pc.y + pc.h * 3 / 4;
          std::string where = fmt::format("CPU {} \u00b7 socket {} \u00b7 NUMA {} \u00b7 L3 {} "
                                          "\u00b7 core {} (threads {})",
                                          pc.cpu, ct.Info(pc.cpu)->socket, nl.numa, g.uncore,
                                          c.core, Join(ts, ","));
          std::string what;
          auto it = owners.find(pc.cpu);
          if (!pools.with_allocations) {
            pc.owner = CpuOwner::kUnassigned;
            pc.fill = kUnassignedColor;
          } else if (it != owners.end() && it->second.kind != CpuOwner::kUnassigned) {
            pc.owner = it->second.kind;
            pc.pod = it->second.pod;
            const PicturePod& pp = pic.pods[static_cast<size_t>(pc.pod)];
            pc.fill = pp.color;
            std::string who = pp.namespace_name + "/" + pp.name;
            const auto& cs = it->second.containers;
            if (pc.owner == CpuOwner::kPodExclusive) {
              what = fmt::format("{}: exclusive to container{} {}", who, cs.size() > 1 ? "s" : "",
                                 Join(cs, ", "));
            } else {
              what = fmt::format("{}: the pod's shared pool{}", who,
                                 cs.empty() ? " (no container uses it now)"
                                            : " (containers " + Join(cs, ", ") + ")");
            }
          } else if (pools.reserved.Contains(pc.cpu)) {
            pc.owner = CpuOwner::kReserved;
            pc.fill = kReservedColor;
            what = pools.default_set.Contains(pc.cpu)
                       ? "reserved (reservedSystemCPUs); also in the default cpuset, where "
                         "shared-pool containers run"
                       : "reserved (reservedSystemCPUs)";
          } else if (pools.default_set.Contains(pc.cpu)) {
            pc.owner = CpuOwner::kNodeShared;
            pc.fill = kNodeSharedColor;
            what = "the node's shared pool (default cpuset)";
          } else {
            pc.owner = CpuOwner::kUnassigned;
            pc.fill = kUnassignedColor;
            what = "in no pool";
          }
          pc.title = what.empty() ? where : where + "\n" + what;
          cpus.push_back(std::move(pc));
        }
      }
      gy += g.h + kBarGap;
    }
    if (!nl.draws_memory) return;
    for (PictureBar b : BarsFor(topo, pools, nl.numa)) {
      b.x = gx;
      b.y = gy;
      b.w = numa_inner_w;
      b.h = kBarH;
      if (b.accounted && b.total > 0) {
        b.fill_w = static_cast<int>(std::min<uint64_t>(
            static_cast<uint64_t>(b.w), b.allocated * static_cast<uint64_t>(b.w) / b.total));
        b.label = fmt::format("{}: {} allocated of {} allocatable", b.type,
                              HumanBytes(b.allocated), HumanBytes(b.total));
        auto users = MemoryUsers(pools.pods, b.numa, b.type);
        const auto& view = pools.memory.at(b.numa).at(b.type);
        b.title = fmt::format("NUMA {} {}\nallocatable {}, allocated {}, free {}{}", b.numa,
                              b.type, HumanBytes(view.allocatable), HumanBytes(view.reserved),
                              HumanBytes(view.free),
                              users.empty() ? "" : "\n" + Join(users, "\n"));
      } else {
        b.label = fmt::format("{}: {}", b.type, HumanBytes(b.total));
        b.title = fmt::format("NUMA {} {}: {} capacity{}", b.numa, b.type, HumanBytes(b.total),
                              pools.with_allocations
                                  ? " (no Memory Manager accounting: policy None)"
                                  : "");
      }
      pic.bars.push_back(std::move(b));
      gy += kBarH + kBarGap;
    }
    auto it = devices_on.find(nl.numa);
    if (it != devices_on.end()) place_devices(it->second, gx, gy, numa_inner_w, true);
  };
  auto draw_grid = [&](const std::vector<NumaL>& numas, int x0, int y0, int cols) {
    int yy = y0;
    for (size_t r = 0; r < numas.size(); r += static_cast<size_t>(cols)) {
      int row_h = 0;
      for (size_t k = r; k < std::min(numas.size(), r + static_cast<size_t>(cols)); ++k) {
        row_h = std::max(row_h, numas[k].h);
      }
      for (size_t k = r; k < std::min(numas.size(), r + static_cast<size_t>(cols)); ++k) {
        draw_numa(numas[k], x0 + static_cast<int>(k - r) * (numa_w + kSocketPad), yy, row_h);
      }
      yy += row_h + kSocketPad;
    }
    return yy - y0;
  };
  // Sockets side by side while the page stays about kPageTargetW wide, else stacked.
  const int socket_cols = std::clamp((kPageTargetW + kMargin) / (socket_w + kMargin), 1,
                                     std::max<int>(1, static_cast<int>(sockets.size())));
  const int content_w = socket_cols * socket_w + (socket_cols - 1) * kMargin;
  for (size_t r = 0; r < sockets.size(); r += static_cast<size_t>(socket_cols)) {
    std::vector<size_t> row_boxes;
    int row_h = 0;
    for (size_t k = r; k < std::min(sockets.size(), r + static_cast<size_t>(socket_cols)); ++k) {
      const SocketL& sl = sockets[k];
      int sx = kMargin + static_cast<int>(k - r) * (socket_w + kMargin);
      row_boxes.push_back(pic.boxes.size());
      pic.boxes.push_back(PictureBox{"socket", sx, y, socket_w, 0,
                                     fmt::format("Socket {} \u00b7 CPUs {}", sl.socket,
                                                 ct.CpusInSocket(sl.socket).String()),
                                     fmt::format("Socket {}\nCPUs: {}", sl.socket,
                                                 ct.CpusInSocket(sl.socket).String())});
      row_h = std::max(row_h, kSocketHeader + draw_grid(sl.numas, sx + kSocketPad,
                                                        y + kSocketHeader, cols_max));
    }
    for (size_t b : row_boxes) pic.boxes[b].h = row_h;
    y += row_h + kMargin;
  }
  if (!memory_only.empty()) {
    std::vector<NumaL> numas;
    for (int n : memory_only) {
      NumaL nl;
      nl.numa = n;
      nl.draws_memory = true;
      nl.h = kNumaHeader + numa_extra_h(n) + kNumaPad - kBarGap;
      numas.push_back(std::move(nl));
    }
    size_t box = pic.boxes.size();
    pic.boxes.push_back(PictureBox{"memory-only", kMargin, y, content_w, 0,
                                   "NUMA nodes without CPUs",
                                   "NUMA nodes with memory but no CPUs"});
    int cols = std::max(1, (content_w - kSocketPad) / (numa_w + kSocketPad));
    int h = kSocketHeader + draw_grid(numas, kMargin + kSocketPad, y + kSocketHeader, cols);
    pic.boxes[box].h = h;
    y += h + kMargin;
  }
  if (auto it = devices_on.find(-1); it != devices_on.end()) {
    int inner = content_w - 2 * kSocketPad;
    int h = kSocketHeader + place_devices(it->second, 0, 0, inner, false) + kSocketPad;
    pic.boxes.push_back(PictureBox{"devices", kMargin, y, content_w, h,
                                   "Devices without NUMA affinity",
                                   "Device-plugin devices with no NUMA node"});
    place_devices(it->second, kMargin + kSocketPad, y + kSocketHeader, inner, true);
    y += h + kMargin;
  }
  std::sort(cpus.begin(), cpus.end(),
            [](const PictureCpu& a, const PictureCpu& b) { return a.cpu < b.cpu; });
  pic.cpus = std::move(cpus);

  // ---- legend.
  std::vector<LegendEntry> entries;
  if (!pools.with_allocations) {
    entries.push_back({std::string(kUnassignedColor), "CPU (hover for its socket, NUMA node, "
                                                      "L3 and core)",
                       "A logical CPU; this picture shows the hardware only", -1});
  } else {
    entries.push_back({std::string(kReservedColor),
                       "reserved CPUs: " + CpuList(pools.reserved),
                       "reservedSystemCPUs: kept for the system and the kubelet", -1});
    entries.push_back({std::string(kNodeSharedColor),
                       "node shared pool (default cpuset): " + CpuList(pools.default_set),
                       "The CPU Manager's default cpuset: where containers without exclusive "
                       "CPUs and outside any pod shared pool run. Reserved CPUs in it are "
                       "drawn as reserved.",
                       -1});
    for (size_t i = 0; i < pic.pods.size(); ++i) {
      const PicturePod& pp = pic.pods[i];
      int pod = static_cast<int>(i);
      if (!pp.admitted) {
        entries.push_back({"", pp.summary, pp.title, pod});
        continue;
      }
      bool any = false;
      if (!pp.exclusive.IsEmpty()) {
        entries.push_back({pp.color, pp.summary + " exclusive: " + pp.exclusive.String(),
                           pp.title, pod});
        any = true;
      }
      if (!pp.shared.IsEmpty()) {
        entries.push_back({fmt::format("hatch:{}", i),
                           pp.summary + " shared pool: " + pp.shared.String(), pp.title, pod});
        any = true;
      }
      if (!any) {
        entries.push_back({pp.color, pp.summary + ": no CPUs of its own (node shared pool)",
                           pp.title, pod});
      }
    }
  }
  entries.push_back({"bar", pools.with_allocations && !pools.memory.empty()
                                ? "memory bar: allocated part of the NUMA node's allocatable"
                                : "memory bar: the NUMA node's capacity",
                     "One bar per NUMA node and memory type (memory, hugepages)", -1});
  if (!topo.devices.empty()) {
    entries.push_back({"device", "device (in its pod's colour when allocated)",
                       "Device-plugin devices on their NUMA node", -1});
  }
  pic.legend_y = y;
  y += 20;
  // Wide enough for the content and the headings (15px bold / 11px text).
  const int width = std::max({content_w + 2 * kMargin, 700,
                              2 * kMargin + static_cast<int>(pic.heading.size()) * 9,
                              2 * kMargin + static_cast<int>(pic.subheading.size()) * 7});
  const int legend_cols = std::max(1, (width - 2 * kMargin) / kLegendColW);
  const int legend_rows =
      (static_cast<int>(entries.size()) + legend_cols - 1) / legend_cols;
  for (size_t i = 0; i < entries.size(); ++i) {
    int col = static_cast<int>(i) / legend_rows;
    int row = static_cast<int>(i) % legend_rows;
    entries[i].x = kMargin + col * kLegendColW;
    entries[i].y = y + row * kLegendRowH;
  }
  y += legend_rows * kLegendRowH + kMargin;
  pic.legend = std::move(entries);
  pic.width = width;
  pic.height = y;
  return pic;
}

// ---- SVG ------------------------------------------------------------------------------

std::string Title(const std::string& t) { return "<title>" + EscapeXml(t) + "</title>"; }

std::string Svg(const NodePicture& pic) {
  std::string o;
  o += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"DejaVu Sans, Liberation Sans, Arial, sans-serif\" font-size=\"10\">\n",
      pic.width, pic.height);
  o += Title(pic.heading) + "\n";
  o += "<defs>\n";
  for (size_t i = 0; i < pic.pods.size(); ++i) {
    if (pic.pods[i].color.empty()) continue;
    o += fmt::format(
        "<pattern id=\"hatch-{}\" class=\"pod-shared-hatch\" patternUnits=\"userSpaceOnUse\" "
        "width=\"6\" height=\"6\" patternTransform=\"rotate(45)\"><rect width=\"6\" "
        "height=\"6\" fill=\"{}\"/><rect width=\"3\" height=\"6\" fill=\"{}\"/></pattern>\n",
        i, kHatchBackground, pic.pods[i].color);
  }
  o += "</defs>\n";
  o += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
                   pic.width, pic.height);
  o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
                   kMargin, kMargin + 15, EscapeXml(pic.heading));
  if (!pic.subheading.empty()) {
    o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>\n", kMargin,
                     kMargin + 32, EscapeXml(pic.subheading));
  }
  for (const auto& b : pic.boxes) {
    const char* fill = "#ffffff";
    const char* stroke = "#666666";
    if (b.kind == "socket" || b.kind == "memory-only" || b.kind == "devices") {
      fill = "#f6f6f6";
      stroke = "#444444";
    } else if (b.kind == "l3") {
      fill = "#eaf0f6";
      stroke = "#9aa8b8";
    } else if (b.kind == "core") {
      fill = "#fbfbfb";
      stroke = "#b8b8b8";
    }
    o += fmt::format(
        "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
        "stroke=\"{}\">{}</rect>\n",
        b.kind, b.x, b.y, b.w, b.h, fill, stroke, Title(b.title));
    if (!b.label.empty()) {
      int size = b.kind == "l3" ? 9 : 11;
      int max_chars = std::max(4, (b.w - 8) / (b.kind == "l3" ? 5 : 6));
      o += fmt::format(
          "<text x=\"{}\" y=\"{}\" font-size=\"{}\"{} pointer-events=\"none\">{}</text>\n",
          b.x + 4, b.y + (b.kind == "l3" ? 10 : 13), size,
          b.kind == "l3" ? "" : " font-weight=\"bold\"",
          EscapeXml(Shorten(b.label, static_cast<size_t>(max_chars))));
    }
  }
  for (const auto& c : pic.cpus) {
    std::string fill = c.owner == CpuOwner::kPodShared ? fmt::format("url(#hatch-{})", c.pod)
                                                        : c.fill;
    o += fmt::format(
        "<rect class=\"cpu {}\" data-cpu=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
        "fill=\"{}\" stroke=\"#333333\" stroke-width=\"0.5\">{}</rect>\n",
        CpuOwnerName(c.owner), c.cpu, c.x, c.y, c.w, c.h, fill, Title(c.title));
    const bool hatched = c.owner == CpuOwner::kPodShared;
    if (hatched) {
      // The number of a hatched CPU stands on a plain plate: stripes behind digits make them
      // unreadable (issue 22 item 12.2). The lower half stays hatched.
      LabelPlate plate = LabelPlateOf(c);
      o += fmt::format(
          "<rect class=\"cpu-label\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\" "
          "fill=\"{}\" pointer-events=\"none\"/>\n",
          plate.x, plate.y, plate.w, plate.h, kLabelPlateColor);
    }
    o += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"9\" text-anchor=\"middle\" fill=\"{}\" "
        "pointer-events=\"none\">{}</text>\n",
        c.x + c.w / 2, c.y + 10, hatched ? "#000000" : TextColorOn(c.fill), c.cpu);
  }
  for (const auto& b : pic.bars) {
    o += fmt::format(
        "<g class=\"bar\">{}<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
        "stroke=\"#888888\"/>",
        Title(b.title), b.x, b.y, b.w, b.h, kBarBackground);
    if (b.fill_w > 0) {
      o += fmt::format("<rect class=\"allocated\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
                       "fill=\"{}\"/>",
                       b.x, b.y, b.fill_w, b.h, kAllocatedColor);
    }
    o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"9\" pointer-events=\"none\">{}</text>"
                     "</g>\n",
                     b.x + 4, b.y + 10, EscapeXml(Shorten(b.label, static_cast<size_t>(b.w / 5))));
  }
  for (const auto& d : pic.devices) {
    o += fmt::format(
        "<g class=\"device\">{}<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\" "
        "fill=\"{}\" stroke=\"#222222\"/><text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"{}\" "
        "pointer-events=\"none\">{}</text></g>\n",
        Title(d.title), d.x, d.y, d.w, d.h, d.fill, d.x + 4, d.y + 12, TextColorOn(d.fill),
        EscapeXml(Shorten(d.id, 40)));
  }
  o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" font-weight=\"bold\">Legend</text>\n",
                   kMargin, pic.legend_y + 13);
  for (const auto& e : pic.legend) {
    o += fmt::format("<g class=\"legend{}\">{}", e.pod >= 0 ? " pod" : "", Title(e.title));
    int sx = e.x, sy = e.y + 2;
    if (e.swatch == "bar") {
      o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"12\" fill=\"{}\" "
                       "stroke=\"#888888\"/><rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" "
                       "fill=\"{}\"/>",
                       sx, sy, kBarBackground, sx, sy, kAllocatedColor);
    } else if (e.swatch == "device") {
      o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"12\" rx=\"3\" "
                       "fill=\"#ffffff\" stroke=\"#222222\"/>",
                       sx, sy);
    } else if (e.swatch.rfind("hatch:", 0) == 0) {
      o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"12\" "
                       "fill=\"url(#hatch-{})\" stroke=\"#333333\"/>",
                       sx, sy, e.swatch.substr(6));
    } else if (!e.swatch.empty()) {
      o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"12\" fill=\"{}\" "
                       "stroke=\"#333333\"/>",
                       sx, sy, e.swatch);
    }
    o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text></g>\n", sx + 30, sy + 10,
                     EscapeXml(Shorten(e.text, kLegendTextMax)));
  }
  o += "</svg>\n";
  return o;
}

std::string SwatchStyle(const PicturePod& pp, bool hatch) {
  if (hatch) {
    return fmt::format("background:repeating-linear-gradient(45deg,{0} 0 3px,{1} 3px 6px)",
                       pp.color, kHatchBackground);
  }
  return "background:" + pp.color;
}

}  // namespace

const char* CpuOwnerName(CpuOwner owner) {
  switch (owner) {
    case CpuOwner::kUnassigned: return "unassigned";
    case CpuOwner::kReserved: return "reserved";
    case CpuOwner::kNodeShared: return "node-shared";
    case CpuOwner::kPodExclusive: return "pod-exclusive";
    case CpuOwner::kPodShared: return "pod-shared";
  }
  return "unassigned";
}

const PictureCpu* NodePicture::FindCpu(int cpu) const {
  auto it = std::lower_bound(cpus.begin(), cpus.end(), cpu,
                             [](const PictureCpu& c, int id) { return c.cpu < id; });
  return it != cpus.end() && it->cpu == cpu ? &*it : nullptr;
}

NodePicture BuildTopologyPicture(const NodeTopology& topology) {
  return BuildPicture(topology, Pools{});
}

NodePicture BuildNodePicture(const Node& node, const std::vector<PodAllocation>& pods) {
  Pools pools;
  pools.with_allocations = true;
  pools.default_set = node.DefaultCpuSet();
  pools.reserved = node.ReservedCpus();
  pools.memory = node.MemoryTables();
  pools.pods = pods;
  const auto& cfg = node.config();
  pools.subheading = fmt::format(
      "cpuManagerPolicy {}, memoryManagerPolicy {}, topologyManagerPolicy {}, scope {}; {} "
      "pod{}",
      cfg.cpu_manager_policy, cfg.memory_manager_policy, cfg.topology_manager_policy,
      cfg.topology_manager_scope, pods.size(), pods.size() == 1 ? "" : "s");
  return BuildPicture(node.topology(), pools);
}

NodePicture BuildObservedPicture(const NodeTopology& topology, const ObservedNode& observed) {
  Pools pools;
  pools.with_allocations = true;
  pools.default_set = observed.default_set;
  pools.reserved = observed.reserved;
  pools.memory = observed.memory;
  pools.pods = observed.pods;
  pools.subheading = observed.subheading;
  return BuildPicture(topology, pools);
}

std::string RenderSvg(const NodePicture& picture) { return Svg(picture); }

std::string RenderHtml(const NodePicture& pic) {
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  o += "<title>podtopo: " + EscapeXml(pic.heading) + "</title>\n";
  o += "<style>\n"
       "body{font-family:\"DejaVu Sans\",\"Liberation Sans\",Arial,sans-serif;margin:16px;"
       "color:#222}\n"
       "h1{font-size:18px}h2{font-size:15px;margin-top:20px}\n"
       "table{border-collapse:collapse}\n"
       "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;"
       "font-size:13px}\n"
       "th{background:#f0f0f0}\n"
       ".sw{display:inline-block;width:24px;height:12px;border:1px solid #333;"
       "vertical-align:middle;margin-right:4px}\n"
       ".picture{overflow:auto}\n"
       "svg rect.cpu:hover{stroke:#000;stroke-width:2}\n"
       "pre{margin:0;font-size:12px}\n"
       "</style>\n</head>\n<body>\n";
  // The SVG carries the heading; the page adds the hint, the pod table and a footnote.
  o += "<p>Hover a CPU, a box, a memory bar, a device or a pod for details.</p>\n";
  o += "<div class=\"picture\">\n" + Svg(pic) + "</div>\n";
  if (pic.with_allocations) {
    o += "<h2>Pods</h2>\n";
    if (pic.pods.empty()) {
      o += "<p>No pods.</p>\n";
    } else {
      o += "<table>\n<tr><th>colour</th><th>pod</th><th>details</th></tr>\n";
      for (const auto& pp : pic.pods) {
        std::string sw;
        if (pp.admitted) {
          if (!pp.exclusive.IsEmpty() || pp.shared.IsEmpty()) {
            sw += "<span class=\"sw\" style=\"" + SwatchStyle(pp, false) + "\"></span>";
          }
          if (!pp.shared.IsEmpty()) {
            sw += "<span class=\"sw\" style=\"" + SwatchStyle(pp, true) + "\"></span>";
          }
        }
        o += "<tr><td>" + sw + "</td><td>" + EscapeXml(pp.namespace_name + "/" + pp.name) +
             "</td><td><pre>" + EscapeXml(pp.title) + "</pre></td></tr>\n";
      }
      o += "</table>\n";
    }
  }
  o += "<p>Made by podtopo. Solid: exclusive CPUs of a pod's containers; hatched: a pod's "
       "shared pool; light grey: the node's shared pool; dark grey: reserved CPUs.</p>\n";
  o += "</body>\n</html>\n";
  return o;
}

std::string EscapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const std::string_view kReplacement = "\xEF\xBF\xBD";
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        case '\t':
        case '\n': out += static_cast<char>(c); break;
        default:
          if (c < 0x20 || c == 0x7f) {
            out += kReplacement;
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    // A multi-byte UTF-8 sequence: copy it when well formed, else one replacement per byte.
    size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    bool ok = len > 0 && i + len <= text.size();
    uint32_t cp = len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; ok && k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(text[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (ok) {
      ok = (len == 3 && cp >= 0x800 && !(cp >= 0xD800 && cp <= 0xDFFF) && cp != 0xFFFE &&
            cp != 0xFFFF) ||
           (len == 4 && cp >= 0x10000 && cp <= 0x10FFFF) || len == 2;
    }
    if (ok) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += kReplacement;
      ++i;
    }
  }
  return out;
}

std::string PodBaseColor(const std::string& namespace_name, const std::string& name) {
  return kPalette[Fnv1a(namespace_name + "/" + name) % kPaletteSize];
}

}  // namespace podtopo
