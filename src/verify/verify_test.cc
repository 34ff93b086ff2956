// podtopo verify's core: the readers on fixture nodes (cgroup v1 cgroupfs, v2 systemd), and
// each finding kind on a table of hand-made cases.
//
// Remote memory: this test machine has one NUMA node, so memory on a foreign node cannot be
// produced here; the fixtures' memory.numa_stat files plant it (testdata/make_fixtures.py).
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "verify/verify.h"

namespace podtopo::verify {
namespace {

using ::testing::HasSubstr;

constexpr char kDb[] = "aaaaaaaa-1111-4111-8111-111111111111";
constexpr char kWeb[] = "bbbbbbbb-2222-4222-8222-222222222222";
constexpr char kTools[] = "cccccccc-3333-4333-8333-333333333333";

std::string Fixture(const std::string& name) {
  return std::string(PODTOPO_VERIFY_TESTDATA) + "/" + name;
}

CpuSet S(const std::string& text) { return CpuSet::Parse(text).value(); }

std::vector<ContainerRef> Refs() {
  return {
      {"default", "db", kDb, "db", std::string(64, '1'), "", 1001},
      {"default", "web", kWeb, "app", std::string(64, '2'), "", 2001},
      {"default", "web", kWeb, "proxy", std::string(64, '3'), "", 2101},
      {"default", "web", kWeb, "log", std::string(64, '4'), "", 2201},
      {"default", "tools", kTools, "shell", std::string(64, '5'), "", 3001},
  };
}

Report RunFixture(const std::string& fixture, VerifyOptions vo = {}) {
  auto intent = LoadIntent(Fixture(fixture) + "/kubelet");
  EXPECT_TRUE(intent.ok()) << intent.status();
  Reality reality({.cgroup_root = Fixture(fixture) + "/cgroup",
                   .proc_root = Fixture(fixture) + "/proc",
                   .page_size = 4096,
                   .clock_ticks = 100});
  return Verify(*intent, Refs(), reality, vo);
}

std::vector<std::string> Kinds(const std::vector<Finding>& f) {
  std::vector<std::string> out;
  for (const auto& x : f) out.push_back(x.kind);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(LoadIntent, ReadsCheckpointsThroughTheCodecs) {
  auto in = LoadIntent(Fixture("v1-cgroupfs-clean") + "/kubelet");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_TRUE(in->problems.empty()) << in->problems[0];
  EXPECT_EQ(in->cpu_policy, "static");
  EXPECT_EQ(in->memory_policy, "Static");
  EXPECT_EQ(in->default_cpus, S("0-1,7"));
  EXPECT_EQ(in->container_cpus.at(kDb).at("db"), S("2-3"));
  EXPECT_EQ(in->pod_cpus.at(kWeb), S("4-6"));
  EXPECT_EQ(in->container_mems.at(kWeb).at("app"), S("1"));
  EXPECT_TRUE(in->IsExclusive(kWeb, "app"));
  EXPECT_FALSE(in->IsExclusive(kWeb, "proxy"));
  EXPECT_EQ(in->PodPool(kWeb), S("5-6"));
  EXPECT_EQ(in->NodeCpus(), S("0-7"));
}

TEST(LoadIntent, MissingAndBadFiles) {
  EXPECT_FALSE(LoadIntent(Fixture("does-not-exist")).ok());
  std::string dir = ::testing::TempDir() + "/verify-bad-kubelet";
  std::filesystem::create_directories(dir);
  auto empty = LoadIntent(dir);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->cpu_policy, "");
  {
    std::ofstream(dir + "/cpu_manager_state") << "{not json";
  }
  auto bad = LoadIntent(dir);
  ASSERT_TRUE(bad.ok());
  ASSERT_EQ(bad->problems.size(), 1u);
  EXPECT_THAT(bad->problems[0], HasSubstr("cpu_manager_state"));
}

TEST(Reality, CgroupsPathToDir) {
  EXPECT_EQ(Reality::CgroupsPathToDir("/kubepods/burstable/podX/abc"), "kubepods/burstable/podX/abc");
  EXPECT_EQ(Reality::CgroupsPathToDir("kubepods-burstable-pod1_2.slice:cri-containerd:abc"),
            "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1_2.slice/"
            "cri-containerd-abc.scope");
  EXPECT_EQ(Reality::CgroupsPathToDir("kubepods-pod1.slice:crio:abc"),
            "kubepods.slice/kubepods-pod1.slice/crio-abc.scope");
}

TEST(Reality, NumaStatV1IsPagesV2IsBytes) {
  auto v1 = Reality::ParseNumaStat("total=30 N0=10 N1=20\nfile=0 N0=0 N1=0\n"
                                   "hierarchical_total=99 N0=99 N1=0\n", 1, 4096);
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ(v1->at(0), 10u * 4096);
  EXPECT_EQ(v1->at(1), 20u * 4096);
  auto v2 = Reality::ParseNumaStat("anon N0=100 N1=200\nfile N0=1 N1=2\nkernel_stack N0=7 N1=7\n",
                                   2, 4096);
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(v2->at(0), 101u);
  EXPECT_EQ(v2->at(1), 202u);
  EXPECT_FALSE(Reality::ParseNumaStat("total=1 N0=x\n", 1, 4096).ok());
  EXPECT_FALSE(Reality::ParseNumaStat("", 2, 4096).ok());
}

TEST(Reality, CgroupV1Cgroupfs) {
  Reality r({.cgroup_root = Fixture("v1-cgroupfs-clean") + "/cgroup",
             .proc_root = Fixture("v1-cgroupfs-clean") + "/proc", .page_size = 4096});
  EXPECT_EQ(r.CgroupVersion(), 1);
  ContainerState st = r.ReadContainer(Refs()[4]);
  EXPECT_TRUE(st.problems.empty()) << st.problems[0];
  EXPECT_EQ(st.cgroup, "kubepods/burstable/pod" + std::string(kTools) + "/" + std::string(64, '5'));
  EXPECT_EQ(*st.cpus, S("0-1,7"));
  EXPECT_EQ(*st.mems, S("0-1"));
  ASSERT_EQ(st.tasks.size(), 1u);
  EXPECT_EQ(st.tasks[0].pid, 3001);
  EXPECT_EQ(st.tasks[0].comm, "shell");
  EXPECT_EQ(st.numa_bytes.at(0), 512u * 4096);
  EXPECT_EQ(st.numa_bytes.at(1), 256u * 4096);
}

TEST(Reality, CgroupV2SystemdFromIndexAndFromCgroupsPath) {
  Reality r({.cgroup_root = Fixture("v2-systemd") + "/cgroup",
             .proc_root = Fixture("v2-systemd") + "/proc"});
  EXPECT_EQ(r.CgroupVersion(), 2);
  ContainerState st = r.ReadContainer(Refs()[1]);
  EXPECT_TRUE(st.problems.empty()) << st.problems[0];
  EXPECT_THAT(st.cgroup, HasSubstr("kubepods.slice/kubepods-podbbbbbbbb_2222"));
  EXPECT_EQ(*st.cpus, S("4"));
  EXPECT_EQ(st.numa_bytes.at(1), 12800u * 4096 + 0);
  ContainerRef shell = Refs()[4];
  shell.cgroups_path = "kubepods-burstable-podcccccccc_3333_4333_8333_333333333333.slice:"
                       "cri-containerd:" + shell.id;
  Reality fresh({.cgroup_root = Fixture("v2-systemd") + "/cgroup"});
  EXPECT_EQ(fresh.FindCgroup(shell),
            "kubepods.slice/kubepods-burstable.slice/"
            "kubepods-burstable-podcccccccc_3333_4333_8333_333333333333.slice/cri-containerd-" +
                shell.id + ".scope");
}

TEST(Reality, GoneContainerIsAProblemNotACrash) {
  Reality r({.cgroup_root = Fixture("v1-cgroupfs-clean") + "/cgroup"});
  ContainerRef gone{"default", "x", "u", "c", std::string(64, '9'), "", 0};
  ContainerState st = r.ReadContainer(gone);
  EXPECT_EQ(st.cgroup, "");
  ASSERT_EQ(st.problems.size(), 1u);
  EXPECT_THAT(st.problems[0], HasSubstr("container 9999"));
}

TEST(Reality, UnreadableCgroupFilesAreProblemsNamingTheFile) {
  // A copy of the clean v1 node with a cpuset.cpus that is not a cpuset and no numa_stat.
  std::string root = ::testing::TempDir() + "/verify-garbage";
  std::filesystem::remove_all(root);
  std::filesystem::copy(Fixture("v1-cgroupfs-clean"), root, std::filesystem::copy_options::recursive);
  std::string rel = "kubepods/pod" + std::string(kDb) + "/" + std::string(64, '1');
  { std::ofstream(root + "/cgroup/cpuset/" + rel + "/cpuset.cpus") << "2-x\n"; }
  std::filesystem::remove(root + "/cgroup/memory/" + rel + "/memory.numa_stat");
  auto intent = LoadIntent(root + "/kubelet");
  ASSERT_TRUE(intent.ok());
  Reality r({.cgroup_root = root + "/cgroup", .proc_root = root + "/proc"});
  Report rep = Verify(*intent, Refs(), r, {.scan_host = false});
  ASSERT_EQ(rep.problems.size(), 2u);
  EXPECT_THAT(rep.problems[0], HasSubstr("default/db/db: " + root + "/cgroup/cpuset/" + rel +
                                         "/cpuset.cpus"));
  EXPECT_THAT(rep.problems[1], HasSubstr("memory.numa_stat"));
  EXPECT_FALSE(rep.containers[0].actual.cpus.has_value());
  EXPECT_TRUE(rep.findings.empty());  // nothing to compare; the other containers verify clean
  std::filesystem::remove_all(root);
}

TEST(Reality, HostTasksSeeKernelThreads) {
  Reality r({.proc_root = Fixture("v1-cgroupfs-clean") + "/proc"});
  std::vector<HostTask> host = r.HostTasks({1001, 2001, 2101, 2201, 3001});
  ASSERT_EQ(host.size(), 3u);
  EXPECT_EQ(host[0].pid, 15);
  EXPECT_TRUE(host[0].kernel_thread);
  EXPECT_EQ(host[2].pid, 4242);
  EXPECT_EQ(host[2].comm, "stress");
  EXPECT_EQ(host[2].cpus_allowed, S("2"));
}

// ---- Whole fixtures ---------------------------------------------------------------------

TEST(Verify, CleanNodeHasOnlyThePinnedIntruder) {
  // The clean fixture's host still has `stress` pinned onto db's CPU 2 (foreign-task); with
  // the host scan off nothing is found.
  Report r = RunFixture("v1-cgroupfs-clean", {.scan_host = false});
  EXPECT_TRUE(r.problems.empty()) << r.problems[0];
  EXPECT_TRUE(r.findings.empty()) << r.findings[0].kind << ": " << r.findings[0].detail;
  ASSERT_EQ(r.containers.size(), 5u);
  EXPECT_EQ(r.containers[0].intent_source, "checkpoint");
  EXPECT_TRUE(r.containers[0].exclusive);
  EXPECT_EQ(r.containers[2].intent_source, "pod-pool");
  EXPECT_EQ(r.containers[4].intent_source, "default-cpuset");
  Report with_host = RunFixture("v1-cgroupfs-clean");
  ASSERT_EQ(with_host.findings.size(), 1u);
  EXPECT_EQ(with_host.findings[0].kind, "foreign-task");
  EXPECT_EQ(with_host.findings[0].pid, 4242);
  EXPECT_EQ(with_host.findings[0].pod, "db");
}

TEST(Verify, FaultsFixtureHasEveryPlantedFault) {
  Report r = RunFixture("v1-cgroupfs-faults");
  EXPECT_TRUE(r.problems.empty()) << r.problems[0];
  EXPECT_EQ(Kinds(r.findings),
            (std::vector<std::string>{"affinity-wider", "cpuset-drift", "cpuset-drift",
                                      "cpuset-drift", "foreign-task", "pool-leak",
                                      "remote-memory", "shared-exclusive-cpu"}));
  for (const Finding& f : r.findings) {
    if (f.kind == "remote-memory") {
      EXPECT_EQ(f.pod, "db");
      EXPECT_EQ(f.bytes, 1000u * 4096);
    } else if (f.kind == "affinity-wider") {
      EXPECT_EQ(f.pid, 1002);
      EXPECT_EQ(f.cpus, "0,4-7");
    } else if (f.kind == "shared-exclusive-cpu") {
      EXPECT_EQ(f.container, "app");
      EXPECT_THAT(f.detail, HasSubstr("default/tools/shell"));
    } else if (f.kind == "pool-leak") {
      EXPECT_EQ(f.container, "log");
      EXPECT_EQ(f.cpus, "7");
    }
  }
}

TEST(Verify, CgroupV2SystemdRemoteMemoryInBytes) {
  Report r = RunFixture("v2-systemd", {.scan_host = false});
  EXPECT_TRUE(r.problems.empty()) << r.problems[0];
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].kind, "remote-memory");
  EXPECT_EQ(r.findings[0].container, "app");
  EXPECT_EQ(r.findings[0].bytes, 300u * 4096);
}

