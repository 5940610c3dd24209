//! `truncate`: properties of the library stage (within budget, on character boundaries,
//! idempotent, never grown, unchanged under budget) and the binary as a filter (events kept
//! in order and count, `--keep`, `--fields`, `--text`).

use minicode_output::bound::Keep;
use minicode_output::event::{
    Body, Event, Outcome, Piece, Raw, RawReason, Role, ShellResult, Stream, Text, ToolEnded, ToolKind, ToolOutput,
    ToolStarted,
};
use minicode_output::truncate::Truncator;
use predicates::prelude::*;
use proptest::prelude::*;

use crate::support::*;

/// Strings with multi-byte characters, and now and then an existing marker.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![4 => "\\PC{0,200}", 1 => "[a-z🎉é日]{0,40}\n\\[… [0-9]{1,3} bytes truncated …\\]\n[a-z🎉é日]{0,40}"]
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        text().prop_map(|delta| Body::Text(Text { delta, role: Role::Assistant, piece: Piece::Next })),
        text().prop_map(|delta| Body::ToolOutput(ToolOutput {
            tool_call_id: "c1".into(),
            stream: Stream::Combined,
            delta
        })),
        (text(), proptest::option::of(text())).prop_map(|(stdout, stderr)| Body::ToolEnded(ToolEnded {
            outcome: Outcome::Failed,
            tool_call_id: "c1".into(),
            name: "shell".into(),
            kind: ToolKind::Shell,
            duration_ms: None,
            output: Some(ShellResult { exit_code: Some(1), stdout: Some(stdout), stderr, truncated: false }),
            error: None,
        })),
        (text(), text()).prop_map(|(command, arg)| Body::ToolStarted(ToolStarted {
            tool_call_id: "c1".into(),
            name: "shell".into(),
            qualified: "shell".into(),
            kind: ToolKind::Shell,
            target: None,
            input: Some(serde_json::json!({"command": command, "args": [arg]})),
            command: Some(command),
            cwd: None,
        })),
        text().prop_map(|line| Body::Raw(Raw { line, reason: RawReason::NotJson })),
    ]
}

fn keep() -> impl Strategy<Value = Option<Keep>> {
    prop_oneof![Just(None), Just(Some(Keep::Tail)), Just(Some(Keep::Head)), Just(Some(Keep::HeadTail))]
}

fn fields(ev: &mut Event) -> Vec<String> {
    let mut v = Vec::new();
    ev.for_each_text_mut(|_, s| v.push(s.clone()));
    v
}

