#!/usr/bin/env bash
# Runs every property test of a build tree once per seed, with a few cases each, to show that
# no seed fails a property or a coverage check (issue 26: a coverage assertion over a random
# generator must hold for every seed).
#
#   bash scripts/property_seeds.sh [--build-dir DIR] [--seeds N] [--first S] [--cases K] [--filter REGEX]
#
# The property tests are the rapidcheck ones (RC_GTEST_PROP, test::CheckProperty, the state
# property test), run with RC_PARAMS="seed=S max_success=K", and the tests that draw from a
# fixed std::mt19937 seed (NodePropertyTest), run with PODTOPO_PROPERTY_SEED=S. Their commands
# come from ctest (ctest --show-only=json-v1), as CI runs them. Seeds S .. S+N-1 (default 1 ..
# 1000), K = 5 cases (default), PODTOPO_PROPERTY_OPS=10000 (test.sh's figure). Prints each failing
# test with its seed and the first lines of its output, then one line per test; exits 1 on any
# failure. Two jobs at once (PODTOPO_JOBS).
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

# The property tests' names, from the sources: RC_GTEST_PROP(Suite, Name, ...), and TEST(Suite,
# Name) whose suite names a property (FastMergeProperty, StatePropertyTest, NodePropertyTest...).
names="$( { grep -rhoE 'RC_GTEST_PROP\([A-Za-z0-9_]+, *[A-Za-z0-9_]+' src | sed -E 's/RC_GTEST_PROP\(([^,]+), *(.*)/\1.\2/'
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

run_one() {  # run_one NAME CMD SEED: one run; a failure leaves $out/fail.NAME.SEED
  local name="$1" cmd="$2" seed="$3" args
  IFS=$'\x1f' read -r -a args <<<"$cmd"
  if ! RC_PARAMS="seed=$seed max_success=$cases" PODTOPO_PROPERTY_SEED="$seed" \
       PODTOPO_PROPERTY_OPS=10000 ASAN_OPTIONS=detect_leaks=1 \
       timeout 300 "${args[@]}" >"$out/log.$name.$seed" 2>&1; then
    mv "$out/log.$name.$seed" "$out/fail.$name.$seed"
  else
    rm -f "$out/log.$name.$seed"
  fi
}
export -f run_one
export out cases
start=$SECONDS
while IFS=$'\t' read -r name cmd; do
  for ((s = first; s < first + seeds; s++)); do printf '%s\t%s\t%s\n' "$name" "$cmd" "$s"; done
done <"$out/commands" |
  xargs -P "$jobs" -d '\n' -n 1 bash -c 'IFS=$'"'"'\t'"'"' read -r n c s <<<"$0"; run_one "$n" "$c" "$s"'

failed=0
while IFS=$'\t' read -r name cmd; do
  n=$(find "$out" -name "fail.$name.*" | wc -l)
  if [ "$n" = 0 ]; then
    echo "ok   $name: $seeds seeds"
  else
    failed=$((failed + 1))
    echo "FAIL $name: $n of $seeds seeds, e.g. seed $(find "$out" -name "fail.$name.*" | head -n 1 | sed 's/.*\.//')"
    find "$out" -name "fail.$name.*" | head -n 1 | xargs grep -m 12 -E "Failure|Falsifiable|seed|Expected|error" || true
  fi
done <"$out/commands"
echo "property_seeds.sh: $count tests, $failed failing, $seeds seeds each, $((SECONDS - start)) s"
[ "$failed" = 0 ]
