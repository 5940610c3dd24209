//! README.md's `$ command` transcripts run as written, with the built binaries standing for
//! `cargo run … --bin NAME --`, and must print exactly the lines shown under them. Listings
//! without a `$` prompt (installing, agent CLIs, benchmarks) are not run; the README's Rust
//! examples are doctests (`src/lib.rs`).

use std::path::Path;
use std::process::Command;

use crate::support::*;

/// One `$ command` and the output shown under it.
#[derive(Debug)]
struct Transcript {
    line: usize,
    command: String,
    expected: String,
}

/// The transcripts of every ```console or ```sh block.
fn transcripts(readme: &str) -> Vec<Transcript> {
    let mut out: Vec<Transcript> = Vec::new();
    let (mut in_block, mut in_shell) = (false, false);
    // The transcript that output lines belong to: none until a block's first `$`.
    let mut current: Option<usize> = None;
    for (i, line) in readme.lines().enumerate() {
        if let Some(info) = line.strip_prefix("```") {
            in_shell = !in_block && matches!(info.trim(), "console" | "sh");
            in_block = !in_block;
            current = None;
            continue;
        }
        if !in_shell {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            out.push(Transcript { line: i + 1, command: command.to_owned(), expected: String::new() });
            current = Some(out.len() - 1);
        } else if let Some(c) = current {
            out[c].expected.push_str(line);
            out[c].expected.push('\n');
        }
    }
    out
}

/// `cargo run [options] --bin NAME -- ARGS` becomes `NAME ARGS`, the built binary.
fn with_built_binaries(command: &str) -> String {
    command
        .split(" | ")
        .map(|stage| match stage.strip_prefix("cargo run ") {
            Some(rest) => {
                let (options, args) = rest.split_once(" -- ").unwrap_or((rest, ""));
                let name = options.split_once("--bin ").map(|(_, n)| n.split_whitespace().next().unwrap_or(""));
                let name = name.unwrap_or_else(|| panic!("`{stage}` names no --bin"));
                format!("{name} {args}").trim_end().to_owned()
            }
            None => stage.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

#[test]
fn cargo_run_maps_to_the_built_binary() {
    assert_eq!(
        with_built_binaries(
            "cargo run --release -q --bin normalize -- a.jsonl | cargo run -q --bin project -- --mode verbose | head"
        ),
        "normalize a.jsonl | project --mode verbose | head"
    );
    assert_eq!(with_built_binaries("cargo run --bin summarize"), "summarize");
}

#[test]
fn readme_transcripts_print_what_they_show() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let cases = transcripts(&readme);
    assert!(cases.len() >= 2, "README.md has {} `$` transcripts; the bundled-fixture examples are gone", cases.len());
    let bin_dir =
        assert_cmd::cargo::cargo_bin("normalize").parent().map(Path::to_path_buf).expect("the binaries' folder");
    let path = std::env::join_paths(
        std::iter::once(bin_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let mut failures = Vec::new();
    for case in &cases {
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", &with_built_binaries(&case.command)])
            .current_dir(root())
            .env("PATH", &path)
            .env("SOURCE_DATE_EPOCH", EPOCH)
            .env("NO_COLOR", "1")
            .env_remove("CLICOLOR_FORCE")
            .output()
            .expect("bash runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            failures.push(format!(
                "README.md:{}: `{}` failed ({}): {}",
                case.line,
                case.command,
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        } else if stdout != case.expected {
            failures.push(format!(
                "README.md:{}: `{}` prints\n{stdout}\ninstead of\n{}",
                case.line, case.command, case.expected
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// README.md's table of dialects is the registry's: every `--from` name with what it reads,
/// in registry order, and nothing else.
#[test]
fn readme_lists_every_dialect() {
    use minicode_output::provider::Provider;
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let rows: Vec<String> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| `--from` | reads |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(str::to_owned)
        .collect();
    let expected: Vec<String> = Provider::ALL.iter().map(|p| format!("| `{}` | {} |", p.name(), p.about())).collect();
    assert_eq!(rows, expected, "README.md's dialect table differs from the registry");
}
