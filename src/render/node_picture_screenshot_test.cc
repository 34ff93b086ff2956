// The picture as a browser shows it: renders the 256-CPU, 8-NUMA scene's SVG in Debian's
// headless Chromium, decodes the screenshot with libpng and checks that it is not blank and
// that the CPUs carry their owners' colours where the picture says they are. Skipped (with
// the reason) when /usr/bin/chromium (or $PODTOPO_CHROMIUM) is missing; scripts/setup.sh
// installs it.
#include <png.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <tuple>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "render/node_picture.h"
#include "render/node_picture_test_util.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

struct Rgb {
  int r = 0, g = 0, b = 0;
  bool operator<(const Rgb& o) const {
    return std::tie(r, g, b) < std::tie(o.r, o.g, o.b);
  }
};

Rgb Hex(std::string_view hex) {
  auto h = [&](size_t i) { return std::stoi(std::string(hex.substr(i, 2)), nullptr, 16); };
  return Rgb{h(1), h(3), h(5)};
}

bool Near(const Rgb& a, const Rgb& b, int tolerance = 6) {
  return std::abs(a.r - b.r) <= tolerance && std::abs(a.g - b.g) <= tolerance &&
         std::abs(a.b - b.b) <= tolerance;
}

std::string Describe(const Rgb& c) { return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b); }

struct Image {
  int width = 0, height = 0;
  std::vector<Rgb> pixels;
  Rgb At(int x, int y) const { return pixels[static_cast<size_t>(y * width + x)]; }
};

// Decodes an 8-bit PNG (any colour type) to RGB; false with a message on failure.
bool ReadPng(const std::string& path, Image* image, std::string* error) {
  png_image png;
  memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&png, path.c_str())) {
    *error = std::string("png_image_begin_read_from_file: ") + png.message;
    return false;
  }
  png.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> buffer(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, buffer.data(), 0, nullptr)) {
    *error = std::string("png_image_finish_read: ") + png.message;
    return false;
  }
  image->width = static_cast<int>(png.width);
  image->height = static_cast<int>(png.height);
  image->pixels.resize(static_cast<size_t>(image->width) * image->height);
  for (size_t i = 0; i < image->pixels.size(); ++i) {
    image->pixels[i] = Rgb{buffer[3 * i], buffer[3 * i + 1], buffer[3 * i + 2]};
  }
  return true;
}

// Runs chromium with `args` (no shell), its output to `log`; returns the exit status.
int RunChromium(const std::vector<std::string>& args, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = freopen(log.c_str(), "w", stdout);
    (void)f;
    dup2(fileno(stdout), fileno(stderr));
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Debian's chromium; PODTOPO_CHROMIUM overrides the path.
std::string ChromiumPath() {
  const char* env = std::getenv("PODTOPO_CHROMIUM");
  return env != nullptr && *env != '\0' ? env : "/usr/bin/chromium";
}

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
  std::string png_path = dir + "/node.png";
  {
    std::ofstream out(svg_path, std::ios::binary);
    out << RenderSvg(pic);
  }
  std::vector<std::string> args = {
      chromium,
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--hide-scrollbars",
      "--force-device-scale-factor=1",
      "--no-first-run",
      "--user-data-dir=" + dir + "/profile",
      "--screenshot=" + png_path,
      fmt::format("--window-size={},{}", pic.width, pic.height),
      "file://" + svg_path};
  int rc = RunChromium(args, dir + "/chromium.log");
  ASSERT_EQ(rc, 0) << "chromium failed; log in " << dir << "/chromium.log";
  Image img;
  std::string error;
  ASSERT_TRUE(ReadPng(png_path, &img, &error)) << error;
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
      ++checked;
    });
  }
  EXPECT_GE(checked, 20);  // 2 reserved, 2 node-shared, 12 exclusive, 4 hatched
  if (!HasFailure()) std::filesystem::remove_all(dir + "/profile");
}

}  // namespace
}  // namespace podtopo
