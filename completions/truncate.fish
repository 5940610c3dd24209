complete -c truncate -l max-bytes -d 'The most bytes a field keeps (with --text: the whole output)' -r
complete -c truncate -l keep -d 'How a cut field keeps its bytes [default: tail for tool output, head-tail for the rest; tail with --text]' -r -f -a "tail\t'The newest bytes'
head\t'The oldest bytes'
head-tail\t'70 % head, 30 % tail, and a marker stating the bytes cut'"
complete -c truncate -l fields -d 'Which fields to bound, comma-separated [default: all]' -r -f -a "output\t'Tool output: `stdout`/`stderr` of tool terminals, `delta` of `tool.output`'
input\t'Tool input: `command` and `input` of `tool.started`'
text\t'Text: `delta` of `text`/`reasoning`, prompts, plan entries, warning messages'
raw\t'The `line` of `raw` events'
other\t'Everything else: paths, titles, error messages, unknown payloads'"
complete -c truncate -l max-line-bytes -d 'Lines longer than this are read as their first 4 KiB only, and the exit status is 1 (normalize: a `raw` event holds that start)' -r
complete -c truncate -l files-from -d 'Read the input files named in LIST (`-` for standard input), one path per line: any number of files in one process, with no argument-length limit' -r -F
complete -c truncate -l text -d 'Treat the input as plain text and bound all of it'
complete -c truncate -s 0 -l null -d 'With --files-from, the paths end with NUL, as `find -print0` writes them'
complete -c truncate -s h -l help -d 'Print help (see more with \'--help\')'
complete -c truncate -s V -l version -d 'Print version'
