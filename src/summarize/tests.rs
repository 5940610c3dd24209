//! Unit tests: what a report keeps of a stream, the record's authority, bounds, and the
//! algebra of merging (associative, and equal to summarizing the concatenated streams).

use proptest::prelude::*;

use super::*;
use crate::event::*;

fn ev(session: &str, turn: u64, line: u64, body: Body) -> Event {
    Event {
        event_id: format!("{session}:{turn}:{line}"),
        timestamp: String::new(),
        session_id: session.into(),
        turn_id: turn,
        correlation_id: None,
        parent_id: None,
        source: Source::Agent,
        severity: Severity::Info,
        status: None,
        visibility: Visibility::ALL,
        raw_ref: RawRef::span(line, line),
        body,
    }
}

fn record(ok: bool, usage: Usage, sessions: Vec<SessionFigures>) -> Event {
    let error =
        (!ok).then(|| ErrorInfo { category: ErrorCategory::ProviderError, message: "boom".into(), action: None });
    let figures = SummaryFigures {
        usage,
        input: InputHealth { lines: 9, events: 8, ..Default::default() },
        sessions,
        ..Default::default()
    };
    let mut e = ev("s1", 1, 9, Body::Summary(Box::new(Summary { ok, error, prompt: None, figures })));
    e.status = Some(if ok { Status::Completed } else { Status::Failed });
    e
}

fn usage(input: Option<u64>, output: Option<u64>) -> Usage {
    Usage { input_tokens: input, output_tokens: output, ..Default::default() }
}

fn shell_start(id: &str, cmd: &str) -> Body {
    Body::ToolStarted(ToolStarted {
        tool_call_id: id.into(),
        name: "shell".into(),
        qualified: "shell".into(),
        kind: ToolKind::Shell,
        target: None,
        input: None,
        command: Some(cmd.into()),
        cwd: None,
    })
}

fn tool_end(id: &str, kind: ToolKind, outcome: Outcome, output: Option<ShellResult>) -> Body {
    Body::ToolEnded(ToolEnded {
        outcome,
        tool_call_id: id.into(),
        name: "shell".into(),
        kind,
        duration_ms: None,
        output,
        error: None,
    })
}

fn summarize(events: &[Event]) -> Report {
    let mut s = Summarizer::new();
    events.iter().for_each(|e| s.event(e.clone()));
    s.finish()
}

#[test]
fn usage_repeated_on_several_lines_counts_once_and_unknown_stays_unknown() {
    let u = usage(Some(100), None);
    let events = vec![
        ev("s1", 1, 1, Body::TurnStarted(TurnStarted { prompt: Some("hi".into()) })),
        ev("s1", 1, 2, Body::Usage(u)),
        ev("s1", 1, 3, Body::Usage(u)),
        ev(
            "s1",
            1,
            4,
            Body::TurnEnded(TurnEnded {
                outcome: Outcome::Completed,
                stop_reason: None,
                duration_ms: Some(5),
                error: None,
            }),
        ),
    ];
    let r = summarize(&events);
    let s = &r.sessions[0];
    assert_eq!(s.usage, Tokens { input_tokens: Some(100), ..Tokens::default() });
    assert_eq!(s.cost, None);
    let json = r.to_json();
    assert!(
        json.contains("\"input_tokens\": 100") && !json.contains("output_tokens") && !json.contains("estimatedUsd"),
        "{json}"
    );
    // Without a record the run is incomplete, and so not ok.
    assert!(!r.ok());
    assert_eq!((r.runs().total, r.runs().incomplete, r.verdict()), (1, 1, Verdict::Incomplete));
    assert_eq!(r.input().lines, 4);
}

