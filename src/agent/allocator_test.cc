// The agent's allocator settings (agent/allocator.h). The test programs link no tcmalloc: this
// is glibc's side. The tcmalloc side is measured whole by tests/agent/agent_rss_test.py.
#include "agent/allocator.h"

#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PODTOPO_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PODTOPO_SANITIZED 1
#endif
#endif

namespace podtopo::agent {
namespace {

long RssAnonKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  static const std::regex kLine(R"(^RssAnon:\s+(\d+) kB$)");
  std::smatch m;
  while (std::getline(status, line)) {
    if (std::regex_match(line, m, kLine)) return std::stol(m[1]);
  }
  return -1;
}

// Memory freed in the middle of the heap stays resident until malloc_trim gives it back:
// what a poll leaves behind when a longer-lived allocation sits above its strings.
TEST(AllocatorTest, ReturnFreeMemoryGivesFreedHeapBack) {
#ifdef PODTOPO_SANITIZED
  GTEST_SKIP() << "a sanitizer's allocator replaces glibc's: nothing to measure";
#else
  EXPECT_EQ(UseSmallFootprintAllocator(), "glibc");
  ReturnFreeMemory();
  // 32 MiB of small blocks (below the mmap threshold: they come from the arena), then one more
  // that stays, above them.
  std::vector<std::unique_ptr<char[]>> blocks;
  for (int i = 0; i < 32 * 1024; ++i) {
    blocks.emplace_back(new char[1000]);
    std::fill_n(blocks.back().get(), 1000, static_cast<char>(i));
  }
  auto pin = std::make_unique<char[]>(1000);
  std::fill_n(pin.get(), 1000, 1);
  blocks.clear();
  const long freed = RssAnonKib();
  ReturnFreeMemory();
  const long returned = RssAnonKib();
  ASSERT_GT(freed, 0);
  EXPECT_LT(returned, freed - 16 * 1024) << "RssAnon " << freed << " kB before, " << returned
                                         << " kB after ReturnFreeMemory";
#endif
}

}  // namespace
}  // namespace podtopo::agent
