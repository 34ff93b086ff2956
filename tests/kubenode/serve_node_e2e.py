#!/usr/bin/python3
"""`podtopo serve --kubeconfig --node-name`: simulated nodes on a real control plane (issue 25
item 3).

  serve_node_e2e.py REPO PODTOPO CONTROL_PLANE_SH

Starts etcd + kube-apiserver 1.20.2 + kube-scheduler (../shared/runtime/kubernetes-1.20), installs
deploy/'s NodeResourceTopology CRD and runs two simulated nodes (tests/kubenode/simnodes.py):
  sim-a  preset:demo (4 NUMA nodes x 16 CPUs), docs/examples/kubelet-config.yaml
         (single-numa-node, pod scope), with a state dir
  sim-b  preset:dual-socket-multi-numa-per-socket-ht (4 NUMA nodes x 20 CPUs), best-effort,
         container scope
Pods are created without a node; the real scheduler binds them (a nodeSelector on
kubernetes.io/hostname picks the node). It checks:
  1. each Node's capacity and allocatable against the topology (`podtopo topology -o json`) and
     the configuration's reservation; Ready; its Lease; its NodeResourceTopology;
  2. an admitted pod becomes Running (containerStatuses running, hostIP, startTime) and the
     NRT's available CPUs drop by its CPUs;
  3. a pod wider than a NUMA node becomes Failed on sim-a with TopologyAffinityError and the
     message `podtopo admit` gives for the same pods on the same node; the same shape is
     admitted on sim-b (best-effort);
  4. deleting a pod (grace 30 s) releases its CPUs and the node deletes it at once (grace 0);
  5. sim-a restarted with its state dir: a second serve on the same state dir is refused while
     it runs, and so is a serve of sim-a without that dir (sim-a's live Lease names its process);
     SIGTERM releases the Lease; after SIGTERM (exit 0) and a restart, its Running pod keeps its CPUs (the NRT's
     free CPU ids unchanged), and a pod deleted while it was down is released and deleted;
  6. bad flag combinations get clear errors (exit 1);
  7. the API server stopped and restarted on its port: the nodes keep running, catch up, and
     admit a pod created afterwards (its NRT updated).
Exit 0 on success, 77 (skip) when etcd, kubectl or the control plane's binaries are missing,
1 with the reason otherwise.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simnodes  # noqa: E402
from simnodes import ControlPlane, NodeSpec, Timeout, wait  # noqa: E402


def fail(why):
    sys.exit(f"serve_node_e2e: {why}")


CONFIG_B = """apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
topologyManagerPolicy: best-effort
topologyManagerScope: container
systemReserved:
  cpu: "1"
  memory: 1Gi
evictionHard:
  memory.available: 100Mi
