// `podtopo agent --verify`: the verify core (verify/verify.h) run by the agent every interval,
// and what of its report the agent exports. Labels are bounded: a finding kind (a fixed set), or
// namespace and pod of a pod running on the node; never a PID, a command or a container id. The
// per-pod series are rebuilt from the last run at every scrape, so a pod that is gone loses its
// series at the next run.
//
//   podtopo_verify_up                                   gauge  1 when the last run gave a report
//   podtopo_verify_runs_total                           counter
//   podtopo_verify_errors_total{reason}                 counter  runtime | intent | podresources
//   podtopo_verify_last_run_timestamp_seconds           gauge  unix time of the last run
//   podtopo_verify_duration_seconds                     gauge  the last run, sampling included
//   podtopo_verify_containers                           gauge  containers verified
//   podtopo_verify_problems                             gauge  what the last run could not read
//   podtopo_verify_findings{kind}                       gauge  every kind, 0 when none
//   podtopo_verify_pod_findings{namespace,pod,kind}     gauge  pods with findings only
//   podtopo_verify_foreign_tasks{namespace,pod}         gauge  host tasks that may run on the
//       pod's exclusive CPUs or pod pool (pods with exclusive CPUs or a pod pool only)
//   podtopo_verify_foreign_cpu_seconds{namespace,pod}   gauge  their CPU time over the last
//       sampling window (--verify-sample > 0 only; same pods)
//   podtopo_verify_remote_memory_bytes{namespace,pod}   gauge  memory of the pod's containers on
//       NUMA nodes outside their assigned ones (pods with a memory assignment, or with such
//       memory)
//
// Thread safety: values and pure functions; RunVerify blocks for the sampling window.
#ifndef PODTOPO_AGENT_VERIFY_METRICS_H_
#define PODTOPO_AGENT_VERIFY_METRICS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "verify/verify.h"

namespace prometheus {
struct MetricFamily;
}

namespace podtopo::agent {

struct AgentVerifyOptions {
  bool enabled = false;
  std::string kubelet_dir = "/var/lib/kubelet";  // the intent (checkpoints)
  std::string runtime_endpoint = "unix:///run/containerd/containerd.sock";
  std::string containers_file;      // tests: the containers from a JSON file, not the runtime
  std::string podresources_socket;  // "" = no PodResources intent
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string proc_root = "/proc";
  std::chrono::milliseconds sample{0};
};

// One pod of the last run (namespace/pod).
struct VerifyPod {
  bool protected_cpus = false;  // exclusive CPUs or a pod pool: foreign-task series
  bool memory_assigned = false;  // a memory intent: remote-memory series
  int foreign_tasks = 0;
  double foreign_cpu_seconds = 0;
  uint64_t remote_memory_bytes = 0;
  std::map<std::string, int> findings;  // kind -> count
};

// What the agent keeps of the last run and of all runs.
struct VerifyStatus {
  bool up = false;  // the last run produced a report
  uint64_t runs = 0;
  std::map<std::string, uint64_t> errors;  // reason -> count
  double last_run_seconds = 0;             // unix time; 0 = never
  double duration_seconds = 0;
  bool sampled = false;                    // the run had a sampling window
  int containers = 0;
  int problems = 0;
  std::map<std::string, int> findings;                              // kind -> count
  std::map<std::pair<std::string, std::string>, VerifyPod> pods;    // (namespace, pod)
};

// The finding kinds verify knows, in its order.
const std::vector<std::string>& VerifyFindingKinds();

// Folds a report into `status` (its per-run fields; runs and errors are left alone).
void Summarize(const verify::Report& report, bool sampled, VerifyStatus& status);

// One run: the intent of options.kubelet_dir (plus PodResources when a socket is given), the
// containers of the runtime (or the file), the reality under the roots. Updates every field of
// `status`; a failure (runtime unreachable, kubelet dir missing) counts an error, drops the
// per-pod series (up = 0) and is returned in words.
std::string RunVerify(const AgentVerifyOptions& options, VerifyStatus& status);

void AppendVerifyMetricFamilies(const VerifyStatus& status,
                                std::vector<prometheus::MetricFamily>& out);

}  // namespace podtopo::agent

#endif  // PODTOPO_AGENT_VERIFY_METRICS_H_
