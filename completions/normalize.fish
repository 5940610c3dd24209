complete -c normalize -l from -d 'The provider dialect of the input' -r -f -a "auto\t'detect the dialect of each run'
acp\t'JSON-RPC traffic of any ACP agent (its stdout, or both directions)'
claude\t'Claude Code --output-format stream-json'
qwen\t'Qwen Code --output-format stream-json'
amp\t'Amp -x --stream-json'
codex\t'Codex exec --json'
opencode\t'OpenCode run --format json'
kilo\t'Kilo Code kilo run --format json'
gemini\t'Gemini CLI --output-format stream-json'
auggie\t'Auggie --acp (ACP JSON-RPC)'
copilot\t'GitHub Copilot CLI -p --output-format json'
cline\t'Cline CLI --json'
droid\t'Factory droid exec --output-format stream-json'
cursor\t'Cursor agent -p --output-format stream-json'"
complete -c normalize -l max-bytes -d 'Bound of each text field, in bytes (tool output keeps its newest bytes)' -r
complete -c normalize -l max-line-bytes -d 'Lines longer than this are read as their first 4 KiB only, and the exit status is 1 (normalize: a `raw` event holds that start)' -r
complete -c normalize -l files-from -d 'Read the input files named in LIST (`-` for standard input), one path per line: any number of files in one process, with no argument-length limit' -r -F
complete -c normalize -s 0 -l null -d 'With --files-from, the paths end with NUL, as `find -print0` writes them'
complete -c normalize -s h -l help -d 'Print help (see more with \'--help\')'
complete -c normalize -s V -l version -d 'Print version'
