//! Secrets streamed in pieces: every secret of the scrub corpus that is redacted whole is
//! also redacted when it arrives split over deltas, at every position in two pieces (through
//! the stages `normalize` runs, and through `scrub` on canonical events that were not
//! scrubbed) and in random small pieces (through `normalize` itself, as Claude, ACP and
//! Gemini stream text, thinking and terminal output, then the projections; and through
//! `scrub` on canonical text, thinking and tool output deltas); and a second `scrub` over
//! split deltas changes nothing.

use minicode_output::engine::clock::Clock;
use minicode_output::event::{Body, ContextCompacted, Event, Piece, Reasoning, Role, Stream, Text, ToolOutput};
use minicode_output::pipeline::Stages;
use minicode_output::projection::{render, Mode, Options};
use minicode_output::provider::Provider;
use minicode_output::scrub::stream::Pauses;
use minicode_output::scrub::Scrubber;
use proptest::prelude::*;
use serde::Deserialize;

use crate::support::*;

#[derive(Deserialize)]
struct Secret {
    secrets: Vec<String>,
    text: String,
}

/// The corpus positives the scrubber redacts when they come whole.
fn caught() -> &'static [Secret] {
    static CAUGHT: std::sync::OnceLock<Vec<Secret>> = std::sync::OnceLock::new();
    CAUGHT.get_or_init(|| {
        let mut s = Scrubber::new();
        String::from_utf8(read("scrub/secrets.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Secret>(l).unwrap())
            .filter(|x| {
                let out = s.scrub_str(&x.text);
                !x.secrets.iter().any(|secret| out.contains(secret.as_str()))
            })
            .collect()
    })
}

/// The text of `events`' deltas, joined, and each event written as JSON.
fn written(events: &[Event]) -> (String, String) {
    let mut joined = String::new();
    for e in events {
        if let Body::Text(Text { delta, .. })
        | Body::Reasoning(Reasoning { delta, .. })
        | Body::ToolOutput(ToolOutput { delta, .. }) = &e.body
        {
            joined.push_str(delta);
        }
    }
    (joined, events.iter().map(|e| serde_json::to_string(e).unwrap() + "\n").collect())
}

fn leaks<'a>(x: &'a Secret, outputs: &[&str]) -> Option<&'a str> {
    x.secrets.iter().map(String::as_str).find(|s| outputs.iter().any(|o| o.contains(s)))
}

