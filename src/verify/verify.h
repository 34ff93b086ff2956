// podtopo verify: what the kubelet intends (its checkpoints, PodResources) joined with what
// each running container has (cgroup cpuset, its tasks' affinity, memory per NUMA node, the
// host's other tasks on its exclusive CPUs). The pure core of `podtopo verify`: no gRPC, no
// network. Everything is read under a filesystem root so that fixture trees work
// (src/verify/testdata).
//
//   Intent intent = LoadIntent("/var/lib/kubelet").value();
//   Reality reality({.cgroup_root = "/sys/fs/cgroup", .proc_root = "/proc"});
//   std::vector<ContainerRef> refs = ...;  // from the CRI runtime (cli/verify_command.cc)
//   Report r = Verify(intent, refs, reality, {.sample = std::chrono::seconds(1)});
//   std::string json = ReportJson(r).dump(2);
//
// Layouts: the cgroup of a container is found from the runtime's cgroupsPath when given
// ("/kubepods/burstable/pod<uid>/<id>" or systemd's "slice:prefix:name"), else by the
// container id in the directory names of the cpuset hierarchy (v1: <root>/cpuset, v2: <root>),
// which covers the cgroupfs driver (kubepods[/burstable|/besteffort]/pod<uid>/<id>), the
// systemd driver (kubepods.slice/.../kubepods-<qos>-pod<uid_>.slice/cri-containerd-<id>.scope,
// crio-<id>.scope, docker-<id>.scope) and `podtopo serve --cri` (/<root>/pod<uid>/<id>).
//
// Thread safety: values; a Reality may be shared by readers (it caches its directory index
// after the first lookup, which is not synchronised: build it from one thread).
#ifndef PODTOPO_VERIFY_VERIFY_H_
#define PODTOPO_VERIFY_VERIFY_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cpuset/cpuset.h"
#include "nlohmann/json.hpp"

namespace podtopo::verify {

// ---- The intent ---------------------------------------------------------------------------

// The kubelet's checkpoints as verify needs them (from checkpoint/cpu_state_file.h and
// memory_state_file.h: the codecs `podtopo state show` uses).
struct Intent {
  std::string cpu_policy;     // "static", "none"; "" when there is no cpu_manager_state
  std::string memory_policy;  // "Static", "None"; "" when there is no memory_manager_state
  CpuSet default_cpus;        // the node's shared pool (defaultCpuSet)
  std::map<std::string, std::map<std::string, CpuSet>> container_cpus;  // uid -> name -> CPUs
  std::map<std::string, CpuSet> pod_cpus;  // KEP-5526 pod-level entries: uid -> CPUs
  std::map<std::string, std::map<std::string, CpuSet>> container_mems;  // uid -> name -> nodes
  std::map<std::string, CpuSet> pod_mems;  // pod-level memory blocks' NUMA nodes
  // From PodResources (--podresources-socket), keyed by namespace/pod/container: exclusive CPUs
  // and NUMA nodes of memory the kubelet reports. Used where the checkpoints say nothing.
  struct Reported {
    CpuSet cpus;
    CpuSet mems;
  };
  std::map<std::string, Reported> reported;
  std::vector<std::string> problems;  // checkpoints that could not be read, in words

  bool StaticCpu() const { return cpu_policy == "static"; }
  // Every CPU the checkpoint accounts for (default set, entries, pod entries).
  CpuSet NodeCpus() const;
  // True when `name`'s entry in pod `uid` is exclusive to it: no other container of the pod
  // has an entry that intersects it (containers sharing a set are in the pod's pool).
  bool IsExclusive(const std::string& uid, const std::string& name) const;
  // The pod's shared pool: its pod-level CPUs minus its containers' exclusive CPUs (empty for a
  // pod without a pod-level entry).
  CpuSet PodPool(const std::string& uid) const;
};

// Reads <kubelet_dir>/cpu_manager_state and memory_manager_state with the checkpoint codecs
// (the policy the file names, PodLevelResourceManagers on so that pod entries are kept). A
// missing file is not an error (no intent on that side); an unreadable one is a problem in
// Intent::problems. Errors: kubelet_dir is not a directory.
absl::StatusOr<Intent> LoadIntent(const std::string& kubelet_dir);

// ---- The reality --------------------------------------------------------------------------

// A running container as the runtime lists it.
struct ContainerRef {
  std::string pod_namespace;
  std::string pod;
  std::string pod_uid;
  std::string name;
  std::string id;
  std::string cgroups_path;  // the OCI spec's linux.cgroupsPath when the runtime tells it
  int pid = 0;               // its init process, when known
};

struct Task {
  int pid = 0;
  std::string comm;
  CpuSet cpus_allowed;
  CpuSet mems_allowed;
};

struct ContainerState {
  std::string cgroup;       // the cgroup's path relative to the hierarchy, "" when not found
  int cgroup_version = 0;   // 1 or 2
  std::optional<CpuSet> cpus;  // cpuset.cpus (v2: cpuset.cpus.effective)
  std::optional<CpuSet> mems;
  std::vector<Task> tasks;
  std::map<int, uint64_t> numa_bytes;  // memory.numa_stat, bytes per NUMA node
  std::vector<std::string> problems;   // files that could not be read, naming them
};

// A task of the host, for foreign-task: what /proc tells about it.
struct HostTask {
  int pid = 0;
  std::string comm;
  CpuSet cpus_allowed;
  bool kernel_thread = false;  // PF_KTHREAD in /proc/PID/stat flags
  // The sampling window (VerifyOptions::sample > 0): CPU seconds it used (utime + stime of all
  // its threads) and the CPUs its threads were last seen on. nullopt without a window.
  std::optional<double> cpu_seconds;
  CpuSet ran_on;
};

struct RealityOptions {
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string proc_root = "/proc";
  uint64_t page_size = 0;  // cgroup v1 numa_stat counts pages; 0 = this machine's page size
  int clock_ticks = 0;     // /proc/PID/stat ticks per second; 0 = sysconf(_SC_CLK_TCK)
};

class Reality {
 public:
  explicit Reality(RealityOptions options);

