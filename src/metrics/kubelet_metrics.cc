#include "metrics/kubelet_metrics.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "fmt/format.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace podtopo::metrics {

using prometheus::BuildCounter;
using prometheus::BuildHistogram;
using prometheus::Counter;
using prometheus::Family;

struct KubeletMetrics::Families {
  Counter* tm_requests;
  Counter* tm_errors;
  prometheus::Histogram* tm_duration;
  Counter* cpu_pinning_requests;
  Counter* cpu_pinning_errors;
  Counter* mem_pinning_requests;
  Counter* mem_pinning_errors;
  Family<Counter>* allocations = nullptr;
  Family<Counter>* allocation_errors = nullptr;
  Family<Counter>* assignments = nullptr;
  Family<Counter>* pr_requests_total;
  Family<Counter>* pr_list;
  Family<Counter>* pr_get;
  Family<Counter>* pr_get_allocatable;
  Family<Counter>* pr_errors_list;
  Family<Counter>* pr_errors_get;
  Family<Counter>* pr_errors_get_allocatable;
};

namespace {

Counter* Plain(prometheus::Registry& r, const char* name, const char* help) {
  return &BuildCounter().Name(name).Help(help).Register(r).Add({});
}

Family<Counter>* Fam(prometheus::Registry& r, const char* name, const char* help) {
  return &BuildCounter().Name(name).Help(help).Register(r);
}

// The kubelet's TopologyManagerAdmissionDuration buckets: exponential, start 0.05, factor 2,
// 15 buckets.
prometheus::Histogram::BucketBoundaries DurationBuckets() {
  prometheus::Histogram::BucketBoundaries b;
  double v = 0.05;
  for (int i = 0; i < 15; ++i, v *= 2) b.push_back(v);
  return b;
}

bool StartsWithOutOf(const std::string& reason) {
  return reason.size() >= 5 && std::tolower(static_cast<unsigned char>(reason[0])) == 'o' &&
         std::tolower(static_cast<unsigned char>(reason[1])) == 'u' &&
         std::tolower(static_cast<unsigned char>(reason[2])) == 't' &&
         std::tolower(static_cast<unsigned char>(reason[3])) == 'o' &&
         std::tolower(static_cast<unsigned char>(reason[4])) == 'f';
}

bool Mentions(const std::string& text, const char* word) {
  return text.find(word) != std::string::npos;
}

}  // namespace

KubeletMetrics::KubeletMetrics(std::shared_ptr<prometheus::Registry> registry,
                               const config::KubeletConfig& config)
    : registry_(std::move(registry)), f_(std::make_unique<Families>()) {
  auto& r = *registry_;
  pod_level_ = config.FeatureEnabled("PodLevelResourceManagers") &&
               config.FeatureEnabled("PodLevelResources");
  f_->tm_requests = Plain(r, "kubelet_topology_manager_admission_requests_total",
                          "The number of admission requests where resources have to be aligned.");
  f_->tm_errors = Plain(r, "kubelet_topology_manager_admission_errors_total",
                        "The number of admission request failures where resources could not be "
                        "aligned.");
  f_->tm_duration = &BuildHistogram()
                         .Name("kubelet_topology_manager_admission_duration_ms")
                         .Help("Duration in milliseconds to serve a pod admission request.")
                         .Register(r)
                         .Add({}, DurationBuckets());
  f_->cpu_pinning_requests = Plain(r, "kubelet_cpu_manager_pinning_requests_total",
                                   "The number of cpu core allocations which required pinning.");
  f_->cpu_pinning_errors =
      Plain(r, "kubelet_cpu_manager_pinning_errors_total",
            "The number of cpu core allocations which required pinning failed.");
  f_->mem_pinning_requests =
      Plain(r, "kubelet_memory_manager_pinning_requests_total",
            "The number of memory pages allocations which required pinning.");
  f_->mem_pinning_errors =
      Plain(r, "kubelet_memory_manager_pinning_errors_total",
            "The number of memory pages allocations which required pinning that failed.");
  if (pod_level_) {
    f_->allocations = Fam(r, "kubelet_resource_manager_allocations_total",
                          "Number of resource allocations performed by resource managers.");
    f_->allocation_errors =
        Fam(r, "kubelet_resource_manager_allocation_errors_total",
            "Number of errors encountered by resource managers during allocation.");
    f_->assignments = Fam(r, "kubelet_resource_manager_container_assignments",
                          "Number of containers assigned by resource managers, by type.");
  }
  f_->pr_requests_total = Fam(r, "kubelet_pod_resources_endpoint_requests_total",
                              "Cumulative number of requests to the PodResource endpoint.");
  f_->pr_list = Fam(r, "kubelet_pod_resources_endpoint_requests_list",
                    "Number of requests to the PodResource List endpoint.");
  f_->pr_get = Fam(r, "kubelet_pod_resources_endpoint_requests_get",
                   "Number of requests to the PodResource Get endpoint.");
  f_->pr_get_allocatable =
      Fam(r, "kubelet_pod_resources_endpoint_requests_get_allocatable",
          "Number of requests to the PodResource GetAllocatableResources endpoint.");
  f_->pr_errors_list = Fam(r, "kubelet_pod_resources_endpoint_errors_list",
                           "Number of requests to the PodResource List endpoint which returned "
                           "error.");
  f_->pr_errors_get = Fam(r, "kubelet_pod_resources_endpoint_errors_get",
                          "Number of requests to the PodResource Get endpoint which returned "
                          "error.");
  f_->pr_errors_get_allocatable =
      Fam(r, "kubelet_pod_resources_endpoint_errors_get_allocatable",
          "Number of requests to the PodResource GetAllocatableResources endpoint which "
          "returned error.");
}

