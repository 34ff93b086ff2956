"""Checks the protojson answers `buf curl` wrote (buf_client.sh): list.json, get.json,
alloc.json, missing.err. Protojson writes int64/uint64 as strings and field names in
lowerCamelCase; NUMANode.ID stays "ID"."""
import json
import os
import sys

GI = 1 << 30
d = sys.argv[1]


def load(name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def fail(msg):
    print(f"buf curl client: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


ids = lambda xs: [int(x) for x in xs]
alloc = load("alloc.json")
alloc_cpus = set(ids(alloc.get("cpuIds", [])))
check(alloc_cpus, "GetAllocatableResources reports no CPUs")
check(alloc.get("memory"), "GetAllocatableResources reports no memory")

pods = [p for p in load("list.json").get("podResources", [])
        if p.get("namespace") == "default" and p.get("name") == "pod-scope-mixed"]
check(len(pods) == 1, f"List reports pod-scope-mixed {len(pods)} times")
got = load("get.json").get("podResources")
check(got == pods[0], f"Get differs from List: {got} vs {pods[0]}")

for where, p in (("List", pods[0]), ("Get", got)):
    bubble = ids(p.get("cpuIds", []))
    check(len(bubble) == 4 and len(set(bubble)) == 4, f"{where}: pod cpuIds {bubble} is not a 4-CPU bubble")
    check(set(bubble) <= alloc_cpus, f"{where}: pod CPUs {bubble} not allocatable")
    mem = sum(int(m.get("size", 0)) for m in p.get("memory", []) if m.get("memoryType") == "memory")
    check(mem == 4 * GI, f"{where}: pod memory {mem} != 4Gi")
    cs = p.get("containers", [])
    names = [c.get("name") for c in cs]
    check(names == ["metrics-sidecar", "logging-sidecar", "main-app"], f"{where}: containers {names}")
    app = ids(cs[2].get("cpuIds", []))
    check(len(app) == 2 and len(set(app)) == 2, f"{where}: main-app cpuIds {app}")
    check(set(app) <= set(bubble), f"{where}: main-app CPUs {app} outside the bubble")
    for side in cs[:2]:
        check(not side.get("cpuIds"), f"{where}: {side['name']} reports cpuIds {side.get('cpuIds')}")
        check(not side.get("memory"), f"{where}: {side['name']} reports memory")
    check(len(set(bubble) - set(app)) == 2, f"{where}: derived pod shared pool is not 2 CPUs")

with open(os.path.join(d, "missing.err")) as f:
    err = f.read()
check("not found" in err, f"Get of an unknown pod: {err!r}")
