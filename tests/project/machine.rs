//! The machine projections: ACP lines against ACP's published schema, SSE framing and
//! resume, and stream-json's shape and its round trip through `normalize`.

use serde_json::Value;

use super::{case_input, CASES};
use crate::support::*;

fn project(args: &[&str], input: &[u8]) -> Vec<u8> {
    let out = bin("project").args(args).write_stdin(input.to_vec()).output().expect("runs");
    assert!(out.status.success(), "project {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Every canonical input the tests have: the cases and the normalized captures.
fn all_inputs() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = CASES.iter().map(|c| (c.to_string(), case_input(c))).collect();
    for dir in ["codex", "claude"] {
        for input in inputs(dir) {
            let events = input.replace(".input.jsonl", ".events.jsonl");
            v.push((events.clone(), read(&events)));
        }
    }
    v
}

#[test]
fn acp_lines_validate_against_the_published_schema() {
    let schema: Value = serde_json::from_slice(&read("acp-schema/schema.json")).unwrap();
    let whole = jsonschema::validator_for(&schema).expect("the ACP schema compiles");
    let notification = serde_json::json!({"$ref": "#/$defs/SessionNotification", "$defs": schema["$defs"]});
    let update = jsonschema::validator_for(&notification).unwrap();
    let mut updates = 0;
    for (name, input) in all_inputs() {
        for line in json_lines(&project(&["--mode", "acp"], &input)) {
            assert_eq!(line["jsonrpc"], "2.0", "{name}: {line}");
            assert!(line.get("id").is_none(), "{name}: a notification has no id: {line}");
            let method = line["method"].as_str().unwrap();
            assert!(method == "session/update" || method.starts_with("_minicode/"), "{name}: method {method}");
            if let Some(e) = whole.iter_errors(&line).next() {
                panic!("{name}: not an ACP message ({e}): {line}");
            }
            if method == "session/update" {
                updates += 1;
                if let Some(e) = update.iter_errors(&line["params"]).next() {
                    panic!("{name}: invalid session/update ({e} at {}): {line}", e.instance_path);
                }
            }
        }
    }
    assert!(updates > 100, "only {updates} session/update lines were checked");
}

#[test]
fn acp_uses_its_own_update_kinds_and_keeps_toolkit_detail_in_meta() {
    let lines = json_lines(&project(&["--mode", "acp"], &case_input("kitchen-sink")));
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["params"]["update"]["sessionUpdate"].as_str()).collect();
    for k in
        ["agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan", "user_message_chunk"]
    {
        assert!(kinds.contains(&k), "no {k} in {kinds:?}");
    }
    let failed = lines.iter().find(|l| l["params"]["update"]["_meta"]["minicode"]["type"] == "tool.failed").unwrap();
    let u = &failed["params"]["update"];
    assert_eq!((u["status"].as_str(), u["_meta"]["terminal_exit"]["exit_code"].as_i64()), (Some("failed"), Some(101)));
    let denied = lines.iter().find(|l| l["params"]["update"]["_meta"]["minicode"]["outcome"] == "denied").unwrap();
    assert_eq!(denied["params"]["update"]["_meta"]["minicode"]["error"]["category"], "PERMISSION_DENIED");
    let child = lines.iter().find(|l| l["params"]["update"]["toolCallId"] == "c5").unwrap();
    assert_eq!(child["params"]["update"]["_meta"]["minicode"]["parentId"], "c4");
}

/// The frames of an SSE stream as (id, event, data).
fn frames(out: &[u8]) -> Vec<(String, String, Value)> {
    let text = String::from_utf8(out.to_vec()).unwrap();
    assert!(text.is_empty() || text.ends_with("\n\n"), "frames end with a blank line");
    text.split("\n\n")
        .filter(|f| !f.is_empty())
        .map(|f| {
            let field = |k: &str| f.lines().find_map(|l| l.strip_prefix(k)).unwrap_or_else(|| panic!("no {k} in {f}"));
            (field("id: ").to_owned(), field("event: ").to_owned(), serde_json::from_str(field("data: ")).unwrap())
        })
        .collect()
}

#[test]
fn sse_frames_carry_session_seq_ids_and_provenance() {
    const EVENTS: [&str; 7] = ["delta", "tool_call", "tool_result", "status", "done", "error", "raw"];
    for (name, input) in all_inputs() {
        let mut last = std::collections::HashMap::new();
        for (id, event, data) in frames(&project(&["--mode", "sse"], &input)) {
            let session = data["session_id"].as_str().unwrap_or_else(|| panic!("{name}: no session_id"));
            let seq: u64 =
                id.strip_prefix(&format!("{session}-")).and_then(|s| s.parse().ok()).expect("id is {session}-{seq}");
            assert_eq!(seq, last.get(session).copied().unwrap_or(0) + 1, "{name}: {id} is not the next frame");
            last.insert(session.to_owned(), seq);
            assert!(EVENTS.contains(&event.as_str()), "{name}: event {event}");
            assert!(data["raw_ref"]["line"].is_u64(), "{name}: {id} has no raw_ref");
        }
    }
    let exit4 = frames(&project(&["--mode", "sse"], &case_input("codex-exit4")));
    let result = exit4.iter().find(|f| f.1 == "tool_result").unwrap();
    assert_eq!((result.2["status"].as_str(), result.2["exit_code"].as_i64()), (Some("error"), Some(4)));
    assert_eq!(exit4.last().unwrap().1, "done");
}

