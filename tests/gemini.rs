//! `normalize` on Gemini CLI `--output-format stream-json`: golden outputs over the real
//! captures, and the readings that matter most checked one by one.

use serde_json::{json, Value};

use crate::support::*;

#[test]
fn golden_gemini() {
    golden_dir("gemini", &[]);
}

fn capture(case: &str) -> Vec<Value> {
    json_lines(&run("normalize", &[], &read(&format!("gemini/{case}.input.jsonl"))))
}

const TS: &str = "2026-11-29T21:31:53.746Z";

fn init() -> Value {
    json!({"type": "init", "timestamp": TS, "session_id": "g1", "model": "gemini-2.5-pro"})
}

fn user(prompt: &str) -> Value {
    json!({"type": "message", "timestamp": TS, "role": "user", "content": prompt})
}

fn shell(id: &str, command: &str) -> Value {
    json!({"type": "tool_use", "timestamp": TS, "tool_name": "run_shell_command", "tool_id": id, "parameters": {"command": command}})
}

fn result_of(id: &str, status: &str, output: &str) -> Value {
    json!({"type": "tool_result", "timestamp": TS, "tool_id": id, "status": status, "output": output})
}

fn success() -> Value {
    json!({"type": "result", "timestamp": TS, "status": "success", "stats": {"input_tokens": 10, "output_tokens": 2, "cached": 4, "duration_ms": 9}})
}

#[test]
fn a_shell_exit_code_is_never_invented() {
    let events = capture("exit4");
    let completed = only(&events, "tool.completed");
    assert_eq!(completed["payload"]["output"], json!({"stdout": "line1\nline2"}), "no exit_code: Gemini does not say");
}

#[test]
fn the_exit_code_gemini_shows_for_a_silent_failure_is_read() {
    let events = normalize_lines(&[
        init(),
        user("go"),
        shell("t1", "test -f x"),
        result_of("t1", "success", "Command exited with code: 1"),
        success(),
    ]);
    let failed = only(&events, "tool.failed");
    assert_eq!(failed["payload"]["output"], json!({"exit_code": 1}));
}

#[test]
fn a_command_gemini_blocked_is_denied() {
    let events = capture("ansi");
    let denied = only(&events, "tool.denied");
    assert_eq!(denied["payload"]["error"]["category"], "PERMISSION_DENIED");
    assert_eq!(denied["payload"]["error"]["message"], "Blocked: command substitution detected in shell command.");
    assert!(denied["payload"].get("output").is_none(), "the note is the reason, not the command's output");
}

#[test]
fn cancelled_timed_out_and_policy_refused_tools_keep_their_status() {
    let events = normalize_lines(&[
        init(),
        user("go"),
        shell("t1", "sleep 9"),
        result_of("t1", "success", "Command cancelled by user.\n\nOutput before cancellation:\nzzz"),
        shell("t2", "tail -f log"),
        result_of(
            "t2",
            "success",
            "Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without output.",
        ),
        shell("t3", "rm -rf /"),
        json!({"type": "tool_result", "timestamp": TS, "tool_id": "t3", "status": "error", "error": {"type": "policy_violation", "message": "denied by policy"}}),
        success(),
    ]);
    let cancelled = only(&events, "tool.cancelled");
    assert!(cancelled["payload"]["output"]["stdout"].as_str().unwrap().ends_with("zzz"));
    assert_eq!(only(&events, "tool.timeout")["payload"]["toolCallId"], "t2");
    assert_eq!(only(&events, "tool.denied")["payload"]["error"]["message"], "denied by policy");
}

#[test]
fn large_output_is_bounded_and_marked() {
    let events = capture("bigout");
    let out = &only(&events, "tool.completed")["payload"]["output"];
    assert_eq!(out["truncated"], true);
    let stdout = out["stdout"].as_str().unwrap();
    assert!(stdout.len() <= 256 * 1024 && stdout.ends_with("héllo wörld ✓ 日本語 🎉"));
}

#[test]
fn the_prompt_opens_the_turn_and_stats_are_the_usage() {
    let events = capture("text");
    assert_eq!(
        only(&events, "session.started")["payload"],
        json!({"provider": "gemini-cli", "model": "auto", "scrubbedBy": minicode_output::scrub::REVISION})
    );
    assert_eq!(
        only(&events, "turn.started")["payload"]["prompt"],
        "SCENARIO_TEXT WORKDIR=/home/dev/w/gm-text please do the task."
    );
    let summary = events.last().unwrap();
    assert_eq!(summary["payload"]["usage"], json!({"input_tokens": 12393, "output_tokens": 24, "cache_read": 0}));
    assert_eq!((&summary["ok"], &summary["payload"]["durationMs"]), (&json!(true), &json!(186)));
}

#[test]
fn an_api_error_fails_the_turn_and_its_zero_counters_are_no_usage() {
    let events = capture("err400");
    let error = &only(&events, "turn.failed")["payload"]["error"];
    assert_eq!(error["category"], "PROVIDER_ERROR");
    assert!(error["message"].as_str().unwrap().contains("\"code\":400"));
    assert!(of_type(&events, "usage").is_empty());
    assert_eq!(events.last().unwrap()["error"]["category"], "PROVIDER_ERROR");
}

#[test]
fn a_stream_that_stops_is_interrupted() {
    let events = capture("cancel");
    assert_eq!(only(&events, "tool.interrupted")["source"], "normalizer");
    assert_eq!(events.last().unwrap()["status"], "interrupted");
}

#[test]
fn a_stream_that_stops_after_an_error_note_failed_for_that_reason() {
    let note =
        json!({"type": "error", "timestamp": TS, "severity": "error", "message": "Maximum session turns exceeded"});
    let events = normalize_lines(&[init(), user("go"), note]);
    assert_eq!(only(&events, "warning")["payload"]["category"], "MAX_TURNS");
    assert_eq!(only(&events, "turn.failed")["payload"]["error"]["category"], "MAX_TURNS");
}

#[test]
fn chunks_are_shown_once_even_when_the_whole_message_follows() {
    let chunk = |s: &str, delta: bool| json!({"type": "message", "timestamp": TS, "role": "assistant", "content": s, "delta": delta});
    let events = normalize_lines(&[
        init(),
        user("go"),
        chunk("Hello, ", true),
        chunk("world.", true),
        chunk("Hello, world.", false),
        success(),
    ]);
    let text: String = of_type(&events, "text").iter().map(|e| e["payload"]["delta"].as_str().unwrap()).collect();
    assert_eq!(text, "Hello, world.");
}

#[test]
fn edits_report_the_file_they_changed() {
    let events = capture("write");
    let paths: Vec<&Value> = of_type(&events, "file.changed").iter().map(|e| &e["payload"]["path"]).collect();
    assert_eq!(paths, [&json!("/home/dev/w/gm-write/hello.txt"); 2]);
    assert!(of_type(&events, "tool.started").iter().all(|e| e["payload"]["kind"] == "edit"));
}

#[test]
fn unknown_event_types_are_kept_as_raw_and_counted() {
    let odd = json!({"type": "thought", "timestamp": TS, "content": "hmm"});
    let events = normalize_lines(&[init(), user("go"), odd, success()]);
    assert_eq!(only(&events, "raw")["payload"]["reason"], "unknown_type");
    assert_eq!(events.last().unwrap()["payload"]["input"]["unknownTypes"], 1);
}
