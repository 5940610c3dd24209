//! The algebra of reports, over generated streams: merging is associative and equals
//! summarizing the concatenated streams, the JSON document reads back as the same report,
//! and the fast way of reading lines equals the typed way.

use proptest::prelude::*;

use super::*;

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
    Say(u8, u8),
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
        (0u8..3, 0u8..6).prop_map(|(s, k)| Op::Say(s, k)),
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
            Op::Say(s, k) => {
                let delta = ["plain", "key [REDACTED:github-token] \"q\"\n", "é\t✓"][k as usize % 3].to_owned();
                (s, match k / 3 {
                    0 => Body::Text(Text { delta, role: Role::Assistant }),
                    _ => Body::ToolOutput(ToolOutput { tool_call_id: "t".into(), stream: Stream::Stdout, delta }),
                })
            }
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
    fn the_fast_way_equals_the_typed_way((a, ra) in stream(), (b, rb) in stream()) {
        let lines: Vec<String> = events_of("a", &a, ra).iter().chain(&events_of("b", &b, rb)).map(|e| serde_json::to_string(e).unwrap()).collect();
        let (fast, typed) = both_ways(&lines);
        prop_assert_eq!(fast, typed);
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
