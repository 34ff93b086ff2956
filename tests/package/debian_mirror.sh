#!/usr/bin/env bash
# debian_mirror [APT_DIR]: prints the Debian mirror of the host's apt sources (default /etc/apt),
# the URI to debootstrap bookworm from, or nothing when the sources name none. Sourced by
# deb_install_test.sh; debian_mirror_test.sh checks it on both formats.
#
# Both formats apt reads:
#   - one-line: sources.list and sources.list.d/*.list, as the Debian installer and debootstrap
#     write them ("deb [options] URI SUITE COMPONENT...");
#   - deb822: sources.list.d/*.sources stanzas ("Types:", "URIs:", "Suites:"), as Debian's cloud
#     and container images ship debian.sources.
# An entry counts when its type is deb, its URI is http, https or file, and it has a Debian release
# suite (bookworm, or another release name; never -security, -updates or -backports, whose archives
# hold no base system). An entry with the suite bookworm wins over one with another release.
# Missing files, empty globs and comments are not errors: the function never fails under
# `set -euo pipefail`, it prints nothing instead.

debian_mirror() {
  local apt="${1:-/etc/apt}"
  local files=() f
  [ -f "$apt/sources.list" ] && files+=("$apt/sources.list")
  for f in "$apt"/sources.list.d/*.list "$apt"/sources.list.d/*.sources; do
    [ -f "$f" ] && files+=("$f")
  done
  [ ${#files[@]} -gt 0 ] || return 0
  awk '
    function release(s) { return s ~ /^(bookworm|trixie|forky|bullseye|buster|sid|stable|oldstable|testing|unstable)$/ }
    function usable(u) { return u ~ /^(https?|file):/ }
    function consider(uri, suite) {
      if (!usable(uri) || !release(suite)) return
      if (suite == "bookworm" && best == "") best = uri
      if (any == "") any = uri
    }
    # deb822 stanzas end at a blank line or at the end of the file.
    function stanza_end(   n, i, u, s, t) {
      if (types ~ /(^|[ \t])deb([ \t]|$)/ && !disabled) {
        n = split(suites, s, " "); split(uris, u, " ")
        for (i = 1; i <= n; i++) consider(u[1], s[i])
      }
      types = uris = suites = ""; disabled = 0
    }
    FNR == 1 { if (deb822) stanza_end(); deb822 = (FILENAME ~ /\.sources$/) }
    deb822 {
      if ($0 ~ /^[ \t]*$/) { stanza_end(); next }
      if ($0 ~ /^[ \t]*#/) next
      line = $0; key = tolower(line); sub(/:.*/, "", key)
      value = line; sub(/^[^:]*:[ \t]*/, "", value)
      if (key == "types") types = value
      else if (key == "uris") uris = value
      else if (key == "suites") suites = value
      else if (key == "enabled" && tolower(value) == "no") disabled = 1
      next
    }
    /^[ \t]*deb[ \t]/ {
      line = $0; sub(/#.*/, "", line)
      sub(/^[ \t]*deb[ \t]+/, "", line)
      if (line ~ /^\[/) sub(/^\[[^]]*\][ \t]*/, "", line)   # [arch=amd64 signed-by=...]
      split(line, w, /[ \t]+/)
      consider(w[1], w[2])
    }
    END {
      if (deb822) stanza_end()
      if (best != "") print best; else if (any != "") print any
    }
  ' "${files[@]}" 2>/dev/null || true
}
