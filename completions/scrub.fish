complete -c scrub -l max-line-bytes -d 'Lines longer than this are read as their first 4 KiB only, and the exit status is 1 (normalize: a `raw` event holds that start)' -r
complete -c scrub -l files-from -d 'Read the input files named in LIST (`-` for standard input), one path per line: any number of files in one process, with no argument-length limit' -r -F
complete -c scrub -l text -d 'Treat the input as plain text, not JSONL (a PEM key over many lines goes whole)'
complete -c scrub -l stats -d 'Print what was redacted, by kind, on stderr at the end'
complete -c scrub -l list-rules -d 'Print the rule table (rule, kind, format, source) as Markdown and exit'
complete -c scrub -s 0 -l null -d 'With --files-from, the paths end with NUL, as `find -print0` writes them'
complete -c scrub -s h -l help -d 'Print help (see more with \'--help\')'
complete -c scrub -s V -l version -d 'Print version'
