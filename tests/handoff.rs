//! `truncate` with coreutils-style arguments runs the next `truncate` on PATH, never itself.

use std::os::unix::fs::PermissionsExt;

use crate::support::*;

#[test]
fn coreutils_arguments_reach_the_next_truncate_on_path() {
    let dir = std::env::temp_dir().join(format!("mco-handoff-{}", std::process::id()));
    let (ours, theirs) = (dir.join("ours"), dir.join("theirs"));
    std::fs::create_dir_all(&ours).unwrap();
    std::fs::create_dir_all(&theirs).unwrap();
    let me = assert_cmd::cargo::cargo_bin("truncate");
    let linked = ours.join("truncate");
    let _ = std::fs::remove_file(&linked);
    std::os::unix::fs::symlink(&me, &linked).unwrap();
    let fake = theirs.join("truncate");
    std::fs::write(&fake, "#!/bin/sh\necho \"coreutils truncate $*\"\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::join_paths([&ours, &theirs]).unwrap();

    let out = std::process::Command::new(&linked).args(["-s", "0", "x.log"]).env("PATH", &path).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "coreutils truncate -s 0 x.log\n");

    let ours_run = std::process::Command::new(&linked).arg("--help").env("PATH", &path).output().unwrap();
    assert!(ours_run.status.success());
    assert!(!String::from_utf8_lossy(&ours_run.stdout).contains("coreutils truncate"));

    let alone = std::process::Command::new(&linked).args(["--size", "0", "x"]).env("PATH", &ours).output().unwrap();
    assert_eq!(alone.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&alone.stderr).contains("no other truncate"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn canonical_input_still_goes_to_our_truncate() {
    let input = read("codex/exit4.events.jsonl");
    let out = run("truncate", &[], &input);
    assert_eq!(json_lines(&out).len(), json_lines(&input).len());
}
