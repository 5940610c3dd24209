//! `normalize` on OpenCode `run --format json`: golden outputs over the real captures, and
//! the readings that matter most checked one by one.

use serde_json::{json, Value};

use crate::support::*;

#[test]
fn golden_opencode() {
    golden_dir("opencode", &[]);
}

fn capture(case: &str) -> Vec<Value> {
    json_lines(&run("normalize", &[], &read(&format!("opencode/{case}.input.jsonl"))))
}

/// One OpenCode event of the test session.
fn ev(kind: &str, part: Value) -> Value {
    json!({"type": kind, "timestamp": 1_795_987_000_000_u64, "sessionID": "ses_t", "part": part})
}

fn tool(name: &str, call: &str, state: Value) -> Value {
    ev("tool_use", json!({"type": "tool", "tool": name, "callID": call, "state": state}))
}

fn finish(reason: &str) -> Value {
    ev("step_finish", json!({"reason": reason, "tokens": {"input": 10, "output": 1}, "cost": 0}))
}

fn start() -> Value {
    ev("step_start", json!({}))
}

#[test]
fn a_non_zero_exit_fails_the_tool_and_keeps_its_output() {
    let events = capture("exit4");
    let failed = only(&events, "tool.failed");
    assert_eq!(failed["payload"]["output"], json!({"exit_code": 4, "stdout": "line1\nline2\n"}));
    assert_eq!(failed["payload"]["durationMs"], 302, "from the tool's own start and end");
    let started = only(&events, "tool.started");
    assert_eq!(started["payload"]["command"], "printf 'line1\\nline2\\n'; exit 4");
    assert_eq!(started["payload"]["kind"], "shell");
}

#[test]
fn a_rejected_permission_is_a_denial_and_ends_the_run() {
    let events = capture("deny-ask");
    let denied = only(&events, "tool.denied");
    assert_eq!(denied["payload"]["error"]["category"], "PERMISSION_DENIED");
    assert!(of_type(&events, "tool.failed").is_empty());
    assert_eq!(only(&events, "turn.failed")["payload"]["error"]["category"], "PERMISSION_DENIED");
    let summary = events.last().unwrap();
    assert_eq!((&summary["ok"], &summary["payload"]["tools"]["denied"]), (&json!(false), &json!(1)));
}

#[test]
fn output_the_provider_shortened_is_marked_truncated() {
    let events = capture("bigout");
    let out = &only(&events, "tool.completed")["payload"]["output"];
    assert_eq!(out["truncated"], true);
    assert_eq!(out["exit_code"], 0);
    assert!(out["stdout"].as_str().unwrap().starts_with("...output truncated...\n\nFull output saved to: "));
}

#[test]
fn every_step_adds_its_usage() {
    let events = capture("ansi");
    assert_eq!(of_type(&events, "usage").len(), 2);
    let usage = &events.last().unwrap()["payload"]["usage"];
    assert_eq!(
        usage,
        &json!({"input_tokens": 15501, "output_tokens": 24, "cache_read": 0, "cache_write": 0, "cost_usd": 0.0})
    );
}

#[test]
fn reasoning_counts_as_output_and_the_cache_stays_apart_from_the_input() {
    let step = |cost: f64| {
        ev(
            "step_finish",
            json!({"reason": "tool-calls", "cost": cost,
            "tokens": {"input": 100, "output": 10, "reasoning": 5, "cache": {"read": 40, "write": 2}}}),
        )
    };
    let events = normalize_lines(&[start(), step(0.25), start(), step(0.5), finish("stop")]);
    let usage = &events.last().unwrap()["payload"]["usage"];
    // `finish("stop")` adds 10 input and 1 output of its own.
    assert_eq!(usage["input_tokens"], 2 * 100 + 10);
    assert_eq!(usage["output_tokens"], 2 * 15 + 1);
    assert_eq!(
        (&usage["cache_read"], &usage["cache_write"], &usage["cost_usd"]),
        (&json!(80), &json!(4), &json!(0.75))
    );
}

#[test]
fn an_api_error_fails_the_turn_as_a_provider_error() {
    let events = capture("err400");
    let error = &only(&events, "turn.failed")["payload"]["error"];
    assert_eq!(error["category"], "PROVIDER_ERROR");
    assert_eq!(error["message"], "mock: simulated HTTP 400 (ERR400)");
    assert_eq!(events.last().unwrap()["error"]["category"], "PROVIDER_ERROR");
}

#[test]
fn write_adds_a_file_and_edit_updates_it() {
    let events = capture("write");
    let changes: Vec<(&Value, &Value)> =
        of_type(&events, "file.changed").iter().map(|e| (&e["payload"]["path"], &e["payload"]["change"])).collect();
    let path = json!("/home/dev/w/oc-write/hello.txt");
    assert_eq!(changes, [(&path, &json!("add")), (&path, &json!("update"))]);
}

