#!/usr/bin/env python3
"""Faults of the environment of `podtopo serve --state-dir`: each must give a clear error (the
log names the file and the reason), leave the daemon alive and answering, and lose or
half-write nothing on disk.

    fault_test.py --podtopo BIN --proto-root DIR [--only NAME,...] [--cri] [--seed S]

Scenarios (each on its own daemon and directories):
  full-fs          the state dir is a small tmpfs, filled up; a pod admitted then fails to be
                   written; after space is freed the next change is written (needs mount)
  read-only        the state dir's tmpfs is remounted read-only under the daemon (needs mount)
  permission       the daemon runs as uid 65534 and its state dir is made 0500 under it
  checkpoint-gone  cpu_manager_state deleted, memory_manager_state replaced by garbage under
                   the running daemon; the next change rewrites both, and a restart loads them
  pods-dir         the pods dir is removed (pods released) and created again (watched again)
  cri-killed       (--cri: a private containerd, tests/e2e/harness.py) containerd SIGKILLed 3
                   times at a random point of the 1 s reconcile period, once while a pod starts:
                   the log names the runtime as unavailable, the daemon keeps answering, and
                   once containerd is back every pod runs exactly once
For every scenario after the fault: the state files that exist each parse (podtopo's own
checks: `podtopo state check`), no temporary file is left in the state dir, the pods recorded in
podtopo_pods.json are exactly the pods List reports, and the daemon still answers.
A scenario that cannot run here (no mount permission, not root) is reported as SKIP with the
reason. Exit 0 = every scenario that ran passed (and at least one ran), 1 = a failure,
77 = nothing could run."""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import kill_test  # noqa: E402
from kill_test import PodSpec  # noqa: E402
from serve_e2e import Failure, check, metric_value, poll  # noqa: E402

STATE_FILES = ["cpu_manager_state", "memory_manager_state", "podtopo_pods.json"]


class Skip(Exception):
    pass


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    r = run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", path])
    if r.returncode != 0:
        raise Skip(f"cannot mount a tmpfs on {path}: {r.stderr.strip() or r.returncode}")


def umount(path):
    run(["umount", path])
    if os.path.ismount(path):
        run(["umount", "-l", path])


