//! The vocabulary the human renderings share: status glyphs and words, the error grammar's
//! "what happened" per category, and how durations, sizes, tokens and costs read.

use std::borrow::Cow;

use super::figures::{Cost, Tokens};
use super::tally::Tally;
use crate::event::{ErrorCategory, FileChange, Status};

/// A status as a glyph and a word (`✓ done`, `✕ failed`, …).
pub fn status(s: Status) -> &'static str {
    match s {
        Status::Completed => "✓ done",
        Status::Failed => "✕ failed",
        Status::Denied => "⊘ denied",
        Status::Cancelled => "◌ cancelled",
        Status::Timeout => "⏱ timeout",
        Status::Interrupted => "… interrupted",
        Status::Started | Status::Running => "▸ running",
    }
}

/// The first line of the error grammar: what happened, by category.
pub fn what_happened(c: &ErrorCategory) -> &'static str {
    match c {
        ErrorCategory::ConfigurationError => "the agent is not set up correctly",
        ErrorCategory::InputError => "the input could not be understood",
        ErrorCategory::ProviderError => "the model provider failed",
        ErrorCategory::ToolError => "a tool failed",
        ErrorCategory::PermissionDenied => "permission was refused",
        ErrorCategory::Cancelled => "the run was cancelled",
        ErrorCategory::Timeout => "the run ran out of time",
        ErrorCategory::Interrupted => "the run was cut short",
        ErrorCategory::MaxTurns => "the agent reached its turn limit",
        ErrorCategory::BudgetExceeded => "the token or cost budget ran out",
        ErrorCategory::Refused => "the model refused",
        ErrorCategory::Other(_) => "the run failed",
    }
}

/// Text with terminal control sequences removed (canonical input is already clean; this
/// keeps hand-written input from reaching a terminal raw).
pub fn safe(s: &str) -> Cow<'_, str> {
    crate::scrub::control::clean(s)
}

/// `850 ms`, `5.4 s`, `3 min 20 s`, `1 h 2 min`.
pub fn duration(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms} ms"),
        1_000..=59_999 => format!("{:.1} s", ms as f64 / 1000.0),
        60_000..=3_599_999 => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1000),
        _ => format!("{} h {} min", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// `12 B`, `3.4 KiB`, `2.0 MiB`.
pub fn bytes(n: u64) -> String {
    match n {
        0..=1023 => format!("{n} B"),
        1024..=1_048_575 => format!("{:.1} KiB", n as f64 / 1024.0),
        _ => format!("{:.1} MiB", n as f64 / 1_048_576.0),
    }
}

/// `1 turn`, `2 turns`.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The known token counts (`19176 input · 24 output · … tokens`), or that none were reported.
pub fn tokens(t: &Tokens) -> String {
    let parts: Vec<String> = [
        (t.input_tokens, "input"),
        (t.output_tokens, "output"),
        (t.cache_read, "cache read"),
        (t.cache_write, "cache write"),
    ]
    .into_iter()
    .filter_map(|(n, what)| n.map(|n| format!("{n} {what}")))
    .collect();
    if parts.is_empty() {
        "not reported".into()
    } else {
        format!("{} tokens", parts.join(" · "))
    }
}

/// `$0.0123 (estimated)`, or that no cost was reported.
pub fn cost(c: Option<Cost>) -> String {
    c.map_or_else(|| "not reported".into(), |c| format!("${} (estimated)", trim_zeros(&format!("{:.6}", c.usd()))))
}

fn trim_zeros(s: &str) -> &str {
    let s = s.trim_end_matches('0');
    s.strip_suffix('.').unwrap_or(s)
}

/// `none`, or `3 (auto 2, manual 1)`.
pub fn tally(t: &Tally) -> String {
    if t.is_empty() {
        return "none".into();
    }
    let parts: Vec<String> = t.iter().map(|(k, n)| format!("{} {n}", safe(k))).collect();
    format!("{} ({})", t.total(), parts.join(", "))
}

/// `exit 4`, or `exit unknown`.
pub fn exit(code: Option<i64>) -> String {
    code.map_or_else(|| "exit unknown".into(), |c| format!("exit {c}"))
}

/// `added`, `updated`, `deleted`.
pub fn change(c: FileChange) -> &'static str {
    match c {
        FileChange::Add => "added",
        FileChange::Update => "updated",
        FileChange::Delete => "deleted",
    }
}
