#include "agent/agent_metrics.h"

#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace podtopo::agent {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

MetricFamily Family(const char* name, const char* help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

void AddGauge(MetricFamily& f, Labels labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

void AddCounter(MetricFamily& f, Labels labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  m.counter.value = value;
  f.metric.push_back(std::move(m));
}

}  // namespace

std::vector<MetricFamily> AgentMetricFamilies(const AgentStatus& s) {
  std::vector<MetricFamily> out;
  if (s.up && s.observation != nullptr) {
    auto cpus = Family("podtopo_pod_cpus",
                       "CPUs the pod holds for itself (its pod-level cpu_ids, else the union of "
                       "its containers' exclusive cpu_ids), counted once",
                       MetricType::Gauge);
    auto memory = Family("podtopo_pod_memory_bytes",
                         "Memory the Memory Manager pinned for the pod, by type, counted once "
                         "(pod-level blocks, else its containers' blocks)",
                         MetricType::Gauge);
    for (const auto& p : s.observation->pods) {
      if (p.usage_cpus.IsEmpty() && p.usage_memory.empty()) continue;
      AddGauge(cpus, {{"namespace", p.namespace_}, {"pod", p.name}}, p.usage_cpus.Size());
      for (const auto& [type, bytes] : p.usage_memory) {
        AddGauge(memory, {{"namespace", p.namespace_}, {"pod", p.name}, {"type", type}},
                 static_cast<double>(bytes));
      }
    }
    out.push_back(std::move(cpus));
    out.push_back(std::move(memory));
  }
  if (s.up && s.zones != nullptr) {
    auto cap = Family("podtopo_numa_capacity_cpus", "CPUs of the NUMA node", MetricType::Gauge);
    auto alloc = Family("podtopo_numa_allocatable_cpus",
                        "CPUs of the NUMA node less the reserved CPUs", MetricType::Gauge);
    auto avail = Family("podtopo_numa_available_cpus",
                        "Allocatable CPUs of the NUMA node that no pod holds for itself",
                        MetricType::Gauge);
    auto mcap = Family("podtopo_numa_memory_capacity_bytes",
                       "Memory of the NUMA node by type (memory, hugepages-*)", MetricType::Gauge);
    auto malloc = Family("podtopo_numa_memory_allocatable_bytes",
                         "Memory of the NUMA node the kubelet may pin, by type",
                         MetricType::Gauge);
    auto mavail = Family("podtopo_numa_memory_available_bytes",
                         "Allocatable memory of the NUMA node not pinned by a pod, by type",
                         MetricType::Gauge);
    for (const auto& z : *s.zones) {
      std::string n = std::to_string(z.numa);
      AddGauge(cap, {{"numa_node", n}}, static_cast<double>(z.cpu.capacity));
      AddGauge(alloc, {{"numa_node", n}}, static_cast<double>(z.cpu.allocatable));
      AddGauge(avail, {{"numa_node", n}}, static_cast<double>(z.cpu.available));
      for (const auto& [type, a] : z.memory) {
        AddGauge(mcap, {{"numa_node", n}, {"type", type}}, static_cast<double>(a.capacity));
        AddGauge(malloc, {{"numa_node", n}, {"type", type}}, static_cast<double>(a.allocatable));
        AddGauge(mavail, {{"numa_node", n}, {"type", type}}, static_cast<double>(a.available));
      }
    }
    for (auto* f : {&cap, &alloc, &avail, &mcap, &malloc, &mavail}) out.push_back(std::move(*f));
  }
  auto up = Family("podtopo_podresources_up",
                   "1 when the last poll of the kubelet's PodResources API succeeded, else 0",
                   MetricType::Gauge);
  AddGauge(up, {}, s.up ? 1 : 0);
  out.push_back(std::move(up));
  auto polls = Family("podtopo_polls_total", "Polls of the kubelet's PodResources API",
                      MetricType::Counter);
  AddCounter(polls, {}, static_cast<double>(s.polls));
  out.push_back(std::move(polls));
  auto errors = Family("podtopo_scrape_errors_total",
                       "Failed reads of the kubelet, by call (connect, list, get_allocatable, "
                       "malformed answer, checkpoint)",
                       MetricType::Counter);
  for (const char* call : {"connect", "list", "get_allocatable", "malformed", "checkpoint"}) {
    auto it = s.errors.find(call);
    AddCounter(errors, {{"call", call}}, it == s.errors.end() ? 0 : static_cast<double>(it->second));
  }
  out.push_back(std::move(errors));
  auto last = Family("podtopo_last_successful_poll_timestamp_seconds",
                     "Unix time of the last successful poll (0: none yet)", MetricType::Gauge);
  AddGauge(last, {}, s.last_success_seconds);
  out.push_back(std::move(last));
  if (s.publish) {
    auto errs = Family("podtopo_nrt_publish_errors_total",
                       "Failed writes of the NodeResourceTopology to the API server, by reason",
                       MetricType::Counter);
    for (const char* reason : kPublishErrorReasons) {
      auto it = s.publish->errors.find(reason);
      AddCounter(errs, {{"reason", reason}},
                 it == s.publish->errors.end() ? 0 : static_cast<double>(it->second));
    }
    out.push_back(std::move(errs));
    auto writes = Family("podtopo_nrt_publishes_total",
                         "Successful writes (server-side apply) of the NodeResourceTopology",
                         MetricType::Counter);
    AddCounter(writes, {}, static_cast<double>(s.publish->writes));
    out.push_back(std::move(writes));
    auto last = Family("podtopo_nrt_last_publish_timestamp_seconds",
                       "Unix time of the last successful write of the NodeResourceTopology (0: none yet)",
                       MetricType::Gauge);
    AddGauge(last, {}, s.publish->last_success_seconds);
    out.push_back(std::move(last));
  }
  if (s.checkpoint_checked) {
    auto starts = Family("podtopo_checkpoint_kubelet_would_start",
                         "1 when the kubelet would start with the checkpoints of the kubelet "
                         "directory (podtopo state check), 0 when it would refuse",
                         MetricType::Gauge);
    auto findings = Family("podtopo_checkpoint_findings",
                           "Problems podtopo state check finds in the kubelet's checkpoints",
                           MetricType::Gauge);
    if (s.checkpoint) {
      AddGauge(starts, {}, s.checkpoint->kubelet_starts ? 1 : 0);
      for (const auto& [key, count] : s.checkpoint->findings) {
        AddGauge(findings, {{"file", key.first}, {"severity", key.second}}, count);
      }
      out.push_back(std::move(starts));
      out.push_back(std::move(findings));
      auto keeps = Family("podtopo_restart_keeps_pods",
                          "1 when a restart of this node's kubelet version keeps every pod of "
                          "the checkpoints where it is, 0 when it re-allocates some",
                          MetricType::Gauge);
      AddGauge(keeps, {{"kubelet_version", s.checkpoint->kubelet_version}},
               s.checkpoint->restart_at_risk.empty() ? 1 : 0);
      out.push_back(std::move(keeps));
      if (!s.checkpoint->restart_at_risk.empty()) {
        auto risk = Family("podtopo_restart_pod_at_risk",
                           "1 per pod that a restart of this node's kubelet version re-allocates "
                           "(moved or rejected), with the upstream issue",
                           MetricType::Gauge);
        for (const auto& [uid, issue] : s.checkpoint->restart_at_risk) {
          AddGauge(risk, {{"pod_uid", uid}, {"issue", issue}}, 1);
        }
        out.push_back(std::move(risk));
      }
    }
  }
  if (s.verify) AppendVerifyMetricFamilies(*s.verify, out);
  return out;
}

std::string RenderMetricsText(const AgentStatus& status) {
  return prometheus::TextSerializer().Serialize(AgentMetricFamilies(status));
}

}  // namespace podtopo::agent
