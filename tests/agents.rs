//! Today's agents as they print today: golden outputs of each recorded version, and the
//! behaviours the recordings showed wrong before (background work, several results in one
//! run, structured denials, Qwen Code's dialect, input out of order, one meaning of usage).

use serde_json::Value;

use crate::support::*;

#[test]
fn golden_claude_code_2_1_332() {
    golden_dir("claude/2.1.332", &[]);
}

#[test]
fn golden_qwen_code_0_24_4() {
    golden_dir("qwen/0.24.4", &[]);
}

#[test]
fn golden_constructed_cases() {
    for dir in ["claude/constructed", "codex/constructed", "gemini/constructed", "opencode/constructed"] {
        golden_dir(dir, &[]);
    }
}

fn events(rel: &str) -> Vec<Value> {
    json_lines(&run("normalize", &[], &read(rel)))
}

fn summary(events: &[Value]) -> &Value {
    events.last().filter(|e| e["type"] == "summary").expect("a summary last")
}

/// The terminal event of tool call `id`.
fn end_of<'a>(events: &'a [Value], id: &str) -> &'a Value {
    events
        .iter()
        .find(|e| {
            e["payload"]["toolCallId"] == id
                && e["type"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("tool.") && t != "tool.started" && t != "tool.output")
        })
        .unwrap_or_else(|| panic!("no end of {id}"))
}

/// The last input line an event came from.
fn last_line(e: &Value) -> &Value {
    e["rawRef"].get("endLine").unwrap_or(&e["rawRef"]["line"])
}

fn position(events: &[Value], pred: impl Fn(&Value) -> bool) -> usize {
    events.iter().position(pred).expect("the event is there")
}

#[test]
fn a_background_subagent_ends_at_its_notification_and_the_woken_process_is_a_second_turn() {
    let evs = events("claude/2.1.332/subagent.input.jsonl");
    let agent = end_of(&evs, "toolu_mock_s0_0_23");
    assert_eq!(agent["type"], "tool.completed");
    // The launch receipt did not end it: the notification (line 14) did, with its summary.
    assert_eq!(last_line(agent), 14, "{agent}");
    assert!(agent["payload"]["output"]["stdout"].as_str().unwrap().starts_with("Finished scenario SUBCHILD"));
    let child = end_of(&evs, "toolu_mock_s0_0_26");
    assert_eq!(child["parentId"], "toolu_mock_s0_0_23");
    // Two init/result pairs: two turns, each ended by its own result, none interrupted.
    let turn_ends: Vec<&Value> = of_type(&evs, "turn.completed");
    assert_eq!(turn_ends.iter().map(|e| e["rawRef"]["line"].as_u64().unwrap()).collect::<Vec<_>>(), [18, 19]);
    assert!(of_type(&evs, "turn.interrupted").is_empty() && of_type(&evs, "raw").is_empty());
    // Figures: every model's tokens (the subagent's too), the cost counted once, both results' time.
    let s = summary(&evs);
    assert_eq!(s["payload"]["usage"]["input_tokens"], 52889);
    assert_eq!(s["payload"]["usage"]["output_tokens"], 60);
    assert!((s["payload"]["usage"]["cost_usd"].as_f64().unwrap() - 0.212756).abs() < 1e-9, "{s}");
    assert_eq!(s["payload"]["durationMs"], 774);
    assert_eq!(s["ok"], true);
}

#[test]
fn a_background_command_outlives_its_turn_and_takes_the_notifications_exit_code() {
    let evs = events("claude/constructed/background-bash.input.jsonl");
    let id = "toolu_011VoRXJ97YK2DUNpms3qtAy";
    let end = end_of(&evs, id);
    assert_eq!(end["type"], "tool.completed");
    assert_eq!(end["payload"]["output"]["exit_code"], 0);
    let turn_end = position(&evs, |e| e["type"] == "turn.completed");
    let tool_end = position(&evs, |e| e["payload"]["toolCallId"] == id && e["type"] == "tool.completed");
    assert!(turn_end < tool_end, "the turn ended at its result, the command later");
    assert_eq!(summary(&evs)["ok"], true);
    assert!(of_type(&evs, "raw").is_empty(), "rate_limit_event and the task lines are read");
}

#[test]
fn structured_denials_and_cancellations_of_claude_code_2_1_332() {
    let evs = events("claude/2.1.332/deny.input.jsonl");
    let end = end_of(&evs, "toolu_mock_s0_0_10");
    assert_eq!(end["type"], "tool.denied");
    assert_eq!(end["rawRef"]["line"], 4, "system/permission_denied says it first");
    assert!(end["payload"]["error"]["message"].as_str().unwrap().contains("needs approval"));
    let evs = events("claude/2.1.332/cancelwait.input.jsonl");
    assert_eq!(end_of(&evs, "toolu_mock_s0_0_1")["type"], "tool.cancelled");
    assert_eq!(only(&evs, "turn.cancelled")["type"], "turn.cancelled");
}

