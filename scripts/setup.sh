#!/usr/bin/env bash
# Installs what podtopo needs on Debian 12 (run as root). Idempotent: packages already present
# are skipped.
#
#   bash scripts/setup.sh demo    what the build of build/podtopo and `podtopo demo` need
#   bash scripts/setup.sh test    all of demo, and what the tests, benchmarks, packaging and
#                                 the end-to-end tests need (the default)
#
# It prints one step line per step with the elapsed time; apt's and npm's output goes to
# build/setup.log (shown when a step fails).
set -euo pipefail
mode="${1:-test}"
case "$mode" in
  demo | test) ;;
  *) echo "setup.sh: unknown mode \"$mode\" (demo | test)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
mkdir -p build
log="$PWD/build/setup.log"
: >"$log"
start=$SECONDS
step() { printf '[setup %3ds] %s\n' "$((SECONDS - start))" "$*"; }
run() {  # run COMMAND... with its output in the log; on failure show the log's tail
  if ! "$@" >>"$log" 2>&1; then
    echo "setup.sh: failed: $*" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
}

# What the build of the CLI and the demo need (../shared/DESIGN.md "Dependencies").
demo_packages=(
  # toolchain
  build-essential g++ cmake ninja-build pkg-config git python3 ca-certificates
  # libraries (see ../shared/DESIGN.md "Dependencies")
  libabsl-dev libyaml-cpp-dev libyaml-dev nlohmann-json3-dev libsimdjson-dev libhwloc-dev hwloc libcli11-dev
  libfmt-dev libspdlog-dev prometheus-cpp-dev libcivetweb-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  # the agent's Kubernetes API client (src/kube: HTTP and TLS by libcurl with OpenSSL)
  libcurl4-openssl-dev
  # tcmalloc_minimal, the programs' allocator (PODTOPO_MALLOC in CMakeLists.txt)
  libgoogle-perftools-dev
  # libnuma: podtopo probe binds its pointer-chase buffers to NUMA nodes (src/probe/)
  libnuma-dev
)
# What the tests add.
test_packages=(
  # clang for the sanitizer build and libFuzzer (fuzz/; libclang-rt has the fuzzer runtime);
  # lld (ld.lld) links the tests' programs
  clang-14 libclang-rt-14-dev lld
  # llvm-symbolizer names the frames of the sanitizers' reports: scripts/tsan.sh matches its
  # suppressions by function name and skips without it (a fresh Debian 12 has no llvm-14)
  llvm-14
  # tests and benchmarks
  libgtest-dev libgmock-dev googletest libbenchmark-dev librapidcheck-dev
  bzip2 tar
  # third-party PodResources clients (Python grpcio; Node grpc-js and buf come from npm below)
  python3-grpcio python3-protobuf python3-yaml
  # pictures: headless Chromium renders the SVG in tests
  chromium libpng-dev
  # a real container runtime for the end-to-end tests (a private containerd, started by tests)
  containerd runc busybox-static
  # podtopo probe's peer: cyclictest measures wake-up latency beside it (src/probe/wakeup_test.cc)
  rt-tests
  # verify's peer: numastat -p (numactl) beside its memory per NUMA node (src/verify/verify_numastat_test.cc)
  numactl
  # the agent: a real Prometheus scrapes it (promtool checks the exposition)
  prometheus
  # a real control plane (../shared/runtime/kubernetes-1.20): Debian's etcd (and kubectl, below);
  # the agent publishes its NodeResourceTopology there (tests/agent/nrt_publish_e2e.py)
  etcd-server openssl curl
  # the Debian package: built with CPack (dpkg-shlibdeps), installed into a debootstrap root
  dpkg-dev file debootstrap
)
packages=("${demo_packages[@]}")
if [ "$mode" = test ]; then
  packages+=("${test_packages[@]}")
  # Node.js and npm for the test clients: Debian's, unless a node is already installed.
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    packages+=(nodejs npm)
  fi
  # kubectl: Debian's kubernetes-client, unless a kubectl is already installed (another
  # package's /usr/bin/kubectl, e.g. the Google Cloud SDK's, would make apt refuse to install
  # it; the tests read the API with `kubectl get --raw`, which every version has).
  if ! command -v kubectl >/dev/null 2>&1; then
    packages+=(kubernetes-client)
  fi
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  step "apt-get update"
  run apt-get update -qq
  step "installing ${#missing[@]} packages ($mode): ${missing[*]}"
  run apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  step "all ${#packages[@]} packages ($mode) already installed"
fi

if [ "$mode" = test ]; then
  # npm packages of the third-party test clients (@grpc/grpc-js, @grpc/proto-loader,
  # @bufbuild/buf), pinned by the lock file; installed into the repository's tests/ folder.
  for dir in tests/*/; do
    if [ -f "$dir/package.json" ]; then
      step "npm packages of $dir"
      if [ -f "$dir/package-lock.json" ]; then
        (cd "$dir" && run npm ci --no-audit --no-fund --loglevel=error)
      else
        (cd "$dir" && run npm install --no-audit --no-fund --loglevel=error)
      fi
    fi
  done
fi
step "done ($mode)"
