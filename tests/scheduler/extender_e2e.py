#!/usr/bin/python3
"""The real kube-scheduler 1.20.2 asks `podtopo extender` about every pod (issue 25 item 2).

  extender_e2e.py REPO PODTOPO CONTROL_PLANE_SH

Starts etcd + kube-apiserver + kube-scheduler (../shared/runtime/kubernetes-1.20) with the
scheduler configuration of deploy/podtopo-scheduler.yaml (its urlPrefix and kubeconfig pointed
at this test's extender and API server), installs deploy/'s NRT CRD, creates the nodes
(create_nodes: a Node object, and `podtopo serve` as its kubelet with `podtopo agent` publishing
its NodeResourceTopology), starts `podtopo extender --kubeconfig` as deploy/podtopo-extender.yaml's
service account (its RBAC is all it may do), and checks with pods of
schedulerName podtopo-scheduler, every node using docs/examples/kubelet-config.yaml
(single-numa-node, pod scope):
  1. a burst of 9 pods of 20 CPUs: preset:demo's NUMA nodes have 16 CPUs, preset:t256's 32, so
     the 8 that fit are bound to the t256 node, one per NUMA node, and the 9th gets
     FailedScheduling with the extender's TopologyAffinityError message. The NRTs never show
     the pods (nothing runs them): only the extender's reservations keep the burst apart;
  2. a pod of 40 CPUs (fits both nodes by total, no NUMA node anywhere): FailedScheduling with
     the extender's message naming both nodes;
  3. 5 pods of 14 CPUs, which only preset:demo's NUMA nodes still hold: 4 bound there, the 5th
     refused; then a burst of 10 pods of 4 CPUs: all bound;
  4. independently of the extender, `podtopo admit` replays each node's bound pods on that
     node's preset and configuration: every one is admitted (no pod bound to a node whose
     kubelet would reject it);
  5. the extender's /metrics agree: binds answered = pods bound + binds it refused;
  6. SIGTERM stops it with exit 0.
Exit 0 on success, 77 (skip) when etcd, kubectl or the control plane's binaries are missing,
1 with the reason otherwise.
"""
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import fail, free_port, get, metric, skip, stop, wait  # noqa: E402

NRT = "noderesourcetopologies.topology.node.k8s.io"
SCHEDULER = "podtopo-scheduler"


