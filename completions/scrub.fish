complete -c scrub -l mode -d 'The scrubion' -r -f -a "jsonl\t''"
complete -c scrub -s h -l help -d 'Print help'
complete -c scrub -s V -l version -d 'Print version'