#[test]
fn qwen_code_is_named_and_its_results_are_read() {
    let evs = events("qwen/0.24.4/exit4.input.jsonl");
    let started = only(&evs, "session.started");
    assert_eq!(
        (&started["payload"]["provider"], &started["payload"]["providerVersion"]),
        (&"qwen-code".into(), &"0.24.4".into())
    );
    let tool = only(&evs, "tool.started");
    assert_eq!(
        (&tool["payload"]["kind"], &tool["payload"]["command"]),
        (&"shell".into(), &"printf 'line1\\nline2\\n'; exit 4".into())
    );
    let end = end_of(&evs, "call_mock_s0_0_39");
    assert_eq!(end["payload"]["output"]["exit_code"], 4);
    assert_eq!(end["payload"]["output"]["stdout"], "line1\nline2");

    let s = summary(&events("qwen/0.24.4/err400.input.jsonl")).clone();
    assert!(s["error"]["message"].as_str().unwrap().contains("400"), "{s}");
    assert_eq!(s["error"]["category"], "PROVIDER_ERROR");

    let evs = events("qwen/0.24.4/cancelwait.input.jsonl");
    assert_eq!(end_of(&evs, "call_mock_s0_0_5")["type"], "tool.cancelled");

    let evs = events("qwen/0.24.4/write.input.jsonl");
    let paths: Vec<&str> =
        of_type(&evs, "file.changed").iter().map(|e| e["payload"]["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["/tmp/drift/w-qwen-4Ppq/hello.txt", "/tmp/drift/w-qwen-4Ppq/hello.txt"]);
    assert_eq!(of_type(&evs, "file.changed")[0]["payload"]["change"], "add");

    // Its background agent ends at its notification, after the launch receipt.
    let evs = events("qwen/0.24.4/subagent.input.jsonl");
    assert_eq!(end_of(&evs, "call_mock_s0_0_59")["type"], "tool.completed");
    assert_eq!(last_line(end_of(&evs, "call_mock_s0_0_59")), 10);
}

#[test]
fn a_refused_rate_limit_fails_a_run_that_says_success_and_an_allowed_one_says_nothing() {
    let evs = events("claude/constructed/rate-limited.input.jsonl");
    let s = summary(&evs);
    assert_eq!(s["ok"], false);
    assert!(s["error"]["message"].as_str().unwrap().contains("rate limit was reached"), "{s}");
    let warnings = of_type(&evs, "warning");
    assert!(warnings.iter().any(|w| w["payload"]["message"].as_str().unwrap().contains("five-hour rate limit")));
    assert!(of_type(&evs, "raw").is_empty());
    assert_eq!(s["payload"]["input"]["unknownTypes"], 0);
}

#[test]
fn a_harness_message_is_the_systems_not_the_users() {
    let evs = events("claude/constructed/synthetic-user.input.jsonl");
    let text = evs.iter().find(|e| e["type"] == "text" && e["rawRef"]["line"] == 2).expect("the injected text");
    assert_eq!(text["payload"]["role"], "system");
    assert!(!text["visibility"].as_array().unwrap().contains(&"normal".into()));
}

#[test]
fn a_result_that_comes_before_its_call_settles_the_call() {
    let evs = events("claude/constructed/result-before-call.input.jsonl");
    let ends: Vec<&Value> = evs.iter().filter(|e| e["type"] == "tool.failed").collect();
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0]["payload"]["name"], "Bash");
    assert_eq!(ends[0]["payload"]["output"]["exit_code"], 4);
    assert_eq!(ends[0]["payload"]["output"]["stdout"], "line1\nline2");
}

