#!/usr/bin/env bash
# Installs what podtopo needs, builds it, and runs every test: the full build, then the
# unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
jobs=${PODTOPO_JOBS:-2}

# Two cores: optimise, but skip full debug info (it costs compile and link time).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DPODTOPO_BUILD_TESTS=ON -DPODTOPO_BUILD_BENCHMARKS=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

if [ "${PODTOPO_SKIP_SANITIZERS:-0}" != 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1" \
    -DPODTOPO_SANITIZE=ON \
    -DPODTOPO_BUILD_SERVER=OFF -DPODTOPO_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build build-asan -j"$jobs"
  # Each test executable runs once, all its tests in one process: under ASan a process start
  # costs most of a second, and ctest would start one per test (1,400 of them).
  asan_failed=0
  while IFS= read -r exe; do
    echo "test.sh: ASan+UBSan: $exe"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 PODTOPO_PROPERTY_OPS=10000 \
      "$exe" --gtest_brief=1 || asan_failed=1
  done < <(find build-asan -type f -perm -u+x -name '*_test' | sort)
  if [ "$asan_failed" != 0 ]; then
    echo "test.sh: a test failed under ASan+UBSan (see above)" >&2
    exit 1
  fi

  # ThreadSanitizer on the server side (the PodResources server, the daemon, metrics) and the
  # client: only those test targets are built. Debian's gRPC/abseil/protobuf are not
  # instrumented; scripts/tsan.supp makes TSan ignore the calls those libraries make
  # (malloc/memcpy/...) and suppresses one gRPC-internal frame; nothing of podtopo's code.
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
    # Run the executables directly (ctest names tests after their TEST, not their target).
    for t in "${tsan_targets[@]}"; do
      exe="$(find build-tsan -type f -name "$t" -perm -u+x | head -n 1)"
      echo "test.sh: ThreadSanitizer: $exe"
      TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" \
        PODTOPO_PROPERTY_OPS=200 "$exe" --gtest_brief=1
    done
  fi
fi
