#!/usr/bin/env python3
"""Crash consistency of `podtopo serve --state-dir`: SIGKILL at random points while pod
manifests are added, changed and removed and clients call List and Get.

    kill_test.py --podtopo BIN --proto-root DIR [--kills N] [--seed S] [--cri] [--work DIR]

Each round: the daemon runs; a writer thread adds, changes (resources or labels only) and
removes manifests (atomically: a dot-file renamed into place, as editors and kubectl-like tools
write them); two client threads call List and Get; after a random delay (0-400 ms) the daemon
gets SIGKILL. Then it is started again on the same state and pods directories, and once it
answers, the checks run:
  * the state loads (the daemon starts and List answers; no FAILED_PRECONDITION for long);
  * no admitted pod is lost or duplicated: List names exactly the pods of the manifests, each
    once (every pod of the pool fits, so every manifest's pod must be admitted);
  * the answers match the manifests: containers (sidecars, then apps), pod-level CPUs and each
    exclusive container's CPUs as many as the manifest asks, no CPU held twice;
  * allocations survive: a pod whose manifest was not touched since the last check keeps
    exactly its CPUs and memory;
  * Get answers each pod as List does;
  * no temporary file of a killed daemon's state write is left (the restart removes them);
  * with --cri (a private containerd, as tests/e2e): no pod has two ready sandboxes, no sandbox
    two containers of one name (a smaller count is fine: containers may still be starting).
Prints one line per 50 kills and a summary "kills: N, rounds verified: N, lost: 0, duplicated: 0".
Exit 0 = every check held, 1 = a failure (the round, the check and the daemon's log tail),
77 = skipped (reason printed)."""
import argparse
import os
import random
import shutil
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

import serve_e2e  # noqa: E402  (tests/e2e: the daemon and the check helpers)
from harness import IMAGE  # noqa: E402  (the busybox image of the private containerd)
from serve_e2e import Failure, check  # noqa: E402

# ---- the pod pool -------------------------------------------------------------------------

class PodSpec:
    """One manifest of the pool and what the API must report for it."""

    def __init__(self, name, kind, cpu, version=0, label=0, sizes=(2, 3)):
        self.name, self.kind, self.cpu, self.version, self.label = name, kind, cpu, version, label
        self.sizes = sizes  # the two CPU sizes a change alternates between

    def resized(self):
        small, large = self.sizes
        return PodSpec(self.name, self.kind, small if self.cpu == large else large,
                       self.version + 1, self.label, self.sizes)

    def relabelled(self):
        return PodSpec(self.name, self.kind, self.cpu, self.version, self.label + 1, self.sizes)

    def yaml(self):
        meta = f"metadata: {{name: {self.name}, labels: {{rev: \"{self.label}\"}}}}\n"
        mem = "256Mi"
        if self.kind == "pod-level":
            # A pod-level bubble: one exclusive app container, one sidecar in the shared pool.
            return ("apiVersion: v1\nkind: Pod\n" + meta + "spec:\n"
                    f"  resources: {{requests: {{cpu: \"{self.cpu}\", memory: 512Mi}}, "
                    f"limits: {{cpu: \"{self.cpu}\", memory: 512Mi}}}}\n"
                    f"  initContainers:\n  - {{name: side, image: {IMAGE}, restartPolicy: Always}}\n"
                    f"  containers:\n  - name: app\n    image: {IMAGE}\n"
                    f"    resources: {{limits: {{cpu: \"1\", memory: {mem}}}}}\n")
        if self.kind == "guaranteed":
            return ("apiVersion: v1\nkind: Pod\n" + meta + "spec:\n  containers:\n"
                    f"  - name: app\n    image: {IMAGE}\n"
                    f"    resources: {{limits: {{cpu: \"{self.cpu}\", memory: {mem}}}}}\n")
        return ("apiVersion: v1\nkind: Pod\n" + meta + "spec:\n  containers:\n"
                f"  - name: app\n    image: {IMAGE}\n"
                f"    resources: {{requests: {{cpu: {self.cpu * 100}m, memory: 64Mi}}}}\n")

    def containers(self):
        return ["side", "app"] if self.kind == "pod-level" else ["app"]

    def pod_cpus(self):
        return self.cpu if self.kind == "pod-level" else 0

    def exclusive(self):
        """container -> CPUs it must report."""
        if self.kind == "pod-level":
            return {"app": 1}
        if self.kind == "guaranteed":
            return {"app": self.cpu}
        return {}


def pool(cri):
    if cri:
        # --node local on a small machine: only shared-pool pods fit everywhere, and all four
        # at their larger size (200m) must fit the 1,000m a 2-CPU machine leaves (at 300m, as
        # before, four did not: the daemon rightly refused the last one, OutOfcpu).
        return [PodSpec(f"p{i}", "burstable", 1, sizes=(1, 2)) for i in range(4)]
    kinds = ["pod-level", "guaranteed", "burstable"]
    return [PodSpec(f"p{i}", kinds[i % 3], 2 + i % 2) for i in range(9)]


