#!/usr/bin/env bash
# debian_mirror_test.sh: debian_mirror (debian_mirror.sh) finds the mirror that
# deb_install_test.sh debootstraps from, in every layout of apt's sources a Debian 12 can have:
# the one-line sources.list of the installer and of debootstrap, the deb822 debian.sources of the
# cloud and container images, both, and neither. Each case runs under `set -euo pipefail`, as
# deb_install_test.sh does, so that a failing pipeline (issue 26: sed on an empty glob) ends the
# case loudly instead of silently.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=debian_mirror.sh
source "$here/debian_mirror.sh"
tmp="$(mktemp -d /tmp/podtopo-mirror-test-XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
failures=0 cases=0

check() {  # check NAME WANT: APT dir $tmp/NAME
  local name="$1" want="$2" got
  cases=$((cases + 1))
  got="$(debian_mirror "$tmp/$name")"
  if [ "$got" = "$want" ]; then
    echo "ok   $name: ${got:-(none)}"
  else
    echo "FAIL $name: got '${got}', want '${want}'"
    failures=$((failures + 1))
  fi
}
layout() {  # layout NAME FILE CONTENT: writes $tmp/NAME/FILE
  mkdir -p "$(dirname "$tmp/$1/$2")"
  printf '%s\n' "$3" >"$tmp/$1/$2"
}

# debootstrap --variant=minbase bookworm: one line, no sources.list.d at all.
layout one-line sources.list "deb http://deb.debian.org/debian bookworm main"
check one-line http://deb.debian.org/debian

# The Debian installer: comments, deb-src, security and updates lines, an empty sources.list.d.
layout installer sources.list "#deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_]/ bookworm main

deb http://security.debian.org/debian-security bookworm-security main
deb-src http://ftp.de.debian.org/debian/ bookworm main
deb http://ftp.de.debian.org/debian/ bookworm main non-free-firmware
deb http://ftp.de.debian.org/debian/ bookworm-updates main"
mkdir -p "$tmp/installer/sources.list.d"
check installer http://ftp.de.debian.org/debian/

# Options in brackets.
layout options sources.list "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] https://mirror.example/debian bookworm main"
check options https://mirror.example/debian

# deb822 (Debian's cloud and container images): the security stanza first, a comment between.
layout deb822 sources.list.d/debian.sources "Types: deb
# a snapshot comment
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main

Types: deb deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
check deb822 http://deb.debian.org/debian

# deb822 with a disabled stanza and a third-party repository whose suite is no Debian release.
layout deb822-others sources.list.d/debian.sources "Types: deb
URIs: http://disabled.example/debian
Suites: bookworm
Enabled: no

Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm"
layout deb822-others sources.list.d/a-nodesource.sources "Types: deb
URIs: https://deb.nodesource.com/node_20.x
Suites: nodistro
Components: main"
check deb822-others http://deb.debian.org/debian

# Both formats: an empty sources.list beside debian.sources (what the images ship).
layout both sources.list "# see sources.list.d/debian.sources"
layout both sources.list.d/debian.sources "Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm"
check both http://deb.debian.org/debian

# bookworm wins over another release named first.
layout releases sources.list "deb http://archive.example/debian trixie main
deb http://deb.debian.org/debian bookworm main"
check releases http://deb.debian.org/debian

# Neither: no mirror, and no failure (the caller skips and says why).
mkdir -p "$tmp/none/sources.list.d"
check none ""
check missing-dir ""

# deb_install_test.sh itself reads the mirror through this function (the bug was its inline sed).
cases=$((cases + 1))
if grep -q 'debian_mirror' "$here/deb_install_test.sh" && ! grep -q 'sources.list.d/\*.sources' "$here/deb_install_test.sh"; then
  echo "ok   deb_install_test.sh uses debian_mirror"
else
  echo "FAIL deb_install_test.sh reads the apt sources itself"
  failures=$((failures + 1))
fi

echo "debian_mirror: $((cases - failures)) of $cases cases ok"
[ "$failures" = 0 ]
