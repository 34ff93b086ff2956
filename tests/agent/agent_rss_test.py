#!/usr/bin/python3
"""The agent's peak memory on a big node stays under the DaemonSet's limit (issue 25).

Issue 25 reports NFD's topology-updater OOM-killed at its 60 Mi limit on 144-CPU GB200 nodes.
This runs the agent on such a node, as the DaemonSet runs it (its program, podtopo-agent, and its
env), and holds it to the issue's goal of 30 MiB and to the memory limit of
deploy/podtopo-agent.yaml:

  agent_rss_test.py REPO PODTOPO CONTROL_PLANE_SH SANITIZE [--verify] [--polls=N] [--smaps] [--keep]
                    [--podtopo-agent]

  - `podtopo serve` plays the kubelet on preset:gb200 (144 CPUs, 34 NUMA nodes, 4 GPUs) with
    200 pods admitted: Guaranteed pods with exclusive CPUs, GPU pods, pod-level pods (KEP-5526)
    with a main container on exclusive CPUs and a native sidecar in the pod's shared pool, and
    Burstable pods;
  - podtopo-agent (deploy/'s command, built next to PODTOPO) polls its PodResources socket every 250 ms and publishes the
    NodeResourceTopology to a real kube-apiserver 1.20.2 (../shared/runtime/kubernetes-1.20)
    with --kubeconfig, resyncing every second; /metrics, /nrt and the picture (/) are scraped
    between polls, and 20 pods are removed and admitted again half-way, so the object changes;
  - the agent's peak resident set (VmHWM of /proc/PID/status) after at least N polls (default
    40) must not exceed 30 MiB (GOAL_MIB) nor resources.limits.memory of the DaemonSet's agent
    container, and none of the libraries podtopo-agent links statically may be mapped.
--podtopo-agent measures `podtopo agent` (the podtopo binary, every command) instead, for
comparison: it prints the figures and asserts nothing of them. --smaps prints the largest
mappings.

SANITIZE is ON for a build with sanitizers (PODTOPO_SANITIZE, or -fsanitize= in its flags, as
scripts/tsan.sh's): ASan and TSan multiply the resident set, so such a build skips (77), as does a
binary that carries a sanitizer's runtime, and a machine without etcd, kubectl or the control
plane's binaries.
Prints the peak and the limit. Exit 0 on success, 1 with the reason otherwise.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import fail, free_port, get, metric, skip, stop, wait  # noqa: E402

NRT = "noderesourcetopologies.topology.node.k8s.io"
PODS = 200
GOAL_MIB = 30  # issue 25: NFD's topology-updater is OOM-killed at 60 Mi on such nodes
# Linked from their static archives into podtopo-agent (cmd/podtopo-agent/CMakeLists.txt).
STATIC = ("libgrpc", "libgpr", "libprotobuf", "libabsl_", "libyaml-cpp", "libre2", "libcares",
          "libupb")
CHURN = 20  # pods removed and admitted again half-way


QUANTITY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "k": 10**3, "M": 10**6, "G": 10**9, "": 1}


def bytes_of(quantity):
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|k|M|G|)", str(quantity))
    if not m:
        fail(f"deploy/podtopo-agent.yaml: memory {quantity!r} is not a quantity such as 48Mi")
    return int(m.group(1)) * QUANTITY[m.group(2)]


def manifest_agent(repo):
    """The DaemonSet's agent container: its program (the basename of command[0]), its literal
    env values, and requests.memory and limits.memory in bytes."""
    path = os.path.join(repo, "deploy/podtopo-agent.yaml")
    for doc in yaml.safe_load_all(open(path)):
        if doc and doc.get("kind") == "DaemonSet":
            for c in doc["spec"]["template"]["spec"]["containers"]:
                if c["name"] == "agent":
                    r = c.get("resources", {})
                    limit = r.get("limits", {}).get("memory")
                    if limit is None:
                        fail(f"{path}: the agent container has no resources.limits.memory")
                    if not c.get("command"):
                        fail(f"{path}: the agent container has no command (the program it runs)")
                    env = {e["name"]: str(e["value"]) for e in c.get("env", []) if "value" in e}
                    return {"program": os.path.basename(c["command"][0]), "env": env,
                            "request": bytes_of(r.get("requests", {}).get("memory", limit)),
                            "limit": bytes_of(limit)}
    fail(f"{path}: no DaemonSet with a container named agent")


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        m = re.search(r"^" + field + r":\s+(\d+) kB$", f.read(), re.M)
    return int(m.group(1)) if m else 0


def kubelet_config(path):
    # The documentation's configuration (static CPU and memory policies, single-numa-node, pod
    # scope, PodLevelResourceManagers) with what a 34-NUMA-node machine of 200 pods needs.
    with open(path, "w") as f:
        f.write("""apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
