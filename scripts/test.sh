#!/usr/bin/env bash
# Installs what podtopo needs, builds it, and runs every test (README "Quick start"; .ci/run).
# Three builds; each test is compiled once (two cores, a 20-minute budget):
#   build/       gcc -O1: the binary, the benchmarks, the unit tests of the server side (CLI,
#                PodResources server and client, daemon, agent, runtime, pictures) and the tests
#                in tests/ that drive the binary from outside (e2e on containerd, third-party
#                clients, kills and faults, Prometheus, the package, the image, the DaemonSet);
#   build-asan/  clang with AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's
#                coverage: the core library's unit tests (and the fuzz regressions) under ctest,
#                then every fuzz target for a few seconds (scripts/fuzz.sh);
#   build-tsan/  gcc with ThreadSanitizer: the server side's unit tests.
# Each ctest run prints its summary. Environment:
#   PODTOPO_JOBS=N             parallel jobs (default 2)
#   PODTOPO_SKIP_SANITIZERS=1  one optimised build that runs every test
#   PODTOPO_FUZZ_SECONDS=S     seconds per fuzz target in CI (default 5; 0 skips the fuzzing)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
jobs=${PODTOPO_JOBS:-2}
start=$SECONDS
step() { printf 'test.sh: [%3d:%02d] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }

skip_sanitizers=${PODTOPO_SKIP_SANITIZERS:-0}
core_tests_in_main=OFF
[ "$skip_sanitizers" = 1 ] && core_tests_in_main=ON

step "optimised build (build/)"
# -O1: a fifth less compile time than -O2 (24.5 s -> 18.9 s CPU for src/admission/node.cc) for
# tests that never time anything; scripts/demo.sh and the benchmarks' own builds use -O2.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DPODTOPO_BUILD_TESTS=ON -DPODTOPO_BUILD_CORE_UNIT_TESTS=$core_tests_in_main \
  -DPODTOPO_BUILD_BENCHMARKS=ON >/dev/null
cmake --build build -j"$jobs"
step "tests (build/)"
(cd build && ctest --output-on-failure -j"$jobs")

if [ "$skip_sanitizers" = 1 ]; then
  step "done (sanitizers skipped)"
  exit 0
fi

# clang: libFuzzer and its coverage instrumentation come with it, so the unit tests and the
# fuzz targets share one sanitizer build. -O1, although -O0 halves its compile time (20.3 s
# against 44.6 s CPU for cpu_state_file_test.cc): at -O0 the checkpoint JSON parser's
# recursion overflows ASan's stack at Go's nesting limit (ParseTest.NestingLimit) — to fix.
cxx=$(command -v clang++-14 || command -v clang++)
step "sanitizer build (build-asan/, $(basename "$cxx"), ASan+UBSan)"
CXX=$cxx cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" -DPODTOPO_SANITIZE=ON -DPODTOPO_FUZZ=ON \
  -DPODTOPO_BUILD_SERVER=OFF -DPODTOPO_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-asan -j"$jobs"
step "the core's unit tests under ASan+UBSan (build-asan/)"
# The property tests run 10^4 operations here (10^5 in a plain build).
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  PODTOPO_PROPERTY_OPS=10000 ctest --output-on-failure -j"$jobs" -L unit)

fuzz_seconds=${PODTOPO_FUZZ_SECONDS:-5}
if [ "$fuzz_seconds" != 0 ]; then
  step "every fuzz target for ${fuzz_seconds} s (build-asan/)"
  bash scripts/fuzz.sh --build-dir build-asan --all "$fuzz_seconds"
fi

# ThreadSanitizer on the server side (the PodResources server, the daemon, metrics) and the
# client: only those test targets are built. Debian's gRPC/abseil/protobuf are not
# instrumented; scripts/tsan.supp makes TSan ignore the calls those libraries make
# (malloc/memcpy/...) and suppresses one gRPC-internal frame; nothing of podtopo's code.
step "ThreadSanitizer build (build-tsan/)"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
  -DPODTOPO_BUILD_BENCHMARKS=OFF >/dev/null
tsan_targets=()
for t in podresources_test serve_test metrics_test client_test; do
  if ninja -C build-tsan -t query "$t" >/dev/null 2>&1; then
    tsan_targets+=("$t")
  else
    echo "test.sh: ThreadSanitizer: no target $t in this tree; skipped"
  fi
done
if [ ${#tsan_targets[@]} -gt 0 ]; then
  cmake --build build-tsan -j"$jobs" --target "${tsan_targets[@]}"
  # Run the executables directly: their tests already ran under ctest in build/.
  for t in "${tsan_targets[@]}"; do
    exe="$(find build-tsan -type f -name "$t" -perm -u+x | head -n 1)"
    step "ThreadSanitizer: $exe"
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" \
      PODTOPO_PROPERTY_OPS=200 "$exe" --gtest_brief=1
  done
fi
step "done"
