//! Linear time, measured: the engine's tables (a run with N open tool calls, N sessions or
//! N open approvals, N runs), the scrubber's held tails (text streamed in small deltas, each of
//! which keeps a tail of up to 8 KiB held) and each family of scrub rules, on the input
//! that is worst for it (an anchor repeated with no valid end, a keyword with no value, a
//! PEM block that never ends, one token with no white space, …). Each case is timed at
//! two sizes ten times apart; the larger may take at most [`BOUND`] times as long.
//!
//! The time is the CPU time of the test's own thread (`CLOCK_THREAD_CPUTIME_ID`), the
//! least of three runs: the tests around this one and other programs share the machine,
//! and waiting for a core is not counted. What is left is cache effects, so a ratio over
//! the bound is measured again, up to three times; a quadratic case is over it every time
//! (about 100), a linear one about 10. Closing what is open sorts it by start order, so n
//! log n: 13 at the tables' sizes. Held tails and keywords with no value, whose larger
//! inputs outgrow the caches, measure 14 to 16 on a 2-core machine: the bound is 20, still
//! five times below what a quadratic case gives.

use std::time::Duration;

use minicode_output::engine::clock::Clock;
use minicode_output::provider::Provider;
use minicode_output::scrub::rules::{Anchor, RULES};
use minicode_output::scrub::Scrubber;
use rustix::time::{clock_gettime, ClockId};
use serde::Deserialize;

use crate::support::read;

/// The largest ratio of the two sizes' times that counts as linear (see the module doc).
const BOUND: f64 = 20.0;

/// The CPU time `f` takes on this thread, the least of three runs.
fn cpu_time(mut f: impl FnMut()) -> Duration {
    let now = || Duration::try_from(clock_gettime(ClockId::ThreadCPUTime)).expect("a CPU time is not negative");
    (0..3)
        .map(|_| {
            let started = now();
            f();
            now() - started
        })
        .min()
        .unwrap()
}

/// `head`, then `line(i)` for `i` in `0..n`, then `tail`.
fn run(head: &str, n: usize, line: impl Fn(usize) -> String, tail: &str) -> String {
    let mut s = String::from(head);
    (0..n).for_each(|i| s += &line(i));
    s + tail
}

/// `n` Codex command executions started and never finished, in one turn.
fn open_tools(n: usize) -> String {
    run(
        "{\"type\":\"thread.started\",\"thread_id\":\"t1\"}\n{\"type\":\"turn.started\"}\n",
        n,
        |i| {
            format!(
            "{{\"type\":\"item.started\",\"item\":{{\"id\":\"item_{i}\",\"type\":\"command_execution\",\"command\":\"true\",\"aggregated_output\":\"\",\"exit_code\":null,\"status\":\"in_progress\"}}}}\n"
        )
        },
        "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n",
    )
}

/// `n` Codex sessions of one turn each.
fn sessions(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{{\"type\":\"thread.started\",\"thread_id\":\"t{i}\"}}\n{{\"type\":\"turn.started\"}}\n{{\"type\":\"item.completed\",\"item\":{{\"id\":\"i0\",\"type\":\"agent_message\",\"text\":\"Done.\"}}}}\n{{\"type\":\"turn.completed\",\"usage\":{{\"input_tokens\":10,\"output_tokens\":2}}}}\n"
            )
        })
        .collect()
}

/// `n` runs of one session each, Codex's and Gemini CLI's in turn: each change of dialect
/// ends a run, as each session file of a backfill does.
fn runs(n: usize) -> String {
    (0..n)
        .map(|i| match i % 2 {
            0 => format!(
                "{{\"type\":\"thread.started\",\"thread_id\":\"t{i}\"}}\n{{\"type\":\"turn.started\"}}\n{{\"type\":\"turn.completed\",\"usage\":{{\"input_tokens\":1,\"output_tokens\":1}}}}\n"
            ),
            _ => format!(
                "{{\"type\":\"init\",\"timestamp\":\"2026-11-29T21:31:49.024Z\",\"session_id\":\"g{i}\",\"model\":\"auto\"}}\n{{\"type\":\"result\",\"timestamp\":\"2026-11-29T21:31:49.209Z\",\"status\":\"success\",\"stats\":{{\"total_tokens\":1}}}}\n"
            ),
        })
        .collect()
}

/// An ACP turn with `n` permission requests never answered.
fn open_approvals(n: usize) -> String {
    run("{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"a1\",\"prompt\":[{\"type\":\"text\",\"text\":\"go\"}]}}\n", n, |i| format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"session/request_permission\",\"params\":{{\"options\":[{{\"kind\":\"allow_once\",\"name\":\"Allow\",\"optionId\":\"allow\"}}],\"sessionId\":\"a1\",\"toolCall\":{{\"toolCallId\":\"t{i}\",\"title\":\"x\"}}}}}}\n"
        ), "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"result\":{\"stopReason\":\"end_turn\"}}\n")
}

/// A Claude run streaming about `n` bytes of text in 4-byte deltas, all of it one line of
/// credential contexts (`curl`, `docker login`, `.netrc`'s `machine`): every delta leaves
/// the line held, up to the longest tail, and is looked at with it.
fn held_tails(n: usize) -> String {
    let text = "curl docker login machine x ".repeat(n / 28 + 1);
    crate::split::claude(&crate::split::cut(&text, &[4]), false)
}