class Env:
    """One daemon with its directories and a PodResources client."""

    def __init__(self, args, grpc, pr_pb, pr_grpc, work, runtime=None):
        """runtime: (private containerd, its CRI stub, the CRI protobuf module), or None."""
        self.args, self.grpc, self.pr_pb, self.pr_grpc = args, grpc, pr_pb, pr_grpc
        self.work = work
        self.runtime = runtime
        containerd = runtime[0] if runtime else None
        self.daemon = kill_test.daemon(args, work, containerd and containerd.endpoint,
                                       containerd and containerd.cgroup_root,
                                       metrics=containerd is not None)
        self.user = None
        self.channel = None

    def start(self):
        if self.user is not None:
            # As another user: the daemon's directories and files must be theirs.
            for d in (self.daemon.pods, self.daemon.state, self.daemon.config, self.work):
                os.chown(d, self.user, self.user)
            self.daemon.user = self.user
        self.daemon.start()
        self.channel = self.grpc.insecure_channel("unix://" + self.daemon.socket)
        self.stub = self.pr_grpc.PodResourcesListerStub(self.channel)
        self.list()

    def close(self):
        if self.channel is not None:
            self.channel.close()
            self.channel = None

    def stop(self):
        self.close()
        self.daemon.stop()

    def kill9(self):
        self.close()
        self.daemon.kill9()

    def alive(self):
        self.daemon.alive()

    def until(self, what, fn, timeout):
        """fn() until it is truthy (the daemon must stay alive); Failure naming `what` after
        `timeout` seconds."""
        def attempt():
            self.alive()
            return fn()
        v, _ = poll(attempt, timeout, interval=0.05)
        if not v:
            raise Failure(f"{what} (after {timeout} s)\n" + self.daemon.tail())
        return v

    def list(self, timeout=20):
        def answer():
            try:
                return self.stub.List(self.pr_pb.ListPodResourcesRequest(), timeout=5)
            except self.grpc.RpcError:
                return None
        return self.until("List does not answer", answer, timeout)

    def names(self):
        return sorted(p.name for p in self.list().pod_resources)

    def wait_names(self, want, timeout=10):
        self.until(f"List does not report {sorted(want)} (it reports {self.names()})",
                   lambda: self.names() == sorted(want), timeout)

    def log_size(self):
        return os.path.getsize(self.daemon.log_path)

    def wait_log(self, needle, timeout=10, since=0):
        """Waits until the log, from byte `since` on, says `needle`; returns that line."""
        def said():
            with open(self.daemon.log_path, "rb") as f:
                f.seek(since)
                return next((l for l in f.read().decode(errors="replace").splitlines()
                             if needle in l), None)
        return self.until(f"the log never said {needle!r}", said, timeout)

    def write_refused(self, name, error, before, names):
        """Adds pod `name` while writes fail with `error`: the log says it, the daemon lives,
        List still reports `names` and the state files are still `before`."""
        self.write_pod(name)
        self.wait_log(error)
        time.sleep(0.3)
        self.alive()
        check(self.names() == names, f"{error}: List reports {self.names()}, expected {names}")
        check(self.state_bytes() == before, f"{error}: the state files changed although the "
              "write failed")

    def write_pod(self, name, cpu=2, label=0, kind="guaranteed"):
        spec = PodSpec(name, kind, cpu, label=label)
        tmp = os.path.join(self.daemon.pods, f".{name}.tmp")
        with open(tmp, "w") as f:
            f.write(spec.yaml())
        os.replace(tmp, os.path.join(self.daemon.pods, name + ".yaml"))

    def state_bytes(self):
        out = {}
        for n in STATE_FILES:
            p = os.path.join(self.daemon.state, n)
            if os.path.exists(p):
                with open(p, "rb") as f:
                    out[n] = f.read()
        return out

    def check_disk(self):
        """The state files parse, no temporary file is left, the record is what List says."""
        state = self.daemon.state
        # (The live daemon's own may be there: it may be writing right now.)
        leftovers = kill_test.stale_temporary_files(state, self.daemon.proc.pid)
        check(not leftovers, f"temporary files left in the state dir: {leftovers}")
        r = run([self.args.podtopo, "state", "check", "--kubelet-dir", state, "--node",
                 self.daemon.node, "--config", self.daemon.config, "-o", "json"])
        check(r.returncode in (0, 4), f"podtopo state check on the state dir: exit "
              f"{r.returncode}\n{r.stdout}\n{r.stderr}")
        record = os.path.join(state, "podtopo_pods.json")
        if os.path.exists(record):
            with open(record) as f:
                recorded = sorted(e["pod"]["name"] for e in json.load(f)["pods"])
            check(recorded == self.names(), f"podtopo_pods.json holds {recorded}, List reports "
                  f"{self.names()}")


# ---- scenarios --------------------------------------------------------------------------

