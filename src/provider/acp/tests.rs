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
        ("rate_limited", ErrorCategory::ProviderError),
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
    let raws: Vec<(u64, Option<u64>)> = ev
        .iter()
        .filter_map(|e| matches!(e.body, Body::Raw(_)).then_some((e.raw_ref.line, e.raw_ref.end_line)))
        .collect();
    assert_eq!(raws, [(2, None), (3, None)], "a raw event cites its own line");
    let cites_the_first = |e: &&Event| e.raw_ref.line == 1;
    assert!(ev.iter().find(cites_the_first).is_some_and(|e| !matches!(e.body, Body::Raw(_))), "the initialize request is referenced by the next event it led to");
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

fn init(agent: &str) -> Value {
    result(json!(0), json!({"protocolVersion": 1, "agentInfo": {"name": agent, "version": "1"}}))
}

fn tool_update(id: &str, fields: Value) -> Value {
    let mut u = json!({"sessionUpdate": "tool_call_update", "toolCallId": id});
    u.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
    update(u)
}

/// A shell call as claude-agent-acp 0.101 announces it: an empty `tool_call` with
/// `terminal_info`, then the input in a `tool_call_update`.
fn claude_bash(id: &str, command: &str, meta: Value) -> [Value; 2] {
    let mut first = json!({"claudeCode": {"toolName": "Bash"}, "terminal_info": {"terminal_id": id}});
    first["claudeCode"].as_object_mut().unwrap().extend(meta.as_object().unwrap().clone());
    [
        update(json!({"sessionUpdate": "tool_call", "toolCallId": id, "rawInput": {}, "status": "pending",
            "title": "Terminal", "kind": "execute", "_meta": first})),
        tool_update(id, json!({"rawInput": {"command": command}, "title": command, "_meta": {"claudeCode": {"toolName": "Bash"}}})),
    ]
}

fn terminal_output(id: &str, data: &str) -> Value {
    tool_update(id, json!({"_meta": {"terminal_output": {"terminal_id": id, "data": data}}}))
}

fn terminal_exit(id: &str, status: &str, exit: Value, claude: Value) -> Value {
    tool_update(
        id,
        json!({"status": status, "_meta": {"claudeCode": claude, "terminal_exit": {"terminal_id": id, "exit_code": exit}}}),
    )
}

#[test]
fn claudes_terminal_output_is_a_snapshot_though_it_announces_a_terminal() {
    let [call, input] = claude_bash("t1", "echo one", json!({}));
    let ev = run(&[
        init("@agentclientprotocol/claude-agent-acp"),
        call,
        input,
        tool_update("t1", json!({"_meta": {"claudeCode": {"toolName": "Bash", "toolResponse": {"stdout": "one", "stderr": "warn"}}}})),
        terminal_output("t1", "one\nwarn"),
        terminal_exit("t1", "completed", json!(0), json!({"toolName": "Bash"})),
    ]);
    let out = ended(&ev)[0].output.as_ref().unwrap();
    assert_eq!((out.stdout.as_deref(), out.stderr.as_deref()), (Some("one"), Some("warn")));
    let started = ev.iter().find_map(|e| match &e.body {
        Body::ToolStarted(s) => Some(s),
        _ => None,
    });
    assert_eq!(started.and_then(|s| s.command.as_deref()), Some("echo one"), "the update's input starts the call");
}

#[test]
fn codex_terminal_output_is_a_delta_and_so_is_an_unknown_agents_with_a_terminal() {
    for agent in [Some("@agentclientprotocol/codex-acp"), None] {
        let mut lines: Vec<Value> = agent.map(init).into_iter().collect();
        lines.extend([
            update(json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "kind": "execute", "status": "in_progress",
                "rawInput": {"command": "seq 2"}, "_meta": {"terminal_info": {"terminal_id": "t1"}}})),
            terminal_output("t1", "1\n"),
            terminal_output("t1", "2\n"),
            terminal_exit("t1", "completed", json!(0), json!(null)),
        ]);
        let ev = run(&lines);
        assert_eq!(ended(&ev)[0].output.as_ref().unwrap().stdout.as_deref(), Some("1\n2\n"), "{agent:?}");
    }
}

#[test]
fn claudes_exit_code_line_is_metadata() {
    let [call, input] = claude_bash("t1", "exit 4", json!({}));
    let ev = run(&[
        init("@agentclientprotocol/claude-agent-acp"),
        call,
        input,
        terminal_output("t1", "Exit code 4\nline1\nline2"),
        // The exit the text names, with no explicit one: the text is what says it.
        terminal_exit("t1", "failed", json!(null), json!({"toolName": "Bash"})),
    ]);
    let t = ended(&ev)[0];
    let out = t.output.as_ref().unwrap();
    assert_eq!((t.outcome, out.exit_code, out.stdout.as_deref()), (Outcome::Failed, Some(4), Some("line1\nline2")));
}

