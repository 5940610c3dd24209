//! ACP parser tests over small hand-written exchanges; the captures are golden tests in
//! `tests/acp.rs`.

use serde_json::{json, Value};

use super::exchange::stop_outcome;
use super::*;
use crate::engine::clock::Clock;
use crate::event::{Body, Decision, ErrorCategory, Event, Outcome, RawReason, Status};

/// Runs lines through the parser and engine the way `Normalizer` does.
fn run(lines: &[Value]) -> Vec<Event> {
    let mut engine = Engine::new(Clock::Fixed(1_767_225_600_000), 1024);
    let mut acp = Acp::default();
    for (i, l) in lines.iter().enumerate() {
        engine.begin_line(i as u64 + 1, false);
        let text = l.to_string();
        if acp.line(&text, &mut engine).is_err() {
            engine.raw(&text, RawReason::UnknownType);
        }
        engine.end_line();
    }
    acp.finish(&mut engine);
    let summary = engine.finish(Default::default());
    let mut events: Vec<Event> = engine.drain().collect();
    events.push(summary);
    events
}

fn types(events: &[Event]) -> Vec<&str> {
    events.iter().map(Event::type_name).collect()
}

fn update(update: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}})
}

fn prompt(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "go"}]}})
}

fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn chunk(text: &str) -> Value {
    update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}))
}

fn ended(events: &[Event]) -> Vec<&crate::event::ToolEnded> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            Body::ToolEnded(t) => Some(t),
            _ => None,
        })
        .collect()
}

#[test]
fn with_stdout_alone_updates_open_the_turn_and_the_stop_reason_ends_it() {
    let ev = run(&[
        result(json!(0), json!({"protocolVersion": 1, "agentInfo": {"name": "codex-acp", "version": "0.16.0"}})),
        result(json!(1), json!({"sessionId": "s"})),
        update(json!({"sessionUpdate": "available_commands_update", "availableCommands": []})),
        chunk("hi"),
        result(json!(2), json!({"stopReason": "end_turn"})),
        update(json!({"sessionUpdate": "available_commands_update", "availableCommands": []})),
    ]);
    assert_eq!(types(&ev), ["session.started", "turn.started", "text", "turn.completed", "summary"]);
    assert!(
        matches!(&ev[0].body, Body::SessionStarted(s) if s.provider == "codex-acp" && s.provider_version.as_deref() == Some("0.16.0"))
    );
    assert_eq!(ev[1].raw_ref.line, 3, "the silent lines before the turn are referenced by it");
    assert_eq!(ev[4].raw_ref.line, 6, "the summary references the trailing update");
}

#[test]
fn a_rejected_permission_makes_the_tool_denied() {
    let ev = run(&[
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        result(
            json!(0),
            json!({"protocolVersion": 1, "agentInfo": {"name": "@zed-industries/claude-code-acp", "version": "0.16.2"}}),
        ),
        prompt(2),
        update(
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "kind": "execute", "status": "pending", "rawInput": {"command": "touch x"}}),
        ),
        json!({"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": {"sessionId": "s",
            "toolCall": {"toolCallId": "t1"},
            "options": [{"optionId": "allow", "kind": "allow_once"}, {"optionId": "reject", "kind": "reject_once"}]}}),
        result(json!(0), json!({"outcome": {"outcome": "selected", "optionId": "reject"}})),
        update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "failed", "rawOutput": "User refused permission to run tool"}),
        ),
        result(json!(2), json!({"stopReason": "end_turn"})),
    ]);
    let settled = ev.iter().find_map(|e| match &e.body {
        Body::ApprovalSettled(a) => Some(a),
        _ => None,
    });
    assert_eq!(settled.and_then(|a| a.decision), Some(Decision::RejectOnce));
    assert_eq!(
        types(&ev).iter().filter(|t| t.starts_with("tool.")).collect::<Vec<_>>(),
        [&"tool.started", &"tool.denied"]
    );
}

