//! Shell output and exit codes (docs/contract.md §5): one accumulator every provider feeds.
//! It owns the precedence of exit-code sources, delta/snapshot/final accumulation,
//! the per-field bound, and the removal of an echoed `$ <command>` line.

use crate::bound::{before_scrub, BoundedText};
use crate::event::{ShellResult, Stream};

/// Where an exit code came from; a later report only wins with a higher precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitSource {
    /// Parsed from output text (`Exit code N`, `<return-code>`).
    ParsedText,
    /// A provider-native structured field (Codex `exit_code`, `rawOutput.metadata.exit`).
    Structured,
    /// Explicit terminal exit metadata (ACP `_meta.terminal_exit`).
    Explicit,
}

/// How a piece of output relates to what came before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update {
    /// New bytes, appended once.
    Delta,
    /// The whole output so far; replaces.
    Snapshot,
    /// The provider's final aggregate; replaces either.
    Final,
    /// A shortened preview: never replaces fuller output, only marks it truncated.
    Preview,
}

/// The output of one tool call while it runs.
#[derive(Debug, Default)]
pub struct ShellAccumulator {
    stdout: BoundedText,
    stderr: BoundedText,
    exit: Option<(ExitSource, i64)>,
    truncated: bool,
}

impl ShellAccumulator {
    /// Records an exit code unless one of higher precedence is known.
    pub fn exit(&mut self, source: ExitSource, code: i64) {
        if self.exit.is_none_or(|(s, _)| source >= s) {
            self.exit = Some((source, code));
        }
    }

    /// The exit code, if known.
    pub fn exit_code(&self) -> Option<i64> {
        self.exit.map(|(_, c)| c)
    }

    /// Marks the output as shortened by the provider.
    pub fn mark_truncated(&mut self) {
        self.truncated = true;
    }

    /// Applies one piece of output; returns the text that is new to a live viewer, if any.
    pub fn apply<'a>(&mut self, stream: Stream, update: Update, text: &'a str, max: usize) -> Option<&'a str> {
        let max = before_scrub(max);
        let field = match stream {
            Stream::Stderr => &mut self.stderr,
            Stream::Stdout | Stream::Combined => &mut self.stdout,
        };
        match update {
            Update::Delta => {
                field.push(text, max);
                (!text.is_empty()).then_some(text)
            }
            Update::Snapshot | Update::Final => {
                let old = field.as_str();
                let new = match text.strip_prefix(old) {
                    Some(rest) if !old.is_empty() => Some(rest),
                    _ if old == text => None,
                    _ if old.is_empty() => Some(text),
                    _ => None,
                };
                field.replace(text, max);
                if update == Update::Final {
                    None
                } else {
                    new.filter(|s| !s.is_empty())
                }
            }
            Update::Preview => {
                self.truncated = true;
                if field.is_empty() {
                    field.replace(text, max);
                }
                None
            }
        }
    }

    /// The result, each stream within [`before_scrub`] bytes. `command` is the tool's command, whose echo
    /// is removed once.
    pub fn finish(self, command: Option<&str>, max: usize) -> Option<ShellResult> {
        let exit_code = self.exit_code();
        let (mut stdout, cut_out) = self.stdout.finish(before_scrub(max));
        let (stderr, cut_err) = self.stderr.finish(before_scrub(max));
        if let Some(cmd) = command {
            strip_echo(&mut stdout, cmd);
        }
        let r = ShellResult {
            exit_code,
            stdout: (!stdout.is_empty()).then_some(stdout),
            stderr: (!stderr.is_empty()).then_some(stderr),
            truncated: self.truncated || cut_out || cut_err,
        };
        (r != ShellResult::default()).then_some(r)
    }
}

/// Removes a leading `$ <command>` echo, and the newline right after it if there is one.
fn strip_echo(out: &mut String, command: &str) {
    let Some(rest) = out.strip_prefix("$ ").and_then(|r| r.strip_prefix(command.trim())) else {
        return;
    };
    let skip = out.len() - rest.len() + usize::from(rest.starts_with('\n'));
    out.drain(..skip);
}

/// Parses a leading `Exit code N` / `Error: Exit code N` line (Claude Code's failed Bash
/// result), returning the code and the output after that line.
pub fn parse_exit_prefix(text: &str) -> Option<(i64, &str)> {
    let rest = text.strip_prefix("Error: ").unwrap_or(text).strip_prefix("Exit code ")?;
    let (num, after) = match rest.find('\n') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    Some((num.trim().parse().ok()?, after))
}

