"""Runs a command next to a private containerd (busybox image imported), then tears everything
down and fails if anything is left behind.

    with_containerd.py [--bin-dir DIR] [--nri] PROTO_ROOT -- COMMAND ARGS...

The command sees PODTOPO_E2E_CRI (unix://...), PODTOPO_E2E_CGROUP_ROOT, PODTOPO_E2E_RUN and
PODTOPO_E2E_CONTAINERD_PID. Exit 77 (skip) with the reason when containerd cannot run here.
--bin-dir takes containerd, ctr and the shim from DIR (e.g. ../shared/runtime/containerd-1.7/bin;
skip when it is absent); --nri enables NRI and passes its socket as PODTOPO_E2E_NRI_SOCKET. The
command may send SIGUSR1 to PODTOPO_E2E_HARNESS_PID to have containerd restarted: the harness
stops it (SIGTERM), starts it again and then writes PODTOPO_E2E_RUN/restarts (the count)."""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def main():
    sep = sys.argv.index("--")
    opts, cmd = sys.argv[1:sep], sys.argv[sep + 1:]
    bin_dir, nri = None, "--nri" in opts
    if "--bin-dir" in opts:
        bin_dir = opts[opts.index("--bin-dir") + 1]
        opts = [o for o in opts if o != bin_dir]
        if not os.path.isdir(bin_dir):
            print(f"SKIP: {bin_dir} is absent (the shipped containerd 1.7 with NRI)")
            return 77
    proto_root = [o for o in opts if not o.startswith("--")][0]
    root = f"podtopo-e2e-{os.getpid()}"
    try:
        env = harness.PrivateContainerd.create(root, bin_dir=bin_dir, nri=nri)
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
                         PODTOPO_E2E_CONTAINERD_PID=str(env.proc.pid),
                         PODTOPO_E2E_HARNESS_PID=str(os.getpid()))
        if env.nri_socket:
            child_env["PODTOPO_E2E_NRI_SOCKET"] = env.nri_socket
        restarts = [0]

        def restart(signum, frame):
            env.stop()
            env.start()
            restarts[0] += 1
            with open(os.path.join(env.run, "restarts"), "w") as f:
                f.write(str(restarts[0]))
        signal.signal(signal.SIGUSR1, restart)
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
