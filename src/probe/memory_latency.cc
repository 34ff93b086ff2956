#include "probe/memory_latency.h"

#include <numa.h>
#include <numaif.h>
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "util/file.h"

namespace podtopo::probe {
namespace {

constexpr int64_t kHugePage = int64_t{2} << 20;

int64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

struct Mapping {
  void* addr = MAP_FAILED;
  size_t len = 0;
  ~Mapping() {
    if (addr != MAP_FAILED) munmap(addr, len);
  }
};

// One line: the pointer to the next line of the cycle, padding to 64 bytes.
struct alignas(kCacheLine) Line {
  Line* next;
  char pad[kCacheLine - sizeof(Line*)];
};
static_assert(sizeof(Line) == kCacheLine);

// Follows `n` dependent loads from `p`; unrolled so the loop's own branch costs little.
__attribute__((noinline)) Line* Chase(Line* p, int64_t n) {
  while (n >= 8) {
    p = p->next; p = p->next; p = p->next; p = p->next;
    p = p->next; p = p->next; p = p->next; p = p->next;
    n -= 8;
  }
  while (n-- > 0) p = p->next;
  return p;
}

bool AnonHugePagesIn(const void* addr) {
  // /proc/self/smaps: the mapping's AnonHugePages line.
  auto smaps = ReadFile("/proc/self/smaps");
  if (!smaps.ok()) return false;
  std::string start = fmt::format("{:x}-", reinterpret_cast<uintptr_t>(addr));
  size_t at = 0;
  while ((at = smaps->find(start, at)) != std::string::npos) {
    if (at == 0 || (*smaps)[at - 1] == '\n') break;
    ++at;
  }
  if (at == std::string::npos) return false;
  size_t huge = smaps->find("AnonHugePages:", at);
  size_t next_map = smaps->find("VmFlags:", at);
  if (huge == std::string::npos || (next_map != std::string::npos && huge > next_map)) return false;
  return std::atoll(smaps->c_str() + huge + std::strlen("AnonHugePages:")) > 0;
}

}  // namespace

int64_t DefaultBufferBytes(const std::optional<CacheInfo>& llc) {
  int64_t bytes = llc.has_value() && llc->size_bytes > 0 ? 2 * llc->size_bytes
                                                         : kUnknownLlcBufferBytes;
  bytes = std::clamp(bytes, kMinBufferBytes, kMaxBufferBytes);
  return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

absl::StatusOr<ChaseResult> MeasureMemoryLatency(const ChaseOptions& o) {
  if (o.buffer_bytes < 2 * kCacheLine) {
    return absl::InvalidArgumentError(
        fmt::format("buffer of {} bytes: the chase needs at least two cache lines", o.buffer_bytes));
  }
  if (o.rounds < 1 || o.loads_per_round < 1) {
    return absl::InvalidArgumentError("the chase needs at least one round of one load");
  }
  ChaseResult result;
  const int64_t lines = o.buffer_bytes / kCacheLine;
  result.buffer_bytes = lines * kCacheLine;
  Mapping m;
  // Room to align the buffer to a huge page.
  m.len = static_cast<size_t>(result.buffer_bytes + kHugePage);
  m.addr = mmap(nullptr, m.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m.addr == MAP_FAILED) {
    return absl::FailedPreconditionError(fmt::format(
        "mmap of {} for the chase: {}", HumanBytes(result.buffer_bytes), std::strerror(errno)));
  }
  auto base = reinterpret_cast<uintptr_t>(m.addr);
  auto* buf = reinterpret_cast<Line*>((base + kHugePage - 1) / kHugePage * kHugePage);
  const size_t used = static_cast<size_t>(result.buffer_bytes);
  (void)madvise(buf, used, MADV_HUGEPAGE);  // a hint; EINVAL where THP is compiled out
  if (o.node >= 0) {
    std::vector<unsigned long> mask(static_cast<size_t>(o.node) / (8 * sizeof(unsigned long)) + 1);
    mask[static_cast<size_t>(o.node) / (8 * sizeof(unsigned long))] |=
        1UL << (static_cast<unsigned>(o.node) % (8 * sizeof(unsigned long)));
    if (mbind(buf, used, MPOL_BIND, mask.data(), mask.size() * 8 * sizeof(unsigned long) + 1,
              MPOL_MF_STRICT) != 0) {
      return absl::FailedPreconditionError(
          fmt::format("mbind of the chase buffer to NUMA node {}: {}", o.node, std::strerror(errno)));
    }
  }
  // Sattolo's shuffle: a uniformly random permutation with a single cycle through all lines.
  std::vector<uint32_t> next(static_cast<size_t>(lines));
  std::iota(next.begin(), next.end(), 0u);
  std::mt19937_64 rng(o.seed);
  for (size_t i = next.size() - 1; i > 0; --i) {
    std::uniform_int_distribution<size_t> pick(0, i - 1);
    std::swap(next[i], next[pick(rng)]);
  }
  // Written in address order: the pages fault in (on the bound node) one after the other.
  for (size_t i = 0; i < next.size(); ++i) buf[i].next = &buf[next[i]];
  std::vector<uint32_t>().swap(next);

  Line* p = Chase(buf, lines);  // untimed: every line once
  std::vector<double> per_round;
  // Timed with the thread's CPU clock, not the wall clock: time the thread spends preempted
  // (a busy 2-CPU VM preempts it hundreds of times a second) is not time spent loading.
  for (int r = 0; r < o.rounds; ++r) {
    int64_t t0 = ThreadCpuNs();
    p = Chase(p, o.loads_per_round);
    int64_t t1 = ThreadCpuNs();
    per_round.push_back(static_cast<double>(t1 - t0) / static_cast<double>(o.loads_per_round));
    result.loads += o.loads_per_round;
  }
  // Keeps the chase from being optimized away.
  static volatile uintptr_t sink;
  sink = reinterpret_cast<uintptr_t>(p);
  (void)sink;

  std::sort(per_round.begin(), per_round.end());
  result.ns_per_load = per_round[per_round.size() / 2];
  result.min_ns_per_load = per_round.front();
  result.max_ns_per_load = per_round.back();

  if (o.node >= 0 && numa_available() >= 0) {
    // Where the pages are: move_pages without target nodes only reports.
    constexpr int kSamples = 64;
    const int64_t page = 4096;
    const int64_t pages = result.buffer_bytes / page;
    std::vector<void*> addrs;
    for (int i = 0; i < kSamples && i < pages; ++i) {
      addrs.push_back(reinterpret_cast<char*>(buf) + (pages * i / kSamples) * page);
    }
    std::vector<int> status(addrs.size(), -1);
    if (numa_move_pages(0, addrs.size(), addrs.data(), nullptr, status.data(), 0) == 0) {
      int on = 0;
      for (int s : status) on += s == o.node;
      result.pages_on_node = static_cast<double>(on) / static_cast<double>(status.size());
    }
  }
  result.huge_pages = AnonHugePagesIn(buf) || AnonHugePagesIn(m.addr);
  return result;
}

}  // namespace podtopo::probe
