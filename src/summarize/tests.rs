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
    let error = (!ok).then(|| ErrorInfo { category: ErrorCategory::ProviderError, message: "boom".into(), action: None });
    let figures = SummaryFigures { usage, input: InputHealth { lines: 9, events: 8, ..Default::default() }, sessions, ..Default::default() };
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
    Body::ToolEnded(ToolEnded { outcome, tool_call_id: id.into(), name: "shell".into(), kind, duration_ms: None, output, error: None })
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
        ev("s1", 1, 4, Body::TurnEnded(TurnEnded { outcome: Outcome::Completed, stop_reason: None, duration_ms: Some(5), error: None })),
    ];
    let r = summarize(&events);
    let s = &r.sessions[0];
    assert_eq!(s.usage, Tokens { input_tokens: Some(100), ..Tokens::default() });
    assert_eq!(s.cost, None);
    let json = r.to_json();
    assert!(json.contains("\"input_tokens\": 100") && !json.contains("output_tokens") && !json.contains("estimatedUsd"), "{json}");
    // Without a record the run is incomplete, and so not ok.
    assert!(!r.ok());
    assert_eq!((r.runs.total, r.runs.incomplete), (1, 1));
    assert_eq!(r.input.lines, 4);
}

#[test]
fn without_a_record_redactions_are_counted_from_the_markers() {
    let text = |t: &str| Body::Text(Text { delta: t.into(), role: Role::Assistant });
    let events = vec![
        ev("s1", 1, 1, text("token [REDACTED:github-token] and [REDACTED:aws-key] [REDACTED:github-token]")),
        ev("s1", 1, 2, text("not one: [REDACTED:] [REDACTED:a b] [REDACTED:open")),
    ];
    let r = summarize(&events);
    assert_eq!(r.input.redactions.iter().collect::<Vec<_>>(), [("aws-key", 1), ("github-token", 2)]);
}

#[test]
fn the_record_states_usage_duration_and_ok() {
    let mut events = vec![
        ev("s1", 1, 1, Body::TurnStarted(TurnStarted { prompt: None })),
        ev("s1", 1, 2, Body::Usage(usage(Some(7), Some(1)))),
        ev("s1", 1, 3, Body::TurnEnded(TurnEnded { outcome: Outcome::Completed, stop_reason: None, duration_ms: None, error: None })),
    ];
    events.push(record(true, Usage { cost_usd: Some(0.25), ..usage(Some(70), Some(10)) }, vec![]));
    let r = summarize(&events);
    assert!(r.ok());
    assert_eq!(r.sessions[0].usage.input_tokens, Some(70));
    assert_eq!(r.sessions[0].cost.map(Cost::usd), Some(0.25));
    assert_eq!(r.input.lines, 9);
    // A failed record makes the run, and its lone session, not ok, even with no failed turn.
    events.pop();
    events.push(record(false, Usage::default(), vec![]));
    let r = summarize(&events);
    assert!(!r.ok() && !r.sessions[0].ok);
    assert_eq!(r.failure.as_ref().and_then(|f| f.error.as_ref()).map(|e| e.message.as_str()), Some("boom"));
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
        ev("s1", 1, 3, tool_end("c1", ToolKind::Shell, Outcome::Failed, Some(ShellResult { exit_code: Some(2), stdout: Some(out.clone()), ..Default::default() }))),
        ev("s1", 1, 4, shell_start("c2", "true")),
        ev("s1", 1, 5, tool_end("c2", ToolKind::Shell, Outcome::Completed, None)),
        record(true, Usage::default(), vec![]),
    ];
    let s = &summarize(&events).sessions[0];
    let t = &s.failing_tools[0];
    assert_eq!((t.exit_code, t.command.as_deref()), (Some(2), Some("make test")));
    let excerpt = t.excerpt.as_deref().unwrap();
    assert!(excerpt.len() <= limits::EXCERPT && excerpt.ends_with("last line"), "{excerpt:?}");
    assert_eq!((s.shell.count, s.shell.exit_non_zero, s.shell.exit_unknown, s.shell.stdout_bytes), (2, 1, 1, out.len() as u64));
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
        events.push(ev("s1", 1, 2, Body::FileChanged(FileChanged { path: format!("f{i:03}"), change: FileChange::Add, tool_call_id: None })));
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
        ev("s1", 1, 3, tool_end("c1", ToolKind::Shell, Outcome::Failed, Some(ShellResult { stderr: Some("x|y\n*z*".into()), ..Default::default() }))),
        record(true, Usage::default(), vec![]),
    ];
    let md = to_markdown(&summarize(&events));
    assert!(md.contains("<code>a &#124; b<br>c</code>") && md.contains("x&#124;y<br>&#42;z&#42;"), "{md}");
}

