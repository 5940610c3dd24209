//! The fuzz harness: runs one filter in-process on fuzz input, through the same
//! `Command::run_on` its binary calls, and checks what its output must always be. Shared by
//! the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`) and the stable-toolchain replay of the
//! committed corpora (`tests/fuzz_corpus.rs`), so the checks are written once.
//!
//! An input is one option byte followed by the stream: the option byte picks the provider,
//! mode, format or bounds (see each function), so one corpus covers every option.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use minicode_output::cli::{normalize, project, scrub, summarize, truncate, Command, Outcome};
use minicode_output::event::Event;
use minicode_output::io::{decoding, is_blank, LineReader, Source, Sources};
use minicode_output::provider::Provider;
use minicode_output::scrub::json::{classify, rewrite_values, LineKind};
use minicode_output::summarize::Summarizer;
use serde_json::Value;

/// The targets, by the name of their binary (and corpus folder).
pub const TARGETS: [&str; 5] = ["normalize", "scrub", "truncate", "project", "summarize"];

/// Runs the check of `target` on `data`; panics on a broken invariant.
pub fn run(target: &str, data: &[u8]) {
    match target {
        "normalize" => check_normalize(data),
        "scrub" => check_scrub(data),
        "truncate" => check_truncate(data),
        "project" => check_project(data),
        "summarize" => check_summarize(data),
        _ => panic!("no fuzz target {target:?}"),
    }
}

/// Runs the binary `C` with `args` over `input`; returns its outcome and output.
fn filter<C: Command>(args: &[&str], input: &[u8]) -> (Outcome, Vec<u8>) {
    static EPOCH: std::sync::Once = std::sync::Once::new();
    // Timestamps the input does not give are then fixed, so two runs can be compared.
    EPOCH.call_once(|| std::env::set_var("SOURCE_DATE_EPOCH", "1767225600"));
    let cmd = C::try_parse_from(std::iter::once(C::NAME).chain(args.iter().copied())).expect("valid arguments");
    let mut out = Vec::new();
    let outcome = cmd
        .run_on(&Sources::from(vec![Source::Bytes(Arc::from(input))]), &mut out)
        .unwrap_or_else(|e| panic!("{} {args:?} failed on in-memory input: {e:#}", C::NAME));
    (outcome, out)
}

fn split(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((&opt, rest)) => (opt, rest),
        None => (0, data),
    }
}

/// The input's lines as the binaries read them: whether each is blank.
fn input_lines(input: &[u8], max_line: usize) -> Vec<bool> {
    let reader = decoding(std::io::Cursor::new(input.to_vec())).expect("in-memory read");
    let mut lines = LineReader::new(reader, max_line);
    let mut blank = Vec::new();
    while let Some(line) = lines.next_line().expect("in-memory read") {
        blank.push(line.is_blank());
    }
    blank
}

fn text(out: &[u8], what: &str) -> String {
    String::from_utf8(out.to_vec()).unwrap_or_else(|e| panic!("{what}: output is not UTF-8: {e}"))
}

fn json_line(line: &str, what: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{what}: output line is not JSON ({e}): {line}"))
}

/// Every string value of `v` (not keys).
fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Terminal-safe text: no escape sequences or control characters but newline and tab.
fn assert_safe(s: &str, what: &str) {
    if let Some(c) = s.chars().find(|&c| c.is_control() && c != '\n' && c != '\t') {
        panic!("{what}: control character {c:?} survived in {s:?}");
    }
}