featureGates: {PodLevelResources: true, PodLevelResourceManagers: true}
cpuManagerPolicy: static
memoryManagerPolicy: Static
topologyManagerPolicy: single-numa-node
topologyManagerScope: pod
topologyManagerPolicyOptions: {max-allowable-numa-nodes: "34"}
maxPods: 250
systemReserved: {cpu: "1", memory: 1Gi}
evictionHard: {memory.available: 100Mi}
reservedMemory:
- numaNode: 0
  limits: {memory: 1124Mi}
""")


def pod_manifests():
    """200 pods that all fit on gb200 (143 allocatable CPUs on NUMA nodes 0 and 1): 40 CPUs
    for Guaranteed pods, 8 for GPU pods, 80 for pod-level pods, 2.3 for Burstable ones."""
    def guaranteed(cpu, mem, extra=None):
        r = {"cpu": cpu, "memory": mem, **(extra or {})}
        return {"requests": r, "limits": r}
    pods = {}
    for i in range(40):
        pods[f"exclusive-{i}"] = {"containers": [
            {"name": "app", "image": "busybox", "resources": guaranteed("1", "1Gi")}]}
    for i in range(4):
        pods[f"gpu-{i}"] = {"containers": [
            {"name": "cuda", "image": "busybox",
             "resources": guaranteed("2", "2Gi", {"nvidia.com/gpu": "1"})}]}
    for i in range(40):  # KEP-5526: pod-level budget, an exclusive main, a native sidecar
        pods[f"pod-level-{i}"] = {
            "resources": guaranteed("2", "2Gi"),
            "initContainers": [{"name": "envoy", "image": "envoy", "restartPolicy": "Always"}],
            "containers": [{"name": "main", "image": "busybox", "resources": guaranteed("1", "1Gi")},
                           {"name": "log", "image": "busybox"}]}
    for i in range(PODS - len(pods)):
        pods[f"burstable-{i}"] = {"containers": [
            {"name": "web", "image": "nginx",
             "resources": {"requests": {"cpu": "20m", "memory": "64Mi"},
                           "limits": {"memory": "256Mi"}}}]}
    return {name: {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": name, "namespace": f"team-{n % 7}", "uid": f"uid-{name}"},
                   "spec": spec}
            for n, (name, spec) in enumerate(pods.items())}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    repo, podtopo, script, sanitize = args[:4]
    polls = next((int(f.split("=", 1)[1]) for f in flags if f.startswith("--polls=")), 40)
    if sanitize.upper() in ("ON", "1", "TRUE", "YES"):
        skip("a sanitizer build (PODTOPO_SANITIZE, or -fsanitize= in the flags): ASan's and "
             "TSan's shadow memory multiply the resident set, which then says nothing of the "
             "release agent's")
    with open(podtopo, "rb") as f:  # run by hand: the binary says what it carries
        binary = f.read()
    for runtime in (b"__asan_init", b"__tsan_init", b"__msan_init"):
        if runtime in binary:
            skip(f"{podtopo} is built with a sanitizer ({runtime.decode()}): its resident set "
                 "says nothing of the release agent's")
    bindir = os.path.join(os.path.dirname(script), "bin")
    if not shutil.which("etcd"):
        skip("etcd missing (apt-get install etcd-server; scripts/setup.sh test)")
    if not shutil.which("kubectl"):
        skip("kubectl missing (apt-get install kubernetes-client; scripts/setup.sh test)")
    for b in (script, os.path.join(bindir, "kube-apiserver")):
        if not os.access(b, os.X_OK):
            skip(f"{b} missing (../shared/runtime/kubernetes-1.20)")
    deployed = manifest_agent(repo)
    request, limit = deployed["request"], deployed["limit"]
    # The program the DaemonSet runs, from the same build as podtopo.
    program = os.path.join(os.path.dirname(os.path.abspath(podtopo)), deployed["program"])
    if not os.access(program, os.X_OK):
        fail(f"{program} missing: deploy/podtopo-agent.yaml runs {deployed['program']}, which the "
             "build makes next to podtopo")

    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="podtopo-rss-")
    cpdir = os.path.join(tmp, "cp")
    kubeconfig = os.path.join(cpdir, "admin.kubeconfig")
    procs = []
    cp = None

    def kubectl(*a, stdin=None):
        r = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, *a], input=stdin,
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            fail(f"kubectl {' '.join(a)}: {r.stderr.strip()}")
        return r.stdout

    try:
        # The control plane starts while serve admits the pods.
        cp = subprocess.Popen([script, "start", cpdir], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        pods_dir, state = os.path.join(tmp, "pods"), os.path.join(tmp, "state")
        os.makedirs(pods_dir)
        os.makedirs(state)
        config = os.path.join(tmp, "kubelet-config.yaml")
        kubelet_config(config)
        manifests = pod_manifests()
        for name, pod in manifests.items():
            with open(os.path.join(pods_dir, name + ".yaml"), "w") as f:
                yaml.safe_dump(pod, f)
        sock = os.path.join(tmp, "kubelet.sock")
        serve_log = os.path.join(tmp, "serve.log")
        serve = subprocess.Popen([podtopo, "serve", "--socket", sock, "--node", "preset:gb200",
                                  "--config", config, "--state-dir", state, "--pods-dir", pods_dir,
                                  "--rate-limit-qps", "0"],
                                 stdout=open(serve_log, "w"), stderr=subprocess.STDOUT)
        procs.append(serve)

        def admitted():
            text = open(serve_log).read()
            bad = re.findall(r"pod \S+ (?:rejected|not admitted): .*", text)
            if bad:
                fail(f"serve refused {len(bad)} pods, the first: {bad[0]}")
            if serve.poll() is not None:
                fail(f"podtopo serve exited: {text[-2000:]}")
            return len(set(re.findall(r"pod (\S+) admitted", text)))
        wait(f"serve to admit the {PODS} pods", lambda: admitted() == PODS)

        out, _ = cp.communicate(timeout=90)
        if cp.returncode != 0:
            fail(f"control-plane.sh start: {out}")
        kubectl("apply", "-f", os.path.join(repo, "deploy/noderesourcetopology-crd.yaml"))
        kubectl("wait", "--for=condition=Established", "--timeout=30s", f"crd/{NRT}")
        kubectl("create", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gb200-node"}}))

        port = free_port()
        # --podtopo-agent: measure `podtopo agent` instead, for comparison (docs/agent.md).
        agent_cmd = ([podtopo, "agent"] if "--podtopo-agent" in flags else [program]) + [
                     "--podresources-socket", sock, "--node", "preset:gb200",
                     "--config", config, "--metrics-addr", f"127.0.0.1:{port}",
                     "--interval", "250ms", "--kubeconfig", kubeconfig,
                     "--nrt-name", "gb200-node", "--nrt-resync", "1s",
                     "--nrt-out", os.path.join(tmp, "nrt.yaml")]
        if "--verify" in flags:
            # verify's core on every poll, against the PodResources intent and this machine's
            # cgroups; no runtime answers (its error is counted, as on a node whose
            # containerd is down).
            agent_cmd += ["--verify", "--kubelet-dir", state,
                          "--runtime-endpoint", f"unix://{tmp}/no-runtime.sock"]
        # As the DaemonSet runs it: with the container's literal env values.
        agent = subprocess.Popen(agent_cmd, stderr=open(os.path.join(tmp, "agent.log"), "w"),
                                 env={**os.environ, **deployed["env"]})
        procs.append(agent)
        url = f"http://127.0.0.1:{port}"

        def published():
            r = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "--raw",
                                "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies/gb200-node"],
                               capture_output=True, text=True, timeout=30)
            return json.loads(r.stdout) if r.returncode == 0 else None
        nrt = wait("the NodeResourceTopology in the API server", published)
        if len(nrt["zones"]) != 34:
            fail(f"the published object has {len(nrt['zones'])} zones, not gb200's 34")

        # Scrape everything between polls; half-way, churn pods so that the object changes.
        churned = False
        scrapes = {"/metrics": 0, "/nrt": 0, "/": 0}
        peak_rss = 0
        while True:
            for path in scrapes:
                body = get(url + path)
                if path == "/" and "<svg" not in body:
                    fail("/ is no picture")
                scrapes[path] += 1
            peak_rss = max(peak_rss, status_kib(agent.pid, "VmRSS"))
            text = get(url + "/metrics")
            done = metric(text, "podtopo_polls_total") or 0
            if metric(text, "podtopo_podresources_up") != 1:
                fail(f"the agent does not read serve: {text[:500]}")
            if not churned and done >= polls / 2:
                for name in list(manifests)[-CHURN:]:
                    os.rename(os.path.join(pods_dir, name + ".yaml"),
                              os.path.join(tmp, name + ".yaml"))
                time.sleep(1)
                for name in list(manifests)[-CHURN:]:
                    os.rename(os.path.join(tmp, name + ".yaml"),
                              os.path.join(pods_dir, name + ".yaml"))
                churned = True
            if done >= polls and churned:
                break
            if agent.poll() is not None:
                fail(f"the agent exited with {agent.returncode}")
            time.sleep(0.1)
        publishes = metric(text, "podtopo_nrt_publishes_total") or 0
        errors = sum(float(v) for v in re.findall(
            r"^podtopo_nrt_publish_errors_total\{[^}]*\} (\S+)$", text, re.M))
        if publishes < 3 or errors:
            fail(f"publishing: {publishes:.0f} writes, {errors:.0f} errors (want >= 3 writes, "
                 "no error)")
        hwm = status_kib(agent.pid, "VmHWM")
        with open(f"/proc/{agent.pid}/status") as f:
            threads = re.search(r"^Threads:\s+(\d+)$", f.read(), re.M).group(1)
        anon, files = status_kib(agent.pid, "RssAnon"), status_kib(agent.pid, "RssFile")
        with open(f"/proc/{agent.pid}/maps") as f:
            mapped = {line.split()[-1] for line in f if line.count("/") and ".so" in line}
        mib = hwm / 1024
        if "--smaps" in flags:  # where the resident set is, by mapping
            by = {}
            name = None
            shutil.copy(f"/proc/{agent.pid}/smaps", os.path.join(tmp, "agent.smaps"))
            for line in open(f"/proc/{agent.pid}/smaps"):
                if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                    parts = line.split()
                    name = (parts[5] if len(parts) > 5 else "[anon]") + " " + parts[1]
                elif line.startswith("Rss:"):
                    by[name] = by.get(name, 0) + int(line.split()[1])
            for n, kib in sorted(by.items(), key=lambda x: -x[1])[:int(os.environ.get("SMAPS_TOP", "25"))]:
                print(f"{kib:8d} KiB {n}")
        print(f"gb200, {PODS} pods, {done:.0f} polls, {publishes:.0f} NRT writes to the API "
              f"server, scrapes {scrapes}{', --verify' if '--verify' in flags else ''}: agent "
              f"peak RSS (VmHWM) {mib:.1f} MiB, sampled VmRSS max {peak_rss / 1024:.1f} MiB, now "
              f"{anon / 1024:.1f} MiB anonymous + {files / 1024:.1f} MiB of mapped files, "
              f"{threads} threads; deploy/ requests {request / 2**20:.0f} MiB, limit "
              f"{limit / 2**20:.0f} MiB")
        print(f"{len(mapped)} shared libraries mapped")
        if "--podtopo-agent" not in flags:
            loaded = sorted(m for m in mapped if any(os.path.basename(m).startswith(s) for s in STATIC))
            if loaded:
                fail(f"{program} maps {', '.join(loaded)}: its link did not take their static "
                     "archives (cmake/link_static_archives.sh)")
            if mib > GOAL_MIB:
                fail(f"the agent's peak RSS {mib:.1f} MiB exceeds issue 25's goal of {GOAL_MIB} MiB "
                     "(docs/agent.md, Memory): find what grew (--smaps)")
        if hwm * 1024 > limit and "--podtopo-agent" not in flags:
            fail(f"the agent's peak RSS {mib:.1f} MiB exceeds deploy/podtopo-agent.yaml's memory "
                 f"limit {limit / 2**20:.0f} MiB: set the limit from a new measurement (docs/agent.md, "
                 "Memory), or find what grew")
        print(f"ok ({time.time() - t0:.1f} s)")
    finally:
        stop(procs)
        if cp is not None and cp.poll() is None:  # failed while it starts: let it finish first
            try:
                cp.communicate(timeout=90)
            except subprocess.TimeoutExpired:
                cp.kill()
        subprocess.run([script, "stop", cpdir], capture_output=True, timeout=60)
        if "--keep" in flags:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