/// True when `new` is `old` itself, a prefix or suffix of it, or a prefix and a suffix of it
/// around a marker stating exactly the bytes between them.
fn is_cut_of(old: &str, new: &str) -> bool {
    if new == old || old.starts_with(new) || old.ends_with(new) {
        return true;
    }
    new.match_indices("\n[… ").any(|(at, _)| {
        let (head, rest) = new.split_at(at);
        let Some((n, tail)) = rest["\n[… ".len()..].split_once(" bytes truncated …]\n") else { return false };
        n.parse::<usize>()
            .is_ok_and(|cut| old.starts_with(head) && old.ends_with(tail) && head.len() + cut + tail.len() == old.len())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn within_budget_on_boundaries_never_grown_and_idempotent(b in body(), max in 0usize..160, keep in keep()) {
        let t = Truncator::new(max, keep);
        let mut ev = event(1, b);
        let before = fields(&mut ev);
        let cut = t.truncate_event(&mut ev);
        let after = fields(&mut ev);
        for (old, new) in before.iter().zip(&after) {
            prop_assert!(new.len() <= max || new == old, "{} bytes > {max}", new.len());
            prop_assert!(new.len() <= old.len());
            prop_assert!(is_cut_of(old, new), "{:?} is not a cut of {:?}", new, old);
        }
        prop_assert_eq!(cut, before != after);
        if let Body::ToolEnded(t) = &ev.body {
            let output_cut = before.iter().zip(&after).take(2).any(|(o, n)| o != n);
            prop_assert_eq!(t.output.as_ref().is_some_and(|o| o.truncated), output_cut);
        }
        let once = ev.clone();
        prop_assert!(!t.truncate_event(&mut ev));
        prop_assert_eq!(ev, once);
    }

    #[test]
    fn under_budget_is_unchanged(b in body(), keep in keep()) {
        let mut ev = event(1, b);
        let longest = fields(&mut ev).iter().map(String::len).max().unwrap_or(0);
        let original = ev.clone();
        prop_assert!(!Truncator::new(longest, keep).truncate_event(&mut ev));
        prop_assert_eq!(ev, original);
    }
}

proptest! {
    // Each case runs the binary twice.
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn the_filter_keeps_order_and_count_and_is_idempotent(bodies in proptest::collection::vec(body(), 1..12), max in 0usize..100) {
        let input: String = bodies.into_iter().enumerate().map(|(i, b)| serde_json::to_string(&event(i as u64 + 1, b)).unwrap() + "\n").collect();
        let args = ["--max-bytes", &max.to_string(), "--keep", "head-tail"];
        let once = run("truncate", &args, input.as_bytes());
        let ids = |out: &[u8]| json_lines(out).iter().map(|e| e["eventId"].clone()).collect::<Vec<_>>();
        prop_assert_eq!(ids(&once), ids(input.as_bytes()));
        prop_assert_eq!(run("truncate", &args, &once), once);
    }
}

#[test]
fn tool_output_keeps_its_tail_and_is_marked_truncated() {
    let big = serde_json::to_string(&event(
        1,
        Body::ToolEnded(ToolEnded {
            outcome: Outcome::Completed,
            tool_call_id: "c1".into(),
            name: "shell".into(),
            kind: ToolKind::Shell,
            duration_ms: None,
            output: Some(ShellResult {
                exit_code: Some(0),
                stdout: Some(format!("{}END", "🎉".repeat(100))),
                stderr: None,
                truncated: false,
            }),
            error: None,
        }),
    ))
    .unwrap();
    let out = bin("truncate")
        .args(["--max-bytes", "10"])
        .write_stdin(format!("{big}\n"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let ev = &json_lines(&out)[0];
    assert_eq!(ev["payload"]["output"]["stdout"], "🎉END");
    assert_eq!(ev["payload"]["output"]["truncated"], true);
}

#[test]
fn fields_choose_what_is_bounded() {
    let raw =
        serde_json::to_string(&event(1, Body::Raw(Raw { line: "r".repeat(100), reason: RawReason::NotJson }))).unwrap();
    let text = serde_json::to_string(&event(
        2,
        Body::Text(Text { delta: "t".repeat(100), role: Role::Assistant, piece: Piece::Next }),
    ))
    .unwrap();
    let out = bin("truncate")
        .args(["--max-bytes", "50", "--fields", "raw"])
        .write_stdin(format!("{raw}\n{text}\n"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let evs = json_lines(&out);
    let line = evs[0]["payload"]["line"].as_str().unwrap();
    assert!(line.len() <= 50 && line.contains("bytes truncated"), "{line}");
    assert_eq!(evs[1]["payload"]["delta"].as_str().unwrap().len(), 100);
    bin("truncate").args(["--fields", "stdout"]).assert().code(2);
}

#[test]
fn text_mode_bounds_the_whole_input() {
    let input: String = (0..2000).map(|i| format!("line {i:04} ✓\n")).collect();
    bin("truncate")
        .args(["--text", "--max-bytes", "28"])
        .write_stdin(input.clone())
        .assert()
        .success()
        .stdout("line 1998 ✓\nline 1999 ✓\n");
    bin("truncate")
        .args(["--text", "--max-bytes", "13", "--keep", "head"])
        .write_stdin(input.clone())
        .assert()
        .success()
        .stdout("line 0000 ✓");
    bin("truncate")
        .args(["--text", "--max-bytes", "12", "--keep", "head"])
        .write_stdin(input.clone())
        .assert()
        .success()
        .stdout("line 0000 ");
    let out = bin("truncate")
        .args(["--text", "--max-bytes", "100", "--keep", "head-tail"])
        .write_stdin(input.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.len() <= 100 && out.starts_with("line 0000") && out.ends_with("line 1999 ✓\n"), "{out}");
    let cut: usize = out.split("[… ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert_eq!(out.len() - minicode_output::bound::marker(cut).len() + cut, input.len());
}

#[test]
fn blank_lines_pass_quietly_and_a_long_one_is_cut_to_the_bound() {
    // Found by fuzzing: a blank line of any length went out whole.
    let input = format!("\n   \n{}\n\t \t\n", " ".repeat(300));
    bin("truncate")
        .args(["--max-bytes", "7"])
        .write_stdin(input)
        .assert()
        .success()
        .stderr("")
        .stdout("\n   \n       \n\t \t\n");
}

#[test]
fn white_space_other_than_spaces_and_tabs_is_text() {
    // Blank means what it means to every filter: only spaces and tabs. A line of U+3000 is
    // text like any other, cut with a marker and named.
    let input = "\u{3000}".repeat(100) + "\n";
    let out = bin("truncate")
        .args(["--max-bytes", "100"])
        .write_stdin(input)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("line 1"))
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.starts_with('\u{3000}') && out.contains("[… "), "{out:?}");
}

#[test]
fn output_never_starts_with_what_reads_as_a_byte_order_mark() {
    // Found by fuzzing: a U+FEFF that starts a line is read back as a byte order mark (of a
    // file concatenated there), so truncating twice differed from once. Elsewhere in a line
    // it is text like any other.
    bin("truncate").write_stdin("\u{feff}\u{feff}abc\n\u{feff}def\n").assert().stdout("abc\ndef\n");
    bin("truncate")
        .args(["--max-bytes", "6", "--keep", "tail"])
        .write_stdin("abc\u{feff}def\n")
        .assert()
        .stdout("def\n");
}

#[test]
fn lines_that_are_not_events_are_bounded_kept_and_named() {
    let long = "x".repeat(300);
    bin("truncate")
        .args(["--max-bytes", "100"])
        .write_stdin(format!("{long}\n{{\"a\":\"{long}\",\"n\":1}}\n"))
        .assert()
        .code(1)
        .stdout(predicate::function(|out: &str| out.lines().count() == 2 && out.lines().all(|l| l.len() < 160)))
        .stderr(predicate::str::contains("line 1").and(predicate::str::contains("line 2")));
}

#[test]
fn codex_fixtures_are_bounded_in_order_and_idempotently() {
    for input in inputs("codex") {
        let events = read(&input.replace(".input.jsonl", ".events.jsonl"));
        let args = ["--max-bytes", "64", "--keep", "head-tail"];
        let once = run("truncate", &args, &events);
        let (before, after) = (json_lines(&events), json_lines(&once));
        assert_eq!(
            after.iter().map(|e| &e["eventId"]).collect::<Vec<_>>(),
            before.iter().map(|e| &e["eventId"]).collect::<Vec<_>>(),
            "{input}"
        );
        for e in &after {
            for k in ["stdout", "stderr"] {
                assert!(e["payload"]["output"][k].as_str().unwrap_or("").len() <= 64, "{input}: {e}");
            }
        }
        assert_eq!(run("truncate", &args, &once), once, "{input}");
        // Under the default budget the stream comes back byte for byte.
        assert_eq!(run("truncate", &[], &events), events, "{input}");
    }
}

#[test]
fn help_version_usage_errors_and_empty_input() {
    bin("truncate")
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Examples:").and(predicate::str::contains("--fields")));
    bin("truncate").arg("--version").assert().success().stdout(predicate::str::starts_with("truncate "));
    bin("truncate").arg("--no-such-flag").assert().code(2).stderr(predicate::str::contains("--no-such-flag"));
    bin("truncate").args(["--keep", "middle"]).assert().code(2);
    bin("truncate").write_stdin("").assert().success().stdout("");
}

#[test]
fn a_closed_stdout_is_a_quiet_exit() {
    let line = serde_json::to_string(&event(
        1,
        Body::Text(Text { delta: "y".repeat(500), role: Role::Assistant, piece: Piece::Next }),
    ))
    .unwrap();
    closed_stdout_is_quiet("truncate", &["--max-bytes", "100"], format!("{line}\n").repeat(20_000).into_bytes());
}
