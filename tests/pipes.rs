//! The five binaries as processes in a pipeline: a closed stdout (`| head -1`), a closed
//! or empty stdin, and SIGINT/SIGTERM mid-stream. Whatever happens, what was written is whole
//! lines, and `normalize` still ends with its summary.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;

/// Each binary with arguments that make it write as it reads (summarize writes at the end).
const FILTERS: [(&str, &[&str]); 5] = [
    ("normalize", &[]),
    ("scrub", &[]),
    ("truncate", &["--max-bytes", "64"]),
    ("project", &["--mode", "jsonl"]),
    ("summarize", &["--format", "json"]),
];

/// What `name` reads: provider output for `normalize`, canonical events for the others.
fn stream(name: &str, copies: usize) -> Vec<u8> {
    let one =
        if name == "normalize" { read("codex/exit4.input.jsonl") } else { read("project/kitchen-sink.events.jsonl") };
    one.repeat(copies)
}

/// Output that must be whole JSON lines (summarize's is one indented document).
fn assert_whole_lines(name: &str, out: &[u8]) {
    if name == "summarize" {
        if !out.is_empty() {
            serde_json::from_slice::<serde_json::Value>(out)
                .unwrap_or_else(|e| panic!("summarize: not a whole document ({e})"));
        }
        return;
    }
    assert!(out.is_empty() || out.ends_with(b"\n"), "{name}: output ends inside a line");
    json_lines(out);
}

#[test]
fn a_closed_stdout_is_quiet_for_every_binary() {
    for (name, args) in FILTERS {
        let first = closed_stdout_is_quiet(name, args, stream(name, 3000));
        if name != "summarize" {
            json_lines(first.as_bytes());
        }
    }
    // The human projections too: text, not JSON.
    closed_stdout_is_quiet("project", &["--mode", "verbose"], stream("project", 3000));
    closed_stdout_is_quiet("summarize", &["--format", "text"], stream("summarize", 3000));
}

