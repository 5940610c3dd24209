complete -c normalize -l from -d 'The provider dialect of the input' -r
complete -c normalize -l max-bytes -d 'Bound of each text field, in bytes (tool output keeps its newest bytes)' -r
complete -c normalize -l max-line-bytes -d 'Lines longer than this become a `raw` event holding their start' -r
complete -c normalize -s h -l help -d 'Print help (see more with \'--help\')'
complete -c normalize -s V -l version -d 'Print version'
