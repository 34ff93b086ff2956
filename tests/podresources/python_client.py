"""A third-party PodResources v1 client: Debian's python3-grpcio, stubs generated at test time.

Run with /usr/bin/python3 (Debian's interpreter, which has python3-grpcio):
    /usr/bin/python3 python_client.py PROTO_ROOT [SOCKET]   (default: $PODRESOURCES_SOCKET)
PROTO_ROOT holds podresources/v1/api.proto. Stubs are generated into a temporary directory with
protoc --python_out --grpc_out --plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin.
Checks the pod-level semantics of the documentation's pod-scope-mixed pod (issue 4).
"""
import os
import subprocess
import sys
import tempfile
import time

import grpc

GI = 1 << 30
POD_NS, POD_NAME = "default", "pod-scope-mixed"


def fail(msg):
    print(f"python grpcio client: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def generate_stubs(proto_root, out):
    subprocess.run(
        ["protoc", f"-I{proto_root}", f"--python_out={out}", f"--grpc_out={out}",
         "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin",
         os.path.join(proto_root, "podresources/v1/api.proto")],
        check=True)
    sys.path.insert(0, out)
    from podresources.v1 import api_pb2, api_pb2_grpc  # noqa: E402
    return api_pb2, api_pb2_grpc


def main():
    proto_root = sys.argv[1]
    socket = sys.argv[2] if len(sys.argv) > 2 else os.environ["PODRESOURCES_SOCKET"]
    with tempfile.TemporaryDirectory() as out:
        pb, pb_grpc = generate_stubs(proto_root, out)
        channel = grpc.insecure_channel("unix://" + socket)
        stub = pb_grpc.PodResourcesListerStub(channel)

        # The server restores its state and admits the pods directory asynchronously: retry
        # List (FAILED_PRECONDITION / UNAVAILABLE / pod not yet listed) for up to 30 s.
        deadline = time.time() + 30
        pod = None
        while time.time() < deadline:
            try:
                resp = stub.List(pb.ListPodResourcesRequest(), timeout=5)
                pods = [p for p in resp.pod_resources if (p.namespace, p.name) == (POD_NS, POD_NAME)]
                if pods:
                    check(len(pods) == 1, "List reports pod-scope-mixed more than once")
                    pod = pods[0]
                    break
            except grpc.RpcError as e:
                if e.code() not in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.UNAVAILABLE):
                    fail(f"List: {e.code()} {e.details()}")
            time.sleep(0.1)
        check(pod is not None, "List never reported default/pod-scope-mixed")

        alloc = stub.GetAllocatableResources(pb.AllocatableResourcesRequest(), timeout=5)
        alloc_cpus = set(alloc.cpu_ids)
        check(len(alloc_cpus) > 0, "GetAllocatableResources reports no CPUs")
        check(len(alloc.memory) > 0, "GetAllocatableResources reports no memory")

        got = stub.Get(pb.GetPodResourcesRequest(pod_name=POD_NAME, pod_namespace=POD_NS),
                       timeout=5).pod_resources
        check(got == pod, f"Get differs from List:\n{got}\nvs\n{pod}")

        for where, p in (("List", pod), ("Get", got)):
            bubble = set(p.cpu_ids)
            check(len(p.cpu_ids) == 4 and len(bubble) == 4,
                  f"{where}: pod cpu_ids {list(p.cpu_ids)} is not a 4-CPU bubble")
            check(bubble <= alloc_cpus, f"{where}: pod cpu_ids {sorted(bubble)} not allocatable")
            mem = sum(m.size for m in p.memory if m.memory_type == "memory")
            check(mem == 4 * GI, f"{where}: pod memory {mem} != 4Gi")
            names = [c.name for c in p.containers]
            check(names == ["metrics-sidecar", "logging-sidecar", "main-app"],
                  f"{where}: containers {names} (sidecars first, then main-app)")
            app = p.containers[2]
            app_cpus = set(app.cpu_ids)
            check(len(app.cpu_ids) == 2 and len(app_cpus) == 2,
                  f"{where}: main-app cpu_ids {list(app.cpu_ids)} is not 2 exclusive CPUs")
            check(app_cpus <= bubble, f"{where}: main-app CPUs {sorted(app_cpus)} outside the bubble")
            for side in p.containers[:2]:
                check(len(side.cpu_ids) == 0, f"{where}: {side.name} reports cpu_ids {list(side.cpu_ids)}")
                check(len(side.memory) == 0, f"{where}: {side.name} reports memory")
            shared = bubble - app_cpus
            check(len(shared) == 2, f"{where}: derived pod shared pool {sorted(shared)} is not 2 CPUs")

        try:
            stub.Get(pb.GetPodResourcesRequest(pod_name="no-such-pod", pod_namespace=POD_NS), timeout=5)
            fail("Get of an unknown pod succeeded")
        except grpc.RpcError as e:
            check(e.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNKNOWN),
                  f"Get of an unknown pod: {e.code()}")
            check("not found" in e.details(), f"Get of an unknown pod: {e.details()!r}")

        channel.close()
    print(f"python grpcio {grpc.__version__} client: OK (pod {sorted(set(pod.cpu_ids))}, "
          f"main-app {sorted(set(pod.containers[2].cpu_ids))})")


if __name__ == "__main__":
    main()
