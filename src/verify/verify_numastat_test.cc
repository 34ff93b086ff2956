// Peer: verify's memory per NUMA node against `numastat -p PID` (Debian's numactl) for the same
// process. verify reads memory per NUMA node from a cgroup's memory.numa_stat (Reality::
// ReadContainer), not from a process, so the test makes a cgroup of its own under the cgroup v1
// hierarchies (/sys/fs/cgroup/memory and cpuset, as root), starts python3 in it, has it write
// 64 MiB, and reads both sides while it waits. numastat -p sums the process's /proc/PID/numa_maps
// (every resident mapped page, the interpreter's shared libraries included); memory.numa_stat
// counts the pages charged to the cgroup (its anonymous memory, and page cache it brought in).
// The two differ by the shared file pages first read by someone else and by the page cache
// nobody maps: docs/verify.md ("Peers") gives the margin, 16 MiB per node, and the numbers of
// this machine. Skips, saying why, without numastat, python3, root or a writable v1 memory
// hierarchy.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "gtest/gtest.h"
#include "util/file.h"
#include "verify/verify.h"

namespace podtopo::verify {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kMarginBytes = 16 * kMiB;

// The "Total" row of `numastat -p PID`: MB per node (the last column, the sum, is dropped).
std::vector<double> NumastatNodes(int pid, std::string* raw) {
  std::string cmd = "numastat -p " + std::to_string(pid) + " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return {};
  char buf[4096];
  while (fgets(buf, sizeof(buf), f) != nullptr) raw->append(buf);
  pclose(f);
  std::istringstream in(*raw);
  std::vector<double> last_total;
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    std::string head;
    l >> head;
    if (head != "Total") continue;
    std::vector<double> v;
    for (double x; l >> x;) v.push_back(x);
    if (!v.empty()) last_total = v;
  }
  if (last_total.size() > 1) last_total.pop_back();
  return last_total;
}

TEST(VerifyPeer, NumaMemoryOfAProcessAgainstNumastat) {
  if (system("command -v numastat >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "numastat is not installed (Debian package numactl: scripts/setup.sh test)";
  }
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string memory = "/sys/fs/cgroup/memory", cpuset = "/sys/fs/cgroup/cpuset";
  if (geteuid() != 0 || !std::filesystem::exists(memory + "/memory.numa_stat") ||
      !std::filesystem::is_directory(cpuset)) {
    GTEST_SKIP() << "needs root and the cgroup v1 memory and cpuset hierarchies under "
                    "/sys/fs/cgroup (verify reads memory per NUMA node from a cgroup)";
  }
  const std::string name = "podtopo-numastat-" + std::to_string(getpid());
  if (mkdir((memory + "/" + name).c_str(), 0755) != 0) {
    GTEST_SKIP() << memory << " is not writable here: " << strerror(errno);
  }
  ASSERT_EQ(mkdir((cpuset + "/" + name).c_str(), 0755), 0) << strerror(errno);

  // The shell joins the cgroup, then becomes python3 (same pid): everything python3 allocates
  // from its start is charged to the cgroup. 64 MiB written (not calloc's untouched zero pages).
  const std::string script = "/tmp/" + name + ".py";
  ASSERT_TRUE(WriteFileAtomically(script,
                                  "import os, time\n"
                                  "b = bytearray(b'\\x01') * (64 << 20)\n"
                                  "print(os.getpid(), flush=True)\n"
                                  "time.sleep(60)\n")
                  .ok());
  std::string cmd = "echo $$ > " + memory + "/" + name +
                    "/cgroup.procs && exec /usr/bin/python3 " + script;
  FILE* child = popen(cmd.c_str(), "r");
  ASSERT_NE(child, nullptr);
  char line[64] = {};
  int pid = 0;
  if (fgets(line, sizeof(line), child) != nullptr) pid = atoi(line);
  ASSERT_GT(pid, 0) << "python3 did not start in the cgroup";

  Reality reality({.cgroup_root = "/sys/fs/cgroup"});
  ContainerRef ref{.pod_namespace = "peer", .pod = "numastat", .pod_uid = "peer",
                   .name = "python3", .id = name, .cgroups_path = "/" + name, .pid = pid};
  ContainerState st = reality.ReadContainer(ref);
  std::string raw;
  std::vector<double> numastat_mb = NumastatNodes(pid, &raw);

  kill(pid, SIGKILL);
  pclose(child);
  for (int i = 0; i < 50 && rmdir((memory + "/" + name).c_str()) != 0; ++i) usleep(20000);
  rmdir((cpuset + "/" + name).c_str());
  std::filesystem::remove(script);

  ASSERT_EQ(st.cgroup, name);
  ASSERT_FALSE(st.numa_bytes.empty()) << "memory.numa_stat not read";
  ASSERT_FALSE(numastat_mb.empty()) << raw;
  ASSERT_EQ(numastat_mb.size(), st.numa_bytes.size()) << raw;
  double verify_total = 0, numastat_total = 0;
  for (size_t node = 0; node < numastat_mb.size(); ++node) {
    double v = static_cast<double>(st.numa_bytes[static_cast<int>(node)]);
    double n = numastat_mb[node] * kMiB;
    verify_total += v;
    numastat_total += n;
    std::printf("NUMA node %zu: podtopo verify (memory.numa_stat) %.2f MiB, numastat -p %.2f MiB, "
                "difference %.2f MiB\n", node, v / kMiB, n / kMiB, (v - n) / kMiB);
    EXPECT_NEAR(v, n, kMarginBytes) << "node " << node << "\n" << raw;
  }
  EXPECT_GE(verify_total, 64 * kMiB);
  EXPECT_GE(numastat_total, 64 * kMiB);
}

}  // namespace
}  // namespace podtopo::verify