def daemon(args, work, endpoint=None, cgroup_root=None, metrics=False):
    """`podtopo serve` on `work` as every reliability test runs it: no rate limit, warnings
    only; on the private containerd (--node local) with `endpoint`, else on preset:demo."""
    return serve_e2e.Serve(args.podtopo, work, endpoint, cgroup_root,
                           node="local" if endpoint else "preset:demo",
                           flags=["--rate-limit-qps", "0", "--log-level", "warn"],
                           metrics=metrics)


def stale_temporary_files(state_dir, writer_pid=None):
    """WriteFileAtomically's temporary files in the state dir, but for those of `writer_pid`
    (a live daemon may be writing)."""
    return sorted(n for n in os.listdir(state_dir) if ".tmp-" in n
                  and (writer_pid is None or not n.endswith(f".tmp-{writer_pid}")))


def cri_duplicates(cri, pb):
    """What the CRI runtime runs twice: a pod with two ready sandboxes, a sandbox with two
    live containers of one name. [] when nothing is duplicated."""
    problems = []
    ready = {}
    for sb in cri.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=10).items:
        if sb.state == pb.SANDBOX_READY:
            uid = sb.labels.get("io.kubernetes.pod.uid", "")
            if uid in ready:
                problems.append(f"pod {sb.metadata.name}: two ready sandboxes {ready[uid]} and "
                                f"{sb.id[:13]}")
            ready[uid] = sb.id[:13]
    seen = set()
    for c in cri.ListContainers(pb.ListContainersRequest(), timeout=10).containers:
        if c.state in (pb.CONTAINER_CREATED, pb.CONTAINER_RUNNING):
            key = (c.pod_sandbox_id, c.metadata.name)
            if key in seen:
                problems.append(f"sandbox {c.pod_sandbox_id[:13]}: two live containers named "
                                f"{c.metadata.name}")
            seen.add(key)
    return problems


def grpc_missing():
    """Why the reliability tests cannot call gRPC here, or None: python grpc (Debian's, under
    /usr/bin/python3), protoc and grpc_python_plugin (for the stubs)."""
    try:
        import grpc  # noqa: F401
    except ImportError as e:
        return f"python grpc missing ({e}); run with /usr/bin/python3"
    if shutil.which("protoc") is None or shutil.which("grpc_python_plugin") is None:
        return "protoc or grpc_python_plugin not found"
    return None


def start_containerd(cri_pb, cri_grpc, cgroup_root):
    """A private containerd (tests/e2e/harness.py) with the busybox image; (env, CRI stub).
    Raises harness.Skip with the reason when it cannot run here."""
    import harness
    env = harness.PrivateContainerd.create(cgroup_root=cgroup_root)
    env.stubs = (cri_pb, cri_grpc)
    try:
        env.start()
        env.import_image()
        return env, env.cri(cri_grpc)
    except Exception:
        env.teardown()
        raise


# ---- the test -------------------------------------------------------------------------------

