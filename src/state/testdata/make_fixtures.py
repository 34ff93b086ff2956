#!/usr/bin/env python3
"""Regenerates the checkpoint fixtures of src/state/testdata (committed; run by hand).

usage: make_fixtures.py PODTOPO_BINARY

The healthy baseline is what podtopo's own checkpoint writers produce (`podtopo admit
--state-dir` on preset:demo with the seed configuration: the docs' two example pods). Every
other fixture is the baseline with one real-world failure applied; files that are edited get
their checksums recomputed exactly as the kubelet computes them (FNV-1a-32 over "(string)"+data
for CPU V4 / memory V3; the go-spew dump for the legacy V1/V2 files), so that each fixture
fails for its documented reason only. See README.md for the list.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PODS = [os.path.join(REPO, "docs/examples/pod-level-resource-demo.yaml"),
        os.path.join(REPO, "docs/examples/pod-scope-mixed.yaml")]
SEED_UID = "b385c6d1-89e3-5d0a-a83c-5d5745f7b44b"
MIXED_UID = "d906daa8-1e76-5313-adcb-57a3c323ff6b"


def fnv1a32(data: bytes) -> int:
    h = 2166136261
    for b in data:
        h ^= b
        h = (h * 16777619) & 0xFFFFFFFF
    return h


def data_checksum(data: str) -> int:
    return fnv1a32(("(string)" + data).encode())


def compact(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)  # json.Marshal bytes: no trailing newline


def cpu_v4(policy, default, entries, pod_entries):
    data = {"policyName": policy, "defaultCpuSet": default}
    if entries:
        data["entries"] = {k: dict(sorted(v.items())) for k, v in sorted(entries.items())}
    if pod_entries:
        data["podEntries"] = {k: {"cpuSet": v} for k, v in sorted(pod_entries.items())}
    d = compact(data)
    out = {"policyName": policy, "defaultCpuSet": default}
    if entries:
        out["entries"] = data["entries"]
    out["checksum"] = 0
    out["data"] = d
    out["dataChecksum"] = data_checksum(d)
    return compact(out)


def memory_v3(data):
    """data: {policyName, machineState, entries?, podEntries?} in struct order."""
    d = compact(data)
    out = {"policyName": data["policyName"], "machineState": data["machineState"]}
    if data.get("entries"):
        out["entries"] = data["entries"]
    out["checksum"] = 0  # inline V1 checksum: 0 is accepted by V1 readers, ignored by 1.37
    out["data"] = d
    out["dataChecksum"] = data_checksum(d)
    return compact(out)


def load_data(path):
    with open(path) as f:
        top = json.load(f)
    return json.loads(top["data"])


def main():
    podtopo = sys.argv[1]
    tmp = tempfile.mkdtemp()
    base = os.path.join(tmp, "base")
    os.mkdir(base)
    subprocess.run([podtopo, "admit", *PODS, "--state-dir", base], check=True,
                   stdout=subprocess.DEVNULL)
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    subprocess.run([podtopo, "admit", PODS[0], "--state-dir", empty], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([podtopo, "remove", "default/pod-level-resource-demo", "--state-dir", empty],
                   check=True, stdout=subprocess.DEVNULL)
    node = json.loads(subprocess.run([podtopo, "topology", "--node", "preset:demo", "-o", "json"],
                                     check=True, capture_output=True, text=True).stdout)

    def fixture(name):
        d = os.path.join(HERE, name)
        shutil.rmtree(d, ignore_errors=True)
        os.mkdir(d)
        return d

    def copy_base(d, files=("cpu_manager_state", "memory_manager_state")):
        for f in files:
            shutil.copy(os.path.join(base, f), os.path.join(d, f))

    # healthy: two pod-level pods admitted on preset:demo.
    copy_base(fixture("healthy"))

    # bottlerocket#1465: the node ran with the none policies; static is configured now.
    d = fixture("policy-none-to-static")
    dump = ("(*state.CPUManagerCheckpoint){PolicyName:(string)none DefaultCPUSet:(string) "
            "Entries:(map[string]map[string]string)map[] Checksum:(checksum.Checksum)0}")
    write(os.path.join(d, "cpu_manager_state"),
          compact({"policyName": "none", "defaultCpuSet": "", "checksum": fnv1a32(dump.encode())}))
    dump = ("(*state.MemoryManagerCheckpoint){PolicyName:(string)None MachineState:"
            "(state.NUMANodeMap)map[] Entries:(state.ContainerMemoryAssignments)map[] "
            "Checksum:(checksum.Checksum)0}")
    write(os.path.join(d, "memory_manager_state"),
          compact({"policyName": "None", "machineState": {}, "checksum": fnv1a32(dump.encode())}))

    # k/k #110478: after a reboot SMT is off, CPUs 32-63 (the siblings) are gone.
    d = fixture("cpu-set-changed")
    copy_base(d)
    n = dict(node)
    n["cpus"] = [c for c in node["cpus"] if c["id"] < 32]
    write(os.path.join(d, "node.json"), json.dumps(n, indent=1) + "\n")

    # k/k #131253: after a reboot NUMA node 0 reports 3 MiB less memory.
    d = fixture("memory-capacity-drift")
    copy_base(d)
    n = json.loads(json.dumps(node))
    n["numaNodes"][0]["memory"] -= 3 * 1024 * 1024
    write(os.path.join(d, "node.json"), json.dumps(n, indent=1) + "\n")

    # Stale pods: only the first pod still runs.
    d = fixture("stale-pods")
    copy_base(d)
    write(os.path.join(d, "running-pods.txt"),
          "# kubectl get pods -A --field-selector spec.nodeName=$NODE -o "
          "jsonpath='{range .items[*]}{.metadata.uid}{\"\\n\"}{end}'\n" + SEED_UID + "\n")

    # A V1 CPU checkpoint (kubelet <= 1.17, entries keyed by container ID), not read by 1.37.
    d = fixture("v1-cpu-checkpoint")
    copy_base(d, ("memory_manager_state",))
    cpu = load_data(os.path.join(base, "cpu_manager_state"))
    ids = {}
    containers = []
    for uid, cs in sorted(cpu["entries"].items()):
        for name in sorted(cs):
            cid = format(fnv1a32(f"{uid}/{name}".encode()), "08x") * 8
            ids[cid] = cs[name]
            containers.append((cid, uid, name))
    entries = dict(sorted(ids.items()))
    dump = ("(*state.CPUManagerCheckpoint){PolicyName:(string)static DefaultCPUSet:(string)"
            + cpu["defaultCpuSet"] + " Entries:(map[string]string)map["
            + " ".join(f"{k}:{v}" for k, v in entries.items())
            + "] Checksum:(checksum.Checksum)0}")
    write(os.path.join(d, "cpu_manager_state"),
          compact({"policyName": "static", "defaultCpuSet": cpu["defaultCpuSet"],
                   "entries": entries, "checksum": fnv1a32(dump.encode())}))
    # crictl ps -a -o json: every container but the mixed pod's metrics-sidecar still exists.
    ps = {"containers": [
        {"id": cid, "podSandboxId": format(fnv1a32(uid.encode()), "08x") * 8,
         "metadata": {"name": name, "attempt": 0},
         "state": "CONTAINER_RUNNING",
         "labels": {"io.kubernetes.container.name": name,
                    "io.kubernetes.pod.name": "x", "io.kubernetes.pod.namespace": "default",
                    "io.kubernetes.pod.uid": uid}}
        for cid, uid, name in containers if name != "metrics-sidecar"]}
    write(os.path.join(d, "crictl-ps.json"), json.dumps(ps, indent=2) + "\n")

    # k/k #141993: a crash after the pod-level entry was written, before any container entry
    # and before the machine state was charged.
    d = fixture("incomplete-pod-entry")
    cpu_full = load_data(os.path.join(base, "cpu_manager_state"))
    mem_full = load_data(os.path.join(base, "memory_manager_state"))
    mem_empty = load_data(os.path.join(empty, "memory_manager_state"))
    bubble = cpu_full["podEntries"][SEED_UID]["cpuSet"]
    all_cpus = set(range(64))
    taken = {1, 33}  # the seed pod's bubble on preset:demo
    assert bubble == "1,33", bubble
    default = sorted(all_cpus - taken)
    write(os.path.join(d, "cpu_manager_state"),
          cpu_v4("static", "0,2-32,34-63", {}, {SEED_UID: bubble}))
    write(os.path.join(d, "memory_manager_state"), memory_v3({
        "policyName": "Static", "machineState": mem_empty["machineState"],
        "podEntries": {SEED_UID: mem_full["podEntries"][SEED_UID]}}))
    del default

    # k/k #141993, removal side: the container entries are gone but the machine state still
    # holds the pod's memory.
    d = fixture("incomplete-pod-entry-charged")
    shutil.copy(os.path.join(empty, "cpu_manager_state"), os.path.join(d, "cpu_manager_state"))
    seed_only = os.path.join(tmp, "seed")
    os.mkdir(seed_only)
    subprocess.run([podtopo, "admit", PODS[0], "--state-dir", seed_only], check=True,
                   stdout=subprocess.DEVNULL)
    mem_seed = load_data(os.path.join(seed_only, "memory_manager_state"))
    write(os.path.join(d, "memory_manager_state"), memory_v3({
        "policyName": "Static", "machineState": mem_seed["machineState"],
        "podEntries": {SEED_UID: mem_seed["podEntries"][SEED_UID]}}))

    # Bad input: a truncated CPU checkpoint (disk full / power loss while a non-atomic tool
    # wrote it).
    d = fixture("corrupt-json")
    copy_base(d, ("memory_manager_state",))
    with open(os.path.join(base, "cpu_manager_state")) as f:
        text = f.read()
    write(os.path.join(d, "cpu_manager_state"), text[: len(text) // 2])

    # Bad input: a hand-edited memory checkpoint with a wrong field type (V1 layout).
    d = fixture("wrong-field-type")
    copy_base(d, ("cpu_manager_state",))
    write(os.path.join(d, "memory_manager_state"),
          '{"policyName":"Static","machineState":{"0":{"numberOfAssignments":"2",'
          '"memoryMap":{},"cells":[0]}},"checksum":0}')

    # A hand-edited CPU checkpoint whose dataChecksum no longer matches.
    d = fixture("checksum-mismatch")
    copy_base(d, ("memory_manager_state",))
    top = json.load(open(os.path.join(base, "cpu_manager_state")))
    top["data"] = top["data"].replace("0,4-32,36-63", "0,4-32,36-62")
    write(os.path.join(d, "cpu_manager_state"), compact(top))

    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