#[test]
fn claudes_non_execution_kind_says_cancelled_or_denied() {
    let claude = "@agentclientprotocol/claude-agent-acp";
    let ends = |kind: &str, before: Vec<Value>| {
        let [call, input] = claude_bash("t1", "sleep 9", json!({}));
        let mut lines = vec![init(claude), prompt(2), call, input];
        lines.extend(before);
        lines.push(terminal_exit("t1", "failed", json!(null), json!({"toolName": "Bash", "nonExecutionKind": kind})));
        ended(&run(&lines))[0].outcome
    };
    let cancel = json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}});
    let ask = json!({"jsonrpc": "2.0", "id": 5, "method": "session/request_permission",
        "params": {"sessionId": "s", "toolCall": {"toolCallId": "t1"}, "options": [{"optionId": "no", "kind": "reject_once"}]}});
    // The CLI stamps a command an interrupt killed `user-rejected`: no prompt refused it.
    assert_eq!(ends("user-rejected", vec![cancel.clone()]), Outcome::Cancelled);
    assert_eq!(ends("user-rejected", vec![]), Outcome::Cancelled);
    // A permission request the input never answers (the agent's stdout alone) was refused.
    assert_eq!(ends("user-rejected", vec![ask.clone()]), Outcome::Denied);
    assert_eq!(ends("user-rejected", vec![ask, cancel]), Outcome::Cancelled);
    assert_eq!(ends("permission-rule", vec![]), Outcome::Denied);
    assert_eq!(ends("automode-classifier", vec![]), Outcome::Denied);
    assert_eq!(ends("interrupted", vec![]), Outcome::Cancelled);
    assert_eq!(ends("something-new", vec![]), Outcome::Failed, "an unknown kind is not guessed");
}

#[test]
fn a_denial_claudes_adapter_reports_with_its_reason_type_is_tool_denied() {
    let ev = run(&[
        init("@agentclientprotocol/claude-agent-acp"),
        update(json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "kind": "edit", "status": "pending",
            "rawInput": {"file_path": "/w/a"}, "_meta": {"claudeCode": {"toolName": "Write"}}})),
        tool_update("t1", json!({"status": "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": "Permission denied: rule Write(/w/**)"}}],
            "_meta": {"claudeCode": {"toolName": "Write", "toolResponse": {"decisionReasonType": "rule"}}}})),
    ]);
    assert_eq!(ended(&ev)[0].outcome, Outcome::Denied);
}

#[test]
fn child_tools_and_text_carry_their_parent() {
    let ev = run(&[
        prompt(1),
        update(json!({"sessionUpdate": "tool_call", "toolCallId": "agent", "kind": "think", "status": "pending",
            "rawInput": {"prompt": "go"}, "_meta": {"claudeCode": {"toolName": "Agent"}}})),
        update(json!({"sessionUpdate": "tool_call", "toolCallId": "child", "kind": "execute", "status": "pending",
            "rawInput": {"command": "ls"}, "_meta": {"claudeCode": {"toolName": "Bash", "parentToolUseId": "agent"}}})),
        update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "child says"},
            "_meta": {"claudeCode": {"parentToolUseId": "agent"}}})),
        tool_update("child", json!({"status": "completed", "_meta": {"claudeCode": {"parentToolUseId": "agent"}}})),
    ]);
    let parent_of = |ty: &str| {
        ev.iter().filter(|e| e.type_name() == ty).map(|e| e.parent_id.as_deref()).collect::<Vec<_>>()
    };
    assert_eq!(parent_of("tool.started"), [None, Some("agent")]);
    assert_eq!(parent_of("text"), [Some("agent")]);
    assert_eq!(parent_of("tool.completed"), [Some("agent")]);
}

#[test]
fn auth_status_is_quiet_unless_the_agent_is_logged_out() {
    let status = |kind: &str| {
        json!({"jsonrpc": "2.0", "method": "_auth/status_update", "params": {"authStatus": {"kind": kind, "label": "Claude"}}})
    };
    let ev = run(&[status("api_key"), result(json!(1), json!({"sessionId": "s"}))]);
    assert_eq!(types(&ev), ["session.started", "summary"]);
    let ev = run(&[status("none"), result(json!(1), json!({"sessionId": "s"})), chunk("hi")]);
    assert_eq!(types(&ev)[..2], ["session.started", "warning"]);
    let Body::Warning(w) = &ev[1].body else { unreachable!() };
    assert_eq!(
        (w.message.as_str(), w.category.as_deref()),
        ("the agent reports that it is not logged in (Claude)", Some("CONFIGURATION_ERROR"))
    );
    assert_eq!(ev[0].session_id, ev[1].session_id, "no session of its own");
}