class KillTest:
    def __init__(self, args, pr_pb, pr_grpc, grpc, work, cri_env=None, cri_pb=None, cri=None):
        self.args = args
        self.pr_pb, self.pr_grpc, self.grpc = pr_pb, pr_grpc, grpc
        self.rng = random.Random(args.seed)
        self.cri_env, self.cri_pb, self.cri = cri_env, cri_pb, cri
        self.daemon = daemon(args, work, cri_env.endpoint if cri_env else None,
                             cri_env.cgroup_root if cri_env else None)
        self.specs = {s.name: s for s in pool(cri_env is not None)}
        self.present = {}        # name -> PodSpec currently in the pods dir
        self.touched = set()     # names written or removed since the last check
        self.last = {}           # name -> (cpu_ids, memory) at the last check
        self.stats = {"kills": 0, "verified": 0, "ops": 0, "calls": 0, "call_errors": 0,
                      "lost": 0, "duplicated": 0, "temps_left": 0}
        self.stop_churn = threading.Event()

    # manifests
    def write(self, spec):
        path = os.path.join(self.daemon.pods, spec.name + ".yaml")
        tmp = os.path.join(self.daemon.pods, "." + spec.name + ".yaml.tmp")
        with open(tmp, "w") as f:
            f.write(spec.yaml())
        os.replace(tmp, path)
        self.present[spec.name] = spec
        self.touched.add(spec.name)

    def remove(self, name):
        os.unlink(os.path.join(self.daemon.pods, name + ".yaml"))
        del self.present[name]
        self.touched.add(name)

    def churn_once(self):
        names = sorted(self.specs)
        name = self.rng.choice(names)
        op = self.rng.random()
        if name not in self.present:
            self.write(self.specs[name])
        elif op < 0.35:
            self.remove(name)
        elif op < 0.7:
            s = self.present[name]
            # Another resource model (re-admission) or the same one with new labels.
            if self.rng.random() < 0.5:
                self.write(s.resized())
            else:
                self.write(s.relabelled())
        else:
            self.write(self.present[name])
        self.stats["ops"] += 1

    def churn(self):
        while not self.stop_churn.is_set():
            try:
                self.churn_once()
            except OSError:
                pass
            time.sleep(self.rng.random() * 0.01)

    # clients
    def stub(self):
        ch = self.grpc.insecure_channel("unix://" + self.daemon.socket, options=[
            ("grpc.initial_reconnect_backoff_ms", 20), ("grpc.min_reconnect_backoff_ms", 20),
            ("grpc.max_reconnect_backoff_ms", 100)])
        return ch, self.pr_grpc.PodResourcesListerStub(ch)

    def call_loop(self, seed):
        rng = random.Random(seed)
        ch, stub = self.stub()
        try:
            while not self.stop_churn.is_set():
                try:
                    if rng.random() < 0.5:
                        stub.List(self.pr_pb.ListPodResourcesRequest(), timeout=2)
                    else:
                        stub.Get(self.pr_pb.GetPodResourcesRequest(
                            pod_name=f"p{rng.randrange(len(self.specs))}",
                            pod_namespace="default"), timeout=2)
                    self.stats["calls"] += 1
                except self.grpc.RpcError:
                    self.stats["call_errors"] += 1  # NOT_FOUND, not restored, killed: expected
                    time.sleep(0.005)
        finally:
            ch.close()

    def list_when_ready(self, stub, timeout=30):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            check(self.daemon.proc.poll() is None,
                  f"the daemon exited {self.daemon.proc.returncode} after a restart:\n"
                  + self.daemon.tail())
            try:
                return stub.List(self.pr_pb.ListPodResourcesRequest(), timeout=5)
            except self.grpc.RpcError as e:
                last = e
                time.sleep(0.02)
        raise Failure(f"List did not answer within {timeout} s after a restart: {last}\n"
                      + self.daemon.tail())

    def settled(self, stub, timeout=20):
        """List once it names exactly the manifests' pods (the daemon has caught up)."""
        deadline = time.monotonic() + timeout
        want = sorted(self.present)
        while True:
            resp = self.list_when_ready(stub)
            names = [p.name for p in resp.pod_resources]
            if sorted(names) == want and self.models_match(resp):
                return resp
            if time.monotonic() > deadline:
                lost = sorted(set(want) - set(names))
                extra = sorted(set(names) - set(want))
                dups = sorted({n for n in names if names.count(n) > 1})
                self.stats["lost"] += len(lost)
                self.stats["duplicated"] += len(dups) + len(extra)
                raise Failure(f"after {timeout} s List still differs from the manifests: "
                              f"lost {lost}, not in any manifest {extra}, duplicated {dups}, "
                              f"answers {self.describe(resp)}\n" + self.daemon.tail())
            time.sleep(0.05)

    def describe(self, resp):
        out = []
        for p in resp.pod_resources:
            spec = self.present.get(p.name)
            want = (spec.pod_cpus(), spec.exclusive()) if spec else None
            out.append(f"{p.name}: pod cpus {len(p.cpu_ids)}, containers "
                       f"{[(c.name, len(c.cpu_ids)) for c in p.containers]} (manifest: {want})")
        return "; ".join(out)

    def models_match(self, resp):
        for p in resp.pod_resources:
            spec = self.present.get(p.name)
            if spec is None or len(p.cpu_ids) != spec.pod_cpus():
                return False
            for c in p.containers:
                if len(c.cpu_ids) != spec.exclusive().get(c.name, 0):
                    return False
        return True

    def verify(self, stub):
        resp = self.settled(stub)
        stale = stale_temporary_files(self.daemon.state, self.daemon.proc.pid)
        check(not stale, f"temporary files of a killed daemon left after the restart: {stale}")
        held = {}
        for p in resp.pod_resources:
            spec = self.present[p.name]
            check(p.namespace == "default", f"{p.name}: namespace {p.namespace}")
            check([c.name for c in p.containers] == spec.containers(),
                  f"{p.name}: containers {[c.name for c in p.containers]}, manifest has "
                  f"{spec.containers()}")
            cpus = set(p.cpu_ids)
            for c in p.containers:
                check(set(c.cpu_ids) <= cpus or not cpus,
                      f"{p.name}/{c.name}: CPUs {sorted(c.cpu_ids)} outside the pod's {sorted(cpus)}")
                if not cpus:
                    for cpu in c.cpu_ids:
                        check(cpu not in held, f"CPU {cpu} held by {p.name} and {held.get(cpu)}")
                        held[cpu] = p.name
            for cpu in cpus:
                check(cpu not in held, f"CPU {cpu} held by {p.name} and {held.get(cpu)}")
                held[cpu] = p.name
            alloc = (sorted(p.cpu_ids) + [sorted(c.cpu_ids) for c in p.containers],
                     sorted((m.memory_type, m.size, tuple(n.ID for n in m.topology.nodes))
                            for c in list(p.containers) + [p] for m in c.memory))
            if p.name in self.last and p.name not in self.touched:
                check(self.last[p.name] == alloc,
                      f"{p.name}: its manifest did not change, yet its allocation did after the "
                      f"restart: {self.last[p.name]} -> {alloc}")
            self.last[p.name] = alloc
            got = stub.Get(self.pr_pb.GetPodResourcesRequest(pod_name=p.name,
                                                              pod_namespace="default"), timeout=5)
            check(got.pod_resources == p, f"{p.name}: Get differs from List")
        for name in list(self.last):
            if name not in self.present:
                del self.last[name]
        if self.cri is not None:
            self.verify_cri()
        self.touched.clear()
        self.stats["verified"] += 1

    def verify_cri(self):
        problems = cri_duplicates(self.cri, self.cri_pb)
        check(not problems, "; ".join(problems))

    def round(self, index):
        self.daemon.start()
        self.stop_churn.clear()
        ch, stub = self.stub()
        try:
            self.verify(stub)
            threads = [threading.Thread(target=self.churn)] + [
                threading.Thread(target=self.call_loop, args=(index * 10 + k,)) for k in range(2)]
            for t in threads:
                t.start()
            time.sleep(self.rng.random() * 0.4)
            self.daemon.kill9()
            self.stats["kills"] += 1
            # A kill in the middle of a state write leaves its temporary file; the next start
            # must remove it (verify checks).
            self.stats["temps_left"] += len(stale_temporary_files(self.daemon.state))
            self.stop_churn.set()
            for t in threads:
                t.join()
        finally:
            ch.close()

    def run(self):
        t0 = time.monotonic()
        for name in sorted(self.specs)[: len(self.specs) // 2]:
            self.write(self.specs[name])
        for i in range(self.args.kills):
            self.round(i)
            if (i + 1) % 50 == 0 or i + 1 == self.args.kills:
                print(f"kill_test: {i + 1} kills, {self.stats['ops']} manifest changes, "
                      f"{self.stats['calls']} calls answered, {time.monotonic() - t0:.0f} s",
                      flush=True)
        # The state after the last kill.
        self.daemon.start()
        ch, stub = self.stub()
        try:
            self.verify(stub)
        finally:
            ch.close()
            self.daemon.stop()
        s = self.stats
        print(f"kill_test: kills: {s['kills']}, rounds verified: {s['verified']}, manifest "
              f"changes: {s['ops']}, calls answered: {s['calls']} (errors while killing/"
              f"restarting: {s['call_errors']}), temporary files left by a kill and removed at "
              f"restart: {s['temps_left']}, lost: {s['lost']}, duplicated: "
              f"{s['duplicated']}, {time.monotonic() - t0:.1f} s", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--podtopo", required=True)
    ap.add_argument("--proto-root", required=True)
    ap.add_argument("--kills", type=int, default=30)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--cri", action="store_true", help="run the pods on a private containerd")
    ap.add_argument("--work", help="keep the work directory here (default: a temp dir, removed)")
    args = ap.parse_args()
    print(f"kill_test: seed {args.seed}", flush=True)
    reason = grpc_missing()
    if reason:
        print(f"SKIP: {reason}", flush=True)
        return 77
    import grpc
    import harness
    work = args.work or tempfile.mkdtemp(prefix="podtopo-kill-")
    os.makedirs(work, exist_ok=True)
    env = None
    cri = cri_pb = None
    try:
        cri_pb, cri_grpc, pr_pb, pr_grpc = harness.generate_stubs(args.proto_root,
                                                                  os.path.join(work, "gen"))
        cri = None
        if args.cri:
            try:
                env, cri = start_containerd(cri_pb, cri_grpc, f"podtopo-kill-{os.getpid()}")
            except harness.Skip as e:
                print(f"SKIP: {e}", flush=True)
                return 77
        else:
            cri_pb = None
        test = KillTest(args, pr_pb, pr_grpc, grpc, os.path.join(work, "serve"), env, cri_pb, cri)
        try:
            test.run()
        except Failure as f:
            print(f"FAIL (seed {args.seed}, after {test.stats['kills']} kills): {f}", flush=True)
            return 1
        finally:
            test.daemon.kill9()
        return 0
    finally:
        if env is not None:
            env.teardown(cri, cri_pb)
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
