//! Session files against the live stream of the same run: for every recorded run under
//! `fixtures/sessions/<cli>-<version>/<scenario>/`, `normalize` over the session files the
//! CLI wrote (`home/…`, given in sorted path order) and `normalize` over its stdout stream(s)
//! must tell the same story: the turns, each root tool's kind, outcome and exit code (where
//! both know it), the files changed, the final text and the run's outcome. A reader of a new
//! session format adds its recorded runs as rows of [`RUNS`]. The session files' own outputs
//! are golden too (`session.events.jsonl` beside them; `BLESS=1` rewrites them).

use serde_json::Value;

use crate::support::*;

/// One recorded run: its folder under `fixtures/`, its stdout files in the order the CLI
/// printed them, and which files under `home/` are its session files (by how their names end).
struct Run {
    dir: &'static str,
    streams: &'static [&'static str],
    sessions: &'static [&'static str],
}

const fn run(dir: &'static str, streams: &'static [&'static str], sessions: &'static [&'static str]) -> Run {
    Run { dir, streams, sessions }
}

const ONE: &[&str] = &["stdout.jsonl"];
const RESUMED: &[&str] = &["stdout.jsonl", "stdout-turn2.jsonl"];
const JSONL: &[&str] = &[".jsonl"];

const RUNS: &[Run] = &[
    run("sessions/claude-code-2.1.332/text", ONE, JSONL),
    run("sessions/claude-code-2.1.332/exit4", ONE, JSONL),
    run("sessions/claude-code-2.1.332/write", ONE, JSONL),
    run("sessions/claude-code-2.1.332/subagent", ONE, JSONL),
    run("sessions/claude-code-2.1.332/resume", RESUMED, JSONL),
    run("sessions/qwen-code-0.24.4/text", ONE, JSONL),
    run("sessions/qwen-code-0.24.4/exit4", ONE, JSONL),
    run("sessions/qwen-code-0.24.4/write", ONE, JSONL),
    run("sessions/qwen-code-0.24.4/subagent", ONE, JSONL),
    run("sessions/qwen-code-0.24.4/resume", RESUMED, JSONL),
];

/// The session files of a run, relative to its folder, in sorted path order (a transcript
/// before its subagents' folder, as a directory walk gives them).
fn session_files(run: &Run) -> Vec<String> {
    let files: Vec<String> =
        files_under(&fixture(run.dir).join("home"), run.sessions).into_iter().map(|f| format!("home/{f}")).collect();
    assert!(!files.is_empty(), "no session files in fixtures/{}/home", run.dir);
    files
}

/// `normalize FILE…` in the run's folder (so provenance names the files as given there).
fn normalize(run: &Run, files: &[String]) -> (Vec<u8>, Vec<Value>) {
    let out = bin("normalize").current_dir(fixture(run.dir)).args(files).output().expect("runs");
    let events = json_lines(&out.stdout);
    (out.stdout, events)
}

/// What a run comes to, in the terms both inputs must agree on.
#[derive(Debug, PartialEq)]
struct Story {
    turns: u64,
    tools: Vec<Tool>,
    files: Vec<(String, String)>,
    final_text: String,
    outcome: (bool, String),
}

/// One root tool call: its kind, how it ended, and its exit code.
#[derive(Debug)]
struct Tool {
    kind: String,
    end: String,
    exit_code: Option<i64>,
}

/// Exit codes are compared only where both inputs know one.
impl PartialEq for Tool {
    fn eq(&self, other: &Tool) -> bool {
        let codes = match (self.exit_code, other.exit_code) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        self.kind == other.kind && self.end == other.end && codes
    }
}

fn story(events: &[Value]) -> Story {
    let root = |e: &&Value| e["parentId"].is_null();
    let summary = events.last().expect("a summary");
    assert_eq!(summary["type"], "summary");
    let tools = of_type(events, "tool.started")
        .into_iter()
        .filter(root)
        .map(|s| {
            let id = &s["payload"]["toolCallId"];
            let end = events
                .iter()
                .find(|e| {
                    let t = e["type"].as_str().unwrap_or("");
                    t.starts_with("tool.")
                        && !matches!(t, "tool.started" | "tool.output")
                        && e["payload"]["toolCallId"] == *id
                })
                .unwrap_or_else(|| panic!("tool {id} never ends"));
            Tool {
                kind: s["payload"]["kind"].as_str().unwrap_or_default().to_owned(),
                end: end["type"].as_str().unwrap_or_default().to_owned(),
                exit_code: end["payload"]["output"]["exit_code"].as_i64(),
            }
        })
        .collect();
    let files = of_type(events, "file.changed")
        .iter()
        .map(|e| {
            (e["payload"]["path"].as_str().unwrap().to_owned(), e["payload"]["change"].as_str().unwrap().to_owned())
        })
        .collect();
    Story {
        turns: summary["payload"]["turns"].as_u64().expect("turns"),
        tools,
        files,
        final_text: final_text(events),
        outcome: (summary["ok"].as_bool().expect("ok"), summary["status"].as_str().expect("status").to_owned()),
    }
}

/// The agent's last words: the root assistant text after the last root tool event (the
/// user's text between is left out: the holder of streamed text may move the assistant's
/// text past it, see `scrub::stream`).
fn final_text(events: &[Value]) -> String {
    let mut text = String::new();
    for e in events.iter().filter(|e| e["parentId"].is_null()) {
        match e["type"].as_str().unwrap_or("") {
            "text" if e["payload"]["role"] == "assistant" => text.push_str(e["payload"]["delta"].as_str().unwrap()),
            t if t.starts_with("tool.") && t != "tool.output" => text.clear(),
            _ => {}
        }
    }
    text.trim().to_owned()
}

#[test]
fn session_files_and_their_stream_tell_the_same_story() {
    let mut failures = Vec::new();
    for run in RUNS {
        let (_, from_files) = normalize(run, &session_files(run));
        let streams: Vec<String> = run.streams.iter().map(|s| (*s).to_owned()).collect();
        let (_, from_stream) = normalize(run, &streams);
        let (files, stream) = (story(&from_files), story(&from_stream));
        if files != stream {
            failures.push(format!("{}:\n  session files: {files:?}\n  stream:        {stream:?}", run.dir));
        }
        let input = &from_files.last().expect("a summary")["payload"]["input"];
        if input["raw"] != 0 {
            failures.push(format!("{}: the session files left {} raw line(s)", run.dir, input["raw"]));
        }
    }
    assert!(failures.is_empty(), "{} of {} runs disagree:\n{}", failures.len(), RUNS.len(), failures.join("\n"));
}

#[test]
fn golden_session_files() {
    let failures: Vec<String> = RUNS
        .iter()
        .filter_map(|run| {
            let (out, _) = normalize(run, &session_files(run));
            golden(&format!("{}/session.events.jsonl", run.dir), &out).err()
        })
        .collect();
    assert!(failures.is_empty(), "{} golden runs differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn a_subagent_read_after_its_parent_is_the_spawning_calls_child() {
    for run in RUNS.iter().filter(|r| r.dir.ends_with("/subagent")) {
        let (_, events) = normalize(run, &session_files(run));
        let agent = of_type(&events, "tool.started")
            .into_iter()
            .find(|e| e["payload"]["kind"] == "agent")
            .expect("an agent call");
        let id = &agent["payload"]["toolCallId"];
        let child: Vec<&Value> =
            of_type(&events, "tool.started").into_iter().filter(|e| e["parentId"] == *id).collect();
        assert_eq!(child.len(), 1, "{}: the child's shell call is linked to {id}", run.dir);
        assert_eq!(child[0]["payload"]["command"], "echo from-subagent", "{}", run.dir);
        // Read alone, the subagent's transcript is a session of its own.
        let files = session_files(run);
        let (_, alone) = normalize(run, &files[1..]);
        assert!(of_type(&alone, "tool.started").iter().all(|e| e["parentId"].is_null()), "{}", run.dir);
        assert_eq!(alone.last().unwrap()["payload"]["turns"], 1, "{}", run.dir);
    }
}

/// A Claude Code transcript record: `fields` in the envelope every conversational line has.
fn record(uuid: &str, parent: Option<&str>, fields: Value) -> Value {
    let mut r = serde_json::json!({
        "parentUuid": parent, "isSidechain": false, "uuid": uuid, "timestamp": "2026-12-01T10:00:00.000Z",
        "userType": "external", "cwd": "/w", "sessionId": "s-1", "version": "2.1.332", "gitBranch": "main",
    });
    r.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
    r
}

fn prompt(uuid: &str, parent: Option<&str>, text: &str) -> Value {
    record(uuid, parent, serde_json::json!({"type": "user", "message": {"role": "user", "content": text}}))
}

fn answer(uuid: &str, parent: &str, id: &str, text: &str) -> Value {
    let message = serde_json::json!({
        "id": id, "role": "assistant", "model": "claude-x", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": text}], "usage": {"input_tokens": 100, "output_tokens": 10},
    });
    record(uuid, Some(parent), serde_json::json!({"type": "assistant", "message": message}))
}

fn assistant_texts(events: &[Value]) -> Vec<String> {
    of_type(events, "text")
        .iter()
        .filter(|e| e["payload"]["role"] == "assistant")
        .map(|e| e["payload"]["delta"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn an_edited_prompt_keeps_the_new_branch_and_counts_the_old() {
    let events = normalize_lines(&[
        prompt("a", None, "first"),
        answer("b", "a", "m1", "one."),
        prompt("c", Some("b"), "second"),
        answer("d", "c", "m2", "two."),
        // The second prompt, edited: a sibling of the one it replaces.
        prompt("e", Some("b"), "second, edited"),
        answer("f", "e", "m3", "two, again."),
    ]);
    let summary = events.last().unwrap();
    assert_eq!(summary["payload"]["turns"], 2);
    assert_eq!(assistant_texts(&events).concat(), "one.two, again.");
    let prompts: Vec<&Value> = of_type(&events, "turn.started").iter().map(|e| &e["payload"]["prompt"]).collect();
    assert_eq!(prompts, ["first", "second, edited"]);
    assert_eq!(summary["payload"]["usage"]["input_tokens"], 200, "the abandoned answer's usage is not counted");
    let warning = only(&events, "warning")["payload"]["message"].as_str().unwrap().to_owned();
    assert!(warning.contains("1 branch(es)") && warning.contains("2 record(s)"), "{warning}");
    assert_eq!((summary["ok"].as_bool(), summary["payload"]["input"]["raw"].as_u64()), (Some(true), Some(0)));
}

#[test]
fn a_retried_answer_replaces_the_first_at_the_end_of_the_file() {
    let events =
        normalize_lines(&[prompt("a", None, "hi"), answer("b", "a", "m1", "draft"), answer("c", "a", "m2", "final")]);
    assert_eq!(assistant_texts(&events), ["final"]);
    assert_eq!(events.last().unwrap()["payload"]["turns"], 1);
    assert!(only(&events, "warning")["payload"]["message"].as_str().unwrap().contains("1 record(s)"));
}

#[test]
fn usage_repeated_on_the_lines_of_one_message_counts_once() {
    let mut tool = answer("c", "b", "m1", "");
    tool["message"]["content"] =
        serde_json::json!([{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/w/x"}}]);
    tool["message"]["stop_reason"] = "tool_use".into();
    let result = record(
        "d",
        Some("c"),
        serde_json::json!({"type": "user", "sourceToolAssistantUUID": "c", "toolUseResult": "x",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}}),
    );
    let events = normalize_lines(&[
        prompt("a", None, "read x"),
        answer("b", "a", "m1", "Reading."),
        tool,
        result,
        answer("e", "d", "m2", "Done."),
    ]);
    let usage: Vec<&Value> = of_type(&events, "usage");
    assert_eq!(usage.len(), 2, "m1 (two lines) once, m2 once");
    assert_eq!(events.last().unwrap()["payload"]["usage"]["input_tokens"], 200);
    assert_eq!(only(&events, "tool.completed")["payload"]["toolCallId"], "t1");
}

#[test]
fn a_transcript_that_starts_from_a_compaction_says_so_with_its_reason() {
    let summary = serde_json::json!({"type": "summary", "summary": "Earlier work", "leafUuid": "z"});
    let events = normalize_lines(&[summary, prompt("a", None, "go on"), answer("b", "a", "m1", "ok")]);
    assert_eq!(only(&events, "context.compacted")["payload"]["reason"], "summary");
    assert_eq!(of_type(&events, "session.started").len(), 1, "the compaction is in the transcript's session");

    let boundary = record(
        "c",
        None,
        serde_json::json!({"type": "system", "subtype": "compact_boundary", "logicalParentUuid": "b",
            "compactMetadata": {"trigger": "manual", "preTokens": 1000}}),
    );
    let summary = record(
        "d",
        Some("c"),
        serde_json::json!({"type": "user", "isCompactSummary": true, "message": {"role": "user", "content": "This session is being continued…"}}),
    );
    let events = normalize_lines(&[
        prompt("a", None, "go"),
        answer("b", "a", "m1", "ok"),
        boundary,
        summary,
        prompt("e", Some("d"), "more"),
        answer("f", "e", "m2", "done"),
    ]);
    assert_eq!(only(&events, "context.compacted")["payload"]["reason"], "manual");
    assert_eq!(events.last().unwrap()["payload"]["turns"], 2);
    assert!(of_type(&events, "warning").is_empty(), "a compaction is no branch");
}

#[test]
fn an_edited_first_prompt_replaces_the_first_turn() {
    let events = normalize_lines(&[
        prompt("a", None, "frist"),
        answer("b", "a", "m1", "typo?"),
        prompt("c", None, "first"),
        answer("d", "c", "m2", "ok."),
    ]);
    assert_eq!(assistant_texts(&events), ["ok."]);
    assert_eq!(events.last().unwrap()["payload"]["turns"], 1);
    assert!(only(&events, "warning")["payload"]["message"].as_str().unwrap().contains("2 record(s)"));
}
