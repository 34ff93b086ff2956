#include "podresources/report.h"

#include "fmt/format.h"

namespace podtopo::podresources {
namespace {

void AddCpus(const CpuSet& cpus, google::protobuf::RepeatedField<int64_t>* out) {
  out->Reserve(cpus.Size());
  cpus.ForEach([&](int cpu) { out->Add(cpu); });
}

void AddMemory(const std::vector<MemoryBlockView>& blocks,
               google::protobuf::RepeatedPtrField<v1::ContainerMemory>* out) {
  for (const auto& b : blocks) {
    v1::ContainerMemory* m = out->Add();
    m->set_memory_type(b.type);
    m->set_size(b.size);
    for (int numa : b.numa_nodes) m->mutable_topology()->add_nodes()->set_id(numa);
  }
}

void AddDevice(const std::string& resource, const std::string& id, const DeviceNuma& numa,
               google::protobuf::RepeatedPtrField<v1::ContainerDevices>* out) {
  v1::ContainerDevices* d = out->Add();
  d->set_resource_name(resource);
  d->add_device_ids(id);
  auto it = numa.find(fmt::format("{}/{}", resource, id));
  if (it != numa.end() && it->second >= 0) d->mutable_topology()->add_nodes()->set_id(it->second);
}

bool IsExclusiveCpu(const ContainerAllocation& c) {
  return c.assignment == "node_exclusive" || c.assignment == "pod_exclusive";
}

// The containers List reports, in the kubelet's order: sidecars, then app containers.
template <typename F>
void ForEachReported(const serve::AdmittedPod& pod, F&& f) {
  auto find = [&](const std::string& name) -> const ContainerAllocation* {
    for (const auto& c : pod.allocation.containers) {
      if (c.name == name) return &c;
    }
    return nullptr;
  };
  for (const auto& c : pod.pod.init_containers) {
    if (c.kind == ContainerKind::kSidecar) f(c, find(c.name));
  }
  for (const auto& c : pod.pod.containers) f(c, find(c.name));
}

}  // namespace

DeviceNuma DeviceNumaMap(const NodeTopology& topology) {
  DeviceNuma m;
  for (const auto& d : topology.devices) m[fmt::format("{}/{}", d.resource, d.id)] = d.numa;
  return m;
}

v1::PodResources BuildPodResources(const serve::AdmittedPod& pod, const ReportingRules& rules,
                                   const DeviceNuma& device_numa) {
  v1::PodResources pr;
  pr.set_name(pod.pod.name);
  pr.set_namespace_(pod.pod.namespace_name);
  const bool pod_level = rules.compat == Compat::k1_37 && rules.pod_level_gate;
  if (pod_level) {
    AddCpus(pod.allocation.cpus, pr.mutable_cpu_ids());
    AddMemory(pod.allocation.memory, pr.mutable_memory());
  }
  const bool pod_memory = !pod.allocation.memory.empty();
  ForEachReported(pod, [&](const Container& spec, const ContainerAllocation* alloc) {
    v1::ContainerResources* c = pr.add_containers();
    c->set_name(spec.name);
    if (alloc == nullptr) return;
    for (const auto& [resource, ids] : alloc->devices) {
      for (const auto& id : ids) AddDevice(resource, id, device_numa, c->mutable_devices());
    }
    if (rules.compat == Compat::k1_36) {
      // v1.36: the CPU Manager's state entry of the container, whatever pool it is.
      if (alloc->assignment != "node_shared") AddCpus(alloc->cpus, c->mutable_cpu_ids());
      AddMemory(alloc->memory, c->mutable_memory());
      return;
    }
    if (IsExclusiveCpu(*alloc)) AddCpus(alloc->cpus, c->mutable_cpu_ids());
    if (!pod_memory || IsContainerEquivalentQosGuaranteed(spec)) {
      AddMemory(alloc->memory, c->mutable_memory());
    }
  });
  return pr;
}

v1alpha1::PodResources BuildV1alpha1PodResources(const serve::AdmittedPod& pod) {
  v1alpha1::PodResources pr;
  pr.set_name(pod.pod.name);
  pr.set_namespace_(pod.pod.namespace_name);
  ForEachReported(pod, [&](const Container& spec, const ContainerAllocation* alloc) {
    v1alpha1::ContainerResources* c = pr.add_containers();
    c->set_name(spec.name);
    if (alloc == nullptr) return;
    for (const auto& [resource, ids] : alloc->devices) {
      v1alpha1::ContainerDevices* d = c->add_devices();
      d->set_resource_name(resource);
      for (const auto& id : ids) d->add_device_ids(id);
    }
  });
  return pr;
}

v1::AllocatableResourcesResponse BuildAllocatable(const AllocatableView& view) {
  v1::AllocatableResourcesResponse r;
  DeviceNuma numa;
  for (const auto& d : view.devices) {
    numa[fmt::format("{}/{}", d.resource, d.id)] = d.numa;
  }
  for (const auto& d : view.devices) AddDevice(d.resource, d.id, numa, r.mutable_devices());
  AddCpus(view.cpus, r.mutable_cpu_ids());
  AddMemory(view.memory, r.mutable_memory());
  return r;
}

std::shared_ptr<const ServedState> BuildServedState(const serve::NodeSnapshot& snapshot,
                                                    const ReportingRules& rules,
                                                    const DeviceNuma& device_numa,
                                                    const v1::AllocatableResourcesResponse& alloc) {
  auto s = std::make_shared<ServedState>();
  s->list.mutable_pod_resources()->Reserve(static_cast<int>(snapshot.pods.size()));
  s->uids.reserve(snapshot.pods.size());
  for (const auto& p : snapshot.pods) {
    if (!p.allocation.admitted) continue;
    s->index[p.pod.Key()] = s->list.pod_resources_size();
    *s->list.add_pod_resources() = BuildPodResources(p, rules, device_numa);
    *s->list_v1alpha1.add_pod_resources() = BuildV1alpha1PodResources(p);
    s->uids.push_back(p.pod.uid);
  }
  for (const Pod& pod : snapshot.rejected) {
    if (s->index.contains(pod.Key())) continue;
    const serve::AdmittedPod known{pod, PodAllocation{}};
    if (rules.list_active_pods) {
      s->known[pod.Key()] = BuildPodResources(known, rules, device_numa);
      continue;
    }
    s->index[pod.Key()] = s->list.pod_resources_size();
    *s->list.add_pod_resources() = BuildPodResources(known, rules, device_numa);
    s->uids.push_back(pod.uid);
  }
  s->allocatable = alloc;
  s->pod_wire.reserve(s->list.pod_resources_size());
  for (const auto& pr : s->list.pod_resources()) {
    v1::ListPodResourcesResponse one;
    *one.add_pod_resources() = pr;
    s->pod_wire.push_back(one.SerializeAsString());
    s->list_wire += s->pod_wire.back();
  }
  return s;
}

}  // namespace podtopo::podresources