#[test]
fn sse_resumes_after_a_frame_id() {
    let input = case_input("codex-exit4");
    let all = frames(&project(&["--mode", "sse"], &input));
    let after = &all[2].0;
    let rest = frames(&project(&["--mode", "sse", "--after", after], &input));
    assert_eq!(rest, all[3..]);
    let out = bin("project").args(["--mode", "sse", "--after", "nope-9"]).write_stdin(input).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope-9"));
    let f = frames(&out.stdout);
    assert_eq!((f.len(), f[0].1.as_str(), f[0].2["code"].as_str()), (1, "error", Some("STREAM_INTERRUPTED")));
}

#[test]
fn stream_json_is_claude_shaped() {
    for (name, input) in all_inputs() {
        let lines = json_lines(&project(&["--mode", "stream-json"], &input));
        assert_eq!((lines[0]["type"].as_str(), lines[0]["subtype"].as_str()), (Some("system"), Some("init")), "{name}");
        let results: Vec<usize> =
            lines.iter().enumerate().filter(|(_, l)| l["type"] == "result").map(|(i, _)| i).collect();
        assert_eq!(results, [lines.len() - 1], "{name}: exactly one result, last");
        let last = lines.last().unwrap();
        assert!(last["is_error"].is_boolean() && last["subtype"].is_string(), "{name}: {last}");
        let seqs: Vec<u64> = lines.iter().map(|l| l["seq"].as_u64().expect("seq")).collect();
        assert!(seqs.windows(2).all(|w| w[1] > w[0]), "{name}: seq {seqs:?}");
        for l in &lines {
            assert!(keys(l).iter().all(|k| !k.chars().any(|c| c.is_ascii_uppercase())), "{name}: not snake_case: {l}");
        }
    }
}

/// Every key of the line's own structure (tool inputs are the provider's, left as given).
fn keys(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Value::Object(m) = v {
        for (k, x) in m {
            out.push(k.clone());
            if k != "input" && k != "tool_input" {
                out.extend(keys(x));
            }
        }
    } else if let Value::Array(a) = v {
        a.iter().for_each(|x| out.extend(keys(x)));
    }
    out
}

#[test]
fn stream_json_says_a_failed_command_as_claude_does() {
    let lines = json_lines(&project(&["--mode", "stream-json"], &case_input("codex-exit4")));
    let result = lines.iter().find(|l| l["type"] == "user").unwrap();
    let block = &result["message"]["content"][0];
    assert_eq!((block["type"].as_str(), block["is_error"].as_bool()), (Some("tool_result"), Some(true)));
    assert_eq!(block["content"], "Exit code 4\nline1\nline2\n");
    let tool_use = lines.iter().find(|l| l["message"]["content"][0]["type"] == "tool_use").unwrap();
    assert_eq!(tool_use["message"]["content"][0]["name"], "Bash");
}

/// A tool terminal as the round trip must keep it: id, type, kind, exit code, nested.
type ToolEssence = (String, String, String, Option<i64>, bool);
/// A run's outcome: ok, status, error category.
type Outcome = (bool, String, String);

/// What the round trip must keep: each tool terminal and the run's outcome.
fn essence(events: &[Value]) -> (Vec<ToolEssence>, Outcome) {
    let tools = events
        .iter()
        .filter(|e| {
            let t = e["type"].as_str().unwrap();
            t.starts_with("tool.") && t != "tool.started" && t != "tool.output"
        })
        .map(|e| {
            let p = &e["payload"];
            let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (
                s(&p["toolCallId"]),
                s(&e["type"]),
                s(&p["kind"]),
                p["output"]["exit_code"].as_i64(),
                e.get("parentId").is_some(),
            )
        })
        .collect();
    let s = events.last().unwrap();
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (tools, (s["ok"].as_bool().unwrap(), text(&s["status"]), text(&s["error"]["category"])))
}

#[test]
fn stream_json_round_trips_through_normalize() {
    let mut checked = 0;
    for dir in ["codex", "claude"] {
        for input in inputs(dir) {
            let before = json_lines(&read(&input.replace(".input.jsonl", ".events.jsonl")));
            let canonical = read(&input.replace(".input.jsonl", ".events.jsonl"));
            let claude = project(&["--mode", "stream-json"], &canonical);
            let after = json_lines(&run("normalize", &["--from", "claude"], &claude));
            let (tools_before, (ok, status, category)) = essence(&before);
            let (tools_after, outcome_after) = essence(&after);
            assert_eq!(tools_after.len(), tools_before.len(), "{input}: tools {tools_before:?} -> {tools_after:?}");
            for (b, a) in tools_before.iter().zip(&tools_after) {
                // Claude never states a zero exit code: a command that succeeded has none.
                let exit = if b.3 == Some(0) { None } else { b.3 };
                assert_eq!((&a.0, &a.1, &a.2, a.3, a.4), (&b.0, &b.1, &b.2, exit, b.4), "{input}");
            }
            // Claude's result subtypes have no word its parser reads as a timeout or as a
            // stream cut short; those runs come back failed (still not ok).
            let expected = match status.as_str() {
                "interrupted" | "timeout" => (ok, "failed".to_owned(), outcome_after.2.clone()),
                _ => (ok, status, category),
            };
            assert_eq!(outcome_after, expected, "{input}");
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} captures round-tripped");
}