  // 2 when <cgroup_root>/cgroup.controllers exists (the unified hierarchy), else 1.
  int CgroupVersion() const { return version_; }
  const RealityOptions& options() const { return options_; }

  // The container's cgroup, relative to the cpuset hierarchy ("" when not found).
  std::string FindCgroup(const ContainerRef& ref);
  // Everything verify reads about one container. Never fails: what cannot be read is a
  // problem of the state (a container gone mid-scan has no cgroup any more).
  ContainerState ReadContainer(const ContainerRef& ref);
  // /proc/PID/status: Name, Cpus_allowed_list, Mems_allowed_list. Errors name the file.
  absl::StatusOr<Task> ReadTask(int pid) const;
  // Every process of /proc that is not in `exclude`, with its affinity (one read each).
  std::vector<HostTask> HostTasks(const std::vector<int>& exclude) const;
  // Fills cpu_seconds and ran_on of `tasks` over a window of `window` (sleeps).
  void Sample(std::vector<HostTask>& tasks, std::chrono::milliseconds window) const;

  // Parsers, public for the tests.
  // memory.numa_stat: v1 "total=<pages> N0=<pages> ..." (pages: multiplied by page_size); v2
  // "anon N0=<bytes> ..." + "file N0=<bytes> ..." (bytes).
  static absl::StatusOr<std::map<int, uint64_t>> ParseNumaStat(const std::string& text,
                                                               int version, uint64_t page_size);
  // "kubepods-burstable-pod<uid>.slice:cri-containerd:<id>" -> the systemd path
  // "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/
  // cri-containerd-<id>.scope"; a plain path is returned without its leading '/'.
  static std::string CgroupsPathToDir(const std::string& cgroups_path);

 private:
  std::string CpusetDir(const std::string& rel) const;
  std::string MemoryDir(const std::string& rel) const;
  void BuildIndex();

  RealityOptions options_;
  int version_ = 1;
  bool indexed_ = false;
  std::map<std::string, std::string> index_;  // container id -> relative cgroup dir
};

// ---- Findings -----------------------------------------------------------------------------

struct Finding {
  std::string kind;  // cpuset-drift, shared-exclusive-cpu, foreign-task, pool-leak,
                     // sidecar-outside-pool, remote-memory, affinity-wider, intent-mismatch
  std::string pod_namespace;
  std::string pod;
  std::string container;
  std::string detail;
  std::optional<int> pid;
  std::string comm;
  std::optional<uint64_t> bytes;
  std::optional<double> cpu_seconds;
  std::string cpus;  // the CPUs concerned, when there are some

  friend bool operator==(const Finding&, const Finding&) = default;
};

// One container, both sides.
struct Observed {
  ContainerRef ref;
  std::optional<CpuSet> intent_cpus;  // nullopt: no intent (policy none, no checkpoint)
  std::optional<CpuSet> intent_mems;
  bool exclusive = false;             // intent_cpus are this container's own
  bool in_pod_pool = false;           // the container runs in its pod's shared pool
  std::string intent_source;          // "checkpoint", "default-cpuset", "pod-pool", "podresources"
  ContainerState actual;
};

// Works out the intent of one container from the checkpoints.
Observed Join(const Intent& intent, const ContainerRef& ref, ContainerState actual);

// The checks, one function per kind. Each is pure.
std::vector<Finding> FindCpusetDrift(const std::vector<Observed>& containers);
std::vector<Finding> FindSharedExclusiveCpus(const std::vector<Observed>& containers);
// pool-leak (a pod's pool in the node's default set per the checkpoint; a pool container on
// the node's pool; a container of another pod or of the node's pool on a pod's pool) and
// sidecar-outside-pool (a pool container on CPUs that are neither its pod's nor the node's).
std::vector<Finding> FindPoolLeaks(const Intent& intent, const std::vector<Observed>& containers);
std::vector<Finding> FindRemoteMemory(const std::vector<Observed>& containers);
std::vector<Finding> FindAffinityWider(const std::vector<Observed>& containers);
// Host tasks (not kernel threads) whose affinity reaches a container's exclusive CPUs or a
// pod's pool: reported when their affinity is narrower than the node's CPUs (pinned there),
// or, for unrestricted ones, when the sampling window saw them use CPU time with a thread last
// on such a CPU.
std::vector<Finding> FindForeignTasks(const Intent& intent, const std::vector<Observed>& containers,
                                      const std::vector<HostTask>& host);
// The checkpoint's exclusive CPUs against PodResources' answer.
std::vector<Finding> FindIntentMismatch(const Intent& intent,
                                        const std::vector<Observed>& containers);

// ---- The whole run ------------------------------------------------------------------------

struct VerifyOptions {
  std::chrono::milliseconds sample{0};  // 0: no sampling window (affinity only)
  bool scan_host = true;                // look for foreign tasks in /proc
};

struct Report {
  std::vector<Observed> containers;
  std::vector<Finding> findings;
  std::vector<std::string> problems;  // partial report: what could not be read
  bool cpu_intent = false;            // a cpu_manager_state was read
};

Report Verify(const Intent& intent, const std::vector<ContainerRef>& refs, Reality& reality,
              const VerifyOptions& options);

// Output.
nlohmann::ordered_json ReportJson(const Report& report);
std::string ReportTable(const Report& report);
std::string ReportHtml(const Report& report);

}  // namespace podtopo::verify

#endif  // PODTOPO_VERIFY_VERIFY_H_
