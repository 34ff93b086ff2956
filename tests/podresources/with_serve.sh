#!/usr/bin/env bash
# with_serve.sh PODTOPO [SERVE FLAGS...] -- COMMAND [ARGS...]
#
# Starts `PODTOPO serve` on a socket in a fresh temporary directory, on preset:demo with the
# default kubelet configuration (docs/examples/kubelet-config.yaml: static CPU and memory
# policies, topologyManagerScope pod, PodLevelResourceManagers on), with the documentation's
# pod-scope-mixed pod in its pods directory. Runs COMMAND with PODRESOURCES_SOCKET (the socket),
# PODRESOURCES_PODS_DIR and PODRESOURCES_TMP set, then stops the server with SIGTERM and checks
# that it exits cleanly. Exit status: COMMAND's, or 1 when the server fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
podtopo="$1"
shift
serve_flags=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  serve_flags+=("$1")
  shift
done
[ "${1:-}" = "--" ] || { echo "with_serve.sh: missing -- COMMAND" >&2; exit 2; }
shift
[ -x "$podtopo" ] || { echo "with_serve.sh: $podtopo is not an executable" >&2; exit 1; }

tmp="$(mktemp -d /tmp/podtopo-podres-XXXXXX)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/pods" "$tmp/state"
cp "$repo/docs/examples/pod-scope-mixed.yaml" "$tmp/pods/"
export PODRESOURCES_SOCKET="$tmp/kubelet.sock"
export PODRESOURCES_PODS_DIR="$tmp/pods"
export PODRESOURCES_TMP="$tmp"

"$podtopo" serve --socket "$PODRESOURCES_SOCKET" --node preset:demo --state-dir "$tmp/state" \
  --pods-dir "$tmp/pods" ${serve_flags[@]+"${serve_flags[@]}"} >"$tmp/serve.log" 2>&1 &
server_pid=$!

for _ in $(seq 1 200); do
  [ -S "$PODRESOURCES_SOCKET" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "with_serve.sh: podtopo serve exited before creating its socket:" >&2
    cat "$tmp/serve.log" >&2
    exit 1
  fi
  sleep 0.05
done
[ -S "$PODRESOURCES_SOCKET" ] || { echo "with_serve.sh: no socket after 10s" >&2; cat "$tmp/serve.log" >&2; exit 1; }

set +e
"$@"
rc=$?
set -e

if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "with_serve.sh: podtopo serve died during the test:" >&2
  cat "$tmp/serve.log" >&2
  exit 1
fi
kill -TERM "$server_pid"
set +e
wait "$server_pid"
serve_rc=$?
set -e
server_pid=""
if [ "$serve_rc" != 0 ]; then
  echo "with_serve.sh: podtopo serve exited with $serve_rc after SIGTERM:" >&2
  cat "$tmp/serve.log" >&2
  exit 1
fi
if [ "$rc" != 0 ]; then
  echo "--- podtopo serve log ---" >&2
  tail -n 50 "$tmp/serve.log" >&2
fi
exit "$rc"
