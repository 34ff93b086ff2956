#include "testing/sysfs_fixture.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "cpuset/cpuset.h"
#include "testing/testing.h"

namespace podtopo::testing {
namespace fs = std::filesystem;

std::string HwlocFixtureDir() { return SharedDir() + "/fixtures/hwloc-linux"; }

namespace {
std::string MakeShmDir() {
  char templ[] = "/dev/shm/podtopo-hwloc-XXXXXX";
  char* made = mkdtemp(templ);
  return made != nullptr ? std::string(made) : MakeTempDir("podtopo-hwloc");
}
}  // namespace

SysfsFixture::SysfsFixture(const std::string& tarball) {
  dir_ = access("/dev/shm", W_OK) == 0 ? MakeShmDir() : MakeTempDir("podtopo-hwloc");
  // Only what discovery reads; tar complains about patterns that match nothing (a snapshot
  // without devices/system/node), which is fine: the result is checked below.
  std::string cmd = "tar -xjf '" + tarball + "' -C '" + dir_ +
                    "' --wildcards '*devices/system/cpu/*' '*devices/system/node/*' 2>/dev/null";
  ok_ = std::system(cmd.c_str()) != -1;
  if (!ok_) return;
  // The tarball holds one top folder (its name may differ from the file name) with sys/.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (fs::exists(e.path() / "sys" / "devices" / "system" / "cpu")) sys_ = e.path() / "sys";
  }
  if (sys_.empty() && fs::exists(fs::path(dir_) / "sys" / "devices" / "system" / "cpu")) {
    sys_ = fs::path(dir_) / "sys";
  }
}

SysfsFixture::~SysfsFixture() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

bool SysfsFixture::HasNodeDirs() const {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(sys_ / "devices" / "system" / "node", ec)) {
    std::string n = e.path().filename().string();
    if (n.size() > 4 && n.rfind("node", 0) == 0 && isdigit(static_cast<unsigned char>(n[4]))) {
      return true;
    }
  }
  return false;
}

int SysfsFixture::AddCpulistFromCpumap() const {
  int written = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(sys_ / "devices" / "system" / "node", ec)) {
    fs::path mask = e.path() / "cpumap";
    if (!fs::exists(mask) || fs::exists(e.path() / "cpulist")) continue;
    std::string text = ReadFileOrEmpty(mask.string());
    std::vector<std::string> words;
    std::stringstream in(text);
    for (std::string w; std::getline(in, w, ',');) words.push_back(w);
    std::vector<int> cpus;
    for (size_t i = 0; i < words.size(); ++i) {
      unsigned long bits = std::stoul(words[words.size() - 1 - i], nullptr, 16);
      for (int b = 0; b < 32; ++b) {
        if (bits >> b & 1) cpus.push_back(static_cast<int>(i) * 32 + b);
      }
    }
    std::ofstream(e.path() / "cpulist") << CpuSet(cpus).String() << "\n";
    ++written;
  }
  return written;
}

bool SysfsFixture::HasCacheIds() const {
  return fs::exists(sys_ / "devices" / "system" / "cpu" / "cpu0" / "cache" / "index3" / "id");
}

}  // namespace podtopo::testing
