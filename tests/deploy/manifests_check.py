#!/usr/bin/python3
"""Offline check of deploy/ (no cluster): every document parses and has the fields its kind
requires (apiVersion, kind, metadata.name; a DaemonSet's selector matching its template's
labels, containers with name and image, volume mounts naming declared volumes), and the
agent's DaemonSet keeps its promises:
  * /var/lib/kubelet/pod-resources, /sys and the kubelet's directory are hostPath mounts,
    all read-only; nothing else of the host is mounted;
  * no privilege escalation, not privileged, every capability dropped, read-only root
    filesystem, RuntimeDefault seccomp;
  * its service account (whose token publishes the NodeResourceTopology) is bound to exactly
    one ClusterRole, which allows only what the agent touches: noderesourcetopologies get,
    create, patch and nodes get;
  * the NodeResourceTopology CRD (v1alpha2, cluster-scoped) is there with the schema's fields;
  * Prometheus scrape annotations name the port the agent listens on;
  * every flag passed to `podtopo agent` is one `podtopo agent --help` lists;
  * the image is the one scripts/image.py names for this version.

    manifests_check.py REPO PODTOPO
"""
import glob
import os
import re
import subprocess
import sys

import yaml

repo, podtopo = sys.argv[1], sys.argv[2]
errors = []


def need(cond, what):
    if not cond:
        errors.append(what)


docs = []
for path in sorted(glob.glob(os.path.join(repo, "deploy", "*.yaml"))):
    with open(path) as f:
        for i, d in enumerate(yaml.safe_load_all(f)):
            if d is None:
                continue
            where = f"{os.path.basename(path)}[{i}] {d.get('kind')}"
            need(isinstance(d.get("apiVersion"), str), f"{where}: no apiVersion")
            need(isinstance(d.get("kind"), str), f"{where}: no kind")
            need(isinstance(d.get("metadata", {}).get("name"), str), f"{where}: no metadata.name")
            docs.append((where, d))

daemonsets = [(w, d) for w, d in docs if d["kind"] == "DaemonSet"]
need(len(daemonsets) == 1, f"expected one DaemonSet, found {len(daemonsets)}")
where, ds = daemonsets[0]
need(ds["apiVersion"] == "apps/v1", f"{where}: apiVersion {ds['apiVersion']}")
spec = ds["spec"]
tmpl = spec["template"]
labels = tmpl["metadata"]["labels"]
for k, v in spec["selector"]["matchLabels"].items():
    need(labels.get(k) == v, f"{where}: selector {k}={v} does not match the template's labels")
pod = tmpl["spec"]
sa = pod.get("serviceAccountName")
ns = ds["metadata"].get("namespace")
need(any(d["kind"] == "ServiceAccount" and d["metadata"]["name"] == sa
         and d["metadata"].get("namespace") == ns for _, d in docs),
     f"{where}: service account {ns}/{sa} is not declared")
need(pod.get("automountServiceAccountToken") is not False,
     f"{where}: the service account token is not mounted (the agent publishes with it)")
bindings = [d for _, d in docs if d["kind"] in ("ClusterRoleBinding", "RoleBinding")
            and any(s.get("kind") == "ServiceAccount" and s.get("name") == sa
                    and s.get("namespace") == ns for s in d.get("subjects", []))]
need(len(bindings) == 1 and bindings[0]["kind"] == "ClusterRoleBinding"
     and bindings[0]["roleRef"]["kind"] == "ClusterRole",
     f"{where}: {sa} is not bound to exactly one ClusterRole")
if bindings:
    role = [d for _, d in docs if d["kind"] == "ClusterRole"
            and d["metadata"]["name"] == bindings[0]["roleRef"]["name"]]
    need(len(role) == 1, f"{where}: the ClusterRole {bindings[0]['roleRef']['name']} is not declared")
    granted = set()
    for r in (role[0].get("rules", []) if role else []):
        need("*" not in r.get("verbs", []) + r.get("resources", []) + r.get("apiGroups", []),
             f"{where}: the ClusterRole has a wildcard rule {r}")
        for g in r.get("apiGroups", []):
            for res in r.get("resources", []):
                for v in r.get("verbs", []):
                    granted.add((g, res, v))
    want = {("topology.node.k8s.io", "noderesourcetopologies", v) for v in ("get", "create", "patch")}
    want.add(("", "nodes", "get"))
    need(granted == want, f"{where}: the ClusterRole grants {sorted(granted)}, not exactly {sorted(want)}")
