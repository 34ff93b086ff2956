#include "render/node_picture.h"

#include <algorithm>
#include <set>

#include "api/pod_yaml.h"
#include "config/kubelet_config.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "render/node_picture_test_util.h"
#include "topology/presets.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

const PodAllocation& FindPod(const std::vector<PodAllocation>& pods, const std::string& name) {
  for (const auto& p : pods) {
    if (p.name == name) return p;
  }
  ADD_FAILURE() << "no pod " << name;
  return pods.front();
}

int PodIndex(const NodePicture& pic, const std::string& name) {
  for (size_t i = 0; i < pic.pods.size(); ++i) {
    if (pic.pods[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

class BigNodePicture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto scene = testutil::BigScene();
    ASSERT_TRUE(scene.ok()) << scene.status();
    scene_ = std::move(*scene);
    pods_ = scene_.node->AdmittedPods();
    pic_ = BuildNodePicture(*scene_.node, pods_);
    svg_ = RenderSvg(pic_);
  }
  testutil::Scene scene_;
  std::vector<PodAllocation> pods_;
  NodePicture pic_;
  std::string svg_;
};

TEST_F(BigNodePicture, EveryCpuOnceWithATitle) {
  ASSERT_EQ(pic_.cpus.size(), 256u);
  for (int cpu = 0; cpu < 256; ++cpu) {
    const PictureCpu* c = pic_.FindCpu(cpu);
    ASSERT_NE(c, nullptr) << cpu;
    EXPECT_THAT(c->title, HasSubstr(fmt::format("CPU {} ", cpu)));
    // One rect per CPU in the SVG, its <title> right inside it.
    std::string tag = fmt::format("data-cpu=\"{}\"", cpu);
    ASSERT_EQ(Count(svg_, tag), 1u) << cpu;
    size_t at = svg_.find(tag);
    size_t end = svg_.find("</rect>", at);
    EXPECT_NE(svg_.substr(at, end - at).find("<title>CPU "), std::string::npos) << cpu;
  }
}

TEST_F(BigNodePicture, ColoursFollowTheOwners) {
  const CpuSet reserved = scene_.node->ReservedCpus();
  ASSERT_FALSE(reserved.IsEmpty());
  reserved.ForEach([&](int cpu) {
    EXPECT_EQ(pic_.FindCpu(cpu)->owner, CpuOwner::kReserved) << cpu;
    EXPECT_EQ(pic_.FindCpu(cpu)->fill, kReservedColor) << cpu;
  });
  const CpuSet shared_pool = scene_.node->DefaultCpuSet().Difference(reserved);
  ASSERT_FALSE(shared_pool.IsEmpty());
  shared_pool.ForEach([&](int cpu) {
    EXPECT_EQ(pic_.FindCpu(cpu)->owner, CpuOwner::kNodeShared) << cpu;
    EXPECT_EQ(pic_.FindCpu(cpu)->fill, kNodeSharedColor) << cpu;
  });
  std::set<std::string> colours;
  for (const auto& p : pods_) {
    int index = PodIndex(pic_, p.name);
    ASSERT_GE(index, 0);
    const std::string& colour = pic_.pods[static_cast<size_t>(index)].color;
    EXPECT_NE(colour, kReservedColor);
    EXPECT_NE(colour, kNodeSharedColor);
    EXPECT_TRUE(colours.insert(colour).second) << "two pods share " << colour;
    CpuSet exclusive;
    for (const auto& c : p.containers) {
      if (c.assignment == "pod_exclusive" || c.assignment == "node_exclusive") {
        exclusive.UnionWith(c.cpus);
      }
    }
    exclusive.ForEach([&](int cpu) {
      EXPECT_EQ(pic_.FindCpu(cpu)->owner, CpuOwner::kPodExclusive) << p.name << " " << cpu;
      EXPECT_EQ(pic_.FindCpu(cpu)->fill, colour) << cpu;
      EXPECT_EQ(pic_.FindCpu(cpu)->pod, index);
    });
    p.cpus.Difference(exclusive).ForEach([&](int cpu) {
      EXPECT_EQ(pic_.FindCpu(cpu)->owner, CpuOwner::kPodShared) << p.name << " " << cpu;
      EXPECT_EQ(pic_.FindCpu(cpu)->pod, index);
    });
  }
  // The scene has each kind of owner.
  std::set<CpuOwner> kinds;
  for (const auto& c : pic_.cpus) kinds.insert(c.owner);
  EXPECT_EQ(kinds, (std::set<CpuOwner>{CpuOwner::kReserved, CpuOwner::kNodeShared,
                                        CpuOwner::kPodExclusive, CpuOwner::kPodShared}));
}

TEST_F(BigNodePicture, PodSharedPoolIsHatchedInThePodsColour) {
  const PodAllocation& mixed = FindPod(pods_, "pod-scope-mixed");
  int index = PodIndex(pic_, "pod-scope-mixed");
  const PicturePod& pp = pic_.pods[static_cast<size_t>(index)];
  ASSERT_FALSE(pp.shared.IsEmpty());
  EXPECT_EQ(pp.shared.Size(), 2);  // 4-CPU bubble, 2 exclusive to main-app
  EXPECT_TRUE(pp.shared.IsSubsetOf(mixed.cpus));
  std::string pattern = fmt::format("<pattern id=\"hatch-{}\"", index);
  size_t at = svg_.find(pattern);
  ASSERT_NE(at, std::string::npos);
  std::string def = svg_.substr(at, svg_.find("</pattern>", at) - at);
  EXPECT_THAT(def, HasSubstr(fmt::format("fill=\"{}\"", pp.color)));
  EXPECT_THAT(def, HasSubstr("patternTransform=\"rotate(45)\""));
  pp.shared.ForEach([&](int cpu) {
    std::string tag = fmt::format("data-cpu=\"{}\"", cpu);
    size_t r = svg_.find(tag);
    std::string rect = svg_.substr(r, svg_.find('>', r) - r);
    EXPECT_THAT(rect, HasSubstr(fmt::format("fill=\"url(#hatch-{})\"", index)));
    EXPECT_THAT(pic_.FindCpu(cpu)->title, HasSubstr("pod-scope-mixed: the pod's shared pool"));
    EXPECT_THAT(pic_.FindCpu(cpu)->title, HasSubstr("metrics-sidecar"));
  });
}

// Issue 22 item 12.2: a hatched CPU's number stands on a plain plate, drawn after the hatched
// rectangle and before the number, wide enough for the digits and inside the upper half (the
// lower half stays hatched; the screenshot test checks the pixels).
TEST_F(BigNodePicture, HatchedCpuNumbersStandOnAPlainPlate) {
  int hatched = 0;
  for (const PictureCpu& c : pic_.cpus) {
    std::string tag = fmt::format("data-cpu=\"{}\"", c.cpu);
    size_t r = svg_.find(tag);
    ASSERT_NE(r, std::string::npos) << c.cpu;
    size_t next_cpu = svg_.find("class=\"cpu ", r + 1);
    std::string cell = svg_.substr(r, next_cpu == std::string::npos ? std::string::npos
                                                                     : next_cpu - r);
    size_t plate = cell.find("class=\"cpu-label\"");
    if (c.owner != CpuOwner::kPodShared) {
      EXPECT_EQ(plate, std::string::npos) << "CPU " << c.cpu << " is not hatched";
      continue;
    }
    ++hatched;
    ASSERT_NE(plate, std::string::npos) << "hatched CPU " << c.cpu << " has no plate";
    size_t number = cell.find(fmt::format(">{}</text>", c.cpu));
    ASSERT_NE(number, std::string::npos);
    EXPECT_LT(plate, number) << "the plate is drawn over the number of CPU " << c.cpu;
    LabelPlate p = LabelPlateOf(c);
    EXPECT_THAT(cell, HasSubstr(fmt::format("x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"",
                                            p.x, p.y, p.w, p.h)));
    EXPECT_THAT(cell.substr(plate), HasSubstr(fmt::format("fill=\"{}\"", kLabelPlateColor)));
    EXPECT_GE(p.w, static_cast<int>(std::to_string(c.cpu).size()) * 6);
    EXPECT_GE(p.x, c.x);
    EXPECT_LE(p.x + p.w, c.x + c.w);
    EXPECT_LE(p.y + p.h, c.y + c.h / 2);  // the lower half shows the hatch
    EXPECT_LT(p.y + p.h, c.sample_y);
  }
  EXPECT_GT(hatched, 0);
}

TEST_F(BigNodePicture, LegendNamesEveryOwnerAndPod) {
  EXPECT_THAT(svg_, HasSubstr(">Legend</text>"));
  std::vector<std::string> texts;
  for (const auto& e : pic_.legend) texts.push_back(e.text);
  auto has = [&](const std::string& s) {
    return std::any_of(texts.begin(), texts.end(),
                       [&](const std::string& t) { return t.find(s) != std::string::npos; });
  };
  EXPECT_TRUE(has("reserved CPUs: " + scene_.node->ReservedCpus().String()));
  EXPECT_TRUE(has("node shared pool (default cpuset): " +
                  scene_.node->DefaultCpuSet().String()));
  for (const auto& p : pods_) EXPECT_TRUE(has("default/" + p.name)) << p.name;
  EXPECT_TRUE(has("shared pool: "));
  EXPECT_TRUE(has("memory bar"));
  EXPECT_TRUE(has("device"));
  // Each pod entry carries the pod's hover title.
  EXPECT_EQ(Count(svg_, "<g class=\"legend pod\"><title>Pod default/"),
            static_cast<size_t>(std::count_if(pic_.legend.begin(), pic_.legend.end(),
                                              [](const LegendEntry& e) { return e.pod >= 0; })));
}

TEST_F(BigNodePicture, MemoryBarsPerNumaFromTheMemoryManager) {
  auto tables = scene_.node->MemoryTables();
  ASSERT_EQ(tables.size(), 8u);
  size_t expected = 0;
  for (const auto& [numa, types] : tables) expected += types.size();
  ASSERT_EQ(pic_.bars.size(), expected);
  EXPECT_EQ(Count(svg_, "<g class=\"bar\">"), expected);
  bool some_allocated = false;
  for (const auto& b : pic_.bars) {
    const auto& view = tables.at(b.numa).at(b.type);
    EXPECT_TRUE(b.accounted);
    EXPECT_EQ(b.total, view.allocatable);
    EXPECT_EQ(b.allocated, view.reserved);
    EXPECT_LE(b.fill_w, b.w);
    if (view.reserved > 0) {
      some_allocated = true;
      EXPECT_GT(b.fill_w, 0) << b.numa << " " << b.type;
      EXPECT_THAT(b.title, HasSubstr("default/"));  // who uses it
    } else {
      EXPECT_EQ(b.fill_w, 0);
    }
  }
  EXPECT_TRUE(some_allocated);
  // Hugepages bars exist (the scene gives each NUMA node 2Mi pages).
  EXPECT_TRUE(std::any_of(pic_.bars.begin(), pic_.bars.end(),
                          [](const PictureBar& b) { return b.type == "hugepages-2Mi"; }));
}

TEST_F(BigNodePicture, DevicesSitOnTheirNumaNodeInTheirPodsColour) {
  ASSERT_EQ(pic_.devices.size(), scene_.node->topology().devices.size());
  int allocated = 0;
  for (const auto& d : pic_.devices) {
    const PictureBox* numa_box = nullptr;
    for (const auto& b : pic_.boxes) {
      if (b.kind == "numa" && b.label.rfind(fmt::format("NUMA {} ", d.numa), 0) == 0) {
        numa_box = &b;
      }
    }
    ASSERT_NE(numa_box, nullptr) << d.id;
    EXPECT_GE(d.x, numa_box->x);
    EXPECT_LE(d.x + d.w, numa_box->x + numa_box->w);
    EXPECT_GE(d.y, numa_box->y);
    EXPECT_LE(d.y + d.h, numa_box->y + numa_box->h);
    if (d.pod >= 0) {
      ++allocated;
      EXPECT_EQ(d.fill, pic_.pods[static_cast<size_t>(d.pod)].color);
      EXPECT_THAT(d.title, HasSubstr("allocated to default/gpu-job"));
    }
  }
  EXPECT_EQ(allocated, 1);
}

// Readable at 256 CPUs and 8 NUMA nodes: cells big enough for their number, none overlapping,
// each inside its core, group, NUMA node and socket; the page fits a large screen.
TEST_F(BigNodePicture, ReadableAt256Cpus) {
  EXPECT_LE(pic_.width, 1400);
  EXPECT_LE(pic_.height, 1400);
  for (const auto& c : pic_.cpus) {
    EXPECT_GE(c.w, 24);
    EXPECT_GE(c.h, 20);
    EXPECT_GT(c.sample_y, c.y + c.h / 2);  // below the number
    EXPECT_LT(c.sample_y, c.y + c.h);
  }
  for (size_t i = 1; i < pic_.cpus.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const auto& a = pic_.cpus[i];
      const auto& b = pic_.cpus[j];
      bool apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
      ASSERT_TRUE(apart) << a.cpu << " overlaps " << b.cpu;
    }
  }
  const CpuTopology& ct = scene_.node->topology().cpus;
  for (const auto& c : pic_.cpus) {
    const CpuInfo* info = ct.Info(c.cpu);
    std::vector<std::string> labels = {fmt::format("Socket {} ", info->socket),
                                       fmt::format("NUMA {} ", info->numa),
                                       fmt::format("L3 {}", info->uncore)};
    for (const auto& label : labels) {
      bool inside = std::any_of(pic_.boxes.begin(), pic_.boxes.end(), [&](const PictureBox& b) {
        return (b.label == label || b.label.rfind(label, 0) == 0) && c.x >= b.x &&
               c.y >= b.y && c.x + c.w <= b.x + b.w && c.y + c.h <= b.y + b.h;
      });
      EXPECT_TRUE(inside) << "CPU " << c.cpu << " not inside " << label;
    }
  }
  EXPECT_EQ(std::count_if(pic_.boxes.begin(), pic_.boxes.end(),
                          [](const PictureBox& b) { return b.kind == "numa"; }),
            8);
  EXPECT_EQ(std::count_if(pic_.boxes.begin(), pic_.boxes.end(),
                          [](const PictureBox& b) { return b.kind == "core"; }),
            128);
}

TEST_F(BigNodePicture, Deterministic) {
  auto again = testutil::BigScene();
  ASSERT_TRUE(again.ok());
  NodePicture pic2 = BuildNodePicture(*again->node, again->node->AdmittedPods());
  EXPECT_EQ(RenderSvg(pic2), svg_);
  EXPECT_EQ(RenderHtml(pic2), RenderHtml(pic_));
}

TEST_F(BigNodePicture, PodColoursDoNotDependOnAdmissionOrder) {
  auto reversed = testutil::BigScene(/*reverse=*/true);
  ASSERT_TRUE(reversed.ok());
  NodePicture pic2 = BuildNodePicture(*reversed->node, reversed->node->AdmittedPods());
  for (const auto& pp : pic_.pods) {
    int j = PodIndex(pic2, pp.name);
    ASSERT_GE(j, 0);
    EXPECT_EQ(pic2.pods[static_cast<size_t>(j)].color, pp.color) << pp.name;
  }
}

TEST_F(BigNodePicture, HtmlIsSelfContained) {
  std::string html = RenderHtml(pic_);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(html, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  std::string stripped = html;
  const std::string ns = "http://www.w3.org/2000/svg";
  for (size_t at = stripped.find(ns); at != std::string::npos; at = stripped.find(ns)) {
    stripped.erase(at, ns.size());
  }
  EXPECT_THAT(stripped, Not(HasSubstr("http://")));
  EXPECT_THAT(stripped, Not(HasSubstr("https://")));
  EXPECT_THAT(stripped, Not(HasSubstr("//cdn")));
  EXPECT_THAT(stripped, Not(HasSubstr("<script")));
  EXPECT_THAT(stripped, Not(HasSubstr("<link")));
  EXPECT_THAT(stripped, Not(HasSubstr("@import")));
  EXPECT_THAT(stripped, Not(HasSubstr(" src=")));
  EXPECT_THAT(stripped, Not(HasSubstr(" href=")));
  // Every url(...) is a reference inside the document.
  for (size_t at = stripped.find("url("); at != std::string::npos;
       at = stripped.find("url(", at + 4)) {
    EXPECT_EQ(stripped.substr(at, 5), "url(#") << stripped.substr(at, 40);
  }
  // The pod table lists every pod with its containers.
  for (const auto& p : pods_) EXPECT_THAT(html, HasSubstr("<td>default/" + p.name + "</td>"));
  EXPECT_THAT(html, HasSubstr("main-app (app): pod_exclusive"));
}

TEST(NodePicture, TopologyOnly) {
  auto topo = Preset("t256");
  ASSERT_TRUE(topo.ok());
  NodePicture pic = BuildTopologyPicture(*topo);
  EXPECT_FALSE(pic.with_allocations);
  ASSERT_EQ(pic.cpus.size(), 256u);
  for (const auto& c : pic.cpus) {
    EXPECT_EQ(c.owner, CpuOwner::kUnassigned);
    EXPECT_EQ(c.fill, kUnassignedColor);
  }
  ASSERT_EQ(pic.bars.size(), 8u);  // one memory bar per NUMA node, capacity only
  for (const auto& b : pic.bars) {
    EXPECT_FALSE(b.accounted);
    EXPECT_EQ(b.total, 16ull << 30);
    EXPECT_EQ(b.fill_w, 0);
    EXPECT_EQ(b.label, "memory: 16Gi");
  }
  std::string svg = RenderSvg(pic);
  EXPECT_EQ(Count(svg, "class=\"cpu unassigned\""), 256u);
  EXPECT_THAT(svg, Not(HasSubstr("<pattern")));
  EXPECT_THAT(RenderHtml(pic), Not(HasSubstr("<h2>Pods</h2>")));
}

TEST(NodePicture, PolicyNoneEverythingInTheNodePool) {
  auto topo = Preset("dual-socket-ht");
  ASSERT_TRUE(topo.ok());
  config::KubeletConfig cfg;  // cpuManagerPolicy none, memoryManagerPolicy None
  auto node = Node::Create(*topo, cfg, {});
  ASSERT_TRUE(node.ok()) << node.status();
  NodePicture pic = BuildNodePicture(**node, {});
  ASSERT_EQ(pic.cpus.size(), 12u);
  for (const auto& c : pic.cpus) EXPECT_EQ(c.owner, CpuOwner::kNodeShared) << c.cpu;
  ASSERT_EQ(pic.bars.size(), 2u);
  for (const auto& b : pic.bars) {
    EXPECT_FALSE(b.accounted);
    EXPECT_THAT(b.title, HasSubstr("no Memory Manager accounting"));
  }
  EXPECT_THAT(RenderHtml(pic), HasSubstr("<p>No pods.</p>"));
}

TEST(NodePicture, MemoryOnlyNumaNodesGetTheirOwnBox) {
  auto topo = Preset("numa34");
  ASSERT_TRUE(topo.ok());
  NodePicture pic = BuildTopologyPicture(*topo);
  EXPECT_EQ(pic.cpus.size(), 144u);
  EXPECT_EQ(std::count_if(pic.boxes.begin(), pic.boxes.end(),
                          [](const PictureBox& b) { return b.kind == "memory-only"; }),
            1);
  EXPECT_EQ(std::count_if(pic.boxes.begin(), pic.boxes.end(),
                          [](const PictureBox& b) { return b.kind == "numa"; }),
            34);
  EXPECT_EQ(pic.bars.size(), 34u);
}

TEST(NodePicture, EscapesEveryText) {
  auto topo = Preset("demo");
  ASSERT_TRUE(topo.ok());
  topo->source = "<node & \"x\">";
  topo->devices.push_back(Device{"example.com/<gpu>", "id&<1>\"", 0});
  auto node = Node::Create(*topo, config::SeedDefault(), {});
  ASSERT_TRUE(node.ok());
  PodAllocation evil;
  evil.namespace_name = "ns'<";
  evil.name = "a<b&\"c>";
  evil.admitted = false;
  evil.reason = "Topology<Affinity>Error";
  evil.message = "free \"4\" & more \x01 bad \xff byte";
  NodePicture pic = BuildNodePicture(**node, {evil});
  for (const std::string& doc : {RenderSvg(pic), RenderHtml(pic)}) {
    EXPECT_THAT(doc, HasSubstr("&lt;node &amp; &quot;x&quot;&gt;"));
    EXPECT_THAT(doc, HasSubstr("ns&#39;&lt;/a&lt;b&amp;&quot;c&gt;"));
    EXPECT_THAT(doc, HasSubstr("id&amp;&lt;1&gt;&quot;"));
    EXPECT_THAT(doc, HasSubstr("Topology&lt;Affinity&gt;Error"));
    EXPECT_THAT(doc, Not(HasSubstr("<node")));
    EXPECT_THAT(doc, Not(HasSubstr("a<b")));
    EXPECT_THAT(doc, Not(HasSubstr("<gpu>")));
    EXPECT_THAT(doc, Not(HasSubstr("\x01")));
    EXPECT_THAT(doc, Not(HasSubstr("\xff")));
  }
}

TEST(EscapeXml, Cases) {
  EXPECT_EQ(EscapeXml("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
  EXPECT_EQ(EscapeXml("tab\tnl\n"), "tab\tnl\n");
  EXPECT_EQ(EscapeXml("\x01"), "\xEF\xBF\xBD");
  EXPECT_EQ(EscapeXml("caf\xC3\xA9 \xE2\x80\xA6 \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE2\x80\xA6 \xF0\x9F\x98\x80");  // valid UTF-8 kept
  EXPECT_EQ(EscapeXml("\xC3"), "\xEF\xBF\xBD");              // truncated
  EXPECT_EQ(EscapeXml("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  EXPECT_EQ(EscapeXml("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
}

TEST(PodColours, ManyPodsStayDistinct) {
  auto topo = Preset("t256");
  ASSERT_TRUE(topo.ok());
  auto node = Node::Create(*topo, config::SeedDefault(), {});
  ASSERT_TRUE(node.ok());
  std::vector<PodAllocation> pods;
  for (int i = 0; i < 20; ++i) {
    PodAllocation p;
    p.namespace_name = "default";
    p.name = fmt::format("pod-{}", i);
    p.admitted = true;
    ContainerAllocation c;
    c.name = "app";
    c.assignment = "node_exclusive";
    c.cpus = CpuSet{10 + i};
    p.containers.push_back(c);
    pods.push_back(p);
  }
  NodePicture pic = BuildNodePicture(**node, pods);
  std::set<std::string> colours;
  for (const auto& pp : pic.pods) {
    EXPECT_EQ(pp.color.size(), 7u);
    EXPECT_EQ(pp.color[0], '#');
    colours.insert(pp.color);
  }
  EXPECT_EQ(colours.size(), 20u);
  // The first twelve (in name order) take palette slots; a pod alone gets its base colour.
  NodePicture alone = BuildNodePicture(**node, {pods[3]});
  EXPECT_EQ(alone.pods[0].color, PodBaseColor("default", "pod-3"));
}

}  // namespace
}  // namespace podtopo
