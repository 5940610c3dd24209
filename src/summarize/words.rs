//! The vocabulary of the human reports: what the human projection shows too (status marks,
//! colours, durations, counts, clean text, readable provider errors, from
//! [`crate::vocabulary`]), plus what only a report needs: the error grammar's "what happened"
//! per category, sizes, tokens, costs and tallies.

use super::figures::{Cost, Tokens};
use super::tally::Tally;
use crate::event::{ErrorCategory, Status};
pub use crate::vocabulary::grammar::readable;
pub use crate::vocabulary::style::{clean as safe, count, duration, Mark, Paint, Tone};

/// A status as a glyph and a word (`✓ done`, `✕ failed`, …), as the projections show it.
pub fn status(s: Status) -> String {
    let m = Mark::status(s);
    format!("{} {}", m.glyph, m.word)
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

/// `12 B`, `3.4 KiB`, `2.0 MiB`.
pub fn bytes(n: u64) -> String {
    match n {
        0..=1023 => format!("{n} B"),
        1024..=1_048_575 => format!("{:.1} KiB", n as f64 / 1024.0),
        _ => format!("{:.1} MiB", n as f64 / 1_048_576.0),
    }
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