/// `normalize`: the option byte modulo one more than the number of dialects is the provider
/// (0 = auto, then `Provider::ALL`, so every registered dialect is reached); bit 3 a 64-byte
/// field bound; bit 4 a 256-byte line limit.
pub fn check_normalize(data: &[u8]) {
    let (opt, input) = split(data);
    let from = match usize::from(opt) % (Provider::ALL.len() + 1) {
        0 => "auto",
        i => Provider::ALL[i - 1].name(),
    };
    let max_bytes = if opt & 8 != 0 { "64" } else { "262144" };
    let max_line = if opt & 16 != 0 { 256 } else { minicode_output::io::DEFAULT_MAX_LINE };
    let max_line_arg = max_line.to_string();
    let args = ["--from", from, "--max-bytes", max_bytes, "--max-line-bytes", &max_line_arg];
    let (_, out) = filter::<normalize::Args>(&args, input);
    let what = format!("normalize {args:?}");
    let (_, again) = filter::<normalize::Args>(&args, input);
    assert!(out == again, "{what}: the same input gave different output");

    let out_text = text(&out, &what);
    assert!(out_text.ends_with('\n'), "{what}: output does not end in a whole line");
    let lines: Vec<&str> = out_text.lines().collect();
    let events: Vec<Value> = lines.iter().map(|l| json_line(l, &what)).collect();
    for (line, ev) in lines.iter().zip(&events) {
        serde_json::from_str::<Event>(line).unwrap_or_else(|e| panic!("{what}: not a canonical event ({e}): {line}"));
        assert_eq!(ev["schema"], "minicode.output.v1", "{what}: {line}");
        let mut s = Vec::new();
        strings(ev, &mut s);
        s.iter().for_each(|s| assert_safe(s, &what));
    }
    let summaries: Vec<usize> =
        events.iter().enumerate().filter(|(_, e)| e["type"] == "summary").map(|(i, _)| i).collect();
    assert_eq!(summaries, [events.len() - 1], "{what}: not exactly one summary, last");

    // Provenance: every non-blank input line is referenced, and no event points past the end.
    let blank = input_lines(input, max_line);
    let mut referenced = BTreeSet::new();
    for e in &events {
        let first = e["rawRef"]["line"].as_u64().unwrap_or_else(|| panic!("{what}: no rawRef.line: {e}"));
        let last = e["rawRef"]["endLine"].as_u64().unwrap_or(first);
        assert!(first <= last, "{what}: rawRef runs backwards: {e}");
        assert!(last <= blank.len().max(1) as u64, "{what}: rawRef past the {} input lines: {e}", blank.len());
        referenced.extend(first..=last);
    }
    for (i, &b) in blank.iter().enumerate() {
        assert!(b || referenced.contains(&(i as u64 + 1)), "{what}: input line {} is referenced by no event", i + 1);
    }

    check_ids(&events, &what);
    check_lifecycles(&events, &what);

    // normalize's output is canonical: the other filters read it without complaint, and
    // `project --mode jsonl` writes it back byte for byte.
    let (outcome, jsonl) = filter::<project::Args>(&["--mode", "jsonl"], &out);
    assert!(outcome == Outcome::Success, "{what}: project rejected normalize's output");
    assert!(jsonl == out, "{what}: project --mode jsonl changed normalize's output");
    let (outcome, _) = filter::<summarize::Args>(&["--format", "json"], &out);
    assert!(outcome == Outcome::Success, "{what}: summarize rejected normalize's output");
}

/// Event ids are `{sessionId}:{turnId}:{seq}`, unique, with `seq` rising by one per session.
fn check_ids(events: &[Value], what: &str) {
    let mut seq: BTreeMap<&str, u64> = BTreeMap::new();
    for e in events {
        let id = e["eventId"].as_str().unwrap_or_else(|| panic!("{what}: no eventId: {e}"));
        let session = e["sessionId"].as_str().unwrap_or_else(|| panic!("{what}: no sessionId: {e}"));
        let turn = e["turnId"].as_u64().unwrap_or_else(|| panic!("{what}: no turnId: {e}"));
        let prefix = format!("{session}:{turn}:");
        let n: u64 = id
            .strip_prefix(&prefix)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{what}: eventId {id:?} is not {prefix}<seq>"));
        let prev = seq.insert(session, n).unwrap_or(0);
        assert_eq!(n, prev + 1, "{what}: seq of session {session:?} went {prev} -> {n}");
    }
}

