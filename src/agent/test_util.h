// Helpers for the agent tests: the docs' example pods admitted on preset:demo with the default
// configuration, reported as a v1.37 kubelet or a v1.36 one reports them (podresources/report.h),
// and turned into an Observation without a socket.
#ifndef PODTOPO_AGENT_TEST_UTIL_H_
#define PODTOPO_AGENT_TEST_UTIL_H_

#include <memory>
#include <vector>

#include "agent/observation.h"
#include "podresources/report.h"
#include "podresources/test_util.h"

namespace podtopo::agent::testutil {

struct DocsNode {
  std::unique_ptr<Node> node;
  NodeTopology topology;
  config::KubeletConfig config;
  std::vector<v1::PodResources> reported;
  v1::AllocatableResourcesResponse allocatable;
};

// The seed pod (pod-level-resource-demo) and pod-scope-mixed, as `compat` reports them.
inline DocsNode AdmitDocsPods(podresources::Compat compat) {
  namespace tu = podresources::testutil;
  DocsNode d;
  d.config = tu::PodScope();
  d.node = tu::MakeNode(d.config);
  d.topology = d.node->topology();
  podresources::ReportingRules rules{.pod_level_gate = true, .compat = compat};
  auto numa = podresources::DeviceNumaMap(d.topology);
  for (const char* file : {"pod-level-resource-demo.yaml", "pod-scope-mixed.yaml"}) {
    Pod pod = tu::LoadOnePod(::podtopo::testing::SourceDir() + "/docs/examples/" + file);
    d.reported.push_back(podresources::BuildPodResources(tu::AdmitOrDie(*d.node, pod), rules, numa));
  }
  podresources::AllocatableView view;
  view.cpus = d.node->AllocatableCpus();
  for (const auto& [n, types] : d.node->MemoryTables()) {
    for (const auto& [type, t] : types) {
      if (t.allocatable > 0) view.memory.push_back({type, t.allocatable, {n}});
    }
  }
  d.allocatable = podresources::BuildAllocatable(view);
  return d;
}

// What Observe() makes of those answers.
inline Observation ObservationOf(const DocsNode& d) {
  Observation o;
  client::NumaMap map = NumaMapOf(d.topology);
  for (const auto& p : d.reported) {
    auto v = client::BuildPodView(p, map);
    EXPECT_TRUE(v.ok()) << v.status();
    if (v.ok()) o.pods.push_back(*v);
  }
  auto a = client::BuildAllocatableView(d.allocatable, map);
  EXPECT_TRUE(a.ok()) << a.status();
  if (a.ok()) o.allocatable = *a;
  o.usage = client::SumUsage(o.pods, map);
  return o;
}

}  // namespace podtopo::agent::testutil

#endif  // PODTOPO_AGENT_TEST_UTIL_H_