// ---- One table per finding kind ---------------------------------------------------------

Intent TwoPods() {
  // CPUs 0-7: default 0-1,7; pod A (no pod entry) container a exclusive 2-3; pod P pod-level
  // 4-6 with x exclusive 4 and sidecars s1, s2 in the pool 5-6.
  Intent in;
  in.cpu_policy = "static";
  in.default_cpus = S("0-1,7");
  in.container_cpus["A"]["a"] = S("2-3");
  in.container_cpus["P"]["x"] = S("4");
  in.container_cpus["P"]["s1"] = S("5-6");
  in.container_cpus["P"]["s2"] = S("5-6");
  in.pod_cpus["P"] = S("4-6");
  in.container_mems["A"]["a"] = S("0");
  return in;
}

Observed Obs(const Intent& in, const std::string& uid, const std::string& name,
             const std::string& cpus, const std::string& mems = "0") {
  ContainerState st;
  st.cpus = S(cpus);
  st.mems = S(mems);
  return Join(in, {"ns", uid == "A" ? "pa" : uid == "P" ? "pp" : "pn", uid, name, name + "-id", "", 0},
              st);
}

std::vector<Observed> Node(const Intent& in, std::map<std::string, std::string> cpus) {
  auto get = [&](const std::string& k, const std::string& d) {
    return cpus.count(k) ? cpus[k] : d;
  };
  return {Obs(in, "A", "a", get("a", "2-3")), Obs(in, "P", "x", get("x", "4")),
          Obs(in, "P", "s1", get("s1", "5-6")), Obs(in, "P", "s2", get("s2", "5-6")),
          Obs(in, "N", "n", get("n", "0-1,7"))};
}