#[test]
fn with_stdout_alone_claude_refusal_text_denies_and_the_approval_settles_unknown() {
    let ev = run(&[
        prompt(2),
        update(
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "kind": "execute", "rawInput": {"command": "touch x"},
            "_meta": {"claudeCode": {"toolName": "Bash"}}}),
        ),
        json!({"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": {"sessionId": "s", "toolCall": {"toolCallId": "t1"}, "options": []}}),
        update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "failed", "rawOutput": "User refused permission to run tool"}),
        ),
        result(json!(2), json!({"stopReason": "end_turn"})),
    ]);
    assert!(types(&ev).contains(&"tool.denied"));
    assert!(ev.iter().any(|e| matches!(&e.body, Body::ApprovalSettled(a) if a.decision == Some(Decision::Unknown))));
}

#[test]
fn a_call_announced_twice_starts_once_with_the_second_announcements_input() {
    let claude = json!({"claudeCode": {"toolName": "Bash"}});
    let ev = run(&[
        prompt(2),
        update(
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Terminal", "kind": "execute", "status": "pending", "rawInput": {}, "_meta": claude}),
        ),
        update(
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "`ls`", "kind": "execute", "status": "pending", "rawInput": {"command": "ls"}, "_meta": claude}),
        ),
        update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "rawOutput": "a\n"}),
        ),
        result(json!(2), json!({"stopReason": "end_turn"})),
    ]);
    let started: Vec<&Event> = ev.iter().filter(|e| e.type_name() == "tool.started").collect();
    assert_eq!(started.len(), 1);
    assert!(matches!(&started[0].body, Body::ToolStarted(s) if s.command.as_deref() == Some("ls") && s.name == "Bash"));
    assert_eq!((started[0].raw_ref.line, started[0].raw_ref.end_line), (2, Some(3)));
}

#[test]
fn a_held_announcement_is_released_by_any_other_line_and_at_the_end() {
    let ev = run(&[
        prompt(2),
        update(json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Analyzing", "kind": "other"})),
        chunk("x"),
    ]);
    assert_eq!(types(&ev)[..4], ["session.started", "turn.started", "tool.started", "text"]);
    let ev = run(&[
        prompt(2),
        update(json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Analyzing", "kind": "other"})),
    ]);
    assert!(types(&ev).contains(&"tool.started") && types(&ev).contains(&"tool.interrupted"));
}

#[test]
fn a_late_terminal_update_changes_no_turn() {
    let call = update(
        json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "kind": "execute", "status": "in_progress", "rawInput": {"command": "ls"}}),
    );
    let done = update(
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "rawOutput": {"output": "x\n", "metadata": {"exit": 0}}}),
    );
    let ev = run(&[prompt(1), call, done.clone(), result(json!(1), json!({"stopReason": "end_turn"})), done]);
    assert_eq!(types(&ev).iter().filter(|t| t.starts_with("turn.")).count(), 2);
    assert_eq!(ended(&ev).len(), 1);
    assert!(ev.last().is_some_and(|s| s.status == Some(Status::Completed)));
}

#[test]
fn errors_fail_the_turn_or_the_run_with_their_category() {
    let ev = run(&[
        prompt(2),
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "Internal error",
            "data": {"message": "We're currently experiencing high demand"}}}),
    ]);
    let Body::TurnEnded(t) = &ev[2].body else { panic!("{:?}", types(&ev)) };
    let e = t.error.as_ref().unwrap();
    assert_eq!((t.outcome, &e.category), (Outcome::Failed, &ErrorCategory::ProviderError));
    assert_eq!(e.message, "Internal error: We're currently experiencing high demand");

    let ev = run(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "Authentication required"}}),
    ]);
    let Body::Summary(s) = &ev.last().unwrap().body else { panic!() };
    assert_eq!(s.error.as_ref().map(|e| &e.category), Some(&ErrorCategory::ConfigurationError));
}

#[test]
fn stop_reasons_have_their_outcomes() {
    assert_eq!(stop_outcome("end_turn").0, Outcome::Completed);
    assert_eq!(stop_outcome("cancelled").0, Outcome::Cancelled);
    for (reason, category) in [
        ("max_tokens", ErrorCategory::BudgetExceeded),
        ("max_turn_requests", ErrorCategory::MaxTurns),
        ("refusal", ErrorCategory::Refused),
    ] {
        let (outcome, error) = stop_outcome(reason);
        assert_eq!((outcome, error.map(|e| e.category)), (Outcome::Failed, Some(category)));
    }
}

