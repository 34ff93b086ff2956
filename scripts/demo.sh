#!/usr/bin/env bash
# Installs what podtopo needs, builds build/podtopo and runs the demo on the embedded
# default node (preset:demo) with the seed configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"${PODTOPO_JOBS:-2}" --target podtopo
build/podtopo demo
