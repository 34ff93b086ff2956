# bash completion for podtopo. Subcommands and flags are read from `podtopo ... --help`, so they
# are always those of the installed binary.
_podtopo_help_words() {
  # $1: "subcommands" or "flags"; the rest: the command path (podtopo state check ...)
  local what="$1"; shift
  "$@" --help 2>/dev/null | awk -v what="$what" '
    /^[A-Za-z][A-Za-z ]*:$/ { section = $0; next }
    what == "subcommands" && section == "Subcommands:" && /^  [a-z]/ { print $1 }
    what == "flags" && /^  -/ {
      n = split($1, parts, ",")
      for (i = 1; i <= n; i++) if (parts[i] ~ /^-/) print parts[i]
    }'
}

_podtopo() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  local path=(podtopo) i word subs
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && continue
    subs="$(_podtopo_help_words subcommands "${path[@]}")"
    if grep -qx -- "$word" <<<"$subs"; then path+=("$word"); fi
  done
  if [[ "$cur" == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_podtopo_help_words flags "${path[@]}")" -- "$cur")
  else
    subs="$(_podtopo_help_words subcommands "${path[@]}")"
    if [ -n "$subs" ]; then
      mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
    else
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
  fi
}
complete -F _podtopo podtopo
