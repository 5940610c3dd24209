//! `normalize` over ACP traffic: golden outputs for every ACP capture (the transcript of
//! both directions and the agent's stdout alone) and the seed's shell scenarios, and
//! assertions on what those scenarios are about.

use serde_json::Value;

use crate::support::*;

#[test]
fn golden_acp() {
    golden_dir("acp", &[]);
}

/// The canonical events of a fixture.
fn events(case: &str) -> Vec<Value> {
    json_lines(&run("normalize", &[], &read(&format!("acp/{case}.input.jsonl"))))
}

/// The terminal events of tool calls.
fn tool_ends(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| {
            e["type"].as_str().is_some_and(|t| t.starts_with("tool.") && !matches!(t, "tool.started" | "tool.output"))
        })
        .collect()
}

fn summary(events: &[Value]) -> &Value {
    let last = events.last().expect("a summary");
    assert_eq!(last["type"], "summary");
    last
}

#[test]
fn codex_deltas_then_formatted_output_give_each_line_once_and_exit_4() {
    let ev = events("seed-codex-deltas-exit4");
    let ends = tool_ends(&ev);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0]["type"], "tool.failed");
    assert_eq!(ends[0]["payload"]["output"]["exit_code"], 4);
    assert_eq!(ends[0]["payload"]["output"]["stdout"], "alpha\nbeta\n");
    let live: Vec<&str> =
        ev.iter().filter(|e| e["type"] == "tool.output").filter_map(|e| e["payload"]["delta"].as_str()).collect();
    assert_eq!(live, ["alpha\n", "beta\n"], "output appears while the command runs");
}

#[test]
fn opencode_cumulative_content_is_not_duplicated_and_exit_7_fails_a_completed_call() {
    let ev = events("seed-opencode-cumulative-exit7");
    let end = tool_ends(&ev)[0];
    assert_eq!((end["type"].as_str(), end["payload"]["output"]["exit_code"].as_i64()), (Some("tool.failed"), Some(7)));
    assert_eq!(end["payload"]["output"]["stdout"], "one\ntwo\n");
}

#[test]
fn auggie_tags_are_removed_and_return_code_0_is_success() {
    let ev = events("seed-auggie-return-code-0");
    let out = &tool_ends(&ev)[0]["payload"]["output"];
    assert_eq!((out["exit_code"].as_i64(), out["stdout"].as_str()), (Some(0), Some("ok\n")));
    assert!(out.get("stderr").is_none(), "an empty <stderr> is no stderr");
}

#[test]
fn omp_command_echo_is_removed_and_the_real_output_kept() {
    let ev = events("seed-omp-command-echo");
    let end = tool_ends(&ev)[0];
    assert_eq!(end["payload"]["output"]["stdout"], "On branch main\nnothing to commit\n");
    assert!(end["payload"]["output"].get("exit_code").is_none());
}

#[test]
fn unknown_and_cancelled_exits_stay_unknown() {
    for (case, kind) in [("seed-no-exit-is-unknown", "tool.completed"), ("seed-cancelled-no-exit", "tool.cancelled")] {
        let ev = events(case);
        let end = tool_ends(&ev)[0];
        assert_eq!(end["type"], kind, "{case}");
        assert!(end["payload"]["output"].get("exit_code").is_none(), "{case}: an absent exit is never 0");
    }
}

#[test]
fn a_late_update_after_the_turn_adds_no_terminal_and_no_turn() {
    let ev = events("seed-late-update-after-turn");
    assert_eq!(tool_ends(&ev).len(), 1);
    assert_eq!(ev.iter().filter(|e| e["type"] == "turn.started").count(), 1);
    assert_eq!(summary(&ev)["ok"], true);
}

#[test]
fn real_adapters_report_exit_4_with_both_lines_in_transcript_and_stdout() {
    for case in [
        "claude-code-acp-exit4",
        "claude-code-acp-exit4@stdout",
        "codex-acp-exit4",
        "codex-acp-exit4@stdout",
        "claude-agent-acp-0.101.0-exit4",
        "claude-agent-acp-0.101.0-exit4@stdout",
    ] {
        let ev = events(case);
        let ends = tool_ends(&ev);
        assert_eq!(ends.len(), 1, "{case}");
        assert_eq!(ends[0]["type"], "tool.failed", "{case}");
        assert_eq!(ends[0]["payload"]["output"]["exit_code"], 4, "{case}");
        assert_eq!(ends[0]["payload"]["output"]["stdout"].as_str().map(str::trim_end), Some("line1\nline2"), "{case}");
    }
}

