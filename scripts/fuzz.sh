#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS seconds (docs/reliability.md).
#
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]
#   scripts/fuzz.sh --list
#
# The target comes from the clang sanitizer build (build-asan, as scripts/test.sh builds it;
# PODTOPO_FUZZ_BUILD names another; missing targets are built). The run replays the seed
# corpus (build-asan/fuzz/corpus/TARGET, generated from the fixtures) and the regression
# inputs (fuzz/regressions/TARGET), then mutates with the target's dictionary
# (fuzz/dict/TARGET.dict). New interesting inputs go to build-asan/fuzz/work/TARGET (kept
# between runs); a crash or a broken invariant is saved as
# build-asan/fuzz/artifacts/TARGET/crash-<sha1> and the script exits non-zero: add that file
# to fuzz/regressions/TARGET/ and fix the bug. Prints "fuzz.sh: TARGET: N executions in S s".
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PODTOPO_FUZZ_BUILD:-build-asan}

if [ "${1:-}" = --list ]; then
  ls "$build"/fuzz/*_fuzzer 2>/dev/null | sed 's|.*/||; s|_fuzzer$||'
  exit 0
fi
if [ $# -lt 2 ]; then
  echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...] | --list" >&2
  exit 2
fi
target=$1
seconds=$2
shift 2
exe="$build/fuzz/${target}_fuzzer"
if [ ! -x "$exe" ] || [ -n "${PODTOPO_FUZZ_REBUILD:-}" ]; then
  if [ ! -f "$build/build.ninja" ]; then
    echo "fuzz.sh: no build in $build; configure it as scripts/test.sh does (clang, PODTOPO_FUZZ=ON)" >&2
    exit 2
  fi
  cmake --build "$build" -j"${PODTOPO_JOBS:-2}" --target "${target}_fuzzer" fuzz_corpus
fi

corpus="$build/fuzz/corpus/$target"
regressions="fuzz/regressions/$target"
work="$build/fuzz/work/$target"
artifacts="$build/fuzz/artifacts/$target"
mkdir -p "$work" "$artifacts" "$regressions"
dict=()
[ -f "fuzz/dict/$target.dict" ] && dict=(-dict="fuzz/dict/$target.dict")

log="$artifacts/last-run.log"
status=0
# -timeout: one input taking longer than 25 s is a hang (the XML import's child has its own
# 60 s limit, which only a hang of hwloc reaches). -rss_limit_mb: memory bounded per process.
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}" \
UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  "$exe" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2560 -max_len=262144 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" "$@" \
  "$work" "$corpus" "$regressions" >"$log" 2>&1 || status=$?
runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -n 1)
took=$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log" | grep -Eo 'in [0-9]+' | grep -Eo '[0-9]+' | tail -n 1)
if [ "$status" != 0 ]; then
  tail -n 60 "$log" >&2
  echo "fuzz.sh: $target: FAILED (exit $status) after ${runs:-?} executions; input saved in $artifacts/ (log $log)" >&2
  exit 1
fi
echo "fuzz.sh: $target: ${runs:-?} executions in ${took:-$seconds} s, $(ls "$work" | wc -l) inputs in $work"
