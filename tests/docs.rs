//! Generated documentation is committed and must not go stale: man pages and shell
//! completions are rendered from the clap definitions and compared with the files in
//! `man/` and `completions/` (`BLESS=1 cargo test` regenerates them).

use clap::CommandFactory;
use clap_complete::Shell;
use minicode_output::cli;

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
