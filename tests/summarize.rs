//! `summarize`: golden reports in the three formats over real captures, Markdown that is a
//! valid GitHub table, `--check` exit codes, and `--merge` agreeing with one pass.

use std::process::Output;

use minicode_output::provider::Provider;

use crate::support::*;

/// The dialects whose normalized captures (`fixtures/<dialect>/*.events.jsonl`) the goldens
/// summarize: every registered one that has some, so a new one's captures need goldens.
fn providers() -> Vec<&'static str> {
    Provider::ALL
        .iter()
        .map(|p| p.name())
        .filter(|p| {
            std::fs::read_dir(fixture(p)).is_ok_and(|d| {
                d.filter_map(Result::ok).any(|e| e.file_name().to_string_lossy().ends_with(".events.jsonl"))
            })
        })
        .collect()
}

/// The canonical streams the goldens summarize: `(case, events file)`, e.g.
/// `("codex-exit4", "codex/exit4.events.jsonl")`.
fn cases() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = providers()
        .into_iter()
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
    inputs.extend(providers().into_iter().map(|p| (format!("{p}-all"), all_events(p))));
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
        assert_eq!(doc["schema"], "minicode.summary.v2");
        assert_eq!(doc["verdict"], last["payload"]["verdict"], "{case}: the report's verdict is the record's");
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
fn check_exits_0_1_or_3_by_verdict_and_says_why_for_each_run_that_is_not_a_success() {
    let ok = read("codex/exit4.events.jsonl");
    let failed = read("codex/err429.events.jsonl");
    let write = read("codex/write.events.jsonl");
    let cut: Vec<&str> = std::str::from_utf8(&write).unwrap().lines().collect();
    // A stream cut before its summary record is not known to be ok: incomplete. (Only at
    // the end of the input: what follows a cut stream belongs to it.)
    let cut = cut[..cut.len() - 1].join("\n").into_bytes();
    let unknown = read("opencode/err500.events.jsonl");
    let code = |input: &[u8]| summarize(&["--check"], input).status.code();
    assert_eq!(code(&ok), Some(0));
    assert_eq!(code(&failed), Some(1));
    assert_eq!(summarize(&[], &failed).status.code(), Some(0), "without --check a failed run is still a report");
    assert_eq!(code(&[ok.clone(), failed.clone()].concat()), Some(1));
    assert_eq!(code(&[failed.clone(), cut.clone()].concat()), Some(1), "failed wins");
    assert_eq!(code(&cut), Some(3), "a broken measurement is not a bad agent");
    assert_eq!(code(&unknown), Some(3));
    assert_eq!(code(&[ok.clone(), unknown.clone()].concat()), Some(3));
    assert_eq!(code(b""), Some(3), "no run at all");
    assert_eq!(code(&[b"not json\n".to_vec(), ok.clone()].concat()), Some(3), "unreadable input");
    let out = summarize(&["--check", "--format", "json"], &cut);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((doc["ok"].as_bool(), doc["verdict"].as_str()), (Some(false), Some("incomplete")));
    assert_eq!((doc["runs"]["total"].as_u64(), doc["runs"]["incomplete"].as_u64()), (Some(1), Some(1)));
    // One line per run that is not a success, in the error grammar; none for the others.
    let out = summarize(&["--check"], &[ok, failed, unknown, cut].concat());
    let err = String::from_utf8(out.stderr).unwrap();
    let mut lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    lines.sort_by_key(|l| ["failed: ", "incomplete: ", "unknown: "].iter().position(|v| l.contains(v)));
    for (line, verdict) in lines.iter().zip(["failed", "incomplete", "unknown"]) {
        assert!(line.starts_with("summarize: run ") && line.contains(&format!(" {verdict}: ")), "{line}");
        assert!(line.contains("; why: ") && line.contains("; next: "), "{line}");
    }
    assert!(lines[0].contains("429"), "{}", lines[0]);
}

