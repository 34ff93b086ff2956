#!/usr/bin/env bash
# Installs what podtopo needs, builds it, and runs every test: the full build, then the
# unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=${PODTOPO_JOBS:-2}

# Two cores: optimise, but skip full debug info (it costs compile and link time).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

if [ "${PODTOPO_SKIP_SANITIZERS:-0}" != 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1" \
    -DPODTOPO_SANITIZE=ON \
    -DPODTOPO_BUILD_SERVER=OFF -DPODTOPO_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build build-asan -j"$jobs"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 PODTOPO_PROPERTY_OPS=10000 \
    ctest --output-on-failure -j"$jobs" -L unit)
fi