crds = [d for _, d in docs if d["kind"] == "CustomResourceDefinition"
        and d["metadata"]["name"] == "noderesourcetopologies.topology.node.k8s.io"]
need(len(crds) == 1, "deploy/: no NodeResourceTopology CustomResourceDefinition")
if crds:
    crd = crds[0]["spec"]
    need(crd.get("scope") == "Cluster", "the NRT CRD is not cluster-scoped")
    v2 = [v for v in crd.get("versions", []) if v.get("name") == "v1alpha2"]
    need(len(v2) == 1 and v2[0].get("served") and v2[0].get("storage"), "the NRT CRD does not serve and store v1alpha2")
    if v2:
        props = v2[0]["schema"]["openAPIV3Schema"]["properties"]
        need({"topologyPolicies", "attributes", "zones"} <= set(props), "the NRT schema lacks top-level fields")
        zone = props.get("zones", {}).get("items", {}).get("properties", {})
        need({"name", "type", "parent", "costs", "attributes", "resources"} <= set(zone),
             "the NRT schema's zones lack fields")
        res = zone.get("resources", {}).get("items", {}).get("properties", {})
        need({"name", "capacity", "allocatable", "available"} <= set(res), "the NRT schema's resources lack fields")
need(not pod.get("hostNetwork") and not pod.get("hostPID"), f"{where}: host network or PID namespace")
volumes = {v["name"]: v for v in pod["volumes"]}
containers = pod["containers"]
need(len(containers) == 1, f"{where}: expected one container")
c = containers[0]
need(bool(c.get("name")) and bool(c.get("image")), f"{where}: container without name or image")

version = subprocess.run([podtopo, "--version"], capture_output=True, text=True).stdout.split()[1]
need(c["image"] == f"docker.io/library/podtopo:{version}",
     f"{where}: image {c['image']} is not scripts/image.py's docker.io/library/podtopo:{version}")

