//! `normalize` on the session files Codex, Copilot CLI, droid and Gemini CLI write to disk:
//! golden outputs of each recorded run's files (`fixtures/sessions/<cli>-<version>/<run>/home/…`),
//! and the readings that matter checked one by one against the same run's live stream.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::*;

/// The session files of a recorded run (`<cli>/<run>`): its home's `*.jsonl` files.
fn session_files(run: &str) -> Vec<PathBuf> {
    let files: Vec<PathBuf> =
        files_under(&fixture(&format!("sessions/{run}/home")), &[".jsonl"]).into_iter().map(PathBuf::from).collect();
    assert!(!files.is_empty(), "no session files in fixtures/sessions/{run}/home");
    files
}

/// `normalize` over a run's session files, named relative to its home (so provenance does not
/// depend on where the repository is).
fn normalize_sessions(run: &str, args: &[&str]) -> Vec<u8> {
    let home = fixture(&format!("sessions/{run}/home"));
    bin("normalize").current_dir(&home).args(args).args(session_files(run)).output().expect("runs").stdout
}

/// The runs recorded for `cli` (`codex-0.171.0`), sorted.
fn runs(cli: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixture(&format!("sessions/{cli}")))
        .unwrap()
        .filter_map(|e| e.ok().filter(|e| e.path().is_dir())?.file_name().into_string().ok())
        .map(|n| format!("{cli}/{n}"))
        .collect();
    v.sort();
    v
}

