#!/usr/bin/python3
"""Simulated nodes on a real control plane, for the e2e tests (importable).

A control plane is ../shared/runtime/kubernetes-1.20/control-plane.sh's (etcd, kube-apiserver
and kube-scheduler 1.20.2 on loopback); a simulated node is one `podtopo serve --kubeconfig FILE
--node-name NAME` process (src/kubenode/kube_node.h).

    from simnodes import ControlPlane, NodeSpec, start_nodes, stop_nodes, skip_unless_available
    skip_unless_available(control_plane_sh)            # exit 77 with the reason when not
    cp = ControlPlane(control_plane_sh, os.path.join(tmp, "cp")); cp.start()
    cp.install_crd(repo)                               # deploy/noderesourcetopology-crd.yaml
    nodes = start_nodes(podtopo, cp.kubeconfig, [
        NodeSpec("sim-a", "preset:demo", config="docs/examples/kubelet-config.yaml"),
        NodeSpec("sim-b", "preset:dual-socket-ht", state_dir=os.path.join(tmp, "b"))], tmp)
    ...                                                # pods, cp.kubectl(...), cp.nrt("sim-a")
    stop_nodes(nodes)                                  # SIGTERM; {name: exit status}
    cp.stop()

start_nodes returns once every Node is Ready and its NodeResourceTopology exists (when the CRD is
installed). A node's log is WORKDIR/NAME.log.
"""
import json
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
# wait: check() until true, raising Timeout (callers catch it where a timeout is an answer).
from checks import Timeout, skip  # noqa: E402,F401
from checks import poll as wait  # noqa: E402,F401


def skip_unless_available(control_plane_sh):
    """Exits 77 naming what is missing: etcd, kubectl, or the control plane's binaries."""
    if not shutil.which("etcd"):
        skip("etcd missing (apt-get install etcd-server; scripts/setup.sh test)")
    if not shutil.which("kubectl"):
        skip("kubectl missing (apt-get install kubernetes-client; scripts/setup.sh test)")
    bindir = os.path.join(os.path.dirname(control_plane_sh), "bin")
    for b in (control_plane_sh, os.path.join(bindir, "kube-apiserver"),
              os.path.join(bindir, "kube-scheduler")):
        if not os.access(b, os.X_OK):
            skip(f"{b} missing (../shared/runtime/kubernetes-1.20)")


class ControlPlane:
    def __init__(self, script, directory, scheduler_config=None):
        self.script, self.dir, self.scheduler_config = script, directory, scheduler_config
        self.kubeconfig = os.path.join(directory, "admin.kubeconfig")

    def start(self):
        args = [self.script, "start", self.dir]
        if self.scheduler_config:
            args += ["--scheduler-config", self.scheduler_config]
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"control-plane.sh start: {r.stdout}{r.stderr}")
        return r.stdout.strip()

    def stop(self):
        subprocess.run([self.script, "stop", self.dir], capture_output=True, timeout=60)

    def kubectl(self, *args, stdin=None, check=True):
        r = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, *args], input=stdin,
                           capture_output=True, text=True, timeout=60)
        if check and r.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)}: {r.stderr.strip()}")
        return r

    def get_json(self, *args):
        r = self.kubectl("get", *args, "-o", "json", check=False)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def raw(self, path):
        r = self.kubectl("get", "--raw", path, check=False)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def nrt(self, name):
        return self.raw(f"/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies/{name}")

    def install_crd(self, repo):
        self.kubectl("apply", "-f", os.path.join(repo, "deploy/noderesourcetopology-crd.yaml"))
        self.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                     "crd/noderesourcetopologies.topology.node.k8s.io")

    def node_ready(self, name):
        n = self.get_json("node", name)
        if not n:
            return False
        return any(c["type"] == "Ready" and c["status"] == "True"
                   for c in n.get("status", {}).get("conditions", []))


class NodeSpec:
    def __init__(self, name, node="preset:demo", config=None, state_dir=None,
                 kubelet_version=None, extra=()):
        self.name, self.node, self.config, self.state_dir = name, node, config, state_dir
        self.kubelet_version, self.extra = kubelet_version, list(extra)


class SimNode:
    def __init__(self, spec, proc, log):
        self.spec, self.proc, self.log = spec, proc, log

    @property
    def name(self):
        return self.spec.name

    def log_text(self):
        with open(self.log) as f:
            return f.read()


def serve_args(podtopo, kubeconfig, spec):
    args = [podtopo, "serve", "--kubeconfig", kubeconfig, "--node-name", spec.name,
            "--node", spec.node]
    if spec.config:
        args += ["--config", spec.config]
    if spec.state_dir:
        args += ["--state-dir", spec.state_dir]
    if spec.kubelet_version:
        args += ["--kubelet-version", spec.kubelet_version]
    return args + spec.extra


def start_node(podtopo, kubeconfig, spec, workdir):
    log = os.path.join(workdir, f"{spec.name}.log")
    proc = subprocess.Popen(serve_args(podtopo, kubeconfig, spec), stdout=subprocess.DEVNULL,
                            stderr=open(log, "a"))
    return SimNode(spec, proc, log)


def start_nodes(podtopo, kubeconfig, specs, workdir, control_plane=None, seconds=60):
    """Starts one `podtopo serve --kubeconfig` per spec; returns the SimNodes once each Node is
    Ready, its informer synced (the log's "synced:" line) and, when `control_plane` is given and
    the CRD is installed, its NodeResourceTopology exists. A node that exits raises RuntimeError
    with its log."""
    nodes = [start_node(podtopo, kubeconfig, s, workdir) for s in specs]
    cp = control_plane
    crd = cp is not None and cp.raw(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
        "noderesourcetopologies.topology.node.k8s.io") is not None
    for n in nodes:
        def up():
            if n.proc.poll() is not None:
                raise RuntimeError(f"podtopo serve --node-name {n.name} exited "
                                   f"({n.proc.returncode}):\n{n.log_text()}")
            if "synced:" not in n.log_text():
                return False
            if cp is not None and not cp.node_ready(n.name):
                return False
            return not crd or cp.nrt(n.name) is not None
        try:
            wait(f"node {n.name} to be up", up, seconds=seconds)
        except Timeout as e:
            raise RuntimeError(f"{e}\n{n.name}'s log:\n{n.log_text()}")
    return nodes


def stop_node(node, seconds=15):
    """SIGTERM; the exit status (None when it had to be killed)."""
    if node.proc.poll() is None:
        node.proc.send_signal(signal.SIGTERM)
        try:
            return node.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            node.proc.kill()
            node.proc.wait()
            return None
    return node.proc.returncode


def stop_nodes(nodes, seconds=15):
    return {n.name: stop_node(n, seconds) for n in nodes}
