#!/usr/bin/python3
"""The default scheduler against the extender, on simulated nodes (issue 25 item 4).

  simulated_cluster_e2e.py REPO PODTOPO CONTROL_PLANE_SH

A real control plane (etcd, kube-apiserver and kube-scheduler 1.20.2 on loopback), deploy/'s NRT
CRD, and three nodes played by `podtopo serve --kubeconfig --node-name` (exact resource managers,
each publishing its NodeResourceTopology):
  sim-single      preset:demo (4 NUMA nodes x 16 CPUs), single-numa-node, pod scope
  sim-restricted  preset:demo, restricted, pod scope
  sim-best        preset:dual-socket-multi-numa-per-socket-ht (4 x 20 CPUs), best-effort,
                  container scope
The burst: 6 Guaranteed pods of 20 CPUs, which fit on one NUMA node of sim-best only and which
single-numa-node refuses, then 6 pods of 4 CPUs, which fit anywhere.
  1. The default scheduler alone (it counts CPUs per node, not per NUMA node): it binds pods to
     sim-single, whose kubelet rejects them (phase Failed, TopologyAffinityError). Counted; at
     least one is required, or the comparison shows nothing.
  2. The pods deleted, the same burst through a second kube-scheduler configured as
     deploy/podtopo-scheduler.yaml configures it, with `podtopo extender`: no bound pod is
     rejected; a pod no node admits stays Pending with the extender's FailedScheduling message.
Both counts are printed. Exit 0 on success, 77 (skip) when etcd, kubectl or the control plane's
binaries are missing, 1 with the reason otherwise.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kubenode"))
import simnodes  # noqa: E402
import extender_e2e as ext  # noqa: E402
from checks import stop  # noqa: E402

BEST_EFFORT = """apiVersion: kubelet.config.k8s.io/v1beta1
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

RESTRICTED = BEST_EFFORT.replace("best-effort", "restricted").replace("scope: container",
                                                                     "scope: pod")


def fail(why):
    sys.exit(f"simulated_cluster_e2e: {why}")


def burst(scheduler, prefix):
    pods = [ext.pod(f"{prefix}-wide-{i}", 20) for i in range(6)]
    pods += [ext.pod(f"{prefix}-small-{i}", 4) for i in range(6)]
    for p in pods:
        p["spec"]["schedulerName"] = scheduler
        p["metadata"]["labels"] = {"e2e": prefix}
    return pods


def pods_of(cp, prefix):
    r = cp.get_json("pods", "-n", "default", "-l", f"e2e={prefix}")
    return r["items"] if r else []


def failed_scheduling(cp, name):
    r = cp.get_json("events", "-n", "default", "--field-selector",
                    f"involvedObject.name={name},reason=FailedScheduling")
    return [e.get("message", "") for e in (r or {}).get("items", [])]


def outcome(cp, prefix, expected):
    """When every pod of the burst has settled: bound and Running, bound and Failed (its node's
    kubelet rejected it), or unbound with a FailedScheduling event. None before."""
    pods = pods_of(cp, prefix)
    if len(pods) != expected:
        return None
    running, rejected, pending = [], [], []
    for p in pods:
        name, node = p["metadata"]["name"], p["spec"].get("nodeName")
        phase = p.get("status", {}).get("phase")
        if node and phase == "Running":
            running.append((name, node))
        elif node and phase == "Failed":
            rejected.append((name, node, p["status"].get("reason"), p["status"].get("message")))
        elif not node and failed_scheduling(cp, name):
            pending.append((name, failed_scheduling(cp, name)[-1]))
        else:
            return None
    return running, rejected, pending


def cpus_available(cp, name):
    nrt = cp.nrt(name)
    return sum(int(r["available"]) for z in nrt["zones"] for r in z["resources"] if r["name"] == "cpu")


def cpus_allocatable(cp, name):
    nrt = cp.nrt(name)
    return sum(int(r["allocatable"]) for z in nrt["zones"] for r in z["resources"] if r["name"] == "cpu")


