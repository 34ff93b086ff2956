#!/usr/bin/env bash
# first_hour.sh PODTOPO REPO: issue 22's "new user's hour", in order, as the operator typed it:
# each step runs the built binary from a scratch folder with relative paths and checks that the
# answer is true and that the commands agree. A failing step prints what it ran and what came
# back. Needs no root, no runtime and no network (serve listens on a unix socket in the folder).
set -uo pipefail
podtopo="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
repo="$(cd "$2" && pwd)"
work="$(mktemp -d /tmp/podtopo-first-hour-XXXXXX)"
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
steps=0 failures=0
out="$work/out" err="$work/err"
run() { "$podtopo" "$@" >"$out" 2>"$err"; rc=$?; }
fail() {
  failures=$((failures + 1))
  echo "FAIL step $steps: $*"
  echo "  stdout:"; sed 's/^/    /' "$out" | head -20
  echo "  stderr:"; sed 's/^/    /' "$err" | head -20
}
step() { steps=$((steps + 1)); echo "step $steps: $*"; }
has() { grep -q -- "$1" "$2"; }

cp "$repo/docs/examples/pod-scope-mixed.yaml" pod.yaml
cp "$repo/docs/examples/pod-sidecar-list.yaml" list.yaml

step "admit into a state dir that does not exist yet (created)"
run admit pod.yaml --state-dir sd -o json
[ "$rc" = 0 ] && [ -d sd ] || fail "admit exited $rc or made no state dir"

step "a changed pod is admitted again, and says so (item 1)"
sed 's/cpu: "2"/cpu: "3"/g' pod.yaml >pod3.yaml
run admit pod3.yaml --state-dir sd -o json
has "changed; admitting it again" "$err" || fail "no 'changed' message"
/usr/bin/python3 - "$out" <<'PY' || fail "main-app does not hold 3 CPUs"
import json, sys
d = json.load(open(sys.argv[1]))
pods = d["pods"] if isinstance(d, dict) and "pods" in d else d
for p in pods:
    for c in p.get("containers", []):
        if c["name"] == "main-app":
            from itertools import chain
            cpus = c["cpus"]
            n = 0
            for part in cpus.split(","):
                a, _, b = part.partition("-")
                n += (int(b) - int(a) + 1) if b else 1
            sys.exit(0 if n == 3 else 1)
sys.exit(1)
PY

step "explain agrees with what the state dir holds"
run explain pod3.yaml --state-dir sd
has "3 exclusive CPU" "$out" || fail "explain does not say 3 exclusive CPUs"

step "remove A B is all or nothing (item 5)"
cp -r sd sd-before
run remove default/pod-scope-mixed default/no-such-pod --state-dir sd
[ "$rc" != 0 ] || fail "remove of an unknown pod exited 0"
diff -r sd sd-before >/dev/null || fail "remove changed the state dir although it failed"

step "a missing state dir: readers refuse it (item 6)"
run show --state-dir no-such-dir
[ "$rc" != 0 ] && has "does not exist" "$err" || fail "show on a missing state dir exited $rc"

step "misspelt fields are warned about, --strict refuses them, lint reports them (item 4)"
sed 's/^    resources:/    resource:/' pod.yaml >typo.yaml
run admit typo.yaml
grep -q 'unknown field "resource" (did you mean resources?)' "$err" || fail "no warning for 'resource:'"
run admit typo.yaml --strict
[ "$rc" != 0 ] || fail "--strict accepted 'resource:'"
cp "$repo/docs/examples/kubelet-config.yaml" config.yaml   # single-numa-node, pod scope
run lint typo.yaml --config config.yaml
grep -q 'unknown field "resource"' "$out" "$err" || fail "lint does not report the misspelt field"

step "lint and admit give the kubelet's rejection reason (item 8)"
run admit list.yaml --config config.yaml -o json
admit_reason=$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
pods = d["pods"] if isinstance(d, dict) and "pods" in d else d
print(" ".join(p["reason"] for p in pods if p.get("name") == "all-in-main"))' "$out")
run lint list.yaml --config config.yaml
lint_line=$(grep "all-in-main" "$out" | grep -o "[A-Za-z]*Error" | head -n 1)
[ -n "$admit_reason" ] && [ "$lint_line" = "$admit_reason" ] ||
  fail "admit says '$admit_reason' for shop/all-in-main, lint says '$lint_line'"

step "the topology header counts every NUMA node (item 10)"
run topology --node preset:gb200
head -n 1 "$out" | grep -q "34 NUMA nodes" || fail "the header does not say 34 NUMA nodes"

step "serve and client with relative socket paths (item 2)"
mkdir -p sv pods
cp pod.yaml pods/
"$podtopo" serve --socket sv/kubelet.sock --state-dir sd-serve --pods-dir pods >serve.log 2>&1 &
serve_pid=$!
for _ in $(seq 1 100); do [ -S sv/kubelet.sock ] && break; sleep 0.1; done
start=$SECONDS
run client list --socket sv/kubelet.sock --node preset:demo
[ "$rc" = 0 ] && [ $((SECONDS - start)) -lt 5 ] || fail "client on a relative socket exited $rc after $((SECONDS - start)) s"

step "a second serve on the same state dir and socket is refused, naming the holder (item 3)"
run serve --socket sv/kubelet.sock --state-dir sd-serve --pods-dir pods
[ "$rc" != 0 ] && has "$serve_pid" "$err" || fail "a second serve exited $rc without naming pid $serve_pid"
[ -S sv/kubelet.sock ] || fail "the second serve removed the first one's socket"

echo "first hour: $steps steps, $failures failing"
[ "$failures" = 0 ]
