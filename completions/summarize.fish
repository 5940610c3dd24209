complete -c summarize -l format -d 'The report\'s format: an indented JSON document, text, or Markdown for CI summaries' -r -f -a "json\t'One indented JSON object: its own `--merge` input'
text\t'Text for a terminal'
markdown\t'GitHub-flavoured Markdown (e.g. for $GITHUB_STEP_SUMMARY)'"
complete -c summarize -l color -d 'When to colour text: auto means when stdout is a terminal and NO_COLOR is unset or empty' -r -f -a "auto\t'Colour when stdout is a terminal and `NO_COLOR` is unset or empty'
always\t'Always colour'
never\t'Never colour'"
complete -c summarize -l files-from -d 'Read the input files named in LIST (`-` for standard input), one path per line: any number of files in one process, with no argument-length limit' -r -F
complete -c summarize -l check -d 'Gate on the runs\' verdicts: exit 0 when every run succeeded, 1 when any failed, 3 when none failed but some are incomplete or unknown (or there is none); each run that is not a success gets one line on stderr: what happened, why, what to do'
complete -c summarize -l merge -d 'Read summarize\'s own JSON documents (`--format json` output) and merge them into one'
complete -c summarize -l strict -d 'Read canonical events only: provider output is an error (exit 1), as any line that is not an event, instead of being normalized first as `normalize` would'
complete -c summarize -s 0 -l null -d 'With --files-from, the paths end with NUL, as `find -print0` writes them'
complete -c summarize -s h -l help -d 'Print help (see more with \'--help\')'
complete -c summarize -s V -l version -d 'Print version'