#[test]
fn a_task_is_an_agent_tool_and_its_child_session_is_its_child() {
    let task = tool(
        "task",
        "c1",
        json!({"status": "completed", "input": {"description": "review", "subagent_type": "general"},
        "output": "done", "metadata": {"sessionId": "ses_child", "parentSessionId": "ses_t"}}),
    );
    let child = ev("text", json!({"type": "text", "text": "from the child", "sessionID": "ses_child"}));
    let events = normalize_lines(&[start(), task, child, finish("stop")]);
    let started = only(&events, "tool.started");
    assert_eq!((&started["payload"]["kind"], &started["payload"]["target"]), (&json!("agent"), &json!("review")));
    let text = only(&events, "text");
    assert_eq!((&text["parentId"], &text["sessionId"]), (&json!("c1"), &json!("ses_t")));
}

#[test]
fn an_aborted_tool_and_an_aborted_message_are_cancelled() {
    let aborted = tool(
        "bash",
        "c1",
        json!({"status": "error", "input": {"command": "sleep 9"},
        "error": "Tool execution aborted", "metadata": {"interrupted": true}}),
    );
    let error = json!({"type": "error", "sessionID": "ses_t", "error": {"name": "MessageAbortedError", "data": {"message": "Aborted"}}});
    let events = normalize_lines(&[start(), aborted, error]);
    assert_eq!(only(&events, "tool.cancelled")["payload"]["error"]["category"], "CANCELLED");
    assert_eq!(only(&events, "turn.cancelled")["payload"]["error"]["category"], "CANCELLED");
    assert_eq!(events.last().unwrap()["status"], "cancelled");
}

#[test]
fn an_unknown_exit_stays_unknown() {
    let done = tool(
        "bash",
        "c1",
        json!({"status": "completed", "input": {"command": "true"}, "output": "", "metadata": {"exit": null}}),
    );
    let events = normalize_lines(&[start(), done, finish("stop")]);
    let completed = only(&events, "tool.completed");
    assert!(completed["payload"].get("output").is_none_or(|o| o.get("exit_code").is_none()));
}

#[test]
fn apply_patch_reports_each_file_it_touched() {
    let files = json!([
        {"filePath": "/w/new.rs", "type": "add"},
        {"filePath": "/w/old.rs", "type": "delete"},
        {"filePath": "/w/lib.rs", "type": "update"},
        {"filePath": "/w/a.rs", "type": "move", "movePath": "/w/b.rs"},
    ]);
    let patch = tool(
        "apply_patch",
        "c1",
        json!({"status": "completed", "input": {"patchText": "*** Begin Patch"},
        "output": "Success.", "metadata": {"files": files}}),
    );
    let events = normalize_lines(&[start(), patch, finish("stop")]);
    let changes: Vec<String> = of_type(&events, "file.changed")
        .iter()
        .map(|e| format!("{} {}", e["payload"]["change"].as_str().unwrap(), e["payload"]["path"].as_str().unwrap()))
        .collect();
    assert_eq!(changes, ["add /w/new.rs", "delete /w/old.rs", "update /w/lib.rs", "delete /w/a.rs", "add /w/b.rs"]);
}

#[test]
fn unknown_event_types_are_kept_as_raw_and_counted() {
    let odd = json!({"type": "hologram", "timestamp": 1, "sessionID": "ses_t"});
    let events = normalize_lines(&[start(), odd, finish("stop")]);
    assert_eq!(only(&events, "raw")["payload"]["reason"], "unknown_type");
    let summary = events.last().unwrap();
    assert_eq!((&summary["ok"], &summary["payload"]["input"]["unknownTypes"]), (&json!(true), &json!(1)));
}

#[test]
fn done_ends_the_run_and_a_late_error_still_fails_it() {
    let done = json!({"type": "done", "timestamp": 2, "sessionID": "ses_t", "reason": "idle", "rejected": []});
    let events = normalize_lines(&[start(), finish("tool-calls"), done]);
    assert_eq!(only(&events, "turn.completed")["payload"]["stopReason"], "idle");

    let late =
        json!({"type": "error", "sessionID": "ses_t", "error": {"name": "UnknownError", "data": {"message": "boom"}}});
    let events = normalize_lines(&[start(), finish("stop"), late]);
    assert_eq!(of_type(&events, "turn.started").len(), 1, "a late error opens no second turn");
    assert_eq!(only(&events, "warning")["payload"]["message"], "boom");
    assert_eq!(events.last().unwrap()["error"]["category"], "PROVIDER_ERROR");
}

#[test]
fn a_step_that_ends_in_error_fails_the_run_at_end_of_input() {
    let events = normalize_lines(&[start(), finish("error")]);
    assert_eq!(only(&events, "turn.failed")["payload"]["error"]["category"], "PROVIDER_ERROR");
    assert!(of_type(&events, "turn.interrupted").is_empty());
}
