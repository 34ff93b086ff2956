#!/usr/bin/env bash
# ThreadSanitizer on the server side: builds podresources_test, serve_test, metrics_test and
# client_test with -fsanitize=thread in build-tsan/ and runs them (docs/client.md). Not part of
# scripts/test.sh: every library is compiled a second time (about 10 minutes on two cores), which
# CI's 20-minute budget does not hold. Run it by hand after changing the server, the client or
# the daemon: `bash scripts/tsan.sh` (after scripts/setup.sh test). PODTOPO_JOBS=N as test.sh.
#
# Debian's gRPC/abseil/protobuf are not instrumented; scripts/tsan.supp makes TSan ignore the
# calls those libraries make (malloc/memcpy/...) and suppresses one gRPC-internal frame; nothing
# of podtopo's code. A report fails the script (halt_on_error=1).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${PODTOPO_JOBS:-2}
start=$SECONDS
step() { printf 'tsan.sh: [%3d:%02d] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }

step "ThreadSanitizer build (build-tsan/)"
CXX=g++ cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread -fuse-ld=lld" \
  -DPODTOPO_BUILD_BENCHMARKS=OFF >/dev/null
targets=(podresources_test serve_test metrics_test client_test)
cmake --build build-tsan -j"$jobs" --target "${targets[@]}"
for t in "${targets[@]}"; do
  exe="$(find build-tsan -type f -name "$t" -perm -u+x | head -n 1)"
  step "ThreadSanitizer: $exe"
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" \
    PODTOPO_PROPERTY_OPS=200 "$exe" --gtest_brief=1
done
step "done: no ThreadSanitizer report"