/// Cut points of `text` on character boundaries, `pieces` giving the lengths in turn.
pub(crate) fn cut(text: &str, lengths: &[usize]) -> Vec<String> {
    let (mut out, mut at, mut i) = (Vec::new(), 0, 0);
    while at < text.len() {
        let mut end = (at + lengths[i % lengths.len()].max(1)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(text[at..end].to_owned());
        at = end;
        i += 1;
    }
    out
}

#[test]
fn a_secret_split_in_two_at_every_position_is_redacted() {
    let corpus = caught();
    let mut cases = 0;
    let mut missed = Vec::new();
    // One set of stages for every case: deciding at the end leaves nothing held.
    let mut stages = Stages::new(1 << 20, Pauses::Wait);
    for x in corpus {
        for at in (1..x.text.len()).filter(|&i| x.text.is_char_boundary(i)) {
            // Text and thinking take the positions in turn: the same stages serve both.
            {
                let reasoning = at % 2 == 1;
                let body = |d: &str| match reasoning {
                    false => Body::Text(Text { delta: d.to_owned(), role: Role::Assistant, piece: Piece::Next }),
                    true => Body::Reasoning(Reasoning { delta: d.to_owned(), piece: Piece::Next }),
                };
                let mut out = Vec::new();
                stages.apply(event(1, body(&x.text[..at])), &mut out);
                stages.apply(event(2, body(&x.text[at..])), &mut out);
                stages.decide(&mut out);
                cases += 1;
                let (joined, json) = written(&out);
                if let Some(s) = leaks(x, &[&joined, &json]) {
                    missed.push(format!("{s:?} split at {at} of {:?}", x.text));
                }
            }
        }
    }
    eprintln!("split in two: {cases} cases over {} secrets, {} leaked", corpus.len(), missed.len());
    assert!(missed.is_empty(), "{} leaked, first: {}", missed.len(), missed[0]);
}

/// Secrets whose context is on other lines than the value: an XML element with its value on
/// the next line, and a `.netrc` entry over three lines with words after the password.
const ACROSS_LINES: [(&str, &str); 3] = [
    ("config:\n<password>\n  S3cr3tV4lu3Xq9Zk2Lm\n</password>\nok\n", "S3cr3tV4lu3Xq9Zk2Lm"),
    ("<db>\n<api_key>\r\nq8Zr5Tw2Lm9Xk4Vb7Nc3\r\n</api_key>\n</db>\n", "q8Zr5Tw2Lm9Xk4Vb7Nc3"),
    ("machine api.example.com\nlogin bob\npassword Pq7Wz3Lk9Xm2Vb5 and more words\n", "Pq7Wz3Lk9Xm2Vb5"),
];

/// Each of [`ACROSS_LINES`], whole and split in three at every pair of positions, as text,
/// thinking and tool output in turn: through the stages `normalize` runs, and through `scrub`.
#[test]
fn a_secret_whose_context_is_on_another_line_is_redacted_split_in_three() {
    let mut cases = Vec::new();
    for (text, secret) in ACROSS_LINES {
        assert!(!Scrubber::new().scrub_str(text).contains(secret), "whole: {text:?}");
        let cuts = (1..text.len()).filter(|&i| text.is_char_boundary(i));
        for a in cuts.clone() {
            for b in cuts.clone().filter(|&b| b > a) {
                cases.push((secret, [&text[..a], &text[a..b], &text[b..]].map(str::to_owned)));
            }
        }
    }
    let mut stages = Stages::new(1 << 20, Pauses::Wait);
    let (mut input, mut lens) = (Vec::new(), Vec::new());
    for (i, (secret, pieces)) in cases.iter().enumerate() {
        let events = unscrubbed(&format!("c{i}"), pieces, i);
        let mut out = Vec::new();
        events.iter().for_each(|e| stages.apply(e.clone(), &mut out));
        stages.decide(&mut out);
        let (joined, json) = written(&out);
        assert!(!joined.contains(secret) && !json.contains(secret), "the stages leak {secret} of {pieces:?}");
        lens.push(events.len());
        input.extend(events);
    }
    let mut out = through_scrub(&input).into_iter();
    for (i, ((secret, pieces), len)) in cases.iter().zip(lens).enumerate() {
        let (joined, json) = written(&out.by_ref().take(len).collect::<Vec<_>>());
        assert!(!joined.contains(secret) && !json.contains(secret), "scrub leaks {secret} of {pieces:?} ({i})");
    }
}

/// The delta of one kind of stream (`kind` 0: text, 1: thinking, 2: tool output), holding `d`.
fn delta(kind: usize, d: &str) -> Body {
    let d = d.to_owned();
    match kind % 3 {
        0 => Body::Text(Text { delta: d, role: Role::Assistant, piece: Piece::Next }),
        1 => Body::Reasoning(Reasoning { delta: d, piece: Piece::Next }),
        _ => Body::ToolOutput(ToolOutput { tool_call_id: "call_1".into(), stream: Stream::Stdout, delta: d }),
    }
}

/// Canonical events, not scrubbed, of session `session`: `pieces` as deltas of one stream
/// of `kind` (see [`delta`]), then an event that ends the block.
pub(crate) fn unscrubbed(session: &str, pieces: &[String], kind: usize) -> Vec<Event> {
    let mut events: Vec<Event> = pieces
        .iter()
        .map(|p| delta(kind, p))
        .collect::<Vec<_>>()
        .into_iter()
        .chain([Body::ContextCompacted(ContextCompacted { reason: "auto".into() })])
        .enumerate()
        .map(|(i, body)| event(i as u64 + 1, body))
        .collect();
    for e in &mut events {
        e.session_id = session.to_owned();
        e.event_id = e.event_id.replacen("s1", session, 1);
    }
    events
}

/// `events` through the `scrub` binary, read back.
fn through_scrub(events: &[Event]) -> Vec<Event> {
    let input: String = events.iter().map(|e| serde_json::to_string(e).unwrap() + "\n").collect();
    let out = run("scrub", &[], input.as_bytes());
    let out: Vec<Event> = String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let ids = |es: &[Event]| es.iter().map(|e| e.event_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&out), ids(events), "scrub kept every event, in order");
    out
}

#[test]
fn a_secret_split_in_two_at_every_position_is_redacted_by_scrub() {
    let corpus = caught();
    // Every case in one run of the binary, each in a session of its own.
    let mut cases = Vec::new();
    for (i, x) in corpus.iter().enumerate() {
        for at in (1..x.text.len()).filter(|&i| x.text.is_char_boundary(i)) {
            let pieces = [x.text[..at].to_owned(), x.text[at..].to_owned()];
            cases.push((x, at, unscrubbed(&format!("c{i}-{at}"), &pieces, at)));
        }
    }
    let input: Vec<Event> = cases.iter().flat_map(|(_, _, events)| events.iter().cloned()).collect();
    let mut out = through_scrub(&input).into_iter();
    let mut missed = Vec::new();
    for (x, at, events) in &cases {
        let got: Vec<Event> = out.by_ref().take(events.len()).collect();
        let (joined, json) = written(&got);
        if let Some(s) = leaks(x, &[&joined, &json]) {
            missed.push(format!("{s:?} split at {at} of {:?}", x.text));
        }
    }
    eprintln!("scrub, split in two: {} cases over {} secrets, {} leaked", cases.len(), corpus.len(), missed.len());
    assert!(missed.is_empty(), "{} leaked, first: {}", missed.len(), missed[0]);
}

