complete -c project -l mode -d 'The projection to write' -r -f -a "normal\t''
verbose\t''
debug\t''
jsonl\t''
acp\t''
sse\t''
stream-json\t''
otlp\t''
atif\t''
ag-ui\t''"
complete -c project -l color -d 'When to colour human output: `auto` colours only a terminal, and never with NO_COLOR set' -r -f -a "auto\t'Colour when stdout is a terminal and `NO_COLOR` is unset or empty'
always\t'Always colour'
never\t'Never colour'"
complete -c project -l after -d 'With `--mode sse`: write only the frames after this frame id (`{session}-{seq}`), as a client\'s `Last-Event-ID` asks' -r
complete -c project -l ag-ui-format -d 'With `--mode ag-ui`: `sse` writes `data:` frames (AG-UI\'s HTTP transport), `jsonl` one event per line' -r -f -a "sse\t'Server-sent events: `data: {json}` and a blank line'
jsonl\t'One JSON event per line'"
complete -c project -l files-from -d 'Read the input files named in LIST (`-` for standard input), one path per line: any number of files in one process, with no argument-length limit' -r -F
complete -c project -l with-content -d 'With `--mode otlp`: add the prompt, the assistant\'s text and each tool\'s input and output as span attributes (scrubbed, like everything `project` shows). Off by default: traces often go where content should not'
complete -c project -l strict -d 'Read canonical events only: provider output is an error (exit 1), as any line that is not an event, instead of being normalized first as `normalize` would'
complete -c project -s 0 -l null -d 'With --files-from, the paths end with NUL, as `find -print0` writes them'
complete -c project -s h -l help -d 'Print help (see more with \'--help\')'
complete -c project -s V -l version -d 'Print version'