/// Finds an exit status stated in prose (`… completed (exit code 0)`, `Exit Code: 4`,
/// `exited with code 2`): the last such phrase's number, case aside.
pub fn parse_exit_in(text: &str) -> Option<i64> {
    const PHRASES: [&str; 2] = ["exit code", "exited with code"];
    let lower = text.to_ascii_lowercase();
    let mut found = None;
    for phrase in PHRASES {
        for (at, _) in lower.match_indices(phrase) {
            let rest = lower[at + phrase.len()..].trim_start_matches([':', ' ']);
            let digits = rest.char_indices().take_while(|&(i, c)| c.is_ascii_digit() || (i == 0 && c == '-')).count();
            if let Ok(code) = rest[..digits].parse::<i64>() {
                if found.is_none_or(|(a, _)| at > a) {
                    found = Some((at, code));
                }
            }
        }
    }
    found.map(|(_, code)| code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses_in_prose_are_found_and_others_are_not() {
        assert_eq!(parse_exit_in("Background command \"x\" completed (exit code 0)"), Some(0));
        assert_eq!(parse_exit_in("Output: a\nExit Code: 4\nSignal: (none)"), Some(4));
        assert_eq!(parse_exit_in("[Command exited with code -1]"), Some(-1));
        assert_eq!(parse_exit_in("exit code 1, then exit code 2"), Some(2));
        assert_eq!(parse_exit_in("the exit code is unknown"), None);
        assert_eq!(parse_exit_in("exit code: -"), None);
    }

    #[test]
    fn explicit_beats_structured_beats_text() {
        let mut a = ShellAccumulator::default();
        a.exit(ExitSource::ParsedText, 3);
        a.exit(ExitSource::Structured, 4);
        assert_eq!(a.exit_code(), Some(4));
        a.exit(ExitSource::Explicit, 0);
        a.exit(ExitSource::Structured, 9);
        a.exit(ExitSource::ParsedText, 7);
        assert_eq!(a.exit_code(), Some(0));
    }

    #[test]
    fn unknown_exit_is_absent_not_zero() {
        let mut a = ShellAccumulator::default();
        a.apply(Stream::Combined, Update::Final, "fine\n", 1024);
        let r = a.finish(None, 1024).unwrap();
        assert_eq!(r.exit_code, None);
        assert_eq!(r.stdout.as_deref(), Some("fine\n"));
    }

    #[test]
    fn deltas_append_once_and_final_replaces() {
        let mut a = ShellAccumulator::default();
        assert_eq!(a.apply(Stream::Combined, Update::Delta, "alpha\n", 1024), Some("alpha\n"));
        assert_eq!(a.apply(Stream::Combined, Update::Delta, "beta\n", 1024), Some("beta\n"));
        assert_eq!(a.apply(Stream::Combined, Update::Final, "alpha\nbeta\n", 1024), None);
        let r = a.finish(None, 1024).unwrap();
        assert_eq!(r.stdout.as_deref(), Some("alpha\nbeta\n"));
    }

    #[test]
    fn snapshots_report_only_the_new_suffix() {
        let mut a = ShellAccumulator::default();
        assert_eq!(a.apply(Stream::Combined, Update::Snapshot, "one\n", 1024), Some("one\n"));
        assert_eq!(a.apply(Stream::Combined, Update::Snapshot, "one\ntwo\n", 1024), Some("two\n"));
        assert_eq!(a.apply(Stream::Combined, Update::Snapshot, "one\ntwo\n", 1024), None);
    }

    #[test]
    fn a_preview_never_replaces_fuller_output() {
        let mut a = ShellAccumulator::default();
        a.apply(Stream::Combined, Update::Delta, "the whole output", 1024);
        a.apply(Stream::Combined, Update::Preview, "the wh", 1024);
        let r = a.finish(None, 1024).unwrap();
        assert_eq!(r.stdout.as_deref(), Some("the whole output"));
        assert!(r.truncated);
    }

    #[test]
    fn a_final_update_without_stderr_keeps_the_accumulated_stderr() {
        let mut a = ShellAccumulator::default();
        a.apply(Stream::Stderr, Update::Delta, "warn\n", 1024);
        a.apply(Stream::Stdout, Update::Final, "ok\n", 1024);
        let r = a.finish(None, 1024).unwrap();
        assert_eq!(r.stderr.as_deref(), Some("warn\n"));
    }

    #[test]
    fn echo_is_removed_once_and_real_output_kept() {
        let mut a = ShellAccumulator::default();
        a.apply(Stream::Combined, Update::Final, "$ git statusOn branch main\n", 1024);
        let r = a.finish(Some("git status"), 1024).unwrap();
        assert_eq!(r.stdout.as_deref(), Some("On branch main\n"));
        let mut a = ShellAccumulator::default();
        a.apply(Stream::Combined, Update::Final, "$ ls\n$ ls\n", 1024);
        assert_eq!(a.finish(Some("ls"), 1024).unwrap().stdout.as_deref(), Some("$ ls\n"));
    }

    #[test]
    fn output_is_bounded_keeping_the_newest_utf8() {
        let mut a = ShellAccumulator::default();
        let big: String = (0..5000).map(|i| format!("{i} héllo 🎉\n")).collect();
        a.apply(Stream::Combined, Update::Final, &big, 1000);
        let r = a.finish(None, 1000).unwrap();
        assert!(r.truncated);
        let out = r.stdout.unwrap();
        // The stages cut it to the bound once it is scrubbed.
        assert!(out.len() <= 1000 + crate::bound::SCRUB_REACH && out.ends_with("4999 héllo 🎉\n"));
    }

    #[test]
    fn exit_prefix_is_metadata() {
        assert_eq!(parse_exit_prefix("Exit code 4\nline1\nline2"), Some((4, "line1\nline2")));
        assert_eq!(parse_exit_prefix("Error: Exit code 127"), Some((127, "")));
        assert_eq!(parse_exit_prefix("Exit code four\nx"), None);
        assert_eq!(parse_exit_prefix("line1"), None);
    }
}
