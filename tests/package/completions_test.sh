#!/usr/bin/env bash
# completions_test.sh REPO PODTOPO_DIR: the bash completion (packaging/completions/podtopo.bash)
# completes the built binary's subcommands, nested subcommands and flags (it reads them from
# `podtopo ... --help`). zsh and fish completions are checked with `zsh -n` / `fish -n` when those
# shells are installed.
set -euo pipefail
repo="$1"
export PATH="$2:$PATH"
# shellcheck source=/dev/null
source "$repo/packaging/completions/podtopo.bash"
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _podtopo
  printf '%s\n' "${COMPREPLY[@]}"
}
expect() {  # expect WORD -- COMMAND LINE...
  local want="$1"; shift 2
  local got
  got="$(complete_words "$@")"
  grep -qx -- "$want" <<<"$got" || { echo "FAIL: '$*' does not complete to $want (got: $(tr '\n' ' ' <<<"$got"))"; exit 1; }
}
expect agent -- podtopo ag
expect state -- podtopo st
expect check -- podtopo state ch
expect --podresources-socket -- podtopo agent --pod
expect --nrt-out -- podtopo agent --metrics-addr :9102 --nrt
expect --kubelet-dir -- podtopo state check --kube
expect --socket -- podtopo nri --so
expect --state-dir -- podtopo nri --socket /run/nri.sock --sta
for sub in $(podtopo --help | awk '/^Subcommands:$/ {s = 1; next} s && /^  [a-z]/ {print $1}'); do
  expect "$sub" -- podtopo "${sub:0:2}"
done
if command -v zsh >/dev/null; then zsh -n "$repo/packaging/completions/_podtopo"; fi
if command -v fish >/dev/null; then fish -n "$repo/packaging/completions/podtopo.fish"; fi
echo "ok: bash completes subcommands and flags from podtopo --help"
