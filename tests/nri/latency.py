"""Create-to-running latency that `podtopo nri` adds, measured end to end on the shipped
containerd 1.7 (run by hand; the figures are in docs/nri.md):

    /usr/bin/python3 tests/e2e/with_containerd.py \\
        --bin-dir ../shared/runtime/containerd-1.7/bin --nri proto -- \\
        /usr/bin/python3 tests/nri/latency.py --podtopo build/podtopo --pods 30

For each of N pods (one Guaranteed 1-CPU container, as a kubelet with cpuManagerPolicy none
creates it: shares, quota, memory limit) it times RunPodSandbox + CreateContainer +
StartContainer through CRI, then removes the pod; first without any NRI plugin, then with
`podtopo nri` connected, alternating rounds. Prints the medians and the difference."""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness  # noqa: E402

PROTO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto")


def one_pod(cri, pb, root, i, run):
    uid = f"lat-{os.getpid()}-{i}"
    cfg = pb.PodSandboxConfig(
        metadata=pb.PodSandboxMetadata(name=f"lat-{i}", namespace="default", uid=uid),
        log_directory=os.path.join(run, "lat-logs", uid),
        linux=pb.LinuxPodSandboxConfig(
            cgroup_parent=f"/{root}/pod{uid}",
            security_context=pb.LinuxSandboxSecurityContext(
                namespace_options=pb.NamespaceOption(network=pb.NODE))))
    c = pb.ContainerConfig(
        metadata=pb.ContainerMetadata(name="main"), image=pb.ImageSpec(image=harness.IMAGE),
        log_path="main/0.log",
        linux=pb.LinuxContainerConfig(resources=pb.LinuxContainerResources(
            cpu_period=100000, cpu_quota=100000, cpu_shares=1024,
            memory_limit_in_bytes=64 << 20)))
    t0 = time.monotonic()
    sb = cri.RunPodSandbox(pb.RunPodSandboxRequest(config=cfg), timeout=30).pod_sandbox_id
    t1 = time.monotonic()
    cid = cri.CreateContainer(pb.CreateContainerRequest(pod_sandbox_id=sb, config=c,
                                                        sandbox_config=cfg), timeout=30).container_id
    t2 = time.monotonic()
    cri.StartContainer(pb.StartContainerRequest(container_id=cid), timeout=30)
    t3 = time.monotonic()
    dt = (t3 - t0, t1 - t0, t2 - t1, t3 - t2)
    cri.StopPodSandbox(pb.StopPodSandboxRequest(pod_sandbox_id=sb), timeout=30)
    cri.RemovePodSandbox(pb.RemovePodSandboxRequest(pod_sandbox_id=sb), timeout=30)
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--podtopo", required=True)
    ap.add_argument("--pods", type=int, default=30)
    ap.add_argument("--no-state", action="store_true",
                    help="run the plugin without --state-dir (in memory: no checkpoint writes)")
    a = ap.parse_args()
    run, root = os.environ["PODTOPO_E2E_RUN"], os.environ["PODTOPO_E2E_CGROUP_ROOT"]
    pb, g, _, _ = harness.generate_stubs(PROTO, os.path.join(run, "py-lat"))
    import grpc
    cri = g.RuntimeServiceStub(grpc.insecure_channel(os.environ["PODTOPO_E2E_CRI"]))
    log = os.path.join(run, "latency-nri.log")
    without, with_plugin = [], []
    one_pod(cri, pb, root, -1, run)  # warm-up (image unpacked, caches)
    for i in range(a.pods):
        without.append(one_pod(cri, pb, root, 2 * i, run))
        state = [] if a.no_state else ["--state-dir", os.path.join(run, "lat-state")]
        p = subprocess.Popen([a.podtopo, "nri", "--socket", os.environ["PODTOPO_E2E_NRI_SOCKET"],
                              "--node", "local", "--log-level", "warn"] + state,
                             stderr=open(log, "a"))
        time.sleep(0.3)  # registered and synchronized (its log says so within ~5 ms)
        with_plugin.append(one_pod(cri, pb, root, 2 * i + 1, run))
        p.terminate()
        p.wait(timeout=10)
    print(f"pods: {a.pods} each way (one Guaranteed 1-CPU container), medians in ms")
    print(f"{'':24}{'total':>8}{'RunPodSandbox':>15}{'CreateContainer':>17}{'StartContainer':>16}")
    for name, xs in (("without plugin", without), ("with podtopo nri", with_plugin)):
        med = [statistics.median(x[k] for x in xs) * 1000 for k in range(4)]
        print(f"{name:24}{med[0]:8.1f}{med[1]:15.1f}{med[2]:17.1f}{med[3]:16.1f}")
    added = [(statistics.median(x[k] for x in with_plugin) -
              statistics.median(x[k] for x in without)) * 1000 for k in range(4)]
    print(f"{'added by the plugin':24}{added[0]:8.1f}{added[1]:15.1f}{added[2]:17.1f}{added[3]:16.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
