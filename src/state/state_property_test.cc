// Property (issue 10, "done when"): no sequence of admissions and removals can make podtopo
// write a state dir that its own restart or `podtopo state check` refuses.
//
// Each case draws a node (five presets), a KubeletConfiguration (every CPU Manager policy
// option in valid combinations, 1-2 reserved CPUs, memory manager Static or None, Topology
// Manager scope pod or container and any policy, PodLevelResourceManagers on or off) and a
// sequence of operations: admit a random pod (pod-level budget or not; exclusive, fractional
// and resource-less containers; init containers and sidecars) or remove one. After every
// operation the state dir is restarted from (Node::Create must succeed and restore the same
// allocations) and checked (state::Check must find no fatal problem).
//
// Cases: 60 by default; PODTOPO_PROPERTY_OPS scales them (ops / 1000, at least 10), as the
// other property tests scale with it. PODTOPO_KEEP_STATE=1 keeps the state dirs for a look.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "config/kubelet_config.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "kubelet/version.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "state/kubelet_state.h"
#include "testing/property.h"
#include "topology/presets.h"

namespace podtopo::state {
namespace {

struct ContainerGen {
  int cpus = 0;  // > 0 exclusive (requests == limits), 0 no resources, -1 fractional
};

struct PodGen {
  bool pod_level = false;
  int budget = 1;     // pod-level CPUs
  int budget_gi = 1;  // pod-level memory
  bool fractional_budget = false;
  std::vector<ContainerGen> apps;
  bool init = false;
  bool sidecar = false;
  ContainerGen init_container;
  ContainerGen sidecar_container;
};

rc::Gen<ContainerGen> GenContainer(bool pod_level) {
  return rc::gen::map(rc::gen::inRange(-1, pod_level ? 3 : 5), [](int cpus) {
    return ContainerGen{cpus};
  });
}

rc::Gen<PodGen> GenPod() {
  return rc::gen::exec([] {
    PodGen p;
    p.pod_level = *rc::gen::arbitrary<bool>();
    p.budget = *rc::gen::inRange(1, 9);
    p.budget_gi = *rc::gen::inRange(1, 4);
    p.fractional_budget = *rc::gen::weightedElement<bool>({{1, true}, {9, false}});
    p.apps = *rc::gen::container<std::vector<ContainerGen>>(*rc::gen::inRange(1, 4),
                                                            GenContainer(p.pod_level));
    p.init = *rc::gen::weightedElement<bool>({{3, true}, {7, false}});
    p.sidecar = *rc::gen::weightedElement<bool>({{3, true}, {7, false}});
    p.init_container = *GenContainer(p.pod_level);
    p.sidecar_container = *GenContainer(p.pod_level);
    return p;
  });
}

std::string ContainerYaml(const std::string& name, const ContainerGen& c, bool sidecar,
                          bool pod_level, int& cpus_left) {
  std::string y = fmt::format("  - name: {}\n    image: busybox\n", name);
  if (sidecar) y += "    restartPolicy: Always\n";
  int cpus = c.cpus;
  // A pod-level pod's exclusive containers must fit its budget (API validation).
  if (pod_level && cpus > 0) cpus = cpus < cpus_left ? cpus : 0;
  if (cpus > 0) {
    if (pod_level) cpus_left -= cpus;
    y += fmt::format(
        "    resources:\n      requests: {{cpu: \"{0}\", memory: {1}}}\n      limits: {{cpu: "
        "\"{0}\", memory: {1}}}\n",
        cpus, pod_level ? "128Mi" : "256Mi");
  } else if (cpus < 0) {
    y += "    resources:\n      requests: {cpu: 500m, memory: 128Mi}\n      limits: {cpu: 500m, "
         "memory: 128Mi}\n";
  }
  return y;
}

std::string PodYaml(const PodGen& p, int index) {
  std::string y = fmt::format(
      "apiVersion: v1\nkind: Pod\nmetadata: {{name: p{0}, uid: uid-{0}}}\nspec:\n", index);
  int cpus_left = p.fractional_budget ? 1 : p.budget;
  if (p.pod_level) {
    std::string cpu = p.fractional_budget ? "1500m" : std::to_string(p.budget);
    y += fmt::format(
        "  resources:\n    requests: {{cpu: \"{0}\", memory: {1}Gi}}\n    limits: {{cpu: "
        "\"{0}\", memory: {1}Gi}}\n",
        cpu, p.budget_gi);
  }
  std::string init;
  if (p.init) init += ContainerYaml("init", p.init_container, false, p.pod_level, cpus_left);
  if (p.sidecar) init += ContainerYaml("side", p.sidecar_container, true, p.pod_level, cpus_left);
  if (!init.empty()) y += "  initContainers:\n" + init;
  y += "  containers:\n";
  for (size_t i = 0; i < p.apps.size(); ++i) {
    y += ContainerYaml(fmt::format("app{}", i), p.apps[i], false, p.pod_level, cpus_left);
  }
  return y;
}

// A Burstable pod of 100m and 64Mi: no exclusive CPUs and no NUMA affinity, so every node
// and configuration admits it.
std::string FittingPodYaml(int index) {
  return fmt::format(
      "apiVersion: v1\nkind: Pod\nmetadata: {{name: p{0}, uid: uid-{0}}}\nspec:\n  containers:\n"
      "  - name: app\n    image: busybox\n    resources:\n      requests: {{cpu: 100m, memory: "
      "64Mi}}\n",
      index);
}

// A Guaranteed pod asking for every CPU of the node: at least one is reserved (GenConfig), so
// no node admits it.
std::string TooBigPodYaml(const NodeTopology& node, int index) {
  return fmt::format(
      "apiVersion: v1\nkind: Pod\nmetadata: {{name: p{0}, uid: uid-{0}}}\nspec:\n  containers:\n"
      "  - name: app\n    image: busybox\n    resources:\n      requests: {{cpu: \"{1}\", memory: "
      "256Mi}}\n      limits: {{cpu: \"{1}\", memory: 256Mi}}\n",
      index, node.cpus.num_cpus);
}

// A valid KubeletConfiguration for `node`: the CPU Manager options in a combination the
// kubelet accepts.
config::KubeletConfig GenConfig(const NodeTopology& node) {
  config::KubeletConfig c = config::SeedDefault();
  c.feature_gates["CPUManagerPolicyAlphaOptions"] = true;
  c.feature_gates["CPUManagerPolicyBetaOptions"] = true;
  c.feature_gates["PodLevelResourceManagers"] = *rc::gen::arbitrary<bool>();
  c.topology_manager_scope = *rc::gen::element<std::string>("pod", "container");
  c.topology_manager_policy =
      *rc::gen::element<std::string>("none", "best-effort", "restricted", "single-numa-node");
  c.system_reserved["cpu"] = std::to_string(*rc::gen::inRange(1, 3));
  if (*rc::gen::arbitrary<bool>()) {
    c.memory_manager_policy = "None";
    c.reserved_memory.clear();
  }
  // One sorting strategy at most (the others exclude each other), then the free options.
  std::string sorting = *rc::gen::element<std::string>("", "distribute-cpus-across-cores",
                                                       "distribute-cpus-across-numa",
                                                       "prefer-align-cpus-by-uncorecache");
  if (!sorting.empty()) c.cpu_manager_policy_options[sorting] = "true";
  if (sorting != "distribute-cpus-across-cores" && *rc::gen::arbitrary<bool>()) {
    c.cpu_manager_policy_options["full-pcpus-only"] = "true";
  }
  if (*rc::gen::arbitrary<bool>()) c.cpu_manager_policy_options["strict-cpu-reservation"] = "true";
  if (c.topology_manager_policy != "single-numa-node" &&
      node.cpus.num_sockets <= node.cpus.num_numa_nodes && *rc::gen::arbitrary<bool>()) {
    c.cpu_manager_policy_options["align-by-socket"] = "true";
  }
  return c;
}

std::string Describe(const std::vector<PodAllocation>& pods) {
  std::string out;
  for (const auto& p : pods) {
    out += fmt::format("{} {} bubble {}:", p.name, p.admitted ? "admitted" : "rejected",
                       p.cpus.String());
    for (const auto& c : p.containers) out += fmt::format(" {}={}", c.name, c.cpus.String());
    out += "\n";
  }
  return out;
}

int Cases() {
  const char* env = std::getenv("PODTOPO_PROPERTY_OPS");
  if (env == nullptr) return 60;
  return static_cast<int>(std::clamp(std::atol(env) / 1000, 10L, 1000L));
}

TEST(StatePropertyTest, AdmitRestartAndCheckNeverRefuse) {
  const std::vector<std::string> presets = {"single-socket-ht", "dual-socket-ht",
                                            "dual-socket-no-ht",
                                            "dual-socket-multi-numa-per-socket-ht", "demo"};
  long admitted = 0, rejected = 0, restarts = 0;
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / fmt::format("podtopo-state-prop-{}", ::getpid());
  int case_number = 0;
  auto property = [&] {
    const std::string preset = *rc::gen::elementOf(presets);
    absl::StatusOr<NodeTopology> node = Preset(preset);
    RC_ASSERT(node.ok());
    const config::KubeletConfig cfg = GenConfig(*node);
    const std::filesystem::path dir = root / std::to_string(case_number++);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    Node::Options opts;
    opts.state_dir = dir.string();
    auto created = Node::Create(*node, cfg, opts);
    if (!created.ok()) RC_FAIL(fmt::format("config refused: {}\n{}", std::string(created.status().message()), cfg.ToYaml()));
    std::unique_ptr<Node> current = std::move(*created);
    // Both outcomes in every case, whatever the seed (issue 26: a seed whose random pods all
    // fitted failed the coverage check below): the first operation admits a pod that always
    // fits, and one operation at a random place admits a pod that never fits.
    const int ops = *rc::gen::inRange(2, 10);
    const int too_big_at = *rc::gen::inRange(1, ops);
    for (int op = 0; op < ops; ++op) {
      std::vector<PodAllocation> pods = current->AdmittedPods();
      std::string what;
      if (op == 0 || op == too_big_at) {
        const bool fits = op == 0;
        const std::string yaml = fits ? FittingPodYaml(op) : TooBigPodYaml(*node, op);
        auto parsed = ParsePods(yaml, "property.yaml");
        RC_ASSERT(parsed.ok());
        what = "admit\n" + yaml;
        auto r = current->Admit(parsed->front());
        if (!r.ok()) RC_FAIL(fmt::format("admit failed: {}\n{}", std::string(r.status().message()), yaml));
        if (r->admitted != fits) {
          RC_FAIL(fmt::format("{} on {}: {} ({} {})\n{}", preset, cfg.ToYaml(),
                              fits ? "a pod that always fits was rejected" : "a pod larger than the node was admitted",
                              r->reason, r->message, yaml));
        }
        (r->admitted ? admitted : rejected)++;
      } else if (!pods.empty() && *rc::gen::weightedElement<bool>({{3, true}, {7, false}})) {
        const auto& victim = pods[*rc::gen::inRange<size_t>(0, pods.size())];
        what = "remove " + victim.name;
        RC_ASSERT(current->Remove(victim.namespace_name, victim.name).ok());
      } else {
        const std::string yaml = PodYaml(*GenPod(), op);
        auto parsed = ParsePods(yaml, "property.yaml");
        if (!parsed.ok()) continue;  // the API server would refuse it: nothing to admit
        what = "admit\n" + yaml;
        auto r = current->Admit(parsed->front());
        if (!r.ok()) RC_FAIL(fmt::format("admit failed: {}\n{}", std::string(r.status().message()), yaml));
        (r->admitted ? admitted : rejected)++;
      }
      // The restart: the kubelet's checkpoints and podtopo's record restore the same pods.
      const std::string before = Describe(current->AdmittedPods());
      auto restarted = Node::Create(*node, cfg, opts);
      if (!restarted.ok()) {
        RC_FAIL(fmt::format("{} on {}: the restart refuses the state it wrote: {}\nafter: {}\n{}",
                            preset, cfg.ToYaml(), std::string(restarted.status().message()), what, before));
      }
      ++restarts;
      const std::string after = Describe((*restarted)->AdmittedPods());
      if (after != before) {
        RC_FAIL(fmt::format("restart changed the allocations\nbefore:\n{}after:\n{}", before, after));
      }
      // The kubelet's start-up checks, as `podtopo state check` runs them.
      auto report = Check(dir.string(), Environment{*node, cfg}, nullptr);
      RC_ASSERT(report.ok());
      if (!report->KubeletStarts()) {
        std::string why;
        for (const auto& f : report->findings) {
          why += fmt::format("{} [{}] {} {}\n", f.file, f.problem, f.message, f.kubelet_message);
        }
        RC_FAIL(fmt::format("{} on {}: state check says the kubelet would not start:\n{}after: {}\n{}",
                            preset, cfg.ToYaml(), why, what, before));
      }
      current = std::move(*restarted);
    }
    std::filesystem::remove_all(dir);
  };
  podtopo::testing::CheckProperty(property, Cases());
  // PODTOPO_KEEP_STATE=1 keeps the state dirs (the failing case's dir is named in the message).
  if (std::getenv("PODTOPO_KEEP_STATE") == nullptr) std::filesystem::remove_all(root);
  if (HasFailure()) return;
  // Both outcomes were reached (every case forces one of each, above), or the property proves
  // little.
  EXPECT_GT(admitted, 0);
  EXPECT_GT(rejected, 0);
  EXPECT_GE(restarts, 2L * case_number);  // each case restarts after its two forced admissions
}

std::string Describe(const RestartReport& r) {
  std::string out = fmt::format("default {} -> {}, leaked {}\n", r.default_before.String(),
                                r.default_after.String(), r.leaked_cpus.String());
  for (const auto& p : r.pods) {
    out += fmt::format("{} {} {} -> {} {} {}\n", p.name, p.outcome, p.cpus_before.String(),
                       p.cpus_after.String(), p.reason, fmt::join(p.upstream, ","));
  }
  for (const auto& [type, bytes] : r.leaked_memory) out += fmt::format("leaked {} {}\n", type, bytes);
  return out;
}

// Property (issue 23, "done when"): random pods are admitted under each kubelet version, and a
// restart of the same version is predicted (`podtopo state restart`). The prediction agrees
// with podtopo's own re-admission: for a version with every restart fix it keeps every pod
// exactly as a restored node holds it, with nothing leaked; for any version, a kept pod holds
// what it held, a leaked CPU is in no pod and not in the default set, and the prediction from
// the pods' manifests (`--pods`) equals the one from podtopo's record.
TEST(StatePropertyTest, RestartPredictionAgreesWithReadmissionPerVersion) {
  const std::vector<std::string> presets = {"single-socket-ht", "dual-socket-ht",
                                            "dual-socket-multi-numa-per-socket-ht", "demo"};
  std::vector<std::string> versions;
  for (const auto& v : kubelet::KubeletVersions()) versions.emplace_back(v.name);
  const std::filesystem::path root = std::filesystem::temp_directory_path() /
                                     fmt::format("podtopo-restart-prop-{}", ::getpid());
  int case_number = 0;
  long moved_or_rejected = 0;
  auto property = [&] {
    const std::string preset = *rc::gen::elementOf(presets);
    absl::StatusOr<NodeTopology> node = Preset(preset);
    RC_ASSERT(node.ok());
    config::KubeletConfig cfg = GenConfig(*node);
    cfg.kubelet_version = *rc::gen::elementOf(versions);
    const kubelet::Behavior behavior = cfg.VersionBehavior();
    const std::filesystem::path dir = root / std::to_string(case_number++);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    Node::Options opts;
    opts.state_dir = dir.string();
    std::vector<Pod> running;
    std::string before;
    {
      auto created = Node::Create(*node, cfg, opts);
      if (!created.ok()) RC_FAIL(fmt::format("config refused: {}", std::string(created.status().message())));
      const int pods = *rc::gen::inRange(1, 6);
      for (int i = 0; i < pods; ++i) {
        const std::string yaml = PodYaml(*GenPod(), i);
        auto parsed = ParsePods(yaml, "property.yaml");
        if (!parsed.ok()) continue;
        auto r = (*created)->Admit(parsed->front());
        if (!r.ok()) RC_FAIL(fmt::format("admit failed: {}\n{}", std::string(r.status().message()), yaml));
        if (r->admitted) running.push_back(parsed->front());
      }
      before = Describe((*created)->AdmittedPods());
    }  // the node (and its lock) goes: a stopped kubelet
    RestartReport from_record;
    Node::Options predict = opts;
    predict.read_only = true;
    predict.restart = &from_record;
    auto restarted = Node::Create(*node, cfg, predict);
    if (!restarted.ok()) {
      // k/k #141196: a version that lets strict-cpu-reservation empty the default set cannot
      // start from it; nothing else may keep it from starting.
      const bool strict = cfg.cpu_manager_policy_options.count("strict-cpu-reservation") > 0;
      RC_ASSERT(strict && !behavior.strict_reservation_keeps_default_set);
      RC_ASSERT(std::string(restarted.status().message()).find("default cpuset cannot be empty") !=
                std::string::npos);
      std::filesystem::remove_all(dir);
      return;
    }
    RestartReport from_pods;
    predict.restart = &from_pods;
    predict.running_pods = &running;
    RC_ASSERT(Node::Create(*node, cfg, predict).ok());
    if (Describe(from_pods) != Describe(from_record)) {
      RC_FAIL(fmt::format("--pods and the record predict differently:\n{}\n{}", Describe(from_pods),
                          Describe(from_record)));
    }
    const bool fixed = behavior.cpu_restore_keeps_pod_cpus && behavior.memory_restore_keeps_pod_blocks &&
                       behavior.memory_pod_restore_hints_from_pod_blocks;
    CpuSet held;
    for (const RestartPod& p : from_record.pods) {
      if (p.outcome == "kept") RC_ASSERT(p.cpus_after == p.cpus_before);
      if (p.outcome != "kept") ++moved_or_rejected;
      if (p.outcome != "rejected") held.UnionWith(p.cpus_after);
      if (fixed && p.outcome != "kept") {
        RC_FAIL(fmt::format("kubelet {} has every restart fix but the prediction is not 'kept':\n{}\nadmitted:\n{}",
                            cfg.kubelet_version, Describe(from_record), before));
      }
    }
    RC_ASSERT(!from_record.leaked_cpus.Intersects(held));
    RC_ASSERT(!from_record.leaked_cpus.Intersects(from_record.default_after));
    if (fixed) {
      RC_ASSERT(from_record.leaked_cpus.IsEmpty());
      RC_ASSERT(from_record.leaked_memory.empty());
      RC_ASSERT(from_record.default_after == from_record.default_before);
      // podtopo's own restore of the node (a kubelet that never stopped) holds the same.
      auto restored = Node::Create(*node, cfg, Node::Options{dir.string(), true});
      RC_ASSERT(restored.ok());
      RC_ASSERT(Describe((*restored)->AdmittedPods()) == before);
    }
    std::filesystem::remove_all(dir);
  };
  podtopo::testing::CheckProperty(property, Cases());
  if (std::getenv("PODTOPO_KEEP_STATE") == nullptr) std::filesystem::remove_all(root);
  ::testing::Test::RecordProperty("moved_or_rejected", static_cast<int>(moved_or_rejected));
}

}  // namespace
}  // namespace podtopo::state
