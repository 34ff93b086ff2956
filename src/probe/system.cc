#include "probe/system.h"

#include <numa.h>
#include <sched.h>
#include <time.h>

#include <cctype>
#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "util/file.h"

namespace podtopo::probe {
namespace {

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

}  // namespace

SystemView ReadSystem() {
  SystemView v;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &mask)) v.allowed_cpus.Add(c);
    }
  }
  v.numa_available = numa_available() >= 0;
  if (v.numa_available) {
    // The nodes that have memory; has_memory is what numa_nodes_ptr is built from.
    if (auto text = ReadSmallFile("/sys/devices/system/node/has_memory"); text.ok()) {
      if (auto nodes = CpuSet::Parse(Trim(*text)); nodes.ok()) v.numa_nodes = *nodes;
    }
    if (v.numa_nodes.IsEmpty()) {
      for (int n = 0; n <= numa_max_node(); ++n) {
        if (numa_bitmask_isbitset(numa_nodes_ptr, n)) v.numa_nodes.Add(n);
      }
    }
    struct bitmask* mems = numa_get_mems_allowed();
    if (mems != nullptr) {
      for (unsigned n = 0; n < mems->size && n <= static_cast<unsigned>(CpuSet::kMaxCpuId); ++n) {
        if (numa_bitmask_isbitset(mems, n)) v.allowed_mems.Add(static_cast<int>(n));
      }
      numa_bitmask_free(mems);
    }
    for (int c : v.allowed_cpus.List()) {
      int node = numa_node_of_cpu(c);
      v.node_of_cpu[c] = node < 0 ? 0 : node;
    }
  }
  if (v.numa_nodes.IsEmpty()) v.numa_nodes = CpuSet{0};
  if (v.allowed_mems.IsEmpty()) v.allowed_mems = v.numa_nodes;
  for (int c : v.allowed_cpus.List()) v.node_of_cpu.try_emplace(c, 0);
  return v;
}

absl::StatusOr<int64_t> ParseCacheSize(const std::string& raw) {
  std::string text = Trim(raw);
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 12) {
    return absl::InvalidArgumentError(fmt::format("cache size \"{}\" is not a number", text));
  }
  int64_t n = std::stoll(text.substr(0, digits));
  std::string unit = text.substr(digits);
  if (unit.empty()) return n;
  if (unit == "K") return n << 10;
  if (unit == "M") return n << 20;
  if (unit == "G") return n << 30;
  return absl::InvalidArgumentError(
      fmt::format("cache size \"{}\": unknown unit \"{}\" (K, M or G)", text, unit));
}

absl::StatusOr<CacheInfo> ReadLastLevelCache(const std::string& cpu_dir, int cpu) {
  std::string dir = fmt::format("{}/cpu{}/cache", cpu_dir, cpu);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(fmt::format("{}: no cache information for CPU {}", dir, cpu));
  }
  CacheInfo best;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("index", 0) != 0) continue;
    std::string base = entry.path().string();
    auto type = ReadSmallFile(base + "/type");
    auto level = ReadSmallFile(base + "/level");
    auto size = ReadSmallFile(base + "/size");
    if (!type.ok() || !level.ok() || !size.ok()) continue;
    if (Trim(*type) == "Instruction") continue;
    auto bytes = ParseCacheSize(*size);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("{}/size: {}", base, std::string(bytes.status().message())));
    }
    int lvl = std::atoi(Trim(*level).c_str());
    if (lvl > best.level || (lvl == best.level && *bytes > best.size_bytes)) {
      best.level = lvl;
      best.size_bytes = *bytes;
      auto shared = ReadSmallFile(base + "/shared_cpu_list");
      best.shared_cpu_list = shared.ok() ? Trim(*shared) : "";
    }
  }
  if (best.level == 0) {
    return absl::NotFoundError(fmt::format("{}: no data or unified cache listed", dir));
  }
  return best;
}

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string HumanBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  if (u == 0 || v == static_cast<double>(static_cast<int64_t>(v))) {
    return fmt::format("{} {}", static_cast<int64_t>(v), kUnits[u]);
  }
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

}  // namespace podtopo::probe
