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
  * the container runs podtopo-agent, and every flag passed is one `podtopo-agent --help` lists;
  * the image is the one scripts/image.py names for this version.
The extender (deploy/podtopo-extender.yaml) and its scheduler (deploy/podtopo-scheduler.yaml):
  * the extender's Deployment runs `podtopo extender` with flags its --help lists, one
    replica (its reservations are in memory), least privilege (non-root, nothing mounted), its
    probes and Service on the port --listen names;
  * its service account is bound to exactly one ClusterRole: noderesourcetopologies list and
    watch, pods list and watch, pods/binding create;
  * the scheduler's KubeSchedulerConfiguration (in a ConfigMap) is kubescheduler.config.k8s.io
    v1beta1 with only fields that version has, one profile named podtopo-scheduler, and one
    extender whose urlPrefix is the extender Service and whose verbs are filter, prioritize and
    bind; the scheduler's Deployment mounts that ConfigMap where --config points.

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
# The container runs podtopo-agent (the agent alone, docs/agent.md "Memory"), which the build
# makes next to podtopo and the package installs beside it.
need(c.get("command") == ["/usr/bin/podtopo-agent"],
     f"{where}: the container does not run /usr/bin/podtopo-agent (command: {c.get('command')})")
agent_program = os.path.join(os.path.dirname(os.path.abspath(podtopo)), "podtopo-agent")
help_text = subprocess.run([agent_program, "--help"], capture_output=True, text=True).stdout
need("--podresources-socket" in help_text, f"{agent_program} --help lists no agent flags")
flags = {}
for a in args:
    m = re.match(r"^(--[a-z-]+)=(.*)$", a)
    need(m is not None, f"{where}: argument {a!r} is not --flag=value")
    if m:
        need(m.group(1) in help_text, f"{where}: podtopo-agent has no flag {m.group(1)}")
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


def rbac_of(sa, ns):
    """(apiGroup, resource, verb) the ClusterRole bound to service account ns/sa grants."""
    bs = [d for _, d in docs if d["kind"] in ("ClusterRoleBinding", "RoleBinding")
          and any(s.get("kind") == "ServiceAccount" and s.get("name") == sa
                  and s.get("namespace") == ns for s in d.get("subjects", []))]
    granted = set()
    for b in bs:
        if b["roleRef"]["kind"] != "ClusterRole" or b["kind"] != "ClusterRoleBinding":
            continue
        for _, r in docs:
            if r["kind"] == "ClusterRole" and r["metadata"]["name"] == b["roleRef"]["name"]:
                for rule in r.get("rules", []):
                    need("*" not in rule.get("verbs", []) + rule.get("resources", []),
                         f"ClusterRole {r['metadata']['name']}: wildcard rule {rule}")
                    for g in rule.get("apiGroups", []):
                        for res in rule.get("resources", []):
                            for v in rule.get("verbs", []):
                                granted.add((g, res, v))
    return bs, granted


