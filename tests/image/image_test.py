#!/usr/bin/python3
"""The container image on containerd: builds build/podtopo-image.tar offline (scripts/image.sh),
imports it into the private containerd of the end-to-end tests (tests/e2e/harness.py), runs
`podtopo --version` and `podtopo-agent --version` in it, and `podtopo state check` on a fixture kubelet directory
(src/state/testdata/healthy) bind-mounted read-only. Everything is removed
afterwards. Exit 77 (skip) with the reason when containerd cannot run here.

    image_test.py REPO BUILD_DIR
"""
import os
import subprocess
import sys

repo, build = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(repo, "tests/e2e"))
import harness  # noqa: E402


def ctr(env, *args, timeout=120):
    return subprocess.run(["ctr", "--address", env.sock, "-n", "podtopo-image-test", *args],
                          capture_output=True, text=True, timeout=timeout)


def main():
    try:
        env = harness.PrivateContainerd.create(f"podtopo-image-{os.getpid()}")
    except harness.Skip as e:
        print(f"SKIP: {e}")
        return 77
    r = subprocess.run(["bash", os.path.join(repo, "scripts/image.sh")], capture_output=True,
                       text=True, env={**os.environ, "PODTOPO_BUILD_DIR": build})
    if r.returncode != 0:
        print(f"FAIL: scripts/image.sh:\n{r.stdout}{r.stderr}")
        return 1
    print(r.stdout.strip().splitlines()[-1])
    image_tar = os.path.join(build, "podtopo-image.tar")
    version = subprocess.run([os.path.join(build, "podtopo"), "--version"], capture_output=True,
                             text=True).stdout.strip()
    rc = 1
    try:
        env.start()
        r = ctr(env, "images", "import", "--snapshotter", "overlayfs", image_tar)
        if r.returncode != 0:
            raise RuntimeError(f"ctr images import: {r.stderr}")
        names = [l.split()[0] for l in ctr(env, "images", "ls").stdout.splitlines()[1:]]
        image = next((n for n in names if "podtopo" in n), None)
        if image is None:
            raise RuntimeError(f"the image is not listed after the import: {names}")
        run = ["run", "--rm", "--snapshotter", "overlayfs", "--runc-root",
               os.path.join(env.run, "runc-root")]
        r = ctr(env, *run, image, "podtopo-version", "/usr/bin/podtopo", "--version")
        print(f"in the container: {r.stdout.strip()}")
        if r.returncode != 0 or r.stdout.strip() != version:
            raise RuntimeError(f"podtopo --version in the container: rc {r.returncode}, "
                               f"{r.stdout!r} {r.stderr!r} (expected {version!r})")
        # The DaemonSet's program (deploy/podtopo-agent.yaml's command) starts in the image.
        r = ctr(env, *run, image, "podtopo-agent-version", "/usr/bin/podtopo-agent", "--version")
        print(f"in the container: {r.stdout.strip()}")
        if r.returncode != 0 or not r.stdout.startswith("podtopo-agent "):
            raise RuntimeError(f"podtopo-agent --version in the container: rc {r.returncode}, "
                               f"{r.stdout!r} {r.stderr!r}")
        fixture = os.path.join(repo, "src/state/testdata/healthy")
        r = ctr(env, *run, "--mount", f"type=bind,src={fixture},dst=/var/lib/kubelet,options=rbind:ro",
                image, "podtopo-state", "/usr/bin/podtopo", "state", "check", "--kubelet-dir",
                "/var/lib/kubelet", "--node", "preset:demo")
        print(r.stdout.strip())
        if r.returncode != 0 or "cpu_manager_state" not in r.stdout:
            raise RuntimeError(f"podtopo state check in the container: rc {r.returncode}\n"
                               f"{r.stdout}{r.stderr}")
        rc = 0
        print("ok: the offline image runs podtopo on containerd")
    except Exception as e:
        print(f"FAIL: {e}\n{env.tail_log()}")
    finally:
        env.teardown()
    leaks = env.leaks()
    if leaks:
        print("FAIL: left behind: " + ", ".join(leaks))
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
