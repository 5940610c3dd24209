//! Generated documentation is committed and must not go stale: man pages and shell
//! completions are rendered from the clap definitions and compared with the files in
//! `man/` and `completions/` (`BLESS=1 cargo test` regenerates them).

use clap::CommandFactory;
use clap_complete::Shell;
use minicode_output::cli;
use minicode_output::projection::Mode;
use minicode_output::provider::Provider;

use crate::support::*;

fn commands() -> Vec<clap::Command> {
    vec![
        cli::normalize::Args::command(),
        cli::project::Args::command(),
        cli::scrub::Args::command(),
        cli::truncate::Args::command(),
        cli::summarize::Args::command(),
    ]
}

#[test]
fn clap_definitions_are_consistent() {
    for c in commands() {
        c.debug_assert();
    }
}

#[test]
fn man_pages_are_fresh() {
    let failures: Vec<String> = commands()
        .into_iter()
        .filter_map(|c| {
            let name = c.get_name().to_owned();
            let mut page = Vec::new();
            clap_mangen::Man::new(c).render(&mut page).unwrap();
            golden_at(&root().join("man").join(format!("{name}.1")), &page).err()
        })
        .collect();
    assert!(failures.is_empty(), "stale man pages (BLESS=1 cargo test docs):\n{}", failures.join("\n"));
}

#[test]
fn completions_are_fresh() {
    let mut failures = Vec::new();
    for mut c in commands() {
        let name = c.get_name().to_owned();
        for (shell, file) in [
            (Shell::Bash, format!("{name}.bash")),
            (Shell::Zsh, format!("_{name}")),
            (Shell::Fish, format!("{name}.fish")),
        ] {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut c, &name, &mut out);
            if let Err(e) = golden_at(&root().join("completions").join(file), &out) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "stale completions (BLESS=1 cargo test docs):\n{}", failures.join("\n"));
}

#[test]
fn every_man_page_documents_exit_codes() {
    for c in commands() {
        let name = c.get_name().to_owned();
        let page = std::fs::read_to_string(root().join("man").join(format!("{name}.1"))).unwrap();
        assert!(page.contains("Exit status"), "man/{name}.1 lacks the exit status");
    }
}

/// Every file of the repository the checks below read: source, tests, docs and scripts.
fn repository_texts() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![root().to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !matches!(name.as_str(), "target" | ".git" | "fixtures" | "corpus" | "artifacts") {
                    dirs.push(path);
                }
            } else if name.ends_with(".rs") || name.ends_with(".md") || name == "run" || name.ends_with(".7") {
                let rel = path.strip_prefix(root()).unwrap().display().to_string();
                out.push((rel, std::fs::read_to_string(&path).unwrap_or_default()));
            }
        }
    }
    out
}

#[test]
fn every_contract_citation_resolves_and_no_text_cites_an_issue_tracker() {
    let contract = std::fs::read_to_string(root().join("docs/contract.md")).unwrap();
    let sections: Vec<u32> =
        contract.lines().filter_map(|l| l.strip_prefix("## ")?.split('.').next()?.parse().ok()).collect();
    assert!(sections.len() >= 9, "docs/contract.md has its sections: {sections:?}");
    let mut cited = 0;
    let mut failures = Vec::new();
    for (file, text) in repository_texts() {
        for (at, _) in text.match_indices("docs/contract.md §") {
            // `§2`, `§2, §4, §6`, `§2-§6`, `(§3, §6)`: every number up to the end of the citation.
            let tail: String = text[at + "docs/contract.md ".len()..]
                .chars()
                .take_while(|c| !matches!(c, ')' | ':' | '\n' | '.' | ';'))
                .collect();
            for n in tail
                .split('§')
                .skip(1)
                .filter_map(|p| p.chars().take_while(char::is_ascii_digit).collect::<String>().parse::<u32>().ok())
            {
                cited += 1;
                if !sections.contains(&n) {
                    failures.push(format!("{file}: cites docs/contract.md §{n}, which it does not have"));
                }
            }
        }
        for word in ["CONTRACT §", "issue 7", "issue #"] {
            if file != "tests/docs.rs" && text.contains(word) {
                failures.push(format!("{file}: cites {word:?}, which is not in the repository"));
            }
        }
    }
    assert!(cited > 0, "no citation found: the scan is broken");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The contract's command-line lists are the code's: a new dialect or mode that the contract
/// does not name fails here.
#[test]
fn the_contract_lists_every_dialect_and_mode() {
    let contract = std::fs::read_to_string(root().join("docs/contract.md")).unwrap();
    let list = |prefix: &str, end: char| -> Vec<String> {
        let at = contract.find(prefix).unwrap_or_else(|| panic!("docs/contract.md §9 has `{prefix}`"));
        let rest = &contract[at + prefix.len()..];
        rest[..rest.find(end).unwrap()].split('|').map(str::to_owned).collect()
    };
    let dialects: Vec<String> =
        std::iter::once("auto").chain(Provider::ALL.iter().map(|p| p.name())).map(str::to_owned).collect();
    assert_eq!(list("`normalize [--from ", ']'), dialects);
    let modes: Vec<String> = Mode::ALL.iter().map(|m| m.name().to_owned()).collect();
    assert_eq!(list("`project --mode ", '`'), modes);
}
