#!/usr/bin/python3
"""`podtopo agent` publishes its NodeResourceTopology to a real API server (issue 25 item 1).

Run under tests/podresources/with_serve.sh (`podtopo serve` plays the kubelet on preset:demo
with the docs' pod-scope-mixed pod; PODRESOURCES_SOCKET, PODRESOURCES_PODS_DIR set):

  nrt_publish_e2e.py REPO PODTOPO CONTROL_PLANE_SH

Starts etcd + kube-apiserver 1.20.2 + the scheduler (../shared/runtime/kubernetes-1.20), installs
deploy/'s CRD, creates Node objects, and checks:
  1. kubeconfig mode: the object appears, owned by the Node (its uid), the pod-level pod's CPUs
     counted once, podtopo's attributes (topology digest, free CPU ids per zone) present and
     agreeing with `available`; the published zones equal the agent's own /nrt;
  2. a pod removed: the object is updated;
  3. the API server stopped: the agent keeps running and podtopo_nrt_publish_errors_total
     rises; the API server restarted on the same port: the object catches up with a change
     made during the outage;
  4. in-cluster mode: the ServiceAccount and RBAC of deploy/podtopo-agent.yaml, a token from
     the TokenRequest API in a service-account directory, KUBERNETES_SERVICE_HOST/PORT set and
     no --kubeconfig: the object appears; a bad token written over the file is noticed
     (unauthorized errors); a fresh token written again and publishing resumes.
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

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import fail, free_port, get, metric, skip, stop, wait  # noqa: E402

NRT = "noderesourcetopologies.topology.node.k8s.io"


class Cluster:
    def __init__(self, script, d):
        self.script, self.dir = script, d
        self.kubeconfig = os.path.join(d, "admin.kubeconfig")

    def kubectl(self, *args, stdin=None, check=True):
        r = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, *args], input=stdin,
                           capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            fail(f"kubectl {' '.join(args)}: {r.stderr.strip()}")
        return r

    def get_json(self, *args):
        r = self.kubectl("get", *args, "-o", "json", check=False)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def nrt(self, name):
        # --raw: the whole object, managedFields included (kubectl >= 1.21 hides them in -o json)
        r = self.kubectl("get", "--raw",
                         f"/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies/{name}",
                         check=False)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def apiserver_pid(self):
        with open(os.path.join(self.dir, "apiserver.pid")) as f:
            return int(f.read())


def zone(nrt, name):
    return next(z for z in nrt["zones"] if z["name"] == name)


def res(z, name):
    return next(r for r in z["resources"] if r["name"] == name)


def attr(items, name):
    return next((a["value"] for a in items or [] if a["name"] == name), None)


def cpus_of(text):
    if text == "none":  # podtopo's empty set (1.20's server-side apply refuses "")
        return 0
    n = 0
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def check_object(nrt, node_uid, node_name):
    owners = nrt["metadata"].get("ownerReferences", [])
    if [(o["apiVersion"], o["kind"], o["name"], o["uid"]) for o in owners] != \
            [("v1", "Node", node_name, node_uid)]:
        fail(f"{node_name}: ownerReferences {owners}, not the Node's uid {node_uid}")
    managers = {m.get("manager") for m in nrt["metadata"].get("managedFields", [])}
    if "podtopo" not in managers:
        fail(f"{node_name}: field managers {managers}, no podtopo (server-side apply)")
    digest = attr(nrt.get("attributes"), "podtopo.io/cpu-topology-digest")
    if not digest or not digest.startswith("fnv1a64:"):
        fail(f"{node_name}: no podtopo.io/cpu-topology-digest attribute: {nrt.get('attributes')}")
    for z in nrt["zones"]:
        free = attr(z.get("attributes"), "podtopo.io/free-cpus")
        if free is None or cpus_of(free) != int(res(z, "cpu")["available"]):
            fail(f"{node_name} {z['name']}: podtopo.io/free-cpus {free!r} does not list the "
                 f"{res(z, 'cpu')['available']} available CPUs")


def main():
    repo, podtopo, script = sys.argv[1:4]
    bindir = os.path.join(os.path.dirname(script), "bin")
    if not shutil.which("etcd"):
        skip("etcd missing (apt-get install etcd-server; scripts/setup.sh test)")
    if not shutil.which("kubectl"):
        skip("kubectl missing (apt-get install kubernetes-client; scripts/setup.sh test)")
    for b in (script, os.path.join(bindir, "kube-apiserver")):
        if not os.access(b, os.X_OK):
            skip(f"{b} missing (../shared/runtime/kubernetes-1.20)")
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="podtopo-nrt-")
    cp = Cluster(script, os.path.join(tmp, "cp"))
    procs = []
    try:
        r = subprocess.run([script, "start", cp.dir], capture_output=True, text=True, timeout=90)
        if r.returncode != 0:
            fail(f"control-plane.sh start: {r.stdout}{r.stderr}")
        print(r.stdout.strip())
        cp.kubectl("apply", "-f", os.path.join(repo, "deploy/noderesourcetopology-crd.yaml"))
        cp.kubectl("wait", "--for=condition=Established", "--timeout=30s", f"crd/{NRT}")
        for n in ("nrt-node-1", "nrt-node-2"):
            cp.kubectl("create", "-f", "-", stdin=json.dumps(
                {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}}))
        uid1 = cp.get_json("node", "nrt-node-1")["metadata"]["uid"]
        uid2 = cp.get_json("node", "nrt-node-2")["metadata"]["uid"]

        # The pod-level pod beside pod-scope-mixed (with_serve.sh's).
        pods = os.environ["PODRESOURCES_PODS_DIR"]
        shutil.copy(os.path.join(repo, "docs/examples/pod-level-resource-demo.yaml"), pods)
        port = free_port()
        agent = subprocess.Popen(
            [podtopo, "agent", "--podresources-socket", os.environ["PODRESOURCES_SOCKET"],
             "--node", "preset:demo", "--config", os.path.join(repo, "docs/examples/kubelet-config.yaml"),
             "--metrics-addr", f"127.0.0.1:{port}", "--interval", "300ms",
             "--kubeconfig", cp.kubeconfig, "--nrt-name", "nrt-node-1", "--nrt-resync", "1s",
             "--nrt-out", os.path.join(tmp, "nrt.yaml")],
            stderr=open(os.path.join(tmp, "agent.log"), "w"))
        procs.append(agent)
        metrics = lambda: get(f"http://127.0.0.1:{port}/metrics")

        # 1. The object, as the agent sees the node.
        def both_pods():
            o = cp.nrt("nrt-node-1")
            return o if o and res(zone(o, "node-0"), "cpu")["available"] == "9" else None
        nrt = wait("the NRT with both pods (node-0 cpu available 9)", both_pods)
        check_object(nrt, uid1, "nrt-node-1")
        local = yaml.safe_load(get(f"http://127.0.0.1:{port}/nrt"))
        if local["zones"] != nrt["zones"] or local["attributes"] != nrt["attributes"]:
            fail(f"the published object differs from /nrt:\n{nrt['zones']}\n{local['zones']}")
        print(f"1. nrt-node-1 published, owned by Node uid {uid1}; node-0 cpu available 9 "
              f"(pod-level pod counted once), free-cpus "
              f"{attr(zone(nrt, 'node-0')['attributes'], 'podtopo.io/free-cpus')}")

        # 2. A pod leaves: the object follows.
        os.remove(os.path.join(pods, "pod-level-resource-demo.yaml"))
        wait("the NRT after the pod-level pod left (available 11)",
             lambda: res(zone(cp.nrt("nrt-node-1"), "node-0"), "cpu")["available"] == "11")
        print("2. pod removed: node-0 cpu available 11")

        # 3. The API server goes away; the agent keeps running and counts the failures.
        pid = cp.apiserver_pid()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = [a.decode() for a in f.read().split(b"\0") if a]
        before = metric(metrics(), "podtopo_nrt_publish_errors_total", '{reason="transport"}') or 0
        def gone():
            return not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
        os.kill(pid, signal.SIGTERM)  # as control-plane.sh stop: 5 s to shut down, then SIGKILL
        deadline = time.time() + 5
        while not gone() and time.time() < deadline:
            time.sleep(0.1)
        if not gone():
            os.kill(pid, signal.SIGKILL)
        wait("the API server to exit", gone)
        shutil.copy(os.path.join(repo, "docs/examples/pod-level-resource-demo.yaml"), pods)
        wait("transport errors to rise", lambda: (metric(metrics(), "podtopo_nrt_publish_errors_total",
                                                         '{reason="transport"}') or 0) >= before + 2)
        if agent.poll() is not None:
            fail("the agent exited while the API server was down")
        last = metric(metrics(), "podtopo_nrt_last_publish_timestamp_seconds")
        after = metric(metrics(), "podtopo_nrt_publish_errors_total", '{reason="transport"}')
        print(f"3. API server stopped: transport errors {before:.0f} -> {after:.0f}, agent alive")
        api = subprocess.Popen(argv, stdout=open(os.path.join(cp.dir, "apiserver.log"), "a"),
                               stderr=subprocess.STDOUT, start_new_session=True)
        with open(os.path.join(cp.dir, "apiserver.pid"), "w") as f:
            f.write(str(api.pid))
        wait("the object to catch up after the restart (available 9)", lambda: res(zone(
            cp.nrt("nrt-node-1"), "node-0"), "cpu")["available"] == "9", seconds=45)
        now_last = metric(metrics(), "podtopo_nrt_last_publish_timestamp_seconds")
        if not now_last or not last or now_last <= last:
            fail(f"podtopo_nrt_last_publish_timestamp_seconds did not advance ({last} -> {now_last})")
        print("   API server restarted on the same port: the change made during the outage is published")

        # 4. In-cluster: the deploy/ ServiceAccount and RBAC, a bound token that rotates.
        docs = [d for d in yaml.safe_load_all(open(os.path.join(repo, "deploy/podtopo-agent.yaml"))) if d]
        rbac = [d for d in docs if d["kind"] in ("Namespace", "ServiceAccount", "ClusterRole",
                                                  "ClusterRoleBinding")]
        cp.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": rbac}))
        sa = next(d for d in rbac if d["kind"] == "ServiceAccount")["metadata"]
        req = os.path.join(tmp, "tokenrequest.json")

        def new_token():
            with open(req, "w") as f:
                json.dump({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                           "spec": {"expirationSeconds": 3600}}, f)
            out = cp.kubectl("create", "--raw",
                             f"/api/v1/namespaces/{sa['namespace']}/serviceaccounts/{sa['name']}/token",
                             "-f", req).stdout
            return json.loads(out)["status"]["token"]
        sadir = os.path.join(tmp, "serviceaccount")
        os.makedirs(sadir)
        shutil.copy(os.path.join(cp.dir, "pki/ca.crt"), os.path.join(sadir, "ca.crt"))

        def write_token(t):
            with open(os.path.join(sadir, "token.tmp"), "w") as f:
                f.write(t)
            os.rename(os.path.join(sadir, "token.tmp"), os.path.join(sadir, "token"))  # as the kubelet does
        write_token(new_token())
        api_port = re.search(r"^API=(\d+)$", open(os.path.join(cp.dir, "ports")).read(), re.M).group(1)
        env = dict(os.environ, KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT=api_port)
        port2 = free_port()
        agent2 = subprocess.Popen(
            [podtopo, "agent", "--podresources-socket", os.environ["PODRESOURCES_SOCKET"],
             "--node", "preset:demo", "--config", os.path.join(repo, "docs/examples/kubelet-config.yaml"),
             "--metrics-addr", f"127.0.0.1:{port2}", "--interval", "300ms",
             "--nrt-name", "nrt-node-2", "--nrt-resync", "1s", "--service-account-dir", sadir],
            env=env, stderr=open(os.path.join(tmp, "agent2.log"), "w"))
        procs.append(agent2)
        metrics2 = lambda: get(f"http://127.0.0.1:{port2}/metrics")
        nrt2 = wait("nrt-node-2 from the service account", lambda: cp.nrt("nrt-node-2"))
        check_object(nrt2, uid2, "nrt-node-2")
        print("4. in-cluster: nrt-node-2 published with the service account's token")
        write_token("not-a-token")
        wait("unauthorized errors after a bad token", lambda: (metric(
            metrics2(), "podtopo_nrt_publish_errors_total", '{reason="unauthorized"}') or 0) >= 1)
        writes = metric(metrics2(), "podtopo_nrt_publishes_total")
        write_token(new_token())
        wait("publishing to resume with the rotated token",
             lambda: metric(metrics2(), "podtopo_nrt_publishes_total") > writes, seconds=40)
        print("   token file rewritten: a bad token is refused (unauthorized), the fresh one is used")
        for p in procs:
            if p.poll() is not None:
                fail("an agent exited")
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
