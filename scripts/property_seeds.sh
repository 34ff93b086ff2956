#!/usr/bin/env bash
# Runs every property test of a build tree once per seed, with a few cases each, to show that
# no seed fails a property or a coverage check (issue 26: a coverage assertion over a random
# generator must hold for every seed).
#
#   bash scripts/property_seeds.sh [--build-dir DIR] [--seeds N] [--first S] [--cases K] [--filter REGEX]
#
# The property tests are those of src/testing/property.h (PODTOPO_PROPERTY, CheckProperty) and
# NodePropertyTest (std::mt19937, testing::PropertySeeds). Each runs in one process, its command
# from ctest (ctest --show-only=json-v1) as CI runs it, with PODTOPO_PROPERTY_SEEDS=S-(S+N-1)
# (every seed in that process; default 1-1000), RC_PARAMS="max_success=K" (default 5 cases a
# seed) and PODTOPO_PROPERTY_OPS=1000 (NodePropertyTest's operations; the environment's value
# wins). Prints a line per test, and for a failing one its seed and the first lines of its
# output; exits 1 on any failure. Two tests at once (PODTOPO_JOBS).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build seeds=1000 first=1 cases=5 filter='.'
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    --first) first="$2"; shift 2 ;;
    --cases) cases="$2"; shift 2 ;;
    --filter) filter="$2"; shift 2 ;;
    *) echo "property_seeds.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -f "$build/CTestTestfile.cmake" ] || { echo "property_seeds.sh: $build is not a configured build tree (scripts/test.sh builds build/)" >&2; exit 2; }
jobs=${PODTOPO_JOBS:-2}
out="$(mktemp -d /tmp/podtopo-property-seeds-XXXXXX)"
trap 'rm -rf "$out"' EXIT

# The property tests' names, from the sources: PODTOPO_PROPERTY(Suite, Name, ...), and TEST(Suite,
# Name) whose suite names a property (FastMergeProperty, StatePropertyTest, NodePropertyTest...).
names="$( { grep -rhoE --include='*_test.cc' 'PODTOPO_PROPERTY\([A-Za-z0-9_]+, *[A-Za-z0-9_]+' src | sed -E 's/PODTOPO_PROPERTY\(([^,]+), *(.*)/\1.\2/'
            grep -rhoE '^TEST\([A-Za-z0-9_]*Property[A-Za-z0-9_]*, *[A-Za-z0-9_]+' src | sed -E 's/TEST\(([^,]+), *(.*)/\1.\2/'
          } | sort -u | grep -E "$filter" || true)"
[ -n "$names" ] || { echo "property_seeds.sh: no property test matches $filter" >&2; exit 2; }

# ctest's command for each (gtest_discover_tests registers Suite.Name, PRE_TEST discovery: the
# names are known once the test programs exist).
printf '%s\n' "$names" >"$out/names"
/usr/bin/python3 - "$build" "$out/commands" "$out/names" <<'PY'
import json, subprocess, sys
build, dest = sys.argv[1], sys.argv[2]
want = set(open(sys.argv[3]).read().split())
listing = json.loads(subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                                    capture_output=True, text=True).stdout)
found = {}
for t in listing["tests"]:
    if t["name"] in want and "command" in t:
        found[t["name"]] = t["command"]
missing = sorted(want - set(found))
with open(dest, "w") as f:
    for name in sorted(found):
        cmd = found[name]
        # gtest_discover_tests: [program, --gtest_filter=Suite.Name, --gtest_also_run_disabled_tests]
        f.write(name + "\t" + "\x1f".join(cmd) + "\n")
if missing:
    print("property_seeds.sh: not in this build's ctest list (built without them?): " + " ".join(missing),
          file=sys.stderr)
PY
count=$(wc -l <"$out/commands")
echo "property_seeds.sh: $count property tests x $seeds seeds (from $first), $cases cases each, $jobs jobs"

run_one() {  # run_one NAME CMD: every seed in one process; a failure leaves $out/fail.NAME
  local name="$1" cmd="$2" args t0=$SECONDS
  IFS=$'\x1f' read -r -a args <<<"$cmd"
  if PODTOPO_PROPERTY_SEEDS="$first-$((first + seeds - 1))" RC_PARAMS="max_success=$cases" \
       PODTOPO_PROPERTY_OPS=${PODTOPO_PROPERTY_OPS:-1000} ASAN_OPTIONS=detect_leaks=1 \
       timeout 3600 "${args[@]}" >"$out/log.$name" 2>&1; then
    echo "ok   $name: $seeds seeds in $((SECONDS - t0)) s"
  else
    mv "$out/log.$name" "$out/fail.$name"
    echo "FAIL $name after $((SECONDS - t0)) s:"
    grep -m 12 -E "seed|Falsifiable|Failure|Expected|error|Timeout|timeout" "$out/fail.$name" | sed 's/^/    /' || true
  fi
}
export -f run_one
export out cases first seeds
start=$SECONDS
cut -f1,2 "$out/commands" | xargs -P "$jobs" -d '\n' -n 1 bash -c 'IFS=$'"'"'\t'"'"' read -r n c <<<"$0"; run_one "$n" "$c"'

failed=$(find "$out" -name "fail.*" | wc -l)
echo "property_seeds.sh: $count tests, $failed failing, $seeds seeds each, $((SECONDS - start)) s"
[ "$failed" = 0 ]
