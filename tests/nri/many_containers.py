"""Large NRI messages both ways, on the shipped containerd 1.7 (run by hand; docs/nri.md):

    /usr/bin/python3 tests/e2e/with_containerd.py \\
        --bin-dir ../shared/runtime/containerd-1.7/bin --nri proto -- \\
        /usr/bin/python3 tests/nri/many_containers.py --podtopo build/podtopo

One best-effort pod (a 20 kB annotation) of N containers is created with `podtopo nri` running;
the plugin is stopped, every container's cpuset is changed through CRI UpdateContainerResources,
and the plugin is started again: its Synchronize request (N containers, the annotation) and its
reply (N updates: over 4096 bytes from N = 60) must go through, and every cgroup must come back
to the node's shared pool. Exit 0 when they do."""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness  # noqa: E402

PROTO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--podtopo", required=True)
    ap.add_argument("--containers", type=int, default=60)
    a = ap.parse_args()
    run, root = os.environ["PODTOPO_E2E_RUN"], os.environ["PODTOPO_E2E_CGROUP_ROOT"]
    pb, g, _, _ = harness.generate_stubs(PROTO, os.path.join(run, "py-many"))
    import grpc
    cri = g.RuntimeServiceStub(grpc.insecure_channel(os.environ["PODTOPO_E2E_CRI"]))
    log_path = os.path.join(run, "podtopo-nri.log")

    def plugin():
        p = subprocess.Popen([a.podtopo, "nri", "--socket", os.environ["PODTOPO_E2E_NRI_SOCKET"],
                              "--node", "local", "--state-dir", os.path.join(run, "nri-state")],
                             stderr=open(log_path, "a"))
        time.sleep(0.5)
        return p

    p = plugin()
    cfg = pb.PodSandboxConfig(
        metadata=pb.PodSandboxMetadata(name="many", namespace="default", uid="many-uid"),
        annotations={"example.com/padding": "p" * 20000}, log_directory=os.path.join(run, "logs"),
        linux=pb.LinuxPodSandboxConfig(
            cgroup_parent=f"/{root}/podmany-uid",
            security_context=pb.LinuxSandboxSecurityContext(
                namespace_options=pb.NamespaceOption(network=pb.NODE))))
    sb = cri.RunPodSandbox(pb.RunPodSandboxRequest(config=cfg), timeout=30).pod_sandbox_id
    ids = []
    for i in range(a.containers):
        c = pb.ContainerConfig(metadata=pb.ContainerMetadata(name=f"c{i}"),
                               image=pb.ImageSpec(image=harness.IMAGE), log_path=f"c{i}.log",
                               linux=pb.LinuxContainerConfig(
                                   resources=pb.LinuxContainerResources(cpu_shares=2)))
        cid = cri.CreateContainer(pb.CreateContainerRequest(pod_sandbox_id=sb, config=c,
                                                            sandbox_config=cfg),
                                  timeout=30).container_id
        cri.StartContainer(pb.StartContainerRequest(container_id=cid), timeout=30)
        ids.append(cid)

    def cgroup(cid):
        with open(f"/sys/fs/cgroup/cpuset/{root}/podmany-uid/{cid}/cpuset.cpus") as f:
            return f.read().strip()
    shared = cgroup(ids[0])
    p.terminate()
    p.wait(timeout=10)
    for cid in ids:
        cri.UpdateContainerResources(pb.UpdateContainerResourcesRequest(
            container_id=cid, linux=pb.LinuxContainerResources(cpuset_cpus="0")), timeout=30)
    print(f"{len(ids)} containers moved to cpuset 0 behind the stopped plugin (shared pool: {shared})")
    p = plugin()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(cgroup(c) != shared for c in ids):
        time.sleep(0.1)
    back = sum(cgroup(c) == shared for c in ids)
    p.terminate()
    p.wait(timeout=10)
    with open(log_path) as f:
        print("".join(line for line in f if "synchronized" in line or "warn" in line), end="")
    cri.StopPodSandbox(pb.StopPodSandboxRequest(pod_sandbox_id=sb), timeout=60)
    cri.RemovePodSandbox(pb.RemovePodSandboxRequest(pod_sandbox_id=sb), timeout=60)
    print(f"{back} of {len(ids)} containers back on {shared}")
    return 0 if back == len(ids) else 1


if __name__ == "__main__":
    sys.exit(main())