"""

UNITS = {"": 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
         "k": 10**3, "M": 10**6, "G": 10**9}


def quantity(text):
    m = re.fullmatch(r"(\d+)([KMGT]i|[kMG])?", text)
    if not m:
        fail(f"unexpected quantity {text!r}")
    return int(m.group(1)) * UNITS[m.group(2) or ""]


def pod(name, node, cpu, memory="1Gi"):
    r = {"cpu": str(cpu), "memory": memory}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                     "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": r, "limits": r}}]}}


def zones(nrt):
    return {z["name"]: z for z in nrt["zones"]}


def res(z, name):
    return next(r for r in z["resources"] if r["name"] == name)


def attr(items, name):
    return next((a["value"] for a in items or [] if a["name"] == name), None)


def cpus_available(nrt):
    return sum(int(res(z, "cpu")["available"]) for z in nrt["zones"])


def free_cpus(nrt):
    return {z["name"]: attr(z.get("attributes"), "podtopo.io/free-cpus") for z in nrt["zones"]}


def cpuset(text):
    out = set()
    if text in (None, "none"):  # podtopo's empty set (1.20's server-side apply refuses "")
        return out
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def count(text):
    return len(cpuset(text))


def main():
    repo, podtopo, script = sys.argv[1:4]
    simnodes.skip_unless_available(script)
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="podtopo-kubenode-")
    cp = ControlPlane(script, os.path.join(tmp, "cp"))
    nodes = []
    try:
        print(cp.start())
        cp.install_crd(repo)
        config_a = os.path.join(repo, "docs/examples/kubelet-config.yaml")
        config_b = os.path.join(tmp, "best-effort.yaml")
        with open(config_b, "w") as f:
            f.write(CONFIG_B)
        spec_a = NodeSpec("sim-a", "preset:demo", config=config_a,
                          state_dir=os.path.join(tmp, "state-a"), extra=["--heartbeat", "2"])
        spec_b = NodeSpec("sim-b", "preset:dual-socket-multi-numa-per-socket-ht", config=config_b,
                          extra=["--heartbeat", "2"])
        started = time.time()
        nodes = simnodes.start_nodes(podtopo, cp.kubeconfig, [spec_a, spec_b], tmp, cp)
        print(f"two simulated nodes Ready with their NRT in {time.time() - started:.1f} s")
        a, b = nodes

        # 1. The Nodes as the kubelet reports them.
        for spec, system_cpu in ((spec_a, 1), (spec_b, 1)):
            topo = json.loads(subprocess.run([podtopo, "topology", "--node", spec.node, "-o", "json"],
                                             capture_output=True, text=True, check=True).stdout)
            n = cp.get_json("node", spec.name)
            cap, alloc = n["status"]["capacity"], n["status"]["allocatable"]
            memory = sum(z["memory"] for z in topo["numaNodes"])
            want_cap = {"cpu": str(len(topo["cpus"])), "pods": "110"}
            if {k: cap.get(k) for k in want_cap} != want_cap or quantity(cap["memory"]) != memory:
                fail(f"{spec.name}: capacity {cap}, expected {want_cap} and memory {memory}")
            # systemReserved cpu 1, memory 1Gi; evictionHard memory.available 100Mi.
            if alloc["cpu"] != str(len(topo["cpus"]) - system_cpu) or alloc["pods"] != "110" or \
                    quantity(alloc["memory"]) != memory - (1 << 30) - 100 * (1 << 20):
                fail(f"{spec.name}: allocatable {alloc}")
            lease = cp.get_json("lease", "-n", "kube-node-lease", spec.name)
            if not lease or lease["spec"].get("holderIdentity") != spec.name:
                fail(f"{spec.name}: no Lease in kube-node-lease: {lease}")
            print(f"1. {spec.name}: Ready, capacity cpu {cap['cpu']} memory {cap['memory']}, "
                  f"allocatable cpu {alloc['cpu']} memory {alloc['memory']}; Lease renewed "
                  f"{lease['spec']['renewTime']}")
        renew = cp.get_json("lease", "-n", "kube-node-lease", "sim-a")["spec"]["renewTime"]
        wait("the Lease of sim-a to be renewed", lambda: cp.get_json(
            "lease", "-n", "kube-node-lease", "sim-a")["spec"]["renewTime"] != renew, seconds=15)
        base_a = cpus_available(cp.nrt("sim-a"))
        base_b = cpus_available(cp.nrt("sim-b"))
        if base_a != 63 or base_b != 79:
            fail(f"NRT available CPUs {base_a} (sim-a), {base_b} (sim-b); expected 63 and 79")

        def create(p):
            cp.kubectl("create", "-f", "-", stdin=json.dumps(p))

        def phase(name):
            o = cp.get_json("pod", name)
            return o["status"].get("phase") if o else None

        def pod_on(name, want_phase, seconds=30):
            return wait(f"pod {name} {want_phase}", lambda: (lambda o: o if o and o["status"].get(
                "phase") == want_phase else None)(cp.get_json("pod", name)), seconds=seconds)

        # 2. Admitted: Running, and the NRT follows.
        fit = pod("fit-a", "sim-a", 4)
        create(fit)
        o = pod_on("fit-a", "Running")
        st = o["status"]
        cs = st.get("containerStatuses", [])
        if o["spec"].get("nodeName") != "sim-a" or not cs or "running" not in cs[0]["state"] or \
                not cs[0]["ready"] or st.get("hostIP") != "127.0.0.1" or not st.get("startTime"):
            fail(f"fit-a: status {st}")
        wait("sim-a's NRT to take fit-a's 4 CPUs", lambda: cpus_available(cp.nrt("sim-a")) == base_a - 4)
        print(f"2. fit-a (4 CPUs) bound by the scheduler to sim-a: Running; NRT available "
              f"{base_a} -> {base_a - 4}")

        # 3. Wider than a NUMA node: rejected under single-numa-node, admitted under best-effort.
        wide = pod("wide-a", "sim-a", 24)
        create(wide)
        o = pod_on("wide-a", "Failed")
        pods_file = os.path.join(tmp, "a-pods.json")
        with open(pods_file, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": [fit, wide]}, f)
        admit = subprocess.run([podtopo, "admit", pods_file, "--node", "preset:demo", "--config",
                                config_a, "-o", "json"], capture_output=True, text=True)
        want = json.loads(admit.stdout)["pods"][1]
        if want["admitted"] or o["status"].get("reason") != want["reason"] or \
                o["status"].get("message") != want["message"]:
            fail(f"wide-a: status {o['status']}, `podtopo admit` says {want}")
        if o["status"]["reason"] != "TopologyAffinityError":
            fail(f"wide-a: reason {o['status']['reason']}")
        events = wait("the kubelet's Warning event for wide-a", lambda: [
            e for e in cp.get_json("events", "--field-selector", "involvedObject.name=wide-a")["items"]
            if e["reason"] == "TopologyAffinityError" and e["type"] == "Warning"])
        if "Pod was rejected: " + events[0]["message"] != o["status"]["message"] or \
                events[0]["source"].get("host") != "sim-a":
            fail(f"wide-a's event {events[0]}")
        time.sleep(1)
        if cpus_available(cp.nrt("sim-a")) != base_a - 4:
            fail("the rejected pod changed sim-a's NRT")
        print(f"3. wide-a (24 CPUs) on sim-a: Failed, {o['status']['reason']}: "
              f"{o['status']['message']}")
        create(pod("wide-b", "sim-b", 24))
        pod_on("wide-b", "Running")
        wait("sim-b's NRT to take 24 CPUs", lambda: cpus_available(cp.nrt("sim-b")) == base_b - 24)
        print(f"   wide-b (24 CPUs) on sim-b (best-effort): Running; NRT available {base_b} -> "
              f"{base_b - 24}")
        for name in ("sim-a", "sim-b"):
            for zname, z in zones(cp.nrt(name)).items():
                if count(attr(z.get("attributes"), "podtopo.io/free-cpus")) != int(res(z, "cpu")["available"]):
                    fail(f"{name} {zname}: free-cpus does not list the available CPUs: {z}")

        # 4. Deleting a pod (grace 30 s) releases its CPUs; the node deletes it with grace 0.
        started = time.time()
        cp.kubectl("delete", "pod", "fit-a", "--wait=false")
        wait("fit-a to be gone", lambda: cp.get_json("pod", "fit-a") is None, seconds=20)
        gone = time.time() - started
        wait("sim-a's NRT to free fit-a's CPUs", lambda: cpus_available(cp.nrt("sim-a")) == base_a)
        print(f"4. fit-a deleted (grace 30 s): gone after {gone:.1f} s, its 4 CPUs free again")

        # 5. Restart with the state dir.
        create(pod("keep-a", "sim-a", 2))
        create(pod("gone-a", "sim-a", 3))
        pod_on("keep-a", "Running")
        pod_on("gone-a", "Running")
        wait("sim-a's NRT with keep-a and gone-a", lambda: cpus_available(cp.nrt("sim-a")) == base_a - 5)
        before = free_cpus(cp.nrt("sim-a"))
        start_time = cp.get_json("pod", "keep-a")["status"]["startTime"]
        second = subprocess.run(simnodes.serve_args(podtopo, cp.kubeconfig, spec_a),
                                capture_output=True, text=True, timeout=30)
        if second.returncode != 1 or "in use" not in second.stderr:
            fail(f"a second serve on sim-a's state dir: exit {second.returncode}: {second.stderr}")
        # Another serve of the same node without that state dir: refused by sim-a's live Lease,
        # naming sim-a's process, before it touches the Node.
        twin = simnodes.NodeSpec("sim-a", spec_a.node, spec_a.config)
        third = subprocess.run(simnodes.serve_args(podtopo, cp.kubeconfig, twin),
                               capture_output=True, text=True, timeout=30)
        if third.returncode != 1 or "is played by another podtopo serve" not in third.stderr or \
                f":{a.proc.pid}:" not in third.stderr:
            fail(f"a second serve of sim-a without its state dir: exit {third.returncode}: "
                 f"{third.stderr}")
        print(f"   a second serve of sim-a without the state dir: {third.stderr.strip()}")
        rc = simnodes.stop_node(a)
        if rc != 0 or "stopped" not in a.log_text():
            fail(f"sim-a: SIGTERM -> exit {rc}:\n{a.log_text()}")
        lease = cp.get_json("lease", "-n", "kube-node-lease", "sim-a")
        if lease["metadata"].get("annotations", {}).get("podtopo.io/serve-instance") != "released":
            fail(f"sim-a stopped: its Lease is not released: {lease['metadata']}")
        cp.kubectl("delete", "pod", "gone-a", "--wait=false")
        a = simnodes.start_nodes(podtopo, cp.kubeconfig, [spec_a], tmp, cp)[0]
        nodes[0] = a
        wait("gone-a to be deleted by the restarted node", lambda: cp.get_json("pod", "gone-a") is None)
        wait("sim-a's NRT with keep-a only", lambda: cpus_available(cp.nrt("sim-a")) == base_a - 2)
        o = cp.get_json("pod", "keep-a")
        if o["status"]["phase"] != "Running" or o["status"]["startTime"] != start_time:
            fail(f"keep-a after the restart: {o['status']}")
        after = free_cpus(cp.nrt("sim-a"))
        # keep-a's CPUs stay taken: every CPU free before is free now, and the only CPUs freed
        # are gone-a's 3.
        was = set().union(*(cpuset(v) for v in before.values()))
        now = set().union(*(cpuset(v) for v in after.values()))
        if not was <= now or len(now - was) != 3:
            fail(f"free CPUs after the restart {after}, before {before}")
        if "adopted Node sim-a" not in a.log_text():
            fail(f"the restarted sim-a did not adopt its Node:\n{a.log_text()}")
        create(pod("new-a", "sim-a", 2))
        pod_on("new-a", "Running")
        wait("sim-a's NRT with keep-a and new-a", lambda: cpus_available(cp.nrt("sim-a")) == base_a - 4)
        print(f"5. sim-a restarted with its state dir: keep-a Running since {start_time} with its "
              f"CPUs (free {after}); gone-a released and deleted; a second serve on the dir, and "
              "one of the node without it, refused; the Lease released at SIGTERM")

        # 6. Bad flag combinations.
        for args, words in (
                (["--kubeconfig", cp.kubeconfig], "--node-name"),
                (["--node-name", "x", "--socket", os.path.join(tmp, "s.sock"), "--pods-dir", tmp],
                 "needs --kubeconfig"),
                (["--kubeconfig", cp.kubeconfig, "--node-name", "x", "--socket", "s.sock"],
                 "--socket: not used with --kubeconfig"),
                (["--kubeconfig", os.path.join(tmp, "nope"), "--node-name", "x"], "--kubeconfig:"),
                ([], "--socket is required")):
            r = subprocess.run([podtopo, "serve", *args], capture_output=True, text=True, timeout=30)
            if r.returncode != 1 or words not in r.stderr:
                fail(f"serve {' '.join(args)}: exit {r.returncode}, stderr {r.stderr!r} "
                     f"(expected exit 1 and {words!r})")
        print("6. bad flag combinations: exit 1 with the flag named")

        # 7. The API server goes away and comes back on the same port: the nodes keep running,
        # re-list, and admit what is bound to them afterwards.
        pid = int(open(os.path.join(cp.dir, "apiserver.pid")).read())
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = [x.decode() for x in f.read().split(b"\0") if x]

        def exited():
            return not os.path.exists(f"/proc/{pid}") or \
                open(f"/proc/{pid}/stat").read().split()[2] == "Z"
        os.kill(pid, signal.SIGTERM)
        try:
            wait("the API server to exit", exited, seconds=10)
        except Timeout:
            os.kill(pid, signal.SIGKILL)
            wait("the API server to exit", exited)
        time.sleep(3)  # a heartbeat fails meanwhile
        for n in nodes:
            if n.proc.poll() is not None:
                fail(f"{n.name} exited while the API server was down:\n{n.log_text()}")
        api = subprocess.Popen(argv, stdout=open(os.path.join(cp.dir, "apiserver.log"), "a"),
                               stderr=subprocess.STDOUT, start_new_session=True)
        with open(os.path.join(cp.dir, "apiserver.pid"), "w") as f:
            f.write(str(api.pid))
        wait("the API server to answer", lambda: cp.kubectl(
            "get", "--raw", "/readyz", check=False).returncode == 0, seconds=90)
        create(pod("after-b", "sim-b", 2))
        pod_on("after-b", "Running", seconds=60)
        wait("sim-b's NRT to take after-b's 2 CPUs",
             lambda: cpus_available(cp.nrt("sim-b")) == base_b - 26, seconds=60)
        print("7. API server restarted: both nodes kept running; after-b admitted on sim-b, NRT "
              "updated")

        for name, rc in simnodes.stop_nodes(nodes).items():
            if rc != 0:
                fail(f"{name}: SIGTERM -> exit {rc}")
        print(f"ok ({time.time() - t0:.1f} s)")
    except (Timeout, RuntimeError) as e:
        for n in nodes:
            print(f"--- {n.name} log:\n{n.log_text()[-3000:]}")
        fail(str(e))
    finally:
        simnodes.stop_nodes(nodes)
        cp.stop()
        if os.environ.get("KEEP_TMP"):
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