/// The ratio of the CPU times of `work` over `make(10 * small)` and `make(small)`, measured
/// again while it is over [`BOUND`], up to three times; `None` when it stays under it.
fn ratios(name: &str, small: usize, make: impl Fn(usize) -> String, work: impl Fn(&str)) -> Option<String> {
    let (small_input, large_input) = (make(small), make(10 * small));
    let ratios: Vec<f64> = (0..3)
        .map(|_| {
            let large = cpu_time(|| work(&large_input));
            // Below 100 µs the clock's granularity, not the work, makes the figure.
            large.as_secs_f64() / cpu_time(|| work(&small_input)).as_secs_f64().max(1e-4)
        })
        .scan(false, |done, r| (!std::mem::replace(done, r <= BOUND)).then_some(r))
        .collect();
    eprintln!("{name:<40} {:>8} vs {:>8} bytes: ratios {ratios:.1?}", small_input.len(), large_input.len());
    ratios.iter().all(|&r| r > BOUND).then(|| format!("{name}: ratios {ratios:.1?}"))
}

fn normalize(from: &'static str) -> impl Fn(&str) {
    move |input| {
        let from = (from != "auto").then(|| from.parse::<Provider>().unwrap());
        let events = minicode_output::normalize(input.as_bytes(), from, Clock::Fixed(0));
        assert!(events.unwrap().len() > 1);
    }
}

#[test]
fn the_engine_tables_grow_linearly() {
    let failed: Vec<String> = [
        ratios("open tools", 400, open_tools, normalize("codex")),
        ratios("sessions", 400, sessions, normalize("codex")),
        ratios("runs", 1_000, runs, normalize("auto")),
        ratios("open approvals", 400, open_approvals, normalize("acp")),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(failed.is_empty(), "superlinear: {failed:?}");
}

#[test]
fn a_held_tail_is_not_scanned_again_with_every_delta() {
    let failed = ratios("held tails", 2_000, held_tails, normalize("claude"));
    assert!(failed.is_none(), "superlinear: {failed:?}");
}

#[derive(Deserialize)]
struct Secret {
    kind: String,
    text: String,
}

/// For each family of scrub rules, a text that is worst for it, as a head and a unit
/// repeated after it: built from the rule table, so a new rule's anchors are in it.
fn rule_families() -> Vec<(&'static str, String, String)> {
    let (mut literals, mut words) = (Vec::<&str>::new(), Vec::<&str>::new());
    for r in RULES {
        match r.anchor {
            Anchor::Literal(l) => literals.extend(l),
            Anchor::Word(w) | Anchor::Assigned(w) => words.extend(w),
            Anchor::Scan(_) => {}
        }
    }
    let each = |f: &dyn Fn(&str) -> String, of: &[&str]| of.iter().map(|w| f(w)).collect::<String>();
    // The rules found by a hand-written scan: their corpus samples, cut before their end.
    let secrets: Vec<Secret> = String::from_utf8(read("scrub/secrets.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let scanned: String = RULES
        .iter()
        .filter(|r| matches!(r.anchor, Anchor::Scan(_)))
        .filter_map(|r| secrets.iter().find(|s| s.kind == r.kind))
        .map(|s| s.text.chars().take(s.text.chars().count() * 2 / 3).collect::<String>() + " ")
        .collect();
    let none = String::new;
    vec![
        ("prefixes, one after another", none(), literals.concat()),
        ("prefixes with too long a body", none(), each(&|l| format!("{l}{}", "a1B2".repeat(40)), &literals)),
        ("keywords with no value", none(), each(&|w| format!("{w}="), &words)),
        ("keywords, one a line", none(), each(&|w| format!("{w}:\n"), &words)),
        ("XML elements with no value", none(), each(&|w| format!("<{w}>\n"), &words)),
        ("credential contexts on one line", none(), "curl docker login machine x -u -p --password ".to_owned()),
        (
            "a PEM block with no end",
            "-----BEGIN RSA PRIVATE KEY-----\n".to_owned(),
            "MIIEowIBAAKCAQEAx4Yz\n".to_owned(),
        ),
        ("PEM headers with no end", none(), "-----BEGIN PRIVATE KEY-----".to_owned()),
        (
            "PEM header lines with paths and dashes",
            none(),
            "-----BEGIN PRIVATE KEY-----\nComment: C:\\x a--b----\n".to_owned(),
        ),
        (
            "base64 lines ending in other END lines",
            none(),
            "QUJDREVGR0hJSktMTU5PUA==\n-----END CERTIFICATE-----\n".to_owned(),
        ),
        ("one token with no white space", none(), "A1b2C3d4".to_owned()),
        ("scanned formats, cut short", none(), scanned),
    ]
}

#[test]
fn every_rule_family_is_linear_in_its_input() {
    let failed: Vec<String> = rule_families()
        .into_iter()
        .filter_map(|(name, head, unit)| {
            let make = |n: usize| {
                // `n` bytes, however long the unit: the two sizes stay 10× apart.
                let mut text = head.clone() + &unit.repeat(n / unit.len() + 1);
                let end = (n.max(head.len())..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
                text.truncate(end);
                text
            };
            // The small text holds at least one whole unit, so that both sizes hold the same
            // rules' anchors (a unit of every prefix with its body is longer than 6 KiB).
            ratios(name, (6 * 1024).max(head.len() + unit.len()), make, |text| {
                std::hint::black_box(Scrubber::new().scrub_str(text));
            })
        })
        .collect();
    assert!(failed.is_empty(), "superlinear: {failed:?}");
}