class Cluster:
    def __init__(self, script, d):
        self.script, self.dir = script, d
        self.kubeconfig = os.path.join(d, "admin.kubeconfig")

    def kubectl(self, *args, stdin=None, check=True):
        r = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, *args], input=stdin,
                           capture_output=True, text=True, timeout=60)
        if check and r.returncode != 0:
            fail(f"kubectl {' '.join(args)}: {r.stderr.strip()}")
        return r

    def api(self, method, path, body=None):
        """One request to the API server as the admin (what kubectl 1.20 cannot: PUT .../status)."""
        cfg = yaml.safe_load(open(self.kubeconfig))
        cluster = cfg["clusters"][0]["cluster"]
        ctx = ssl.create_default_context(cafile=cluster["certificate-authority"])
        req = urllib.request.Request(cluster["server"] + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": "Bearer " + cfg["users"][0]["user"]["token"],
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return json.loads(r.read())

    def pods(self):
        return json.loads(self.kubectl("get", "pods", "-o", "json").stdout)["items"]

    def refused_binds(self):
        """How many binds the extender refused, from the FailedScheduling events' counts."""
        out = self.kubectl("get", "events", "-o", "json", "--field-selector", "reason=FailedScheduling").stdout
        return sum(e.get("count") or 1 for e in json.loads(out)["items"] if "not bound to" in e["message"])

    def events(self, pod):
        out = self.kubectl("get", "events", "-o", "json",
                           "--field-selector", f"involvedObject.name={pod},reason=FailedScheduling").stdout
        return [e["message"] for e in json.loads(out)["items"]]


def topology_totals(podtopo, preset):
    """(CPUs, memory bytes) of a preset, from `podtopo topology -o json`."""
    t = json.loads(subprocess.run([podtopo, "topology", "--node", preset, "-o", "json"],
                                  capture_output=True, text=True, check=True).stdout)
    return len(t["cpus"]), sum(n["memory"] for n in t["numaNodes"])


def create_nodes(cp, specs, podtopo, tmp, procs):
    """Registers each node of `specs` ({name, preset, config}) and publishes its
    NodeResourceTopology: a Node object with capacity and allocatable as the kubelet reports
    them, `podtopo serve` playing its kubelet (no pods: nothing runs the bound pods), and
    `podtopo agent` publishing the NRT from that kubelet. Returns when every NRT is there.
    (`podtopo serve --kubeconfig --node-name` will replace all three.)"""
    kcfg = yaml.safe_load(open(specs[0]["config"]))
    reserved_cpu = int(kcfg.get("systemReserved", {}).get("cpu", "0"))
    for s in specs:
        cpus, memory = topology_totals(podtopo, s["preset"])
        cp.kubectl("create", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": s["name"], "labels": {"kubernetes.io/hostname": s["name"]}}}))
        node = cp.api("GET", f"/api/v1/nodes/{s['name']}")
        # The reserved memory: system-reserved 1Gi + eviction 100Mi (kubelet-config.yaml).
        allocatable_memory = memory - (1 << 30) - (100 << 20)
        node["status"] = {
            "capacity": {"cpu": str(cpus), "memory": str(memory), "pods": "110"},
            "allocatable": {"cpu": str(cpus - reserved_cpu), "memory": str(allocatable_memory),
                            "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "podtopo serve plays this node's kubelet"}]}
        cp.api("PUT", f"/api/v1/nodes/{s['name']}/status", node)
        d = os.path.join(tmp, s["name"])
        os.makedirs(os.path.join(d, "pods"))
        os.makedirs(os.path.join(d, "state"))
        sock = os.path.join(d, "kubelet.sock")
        procs.append(subprocess.Popen(
            [podtopo, "serve", "--socket", sock, "--node", s["preset"], "--config", s["config"],
             "--state-dir", os.path.join(d, "state"), "--pods-dir", os.path.join(d, "pods")],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "serve.log"), "w")))
        wait(f"{s['name']}: podtopo serve's socket", lambda: os.path.exists(sock))
        procs.append(subprocess.Popen(
            [podtopo, "agent", "--podresources-socket", sock, "--node", s["preset"],
             "--config", s["config"], "--metrics-addr", f"127.0.0.1:{free_port()}",
             "--interval", "1s", "--kubeconfig", cp.kubeconfig, "--nrt-name", s["name"]],
            stderr=open(os.path.join(d, "agent.log"), "w")))
    for s in specs:
        wait(f"{s['name']}: its NodeResourceTopology",
             lambda: cp.kubectl("get", NRT, s["name"], check=False).returncode == 0)


def pod(name, cpus):
    res = {"cpu": str(cpus), "memory": "1Gi"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"e2e": "extender"}},
            "spec": {"schedulerName": SCHEDULER,
                     "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": res, "limits": res}}]}}


def create_burst(cp, pods):
    cp.kubectl("create", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))


def scheduler_config(repo, cp, port, path):
    """deploy/podtopo-scheduler.yaml's configuration, pointed at this cluster and extender."""
    docs = [d for d in yaml.safe_load_all(open(os.path.join(repo, "deploy/podtopo-scheduler.yaml"))) if d]
    cm = next(d for d in docs if d["kind"] == "ConfigMap")
    cfg = yaml.safe_load(cm["data"]["scheduler-config.yaml"])
    cfg["clientConnection"]["kubeconfig"] = cp.kubeconfig
    cfg["leaderElection"] = {"leaderElect": False}
    for e in cfg["extenders"]:
        e["urlPrefix"] = f"http://127.0.0.1:{port}"
    with open(path, "w") as f:
        yaml.safe_dump(cfg, f)


def extender_kubeconfig(repo, cp, tmp):
    """A kubeconfig for deploy/podtopo-extender.yaml's ServiceAccount (its RBAC applied, a token
    from the TokenRequest API: no controller-manager runs to make one)."""
    docs = [d for d in yaml.safe_load_all(open(os.path.join(repo, "deploy/podtopo-extender.yaml"))) if d]
    rbac = [d for d in docs if d["kind"] in ("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding")]
    cp.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": rbac}))
    sa = next(d for d in rbac if d["kind"] == "ServiceAccount")["metadata"]
    req = os.path.join(tmp, "tokenrequest.json")
    with open(req, "w") as f:
        json.dump({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                   "spec": {"expirationSeconds": 3600}}, f)
    token = json.loads(cp.kubectl(
        "create", "--raw", f"/api/v1/namespaces/{sa['namespace']}/serviceaccounts/{sa['name']}/token",
        "-f", req).stdout)["status"]["token"]
    cfg = yaml.safe_load(open(cp.kubeconfig))
    cfg["users"] = [{"name": sa["name"], "user": {"token": token}}]
    cfg["contexts"][0]["context"]["user"] = sa["name"]
    path = os.path.join(tmp, "extender.kubeconfig")
    with open(path, "w") as f:
        yaml.safe_dump(cfg, f)
    return path