#[test]
fn a_codex_system_error_fails_the_turn_that_ends_end_turn() {
    let status = |kind: &str| {
        update(json!({"sessionUpdate": "session_info_update", "_meta": {"codex": {"threadStatus": {"type": kind}}}}))
    };
    let ev = run(&[
        init("@agentclientprotocol/codex-acp"),
        prompt(2),
        status("active"),
        status("systemError"),
        chunk("We're currently experiencing high demand.\n\n"),
        result(json!(2), json!({"stopReason": "end_turn", "usage": null})),
        prompt(3),
        chunk("fine"),
        result(json!(3), json!({"stopReason": "end_turn"})),
    ]);
    let turns: Vec<&crate::event::TurnEnded> = ev
        .iter()
        .filter_map(|e| match &e.body {
            Body::TurnEnded(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(turns.len(), 2);
    let e = turns[0].error.as_ref().unwrap();
    assert_eq!(
        (turns[0].outcome, &e.category, e.message.as_str()),
        (Outcome::Failed, &ErrorCategory::ProviderError, "We're currently experiencing high demand.")
    );
    assert_eq!(turns[1].outcome, Outcome::Completed, "the next turn starts clean");
    let ev = run(&[prompt(2), status("systemError"), status("active"), result(json!(2), json!({"stopReason": "end_turn"}))]);
    assert!(ev.last().is_some_and(|s| s.status == Some(Status::Completed)), "a retry that recovered");
}

#[test]
fn a_question_is_an_approval_of_kind_question_its_answer_settles() {
    let ask = |id: u64, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params});
    let ev = run(&[
        prompt(2),
        ask(2, json!({"sessionId": "s", "mode": "form", "message": "Which env?", "requestedSchema": {"type": "object"}})),
        result(json!(2), json!({"action": "accept", "content": {"env": "staging"}})),
        ask(3, json!({"sessionId": "s", "mode": "url", "elicitationId": "e", "url": "https://x.test/a", "message": "Sign in"})),
        result(json!(3), json!({"action": "decline"})),
        ask(4, json!({"sessionId": "s", "toolCallId": "t9", "mode": "form", "message": "Go on?", "requestedSchema": {}})),
        result(json!(2), json!({"stopReason": "end_turn"})),
    ]);
    let approvals: Vec<&crate::event::Approval> = ev
        .iter()
        .filter_map(|e| match &e.body {
            Body::ApprovalRequested(a) | Body::ApprovalSettled(a) => Some(a),
            _ => None,
        })
        .collect();
    let approvals: Vec<_> =
        approvals.iter().map(|a| (a.approval_id.as_str(), a.kind, a.title.as_deref(), a.decision)).collect();
    let q = Some(crate::event::ApprovalKind::Question);
    assert_eq!(
        approvals,
        [
            ("2", q, Some("Which env?"), None),
            ("2", q, None, Some(Decision::Answered)),
            ("3", q, Some("Sign in (https://x.test/a)"), None),
            ("3", q, None, Some(Decision::Declined)),
            ("4", q, Some("Go on?"), None),
            ("4", q, None, Some(Decision::Unknown)),
        ]
    );
    assert_eq!(types(&ev).iter().filter(|t| t.starts_with("turn.")).count(), 2, "one turn: the prompt's");
}

#[test]
fn prompt_usage_leaves_the_cache_out_of_input_tokens_and_adds_the_turns_cost() {
    let ev = run(&[
        prompt(2),
        update(json!({"sessionUpdate": "usage_update", "used": 9, "size": 100, "cost": {"amount": 0.5, "currency": "USD"}})),
        result(json!(2), json!({"stopReason": "end_turn", "usage": {"totalTokens": 180, "inputTokens": 160,
            "outputTokens": 20, "cachedReadTokens": 50, "cachedWriteTokens": 10}})),
    ]);
    let usage = ev.iter().find_map(|e| match &e.body {
        Body::Usage(u) => Some(*u),
        _ => None,
    });
    let u = usage.expect("a usage event");
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cache_read, u.cache_write, u.cost_usd),
        (Some(100), Some(20), Some(50), Some(10), Some(0.5))
    );
}

#[test]
fn a_notice_claudes_adapter_folds_into_text_is_a_warning() {
    let ev = run(&[
        prompt(2),
        update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "**Warning:** slow gateway"},
            "_meta": {"claudeCode": {"kind": "informational", "level": "warning"}}})),
    ]);
    assert!(ev.iter().any(|e| matches!(&e.body, Body::Warning(w) if w.message == "slow gateway")));
    assert!(!types(&ev).contains(&"text"));
}
