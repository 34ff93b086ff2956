#include "probe/system.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "fmt/format.h"

#include "probe/memory_latency.h"
#include "testing/testing.h"

namespace podtopo::probe {
namespace {

void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST(ParseCacheSize, SysfsForms) {
  EXPECT_EQ(*ParseCacheSize("32K\n"), 32 << 10);
  EXPECT_EQ(*ParseCacheSize("32768K"), int64_t{32} << 20);
  EXPECT_EQ(*ParseCacheSize("2M"), 2 << 20);
  EXPECT_EQ(*ParseCacheSize("1G"), int64_t{1} << 30);
  EXPECT_EQ(*ParseCacheSize("4096"), 4096);
  EXPECT_EQ(ParseCacheSize("12Q").status().message(),
            "cache size \"12Q\": unknown unit \"Q\" (K, M or G)");
  EXPECT_FALSE(ParseCacheSize("K").ok());
  EXPECT_FALSE(ParseCacheSize("").ok());
}

TEST(ReadLastLevelCache, PicksTheHighestDataOrUnifiedLevel) {
  std::string dir = testing::MakeTempDir("probe-cache");
  auto index = [&](int i, const char* level, const char* type, const char* size) {
    std::string base = fmt::format("{}/cpu3/cache/index{}", dir, i);
    WriteFile(base + "/level", level);
    WriteFile(base + "/type", type);
    WriteFile(base + "/size", size);
    WriteFile(base + "/shared_cpu_list", "2-3\n");
  };
  index(0, "1\n", "Data\n", "48K\n");
  index(1, "1\n", "Instruction\n", "32K\n");
  index(2, "2\n", "Unified\n", "2048K\n");
  index(3, "3\n", "Unified\n", "36864K\n");
  auto llc = ReadLastLevelCache(dir, 3);
  ASSERT_TRUE(llc.ok()) << llc.status();
  EXPECT_EQ(llc->level, 3);
  EXPECT_EQ(llc->size_bytes, int64_t{36} << 20);
  EXPECT_EQ(llc->shared_cpu_list, "2-3");
  EXPECT_EQ(ReadLastLevelCache(dir, 4).status().code(), absl::StatusCode::kNotFound);
  index(4, "4\n", "Unified\n", "lots\n");
  EXPECT_EQ(ReadLastLevelCache(dir, 3).status().code(), absl::StatusCode::kInvalidArgument);
  std::filesystem::remove_all(dir);
}

TEST(DefaultBufferBytes, TwiceTheCacheWithinBounds) {
  EXPECT_EQ(DefaultBufferBytes(CacheInfo{3, int64_t{32} << 20, ""}), int64_t{64} << 20);
  EXPECT_EQ(DefaultBufferBytes(CacheInfo{2, 512 << 10, ""}), kMinBufferBytes);
  EXPECT_EQ(DefaultBufferBytes(CacheInfo{3, int64_t{4} << 30, ""}), kMaxBufferBytes);
  EXPECT_EQ(DefaultBufferBytes(std::nullopt), kUnknownLlcBufferBytes);
  // Rounded up to 2 MiB: 2 x 35.75 MiB = 71.5 MiB -> 72 MiB.
  EXPECT_EQ(DefaultBufferBytes(CacheInfo{3, int64_t{36608} << 10, ""}), int64_t{72} << 20);
}

// The requirement: the chase buffer exceeds the last-level cache. The caches are read
// here independently of ReadLastLevelCache: the largest data or unified cache of any CPU.
TEST(DefaultBufferBytes, ExceedsEveryCacheOfThisMachine) {
  int64_t largest = 0;
  std::error_code ec;
  for (const auto& cpu : std::filesystem::directory_iterator("/sys/devices/system/cpu", ec)) {
    std::string name = cpu.path().filename().string();
    if (name.rfind("cpu", 0) != 0 || name.size() < 4 || !std::isdigit(name[3])) continue;
    std::error_code ec2;
    for (const auto& idx : std::filesystem::directory_iterator(cpu.path() / "cache", ec2)) {
      std::ifstream type(idx.path() / "type"), size(idx.path() / "size");
      std::string t, s;
      if (!(type >> t) || !(size >> s) || t == "Instruction") continue;
      auto bytes = ParseCacheSize(s);
      if (bytes.ok()) largest = std::max(largest, *bytes);
    }
  }
  if (largest == 0) GTEST_SKIP() << "no /sys/devices/system/cpu/cpu*/cache here: nothing to compare";
  SystemView sys = ReadSystem();
  auto llc = ReadLastLevelCache("/sys/devices/system/cpu", sys.allowed_cpus.Min());
  ASSERT_TRUE(llc.ok()) << llc.status();
  int64_t buffer = DefaultBufferBytes(*llc);
  EXPECT_GT(buffer, largest) << HumanBytes(buffer) << " buffer, largest cache "
                             << HumanBytes(largest);
  EXPECT_GE(buffer, 2 * std::min(largest, kMaxBufferBytes / 2));
}

TEST(ReadSystem, DescribesThisProcess) {
  SystemView sys = ReadSystem();
  EXPECT_FALSE(sys.allowed_cpus.IsEmpty());
  EXPECT_FALSE(sys.numa_nodes.IsEmpty());
  EXPECT_FALSE(sys.allowed_mems.IsEmpty());
  for (int cpu : sys.allowed_cpus.List()) EXPECT_TRUE(sys.node_of_cpu.count(cpu)) << cpu;
}

TEST(HumanBytes, Units) {
  EXPECT_EQ(HumanBytes(100), "100 B");
  EXPECT_EQ(HumanBytes(64 << 20), "64 MiB");
  EXPECT_EQ(HumanBytes(1536 << 20), "1.5 GiB");
}

}  // namespace
}  // namespace podtopo::probe