/// Checks `normalize` over each run's session files against `<run>.events.jsonl`.
fn golden_sessions(cli: &str) {
    let failures: Vec<String> = runs(cli)
        .iter()
        .filter_map(|run| golden(&format!("sessions/{run}.events.jsonl"), &normalize_sessions(run, &[])).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn golden_codex_rollouts() {
    golden_sessions("codex-0.171.0");
}

#[test]
fn golden_copilot_sessions() {
    golden_sessions("copilot-1.0.102");
}

#[test]
fn golden_droid_sessions() {
    golden_sessions("droid-0.225.2");
}

#[test]
fn golden_gemini_sessions() {
    golden_sessions("gemini-cli-0.61.0");
}

/// The events of a run's session files, and of its live stream (every `stdout*.jsonl`, in
/// order, as one input).
fn both(name: &str) -> (Vec<Value>, Vec<Value>) {
    let file = json_lines(&normalize_sessions(name, &[]));
    let dir = fixture(&format!("sessions/{name}"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("stdout") && n.ends_with(".jsonl"))
        .collect();
    names.sort_by_key(|n| (n != "stdout.jsonl", n.clone()));
    let input: Vec<u8> = names.iter().flat_map(|n| std::fs::read(dir.join(n)).unwrap()).collect();
    (file, json_lines(&run("normalize", &[], &input)))
}

/// What a reader of a run must agree on: the turns and their outcomes, each tool's kind,
/// outcome and exit code, the files changed, the final text.
fn agreed(events: &[Value]) -> Value {
    let kinds: Vec<&Value> = of_type(events, "tool.started").iter().map(|e| &e["payload"]["kind"]).collect();
    let ends: Vec<Value> = events
        .iter()
        .filter(|e| {
            e["type"].as_str().is_some_and(|t| t.starts_with("tool.") && t != "tool.started" && t != "tool.output")
        })
        .map(|e| serde_json::json!([e["type"], e["payload"]["output"]["exit_code"]]))
        .collect();
    let turns: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("turn.") && t != "turn.started"))
        .map(|e| &e["type"])
        .collect();
    // Paths only: a Gemini CLI session says whether a write created its file, the stream not.
    let files: Vec<&Value> = of_type(events, "file.changed").iter().map(|e| &e["payload"]["path"]).collect();
    let text: String = of_type(events, "text")
        .iter()
        .filter(|e| e["payload"]["role"] == "assistant")
        .map(|e| e["payload"]["delta"].as_str().unwrap())
        .collect();
    let summary = events.last().unwrap();
    serde_json::json!({
        "turns": turns, "kinds": kinds, "ends": ends, "files": files,
        "text": text, "status": summary["status"], "ok": summary["ok"],
    })
}

/// A run's session files and its live stream agree.
fn agree(run: &str) {
    let (file, stream) = both(run);
    assert_eq!(agreed(&file), agreed(&stream), "{run}: the session files (left) and the stream (right) differ");
}

#[test]
fn codex_rollouts_agree_with_their_streams() {
    for run in runs("codex-0.171.0") {
        agree(&run);
    }
}

#[test]
fn copilot_sessions_agree_with_their_streams() {
    for run in runs("copilot-1.0.102") {
        agree(&run);
    }
}

#[test]
fn droid_sessions_agree_with_their_streams() {
    for run in runs("droid-0.225.2") {
        agree(&run);
    }
}

/// Gemini CLI's stream reports a shell call that exited 4 as a success with no exit code;
/// its session file keeps the `Exit Code: 4` the model saw. Apart from that, they agree.
#[test]
fn gemini_sessions_agree_with_their_streams_and_know_the_exit_code_the_stream_does_not() {
    for run in runs("gemini-cli-0.61.0") {
        let (file, stream) = both(&run);
        let (mut f, mut s) = (agreed(&file), agreed(&stream));
        if run.ends_with("/exit4") || run.ends_with("/resume") {
            assert_eq!(f["ends"], serde_json::json!([["tool.failed", 4]]), "{run}");
            assert_eq!(s["ends"], serde_json::json!([["tool.completed", null]]), "{run}");
            f["ends"] = Value::Null;
            s["ends"] = Value::Null;
        }
        assert_eq!(f, s, "{run}: the session file (left) and the stream (right) differ");
    }
}

#[test]
fn a_resumed_rollout_is_one_session_of_two_turns_with_each_prompt() {
    let (file, _) = both("codex-0.171.0/resume");
    let sessions = of_type(&file, "session.started");
    assert_eq!(sessions.len(), 1);
    let p = &sessions[0]["payload"];
    assert_eq!(
        (p["provider"].as_str(), p["model"].as_str(), p["providerVersion"].as_str()),
        (Some("codex"), Some("gpt-5.5"), Some("0.171.0"))
    );
    let prompts: Vec<&str> =
        of_type(&file, "turn.started").iter().map(|e| e["payload"]["prompt"].as_str().unwrap()).collect();
    assert_eq!(prompts.len(), 2);
    assert!(prompts[1].starts_with("Thanks. Now summarise"), "{prompts:?}");
    let s = file.last().unwrap();
    assert_eq!(s["payload"]["input"]["raw"], 0, "{s}");
    // Two responses in turn 1, one in turn 2: each counted once, not again from `token_count`.
    assert_eq!(s["payload"]["usage"]["input_tokens"], 29051, "{s}");
}

#[test]
fn a_rollout_keeps_the_whole_output_and_the_structured_exit_code() {
    let (file, _) = both("codex-0.171.0/exit4");
    let failed = only(&file, "tool.failed");
    assert_eq!(failed["payload"]["output"], serde_json::json!({"exit_code": 4, "stdout": "line1\nline2\n"}));
    assert_eq!(only(&file, "tool.started")["payload"]["command"], "printf 'line1\\nline2\\n'; exit 4");
}

#[test]
fn a_resumed_copilot_session_is_one_session_of_two_turns_with_the_files_own_facts() {
    let (file, _) = both("copilot-1.0.102/resume");
    let p = &only(&file, "session.started")["payload"];
    assert_eq!((p["providerVersion"].as_str(), p["model"].as_str()), (Some("1.0.102"), Some("mock-model")));
    assert_eq!(of_type(&file, "turn.completed").len(), 2);
    let s = file.last().unwrap();
    assert_eq!(s["sessionId"], "ffa1f338-b3e7-42dd-98d0-c543269fbb08");
    assert_eq!((s["payload"]["input"]["raw"].as_u64(), s["payload"]["turns"].as_u64()), (Some(0), Some(2)), "{s}");
    // Three model calls, each recorded once.
    assert_eq!(s["payload"]["usage"]["input_tokens"], 36287, "{s}");
}

#[test]
fn a_droid_session_skips_its_injected_context_and_leaves_usage_unknown() {
    let (file, _) = both("droid-0.225.2/exit4");
    let prompt = &only(&file, "turn.started")["payload"]["prompt"];
    assert_eq!(prompt, "SCENARIO_EXIT4 WORKDIR=/tmp/sess/w-droid-5edO please do the task.");
    assert_eq!(
        only(&file, "tool.failed")["payload"]["output"],
        serde_json::json!({"exit_code": 4, "stdout": "line1\nline2"})
    );
    assert!(of_type(&file, "usage").is_empty(), "the usage is in the .settings.json beside the file");
}

#[test]
fn a_gemini_session_tells_each_rewritten_record_once_and_resumes_as_a_second_turn() {
    let (file, _) = both("gemini-cli-0.61.0/resume");
    assert_eq!(of_type(&file, "session.started").len(), 1);
    assert_eq!(of_type(&file, "tool.started").len(), 1, "the model message was written twice");
    assert_eq!(of_type(&file, "turn.completed").len(), 2);
    let texts = of_type(&file, "text").len();
    assert_eq!(texts, 3, "the history repeated by `$set messages` is not told again");
    let s = file.last().unwrap();
    assert_eq!(s["payload"]["input"]["raw"], 0, "{s}");
}