/// A Claude run streaming `pieces` as text, or thinking, deltas with partial messages on.
pub(crate) fn claude(pieces: &[String], thinking: bool) -> String {
    let (block, kind, field) =
        if thinking { ("thinking", "thinking_delta", "thinking") } else { ("text", "text_delta", "text") };
    let mut lines = vec![
        r#"{"type":"system","subtype":"init","session_id":"c1","tools":[],"model":"m"}"#.to_owned(),
        r#"{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[]}},"session_id":"c1"}"#.to_owned(),
        format!(r#"{{"type":"stream_event","event":{{"type":"content_block_start","index":0,"content_block":{{"type":"{block}","{field}":""}}}},"session_id":"c1"}}"#),
    ];
    for p in pieces {
        let delta = serde_json::json!({"type": kind, field: p});
        lines.push(format!(
            r#"{{"type":"stream_event","event":{{"type":"content_block_delta","index":0,"delta":{delta}}},"session_id":"c1"}}"#
        ));
    }
    lines.push(r#"{"type":"stream_event","event":{"type":"content_block_stop","index":0},"session_id":"c1"}"#.into());
    lines.push(r#"{"type":"stream_event","event":{"type":"message_stop"},"session_id":"c1"}"#.into());
    lines.push(r#"{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"c1"}"#.into());
    lines.join("\n") + "\n"
}

/// An ACP agent streaming `pieces` as message chunks, or thought chunks.
fn acp(pieces: &[String], thought: bool) -> String {
    let kind = if thought { "agent_thought_chunk" } else { "agent_message_chunk" };
    let mut lines = vec![
        r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"a1","prompt":[{"type":"text","text":"go"}]}}"#.to_owned(),
    ];
    for p in pieces {
        let update = serde_json::json!({"sessionUpdate": kind, "content": {"type": "text", "text": p}});
        lines.push(format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"a1","update":{update}}}}}"#
        ));
    }
    lines.push(r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#.into());
    lines.join("\n") + "\n"
}

/// A Gemini run streaming `pieces` as `delta: true` messages.
fn gemini(pieces: &[String]) -> String {
    let mut lines =
        vec![r#"{"type":"init","timestamp":"2026-01-01T00:00:00.000Z","session_id":"g1","model":"m"}"#.to_owned()];
    for p in pieces {
        let m = serde_json::json!({"type": "message", "timestamp": "2026-01-01T00:00:00.000Z", "role": "assistant", "content": p, "delta": true});
        lines.push(m.to_string());
    }
    lines.push(r#"{"type":"result","timestamp":"2026-01-01T00:00:00.000Z","status":"success","stats":{}}"#.into());
    lines.join("\n") + "\n"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn a_secret_streamed_in_small_pieces_never_leaks(which in 0usize..10_000, lengths in prop::collection::vec(1usize..9, 1..6), dialect in 0usize..5) {
        let corpus = caught();
        let x = &corpus[which % corpus.len()];
        let pieces = cut(&x.text, &lengths);
        let (input, from) = match dialect {
            0 => (claude(&pieces, false), "claude"),
            1 => (claude(&pieces, true), "claude"),
            2 => (acp(&pieces, false), "acp"),
            3 => (acp(&pieces, true), "acp"),
            _ => (gemini(&pieces), "gemini"),
        };
        let events = minicode_output::normalize(input.as_bytes(), Some(from.parse::<Provider>().unwrap()), Clock::Fixed(0)).unwrap();
        let (joined, json) = written(&events);
        prop_assert!(!joined.is_empty(), "no text came through from {input}");
        let rendered: Vec<String> = [Mode::Normal, Mode::Verbose, Mode::StreamJson]
            .into_iter()
            .map(|m| String::from_utf8_lossy(&render(m, Options::default(), &events)).into_owned())
            .collect();
        let mut outputs = vec![joined.as_str(), json.as_str()];
        outputs.extend(rendered.iter().map(String::as_str));
        prop_assert!(leaks(x, &outputs).is_none(), "{:?} leaked from {pieces:?}", leaks(x, &outputs));
    }

    /// The holder moves text between a stream's events: a second `scrub` over the first's
    /// output, where the text sits in other events than it came in, changes nothing.
    #[test]
    fn scrubbing_split_deltas_twice_is_scrubbing_once(which in 0usize..10_000, lengths in prop::collection::vec(1usize..9, 1..6), kind in 0usize..3) {
        let corpus = caught();
        let x = &corpus[which % corpus.len()];
        let input: String = unscrubbed("p1", &cut(&x.text, &lengths), kind).iter().map(|e| serde_json::to_string(e).unwrap() + "\n").collect();
        let once = run("scrub", &[], input.as_bytes());
        let twice = run("scrub", &[], &once);
        prop_assert_eq!(String::from_utf8_lossy(&twice), String::from_utf8_lossy(&once));
    }

    #[test]
    fn a_secret_in_small_canonical_deltas_never_leaks_through_scrub(which in 0usize..10_000, lengths in prop::collection::vec(1usize..9, 1..6), kind in 0usize..3) {
        let corpus = caught();
        let x = &corpus[which % corpus.len()];
        let pieces = cut(&x.text, &lengths);
        let events = through_scrub(&unscrubbed("p1", &pieces, kind));
        let (joined, json) = written(&events);
        prop_assert!(leaks(x, &[&joined, &json]).is_none(), "{:?} leaked from {pieces:?}", leaks(x, &[&joined, &json]));
    }
}
