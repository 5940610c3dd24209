//! `summarize`: golden reports in the three formats over real captures, Markdown that is a
//! valid GitHub table, `--check` exit codes, and `--merge` agreeing with one pass.

use std::process::Output;

use crate::support::*;

/// The providers whose normalized captures the goldens summarize.
const PROVIDERS: [&str; 5] = ["acp", "claude", "codex", "gemini", "opencode"];

/// The canonical streams the goldens summarize: `(case, events file)`, e.g.
/// `("codex-exit4", "codex/exit4.events.jsonl")`.
fn cases() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = PROVIDERS
        .iter()
        .flat_map(|dir| {
            std::fs::read_dir(fixture(dir))
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                // `acp/<case>@stdout` is the agent's side of `acp/<case>`: the same run again.
                .filter(|n| !n.contains('@'))
                .filter_map(move |n| {
                    Some((format!("{dir}-{}", n.strip_suffix(".events.jsonl")?), format!("{dir}/{n}")))
                })
        })
        .collect();
    // Hand-written streams with what the captures lack: a plan, a compaction, a cost, an
    // unknown type, and two sessions in one stream whose record lists them.
    v.extend(["kitchen-sink", "two-sessions"].map(|c| (format!("project-{c}"), format!("project/{c}.events.jsonl"))));
    v.sort();
    v
}

/// Every case of one provider, one after the other: several runs in one input.
fn all_events(provider: &str) -> Vec<u8> {
    cases().iter().filter(|(c, _)| c.starts_with(provider)).flat_map(|(_, f)| read(f)).collect()
}

const FORMATS: [(&str, &str); 3] = [("json", "json"), ("text", "txt"), ("markdown", "md")];

fn summarize(args: &[&str], input: &[u8]) -> Output {
    bin("summarize").args(args).write_stdin(input.to_vec()).output().expect("runs")
}

