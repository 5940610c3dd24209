complete -c summarize -l mode -d 'The summarizeion' -r -f -a "jsonl\t''"
complete -c summarize -s h -l help -d 'Print help'
complete -c summarize -s V -l version -d 'Print version'
