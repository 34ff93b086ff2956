// The picture as a browser shows it: renders the 256-CPU, 8-NUMA scene's SVG in Debian's
// headless Chromium, decodes the screenshot with libpng and checks that it is not blank and
// that the CPUs carry their owners' colours where the picture says they are. Skipped (with
// the reason) when /usr/bin/chromium (or $PODTOPO_CHROMIUM) is missing; scripts/setup.sh
// installs it.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "render/node_picture.h"
#include "render/node_picture_test_util.h"
#include "render/screenshot_test_util.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

using testutil::ChromiumPath;
using testutil::Describe;
using testutil::Hex;
using testutil::Image;
using testutil::Near;
using testutil::Rgb;

TEST(NodePictureScreenshot, ChromiumShowsTheOwnersColours) {
  const std::string chromium = ChromiumPath();
  if (access(chromium.c_str(), X_OK) != 0) {
    GTEST_SKIP() << chromium << " is not installed (scripts/setup.sh installs Debian's "
                 << "chromium); the screenshot cannot be taken";
  }
  auto scene = testutil::BigScene();
  ASSERT_TRUE(scene.ok()) << scene.status();
  NodePicture pic = BuildNodePicture(*scene->node, scene->node->AdmittedPods());
  ASSERT_EQ(pic.cpus.size(), 256u);

  std::string dir = testing::MakeTempDir("podtopo-screenshot");
  std::string svg_path = dir + "/node.svg";
  std::string png_path = dir + "/screenshot.png";
  {
    std::ofstream out(svg_path, std::ios::binary);
    out << RenderSvg(pic);
  }
  Image img;
  std::string error;
  ASSERT_TRUE(testutil::Screenshot("file://" + svg_path, pic.width, pic.height, dir, &img, &error))
      << error;
  std::cout << "screenshot: " << png_path << "\n";
  ASSERT_EQ(img.width, pic.width);
  ASSERT_EQ(img.height, pic.height);

  // Not blank: many distinct colours, and not mostly one colour.
  std::set<Rgb> distinct;
  for (size_t i = 0; i < img.pixels.size(); i += 7) distinct.insert(img.pixels[i]);
  EXPECT_GT(distinct.size(), 20u);

  // The owners' colours at known CPUs, taken from the node's allocation (not the picture).
  auto expect_fill = [&](int cpu, std::string_view colour, const std::string& what) {
    const PictureCpu* c = pic.FindCpu(cpu);
    ASSERT_NE(c, nullptr);
    Rgb got = img.At(c->sample_x, c->sample_y);
    EXPECT_TRUE(Near(got, Hex(colour)))
        << what << ": CPU " << cpu << " at (" << c->sample_x << "," << c->sample_y << ") is "
        << Describe(got) << ", expected " << colour;
  };
  int checked = 0;
  scene->node->ReservedCpus().ForEach([&](int cpu) {
    expect_fill(cpu, kReservedColor, "reserved");
    ++checked;
  });
  CpuSet node_shared = scene->node->DefaultCpuSet().Difference(scene->node->ReservedCpus());
  for (int cpu : {node_shared.Min(), node_shared.List().back()}) {
    expect_fill(cpu, kNodeSharedColor, "node shared pool");
    ++checked;
  }
  for (const auto& pod : scene->node->AdmittedPods()) {
    const PicturePod* pp = nullptr;
    for (const auto& p : pic.pods) {
      if (p.name == pod.name) pp = &p;
    }
    ASSERT_NE(pp, nullptr);
    CpuSet exclusive;
    for (const auto& c : pod.containers) {
      if (c.assignment == "pod_exclusive" || c.assignment == "node_exclusive") {
        exclusive.UnionWith(c.cpus);
      }
    }
    exclusive.ForEach([&](int cpu) {
      expect_fill(cpu, pp->color, pod.name + " exclusive");
      ++checked;
    });
    // The pod's shared pool is hatched: its lower band shows both the pod's colour and the
    // hatch background.
    pod.cpus.Difference(exclusive).ForEach([&](int cpu) {
      const PictureCpu* c = pic.FindCpu(cpu);
      int stripes = 0, background = 0;
      for (int y = c->y + c->h / 2 + 2; y < c->y + c->h - 2; ++y) {
        for (int x = c->x + 2; x < c->x + c->w - 2; ++x) {
          Rgb px = img.At(x, y);
          stripes += Near(px, Hex(pp->color), 12);
          background += Near(px, Hex(kHatchBackground), 12);
        }
      }
      EXPECT_GT(stripes, 5) << pod.name << " shared pool CPU " << cpu << ": no stripes";
      EXPECT_GT(background, 5) << pod.name << " shared pool CPU " << cpu << ": not hatched";
      // Its number stands on a plain plate: no stripe shows behind the digits (issue 22 item
      // 12.2; before, only a 2-pixel halo around the glyphs separated them from the stripes).
      LabelPlate plate = LabelPlateOf(*c);
      int striped = 0, plain = 0;
      for (int y = plate.y + 1; y < plate.y + plate.h - 1; ++y) {
        for (int x = plate.x + 1; x < plate.x + plate.w - 1; ++x) {
          Rgb px = img.At(x, y);
          striped += Near(px, Hex(pp->color), 24);
          plain += Near(px, Hex(kLabelPlateColor), 12);
        }
      }
      EXPECT_EQ(striped, 0) << pod.name << " CPU " << cpu << ": stripes behind its number";
      EXPECT_GT(plain, (plate.w - 2) * (plate.h - 2) / 3)
          << pod.name << " CPU " << cpu << ": its number has no plain plate";
      ++checked;
    });
  }
  EXPECT_GE(checked, 20);  // 2 reserved, 2 node-shared, 12 exclusive, 4 hatched
  if (!HasFailure()) std::filesystem::remove_all(dir + "/profile");
}

}  // namespace
}  // namespace podtopo