KubeletMetrics::~KubeletMetrics() = default;

void KubeletMetrics::RecordAdmission(const Pod& pod, const PodAllocation& a, double duration_ms) {
  // A node-fit rejection (OutOfcpu, ...) happens before the Topology Manager's admit handler.
  if (!a.admitted && StartsWithOutOf(a.reason)) return;
  f_->tm_requests->Increment();
  f_->tm_duration->Observe(duration_ms);
  if (!a.admitted) {
    f_->tm_errors->Increment();
    const bool memory = Mentions(a.message, "memorymanager") || Mentions(a.message, "memory");
    const bool cpu = a.reason == "SMTAlignmentError" || Mentions(a.message, "cpu");
    if (cpu) f_->cpu_pinning_errors->Increment();
    if (Mentions(a.message, "[memorymanager]")) f_->mem_pinning_errors->Increment();
    if (pod_level_ && pod.HasPodLevelResources() && a.reason == "EmptyPodSharedPoolError") {
      if (cpu) f_->allocation_errors->Add({{"resource_name", "cpu"}, {"source", "pod"}}).Increment();
      if (memory && !cpu) {
        f_->allocation_errors->Add({{"resource_name", "memory"}, {"source", "pod"}}).Increment();
      }
    }
    return;
  }
  const bool pod_cpu = !a.cpus.IsEmpty();
  const bool pod_memory = !a.memory.empty();
  for (const auto& c : a.containers) {
    if (c.kind == ContainerKind::kEphemeral) continue;
    // CPU.
    if (c.assignment == "node_exclusive") {
      f_->cpu_pinning_requests->Increment();
      if (pod_level_) {
        f_->allocations->Add({{"resource_name", "cpu"}, {"source", "node"}}).Increment();
        f_->assignments->Add({{"resource_name", "cpu"}, {"assignment_type", "node_exclusive"}})
            .Increment();
      }
    } else if (pod_cpu && (c.assignment == "pod_exclusive" || c.assignment == "pod_shared")) {
      if (c.assignment == "pod_exclusive") f_->cpu_pinning_requests->Increment();
      if (pod_level_) {
        f_->allocations->Add({{"resource_name", "cpu"}, {"source", "pod"}}).Increment();
        f_->assignments->Add({{"resource_name", "cpu"}, {"assignment_type", c.assignment}})
            .Increment();
      }
    }
    // Memory.
    if (pod_memory) {
      const Container* spec = pod.FindContainer(c.name);
      const bool exclusive = spec != nullptr && IsContainerEquivalentQosGuaranteed(*spec);
      if (exclusive) f_->mem_pinning_requests->Increment();
      if (pod_level_) {
        f_->allocations->Add({{"resource_name", "memory"}, {"source", "pod"}}).Increment();
        f_->assignments
            ->Add({{"resource_name", "memory"},
                   {"assignment_type", exclusive ? "pod_exclusive" : "pod_shared"}})
            .Increment();
      }
    } else if (!c.memory.empty()) {
      f_->mem_pinning_requests->Increment();
      if (pod_level_) {
        f_->allocations->Add({{"resource_name", "memory"}, {"source", "node"}}).Increment();
        f_->assignments
            ->Add({{"resource_name", "memory"}, {"assignment_type", "node_exclusive"}})
            .Increment();
      }
    }
  }
}

