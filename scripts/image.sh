#!/usr/bin/env bash
# Builds the container image build/podtopo-image.tar (OCI layout) offline from the Debian
# package (scripts/package.sh) and the runtime libraries of this Debian 12 host; nothing is
# pulled. Load it with `ctr -n k8s.io images import build/podtopo-image.tar` (containerd) or
# `podman load -i build/podtopo-image.tar`. PODTOPO_BUILD_DIR=DIR: another build tree (as
# scripts/package.sh), writing DIR/podtopo-image.tar.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PODTOPO_BUILD_DIR:-build}
deb="$(ls -t "$build"/podtopo_*_amd64.deb 2>/dev/null | head -n 1 || true)"
if [ -z "$deb" ] || [ "$build"/podtopo -nt "$deb" ] || [ "$build"/podtopo-agent -nt "$deb" ]; then
  bash scripts/package.sh
  deb="$(ls -t "$build"/podtopo_*_amd64.deb | head -n 1)"
fi
/usr/bin/python3 scripts/image.py "$deb" "$build"/podtopo-image.tar "$@"