/// docs/contract.md §4: per tool call, turn and approval, one start before exactly one end.
fn check_lifecycles(events: &[Value], what: &str) {
    // (kind, session, id) -> (starts, ends, ended before started)
    let mut seen: BTreeMap<(&str, String, String), (u32, u32, bool)> = BTreeMap::new();
    for e in events {
        let t = e["type"].as_str().unwrap_or_default();
        let session = e["sessionId"].as_str().unwrap_or_default().to_owned();
        let p = &e["payload"];
        let (kind, id, start) = match t {
            "tool.started" => ("tool", p["toolCallId"].to_string(), true),
            "tool.completed" | "tool.failed" | "tool.denied" | "tool.cancelled" | "tool.timeout"
            | "tool.interrupted" => ("tool", p["toolCallId"].to_string(), false),
            "turn.started" => ("turn", e["turnId"].to_string(), true),
            _ if t.starts_with("turn.") => ("turn", e["turnId"].to_string(), false),
            "approval.requested" => ("approval", p["approvalId"].to_string(), true),
            "approval.settled" => ("approval", p["approvalId"].to_string(), false),
            _ => continue,
        };
        let entry = seen.entry((kind, session, id)).or_default();
        if start {
            entry.0 += 1;
        } else {
            entry.2 |= entry.0 == 0;
            entry.1 += 1;
        }
    }
    for ((kind, session, id), (starts, ends, early)) in seen {
        assert!(
            starts == 1 && ends == 1 && !early,
            "{what}: {kind} {id} of session {session:?}: {starts} start(s), {ends} end(s){}",
            if early { ", ended before it started" } else { "" }
        );
    }
}

/// `scrub`: option bit 0 is `--text`. Scrubbing keeps every line, leaves no control
/// character in any string, and scrubbing twice gives what scrubbing once gave.
pub fn check_scrub(data: &[u8]) {
    let (opt, input) = split(data);
    let args: &[&str] = if opt & 1 != 0 { &["--text"] } else { &[] };
    let what = format!("scrub {args:?}");
    let (_, once) = filter::<scrub::Args>(args, input);
    let once_text = text(&once, &what);
    if args.is_empty() {
        assert_eq!(
            once_text.lines().count(),
            input_lines(input, minicode_output::io::DEFAULT_MAX_LINE).len(),
            "{what}: lines lost or added"
        );
        for line in once_text.lines() {
            match serde_json::from_str::<Value>(line) {
                Ok(v) => {
                    let mut s = Vec::new();
                    strings(&v, &mut s);
                    s.iter().for_each(|s| assert_safe(s, &what));
                }
                Err(_) => assert_safe(line, &what),
            }
        }
    } else {
        assert_safe(&once_text, &what);
    }
    let (_, twice) = filter::<scrub::Args>(args, &once);
    assert!(
        once == twice,
        "{what}: not idempotent:\n once: {once_text:?}\ntwice: {:?}",
        String::from_utf8_lossy(&twice)
    );
}

