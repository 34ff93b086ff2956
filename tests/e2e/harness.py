"""Test helpers for podtopo's end-to-end tests on a private containerd.

Everything lives under one private directory (RUN): containerd's root, state, socket, config,
runc root, logs and the busybox OCI image built from busybox-static's /bin/busybox. Teardown
removes everything a test can leave behind: processes by PID (containerd, shims, container
processes found in our cgroups), mounts under RUN (deepest first), the pod cgroup directories
runc leaves under every /sys/fs/cgroup/*/<cgroup root>, shim sockets, and files.

    env = PrivateContainerd.create(cgroup_root="podtopo-e2e-123")  # raises Skip with a reason
    env.start(); env.import_image()
    cri = env.cri()                  # RuntimeService stub (python grpc)
    ...
    env.teardown(); assert not env.leaks()
"""
import glob
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile

# The OCI layout writer of scripts/image.py (the podtopo image), shared with the busybox image.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import image as oci_image  # noqa: E402
import tempfile
import time

IMAGE = "docker.io/podtopo/busybox:e2e"
BUSYBOX = "/bin/busybox"
APPLETS = ["sh", "sleep", "cat", "grep", "nproc", "true", "false", "date", "echo", "ls",
           "ps", "taskset", "test", "seq", "head", "tail"]
CGROUP_MOUNT = "/sys/fs/cgroup"


class Skip(Exception):
    """The environment cannot run the tests; the message says why."""


def prerequisites(bin_dir=None):
    """Returns the reasons why containerd cannot run here ([] when it can). With `bin_dir`,
    containerd, ctr and the shim come from there (e.g. ../shared/runtime/containerd-1.7/bin)."""
    reasons = []
    if os.geteuid() != 0:
        reasons.append("not root (containerd and runc need root)")
    if bin_dir is not None:
        for tool in ("containerd", "ctr", "containerd-shim-runc-v2"):
            if not os.access(os.path.join(bin_dir, tool), os.X_OK):
                reasons.append(f"{os.path.join(bin_dir, tool)} missing")
    for tool in (("runc", "protoc", "grpc_python_plugin") if bin_dir else
                 ("containerd", "ctr", "runc", "protoc", "grpc_python_plugin")):
        if shutil.which(tool) is None:
            reasons.append(f"{tool} not found in PATH")
    if not os.path.exists(BUSYBOX):
        reasons.append(f"{BUSYBOX} missing (apt-get install busybox-static)")
    cpuset = os.path.join(CGROUP_MOUNT, "cpuset")
    if not os.path.exists(os.path.join(cpuset, "cpuset.cpus")):
        reasons.append(f"no cgroup v1 cpuset hierarchy at {cpuset}")
    elif not os.access(cpuset, os.W_OK):
        reasons.append(f"{cpuset} is not writable")
    # What an installed Debian 12 has and a bare chroot may lack (issue 26): runc pivots each
    # container's root, which fails with EINVAL where the process's own root is no mount point
    # (a chroot into a plain folder); containerd copies /etc/hosts into host-network sandboxes;
    # the containers' users must be able to search /.
    if not _root_is_mount_point():
        reasons.append("/ is not a mount point (a chroot into a plain folder?): runc's pivot_root "
                       "fails there; bind-mount the root on itself first")
    if not os.path.isfile("/etc/hosts"):
        reasons.append("/etc/hosts is missing (containerd copies it into the sandboxes)")
    if not os.stat("/").st_mode & 0o001:
        reasons.append("/ is not searchable by other users (mode %o): chmod 755 /"
                       % (os.stat("/").st_mode & 0o777))
    try:
        import grpc  # noqa: F401
        import google.protobuf  # noqa: F401
    except ImportError as e:
        reasons.append(f"python grpc/protobuf missing ({e}); run with /usr/bin/python3 "
                       "(python3-grpcio, python3-protobuf)")
    return reasons


def _root_is_mount_point():
    """True when / is a mount point as this process sees it: /proc/self/mountinfo shows the
    mounts below the process's root, and has a line for "/" only when the root is one."""
    try:
        with open("/proc/self/mountinfo") as f:
            return any(line.split()[4] == "/" for line in f)
    except (OSError, IndexError):
        return True  # no /proc to tell: let runc say


