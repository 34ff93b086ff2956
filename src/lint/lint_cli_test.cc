// `podtopo lint` through the built binary: exit status (1 on any error finding, 0 with
// warnings or infos only), -o json, and bad input (file and field named, nothing on stdout).

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/testing.h"

namespace podtopo {
namespace {

using Result = testing::CommandResult;

std::string TempDir() {
  static const std::string dir = testing::MakeTempDir("podtopo-lint-cli");
  return dir;
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

Result Podtopo(const std::string& args) {
  return testing::RunCommand(std::string(PODTOPO_BINARY) + " " + args);
}

std::string Seed(const std::string& f) { return testing::SharedDir() + "/seed/" + f; }
std::string Example(const std::string& f) { return testing::SourceDir() + "/docs/examples/" + f; }

TEST(LintCli, SeedConfigFailsAndFlagsMemoryManager) {
  Result r = Podtopo("lint --config " + Seed("kubelet-config-as-in-article.yaml") + " " +
                     Seed("pod-level-resource-demo.yaml"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("warning [unknown-field] memoryManager:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean memoryManagerPolicy?"), std::string::npos);
  EXPECT_NE(r.out.find("error [cpu-reservation]"), std::string::npos);
  EXPECT_NE(r.out.find("pod_shared"), std::string::npos);
}

TEST(LintCli, SeedConfigJson) {
  Result r = Podtopo("lint --config " + Seed("kubelet-config-as-in-article.yaml") + " " +
                     Seed("pod-level-resource-demo.yaml") + " -o json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["summary"]["errors"].get<int>(), 1);
  bool found = false;
  for (const auto& f : j["findings"]) {
    if (f["code"] == "unknown-field" && f["field"] == "memoryManager") {
      found = true;
      EXPECT_EQ(f["severity"], "warning");
      EXPECT_EQ(f["line"], 12);
      EXPECT_NE(f["hint"].get<std::string>().find("memoryManagerPolicy"), std::string::npos);
    }
  }
  EXPECT_TRUE(found) << r.out;
  EXPECT_EQ(j["pods"][0]["bubbleCpus"], 2);
  EXPECT_EQ(j["pods"][0]["containers"][0]["role"], "pod_shared");
}

TEST(LintCli, TutorialConfigCleanExitZero) {
  Result r = Podtopo("lint --config " + Example("kubelet-config.yaml") + " " +
                     Example("pod-level-resource-demo.yaml") + " " +
                     Example("pod-scope-mixed.yaml") + " -o json");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["summary"]["errors"], 0);
  EXPECT_EQ(j["summary"]["warnings"], 0);
  EXPECT_EQ(j["pods"].size(), 2u);
  EXPECT_EQ(j["pods"][1]["containers"][2]["role"], "pod_exclusive");
}

TEST(LintCli, WarningsAloneExitZero) {
  std::string cfg = testing::ReadFileOrEmpty(Example("kubelet-config.yaml"));
  const std::string from = "topologyManagerPolicy: single-numa-node";
  ASSERT_NE(cfg.find(from), std::string::npos);
  cfg.replace(cfg.find(from), from.size(), "topologyManagerPolicy: none");
  Result r = Podtopo("lint --config " + WriteFile("tm-none.yaml", cfg));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("warning [topology-policy-none]"), std::string::npos) << r.out;
}

TEST(LintCli, ErrorFindingExitOne) {
  std::string cfg = testing::ReadFileOrEmpty(Example("kubelet-config.yaml"));
  const std::string from = "memory: 1124Mi";
  ASSERT_NE(cfg.find(from), std::string::npos);
  cfg.replace(cfg.find(from), from.size(), "memory: 1Gi");
  Result r = Podtopo("lint --config " + WriteFile("reserved.yaml", cfg));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("error [memory-reservation]"), std::string::npos) << r.out;
}

TEST(LintCli, BadConfigYamlIsBadInput) {
  const std::string path = WriteFile("broken.yaml", "cpuManagerPolicy: [static\n");
  Result r = Podtopo("lint --config " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
}

TEST(LintCli, BadPodYamlIsBadInput) {
  const std::string path = WriteFile("badpod.yaml",
                                     "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n"
                                     "  containers:\n  - name: a\n    resources:\n"
                                     "      requests: {cpu: lots}\n");
  Result r = Podtopo("lint --config " + Example("kubelet-config.yaml") + " " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("badpod.yaml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cpu"), std::string::npos) << r.err;
}

TEST(LintCli, MissingConfigFileIsBadInput) {
  Result r = Podtopo("lint --config " + TempDir() + "/nope.yaml");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nope.yaml"), std::string::npos) << r.err;
}

// Issue 22 item 8: for shop/all-in-main under single-numa-node, lint said
// EmptyPodSharedPoolError while admit, explain and compare say TopologyAffinityError (the
// kubelet's answer). Lint now gives the admission's reason, under every policy.
TEST(LintCli, RejectionReasonIsTheAdmissionsReason) {
  const std::string pods = Example("pod-sidecar-list.yaml");
  std::string best_effort = testing::ReadFileOrEmpty(Example("kubelet-config.yaml"));
  const std::string from = "topologyManagerPolicy: single-numa-node";
  ASSERT_NE(best_effort.find(from), std::string::npos);
  best_effort.replace(best_effort.find(from), from.size(), "topologyManagerPolicy: best-effort");
  for (const std::string& config :
       {Example("kubelet-config.yaml"), WriteFile("best-effort.yaml", best_effort)}) {
    Result admit = Podtopo("admit -o json --config " + config + " " + pods);
    ASSERT_EQ(admit.exit_code, 3) << admit.err;
    std::string reason;
    const auto admitted = nlohmann::json::parse(admit.out);
    for (const auto& p : admitted["pods"]) {
      if (p["name"] == "all-in-main") reason = p["reason"];
    }
    ASSERT_FALSE(reason.empty()) << admit.out;
    Result lint = Podtopo("lint -o json --config " + config + " " + pods);
    auto j = nlohmann::json::parse(lint.out);
    int found = 0;
    for (const auto& f : j["findings"]) {
      if (f["pod"] != "shop/all-in-main" || f["code"] != "empty-shared-pool") continue;
      ++found;
      const std::string message = f["message"];
      EXPECT_EQ(message.rfind(reason + ": ", 0), 0u) << config << ": " << message;
    }
    EXPECT_EQ(found, 1) << config << ": " << lint.out;
  }
  // The two policies give the two reasons.
  Result single = Podtopo("lint --config " + Example("kubelet-config.yaml") + " " + pods);
  EXPECT_NE(single.out.find("shop/all-in-main spec.resources.requests.cpu: TopologyAffinityError: "
                            "the pod's shared pool would be empty"),
            std::string::npos)
      << single.out;
}

TEST(LintCli, OtherNode) {
  // preset:dual-socket-ht has two NUMA nodes of 6 CPUs (CPU 0 reserved): a 6-CPU budget fits
  // only NUMA 1 and a 7-CPU budget none.
  auto pod = [](const std::string& cpu) {
    return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  resources:\n"
           "    requests: {cpu: \"" +
           cpu +
           "\", memory: 1Gi}\n"
           "    limits: {cpu: \"" +
           cpu +
           "\", memory: 1Gi}\n"
           "  containers:\n  - name: a\n    image: x\n";
  };
  Result r = Podtopo("lint --config " + Example("kubelet-config.yaml") + " " +
                     WriteFile("seven.yaml", pod("7")) + " --node preset:dual-socket-ht");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("error [budget-exceeds-numa]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NUMA 0: 5, NUMA 1: 6"), std::string::npos) << r.out;
  Result fits = Podtopo("lint --config " + Example("kubelet-config.yaml") + " " +
                        WriteFile("six.yaml", pod("6")) + " --node preset:dual-socket-ht");
  EXPECT_EQ(fits.exit_code, 0) << fits.out << fits.err;
  // On the default node (preset:demo, 16 CPUs per NUMA node) both fit.
  EXPECT_EQ(Podtopo("lint --config " + Example("kubelet-config.yaml") + " " +
                    WriteFile("seven.yaml", pod("7")))
                .exit_code,
            0);
}

// k/k #140848: `PodLevelResources: false` alone is the 1.37 kubelet's startup panic; every
// command that loads the configuration refuses it (exit 1) with the kubelet's text, the file,
// the line and the field. The same file with the dependent gates off together loads.
TEST(LintCli, Issue140848EveryConfigCommandExits1) {
  std::string cfg = testing::ReadFileOrEmpty(Example("kubelet-config.yaml"));
  const std::string on = "  PodLevelResources: true\n";
  ASSERT_NE(cfg.find(on), std::string::npos);
  const std::string& off = cfg;
  const std::string bad = WriteFile(
      "plr-off.yaml", std::string(off).replace(off.find(on), on.size(),
                                               "  PodLevelResources: false\n"));
  // What lint's gate-dependency hint says to write: every dependent gate off too.
  std::string together = std::string(off).replace(off.find(on), on.size(),
                                                  "  PodLevelResources: false\n"
                                                  "  PodLevelResourcesFixDefaulting: false\n"
                                                  "  PodLevelResourcesFixKubeletQOSClass: false\n"
                                                  "  InPlacePodLevelResourcesVerticalScaling: false\n");
  const std::string managers = "  PodLevelResourceManagers: true\n";
  ASSERT_NE(together.find(managers), std::string::npos);
  together.replace(together.find(managers), managers.size(), "  PodLevelResourceManagers: false\n");
  const std::string good = WriteFile("plr-off-together.yaml", together);
  const std::string pod = Example("pod-level-resource-demo.yaml");
  const std::string state = testing::MakeTempDir("podtopo-gates-state");
  const std::string commands[] = {
      "admit --config {} --state-dir " + state + " " + pod,
      "explain --config {} " + pod,
      "lint --config {} " + pod,
      "state check --config {} --kubelet-dir " + state + " --node preset:demo",
  };
  const std::string line = "plr-off.yaml:" +
                           std::to_string(1 + std::count(cfg.begin(), cfg.begin() + cfg.find(on),
                                                         '\n')) +
                           ":";
  for (std::string c : commands) {
    const std::string with_bad = std::string(c).replace(c.find("{}"), 2, bad);
    Result r = Podtopo(with_bad);
    EXPECT_EQ(r.exit_code, 1) << with_bad << "\n" << r.out << r.err;
    const std::string all = r.out + r.err;
    EXPECT_NE(all.find("PodLevelResourcesFixDefaulting is enabled, but depends on features that "
                       "are disabled: [PodLevelResources]"),
              std::string::npos)
        << with_bad << "\n" << all;
    EXPECT_NE(all.find(line), std::string::npos) << with_bad << "\n" << all;
    EXPECT_NE(all.find("featureGates.PodLevelResources"), std::string::npos) << all;
    const std::string with_good = std::string(c).replace(c.find("{}"), 2, good);
    Result g = Podtopo(with_good);
    EXPECT_EQ((g.out + g.err).find("depends on features"), std::string::npos)
        << with_good << "\n" << g.out << g.err;
  }
  // serve refuses it before it listens (with the good file it would run: not started here).
  const std::string pods = testing::MakeTempDir("podtopo-gates-pods");
  Result s = Podtopo("serve --config " + bad + " --pods-dir " + pods + " --socket " + pods +
                     "/kubelet.sock --log-level off");
  EXPECT_EQ(s.exit_code, 1) << s.out << s.err;
  EXPECT_NE(s.err.find("PodLevelResourcesFixKubeletQOSClass is enabled, but depends on features "
                       "that are disabled: [PodLevelResources]"),
            std::string::npos)
      << s.err;
}

}  // namespace
}  // namespace podtopo
