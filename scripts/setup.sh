#!/usr/bin/env bash
# Installs everything podtopo needs to build and test on Debian 12 (run as root).
# Idempotent: packages already present are skipped by apt.
set -euo pipefail

packages=(
  # toolchain
  build-essential g++ cmake ninja-build pkg-config git python3 ca-certificates
  # libraries (see ../shared/DESIGN.md "Dependencies")
  libabsl-dev libyaml-cpp-dev nlohmann-json3-dev libhwloc-dev hwloc libcli11-dev
  libfmt-dev libspdlog-dev prometheus-cpp-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  # tests and benchmarks
  libgtest-dev libgmock-dev googletest libbenchmark-dev librapidcheck-dev
  bzip2 tar
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