sc = c.get("securityContext", {})
need(sc.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation is not false")
need(sc.get("privileged") in (None, False), f"{where}: privileged")
need(sc.get("readOnlyRootFilesystem") is True, f"{where}: root filesystem is writable")
need(sc.get("capabilities", {}).get("drop") == ["ALL"], f"{where}: capabilities not all dropped")
need(sc.get("seccompProfile", {}).get("type") == "RuntimeDefault", f"{where}: no RuntimeDefault seccomp")
need(not sc.get("capabilities", {}).get("add"), f"{where}: capabilities added")

host_paths = {}
for m in c["volumeMounts"]:
    need(m["name"] in volumes, f"{where}: mount {m['name']} names no volume")
    v = volumes.get(m["name"], {})
    if "hostPath" in v:
        need(m.get("readOnly") is True, f"{where}: host path {v['hostPath']['path']} is mounted writable")
        host_paths[v["hostPath"]["path"]] = m["mountPath"]
for required in ("/var/lib/kubelet/pod-resources", "/sys", "/var/lib/kubelet"):
    need(required in host_paths, f"{where}: {required} is not mounted")
need(set(host_paths) <= {"/var/lib/kubelet/pod-resources", "/sys", "/var/lib/kubelet"},
     f"{where}: more of the host is mounted: {sorted(host_paths)}")

args = c["args"]
need(args[0] == "agent", f"{where}: the container does not run `podtopo agent`")
help_text = subprocess.run([podtopo, "agent", "--help"], capture_output=True, text=True).stdout
flags = {}
for a in args[1:]:
    m = re.match(r"^(--[a-z-]+)=(.*)$", a)
    need(m is not None, f"{where}: argument {a!r} is not --flag=value")
    if m:
        need(m.group(1) in help_text, f"{where}: podtopo agent has no flag {m.group(1)}")
        flags[m.group(1)] = m.group(2)
port = flags.get("--metrics-addr", "").rsplit(":", 1)[-1]
ann = tmpl["metadata"].get("annotations", {})
need(ann.get("prometheus.io/scrape") == "true", f"{where}: no prometheus.io/scrape annotation")
need(ann.get("prometheus.io/port") == port, f"{where}: prometheus.io/port is not the agent's port {port}")
need(flags.get("--metrics-addr", "").startswith("0.0.0.0:"), f"{where}: metrics only on loopback")
need(any(p["containerPort"] == int(port or 0) for p in c.get("ports", [])), f"{where}: port {port} not declared")
sock = flags.get("--podresources-socket", "")
need(sock.startswith(host_paths.get("/var/lib/kubelet/pod-resources", "?")),
     f"{where}: --podresources-socket {sock} is not under the pod-resources mount")
node = flags.get("--node", "")
need(node == "sysfs:" + host_paths.get("/sys", "?"), f"{where}: --node {node} does not read the /sys mount")
need(flags.get("--kubelet-dir") == host_paths.get("/var/lib/kubelet"), f"{where}: --kubelet-dir is not the kubelet mount")
nrt_dir = os.path.dirname(flags.get("--nrt-out", "/nowhere/x"))
need(any(m["mountPath"] == nrt_dir and "emptyDir" in volumes[m["name"]] for m in c["volumeMounts"]),
     f"{where}: --nrt-out {flags.get('--nrt-out')} is not on a writable emptyDir (read-only root)")

# The probe's Job (deploy/podtopo-probe-job.yaml): `podtopo probe -o json` in a Guaranteed pod
# with whole CPUs, the same image, least privilege but CAP_SYS_NICE (SCHED_FIFO).
jobs = [(w, d) for w, d in docs if d["kind"] == "Job"]
need(len(jobs) == 1, f"expected one Job (the probe's), found {len(jobs)}")
for where, job in jobs:
    need(job["apiVersion"] == "batch/v1", f"{where}: apiVersion {job['apiVersion']}")
    jpod = job["spec"]["template"]["spec"]
    need(jpod.get("restartPolicy") in ("Never", "OnFailure"), f"{where}: restartPolicy")
    need(jpod.get("automountServiceAccountToken") is False, f"{where}: the service account token is mounted")
    need(len(jpod["containers"]) == 1, f"{where}: expected one container")
    jc = jpod["containers"][0]
    need(jc.get("image") == f"docker.io/library/podtopo:{version}", f"{where}: image {jc.get('image')}")
    jargs = jc.get("args", [])
    need(jargs[:1] == ["probe"], f"{where}: the container does not run `podtopo probe`")
    need("-o" in jargs and jargs[jargs.index("-o") + 1] == "json", f"{where}: not -o json")
    probe_help = subprocess.run([podtopo, "probe", "--help"], capture_output=True, text=True).stdout
    for a in jargs[1:]:
        if a.startswith("--"):
            need(a.split("=")[0] in probe_help, f"{where}: podtopo probe has no flag {a.split('=')[0]}")
    res = jc.get("resources", {})
    need(res.get("requests") == res.get("limits"), f"{where}: requests differ from limits (not Guaranteed)")
    cpu = str(res.get("limits", {}).get("cpu", ""))
    need(cpu.isdigit() and int(cpu) >= 1, f"{where}: cpu {cpu!r} is not a whole number of CPUs")
    need("memory" in res.get("limits", {}), f"{where}: no memory limit (not Guaranteed)")
    jsc = jc.get("securityContext", {})
    need(jsc.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation is not false")
    need(jsc.get("privileged") in (None, False), f"{where}: privileged")
    need(jsc.get("readOnlyRootFilesystem") is True, f"{where}: root filesystem is writable")
    need(jsc.get("capabilities", {}).get("drop") == ["ALL"], f"{where}: capabilities not all dropped")
    need(jsc.get("capabilities", {}).get("add", []) == ["SYS_NICE"],
         f"{where}: capabilities added beyond SYS_NICE (SCHED_FIFO)")
    need(jsc.get("seccompProfile", {}).get("type") == "RuntimeDefault", f"{where}: no RuntimeDefault seccomp")
    need(not jpod.get("volumes"), f"{where}: the probe mounts nothing")

if errors:
    print("FAIL:\n  " + "\n  ".join(errors))
    sys.exit(1)
print(f"ok: {len(docs)} documents in deploy/; the DaemonSet mounts {sorted(host_paths)} read-only")