def deployment(name):
    found = [(w, d) for w, d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == name]
    need(len(found) == 1, f"expected one Deployment {name}, found {len(found)}")
    if not found:
        return None, None
    where, dep = found[0]
    need(dep["apiVersion"] == "apps/v1", f"{where}: apiVersion {dep['apiVersion']}")
    t = dep["spec"]["template"]
    for k, v in dep["spec"]["selector"]["matchLabels"].items():
        need(t["metadata"]["labels"].get(k) == v, f"{where}: selector {k}={v} does not match the template's labels")
    need(dep["spec"].get("replicas") == 1, f"{where}: not exactly one replica")
    need(dep["spec"].get("strategy", {}).get("type") == "Recreate", f"{where}: not Recreate (two would run at once)")
    p = t["spec"]
    need(not p.get("hostNetwork") and not p.get("hostPID"), f"{where}: host network or PID namespace")
    sa_name = p.get("serviceAccountName")
    need(any(d["kind"] == "ServiceAccount" and d["metadata"]["name"] == sa_name
             and d["metadata"].get("namespace") == dep["metadata"].get("namespace") for _, d in docs),
         f"{where}: service account {sa_name} is not declared")
    need(len(p["containers"]) == 1, f"{where}: expected one container")
    ctr = p["containers"][0]
    csc = ctr.get("securityContext", {})
    need(csc.get("runAsNonRoot") is True, f"{where}: may run as root")
    need(csc.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation is not false")
    need(csc.get("privileged") in (None, False), f"{where}: privileged")
    need(csc.get("readOnlyRootFilesystem") is True, f"{where}: root filesystem is writable")
    need(csc.get("capabilities", {}).get("drop") == ["ALL"], f"{where}: capabilities not all dropped")
    need(not csc.get("capabilities", {}).get("add"), f"{where}: capabilities added")
    need(csc.get("seccompProfile", {}).get("type") == "RuntimeDefault", f"{where}: no RuntimeDefault seccomp")
    need(not any("hostPath" in v for v in p.get("volumes", [])), f"{where}: mounts the host")
    return where, dep


# The extender.
where, ext = deployment("podtopo-extender")
ext_port = None
if ext:
    p = ext["spec"]["template"]["spec"]
    ns = ext["metadata"]["namespace"]
    ctr = p["containers"][0]
    need(ctr.get("image") == f"docker.io/library/podtopo:{version}", f"{where}: image {ctr.get('image')}")
    need(ctr.get("args", [])[:1] == ["extender"], f"{where}: the container does not run `podtopo extender`")
    ext_help = subprocess.run([podtopo, "extender", "--help"], capture_output=True, text=True).stdout
    eflags = {}
    for a in ctr.get("args", [])[1:]:
        m = re.match(r"^(--[a-z-]+)=(.*)$", a)
        need(m is not None, f"{where}: argument {a!r} is not --flag=value")
        if m:
            need(re.search(r"(?<![\w-])" + re.escape(m.group(1)) + r"(?![\w-])", ext_help) is not None,
                 f"{where}: podtopo extender has no flag {m.group(1)}")
            eflags[m.group(1)] = m.group(2)
    need("--kubeconfig" not in eflags, f"{where}: --kubeconfig in a pod (it uses its service account)")
    listen = eflags.get("--listen", "")
    need(listen.startswith("0.0.0.0:"), f"{where}: --listen {listen!r} is not reachable from the scheduler")
    ext_port = int(listen.rsplit(":", 1)[-1] or 0)
    named = {pt.get("name"): pt["containerPort"] for pt in ctr.get("ports", [])}
    need(ext_port in named.values(), f"{where}: port {ext_port} not declared")
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        g = ctr.get(probe, {}).get("httpGet", {})
        need(g.get("path") == path and named.get(g.get("port"), g.get("port")) == ext_port,
             f"{where}: {probe} is not GET {path} on port {ext_port}")
    ann = ext["spec"]["template"]["metadata"].get("annotations", {})
    need(ann.get("prometheus.io/port") == str(ext_port), f"{where}: prometheus.io/port is not {ext_port}")
    need(p.get("automountServiceAccountToken") is not False, f"{where}: the service account token is not mounted")
    bs, granted = rbac_of(p["serviceAccountName"], ns)
    need(len(bs) == 1, f"{where}: {p['serviceAccountName']} is not bound to exactly one ClusterRole")
    want = {("topology.node.k8s.io", "noderesourcetopologies", "list"),
            ("topology.node.k8s.io", "noderesourcetopologies", "watch"),
            ("", "pods", "list"), ("", "pods", "watch"), ("", "pods/binding", "create")}
    need(granted == want, f"{where}: the ClusterRole grants {sorted(granted)}, not exactly {sorted(want)}")
    svcs = [d for _, d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "podtopo-extender"]
    need(len(svcs) == 1, "deploy/: no Service podtopo-extender")
    for svc in svcs:
        labels = ext["spec"]["template"]["metadata"]["labels"]
        need(all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()),
             "Service podtopo-extender: its selector does not match the extender's pods")
        need(any(pt["port"] == ext_port and named.get(pt.get("targetPort"), pt.get("targetPort")) == ext_port
                 for pt in svc["spec"]["ports"]), f"Service podtopo-extender: no port {ext_port}")