def generate_stubs(proto_root, out_dir):
    """protoc --python_out/--grpc_out for the CRI and PodResources protos; adds out_dir to
    sys.path. Returns (cri_pb2, cri_grpc, podres_pb2, podres_grpc)."""
    os.makedirs(out_dir, exist_ok=True)
    protos = ["cri/runtime/v1/api.proto", "podresources/v1/api.proto"]
    subprocess.run(["protoc", "-I", proto_root, f"--python_out={out_dir}",
                    f"--grpc_out={out_dir}",
                    "--plugin=protoc-gen-grpc=" + shutil.which("grpc_python_plugin")]
                   + [os.path.join(proto_root, p) for p in protos], check=True)
    if out_dir not in sys.path:
        sys.path.insert(0, out_dir)
    import importlib
    cri_pb2 = importlib.import_module("cri.runtime.v1.api_pb2")
    cri_grpc = importlib.import_module("cri.runtime.v1.api_pb2_grpc")
    pr_pb2 = importlib.import_module("podresources.v1.api_pb2")
    pr_grpc = importlib.import_module("podresources.v1.api_pb2_grpc")
    return cri_pb2, cri_grpc, pr_pb2, pr_grpc


def build_busybox_image(path, name=IMAGE):
    """Writes an OCI layout tar holding one image: busybox-static plus applet symlinks."""
    layer_buf = io.BytesIO()
    with tarfile.open(fileobj=layer_buf, mode="w", format=tarfile.PAX_FORMAT) as layer:
        for d in ("bin", "proc", "sys", "dev", "tmp", "etc"):
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if d == "tmp" else 0o755
            layer.addfile(info)
        with open(BUSYBOX, "rb") as f:
            oci_image.add_bytes(layer, "bin/busybox", f.read(), 0o755)
        for applet in APPLETS:
            info = tarfile.TarInfo("bin/" + applet)
            info.type = tarfile.SYMTYPE
            info.linkname = "busybox"
            layer.addfile(info)
        oci_image.add_bytes(layer, "etc/passwd", b"root:x:0:0:root:/:/bin/sh\n")
        oci_image.add_bytes(layer, "etc/group", b"root:x:0:\n")
    oci_image.write_oci_layout(path, name, layer_buf.getvalue(),
                               {"Cmd": ["/bin/sleep", "infinity"], "Env": ["PATH=/bin"]})


CONFIG = """version = 2
root = "{run}/root"
state = "{run}/state"
[grpc]
  address = "{run}/containerd.sock"
[ttrpc]
  address = "{run}/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "{run}/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{image}"
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{run}/runc-root"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{run}/cni/bin"
    conf_dir = "{run}/cni/conf"
"""

# containerd 1.7+ only: NRI on, external plugins connect to {run}/nri/nri.sock.
NRI_CONFIG = """[plugins."io.containerd.nri.v1.nri"]
  disable = false
  disable_connections = false
  socket_path = "{run}/nri/nri.sock"
  plugin_path = "{run}/nri/plugins"
  plugin_config_path = "{run}/nri/conf.d"
  plugin_registration_timeout = "5s"
  plugin_request_timeout = "2s"
"""


def _mounts_under(prefix):
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4].replace("\\040", " ")
            if mp == prefix or mp.startswith(prefix + "/"):
                out.append(mp)
    return out


def _pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