void KubeletMetrics::RecordPodResourcesRequest(const std::string& version,
                                               const std::string& method, bool error) {
  prometheus::Labels l{{"server_api_version", version}};
  f_->pr_requests_total->Add(l).Increment();
  if (method == "list") {
    f_->pr_list->Add(l).Increment();
    if (error) f_->pr_errors_list->Add(l).Increment();
  } else if (method == "get") {
    f_->pr_get->Add(l).Increment();
    if (error) f_->pr_errors_get->Add(l).Increment();
  } else if (method == "get_allocatable") {
    f_->pr_get_allocatable->Add(l).Increment();
    if (error) f_->pr_errors_get_allocatable->Add(l).Increment();
  }
}

absl::StatusOr<std::string> ListenAddress(const std::string& address, std::string_view flag) {
  if (address.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(fmt::format(
        "{} {:?}: expected HOST:PORT, e.g. 127.0.0.1:9101 (an address, not a URL or a path)", flag,
        address));
  }
  std::string addr = address;
  if (!addr.empty() && addr[0] == ':') addr = "127.0.0.1" + addr;
  if (addr.find(':') == std::string::npos) addr = "127.0.0.1:" + addr;
  std::string port = addr.substr(addr.rfind(':') + 1);
  if (port.empty() || !std::all_of(port.begin(), port.end(), ::isdigit) || port.size() > 5 ||
      std::stoi(port) > 65535) {
    return absl::InvalidArgumentError(
        fmt::format("{} {:?}: expected HOST:PORT, e.g. 127.0.0.1:9101", flag, address));
  }
  return addr;
}

std::string ListenFailure(const std::string& addr, const std::string& fallback) {
  const size_t colon = addr.rfind(':');
  std::string host = addr.substr(0, colon);
  const std::string port = addr.substr(colon + 1);
  const bool v6 = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (v6) host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = v6 ? AF_INET6 : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
      rc != 0) {
    return fmt::format("cannot resolve {}: {}", host, gai_strerror(rc));
  }
  std::string why = fallback;
  int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // as civetweb binds
    if (bind(fd, found->ai_addr, found->ai_addrlen) != 0) {
      const int e = errno;
      if (e == EADDRINUSE) {
        why = fmt::format("port {} is in use (another process listens on {})", port, addr);
      } else if (e == EACCES) {
        why = fmt::format("permission denied: ports below 1024 need root");
      } else {
        why = fmt::format("cannot bind {}: {}", addr, std::strerror(e));
      }
    }
    close(fd);
  }
  freeaddrinfo(found);
  return why;
}

absl::StatusOr<std::unique_ptr<prometheus::Exposer>> Expose(
    const std::string& address, std::shared_ptr<prometheus::Registry> registry) {
  auto addr = ListenAddress(address);
  if (!addr.ok()) return addr.status();
  try {
    auto exposer = std::make_unique<prometheus::Exposer>(*addr, 1);
    exposer->RegisterCollectable(registry);
    return exposer;
  } catch (const std::exception& e) {
    return absl::UnavailableError(fmt::format("--metrics-addr {}: cannot serve metrics: {}",
                                              *addr, ListenFailure(*addr, e.what())));
  }
}

}  // namespace podtopo::metrics