# The second scheduler and its configuration.
V1BETA1 = {"apiVersion", "kind", "leaderElection", "clientConnection", "healthzBindAddress",
           "metricsBindAddress", "enableProfiling", "enableContentionProfiling", "disablePreemption",
           "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles",
           "extenders", "featureGates"}
EXTENDER = {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb",
            "enableHTTPS", "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable"}
where, sched = deployment("podtopo-scheduler")
cms = [d for _, d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "podtopo-scheduler-config"]
need(len(cms) == 1, "deploy/: no ConfigMap podtopo-scheduler-config")
for cm in cms:
    cfg = yaml.safe_load(cm["data"]["scheduler-config.yaml"])
    need(cfg.get("apiVersion") == "kubescheduler.config.k8s.io/v1beta1" and cfg.get("kind") == "KubeSchedulerConfiguration",
         "scheduler-config.yaml: not a kubescheduler.config.k8s.io/v1beta1 KubeSchedulerConfiguration")
    need(set(cfg) <= V1BETA1, f"scheduler-config.yaml: fields v1beta1 does not have: {sorted(set(cfg) - V1BETA1)}")
    profiles = cfg.get("profiles", [])
    need([pr.get("schedulerName") for pr in profiles] == ["podtopo-scheduler"],
         "scheduler-config.yaml: not exactly one profile, podtopo-scheduler (extenders apply to every profile)")
    need(all(set(pr) <= {"schedulerName", "plugins", "pluginConfig"} for pr in profiles),
         "scheduler-config.yaml: a profile has fields v1beta1 does not have (extenders are top-level)")
    exts = cfg.get("extenders", [])
    need(len(exts) == 1, "scheduler-config.yaml: not exactly one extender")
    for e in exts:
        need(set(e) <= EXTENDER, f"scheduler-config.yaml: extender fields v1beta1 does not have: {sorted(set(e) - EXTENDER)}")
        need(e.get("urlPrefix") == f"http://podtopo-extender.podtopo-system.svc:{ext_port}",
             f"scheduler-config.yaml: urlPrefix {e.get('urlPrefix')} is not the extender's Service")
        need((e.get("filterVerb"), e.get("prioritizeVerb"), e.get("bindVerb")) == ("filter", "prioritize", "bind"),
             "scheduler-config.yaml: the verbs are not filter, prioritize and bind")
        need(isinstance(e.get("weight"), int) and e["weight"] > 0, "scheduler-config.yaml: weight is not a positive integer")
        need(e.get("nodeCacheCapable") is True, "scheduler-config.yaml: not nodeCacheCapable")
    need(cfg.get("leaderElection", {}).get("leaderElect") is False or
         cfg.get("leaderElection", {}).get("resourceName") not in (None, "kube-scheduler"),
         "scheduler-config.yaml: leader election on the default scheduler's lock")
    if sched:
        ctr = sched["spec"]["template"]["spec"]["containers"][0]
        conf = [a.split("=", 1)[1] for a in ctr.get("command", []) + ctr.get("args", []) if a.startswith("--config=")]
        vols = {v["name"]: v for v in sched["spec"]["template"]["spec"].get("volumes", [])}
        mounted = [m["mountPath"] for m in ctr.get("volumeMounts", [])
                   if vols.get(m["name"], {}).get("configMap", {}).get("name") == "podtopo-scheduler-config"]
        need(len(conf) == 1 and len(mounted) == 1 and conf[0] == mounted[0] + "/scheduler-config.yaml",
             f"{where}: --config does not point at the mounted ConfigMap's scheduler-config.yaml")

if errors:
    print("FAIL:\n  " + "\n  ".join(errors))
    sys.exit(1)
print(f"ok: {len(docs)} documents in deploy/; the DaemonSet mounts {sorted(host_paths)} read-only")
