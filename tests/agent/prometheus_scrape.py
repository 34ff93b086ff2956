#!/usr/bin/python3
"""A real Prometheus scrapes `podtopo agent` (run under tests/podresources/with_serve.sh, which
starts `podtopo serve` as the kubelet and sets PODRESOURCES_SOCKET).

  prometheus_scrape.py PODTOPO PROMETHEUS PROMTOOL

Adds the seed pod to the served pods, starts the agent and Debian's Prometheus on loopback (a
temporary config and storage dir), waits until Prometheus has scraped the agent, queries
`podtopo_pod_cpus` through its HTTP API and checks that every pod's value equals the CPU count
`podtopo client list -o json` reports for it. `promtool check metrics` must accept the agent's
exposition. Exit 0 on success, 1 with the reason otherwise.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import free_port, get, wait  # noqa: E402


def main():
    podtopo, prometheus, promtool = sys.argv[1:4]
    for tool in (prometheus, promtool):
        if not os.access(tool, os.X_OK):
            sys.exit(f"prometheus_scrape: {tool} missing (scripts/setup.sh test installs Debian's prometheus)")
    sock = os.environ["PODRESOURCES_SOCKET"]
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    shutil.copy(os.path.join(repo, "docs/examples/pod-level-resource-demo.yaml"),
                os.environ["PODRESOURCES_PODS_DIR"])
    tmp = tempfile.mkdtemp(prefix="podtopo-prom-")
    agent_port, prom_port = free_port(), free_port()
    procs = []
    try:
        agent = subprocess.Popen(
            [podtopo, "agent", "--podresources-socket", sock, "--node", "preset:demo",
             "--metrics-addr", f"127.0.0.1:{agent_port}", "--interval", "500ms"],
            stderr=open(os.path.join(tmp, "agent.log"), "w"))
        procs.append(agent)
        exposition = wait("the agent to see both pods", seconds=60, check=lambda: (lambda t: t if t.count(
            "podtopo_pod_cpus{") == 2 else None)(get(f"http://127.0.0.1:{agent_port}/metrics")))

        check = subprocess.run([promtool, "check", "metrics"], input=exposition, text=True,
                               capture_output=True)
        if check.returncode != 0:
            sys.exit(f"promtool check metrics rejected the exposition:\n{check.stdout}{check.stderr}")
        print("promtool check metrics: ok")

        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
scrape_configs:
- job_name: podtopo-agent
  static_configs:
  - targets: ["127.0.0.1:{agent_port}"]
""")
        prom = subprocess.Popen(
            [prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp}/data",
             f"--web.listen-address=127.0.0.1:{prom_port}"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prometheus.log"), "w"))
        procs.append(prom)
        query = urllib.parse.urlencode({"query": "podtopo_pod_cpus"})

        def scraped():
            r = json.loads(get(f"http://127.0.0.1:{prom_port}/api/v1/query?{query}"))
            return r["data"]["result"] if len(r["data"]["result"]) == 2 else None

        result = wait("Prometheus to scrape podtopo_pod_cpus", scraped, seconds=60)
        got = {(s["metric"]["namespace"], s["metric"]["pod"]): float(s["value"][1]) for s in result}
        for s in result:
            if s["metric"].get("job") != "podtopo-agent":
                sys.exit(f"unexpected series {s}")

        client = subprocess.run([podtopo, "client", "list", "-o", "json", "--node", "preset:demo",
                                 "--socket", sock], capture_output=True, text=True, check=True)
        want = {(p["namespace"], p["name"]): float(p["usage"]["cpuCount"])
                for p in json.loads(client.stdout)["pods"]}
        print(f"prometheus: {sorted(got.items())}")
        print(f"podtopo client: {sorted(want.items())}")
        if got != want:
            sys.exit("prometheus_scrape: Prometheus's podtopo_pod_cpus differ from podtopo client's")
        if got.get(("default", "pod-scope-mixed")) != 4.0:
            sys.exit("prometheus_scrape: pod-scope-mixed should hold its 4-CPU bubble, counted once")
        up = json.loads(get(f"http://127.0.0.1:{prom_port}/api/v1/query?" +
                            urllib.parse.urlencode({"query": "podtopo_podresources_up"})))
        if [float(s["value"][1]) for s in up["data"]["result"]] != [1.0]:
            sys.exit(f"podtopo_podresources_up: {up}")
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                rc = p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = "killed"
            if p is procs[0] and rc != 0:
                print(open(os.path.join(tmp, "agent.log")).read(), file=sys.stderr)
                sys.exit(f"podtopo agent exited with {rc} after SIGTERM")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
