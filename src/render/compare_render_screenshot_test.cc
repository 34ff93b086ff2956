// The compare report as a browser shows it: the HTML page of a gate-off vs gate-on comparison
// of the docs' pods in Debian's headless Chromium; every bar of the charts has its segment's
// colour where the chart says it is. Skipped (with the reason) without /usr/bin/chromium (or
// $PODTOPO_CHROMIUM); scripts/setup.sh installs it.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "api/pod_yaml.h"
#include "gtest/gtest.h"
#include "render/compare_render.h"
#include "render/screenshot_test_util.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

using testutil::Describe;
using testutil::Hex;
using testutil::Near;

TEST(CompareReportScreenshot, ChromiumShowsTheBars) {
  const std::string chromium = testutil::ChromiumPath();
  if (access(chromium.c_str(), X_OK) != 0) {
    GTEST_SKIP() << chromium << " is not installed (scripts/setup.sh installs Debian's "
                 << "chromium); the screenshot cannot be taken";
  }
  std::vector<Pod> pods;
  for (const char* f : {"pod-scope-mixed.yaml", "pod-level-resource-demo.yaml"}) {
    auto loaded = LoadPods(testing::SourceDir() + "/docs/examples/" + f);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    for (int i = 0; i < 9; ++i) {
      Pod p = (*loaded)[0];
      p.name += "-" + std::to_string(i);
      p.uid = DeterministicPodUid(p.namespace_name, p.name);
      pods.push_back(p);
    }
  }
  config::KubeletConfig off = config::SeedDefault();
  off.feature_gates["PodLevelResourceManagers"] = false;
  compare::CompareRequest req;
  req.fleet = compare::LoadFleet({"preset:demo"}).value();
  auto shared = std::make_shared<const std::vector<Pod>>(pods);
  req.configs = {{"gate-off.yaml", off, shared}, {"gate-on.yaml", config::SeedDefault(), shared}};
  auto result = compare::Compare(req);
  ASSERT_TRUE(result.ok()) << result.status();
  CompareChart chart = BuildCompareChart(*result);

  std::string dir = testing::MakeTempDir("podtopo-compare-screenshot");
  {
    std::ofstream out(dir + "/report.html", std::ios::binary);
    out << RenderCompareHtml(*result, chart, nullptr);
  }
  testutil::Image img;
  std::string error;
  // The page's body margin (16px) puts the chart's origin at (16, 16).
  constexpr int kOrigin = 16;
  ASSERT_TRUE(testutil::Screenshot("file://" + dir + "/report.html", chart.width + 2 * kOrigin,
                                   chart.height + 2 * kOrigin, dir, &img, &error))
      << error;
  std::cout << "screenshot: " << dir << "/screenshot.png\n";

  std::set<testutil::Rgb> distinct;
  for (size_t i = 0; i < img.pixels.size(); i += 5) distinct.insert(img.pixels[i]);
  EXPECT_GT(distinct.size(), 12u);

  int checked = 0;
  std::set<std::string> charts;
  for (const auto& r : chart.rects) {
    // A memory bar's "free" background lies under its pinned part: the legend swatch checks it.
    if (r.w < 5 || (r.segment == "free" && r.chart != "legend")) continue;
    int x = kOrigin + r.x + r.w / 2, y = kOrigin + r.y + r.h / 2;
    ASSERT_LT(x, img.width);
    ASSERT_LT(y, img.height);
    EXPECT_TRUE(Near(img.At(x, y), Hex(r.fill)))
        << r.chart << "/" << r.segment << " of " << r.config << " at (" << x << "," << y
        << ") is " << Describe(img.At(x, y)) << ", expected " << r.fill;
    ++checked;
    charts.insert(r.chart);
  }
  EXPECT_GE(checked, 15);
  EXPECT_EQ(charts, (std::set<std::string>{"pods", "cpus", "aligned", "memory", "legend"}));
  if (!HasFailure()) std::filesystem::remove_all(dir + "/profile");
}

}  // namespace
}  // namespace podtopo
