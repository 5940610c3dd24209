//! Test harness: fixture paths, the binaries with a fixed environment, and golden files
//! (`BLESS=1 cargo test` rewrites them; review the diff before committing).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `SOURCE_DATE_EPOCH` used by every test, so output is byte-for-byte reproducible.
pub const EPOCH: &str = "1767225600";

/// The path of a file under `fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    root().join("fixtures").join(rel)
}

/// The repository's root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Reads a fixture.
pub fn read(rel: &str) -> Vec<u8> {
    std::fs::read(fixture(rel)).unwrap_or_else(|e| panic!("fixture {rel}: {e}"))
}

/// One of the five binaries, with a reproducible environment.
pub fn bin(name: &str) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin(name).expect("binary is built");
    c.env("SOURCE_DATE_EPOCH", EPOCH).env("NO_COLOR", "1").env_remove("CLICOLOR_FORCE");
    c
}

/// Runs `name args` on `input` and returns stdout, whatever the exit code.
pub fn run(name: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    bin(name).args(args).write_stdin(input.to_vec()).output().expect("runs").stdout
}

/// Compares `actual` with the golden file `rel` (or writes it when `BLESS` is set).
/// Returns a description of the mismatch, so one test can report every case at once.
pub fn golden(rel: &str, actual: &[u8]) -> Result<(), String> {
    golden_at(&fixture(rel), actual)
}

/// [`golden`] for any file of the repository (`man/`, `completions/`, `schema/`).
pub fn golden_at(path: &Path, actual: &[u8]) -> Result<(), String> {
    let rel = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(path).display().to_string();
    let path = path.to_path_buf();
    if std::env::var_os("BLESS").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(&path, actual).unwrap();
        return Ok(());
    }
    let expected = std::fs::read(&path).map_err(|e| format!("{rel}: {e} (run with BLESS=1 to create it)"))?;
    let rel = rel.as_str();
    if expected == actual {
        return Ok(());
    }
    let (e, a) = (String::from_utf8_lossy(&expected), String::from_utf8_lossy(actual));
    let line = e.lines().zip(a.lines()).position(|(x, y)| x != y).unwrap_or(e.lines().count().min(a.lines().count()));
    Err(format!(
        "{rel}: differs at line {}\n  expected: {}\n  actual:   {}",
        line + 1,
        e.lines().nth(line).unwrap_or("<end>").chars().take(300).collect::<String>(),
        a.lines().nth(line).unwrap_or("<end>").chars().take(300).collect::<String>()
    ))
}

/// Every `*.input.jsonl` under `fixtures/<dir>`, sorted, as paths relative to `fixtures/`.
pub fn inputs(dir: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixture(dir))
        .unwrap_or_else(|e| panic!("fixtures/{dir}: {e}"))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".input.jsonl"))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    v.sort();
    v
}

/// Every file under `dir` (recursively) whose name ends with one of `ends`, as paths
/// relative to `dir`, in sorted path order.
pub fn files_under(dir: &Path, ends: &[&str]) -> Vec<String> {
    fn walk(dir: &Path, base: &Path, ends: &[&str], out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, base, ends, out);
            } else {
                let rel = path.strip_prefix(base).expect("under the folder").to_string_lossy().into_owned();
                if ends.iter().any(|e| rel.ends_with(e)) {
                    out.push(rel);
                }
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, ends, &mut files);
    files.sort();
    files
}

/// Checks `normalize [args]` on every input in `fixtures/<dir>` against its
/// `<case>.events.jsonl`, reporting all mismatches together.
pub fn golden_dir(dir: &str, args: &[&str]) {
    let cases = inputs(dir);
    assert!(!cases.is_empty(), "no inputs in fixtures/{dir}");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|input| {
            // A file, not a pipe: a pipe's pauses release held tails where the reads happen to
            // stop, so the split of text between deltas would depend on timing.
            let out = bin("normalize").args(args).arg(fixture(input)).output().expect("runs").stdout;
            golden(&input.replace(".input.jsonl", ".events.jsonl"), &out).err()
        })
        .collect();
    assert!(failures.is_empty(), "{} of {} golden cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// Parses JSON lines.
pub fn json_lines(out: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8(out.to_vec())
        .expect("UTF-8 output")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// `normalize` (dialect detected) over JSON lines built in a test; its events, parsed.
pub fn normalize_lines(lines: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    json_lines(&run("normalize", &[], input.as_bytes()))
}

/// The events of type `kind`, in order.
pub fn of_type<'a>(events: &'a [serde_json::Value], kind: &str) -> Vec<&'a serde_json::Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// The one event of type `kind`; panics unless there is exactly one.
pub fn only<'a>(events: &'a [serde_json::Value], kind: &str) -> &'a serde_json::Value {
    match of_type(events, kind).as_slice() {
        [e] => e,
        other => panic!("{} {kind} events, expected one", other.len()),
    }
}

