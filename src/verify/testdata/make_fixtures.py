#!/usr/bin/env python3
"""Regenerates the fixture nodes of src/verify/testdata (committed; run by hand).

usage: make_fixtures.py

Each fixture is a whole node as `podtopo verify` reads it: kubelet/ (the checkpoints, written
in the kubelet 1.37 formats with the checksum helpers of src/state/testdata/make_fixtures.py),
cgroup/ (the cgroup mount: a v1 tree with cpuset/ and memory/ hierarchies, or a v2 unified
tree), proc/ (the /proc files verify reads: status, stat, task/*/stat) and containers.json (what
the CRI runtime would list; `podtopo verify --containers`, a test-only flag).

The machine: 8 CPUs on 2 NUMA nodes (CPUs 0-3 on node 0, 4-7 on node 1), static CPU and
memory policies, PodLevelResourceManagers on. Pods:
  default/db     (uid aaaaaaaa-...)  container db: exclusive CPUs 2-3, memory on node 0
  default/web    (uid bbbbbbbb-...)  pod-level pod, pod CPUs 4-6, memory on node 1:
                                     app exclusive 4, proxy and log in the pod's pool 5-6
  default/tools  (uid cccccccc-...)  container shell: burstable, on the node's pool 0-1,7

Fixtures:
  v1-cgroupfs-clean    cgroup v1, cgroupfs driver, everything as intended.
  v1-cgroupfs-faults   the same node with one planted fault per finding kind (see FAULTS).
  v2-systemd           cgroup v2, systemd driver: clean except remote memory of web/app
                       (memory.numa_stat in bytes).
A one-node machine cannot produce memory on a remote NUMA node: remote memory is tested with
these fixture memory.numa_stat files only.
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "state", "testdata"))
from make_fixtures import compact, cpu_v4, memory_v3  # noqa: E402

PAGE = 4096
DB = "aaaaaaaa-1111-4111-8111-111111111111"
WEB = "bbbbbbbb-2222-4222-8222-222222222222"
TOOLS = "cccccccc-3333-4333-8333-333333333333"

# (namespace, pod, uid, qos, container, id, pid, cpus, mems, numa pages {node: pages})
CONTAINERS = [
    ("default", "db", DB, "guaranteed", "db", "1" * 64, 1001, "2-3", "0", {0: 25600}),
    ("default", "web", WEB, "guaranteed", "app", "2" * 64, 2001, "4", "1", {1: 12800}),
    ("default", "web", WEB, "guaranteed", "proxy", "3" * 64, 2101, "5-6", "1", {1: 2560}),
    ("default", "web", WEB, "guaranteed", "log", "4" * 64, 2201, "5-6", "1", {1: 1280}),
    ("default", "tools", TOOLS, "burstable", "shell", "5" * 64, 3001, "0-1,7", "0-1",
     {0: 512, 1: 256}),
]

# One planted fault per finding kind (v1-cgroupfs-faults).
FAULTS = {
    # cpuset-drift: db's cgroup got CPU 1 of the node's pool besides its 2-3.
    "db": {"cpus": "1-3",
           # affinity-wider: db's second task claims every CPU (as a cgroup-escaped task would).
           "extra_task": (1002, "db-worker", "0-7"),
           # remote-memory: 1000 pages (4096000 bytes) of db's memory on node 1.
           "numa": {0: 25600, 1: 1000}},
    # shared-exclusive-cpu: the shell's cpuset reaches app's exclusive CPU 4.
    "shell": {"cpus": "0-1,4,7"},
    # pool-leak: log, in web's pod pool 5-6, reaches CPU 7 of the node's pool.
    "log": {"cpus": "5-7"},
}
# foreign-task: a host process pinned (taskset) onto db's exclusive CPU 2; a host daemon with
# every CPU (not reported without a sampling window) and a kernel thread on CPU 2 (never).
HOST_TASKS = [(4242, "stress", "2", 0, 1234, 56), (777, "sshd", "0-7", 0, 10, 2),
              (15, "ksoftirqd/2", "2", 0x00200040, 0, 3)]


def w(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def checkpoints(d):
    entries = {DB: {"db": "2-3"}, WEB: {"app": "4", "proxy": "5-6", "log": "5-6"}}
    w(os.path.join(d, "kubelet", "cpu_manager_state"),
      cpu_v4("static", "0-1,7", entries, {WEB: "4-6"}))
    gib = 1 << 30

    def block(node, size):
        return [{"numaAffinity": [node], "type": "memory", "size": size}]

    def table(total, reserved):
        return {"memory": {"total": total, "systemReserved": 0, "allocatable": total,
                           "reserved": reserved, "free": total - reserved}}
    data = {
        "policyName": "Static",
        "machineState": {
            "0": {"numberOfAssignments": 1, "memoryMap": table(16 * gib, 2 * gib), "cells": [0]},
            "1": {"numberOfAssignments": 3, "memoryMap": table(16 * gib, 3 * gib), "cells": [1]},
        },
        "entries": {DB: {"db": block(0, 2 * gib)},
                    WEB: {"app": block(1, gib), "log": block(1, gib), "proxy": block(1, gib)}},
        "podEntries": {WEB: {"memoryBlocks": block(1, 3 * gib)}},
    }
    w(os.path.join(d, "kubelet", "memory_manager_state"), memory_v3(data))


def proc_task(d, pid, comm, cpus, mems="0-1", flags=0, utime=0, stime=0, processor=0, tgid=None):
    base = os.path.join(d, "proc", str(tgid or pid))
    if tgid:
        base = os.path.join(base, "task", str(pid))
    status = (f"Name:\t{comm}\nState:\tS (sleeping)\nTgid:\t{tgid or pid}\nPid:\t{pid}\n"
              f"Cpus_allowed_list:\t{cpus}\nMems_allowed_list:\t{mems}\n")
    # /proc/PID/stat: pid (comm) state ppid ... flags(9) ... utime(14) stime(15) ...
    # processor(39).
    fields = [str(pid), f"({comm})", "S"] + ["0"] * 49
    fields[8] = str(flags)
    fields[13] = str(utime)
    fields[14] = str(stime)
    fields[38] = str(processor)
    stat = " ".join(fields) + "\n"
    w(os.path.join(base, "status"), status)
    w(os.path.join(base, "stat"), stat)
    if not tgid:
        w(os.path.join(base, "task", str(pid), "status"), status)
        w(os.path.join(base, "task", str(pid), "stat"), stat)


def cgroup_rel(layout, uid, qos, cid):
    if layout == "cgroupfs":
        return ("kubepods/pod" if qos == "guaranteed" else f"kubepods/{qos}/pod") + uid + "/" + cid
    u = uid.replace("-", "_")
    if qos == "guaranteed":
        pod = f"kubepods.slice/kubepods-pod{u}.slice"
    else:
        pod = f"kubepods.slice/kubepods-{qos}.slice/kubepods-{qos}-pod{u}.slice"
    return pod + f"/cri-containerd-{cid}.scope"


def node(name, version, layout, faults, remote_v2=None):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    checkpoints(d)
    listed = []
    cg = os.path.join(d, "cgroup")
    if version == 2:
        w(os.path.join(cg, "cgroup.controllers"), "cpuset cpu io memory pids\n")
    for ns, pod, uid, qos, cname, cid, pid, cpus, mems, numa in CONTAINERS:
        f = faults.get(cname, {})
        cpus = f.get("cpus", cpus)
        numa = f.get("numa", numa)
        if remote_v2 and cname in remote_v2:
            numa = remote_v2[cname]
        rel = cgroup_rel(layout, uid, qos, cid)
        tasks = [(pid, cname, cpus)]
        if "extra_task" in f:
            tasks.append(f["extra_task"])
        pids = "".join(f"{t[0]}\n" for t in tasks)
        if version == 1:
            cs = os.path.join(cg, "cpuset", rel)
            w(os.path.join(cs, "cpuset.cpus"), cpus + "\n")
            w(os.path.join(cs, "cpuset.mems"), mems + "\n")
            w(os.path.join(cs, "cgroup.procs"), pids)
            w(os.path.join(cs, "tasks"), pids)
            total = {n: numa.get(n, 0) for n in (0, 1)}
            lines = ["total=%d %s" % (sum(total.values()),
                                      " ".join(f"N{n}={p}" for n, p in total.items()))]
            lines.append("file=0 N0=0 N1=0")
            lines.append("anon=%d %s" % (sum(total.values()),
                                         " ".join(f"N{n}={p}" for n, p in total.items())))
            lines.append("unevictable=0 N0=0 N1=0")
            w(os.path.join(cg, "memory", rel, "memory.numa_stat"), "\n".join(lines) + "\n")
        else:
            c = os.path.join(cg, rel)
            w(os.path.join(c, "cpuset.cpus"), cpus + "\n")
            w(os.path.join(c, "cpuset.cpus.effective"), cpus + "\n")
            w(os.path.join(c, "cpuset.mems"), mems + "\n")
            w(os.path.join(c, "cpuset.mems.effective"), mems + "\n")
            w(os.path.join(c, "cgroup.procs"), pids)
            w(os.path.join(c, "cgroup.threads"), pids)
            nodes = {n: numa.get(n, 0) * PAGE for n in (0, 1)}
            lines = ["anon " + " ".join(f"N{n}={b}" for n, b in nodes.items()),
                     "file " + " ".join(f"N{n}=0" for n in nodes),
                     "kernel_stack " + " ".join(f"N{n}=16384" for n in nodes)]
            w(os.path.join(c, "memory.numa_stat"), "\n".join(lines) + "\n")
        for tpid, comm, tcpus in tasks:
            proc_task(d, tpid, comm, tcpus, mems, utime=100, stime=10,
                      processor=int(tcpus.split(",")[0].split("-")[0]))
        listed.append({"namespace": ns, "pod": pod, "podUid": uid, "container": cname,
                       "containerId": cid, "pid": pid})
    for pid, comm, cpus, flags, utime, stime in HOST_TASKS:
        proc_task(d, pid, comm, cpus, flags=flags, utime=utime, stime=stime,
                  processor=int(cpus.split("-")[0]))
    w(os.path.join(d, "containers.json"), json.dumps(listed, indent=1) + "\n")


def main():
    node("v1-cgroupfs-clean", 1, "cgroupfs", {})
    node("v1-cgroupfs-faults", 1, "cgroupfs", FAULTS)
    node("v2-systemd", 2, "systemd", {}, remote_v2={"app": {0: 300, 1: 12800}})


if __name__ == "__main__":
    main()