#[test]
fn a_stdout_closed_before_the_first_write_is_quiet() {
    for (name, args) in FILTERS {
        let mut child = spawn(name, args);
        drop(child.stdout.take());
        let mut stdin = child.stdin.take().unwrap();
        // The child may stop reading once its write fails.
        let _ = stdin.write_all(&stream(name, 50));
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{name}: {:?}; stderr {}", out.status, String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn a_closed_or_null_stdin_reads_as_empty_input() {
    for (name, args) in FILTERS {
        let empty = bin(name).args(args).write_stdin("").output().unwrap();
        assert!(!String::from_utf8_lossy(&empty.stderr).contains("panicked"));
        let null = plain(name).args(args).stdin(Stdio::null()).output().unwrap();
        // `<&-`: the descriptor is not open at all (the runtime reopens it on /dev/null).
        let closed = plain("sh")
            .args(["-c", "exec \"$0\" \"$@\" <&-"])
            .arg(assert_cmd::cargo::cargo_bin(name))
            .args(args)
            .output()
            .unwrap();
        for (how, out) in [("/dev/null", &null), ("closed", &closed)] {
            assert_eq!(
                out.status.code(),
                empty.status.code(),
                "{name}, {how} stdin: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(out.stdout, empty.stdout, "{name}, {how} stdin");
            assert_eq!(out.stderr, empty.stderr, "{name}, {how} stdin");
        }
    }
    // What empty input gives: normalize says so and still writes its summary.
    let out = plain("normalize").stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty"));
    assert_eq!(only(&json_lines(&out.stdout), "summary")["error"]["category"], "INPUT_ERROR");
}

#[test]
fn a_stop_ends_an_input_that_is_always_ready_and_never_ends_a_line() {
    // /dev/zero: every read returns at once and no newline ever comes, so only the stop
    // request can end the line being read.
    let mut filters = FILTERS.to_vec();
    filters.push(("truncate", &["--text"]));
    for (name, args) in filters {
        let what = format!("{name} {args:?} reading /dev/zero, SIGINT");
        let mut child = plain(name)
            .args(args)
            .stdin(std::fs::File::open("/dev/zero").unwrap())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (out, err) = (read_all(child.stdout.take().unwrap()), read_all(child.stderr.take().unwrap()));
        wait_for_handlers(&child);
        std::thread::sleep(Duration::from_millis(200));
        assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
        let status = wait_exit(&mut child, 10, &what);
        let (stdout, stderr) = (out.join().unwrap(), String::from_utf8(err.join().unwrap()).unwrap());
        assert_eq!(status.code(), Some(130), "{what}: stderr {stderr}");
        // Not JSON: the one line read is NUL bytes (scrub removes them, truncate bounds them).
        match name {
            "summarize" => assert_whole_lines(name, &stdout),
            _ if args == ["--text"] => {}
            _ => assert!(
                stdout.ends_with(b"\n") || (name == "project" && stdout.is_empty()),
                "{what}: output ends inside a line"
            ),
        }
        if name == "normalize" {
            let events = json_lines(&stdout);
            assert_eq!(events.last().expect("a summary")["type"], "summary", "{what}");
            assert!(stderr.contains("stopped by signal 2"), "{what}: {stderr}");
        }
    }
}

/// A binary (or `sh`) as a plain `std` command, with the tests' environment.
fn plain(name: &str) -> Command {
    let mut c = Command::new(if name == "sh" { "sh".into() } else { assert_cmd::cargo::cargo_bin(name) });
    c.env("SOURCE_DATE_EPOCH", EPOCH).env("NO_COLOR", "1").env_remove("CLICOLOR_FORCE");
    c
}

fn spawn(name: &str, args: &[&str]) -> Child {
    plain(name).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawns")
}

/// Waits until the child catches SIGINT and SIGTERM (`SigCgt` in /proc), so a signal sent
/// next asks it to stop instead of killing it before `main` has set up.
fn wait_for_handlers(child: &Child) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let wanted = (1u64 << (2 - 1)) | (1 << (15 - 1));
    loop {
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
        let caught =
            status.lines().find_map(|l| l.strip_prefix("SigCgt:")).and_then(|m| u64::from_str_radix(m.trim(), 16).ok());
        if caught.is_some_and(|m| m & wanted == wanted) {
            return;
        }
        assert!(Instant::now() < deadline, "the child never set up its signal handlers");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits for the child to exit, failing after `secs`.
fn wait_exit(child: &mut Child, secs: u64, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}: still running {secs} s after the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// How a run stopped by a signal ended.
struct Stopped {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs `name args`, feeds it `first`, sends `signal` (`INT` or `TERM`) once it is reading,
/// then either keeps its stdin open and idle (`rest: None`: the agent upstream is still
/// running) or writes `rest` and closes it (the agent got the same Ctrl-C and ended).
fn stop_mid_stream(name: &str, args: &[&str], first: &[u8], rest: Option<&[u8]>, signal: &str) -> Stopped {
    let mut child = spawn(name, args);
    let (out, err) = (read_all(child.stdout.take().unwrap()), read_all(child.stderr.take().unwrap()));
    wait_for_handlers(&child);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(first).unwrap();
    stdin.flush().unwrap();
    // Let it read and write what it was given.
    std::thread::sleep(Duration::from_millis(300));
    let status = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let what = format!("{name} {args:?} after SIG{signal}");
    let status = match rest {
        None => {
            let status = wait_exit(&mut child, 10, &what);
            drop(stdin);
            status
        }
        Some(rest) => {
            // It may stop reading before the end of `rest`.
            let _ = stdin.write_all(rest);
            drop(stdin);
            wait_exit(&mut child, 10, &what)
        }
    };
    Stopped {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: String::from_utf8(err.join().unwrap()).unwrap(),
    }
}

/// Reads `pipe` to its end on a thread of its own, so a child never waits on a full pipe.
fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        pipe.read_to_end(&mut v).unwrap();
        v
    })
}

/// A stop between two whole runs, with nothing open, still ends the run `interrupted`: the
/// input went on past the line it stopped at, unread. The same holds for `project` and
/// `summarize` given the agent's own output, which they normalize first.
#[test]
fn a_signal_between_whole_runs_is_still_an_interrupted_run() {
    let agent = stream("normalize", 2);
    for (name, args) in
        [("normalize", &[][..]), ("project", &["--mode", "jsonl"][..]), ("summarize", &["--format", "json"][..])]
    {
        let r = stop_mid_stream(name, args, &agent, None, "TERM");
        let what = format!("{name} {args:?}");
        assert_eq!(r.code, Some(143), "{what}: stderr {}", r.stderr);
        let summary = if name == "summarize" {
            serde_json::from_slice(&r.stdout).unwrap_or_else(|e| panic!("{what}: not a report ({e})"))
        } else {
            let events = json_lines(&r.stdout);
            let turns = events.iter().filter(|e| e["type"] == "turn.failed" || e["type"] == "turn.completed").count();
            assert_eq!(turns, 2, "{what}: both runs were read whole before the signal");
            let summary = events.last().expect("a summary").clone();
            assert_eq!(summary["type"], "summary", "{what}");
            summary
        };
        assert_eq!(summary["status"], "interrupted", "{what}: {summary}");
        assert_eq!(summary["error"]["category"], "INTERRUPTED", "{what}: {summary}");
        assert!(summary["error"]["message"].as_str().unwrap().contains("stopped by signal 15"), "{what}: {summary}");
    }
}

#[test]
fn sigint_and_sigterm_stop_every_binary_at_a_line_boundary() {
    for (signal, number) in [("INT", 2), ("TERM", 15)] {
        for (name, args) in FILTERS {
            for upstream_open in [true, false] {
                let rest = stream(name, 2000);
                // Two whole runs and half of a third, so a turn is open when the signal comes.
                let mut first = stream(name, 2);
                let third = stream(name, 1);
                let half: Vec<&[u8]> = third.split_inclusive(|&b| b == b'\n').collect();
                first.extend(half[..half.len() / 2].concat());
                let r = stop_mid_stream(name, args, &first, (!upstream_open).then_some(&rest[..]), signal);
                let what =
                    format!("{name} {args:?}, SIG{signal}, upstream {}", if upstream_open { "open" } else { "closed" });
                assert_eq!(r.code, Some(128 + number), "{what}: stderr {}", r.stderr);
                assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
                assert_whole_lines(name, &r.stdout);
                let lines = r.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
                let all = stream(name, 2002).split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
                assert!(lines < all, "{what}: it read to the end instead of stopping");
                match name {
                    "normalize" => {
                        let events = json_lines(&r.stdout);
                        let last = events.last().expect("a summary");
                        assert_eq!(last["type"], "summary", "{what}");
                        assert_eq!(last["status"], "interrupted", "{what}");
                        assert!(r.stderr.contains(&format!("stopped by signal {number}")), "{what}: {}", r.stderr);
                    }
                    "summarize" => {
                        let report: serde_json::Value = serde_json::from_slice(&r.stdout).expect("a report");
                        assert!(report.is_object(), "{what}");
                    }
                    _ => assert!(lines > 0, "{what}: nothing written before the signal"),
                }
            }
        }
    }
}
