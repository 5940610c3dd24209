//! `truncate` shares its name with coreutils `truncate(1)`. Invoked with coreutils-style
//! arguments, ours hands over to the next `truncate` on `PATH` that is not itself, so
//! installing this toolkit never breaks an existing script.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// True when the arguments are coreutils `truncate`'s: `-s`/`--size`, `-r`/`--reference`,
/// `-c`/`--no-create`, `-o`/`--io-blocks`, alone or in a cluster (`-cs 0`).
pub fn is_coreutils_style(args: &[OsString]) -> bool {
    args.iter().take_while(|a| a.as_os_str() != "--").any(|a| {
        let Some(a) = a.to_str() else { return false };
        match a.strip_prefix("--") {
            Some(long) => ["size", "reference", "no-create", "io-blocks"]
                .iter()
                .any(|o| long == *o || long.starts_with(&format!("{o}="))),
            None => a.strip_prefix('-').is_some_and(|short| short.chars().next().is_some_and(|c| "srco".contains(c))),
        }
    })
}

/// The first `truncate` on `path` that is not the running executable.
pub fn next_on_path(path: &OsStr, me: &Path) -> Option<PathBuf> {
    let me = me.canonicalize().ok()?;
    std::env::split_paths(path)
        .map(|d| d.join("truncate"))
        .find(|c| c.is_file() && is_executable(c) && c.canonicalize().is_ok_and(|real| real != me))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// Hands over to coreutils when the arguments ask for it; `None` means "run ours".
pub fn coreutils_truncate() -> Option<ExitCode> {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if !is_coreutils_style(&args) {
        return None;
    }
    let me = std::env::current_exe().ok()?;
    let Some(other) = std::env::var_os("PATH").and_then(|p| next_on_path(&p, &me)) else {
        eprintln!("truncate: these are coreutils truncate(1) arguments, and no other truncate is on PATH");
        return Some(ExitCode::from(2));
    };
    use std::os::unix::process::CommandExt;
    let err = std::process::Command::new(&other).args(&args).exec();
    eprintln!("truncate: cannot run {}: {err}", other.display());
    Some(ExitCode::from(2))
}

#[cfg(test)]
mod tests {
    use super::is_coreutils_style;

    fn style(args: &[&str]) -> bool {
        is_coreutils_style(&args.iter().map(Into::into).collect::<Vec<_>>())
    }

    #[test]
    fn recognises_coreutils_arguments() {
        assert!(style(&["-s", "0", "log.txt"]));
        assert!(style(&["--size=10K", "a"]));
        assert!(style(&["-cs0", "a"]));
        assert!(style(&["-r", "ref", "a"]));
        assert!(style(&["--reference", "ref", "a"]));
        assert!(style(&["-o", "-s", "1", "a"]));
    }

    #[test]
    fn leaves_our_own_arguments_alone() {
        assert!(!style(&[]));
        assert!(!style(&["--max-bytes", "64", "--keep", "head-tail"]));
        assert!(!style(&["--text", "events.jsonl"]));
        assert!(!style(&["--", "-s"]));
    }
}
