#!/usr/bin/env bash
# Builds the Debian package build/podtopo_<version>_amd64.deb with CPack (cmake/packaging.cmake):
# /usr/bin/podtopo, the man page, bash/zsh/fish completions and podtopo-agent.service. Depends
# comes from dpkg-shlibdeps. Reuses build/ when it is configured (scripts/demo.sh or test.sh),
# else configures it as the demo does. PODTOPO_BUILD_DIR=DIR packages another build tree's binary
# (the tests give theirs) and writes DIR/podtopo_<version>_amd64.deb.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PODTOPO_BUILD_DIR:-build}
start=$SECONDS
step() { printf '[package %3ds] %s\n' "$((SECONDS - start))" "$*"; }
command -v dpkg-shlibdeps >/dev/null || { echo "package.sh: dpkg-shlibdeps missing (apt-get install dpkg-dev)" >&2; exit 1; }
mkdir -p "$build"
if [ ! -f "$build"/CMakeCache.txt ]; then
  step "configuring $build/"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DPODTOPO_BUILD_TESTS=OFF -DPODTOPO_BUILD_BENCHMARKS=OFF >"$build"/package.log 2>&1 ||
    { tail -n 40 "$build"/package.log >&2; exit 1; }
fi
step "building $build/podtopo and $build/podtopo-agent"
cmake --build "$build" -j"${PODTOPO_JOBS:-2}" --target podtopo podtopo-agent >>"$build"/package.log 2>&1 ||
  { tail -n 40 "$build"/package.log >&2; exit 1; }
step "cpack -G DEB"
(cd "$build" && cpack -G DEB >>package.log 2>&1) || { tail -n 40 "$build"/package.log >&2; exit 1; }
version="$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build"/CMakeCache.txt)"
deb="$build/podtopo_${version}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] || { echo "package.sh: cpack did not write $deb" >&2; exit 1; }
step "wrote $deb"
dpkg-deb --field "$deb" Package Version Depends
