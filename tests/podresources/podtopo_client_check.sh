#!/usr/bin/env bash
# podtopo's own client end to end (under with_serve.sh): podtopo_client_check.sh PODTOPO 1.37|1.36
# Against the v1.37 server, and against a server serving as v1.36 did (--compat 1.36: no pod
# fields, the sidecars report the pod shared pool), the pod-scope-mixed pod must be counted once:
# 4 CPUs and 4Gi, never 6 CPUs or 6Gi. Also: the errors for an unknown pod, a missing socket and
# a socket this user may not open.
set -euo pipefail
podtopo="$1"
compat="$2"
sock="$PODRESOURCES_SOCKET"
out="$PODRESOURCES_TMP/client-check"
mkdir -p "$out"
fail() { echo "podtopo client check ($compat): FAIL: $*" >&2; exit 1; }

ok=0
for _ in $(seq 1 300); do
  if "$podtopo" client get default/pod-scope-mixed --socket "$sock" >/dev/null 2>&1; then ok=1; break; fi
  sleep 0.1
done
[ "$ok" = 1 ] || fail "client get never found default/pod-scope-mixed"

"$podtopo" client list --socket "$sock" --node preset:demo -o json >"$out/list.json"
"$podtopo" client get default/pod-scope-mixed --socket "$sock" --node preset:demo -o json >"$out/get.json"
"$podtopo" client allocatable --socket "$sock" --node preset:demo -o json >"$out/alloc.json"
/usr/bin/python3 - "$out" "$compat" <<'PY'
import json, sys
d, compat = sys.argv[1], sys.argv[2]
GI = 1 << 30
def load(n): return json.load(open(f"{d}/{n}"))
def count(cpus):
    n = 0
    for part in filter(None, cpus.split(",")):
        a, _, b = part.partition("-")
        n += int(b or a) - int(a) + 1
    return n
def check(c, m):
    if not c:
        print(f"podtopo client check ({compat}): FAIL: {m}", file=sys.stderr); sys.exit(1)
lst, get, alloc = load("list.json"), load("get.json"), load("alloc.json")
pods = [p for p in lst["pods"] if p["name"] == "pod-scope-mixed"]
check(len(pods) == 1, "list: pod-scope-mixed not listed once")
for where, p in (("list", pods[0]), ("get", get)):
    check(p["usage"]["cpuCount"] == 4, f"{where}: usage {p['usage']} is not the 4-CPU bubble")
    check(p["usage"]["memory"].get("memory") == 4 * GI, f"{where}: usage memory {p['usage']['memory']}")
    check(count(p["sharedPoolCpus"]) == 2, f"{where}: shared pool {p['sharedPoolCpus']}")
    check(count(p["exclusiveContainerCpus"]) == 2, f"{where}: exclusive {p['exclusiveContainerCpus']}")
    pools = [c["pool"] for c in p["containers"]]
    want = ["pod-shared", "pod-shared", "exclusive"] if compat == "1.37" else ["legacy-shared", "legacy-shared", "exclusive"]
    check(pools == want, f"{where}: pools {pools}, expected {want}")
    check(p["podLevel"] == (compat == "1.37"), f"{where}: podLevel {p['podLevel']}")
    for c in p["containers"][:2]:
        check(c["cpus"] == p["sharedPoolCpus"], f"{where}: {c['name']} runs on {c['cpus']}")
    check(len(p["numa"]) == 1 and p["numa"][0]["cpuCount"] == 4 and len(p["numa"][0]["numaNodes"]) == 1,
          f"{where}: NUMA totals {p['numa']} (one node with the 4 CPUs)")
    check(p["warnings"] == [], f"{where}: warnings {p['warnings']}")
check(lst["node"]["usage"]["cpuCount"] == 4, f"node usage {lst['node']['usage']}")
check(lst["node"]["allocatable"]["cpuCount"] == alloc["cpuCount"] > 4, "allocatable CPUs")
check(sum(n["cpuCount"] for n in alloc["numa"]) == alloc["cpuCount"], "allocatable NUMA split")
PY

table="$("$podtopo" client list --socket "$sock" --node preset:demo)"
grep -q "pod-scope-mixed" <<<"$table" || fail "table: $table"
grep -q " (4) " <<<"$table" || fail "table lacks the 4-CPU usage: $table"
wide="$("$podtopo" client list --socket "$sock" --node preset:demo -o wide)"
if [ "$compat" = 1.37 ]; then
  [ "$(grep -c '(pod shared pool)' <<<"$wide")" = 2 ] || fail "wide: sidecars not shown in the pod shared pool: $wide"
else
  [ "$(grep -c 'shared, pre-1.37 report' <<<"$wide")" = 2 ] || fail "wide: $wide"
fi

set +e
"$podtopo" client get default/no-such-pod --socket "$sock" >/dev/null 2>"$out/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "get of an unknown pod exited $rc"
grep -q "pod no-such-pod in namespace default not found" "$out/err" || fail "get unknown: $(cat "$out/err")"

set +e
"$podtopo" client list --socket "$PODRESOURCES_TMP/nope/kubelet.sock" >/dev/null 2>"$out/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "missing socket exited $rc"
[ "$(cat "$out/err")" = "podtopo: no PodResources socket at $PODRESOURCES_TMP/nope/kubelet.sock: is the kubelet running?" ] ||
  fail "missing socket: $(cat "$out/err")"

# Another user on the 0600 socket (as root: drop to nobody with setpriv).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 0711 "$PODRESOURCES_TMP"
  cp "$podtopo" "$PODRESOURCES_TMP/podtopo-copy"
  chmod 0755 "$PODRESOURCES_TMP/podtopo-copy"
  set +e
  setpriv --reuid=65534 --regid=65534 --clear-groups "$PODRESOURCES_TMP/podtopo-copy" client list \
    --socket "$sock" >/dev/null 2>"$out/err"
  rc=$?
  set -e
  chmod 0700 "$PODRESOURCES_TMP"
  rm -f "$PODRESOURCES_TMP/podtopo-copy"
  [ "$rc" = 1 ] || fail "socket of another user: exited $rc: $(cat "$out/err")"
  grep -q "permission denied on $sock: the kubelet creates the socket with mode 0600" "$out/err" ||
    fail "socket of another user: $(cat "$out/err")"
fi
echo "podtopo client check ($compat): OK"
