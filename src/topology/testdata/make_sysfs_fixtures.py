#!/usr/bin/env python3
"""Writes the sysfs fixture trees under testdata/sysfs/ used by sysfs_discovery_test.cc.

Each tree holds only the files DiscoverSysfs reads:
  devices/system/cpu/online
  devices/system/cpu/cpuN/topology/{core_id,physical_package_id}
  devices/system/cpu/cpuN/cache/indexK/{id,level,size,type,shared_cpu_map}
  devices/system/node/nodeN/{cpulist,meminfo,distance}
  devices/system/node/nodeN/hugepages/hugepages-<K>kB/nr_hugepages

  ./make_sysfs_fixtures.py                 # regenerate the synthetic trees
  ./make_sysfs_fixtures.py --copy-local    # also (re)copy this machine's /sys as 'local'
  ./make_sysfs_fixtures.py --hwloc-root T DIR
      # write an augmented copy of tree T (with the extra sibling files the hwloc
      # Linux backend needs) under DIR/sys. testdata/xml/T.xml came from
      #   HWLOC_COMPONENTS=-x86 HWLOC_FSROOT=DIR lstopo-no-graphics --of xml > xml/T.xml
      # (hwloc 2.9; -x86 keeps the build machine's CPUID caches out of the export).
      # xml/power-2n64c4t-nopkg.xml: the same, then Architecture set to ppc64le and HostName
      # to p9-lpar (uname of the build machine otherwise).
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "sysfs")
CPU = "devices/system/cpu"
NODE = "devices/system/node"


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def cpulist(cpus):
    cpus = sorted(cpus)
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def cpumask(cpus, ncpus):
    """Linux bitmap format: comma-separated 32-bit hex words, most significant first."""
    words = max(1, (ncpus + 31) // 32)
    vals = [0] * words
    for c in cpus:
        vals[c // 32] |= 1 << (c % 32)
    return ",".join("%08x" % v for v in reversed(vals))


def meminfo(node, kib):
    return ("Node %d MemTotal:       %d kB\nNode %d MemFree:        %d kB\n"
            "Node %d MemUsed:        %d kB\n" % (node, kib, node, kib // 2, node, kib - kib // 2))


class Machine:
    """cpus: {cpu: dict(core_id, package, numa, l3=(id, [cpus]) or None)}"""

    def __init__(self, name):
        self.name, self.cpus, self.nodes, self.online, self.offline_dirs = name, {}, {}, None, []

    def write(self, root):
        if os.path.exists(root):
            shutil.rmtree(root)
        ncpus = max(list(self.cpus) + self.offline_dirs) + 1
        write(root, CPU + "/online", cpulist(self.online if self.online is not None
                                              else self.cpus) + "\n")
        for cpu, c in sorted(self.cpus.items()):
            write(root, "%s/cpu%d/topology/core_id" % (CPU, cpu), "%d\n" % c["core_id"])
            write(root, "%s/cpu%d/topology/physical_package_id" % (CPU, cpu), "%d\n" % c["package"])
            for k, cache in enumerate(c.get("caches", [])):
                level, ctype, size_k, cid, shared = cache
                base = "%s/cpu%d/cache/index%d/" % (CPU, cpu, k)
                write(root, base + "id", "%d\n" % cid)
                write(root, base + "level", "%d\n" % level)
                write(root, base + "size", "%dK\n" % size_k)
                write(root, base + "type", ctype + "\n")
                write(root, base + "shared_cpu_map", cpumask(shared, ncpus) + "\n")
        for cpu in self.offline_dirs:
            # An offline CPU keeps its directory; the kernel removes its topology files, but
            # keep them here so the test proves the online list is what excludes it.
            write(root, "%s/cpu%d/topology/core_id" % (CPU, cpu), "0\n")
            write(root, "%s/cpu%d/topology/physical_package_id" % (CPU, cpu), "0\n")
        for nid, n in sorted(self.nodes.items()):
            base = "%s/node%d/" % (NODE, nid)
            write(root, base + "cpulist", cpulist(n["cpus"]) + "\n")
            write(root, base + "meminfo", meminfo(nid, n["mem_kib"]))
            write(root, base + "distance", " ".join(str(d) for d in n["distance"]) + "\n")
            for size_k, count in n.get("hugepages", []):
                write(root, base + "hugepages/hugepages-%dkB/nr_hugepages" % size_k, "%d\n" % count)


def intel_2s4c2t():
    """2 sockets x 4 cores x 2 threads. First threads 0-7 socket by socket, siblings 8-15
    (cpu c and c+8 share a core). sysfs core_id restarts per socket and skips values, as on
    Xeons: {0, 1, 8, 9}. One NUMA node per socket. L3 per socket with cache id 0 and 2 (an
    APIC-derived id, not the socket number): it spans the whole NUMA node, so cadvisor treats it
    as a node cache and the uncore id falls back to the socket id. CPU 16 exists but is offline.
    Hugepages: node0 512 x 2Mi + 2 x 1Gi, node1 0 x 2Mi + 4 x 1Gi."""
    m = Machine("intel-2s4c2t")
    core_ids = [0, 1, 8, 9]
    for c in range(8):
        pkg = c // 4
        socket_cpus = [x for x in range(16) if (x % 8) // 4 == pkg]
        for cpu in (c, c + 8):
            m.cpus[cpu] = dict(core_id=core_ids[c % 4], package=pkg, caches=[
                (1, "Data", 48, c, [c, c + 8]),
                (1, "Instruction", 32, c, [c, c + 8]),
                (2, "Unified", 2048, c, [c, c + 8]),
                (3, "Unified", 30720, 2 * pkg, socket_cpus),
            ])
    m.online = list(range(16))
    m.offline_dirs = [16]
    m.nodes[0] = dict(cpus=[0, 1, 2, 3, 8, 9, 10, 11], mem_kib=32 * 1024 * 1024,
                      distance=[10, 21], hugepages=[(2048, 512), (1048576, 2)])
    m.nodes[1] = dict(cpus=[4, 5, 6, 7, 12, 13, 14, 15], mem_kib=32 * 1024 * 1024 - 4096,
                      distance=[21, 10], hugepages=[(2048, 0), (1048576, 4)])
    return m


def amd_1s2n4ccx():
    """AMD EPYC-like: 1 socket, NPS2 (2 NUMA nodes), 8 cores x 2 threads, siblings c and c+8.
    4 CCXs (L3 id 0-3) of 2 cores each, so every NUMA node holds 2 L3 groups and the uncore
    id is the L3 id. node0: 1024 x 2Mi hugepages."""
    m = Machine("amd-1s2n4ccx")
    for c in range(8):
        ccx = c // 2
        ccx_cpus = [x for x in range(16) if (x % 8) // 2 == ccx]
        for cpu in (c, c + 8):
            m.cpus[cpu] = dict(core_id=c, package=0, caches=[
                (1, "Data", 32, c, [c, c + 8]),
                (1, "Instruction", 32, c, [c, c + 8]),
                (2, "Unified", 1024, c, [c, c + 8]),
                (3, "Unified", 32768, ccx, ccx_cpus),
            ])
    m.nodes[0] = dict(cpus=[0, 1, 2, 3, 8, 9, 10, 11], mem_kib=64 * 1024 * 1024,
                      distance=[10, 12], hugepages=[(2048, 1024), (1048576, 0)])
    m.nodes[1] = dict(cpus=[4, 5, 6, 7, 12, 13, 14, 15], mem_kib=64 * 1024 * 1024,
                      distance=[12, 10], hugepages=[(2048, 0), (1048576, 0)])
    return m


def cpuless_numa():
    """1 socket, 4 cores without SMT on NUMA node 0; NUMA node 1 is memory only (CXL-like,
    empty cpulist). No cache directories at all: the uncore id is the socket id."""
    m = Machine("cpuless-numa")
    for c in range(4):
        m.cpus[c] = dict(core_id=c, package=0)
    m.nodes[0] = dict(cpus=[0, 1, 2, 3], mem_kib=16 * 1024 * 1024, distance=[10, 20])
    m.nodes[1] = dict(cpus=[], mem_kib=64 * 1024 * 1024, distance=[20, 10])
    return m


def power_2n64c4t_nopkg():
    """IBM POWER9 PowerVM LPAR (pSeries): 64 cores x SMT4, CPUs 4c..4c+3 on core c, core_id =
    the core's first CPU, 2 NUMA nodes of 32 cores (distance 10/40), 64Gi each, no hugepages
    and no cache directories. The firmware gives no chip id, so physical_package_id is -1 for
    every CPU: cadvisor counts one socket (-1) and the kubelet sees one. hwloc makes a Package
    per core (the kernel's package mask there is the core's threads) without an os_index, so
    an export of this machine (xml/power-2n64c4t-nopkg.xml) has 64 Packages."""
    m = Machine("power-2n64c4t-nopkg")
    for c in range(64):
        for t in range(4):
            m.cpus[4 * c + t] = dict(core_id=4 * c, package=-1)
    m.nodes[0] = dict(cpus=list(range(128)), mem_kib=64 * 1024 * 1024, distance=[10, 40])
    m.nodes[1] = dict(cpus=list(range(128, 256)), mem_kib=64 * 1024 * 1024, distance=[40, 10])
    return m


def copy_local(root):
    if os.path.exists(root):
        shutil.rmtree(root)
    src = "/sys"
    rels = [CPU + "/online"]
    for name in sorted(os.listdir(os.path.join(src, CPU))):
        if not (name.startswith("cpu") and name[3:].isdigit()):
            continue
        for f in ("topology/core_id", "topology/physical_package_id"):
            rels.append("%s/%s/%s" % (CPU, name, f))
        cache = os.path.join(src, CPU, name, "cache")
        if os.path.isdir(cache):
            for idx in sorted(os.listdir(cache)):
                if idx.startswith("index"):
                    for f in ("id", "level", "size", "type", "shared_cpu_map"):
                        rels.append("%s/%s/cache/%s/%s" % (CPU, name, idx, f))
    for name in sorted(os.listdir(os.path.join(src, NODE))):
        if not (name.startswith("node") and name[4:].isdigit()):
            continue
        for f in ("cpulist", "meminfo", "distance"):
            rels.append("%s/%s/%s" % (NODE, name, f))
        hp = os.path.join(src, NODE, name, "hugepages")
        if os.path.isdir(hp):
            for size in sorted(os.listdir(hp)):
                rels.append("%s/%s/hugepages/%s/nr_hugepages" % (NODE, name, size))
    for rel in rels:
        p = os.path.join(src, rel)
        if os.path.exists(p):
            with open(p) as f:
                write(root, rel, f.read())


def hwloc_root(tree, dest):
    """Copies tree under dest/sys and adds what hwloc's Linux backend reads besides."""
    sys_dir = os.path.join(dest, "sys")
    shutil.copytree(tree, sys_dir)
    cpu_root = os.path.join(sys_dir, CPU)
    cpus = {}
    for name in os.listdir(cpu_root):
        if name.startswith("cpu") and name[3:].isdigit():
            t = os.path.join(cpu_root, name, "topology")
            cpus[int(name[3:])] = (int(open(t + "/core_id").read()),
                                   int(open(t + "/physical_package_id").read()))
    online = set()
    for piece in open(os.path.join(cpu_root, "online")).read().strip().split(","):
        a, _, b = piece.partition("-")
        online.update(range(int(a), int(b or a) + 1))
    ncpus = max(cpus) + 1
    for cpu, (core, pkg) in cpus.items():
        t = os.path.join(cpu_root, "cpu%d" % cpu, "topology")
        sib = [c for c, v in cpus.items() if v == (core, pkg) and c in online]
        pk = [c for c, v in cpus.items() if v[1] == pkg and c in online]
        if pkg < 0:
            # No package id (POWER LPARs): the kernel's package mask is the core's threads.
            pk = sib
        for base, members in (("thread_siblings", sib), ("core_cpus", sib),
                              ("core_siblings", pk), ("package_cpus", pk)):
            write(t, base, cpumask(members, ncpus) + "\n")
            write(t, base + "_list", cpulist(members) + "\n")
        if cpu not in online:
            write(os.path.join(cpu_root, "cpu%d" % cpu), "online", "0\n")
    write(cpu_root, "possible", "0-%d\n" % (ncpus - 1))
    write(cpu_root, "present", "0-%d\n" % (ncpus - 1))
    node_root = os.path.join(sys_dir, NODE)
    nodes = sorted(int(n[4:]) for n in os.listdir(node_root) if n[4:].isdigit())
    for n in nodes:
        members = open(os.path.join(node_root, "node%d" % n, "cpulist")).read().strip()
        cl = set()
        for piece in filter(None, members.split(",")):
            a, _, b = piece.partition("-")
            cl.update(range(int(a), int(b or a) + 1))
        write(node_root, "node%d/cpumap" % n, cpumask(cl, ncpus) + "\n")
    write(node_root, "online", cpulist(nodes) + "\n")
    write(node_root, "possible", cpulist(nodes) + "\n")
    write(node_root, "has_cpu", cpulist([n for n in nodes if open(os.path.join(
        node_root, "node%d" % n, "cpulist")).read().strip()]) + "\n")
    write(node_root, "has_memory", cpulist(nodes) + "\n")


def main(argv):
    if len(argv) == 4 and argv[1] == "--hwloc-root":
        hwloc_root(argv[2], argv[3])
        return
    for m in (intel_2s4c2t(), amd_1s2n4ccx(), cpuless_numa(), power_2n64c4t_nopkg()):
        m.write(os.path.join(OUT, m.name))
    if "--copy-local" in argv:
        copy_local(os.path.join(OUT, "local"))


if __name__ == "__main__":
    main(sys.argv)
