complete -c truncate -l mode -d 'The truncateion' -r -f -a "jsonl\t''"
complete -c truncate -s h -l help -d 'Print help'
complete -c truncate -s V -l version -d 'Print version'
