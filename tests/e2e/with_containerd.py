"""Runs a command next to a private containerd (busybox image imported), then tears everything
down and fails if anything is left behind.

    with_containerd.py PROTO_ROOT -- COMMAND ARGS...

The command sees PODTOPO_E2E_CRI (unix://...), PODTOPO_E2E_CGROUP_ROOT, PODTOPO_E2E_RUN and
PODTOPO_E2E_CONTAINERD_PID. Exit 77 (skip) with the reason when containerd cannot run here."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def main():
    sep = sys.argv.index("--")
    proto_root, cmd = sys.argv[1], sys.argv[sep + 1:]
    root = f"podtopo-e2e-{os.getpid()}"
    try:
        env = harness.PrivateContainerd.create(root)
    except harness.Skip as e:
        print(f"SKIP: {e}")
        return 77
    rc = 1
    pb = stub = None
    try:
        pb, grpc_mod, _, _ = harness.generate_stubs(proto_root, os.path.join(env.run, "py"))
        env.stubs = (pb, grpc_mod)
        env.start()
        env.import_image()
        stub = env.cri(grpc_mod)
        child_env = dict(os.environ, PODTOPO_E2E_CRI=env.endpoint, PODTOPO_E2E_CGROUP_ROOT=root,
                         PODTOPO_E2E_RUN=env.run,
                         PODTOPO_E2E_CONTAINERD_PID=str(env.proc.pid))
        rc = subprocess.run(cmd, env=child_env).returncode
    except Exception as e:
        print(f"FAIL: {e!r}\n{env.tail_log()}")
        rc = 1
    finally:
        env.teardown(stub, pb)
    leaks = env.leaks()
    if leaks:
        print("FAIL: left behind: " + ", ".join(leaks))
        return 1
    print("teardown: no process, mount, cgroup or file left behind")
    return rc


if __name__ == "__main__":
    sys.exit(main())
