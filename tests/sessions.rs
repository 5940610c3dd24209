//! Session files against the live stream of the same run, for every recorded run of every
//! CLI whose session files `normalize` reads (`fixtures/sessions/<cli>-<version>/<scenario>/`):
//! `normalize` over the session files the CLI wrote and `normalize` over its stdout stream(s)
//! must tell the same story: each turn's end, each root tool's name, kind, end and exit code,
//! the files changed and how, the assistant's text and the run's outcome. Where a CLI's files
//! and its stream differ by design, the run's row says how, and the check asserts exactly that
//! difference. `normalize home/` (the walk) must give what the session files named one by one
//! give. A reader of a new session format adds its recorded runs as rows of [`RUNS`]. The
//! Claude Code and Qwen Code session files' outputs are golden here (`session.events.jsonl`
//! beside them); the other CLIs' goldens are in `session_files.rs`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::*;

/// One recorded run: its folder under `fixtures/`, its stdout files in the order the CLI
/// printed them, which of its files are its session files, and how they differ from the stream.
struct Run {
    dir: &'static str,
    streams: &'static [&'static str],
    files: Files,
    differs: &'static [Differs],
}

/// Where a run's session files are.
enum Files {
    /// The files under `home/` whose names end so, read together in path order (a transcript
    /// before its subagents' folder, as a directory walk gives them).
    Home(&'static [&'static str]),
    /// Files in the run's folder, each a whole record of the run on its own (OpenCode's
    /// database and its `opencode export`); no `home/` was kept, so the walk is checked on a
    /// scratch home holding the first at `in_home`.
    EachAlone { files: &'static [&'static str], in_home: &'static str },
}

/// A way a run's session files tell it differently from its stream, by design: what the files
/// say, then what the stream says.
enum Differs {
    /// Root tool `n` (0-based) ends so: (event type, exit code).
    ToolEnd { n: usize, files: (&'static str, Option<i64>), stream: (&'static str, Option<i64>) },
    /// File change `n` (0-based) is of this kind.
    FileChange { n: usize, files: &'static str, stream: &'static str },
}

const fn run(dir: &'static str, streams: &'static [&'static str], files: Files, differs: &'static [Differs]) -> Run {
    Run { dir, streams, files, differs }
}

const ONE: &[&str] = &["stdout.jsonl"];
const RESUMED: &[&str] = &["stdout.jsonl", "stdout-turn2.jsonl"];
const JSONL: Files = Files::Home(&[".jsonl"]);
const OPENCODE: Files =
    Files::EachAlone { files: &["opencode.db", "export.json"], in_home: ".local/share/opencode/opencode.db" };
const SAME: &[Differs] = &[];
/// Gemini CLI's stream reports a shell call that exited 4 as a success with no exit code; its
/// session file keeps the `Exit Code: 4` the model saw.
const GEMINI_EXIT4: &[Differs] =
    &[Differs::ToolEnd { n: 0, files: ("tool.failed", Some(4)), stream: ("tool.completed", None) }];
/// A Gemini CLI session says the first write created its file; the stream calls every write
/// an update.
const GEMINI_WRITE: &[Differs] = &[Differs::FileChange { n: 0, files: "add", stream: "update" }];

const RUNS: &[Run] = &[
    run("sessions/claude-code-2.1.332/text", ONE, JSONL, SAME),
    run("sessions/claude-code-2.1.332/exit4", ONE, JSONL, SAME),
    run("sessions/claude-code-2.1.332/write", ONE, JSONL, SAME),
    run("sessions/claude-code-2.1.332/subagent", ONE, JSONL, SAME),
    run("sessions/claude-code-2.1.332/resume", RESUMED, JSONL, SAME),
    run("sessions/qwen-code-0.24.4/text", ONE, JSONL, SAME),
    run("sessions/qwen-code-0.24.4/exit4", ONE, JSONL, SAME),
    run("sessions/qwen-code-0.24.4/write", ONE, JSONL, SAME),
    run("sessions/qwen-code-0.24.4/subagent", ONE, JSONL, SAME),
    run("sessions/qwen-code-0.24.4/resume", RESUMED, JSONL, SAME),
    // A transcript written here after FORMATS.md's account of the deny run (its stream is
    // the captured one): the denied call is the memory extractor's, not the session's.
    run("sessions/qwen-code-0.24.4/constructed-deny", ONE, JSONL, SAME),
    run("sessions/codex-0.171.0/text", ONE, JSONL, SAME),
    run("sessions/codex-0.171.0/exit4", ONE, JSONL, SAME),
    run("sessions/codex-0.171.0/write", ONE, JSONL, SAME),
    run("sessions/codex-0.171.0/subagent", ONE, JSONL, SAME),
    run("sessions/codex-0.171.0/resume", RESUMED, JSONL, SAME),
    run("sessions/copilot-1.0.102/text", ONE, JSONL, SAME),
    run("sessions/copilot-1.0.102/exit4", ONE, JSONL, SAME),
    run("sessions/copilot-1.0.102/write", ONE, JSONL, SAME),
    run("sessions/copilot-1.0.102/subagent", ONE, JSONL, SAME),
    run("sessions/copilot-1.0.102/resume", RESUMED, JSONL, SAME),
    run("sessions/droid-0.225.2/text", ONE, JSONL, SAME),
    run("sessions/droid-0.225.2/exit4", ONE, JSONL, SAME),
    run("sessions/droid-0.225.2/write", ONE, JSONL, SAME),
    run("sessions/droid-0.225.2/subagent", ONE, JSONL, SAME),
    // droid printed both invocations' streams into one file.
    run("sessions/droid-0.225.2/resume", ONE, JSONL, SAME),
    run("sessions/gemini-cli-0.61.0/text", ONE, JSONL, SAME),
    run("sessions/gemini-cli-0.61.0/exit4", ONE, JSONL, GEMINI_EXIT4),
    run("sessions/gemini-cli-0.61.0/write", ONE, JSONL, GEMINI_WRITE),
    run("sessions/gemini-cli-0.61.0/subagent", ONE, JSONL, SAME),
    run("sessions/gemini-cli-0.61.0/resume", RESUMED, JSONL, GEMINI_EXIT4),
    run("sessions/opencode-1.18.33/text", ONE, OPENCODE, SAME),
    run("sessions/opencode-1.18.33/exit4", ONE, OPENCODE, SAME),
    run("sessions/opencode-1.18.33/write", ONE, OPENCODE, SAME),
    // The database also holds the subagent's own session, its start and turn linked to the
    // `task` call as its text and tools are: the root session's story is the stream's.
    run("sessions/opencode-1.18.33/subagent", ONE, OPENCODE, SAME),
    run("sessions/opencode-1.18.33/resume", RESUMED, OPENCODE, SAME),
];

/// Each reading of a run's session files (relative to its folder): one list of files read together.
fn readings(run: &Run) -> Vec<Vec<String>> {
    match run.files {
        Files::Home(ends) => {
            let files: Vec<String> =
                files_under(&fixture(run.dir).join("home"), ends).into_iter().map(|f| format!("home/{f}")).collect();
            assert!(!files.is_empty(), "no session files in fixtures/{}/home", run.dir);
            vec![files]
        }
        Files::EachAlone { files, .. } => files.iter().map(|f| vec![(*f).to_owned()]).collect(),
    }
}

/// The session files of a Claude Code or Qwen Code run (one reading of them all).
fn session_files(run: &Run) -> Vec<String> {
    readings(run).remove(0)
}

/// The Claude Code and Qwen Code runs, whose goldens and subagent links are checked here.
fn transcripts() -> impl Iterator<Item = &'static Run> {
    RUNS.iter().filter(|r| r.dir.starts_with("sessions/claude-code-") || r.dir.starts_with("sessions/qwen-code-"))
}

