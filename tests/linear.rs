//! Linear time in the engine's tables: the time to normalize a run with N open tool calls,
//! N sessions or N open approvals grows about as N does; and in the scrubber's held tails:
//! text streamed in small deltas, each of which keeps a tail of up to 8 KiB held. Each case is timed at two sizes
//! ten times apart (the fastest of five runs each, as the machine may be busy, and a ratio
//! over the bound is measured again, up to three times); a quadratic table would make the
//! ratio about 100, a linear one about 10; closing what is open sorts it by start order, so
//! n log n (13 at these sizes) plus cache effects: the bound is 20.

use std::time::{Duration, Instant};

use minicode_output::engine::clock::Clock;
use minicode_output::provider::Provider;

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

/// An ACP turn with `n` permission requests never answered.
fn open_approvals(n: usize) -> String {
    run("{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"a1\",\"prompt\":[{\"type\":\"text\",\"text\":\"go\"}]}}\n", n, |i| format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"session/request_permission\",\"params\":{{\"options\":[{{\"kind\":\"allow_once\",\"name\":\"Allow\",\"optionId\":\"allow\"}}],\"sessionId\":\"a1\",\"toolCall\":{{\"toolCallId\":\"t{i}\",\"title\":\"x\"}}}}}}\n"
        ), "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"result\":{\"stopReason\":\"end_turn\"}}\n")
}

/// The largest ratio of the two sizes' times that counts as linear (see the module doc).
const BOUND: f64 = 20.0;

fn fastest(input: &str, from: &str) -> Duration {
    let from: Provider = from.parse().unwrap();
    (0..5)
        .map(|_| {
            let t = Instant::now();
            let events = minicode_output::normalize(input.as_bytes(), Some(from), Clock::Fixed(0)).unwrap();
            assert!(events.len() > 1);
            t.elapsed()
        })
        .min()
        .unwrap()
}

/// A Claude run streaming about `n` bytes of text in 4-byte deltas, all of it one line of
/// credential contexts (`curl`, `docker login`, `.netrc`'s `machine`): every delta leaves
/// the line held, up to the longest tail, and is looked at with it.
fn held_tails(n: usize) -> String {
    let text = "curl docker login machine x ".repeat(n / 28 + 1);
    crate::split::claude(&crate::split::cut(&text, &[4]), false)
}

/// A case: its name, its input at a size, and the dialect of that input.
type Case = (&'static str, fn(usize) -> String, &'static str);

/// Times each case at two sizes 10× apart (see the module doc) and fails on a ratio over
/// [`BOUND`] three times running.
fn assert_linear(cases: &[Case], small: usize) {
    let mut failed = Vec::new();
    for &(name, make, from) in cases {
        let (small_input, large_input) = (make(small), make(10 * small));
        // The tests around this one share the machine: a ratio over the bound is measured
        // again, up to three times. A superlinear table is over it every time (a quadratic
        // one by about 7 times), noise seldom three times in a row.
        let ratios: Vec<f64> = (0..3)
            .map(|_| fastest(&large_input, from).as_secs_f64() / fastest(&small_input, from).as_secs_f64())
            .scan(false, |done, r| (!std::mem::replace(done, r <= BOUND)).then_some(r))
            .collect();
        eprintln!("{name}: {small} vs {}, ratios {ratios:.1?}", 10 * small);
        if ratios.iter().all(|&r| r > BOUND) {
            failed.push(format!("{name}: ratios {ratios:.1?}"));
        }
    }
    assert!(failed.is_empty(), "superlinear: {failed:?}");
}

#[test]
fn a_held_tail_is_not_scanned_again_with_every_delta() {
    assert_linear(&[("held tails", held_tails, "claude")], 5_000);
}

#[test]
fn the_engine_tables_grow_linearly() {
    let cases: [Case; 3] = [
        ("open tools", open_tools, "codex"),
        ("sessions", sessions, "codex"),
        ("open approvals", open_approvals, "acp"),
    ];
    assert_linear(&cases, 1000);
}
