#!/usr/bin/python3
"""Writes an OCI image (an OCI layout tar, as `ctr images import` and `podman load` read it) of
podtopo, offline: nothing is pulled. The one layer holds the files of the Debian package
(build/podtopo_<version>_amd64.deb, unpacked with dpkg-deb) and the shared libraries the binary
needs on this Debian 12 host (found with ldd, copied with their soname links), plus a minimal
/etc/passwd and /etc/group (root, nobody) and an empty /tmp.

    image.py DEB OUT.tar [--name podtopo:VERSION]

Entrypoint /usr/bin/podtopo, Cmd ["--help"]; the DaemonSet (deploy/) runs /usr/bin/podtopo-agent
(its command) with the agent's flags.
"""
import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile


def add_bytes(tar, name, data, mode=0o644):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def add_dir(tar, name, mode=0o755):
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = mode
    info.mtime = 0
    tar.addfile(info)


def write_oci_layout(out, name, layer_bytes, image_config, annotations=None):
    """Writes an OCI layout tar (atomically) holding one amd64 image named `name` (the
    io.containerd.image.name annotation `ctr images import` reads): one uncompressed layer and
    `image_config` as the config's "config" (Entrypoint, Cmd, Env, ...)."""
    layer_digest = hashlib.sha256(layer_bytes).hexdigest()
    config = json.dumps({
        "architecture": "amd64", "os": "linux", "config": image_config,
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + layer_digest]},
    }, sort_keys=True).encode()
    config_digest = hashlib.sha256(config).hexdigest()
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": "sha256:" + config_digest, "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": "sha256:" + layer_digest, "size": len(layer_bytes)}],
    }, sort_keys=True).encode()
    manifest_digest = hashlib.sha256(manifest).hexdigest()
    index = json.dumps({
        "schemaVersion": 2,
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "digest": "sha256:" + manifest_digest, "size": len(manifest),
                       "platform": {"architecture": "amd64", "os": "linux"},
                       "annotations": dict({"io.containerd.image.name": name},
                                           **(annotations or {}))}],
    }).encode()
    tmp_out = out + ".tmp"
    with tarfile.open(tmp_out, "w", format=tarfile.PAX_FORMAT) as tar:
        add_bytes(tar, "oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add_bytes(tar, "index.json", index)
        for digest, data in ((layer_digest, layer_bytes), (config_digest, config),
                             (manifest_digest, manifest)):
            add_bytes(tar, f"blobs/sha256/{digest}", data)
    os.replace(tmp_out, out)


def libraries(binary):
    """(path as the loader finds it, real file) for every library ldd lists, and the loader."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts:
            path = parts[parts.index("=>") + 1]
            if path.startswith("/"):
                libs.append(path)
        elif parts and parts[0].startswith("/"):
            libs.append(parts[0])  # the dynamic loader
        if "not found" in line:
            sys.exit(f"image.py: {binary}: {line.strip()}")
    return libs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("deb")
    ap.add_argument("out")
    ap.add_argument("--name", default=None)
    args = ap.parse_args()
    version = subprocess.run(["dpkg-deb", "--field", args.deb, "Version"], capture_output=True,
                             text=True, check=True).stdout.strip()
    name = args.name or f"docker.io/library/podtopo:{version}"
    with tempfile.TemporaryDirectory(prefix="podtopo-image-") as tmp:
        subprocess.run(["dpkg-deb", "-x", args.deb, tmp], check=True)
        layer_buf = io.BytesIO()
        seen = set()
        with tarfile.open(fileobj=layer_buf, mode="w", format=tarfile.PAX_FORMAT) as layer:
            for d in ("etc", "tmp", "proc", "sys", "dev", "run", "var", "var/lib"):
                add_dir(layer, d, 0o1777 if d == "tmp" else 0o755)
                seen.add(d)
            add_bytes(layer, "etc/passwd",
                      b"root:x:0:0:root:/:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/:/usr/sbin/nologin\n")
            add_bytes(layer, "etc/group", b"root:x:0:\nnogroup:x:65534:\n")
            # Merged /usr as on the host (/lib -> usr/lib, /lib64 -> usr/lib64, ...).
            merged = {}
            for top in ("bin", "sbin", "lib", "lib64"):
                if os.path.islink("/" + top):
                    info = tarfile.TarInfo(top)
                    info.type = tarfile.SYMTYPE
                    info.linkname = os.readlink("/" + top)
                    layer.addfile(info)
                    seen.add(top)
                    merged[top] = os.readlink("/" + top)
            # The package's files (binary, man page, completions, unit), as dpkg would lay them.
            for dirpath, dirnames, filenames in os.walk(tmp):
                dirnames.sort()
                rel = os.path.relpath(dirpath, tmp)
                top = rel.split("/")[0]
                if top in merged:  # the package's /lib/systemd goes to usr/lib/systemd
                    rel = os.path.normpath(os.path.join(merged[top], rel[len(top):].lstrip("/")))
                if rel != "." and rel not in seen:
                    add_dir(layer, rel)
                    seen.add(rel)
                for f in sorted(filenames):
                    p = os.path.join(dirpath, f)
                    arc = os.path.normpath(os.path.join(rel, f))
                    layer.add(p, arcname=arc, recursive=False)
                    seen.add(arc)
            # The runtime libraries of both programs, under their soname, in their real directory.
            needed = []
            for program in ("usr/bin/podtopo", "usr/bin/podtopo-agent"):
                if os.path.exists(os.path.join(tmp, program)):
                    needed += [lib for lib in libraries(os.path.join(tmp, program)) if lib not in needed]
            for lib in needed:
                directory = os.path.realpath(os.path.dirname(lib)).strip("/")
                arc = directory + "/" + os.path.basename(lib)
                if arc in seen:
                    continue
                parts = directory.split("/")
                for i in range(1, len(parts) + 1):
                    d = "/".join(parts[:i])
                    if d not in seen:
                        add_dir(layer, d)
                        seen.add(d)
                with open(os.path.realpath(lib), "rb") as f:
                    add_bytes(layer, arc, f.read(), 0o755)
                seen.add(arc)
        layer_bytes = layer_buf.getvalue()
    write_oci_layout(args.out, name, layer_bytes, {
        "Entrypoint": ["/usr/bin/podtopo"], "Cmd": ["--help"],
        "Env": ["PATH=/usr/bin:/bin"], "WorkingDir": "/",
        "Labels": {"org.opencontainers.image.title": "podtopo",
                   "org.opencontainers.image.version": version}},
        {"org.opencontainers.image.ref.name": version})
    print(f"{args.out}: {name}, layer {len(layer_bytes) // (1 << 20)} MiB")


if __name__ == "__main__":
    main()