struct Case {
  std::string name;
  std::map<std::string, std::string> cpus;
  std::vector<std::string> kinds;  // of the checked function only
};

TEST(Findings, CpusetDrift) {
  Intent in = TwoPods();
  std::vector<Case> cases = {
      {"clean", {}, {}},
      {"exclusive widened", {{"a", "1-3"}}, {"cpuset-drift"}},
      {"shared narrowed", {{"n", "0"}}, {"cpuset-drift"}},
      {"pool sidecar moved", {{"s1", "5"}}, {"cpuset-drift"}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Kinds(FindCpusetDrift(Node(in, c.cpus))), c.kinds) << c.name;
  }
  std::vector<Observed> n = Node(in, {{"a", "1-3"}});
  EXPECT_EQ(FindCpusetDrift(n)[0].detail, "cgroup cpuset.cpus 1-3, checkpoint 2-3");
  n[0].actual.mems = S("0-1");
  EXPECT_THAT(FindCpusetDrift(n)[1].detail, HasSubstr("cpuset.mems 0-1"));
  // No intent (policy none): nothing to compare.
  Intent none;
  none.cpu_policy = "none";
  EXPECT_TRUE(FindCpusetDrift({Obs(none, "A", "a", "0-7")}).empty());
}

TEST(Findings, SharedExclusiveCpu) {
  Intent in = TwoPods();
  std::vector<Case> cases = {
      {"clean", {}, {}},
      {"shared container on an exclusive CPU", {{"n", "0-1,3,7"}}, {"shared-exclusive-cpu"}},
      {"sidecar on its pod's exclusive CPU", {{"s1", "4-6"}}, {"shared-exclusive-cpu"}},
      {"pool CPUs are not exclusive to one container", {{"x", "4-5"}}, {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Kinds(FindSharedExclusiveCpus(Node(in, c.cpus))), c.kinds) << c.name;
  }
}

TEST(Findings, PoolLeakAndSidecarOutsidePool) {
  Intent in = TwoPods();
  std::vector<Case> cases = {
      {"clean", {}, {}},
      {"pod pool onto the node's pool", {{"s1", "5-7"}}, {"pool-leak"}},
      {"node's pool onto a pod pool", {{"n", "0-1,6-7"}}, {"pool-leak"}},
      {"sidecar on another pod's CPUs", {{"s2", "3,5-6"}}, {"sidecar-outside-pool"}},
      {"exclusive container is not a pool member", {{"x", "4,7"}}, {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Kinds(FindPoolLeaks(in, Node(in, c.cpus))), c.kinds) << c.name;
  }
  // The checkpoint itself: the default set holds part of a pod's set.
  Intent bad = TwoPods();
  bad.default_cpus = S("0-1,6-7");
  auto f = FindPoolLeaks(bad, Node(bad, {{"n", "0-1,6-7"}}));
  ASSERT_FALSE(f.empty());
  EXPECT_THAT(f[0].detail, HasSubstr("defaultCpuSet 0-1,6-7 holds CPUs 6"));
}

TEST(Findings, RemoteMemory) {
  Intent in = TwoPods();
  std::vector<Observed> n = Node(in, {});
  EXPECT_TRUE(FindRemoteMemory(n).empty());
  n[0].actual.numa_bytes = {{0, 1 << 20}, {1, 0}};
  EXPECT_TRUE(FindRemoteMemory(n).empty());
  n[0].actual.numa_bytes = {{0, 1 << 20}, {1, 8192}, {2, 4096}};
  auto f = FindRemoteMemory(n);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].bytes, 12288u);
  EXPECT_THAT(f[0].detail, HasSubstr("NUMA node(s) 1-2 outside the assigned 0 (memory checkpoint"));
  // Without a memory manager entry: the cgroup's cpuset.mems is what was assigned.
  n[4].actual.mems = S("0");
  n[4].actual.numa_bytes = {{1, 4096}};
  f = FindRemoteMemory(n);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_THAT(f[1].detail, HasSubstr("cgroup cpuset.mems"));
}

