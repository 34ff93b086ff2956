// The metrics of `podtopo agent` (Prometheus text, prometheus-cpp's serializer), built from the
// last poll at every scrape, so that a family disappears with the pod or the fault that made it.
// Every family has HELP and TYPE; names follow the Prometheus conventions (snake_case, base
// units, `_total` counters, `_bytes` sizes):
//
//   podtopo_pod_cpus{namespace,pod}                        gauge  CPUs the pod holds for itself
//       (pod-level cpu_ids, else the union of its containers' exclusive cpu_ids), counted once
//   podtopo_pod_memory_bytes{namespace,pod,type}           gauge  pinned memory, counted once
//   podtopo_numa_capacity_cpus{numa_node}                  gauge
//   podtopo_numa_allocatable_cpus{numa_node}               gauge
//   podtopo_numa_available_cpus{numa_node}                 gauge
//   podtopo_numa_memory_capacity_bytes{numa_node,type}     gauge  memory and hugepages-*
//   podtopo_numa_memory_allocatable_bytes{numa_node,type}  gauge
//   podtopo_numa_memory_available_bytes{numa_node,type}    gauge
//   podtopo_podresources_up                                gauge  1 when the last poll succeeded
//   podtopo_polls_total                                    counter
//   podtopo_scrape_errors_total{call}                      counter  connect | list |
//       get_allocatable | malformed | checkpoint
//   podtopo_last_successful_poll_timestamp_seconds         gauge
//   podtopo_checkpoint_kubelet_would_start                 gauge  1 when the kubelet would
//       start with the checkpoints of --kubelet-dir (state check), 0 when not (--kubelet-dir)
//   podtopo_checkpoint_findings{file,severity}             gauge  (--kubelet-dir)
//   podtopo_restart_keeps_pods{kubelet_version}            gauge  1 when a restart of this
//       node's kubelet version (--kubelet-version) keeps every pod of the checkpoints where it
//       is, 0 when it re-allocates some (--kubelet-dir)
//   podtopo_restart_pod_at_risk{pod_uid,issue}             gauge  1 per pod the restart
//       re-allocates, with the upstream issue ("k/k#140989"): pods with pod-level entries in a
//       checkpoint, under a version without that fix (--kubelet-dir)
//   podtopo_nrt_publish_errors_total{reason}              counter  failed writes of the
//       NodeResourceTopology to the API server: transport | token | unauthorized | forbidden |
//       node_not_found | crd_missing | server | rejected (agent/nrt_publisher.h)
//   podtopo_nrt_publishes_total                            counter  successful writes
//   podtopo_nrt_last_publish_timestamp_seconds             gauge  unix time of the last
//       successful write (0: none yet)
//   (the three podtopo_nrt_* families only while publishing: --kubeconfig or in a pod)
// and, with --verify, the podtopo_verify_* families (agent/verify_metrics.h).
// The pod and NUMA families are present only while the last poll succeeded.
//
// Example:
//   AgentStatus s; s.up = true; s.observation = &o; s.zones = &zones;
//   std::string text = RenderMetricsText(s);
#ifndef PODTOPO_AGENT_AGENT_METRICS_H_
#define PODTOPO_AGENT_AGENT_METRICS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/nrt_publisher.h"
#include "agent/observation.h"
#include "agent/verify_metrics.h"

namespace prometheus {
struct MetricFamily;
}

namespace podtopo::agent {

struct CheckpointHealth {
  bool kubelet_starts = false;
  std::map<std::pair<std::string, std::string>, int> findings;  // (file, severity) -> count
  std::string kubelet_version;  // the version whose restart is judged
  // (pod uid, upstream issue) of every pod a restart of that version re-allocates.
  std::vector<std::pair<std::string, std::string>> restart_at_risk;
};

struct AgentStatus {
  bool up = false;
  const Observation* observation = nullptr;  // the current poll; nullptr after a failed one
  const std::vector<ZoneAccount>* zones = nullptr;
  uint64_t polls = 0;
  std::map<std::string, uint64_t> errors;  // call -> failures
  double last_success_seconds = 0;         // unix time; 0 = never
  std::optional<CheckpointHealth> checkpoint;  // nullopt without --kubelet-dir or on error
  bool checkpoint_checked = false;             // --kubelet-dir given
  std::optional<PublishStats> publish;         // nullopt when not publishing to an API server
  std::optional<VerifyStatus> verify;          // --verify: the podtopo_verify_* families
};

std::vector<prometheus::MetricFamily> AgentMetricFamilies(const AgentStatus& status);
std::string RenderMetricsText(const AgentStatus& status);

}  // namespace podtopo::agent

#endif  // PODTOPO_AGENT_AGENT_METRICS_H_
