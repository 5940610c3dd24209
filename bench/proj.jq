# The jq yardstick for `project` and `summarize`: every tool call and tool result of a Claude
# Code stream as one compact object, output cut to 1000 characters (bench/run times it).
select(.type == "assistant" or .type == "user")
| .message.content
| select(type == "array") | .[]
| select(.type == "tool_use" or .type == "tool_result")
| {type, id: (.id // .tool_use_id), name,
   output: ((if .type == "tool_use" then (.input | tojson)
             elif (.content | type) == "string" then .content
             else ([.content[]? | .text // ""] | join("")) end)[0:1000])}