TEST(Findings, AffinityWider) {
  Intent in = TwoPods();
  std::vector<Observed> n = Node(in, {});
  n[0].actual.tasks = {{10, "ok", S("2-3"), S("0")}, {11, "narrow", S("2"), S("0")}};
  EXPECT_TRUE(FindAffinityWider(n).empty());
  n[0].actual.tasks.push_back({12, "wide", S("0-7"), S("0")});
  n[0].actual.tasks.push_back({13, "widemem", S("3"), S("0-1")});
  auto f = FindAffinityWider(n);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].pid, 12);
  EXPECT_EQ(f[0].cpus, "0-1,4-7");
  EXPECT_EQ(f[1].pid, 13);
  EXPECT_THAT(f[1].detail, HasSubstr("Mems_allowed_list 0-1"));
}

TEST(Findings, ForeignTask) {
  Intent in = TwoPods();
  std::vector<Observed> n = Node(in, {});
  struct TaskCase {
    std::string name;
    HostTask task;
    std::vector<std::string> where;  // pod/container of each finding
  };
  std::vector<TaskCase> cases = {
      {"pinned on an exclusive CPU", {100, "stress", S("2"), false, std::nullopt, {}}, {"pa/a"}},
      {"pinned on the shared pool", {101, "irq", S("0-1"), false, std::nullopt, {}}, {}},
      {"kernel thread", {102, "ksoftirqd/2", S("2"), true, std::nullopt, {}}, {}},
      {"pinned on a pod pool and an exclusive CPU",
       {103, "x", S("3,5"), false, std::nullopt, {}}, {"pa/a", "pp/"}},
      {"unrestricted, no window", {104, "sshd", S("0-7"), false, std::nullopt, {}}, {}},
      {"unrestricted, idle in the window", {105, "sshd", S("0-7"), false, 0.0, S("2")}, {}},
      {"unrestricted, ran on the shared pool", {106, "cron", S("0-7"), false, 0.5, S("0")}, {}},
      {"unrestricted, ran on an exclusive CPU", {107, "backup", S("0-7"), false, 0.25, S("3")},
       {"pa/a"}},
  };
  for (const TaskCase& c : cases) {
    std::vector<std::string> where;
    for (const Finding& f : FindForeignTasks(in, n, {c.task})) {
      where.push_back(f.pod + "/" + f.container);
      EXPECT_EQ(f.pid, c.task.pid);
      EXPECT_EQ(f.comm, c.task.comm);
    }
    EXPECT_EQ(where, c.where) << c.name;
  }
  auto f = FindForeignTasks(in, n, {cases.back().task});
  EXPECT_THAT(f[0].detail, HasSubstr("0.250 s of CPU in the sampling window, last on CPU 3"));
  EXPECT_EQ(f[0].cpu_seconds, 0.25);
}

