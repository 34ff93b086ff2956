// The agent's metrics from the docs' pods, as both kubelet versions report them; and what is
// left when the kubelet is gone.
#include "agent/agent_metrics.h"

#include <set>
#include <sstream>

#include "agent/observed_picture.h"
#include "agent/test_util.h"
#include "gtest/gtest.h"

namespace podtopo::agent {
namespace {

using podresources::Compat;

// Every family has HELP and TYPE lines, in that order, before its samples.
void ExpectHelpAndType(const std::string& text, size_t families) {
  std::istringstream in(text);
  std::string line, family;
  std::set<std::string> typed;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      family = line.substr(7, line.find(' ', 7) - 7);
    } else if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_EQ(line.substr(7, line.find(' ', 7) - 7), family) << line;
      typed.insert(family);
    } else if (!line.empty()) {
      std::string name = line.substr(0, line.find_first_of("{ "));
      EXPECT_TRUE(typed.count(name) > 0) << "sample without HELP/TYPE: " << line;
    }
  }
  EXPECT_EQ(typed.size(), families) << text;
}

class MetricsTest : public ::testing::TestWithParam<Compat> {};

TEST_P(MetricsTest, PodCpusCountEachPodOnce) {
  testutil::DocsNode d = testutil::AdmitDocsPods(GetParam());
  Observation o = testutil::ObservationOf(d);
  auto zones = AccountZones(d.topology, d.config, o);
  AgentStatus s;
  s.up = true;
  s.polls = 3;
  s.errors["list"] = 1;
  s.observation = &o;
  s.zones = &zones;
  std::string text = RenderMetricsText(s);
  ExpectHelpAndType(text, 12);  // 2 pod, 6 NUMA, up, polls, errors, last poll
  EXPECT_NE(text.find("podtopo_pod_cpus{namespace=\"default\",pod=\"pod-level-resource-demo\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("podtopo_pod_cpus{namespace=\"default\",pod=\"pod-scope-mixed\"} 4\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("podtopo_pod_memory_bytes{namespace=\"default\",pod=\"pod-scope-mixed\","
                      "type=\"memory\"} 4294967296\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("podtopo_numa_capacity_cpus{numa_node=\"0\"} 16\n"), std::string::npos);
  EXPECT_NE(text.find("podtopo_numa_allocatable_cpus{numa_node=\"0\"} 15\n"), std::string::npos);
  EXPECT_NE(text.find("podtopo_numa_available_cpus{numa_node=\"0\"} 9\n"), std::string::npos);
  EXPECT_NE(text.find("podtopo_numa_available_cpus{numa_node=\"3\"} 16\n"), std::string::npos);
  EXPECT_NE(text.find("podtopo_podresources_up 1\n"), std::string::npos);
  EXPECT_NE(text.find("podtopo_polls_total 3\n"), std::string::npos);
  EXPECT_NE(text.find("podtopo_scrape_errors_total{call=\"list\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("podtopo_scrape_errors_total{call=\"malformed\"} 0\n"), std::string::npos);
  EXPECT_EQ(text.find("podtopo_checkpoint"), std::string::npos) << "no --kubelet-dir";
}

INSTANTIATE_TEST_SUITE_P(Kubelets, MetricsTest, ::testing::Values(Compat::k1_37, Compat::k1_36),
                         [](const auto& info) {
                           return info.param == Compat::k1_37 ? "v1_37" : "v1_36";
                         });

TEST(MetricsTest, AFailedPollLeavesNoStaleNumbers) {
  AgentStatus s;
  s.up = false;
  s.polls = 5;
  s.errors["connect"] = 2;
  s.checkpoint_checked = true;
  s.checkpoint = CheckpointHealth{false, {{{"cpu_manager_state", "fatal"}, 1}}};
  std::string text = RenderMetricsText(s);
  ExpectHelpAndType(text, 7);  // up, polls, errors, last poll, 2 checkpoint, restart
  EXPECT_EQ(text.find("podtopo_pod_cpus"), std::string::npos) << text;
  EXPECT_EQ(text.find("podtopo_numa_"), std::string::npos) << text;
  EXPECT_NE(text.find("podtopo_podresources_up 0\n"), std::string::npos);
  EXPECT_NE(text.find("podtopo_scrape_errors_total{call=\"connect\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("podtopo_checkpoint_kubelet_would_start 0\n"), std::string::npos);
  EXPECT_NE(text.find("podtopo_checkpoint_findings{file=\"cpu_manager_state\",severity=\"fatal\"} 1\n"),
            std::string::npos)
      << text;
}

// Issue 23 item 4: the agent warns before anyone restarts. A pod-level pod in the checkpoints of a
// 1.37.0 node is re-allocated by a restart (k/k #140989); on 1.38 every pod stays.
TEST(MetricsTest, Issue140989_RestartAtRiskPerPod) {
  AgentStatus s;
  s.checkpoint_checked = true;
  CheckpointHealth h;
  h.kubelet_starts = true;
  h.kubelet_version = "1.37.0";
  h.restart_at_risk = {{"uid-1", "k/k#140906"}, {"uid-1", "k/k#140989"}};
  s.checkpoint = h;
  std::string text = RenderMetricsText(s);
  EXPECT_NE(text.find("podtopo_restart_keeps_pods{kubelet_version=\"1.37.0\"} 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("podtopo_restart_pod_at_risk{pod_uid=\"uid-1\",issue=\"k/k#140989\"} 1\n"),
            std::string::npos)
      << text;
  h.kubelet_version = "1.38";
  h.restart_at_risk.clear();
  s.checkpoint = h;
  text = RenderMetricsText(s);
  EXPECT_NE(text.find("podtopo_restart_keeps_pods{kubelet_version=\"1.38\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("podtopo_restart_pod_at_risk"), std::string::npos) << text;
}

TEST(ObservedPictureTest, BubblesAndExclusiveSlicesAreDrawnFromTheReports) {
  for (Compat compat : {Compat::k1_37, Compat::k1_36}) {
    testutil::DocsNode d = testutil::AdmitDocsPods(compat);
    Observation o = testutil::ObservationOf(d);
    auto zones = AccountZones(d.topology, d.config, o);
    NodePicture pic = BuildObservedPicture(d.topology, ObservedNodeOf(o, zones, d.topology));
    ASSERT_EQ(pic.pods.size(), 2u);
    // The picture the simulated node draws for the same pods, CPU by CPU.
    NodePicture want = BuildNodePicture(*d.node, d.node->AdmittedPods());
    ASSERT_EQ(pic.cpus.size(), want.cpus.size());
    for (size_t i = 0; i < pic.cpus.size(); ++i) {
      EXPECT_EQ(CpuOwnerName(pic.cpus[i].owner), CpuOwnerName(want.cpus[i].owner))
          << "CPU " << pic.cpus[i].cpu << (compat == Compat::k1_36 ? " (v1.36)" : " (v1.37)");
      EXPECT_EQ(pic.cpus[i].fill, want.cpus[i].fill) << "CPU " << pic.cpus[i].cpu;
    }
  }
}

// Issue 22 item 12: the observed picture called every container "(app)", sidecars included.
// PodResources does not say which containers are sidecars, so the hover names no kind; the
// simulated node's picture, which knows, still does.
TEST(ObservedPictureTest, ContainerKindsAreNotGuessed) {
  testutil::DocsNode d = testutil::AdmitDocsPods(Compat::k1_37);
  Observation o = testutil::ObservationOf(d);
  auto zones = AccountZones(d.topology, d.config, o);
  NodePicture pic = BuildObservedPicture(d.topology, ObservedNodeOf(o, zones, d.topology));
  NodePicture want = BuildNodePicture(*d.node, d.node->AdmittedPods());
  std::string observed, simulated;
  for (const auto& p : pic.pods) observed += p.title + "\n";
  for (const auto& p : want.pods) simulated += p.title + "\n";
  EXPECT_EQ(observed.find("(app)"), std::string::npos) << observed;
  EXPECT_EQ(observed.find("(sidecar)"), std::string::npos) << observed;
  EXPECT_NE(simulated.find("(sidecar)"), std::string::npos) << simulated;
  EXPECT_NE(observed.find("logging-sidecar: pod_shared"), std::string::npos) << observed;
}

// Publishing to the API server: the three podtopo_nrt_* families, every reason present (0 when
// none), and none of them without publishing.
TEST(MetricsTest, PublishFamiliesOnlyWhilePublishing) {
  AgentStatus s;
  std::string text = RenderMetricsText(s);
  EXPECT_EQ(text.find("podtopo_nrt_"), std::string::npos) << text;
  PublishStats p;
  p.writes = 3;
  p.errors["transport"] = 2;
  p.last_success_seconds = 1700000000;
  s.publish = p;
  text = RenderMetricsText(s);
  EXPECT_NE(text.find("podtopo_nrt_publish_errors_total{reason=\"transport\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("podtopo_nrt_publish_errors_total{reason=\"forbidden\"} 0"), std::string::npos) << text;
  EXPECT_NE(text.find("podtopo_nrt_publishes_total 3"), std::string::npos) << text;
  EXPECT_NE(text.find("podtopo_nrt_last_publish_timestamp_seconds 1700000000"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE podtopo_nrt_publish_errors_total counter"), std::string::npos) << text;
}

}  // namespace
}  // namespace podtopo::agent