#[test]
fn without_a_record_redactions_are_counted_from_the_markers() {
    let text = |t: &str| Body::Text(Text { delta: t.into(), role: Role::Assistant, piece: Piece::Next });
    let events = vec![
        ev("s1", 1, 1, text("token [REDACTED:github-token] and [REDACTED:aws-key] [REDACTED:github-token]")),
        ev("s1", 1, 2, text("not one: [REDACTED:] [REDACTED:a b] [REDACTED:open")),
        ev(
            "s1",
            1,
            3,
            text(&format!(
                "64 bytes: [REDACTED:{}] 65: [REDACTED:{}] [REDACTED:[REDACTED:x]",
                "k".repeat(64),
                "l".repeat(65)
            )),
        ),
        ev("s1", 1, 4, text("[REDACTED:")),
    ];
    let r = summarize(&events);
    let long = "k".repeat(64);
    assert_eq!(
        r.input().redactions.iter().collect::<Vec<_>>(),
        [("aws-key", 1), ("github-token", 2), (long.as_str(), 1), ("x", 1)]
    );
}

#[test]
fn the_record_states_usage_duration_and_ok() {
    let mut events = vec![
        ev("s1", 1, 1, Body::TurnStarted(TurnStarted { prompt: None })),
        ev("s1", 1, 2, Body::Usage(usage(Some(7), Some(1)))),
        ev(
            "s1",
            1,
            3,
            Body::TurnEnded(TurnEnded {
                outcome: Outcome::Completed,
                stop_reason: None,
                duration_ms: None,
                error: None,
            }),
        ),
    ];
    events.push(record(true, Usage { cost_usd: Some(0.25), ..usage(Some(70), Some(10)) }, vec![]));
    let r = summarize(&events);
    assert!(r.ok());
    assert_eq!(r.sessions[0].usage.input_tokens, Some(70));
    assert_eq!(r.sessions[0].cost.map(Cost::usd), Some(0.25));
    assert_eq!(r.input().lines, 9);
    // A failed record makes the run, and its lone session, not ok, even with no failed turn.
    events.pop();
    events.push(record(false, Usage::default(), vec![]));
    let r = summarize(&events);
    assert!(!r.ok() && !r.sessions[0].ok);
    assert_eq!(r.verdict(), Verdict::Failed);
    assert_eq!(r.headline().and_then(|f| f.error).map(|e| e.message), Some("boom".into()));
}

#[test]
fn no_input_is_not_ok() {
    let r = summarize(&[]);
    assert!(!r.ok());
    assert_eq!(r.headline().and_then(|f| f.error).map(|e| e.category), Some(ErrorCategory::InputError));
}

