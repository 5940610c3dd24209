//! Choosing the dialect: what no dialect claims is `unknown`, never a guess, and what a
//! run's parser cannot read is said, counted, and keeps a run with tool lines from `ok`.

use serde_json::json;

use crate::support::*;

/// `normalize` over JSON lines: its events, stderr and exit code.
fn normalize(lines: &[serde_json::Value]) -> (Vec<serde_json::Value>, String, i32) {
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = bin("normalize").write_stdin(input).output().expect("runs");
    (json_lines(&out.stdout), String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code().unwrap())
}

#[test]
fn json_no_dialect_claims_is_an_unknown_session_and_an_input_error() {
    let (events, stderr, code) =
        normalize(&[json!({"kind": "hello", "n": 1}), json!({"type": "agent.thought", "x": 2})]);
    assert_eq!(providers(&events), ["unknown"]);
    assert_eq!(of_type(&events, "raw").len(), 2);
    assert!(of_type(&events, "raw").iter().all(|r| r["payload"]["reason"] == "unknown_provider"));
    let summary = events.last().unwrap();
    assert_eq!((&summary["ok"], &summary["error"]["category"]), (&json!(false), &json!("INPUT_ERROR")));
    assert!(stderr.contains("lines 1-2: 2 JSON line(s) of no dialect"), "{stderr}");
    assert_eq!(code, 1);
}

#[test]
fn what_a_known_agent_prints_that_its_parser_cannot_read_is_said_and_counted() {
    let (events, stderr, code) = normalize(&[
        json!({"type": "thread.started", "thread_id": "t"}),
        json!({"type": "turn.started"}),
        json!({"type": "brand.new", "x": 1}),
        json!({"type": "turn.completed"}),
    ]);
    let warning = only(&events, "warning");
    assert_eq!(warning["payload"]["category"], "INPUT_ERROR");
    assert!(warning["payload"]["message"].as_str().unwrap().contains("1 of the 4 line(s) of the codex run"));
    assert!(stderr.contains("line 3: 1 of the 4 line(s) of the codex run were not understood (types: brand.new)"));
    assert_eq!(events.last().unwrap()["ok"], true, "the run itself went well");
    assert_eq!(code, 0);
}

/// The defect this guards against: a run whose tool lines were not understood was
/// summarized `ok` with no tools.
#[test]
fn a_run_whose_tool_lines_were_not_understood_is_not_ok() {
    let (events, stderr, code) = normalize(&[
        json!({"type": "thread.started", "thread_id": "t"}),
        json!({"type": "turn.started"}),
        json!({"type": "tool.invocation", "call": {"command": "make"}}),
        json!({"type": "turn.completed"}),
    ]);
    let summary = events.last().unwrap();
    assert_eq!(summary["payload"]["tools"]["total"], 0);
    assert_eq!((&summary["ok"], &summary["error"]["category"]), (&json!(false), &json!("INPUT_ERROR")));
    assert!(summary["error"]["message"].as_str().unwrap().contains("look like tool calls"));
    assert!(stderr.contains("line 3"), "{stderr}");
    assert_eq!(code, 1);
}

#[test]
fn a_run_after_json_no_dialect_claims_is_read_in_its_own_dialect() {
    let (events, _, _) = normalize(&[
        json!({"kind": "banner"}),
        json!({"type": "thread.started", "thread_id": "t"}),
        json!({"type": "turn.started"}),
        json!({"type": "turn.completed"}),
    ]);
    assert_eq!(providers(&events), ["unknown", "codex"]);
    let summary = events.last().unwrap();
    assert_eq!(summary["payload"]["turns"], 1);
    assert_eq!(summary["ok"], true, "part was understood: a warning, not an input error");
    assert_eq!(of_type(&events, "warning").len(), 1);
}

/// The provider of each session, in the order the sessions start.
pub fn providers(events: &[serde_json::Value]) -> Vec<&str> {
    of_type(events, "session.started").iter().map(|e| e["payload"]["provider"].as_str().unwrap()).collect()
}