#[test]
fn codex_bigout_keeps_the_newest_output_not_the_shortened_formatted_output() {
    let ev = events("codex-acp-bigout");
    let out = &tool_ends(&ev)[0]["payload"]["output"];
    assert_eq!(out["truncated"], true);
    let stdout = out["stdout"].as_str().unwrap();
    assert!(stdout.len() <= 256 * 1024 && stdout.ends_with("standard output: Broken pipe\n"));
    assert!(!stdout.contains("tokens truncated"), "Codex's model-facing preview does not replace the real output");
}

#[test]
fn permission_answers_settle_approvals_and_a_rejection_denies_the_call() {
    let ev = events("claude-code-acp-deny");
    let settled: Vec<&Value> = ev.iter().filter(|e| e["type"] == "approval.settled").collect();
    assert_eq!(settled.len(), 1);
    assert_eq!(settled[0]["payload"]["decision"], "reject_once");
    assert_eq!(tool_ends(&ev)[0]["type"], "tool.denied");
    let ev = events("codex-acp-deny-write");
    assert_eq!(tool_ends(&ev)[0]["type"], "tool.denied");
    assert!(ev.iter().any(|e| e["type"] == "turn.cancelled"));
    assert!(!ev.iter().any(|e| e["type"] == "file.changed"), "a refused edit changes no file");
}

#[test]
fn completed_edits_report_their_files() {
    for case in ["claude-code-acp-write", "codex-acp-write@stdout"] {
        let ev = events(case);
        let changes: Vec<(&str, &str)> = ev
            .iter()
            .filter(|e| e["type"] == "file.changed")
            .map(|e| (e["payload"]["path"].as_str().unwrap(), e["payload"]["change"].as_str().unwrap()))
            .collect();
        assert_eq!(changes.len(), 2, "{case}");
        assert!(changes[0].0.ends_with("/hello.txt") && changes[0].1 == "add", "{case}");
        assert_eq!(changes[1].1, "update", "{case}");
    }
}

#[test]
fn the_agent_and_session_come_from_initialize_and_session_new() {
    let ev = events("codex-acp-text");
    let started = &ev[0];
    assert_eq!(started["type"], "session.started");
    assert_eq!(started["sessionId"], "01a22932-e336-76a0-83ba-59543a27d1ad");
    assert_eq!(started["payload"]["provider"], "codex-acp");
    assert_eq!(started["payload"]["providerVersion"], "0.16.0");
    assert_eq!(started["rawRef"]["line"], 1, "the initialize request and response are referenced by the session");
}

#[test]
fn errors_fail_the_turn_or_the_run_with_their_category() {
    for case in ["claude-code-acp-err400", "codex-acp-err500"] {
        let ev = events(case);
        assert!(ev.iter().any(|e| e["type"] == "turn.failed"), "{case}");
        assert_eq!(summary(&ev)["error"]["category"], "PROVIDER_ERROR", "{case}");
    }
    for case in ["auggie-offline-acp", "auggie-offline-acp@stdout"] {
        let ev = events(case);
        assert_eq!(summary(&ev)["error"]["category"], "CONFIGURATION_ERROR", "{case}");
        assert_eq!(ev[0]["payload"]["provider"], "auggie", "{case}");
    }
}

#[test]
fn from_acp_reads_auggie_and_acp_alike() {
    let input = read("acp/claude-code-acp-exit4.input.jsonl");
    let auto = run("normalize", &[], &input);
    assert_eq!(run("normalize", &["--from", "acp"], &input), auto);
    assert_eq!(run("normalize", &["--from", "auggie"], &input), auto);
}

/// Both inputs of a capture: the transcript and the agent's stdout alone.
fn both(case: &str) -> [String; 2] {
    [case.to_owned(), format!("{case}@stdout")]
}

#[test]
fn claude_agent_acp_output_is_its_snapshot_once_and_the_call_starts_with_its_command() {
    for case in both("claude-agent-acp-0.101.0-deny") {
        let ev = events(&case);
        let end = tool_ends(&ev)[0];
        assert_eq!(
            (end["type"].as_str(), end["payload"]["output"]["stdout"].as_str()),
            (Some("tool.completed"), Some("should-not-run")),
            "{case}"
        );
        let started = only(&ev, "tool.started");
        assert_eq!(started["payload"]["command"], "touch denied.txt && echo should-not-run", "{case}");
    }
}

#[test]
fn claude_agent_acp_exit_code_line_is_metadata() {
    for case in both("claude-agent-acp-0.101.0-exit4") {
        let ev = events(&case);
        let live: Vec<&str> =
            of_type(&ev, "tool.output").iter().filter_map(|e| e["payload"]["delta"].as_str()).collect();
        assert_eq!(live, ["line1\nline2"], "{case}: no `Exit code 4` line in the live output either");
    }
}