def main():
    repo, podtopo, script = sys.argv[1:4]
    bindir = os.path.join(os.path.dirname(script), "bin")
    if not shutil.which("etcd"):
        skip("etcd missing (apt-get install etcd-server; scripts/setup.sh test)")
    if not shutil.which("kubectl"):
        skip("kubectl missing (apt-get install kubernetes-client; scripts/setup.sh test)")
    for b in (script, os.path.join(bindir, "kube-apiserver"), os.path.join(bindir, "kube-scheduler")):
        if not os.access(b, os.X_OK):
            skip(f"{b} missing (../shared/runtime/kubernetes-1.20)")
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="podtopo-extender-")
    cp = Cluster(script, os.path.join(tmp, "cp"))
    os.makedirs(cp.dir)
    procs = []
    config = os.path.join(repo, "docs/examples/kubelet-config.yaml")
    nodes = [{"name": "node-demo", "preset": "preset:demo", "config": config},
             {"name": "node-t256", "preset": "preset:t256", "config": config}]
    try:
        port = free_port()
        sched_cfg = os.path.join(tmp, "scheduler-config.yaml")
        scheduler_config(repo, cp, port, sched_cfg)
        r = subprocess.run([script, "start", cp.dir, "--scheduler-config", sched_cfg],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"control-plane.sh start: {r.stdout}{r.stderr}")
        print(r.stdout.strip())
        cp.kubectl("apply", "-f", os.path.join(repo, "deploy/noderesourcetopology-crd.yaml"))
        cp.kubectl("wait", "--for=condition=Established", "--timeout=30s", f"crd/{NRT}")
        create_nodes(cp, nodes, podtopo, tmp, procs)
        print(f"nodes: {', '.join(n['name'] + ' (' + n['preset'] + ')' for n in nodes)}, "
              f"their NodeResourceTopology published")

        # The extender runs as deploy/podtopo-extender.yaml's service account (a kubeconfig with
        # its token), so that its RBAC is what it is allowed.
        kubeconfig = extender_kubeconfig(repo, cp, tmp)
        extender = subprocess.Popen(
            [podtopo, "extender", "--listen", f"127.0.0.1:{port}", "--kubeconfig", kubeconfig,
             "--log-level", "debug"],
            stderr=open(os.path.join(tmp, "extender.log"), "w"))
        procs.append(extender)
        base = f"http://127.0.0.1:{port}"
        wait("the extender to be ready (/readyz)", lambda: get(base + "/readyz") == "ok\n")
        wait("the extender to hold both NRTs",
             lambda: metric(get(base + "/metrics"), "podtopo_extender_nodes_known") == 2)

        def where(name):
            p = next((p for p in cp.pods() if p["metadata"]["name"] == name), None)
            return p and p["spec"].get("nodeName")

        # 1. A burst of 9 wide pods: 8 NUMA nodes of 32 CPUs in all the cluster.
        t1 = time.time()
        create_burst(cp, [pod(f"wide-{i}", 20) for i in range(9)])

        def wide_settled():
            bound = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in cp.pods()
                     if p["metadata"]["name"].startswith("wide-")}
            placed = {n: v for n, v in bound.items() if v}
            waiting = [n for n, v in bound.items() if not v]
            if len(placed) == 8 and len(waiting) == 1 and cp.events(waiting[0]):
                return placed, waiting[0]
            return None
        placed, left = wait("8 wide pods bound and the 9th refused", wide_settled, seconds=60)
        if set(placed.values()) != {"node-t256"}:
            fail(f"wide pods bound outside node-t256: {placed}")
        msg = cp.events(left)[-1]
        if "TopologyAffinityError" not in msg:
            fail(f"{left}: FailedScheduling without the extender's reason: {msg}")
        print(f"1. 9 pods of 20 CPUs: 8 bound to node-t256 in {time.time() - t1:.1f} s, {left} "
              f"refused: {msg}")

        # 2. No NUMA node anywhere holds 40 CPUs, although both nodes do in total.
        create_burst(cp, [pod("huge", 40)])
        msg = wait("huge's FailedScheduling", lambda: (cp.events("huge") or [None])[-1])
        if "TopologyAffinityError" not in msg or where("huge"):
            fail(f"huge: {msg}")
        print(f"2. a pod of 40 CPUs: {msg}")

        # 3. Pods of 14 CPUs: node-t256's NUMA nodes have at most 12 left; node-demo's 4 NUMA
        # nodes of 16 (15 on NUMA 0, which holds the reserved CPU) take one each.
        create_burst(cp, [pod(f"mid-{i}", 14) for i in range(5)])

        def mid_settled():
            placed = {f"mid-{i}": where(f"mid-{i}") for i in range(5)}
            waiting = [n for n, v in placed.items() if not v]
            if len(waiting) == 1 and cp.events(waiting[0]):
                return {n: v for n, v in placed.items() if v}, waiting[0]
            return None
        placed, left = wait("4 pods of 14 CPUs bound and the 5th refused", mid_settled, seconds=60)
        if set(placed.values()) != {"node-demo"}:
            fail(f"pods of 14 CPUs bound outside node-demo: {placed}")
        print(f"3. 5 pods of 14 CPUs: 4 bound to node-demo, {left} refused: {cp.events(left)[-1]}")

        # 3b. Pods of 4 CPUs fit in what is left (node-t256's NUMA nodes: 11 or 12 CPUs each).
        t3 = time.time()
        create_burst(cp, [pod(f"small-{i}", 4) for i in range(10)])
        wait("10 small pods bound", lambda: all(where(f"small-{i}") for i in range(10)), seconds=60)
        spread = {}
        for i in range(10):
            spread[where(f"small-{i}")] = spread.get(where(f"small-{i}"), 0) + 1
        print(f"3b. 10 pods of 4 CPUs bound in {time.time() - t3:.1f} s: {spread}")

        # 4. Every node's kubelet (podtopo admit, the same decisions) admits what it was given.
        bound = [p for p in cp.pods() if p["spec"].get("nodeName")]
        for n in nodes:
            mine = sorted((p for p in bound if p["spec"]["nodeName"] == n["name"]),
                          key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"]))
            if not mine:
                print(f"4. {n['name']}: no pod bound to it")
                continue
            f = os.path.join(tmp, f"{n['name']}-bound.json")
            with open(f, "w") as out:
                json.dump({"apiVersion": "v1", "kind": "List", "items": [
                    {"apiVersion": "v1", "kind": "Pod",
                     "metadata": {k: p["metadata"][k] for k in ("name", "namespace", "uid")},
                     "spec": {"containers": p["spec"]["containers"]}} for p in mine]}, out)
            r = subprocess.run([podtopo, "admit", f, "--node", n["preset"], "--config", n["config"],
                                "-o", "json"], capture_output=True, text=True)
            if r.returncode != 0:
                fail(f"{n['name']}: podtopo admit of its {len(mine)} bound pods exits "
                     f"{r.returncode}: {r.stderr.strip()}\n{r.stdout[:2000]}")
            print(f"4. {n['name']}: its kubelet admits all {len(mine)} pods bound to it")

        # 5. The extender's own account.
        m = get(base + "/metrics")
        binds = metric(m, 'podtopo_extender_requests_total{code="200",verb="bind"}') or 0
        refused_binds = cp.refused_binds()
        if binds - refused_binds != len(bound):
            fail(f"the extender answered {binds:.0f} binds and refused {refused_binds}, "
                 f"{len(bound)} pods are bound")
        failed = metric(m, "podtopo_extender_nodes_failed_total")
        if not failed:
            fail(f"podtopo_extender_nodes_failed_total is {failed}")
        print(f"5. extender: {binds:.0f} binds, {refused_binds} refused at bind (filtered before an "
              f"earlier pod's bind), {failed:.0f} node verdicts failed, "
              f"{metric(m, 'podtopo_extender_reservations'):.0f} reservations held; "
              f"rejected by a kubelet after binding: 0 of {len(bound)}")
        for verb in ("filter", "prioritize", "bind"):
            n = metric(m, f'podtopo_extender_request_duration_seconds_count{{verb="{verb}"}}') or 0
            total = metric(m, f'podtopo_extender_request_duration_seconds_sum{{verb="{verb}"}}') or 0
            if n:
                print(f"   /{verb}: {n:.0f} requests, {1000 * total / n:.2f} ms each on average")
        if extender.poll() is not None:
            fail("the extender exited")
        extender.send_signal(signal.SIGTERM)
        try:
            rc = extender.wait(timeout=15)
        except subprocess.TimeoutExpired:
            fail("the extender did not stop within 15 s of SIGTERM")
        if rc != 0:
            fail(f"the extender exited {rc} after SIGTERM")
        print("6. SIGTERM: the extender stops, exit 0")
        print(f"ok ({time.time() - t0:.1f} s)")
    finally:
        stop(procs)
        subprocess.run([script, "stop", cp.dir], capture_output=True, timeout=60)
        if os.environ.get("KEEP_TMP"):
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
