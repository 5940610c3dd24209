//! Latency: in a live pipe, `normalize` writes the events a line causes before the next
//! line arrives, instead of waiting for a buffer to fill or for the end of input.
//!
//! Each case replays a captured stream one line at a time into a running `normalize`, and
//! after every line waits (up to [`WAIT`], generous for a loaded machine) for the events the
//! golden file says that line causes: those whose `rawRef` ends at it. Only then is the
//! next line written; the summary is checked after stdin is closed. The replays run without
//! `SOURCE_DATE_EPOCH`: with it, the last words of a streamed message wait for its next
//! delta rather than for a pause of the input, so that the output is reproducible (the
//! last test here checks that).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

/// How long one line may take to be answered.
const WAIT: Duration = Duration::from_secs(5);

/// A running filter, with its output lines arriving on a channel from a reader thread.
struct Live {
    child: Child,
    lines: Receiver<String>,
}

impl Live {
    /// `name` with `args`, and `SOURCE_DATE_EPOCH` set to `epoch` (unset without).
    fn run(name: &str, args: &[&str], epoch: Option<&str>) -> Live {
        let mut command = Command::new(assert_cmd::cargo::cargo_bin(name));
        match epoch {
            Some(e) => command.env("SOURCE_DATE_EPOCH", e),
            None => command.env_remove("SOURCE_DATE_EPOCH"),
        };
        let mut child = command
            .args(args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the filter starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Live { child, lines }
    }

    fn write(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().expect("stdin still open");
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .expect("normalize reads");
    }

    /// The next output line as JSON, or why there is none within `WAIT`.
    fn next(&self) -> Result<Value, String> {
        match self.lines.recv_timeout(WAIT) {
            Ok(l) => serde_json::from_str(&l).map_err(|e| format!("output is not JSON ({e}): {l}")),
            Err(RecvTimeoutError::Timeout) => Err(format!("nothing within {WAIT:?}")),
            Err(RecvTimeoutError::Disconnected) => Err("the filter closed its output".into()),
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The input line whose reading emits `event`: where its `rawRef` ends.
fn caused_by(event: &Value) -> u64 {
    let r = &event["rawRef"];
    r["endLine"].as_u64().or(r["line"].as_u64()).expect("every golden event has a rawRef")
}

fn describe(event: &Value) -> String {
    format!("{} {}", event["type"].as_str().unwrap_or("?"), event["eventId"].as_str().unwrap_or("?"))
}

/// Replays fixture `case` line by line into `normalize`; see the module doc.
fn replay(case: &str) {
    replay_into(case, "normalize", &[]);
}

/// Replays fixture `case` line by line into the filter `name args`, which writes canonical
/// events; see the module doc.
fn replay_into(case: &str, name: &str, args: &[&str]) {
    let input = String::from_utf8(read(&format!("{case}.input.jsonl"))).expect("UTF-8 fixture");
    let golden = json_lines(&read(&format!("{case}.events.jsonl")));
    let (summary, events) = golden.split_last().expect("a golden file ends with its summary");
    let mut live = Live::run(name, args, None);
    let mut expected = events.iter().peekable();
    for (i, line) in input.lines().enumerate() {
        let n = i as u64 + 1;
        live.write(line);
        let written = Instant::now();
        while let Some(want) = expected.next_if(|e| caused_by(e) <= n) {
            let got = live.next().unwrap_or_else(|why| {
                panic!("{case}: line {n} written, waiting for {}: {why}", describe(want));
            });
            assert_eq!(describe(&got), describe(want), "{case}: after line {n}");
        }
        assert!(written.elapsed() < WAIT, "{case}: line {n} took {:?} to be answered", written.elapsed());
    }
    assert!(
        expected.peek().is_none(),
        "{case}: events never caused by a line: {:?}",
        expected.map(describe).collect::<Vec<_>>()
    );
    drop(live.child.stdin.take());
    let got = live.next().unwrap_or_else(|why| panic!("{case}: stdin closed, waiting for the summary: {why}"));
    assert_eq!(describe(&got), describe(summary), "{case}: at the end of input");
    assert!(live.next().is_err(), "{case}: nothing after the summary");
    assert!(live.child.wait().expect("the filter exits").success(), "{case}: {name} exit status");
}

#[test]
fn claude_partial_messages_are_answered_line_by_line() {
    replay("claude/text-partial");
}

#[test]
fn claude_tool_calls_are_answered_line_by_line() {
    replay("claude/exit4");
}

#[test]
fn codex_tool_calls_are_answered_line_by_line() {
    replay("codex/exit4");
}

/// `project` reading provider output is as live as `normalize | project`: the tails of
/// streamed text held back by the stages go out when the input pauses.
#[test]
fn project_reading_provider_output_answers_line_by_line() {
    for case in ["claude/text-partial", "claude/exit4", "codex/exit4"] {
        replay_into(case, "project", &["--mode", "jsonl"]);
    }
}

/// A file before a silent pipe: what the file gave is written before the filter waits on the
/// pipe (opening it already waits, for the first bytes).
#[test]
fn a_file_is_answered_before_the_next_source_is_waited_for() {
    let claude = fixture("claude/exit4.input.jsonl");
    let canonical = fixture("claude/exit4.events.jsonl");
    for (name, args) in [
        ("normalize", [claude.to_str().unwrap(), "-"]),
        ("project", [canonical.to_str().unwrap(), "-"]),
        ("scrub", [canonical.to_str().unwrap(), "-"]),
    ] {
        let live = Live::run(name, &args, Some(EPOCH));
        if let Err(why) = live.lines.recv_timeout(WAIT) {
            panic!("{name} {args:?}, stdin open and silent: {why:?}");
        }
    }
}

/// With `SOURCE_DATE_EPOCH` set, where the input pauses does not change the output: a Claude
/// run streaming text (a key among it) in 3-byte deltas, fed line by line with pauses of
/// random length after random lines, gives what it gives read at once, through `normalize`
/// and through `scrub` (the same pieces as canonical text deltas not scrubbed).
#[test]
fn pauses_of_the_input_do_not_change_reproducible_output() {
    let text = "Here is the deploy key 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 and then some more words.\n";
    let pieces = crate::split::cut(&text.repeat(4), &[3]);
    let claude = crate::split::claude(&pieces, false);
    let events: String =
        crate::split::unscrubbed("s1", &pieces, 0).iter().map(|e| serde_json::to_string(e).unwrap() + "\n").collect();
    for (name, input) in [("normalize", claude.into_bytes()), ("scrub", events.into_bytes())] {
        let at_once = run(name, &[], &input);
        let input = String::from_utf8(input).unwrap();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for round in 0..3 {
            let mut live = Live::run(name, &[], Some(EPOCH));
            for line in input.lines() {
                live.write(line);
                // xorshift: pauses after about a third of the lines, up to 15 ms.
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                if seed.is_multiple_of(3) {
                    std::thread::sleep(Duration::from_millis(seed % 16));
                }
            }
            drop(live.child.stdin.take());
            let mut out = Vec::new();
            while let Ok(line) = live.lines.recv_timeout(WAIT) {
                out.extend_from_slice(line.as_bytes());
                out.push(b'\n');
            }
            assert!(out == at_once, "{name}, round {round}: the output depends on where the input paused");
        }
    }
}

/// `scrub` holds the unfinished tail of a delta (here its last word) only until the input
/// pauses: in a live pipe the event comes out before the next line is written.
#[test]
fn scrub_writes_a_held_delta_when_the_input_pauses() {
    let pieces = ["Here is the deploy key ghp_M8TVWzZRBb0W".to_owned(), "LaAUvFMZ44k8cRvicm30Lsaz.".to_owned()];
    let events = crate::split::unscrubbed("s1", &pieces, 0);
    let mut live = Live::run("scrub", &[], None);
    live.write(&serde_json::to_string(&events[0]).unwrap());
    let got = live.next().unwrap_or_else(|why| panic!("a held delta in a silent pipe: {why}"));
    assert_eq!(describe(&got), "text s1:1:1");
}

/// A private key streamed in pieces, the input pausing in its middle: the pause lets other
/// held text go, but the key waits for its END line, as none of its lines after the pause
/// would say it is a key's. Through `normalize`, and through `scrub` reading the same pieces
/// as canonical deltas not scrubbed.
#[test]
fn a_pause_inside_a_private_key_lets_none_of_it_out() {
    let body = key_body(40, 0x2545_f491_4f6c_dd1d);
    let text = key_message(&body);
    let pieces = crate::split::cut(&text, &[50]);
    let claude = crate::split::claude(&pieces, false);
    let events: String =
        crate::split::unscrubbed("s1", &pieces, 0).iter().map(|e| serde_json::to_string(e).unwrap() + "\n").collect();
    for (name, input) in [("normalize", claude), ("scrub", events)] {
        let lines: Vec<&str> = input.lines().collect();
        let mut live = Live::run(name, &[], None);
        let (before, after) = lines.split_at(lines.len() / 2);
        before.iter().for_each(|l| live.write(l));
        std::thread::sleep(Duration::from_millis(300));
        after.iter().for_each(|l| live.write(l));
        drop(live.child.stdin.take());
        let mut shown = String::new();
        while let Ok(event) = live.next() {
            shown.push_str(event["payload"]["delta"].as_str().unwrap_or_default());
        }
        assert!(shown.contains("[REDACTED:private-key]"), "{name}: {shown}");
        let line = shown_line(&body, &shown);
        assert!(line.is_none(), "{name}: shows {line:?}");
    }
}
