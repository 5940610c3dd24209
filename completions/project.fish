complete -c project -l mode -d 'The projection' -r -f -a "jsonl\t''"
complete -c project -s h -l help -d 'Print help'
complete -c project -s V -l version -d 'Print version'