#[test]
fn a_failing_shell_keeps_exit_code_byte_counts_and_a_bounded_excerpt() {
    let out = "x".repeat(1000) + "\nlast line\n";
    let events = vec![
        ev("s1", 1, 1, Body::TurnStarted(TurnStarted { prompt: None })),
        ev("s1", 1, 2, shell_start("c1", "make test")),
        ev(
            "s1",
            1,
            3,
            tool_end(
                "c1",
                ToolKind::Shell,
                Outcome::Failed,
                Some(ShellResult { exit_code: Some(2), stdout: Some(out.clone()), ..Default::default() }),
            ),
        ),
        ev("s1", 1, 4, shell_start("c2", "true")),
        ev("s1", 1, 5, tool_end("c2", ToolKind::Shell, Outcome::Completed, None)),
        record(true, Usage::default(), vec![]),
    ];
    let s = &summarize(&events).sessions[0];
    let t = &s.failing_tools[0];
    assert_eq!((t.exit_code, t.command.as_deref()), (Some(2), Some("make test")));
    let excerpt = t.excerpt.as_deref().unwrap();
    assert!(excerpt.len() <= limits::EXCERPT && excerpt.ends_with("last line"), "{excerpt:?}");
    assert_eq!(
        (s.shell.count, s.shell.exit_non_zero, s.shell.exit_unknown, s.shell.stdout_bytes),
        (2, 1, 1, out.len() as u64)
    );
    let c2 = &s.shell.commands[1];
    assert_eq!((c2.exit_code, c2.has_output, c2.stdout_bytes), (None, false, 0));
    let json = summarize(&events).to_json();
    assert!(!json.contains("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
}

#[test]
fn lists_and_tallies_stay_within_their_bounds() {
    let mut events = vec![ev("s1", 1, 1, Body::TurnStarted(TurnStarted { prompt: None }))];
    for i in 0..300u64 {
        let id = format!("t{i}");
        events.push(ev("s1", 1, 2, shell_start(&id, "false")));
        events.push(ev("s1", 1, 2, tool_end(&id, ToolKind::Shell, Outcome::Failed, None)));
        events.push(ev(
            "s1",
            1,
            2,
            Body::FileChanged(FileChanged { path: format!("f{i:03}"), change: FileChange::Add, tool_call_id: None }),
        ));
        events.push(ev("s1", 1, 2, Body::ContextCompacted(ContextCompacted { reason: format!("r{i:03}") })));
    }
    let s = &summarize(&events).sessions[0];
    assert_eq!((s.failing_tools.len(), s.shell.commands.len()), (limits::FAILING_TOOLS, limits::SHELL_COMMANDS));
    assert_eq!((s.tools.failed, s.shell.count, s.files.changes), (300, 300, 300));
    assert_eq!(s.files.iter().count(), limits::FILES);
    assert!(s.files.has_more() && s.files.iter().next().map(|(p, _)| p) == Some("f000"));
    assert_eq!((s.context.reasons.total(), s.context.reasons.iter().count()), (300, limits::TALLY_KEYS + 1));
}

#[test]
fn markdown_cells_cannot_break_the_table() {
    let events = vec![
        ev("s1", 1, 1, Body::TurnStarted(TurnStarted { prompt: None })),
        ev("s1", 1, 2, shell_start("c1", "a | b\nc")),
        ev(
            "s1",
            1,
            3,
            tool_end(
                "c1",
                ToolKind::Shell,
                Outcome::Failed,
                Some(ShellResult { stderr: Some("x|y\n*z*".into()), ..Default::default() }),
            ),
        ),
        record(true, Usage::default(), vec![]),
    ];
    let md = to_markdown(&summarize(&events));
    assert!(md.contains("<code>a &#124; b<br>c</code>") && md.contains("x&#124;y<br>&#42;z&#42;"), "{md}");
}

/// Summarizes lines the fast way ([`Summarizer::line`]) and the typed way ([`Summarizer::event`],
/// control bytes removed first as `line` does).
fn both_ways(lines: &[String]) -> (Report, Report) {
    let (mut fast, mut typed) = (Summarizer::new(), Summarizer::new());
    for l in lines.iter().filter(|l| !l.trim().is_empty()) {
        if fast.line(l).is_err() {
            fast.invalid(l.as_bytes());
        }
        if typed.typed_line(l).is_err() {
            typed.invalid(l.as_bytes());
        }
    }
    (fast.finish(), typed.finish())
}

#[test]
fn the_fast_way_reads_every_fixture_as_the_typed_way_does() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files = 0;
    for dir in std::fs::read_dir(&root).unwrap() {
        let Ok(entries) = std::fs::read_dir(dir.unwrap().path()) else { continue };
        for f in entries.map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(".events.jsonl")) {
            let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
            let lines: Vec<String> = text.lines().map(str::to_owned).collect();
            let (fast, typed) = both_ways(&lines);
            assert_eq!(fast, typed, "{}", f.display());
            files += 1;
        }
    }
    assert!(files > 50, "only {files} fixtures");
}