def main():
    repo, podtopo, script = sys.argv[1:4]
    simnodes.skip_unless_available(script)
    bindir = os.path.join(os.path.dirname(script), "bin")
    tmp = tempfile.mkdtemp(prefix="podtopo-simcluster-")
    cp = simnodes.ControlPlane(script, os.path.join(tmp, "cp"))
    nodes, procs = [], []
    t0 = time.time()
    try:
        print(cp.start())
        cp.install_crd(repo)
        configs = {}
        for name, text in (("best-effort", BEST_EFFORT), ("restricted", RESTRICTED)):
            configs[name] = os.path.join(tmp, f"{name}.yaml")
            with open(configs[name], "w") as f:
                f.write(text)
        specs = [simnodes.NodeSpec("sim-single", "preset:demo",
                                   config=os.path.join(repo, "docs/examples/kubelet-config.yaml")),
                 simnodes.NodeSpec("sim-restricted", "preset:demo", config=configs["restricted"]),
                 simnodes.NodeSpec("sim-best", "preset:dual-socket-multi-numa-per-socket-ht",
                                   config=configs["best-effort"])]
        nodes = simnodes.start_nodes(podtopo, cp.kubeconfig, specs, tmp, cp)
        print(f"nodes up in {time.time() - t0:.1f} s: " +
              ", ".join(f"{s.name} ({s.node})" for s in specs))

        # 1. The default scheduler alone.
        pods = burst("default-scheduler", "alone")
        ext.create_burst(cp, pods)
        settled = simnodes.wait("the default scheduler's burst to settle",
                                lambda: outcome(cp, "alone", len(pods)), seconds=90)
        running, rejected, pending = settled
        print(f"1. default scheduler alone: {len(running) + len(rejected)} of {len(pods)} pods "
              f"bound, {len(rejected)} of them rejected by their node's kubelet, "
              f"{len(pending)} unschedulable")
        for name, node, reason, message in rejected:
            print(f"   {name} on {node}: {reason}: {message}")
        if not rejected:
            fail("the default scheduler bound no pod to a node that rejects it: the comparison "
                 "shows nothing (placements: " + ", ".join(f"{n}->{h}" for n, h in running) + ")")
        if any(r[2] != "TopologyAffinityError" for r in rejected):
            fail(f"rejections other than TopologyAffinityError: {rejected}")

        # Clear the nodes: the simulated kubelets release and delete the pods.
        cp.kubectl("delete", "pods", "-n", "default", "-l", "e2e=alone", "--wait=true",
                   "--timeout=60s")
        for s in specs:
            simnodes.wait(f"{s.name}'s NRT to show every CPU free again",
                          lambda: cpus_available(cp, s.name) == cpus_allocatable(cp, s.name))

        # 2. The same burst through the extender and a second scheduler.
        port = ext.free_port()
        sched_cfg = os.path.join(tmp, "podtopo-scheduler.yaml")
        ext.scheduler_config(repo, cp, port, sched_cfg)
        extender = subprocess.Popen(
            [podtopo, "extender", "--listen", f"127.0.0.1:{port}", "--kubeconfig", cp.kubeconfig],
            stderr=open(os.path.join(tmp, "extender.log"), "w"))
        procs.append(extender)
        base = f"http://127.0.0.1:{port}"
        simnodes.wait("the extender to be ready", lambda: ext.get(base + "/readyz") == "ok\n")
        simnodes.wait("the extender to hold the three NRTs",
                      lambda: ext.metric(ext.get(base + "/metrics"),
                                         "podtopo_extender_nodes_known") == 3)
        scheduler = subprocess.Popen(
            [os.path.join(bindir, "kube-scheduler"), "--config", sched_cfg,
             "--authentication-kubeconfig", cp.kubeconfig, "--authorization-kubeconfig",
             cp.kubeconfig, "--bind-address", "127.0.0.1", "--secure-port", str(ext.free_port()),
             "--port", "0"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "podtopo-scheduler.log"), "w"))
        procs.append(scheduler)
        pods = burst(ext.SCHEDULER, "extender")
        ext.create_burst(cp, pods)
        try:
            settled = simnodes.wait("the extender's burst to settle",
                                    lambda: outcome(cp, "extender", len(pods)), seconds=120)
        except simnodes.Timeout as e:
            with open(os.path.join(tmp, "podtopo-scheduler.log")) as f:
                log = f.read()[-3000:]
            fail(f"{e}\nsecond scheduler's log (end):\n{log}")
        running, rejected, pending = settled
        print(f"2. with the extender: {len(running) + len(rejected)} of {len(pods)} pods bound, "
              f"{len(rejected)} rejected by their node's kubelet, {len(pending)} unschedulable")
        for name, message in pending:
            print(f"   {name} pending: {message}")
        if rejected:
            fail(f"pods bound through the extender were rejected by their kubelet: {rejected}")
        wide_running = [n for n, h in running if "-wide-" in n]
        if not wide_running:
            fail("no pod of 20 CPUs runs: the extender refused what sim-best admits")
        if any(h == "sim-single" for n, h in running if "-wide-" in n):
            fail(f"a pod of 20 CPUs runs on sim-single: {running}")
        for name, message in pending:
            if "TopologyAffinityError" not in message and "Insufficient" not in message:
                fail(f"{name}: FailedScheduling without a reason from the kubelet: {message}")
        print(f"done in {time.time() - t0:.1f} s")
    except simnodes.Timeout as e:
        logs = "\n".join(f"--- {n.name}\n{n.log_text()[-1500:]}" for n in nodes)
        fail(f"{e}\n{logs}")
    finally:
        stop(procs)
        simnodes.stop_nodes(nodes)
        cp.stop()
        if os.environ.get("PODTOPO_KEEP_TMP") is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