/// `normalize FILE…` in `dir` (so provenance names the files as given there): its output
/// and stderr; it must succeed.
fn normalize_in(dir: &Path, files: &[String]) -> (Vec<u8>, String) {
    let out = bin("normalize").current_dir(dir).args(files).output().expect("runs");
    assert!(out.status.success(), "{}: normalize {files:?}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    (out.stdout, String::from_utf8(out.stderr).expect("UTF-8 stderr"))
}

/// `normalize FILE…` in the run's folder: its output and its events.
fn normalize(run: &Run, files: &[String]) -> (Vec<u8>, Vec<Value>) {
    let (out, _) = normalize_in(&fixture(run.dir), files);
    let events = json_lines(&out);
    (out, events)
}

/// What a run comes to, in the terms both inputs must agree on: the root session's (the
/// first event's) events outside any child agent.
#[derive(Debug, PartialEq)]
struct Story {
    turn_ends: Vec<String>,
    tools: Vec<Tool>,
    files: Vec<(String, String)>,
    text: String,
    outcome: (bool, String),
}

/// One root tool call: its name and kind, how it ended, and its exit code.
#[derive(Debug, PartialEq)]
struct Tool {
    name: String,
    kind: String,
    end: String,
    exit_code: Option<i64>,
}

fn string(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

fn story(events: &[Value]) -> Story {
    let summary = events.last().expect("a summary");
    assert_eq!(summary["type"], "summary");
    let root: Vec<&Value> = events.iter().filter(|e| e["parentId"].is_null()).collect();
    let of = |t: &'static str| root.iter().filter(move |e| e["type"] == t);
    let ends = |e: &&&Value| {
        let t = e["type"].as_str().unwrap_or("");
        t.starts_with("tool.") && !matches!(t, "tool.started" | "tool.output")
    };
    let tools = of("tool.started")
        .map(|s| {
            let id = &s["payload"]["toolCallId"];
            let end = root
                .iter()
                .filter(ends)
                .find(|e| e["payload"]["toolCallId"] == *id)
                .unwrap_or_else(|| panic!("tool {id} never ends"));
            Tool {
                name: string(&s["payload"]["name"]),
                kind: string(&s["payload"]["kind"]),
                end: string(&end["type"]),
                exit_code: end["payload"]["output"]["exit_code"].as_i64(),
            }
        })
        .collect();
    Story {
        turn_ends: root
            .iter()
            .filter_map(|e| e["type"].as_str().filter(|t| t.starts_with("turn.") && *t != "turn.started"))
            .map(str::to_owned)
            .collect(),
        tools,
        files: of("file.changed").map(|e| (string(&e["payload"]["path"]), string(&e["payload"]["change"]))).collect(),
        text: of("text")
            .filter(|e| e["payload"]["role"] == "assistant")
            .map(|e| string(&e["payload"]["delta"]))
            .collect(),
        outcome: (summary["ok"].as_bool().expect("ok"), string(&summary["status"])),
    }
}

/// Checks that the session files' story differs from the stream's as `d` says, then makes it
/// the stream's there, so the rest can be compared.
fn reconcile(files: &mut Story, stream: &Story, d: &Differs) -> Result<(), String> {
    match *d {
        Differs::ToolEnd { n, files: f, stream: s } => {
            let (ft, st) = (files.tools.get_mut(n).ok_or("no such tool")?, stream.tools.get(n).ok_or("no such tool")?);
            let (fe, se) = ((ft.end.as_str(), ft.exit_code), (st.end.as_str(), st.exit_code));
            if (fe, se) != (f, s) {
                return Err(format!(
                    "tool {n} ends {fe:?} in the files, {se:?} in the stream; the row says {f:?}, {s:?}"
                ));
            }
            (ft.end, ft.exit_code) = (st.end.clone(), st.exit_code);
        }
        Differs::FileChange { n, files: f, stream: s } => {
            let (fc, sc) =
                (files.files.get_mut(n).ok_or("no such change")?, stream.files.get(n).ok_or("no such change")?);
            if (fc.1.as_str(), sc.1.as_str()) != (f, s) {
                return Err(format!(
                    "change {n} is {:?} in the files, {:?} in the stream; the row says {f:?}, {s:?}",
                    fc.1, sc.1
                ));
            }
            fc.1.clone_from(&sc.1);
        }
    }
    Ok(())
}

/// Every reading of the run's session files against its stream: `Err` says how they disagree.
fn agree(run: &Run) -> Result<(), String> {
    let streams: Vec<String> = run.streams.iter().map(|s| (*s).to_owned()).collect();
    let stream = story(&normalize(run, &streams).1);
    for files in readings(run) {
        let (out, stderr) = normalize_in(&fixture(run.dir), &files);
        let events = json_lines(&out);
        let mut told = story(&events);
        let name = format!("{} ({})", run.dir, files.join(" "));
        for d in run.differs {
            reconcile(&mut told, &stream, d).map_err(|e| format!("{name}: {e}"))?;
        }
        if told != stream {
            return Err(format!("{name}:\n  session files: {told:?}\n  stream:        {stream:?}"));
        }
        let input = &events.last().expect("a summary")["payload"]["input"];
        if input["raw"] != 0 || !stderr.is_empty() {
            return Err(format!("{name}: {} raw line(s), stderr {stderr:?}", input["raw"]));
        }
        // The stream may not repeat the prompt; the session files hold it.
        let prompt = &of_type(&events, "turn.started").first().ok_or("no turn")?["payload"]["prompt"];
        if !prompt.as_str().is_some_and(|p| p.contains("SCENARIO_")) {
            return Err(format!("{name}: the first prompt is {prompt}"));
        }
    }
    Ok(())
}

#[test]
fn session_files_and_their_stream_tell_the_same_story() {
    let failures: Vec<String> = RUNS.iter().filter_map(|r| agree(r).err()).collect();
    assert!(failures.is_empty(), "{} of {} runs disagree:\n{}", failures.len(), RUNS.len(), failures.join("\n"));
}

/// droid keeps a session's usage only in the `.settings.json` beside its JSONL. Read with the
/// file (named, or found in the walk), it is the session's usage, and the same as the
/// stream's `completion` gives for the run; read without it (from stdin), it is unknown,
/// not 0.
#[test]
fn a_droid_sessions_usage_is_read_from_its_settings_and_is_the_streams() {
    let usage = |events: &[Value]| events.last().expect("a summary")["payload"]["usage"].clone();
    for run in RUNS.iter().filter(|r| r.dir.starts_with("sessions/droid-")) {
        let streams: Vec<String> = run.streams.iter().map(|s| (*s).to_owned()).collect();
        let stream = usage(&normalize(run, &streams).1);
        assert!(stream["input_tokens"].as_u64().is_some_and(|n| n > 0), "{}: the stream's usage {stream}", run.dir);
        let files = session_files(run);
        let (_, named) = normalize(run, &files);
        assert_eq!(usage(&named), stream, "{}: the session's usage", run.dir);
        assert_eq!(of_type(&named, "usage").len(), 1, "{}: one total, as the stream's", run.dir);
        let piped = bin("normalize").pipe_stdin(fixture(run.dir).join(&files[0])).unwrap().output().unwrap();
        let piped = json_lines(&piped.stdout);
        assert!(usage(&piped).is_null() && of_type(&piped, "usage").is_empty(), "{}: {}", run.dir, usage(&piped));
    }
}

/// A resumed session's two streams, read together, count each invocation's figures once.
/// Claude Code's and Qwen Code's resumed process reports the whole session's figures (both
/// invocations'), Gemini CLI's its own, Codex's `turn.completed` the thread's running total.
#[test]
fn a_resumed_sessions_streams_count_each_invocations_usage_once() {
    let results = |run: &Run, kind: &str| -> Vec<Value> {
        run.streams
            .iter()
            .flat_map(|s| json_lines(&read(&format!("{}/{s}", run.dir))))
            .filter(|l| l["type"] == kind)
            .collect()
    };
    let input = |events: &[Value]| events.last().expect("a summary")["payload"]["usage"]["input_tokens"].as_u64();
    for dir in ["claude-code-2.1.332", "qwen-code-0.24.4", "gemini-cli-0.61.0", "codex-0.171.0"] {
        let run = RUNS.iter().find(|r| r.dir == format!("sessions/{dir}/resume")).expect("a resumed run");
        let streams: Vec<String> = run.streams.iter().map(|s| (*s).to_owned()).collect();
        let read = input(&normalize(run, &streams).1);
        let (stated, last): (u64, _) = match dir {
            "claude-code-2.1.332" => {
                let r = results(run, "result");
                let models = r.last().unwrap()["modelUsage"]
                    .as_object()
                    .unwrap()
                    .values()
                    .map(|m| m["inputTokens"].as_u64().unwrap())
                    .sum();
                (
                    models,
                    r[0]["modelUsage"]
                        .as_object()
                        .unwrap()
                        .values()
                        .map(|m| m["inputTokens"].as_u64().unwrap())
                        .sum::<u64>(),
                )
            }
            "qwen-code-0.24.4" => {
                let r = results(run, "result");
                (
                    r.last().unwrap()["usage"]["input_tokens"].as_u64().unwrap(),
                    r[0]["usage"]["input_tokens"].as_u64().unwrap(),
                )
            }
            "gemini-cli-0.61.0" => {
                let r = results(run, "result");
                (
                    r.iter().map(|r| r["stats"]["input"].as_u64().unwrap()).sum(),
                    r[0]["stats"]["input"].as_u64().unwrap(),
                )
            }
            _ => {
                let r = results(run, "turn.completed");
                (
                    r.last().unwrap()["usage"]["input_tokens"].as_u64().unwrap(),
                    r[0]["usage"]["input_tokens"].as_u64().unwrap(),
                )
            }
        };
        assert!(stated > last, "{dir}: the second invocation adds to the first");
        assert_eq!(read, Some(stated), "{dir}");
    }
    // Claude Code's transcript holds every call the stream counts: the two agree exactly.
    let claude = RUNS.iter().find(|r| r.dir == "sessions/claude-code-2.1.332/resume").unwrap();
    let streams: Vec<String> = claude.streams.iter().map(|s| (*s).to_owned()).collect();
    let usage = |events: &[Value]| events.last().unwrap()["payload"]["usage"].clone();
    assert_eq!(usage(&normalize(claude, &streams).1), usage(&normalize(claude, &session_files(claude)).1));
}

/// Qwen Code keeps a denied call only in the telemetry of its transcript: it is the
/// stream's denial (`tool.denied`, `PERMISSION_DENIED`), of the agent that made it: the
/// background memory extractor, which no call spawned, so a child of the extractor's id. The
/// stream never shows the extractor, so the root stories agree (`RUNS`).
#[test]
fn a_qwen_denial_kept_only_in_telemetry_is_the_extractors_denied_call() {
    let run = transcripts().find(|r| r.dir.ends_with("/constructed-deny")).unwrap();
    let (_, events) = normalize(run, &session_files(run));
    let started = only(&events, "tool.started");
    let denied = only(&events, "tool.denied");
    assert_eq!(started["payload"]["command"], "touch denied.txt && echo should-not-run");
    assert_eq!(denied["payload"]["toolCallId"], started["payload"]["toolCallId"]);
    assert_eq!(denied["payload"]["error"]["category"], "PERMISSION_DENIED");
    assert!(denied["payload"]["error"]["message"].as_str().unwrap().contains("denied by permission rules"));
    for e in [started, denied] {
        assert_eq!(e["parentId"], "managed-auto-memory-extractor-3b1c0e57", "{e}");
    }
    assert_eq!(events.last().unwrap()["payload"]["tools"]["denied"], 1);
}

/// A scratch directory of this test's own.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("minicode-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `normalize home` (the walk) gives the events the session files named one by one give, but
/// for `rawRef.file`: the walk names the file of every event (the operand joined with the path
/// below it, `home/…`, as the files were named explicitly), while a lone file operand is not
/// named. So the walk's names must be the session files', and are then left out of the
/// comparison.
#[test]
fn walking_a_runs_home_reads_its_session_files_and_nothing_else() {
    let mut failures = Vec::new();
    for run in RUNS {
        let (dir, files, scratch_dir) = match run.files {
            Files::Home(_) => (fixture(run.dir), session_files(run), None),
            Files::EachAlone { files, in_home } => {
                let dir = scratch(&format!("walk-{}", run.dir.replace('/', "-")));
                let path = dir.join("home").join(in_home);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::copy(fixture(run.dir).join(files[0]), &path).unwrap();
                (dir.clone(), vec![format!("home/{in_home}")], Some(dir))
            }
        };
        let (named, _) = normalize_in(&dir, &files);
        let (walked, stderr) = normalize_in(&dir, &["home".to_owned()]);
        let (mut named, mut walked) = (json_lines(&named), json_lines(&walked));
        let unnamed = walked
            .iter()
            .filter(|e| e["rawRef"].is_object())
            .find(|e| !e["rawRef"]["file"].as_str().is_some_and(|f| files.iter().any(|g| g == f)));
        if let Some(e) = unnamed {
            failures.push(format!("{}: the walk names {} (the files are {files:?})", run.dir, e["rawRef"]));
        }
        for e in named.iter_mut().chain(walked.iter_mut()) {
            if let Some(r) = e["rawRef"].as_object_mut() {
                r.remove("file");
            }
        }
        if walked != named || !stderr.is_empty() {
            failures.push(format!("{}: the walk differs from {files:?} (stderr {stderr:?})", run.dir));
        }
        if let Some(d) = scratch_dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn golden_session_files() {
    let failures: Vec<String> = transcripts()
        .filter_map(|run| {
            let (out, _) = normalize(run, &session_files(run));
            golden(&format!("{}/session.events.jsonl", run.dir), &out).err()
        })
        .collect();
    assert!(failures.is_empty(), "{} golden runs differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn a_subagent_read_after_its_parent_is_the_spawning_calls_child() {
    for run in transcripts().filter(|r| r.dir.ends_with("/subagent")) {
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
        // Its usage is the child's too, read linked: the same figures, naming the call.
        let linked: Vec<&Value> =
            of_type(&events, "usage").into_iter().filter(|e| e["parentId"] == *id).map(|e| &e["payload"]).collect();
        let own: Vec<&Value> = of_type(&alone, "usage").into_iter().map(|e| &e["payload"]).collect();
        assert!(!own.is_empty(), "{}: the subagent's transcript states its usage", run.dir);
        assert_eq!(linked, own, "{}: the child's usage names {id}", run.dir);
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

/// A Claude Code home as a user's holds it: beside the transcripts, the `.meta.json` of a
/// subagent, settings, backups, logs, lock files, sqlite side databases, a database's WAL and
/// other CLIs' bookkeeping in JSON lines (the kinds of files the recorded homes held). The
/// walk reads the two transcripts, exactly as when they are named, and skips every other
/// file, counted and named, without an error.
#[test]
fn walking_a_lived_in_home_reads_the_transcripts_and_skips_the_rest() {
    let run = transcripts().find(|r| r.dir.ends_with("claude-code-2.1.332/subagent")).unwrap();
    let dir = scratch("lived-in-home");
    let home = dir.join("home");
    let transcripts = session_files(run);
    for f in &transcripts {
        let to = dir.join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(fixture(run.dir).join(f), to).unwrap();
    }
    let subagents = dir.join(&transcripts[1]).parent().unwrap().to_owned();
    let others: &[(&str, &[u8])] = &[
        (".claude.json", b"{\"numStartups\":1,\"projects\":{\"/w\":{\"allowedTools\":[]}}}\n"),
        (".claude/backups/.claude.json.backup.1796151492227", b"{\"numStartups\":0}"),
        (".claude/settings.json", b"{\n  \"theme\": \"dark\",\n  \"permissions\": {\"allow\": [\"Bash\"]}\n}\n"),
        (
            ".factory/logs/console.log",
            b"[2026-12-01T10:00:00Z] INFO starting\n[2026-12-01T10:00:01Z] ERROR {\"code\": 500}\n",
        ),
        (
            ".factory/logs/droid-log-single.log",
            b"{\"level\":\"info\",\"msg\":\"session started\"}\n{\"level\":\"warn\"}\n",
        ),
        (".copilot/session-store.db-wal", &[0x37, 0x7f, 0x06, 0x82, 0, 0, 0x10, 0, 0xff, 0xfe, 0, 1]),
        (".copilot/session-state/s1/workspace.yaml", b"cwd: /w\nsummary: x\n"),
        (".copilot/session-state/s1/.workspace-fork.lock", b"4242"),
        (".qwen/usage_record.jsonl", b"{\"ts\":1,\"model\":\"m\",\"input\":10}\n"),
        (".qwen/usage/token-usage-2026-12.jsonl", b"{\"date\":\"2026-12-01\",\"tokens\":10}\n"),
        (".npm/_cacache/index-v5/fc/1f/abc", b"b0c5\t{\"key\":\"make-fetch-happen:request-cache:x\",\"time\":1}\n"),
    ];
    for (path, bytes) in others {
        let to = home.join(path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
    }
    let meta = std::fs::read_dir(&subagents).unwrap().next().unwrap().unwrap().path().with_extension("meta.json");
    std::fs::write(&meta, br#"{"agentType":"general-purpose","toolUseId":"toolu_mock_s0_0_17","finished":true}"#)
        .unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    let side = rusqlite::Connection::open(home.join(".codex/state_5.sqlite")).unwrap();
    side.execute_batch(
        "CREATE TABLE threads(id TEXT, rollout_path TEXT); INSERT INTO threads VALUES ('t', '/x.jsonl');",
    )
    .unwrap();
    drop(side);

    let (named, _) = normalize_in(&dir, &transcripts);
    let (walked, stderr) = normalize_in(&dir, &["home".to_owned()]);
    let (named, mut walked) = (json_lines(&named), json_lines(&walked));
    // The walk's summary counts what it skipped; that is all it adds.
    let skipped = walked.last_mut().unwrap()["payload"]["input"].as_object_mut().unwrap().remove("skipped");
    assert_eq!(skipped, Some((others.len() + 2).into()), "{stderr}");
    assert_eq!(walked, named);
    let summary = walked.last().unwrap();
    assert_eq!(summary["payload"]["input"]["raw"], 0);
    assert!(stderr.lines().all(|l| l.starts_with("normalize: skipped ")), "{stderr}");
    assert!(stderr.contains(".meta.json: not a file of a format it reads"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A walk opens only regular files: a FIFO (opening it would wait for a writer), a link to
/// one and a link to a device are skipped, counted and named; a droid session whose
/// settings are a FIFO is read without them; and the walk ends.
#[test]
fn a_walk_neither_waits_on_a_fifo_nor_reads_a_device() {
    let dir = scratch("fifo-walk");
    let droid = "droid-0.225.2/text/home/.factory/sessions/-tmp-sess-w-droid-b9aa";
    let session = "30b72983-6061-48e7-893d-5b04117d8e20";
    std::fs::create_dir_all(dir.join("home/droid")).unwrap();
    std::fs::copy(
        fixture(&format!("sessions/{droid}/{session}.jsonl")),
        dir.join(format!("home/droid/{session}.jsonl")),
    )
    .unwrap();
    let fifo = |path: &Path| assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
    fifo(&dir.join(format!("home/droid/{session}.settings.json")));
    fifo(&dir.join("home/pipe.jsonl"));
    std::os::unix::fs::symlink(dir.join("home/pipe.jsonl"), dir.join("home/to-pipe.jsonl")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("home/zero.jsonl")).unwrap();

    let out = bin("normalize").current_dir(&dir).arg("home").timeout(Duration::from_secs(30)).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    let events = json_lines(&out.stdout);
    let summary = events.last().unwrap();
    assert_eq!(summary["payload"]["turns"], 1, "the droid session is read: {stderr}");
    assert_eq!(summary["payload"]["input"]["skipped"], 3, "{stderr}");
    for name in ["pipe.jsonl", "to-pipe.jsonl", "zero.jsonl"] {
        assert!(stderr.contains(&format!("{name}: not a regular file")), "{name}: {stderr}");
    }
    // Read as a session with no settings beside it: its usage is unknown, never 0.
    assert!(of_type(&events, "usage").is_empty(), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_record_named_its_own_parent_follows_the_record_before_it() {
    // A damaged link: the walk back from the last record must not stop there, dropping the
    // prompt and the turn, nor count a branch that was never made.
    for broken in ["b", "c"] {
        let mut lines = vec![prompt("a", None, "hi"), answer("b", "a", "m1", "one."), answer("c", "b", "m2", "two.")];
        let i = if broken == "b" { 1 } else { 2 };
        lines[i]["parentUuid"] = Value::from(broken);
        let events = normalize_lines(&lines);
        assert_eq!(assistant_texts(&events).concat(), "one.two.", "{broken}");
        assert_eq!(events.last().unwrap()["payload"]["turns"], 1, "{broken}");
        assert!(of_type(&events, "warning").is_empty(), "{broken}: no branch was left behind");
    }
}

/// The lines of a recorded session file, as written.
fn recorded_lines(path: &str) -> Vec<String> {
    std::fs::read_to_string(fixture(&format!("sessions/{path}"))).unwrap().lines().map(str::to_owned).collect()
}

/// A session file cut short (truncated, or read while it was written) is never a run that
/// completed: the cut record is kept raw, a turn its reader would end `completed` from what
/// came before is `interrupted`, and the run is not ok. The reading before the cut said ok.
#[test]
fn a_session_file_cut_in_the_middle_of_a_record_is_not_a_completed_run() {
    let gemini = "gemini-cli-0.61.0/write/home/.gemini/tmp/w-gemini-rcrm/chats/session-2026-12-01T18-59-b6dbcef0.jsonl";
    let droid =
        "droid-0.225.2/write/home/.factory/sessions/-tmp-sess-w-droid-NJ7I/b125376f-15ec-4086-bf9a-913f7fee73db";
    let dir = scratch("cut-sessions");
    let cut = |lines: &[String], n: usize| {
        let mut text: String = lines[..n - 1].iter().map(|l| format!("{l}\n")).collect();
        text.push_str(&lines[n - 1][..lines[n - 1].len() / 2]);
        text
    };
    let g = recorded_lines(gemini);
    std::fs::write(dir.join("whole.jsonl"), g[..6].iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    std::fs::write(dir.join("gemini.jsonl"), cut(&g, 7)).unwrap();
    std::fs::write(dir.join("droid.jsonl"), cut(&recorded_lines(&format!("{droid}.jsonl")), 2)).unwrap();
    std::fs::copy(fixture(&format!("sessions/{droid}.settings.json")), dir.join("droid.settings.json")).unwrap();
    // A damaged record (stray bytes over its start) is one too.
    let mut damaged = g.clone();
    damaged[6] = format!("\u{0}\u{0}{}", damaged[6]);
    std::fs::write(dir.join("damaged.jsonl"), damaged.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();

    let read = |name: &str| {
        let out = bin("normalize").current_dir(&dir).arg(name).output().unwrap();
        json_lines(&out.stdout)
    };
    let whole = read("whole.jsonl");
    assert_eq!(whole.last().unwrap()["ok"], true, "the six whole lines end in an answer");
    for (name, line) in [("gemini.jsonl", 7), ("droid.jsonl", 2), ("damaged.jsonl", 7)] {
        let events = read(name);
        let summary = events.last().unwrap();
        assert_eq!((&summary["ok"], &summary["status"]), (&Value::Bool(false), &Value::from("interrupted")), "{name}");
        let message = summary["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("line {line} is a damaged record")), "{name}: {message}");
        assert!(of_type(&events, "turn.completed").is_empty(), "{name}");
        assert_eq!(of_type(&events, "raw")[0]["rawRef"]["line"], line, "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Codex rollout that ends after a turn's `task_started`, before its prompt's item: the
/// turn was begun and is cut short, never a session of no turns reported ok.
#[test]
fn a_rollout_cut_after_a_task_started_has_an_interrupted_turn() {
    let rollout = "codex-0.171.0/text/home/.codex/sessions/2026/12/01/rollout-2026-12-01T18-58-38-01a232f9-24f2-7362-a97d-78bdfcc4a94f.jsonl";
    let lines = recorded_lines(rollout);
    let input: String = lines[..8].iter().map(|l| format!("{l}\n")).collect();
    let events = json_lines(&crate::support::run("normalize", &[], input.as_bytes()));
    let summary = events.last().unwrap();
    assert_eq!((&summary["payload"]["turns"], &summary["status"]), (&Value::from(1), &Value::from("interrupted")));
    assert_eq!(of_type(&events, "turn.interrupted").len(), 1);
}

/// A session file or stream cut right after its header, before the agent's first turn, is
/// not a run that went well: nothing says the agent did what it was asked.
#[test]
fn a_session_cut_after_its_header_is_not_ok() {
    let heads = [
        ("droid-0.225.2/text/home/.factory/sessions/-tmp-sess-w-droid-b9aa/30b72983-6061-48e7-893d-5b04117d8e20.jsonl", 2),
        ("gemini-cli-0.61.0/write/home/.gemini/tmp/w-gemini-rcrm/chats/session-2026-12-01T18-59-b6dbcef0.jsonl", 2),
        ("copilot-1.0.102/exit4/home/.copilot/session-state/e9c34986-7a4e-46af-9a45-5a59e83d0d7c/events.jsonl", 1),
        ("codex-0.171.0/text/stdout.jsonl", 1),
        // Claude Code's queue of prompts: one was queued and taken, its own record cut off.
        ("claude-code-2.1.332/text/home/.claude/projects/-tmp-sess-w-claude-p5fp/b9bfad11-8a33-4aa3-838c-3dd9d1fa4ce4.jsonl", 2),
        ("codex-0.171.0/text/home/.codex/sessions/2026/12/01/rollout-2026-12-01T18-58-38-01a232f9-24f2-7362-a97d-78bdfcc4a94f.jsonl", 1),
    ];
    for (path, n) in heads {
        let input: String = recorded_lines(path)[..n].iter().map(|l| format!("{l}\n")).collect();
        let events = json_lines(&crate::support::run("normalize", &[], input.as_bytes()));
        let summary = events.last().unwrap();
        assert_eq!((&summary["ok"], &summary["status"]), (&Value::Bool(false), &Value::from("interrupted")), "{path}");
        assert_eq!(summary["payload"]["turns"], 0, "{path}");
        let message = summary["error"]["message"].as_str().unwrap();
        assert!(message.contains("before the agent's first turn"), "{path}: {message}");
    }
}

/// A session judged at the end of a file that holds only its start (Claude Code's queued
/// prompt) goes on in a later file: its turns count, and it is not cut.
#[test]
fn a_session_that_goes_on_in_a_later_file_is_not_cut() {
    let path = "claude-code-2.1.332/text/home/.claude/projects/-tmp-sess-w-claude-p5fp/b9bfad11-8a33-4aa3-838c-3dd9d1fa4ce4.jsonl";
    let dir = scratch("queued-then-run");
    let queued = dir.join("queued.jsonl");
    std::fs::write(&queued, recorded_lines(path)[..2].iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let out = bin("normalize").arg(&queued).arg(fixture(&format!("sessions/{path}"))).output().unwrap();
    let summary = json_lines(&out.stdout).pop().unwrap();
    assert_eq!((&summary["ok"], &summary["payload"]["turns"]), (&Value::Bool(true), &Value::from(1)), "{summary}");
}

/// A prompt queued in a session that never wrote a record is that session, interrupted,
/// also when the input holds another session's transcript (`cat` of a projects folder): it
/// was dropped, for the other session had begun.
#[test]
fn a_queued_session_beside_another_transcript_is_kept() {
    let queued = "claude-code-2.1.332/text/home/.claude/projects/-tmp-sess-w-claude-p5fp/b9bfad11-8a33-4aa3-838c-3dd9d1fa4ce4.jsonl";
    let whole = "claude-code-2.1.332/write/home/.claude/projects/-tmp-sess-w-claude-MG7C/e445dca5-6e06-42a7-9d75-cfb4f2560f4c.jsonl";
    let text = |path: &str, n: usize| recorded_lines(path)[..n].iter().map(|l| format!("{l}\n")).collect::<String>();
    let whole = text(whole, recorded_lines(whole).len());
    for input in [whole.clone() + &text(queued, 2), text(queued, 2) + &whole] {
        let events = json_lines(&crate::support::run("normalize", &[], input.as_bytes()));
        let summary = events.last().unwrap();
        let sessions = summary["payload"]["sessions"].as_array().unwrap();
        let session = |id: &str| sessions.iter().find(|s| s["sessionId"] == id).unwrap_or_else(|| panic!("{summary}"));
        assert_eq!(session("b9bfad11-8a33-4aa3-838c-3dd9d1fa4ce4")["status"], "interrupted", "{summary}");
        assert_eq!(session("e445dca5-6e06-42a7-9d75-cfb4f2560f4c")["ok"], true, "{summary}");
        assert_eq!(summary["ok"], false);
    }
}

/// Transcripts of several sessions in one input (`cat` of a projects folder) are read as the
/// same files given one by one: a record of another session ends the one being read. The
/// second session's first prompt was taken for an edit of the first's, which was dropped.
#[test]
fn concatenated_transcripts_are_read_as_their_files() {
    let transcripts = [
        ("claude-code-2.1.332/write/home/.claude/projects/-tmp-sess-w-claude-MG7C/e445dca5-6e06-42a7-9d75-cfb4f2560f4c.jsonl",
         "claude-code-2.1.332/text/home/.claude/projects/-tmp-sess-w-claude-p5fp/b9bfad11-8a33-4aa3-838c-3dd9d1fa4ce4.jsonl"),
        ("qwen-code-0.24.4/text/home/.qwen/projects/-tmp-sess-w-qwen-HDVQ/chats/004bbe26-812f-4183-ba51-7c8d9564649c.jsonl",
         "qwen-code-0.24.4/write/home/.qwen/projects/-tmp-sess-w-qwen-VWnc/chats/4cc0d773-402a-4c3f-8a63-1eddb3b15d98.jsonl"),
    ];
    let sessions = |out: &[u8]| -> Vec<(String, Value, Value)> {
        let summary = json_lines(out).pop().unwrap();
        let list = summary["payload"]["sessions"].as_array().cloned().unwrap_or_default();
        list.iter()
            .map(|s| (s["sessionId"].as_str().unwrap().to_owned(), s["ok"].clone(), s["turns"].clone()))
            .collect()
    };
    for (a, b) in transcripts {
        for (first, second) in [(a, b), (b, a)] {
            let (first, second) = (fixture(&format!("sessions/{first}")), fixture(&format!("sessions/{second}")));
            let files = bin("normalize").arg(&first).arg(&second).output().unwrap().stdout;
            let cat = [std::fs::read(&first).unwrap(), std::fs::read(&second).unwrap()].concat();
            let piped = crate::support::run("normalize", &[], &cat);
            assert_eq!(sessions(&files).len(), 2, "{first:?}");
            assert_eq!(sessions(&piped), sessions(&files), "{first:?} then {second:?}");
            assert!(sessions(&piped).iter().all(|(_, ok, turns)| ok == true && turns == 1), "{:?}", sessions(&piped));
        }
    }
    // A transcript inside another's open turn, which goes on after it (a session resumed
    // in a later file, or Claude Code writing into the wrong file): each record goes to its
    // own session, as with the three parts named.
    let (a, b) =
        (fixture(&format!("sessions/{}", transcripts[0].0)), fixture(&format!("sessions/{}", transcripts[0].1)));
    let a = std::fs::read_to_string(a).unwrap();
    let cut = a.match_indices('\n').nth(22).unwrap().0 + 1;
    let dir = scratch("transcript-inside");
    let parts = [dir.join("a1.jsonl"), b, dir.join("a2.jsonl")];
    std::fs::write(&parts[0], &a[..cut]).unwrap();
    std::fs::write(&parts[2], &a[cut..]).unwrap();
    let files = bin("normalize").args(&parts).output().unwrap().stdout;
    let cat: Vec<u8> = parts.iter().flat_map(|p| std::fs::read(p).unwrap()).collect();
    let piped = crate::support::run("normalize", &[], &cat);
    assert_eq!(sessions(&piped), sessions(&files));
    assert_eq!(sessions(&piped).iter().map(|(_, _, turns)| turns.clone()).collect::<Vec<_>>(), [1, 1]);
    // A resumed session's second invocation after another transcript: its running cost
    // (`cost-state`) counts from where the first left it, not again from nothing.
    let resume = fixture("sessions/claude-code-2.1.332/resume/home/.claude/projects/-tmp-sess-w-claude-VHfA/ad9931fc-bcc6-4a94-af69-7f5eba310793.jsonl");
    let resume = std::fs::read_to_string(resume).unwrap();
    let cut = resume.match_indices('\n').nth(31).unwrap().0 + 1;
    let between = std::fs::read_to_string(&parts[1]).unwrap();
    let alone = json_lines(&crate::support::run("normalize", &[], resume.as_bytes())).pop().unwrap();
    let split = [&resume[..cut], &between, &resume[cut..]].concat();
    let summary = json_lines(&crate::support::run("normalize", &[], split.as_bytes())).pop().unwrap();
    let resumed = summary["payload"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionId"] == "ad9931fc-bcc6-4a94-af69-7f5eba310793")
        .unwrap();
    assert_eq!(
        (&resumed["usage"], &resumed["turns"]),
        (&alone["payload"]["usage"], &alone["payload"]["turns"]),
        "{summary}"
    );
}

/// A record of another session inside a transcript (bookkeeping, or a record Claude Code
/// wrote into the wrong file) is read where it is: it neither cuts the open turn nor starts
/// a session; only another session's first prompt begins its transcript.
#[test]
fn a_stray_record_of_another_session_does_not_cut_the_turn() {
    let write = recorded_lines("claude-code-2.1.332/write/home/.claude/projects/-tmp-sess-w-claude-MG7C/e445dca5-6e06-42a7-9d75-cfb4f2560f4c.jsonl");
    let other = recorded_lines("claude-code-2.1.332/exit4/home/.claude/projects/-tmp-sess-w-claude-NwSl/1de788df-3690-413a-a406-a777762ea9c0.jsonl");
    let lines = |ls: &[String]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
    let plain = json_lines(&crate::support::run("normalize", &[], lines(&write).as_bytes()));
    // The write session as the summary tells it (among others when a queue line of the
    // other session, which never began, makes it a session of its own, cut).
    let write_session = |summary: &Value| -> (Value, Value) {
        let s = match summary["payload"]["sessions"].as_array() {
            Some(all) => all.iter().find(|s| s["sessionId"] == "e445dca5-6e06-42a7-9d75-cfb4f2560f4c").unwrap().clone(),
            None => summary.clone(),
        };
        let turns = if s["turns"].is_null() { s["payload"]["turns"].clone() } else { s["turns"].clone() };
        (s["ok"].clone(), turns)
    };
    let strays = other.iter().filter(|l| !l.contains("\"parentUuid\":null"));
    // Inside the turn, and, for a record that is no message, last: the kept branch was
    // the one ending at the stray record. (A stray message is read where it is: one that
    // asks for a tool, last, leaves the turn unanswered.)
    let places = |l: &str| if l.contains("\"type\":\"assistant\"") { vec![23] } else { vec![23, write.len()] };
    for (stray, at) in strays.flat_map(|l| places(l).into_iter().map(move |at| (l, at))) {
        let input = lines(&write[..at]) + stray + "\n" + &lines(&write[at..]);
        let events = json_lines(&crate::support::run("normalize", &[], input.as_bytes()));
        assert_eq!(write_session(events.last().unwrap()), write_session(plain.last().unwrap()), "{stray}");
        assert_eq!(of_type(&events, "tool.completed").len(), of_type(&plain, "tool.completed").len(), "{stray}");
        assert!(of_type(&events, "turn.interrupted").is_empty(), "{stray}");
    }
}

/// An edit (a second first prompt of the same session) is one whatever bytes its session id
/// carries that events do not (a control byte): the reader of several transcripts took a
/// raw difference for another session, so the edit became a second turn.
#[test]
fn an_edit_whose_id_differs_by_a_control_byte_is_an_edit() {
    let lines = recorded_lines("claude-code-2.1.332/text/home/.claude/projects/-tmp-sess-w-claude-p5fp/b9bfad11-8a33-4aa3-838c-3dd9d1fa4ce4.jsonl");
    let record = |pred: &dyn Fn(&Value) -> bool| -> Value {
        lines.iter().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|v| pred(v)).last().unwrap()
    };
    let edited = |suffix: &str| -> Vec<Value> {
        let mut prompt = record(&|v| v["type"] == "user" && v["parentUuid"].is_null());
        let mut answer = record(&|v| v["type"] == "assistant");
        let session = format!("{}{suffix}", prompt["sessionId"].as_str().unwrap());
        prompt["uuid"] = "eeeeeeee-0000-0000-0000-000000000001".into();
        answer["uuid"] = "eeeeeeee-0000-0000-0000-000000000002".into();
        answer["parentUuid"] = prompt["uuid"].clone();
        (prompt["sessionId"], answer["sessionId"]) = (session.clone().into(), session.into());
        let input: String =
            lines.iter().cloned().chain([prompt.to_string(), answer.to_string()]).map(|l| l + "\n").collect();
        json_lines(&crate::support::run("normalize", &[], input.as_bytes()))
    };
    let (plain, marked) = (edited(""), edited("\u{7}"));
    assert_eq!(plain.last().unwrap()["payload"]["turns"], 1);
    assert_eq!(marked.last().unwrap()["payload"], plain.last().unwrap()["payload"]);
}

/// Each run's end judges the sessions it read, and only those: a session cut after its
/// header is not excused by a later run's error, and a last file that holds no event names
/// no session of its own in the summary (found by a probe of the change that made a run's
/// end look only at the sessions it entered).
#[test]
fn a_run_s_end_judges_the_sessions_it_read() {
    let dir = scratch("run-ends");
    let header = dir.join("header.jsonl");
    std::fs::write(&header, "{\"type\":\"thread.started\",\"thread_id\":\"T1\"}\n").unwrap();
    let failing = dir.join("failing.jsonl");
    std::fs::write(&failing, "{\"type\":\"thread.started\",\"thread_id\":\"T3\"}\n{\"type\":\"turn.started\"}\n{\"type\":\"tool_call_v2\",\"id\":\"x\"}\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n").unwrap();
    let out = bin("normalize").arg(&header).arg(&failing).output().unwrap();
    let summary = json_lines(&out.stdout).pop().unwrap();
    let t1 = summary["payload"]["sessions"].as_array().unwrap().iter().find(|s| s["sessionId"] == "T1").unwrap();
    assert_eq!(t1["status"], "interrupted", "{summary}");
    let empty = dir.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let out = bin("normalize").arg(&failing).arg(&empty).output().unwrap();
    assert_eq!(json_lines(&out.stdout).pop().unwrap()["sessionId"], "T3");
    let out = bin("normalize").arg(&failing).arg(&header).arg(&failing).arg(&empty).output().unwrap();
    assert_eq!(json_lines(&out.stdout).pop().unwrap()["sessionId"], "T3", "the last run's, not the newest");
    // A session cut after its header, then failing in a later file, then going on: the
    // failure stands (the mark made at the first file's end is only a mark).
    let failed = dir.join("failed.jsonl");
    std::fs::write(&failed, "{\"type\":\"thread.started\",\"thread_id\":\"T1\"}\n{\"type\":\"turn.failed\",\"error\":{\"message\":\"boom 401 unauthorized\"}}\n").unwrap();
    let going_on = dir.join("going-on.jsonl");
    std::fs::write(&going_on, "{\"type\":\"thread.started\",\"thread_id\":\"T1\"}\n{\"type\":\"turn.started\"}\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n").unwrap();
    let out = bin("normalize").arg(&header).arg(&failed).arg(&going_on).output().unwrap();
    let summary = json_lines(&out.stdout).pop().unwrap();
    assert_eq!((&summary["ok"], &summary["status"]), (&Value::Bool(false), &Value::from("failed")), "{summary}");
}

/// A record written twice (one line repeated, or the whole file appended to itself) is read
/// once: the Codex, Copilot CLI and droid readers, whose records carry no chain to tell a
/// repeat by, give the figures of the file as it was, not a second turn or doubled usage.
#[test]
fn a_record_written_twice_is_read_once() {
    let files = [
        "codex-0.171.0/exit4/home/.codex/sessions/2026/12/01/rollout-2026-12-01T18-58-40-01a232f9-2e4e-74b0-b481-cfe5c68e8ffa.jsonl",
        "copilot-1.0.102/exit4/home/.copilot/session-state/e9c34986-7a4e-46af-9a45-5a59e83d0d7c/events.jsonl",
        "droid-0.225.2/exit4/home/.factory/sessions/-tmp-sess-w-droid-5edO/49adbf81-112f-4f29-945e-2c7c752f91f6.jsonl",
    ];
    let dir = scratch("repeated-records");
    for path in files {
        let source = fixture(&format!("sessions/{path}"));
        let name = source.file_name().unwrap().to_owned();
        let settings = source.with_extension("settings.json");
        let figures = |lines: &[String]| {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(&name), lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
            if settings.exists() {
                std::fs::copy(&settings, dir.join(&name).with_extension("settings.json")).unwrap();
            }
            let out = bin("normalize").arg(dir.join(&name)).output().unwrap();
            let summary = json_lines(&out.stdout).pop().unwrap();
            let p = &summary["payload"];
            (p["turns"].clone(), p["tools"].clone(), p["usage"].clone(), summary["ok"].clone())
        };
        let lines = recorded_lines(path);
        let original = figures(&lines);
        assert!(original.2["input_tokens"].as_u64().unwrap() > 0, "{path}");
        for n in 0..lines.len() {
            let mut repeated = lines.clone();
            repeated.insert(n + 1, lines[n].clone());
            assert_eq!(figures(&repeated), original, "{path}: line {} twice", n + 1);
        }
        assert_eq!(figures(&[lines.clone(), lines.clone()].concat()), original, "{path}: the file twice");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A session the agent says ended as it should, with no turn, did nothing rather than being
/// cut: Copilot CLI opened and quit (its routine shutdown), an ACP client's session it never
/// prompted (the transcript holds the client's requests, so it would hold a prompt).
#[test]
fn a_session_that_ended_with_nothing_asked_is_not_cut() {
    let copilot = recorded_lines(
        "copilot-1.0.102/exit4/home/.copilot/session-state/e9c34986-7a4e-46af-9a45-5a59e83d0d7c/events.jsonl",
    );
    let shutdown = copilot.iter().find(|l| l.contains("\"session.shutdown\"")).unwrap();
    let acp = std::fs::read_to_string(fixture("acp/claude-code-acp-text.input.jsonl")).unwrap();
    let lines: Vec<&str> = acp.lines().collect();
    let (request, response) =
        (lines[2], lines.iter().find(|l| l.starts_with("{\"jsonrpc\":\"2.0\",\"id\":1,")).unwrap());
    let sid = serde_json::from_str::<Value>(response).unwrap()["result"]["sessionId"].as_str().unwrap().to_owned();
    let idle = format!(
        "{}\n{}\n",
        request.replace("\"id\": 1", "\"id\": 7"),
        response.replace("\"id\":1,", "\"id\":7,").replace(&sid, "d0000000-0000-0000-0000-000000000001")
    );
    for (name, input) in [
        ("copilot", format!("{}\n{shutdown}\n", copilot[0])),
        ("acp, the idle session after", format!("{acp}{idle}")),
        ("acp, the idle session before", format!("{}\n{idle}{}\n", lines[0], lines[1..].join("\n"))),
    ] {
        let events = json_lines(&crate::support::run("normalize", &[], input.as_bytes()));
        let summary = events.last().unwrap();
        assert_eq!(summary["ok"], true, "{name}: {summary}");
    }
}

/// A line before a session file's first record, or before a stream's first event, belongs
/// to the session that follows: kept raw in it, after its start, never a session of its own.
#[test]
fn a_raw_line_before_the_first_event_is_the_following_sessions() {
    let transcript = "claude-code-2.1.332/write/home/.claude/projects/-tmp-sess-w-claude-MG7C/e445dca5-6e06-42a7-9d75-cfb4f2560f4c.jsonl";
    let stream = std::fs::read_to_string(fixture("claude/2.1.332/cancel.input.jsonl")).unwrap();
    let session = recorded_lines(transcript).iter().map(|l| format!("{l}\n")).collect::<String>();
    for (name, body) in [("transcript", session), ("stream", stream)] {
        let input = format!("npm WARN a notice\n{body}");
        let events = json_lines(&crate::support::run("normalize", &[], input.as_bytes()));
        let ids: std::collections::BTreeSet<&str> = events.iter().map(|e| e["sessionId"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), 1, "{name}: {ids:?}");
        assert_eq!(events[0]["type"], "session.started", "{name}");
        let raw = only(&events, "raw");
        assert_eq!((&raw["rawRef"]["line"], &raw["rawRef"]["endLine"]), (&Value::from(1), &Value::Null), "{name}");
        assert_eq!(raw["payload"]["line"], "npm WARN a notice", "{name}");
        assert!(events.last().unwrap()["payload"]["sessions"].is_null(), "{name}: one session");
    }
    // With no session at all, the raw lines are one of their own, as before.
    let events = json_lines(&crate::support::run("normalize", &[], b"not json\nnor this\n"));
    assert_eq!(of_type(&events, "raw").len(), 2);
    assert_eq!(events.last().unwrap()["payload"]["input"]["raw"], 2);
}

/// A walk reads a session file whose first line is damaged (stray bytes, garbage) when the
/// lines after it are a format it reads: the damaged line is kept raw, the records read.
#[test]
fn a_walk_reads_a_session_file_whose_first_line_is_damaged() {
    let transcript = "claude-code-2.1.332/write/home/.claude/projects/-tmp-sess-w-claude-MG7C/e445dca5-6e06-42a7-9d75-cfb4f2560f4c.jsonl";
    let lines = recorded_lines(transcript);
    let dir = scratch("damaged-first-line");
    std::fs::create_dir_all(dir.join("home/p")).unwrap();
    let rest: String = lines[1..].iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("home/p/garbage.jsonl"), format!("garbage!!\n{rest}")).unwrap();
    // Another session (its id changed), so its tools are not the first's, read again.
    let other = rest.replace("e445dca5-6e06-42a7-9d75-cfb4f2560f4c", "e445dca5-0000-42a7-9d75-cfb4f2560f4c");
    std::fs::write(dir.join("home/p/nul.jsonl"), format!("\u{0}\u{0}{}\n{other}", &lines[0][2..])).unwrap();
    std::fs::write(dir.join("home/p/notes.txt"), "a note\nnot a session\n{\"a\": 1}\n").unwrap();
    let out = bin("normalize").current_dir(&dir).arg("home").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events = json_lines(&out.stdout);
    let summary = events.last().unwrap();
    assert_eq!(summary["payload"]["input"]["skipped"], 1, "only the notes are skipped: {stderr}");
    assert!(stderr.contains("notes.txt: not a file of a format it reads"), "{stderr}");
    assert_eq!(of_type(&events, "raw").len(), 2, "{stderr}");
    assert_eq!(of_type(&events, "tool.completed").len(), 4, "both transcripts are read: {stderr}");
    // The notes alone: the run's error says a file was found and skipped, not "empty".
    for name in ["garbage.jsonl", "nul.jsonl"] {
        std::fs::remove_file(dir.join("home/p").join(name)).unwrap();
    }
    let out = bin("normalize").current_dir(&dir).arg("home").output().unwrap();
    let summary = json_lines(&out.stdout).pop().unwrap();
    assert_eq!(summary["error"]["category"], "INPUT_ERROR");
    assert!(summary["error"]["message"].as_str().unwrap().contains("the 1 file(s) found"), "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}
