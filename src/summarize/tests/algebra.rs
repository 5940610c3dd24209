//! The algebra of reports, over generated streams: merging is associative, commutative and
//! idempotent, and equals summarizing the concatenated streams, the JSON document reads back as the same report,
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
        (s.clone(), 0u8..8, 0u8..6, proptest::option::of(-1i64..3), 0u16..400, any::<bool>())
            .prop_map(|(s, k, o, x, n, t)| Op::Tool(s, k, o, x, n, t)),
        (s.clone(), 0u8..6, proptest::option::of(0u64..1000)).prop_map(|(s, o, d)| Op::TurnEnd(s, o, d)),
        (
            s.clone(),
            proptest::option::of(0u64..1000),
            proptest::option::of(0u64..1000),
            proptest::option::of(0u64..10_000_000),
            any::<bool>()
        )
            .prop_map(|(s, i, o, c, r)| Op::Use(s, i, o, c, r)),
        (s.clone(), 0u8..70, 0u8..3).prop_map(|(s, p, c)| Op::File(s, p, c)),
        (s.clone(), 0u8..25).prop_map(|(s, n)| Op::Plan(s, n)),
        (s.clone(), 0u8..40).prop_map(|(s, r)| Op::Compact(s, r)),
        (s, any::<bool>()).prop_map(|(s, b)| Op::Warn(s, b)),
        any::<bool>().prop_map(Op::Raw),
        (0u8..3, 0u8..6).prop_map(|(s, k)| Op::Say(s, k)),
    ]
}

/// How a stream's record reads: ok, whether it lists sessions, and its input tokens.
type Record = (bool, bool, Option<u64>);

/// A stream: its steps, and how its record reads (none, or ok and whether it lists sessions).
fn stream() -> impl Strategy<Value = (Vec<Op>, Option<Record>)> {
    (
        prop::collection::vec(op(), 0..80),
        proptest::option::of((any::<bool>(), any::<bool>(), proptest::option::of(0u64..5000))),
    )
}

