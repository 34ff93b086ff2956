"""End to end: `podtopo probe` inside a pod of the project's own image, with an exclusive CPU
(issue 24 item 4), on the private containerd with `podtopo serve --cri` as the kubelet.

    probe_pod_e2e.py --podtopo BIN --build-dir DIR --proto-root DIR --repo DIR

1. The offline image (scripts/image.sh: build/podtopo-image.tar, from the Debian package) is
   imported into the runtime's k8s.io namespace.
2. A Guaranteed pod of 1 CPU runs `podtopo probe -o json` in that image. serve pins the
   container to its exclusive CPU (CPU 1 on this 2-CPU machine, CPU 0 reserved).
3. The probe's report, read from the container's CRI log, names exactly the CPUs PodResources
   reports for the container, measured memory latency on a NUMA node and wake-up latency on
   that CPU (SCHED_FIFO or, without CAP_SYS_NICE in the container, SCHED_OTHER and a note).
Exit 0 = passed, 1 = a failure, 77 = skipped (reason printed). Everything is torn down; the run
fails if anything is left behind."""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from serve_e2e import Failure, Suite  # noqa: E402

POD = """apiVersion: v1
kind: Pod
metadata:
  name: probe
spec:
  containers:
  - name: probe
    image: {image}
    command: ["/usr/bin/podtopo", "probe", "-o", "json", "--duration", "1s"]
    resources:
      requests: {{cpu: "1", memory: 256Mi}}
      limits: {{cpu: "1", memory: 256Mi}}
"""


def expect(failures, name, cond, msg):
    print(("ok: " if cond else "FAIL: ") + name + ("" if cond else f": {msg}"), flush=True)
    if not cond:
        failures.append(name)


def cri_log_text(path):
    """The container's output from a CRI log file ("<time> stdout F|P <text>" lines)."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 3)
            if len(parts) < 3 or parts[1] != "stdout":
                continue
            text = parts[3] if len(parts) == 4 else ""
            out.append(text + ("\n" if parts[2] == "F" else ""))
    return "".join(out)


def first_report(log_root):
    """The first complete JSON report among the probe container's logs (attempt 0 first)."""
    for dirpath, _, files in sorted(os.walk(log_root)):
        for name in sorted(files):
            if not name.endswith(".log"):
                continue
            text = cri_log_text(os.path.join(dirpath, name))
            try:
                return json.loads(text)
            except ValueError:
                continue
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--podtopo", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--proto-root", required=True)
    ap.add_argument("--repo", required=True)
    args = ap.parse_args()
    args.repo, args.build_dir = os.path.abspath(args.repo), os.path.abspath(args.build_dir)
    args.podtopo = os.path.abspath(args.podtopo)
    args.pods = os.path.join(args.repo, "tests/e2e/pods")
    if os.cpu_count() < 2:
        print("SKIP: needs 2 CPUs (one exclusive)")
        return 77
    root = f"podtopo-probe-{os.getpid()}"
    try:
        env = harness.PrivateContainerd.create(root)
    except harness.Skip as e:
        print(f"SKIP: {e}")
        return 77
    r = subprocess.run(["bash", os.path.join(args.repo, "scripts/image.sh")],
                       capture_output=True, text=True, cwd=args.repo,
                       env={**os.environ, "PODTOPO_BUILD_DIR": args.build_dir})
    if r.returncode != 0:
        print(f"FAIL: scripts/image.sh:\n{r.stdout}{r.stderr}")
        return 1
    image_tar = os.path.join(args.build_dir, "podtopo-image.tar")
    failures, cri, pb, suite = [], None, None, None
    try:
        pb, cri_grpc, pr_pb, pr_grpc = harness.generate_stubs(args.proto_root,
                                                              os.path.join(env.run, "py"))
        env.stubs = (pb, cri_grpc)
        env.start()
        env.import_image()  # busybox: the sandboxes' image
        ctr = [env.ctr, "--address", env.sock, "-n", "k8s.io"]
        subprocess.run(ctr + ["images", "import", "--snapshotter", "overlayfs", image_tar],
                       check=True, capture_output=True, timeout=120)
        names = [l.split()[0] for l in subprocess.run(
            ctr + ["images", "ls"], capture_output=True, text=True,
            timeout=30).stdout.splitlines()[1:]]
        image = next((n for n in names if "/podtopo:" in n), None)
        if image is None:
            raise Failure(f"the podtopo image is not listed after the import: {names}")
        cri = env.cri(cri_grpc)
        suite = Suite(args, env, pb, cri, pr_pb, pr_grpc)
        suite.serve.start()
        with open(os.path.join(suite.serve.pods, ".probe.tmp"), "w") as f:
            f.write(POD.format(image=image))
        os.rename(os.path.join(suite.serve.pods, ".probe.tmp"),
                  os.path.join(suite.serve.pods, "probe.yaml"))

        logs = os.path.join(suite.serve.state, "pod-logs")
        report, deadline = None, time.monotonic() + 90
        while report is None and time.monotonic() < deadline:
            if os.path.isdir(logs):
                report = first_report(logs)
            if report is None:
                time.sleep(0.2)
        expect(failures, "report", report is not None,
              f"no JSON report in the probe container's logs under {logs} within 90 s")
        if report is not None:
            print("probe in the pod: " + json.dumps(
                {k: report.get(k) for k in ("cpus", "mems", "schedFifo", "memoryLatencyNs",
                                            "bufferBytes", "involuntarySwitches")}))
            given = suite.podresources().get("probe", {}).get("probe")
            expect(failures, "exclusive CPUs", given is not None and len(given) == 1,
                  f"PodResources gives the probe container {given}, not one exclusive CPU")
            want = ",".join(str(c) for c in (given or []))
            expect(failures, "the probe's CPUs", report.get("cpus") == want,
                  f"the probe ran on {report.get('cpus')!r}; PodResources says {want!r}")
            lat = report.get("memoryLatencyNs") or {}
            expect(failures, "memory latency",
                  len(lat) > 0 and all(v is not None and v > 0 for v in lat.values()),
                  f"memoryLatencyNs {lat}")
            wake = (report.get("wakeup") or {}).get(want) or {}
            expect(failures, "wake-up latency",
                  wake.get("samples", 0) > 0 and wake.get("maxUs", -1) >= wake.get("p50Us", 0),
                  f"wakeup on CPU {want}: {wake}")
            if not report.get("schedFifo"):
                notes = " ".join(report.get("notes") or [])
                expect(failures, "says SCHED_OTHER", "SCHED_FIFO" in notes,
                      f"schedFifo false but no note says why: {report.get('notes')}")
    except Failure as e:
        failures.append(str(e))
        print(f"FAIL: {e}")
    except Exception as e:
        failures.append(repr(e))
        print(f"FAIL: {e!r}\n{env.tail_log()}")
    finally:
        if suite is not None:
            try:
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
