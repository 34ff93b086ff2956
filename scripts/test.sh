#!/usr/bin/env bash
# Installs what podtopo needs, builds it, and runs every test (README "Quick start"; .ci/run).
# One build, in build/, so that each source is compiled once on CI's two cores (20 minutes):
# clang with AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's coverage. Every test
# runs against it: the unit tests under ctest, the tests in tests/ that drive the binary from
# outside (e2e on containerd, third-party clients, kills and faults, Prometheus, the package,
# the image, the DaemonSet). Then ThreadSanitizer (scripts/tsan.sh): a second build, clang -O0
# with TSan in build-tsan/, of the four server-side test programs and only the libraries they
# link, and their run (about 2 minutes of compilation on two cores, 25 s of running). Last, every
# fuzz target for a few seconds (scripts/fuzz.sh).
# Each ctest run prints its summary. Environment:
#   PODTOPO_JOBS=N             parallel jobs (default 2)
#   PODTOPO_SKIP_SANITIZERS=1  an optimised gcc build instead (no fuzzing)
#   PODTOPO_FUZZ_SECONDS=S     seconds per fuzz target (default 3; 0 skips the fuzzing)
#   PODTOPO_SKIP_TSAN=1        no ThreadSanitizer build and run
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
jobs=${PODTOPO_JOBS:-2}
start=$SECONDS
step() { printf 'test.sh: [%3d:%02d] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }

# build/ configured by the other mode (or by scripts/demo.sh: gcc, no sanitizers) is configured
# afresh: CMake keeps the compiler of the first configuration.
fresh_unless() {
  if [ -f build/CMakeCache.txt ] && ! grep -qx "$1" build/CMakeCache.txt; then
    rm -rf build/CMakeCache.txt build/CMakeFiles
  fi
}
# ctest starts the tests it knows to be long first (its cost data): a fresh build/ gets the
# costs of a CI run (seconds, ASan -O0; stale or missing names only change the order), so that
# no test of a minute starts last while the other core idles.
seed_costs() {
  mkdir -p build/Testing/Temporary
  [ -f build/Testing/Temporary/CTestCostData.txt ] ||
    cp scripts/ctest_costs.txt build/Testing/Temporary/CTestCostData.txt
}

# lld links the ~40 programs in a fifth of GNU ld's time (admission_test: 0.5 s against 2.5 s).
common=(-G Ninja -DPODTOPO_BUILD_TESTS=ON -DPODTOPO_BUILD_BENCHMARKS=ON -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld)
if [ "${PODTOPO_SKIP_SANITIZERS:-0}" = 1 ]; then
  step "optimised build (build/, gcc -O1)"
  fresh_unless PODTOPO_SANITIZE:BOOL=OFF
  CXX=g++ cmake -S . -B build "${common[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DPODTOPO_SANITIZE=OFF -DPODTOPO_FUZZ=OFF >/dev/null
  cmake --build build -j"$jobs"
  step "tests (build/)"
  seed_costs
  (cd build && ctest --output-on-failure -j"$jobs")
  step "done (sanitizers skipped)"
  exit 0
fi

# -O0: with the sanitizers' instrumentation, -O1 doubles the compile time (44.6 s against
# 20.3 s CPU for cpu_state_file_test.cc). The generated protobuf code is compiled without the
# sanitizers (cmake/podtopo.cmake), as Debian's gRPC and protobuf libraries it calls.
cxx=$(command -v clang++-14 || command -v clang++)
step "build (build/, $(basename "$cxx") -O0, ASan+UBSan, libFuzzer coverage)"
fresh_unless PODTOPO_SANITIZE:BOOL=ON
CXX=$cxx cmake -S . -B build "${common[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" -DPODTOPO_SANITIZE=ON -DPODTOPO_FUZZ=ON >/dev/null
cmake --build build -j"$jobs"

# The property tests run 10^4 operations here (10^5 in an optimised build). Leaks are checked in
# every program the tests start, the podtopo binary's runs included.
step "tests under ASan+UBSan (build/)"
seed_costs
(cd build && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  PODTOPO_PROPERTY_OPS=10000 ctest --output-on-failure -j"$jobs")

# scripts/tsan.sh says why and skips where no TSan program can run (e.g. no clang); a report or
# a canary TSan does not report fails it.
if [ "${PODTOPO_SKIP_TSAN:-0}" = 1 ]; then
  step "ThreadSanitizer skipped (PODTOPO_SKIP_TSAN=1)"
else
  step "ThreadSanitizer (scripts/tsan.sh, build-tsan/)"
  bash scripts/tsan.sh
fi

fuzz_seconds=${PODTOPO_FUZZ_SECONDS:-3}
if [ "$fuzz_seconds" != 0 ]; then
  step "every fuzz target for ${fuzz_seconds} s (build/)"
  bash scripts/fuzz.sh --build-dir build --all "$fuzz_seconds"
fi
step "done"
