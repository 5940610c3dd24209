//! `normalize`: golden outputs over real captures, and the behaviour of a Unix filter.

use predicates::prelude::*;

use crate::support::*;

#[test]
fn golden_codex() {
    golden_dir("codex", &[]);
}

#[test]
fn golden_claude() {
    golden_dir("claude", &[]);
}

#[test]
fn help_names_the_providers_and_exit_codes() {
    bin("normalize")
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("--from").and(predicate::str::contains("Exit status")));
}

#[test]
fn unknown_flag_is_a_usage_error() {
    bin("normalize").arg("--no-such-flag").assert().code(2).stderr(predicate::str::contains("--no-such-flag"));
    bin("normalize").args(["--from", "nope"]).assert().code(2).stderr(predicate::str::contains("unknown provider"));
}

#[test]
fn empty_input_gives_one_failed_summary_and_exit_1() {
    let out = bin("normalize")
        .write_stdin("")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("empty"))
        .get_output()
        .stdout
        .clone();
    let events = json_lines(&out);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "summary");
    assert_eq!(events[0]["ok"], false);
    assert_eq!(events[0]["error"]["category"], "INPUT_ERROR");
}

#[test]
fn garbage_lines_are_kept_as_raw_events_and_named_on_stderr() {
    let assert = bin("normalize").write_stdin("hello\n\u{1b}[31mnot json\n").assert().code(1);
    assert.stderr(predicate::str::contains("line 1").and(predicate::str::contains("line 2")));
    let out = bin("normalize").write_stdin("hello\n\u{1b}[31mnot json\n").output().unwrap().stdout;
    let events = json_lines(&out);
    let raws: Vec<&str> =
        events.iter().filter(|e| e["type"] == "raw").map(|e| e["payload"]["line"].as_str().unwrap()).collect();
    assert_eq!(raws, ["hello", "not json"]);
    assert_eq!(events.last().unwrap()["ok"], false);
}

#[test]
fn a_stream_cut_mid_command_is_interrupted_by_the_normalizer() {
    let input = read("codex/exit4.input.jsonl");
    let cut: Vec<&[u8]> = input.split(|&b| b == b'\n').take(4).collect();
    let mut stream = cut.join(&b"\n"[..]);
    stream.extend_from_slice(b"\n{\"type\":\"item.comp");
    let events = json_lines(&run("normalize", &[], &stream));
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(&types[types.len() - 4..], ["raw", "tool.interrupted", "turn.interrupted", "summary"]);
    assert!(events[events.len() - 3..events.len() - 1].iter().all(|e| e["source"] == "normalizer"));
    assert_eq!(events.last().unwrap()["error"]["category"], "INTERRUPTED");
}

#[test]
fn a_closed_stdout_ends_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("normalize"))
        .arg(fixture("claude/bigout.input.jsonl"))
        .arg(fixture("codex/bigout.input.jsonl"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let status = child.wait().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "exit {status:?}, stderr {err}");
    assert_eq!(err, "");
}

#[test]
fn same_input_same_bytes_with_source_date_epoch() {
    let input = read("claude/subagent.input.jsonl");
    assert_eq!(run("normalize", &[], &input), run("normalize", &[], &input));
}

#[test]
fn every_line_is_referenced_and_crlf_bom_invalid_utf8_work() {
    let input = b"\xef\xbb\xbf{\"type\":\"thread.started\",\"thread_id\":\"t\"}\r\n{\"type\":\"turn.started\"}\r\n\r\n{\"type\":\"item.completed\",\"item\":{\"id\":\"a\",\"type\":\"agent_message\",\"text\":\"caf\xe9\"}}\r\n{\"type\":\"turn.completed\"}";
    let events = json_lines(&run("normalize", &[], input));
    let mut lines: Vec<u64> = Vec::new();
    for e in &events {
        let first = e["rawRef"]["line"].as_u64().unwrap();
        let last = e["rawRef"]["endLine"].as_u64().unwrap_or(first);
        lines.extend(first..=last);
    }
    for n in [1, 2, 4, 5] {
        assert!(lines.contains(&n), "line {n} unreferenced");
    }
    let text = events.iter().find(|e| e["type"] == "text").unwrap();
    assert_eq!(text["payload"]["delta"], "caf\u{fffd}");
    assert_eq!(events.last().unwrap()["ok"], true);
}