// ------------------------------------------------------------------ the algebra ----

/// One step of a generated stream.
#[derive(Debug, Clone)]
enum Op {
    Start(u8, u8),
    Turn(u8, bool),
    Tool(u8, u8, u8, Option<i64>, u16, bool),
    TurnEnd(u8, u8, Option<u64>),
    Use(u8, Option<u64>, Option<u64>, Option<u64>, bool),
    File(u8, u8, u8),
    Plan(u8, u8),
    Compact(u8, u8),
    Warn(u8, bool),
    Raw(bool),
}

fn op() -> impl Strategy<Value = Op> {
    let s = 0u8..3;
    prop_oneof![
        (s.clone(), 0u8..3).prop_map(|(s, p)| Op::Start(s, p)),
        (s.clone(), any::<bool>()).prop_map(|(s, p)| Op::Turn(s, p)),
        (s.clone(), 0u8..8, 0u8..6, proptest::option::of(-1i64..3), 0u16..400, any::<bool>()).prop_map(|(s, k, o, x, n, t)| Op::Tool(s, k, o, x, n, t)),
        (s.clone(), 0u8..6, proptest::option::of(0u64..1000)).prop_map(|(s, o, d)| Op::TurnEnd(s, o, d)),
        (s.clone(), proptest::option::of(0u64..1000), proptest::option::of(0u64..1000), proptest::option::of(0u64..10_000_000), any::<bool>())
            .prop_map(|(s, i, o, c, r)| Op::Use(s, i, o, c, r)),
        (s.clone(), 0u8..70, 0u8..3).prop_map(|(s, p, c)| Op::File(s, p, c)),
        (s.clone(), 0u8..25).prop_map(|(s, n)| Op::Plan(s, n)),
        (s.clone(), 0u8..40).prop_map(|(s, r)| Op::Compact(s, r)),
        (s, any::<bool>()).prop_map(|(s, b)| Op::Warn(s, b)),
        any::<bool>().prop_map(Op::Raw),
    ]
}

/// A stream: its steps, and how its record reads (none, or ok and whether it lists sessions).
fn stream() -> impl Strategy<Value = (Vec<Op>, Option<(bool, bool, Option<u64>)>)> {
    (prop::collection::vec(op(), 0..80), proptest::option::of((any::<bool>(), any::<bool>(), proptest::option::of(0u64..5000))))
}

fn events_of(tag: &str, ops: &[Op], rec: Option<(bool, bool, Option<u64>)>) -> Vec<Event> {
    let outcome = |o: u8| Outcome::ALL[o as usize % 6];
    // Sessions are shared between streams (so merges meet the same session); tool ids are not.
    let sid = |s: u8| format!("s{}", s % 2);
    let mut out = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let n = i as u64 + 1;
        let (s, body) = match op.clone() {
            Op::Start(s, p) => (s, Body::SessionStarted(SessionStarted { provider: ["codex", "claude", ""][p as usize].into(), ..Default::default() })),
            Op::Turn(s, p) => (s, Body::TurnStarted(TurnStarted { prompt: p.then(|| format!("prompt {n} ✓")) })),
            Op::Tool(s, k, o, exit, bytes, truncated) => {
                let id = format!("{tag}-{n}");
                let kind = ByKind::KINDS[k as usize];
                let started = ToolStarted { kind, command: Some(format!("cmd {n}")), ..match shell_start(&id, "") {
                    Body::ToolStarted(t) => t,
                    _ => unreachable!(),
                } };
                out.push(ev(&sid(s), 1, n, Body::ToolStarted(started)));
                let output = ShellResult { exit_code: exit, stdout: Some("é".repeat(bytes as usize)), stderr: None, truncated };
                (s, tool_end(&id, kind, outcome(o), Some(output)))
            }
            Op::TurnEnd(s, o, d) => {
                let error = (o % 6 != 0).then(|| ErrorInfo { category: ErrorCategory::BudgetExceeded, message: format!("e{n}"), action: None });
                (s, Body::TurnEnded(TurnEnded { outcome: outcome(o), stop_reason: None, duration_ms: d, error }))
            }
            Op::Use(s, i, o, c, repeat) => {
                let u = Usage { cost_usd: c.map(|c| c as f64 / 1e9), ..usage(i, o) };
                if repeat {
                    out.push(ev(&sid(s), 1, n, Body::Usage(u)));
                }
                (s, Body::Usage(u))
            }
            Op::File(s, p, c) => (s, Body::FileChanged(FileChanged { path: format!("src/{p}.rs"), change: [FileChange::Add, FileChange::Update, FileChange::Delete][c as usize], tool_call_id: None })),
            Op::Plan(s, k) => {
                let entries = (0..k).map(|j| PlanEntry { content: format!("step {j}"), status: [PlanStatus::Pending, PlanStatus::InProgress, PlanStatus::Completed][j as usize % 3] }).collect();
                (s, Body::Plan(Plan { entries }))
            }
            Op::Compact(s, r) => (s, Body::ContextCompacted(ContextCompacted { reason: format!("reason {r}") })),
            Op::Warn(s, b) => (s, Body::Warning(Warning { message: "w".into(), category: b.then(|| "BUDGET_EXCEEDED".into()) })),
            Op::Raw(unknown) => (0, Body::Raw(Raw { line: "?".into(), reason: if unknown { RawReason::UnknownType } else { RawReason::NotJson } })),
        };
        out.push(ev(&sid(s), 1, n, body));
    }
    if let Some((ok, listed, tokens)) = rec {
        let u = usage(tokens, None);
        let sessions = if listed { vec![SessionFigures { session_id: sid(1), ok, status: if ok { "completed" } else { "timeout" }.into(), usage: u, ..Default::default() }] } else { vec![] };
        out.push(record(ok, u, sessions));
    }
    out
}