/// Runs `name args` on a large input, reads the first line of its output and closes its
/// stdout (`| head -1`), then checks that it exits 0 without a word on stderr. Returns that
/// first line, which must be whole.
pub fn closed_stdout_is_quiet(name: &str, args: &[&str], input: Vec<u8>) -> String {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(assert_cmd::cargo::cargo_bin(name))
        .args(args)
        .env("SOURCE_DATE_EPOCH", EPOCH)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut stdin = child.stdin.take().expect("piped");
    // The child may stop reading once its stdout is gone, so a failed write is expected.
    let writer = std::thread::spawn(move || drop(stdin.write_all(&input)));
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("piped")).read_line(&mut first).expect("some output");
    let out = child.wait_with_output().expect("exits");
    writer.join().expect("writer thread");
    assert!(
        out.status.success(),
        "{name}: {:?} on a closed stdout; stderr {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty(), "{name}: stderr on a closed stdout: {}", String::from_utf8_lossy(&out.stderr));
    assert!(first.ends_with('\n'), "{name}: the first line written is not whole: {first:?}");
    first
}

/// A Python 3 interpreter that can import every module in `modules`, for checks made by a
/// format's own published tools (protobuf models, validators, query engines) rather than by
/// a copy of our assumptions. `tests/requirements.txt` pins them; `.ci/run` installs them
/// and sets `MINICODE_EXTERNAL_CHECKS=require`, which makes a missing one a failure. On a
/// machine without them the check is skipped, saying so on stderr, so `cargo test` still
/// runs everything else on a fresh checkout.
pub fn python_with(modules: &[&str]) -> Option<PathBuf> {
    let python = PathBuf::from(std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into()));
    let imports = modules.iter().map(|m| format!("import {m}")).collect::<Vec<_>>().join("; ");
    let found = std::process::Command::new(&python)
        .args(["-c", &imports])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if found {
        return Some(python);
    }
    let what = format!("{} cannot import {}", python.display(), modules.join(", "));
    if std::env::var("MINICODE_EXTERNAL_CHECKS").as_deref() == Ok("require") {
        panic!("{what} (pip install -r tests/requirements.txt)");
    }
    eprintln!("skipped: {what} (pip install -r tests/requirements.txt to run this check)");
    None
}

/// An event of session `s1`, turn 1, with sequence number `seq` (also its input line).
pub fn event(seq: u64, body: minicode_output::event::Body) -> minicode_output::event::Event {
    use minicode_output::event::{Event, RawRef, Severity, Source, Visibility};
    Event {
        event_id: format!("s1:1:{seq}"),
        timestamp: "2026-01-01T00:00:00.000Z".into(),
        session_id: "s1".into(),
        turn_id: 1,
        correlation_id: None,
        parent_id: None,
        source: Source::Tool,
        severity: Severity::Info,
        status: None,
        visibility: Visibility::ALL,
        raw_ref: RawRef::span(seq, seq),
        body,
    }
}

/// Provider captures as files, for a filter to read as operands: Claude's, then Codex's cut
/// in two after its third line, the first part ending in a line over the default line limit
/// (64 MiB). Read as one stream, the Codex capture would be one complete run; as files, it is
/// two. Written under `dir` in the target's temporary directory.
pub fn provider_files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let claude = dir.join("claude.jsonl");
    std::fs::write(&claude, read("claude/exit4.input.jsonl")).unwrap();
    let codex = read("codex/exit4.input.jsonl");
    let third = codex.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(2).unwrap().0 + 1;
    let mut first = codex[..third].to_vec();
    first.extend_from_slice(br#"{"type":"item.completed","item":{"id":"big","type":"agent_message","text":""#);
    first.extend(std::iter::repeat_n(b'x', 65 << 20));
    first.extend_from_slice(b"\"}}\n");
    let (codex1, codex2) = (dir.join("codex-1.jsonl"), dir.join("codex-2.jsonl"));
    std::fs::write(&codex1, first).unwrap();
    std::fs::write(&codex2, &codex[third..]).unwrap();
    vec![claude, codex1, codex2]
}

/// Files of canonical events and of agents' own output, alternating, under a scratch
/// directory `dir`; and what reading each as what it is gives: the canonical ones as they
/// are, the others normalized (each alone, named as given).
pub fn mixed_files(dir: &str) -> (Vec<PathBuf>, Vec<u8>) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    let mut expected = Vec::new();
    for (i, (case, canonical)) in
        [("claude/exit4", true), ("codex/err500", false), ("codex/exit4", true), ("opencode/exit4", false)]
            .into_iter()
            .enumerate()
    {
        let file = dir.join(format!("{i}.jsonl"));
        let input = read(&format!("{case}.input.jsonl"));
        if canonical {
            let events = run("normalize", &[], &input);
            std::fs::write(&file, &events).unwrap();
            expected.extend(events);
        } else {
            std::fs::write(&file, &input).unwrap();
            expected.extend(bin("normalize").arg(&file).output().unwrap().stdout);
        }
        files.push(file);
    }
    (files, expected)
}

/// The body of a private key: `lines` lines of 64 base64 characters, the same for a seed.
pub fn key_body(lines: usize, mut seed: u64) -> Vec<String> {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        char::from(B64[(seed >> 58) as usize])
    };
    (0..lines).map(|_| (0..64).map(|_| next()).collect()).collect()
}

/// The first of `lines` that `shown` holds a 16-character piece of (aligned to 16).
pub fn shown_line<'a>(lines: &'a [String], shown: &str) -> Option<&'a String> {
    lines.iter().find(|l| l.as_bytes().chunks(16).any(|w| shown.contains(std::str::from_utf8(w).unwrap())))
}

/// A message showing an RSA key of `body` between two lines of prose.
pub fn key_message(body: &[String]) -> String {
    format!("The key:\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\nDone.\n", body.join("\n"))
}
