//! `project`: golden renderings of every mode over canonical inputs, colour, live output,
//! and the behaviour of a Unix filter. The machine wire formats are checked in `machine`.

mod exports;
mod machine;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use minicode_output::projection::Mode;
use predicates::prelude::*;

use crate::support::*;

/// Canonical inputs in `fixtures/project/<case>.events.jsonl`: copies of normalized captures
/// (so a parser change does not move these goldens) and hand-written streams that reach
/// every event type, parallel and nested tools, several sessions and unknown types.
pub const CASES: &[&str] = &[
    "acp-elicitation",
    "claude-cancel",
    "claude-deny-write",
    "claude-err429",
    "claude-exit4",
    "claude-subagent",
    "claude-text-partial",
    "codex-cancel",
    "codex-err400",
    "codex-exit4",
    "codex-write",
    "empty",
    "garbage",
    "kitchen-sink",
    "two-sessions",
];

/// Every mode but `jsonl`, whose output must be the input itself: a new mode has goldens
/// or this test fails.
fn golden_modes() -> Vec<&'static str> {
    Mode::ALL.into_iter().filter(|m| *m != Mode::Jsonl).map(Mode::name).collect()
}

pub fn case_input(case: &str) -> Vec<u8> {
    read(&format!("project/{case}.events.jsonl"))
}