fn reread(r: &Report) -> Report {
    let mut got = Vec::new();
    Report::read_documents(r.to_json().as_bytes(), |d| got.push(d.expect("reads back"))).unwrap();
    assert_eq!(got.len(), 1);
    got.pop().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn merging_is_associative((a, ra) in stream(), (b, rb) in stream(), (c, rc) in stream()) {
        let (a, b, c) = (summarize(&events_of("a", &a, ra)), summarize(&events_of("b", &b, rb)), summarize(&events_of("c", &c, rc)));
        let mut left = a.clone();
        left.merge(b.clone());
        left.merge(c.clone());
        let mut bc = b;
        bc.merge(c);
        let mut right = a;
        right.merge(bc);
        prop_assert_eq!(left, right);
    }

    #[test]
    fn the_merge_of_two_streams_is_the_summary_of_both((a, ra) in stream(), (b, rb) in stream(), ok in any::<bool>()) {
        // Only a stream that ends in its record is a whole run; the second may be cut short.
        let a = events_of("a", &a, Some(ra.unwrap_or((ok, false, None))));
        let b = events_of("b", &b, rb);
        let mut merged = summarize(&a);
        merged.merge(summarize(&b));
        let both: Vec<Event> = a.into_iter().chain(b).collect();
        prop_assert_eq!(summarize(&both), merged);
    }

    #[test]
    fn the_json_document_reads_back_as_the_same_report((a, ra) in stream(), (b, rb) in stream()) {
        let mut r = summarize(&events_of("a", &a, ra));
        r.merge(summarize(&events_of("b", &b, rb)));
        prop_assert_eq!(reread(&r), r.clone());
        prop_assert_eq!(r.to_json(), reread(&r).to_json());
        let text = to_text(&r, false);
        prop_assert_eq!(text.starts_with("✓ done"), r.ok());
    }
}

fn keys() -> impl Strategy<Value = Vec<(u8, u8)>> {
    prop::collection::vec((any::<u8>(), 0u8..3), 0..150)
}

fn files_of(keys: &[(u8, u8)]) -> (Files, Tally) {
    let (mut f, mut t) = (Files::default(), Tally::default());
    for (k, c) in keys {
        f.add(&format!("p{k}"), [FileChange::Add, FileChange::Update, FileChange::Delete][*c as usize]);
        t.add(&format!("k{k}"), u64::from(*c) + 1);
    }
    (f, t)
}

proptest! {
    #[test]
    fn bounded_sets_merge_associatively_and_as_one_pass(a in keys(), b in keys(), c in keys()) {
        let ((fa, ta), (fb, tb), (fc, tc)) = (files_of(&a), files_of(&b), files_of(&c));
        let (mut fl, mut tl) = (fa.clone(), ta.clone());
        fl.merge(&fb);
        fl.merge(&fc);
        tl.merge(&tb);
        tl.merge(&tc);
        let (mut fbc, mut tbc) = (fb, tb);
        fbc.merge(&fc);
        tbc.merge(&tc);
        let (mut fr, mut tr) = (fa, ta);
        fr.merge(&fbc);
        tr.merge(&tbc);
        prop_assert_eq!(&fl, &fr);
        prop_assert_eq!(&tl, &tr);
        let (f1, t1) = files_of(&[a, b, c].concat());
        prop_assert_eq!(fl, f1);
        prop_assert_eq!(tl, t1);
    }
}