/// `truncate`: option bits 0-1 pick `--max-bytes` (0, 7, 64, 300), bits 2-3 `--keep`
/// (default, tail, head, head-tail), bit 4 `--text`. Every string stays within the bound,
/// every line is kept, and truncating twice gives what truncating once gave.
pub fn check_truncate(data: &[u8]) {
    let (opt, input) = split(data);
    let max = [0usize, 7, 64, 300][usize::from(opt & 3)];
    let max_arg = max.to_string();
    let mut args = vec!["--max-bytes", &max_arg];
    if let Some(keep) = [None, Some("tail"), Some("head"), Some("head-tail")][usize::from(opt >> 2 & 3)] {
        args.extend(["--keep", keep]);
    }
    let text_mode = opt & 16 != 0;
    if text_mode {
        args.push("--text");
    }
    let what = format!("truncate {args:?}");
    let (_, once) = filter::<truncate::Args>(&args, input);
    let once_text = text(&once, &what);
    if text_mode {
        assert!(once.len() <= max, "{what}: {} bytes out", once.len());
    } else {
        assert_eq!(
            once_text.lines().count(),
            input_lines(input, minicode_output::io::DEFAULT_MAX_LINE).len(),
            "{what}: lines lost or added"
        );
        for line in once_text.lines() {
            let mut long = Vec::new();
            if let Ok(mut ev) = serde_json::from_str::<Event>(line) {
                ev.for_each_text_mut(|_, s| long.extend((s.len() > max).then(|| s.clone())));
            } else if let Ok(v) = serde_json::from_str::<Value>(line) {
                let mut s = Vec::new();
                strings(&v, &mut s);
                long.extend(s.into_iter().filter(|s| s.len() > max).map(str::to_owned));
            } else if classify(line) == LineKind::Json {
                // JSON that `Value` cannot hold (a number like 1e9990 is out of its range):
                // its strings, found as the binary finds them.
                rewrite_values(line, &mut Vec::new(), |s| {
                    long.extend((s.len() > max).then(|| s.to_owned()));
                    None
                });
            } else if line.len() > max && !line.starts_with('{') {
                // A line that is almost JSON (a lone surrogate escape) is bounded string by
                // string, so only plain text lines are bounded as a whole.
                long.push(line.to_owned());
            }
            assert!(long.is_empty(), "{what}: over the bound: {long:?}");
        }
    }
    let (_, twice) = filter::<truncate::Args>(&args, &once);
    assert!(
        once == twice,
        "{what}: not idempotent:\n once: {once_text:?}\ntwice: {:?}",
        String::from_utf8_lossy(&twice)
    );
}

/// `project`: option byte % the number of modes is the mode (`Mode::ALL` order); bit 3 resumes
/// an SSE stream after `s1-2`. Machine modes write JSON (SSE: well-formed frames), human modes
/// terminal-safe text.
pub fn check_project(data: &[u8]) {
    use minicode_output::projection::Mode;
    let (opt, input) = split(data);
    let mode = Mode::ALL[usize::from(opt) % Mode::ALL.len()];
    let mut args = vec!["--mode", mode.name(), "--color", "never"];
    if mode == Mode::Sse && opt & 8 != 0 {
        args.extend(["--after", "s1-2"]);
    }
    let what = format!("project {args:?}");
    for line in String::from_utf8_lossy(input).lines() {
        check_cut(line);
    }
    let (_, out) = filter::<project::Args>(&args, input);
    let out = text(&out, &what);
    assert!(out.is_empty() || out.ends_with('\n'), "{what}: output does not end in a whole line");
    match mode {
        Mode::Normal | Mode::Verbose | Mode::Debug => assert_safe(&out, &what),
        Mode::Jsonl => {
            for line in out.lines() {
                serde_json::from_str::<Event>(line)
                    .unwrap_or_else(|e| panic!("{what}: not a canonical event ({e}): {line}"));
            }
        }
        Mode::Acp => {
            for line in out.lines() {
                assert_eq!(json_line(line, &what)["jsonrpc"], "2.0", "{what}: {line}");
            }
        }
        Mode::StreamJson => {
            let lines: Vec<Value> = out.lines().map(|l| json_line(l, &what)).collect();
            let results = lines.iter().filter(|l| l["type"] == "result").count();
            assert!(results <= 1, "{what}: {results} result lines");
            if results == 1 {
                assert_eq!(
                    lines.last().map(|l| &l["type"]),
                    Some(&Value::from("result")),
                    "{what}: result is not last"
                );
            }
        }
        Mode::Sse => check_sse(&out, &what),
        Mode::Otlp => {
            for line in out.lines() {
                assert!(json_line(line, &what)["resourceSpans"].is_array(), "{what}: {line}");
            }
        }
        Mode::Atif => {
            let doc: Value =
                serde_json::from_str(&out).unwrap_or_else(|e| panic!("{what}: not one JSON document ({e}): {out}"));
            assert!(doc.is_object() || doc.is_array(), "{what}: {doc}");
        }
        Mode::AgUi => {
            for frame in out.split_terminator("\n\n") {
                let data = frame.strip_prefix("data: ").unwrap_or_else(|| panic!("{what}: not a data frame: {frame}"));
                assert!(json_line(data, &what)["type"].is_string(), "{what}: {frame}");
            }
        }
    }
}

