//! Replays every committed fuzz corpus file (`fuzz/corpus/<target>/`) through the fuzz
//! targets' own checks, so the stable toolchain exercises what the fuzzers found.

#[path = "../fuzz/check.rs"]
mod check;

use crate::support::root;

#[test]
fn every_corpus_file_passes_its_target_checks() {
    let mut failures = Vec::new();
    for target in check::TARGETS {
        let dir = root().join("fuzz/corpus").join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("corpus entry").path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no corpus for {target}");
        for file in files {
            let data = std::fs::read(&file).expect("corpus file");
            if let Err(panic) = std::panic::catch_unwind(|| check::run(target, &data)) {
                let why = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or(panic.downcast_ref::<&str>().copied())
                    .unwrap_or("");
                failures.push(format!("{target} {}: {}", file.display(), why.chars().take(400).collect::<String>()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} corpus file(s) fail (replay one with `cargo fuzz run <target> <file>`):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