fn project(args: &[&str], input: &[u8]) -> Vec<u8> {
    let out = bin("project").args(args).write_stdin(input.to_vec()).output().expect("runs");
    assert!(out.status.success(), "project {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn golden_renderings_of_every_mode() {
    let mut failures = Vec::new();
    for case in CASES {
        for mode in golden_modes() {
            let out = project(&["--mode", mode], &case_input(case));
            if let Err(e) = golden(&format!("project/{case}.{mode}.out"), &out) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{} golden renderings differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_project_fixture_is_used() {
    let names: Vec<String> =
        std::fs::read_dir(fixture("project")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    for name in &names {
        let used = CASES.iter().any(|c| {
            *name == format!("{c}.events.jsonl") || golden_modes().iter().any(|m| *name == format!("{c}.{m}.out"))
        });
        assert!(used, "fixtures/project/{name} is not used by any test");
    }
}

#[test]
fn jsonl_is_the_input_byte_for_byte() {
    let mut all: Vec<Vec<u8>> = CASES.iter().map(|c| case_input(c)).collect();
    for dir in ["codex", "claude"] {
        for input in inputs(dir) {
            all.push(read(&input.replace(".input.jsonl", ".events.jsonl")));
        }
    }
    for input in all {
        assert!(project(&["--mode", "jsonl"], &input) == input, "jsonl changed an input");
    }
}

/// Lines as large as a batch go through the reading threads in their place among the
/// others, and lines larger than a batch may hold are read in order on the main thread.
#[test]
fn lines_of_every_size_keep_their_order() {
    let line = |seq: usize, len: usize| {
        format!(
            r#"{{"schema":"minicode.output.v1","eventId":"s:1:{seq}","type":"text","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s","turnId":1,"source":"normalizer","severity":"info","visibility":["normal","verbose","debug","machine"],"payload":{{"role":"assistant","delta":"{}"}}}}"#,
            char::from(b'a' + (seq % 26) as u8).to_string().repeat(len)
        ) + "\n"
    };
    let sizes = [10, 300 << 10, 10, 10, 5 << 20, 300 << 10, 300 << 10, 10, 1 << 20, 10, 5 << 20, 10];
    let input: String = (0..48).map(|i| line(i, sizes[i % sizes.len()])).collect();
    assert!(project(&["--mode", "jsonl"], input.as_bytes()) == input.as_bytes(), "jsonl changed the input");
}

#[test]
fn normal_is_the_default_and_hides_ids_tokens_and_raw_output() {
    let input = case_input("kitchen-sink");
    let normal = String::from_utf8(project(&[], &input)).unwrap();
    assert_eq!(normal.as_bytes(), project(&["--mode", "normal"], &input));
    for hidden in ["s1:1:", "c2", "1200 in", "test parses ... FAILED", "read_file", "garbage"] {
        assert!(!normal.contains(hidden), "normal shows {hidden:?}:\n{normal}");
    }
    for shown in ["✕ failed", "exit 101", "2.3s", "⊘ denied", "⏱ timeout", "→ allow the command", "? approval needed"]
    {
        assert!(normal.contains(shown), "normal lacks {shown:?}:\n{normal}");
    }
}

#[test]
fn verbose_and_debug_add_detail_in_layers() {
    let input = case_input("kitchen-sink");
    let verbose = String::from_utf8(project(&["--mode", "verbose"], &input)).unwrap();
    let debug = String::from_utf8(project(&["--mode", "debug"], &input)).unwrap();
    for shown in
        ["read_file", "tokens 1200 in", "∴ The test fails", "test parses ... FAILED", "in /work/app", "[CONTEXT]"]
    {
        assert!(verbose.contains(shown), "verbose lacks {shown:?}:\n{verbose}");
    }
    assert!(!verbose.contains("s1:1:"), "verbose shows event ids");
    for shown in
        ["s1:1:9", "correlationId=c2", "parentId=c4", "2026-01-01T00:00:09.000Z", r#"{"payload":{"toolCallId":"c2""#]
    {
        assert!(debug.contains(shown), "debug lacks {shown:?}");
    }
}

#[test]
fn a_child_agents_tools_are_nested_under_their_parent() {
    let normal = String::from_utf8(project(&[], &case_input("claude-subagent"))).unwrap();
    let lines: Vec<&str> = normal.lines().collect();
    let parent = lines.iter().position(|l| l.starts_with("▸ delegating")).expect("the Agent call");
    assert!(lines[parent + 1].starts_with("  ▸ running  echo from-subagent"), "{normal}");
    assert_eq!(lines.iter().filter(|l| l.starts_with('▸')).count(), 1, "one root tool only:\n{normal}");
}

#[test]
fn colour_only_when_asked_for_or_on_a_terminal() {
    let input = case_input("kitchen-sink");
    for mode in ["normal", "verbose", "debug"] {
        assert!(project(&["--mode", mode, "--color", "always"], &input).contains(&0x1b), "{mode} --color always");
        assert!(!project(&["--mode", mode, "--color", "never"], &input).contains(&0x1b), "{mode} --color never");
        // `bin` sets NO_COLOR; without it, auto still sees that stdout is not a terminal.
        assert!(!project(&["--mode", mode], &input).contains(&0x1b), "{mode} with NO_COLOR");
        let out =
            bin("project").args(["--mode", mode]).env_remove("NO_COLOR").write_stdin(input.clone()).output().unwrap();
        assert!(!out.stdout.contains(&0x1b), "{mode} auto into a pipe");
    }
    for mode in ["jsonl", "acp", "sse", "stream-json"] {
        assert!(!project(&["--mode", mode, "--color", "always"], &input).contains(&0x1b), "{mode} is never coloured");
    }
}

#[test]
fn control_bytes_in_the_input_never_reach_the_terminal() {
    let line = r#"{"schema":"minicode.output.v1","eventId":"s1:1:1","type":"text","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1","turnId":1,"source":"agent","severity":"info","visibility":["normal","verbose","debug","machine"],"rawRef":{"line":1},"payload":{"delta":"red \u001b[31mX\u001b[0m \u202eevil\r\n","role":"assistant"}}"#;
    for mode in ["normal", "verbose", "debug"] {
        let out = String::from_utf8(project(&["--mode", mode], format!("{line}\n").as_bytes())).unwrap();
        assert!(!out.chars().any(|c| c.is_control() && c != '\n' || c == '\u{202e}'), "{mode}: {out:?}");
        assert!(out.contains("red X evil"), "{mode}: {out:?}");
    }
}

#[test]
fn control_bytes_in_ids_and_names_never_reach_the_terminal_or_a_report() {
    // Found by fuzzing: a DEL in a tool name went to the verbose rendering as it was.
    let input = concat!(
        r#"{"schema":"minicode.output.v1","eventId":"s1:0:1","type":"session.started","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1","turnId":0,"source":"agent","severity":"info","visibility":["verbose","debug","machine"],"rawRef":{"line":1},"payload":{"provider":"acme\u001b[2J","providerVersion":"1\u0007"}}"#,
        "\n",
        "{\"schema\":\"minicode.output.v1\",\"eventId\":\"s1:1:2\",\"type\":\"tool.started\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"sessionId\":\"s1\",\"turnId\":1,\"correlationId\":\"c\u{7f}1\",\"source\":\"agent\",\"severity\":\"info\",\"status\":\"started\",\"visibility\":[\"normal\",\"verbose\",\"debug\",\"machine\"],\"rawRef\":{\"line\":2},\"payload\":{\"toolCallId\":\"c\u{7f}1\",\"name\":\"Ba\u{7f}sh\\u001b[31m\",\"qualified\":\"x/Ba\u{9b}sh\",\"kind\":\"other\"}}\n",
    );
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    for mode in ["normal", "verbose", "debug"] {
        let out = String::from_utf8(project(&["--mode", mode], input.as_bytes())).unwrap();
        assert!(!out.chars().any(bad), "{mode}: {out:?}");
    }
    assert!(String::from_utf8(project(&["--mode", "verbose"], input.as_bytes())).unwrap().contains("Bash"));
    for format in ["text", "markdown", "json"] {
        let out = bin("summarize").args(["--format", format]).write_stdin(input).output().unwrap().stdout;
        let out = String::from_utf8(out).unwrap();
        assert!(!out.chars().any(bad) && !out.contains("\\u001b") && !out.contains("\\u0007"), "{format}: {out:?}");
    }
}

#[test]
fn a_line_break_in_a_session_id_cannot_forge_sse_fields() {
    // Found by fuzzing: the session id went into the frame's `id:` field as it was, so its
    // line breaks started new fields of the peer's choosing.
    let text = |session: &str, n: u32| {
        format!(
            r#"{{"schema":"minicode.output.v1","eventId":"e{n}","type":"text","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"{session}","turnId":1,"source":"agent","severity":"info","visibility":["normal","verbose","debug","machine"],"rawRef":{{"line":{n}}},"payload":{{"delta":"hi","role":"assistant"}}}}"#
        ) + "\n"
    };
    let input = text(r"s\ndata: forged\r\nevent: done", 1) + &text("s data: forged event: done", 2);
    let out = String::from_utf8(project(&["--mode", "sse"], input.as_bytes())).unwrap();
    let fields: Vec<&str> = out.lines().filter(|l| !l.is_empty()).map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(fields, ["id", "event", "data", "id", "event", "data", "id", "event", "data"], "{out}");
    // The two sessions look alike in an id, so they share the count: ids stay unique.
    let ids: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("id: ")).collect();
    assert_eq!(ids[..2], ["s data: forged event: done-1", "s data: forged event: done-2"]);
}

#[test]
fn help_lists_the_modes_and_exit_codes() {
    let assert = bin("project").arg("--help").assert().success();
    let help = predicate::str::contains("stream-json").and(predicate::str::contains("Exit status"));
    assert.stdout(help.and(predicate::str::contains("--after")).and(predicate::str::contains("--color")));
    bin("project").arg("--version").assert().success().stdout(predicate::str::contains("project"));
}

#[test]
fn unknown_flags_and_modes_are_usage_errors() {
    bin("project").arg("--no-such-flag").assert().code(2).stderr(predicate::str::contains("--no-such-flag"));
    bin("project").args(["--mode", "html"]).assert().code(2).stderr(predicate::str::contains("stream-json"));
    bin("project").args(["--color", "sometimes"]).assert().code(2);
    bin("project")
        .args(["--after", "s1-1"])
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--mode sse"));
}

#[test]
fn empty_input_gives_empty_output_except_stream_json() {
    for mode in ["normal", "verbose", "debug", "jsonl", "acp", "sse"] {
        bin("project").args(["--mode", mode]).write_stdin("").assert().success().stdout("");
    }
    let out = project(&["--mode", "stream-json"], b"");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2);
    assert_eq!((lines[0]["type"].as_str(), lines[0]["subtype"].as_str()), (Some("system"), Some("init")));
    assert_eq!((lines[1]["type"].as_str(), lines[1]["is_error"].as_bool()), (Some("result"), Some(true)));
}

#[test]
fn a_malformed_line_is_named_on_stderr_and_the_rest_still_rendered() {
    let mut input = case_input("codex-exit4");
    input.splice(0..0, b"{not json\n".iter().copied());
    let assert = bin("project").write_stdin(input).assert().code(1).stderr(predicate::str::contains("line 1"));
    assert.stdout(predicate::str::contains("✕ failed  exit 4"));
}

#[test]
fn jsonl_keeps_fields_of_known_types_this_version_does_not_know() {
    // A newer producer's text event: a top-level field and a payload field unknown here.
    let line = r#"{"schema":"minicode.output.v1","eventId":"s1:1:1","type":"text","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1","turnId":1,"source":"agent","severity":"info","visibility":["normal","verbose","debug","machine"],"rawRef":{"line":1},"payload":{"delta":"hi","role":"assistant","cached":true},"trace":{"span":"a1"}}"#;
    let input = format!("{line}\r\n");
    assert_eq!(String::from_utf8(project(&["--mode", "jsonl"], input.as_bytes())).unwrap(), format!("{line}\n"));
    assert_eq!(String::from_utf8(project(&["--mode", "normal"], input.as_bytes())).unwrap(), "hi\n");
}

#[test]
fn unknown_event_types_are_carried_or_skipped_but_never_fatal() {
    let line = r#"{"schema":"minicode.output.v1","eventId":"s1:1:1","type":"brand.new","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1","turnId":1,"source":"agent","severity":"info","visibility":["normal","verbose","debug","machine"],"rawRef":{"line":1},"payload":{"x":[1,2]},"extra":true}"#;
    let input = format!("{line}\n");
    assert_eq!(project(&["--mode", "normal"], input.as_bytes()), b"");
    assert_eq!(String::from_utf8(project(&["--mode", "verbose"], input.as_bytes())).unwrap(), "· brand.new\n");
    assert_eq!(project(&["--mode", "jsonl"], input.as_bytes()), input.as_bytes());
    let acp = json_lines(&project(&["--mode", "acp"], input.as_bytes()));
    assert_eq!(acp[0]["method"], "_minicode/brand.new");
    assert_eq!(acp[0]["params"]["event"]["extra"], true);
    let sse = String::from_utf8(project(&["--mode", "sse"], input.as_bytes())).unwrap();
    assert!(sse.starts_with("id: s1-1\nevent: raw\n"), "{sse}");
}

#[test]
fn output_is_live_while_the_input_is_still_open() {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("project"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let input = String::from_utf8(case_input("codex-exit4")).unwrap();
    let started = input.lines().find(|l| l.contains("\"tool.started\"")).unwrap();
    writeln!(stdin, "{started}").unwrap();
    stdin.flush().unwrap();
    // Blocks until project writes the line: it must not wait for the end of input.
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "▸ running  printf 'line1\\nline2\\n'; exit 4\n");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// `project --mode <mode>` running, its stdin, stdout and stderr piped.
fn spawn_project(mode: &str) -> std::process::Child {
    Command::new(assert_cmd::cargo::cargo_bin("project"))
        .args(["--mode", mode])
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("project starts")
}

/// A tool's output with a token in it, not scrubbed before: `project` scrubs what it shows.
const UNSCRUBBED: &str = r#"{"schema":"minicode.output.v1","eventId":"s9:1:2","type":"tool.completed","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s9","turnId":1,"source":"tool","severity":"info","status":"completed","visibility":["verbose","debug","machine"],"rawRef":{"line":3},"payload":{"toolCallId":"c1","name":"shell","kind":"shell","output":{"exit_code":0,"stdout":"export GH=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\n"}}}"#;

/// `project` reads a large input's lines into events in batches, on two threads, and shows
/// them in order; an input that trickles in is read a few lines at a time, on one. What
/// they show, on stdout and on stderr, is the same.
#[test]
fn reading_in_batches_on_two_threads_changes_nothing() {
    let mut input = Vec::new();
    for k in 0..80 {
        input.extend(case_input("kitchen-sink"));
        input.extend(format!("{UNSCRUBBED}\n\n").as_bytes());
        if k == 41 {
            input.extend(b"{\"not an event\": true}\n");
        }
    }
    assert!(input.len() > 4 * 256 * 1024, "several batches");
    for mode in ["verbose", "atif", "ag-ui"] {
        let whole = bin("project").args(["--mode", mode]).write_stdin(input.clone()).output().expect("runs");
        let mut child = spawn_project(mode);
        let mut stdin = child.stdin.take().unwrap();
        let lines: Vec<Vec<u8>> = input.split_inclusive(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        let writer = std::thread::spawn(move || {
            for few in lines.chunks(8) {
                stdin.write_all(&few.concat()).unwrap();
                stdin.flush().unwrap();
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        });
        let trickled = child.wait_with_output().unwrap();
        writer.join().unwrap();
        assert_eq!(whole.status.code(), Some(1), "{mode}: the line that is no event");
        assert_eq!(trickled.status.code(), whole.status.code(), "{mode}");
        assert_eq!(String::from_utf8_lossy(&trickled.stderr), String::from_utf8_lossy(&whole.stderr), "{mode}");
        assert!(String::from_utf8_lossy(&whole.stderr).contains("line 1597: not a canonical event"), "{mode}");
        assert!(whole.stdout == trickled.stdout, "{mode}: the outputs differ");
        assert!(!String::from_utf8_lossy(&whole.stdout).contains("ghp_Synth3t1c"), "{mode}");
    }
}

#[test]
fn a_closed_stdout_ends_quietly() {
    use std::io::Read;
    let big = read("codex/bigout.events.jsonl").repeat(20);
    for mode in ["jsonl", "verbose"] {
        let mut child = spawn_project(mode);
        let mut stdin = child.stdin.take().unwrap();
        let big = big.clone();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&big);
        });
        let mut first = [0u8; 10];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        let status = child.wait().unwrap();
        writer.join().unwrap();
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(status.success(), "{mode}: exit {status:?}, stderr {err:?}");
        assert!(err.is_empty(), "{mode}: stderr {err:?}");
    }
}

#[test]
fn projections_know_nothing_about_providers() {
    fn scan(dir: &std::path::Path) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                scan(&path);
            } else {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(!text.contains("crate::provider"), "{} uses crate::provider", path.display());
            }
        }
    }
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    scan(&src.join("projection"));
    assert!(!std::fs::read_to_string(src.join("projection.rs")).unwrap().contains("crate::provider"));
}

/// Provider output read directly is normalized first: what `project` shows of a capture is
/// what it shows of `normalize`'s output, in every mode; `--strict` keeps the old error.
#[test]
fn provider_output_is_normalized_first() {
    // Gemini CLI's notices come before its first event; a notice before Claude Code's too.
    let cases = ["claude/exit4", "codex/exit4", "opencode/exit4", "acp/codex-acp-exit4", "gemini/cancel"];
    let cases =
        cases.iter().chain(&["gemini/constructed/notices"]).map(|c| (c.to_string(), read(&format!("{c}.input.jsonl"))));
    let notice = [b"npm WARN a notice\n\n".as_slice(), &read("claude/exit4.input.jsonl")].concat();
    for (case, input) in cases.chain([("a notice, then claude/exit4".to_owned(), notice)]) {
        let events = run("normalize", &[], &input);
        for mode in Mode::ALL.map(Mode::name) {
            let piped = project(&["--mode", mode], &events);
            let direct = project(&["--mode", mode], &input);
            assert!(piped == direct, "{case} --mode {mode}: project of the capture differs from normalize | project");
        }
    }
    // Several files, one with an oversized line: a run per file, the line kept as `raw`.
    let files = provider_files("project-provider-files");
    let events = bin("normalize").args(&files).output().unwrap().stdout;
    let text = String::from_utf8_lossy(&events);
    assert!(text.contains(r#""reason":"oversized""#) && text.contains("codex-2.jsonl"), "{text}");
    for mode in ["jsonl", "normal", "verbose"] {
        let piped = project(&["--mode", mode], &events);
        let direct = bin("project").args(["--mode", mode]).args(&files).output().unwrap().stdout;
        assert!(piped == direct, "--mode {mode}: project of two files differs from normalize | project");
    }
    // Canonical files beside agents' own: each file is read as what it is.
    let (files, expected) = mixed_files("project-mixed-files");
    for mode in ["normal", "verbose", "otlp"] {
        let piped = project(&["--mode", mode], &expected);
        let direct = bin("project").args(["--mode", mode]).args(&files).output().unwrap().stdout;
        assert!(piped == direct, "--mode {mode}: mixed files differ from reading each as it is");
    }
    let strict = bin("project").arg("--strict").write_stdin(read("codex/exit4.input.jsonl")).output().unwrap();
    assert_eq!(strict.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&strict.stderr).contains("line 1: not a canonical event"));
}

/// `s9`'s start as `normalize` writes it, stamped with the scrubbing of `revision`.
fn s9_started(revision: &str) -> String {
    format!(
        r#"{{"schema":"minicode.output.v1","eventId":"s9:0:1","type":"session.started","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s9","turnId":0,"source":"agent","severity":"info","visibility":["verbose","debug","machine"],"rawRef":{{"line":1}},"payload":{{"provider":"p","scrubbedBy":"{revision}"}}}}"#
    )
}

/// `project` scrubs what it shows, except the events of a session that `normalize` says
/// this build's scrubbing scrubbed (they are shown as they are, here with a token in them
/// to tell), whether they are read in batches or one by one.
#[test]
fn only_this_builds_stamp_spares_a_session_a_second_scrub() {
    let this = minicode_output::scrub::REVISION;
    let secret = "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";
    let other_session = UNSCRUBBED.replace(r#""sessionId":"s9""#, r#""sessionId":"s8""#);
    let cases: [(&str, String, bool); 5] = [
        ("stamped", format!("{}\n{UNSCRUBBED}\n", s9_started(this)), true),
        ("another revision", format!("{}\n{UNSCRUBBED}\n", s9_started("minicode-output/scrub-0")), false),
        ("before its start", format!("{UNSCRUBBED}\n{}\n", s9_started(this)), false),
        ("another session than its id says", format!("{}\n{other_session}\n", s9_started(this)), false),
        (
            "no stamp",
            format!("{}\n{UNSCRUBBED}\n", s9_started(this).replace(&format!(r#","scrubbedBy":"{this}""#), "")),
            false,
        ),
    ];
    // Past a batch, the lines are read on the reading threads.
    let batches = case_input("kitchen-sink").repeat(300 * 1024 / case_input("kitchen-sink").len() + 1);
    for (name, input, shown) in cases {
        for (args, input) in [
            (&["--mode", "verbose"][..], input.clone().into_bytes()),
            (&["--mode", "atif"][..], [batches.clone(), input.clone().into_bytes()].concat()),
            (&["--mode", "otlp", "--with-content"][..], input.clone().into_bytes()),
        ] {
            let out = String::from_utf8(project(args, &input)).unwrap();
            assert_eq!(out.contains(secret), shown, "{name}, {args:?}");
            assert_eq!(out.contains("[REDACTED:github-token]"), !shown, "{name}, {args:?}");
        }
    }
}

/// What the stamp spares would not change: every capture in the fixtures, normalized,
/// shows the same in every mode with its stamps as without them (scrubbed once more).
#[test]
fn a_second_scrub_of_what_normalize_wrote_changes_nothing() {
    let mut files = Vec::new();
    for dir in
        ["claude", "codex", "acp", "gemini", "opencode", "copilot", "cline", "droid", "qwen", "amp", "cursor", "kilo"]
    {
        let dir = fixture(dir);
        files.extend(files_under(&dir, &[".input.jsonl"]).into_iter().map(|f| dir.join(f).display().to_string()));
    }
    files.push(fixture("scrub/labels.input.jsonl").display().to_string());
    // And a Claude run that says every secret of the corpus, as text and as tool output.
    let mut run = String::from(r#"{"type":"system","subtype":"init","session_id":"corpus"}"#) + "\n";
    for (i, line) in String::from_utf8(read("scrub/secrets.jsonl")).unwrap().lines().enumerate() {
        let text = &json_lines(line.as_bytes())[0]["text"];
        let message = |role: &str, content: serde_json::Value| serde_json::json!({"type": role, "session_id": "corpus", "message": {"id": format!("m{i}"), "role": role, "content": [content]}});
        for line in [
            message("assistant", serde_json::json!({"type": "text", "text": text})),
            message(
                "assistant",
                serde_json::json!({"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {"command": "cat"}}),
            ),
            message(
                "user",
                serde_json::json!({"type": "tool_result", "tool_use_id": format!("t{i}"), "content": text}),
            ),
        ] {
            run += &format!("{line}\n");
        }
    }
    files.push("-".into());
    let out = bin("normalize").args(&files).write_stdin(run).output().expect("runs");
    let stamped = out.stdout;
    let stamp = format!(r#","scrubbedBy":"{}""#, minicode_output::scrub::REVISION);
    let text = String::from_utf8(stamped.clone()).unwrap();
    let starts = text.matches(r#""type":"session.started""#).count();
    assert!(starts > 100 && text.matches(&stamp).count() == starts, "every session is stamped");
    let unstamped = text.replace(&stamp, "").into_bytes();
    assert!(text.matches("[REDACTED:").count() > 1000, "the corpus's secrets are in it");
    for mode in ["normal", "verbose", "atif", "otlp", "sse", "stream-json"] {
        let args = ["--mode", mode];
        let run = |input: &[u8]| bin("project").args(args).write_stdin(input.to_vec()).output().expect("runs");
        let (a, b) = (run(&stamped), run(&unstamped));
        assert_eq!(a.status.code(), b.status.code(), "{mode}");
        assert!(a.stdout == b.stdout, "{mode}: a second scrub changed the output");
    }
}

/// A stamp holds for the output that wrote it: canonical events of another writer that
/// reuse a session id (`s1`, as every output without ids names its first session) are
/// scrubbed, whether they start their session again or not, in one input or in two files.
#[test]
fn a_stamp_ends_with_its_output() {
    let claude = concat!(
        r#"{"type":"system","subtype":"init","model":"m","cwd":"/x","tools":[]}"#,
        "\n",
        r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hello"}]}}"#,
        "\n"
    );
    let first = run("normalize", &[], claude.as_bytes());
    assert!(String::from_utf8_lossy(&first).contains(r#""sessionId":"s1""#));
    let secret = "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";
    let text = format!(
        r#"{{"schema":"minicode.output.v1","eventId":"s1:1:2","type":"text","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1","turnId":1,"source":"agent","severity":"info","visibility":["normal","verbose","debug","machine"],"payload":{{"delta":"token {secret}","role":"assistant"}}}}"#
    );
    let restarted = s9_started("minicode-output/scrub-0").replace("s9", "s1");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("stamp-ends");
    std::fs::create_dir_all(&dir).unwrap();
    let first_file = dir.join("first.jsonl");
    std::fs::write(&first_file, &first).unwrap();
    for (name, second) in
        [("started again by an older build", format!("{restarted}\n{text}\n")), ("no start", format!("{text}\n"))]
    {
        let second_file = dir.join("second.jsonl");
        std::fs::write(&second_file, &second).unwrap();
        let cat = [first.clone(), second.clone().into_bytes()].concat();
        let files = bin("project").args(["--mode", "normal"]).arg(&first_file).arg(&second_file).output().unwrap();
        for out in [project(&["--mode", "normal"], &cat), files.stdout] {
            let out = String::from_utf8(out).unwrap();
            assert!(!out.contains(secret) && out.contains("[REDACTED:github-token]"), "{name}: {out}");
        }
    }
}

/// A cut can make a secret of the start of a longer run: what `normalize` and `truncate`
/// cut of a stamped session is scrubbed again, so the stamp stays true.
#[test]
fn what_a_cut_leaves_of_a_stamped_session_is_scrubbed() {
    let key = "AKIA3U23XXWXN4WGI4QZ";
    let text = format!("{} {key}{}", "x".repeat(27), "B".repeat(150));
    let claude = format!(
        "{}\n{}\n",
        r#"{"type":"system","subtype":"init","session_id":"t1","model":"m","cwd":"/x","tools":[]}"#,
        serde_json::json!({"type": "assistant", "session_id": "t1", "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": text}]}})
    );
    let whole = run("normalize", &[], claude.as_bytes());
    assert!(String::from_utf8_lossy(&whole).contains(key), "no key as a whole: the run went on");
    let cut = run("normalize", &["--max-bytes", "100"], claude.as_bytes());
    let head = run("truncate", &["--max-bytes", "48", "--keep", "head"], &whole);
    for (name, events) in [("normalize", cut), ("truncate", head)] {
        let events = String::from_utf8(events).unwrap();
        assert!(events.contains("scrubbedBy") && !events.contains(key), "{name}: {events}");
        for mode in ["normal", "verbose"] {
            let out = String::from_utf8(project(&["--mode", mode], events.as_bytes())).unwrap();
            assert!(!out.contains(key), "{name}, {mode}: {out}");
        }
    }
}
