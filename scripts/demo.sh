#!/usr/bin/env bash
# Installs what the build and the demo need (scripts/setup.sh demo), builds build/podtopo and
# runs the demo on the embedded default node (preset:demo) with the seed configuration.
# Step lines carry the elapsed time; the build's output goes to build/demo-build.log.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
step() { printf '[demo %4ds] %s\n' "$((SECONDS - start))" "$*"; }
bash scripts/setup.sh demo
mkdir -p build
# build/ left by scripts/test.sh (clang with the sanitizers) is configured afresh: CMake keeps the
# compiler and flags of the first configuration.
if grep -qx PODTOPO_SANITIZE:BOOL=ON build/CMakeCache.txt 2>/dev/null; then
  rm -rf build/CMakeCache.txt build/CMakeFiles
fi
step "configuring (build/, the CLI only: no tests, no benchmarks)"
if ! cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DPODTOPO_BUILD_TESTS=OFF -DPODTOPO_BUILD_BENCHMARKS=OFF >build/demo-build.log 2>&1; then
  tail -n 40 build/demo-build.log >&2
  exit 1
fi
step "building build/podtopo (-j${PODTOPO_JOBS:-2}; log: build/demo-build.log)"
if ! cmake --build build -j"${PODTOPO_JOBS:-2}" --target podtopo >>build/demo-build.log 2>&1; then
  tail -n 40 build/demo-build.log >&2
  exit 1
fi
step "running build/podtopo demo"
build/podtopo demo
step "done"