#[test]
fn a_terminal_the_client_runs_reports_output_and_exit_through_its_responses() {
    let ev = run(&[
        prompt(1),
        update(json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "kind": "execute", "status": "in_progress",
            "rawInput": {"command": "npm test"}, "content": [{"type": "terminal", "terminalId": "term"}]})),
        json!({"jsonrpc": "2.0", "id": 6, "method": "terminal/output", "params": {"sessionId": "s", "terminalId": "term"}}),
        result(json!(6), json!({"output": "ok\n", "truncated": false, "exitStatus": {"exitCode": 3}})),
        update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"})),
        result(json!(1), json!({"stopReason": "end_turn"})),
    ]);
    let t = ended(&ev)[0];
    assert_eq!(t.outcome, Outcome::Failed);
    let out = t.output.as_ref().unwrap();
    assert_eq!((out.exit_code, out.stdout.as_deref()), (Some(3), Some("ok\n")));
}

#[test]
fn unknown_methods_and_update_kinds_are_kept_raw_and_chatter_is_silent() {
    let ev = run(&[
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "_vendor/ping", "params": {}}),
        update(json!({"sessionUpdate": "hologram"})),
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}),
    ]);
    let raws: Vec<(u64, &str)> = ev
        .iter()
        .filter_map(|e| match &e.body {
            Body::Raw(r) => Some((e.raw_ref.line, r.line.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(raws.len(), 2);
    assert_eq!(raws[0].0, 1, "the initialize request is referenced by the next event");
}

#[test]
fn a_completed_edit_reports_its_files_and_a_rejected_one_does_not() {
    let edit = |id: &str| {
        update(json!({"sessionUpdate": "tool_call", "toolCallId": id, "kind": "edit", "status": "in_progress",
            "content": [{"type": "diff", "path": "/w/hello.txt", "newText": "hi\n"}]}))
    };
    let ev = run(&[
        prompt(1),
        edit("e1"),
        update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "e1", "status": "completed"})),
        edit("e2"),
        result(json!(1), json!({"stopReason": "cancelled"})),
    ]);
    let changed: Vec<&Event> = ev.iter().filter(|e| e.type_name() == "file.changed").collect();
    assert_eq!(changed.len(), 1);
    assert!(
        matches!(&changed[0].body, Body::FileChanged(f) if f.path == "/w/hello.txt" && f.change == crate::event::FileChange::Add)
    );
    assert_eq!(types(&ev).iter().filter(|t| **t == "tool.cancelled").count(), 1);
}

#[test]
fn an_error_from_the_agent_is_not_taken_for_an_answer_to_its_own_request() {
    // Agent stdout alone: the agent's permission request and the client's prompt share id 2.
    let ev = run(&[
        update(
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "kind": "edit", "status": "pending", "rawInput": {"path": "/a"}}),
        ),
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/request_permission", "params": {"sessionId": "s", "toolCall": {"toolCallId": "t1"}, "options": []}}),
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "Internal error: API Error: 500"}}),
    ]);
    assert!(
        ev.iter().any(|e| matches!(&e.body, Body::TurnEnded(t) if t.outcome == Outcome::Failed)),
        "{:?}",
        types(&ev)
    );
}

#[test]
fn a_clients_answers_are_known_by_their_shape_without_its_requests() {
    let ev = run(&[
        update(json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "kind": "execute", "status": "in_progress",
            "content": [{"type": "terminal", "terminalId": "term"}]})),
        json!({"jsonrpc": "2.0", "id": 6, "method": "terminal/output", "params": {"sessionId": "s", "terminalId": "term"}}),
        result(json!(6), json!({"output": "ok\n", "truncated": true})),
        json!({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {"sessionId": "s", "toolCall": {"toolCallId": "t1"},
            "options": [{"optionId": "yes", "kind": "allow_always"}]}}),
        result(json!(7), json!({"outcome": {"outcome": "selected", "optionId": "yes"}})),
    ]);
    assert!(ev
        .iter()
        .any(|e| matches!(&e.body, Body::ApprovalSettled(a) if a.decision == Some(Decision::AllowAlways))));
    let out = ended(&ev)[0].output.as_ref().unwrap();
    assert_eq!((out.stdout.as_deref(), out.truncated), (Some("ok\n"), true));
}
