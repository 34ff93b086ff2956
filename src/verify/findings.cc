// The checks of podtopo verify, one function per finding kind, and the whole run.
#include <algorithm>
#include <set>

#include "fmt/format.h"
#include "verify/verify.h"

namespace podtopo::verify {
namespace {

Finding Make(const std::string& kind, const Observed& o, std::string detail) {
  Finding f;
  f.kind = kind;
  f.pod_namespace = o.ref.pod_namespace;
  f.pod = o.ref.pod;
  f.container = o.ref.name;
  f.detail = std::move(detail);
  return f;
}

std::string Where(const Observed& o) {
  return fmt::format("{}/{}/{}", o.ref.pod_namespace, o.ref.pod, o.ref.name);
}

std::string SourceWord(const Observed& o) {
  if (o.intent_source == "default-cpuset") return "checkpoint defaultCpuSet";
  if (o.intent_source == "pod-pool") return "checkpoint pod pool";
  if (o.intent_source == "podresources") return "PodResources";
  return "checkpoint";
}

// CPUs no other pod may use, with their owner: containers' exclusive CPUs and pods' pools.
struct Owner {
  const Observed* container = nullptr;  // an exclusive container, else a pod's pool:
  std::string pod_uid;
};

std::map<int, Owner> ProtectedCpus(const Intent& intent, const std::vector<Observed>& containers) {
  std::map<int, Owner> out;
  for (const Observed& o : containers) {
    if (!o.exclusive || !o.intent_cpus) continue;
    o.intent_cpus->ForEach([&](int cpu) { out[cpu] = Owner{&o, o.ref.pod_uid}; });
  }
  for (const auto& entry : intent.pod_cpus) {
    const std::string& uid = entry.first;  // a structured binding cannot be captured (clang 14)
    intent.PodPool(uid).ForEach([&](int cpu) {
      if (!out.count(cpu)) out[cpu] = Owner{nullptr, uid};
    });
  }
  return out;
}

// Namespace and name of a pod, from the containers listed (the UID when none runs).
std::pair<std::string, std::string> PodName(const std::string& uid,
                                            const std::vector<Observed>& containers) {
  for (const Observed& o : containers) {
    if (o.ref.pod_uid == uid) return {o.ref.pod_namespace, o.ref.pod};
  }
  return {"", uid};
}

}  // namespace

Observed Join(const Intent& intent, const ContainerRef& ref, ContainerState actual) {
  Observed o;
  o.ref = ref;
  o.actual = std::move(actual);
  auto reported = intent.reported.find(ref.pod_namespace + "/" + ref.pod + "/" + ref.name);
  if (intent.StaticCpu()) {
    auto pod = intent.container_cpus.find(ref.pod_uid);
    const CpuSet* entry = nullptr;
    if (pod != intent.container_cpus.end()) {
      auto c = pod->second.find(ref.name);
      if (c != pod->second.end()) entry = &c->second;
    }
    bool pod_level = intent.pod_cpus.count(ref.pod_uid) > 0;
    if (entry != nullptr) {
      o.intent_cpus = *entry;
      o.exclusive = intent.IsExclusive(ref.pod_uid, ref.name);
      o.in_pod_pool = pod_level && !o.exclusive;
      o.intent_source = o.in_pod_pool ? "pod-pool" : "checkpoint";
    } else if (pod_level) {
      o.intent_cpus = intent.PodPool(ref.pod_uid);
      o.in_pod_pool = true;
      o.intent_source = "pod-pool";
    } else {
      o.intent_cpus = intent.default_cpus;
      o.intent_source = "default-cpuset";
    }
  } else if (intent.cpu_policy.empty() && reported != intent.reported.end() &&
             !reported->second.cpus.IsEmpty()) {
    o.intent_cpus = reported->second.cpus;
    o.exclusive = true;
    o.intent_source = "podresources";
  }
  auto mem_pod = intent.container_mems.find(ref.pod_uid);
  if (mem_pod != intent.container_mems.end() && mem_pod->second.count(ref.name) &&
      !mem_pod->second.at(ref.name).IsEmpty()) {
    o.intent_mems = mem_pod->second.at(ref.name);
  } else if (auto p = intent.pod_mems.find(ref.pod_uid);
             p != intent.pod_mems.end() && !p->second.IsEmpty()) {
    o.intent_mems = p->second;
  } else if (reported != intent.reported.end() && !reported->second.mems.IsEmpty()) {
    o.intent_mems = reported->second.mems;
  }
  return o;
}

std::vector<Finding> FindCpusetDrift(const std::vector<Observed>& containers) {
  std::vector<Finding> out;
  for (const Observed& o : containers) {
    if (o.intent_cpus && o.actual.cpus && *o.intent_cpus != *o.actual.cpus) {
      Finding f = Make("cpuset-drift", o,
                       fmt::format("cgroup cpuset.cpus {}, {} {}", o.actual.cpus->String(),
                                   SourceWord(o), o.intent_cpus->String()));
      f.cpus = o.actual.cpus->String();
      out.push_back(std::move(f));
    }
    if (o.intent_mems && o.actual.mems && *o.intent_mems != *o.actual.mems) {
      out.push_back(Make("cpuset-drift", o,
                         fmt::format("cgroup cpuset.mems {}, memory checkpoint NUMA nodes {}",
                                     o.actual.mems->String(), o.intent_mems->String())));
    }
  }
  return out;
}

std::vector<Finding> FindSharedExclusiveCpus(const std::vector<Observed>& containers) {
  std::vector<Finding> out;
  for (const Observed& o : containers) {
    if (!o.exclusive || !o.intent_cpus) continue;
    for (const Observed& p : containers) {
      if (&p == &o || !p.actual.cpus) continue;
      CpuSet shared = o.intent_cpus->Intersection(*p.actual.cpus);
      if (shared.IsEmpty()) continue;
      Finding f = Make("shared-exclusive-cpu", o,
                       fmt::format("exclusive CPUs {} are also in the cpuset of {} ({})",
                                   shared.String(), Where(p), p.actual.cpus->String()));
      f.cpus = shared.String();
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::vector<Finding> FindPoolLeaks(const Intent& intent, const std::vector<Observed>& containers) {
  std::vector<Finding> out;
  // The checkpoint itself: a pod's pool inside the node's default set.
  for (const auto& [uid, set] : intent.pod_cpus) {
    CpuSet leak = set.Intersection(intent.default_cpus);
    if (leak.IsEmpty()) continue;
    auto [ns, name] = PodName(uid, containers);
    Finding f;
    f.kind = "pool-leak";
    f.pod_namespace = ns;
    f.pod = name;
    f.detail = fmt::format("the checkpoint's defaultCpuSet {} holds CPUs {} of pod {}'s pod-level set {}",
                           intent.default_cpus.String(), leak.String(), uid, set.String());
    f.cpus = leak.String();
    out.push_back(std::move(f));
  }
  for (const Observed& o : containers) {
    if (!o.actual.cpus) continue;
    // A pool container outside its pod's CPUs: onto the node's pool, or elsewhere.
    if (o.in_pod_pool) {
      auto pod = intent.pod_cpus.find(o.ref.pod_uid);
      CpuSet mine = pod != intent.pod_cpus.end() ? pod->second : CpuSet();
      CpuSet outside = o.actual.cpus->Difference(mine);
      CpuSet onto_node = outside.Intersection(intent.default_cpus);
      CpuSet elsewhere = outside.Difference(intent.default_cpus);
      if (!onto_node.IsEmpty()) {
        Finding f = Make("pool-leak", o,
                         fmt::format("in pod {}'s pool {} but runs on the node's shared CPUs {}",
                                     o.ref.pod, intent.PodPool(o.ref.pod_uid).String(),
                                     onto_node.String()));
        f.cpus = onto_node.String();
        out.push_back(std::move(f));
      }
      if (!elsewhere.IsEmpty()) {
        Finding f = Make("sidecar-outside-pool", o,
                         fmt::format("in pod {}'s pool {} but runs on CPUs {} outside its pod's CPUs {}",
                                     o.ref.pod, intent.PodPool(o.ref.pod_uid).String(),
                                     elsewhere.String(), mine.String()));
        f.cpus = elsewhere.String();
        out.push_back(std::move(f));
      }
    }
    // Any container of another pod on a pod's pool (the node's pool leaking into it).
    for (const auto& [uid, set] : intent.pod_cpus) {
      if (uid == o.ref.pod_uid) continue;
      CpuSet hit = o.actual.cpus->Intersection(intent.PodPool(uid));
      if (hit.IsEmpty()) continue;
      auto [ns, name] = PodName(uid, containers);
      Finding f = Make("pool-leak", o,
                       fmt::format("runs on CPUs {} of pod {}/{}'s shared pool {}", hit.String(), ns,
                                   name, intent.PodPool(uid).String()));
      f.cpus = hit.String();
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::vector<Finding> FindRemoteMemory(const std::vector<Observed>& containers) {
  std::vector<Finding> out;
  for (const Observed& o : containers) {
    const std::optional<CpuSet>& assigned = o.intent_mems ? o.intent_mems : o.actual.mems;
    if (!assigned || assigned->IsEmpty()) continue;
    uint64_t remote = 0;
    CpuSet nodes;
    for (const auto& [node, bytes] : o.actual.numa_bytes) {
      if (bytes == 0 || assigned->Contains(node)) continue;
      remote += bytes;
      nodes.Add(node);
    }
    if (remote == 0) continue;
    Finding f = Make("remote-memory", o,
                     fmt::format("{} bytes on NUMA node(s) {} outside the assigned {} ({}; "
                                 "memory.numa_stat)",
                                 remote, nodes.String(), assigned->String(),
                                 o.intent_mems ? "memory checkpoint" : "cgroup cpuset.mems"));
    f.bytes = remote;
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> FindAffinityWider(const std::vector<Observed>& containers) {
  std::vector<Finding> out;
  for (const Observed& o : containers) {
    for (const Task& t : o.actual.tasks) {
      std::vector<std::string> parts;
      CpuSet wider_cpus;
      if (o.actual.cpus) {
        wider_cpus = t.cpus_allowed.Difference(*o.actual.cpus);
        if (!wider_cpus.IsEmpty()) {
          parts.push_back(fmt::format("Cpus_allowed_list {}, cgroup cpuset.cpus {}",
                                      t.cpus_allowed.String(), o.actual.cpus->String()));
        }
      }
      if (o.actual.mems && !t.mems_allowed.IsEmpty() &&
          !t.mems_allowed.IsSubsetOf(*o.actual.mems)) {
        parts.push_back(fmt::format("Mems_allowed_list {}, cgroup cpuset.mems {}",
                                    t.mems_allowed.String(), o.actual.mems->String()));
      }
      if (parts.empty()) continue;
      std::string detail = fmt::format("task {} ({}): {}", t.pid, t.comm, parts[0]);
      if (parts.size() > 1) detail += "; " + parts[1];
      Finding f = Make("affinity-wider", o, detail);
      f.pid = t.pid;
      f.comm = t.comm;
      if (!wider_cpus.IsEmpty()) f.cpus = wider_cpus.String();
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::vector<Finding> FindForeignTasks(const Intent& intent, const std::vector<Observed>& containers,
                                      const std::vector<HostTask>& host) {
  std::vector<Finding> out;
  std::map<int, Owner> owners = ProtectedCpus(intent, containers);
  if (owners.empty()) return out;
  CpuSet node = intent.NodeCpus();
  for (const Observed& o : containers) {
    if (o.actual.cpus) node.UnionWith(*o.actual.cpus);
  }
  for (const HostTask& t : host) {
    if (t.kernel_thread) continue;
    // Owners reached, in CPU order: container (or pod pool) -> CPUs.
    std::vector<std::pair<Owner, CpuSet>> reached;
    t.cpus_allowed.ForEach([&](int cpu) {
      auto it = owners.find(cpu);
      if (it == owners.end()) return;
      for (auto& [owner, cpus] : reached) {
        if (owner.container == it->second.container && owner.pod_uid == it->second.pod_uid) {
          cpus.Add(cpu);
          return;
        }
      }
      reached.push_back({it->second, CpuSet{cpu}});
    });
    if (reached.empty()) continue;
    bool unrestricted = node.IsSubsetOf(t.cpus_allowed);
    bool ran = t.cpu_seconds && *t.cpu_seconds > 0;
    for (const auto& [owner, cpus] : reached) {
      bool ran_there = ran && t.ran_on.Intersects(cpus);
      if (unrestricted && !ran_there) continue;
      Finding f;
      std::string whose;
      if (owner.container != nullptr) {
        f = Make("foreign-task", *owner.container, "");
        whose = "exclusive CPUs " + owner.container->intent_cpus->String();
      } else {
        auto [ns, name] = PodName(owner.pod_uid, containers);
        f.kind = "foreign-task";
        f.pod_namespace = ns;
        f.pod = name;
        whose = "the pod's shared pool " + intent.PodPool(owner.pod_uid).String();
      }
      f.detail = fmt::format("host task {} ({}) may run on CPUs {} of {} (its affinity {})", t.pid,
                             t.comm, cpus.String(), whose, t.cpus_allowed.String());
      if (t.cpu_seconds) {
        f.detail += fmt::format("; {:.3f} s of CPU in the sampling window", *t.cpu_seconds);
        if (ran) f.detail += ", last on CPU " + t.ran_on.String();
      }
      f.pid = t.pid;
      f.comm = t.comm;
      f.cpu_seconds = t.cpu_seconds;
      f.cpus = cpus.String();
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::vector<Finding> FindIntentMismatch(const Intent& intent,
                                        const std::vector<Observed>& containers) {
  std::vector<Finding> out;
  for (const Observed& o : containers) {
    auto r = intent.reported.find(o.ref.pod_namespace + "/" + o.ref.pod + "/" + o.ref.name);
    if (r == intent.reported.end() || o.intent_source == "podresources" || !o.exclusive) continue;
    if (!r->second.cpus.IsEmpty() && o.intent_cpus && r->second.cpus != *o.intent_cpus) {
      out.push_back(Make("intent-mismatch", o,
                         fmt::format("PodResources reports CPUs {}, checkpoint {}",
                                     r->second.cpus.String(), o.intent_cpus->String())));
    }
  }
  return out;
}

Report Verify(const Intent& intent, const std::vector<ContainerRef>& refs, Reality& reality,
              const VerifyOptions& options) {
  Report r;
  r.cpu_intent = !intent.cpu_policy.empty();
  r.problems = intent.problems;
  r.containers.reserve(refs.size());
  std::vector<int> container_pids;
  for (const ContainerRef& ref : refs) {
    ContainerState st = reality.ReadContainer(ref);
    for (const std::string& p : st.problems) {
      r.problems.push_back(fmt::format("{}/{}/{}: {}", ref.pod_namespace, ref.pod, ref.name, p));
    }
    for (const Task& t : st.tasks) container_pids.push_back(t.pid);
    if (ref.pid > 0) container_pids.push_back(ref.pid);
    r.containers.push_back(Join(intent, ref, std::move(st)));
  }
  auto add = [&](std::vector<Finding> f) {
    r.findings.insert(r.findings.end(), std::make_move_iterator(f.begin()),
                      std::make_move_iterator(f.end()));
  };
  add(FindCpusetDrift(r.containers));
  add(FindSharedExclusiveCpus(r.containers));
  add(FindPoolLeaks(intent, r.containers));
  add(FindRemoteMemory(r.containers));
  add(FindAffinityWider(r.containers));
  add(FindIntentMismatch(intent, r.containers));
  if (options.scan_host) {
    std::map<int, Owner> owners = ProtectedCpus(intent, r.containers);
    if (!owners.empty()) {
      std::vector<HostTask> host = reality.HostTasks(container_pids);
      if (options.sample.count() > 0) {
        // Sample only the tasks whose affinity reaches a protected CPU.
        std::vector<HostTask> reach;
        for (HostTask& t : host) {
          bool hits = false;
          t.cpus_allowed.ForEach([&](int cpu) { hits |= owners.count(cpu) > 0; });
          if (hits && !t.kernel_thread) reach.push_back(std::move(t));
        }
        reality.Sample(reach, options.sample);
        host = std::move(reach);
      }
      add(FindForeignTasks(intent, r.containers, host));
    }
  }
  return r;
}

}  // namespace podtopo::verify
