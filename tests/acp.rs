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
    for case in ["claude-code-acp-exit4", "claude-code-acp-exit4@stdout", "codex-acp-exit4", "codex-acp-exit4@stdout"] {
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
