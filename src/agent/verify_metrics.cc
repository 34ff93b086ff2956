#include "agent/verify_metrics.h"

#include <chrono>

#include "fmt/format.h"
#include "prometheus/metric_family.h"
#include "verify/discovery.h"

namespace podtopo::agent {
namespace {

using VerifyLabels = std::vector<prometheus::ClientMetric::Label>;

prometheus::MetricFamily VerifyFamily(const char* name, const char* help, prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

void VerifyAdd(prometheus::MetricFamily& f, VerifyLabels labels, double value) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (f.type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
}

double VerifyNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

const std::vector<std::string>& VerifyFindingKinds() {
  static const std::vector<std::string> kinds = {
      "cpuset-drift",   "shared-exclusive-cpu", "pool-leak",       "sidecar-outside-pool",
      "remote-memory",  "affinity-wider",       "intent-mismatch", "foreign-task"};
  return kinds;
}

void Summarize(const verify::Report& report, bool sampled, VerifyStatus& s) {
  s.up = true;
  s.sampled = sampled;
  s.containers = static_cast<int>(report.containers.size());
  s.problems = static_cast<int>(report.problems.size());
  s.findings.clear();
  s.pods.clear();
  for (const std::string& kind : VerifyFindingKinds()) s.findings[kind] = 0;
  for (const verify::Observed& o : report.containers) {
    VerifyPod& p = s.pods[{o.ref.pod_namespace, o.ref.pod}];
    p.protected_cpus |= (o.exclusive && o.intent_cpus && !o.intent_cpus->IsEmpty()) ||
                        o.in_pod_pool;
    p.memory_assigned |= o.intent_mems.has_value() && !o.intent_mems->IsEmpty();
  }
  for (const verify::Finding& f : report.findings) {
    ++s.findings[f.kind];
    VerifyPod& p = s.pods[{f.pod_namespace, f.pod}];
    ++p.findings[f.kind];
    if (f.kind == "foreign-task") {
      p.protected_cpus = true;
      ++p.foreign_tasks;
      if (f.cpu_seconds) p.foreign_cpu_seconds += *f.cpu_seconds;
    } else if (f.kind == "remote-memory") {
      p.remote_memory_bytes += f.bytes.value_or(0);
    }
  }
}

std::string RunVerify(const AgentVerifyOptions& o, VerifyStatus& s) {
  auto start = std::chrono::steady_clock::now();
  ++s.runs;
  s.last_run_seconds = VerifyNow();
  auto fail = [&](const char* reason, std::string message) {
    ++s.errors[reason];
    s.up = false;
    s.containers = 0;
    s.problems = 0;
    s.findings.clear();
    s.pods.clear();
    s.duration_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return message;
  };
  auto intent = verify::LoadIntent(o.kubelet_dir);
  if (!intent.ok()) {
    return fail("intent", fmt::format("verify: --kubelet-dir: {}",
                                      std::string(intent.status().message())));
  }
  std::vector<std::string> problems;
  if (!o.podresources_socket.empty()) {
    if (absl::Status st = verify::AddPodResources(o.podresources_socket, *intent); !st.ok()) {
      ++s.errors["podresources"];
      problems.push_back(fmt::format("PodResources {}: {}", o.podresources_socket,
                                     std::string(st.message())));
    }
  }
  std::vector<verify::ContainerRef> refs;
  if (!o.containers_file.empty()) {
    auto file = verify::ContainersFromFile(o.containers_file);
    if (!file.ok()) {
      return fail("runtime", fmt::format("verify: --containers: {}",
                                         std::string(file.status().message())));
    }
    refs = std::move(*file);
  } else if (absl::Status st = verify::ContainersFromRuntime(o.runtime_endpoint, refs, problems);
             !st.ok()) {
    return fail("runtime", fmt::format("verify: cannot list the node's containers through "
                                       "--runtime-endpoint {}: {}",
                                       o.runtime_endpoint, std::string(st.message())));
  }
  verify::Reality reality({.cgroup_root = o.cgroup_root, .proc_root = o.proc_root});
  verify::Report report = verify::Verify(*intent, refs, reality, {.sample = o.sample});
  report.problems.insert(report.problems.begin(), problems.begin(), problems.end());
  Summarize(report, o.sample.count() > 0, s);
  s.duration_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report.problems.empty() ? "" : fmt::format("verify: {} problem(s) reading the node, "
                                                    "the report is partial (first: {})",
                                                    report.problems.size(), report.problems[0]);
}

void AppendVerifyMetricFamilies(const VerifyStatus& s, std::vector<prometheus::MetricFamily>& out) {
  auto up = VerifyFamily("podtopo_verify_up", "1 when the last verify run produced a report, else 0",
                   prometheus::MetricType::Gauge);
  VerifyAdd(up, {}, s.up ? 1 : 0);
  out.push_back(std::move(up));
  auto runs = VerifyFamily("podtopo_verify_runs_total", "Verify runs", prometheus::MetricType::Counter);
  VerifyAdd(runs, {}, static_cast<double>(s.runs));
  out.push_back(std::move(runs));
  auto errors = VerifyFamily("podtopo_verify_errors_total",
                       "Verify runs that failed (runtime: the containers could not be listed; "
                       "intent: the kubelet directory could not be read) or ran without "
                       "PodResources' answer (podresources)",
                       prometheus::MetricType::Counter);
  for (const char* reason : {"runtime", "intent", "podresources"}) {
    auto it = s.errors.find(reason);
    VerifyAdd(errors, {{"reason", reason}}, it == s.errors.end() ? 0 : static_cast<double>(it->second));
  }
  out.push_back(std::move(errors));
  auto last = VerifyFamily("podtopo_verify_last_run_timestamp_seconds",
                     "Unix time of the last verify run (0: none yet)", prometheus::MetricType::Gauge);
  VerifyAdd(last, {}, s.last_run_seconds);
  out.push_back(std::move(last));
  auto duration = VerifyFamily("podtopo_verify_duration_seconds",
                         "Wall time of the last verify run, its sampling window included",
                         prometheus::MetricType::Gauge);
  VerifyAdd(duration, {}, s.duration_seconds);
  out.push_back(std::move(duration));
  if (!s.up) return;

  auto containers = VerifyFamily("podtopo_verify_containers", "Containers the last verify run joined",
                           prometheus::MetricType::Gauge);
  VerifyAdd(containers, {}, s.containers);
  out.push_back(std::move(containers));
  auto problems = VerifyFamily("podtopo_verify_problems",
                         "What the last verify run could not read (the report is partial when "
                         "non-zero; the agent's log names them)",
                         prometheus::MetricType::Gauge);
  VerifyAdd(problems, {}, s.problems);
  out.push_back(std::move(problems));
  auto findings = VerifyFamily("podtopo_verify_findings", "Findings of the last verify run, by kind",
                         prometheus::MetricType::Gauge);
  for (const auto& [kind, n] : s.findings) VerifyAdd(findings, {{"kind", kind}}, n);
  out.push_back(std::move(findings));

  auto pod_findings = VerifyFamily("podtopo_verify_pod_findings",
                             "Findings of the last verify run per pod and kind (pods with "
                             "findings only)",
                             prometheus::MetricType::Gauge);
  auto foreign = VerifyFamily("podtopo_verify_foreign_tasks",
                        "Host tasks whose affinity reaches the pod's exclusive CPUs or pod pool "
                        "(pinned there, or seen running there in the sampling window)",
                        prometheus::MetricType::Gauge);
  auto foreign_cpu = VerifyFamily("podtopo_verify_foreign_cpu_seconds",
                            "CPU time those host tasks used over the last sampling window (each "
                            "task's whole CPU time in the window)",
                            prometheus::MetricType::Gauge);
  auto remote = VerifyFamily("podtopo_verify_remote_memory_bytes",
                       "Memory of the pod's containers on NUMA nodes outside their assigned "
                       "ones (memory.numa_stat)",
                       prometheus::MetricType::Gauge);
  for (const auto& [key, p] : s.pods) {
    VerifyLabels pod = {{"namespace", key.first}, {"pod", key.second}};
    for (const auto& [kind, n] : p.findings) {
      VerifyLabels l = pod;
      l.push_back({"kind", kind});
      VerifyAdd(pod_findings, std::move(l), n);
    }
    if (p.protected_cpus) {
      VerifyAdd(foreign, pod, p.foreign_tasks);
      if (s.sampled) VerifyAdd(foreign_cpu, pod, p.foreign_cpu_seconds);
    }
    if (p.memory_assigned || p.remote_memory_bytes > 0) {
      VerifyAdd(remote, pod, static_cast<double>(p.remote_memory_bytes));
    }
  }
  out.push_back(std::move(pod_findings));
  out.push_back(std::move(foreign));
  if (s.sampled) out.push_back(std::move(foreign_cpu));
  out.push_back(std::move(remote));
}

}  // namespace podtopo::agent
