# fish completion for podtopo. Subcommands and flags are read from `podtopo ... --help`, so they
# are always those of the installed binary.
function __podtopo_path
    set -l path podtopo
    for word in (commandline -opc)[2..-1]
        string match -q -- '-*' $word; and continue
        if contains -- $word (__podtopo_help_words subcommands $path)
            set path $path $word
        end
    end
    printf '%s\n' $path
end

function __podtopo_help_words
    set -l what $argv[1]
    $argv[2..-1] --help 2>/dev/null | awk -v what=$what '
      /^[A-Za-z][A-Za-z ]*:$/ { section = $0; next }
      what == "subcommands" && section == "Subcommands:" && /^  [a-z]/ { print $1 }
      what == "flags" && /^  -/ {
        n = split($1, parts, ",")
        for (i = 1; i <= n; i++) if (parts[i] ~ /^-/) print parts[i]
      }'
end

complete -c podtopo -f -a '(__podtopo_help_words subcommands (__podtopo_path))'
complete -c podtopo -f -n 'string match -q -- "-*" (commandline -ct)' -a '(__podtopo_help_words flags (__podtopo_path))'
