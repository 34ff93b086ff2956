"""End to end: `podtopo verify` on a private containerd with pods that `podtopo serve --cri`
placed, on this machine's real cgroup v1 hierarchy.

    verify_e2e.py --podtopo BIN --proto-root DIR --pods DIR

1. clean: be-shared (node pool) and exclusive (CPU 1) run as podtopo enforced them: verify
   exits 0 with both containers joined to the checkpoints in serve's state dir.
2. drift: serve is killed (SIGKILL: the pods keep running, nothing corrects the cpuset any
   more) and the be-shared container's cpuset.cpus is written by hand: `cpuset-drift` (and
   `shared-exclusive-cpu`, since it now holds the exclusive CPU).
3. intruder: a host `sleep` pinned with taskset onto the exclusive CPU: `foreign-task` with its
   pid; with --sample, a busy host loop pinned there has CPU time.
Exit 0 = passed, 1 = a failure, 77 = skipped (reason printed). Everything is torn down; the run
fails if anything is left behind. Memory on a remote NUMA node cannot be planted on a one-node
machine: that finding is tested with fixtures only (src/verify/verify_test.cc)."""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from serve_e2e import Failure, Suite, check  # noqa: E402


def verify(args, suite, *extra):
    cmd = [args.podtopo, "verify", "-o", "json", "--kubelet-dir", suite.serve.state,
           "--runtime-endpoint", suite.env.endpoint, "--cgroup-root", harness.CGROUP_MOUNT,
           *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        raise Failure(f"verify printed no JSON (exit {r.returncode}): {r.stdout[:500]} {r.stderr}")
    return r.returncode, out, r.stderr


def ours(out, uids):
    """Findings about the test's pods (the host may have others of its own)."""
    return [f for f in out["findings"]
            if f["pod"] in ("be-shared", "exclusive") or f["pod"] in uids]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--podtopo", required=True)
    ap.add_argument("--proto-root", required=True)
    ap.add_argument("--pods", required=True)
    args = ap.parse_args()
    if os.cpu_count() < 2:
        print("SKIP: needs 2 CPUs (one exclusive)")
        return 77
    root = f"podtopo-e2e-{os.getpid()}"
    try:
        env = harness.PrivateContainerd.create(root)
    except harness.Skip as e:
        print(f"SKIP: {e}")
        return 77
    failures, cri, pb, suite, procs = [], None, None, None, []
    try:
        pb, cri_grpc, pr_pb, pr_grpc = harness.generate_stubs(args.proto_root,
                                                              os.path.join(env.run, "py"))
        env.stubs = (pb, cri_grpc)
        env.start()
        env.import_image()
        cri = env.cri(cri_grpc)
        suite = Suite(args, env, pb, cri, pr_pb, pr_grpc)
        suite.serve.start()
        suite.add("be-shared.yaml")
        suite.add("exclusive.yaml")
        uid_e, ids_e, _ = suite.wait_pod("exclusive", {"main": "1"})
        uid_s, ids_s, _ = suite.wait_pod("be-shared", {"app": "0"})
        uids = (uid_e, uid_s)

        rc, out, err = verify(args, suite)
        mine = [c for c in out["containers"] if c["podUid"] in uids]
        print("clean:", json.dumps(mine, indent=1), json.dumps(out["findings"]), err, flush=True)
        check(len(mine) == 2, f"verify did not join both containers: {out}")
        for c in mine:
            check(c["intent"]["cpus"] == c["actual"]["cpus"], f"intent != actual: {c}")
        check(not ours(out, uids), f"findings on a clean node: {ours(out, uids)}")
        check(rc in (0, 3), f"exit {rc}")
        if rc == 3:
            print("NOTE: the host has findings of its own: " + json.dumps(out["findings"]))
        print("PASS clean", flush=True)

        # Drift: nothing corrects the cpuset once serve is gone.
        suite.serve.kill9()
        with open(harness.cgroup_cpus_path(env.cgroup_root, uid_s, ids_s["app"]), "w") as f:
            f.write("0-1")
        rc, out, _ = verify(args, suite)
        kinds = sorted(f["kind"] for f in ours(out, uids))
        print("drift:", json.dumps(ours(out, uids)), flush=True)
        check(rc == 3, f"exit {rc}, want 3")
        check("cpuset-drift" in kinds and "shared-exclusive-cpu" in kinds, f"kinds {kinds}")
        with open(harness.cgroup_cpus_path(env.cgroup_root, uid_s, ids_s["app"]), "w") as f:
            f.write("0")
        print("PASS drift", flush=True)

        # Intruders: a sleeping host task pinned onto the exclusive CPU, then a busy one.
        sleeper = subprocess.Popen(["taskset", "-c", "1", "sleep", "60"])
        procs.append(sleeper)
        rc, out, _ = verify(args, suite)
        hits = [f for f in out["findings"] if f["kind"] == "foreign-task"
                and f.get("pid") == sleeper.pid]
        print("intruder:", json.dumps(hits), flush=True)
        check(rc == 3 and len(hits) == 1 and hits[0]["pod"] == "exclusive",
              f"exit {rc}, foreign-task for pid {sleeper.pid}: {out['findings']}")
        busy = subprocess.Popen(["taskset", "-c", "1", "sh", "-c", "while :; do :; done"])
        procs.append(busy)
        rc, out, _ = verify(args, suite, "--sample", "500ms")
        hits = [f for f in out["findings"] if f["kind"] == "foreign-task"
                and f.get("pid") == busy.pid]
        print("busy intruder:", json.dumps(hits), flush=True)
        check(len(hits) == 1 and hits[0].get("cpuSeconds", 0) > 0,
              f"no CPU time for the busy intruder {busy.pid}: {hits}")
        print("PASS intruder", flush=True)
    except Exception as e:
        failures.append(repr(e))
        print(f"FAIL: {e}", flush=True)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        if suite is not None:
            try:
                if suite.serve.proc is None or suite.serve.proc.poll() is not None:
                    suite.serve.start()
                for f in os.listdir(suite.serve.pods):
                    suite.remove(f)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and (suite.sandboxes() or suite.containers()):
                    time.sleep(0.1)
            except Exception as e:
                print(f"cleanup: {e!r}")
            suite.serve.stop()
        env.teardown(cri, pb)
    leaks = env.leaks()
    if leaks:
        failures.append("teardown")
        print("FAIL teardown: left behind: " + ", ".join(leaks))
    print("FAILED: " + ", ".join(failures) if failures else "ALL PASSED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