#[test]
fn claude_agent_acp_cancel_is_cancelled_and_its_refused_sleep_is_not() {
    for case in both("claude-agent-acp-0.101.0-cancelwait") {
        let ev = events(&case);
        assert_eq!(tool_ends(&ev)[0]["type"], "tool.cancelled", "{case}");
        assert_eq!(summary(&ev)["status"], "cancelled", "{case}");
    }
    for case in both("claude-agent-acp-0.101.0-cancel") {
        // Claude Code refused `sleep 30; …` as a bad tool use before running it: no
        // permission decided it, and nothing was cancelled.
        assert_eq!(tool_ends(&events(&case))[0]["type"], "tool.failed", "{case}");
    }
}

#[test]
fn claude_agent_acp_child_tools_carry_their_parent() {
    for case in both("claude-agent-acp-0.101.0-subagent") {
        let ev = events(&case);
        let started = of_type(&ev, "tool.started");
        let agent = started[0]["payload"]["toolCallId"].as_str().unwrap();
        assert_eq!(started[0]["payload"]["kind"], "agent", "{case}");
        assert!(started[0].get("parentId").is_none(), "{case}");
        assert_eq!(started[1]["parentId"], agent, "{case}: the child's Bash is not a root tool");
        assert!(tool_ends(&ev).iter().filter(|e| e.get("parentId").is_some()).count() == 1, "{case}");
    }
}

#[test]
fn new_adapters_leave_nothing_raw_and_report_usage_and_cost() {
    for agent in ["claude-agent-acp-0.101.0", "codex-acp-2.6.0"] {
        for scenario in ["text", "exit4", "write", "cancel"] {
            for case in both(&format!("{agent}-{scenario}")) {
                let ev = events(&case);
                let s = summary(&ev);
                assert_eq!(s["payload"]["input"]["raw"], 0, "{case}: `_auth/status_update` and the rest are read");
                assert!(s["payload"]["usage"]["input_tokens"].as_u64().is_some_and(|n| n > 0), "{case}");
                let cost = s["payload"]["usage"].get("cost_usd");
                assert_eq!(cost.is_some(), agent.starts_with("claude"), "{case}: Claude's adapter states a cost");
            }
        }
    }
}

#[test]
fn codex_acp_system_error_fails_the_run_with_the_providers_message() {
    for case in both("codex-acp-2.6.0-err500") {
        let ev = events(&case);
        let failed = only(&ev, "turn.failed");
        assert_eq!(failed["payload"]["stopReason"], "end_turn", "{case}");
        let s = summary(&ev);
        assert_eq!(
            (s["ok"].as_bool(), s["error"]["category"].as_str()),
            (Some(false), Some("PROVIDER_ERROR")),
            "{case}"
        );
        assert_eq!(
            s["error"]["message"], "We\u{2019}re currently experiencing high demand, which may cause temporary errors.",
            "{case}"
        );
    }
}

#[test]
fn an_agents_questions_are_approvals_of_kind_question_settled_by_their_answers() {
    let ev = events("constructed-elicitation");
    let settled: Vec<(&str, &str)> = of_type(&ev, "approval.settled")
        .iter()
        .map(|e| (e["payload"]["kind"].as_str().unwrap(), e["payload"]["decision"].as_str().unwrap()))
        .collect();
    assert_eq!(settled, [("question", "answered"), ("question", "declined"), ("question", "cancelled")]);
    let asked = of_type(&ev, "approval.requested");
    assert_eq!(asked[0]["payload"]["toolCallId"], "call_1", "a question of a tool call names it");
    assert_eq!(summary(&ev)["ok"], true, "a declined question fails nothing");
    let ev = events("constructed-elicitation@stdout");
    let decisions: Vec<&str> =
        of_type(&ev, "approval.settled").iter().map(|e| e["payload"]["decision"].as_str().unwrap()).collect();
    assert_eq!(decisions, ["unknown"; 3], "the client's answers are not on the agent's stdout");
}

#[test]
fn the_constructed_questions_are_valid_acp() {
    let schema: Value = serde_json::from_slice(&read("acp-schema/schema.json")).unwrap();
    let def = |name: &str| {
        jsonschema::validator_for(&serde_json::json!({"$ref": format!("#/$defs/{name}"), "$defs": schema["$defs"]}))
            .unwrap()
    };
    let (request, response) = (def("CreateElicitationRequest"), def("CreateElicitationResponse"));
    let (mut requests, mut responses) = (0, 0);
    for line in json_lines(&read("acp/constructed-elicitation.input.jsonl")) {
        if line["method"] == "elicitation/create" {
            requests += 1;
            assert!(request.is_valid(&line["params"]), "{line}");
        } else if line["result"].get("action").is_some() {
            responses += 1;
            assert!(response.is_valid(&line["result"]), "{line}");
        }
    }
    assert_eq!((requests, responses), (3, 3));
    assert!(!request.is_valid(&serde_json::json!({"sessionId": "s", "mode": "url", "message": "no url"})));
}