#[test]
fn golden_reports_in_every_format() {
    let mut inputs: Vec<(String, Vec<u8>)> = cases().into_iter().map(|(c, f)| (c, read(&f))).collect();
    inputs.extend(PROVIDERS.iter().map(|p| (format!("{p}-all"), all_events(p))));
    let mut failures = Vec::new();
    let mut expected = std::collections::BTreeSet::new();
    for (case, input) in &inputs {
        for (format, ext) in FORMATS {
            let rel = format!("summarize/{case}.{ext}");
            let out = summarize(&["--format", format], input);
            assert!(
                out.status.code() == Some(0),
                "{rel}: exit {:?} {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            failures.extend(golden(&rel, &out.stdout).err());
            expected.insert(format!("{case}.{ext}"));
        }
    }
    assert!(failures.is_empty(), "{} golden reports differ:\n{}", failures.len(), failures.join("\n"));
    let unreferenced: Vec<String> = std::fs::read_dir(fixture("summarize"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| !expected.contains(n))
        .collect();
    assert!(unreferenced.is_empty(), "fixtures/summarize has files no test reads: {unreferenced:?}");
}

#[test]
fn json_is_one_document_whose_ok_is_the_streams_own() {
    for (case, file) in cases() {
        let input = read(&file);
        let last = json_lines(&input).pop().unwrap();
        assert_eq!(last["type"], "summary", "{case}");
        let doc: serde_json::Value =
            serde_json::from_slice(&summarize(&["--format", "json"], &input).stdout).expect("one JSON document");
        assert_eq!(doc["ok"], last["ok"], "{case}");
        assert_eq!(doc["schema"], "minicode.summary.v1");
    }
}

/// Checks that every table in `md` is a GitHub table: a header, a delimiter row and rows,
/// each a line of `|`-separated cells with the same count, and no cell holding a raw `|`.
fn assert_valid_tables(name: &str, md: &str) {
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    let mut tables = 0;
    while i < lines.len() {
        if !lines[i].starts_with('|') {
            i += 1;
            continue;
        }
        let cols = |l: &str| l.matches('|').count();
        let width = cols(lines[i]);
        let delimiter = lines.get(i + 1).copied().unwrap_or("");
        let cells: Vec<&str> = delimiter.trim_matches('|').split('|').map(str::trim).collect();
        assert!(cells.iter().all(|c| *c == "---" || *c == "---:"), "{name}: no delimiter row after {:?}", lines[i]);
        while i < lines.len() && lines[i].starts_with('|') {
            let l = lines[i];
            assert!(l.ends_with(" |") && l.starts_with("| "), "{name}: row not closed: {l:?}");
            assert_eq!(cols(l), width, "{name}: row with another number of cells: {l:?}");
            assert!(!l.contains("\\|"), "{name}: a pipe escaped with a backslash: {l:?}");
            i += 1;
        }
        assert!(lines.get(i).is_none_or(|l| l.is_empty()), "{name}: a table must end with a blank line");
        tables += 1;
    }
    assert!(tables > 0, "{name}: no table");
}

#[test]
fn markdown_is_valid_github_tables() {
    for entry in std::fs::read_dir(fixture("summarize")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            assert_valid_tables(&path.display().to_string(), &std::fs::read_to_string(&path).unwrap());
        }
    }
    // Cells with pipes, newlines and Markdown in a command and its output stay in their cell.
    let nasty = String::from_utf8(read("codex/exit4.events.jsonl"))
        .unwrap()
        .replace("printf 'line1\\\\nline2\\\\n'; exit 4", "echo 'a|b' | grep `x` *y* [z](u)\\\\n#h")
        .replace("line1\\nline2\\n", "col|umn\\n<b>x</b>\\n| --- |\\n");
    let md = String::from_utf8(summarize(&["--format", "markdown"], nasty.as_bytes()).stdout).unwrap();
    assert!(md.contains("<code>echo &#39;a&#124;b&#39;") || md.contains("<code>echo 'a&#124;b'"), "{md}");
    assert!(md.contains("&lt;b&gt;x&lt;/b&gt;"), "{md}");
    assert_valid_tables("nasty", &md);
}

#[test]
fn check_exits_1_when_a_run_is_not_ok() {
    let ok = read("codex/exit4.events.jsonl");
    let failed = read("codex/err429.events.jsonl");
    assert_eq!(summarize(&["--check"], &ok).status.code(), Some(0));
    assert_eq!(summarize(&["--check"], &failed).status.code(), Some(1));
    assert_eq!(summarize(&[], &failed).status.code(), Some(0), "without --check a failed run is still a report");
    assert_eq!(summarize(&["--check"], &[ok.clone(), failed].concat()).status.code(), Some(1));
    assert_eq!(summarize(&["--check"], b"").status.code(), Some(1), "no run at all is not ok");
    // A stream cut before its summary record is not known to be ok.
    let cut: Vec<&str> = std::str::from_utf8(&ok).unwrap().lines().collect();
    let out = summarize(&["--check", "--format", "json"], cut[..cut.len() - 1].join("\n").as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((doc["ok"].as_bool(), doc["runs"]["incomplete"].as_u64()), (Some(false), Some(1)));
}

#[test]
fn malformed_lines_exit_1_naming_the_line_and_the_report_is_still_written() {
    let input = [b"not json\n".to_vec(), read("codex/exit4.events.jsonl")].concat();
    let out = summarize(&["--format", "json"], &input);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((doc["ok"].as_bool(), doc["input"]["invalid"].as_u64()), (Some(true), Some(1)));
}

#[test]
fn merged_summaries_equal_one_summary_of_all_runs_in_any_grouping() {
    let dir = std::env::temp_dir().join(format!("summarize-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut docs = Vec::new();
    for (case, file) in cases().into_iter().filter(|(c, _)| c.starts_with("codex")) {
        let path = dir.join(format!("{case}.json"));
        std::fs::write(&path, summarize(&["--format", "json"], &read(&file)).stdout).unwrap();
        docs.push(path);
    }
    let whole = summarize(&["--format", "json"], &all_events("codex")).stdout;
    let files: Vec<&str> = docs.iter().map(|p| p.to_str().unwrap()).collect();
    let merged = summarize(&[&["--merge", "--format", "json"][..], &files].concat(), b"");
    assert_eq!(merged.status.code(), Some(0), "{}", String::from_utf8_lossy(&merged.stderr));
    assert_eq!(String::from_utf8(merged.stdout).unwrap(), String::from_utf8(whole.clone()).unwrap());
    // Documents may also follow each other on stdin, and merge in any grouping.
    let (left, right) = files.split_at(4);
    let l = summarize(&[&["--merge", "--format", "json"][..], left].concat(), b"").stdout;
    let r = summarize(&[&["--merge", "--format", "json"][..], right].concat(), b"").stdout;
    assert_eq!(summarize(&["--merge", "--format", "json"], &[l, r].concat()).stdout, whole);
    // And render like a summary of the streams.
    let text = summarize(&["--merge"], &std::fs::read(&docs[0]).unwrap()).stdout;
    assert_eq!(text, summarize(&[], &read("codex/ansi.events.jsonl")).stdout);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn merge_rejects_what_is_not_a_summary_document() {
    let out = summarize(&["--merge", "--format", "json"], &read("codex/exit4.events.jsonl"));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("minicode.summary.v1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let input = read("codex/exit4.events.jsonl");
    assert!(!summarize(&[], &input).stdout.contains(&0x1b), "stdout is not a terminal here");
    assert!(summarize(&["--color", "always"], &input).stdout.contains(&0x1b));
    assert!(!summarize(&["--color", "always", "--format", "markdown"], &input).stdout.contains(&0x1b));
}

#[test]
fn help_documents_exit_codes_and_usage_errors_exit_2() {
    let help = bin("summarize").arg("--help").output().unwrap();
    let text = String::from_utf8(help.stdout).unwrap();
    assert!(
        help.status.success() && text.contains("Exit status") && text.contains("--check") && text.contains("--merge"),
        "{text}"
    );
    let bad = bin("summarize").args(["--format", "yaml"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(!bad.stderr.is_empty());
}

#[test]
fn a_closed_stdout_ends_quietly() {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("summarize"))
        .args(["--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before summarize has anything to write (it writes at the end).
    drop(child.stdout.take());
    child.stdin.take().unwrap().write_all(&all_events("claude")).unwrap();
    let status = child.wait().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "exit {status:?}, stderr {err}");
    assert_eq!(err, "");
}

#[test]
fn a_merged_document_whose_counts_disagree_is_reported_not_a_crash() {
    // Found by fuzzing: a document with fewer tools in total than completed made the text
    // and Markdown reports subtract past zero (a panic with overflow checks, else a huge count).
    let mut doc: serde_json::Value = serde_json::from_slice(&read("summarize/acp-claude-code-acp-exit4.json")).unwrap();
    doc["totals"]["tools"]["completed"] = 3.into();
    doc["sessions"][0]["tools"]["completed"] = 3.into();
    let input = serde_json::to_vec(&doc).unwrap();
    for format in ["text", "markdown", "json"] {
        let out = summarize(&["--merge", "--format", format], &input);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{format}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(!stdout.contains("18446744073709551"), "{format}: {stdout}");
    }
}
