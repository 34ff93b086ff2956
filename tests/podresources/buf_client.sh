#!/usr/bin/env bash
# A third-party PodResources v1 client: `buf curl` from npm's @bufbuild/buf, speaking gRPC over
# the unix socket with the proto file as its schema. The answers (protojson) are checked by
# buf_check.py (plain json, no gRPC).
#   buf_client.sh BUF PROTO_ROOT [SOCKET]   (default: $PODRESOURCES_SOCKET)
set -euo pipefail
buf="$1"
proto_root="$2"
socket="${3:-$PODRESOURCES_SOCKET}"
here="$(cd "$(dirname "$0")" && pwd)"
[ -x "$buf" ] || { echo "buf curl client: FAIL: $buf missing (scripts/setup.sh runs npm ci in tests/podresources)" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

call() {  # call METHOD JSON > file; returns buf's status
  (cd "$proto_root" && "$buf" curl --schema podresources/v1/api.proto --protocol grpc \
    --http2-prior-knowledge --unix-socket "$socket" --timeout 5s -d "$2" \
    "http://localhost/v1.PodResourcesLister/$1")
}

# Retry List until the server has restored its state and listed the pod (30 s).
ok=0
for _ in $(seq 1 300); do
  if call List '{}' >"$out/list.json" 2>"$out/list.err" &&
     grep -q '"pod-scope-mixed"' "$out/list.json"; then
    ok=1
    break
  fi
  sleep 0.1
done
[ "$ok" = 1 ] || { echo "buf curl client: FAIL: List never reported pod-scope-mixed:" >&2; cat "$out/list.err" "$out/list.json" >&2; exit 1; }
call GetAllocatableResources '{}' >"$out/alloc.json"
call Get '{"podName":"pod-scope-mixed","podNamespace":"default"}' >"$out/get.json"
set +e
call Get '{"podName":"no-such-pod","podNamespace":"default"}' >"$out/missing.json" 2>"$out/missing.err"
missing_rc=$?
set -e
[ "$missing_rc" != 0 ] || { echo "buf curl client: FAIL: Get of an unknown pod succeeded" >&2; exit 1; }
/usr/bin/python3 "$here/buf_check.py" "$out"
echo "buf curl ($("$buf" --version)) client: OK"
