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

step "state repair drops a pod, and show agrees with state show afterwards (item 7)"
cp "$repo/docs/examples/pod-level-resource-demo.yaml" demo.yaml
run admit pod.yaml demo.yaml --state-dir rd -o json
uids=$(/usr/bin/python3 -c 'import json,sys; print(" ".join(p["uid"] for p in json.load(open(sys.argv[1]))["pods"]))' "$out")
set -- $uids
echo "$1" >running.txt
run state repair --yes --kubelet-dir rd --node preset:demo --running-pods running.txt
[ "$rc" = 0 ] || fail "state repair exited $rc"
run show --state-dir rd
has "pod-scope-mixed" "$out" && ! has "pod-level-resource-demo" "$out" ||
  fail "show re-admitted the pod that state repair dropped"

step "explain's advice is checked: more hugepages admit the pod (item 9)"
run explain "$repo/src/explain/testdata/hugepages.yaml" --config config.yaml -o json
/usr/bin/python3 - "$out" <<'PY' || fail "a suggestion is neither checked nor said not to help"
import json, sys
d = json.load(open(sys.argv[1]))
sugg = [s for p in d["pods"] for s in p["suggestions"]]
ok = sugg and all(s["verified"] or "would not help" in s["text"] or "still rejects" in s["text"]
                  for s in sugg)
sys.exit(0 if ok and any(s["kind"] == "node" and s["verified"] for s in sugg) else 1)
PY

step "lint checks hugepages, as admit rejects them (item 12.3)"
run lint "$repo/src/explain/testdata/hugepages.yaml" --config config.yaml
has "OutOfhugepages-2Mi" "$out" || fail "lint does not report the hugepages rejection"

step "explain says why align-by-socket put the CPUs off the hinted NUMA node (item 12.4)"
run explain "$repo/src/explain/testdata/two-cpus.yaml" --config "$repo/src/explain/testdata/align-by-socket.yaml"
has "outside the merged hint NUMA 0: align-by-socket" "$out" || fail "no word on align-by-socket"

step "--strict names every object it does not read, and prints no 'skipped' line (item 12.5)"
printf 'apiVersion: v1\nkind: Service\nmetadata: {name: s1}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s2}\n---\n' >kinds.yaml
cat pod.yaml >>kinds.yaml
run admit kinds.yaml --strict
[ "$rc" != 0 ] && has "Service s1" "$err" && has "Service s2" "$err" && ! has "skipped" "$err" ||
  fail "--strict exited $rc without naming both Services"

step "JSON: a trailing comma is refused and named, a top-level array is read (items 12.7, 12.8)"
printf '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},\n "spec": {"containers": [{"name": "c", "image": "x",}]}}' >comma.json
run admit comma.json
[ "$rc" != 0 ] && has "trailing comma" "$err" || fail "a trailing comma: exit $rc, not named"
printf '[{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},\n {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}]' >array.json
run admit array.json
[ "$rc" = 0 ] && has "default/a" "$out" && has "default/b" "$out" || fail "a JSON array: exit $rc"

step "admit on gb200 without max-allowable-numa-nodes names the fix, as lint does (item 12.10)"
run admit pod.yaml --node preset:gb200
[ "$rc" != 0 ] && has 'max-allowable-numa-nodes: "34"' "$err" || fail "admit does not name the fix"

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