def full_fs(env):
    mount_tmpfs(env.daemon.state, "256k")
    try:
        env.start()
        env.write_pod("a")
        env.wait_names(["a"])
        before = env.state_bytes()
        filler = os.path.join(env.daemon.state, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        env.write_refused("b", "No space left on device", before, ["a"])
        env.wait_log("pod default/b not admitted")
        os.unlink(filler)
        env.check_disk()
        # Space is back: the next change is written, and the failed pod holds nothing.
        env.write_pod("c")
        env.wait_names(["a", "c"])
        env.check_disk()
        env.stop()
        env.start()
        env.wait_names(["a", "b", "c"])  # b's manifest is still there: admitted at start
        env.check_disk()
    finally:
        env.stop()
        umount(env.daemon.state)


def read_only(env):
    mount_tmpfs(env.daemon.state, "4m")
    try:
        env.start()
        env.write_pod("a")
        env.wait_names(["a"])
        before = env.state_bytes()
        r = run(["mount", "-o", "remount,ro", env.daemon.state])
        if r.returncode != 0:
            raise Skip(f"cannot remount {env.daemon.state} read-only: {r.stderr.strip()}")
        env.write_refused("b", "Read-only file system", before, ["a"])
        os.unlink(os.path.join(env.daemon.pods, "a.yaml"))  # a release fails to be written too
        env.wait_log("pod default/a")
        time.sleep(0.3)
        env.alive()
        check(env.state_bytes() == before, "the state files changed on a read-only file system")
        run(["mount", "-o", "remount,rw", env.daemon.state])
        env.write_pod("c")
        env.wait_names(["c"])
        env.check_disk()
        env.stop()
        env.start()
        env.wait_names(["b", "c"])
        env.check_disk()
    finally:
        env.stop()
        umount(env.daemon.state)


def permission(env):
    if os.geteuid() != 0:
        raise Skip("not root: cannot run the daemon as uid 65534")
    env.user = 65534
    os.chmod(env.work, 0o755)
    env.start()
    try:
        env.write_pod("a")
        env.wait_names(["a"])
        before = env.state_bytes()
        os.chmod(env.daemon.state, 0o500)
        env.write_refused("b", "Permission denied", before, ["a"])
        os.chmod(env.daemon.state, 0o700)
        env.write_pod("c")
        env.wait_names(["a", "c"])
        env.check_disk()
    finally:
        env.stop()


def checkpoint_gone(env):
    env.start()
    try:
        env.write_pod("a")
        env.wait_names(["a"])
        os.unlink(os.path.join(env.daemon.state, "cpu_manager_state"))
        with open(os.path.join(env.daemon.state, "memory_manager_state"), "w") as f:
            f.write("{garbage")
        time.sleep(0.2)
        env.alive()
        env.write_pod("b")
        env.wait_names(["a", "b"])
        env.check_disk()
        allocs = {p.name: list(p.containers[0].cpu_ids) for p in env.list().pod_resources}
        env.stop()
        env.start()
        env.wait_names(["a", "b"])
        after = {p.name: list(p.containers[0].cpu_ids) for p in env.list().pod_resources}
        check(after == allocs, f"allocations changed over the restart: {allocs} -> {after}")
        env.check_disk()
    finally:
        env.stop()


def pods_dir(env):
    env.start()
    try:
        env.write_pod("a")
        env.wait_names(["a"])
        shutil.rmtree(env.daemon.pods)
        env.wait_names([])
        env.alive()
        os.makedirs(env.daemon.pods)
        env.write_pod("b")
        env.wait_names(["b"])
        env.check_disk()
    finally:
        env.stop()


def cri_killed(env):
    """containerd SIGKILLed at random points of the reconcile period (1 s), once while a pod is
    being started: each time the log says the runtime is unavailable, naming it, the daemon
    keeps answering, and once containerd is back every pod runs once (nothing duplicated)."""
    if env.runtime is None:
        raise Skip("needs --cri (a private containerd)")
    containerd, cri, pb = env.runtime
    rng = random.Random(env.args.seed)

    def pods_run(names):
        """Each pod of `names` has one ready sandbox with its app container running, and
        nothing else runs; nothing is duplicated."""
        problems = kill_test.cri_duplicates(cri, pb)
        check(not problems, "; ".join(problems))
        ready = {sb.id: sb.metadata.name for sb in
                 cri.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=10).items
                 if sb.state == pb.SANDBOX_READY}
        running = sorted(ready[c.pod_sandbox_id] for c in
                         cri.ListContainers(pb.ListContainersRequest(), timeout=10).containers
                         if c.state == pb.CONTAINER_RUNNING and c.pod_sandbox_id in ready)
        return sorted(ready.values()) == sorted(names) and running == sorted(names)

    def runtime_up(want):
        """podtopo_runtime_up is `want`: the daemon has noticed (not containerd's shims, which
        outlive containerd and keep the pods running)."""
        return metric_value(env.daemon.metrics(), "podtopo_runtime_up") == want

    env.start()
    try:
        names = ["a", "b"]
        for n in names:
            env.write_pod(n, cpu=1, kind="burstable")
        env.until(f"pods {names} never ran on containerd", lambda: pods_run(names), 60)
        for i in range(3):
            env.until("podtopo_runtime_up is not 1", lambda: runtime_up(1), 20)
            since = env.log_size()
            if i == 1:  # this kill lands while pod c is being started
                names.append("c")
                env.write_pod("c", cpu=1, kind="burstable")
            time.sleep(rng.random() * (0.2 if i == 1 else 1.0))
            containerd.kill9()
            line = env.wait_log("is unavailable", since=since)
            check(containerd.endpoint in line, f"the error does not name the runtime: {line}")
            env.until("podtopo_runtime_up did not drop to 0", lambda: runtime_up(0), 10)
            time.sleep(1.5)  # reconcile passes without the runtime
            env.alive()
            env.list()
            containerd.start()
            env.until("podtopo_runtime_up did not come back to 1", lambda: runtime_up(1), 20)
            env.until(f"after containerd came back, pods {names} do not each run once",
                      lambda: pods_run(names), 60)
            env.wait_names(names)
        env.check_disk()
    finally:
        env.stop()