#[test]
fn the_fast_way_rejects_what_the_typed_way_rejects() {
    let bad = [
        r#"{"schema":"minicode.output.v1","eventId":"s:1:1","type":"text","sessionId":"s","payload":{"delta":5,"role":"assistant"}}"#,
        r#"{"schema":"minicode.output.v1","eventId":"s:1:1","type":"text","sessionId":"s","payload":{"role":"assistant"}}"#,
        r#"{"schema":"minicode.output.v1","eventId":"s:1:1","type":"tool.output","sessionId":"s","payload":{"toolCallId":"c","stream":"sideways","delta":""}}"#,
        r#"{"schema":"minicode.output.v1","eventId":"s:1:1","type":"tool.failed","sessionId":"s","payload":{"toolCallId":"c","name":"x","kind":"shell","output":{"stdout":7}}}"#,
        r#"{"schema":"minicode.output.v2","eventId":"s:1:1","type":"text","sessionId":"s","payload":{"delta":"","role":"assistant"}}"#,
        r#"{"schema":"minicode.output.v1","type":"text","sessionId":"s","payload":{"delta":"","role":"assistant"}}"#,
        r#"{"schema":"minicode.output.v1","eventId":"s:1:1","type":"text","sessionId":"s","severity":"loud","payload":{"delta":"","role":"assistant"}}"#,
    ];
    for l in bad {
        assert!(serde_json::from_str::<Event>(l).is_err(), "typed accepts {l}");
        assert!(Summarizer::new().line(l).is_err(), "fast accepts {l}");
    }
}

#[test]
fn the_fast_way_reads_every_type_and_envelope_field_of_the_tables_as_the_typed_way_does() {
    use crate::event::tests::example_lines;
    use crate::event::ENVELOPE_KEYS;
    let examples = example_lines();
    let lines: Vec<String> = examples.iter().map(|(_, l)| l.clone()).collect();
    let (fast, typed) = both_ways(&lines);
    assert_eq!(fast, typed);
    // Each envelope field absent, and of the wrong type: both ways take the line or neither.
    for (name, line) in &examples {
        let event: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).unwrap();
        for key in ENVELOPE_KEYS {
            assert!(event.contains_key(*key), "{name}: {key} not in the example");
            let mut without = event.clone();
            without.remove(*key);
            let mut wrong = event.clone();
            wrong.insert((*key).to_owned(), serde_json::json!({ "x": [] }));
            for changed in [without, wrong] {
                let l = serde_json::to_string(&changed).unwrap();
                let (fast_ok, typed_ok) =
                    (Summarizer::new().line(&l).is_ok(), Summarizer::new().typed_line(&l).is_ok());
                assert_eq!(fast_ok, typed_ok, "{name}, {key}: {l}");
                let (fast, typed) = both_ways(&[l]);
                assert_eq!(fast, typed, "{name}, {key}");
            }
        }
    }
}

