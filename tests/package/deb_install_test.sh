#!/usr/bin/env bash
# deb_install_test.sh REPO BUILD_DIR
#
# Builds the .deb (scripts/package.sh), installs it with apt into a clean Debian 12 root made by
# `debootstrap --variant=minbase bookworm`, and runs `podtopo --version`, `podtopo topology` and
# `podtopo state check` there (chroot). Checks the package's files (man page, completions, unit)
# and that its Depends came from dpkg-shlibdeps (the gRPC and yaml-cpp libraries are listed).
#
# The pristine root is cached as /var/cache/podtopo/debootstrap/bookworm-minbase.tar (or in
# $PODTOPO_DEBOOTSTRAP_CACHE), and apt's downloaded packages beside it in archives/, so later runs
# only unpack: outside the build dir, because CI builds in a fresh clone every time and the
# debootstrap itself takes minutes. The mirror is the host's Debian mirror (its apt sources). Needs
# root; skipped (exit 77) without root, debootstrap or a reachable mirror.
set -euo pipefail
repo="$1"
build="$2"
start=$SECONDS
step() { printf '[deb-test %3ds] %s\n' "$((SECONDS - start))" "$*"; }
skip() { echo "SKIP: $*"; exit 77; }
# No step ends the test without saying why (issue 26: a failed pipeline under set -e ended it
# silently): the failing command and its line.
trap 'rc=$?; echo "FAIL: line $LINENO: \"$BASH_COMMAND\" exited $rc"' ERR
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || skip "debootstrap missing (scripts/setup.sh test installs it)"

cache="${PODTOPO_DEBOOTSTRAP_CACHE:-/var/cache/podtopo/debootstrap}"
mkdir -p "$cache/archives"
# shellcheck source=debian_mirror.sh
source "$(dirname "$0")/debian_mirror.sh"
mirror="$(debian_mirror /etc/apt)"
[ -n "$mirror" ] || skip "no Debian mirror in the host's apt sources (/etc/apt/sources.list, sources.list.d/*.list or *.sources)"
echo "mirror: $mirror"

step "package"
PODTOPO_BUILD_DIR="$build" bash "$repo/scripts/package.sh" >"$build/deb-test-package.log" 2>&1 || { cat "$build/deb-test-package.log"; exit 1; }
deb="$(ls -t "$build"/podtopo_*_amd64.deb | head -n 1)"
depends="$(dpkg-deb --field "$deb" Depends)"
echo "Depends: $depends"
for lib in libgrpc++ libyaml-cpp libprotobuf libc6; do
  grep -q "$lib" <<<"$depends" || { echo "FAIL: Depends lacks $lib (dpkg-shlibdeps)"; exit 1; }
done
files="$(dpkg-deb --contents "$deb")"
for f in ./usr/bin/podtopo ./usr/bin/podtopo-agent ./usr/share/man/man1/podtopo.1 \
         ./usr/share/bash-completion/completions/podtopo ./usr/share/zsh/vendor-completions/_podtopo \
         ./usr/share/fish/vendor_completions.d/podtopo.fish ./lib/systemd/system/podtopo-agent.service \
         ./etc/default/podtopo-agent; do
  grep -q " $f\$" <<<"$files" || { echo "FAIL: the package lacks $f"; echo "$files"; exit 1; }
done

tar_cache="$cache/bookworm-minbase.tar"
if [ ! -f "$tar_cache" ]; then
  step "debootstrap --variant=minbase bookworm (first run; cached in $tar_cache)"
  fresh="$(mktemp -d /tmp/podtopo-debootstrap-XXXXXX)"
  if ! debootstrap --variant=minbase bookworm "$fresh" "$mirror" >"$build/deb-test-debootstrap.log" 2>&1; then
    tail -n 20 "$build/deb-test-debootstrap.log"
    rm -rf "$fresh"
    skip "debootstrap could not build the root (mirror unreachable?)"
  fi
  tar -C "$fresh" -cf "$tar_cache.tmp" . && mv "$tar_cache.tmp" "$tar_cache"
  rm -rf "$fresh"
fi

root="$(mktemp -d /tmp/podtopo-debroot-XXXXXX)"
cleanup() {
  umount "$root/proc" 2>/dev/null || true
  umount "$root/var/cache/apt/archives" 2>/dev/null || true
  rm -rf "$root"
}
trap cleanup EXIT
step "unpacking the clean root"
tar -C "$root" -xf "$tar_cache"
mount -t proc proc "$root/proc"
mount --bind "$cache/archives" "$root/var/cache/apt/archives"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
cp "$deb" "$root/tmp/podtopo.deb"
step "apt-get install ./podtopo.deb (the Depends from the mirror)"
if ! chroot "$root" env DEBIAN_FRONTEND=noninteractive sh -c \
    'apt-get update -qq && apt-get install -y -qq --no-install-recommends /tmp/podtopo.deb' \
    >"$build/deb-test-apt.log" 2>&1; then
  tail -n 30 "$build/deb-test-apt.log"
  echo "FAIL: the package does not install in a clean Debian 12 root"
  exit 1
fi
step "running podtopo in the root"
version="$(chroot "$root" podtopo --version)"
echo "$version"
grep -q "^podtopo " <<<"$version" || { echo "FAIL: podtopo --version printed: $version"; exit 1; }
chroot "$root" podtopo topology --node preset:demo >"$build/deb-test-topology.txt"
grep -q "NUMA" "$build/deb-test-topology.txt" || { cat "$build/deb-test-topology.txt"; echo "FAIL: topology"; exit 1; }
mkdir -p "$root/tmp/kubelet"
cp "$repo/src/state/testdata/healthy/"* "$root/tmp/kubelet/"
set +e
chroot "$root" podtopo state check --kubelet-dir /tmp/kubelet --node preset:demo >"$build/deb-test-state.txt" 2>&1
rc=$?
set -e
head -n 5 "$build/deb-test-state.txt"
[ "$rc" = 0 ] || { echo "FAIL: podtopo state check on the healthy fixture exited $rc"; exit 1; }
chroot "$root" podtopo agent --help | grep -q -- --podresources-socket || { echo "FAIL: agent --help"; exit 1; }
# podtopo-agent, which the unit runs, starts from the package's Depends alone (its gRPC is
# linked in statically).
chroot "$root" podtopo-agent --help | grep -q -- --podresources-socket || { echo "FAIL: podtopo-agent --help"; exit 1; }
grep -q '^ExecStart=/usr/bin/podtopo-agent ' "$root/lib/systemd/system/podtopo-agent.service" || { echo "FAIL: the unit does not run podtopo-agent"; exit 1; }
chroot "$root" podtopo nri --help | grep -q -- --socket || { echo "FAIL: nri --help"; exit 1; }
chroot "$root" man -w podtopo >/dev/null 2>&1 || [ -f "$root/usr/share/man/man1/podtopo.1.gz" ] || [ -f "$root/usr/share/man/man1/podtopo.1" ] || { echo "FAIL: no man page in the root"; exit 1; }
step "ok: the package installs and runs in a clean Debian 12 root"
