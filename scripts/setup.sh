#!/usr/bin/env bash
# Installs everything podtopo needs to build and test on Debian 12 (run as root).
# Idempotent: packages already present are skipped by apt.
set -euo pipefail

packages=(
  # toolchain
  build-essential g++ cmake ninja-build pkg-config git python3 ca-certificates
  # clang for the sanitizer build and libFuzzer (fuzz/; libclang-rt has the fuzzer runtime)
  clang-14 libclang-rt-14-dev
  # libraries (see ../shared/DESIGN.md "Dependencies")
  libabsl-dev libyaml-cpp-dev nlohmann-json3-dev libhwloc-dev hwloc libcli11-dev
  libfmt-dev libspdlog-dev prometheus-cpp-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  # tests and benchmarks
  libgtest-dev libgmock-dev googletest libbenchmark-dev librapidcheck-dev
  bzip2 tar
  # third-party PodResources clients (Python grpcio; Node grpc-js and buf come from npm below)
  python3-grpcio python3-protobuf
  # pictures: headless Chromium renders the SVG in tests
  chromium libpng-dev
  # a real container runtime for the end-to-end tests (a private containerd, started by tests)
  containerd runc busybox-static
)
# Node.js and npm for the test clients: Debian's, unless a node is already installed.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm packages of the third-party test clients (@grpc/grpc-js, @grpc/proto-loader, @bufbuild/buf),
# pinned by the lock file; installed into the repository's tests/ folder, never globally.
cd "$(dirname "$0")/.."
for dir in tests/*/; do
  if [ -f "$dir/package.json" ]; then
    if [ -f "$dir/package-lock.json" ]; then
      (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    else
      (cd "$dir" && npm install --no-audit --no-fund --loglevel=error)
    fi
  fi
done
