// podtopo verify's cost on a node of 500 running containers, from a generated fixture tree (no
// runtime, no sampling window): the checkpoints read through the codecs, every container's
// cgroup found (directory index) and read (cpuset.cpus, cpuset.mems, tasks, each task's
// /proc/PID/status, memory.numa_stat), the host's /proc scanned for foreign tasks, and every
// check. Goal (issue 24): <= 100 ms.
//
// The node: 256 CPUs on 4 NUMA nodes, cgroup v1 with the cgroupfs layout. 100 Guaranteed pods
// with 2 exclusive CPUs each (CPUs 8-207) and memory on one NUMA node, 400 Burstable containers
// on the default set, one task each, and 300 host processes (one pinned onto an exclusive CPU).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>

#include "checkpoint/cpu_state_file.h"
#include "checkpoint/memory_state_file.h"
#include "fmt/format.h"
#include "verify/verify.h"

namespace podtopo::verify {
namespace {

namespace fs = std::filesystem;

void Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

void Task(const std::string& proc, int pid, const std::string& comm, const std::string& cpus,
          const std::string& mems = "0-3") {
  std::string status = fmt::format(
      "Name:\t{}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t{}\nPid:\t{}\nPPid:\t1\n"
      "VmRSS:\t    1024 kB\nThreads:\t1\nCpus_allowed:\tffffffff\nCpus_allowed_list:\t{}\n"
      "Mems_allowed:\t0000000f\nMems_allowed_list:\t{}\nvoluntary_ctxt_switches:\t10\n",
      comm, pid, pid, cpus, mems);
  std::string stat = fmt::format("{} ({}) S 1 {} {} 0 -1 4194560 100 0 0 0 12 3 0 0 20 0 1 0 100 "
                                 "1000000 250 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 {} 0 "
                                 "0 0 0 0\n", pid, comm, pid, pid, 0);
  Write(fmt::format("{}/{}/status", proc, pid), status);
  Write(fmt::format("{}/{}/stat", proc, pid), stat);
}

struct Fixture {
  std::string root;
  std::vector<ContainerRef> refs;
};

const Fixture& Node500() {
  static const Fixture* f = [] {
    auto* fx = new Fixture;
    fx->root = (fs::temp_directory_path() / fmt::format("podtopo-verify-bench-{}", getpid())).string();
    fs::remove_all(fx->root);
    std::string cg = fx->root + "/cgroup", proc = fx->root + "/proc";
    checkpoint::CpuCheckpoint cpu;
    cpu.policy_name = "static";
    cpu.default_cpu_set = "0-7,208-255";
    checkpoint::MemoryCheckpoint mem;
    mem.policy_name = "Static";
    for (int n = 0; n < 4; ++n) {
      checkpoint::NumaNodeState s;
      s.memory_map["memory"] = {64ull << 30, 0, 64ull << 30, 0, 64ull << 30};
      s.cells = std::vector<int>{n};
      mem.machine_state[n] = s;
    }
    int pid = 10000;
    for (int i = 0; i < 500; ++i) {
      bool guaranteed = i < 100;
      std::string uid = fmt::format("{:08x}-0000-4000-8000-{:012x}", i, i);
      std::string id = fmt::format("{:064x}", i + 1);
      std::string cpus = guaranteed ? fmt::format("{}-{}", 8 + 2 * i, 9 + 2 * i) : cpu.default_cpu_set;
      int node = guaranteed ? (8 + 2 * i) / 64 : 0;
      if (guaranteed) {
        cpu.entries[uid]["c"] = cpus;
        mem.entries[uid]["c"] = {{std::vector<int>{node}, "memory", 1ull << 30}};
      }
      std::string rel = guaranteed ? fmt::format("kubepods/pod{}/{}", uid, id)
                                   : fmt::format("kubepods/burstable/pod{}/{}", uid, id);
      std::string mems = guaranteed ? std::to_string(node) : "0-3";
      Write(cg + "/cpuset/" + rel + "/cpuset.cpus", cpus + "\n");
      Write(cg + "/cpuset/" + rel + "/cpuset.mems", mems + "\n");
      Write(cg + "/cpuset/" + rel + "/tasks", fmt::format("{}\n", pid));
      Write(cg + "/cpuset/" + rel + "/cgroup.procs", fmt::format("{}\n", pid));
      std::string per_node;
      for (int n = 0; n < 4; ++n) per_node += fmt::format(" N{}={}", n, n == node ? 25600 : 0);
      Write(cg + "/memory/" + rel + "/memory.numa_stat",
            fmt::format("total=25600{0}\nfile=0 N0=0 N1=0 N2=0 N3=0\nanon=25600{0}\n"
                        "unevictable=0 N0=0 N1=0 N2=0 N3=0\n", per_node));
      Task(proc, pid, "app", cpus, mems);
      fx->refs.push_back({"default", fmt::format("pod-{}", i), uid, "c", id, "", pid});
      ++pid;
    }
    for (int h = 0; h < 300; ++h) Task(proc, 100 + h, "daemon", h == 0 ? "8" : "0-255");
    Write(fx->root + "/kubelet/.keep", "");
    (void)checkpoint::WriteCpuCheckpointFile(fx->root + "/kubelet/cpu_manager_state", cpu, {});
    (void)checkpoint::WriteMemoryCheckpointFile(fx->root + "/kubelet/memory_manager_state", mem, {});
    return fx;
  }();
  return *f;
}

void BM_Verify500Containers(benchmark::State& state) {
  const Fixture& fx = Node500();
  size_t findings = 0;
  std::string first;
  for (auto _ : state) {
    auto intent = LoadIntent(fx.root + "/kubelet");
    Reality reality({.cgroup_root = fx.root + "/cgroup", .proc_root = fx.root + "/proc"});
    Report r = Verify(*intent, fx.refs, reality, {});
    findings = r.findings.size();
    if (findings > 1) first = r.findings[1].kind + ": " + r.findings[1].detail;
    if (!r.problems.empty()) {
      state.SkipWithError(r.problems[0].c_str());
      break;
    }
    benchmark::DoNotOptimize(r);
  }
  // One planted fault: the host daemon pinned onto CPU 8.
  if (findings != 1) state.SkipWithError(fmt::format("{} findings, want 1 ({})", findings, first).c_str());
  state.counters["containers"] = static_cast<double>(fx.refs.size());
}
BENCHMARK(BM_Verify500Containers)->Unit(benchmark::kMillisecond);

// The output of the same run as JSON (what `-o json` adds).
void BM_Verify500ContainersJson(benchmark::State& state) {
  const Fixture& fx = Node500();
  auto intent = LoadIntent(fx.root + "/kubelet");
  Reality reality({.cgroup_root = fx.root + "/cgroup", .proc_root = fx.root + "/proc"});
  Report r = Verify(*intent, fx.refs, reality, {});
  for (auto _ : state) benchmark::DoNotOptimize(ReportJson(r).dump(2));
}
BENCHMARK(BM_Verify500ContainersJson)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace podtopo::verify

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  std::filesystem::remove_all(podtopo::verify::Node500().root);
  return 0;
}