class PrivateContainerd:
    @classmethod
    def create(cls, cgroup_root, base=None, bin_dir=None, nri=False):
        reasons = prerequisites(bin_dir)
        if reasons:
            raise Skip("; ".join(reasons))
        return cls(cgroup_root, base, bin_dir, nri)

    def __init__(self, cgroup_root, base=None, bin_dir=None, nri=False):
        """bin_dir: take containerd, ctr and the runc shim from there (not PATH); nri: enable
        NRI (containerd 1.7+), its socket is self.nri_socket."""
        self.containerd = os.path.join(bin_dir, "containerd") if bin_dir else "containerd"
        self.ctr = os.path.join(bin_dir, "ctr") if bin_dir else "ctr"
        self.run = tempfile.mkdtemp(prefix="podtopo-e2e-", dir=base or "/tmp")
        self.cgroup_root = cgroup_root
        self.sock = os.path.join(self.run, "containerd.sock")
        self.endpoint = "unix://" + self.sock
        self.proc = None
        self.log_path = os.path.join(self.run, "containerd.log")
        self._run_containerd_before = set(self._shim_state_entries())
        self.nri_socket = os.path.join(self.run, "nri", "nri.sock") if nri else None
        config = CONFIG.format(run=self.run, image=IMAGE)
        if bin_dir:  # else PATH lookup may find another containerd's shim
            shim = os.path.join(os.path.abspath(bin_dir), "containerd-shim-runc-v2")
            config = config.replace('runtime_type = "io.containerd.runc.v2"\n',
                                    f'runtime_type = "io.containerd.runc.v2"\n'
                                    f'      runtime_path = "{shim}"\n')
            config = config.replace("Root = ", 'BinaryName = "/usr/sbin/runc"\n        Root = ')
        if nri:
            config += NRI_CONFIG.format(run=self.run)
        with open(os.path.join(self.run, "config.toml"), "w") as f:
            f.write(config)
        for d in ("cni/bin", "cni/conf") + (("nri/plugins", "nri/conf.d") if nri else ()):
            os.makedirs(os.path.join(self.run, d), exist_ok=True)

    # --- containerd process ------------------------------------------------------------
    def start(self, timeout=20.0):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([self.containerd, "--config",
                                      os.path.join(self.run, "config.toml")],
                                     stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"containerd exited with {self.proc.returncode}; see "
                                   f"{self.log_path}:\n" + self.tail_log())
            r = subprocess.run([self.ctr, "--address", self.sock, "version"],
                               capture_output=True, timeout=10)
            if r.returncode == 0 and self._cri_ready():
                return
            time.sleep(0.05)
        raise RuntimeError("containerd did not answer in time:\n" + self.tail_log())

    def _cri_ready(self):
        """containerd's socket answers before its CRI plugin does ("server is not initialized
        yet"): with stubs (self.stubs = (pb, grpc module)), wait for a CRI call to succeed."""
        stubs = getattr(self, "stubs", None)
        if stubs is None:
            return True
        pb, grpc_mod = stubs
        try:
            import grpc
            with grpc.insecure_channel(self.endpoint) as ch:
                grpc_mod.RuntimeServiceStub(ch).ListPodSandbox(pb.ListPodSandboxRequest(),
                                                               timeout=5)
            return True
        except Exception:
            return False

    def tail_log(self, n=30):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill9()

    def import_image(self):
        tar = os.path.join(self.run, "busybox-oci.tar")
        build_busybox_image(tar)
        subprocess.run([self.ctr, "--address", self.sock, "-n", "k8s.io", "images", "import",
                        "--snapshotter", "overlayfs", tar], check=True, capture_output=True,
                       timeout=60)

    def cri(self, cri_grpc):
        import grpc
        channel = grpc.insecure_channel(self.endpoint)
        return cri_grpc.RuntimeServiceStub(channel)

    # --- teardown ----------------------------------------------------------------------
    @staticmethod
    def _shim_state_entries():
        out = []
        for d in ("/run/containerd/s", "/run/containerd/runc"):
            if os.path.isdir(d):
                out += [os.path.join(d, e) for e in os.listdir(d)]
        return out

    def _new_shim_state(self):
        """Shim state entries this containerd made. Another containerd may run on the machine
        (a concurrent test): then only the shim sockets of this one's tasks count, named as
        containerd names them (/run/containerd/s/<sha256 of "<address>/<namespace>/<task id>">);
        the task ids are kept as they are seen, since tasks go away before their sockets."""
        new = set(self._shim_state_entries()) - self._run_containerd_before
        tasks = os.path.join(self.run, "state", "io.containerd.runtime.v2.task")
        owned = getattr(self, "_owned_shim_state", set())
        for ns in (os.listdir(tasks) if os.path.isdir(tasks) else []):
            for tid in os.listdir(os.path.join(tasks, ns)):
                digest = hashlib.sha256(f"{self.sock}/{ns}/{tid}".encode()).hexdigest()
                owned.add(os.path.join("/run/containerd/s", digest))
        self._owned_shim_state = owned
        if not self._other_containerd_runs():
            return new
        return {e for e in new if e in owned}

    def _other_containerd_runs(self):
        mine = self.proc.pid if self.proc else None
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != mine:
                args = _cmdline(int(entry))
                if args and os.path.basename(args[0]) == b"containerd" and _pid_alive(int(entry)):
                    return True
        return False

    def _cgroup_dirs(self):
        return sorted(glob.glob(os.path.join(CGROUP_MOUNT, "*", self.cgroup_root)))

    def _cgroup_pids(self):
        pids = set()
        for top in self._cgroup_dirs():
            for dirpath, _, files in os.walk(top):
                if "cgroup.procs" in files:
                    try:
                        with open(os.path.join(dirpath, "cgroup.procs")) as f:
                            pids.update(int(x) for x in f.read().split())
                    except OSError:
                        pass
        return pids

    def _shim_pids(self):
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            args = _cmdline(int(entry))
            if args and args[0].endswith(b"containerd-shim-runc-v2") and \
                    self.sock.encode() in args:
                pids.append(int(entry))
        return pids

    def teardown(self, cri=None, pb=None):
        """Removes everything. Normal path first (CRI), then by force."""
        self._new_shim_state()  # the task ids, while they are there
        if cri is not None and pb is not None and self.proc and self.proc.poll() is None:
            try:
                for sb in cri.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=10).items:
                    cri.StopPodSandbox(pb.StopPodSandboxRequest(pod_sandbox_id=sb.id),
                                       timeout=30)
                    cri.RemovePodSandbox(pb.RemovePodSandboxRequest(pod_sandbox_id=sb.id),
                                         timeout=30)
            except Exception as e:  # the forced path below still cleans up
                print(f"teardown: CRI cleanup failed: {e}", file=sys.stderr)
        self.stop()
        for _ in range(3):
            for pid in sorted(self._cgroup_pids() | set(self._shim_pids())):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
        for mp in sorted(_mounts_under(self.run), key=lambda m: -m.count("/")):
            subprocess.run(["umount", mp], capture_output=True)
        for mp in sorted(_mounts_under(self.run), key=lambda m: -m.count("/")):
            subprocess.run(["umount", "-l", mp], capture_output=True)
        for top in self._cgroup_dirs():
            for dirpath, _, _ in sorted(os.walk(top), key=lambda t: -t[0].count("/")):
                try:
                    os.rmdir(dirpath)
                except OSError:
                    pass
        for entry in self._new_shim_state():
            if os.path.isdir(entry) and not os.path.islink(entry):
                shutil.rmtree(entry, ignore_errors=True)
            else:
                try:
                    os.unlink(entry)
                except OSError:
                    pass
        for d in ("/run/containerd/s", "/run/containerd/runc", "/run/containerd"):
            try:
                os.rmdir(d)  # only when empty (we created it)
            except OSError:
                pass
        shutil.rmtree(self.run, ignore_errors=True)

    def leaks(self):
        """What teardown left behind (empty list = nothing)."""
        out = []
        if self.proc and _pid_alive(self.proc.pid):
            out.append(f"containerd pid {self.proc.pid}")
        out += [f"shim pid {p}" for p in self._shim_pids()]
        out += [f"process {p} in a pod cgroup" for p in self._cgroup_pids()]
        out += [f"mount {m}" for m in _mounts_under(self.run)]
        out += [f"cgroup dir {d}" for d in self._cgroup_dirs()]
        out += [f"shim state {e}" for e in
                self._new_shim_state()]
        if os.path.exists(self.run):
            out.append(f"directory {self.run}")
        return out


def read_cpus_allowed(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    return None


def container_pid(cri, pb, cid):
    r = cri.ContainerStatus(pb.ContainerStatusRequest(container_id=cid, verbose=True), timeout=10)
    info = r.info.get("info")
    return json.loads(info)["pid"] if info else 0


def cgroup_cpus(cgroup_root, pod_uid, cid):
    path = os.path.join(CGROUP_MOUNT, "cpuset", cgroup_root, "pod" + pod_uid, cid, "cpuset.cpus")
    with open(path) as f:
        return f.read().strip()


def cgroup_cpus_path(cgroup_root, pod_uid, cid):
    return os.path.join(CGROUP_MOUNT, "cpuset", cgroup_root, "pod" + pod_uid, cid, "cpuset.cpus")