/// A line with its tool output cut before parsing (as `project --mode normal` and
/// `summarize` read) reads as the whole line does with its tool output emptied, or neither
/// is an event; and what was cut is the whole event's tool output.
fn check_cut(line: &str) {
    let Some(cut) = Event::cut_tool_output(line) else { return };
    match (Event::from_json(&cut.rest, false), Event::from_json(line, false)) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "cut and whole differ: {line}");
            let whole = Event::from_json(line, true).expect("read whole");
            for piece in cut.cut {
                let text: String = serde_json::from_str(piece.literal).expect("a cut string");
                assert_eq!((whole.tool_output(piece.field), piece.len), (Some(text.as_str()), text.len()), "{line}");
            }
        }
        (Err(_), Err(_)) => {}
        (a, b) => panic!("cut {a:?}, whole {b:?}: {line}"),
    }
}

/// Each line summarized the fast way ([`Summarizer::line`]: cut, cleaned, read in place)
/// and the typed way (cleaned, read whole as an [`Event`]) gives the same report.
fn check_summary_ways(input: &[u8]) {
    let (mut fast, mut typed) = (Summarizer::new(), Summarizer::new());
    for line in String::from_utf8_lossy(input).lines().filter(|l| !is_blank(l)) {
        if fast.line(line).is_err() {
            fast.invalid(line.as_bytes());
        }
        if typed.typed_line(line).is_err() {
            typed.invalid(line.as_bytes());
        }
    }
    assert_eq!(fast.finish(), typed.finish(), "the fast and the typed summary differ");
}

/// SSE frames: `id:`, `event:` and `data:` lines (data is JSON), ended by a blank line.
fn check_sse(out: &str, what: &str) {
    let mut in_frame = false;
    for line in out.lines() {
        if line.is_empty() {
            assert!(in_frame, "{what}: an empty SSE frame");
            in_frame = false;
        } else if let Some(data) = line.strip_prefix("data: ") {
            json_line(data, what);
            in_frame = true;
        } else {
            assert!(
                line.starts_with("id: ") || line.starts_with("event: ") || line.starts_with(':'),
                "{what}: not an SSE field: {line:?}"
            );
            in_frame = true;
        }
    }
    assert!(!in_frame, "{what}: the last SSE frame is not ended");
}

/// `summarize`: option byte % 3 is the format (json, text, markdown); bit 2 `--merge`.
/// JSON reports merge back into themselves; text and Markdown are terminal-safe.
pub fn check_summarize(data: &[u8]) {
    let (opt, input) = split(data);
    let format = ["json", "text", "markdown"][usize::from(opt % 3)];
    let mut args = vec!["--format", format, "--color", "never"];
    if opt & 4 != 0 {
        args.push("--merge");
    }
    let what = format!("summarize {args:?}");
    if opt & 4 == 0 {
        check_summary_ways(input);
    }
    let (_, out) = filter::<summarize::Args>(&args, input);
    let out_text = text(&out, &what);
    if format != "json" {
        assert_safe(&out_text, &what);
        return;
    }
    serde_json::from_str::<Value>(&out_text).unwrap_or_else(|e| panic!("{what}: the report is not JSON ({e})"));
    let (outcome, merged) = filter::<summarize::Args>(&["--format", "json", "--merge"], &out);
    assert!(outcome == Outcome::Success, "{what}: --merge rejected summarize's own report");
    assert!(
        merged == out,
        "{what}: merging one report changed it:\n   report: {out_text}\n   merged: {}",
        String::from_utf8_lossy(&merged)
    );
}