#[test]
fn a_self_contradicting_result_is_a_failed_run() {
    // Claude Code's rate-limited run: `subtype: success`, `is_error: true`, exit 0.
    let input = read("claude/text.input.jsonl");
    let text = String::from_utf8(input).unwrap();
    let last = text.lines().last().unwrap();
    let mut result: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!((result["type"].as_str(), result["subtype"].as_str()), (Some("result"), Some("success")));
    result["is_error"] = true.into();
    result["result"] = "API Error: Rate limit reached".into();
    let contradicting = text.replace(last, &result.to_string());
    let canonical = bin("normalize").write_stdin(contradicting).output().unwrap().stdout;
    let record = json_lines(&canonical).pop().unwrap();
    assert_eq!((record["ok"].as_bool(), record["payload"]["verdict"].as_str()), (Some(false), Some("failed")));
    assert_eq!(summarize(&["--check"], &canonical).status.code(), Some(1));
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
        String::from_utf8_lossy(&out.stderr).contains("minicode.summary.v2"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A summary saved with a UTF-8 byte order mark (PowerShell's `Out-File -Encoding utf8`) is
/// merged as it is without one; a UTF-16 one already was.
#[test]
fn merge_reads_a_summary_saved_with_a_byte_order_mark() {
    let summary = summarize(&["--format", "json"], &read("codex/exit4.events.jsonl")).stdout;
    let merged = summarize(&["--merge", "--format", "json"], &summary);
    assert!(merged.status.success() || merged.status.code() == Some(1), "{merged:?}");
    let marked = summarize(&["--merge", "--format", "json"], &[&b"\xef\xbb\xbf"[..], &summary].concat());
    assert_eq!(String::from_utf8_lossy(&marked.stderr), String::from_utf8_lossy(&merged.stderr));
    assert_eq!((marked.status.code(), marked.stdout), (merged.status.code(), merged.stdout));
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

#[test]
fn merge_is_a_union_three_parts_in_six_orders_and_a_repeated_part_give_the_same_bytes() {
    let dir = std::env::temp_dir().join(format!("summarize-union-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // C shares a run with B (codex exit4), so the union must count it once.
    let inputs =
        [all_events("claude"), all_events("codex"), [read("codex/exit4.events.jsonl"), all_events("gemini")].concat()];
    let parts: Vec<String> = inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            let path = dir.join(format!("part{i}.json"));
            std::fs::write(&path, summarize(&["--format", "json"], input).stdout).unwrap();
            path.to_str().unwrap().to_owned()
        })
        .collect();
    let merge = |files: &[&str]| {
        let out = summarize(&[&["--merge", "--format", "json"][..], files].concat(), b"");
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    let (a, b, c) = (parts[0].as_str(), parts[1].as_str(), parts[2].as_str());
    let first = merge(&[a, b, c]);
    for order in [[a, c, b], [b, a, c], [b, c, a], [c, a, b], [c, b, a]] {
        assert!(merge(&order) == first, "{order:?} merges to other bytes");
    }
    assert!(merge(&[a, b, c, a]) == first, "a part merged twice counts once");
    assert!(merge(&[c, c, b, a, b]) == first);
    // Grouping: (a ∪ b) ∪ c = a ∪ (b ∪ c), through documents written in between.
    let ab = dir.join("ab.json");
    std::fs::write(&ab, merge(&[a, b])).unwrap();
    let bc = dir.join("bc.json");
    std::fs::write(&bc, merge(&[b, c])).unwrap();
    assert!(merge(&[ab.to_str().unwrap(), c]) == first && merge(&[a, bc.to_str().unwrap()]) == first);
    // And the union is the summary of every stream read once.
    let once = summarize(&["--format", "json"], &inputs.concat()).stdout;
    assert_eq!(String::from_utf8(first.clone()).unwrap(), String::from_utf8(once).unwrap());
    let doc: serde_json::Value = serde_json::from_slice(&first).unwrap();
    let keys: Vec<&str> = doc["sessions"].as_array().unwrap().iter().map(|s| s["key"].as_str().unwrap()).collect();
    let distinct: std::collections::BTreeSet<&str> = keys.iter().copied().collect();
    assert_eq!(keys.len(), distinct.len());
    let expected: u64 = [all_events("claude"), all_events("codex"), all_events("gemini")]
        .iter()
        .map(|i| {
            serde_json::from_slice::<serde_json::Value>(&summarize(&["--format", "json"], i).stdout).unwrap()["runs"]
                ["total"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert_eq!(doc["runs"]["total"].as_u64(), Some(expected));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_run_normalized_again_keeps_its_key() {
    // Read at another time (no provider timestamps, no SOURCE_DATE_EPOCH) and among other
    // files: the timestamps and rawRefs differ, the run is the same.
    let input = fixture("codex/exit4.input.jsonl");
    let key = |out: Vec<u8>| {
        let doc: serde_json::Value = serde_json::from_slice(&summarize(&["--format", "json"], &out).stdout).unwrap();
        doc["sessions"].as_array().unwrap().iter().map(|s| s["key"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    let once = bin("normalize").env("SOURCE_DATE_EPOCH", "1").arg(&input).output().unwrap().stdout;
    let again = bin("normalize").env("SOURCE_DATE_EPOCH", "99999").arg(&input).output().unwrap().stdout;
    assert_ne!(once, again);
    assert_eq!(key(once), key(again));
}

/// Counts come from the input, so adding them saturates: token counts of 2^64−1 and 2 are
/// 2^64−1 (a plain `+` gives 1 in release and panics in a debug build, which these tests run).
#[test]
fn counts_from_the_input_saturate() {
    const MAX: u64 = u64::MAX;
    let events = |session: &str| {
        let line = |n: u32, ty: &str, payload: &str| {
            format!(
                r#"{{"schema":"minicode.output.v1","eventId":"{session}:1:{n}","type":"{ty}","timestamp":"2026-01-01T00:00:0{n}.000Z","sessionId":"{session}","turnId":1,"source":"agent","severity":"info","visibility":["machine"],"rawRef":{{"line":{n}}},"payload":{payload}}}"#
            )
        };
        [
            line(1, "session.started", r#"{"provider":"acme"}"#),
            line(2, "usage", &format!(r#"{{"input_tokens":{MAX}}}"#)),
            line(3, "usage", r#"{"input_tokens":2}"#),
        ]
        .join("\n")
            + "\n"
    };
    // The run is incomplete (exit 1 with one pass); a merge without `--check` exits 0.
    let json = |out: Output| -> serde_json::Value {
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let one = json(summarize(&["--format", "json"], events("s1").as_bytes()));
    assert_eq!(one["totals"]["usage"]["input_tokens"], MAX);

    // Summaries that state absurd counts merge into the largest count, not a wrapped one.
    let absurd = |session: &str| {
        let mut doc = json(summarize(&["--format", "json"], events(session).as_bytes()));
        doc["streams"][0]["lines"] = MAX.into();
        doc["sessions"][0]["turns"] = MAX.into();
        doc["sessions"][0]["warnings"] = MAX.into();
        doc["sessions"][0]["shell"]["stdoutBytes"] = MAX.into();
        doc["sessions"][0]["usage"]["output_tokens"] = MAX.into();
        serde_json::to_vec(&doc).unwrap()
    };
    let merged = json(summarize(&["--merge", "--format", "json"], &[absurd("s1"), absurd("s2")].concat()));
    let totals = &merged["totals"];
    for (what, got) in [
        ("input.lines", &merged["input"]["lines"]),
        ("turns", &totals["turns"]),
        ("warnings", &totals["warnings"]),
        ("shell.stdoutBytes", &totals["shell"]["stdoutBytes"]),
        ("usage.input_tokens", &totals["usage"]["input_tokens"]),
        ("usage.output_tokens", &totals["usage"]["output_tokens"]),
    ] {
        assert_eq!(*got, MAX, "{what}");
    }
    // The text report reads the same figures.
    let text = summarize(&["--merge"], &[absurd("s1"), absurd("s2")].concat());
    assert_eq!(text.status.code(), Some(0), "{}", String::from_utf8_lossy(&text.stderr));
}

/// Provider output read directly is normalized first, in every format; `--strict` keeps the
/// old error.
#[test]
fn provider_output_is_normalized_first() {
    // Gemini CLI's notices come before its first event; a notice before Claude Code's too.
    let cases = ["claude/exit4", "codex/exit4", "opencode/exit4", "acp/codex-acp-exit4", "gemini/constructed/notices"];
    let cases = cases.iter().map(|c| (c.to_string(), read(&format!("{c}.input.jsonl"))));
    let notice = [b"npm WARN a notice\n\n".as_slice(), &read("claude/exit4.input.jsonl")].concat();
    for (case, input) in cases.chain([("a notice, then claude/exit4".to_owned(), notice)]) {
        let events = run("normalize", &[], &input);
        for (format, _) in FORMATS {
            let piped = summarize(&["--format", format], &events);
            let direct = summarize(&["--format", format], &input);
            assert_eq!(piped.status.code(), direct.status.code(), "{case} {format}");
            assert!(piped.stdout == direct.stdout, "{case} --format {format}: differs from normalize | summarize");
        }
    }
    // Several files, one with an oversized line: a run per file, the line counted.
    let files = provider_files("summarize-provider-files");
    let events = bin("normalize").args(&files).output().unwrap().stdout;
    for (format, _) in FORMATS {
        let piped = summarize(&["--format", format], &events);
        let direct = bin("summarize").args(["--format", format]).args(&files).output().unwrap();
        assert!(piped.stdout == direct.stdout, "--format {format}: two files differ from normalize | summarize");
    }
    let json = String::from_utf8(summarize(&["--format", "json"], &events).stdout).unwrap();
    assert!(json.contains(r#""oversized": 1,"#), "{json}");
    // Canonical files beside agents' own: each file is read as what it is.
    let (files, expected) = mixed_files("summarize-mixed-files");
    for (format, _) in FORMATS {
        let piped = summarize(&["--format", format], &expected);
        let direct = bin("summarize").args(["--format", format]).args(&files).output().unwrap();
        assert_eq!(piped.status.code(), direct.status.code(), "--format {format}: mixed files");
        assert!(piped.stdout == direct.stdout, "--format {format}: mixed files differ from reading each as it is");
    }
    // A file of text alone after an agent's output is read as that output was.
    let note = files[0].with_file_name("note.txt");
    std::fs::write(&note, "a note, no JSON\n").unwrap();
    // Also when a canonical file follows it.
    let pair = [&files[3], &note];
    let canonical = std::fs::read(&files[2]).unwrap();
    let piped = [bin("normalize").args(pair).output().unwrap().stdout, canonical].concat();
    let piped = summarize(&["--format", "json"], &piped);
    let direct = bin("summarize").args(["--format", "json"]).args(pair).arg(&files[2]).output().unwrap();
    assert_eq!(direct.status.code(), Some(0), "{}", String::from_utf8_lossy(&direct.stderr));
    assert!(piped.stdout == direct.stdout, "a text file after provider output differs from normalize | summarize");
    let strict = summarize(&["--strict"], &read("codex/exit4.input.jsonl"));
    assert_eq!(strict.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&strict.stderr).contains("line 1: not a canonical event"));
}

/// Canonical events that did not come from `normalize` were never scrubbed: what the report
/// shows of them (the prompt, the error, a failing call's command and output) is, in every
/// format and when merged. (What `normalize` scrubbed comes through as it was: the golden
/// reports, of `normalize`'s output, hold that.)
#[test]
fn a_report_shows_no_secret_of_events_that_were_never_scrubbed() {
    let token = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5";
    let event = |n: u32, kind: &str, extra: &str, payload: &str| {
        format!(
            r#"{{"schema":"minicode.output.v1","eventId":"S1:{t}:{n}","type":"{kind}","sessionId":"S1","turnId":{t}{extra},"payload":{payload}}}"#,
            t = u32::from(n > 1)
        )
    };
    let input = [
        event(1, "session.started", "", r#"{"provider":"x"}"#),
        // Each secret where the report's bound cuts its string (a prompt's 500 bytes, a
        // command's 200, an output excerpt's last 200), and one as a compaction's reason,
        // which the report counts by.
        event(2, "turn.started", "", &format!(r#"{{"prompt":"{}{token}"}}"#, "p".repeat(480))),
        event(3, "context.compacted", "", &format!(r#"{{"reason":"{token}"}}"#)),
        event(
            4,
            "tool.started",
            r#","correlationId":"c1""#,
            &format!(
                r#"{{"toolCallId":"c1","name":"shell","qualified":"shell","kind":"shell","command":"{} login -p Xk9fQ2mZ7pLw"}}"#,
                "p".repeat(180)
            ),
        ),
        event(
            5,
            "tool.failed",
            r#","correlationId":"c1","status":"failed""#,
            &format!(
                r#"{{"toolCallId":"c1","name":"shell","kind":"shell","status":"failed","output":{{"stdout":"AWS_KEY=AKIA3U23XXWXN4WGI4QZ {}\n","exitCode":1}}}}"#,
                "p".repeat(180)
            ),
        ),
        event(
            6,
            "turn.failed",
            r#","status":"failed""#,
            r#"{"error":{"category":"TOOL_ERROR","message":"failed with password: Xk9fQ2mZ7pLw"}}"#,
        ),
    ]
    .join("\n");
    let secrets = [token, "Xk9fQ2mZ7pLw", "AKIA3U23XXWXN4WGI4QZ", &token[..10], &token[30..]];
    let json = summarize(&["--format", "json"], input.as_bytes()).stdout;
    let merged = summarize(&["--merge", "--format", "json"], &json).stdout;
    for (format, out) in [
        ("json", json.clone()),
        ("text", summarize(&["--format", "text"], input.as_bytes()).stdout),
        ("markdown", summarize(&["--format", "markdown"], input.as_bytes()).stdout),
        ("merged", merged),
    ] {
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("REDACTED:"), "{format}: what it shows is redacted:\n{out}");
        let shown: Vec<&str> = secrets.iter().copied().filter(|s| out.contains(s)).collect();
        assert!(shown.is_empty(), "{format} shows {shown:?}:\n{out}");
    }
}
