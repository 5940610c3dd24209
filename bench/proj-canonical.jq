# The jq yardstick for `project`'s export modes, which read the canonical stream: what
# bench/proj.jq takes from a Claude Code stream (every tool call and tool result as one
# compact object, output cut to 1000 characters), taken from the canonical events instead.
select(.type == "tool.started" or .type == "tool.completed" or .type == "tool.failed")
| .payload
| {type: (if .output == null then "tool_use" else "tool_result" end), id: .toolCallId, name,
   output: ((if .output == null then (.input | tojson)
             elif (.output | type) == "string" then .output
             else ([.output[]? | strings] | join("")) end)[0:1000])}
