#!/bin/sh
# The linker launcher of podtopo-agent (cmd/podtopo-agent/CMakeLists.txt): links the named
# libraries from their static archives instead of their shared objects.
#
#   link_static_archives.sh NAME... -- LINK-COMMAND...
#
# Each NAME is a library's name without "lib" and suffix (a trailing * matches a family:
# "absl_*"). In LINK-COMMAND, a shared object DIR/libNAME.so[.VERSION] or -lNAME whose archive
# DIR/libNAME.a exists (for -lNAME: where the compiler finds libNAME.a) is taken out; the archives go at the end in one --start-group/--end-group (they need each other in
# any order), followed again by the command's remaining shared libraries and -l flags, which
# the archives may need (libssl, libz, ...). A NAME without an archive stays shared. The
# command then runs as rewritten: with --as-needed, nothing of the named libraries is loaded
# at run time (checked by tests/agent/agent_rss_test.py).
set -eu
names=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  names="$names $1"
  shift
done
[ $# -gt 0 ] || { echo "link_static_archives.sh: no '--' before the link command" >&2; exit 2; }
shift
cxx=$1  # the compiler that links, which knows where archives are

matches() {  # matches LIBNAME: is LIBNAME one of the names?
  for n in $names; do
    case "$1" in $n) return 0 ;; esac
  done
  return 1
}

archives=""
again=""
for arg in "$@"; do
  shift
  lib=""
  case "$arg" in
    /*/lib*.so | /*/lib*.so.*)
      base=${arg##*/}; base=${base#lib}; lib=${base%%.so*}
      if matches "$lib" && [ -f "${arg%/*}/lib$lib.a" ]; then
        archives="$archives ${arg%/*}/lib$lib.a"
        continue
      fi
      again="$again $arg" ;;
    -l*)
      lib=${arg#-l}
      if matches "$lib"; then
        a=$("$cxx" -print-file-name="lib$lib.a")
        if [ -f "$a" ]; then
          archives="$archives $a"
          continue
        fi
      fi
      again="$again $arg" ;;
  esac
  set -- "$@" "$arg"
done
# Each archive once, in first-seen order.
uniq=""
for a in $archives; do
  case " $uniq " in *" $a "*) ;; *) uniq="$uniq $a" ;; esac
done
# shellcheck disable=SC2086  # the lists are whitespace-separated paths without spaces
if [ -n "$uniq" ]; then
  exec "$@" -Wl,--start-group $uniq -Wl,--end-group $again
fi
exec "$@"
