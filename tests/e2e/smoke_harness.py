"""Harness self-test: private containerd, image import, one pod through CRI with a cpuset
update, and teardown leaving nothing. Exit 77 = skipped (reason printed)."""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def main():
    proto_root = sys.argv[1]
    root = f"podtopo-e2e-smoke-{os.getpid()}"
    try:
        env = harness.PrivateContainerd.create(root)
    except harness.Skip as e:
        print(f"SKIP: {e}")
        return 77
    ok = True
    try:
        pb, grpc_mod, _, _ = harness.generate_stubs(proto_root, os.path.join(env.run, "py"))
        env.stubs = (pb, grpc_mod)
        t = time.monotonic()
        env.start()
        env.import_image()
        print(f"containerd up and image imported in {time.monotonic() - t:.2f}s")
        cri = env.cri(grpc_mod)
        cfg = pb.PodSandboxConfig(
            metadata=pb.PodSandboxMetadata(name="smoke", namespace="default", uid="smoke-uid"),
            log_directory=os.path.join(env.run, "logs"),
            linux=pb.LinuxPodSandboxConfig(
                cgroup_parent=f"/{root}/podsmoke-uid",
                security_context=pb.LinuxSandboxSecurityContext(
                    namespace_options=pb.NamespaceOption(network=pb.NODE))))
        os.makedirs(cfg.log_directory, exist_ok=True)
        sb = cri.RunPodSandbox(pb.RunPodSandboxRequest(config=cfg), timeout=60).pod_sandbox_id
        c = cri.CreateContainer(pb.CreateContainerRequest(
            pod_sandbox_id=sb, sandbox_config=cfg,
            config=pb.ContainerConfig(
                metadata=pb.ContainerMetadata(name="c"), image=pb.ImageSpec(image=harness.IMAGE),
                log_path="c.log",
                linux=pb.LinuxContainerConfig(resources=pb.LinuxContainerResources(
                    cpuset_cpus="0")))), timeout=30).container_id
        cri.StartContainer(pb.StartContainerRequest(container_id=c), timeout=30)
        pid = harness.container_pid(cri, pb, c)
        got = (harness.read_cpus_allowed(pid), harness.cgroup_cpus(root, "smoke-uid", c))
        print(f"container pid {pid}: Cpus_allowed_list/cpuset.cpus = {got}")
        ok &= got == ("0", "0")
        ncpu = os.cpu_count()
        want = f"0-{ncpu - 1}" if ncpu > 1 else "0"
        cri.UpdateContainerResources(pb.UpdateContainerResourcesRequest(
            container_id=c, linux=pb.LinuxContainerResources(cpuset_cpus=want)), timeout=30)
        got = (harness.read_cpus_allowed(pid), harness.cgroup_cpus(root, "smoke-uid", c))
        print(f"after update to {want}: {got}")
        ok &= got == (want, want)
        env.teardown(cri, pb)
    except Exception as e:  # report, then still tear down
        print(f"FAIL: {e!r}\n{env.tail_log()}")
        ok = False
        env.teardown()
    leaks = env.leaks()
    if leaks:
        print("FAIL: left behind: " + ", ".join(leaks))
        ok = False
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
