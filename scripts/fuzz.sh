#!/usr/bin/env bash
# Runs the libFuzzer targets (docs/reliability.md).
#
#   scripts/fuzz.sh [--build-dir DIR] TARGET SECONDS [libFuzzer flags...]   one target
#   scripts/fuzz.sh [--build-dir DIR] --all SECONDS [libFuzzer flags...]    every target, in turn
#   scripts/fuzz.sh [--build-dir DIR] --list
#
# The targets come from a clang build configured with PODTOPO_FUZZ=ON (docs/reliability.md says
# how): DIR, else $PODTOPO_FUZZ_BUILD, else build (the tree scripts/test.sh builds). A missing
# target is built (in that build tree, -j$PODTOPO_JOBS, default 2). --all runs every target of that tree (the list CMake
# recorded, PODTOPO_FUZZ_TARGETS in its cache) for SECONDS each, one after the other, goes on
# after a failure and exits 1 if any target crashed or broke an invariant (CI calls it so).
#
# Each run replays the seed corpus (DIR/fuzz/corpus/TARGET, generated from the fixtures) and the
# regression inputs (fuzz/regressions/TARGET), then mutates with the target's dictionary
# (fuzz/dict/TARGET.dict). New interesting inputs go to DIR/fuzz/work/TARGET (kept between
# runs); a crash or a broken invariant is saved as DIR/fuzz/artifacts/TARGET/crash-<sha1> and the
# run fails: add that file to fuzz/regressions/TARGET/ and fix the bug. Each run prints
# "fuzz.sh: TARGET: N executions in S s, ...".
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PODTOPO_FUZZ_BUILD:-build}

usage() {
  echo "usage: scripts/fuzz.sh [--build-dir DIR] TARGET SECONDS [libFuzzer flags...]" >&2
  echo "       scripts/fuzz.sh [--build-dir DIR] --all SECONDS [libFuzzer flags...]" >&2
  echo "       scripts/fuzz.sh [--build-dir DIR] --list" >&2
  exit 2
}

if [ "${1:-}" = --build-dir ]; then
  [ $# -ge 2 ] || usage
  build=$2
  shift 2
fi
if [ ! -d "$build" ]; then
  echo "fuzz.sh: no build directory $build; configure it as docs/reliability.md says (clang, PODTOPO_FUZZ=ON)" >&2
  exit 2
fi

# The targets of the build tree: those CMake configured (a PODTOPO_FUZZ=ON tree records them),
# else the programs present.
targets_of_build() {
  local cached
  cached=$(sed -n 's/^PODTOPO_FUZZ_TARGETS:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
  if [ -n "$cached" ] && grep -q '^PODTOPO_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
    tr ';' '\n' <<<"$cached"
  else
    ls "$build"/fuzz/*_fuzzer 2>/dev/null | sed 's|.*/||; s|_fuzzer$||'
  fi
}

ensure_built() {
  local target=$1
  if [ ! -x "$build/fuzz/${target}_fuzzer" ] || [ -n "${PODTOPO_FUZZ_REBUILD:-}" ]; then
    if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
      echo "fuzz.sh: $target: no ${target}_fuzzer in $build and nothing to build it with" >&2
      return 1
    fi
    cmake --build "$build" -j"${PODTOPO_JOBS:-2}" --target "${target}_fuzzer" fuzz_corpus
  fi
}

# run_target TARGET SECONDS [libFuzzer flags...]: 0 when the run found nothing.
run_target() {
  local target=$1 seconds=$2
  shift 2
  ensure_built "$target" || return 1
  local exe="$build/fuzz/${target}_fuzzer"
  local corpus="$build/fuzz/corpus/$target"
  local regressions="fuzz/regressions/$target"
  local work="$build/fuzz/work/$target"
  local artifacts="$build/fuzz/artifacts/$target"
  mkdir -p "$work" "$artifacts" "$corpus"
  local inputs=("$work" "$corpus")
  [ -d "$regressions" ] && inputs+=("$regressions")
  local dict=()
  [ -f "fuzz/dict/$target.dict" ] && dict=(-dict="fuzz/dict/$target.dict")
  # Per-target flags, before the caller's (a flag given twice: the last counts).
  local own=(-max_len=262144)
  case "$target" in
    # The seeds are whole trees, at most 118 KB once make_corpus.py keeps only what discovery
    # reads; libFuzzer's per-input costs grow with the size.
    sysfs) own=(-max_len=131072) ;;
  esac

  local log="$artifacts/last-run.log" status=0
  # -timeout: one input taking longer than 25 s is a hang (the XML import's child has its own
  # 60 s limit, which only a hang of hwloc reaches). -rss_limit_mb: memory bounded per process.
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    "$exe" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2560 "${own[@]}" \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" "$@" \
    "${inputs[@]}" >"$log" 2>&1 || status=$?
  local runs took
  runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -n 1 || true)
  took=$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log" | grep -Eo 'in [0-9]+' | grep -Eo '[0-9]+' | tail -n 1 || true)
  if [ "$status" != 0 ]; then
    tail -n 60 "$log" >&2
    echo "fuzz.sh: $target: FAILED (exit $status) after ${runs:-?} executions; input saved in $artifacts/ (log $log)" >&2
    return 1
  fi
  echo "fuzz.sh: $target: ${runs:-?} executions in ${took:-$seconds} s, $(ls "$work" | wc -l) inputs in $work"
}

case "${1:-}" in
  --list)
    targets_of_build
    ;;
  --all)
    [ $# -ge 2 ] || usage
    seconds=$2
    shift 2
    mapfile -t targets < <(targets_of_build)
    if [ ${#targets[@]} = 0 ]; then
      echo "fuzz.sh: $build has no fuzz targets (configure it with clang and -DPODTOPO_FUZZ=ON)" >&2
      exit 2
    fi
    failed=()
    for t in "${targets[@]}"; do
      run_target "$t" "$seconds" "$@" || failed+=("$t")
    done
    if [ ${#failed[@]} != 0 ]; then
      echo "fuzz.sh: --all: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]}" >&2
      exit 1
    fi
    echo "fuzz.sh: --all: ${#targets[@]} targets, ${seconds} s each, no finding"
    ;;
  ''|-*)
    usage
    ;;
  *)
    [ $# -ge 2 ] || usage
    run_target "$@" || exit 1
    ;;
esac