#[test]
fn forcing_the_wrong_provider_says_so() {
    bin("normalize")
        .args(["--from", "claude"])
        .arg(fixture("codex/text.input.jsonl"))
        .assert()
        .stderr(predicate::str::contains("looks like codex output"));
}

#[test]
fn claude_exit_code_text_is_metadata() {
    let events = json_lines(&run("normalize", &[], &read("claude/exit4.input.jsonl")));
    let failed = events.iter().find(|e| e["type"] == "tool.failed").unwrap();
    assert_eq!(failed["payload"]["output"]["exit_code"], 4);
    assert_eq!(failed["payload"]["output"]["stdout"], "line1\nline2");
}

/// Numbers are data: a cost or a tool's argument comes out as the agent wrote it, digit for
/// digit, whether `normalize` writes the events or `project` reads the agent's lines itself.
/// serde_json without `float_roundtrip` reads both of these floats as their neighbours.
#[test]
fn floats_keep_every_digit() {
    let input = String::from_utf8(read("claude/exit4.input.jsonl")).unwrap();
    assert!(input.contains(r#""total_cost_usd":0.19196999999999997"#), "the capture states its cost so");
    let input = input.replacen(r#""input":{"#, r#""input":{"x":2.2250738585072011e-308,"y":0.19196999999999997,"#, 1);
    for (name, args) in [("normalize", &[][..]), ("project", &["--mode", "jsonl"][..])] {
        let out = String::from_utf8(run(name, args, input.as_bytes())).unwrap();
        let started = out.lines().find(|l| l.contains(r#""type":"tool.started""#)).expect("a tool.started line");
        assert!(started.contains(r#""x":2.225073858507201e-308"#), "{name}: {started}");
        assert!(started.contains(r#""y":0.19196999999999997"#), "{name}: {started}");
        let usage = out.lines().find(|l| l.contains(r#""type":"usage""#)).expect("a usage line");
        assert!(usage.contains(r#""cost_usd":0.19196999999999997"#), "{name}: {usage}");
    }
}

#[test]
fn claude_partial_messages_do_not_duplicate_text() {
    let events = json_lines(&run("normalize", &[], &read("claude/text-partial.input.jsonl")));
    let text: String =
        events.iter().filter(|e| e["type"] == "text").map(|e| e["payload"]["delta"].as_str().unwrap()).collect();
    assert_eq!(text.matches("Hello from the mock model.").count(), 1);
}

/// Reading and parsing run on one thread, scrubbing and writing on another, with events
/// passed over in batches: by size from a file, and at every pause from a pipe. Neither way
/// may lose, repeat or reorder an event, or a diagnostic.
#[test]
fn events_keep_their_order_across_the_reading_and_writing_threads() {
    let n = 3000;
    let input: String = (1..=n).map(|i| format!("not json {i} {}\n", "x".repeat(600))).collect();
    let path = std::env::temp_dir().join(format!("normalize-threads-{}.jsonl", std::process::id()));
    std::fs::write(&path, &input).unwrap();

    let from_file = bin("normalize").args(["--from", "claude"]).arg(&path).assert().code(1).get_output().clone();
    std::fs::remove_file(&path).unwrap();
    let from_pipe =
        bin("normalize").args(["--from", "claude"]).write_stdin(input).assert().code(1).get_output().clone();
    let events = json_lines(&from_file.stdout);
    let lines: Vec<Option<u64>> =
        events.iter().filter(|e| e["type"] == "raw").map(|e| e["rawRef"]["line"].as_u64()).collect();
    assert!(lines.iter().copied().eq((1..=n as u64).map(Some)), "one raw event per line, in order");
    assert_eq!((events.len(), &events[n]["type"]), (n + 1, &serde_json::json!("summary")));
    assert!(from_file.stdout == from_pipe.stdout, "a file and a pipe give the same events");
    assert_eq!(from_file.stderr, from_pipe.stderr);
    let said: Vec<String> = String::from_utf8_lossy(&from_file.stderr).lines().map(str::to_owned).collect();
    let first: Vec<String> =
        (1..said.len()).map(|i| format!("normalize: line {i}: kept as a raw event (not JSON)")).collect();
    assert_eq!(said[..said.len() - 1], first[..], "the first diagnostics, in line order");
    // The rest of the raw lines, and the summary's input error (no line was understood).
    let more = n - first.len() + 1;
    assert_eq!(said.last().map(String::as_str), Some(format!("normalize: … and {more} more message(s)").as_str()));
}

/// A file that cannot be read is said and counted, and does not stop the others: their
/// events and one summary are written, and the exit status (2) says that input was missed.
#[test]
fn a_file_that_cannot_be_read_is_said_counted_and_skipped() {
    let (first, second) = (fixture("claude/ansi.input.jsonl"), fixture("codex/exit4.input.jsonl"));
    let out = bin("normalize").arg(&first).arg("no/such/file.jsonl").arg(&second).assert().code(2).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot read no/such/file.jsonl"), "{stderr}");
    assert!(stderr.contains("1 input file(s) could not be read"), "{stderr}");
    let both = bin("normalize").arg(&first).arg(&second).output().unwrap().stdout;
    assert!(events_of(&out.stdout) == events_of(&both), "the same events as the readable files alone");
    let events = json_lines(&out.stdout);
    assert_eq!(events.last().unwrap()["payload"]["input"]["unreadable"], 1);
    assert!(json_lines(&both).last().unwrap()["payload"]["input"].get("unreadable").is_none(), "0 is not written");
}

/// `--files-from` reads the paths of a list (one per line, or NUL-separated with `-0`, as
/// `find -print0` writes them) and gives what the same paths as operands give.
#[test]
fn files_from_a_list_read_as_operands_would_be() {
    let paths = [fixture("claude/exit4.input.jsonl"), fixture("codex/exit4.input.jsonl")];
    let operands = bin("normalize").args(&paths).assert().success().get_output().stdout.clone();
    let mut lines = Vec::new();
    let mut nul = Vec::new();
    for p in &paths {
        lines.extend_from_slice(format!("{}\n\n", p.display()).as_bytes());
        nul.extend_from_slice(format!("{}\0", p.display()).as_bytes());
    }
    let listed = bin("normalize").args(["--files-from", "-"]).write_stdin(lines).assert().success();
    assert!(listed.get_output().stdout == operands, "a list with a blank line between its paths");
    let listed = bin("normalize").args(["--files-from", "-", "-0"]).write_stdin(nul.clone()).assert().success();
    assert!(listed.get_output().stdout == operands, "a NUL-separated list");
    // One listed file is still named: the list is of files, whatever its length.
    let mut one = bin("normalize");
    one.args(["--files-from", "-"]).write_stdin(format!("{}\n", paths[0].display()));
    let one = json_lines(&one.assert().success().get_output().stdout);
    assert!(one.iter().all(|e| e["rawRef"]["file"] == paths[0].display().to_string()));
    // `summarize` takes the same list of canonical files.
    let canonical = std::env::temp_dir().join(format!("files-from-{}.jsonl", std::process::id()));
    std::fs::write(&canonical, &operands).unwrap();
    let mut listed = bin("summarize");
    listed
        .args(["--files-from", "-", "--format", "json"])
        .write_stdin(format!("{}\nno/such/file\n", canonical.display()));
    let listed = listed.assert().code(2);
    let report: serde_json::Value = serde_json::from_slice(&listed.get_output().stdout).unwrap();
    assert_eq!(report["runs"]["total"], 2);
    assert_eq!(report["input"]["unreadable"], 1);
    std::fs::remove_file(&canonical).ok();
    bin("normalize").args(["-0"]).assert().code(2).stderr(predicate::str::contains("--files-from"));
    bin("normalize").args(["--files-from", "no/such/list"]).assert().code(2);
}

/// The events of `normalize`'s output but the summary, without their provenance: input line
/// numbers differ between a run alone and the same run after others.
fn events_of(out: &[u8]) -> Vec<serde_json::Value> {
    let mut events = json_lines(out);
    let summary = events.pop().expect("a summary");
    assert_eq!(summary["type"], "summary");
    events.iter_mut().for_each(|e| drop(e.as_object_mut().unwrap().remove("rawRef")));
    events
}

/// The provider of each session, in the order the sessions start.
fn providers(events: &[serde_json::Value]) -> Vec<&str> {
    of_type(events, "session.started").iter().map(|e| e["payload"]["provider"].as_str().unwrap()).collect()
}

/// Runs of several agents, given as files or concatenated on stdin, are each read in their
/// own dialect: the same events as each run normalized alone (a run cut short included), in
/// the same order, and one summary for them all. `--from` keeps to the dialect it names.
#[test]
fn runs_of_several_agents_are_each_read_in_their_own_dialect() {
    let runs = [
        "claude/exit4",
        "codex/cancel",
        "opencode/exit4",
        "gemini/exit4",
        "acp/codex-acp-exit4",
        "opencode/err400",
        "claude/text",
    ];
    let files: Vec<String> = runs.iter().map(|r| format!("{r}.input.jsonl")).collect();
    let alone: Vec<serde_json::Value> =
        files.iter().flat_map(|f| events_of(&run("normalize", &[], &read(f)))).collect();
    assert!(alone.iter().any(|e| e["type"] == "tool.interrupted"), "a run is cut short");

    let paths: Vec<String> = files.iter().map(|f| fixture(f).display().to_string()).collect();
    let as_files = bin("normalize").args(&paths).assert().success().get_output().stdout.clone();
    let joined: Vec<u8> = files.iter().flat_map(|f| read(f)).collect();
    let on_stdin = run("normalize", &[], &joined);
    assert!(events_of(&as_files) == events_of(&on_stdin), "files and their concatenation give the same events");
    // Read as files, provenance names the file and counts its own lines.
    let mut before = std::collections::HashMap::new();
    let mut total = 0;
    for (path, f) in paths.iter().zip(&files) {
        before.insert(path.as_str(), total);
        total += read(f).split(|&b| b == b'\n').filter(|l| !l.is_empty()).count() as u64;
    }
    for (named, counted) in json_lines(&as_files).iter().zip(json_lines(&on_stdin)) {
        // What the normalizer closes when a run is cut is referenced where the run ends: the
        // end of its file, or, on stdin, the line that begins the next run.
        if named["source"] == "normalizer" {
            continue;
        }
        let (named, counted) = (&named["rawRef"], &counted["rawRef"]);
        let offset = before[named["file"].as_str().expect("every event names its file")];
        assert_eq!(named["line"].as_u64().unwrap() + offset, counted["line"].as_u64().unwrap(), "{named} is {counted}");
        let end = |r: &serde_json::Value| r["endLine"].as_u64().or(r["line"].as_u64()).unwrap();
        assert_eq!(end(named) + offset, end(counted));
    }
    assert!(events_of(&on_stdin) == alone, "each run's events, as alone");
    let events = json_lines(&on_stdin);
    assert_eq!(events.last().unwrap()["payload"]["sessions"].as_array().map(Vec::len), Some(runs.len()));
    let providers = providers(&events);
    assert_eq!(providers, ["claude-code", "codex", "opencode", "gemini-cli", "codex-acp", "opencode", "claude-code"]);

    let forced = json_lines(&run("normalize", &["--from", "claude"], &joined));
    assert!(
        of_type(&forced, "session.started").len() == 2 && !of_type(&forced, "raw").is_empty(),
        "--from claude reads only Claude's runs"
    );
}

/// A run whose start is missing (the line that names its agent) is named by its own dialect,
/// not after the run before it.
#[test]
fn a_run_without_its_start_is_named_by_its_own_dialect() {
    let claude = read("claude/exit4.input.jsonl");
    let headless = &claude[claude.iter().position(|&b| b == b'\n').unwrap() + 1..];
    let codex = read("codex/exit4.input.jsonl");
    let alone: Vec<serde_json::Value> =
        [&codex[..], headless].iter().flat_map(|part| events_of(&run("normalize", &[], part))).collect();
    let joined = events_of(&run("normalize", &[], &[&codex[..], headless].concat()));
    assert!(joined == alone, "each run's events, as alone");
    let providers = providers(&joined);
    assert_eq!(providers, ["codex", "claude-code"]);
}

/// Claude Code calls a run the model refused a success (`subtype: success`, `stop_reason:
/// refusal`): it is a refused, failed run, as ACP's `refusal` stop reason is.
#[test]
fn a_claude_result_whose_model_refused_is_a_refused_run() {
    let text = String::from_utf8(read("claude/text.input.jsonl")).unwrap();
    let refused = text.replace(r#""stop_reason":"end_turn","session_id""#, r#""stop_reason":"refusal","session_id""#);
    assert_ne!(refused, text);
    let summary = |input: &str| json_lines(&run("normalize", &[], input.as_bytes())).pop().unwrap();
    assert_eq!(summary(&text)["ok"], true);
    let s = summary(&refused);
    assert_eq!((&s["ok"], &s["status"], &s["error"]["category"]), (&false.into(), &"failed".into(), &"REFUSED".into()));
}