fn events_of(tag: &str, ops: &[Op], rec: Option<Record>) -> Vec<Event> {
    let outcome = |o: u8| Outcome::ALL[o as usize % 6];
    // Sessions are shared between streams (so merges meet the same session); tool ids are not.
    let sid = |s: u8| format!("s{}", s % 2);
    let mut out = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let n = i as u64 + 1;
        let (s, body) = match op.clone() {
            Op::Start(s, p) => (
                s,
                Body::SessionStarted(SessionStarted {
                    provider: ["codex", "claude", ""][p as usize].into(),
                    ..Default::default()
                }),
            ),
            Op::Turn(s, p) => (s, Body::TurnStarted(TurnStarted { prompt: p.then(|| format!("prompt {n} ✓")) })),
            Op::Tool(s, k, o, exit, bytes, truncated) => {
                let id = format!("{tag}-{n}");
                let kind = ByKind::KINDS[k as usize];
                let started = ToolStarted {
                    kind,
                    command: Some(format!("cmd {n}")),
                    ..match shell_start(&id, "") {
                        Body::ToolStarted(t) => t,
                        _ => unreachable!(),
                    }
                };
                out.push(ev(&sid(s), 1, n, Body::ToolStarted(started)));
                let output =
                    ShellResult { exit_code: exit, stdout: Some("é".repeat(bytes as usize)), stderr: None, truncated };
                (s, tool_end(&id, kind, outcome(o), Some(output)))
            }
            Op::TurnEnd(s, o, d) => {
                let error = (o % 6 != 0).then(|| ErrorInfo {
                    category: ErrorCategory::BudgetExceeded,
                    message: format!("e{n}"),
                    action: None,
                });
                (s, Body::TurnEnded(TurnEnded { outcome: outcome(o), stop_reason: None, duration_ms: d, error }))
            }
            Op::Use(s, i, o, c, repeat) => {
                let u = Usage { cost_usd: c.map(|c| c as f64 / 1e9), ..usage(i, o) };
                if repeat {
                    out.push(ev(&sid(s), 1, n, Body::Usage(u)));
                }
                (s, Body::Usage(u))
            }
            Op::File(s, p, c) => (
                s,
                Body::FileChanged(FileChanged {
                    path: format!("src/{p}.rs"),
                    change: [FileChange::Add, FileChange::Update, FileChange::Delete][c as usize],
                    tool_call_id: None,
                }),
            ),
            Op::Plan(s, k) => {
                let entries = (0..k)
                    .map(|j| PlanEntry {
                        content: format!("step {j}"),
                        status: [PlanStatus::Pending, PlanStatus::InProgress, PlanStatus::Completed][j as usize % 3],
                    })
                    .collect();
                (s, Body::Plan(Plan { entries }))
            }
            Op::Compact(s, r) => (s, Body::ContextCompacted(ContextCompacted { reason: format!("reason {r}") })),
            Op::Warn(s, b) => {
                (s, Body::Warning(Warning { message: "w".into(), category: b.then(|| "BUDGET_EXCEEDED".into()) }))
            }
            Op::Say(s, k) => {
                let delta = ["plain", "key [REDACTED:github-token] \"q\"\n", "é\t✓"][k as usize % 3].to_owned();
                (
                    s,
                    match k / 3 {
                        0 => Body::Text(Text { delta, role: Role::Assistant, piece: Piece::Next }),
                        _ => Body::ToolOutput(ToolOutput { tool_call_id: "t".into(), stream: Stream::Stdout, delta }),
                    },
                )
            }
            Op::Raw(unknown) => (
                0,
                Body::Raw(Raw {
                    line: "?".into(),
                    reason: if unknown { RawReason::UnknownType } else { RawReason::NotJson },
                }),
            ),
        };
        out.push(ev(&sid(s), 1, n, body));
    }
    if let Some((ok, listed, tokens)) = rec {
        let u = usage(tokens, None);
        let sessions = if listed {
            vec![SessionFigures {
                session_id: sid(1),
                ok,
                status: if ok { "completed" } else { "timeout" }.into(),
                usage: u,
                ..Default::default()
            }]
        } else {
            vec![]
        };
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
    fn merging_is_associative_commutative_and_idempotent((a, ra) in stream(), (b, rb) in stream(), (c, rc) in stream(), same in any::<bool>()) {
        // With `same`, b is a's stream again under a's tags: two parts that hold one run.
        let (a, b, c) = (
            summarize(&events_of("a", &a, ra)),
            if same { summarize(&events_of("a", &a, ra)) } else { summarize(&events_of("b", &b, rb)) },
            summarize(&events_of("c", &c, rc)),
        );
        let m = |x: &Report, y: &Report| {
            let mut x = x.clone();
            x.merge(y.clone());
            x
        };
        prop_assert_eq!(m(&m(&a, &b), &c), m(&a, &m(&b, &c)));
        prop_assert_eq!(m(&a, &b), m(&b, &a));
        prop_assert_eq!(&m(&a, &a), &a);
        prop_assert_eq!(m(&a, &m(&a, &b)), m(&a, &b));
        prop_assert_eq!(m(&a, &b).to_json(), m(&b, &m(&a, &b)).to_json());
        if same {
            prop_assert_eq!(m(&a, &b), a);
        }
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

// ------------------------------------------------- the fast way on lines bent out of shape ----

/// Every line of the fixtures' canonical streams.
fn fixture_lines() -> &'static [String] {
    static LINES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    LINES.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut lines = Vec::new();
        for dir in std::fs::read_dir(&root).unwrap() {
            let Ok(entries) = std::fs::read_dir(dir.unwrap().path()) else { continue };
            let mut files: Vec<_> =
                entries.map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(".events.jsonl")).collect();
            files.sort();
            for f in files {
                let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
                lines.extend(text.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned));
            }
        }
        lines
    })
}

/// How a line is bent: the ways another writer (or a scrubber) may write a canonical line.
#[derive(Debug, Clone)]
struct Bend {
    /// The n-th string of the line (ids and names too) gets a redaction marker (kind, where).
    marker: Option<(prop::sample::Index, u8, u8)>,
    /// The marker's `[` or `]` written as a `\u` escape.
    escaped: Option<bool>,
    /// Keys in sorted order (so `payload` comes before `type`).
    sorted: bool,
    /// An unknown top-level field.
    extra: Option<u8>,
    /// A second `type` or `payload`, before or after the first.
    twice: Option<(u8, bool)>,
    /// The n-th field (top level or payload) made null or removed.
    hole: Option<(prop::sample::Index, bool)>,
}

