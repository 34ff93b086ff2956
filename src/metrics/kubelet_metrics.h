// KubeletMetrics: the kubelet's resource-manager metrics (prometheus, `kubelet_` prefix),
// derived from podtopo's admission results, plus the PodResources endpoint counters.
//
// Families (names and labels as the kubelet's; see docs/serve.md for how each is counted):
//   kubelet_topology_manager_admission_requests_total / _errors_total      counters
//   kubelet_topology_manager_admission_duration_ms                         histogram
//   kubelet_cpu_manager_pinning_requests_total / _errors_total             counters
//   kubelet_memory_manager_pinning_requests_total / _errors_total          counters
//   kubelet_resource_manager_allocations_total{resource_name,source}       counter
//   kubelet_resource_manager_allocation_errors_total{resource_name,source} counter
//   kubelet_resource_manager_container_assignments{resource_name,assignment_type} counter
//   kubelet_pod_resources_endpoint_requests_total{server_api_version}, _list, _get,
//   _get_allocatable; kubelet_pod_resources_endpoint_errors_list / _get / _get_allocatable
// The resource_manager_* families are registered only with PodLevelResourceManagers on, as the
// kubelet does.
//
// Example:
//   auto registry = std::make_shared<prometheus::Registry>();
//   KubeletMetrics m(registry, config);
//   m.RecordAdmission(pod, allocation, 0.42);
//   auto exposer = Expose("127.0.0.1:9101", registry);   // GET /metrics
//
// Thread-safe (prometheus-cpp metrics are atomic).
#ifndef PODTOPO_METRICS_KUBELET_METRICS_H_
#define PODTOPO_METRICS_KUBELET_METRICS_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "admission/node.h"
#include "api/pod.h"
#include "config/kubelet_config.h"

namespace prometheus {
class Counter;
class Exposer;
class Histogram;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace podtopo::metrics {

class KubeletMetrics {
 public:
  KubeletMetrics(std::shared_ptr<prometheus::Registry> registry,
                 const config::KubeletConfig& config);
  ~KubeletMetrics();

  // One pod through admission: `allocation` is Node::Admit's result, `duration_ms` the time the
  // Topology Manager's part took (observed only when the pod reached the Topology Manager).
  void RecordAdmission(const Pod& pod, const PodAllocation& allocation, double duration_ms);

  // One PodResources call: version "v1"/"v1alpha1", method "list"/"get"/"get_allocatable".
  void RecordPodResourcesRequest(const std::string& version, const std::string& method,
                                 bool error);

 private:
  struct Families;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> f_;
  bool pod_level_;
};

// The address to listen on for a --metrics-addr value (or another flag's, named by `flag`):
// "HOST:PORT" as given, ":PORT" and "PORT" on 127.0.0.1. Error (kInvalidArgument): no valid
// port, or a URL or path rather than an address ("http://h:1", "./sock"), naming the flag and
// the value.
absl::StatusOr<std::string> ListenAddress(const std::string& address,
                                          std::string_view flag = "--metrics-addr");

// Why an HTTP server cannot listen on `addr` (a ListenAddress result), found by binding a TCP
// socket there: "port 9101 is in use", "permission denied: ports below 1024 need root",
// "cannot assign address ..."; `fallback` when binding works (the server failed otherwise).
// civetweb, under prometheus-cpp's Exposer and the agent, only says "null context".
std::string ListenFailure(const std::string& addr, const std::string& fallback);

// Serves GET /metrics on `address` ("HOST:PORT"; ":PORT" or "PORT" bind 127.0.0.1).
// Errors: a malformed address, or the port cannot be bound (kUnavailable, naming the address).
absl::StatusOr<std::unique_ptr<prometheus::Exposer>> Expose(
    const std::string& address, std::shared_ptr<prometheus::Registry> registry);

}  // namespace podtopo::metrics

#endif  // PODTOPO_METRICS_KUBELET_METRICS_H_
