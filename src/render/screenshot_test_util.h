// What the screenshot tests share: Debian's headless Chromium takes a PNG of a page, libpng
// decodes it, and colours are compared with a tolerance.
//
//   testutil::Image img;
//   std::string error;
//   if (!testutil::Screenshot("file:///tmp/x/page.svg", 800, 600, "/tmp/x", &img, &error)) ...
//   testutil::Near(img.At(10, 20), testutil::Hex("#555555"));
#ifndef PODTOPO_RENDER_SCREENSHOT_TEST_UTIL_H_
#define PODTOPO_RENDER_SCREENSHOT_TEST_UTIL_H_

#include <png.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "fmt/format.h"

namespace podtopo::testutil {

struct Rgb {
  int r = 0, g = 0, b = 0;
  bool operator<(const Rgb& o) const { return std::tie(r, g, b) < std::tie(o.r, o.g, o.b); }
};

inline Rgb Hex(std::string_view hex) {
  auto h = [&](size_t i) { return std::stoi(std::string(hex.substr(i, 2)), nullptr, 16); };
  return Rgb{h(1), h(3), h(5)};
}

inline bool Near(const Rgb& a, const Rgb& b, int tolerance = 6) {
  return std::abs(a.r - b.r) <= tolerance && std::abs(a.g - b.g) <= tolerance &&
         std::abs(a.b - b.b) <= tolerance;
}

inline std::string Describe(const Rgb& c) {
  return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b);
}

struct Image {
  int width = 0, height = 0;
  std::vector<Rgb> pixels;
  Rgb At(int x, int y) const { return pixels[static_cast<size_t>(y * width + x)]; }
};

// Decodes an 8-bit PNG (any colour type) to RGB; false with a message on failure.
inline bool ReadPng(const std::string& path, Image* image, std::string* error) {
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
inline int RunChromium(const std::vector<std::string>& args, const std::string& log) {
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
inline std::string ChromiumPath() {
  const char* env = std::getenv("PODTOPO_CHROMIUM");
  return env != nullptr && *env != '\0' ? env : "/usr/bin/chromium";
}

// Takes a width x height screenshot of `url` into dir/screenshot.png (profile and log in
// `dir`) and decodes it; false with a message on failure.
inline bool Screenshot(const std::string& url, int width, int height, const std::string& dir,
                       Image* image, std::string* error) {
  const std::string png_path = dir + "/screenshot.png";
  std::vector<std::string> args = {ChromiumPath(),
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--hide-scrollbars",
                                   "--force-device-scale-factor=1",
                                   "--no-first-run",
                                   "--user-data-dir=" + dir + "/profile",
                                   "--screenshot=" + png_path,
                                   fmt::format("--window-size={},{}", width, height),
                                   url};
  int rc = RunChromium(args, dir + "/chromium.log");
  if (rc != 0) {
    *error = fmt::format("chromium exited with {}; log in {}/chromium.log", rc, dir);
    return false;
  }
  return ReadPng(png_path, image, error);
}

}  // namespace podtopo::testutil

#endif  // PODTOPO_RENDER_SCREENSHOT_TEST_UTIL_H_