/// Pieces of tool output that matter to how the fast way reads it: escapes, control bytes
/// raw and escaped (which cleaning removes), redaction markers, trailing space.
fn output() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(r"\n"),
        Just(r#"\""#),
        Just(r"\\"),
        Just(r"\r"),
        Just(r"\u001b[31m"),
        Just(r"\u0041"),
        Just(r"\ud83c\udf89"),
        Just("\u{202e}"),
        Just("\u{85}"),
        Just("\t"),
        Just("[REDACTED:api-key]"),
        Just("é"),
        Just("aaaaaaaaaaaaaaa"),
        Just(" "),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

proptest! {
    #[test]
    fn the_fast_way_measures_any_tool_output_as_the_typed_way(stdout in output(), stderr in output(), delta in output(), failed in any::<bool>(), late in any::<bool>()) {
        let envelope = |n: u32| format!(r#""schema":"minicode.output.v1","eventId":"s:1:{n}","sessionId":"s","turnId":1,"source":"tool","severity":"info","visibility":["verbose","debug","machine"],"rawRef":{{"line":{n}}}"#);
        let line = |n, t: &str, payload: String| match late {
            true => format!(r#"{{{},"payload":{payload},"type":"{t}"}}"#, envelope(n)),
            false => format!(r#"{{"type":"{t}",{},"payload":{payload}}}"#, envelope(n)),
        };
        let lines = [
            line(1, "tool.started", r#"{"toolCallId":"c","name":"x","kind":"shell","input":{"command":"x"}}"#.to_owned()),
            line(2, "tool.output", format!(r#"{{"toolCallId":"c","stream":"stdout","delta":"{delta}"}}"#)),
            line(3, if failed { "tool.failed" } else { "tool.completed" }, format!(r#"{{"toolCallId":"c","name":"x","kind":"shell","output":{{"exit_code":1,"stdout":"{stdout}","stderr":"{stderr}"}}}}"#)),
        ];
        let (fast, typed) = both_ways(&lines);
        prop_assert_eq!(fast, typed);
    }
}

mod algebra;

/// A stream of `n` sessions, each with a failing shell command whose command and output
/// are as wide as a report keeps, full of characters Markdown escapes six bytes wide.
fn many_sessions(n: usize) -> Vec<Event> {
    let wide = "|".repeat(2000);
    let mut events = Vec::new();
    for i in 0..n {
        let s = format!("session-{i:05}");
        let prompt = Some(format!("@octocat please {wide}"));
        events.push(ev(&s, 1, 1, Body::TurnStarted(TurnStarted { prompt })));
        events.push(ev(&s, 1, 2, shell_start("c1", &wide)));
        let out = ShellResult { exit_code: Some(1), stderr: Some(wide.clone()), ..Default::default() };
        events.push(ev(&s, 1, 3, tool_end("c1", ToolKind::Shell, Outcome::Failed, Some(out))));
        let path = format!("src/{wide}{i}.rs");
        events.push(ev(&s, 1, 4, Body::FileChanged(FileChanged { path, change: FileChange::Add, tool_call_id: None })));
        let end = TurnEnded { outcome: Outcome::Completed, stop_reason: None, duration_ms: Some(5), error: None };
        events.push(ev(&s, 1, 5, Body::TurnEnded(end)));
    }
    events
}

#[test]
fn markdown_stays_under_the_step_summary_limit_however_many_runs_saying_what_it_left_out() {
    let r = summarize(&many_sessions(10_000));
    assert_eq!(r.runs().total, 10_000);
    let md = to_markdown(&r);
    assert!(md.len() < MARKDOWN_LIMIT, "{} bytes", md.len());
    assert!(md.contains("more rows left out to keep the summary small"), "{}", &md[md.len() - 2000..]);
    // Every table still has its header, its first rows and, for sessions, the total.
    for title in ["Sessions", "Tool calls that did not complete", "Shell commands", "Files changed", "Input health"] {
        assert!(md.contains(&format!("### {title}\n")), "{title}");
    }
    assert!(md.contains("| **Total** |"));
    // A few runs are not cut at all.
    let few = to_markdown(&summarize(&many_sessions(3)));
    assert!(!few.contains("left out"), "{few}");
}

#[test]
fn markdown_mentions_ping_no_one() {
    let events = vec![
        ev("s1", 1, 1, Body::TurnStarted(TurnStarted { prompt: None })),
        ev("s1", 1, 2, shell_start("c1", "git log --author=@octocat; mail me@example.com")),
        ev("s1", 1, 3, tool_end("c1", ToolKind::Shell, Outcome::Failed, None)),
        ev(
            "s1",
            1,
            4,
            Body::TurnEnded(TurnEnded {
                outcome: Outcome::Failed,
                stop_reason: None,
                duration_ms: None,
                error: Some(ErrorInfo {
                    category: ErrorCategory::ToolError,
                    message: "ask @org/team and @alice-b".into(),
                    action: None,
                }),
            }),
        ),
    ];
    let md = to_markdown(&summarize(&events));
    for name in ["octocat", "example.com", "org/team", "alice-b"] {
        assert!(!md.contains(&format!("@{name}")), "@{name} in {md}");
        assert!(md.contains(&format!("@&#8203;{name}")), "{name}: {md}");
    }
}
