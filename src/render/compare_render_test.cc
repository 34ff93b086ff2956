#include "render/compare_render.h"
#include "render/node_picture.h"

#include "api/pod_yaml.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

// The docs' pod-scope-mixed pod 18 times and the seed pod, on one demo node, under the seed
// configuration ("<on>") and with the PodLevelResourceManagers gate off ("off & old").
compare::CompareResult Example(int nodes = 1) {
  auto mixed = LoadPods(testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml").value();
  auto seed = LoadPods(testing::SourceDir() + "/docs/examples/pod-level-resource-demo.yaml").value();
  std::vector<Pod> pods;
  for (int i = 0; i < 18; ++i) {
    Pod p = mixed[0];
    p.name += "-" + std::to_string(i);
    p.uid = DeterministicPodUid(p.namespace_name, p.name);
    pods.push_back(p);
  }
  pods.push_back(seed[0]);
  config::KubeletConfig off = config::SeedDefault();
  off.feature_gates["PodLevelResourceManagers"] = false;
  compare::CompareRequest req;
  req.fleet = compare::LoadFleet({nodes == 1 ? "preset:demo" : "n=preset:demo*" + std::to_string(nodes)}).value();
  req.placement = compare::Placement::kFirstFit;
  auto shared = std::make_shared<const std::vector<Pod>>(pods);
  req.configs = {{"off & old", off, shared}, {"<on>", config::SeedDefault(), shared}};
  return compare::Compare(req).value();
}

TEST(CompareJson, TheContractShape) {
  compare::CompareResult r = Example();
  nlohmann::ordered_json j = CompareJson(r, nullptr);
  EXPECT_EQ(j["placement"], "nodeName");
  ASSERT_EQ(j["results"].size(), 2u);
  for (size_t c = 0; c < 2; ++c) {
    const auto& cj = j["results"][c];
    const compare::Tally& t = r.configs[c].total;
    EXPECT_EQ(cj["config"], r.configs[c].config);
    std::vector<std::string> keys;
    for (const auto& [k, v] : cj["total"].items()) keys.push_back(k);
    EXPECT_THAT(keys, ::testing::ElementsAre("pods", "admitted", "rejected", "exclusiveCpus",
                                             "podSharedPoolCpus", "alignedPods",
                                             "nodeSharedPoolCpus", "exclusiveCpusByKind",
                                             "memory"));
    EXPECT_EQ(cj["total"]["pods"], 19);
    EXPECT_EQ(cj["total"]["admitted"], t.admitted);
    EXPECT_EQ(cj["total"]["exclusiveCpus"], t.exclusive_cpus);
    EXPECT_EQ(cj["total"]["podSharedPoolCpus"], t.pod_shared_pool_cpus);
    EXPECT_EQ(cj["total"]["alignedPods"], t.aligned_pods);
    int rejected = 0;
    for (const auto& [reason, n] : cj["total"]["rejected"].items()) rejected += n.get<int>();
    EXPECT_EQ(rejected + cj["total"]["admitted"].get<int>(), 19);
    ASSERT_EQ(cj["nodes"].size(), 1u);
    EXPECT_EQ(cj["nodes"][0]["node"], "preset:demo");
    EXPECT_EQ(cj["nodes"][0]["defaultCpuSet"], r.configs[c].nodes[0].default_cpu_set.String());
    EXPECT_EQ(cj["nodes"][0]["reservedCpus"], "0");
  }
  ASSERT_EQ(j["differences"].size(), 1u);
  EXPECT_EQ(j["differences"][0]["from"], "off & old");
  EXPECT_EQ(j["differences"][0]["to"], "<on>");
  EXPECT_EQ(j["differences"][0]["changes"].size(),
            compare::Differences(r.configs[0], r.configs[1]).size());
  EXPECT_FALSE(j.contains("capacity"));
  std::vector<compare::CapacityRow> cap = {{"default/x", "preset:demo", {3, 4}, {"OutOfcpu", "OutOfmemory"}}};
  nlohmann::ordered_json with = CompareJson(r, &cap);
  EXPECT_EQ(with["capacity"][0]["replicas"], nlohmann::ordered_json::parse("[3, 4]"));
  EXPECT_EQ(with["capacity"][0]["stoppedBy"][1], "OutOfmemory");
}

TEST(CompareTable, TotalsDifferencesAndNodes) {
  compare::CompareResult r = Example();
  std::string t = RenderCompareTable(r, nullptr);
  EXPECT_THAT(t, StartsWith("placement: every pod on the one node\n"));
  EXPECT_THAT(t, HasSubstr(fmt::format("admitted                      {}", r.configs[0].total.admitted)));
  EXPECT_THAT(t, HasSubstr("\nFrom off & old to <on>:\n"));
  for (const auto& change : compare::Differences(r.configs[0], r.configs[1])) {
    EXPECT_THAT(t, HasSubstr("  - " + change + "\n"));
  }
  EXPECT_THAT(t, Not(HasSubstr("Per node")));  // one node: the totals are the node

  compare::CompareResult fleet = Example(3);
  EXPECT_TRUE(fleet.first_fit_used);
  std::string ft = RenderCompareTable(fleet, nullptr);
  EXPECT_THAT(ft, StartsWith("placement: first-fit over 3 nodes"));
  EXPECT_THAT(ft, HasSubstr("not the kube-scheduler's"));
  EXPECT_THAT(ft, HasSubstr("\nPer node:\nNODE"));
  EXPECT_THAT(ft, HasSubstr("\nn-2  "));
  EXPECT_EQ(CompareJson(fleet, nullptr)["placement"], "first-fit");
  // Issue 22 item 12.3: memory amounts in readable units (HumanBytes), not "45780Mi": NUMA 0
  // of a demo node has 16Gi - 1124Mi allocatable, three of them 44.7Gi.
  EXPECT_THAT(t, HasSubstr(" of 14.9Gi"));
  EXPECT_THAT(ft, HasSubstr(" of 44.7Gi"));
  EXPECT_THAT(ft, Not(HasSubstr("45780Mi")));
}

TEST(CompareChart, BarsAreProportionalAndEscaped) {
  compare::CompareResult r = Example();
  CompareChart chart = BuildCompareChart(r);
  std::string svg = RenderCompareSvg(chart);
  EXPECT_THAT(svg, StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(svg, RenderCompareSvg(BuildCompareChart(r)));  // deterministic
  EXPECT_THAT(svg, HasSubstr("&lt;on&gt;"));
  EXPECT_THAT(svg, HasSubstr("off &amp; old"));
  EXPECT_THAT(svg, Not(HasSubstr("<on>")));
  for (const auto& c : r.configs) {
    // Pods bar: admitted + each reason, widths summing to the same 19-pod scale.
    int width = 0, admitted_w = 0;
    for (const auto& rect : chart.rects) {
      if (rect.chart != "pods" || rect.config != c.config) continue;
      width += rect.w;
      if (rect.segment == "admitted") admitted_w = rect.w;
    }
    EXPECT_NEAR(width, 560, 1) << c.config;
    EXPECT_NEAR(admitted_w, 560.0 * c.total.admitted / 19, 1.5) << c.config;
  }
  // Every segment has a hover title naming the configuration.
  for (const auto& rect : chart.rects) {
    if (rect.chart != "legend") {
      EXPECT_THAT(rect.title, HasSubstr(rect.config));
    }
  }
  for (const auto& change : compare::Differences(r.configs[0], r.configs[1])) {
    EXPECT_THAT(svg, HasSubstr(EscapeXml("• " + change)));
  }
}

TEST(CompareHtml, SelfContained) {
  compare::CompareResult r = Example(2);
  CompareChart chart = BuildCompareChart(r);
  std::string html = RenderCompareHtml(r, chart, nullptr);
  EXPECT_THAT(html, StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(html, HasSubstr(RenderCompareSvg(chart)));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_EQ(Count(html, "http"), 1u);  // the SVG namespace
  EXPECT_THAT(html, HasSubstr("<h2>Per node</h2>"));
  EXPECT_THAT(html, HasSubstr("<td>n-1</td>"));
}

}  // namespace
}  // namespace podtopo