TEST(Findings, IntentMismatchWithPodResources) {
  Intent in = TwoPods();
  in.reported["ns/pa/a"] = {S("2-3"), S("0")};
  EXPECT_TRUE(FindIntentMismatch(in, Node(in, {})).empty());
  in.reported["ns/pa/a"] = {S("2"), S("0")};
  std::vector<Observed> n = Node(in, {});
  auto f = FindIntentMismatch(in, n);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].detail, "PodResources reports CPUs 2, checkpoint 2-3");
  // Without checkpoints PodResources is the intent.
  Intent pr;
  pr.reported["ns/pa/a"] = {S("2"), S("0")};
  Observed o = Obs(pr, "A", "a", "2-3");
  EXPECT_EQ(o.intent_source, "podresources");
  EXPECT_EQ(Kinds(FindCpusetDrift({o})), std::vector<std::string>{"cpuset-drift"});
}

TEST(Output, JsonKeysAndTable) {
  Report r = RunFixture("v1-cgroupfs-faults");
  nlohmann::ordered_json j = ReportJson(r);
  const auto& c = j["containers"][0];
  std::vector<std::string> keys;
  for (const auto& [k, v] : c.items()) keys.push_back(k);
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 4),
            (std::vector<std::string>{"namespace", "pod", "container", "containerId"}));
  EXPECT_EQ(c["intent"]["cpus"], "2-3");
  EXPECT_EQ(c["actual"]["cpus"], "1-3");
  EXPECT_EQ(j["findings"][0]["kind"], "cpuset-drift");
  EXPECT_EQ(j["findings"][0]["detail"], "cgroup cpuset.cpus 1-3, checkpoint 2-3");
  std::string table = ReportTable(r);
  EXPECT_THAT(table, HasSubstr("8 finding(s)"));
  std::string html = ReportHtml(r);
  EXPECT_THAT(html, HasSubstr("<td class=\"c extra\"></td>"));
}

}  // namespace
}  // namespace podtopo::verify