fn bend() -> impl Strategy<Value = Bend> {
    (
        proptest::option::of((any::<prop::sample::Index>(), 0u8..4, 0u8..3)),
        proptest::option::of(any::<bool>()),
        any::<bool>(),
        proptest::option::weighted(0.2, 0u8..4),
        proptest::option::weighted(0.1, (0u8..6, any::<bool>())),
        proptest::option::weighted(0.1, (any::<prop::sample::Index>(), any::<bool>())),
    )
        .prop_map(|(marker, escaped, sorted, extra, twice, hole)| Bend {
            marker,
            escaped,
            sorted,
            extra,
            twice,
            hole,
        })
}

/// Calls `f` on every string of `v` with its number, in one order.
fn strings_of(v: &mut serde_json::Value, n: &mut usize, f: &mut dyn FnMut(usize, &mut String)) {
    match v {
        serde_json::Value::String(s) => {
            f(*n, s);
            *n += 1;
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|v| strings_of(v, n, f)),
        serde_json::Value::Object(o) => o.values_mut().for_each(|v| strings_of(v, n, f)),
        _ => {}
    }
}

fn bent(line: &str, b: &Bend) -> String {
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(line) else { return line.to_owned() };
    if let Some((at, kind, place)) = &b.marker {
        let mut count = 0;
        strings_of(&mut v, &mut count, &mut |_, _| {});
        if count > 0 {
            let pick = at.index(count);
            let mark = format!("[REDACTED:{}]", ["github-token", "aws_key", "x", "bad kind"][*kind as usize]);
            strings_of(&mut v, &mut 0, &mut |i, s| {
                if i == pick {
                    *s = match place {
                        0 => mark.clone(),
                        1 => format!("{s} {mark}\nmore"),
                        _ => format!("{mark}{s}"),
                    };
                }
            });
        }
    }
    if let (Some((at, null)), Some(o)) = (&b.hole, v.as_object_mut()) {
        let mut fields: Vec<(bool, String)> = o.keys().map(|k| (false, k.clone())).collect();
        if let Some(p) = o.get("payload").and_then(|p| p.as_object()) {
            fields.extend(p.keys().map(|k| (true, k.clone())));
        }
        let (inner, key) = fields[at.index(fields.len())].clone();
        let o = if inner { o.get_mut("payload").unwrap().as_object_mut().unwrap() } else { o };
        match null {
            true => drop(o.insert(key, serde_json::Value::Null)),
            false => drop(o.remove(&key)),
        }
    }
    let mut text = if b.sorted {
        serde_json::to_string(&v).unwrap()
    } else {
        // serde_json keeps keys sorted; canonical order comes from the typed event when it reads.
        serde_json::from_str::<Event>(&serde_json::to_string(&v).unwrap())
            .map_or_else(|_| serde_json::to_string(&v).unwrap(), |e| serde_json::to_string(&e).unwrap())
    };
    if let Some(open) = b.escaped {
        text = if open {
            text.replace("[REDACTED:", "\\u005bREDACTED:")
        } else {
            text.replace("[REDACTED:x]", "[REDACTED:x\\u005d")
        };
    }
    let mut fields = Vec::new();
    if let Some(x) = b.extra {
        fields.push(format!(
            r#""zz{x}":{}"#,
            [r#"1e400"#, r#"{"a":[1,null,"[REDACTED:x]"]}"#, r#""[REDACTED:github-token]""#, "-0"][x as usize]
        ));
    }
    let mut front = false;
    if let Some((t, before)) = b.twice {
        let ty = ["text", "tool.failed", "warning", "reasoning", "tool.output"];
        fields.push(match t {
            5 => r#""payload":{"delta":"d","role":"assistant","toolCallId":"c","name":"n","kind":"shell","stream":"stdout","message":"m"}"#.to_owned(),
            t => format!(r#""type":"{}""#, ty[t as usize]),
        });
        front = before;
    }
    if !fields.is_empty() && text.starts_with('{') && text.ends_with('}') && text.len() > 2 {
        let add = fields.join(",");
        text = if front { format!("{{{add},{}", &text[1..]) } else { format!("{},{add}}}", &text[..text.len() - 1]) };
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn the_fast_way_equals_the_typed_way_on_bent_lines(picks in prop::collection::vec((any::<prop::sample::Index>(), bend()), 1..40)) {
        let all = fixture_lines();
        let lines: Vec<String> = picks.iter().map(|(at, b)| bent(&all[at.index(all.len())], b)).collect();
        let (fast, typed) = both_ways(&lines);
        prop_assert_eq!(fast, typed, "{:#?}", lines);
    }
}
