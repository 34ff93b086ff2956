#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpus: OUT/<target>/<name>, one input per file.

The seeds come from ../shared (the hwloc fixtures and the kubelet's vectors) and from the
repository's own testdata and examples; they are generated into the build tree and never
copied into the repository. Standard library only (it runs in the build).

Input formats (see each fuzz/<target>_fuzzer.cc):
  cpu_checkpoint, memory_checkpoint  1 flag byte (bit 0: PodLevelResourceManagers) + the file
  cpuset                             "A" or "A\\nB" (two sets for the set algebra)
  sysfs                              records "path\\0contents\\0" ("path/\\0\\0" = empty dir)
  podresources_server                1 byte (call | 4 = running-pod filter) + request encoding
  podresources_answer                1 byte (0 List, 1 Get, 2 Allocatable) + response encoding
  cri_answer                         1 byte (which pods are wanted) + varint length +
                                     ListPodSandboxResponse + varint length +
                                     ListContainersResponse + ContainerStatusResponse
"""
import argparse
import bz2
import hashlib
import json
import os
import re
import shutil
import tarfile


class Corpus:
    def __init__(self, out):
        self.out = out
        self.counts = {}

    def add(self, target, data, name=None):
        if isinstance(data, str):
            data = data.encode()
        d = os.path.join(self.out, target)
        os.makedirs(d, exist_ok=True)
        name = name or hashlib.sha1(data).hexdigest()[:16]
        name = re.sub(r"[^A-Za-z0-9_.+-]", "_", name)
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
        self.counts[target] = self.counts.get(target, 0) + 1


def read(path):
    with open(path, "rb") as f:
        return f.read()


def files(folder, pattern=r".*"):
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, n) for n in os.listdir(folder)
                  if re.fullmatch(pattern, n) and os.path.isfile(os.path.join(folder, n)))


def documents(text):
    return [d for d in re.split(r"^---\s*$", text, flags=re.M) if d.strip()]


# ---- protobuf wire encoding (enough for the PodResources messages) -------------------------

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(num, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def field_varint(num, value):
    return varint(num << 3) + varint(value)


def packed(num, values):
    return field_bytes(num, b"".join(varint(v) for v in values))


def topology(nodes):
    return b"".join(field_bytes(1, field_varint(1, n)) for n in nodes)


def memory(kind, size, nodes):
    return field_bytes(1, kind) + field_varint(2, size) + field_bytes(3, topology(nodes))


def container(name, cpus=(), mem=(), devices=()):
    out = field_bytes(1, name)
    for res, ids, nodes in devices:
        out += field_bytes(2, field_bytes(1, res) + b"".join(field_bytes(2, i) for i in ids)
                           + field_bytes(3, topology(nodes)))
    if cpus:
        out += packed(3, cpus)
    for m in mem:
        out += field_bytes(4, memory(*m))
    return out


def pod(name, namespace, containers, cpus=(), mem=()):
    out = field_bytes(1, name) + field_bytes(2, namespace)
    for c in containers:
        out += field_bytes(3, c)
    if cpus:
        out += packed(4, cpus)
    for m in mem:
        out += field_bytes(5, memory(*m))
    return out


GI = 1 << 30


def podresources_seeds(c):
    mixed = pod("pod-scope-mixed", "default",
                [container("metrics-sidecar"), container("logging-sidecar"),
                 container("main-app", [2, 3], [("memory", 2 * GI, [0])])],
                cpus=[0, 1, 2, 3], mem=[("memory", 4 * GI, [0])])
    db = pod("db", "prod", [container("db", [4, 5], [("memory", GI, [1]),
                                                      ("hugepages-2Mi", 1 << 21, [0, 1])],
                                      [("example.com/gpu", ["gpu0"], [1])])])
    legacy = pod("legacy", "default", [container("a", [0, 1]), container("b", [0, 1]),
                                       container("c", [6])])
    c.add("podresources_answer", b"\x00" + field_bytes(1, mixed) + field_bytes(1, db)
          + field_bytes(1, legacy), "list")
    c.add("podresources_answer", b"\x01" + field_bytes(1, mixed), "get")
    c.add("podresources_answer", b"\x00", "list-empty")
    alloc = (field_bytes(1, field_bytes(1, "example.com/gpu") + field_bytes(2, "gpu0")
                         + field_bytes(3, topology([1])))
             + packed(2, range(1, 8)) + field_bytes(3, memory("memory", 30 * GI, [0]))
             + field_bytes(3, memory("memory", 32 * GI, [1])))
    c.add("podresources_answer", b"\x02" + alloc, "allocatable")
    for flags in (0, 4):
        c.add("podresources_server", bytes([0 | flags]), f"list-{flags}")
        c.add("podresources_server", bytes([1 | flags]) + field_bytes(1, "pod-scope-mixed")
              + field_bytes(2, "default"), f"get-mixed-{flags}")
        c.add("podresources_server", bytes([1 | flags]) + field_bytes(1, "db")
              + field_bytes(2, "prod"), f"get-db-{flags}")
        c.add("podresources_server", bytes([1 | flags]) + field_bytes(1, "nope")
              + field_bytes(2, "default"), f"get-unknown-{flags}")
        c.add("podresources_server", bytes([2 | flags]), f"allocatable-{flags}")
        c.add("podresources_server", bytes([3 | flags]), f"v1alpha1-{flags}")


def cri_seeds(c):
    """ListPodSandbox + ListContainers + ContainerStatus answers as containerd gives them to
    `podtopo serve --cri` (labels of tests/e2e's pods), and broken ones."""
    def labels(num, pairs):
        return b"".join(field_bytes(num, field_bytes(1, k) + field_bytes(2, v)) for k, v in pairs)

    def sandbox(sid, uid, name, state=0, created=1):
        meta = field_bytes(1, name) + field_bytes(2, uid) + field_bytes(3, "default")
        return (field_bytes(1, sid) + field_bytes(2, meta) + field_varint(3, state)
                + field_varint(4, created)
                + labels(5, [("io.kubernetes.pod.uid", uid), ("io.kubernetes.pod.name", name),
                             ("podtopo.io/managed", "true")]))

    def ctr(cid, sid, name, state=1, created=1, attempt=0):
        meta = field_bytes(1, name) + field_varint(2, attempt)
        return (field_bytes(1, cid) + field_bytes(2, sid) + field_bytes(3, meta)
                + field_varint(6, state) + field_varint(7, created)
                + labels(8, [("io.kubernetes.container.name", name),
                             ("podtopo.io/container-kind", "app")]))

    def status(cpuset):
        linux = field_varint(1, 100000) + field_varint(3, 1024) + field_bytes(6, cpuset)
        return field_bytes(1, field_bytes(1, "c1") + field_varint(3, 1)
                           + field_bytes(16, field_bytes(1, linux)))

    def answer(sandboxes, containers, st):
        sb = b"".join(field_bytes(1, x) for x in sandboxes)
        ct = b"".join(field_bytes(1, x) for x in containers)
        return varint(len(sb)) + sb + varint(len(ct)) + ct + st

    ready = [sandbox("s1", "uid-a", "a", 0, 5), sandbox("s0", "uid-a", "a", 0, 2),
             sandbox("s2", "uid-b", "b", 1, 3)]
    conts = [ctr("c1", "s1", "app", 1, 7), ctr("c0", "s1", "app", 2, 6, 1),
             ctr("c2", "s1", "side", 1, 7), ctr("c3", "s2", "app", 3, 4)]
    for salt in (0, 1):
        c.add("cri_answer", bytes([salt]) + answer(ready, conts, status("0-1,3")),
              f"sync-{salt}")
    c.add("cri_answer", b"\x00" + answer([ready[0], ready[0]], conts[:1], status("3,0-1")),
          "duplicated-sandbox")
    c.add("cri_answer", b"\x00" + answer([sandbox("", "uid-a", "a")], [], status("zero")),
          "no-id")
    c.add("cri_answer", b"\x02" + answer([], [], b""), "empty")


# ---- the targets ----------------------------------------------------------------------------

QUANTITIES = ["0", "1", "0.5", ".5", "100m", "977m", "1.5", "2Gi", "1.5Gi", "1536Mi", "1e3",
              "1E3", "8Ei", "9223372036854775807", "-1.5", "+1", "0.1m", "0.1n", "1n", "1u",
              "1k", "1Ki", "1M", "1Mi", "1G", "1T", "1P", "1E", "12E", "1Ti", "1Pi", "010",
              "1e-3", "1e400", "123456789012345678901234567", "0.000000001", "4Gi", "256Mi",
              "1124Mi", "100Mi", "-0", "1.", "5e", "1Q", "1.1.M", ""]


def quantity_seeds(c, shared):
    seen = set(QUANTITIES)
    for name in ("memory_cases.json", "policy_static_cases.json"):
        path = os.path.join(shared, "vectors", name)
        if os.path.exists(path):
            text = read(path).decode()
            for m in re.finditer(r'"([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?(?:[kMGTPE]i?|[munE])?)"',
                                 text):
                seen.add(m.group(1))
    for q in sorted(seen)[:400]:
        c.add("quantity", q)


def cpuset_seeds(c, shared):
    texts = {"", "0", "0-3", "1-5,8", "0,2-12,14-23", "3-0", "0-65535", "65536", "1,", "a",
             "0-1,1-2", "5,4,3,2,1"}
    path = os.path.join(shared, "vectors", "checkpoint_vectors.json")
    if os.path.exists(path):
        v = json.load(open(path))["cpuset_string_vectors"]
        for a, b in v.get("parse_ok", []):
            texts.add(a)
            texts.add(b)
        texts.update(v.get("parse_error", []))
    ordered = sorted(texts)
    for t in ordered:
        c.add("cpuset", t)
    for a, b in zip(ordered, reversed(ordered)):
        c.add("cpuset", a + "\n" + b)


def pod_seeds(c, source, shared):
    paths = (files(os.path.join(source, "src", "explain", "testdata"), r".*\.yaml")
             + files(os.path.join(source, "docs", "examples"), r"pod.*\.yaml")
             + files(os.path.join(source, "tests", "e2e", "pods"), r".*\.yaml")
             + files(os.path.join(shared, "seed"), r"pod.*\.yaml"))
    for p in paths:
        text = read(p).decode(errors="replace")
        c.add("pod_manifest", text, os.path.basename(p))
        for i, d in enumerate(documents(text)):
            if "kind: Pod" in d:
                c.add("pod_manifest", d, f"{os.path.basename(p)}-{i}")
    # JSON manifests (as `kubectl get -o json` writes them), and a List.
    guaranteed = {"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "json-pod", "namespace": "ns", "labels": {"a": "b"}},
                  "spec": {"resources": {"requests": {"cpu": "4", "memory": "4Gi"},
                                         "limits": {"cpu": "4", "memory": "4Gi"}},
                           "initContainers": [{"name": "sidecar", "image": "pause",
                                               "restartPolicy": "Always"}],
                           "containers": [{"name": "app", "image": "pause",
                                           "command": ["sleep"], "args": ["1"],
                                           "resources": {"limits": {"cpu": "2",
                                                                    "memory": "2Gi",
                                                                    "hugepages-2Mi": "4Mi"}}}]}}
    c.add("pod_manifest", json.dumps(guaranteed, indent=2), "pod.json")
    c.add("pod_manifest", json.dumps({"apiVersion": "v1", "kind": "List",
                                      "items": [guaranteed]}), "list.json")


def kubelet_config_seeds(c, source, shared):
    paths = (files(os.path.join(source, "docs", "examples"), r"kubelet.*\.yaml")
             + files(os.path.join(shared, "seed"), r"kubelet.*\.yaml")
             + files(os.path.join(source, "src", "explain", "testdata"), r".*\.yaml"))
    for p in paths:
        for i, d in enumerate(documents(read(p).decode(errors="replace"))):
            if "KubeletConfiguration" in d:
                c.add("kubelet_config", d, f"{os.path.basename(p)}-{i}")


def checkpoint_seeds(c, source, shared):
    for d in sorted(os.listdir(os.path.join(source, "src", "state", "testdata"))):
        folder = os.path.join(source, "src", "state", "testdata", d)
        for target, name in (("cpu_checkpoint", "cpu_manager_state"),
                             ("memory_checkpoint", "memory_manager_state")):
            p = os.path.join(folder, name)
            if os.path.isfile(p):
                for flag in (0, 1):
                    c.add(target, bytes([flag]) + read(p), f"{d}-{flag}")
    path = os.path.join(shared, "vectors", "checkpoint_vectors.json")
    if not os.path.exists(path):
        return
    v = json.load(open(path))
    for i, e in enumerate(v.get("legacy_checksum_vectors", [])):
        if "file_json" in e:
            target = "memory_checkpoint" if "machineState" in e["file_json"] else "cpu_checkpoint"
            c.add(target, b"\x00" + e["file_json"].encode(), f"legacy-{i}")
            c.add(target, b"\x01" + e["file_json"].encode(), f"legacy-{i}-gate")
    for i, e in enumerate(v.get("v4_data_vectors", [])):
        data = json.loads(e["data"])
        f = dict(data)
        f.setdefault("entries", {})
        f["checksum"] = 0
        f["data"] = e["data"]
        f["dataChecksum"] = e["dataChecksum"]
        for flag in (0, 1):
            c.add("cpu_checkpoint", bytes([flag]) + json.dumps(f, separators=(",", ":")).encode(),
                  f"v4-{i}-{flag}")
    for i, e in enumerate(v.get("memorymanager_data_checksum_vectors", {}).get("cases", [])):
        data = json.loads(e["data"])
        f = {"policyName": data.get("policyName", ""), "machineState": data.get("machineState", {}),
             "entries": data.get("entries", {}), "checksum": 0, "data": e["data"],
             "dataChecksum": e["dataChecksum"]}
        for flag in (0, 1):
            c.add("memory_checkpoint",
                  bytes([flag]) + json.dumps(f, separators=(",", ":")).encode(), f"v3-{i}-{flag}")


def pod_record_seeds(c):
    def entry(name, uid, containers, pod_resources=None, hints=None, devices=None):
        p = {"name": name, "namespace": "default", "uid": uid, "labels": {"app": name}}
        if pod_resources:
            p["resources"] = pod_resources
        p["initContainers"] = [x for x in containers if x["kind"] in ("init", "sidecar")]
        p["containers"] = [x for x in containers if x["kind"] == "app"]
        p["ephemeralContainers"] = []
        p["source"] = name + ".yaml"
        return {"pod": p, "hints": hints or {}, "devices": devices or {}}

    def ctr(name, kind, cpu=None, mem=None):
        r = {"requests": {}, "limits": {}}
        if cpu:
            r["requests"]["cpu"] = r["limits"]["cpu"] = cpu
        if mem:
            r["requests"]["memory"] = r["limits"]["memory"] = mem
        return {"name": name, "kind": kind, "image": "pause", "resources": r}

    record = {"version": 1, "pods": [
        entry("pod-scope-mixed", "11111111-2222-3333-4444-555555555555",
              [ctr("metrics-sidecar", "sidecar"), ctr("logging-sidecar", "sidecar"),
               ctr("main-app", "app", "2", "2Gi")],
              {"requests": {"cpu": "4", "memory": "4Gi"}, "limits": {"cpu": "4", "memory": "4Gi"}},
              {"": {"affinity": [0], "preferred": True}}),
        entry("gpu", "66666666-7777-8888-9999-000000000000",
              [ctr("init", "init", "1"), ctr("app", "app", "500m", "1Gi")],
              hints={"app": {"affinity": None, "preferred": False}},
              devices={"app": {"example.com/gpu": ["gpu0", "gpu1"]}})]}
    c.add("pod_record", json.dumps(record, indent=1), "record")
    c.add("pod_record", json.dumps({"version": 1, "pods": []}), "empty")


def topology_seeds(c, source, shared):
    path = os.path.join(shared, "vectors", "cpu_topologies.json")
    if os.path.exists(path):
        for name, t in sorted(json.load(open(path))["topologies"].items()):
            cpus = [{"id": x["cpu"], "core": x["core"], "socket": x["socket"], "numa": x["numa"],
                     "uncore": x.get("uncore", x["socket"])} for x in t.get("cpus", [])]
            if not cpus:
                continue
            numa = sorted({x["numa"] for x in cpus})
            doc = {"cpus": cpus,
                   "numaNodes": [{"id": n, "memory": 16 << 30,
                                  "hugepages": {"hugepages-2Mi": 0, "hugepages-1Gi": 0},
                                  "distances": [10 if m == n else 21 for m in numa]}
                                 for n in numa],
                   "devices": [{"resource": "example.com/gpu", "id": "gpu0", "numa": numa[-1]}]}
            c.add("topology_json", json.dumps(doc, indent=1), name)
    xmls = (files(os.path.join(shared, "fixtures", "hwloc-linux"), r".*\.xml")
            + files(os.path.join(source, "src", "topology", "testdata", "xml"), r".*\.xml"))
    for p in xmls:
        c.add("hwloc_xml", read(p), os.path.basename(p))


def serialize_tree(entries):
    # The records cannot hold a NUL: a file is cut at its first one (some fixture files end in
    # one; written whole, they made the fuzz target read the rest of the tree shifted by one
    # field, paths as contents).
    out = bytearray()
    for path, data in entries:
        out += path.encode() + b"\0" + data.split(b"\0", 1)[0] + b"\0"
    return bytes(out)


SYSFS_WANTED = re.compile(r"devices/system/(cpu|node)/")

# What sysfs discovery (src/topology/sysfs_discovery.cc) reads, and the entries whose names it
# lists; a seed keeps only these, so that the fuzzer's inputs are small. Files read:
_N = r"\d+"
SYSFS_READ = re.compile(
    r"devices/system/(?:cpu/online"
    rf"|cpu/cpu{_N}/topology/(?:physical_package_id|core_id)"
    rf"|cpu/cpu{_N}/cache/index[^/]*/(?:id|size|level|type|shared_cpu_map)"
    rf"|node/node{_N}/(?:cpulist|meminfo|distance)"
    rf"|node/node{_N}/hugepages/[^/]+/nr_hugepages)")
# Entries that a directory listing of discovery sees by name (cpu<N> in cpu/, index* in a
# cache/, node<N> in node/, cpu<N> links in a node<N>/, every hugepages/ entry), and those
# directories themselves (a missing one is an error or a warning): kept, as empty directories
# when nothing kept is under them.
SYSFS_LISTED = re.compile(
    r"devices/system/(?:cpu|node"
    rf"|cpu/cpu{_N}|cpu/cpu{_N}/cache|cpu/cpu{_N}/cache/index[^/]*"
    rf"|node/node{_N}|node/node{_N}/cpu{_N}|node/node{_N}/hugepages|node/node{_N}/hugepages/[^/]+)")


def sysfs_discovery_entries(entries):
    """The entries (path, data; "path/" = directory) discovery can tell apart from the whole
    tree: the files it reads, the names it lists; a read path that is a directory stays one."""
    files = {p: d for p, d in entries if not p.endswith("/")}
    dirs = {p.rstrip("/") for p, d in entries if p.endswith("/")}
    for p in files:
        parts = p.split("/")
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
    kept = {p: d for p, d in files.items()
            if SYSFS_READ.fullmatch(p) or SYSFS_LISTED.fullmatch(p)}
    under = set()
    for p in kept:
        parts = p.split("/")
        under.update("/".join(parts[:i]) for i in range(1, len(parts)))
    out = sorted(kept.items())
    for d in sorted(dirs):
        if (SYSFS_READ.fullmatch(d) or SYSFS_LISTED.fullmatch(d)) and d not in under:
            out.append((d + "/", b""))
    return sorted(out)


def sysfs_seeds(c, source, shared):
    root = os.path.join(source, "src", "topology", "testdata", "sysfs")
    for tree in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        entries = []
        base = os.path.join(root, tree)
        for dirpath, dirnames, filenames in os.walk(base):
            rel = os.path.relpath(dirpath, base)
            if not filenames and not dirnames:
                entries.append((rel + "/", b""))
            for n in sorted(filenames):
                entries.append((os.path.join(rel, n), read(os.path.join(dirpath, n))))
        c.add("sysfs", serialize_tree(sysfs_discovery_entries(entries)), tree)
    # The hwloc fixtures are tarballs of a machine's /sys (and /proc): keep the parts cadvisor
    # reads, capped in size so that the fuzzer's inputs stay small. The 24 smallest archives
    # only: decompressing all of them would cost the build most of a minute.
    tarballs = files(os.path.join(shared, "fixtures", "hwloc-linux"), r".*\.tar\.bz2")
    for p in sorted(sorted(tarballs, key=os.path.getsize)[:24]):
        entries = []
        try:
            with tarfile.open(p, "r:bz2") as tar:
                for m in tar.getmembers():
                    name = m.name
                    at = name.find("sys/devices/system/")
                    if at < 0 or not SYSFS_WANTED.search(name):
                        continue
                    rel = name[at + len("sys/"):]
                    if m.isfile() and m.size <= 4096:
                        entries.append((rel, tar.extractfile(m).read()))
                    elif m.isdir():
                        entries.append((rel.rstrip("/") + "/", b""))
        except (tarfile.TarError, OSError, EOFError):
            continue
        data = serialize_tree(sysfs_discovery_entries(entries))
        if entries and len(data) <= 256 * 1024:
            c.add("sysfs", data, os.path.basename(p).replace(".tar.bz2", ""))


def merge_seeds(c, shared):
    path = os.path.join(shared, "vectors", "topology_merge_cases.json")
    if not os.path.exists(path):
        return
    for case in json.load(open(path))["cases"]:
        if case.get("kind") != "merge":
            continue
        req = {"policy": case["policy"], "numaNodes": case["numa_nodes"],
               "options": {k: str(v).lower() if isinstance(v, bool) else str(v)
                           for k, v in case.get("policy_options", {}).items()},
               "providers": case["providers"]}
        if "numa_distances" in case:
            d = case["numa_distances"]
            req["distances"] = [[d[str(n)][m] if m < len(d[str(n)]) else 0
                                 for m in case["numa_nodes"]] for n in case["numa_nodes"]]
        c.add("merge_hints", json.dumps(req), case["id"])


def extender_seeds(c):
    """Bodies for podtopo extender's verbs: byte 0 picks Filter/Prioritize/Bind/NRT."""
    def ctr(name, cpu, mem):
        r = {"cpu": cpu, "memory": mem}
        return {"name": name, "resources": {"requests": r, "limits": r}}
    pod = {"metadata": {"name": "p", "uid": "u1"},
           "spec": {"containers": [ctr("a", "2", "1Gi"), ctr("b", "12", "2Gi")]}}
    pod_level = {"metadata": {"name": "pl", "uid": "u2"},
                 "spec": {"resources": {"limits": {"cpu": "4", "memory": "2Gi"}},
                          "containers": [{"name": "a"}, {"name": "b"}]}}
    bodies = [
        {"pod": pod, "nodenames": ["node-a", "node-b", "ghost"]},
        {"Pod": pod_level, "NodeNames": ["node-a"]},
        {"pod": pod, "nodes": {"items": [{"metadata": {"name": "node-a"}},
                                         {"metadata": {"name": "x"}}]}},
        {"pod": {"kind": "Deployment"}, "nodenames": []},
        {"pod": pod},
    ]
    for i, b in enumerate(bodies):
        for verb in (0, 1):
            c.add("extender_request", bytes([verb]) + json.dumps(b).encode(), f"req-{verb}-{i}")
    c.add("extender_request", bytes([2]) + json.dumps(
        {"PodName": "p", "PodNamespace": "default", "PodUID": "u1", "Node": "node-a"}).encode(),
        "bind")
    nrt = {"metadata": {"name": "n"},
           "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"},
                          {"name": "topologyManagerScope", "value": "pod"}],
           "zones": [{"name": f"node-{n}", "type": "Node",
                      "costs": [{"name": "node-0", "value": 10}, {"name": "node-1", "value": 20}],
                      "resources": [{"name": "cpu", "capacity": "8", "allocatable": "7",
                                     "available": "5"},
                                    {"name": "memory", "capacity": "8Gi", "allocatable": "7Gi",
                                     "available": "6Gi"},
                                    {"name": "example.com/gpu", "capacity": "2",
                                     "allocatable": "2", "available": "1"}],
                      "attributes": [{"name": "podtopo.io/free-cpus", "value": "3-7"}]}
                     for n in (0, 1)]}
    c.add("extender_request", bytes([3]) + json.dumps(nrt).encode(), "nrt-foreign")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--shared", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if os.path.isdir(a.out):
        shutil.rmtree(a.out)
    c = Corpus(a.out)
    quantity_seeds(c, a.shared)
    cpuset_seeds(c, a.shared)
    pod_seeds(c, a.source, a.shared)
    kubelet_config_seeds(c, a.source, a.shared)
    checkpoint_seeds(c, a.source, a.shared)
    pod_record_seeds(c)
    topology_seeds(c, a.source, a.shared)
    sysfs_seeds(c, a.source, a.shared)
    merge_seeds(c, a.shared)
    podresources_seeds(c)
    cri_seeds(c)
    extender_seeds(c)
    with open(os.path.join(a.out, "stamp"), "w") as f:
        f.write(json.dumps(c.counts, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