#[test]
fn codex_collab_calls_are_agent_tools_and_a_late_error_opens_no_turn() {
    let evs = events("codex/constructed/collab.input.jsonl");
    let kinds: Vec<&str> =
        of_type(&evs, "tool.started").iter().map(|e| e["payload"]["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["agent", "agent"]);
    assert_eq!(end_of(&evs, "item_1")["payload"]["output"]["stdout"], "PONG");
    assert!(of_type(&evs, "raw").is_empty());

    let evs = events("codex/constructed/error-after-failed-turn.input.jsonl");
    assert_eq!(of_type(&evs, "turn.started").len(), 1);
    assert_eq!(summary(&evs)["payload"]["turns"], 1);
}

#[test]
fn plain_text_notices_of_gemini_cli_are_warnings_not_rejected_input() {
    let out = bin("normalize").write_stdin(read("gemini/constructed/notices.input.jsonl")).assert().code(0);
    let evs = json_lines(&out.get_output().stdout);
    let notices: Vec<&str> =
        of_type(&evs, "warning").iter().map(|e| e["payload"]["message"].as_str().unwrap()).collect();
    assert_eq!(notices.len(), 3, "{notices:?}");
    assert!(notices[1].starts_with("YOLO mode"));
    assert!(of_type(&evs, "raw").is_empty());
    assert_eq!(summary(&evs)["ok"], true);
    // Lines of text and no agent's events are still no agent's.
    let out = bin("normalize").write_stdin("Loaded cached credentials.\n").assert().code(1);
    assert_eq!(of_type(&json_lines(&out.get_output().stdout), "raw").len(), 1);
}

#[test]
fn an_opencode_run_without_its_last_step_finish_ended_with_its_answer() {
    let evs = events("opencode/constructed/no-final-step-finish.input.jsonl");
    assert_eq!(only(&evs, "turn.completed")["type"], "turn.completed");
    assert_eq!(summary(&evs)["ok"], true);
    assert!(of_type(&evs, "warning").iter().any(|w| w["payload"]["message"].as_str().unwrap().contains("step_finish")));
    // Cut after a tool call, before the answer: interrupted, as before.
    let whole = String::from_utf8(read("opencode/exit4.input.jsonl")).unwrap();
    let cut: String =
        whole.lines().take_while(|l| !l.contains("\"type\":\"text\"")).map(|l| format!("{l}\n")).collect();
    let evs = json_lines(&run("normalize", &[], cut.as_bytes()));
    assert_eq!(summary(&evs)["error"]["category"], "INTERRUPTED");
}

/// 1000 tokens of input of which 600 were read from the cache and 100 written to it, and 50
/// of output, as each provider reports them.
#[test]
fn the_same_tokens_give_the_same_figures_for_every_provider() {
    let claude = r#"{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.332"}
{"type":"result","subtype":"success","is_error":false,"session_id":"s","usage":{"input_tokens":300,"cache_read_input_tokens":600,"cache_creation_input_tokens":100,"output_tokens":50}}
"#;
    let qwen = r#"{"type":"system","subtype":"init","session_id":"s","qwen_code_version":"0.24.4"}
{"type":"result","subtype":"success","is_error":false,"session_id":"s","usage":{"input_tokens":900,"cache_read_input_tokens":600,"output_tokens":50}}
"#;
    let codex = r#"{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":600,"cache_write_input_tokens":100,"output_tokens":50}}
"#;
    let opencode = r#"{"type":"step_start","timestamp":1,"sessionID":"ses_a","part":{"type":"step-start"}}
{"type":"step_finish","timestamp":2,"sessionID":"ses_a","part":{"reason":"stop","type":"step-finish","tokens":{"input":300,"output":40,"reasoning":10,"cache":{"read":600,"write":100}},"cost":0}}
"#;
    let gemini = r#"{"type":"init","timestamp":"2026-12-01T00:00:00.000Z","session_id":"g","model":"m"}
{"type":"message","timestamp":"2026-12-01T00:00:00.001Z","role":"user","content":"hi"}
{"type":"result","timestamp":"2026-12-01T00:00:00.002Z","status":"success","stats":{"input_tokens":900,"input":300,"cached":600,"output_tokens":50}}
"#;
    let usage =
        |input: &str| summary(&json_lines(&run("normalize", &[], input.as_bytes())))["payload"]["usage"].clone();
    let figures = |u: &Value| (u["input_tokens"].as_u64(), u["output_tokens"].as_u64(), u["cache_read"].as_u64());
    for (name, input) in
        [("claude", claude), ("qwen", qwen), ("codex", codex), ("opencode", opencode), ("gemini", gemini)]
    {
        assert_eq!(figures(&usage(input)), (Some(300), Some(50), Some(600)), "{name}");
    }
    // Where a provider states what was written to the cache, it is apart as well.
    for (name, input) in [("claude", claude), ("codex", codex), ("opencode", opencode)] {
        assert_eq!(usage(input)["cache_write"], 100, "{name}");
    }
}

#[test]
fn a_question_to_the_user_is_an_approval_of_kind_question_settled_by_the_answer() {
    let evs = events("claude/constructed/ask-user-question.input.jsonl");
    let asked = only(&evs, "approval.requested");
    assert_eq!((&asked["payload"]["kind"], &asked["payload"]["toolCallId"]), (&"question".into(), &"toolu_q1".into()));
    assert_eq!(asked["payload"]["title"], "Which environment should I deploy to?");
    assert_eq!(only(&evs, "approval.settled")["payload"]["decision"], "answered");
    assert_eq!(end_of(&evs, "toolu_q1")["type"], "tool.completed");
}

/// Claude Code at the output token limit: it asks the model to go on three times, then gives
/// up with `api_error: max_output_tokens`, a run over its budget (not a provider failure);
/// a continuation that completes is a success. Every cut answer and every synthetic nudge
/// is kept, in order (the scrub stage may move a held tail to its role's next delta, so
/// they are compared by role, joined).
#[test]
fn the_output_token_limit_is_a_budget() {
    for case in ["maxtokens", "maxtokens-partial", "maxtokenstool"] {
        let evs = events(&format!("claude/2.1.332/{case}.input.jsonl"));
        let s = summary(&evs);
        assert_eq!((&s["ok"], &s["error"]["category"]), (&Value::Bool(false), &"BUDGET_EXCEEDED".into()), "{case}");
        assert!(s["error"]["action"].as_str().unwrap().contains("CLAUDE_CODE_MAX_OUTPUT_TOKENS"), "{case}");
    }
    let evs = events("claude/2.1.332/maxtokens.input.jsonl");
    let said = |role: &str| -> String {
        of_type(&evs, "text")
            .iter()
            .filter(|e| e["payload"]["role"] == role)
            .map(|e| e["payload"]["delta"].as_str().unwrap())
            .collect()
    };
    let nudge = "Output token limit hit. Resume directly — no apology, no recap of what you were doing. Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces.";
    assert_eq!(said("assistant"), "This answer is cut off in the mid".repeat(4));
    assert_eq!(said("system"), nudge.repeat(3));
    // A field read leniently: an object where a name was expected leaves the line readable.
    let input = String::from_utf8(read("claude/2.1.332/maxtokens.input.jsonl")).unwrap();
    let object = input
        .replace(r#""api_error":"max_output_tokens","result""#, r#""api_error":{"type":"max_output_tokens"},"result""#);
    assert_ne!(object, input);
    let evs = json_lines(&run("normalize", &[], object.as_bytes()));
    assert_eq!(summary(&evs)["error"]["category"], "BUDGET_EXCEEDED");
    assert!(of_type(&evs, "raw").is_empty());
    let once = events("claude/2.1.332/maxtokensonce.input.jsonl");
    assert_eq!(summary(&once)["payload"]["verdict"], "success");
}

/// OpenCode and Codex at the output token limit: OpenCode's step ends with `reason: length`
/// and it does not go on; Codex fails the turn naming `max_output_tokens`. Both are runs over
/// their budget, neither a success nor the provider's failure.
#[test]
fn a_cut_answer_is_a_run_over_its_budget_in_opencode_and_codex() {
    for case in ["opencode/maxtokens", "codex/maxtokens"] {
        let evs = events(&format!("{case}.input.jsonl"));
        let s = summary(&evs);
        assert_eq!((&s["ok"], &s["error"]["category"]), (&Value::Bool(false), &"BUDGET_EXCEEDED".into()), "{case}");
        assert_eq!(s["payload"]["verdict"], "failed", "{case}");
    }
}

/// An OpenCode step that ends with a finish reason other than those that say how the answer
/// ended (the AI SDK's `other` and `unknown`, or a new name) ends a run that is not ok; the
/// recorded `stop` stays a success.
#[test]
fn an_opencode_answer_with_an_unknown_finish_reason_is_not_ok() {
    let text = String::from_utf8(read("opencode/text.input.jsonl")).unwrap();
    assert_eq!(summary(&events("opencode/text.input.jsonl"))["ok"], true);
    for reason in ["other", "unknown", "pause"] {
        let input = text.replace(r#""reason":"stop""#, &format!(r#""reason":"{reason}""#));
        let evs = json_lines(&run("normalize", &[], input.as_bytes()));
        let s = summary(&evs);
        assert_eq!((&s["ok"], &s["error"]["category"]), (&Value::Bool(false), &"PROVIDER_ERROR".into()), "{reason}");
        let end = of_type(&evs, "turn.failed");
        assert_eq!(end.len(), 1, "{reason}");
        assert!(end[0]["payload"]["error"]["message"].as_str().unwrap().contains(reason), "{reason}");
    }
}

/// Qwen Code's `system/retry` lines (it asks the model again, as past an answer cut at the
/// output limit) are understood: warnings, not raw lines of a type not understood.
#[test]
fn qwen_codes_retries_are_warnings() {
    let evs = events("qwen/0.24.4/maxtokens.input.jsonl");
    assert!(of_type(&evs, "raw").is_empty(), "{:?}", of_type(&evs, "raw"));
    let asked = of_type(&evs, "warning")
        .iter()
        .filter(|w| w["payload"]["message"] == "the agent asked the model again")
        .count();
    assert_eq!(asked, 4);
}
