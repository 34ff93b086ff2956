#!/usr/bin/env bash
# ThreadSanitizer on the server side (docs/client.md, "ThreadSanitizer"): builds podresources_test,
# serve_test, metrics_test and client_test with -fsanitize=thread in build-tsan/ and runs them with
# scripts/tsan.supp; a report fails the script (halt_on_error=1). Then the canaries: each
# ServerTest.DISABLED_TsanCanary* test races on purpose in code the server's handlers run below
# gRPC's frames, and must be reported with the same suppressions (or the script fails).
# scripts/test.sh runs it after the ASan tests (CI); alone: `bash scripts/tsan.sh` (after
# scripts/setup.sh test). Where no TSan build can run here, it says why and skips (exit 0).
# PODTOPO_JOBS=N: parallel jobs (default 2).
#
# The build: clang -O0 (gcc -O1 takes 1.8 times its CPU time, docs/client.md), only these
# programs and the libraries they link (the core up to admission, the server side, the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${PODTOPO_JOBS:-2}
start=$SECONDS
step() { printf 'tsan.sh: [%3d:%02d] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }
skip() {
  step "SKIPPED, no ThreadSanitizer run: $*"
  exit 0
}
targets=(podresources_test serve_test metrics_test client_test)

# Can TSan build and run here? A two-thread race must be reported.
cxx=$(command -v clang++-14 || command -v clang++ || true)
[ -n "$cxx" ] || skip "no clang++ (scripts/setup.sh test installs clang-14)"
symbolizer="$(dirname "$(readlink -f "$cxx")")/llvm-symbolizer"
# The suppressions name functions: without llvm-symbolizer TSan's frames have no names.
[ -x "$symbolizer" ] || skip "no $symbolizer to name the frames of TSan's reports"
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
cat >"$probe_dir/race.cc" <<'EOF'
#include <thread>
int shared = 0;
int main() { std::thread t([] { shared = 1; }); shared = 2; t.join(); return 0; }
EOF
if ! out=$("$cxx" -fsanitize=thread -g -fuse-ld=lld "$probe_dir/race.cc" -o "$probe_dir/race" 2>&1); then
  skip "$cxx cannot build with -fsanitize=thread: $(head -n 3 <<<"$out")"
fi
# TSan maps fixed ranges of the address space: kernels with more mmap randomisation than it
# supports make it stop at start ("unexpected memory mapping"); without randomisation it runs.
run=()
probe() { TSAN_OPTIONS="exitcode=66 external_symbolizer_path=$symbolizer" "${run[@]}" "$probe_dir/race" 2>&1; }
out=$(probe) && rc=0 || rc=$?
if [ "$rc" != 66 ] && command -v setarch >/dev/null; then
  run=(setarch "$(uname -m)" -R)
  out2=$(probe) && rc=0 || rc=$?
  [ "$rc" = 66 ] && step "TSan runs only without address-space randomisation here: setarch -R" || out="$out2"
fi
if [ "$rc" != 66 ]; then
  if grep -q 'ThreadSanitizer: data race' <<<"$out"; then
    echo "$out" >&2
    step "FAILED: the probe's race was reported but the exit status was $rc, not 66"
    exit 1
  fi
  skip "a -fsanitize=thread program does not run here (exit $rc): $(head -n 3 <<<"$out")"
fi

step "ThreadSanitizer build (build-tsan/, $(basename "$cxx") -O0): ${targets[*]}"
# A build-tsan/ configured with another compiler (gcc, before) is configured afresh.
if [ -f build-tsan/CMakeCache.txt ] && ! grep -qx "CMAKE_CXX_COMPILER:FILEPATH=$cxx" build-tsan/CMakeCache.txt &&
  ! grep -qx "CMAKE_CXX_COMPILER:STRING=$cxx" build-tsan/CMakeCache.txt; then
  rm -rf build-tsan/CMakeCache.txt build-tsan/CMakeFiles
fi
CXX=$cxx cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O0" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread -fuse-ld=lld" \
  -DPODTOPO_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-tsan -j"$jobs" --target "${targets[@]}"

options="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp"
options+=" external_symbolizer_path=$symbolizer"
exe() { find build-tsan/src -type f -name "$1" -perm -u+x | head -n 1; }
for t in "${targets[@]}"; do
  step "ThreadSanitizer: $(exe "$t")"
  TSAN_OPTIONS=$options PODTOPO_PROPERTY_OPS=200 "${run[@]}" "$(exe "$t")" --gtest_brief=1
done

# The canaries: each must stop with a data race between two of the server's handlers: both
# access stacks hold the test's hook (server_test.cc), PodResourcesServer::Observe and, below
# them, gRPC's CallbackUnaryHandler. Any other first report fails.
canaries=$("$(exe podresources_test)" --gtest_list_tests --gtest_also_run_disabled_tests |
  awk '/^[^ ]/ {suite = $1} /DISABLED_TsanCanary/ {print suite $1}')
[ -n "$canaries" ] || { step "FAILED: no DISABLED_TsanCanary test in podresources_test"; exit 1; }
for c in $canaries; do
  step "canary (must be reported): $c"
  out=$(TSAN_OPTIONS=$options "${run[@]}" "$(exe podresources_test)" --gtest_also_run_disabled_tests \
    --gtest_filter="$c" 2>&1) && rc=0 || rc=$?
  # The first report's two access stacks (not the threads' creation stacks: StartServer in
  # server_test.cc starts gRPC's threads).
  stack() {
    awk -v n="$1" '/^  (Location is|Thread T|Mutex|As if)/ {exit}
      /^  (Previous )?(Atomic )?([Rr]ead|[Ww]rite) of size/ {i++} i == n {print}' <<<"$out"
  }
  handlers_race() {
    grep -q '^WARNING: ThreadSanitizer: data race' <<<"$out" || return 1
    for n in 1 2; do
      for frame in src/podresources/server_test.cc 'podtopo::podresources::PodResourcesServer::Observe(' \
        'grpc::internal::CallbackUnaryHandler<'; do
        grep -q -- "$frame" <<<"$(stack $n)" || return 1
      done
    done
  }
  if [ "$rc" != 66 ] || ! handlers_race; then
    echo "$out" | tail -n 60 >&2
    step "FAILED: $c was not reported as a race between two handlers (exit $rc): do the suppressions hide races in podtopo code?"
    exit 1
  fi
  grep -m 1 '^SUMMARY' <<<"$out"
done
step "done: no ThreadSanitizer report, $(wc -w <<<"$canaries") canaries reported"
