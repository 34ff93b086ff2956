#include "topology/presets.h"

#include <functional>
#include <map>

#include "fmt/format.h"

namespace podtopo {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// topoQuadSocketFourWayHT (a Xeon Phi KNL in SNC4 mode per the test's comment): CPU i ->
// {core, socket}; NUMA node = socket, uncore 0. Core ids are irregular (not the lowest
// thread), as in the Go literal.
constexpr int kQuadSocketFourWayHT[288][2] = {
    {0, 0}, {64, 0}, {65, 0}, {66, 1}, {67, 1}, {68, 2}, {69, 2}, {70, 3}, {71, 3}, {72, 0}, {73, 0}, {74, 1},
    {75, 1}, {64, 0}, {65, 0}, {66, 1}, {67, 1}, {68, 2}, {69, 2}, {70, 3}, {71, 3}, {72, 0}, {73, 0}, {74, 1},
    {75, 1}, {64, 0}, {65, 0}, {66, 1}, {67, 1}, {68, 2}, {69, 2}, {70, 3}, {71, 3}, {72, 0}, {73, 0}, {74, 1},
    {75, 1}, {63, 3}, {64, 0}, {65, 0}, {66, 1}, {67, 1}, {68, 2}, {69, 2}, {70, 3}, {71, 3}, {72, 0}, {73, 0},
    {74, 1}, {75, 1}, {1, 0}, {2, 1}, {3, 1}, {4, 2}, {5, 2}, {6, 3}, {7, 3}, {8, 0}, {9, 0}, {10, 1},
    {11, 1}, {12, 2}, {13, 2}, {14, 3}, {15, 3}, {18, 1}, {19, 1}, {20, 2}, {21, 2}, {22, 3}, {23, 3}, {24, 0},
    {25, 0}, {26, 1}, {27, 1}, {28, 2}, {29, 2}, {30, 3}, {31, 3}, {32, 0}, {33, 0}, {34, 1}, {35, 1}, {36, 2},
    {37, 2}, {38, 3}, {39, 3}, {40, 0}, {41, 0}, {42, 1}, {43, 1}, {44, 2}, {45, 2}, {46, 3}, {47, 3}, {48, 0},
    {49, 0}, {50, 1}, {51, 1}, {52, 2}, {53, 2}, {54, 3}, {55, 3}, {56, 0}, {57, 0}, {60, 2}, {61, 2}, {62, 3},
    {63, 3}, {0, 0}, {1, 0}, {2, 1}, {3, 1}, {4, 2}, {5, 2}, {6, 3}, {7, 3}, {8, 0}, {9, 0}, {10, 1},
    {11, 1}, {12, 2}, {13, 2}, {14, 3}, {15, 3}, {18, 1}, {19, 1}, {20, 2}, {21, 2}, {22, 3}, {23, 3}, {24, 0},
    {25, 0}, {26, 1}, {27, 1}, {28, 2}, {29, 2}, {30, 3}, {31, 3}, {32, 0}, {33, 0}, {34, 1}, {35, 1}, {36, 2},
    {37, 2}, {38, 3}, {39, 3}, {40, 0}, {41, 0}, {42, 1}, {43, 1}, {44, 2}, {45, 2}, {46, 3}, {47, 3}, {48, 0},
    {49, 0}, {50, 1}, {51, 1}, {52, 2}, {53, 2}, {54, 3}, {55, 3}, {56, 0}, {57, 0}, {60, 2}, {61, 2}, {62, 3},
    {63, 3}, {0, 0}, {1, 0}, {2, 1}, {3, 1}, {4, 2}, {5, 2}, {6, 3}, {7, 3}, {8, 0}, {9, 0}, {10, 1},
    {11, 1}, {12, 2}, {13, 2}, {14, 3}, {15, 3}, {18, 1}, {19, 1}, {20, 2}, {21, 2}, {22, 3}, {23, 3}, {24, 0},
    {25, 0}, {26, 1}, {27, 1}, {28, 2}, {29, 2}, {30, 3}, {31, 3}, {32, 0}, {33, 0}, {34, 1}, {35, 1}, {36, 2},
    {37, 2}, {38, 3}, {39, 3}, {40, 0}, {41, 0}, {42, 1}, {43, 1}, {44, 2}, {45, 2}, {46, 3}, {47, 3}, {48, 0},
    {49, 0}, {50, 1}, {51, 1}, {52, 2}, {53, 2}, {54, 3}, {55, 3}, {56, 0}, {57, 0}, {60, 2}, {61, 2}, {62, 3},
    {63, 3}, {0, 0}, {1, 0}, {2, 1}, {3, 1}, {4, 2}, {5, 2}, {6, 3}, {7, 3}, {8, 0}, {9, 0}, {10, 1},
    {11, 1}, {12, 2}, {13, 2}, {14, 3}, {15, 3}, {18, 1}, {19, 1}, {20, 2}, {21, 2}, {22, 3}, {23, 3}, {24, 0},
    {25, 0}, {26, 1}, {27, 1}, {28, 2}, {29, 2}, {30, 3}, {31, 3}, {32, 0}, {33, 0}, {34, 1}, {35, 1}, {36, 2},
    {37, 2}, {38, 3}, {39, 3}, {40, 0}, {41, 0}, {42, 1}, {43, 1}, {44, 2}, {45, 2}, {46, 3}, {47, 3}, {48, 0},
    {49, 0}, {50, 1}, {51, 1}, {52, 2}, {53, 2}, {54, 3}, {55, 3}, {56, 0}, {57, 0}, {60, 2}, {61, 2}, {62, 3},
};

// Adds NUMA nodes 0..n-1 with `memory` bytes each and distance(i, j).
void AddNumaNodes(NodeTopology& node, int n, uint64_t memory,
                  const std::function<uint64_t(int, int)>& distance) {
  for (int i = 0; i < n; ++i) {
    NumaNode numa{.id = i, .memory = memory, .hugepages = {}, .distances = {}};
    for (int j = 0; j < n; ++j) numa.distances.push_back(distance(i, j));
    node.numa_nodes.push_back(std::move(numa));
  }
}

uint64_t TenTwenty(int i, int j) { return i == j ? 10 : 20; }

// cores c = 0..cores-1 with threads c, c + cores, ... (threads of them); info(c) gives the
// core's NUMA node, socket and uncore; core id = c (its lowest thread).
NodeTopology Regular(int cores, int threads, const std::function<CpuInfo(int)>& info) {
  NodeTopology node;
  for (int c = 0; c < cores; ++c) {
    CpuInfo i = info(c);
    i.core = c;
    for (int t = 0; t < threads; ++t) node.cpus.AddCpu(c + t * cores, i);
  }
  node.cpus.SetCountsFromCpus();
  return node;
}

NodeTopology Demo() {
  NodeTopology node = Regular(32, 2, [](int c) {
    return CpuInfo{.numa = c / 8, .socket = c / 16, .core = 0, .uncore = c / 8};
  });
  AddNumaNodes(node, 4, 16 * kGiB, [](int i, int j) -> uint64_t {
    return i == j ? 10 : (i / 2 == j / 2 ? 11 : 21);
  });
  return node;
}

NodeTopology SingleSocketHT() {
  // topoSingleSocketHT: CPU c is core c % 4.
  NodeTopology node = Regular(4, 2, [](int) { return CpuInfo{}; });
  AddNumaNodes(node, 1, 16 * kGiB, TenTwenty);
  return node;
}

NodeTopology DualSocketHT() {
  // topoDualSocketHT: CPU c is core c % 6 on socket (and NUMA node) c % 2.
  NodeTopology node = Regular(6, 2, [](int c) {
    return CpuInfo{.numa = c % 2, .socket = c % 2, .core = 0, .uncore = 0};
  });
  AddNumaNodes(node, 2, 16 * kGiB, TenTwenty);
  return node;
}

NodeTopology DualSocketNoHT() {
  // topoDualSocketNoHT: CPUs 0-3 on socket 0, 4-7 on socket 1.
  NodeTopology node = Regular(8, 1, [](int c) {
    return CpuInfo{.numa = c / 4, .socket = c / 4, .core = 0, .uncore = 0};
  });
  AddNumaNodes(node, 2, 16 * kGiB, TenTwenty);
  return node;
}

NodeTopology DualSocketMultiNumaPerSocketHT() {
  // topoDualSocketMultiNumaPerSocketHT (dual Xeon Gold 6230): core c = CPUs c and c+40,
  // socket c / 20, NUMA node c / 10.
  NodeTopology node = Regular(40, 2, [](int c) {
    return CpuInfo{.numa = c / 10, .socket = c / 20, .core = 0, .uncore = 0};
  });
  AddNumaNodes(node, 4, 16 * kGiB, TenTwenty);
  return node;
}

NodeTopology QuadSocketFourWayHT() {
  NodeTopology node;
  for (int cpu = 0; cpu < 288; ++cpu) {
    int socket = kQuadSocketFourWayHT[cpu][1];
    node.cpus.AddCpu(cpu, CpuInfo{.numa = socket, .socket = socket,
                                  .core = kQuadSocketFourWayHT[cpu][0], .uncore = 0});
  }
  node.cpus.SetCountsFromCpus();
  AddNumaNodes(node, 4, 16 * kGiB, TenTwenty);
  return node;
}

NodeTopology T256() {
  NodeTopology node = Regular(128, 2, [](int c) {
    return CpuInfo{.numa = c / 16, .socket = c / 64, .core = 0, .uncore = c / 16};
  });
  AddNumaNodes(node, 8, 16 * kGiB, [](int i, int j) -> uint64_t {
    return i == j ? 10 : (i / 4 == j / 4 ? 11 : 21);
  });
  return node;
}

NodeTopology Numa34() {
  NodeTopology node = Regular(72, 2, [](int c) {
    return CpuInfo{.numa = c / 36, .socket = c / 36, .core = 0, .uncore = c / 36};
  });
  // Side of a NUMA node: its socket for 0-1, the socket it hangs off for 2-33.
  auto side = [](int n) { return n < 2 ? n : (n - 2) / 16; };
  AddNumaNodes(node, 34, 16 * kGiB, [&](int i, int j) -> uint64_t {
    if (i == j) return 10;
    bool same = side(i) == side(j);
    if (i < 2 && j < 2) return 21;
    if (i < 2 || j < 2) return same ? 14 : 24;
    return same ? 16 : 26;
  });
  node.numa_nodes[0].memory = 64 * kGiB;
  node.numa_nodes[1].memory = 64 * kGiB;
  return node;
}

// GB200 compute tray (k/k #135541's machine; NVIDIA GB200 NVL72 compute trays: two Grace CPUs
// of 72 Neoverse V2 cores without SMT, each with LPDDR5X, two Blackwell GPUs per Grace whose
// HBM shows up as memory-only NUMA nodes): NUMA 0-1 the Graces (480 GiB each), NUMA 2-33 GPU
// memory (8 nodes per GPU, 23 GiB each; 2-17 on Grace 0's GPUs, 18-33 on Grace 1's);
// nvidia.com/gpu gpu0-gpu1 on NUMA 0, gpu2-gpu3 on NUMA 1.
NodeTopology Gb200() {
  NodeTopology node = Regular(144, 1, [](int c) {
    return CpuInfo{.numa = c / 72, .socket = c / 72, .core = 0, .uncore = c / 72};
  });
  auto side = [](int n) { return n < 2 ? n : (n - 2) / 16; };
  AddNumaNodes(node, 34, 23 * kGiB, [&](int i, int j) -> uint64_t {
    if (i == j) return 10;
    if (i < 2 && j < 2) return 40;
    bool same = side(i) == side(j);
    if (i < 2 || j < 2) return same ? 80 : 120;
    return same ? 80 : 120;
  });
  node.numa_nodes[0].memory = 480 * kGiB;
  node.numa_nodes[1].memory = 480 * kGiB;
  for (int g = 0; g < 4; ++g) {
    node.devices.push_back(Device{"nvidia.com/gpu", "gpu" + std::to_string(g), g / 2});
  }
  return node;
}

// The Topology Manager's limit (NUMA ids 0..63): 4 sockets x 16 NUMA nodes, 4 cores x 2 threads
// per NUMA node (CPU c and c+256 are one core), 8 GiB per node, distances 10 local, 12 same
// socket, 32 other socket; example.com/gpu gpu0-gpu7 on NUMA 0, 8, ..., 56.
NodeTopology Numa64() {
  NodeTopology node = Regular(256, 2, [](int c) {
    return CpuInfo{.numa = c / 4, .socket = c / 64, .core = 0, .uncore = c / 4};
  });
  AddNumaNodes(node, 64, 8 * kGiB, [](int i, int j) -> uint64_t {
    return i == j ? 10 : (i / 16 == j / 16 ? 12 : 32);
  });
  for (int g = 0; g < 8; ++g) {
    node.devices.push_back(Device{"example.com/gpu", "gpu" + std::to_string(g), g * 8});
  }
  return node;
}

const std::map<std::string, NodeTopology (*)()>& Registry() {
  static const auto* registry = new std::map<std::string, NodeTopology (*)()>{
      {"demo", Demo},
      {"single-socket-ht", SingleSocketHT},
      {"dual-socket-ht", DualSocketHT},
      {"dual-socket-no-ht", DualSocketNoHT},
      {"dual-socket-multi-numa-per-socket-ht", DualSocketMultiNumaPerSocketHT},
      {"quad-socket-four-way-ht", QuadSocketFourWayHT},
      {"t256", T256},
      {"numa34", Numa34},
      {"gb200", Gb200},
      {"numa64", Numa64},
  };
  return *registry;
}

}  // namespace

std::vector<std::string> PresetNames() {
  std::vector<std::string> names;
  for (const auto& [name, _] : Registry()) names.push_back(name);
  return names;
}

absl::StatusOr<NodeTopology> Preset(const std::string& name) {
  auto it = Registry().find(name);
  if (it == Registry().end()) {
    std::string known;
    for (const auto& n : PresetNames()) known += (known.empty() ? "" : ", ") + n;
    return absl::NotFoundError(fmt::format("unknown preset \"{}\" (known: {})", name, known));
  }
  NodeTopology node = it->second();
  node.source = "preset:" + name;
  return node;
}

}  // namespace podtopo