SCENARIOS = {"full-fs": full_fs, "read-only": read_only, "permission": permission,
             "checkpoint-gone": checkpoint_gone, "pods-dir": pods_dir, "cri-killed": cri_killed}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--podtopo", required=True)
    ap.add_argument("--proto-root", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--cri", action="store_true",
                    help="start a private containerd for the cri-killed scenario")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    print(f"fault_test: seed {args.seed}", flush=True)
    reason = kill_test.grpc_missing()
    if reason:
        print(f"SKIP: {reason}", flush=True)
        return 77
    import grpc
    import harness
    base = tempfile.mkdtemp(prefix="podtopo-faults-")
    os.chmod(base, 0o755)
    ran = failed = 0
    containerd = cri = cri_pb = None
    try:
        cri_pb, cri_grpc, pr_pb, pr_grpc = harness.generate_stubs(args.proto_root,
                                                                  os.path.join(base, "gen"))
        names = [n for n in args.only.split(",") if n] or list(SCENARIOS)
        if args.cri and "cri-killed" in names:
            try:
                containerd, cri = kill_test.start_containerd(cri_pb, cri_grpc,
                                                             f"podtopo-faults-{os.getpid()}")
            except harness.Skip as e:
                print(f"fault_test: cri-killed: SKIP: {e}", flush=True)
                names.remove("cri-killed")
        for name in names:
            work = os.path.join(base, name)
            os.makedirs(work)
            env = Env(args, grpc, pr_pb, pr_grpc, work,
                      (containerd, cri, cri_pb) if name == "cri-killed" and cri else None)
            t0 = time.monotonic()
            try:
                SCENARIOS[name](env)
                ran += 1
                print(f"fault_test: {name}: PASS ({time.monotonic() - t0:.1f} s)", flush=True)
            except Skip as e:
                print(f"fault_test: {name}: SKIP: {e}", flush=True)
            except Failure as e:
                ran += 1
                failed += 1
                print(f"fault_test: {name}: FAIL: {e}", flush=True)
            finally:
                env.kill9()
    finally:
        if containerd is not None:
            if containerd.proc is None or containerd.proc.poll() is not None:
                containerd.start()  # so that the CRI path cleans up
            containerd.teardown(cri, cri_pb)
        for d in sorted((os.path.join(base, n, "state") for n in SCENARIOS), reverse=True):
            if os.path.ismount(d):
                umount(d)
        shutil.rmtree(base, ignore_errors=True)
    if failed:
        return 1
    return 0 if ran else 77


if __name__ == "__main__":
    sys.exit(main())
