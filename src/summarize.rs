//! `summarize`: the run report. Canonical events go in (one run, many concatenated runs,
//! or many files); one [`Report`] comes out, rendered as an indented JSON document, as text
//! for a terminal, or as Markdown for CI step summaries.
//!
//! A report keeps counters and bounded excerpts only, never event bodies, so memory stays
//! bounded however long the input; what grows is the per-run table, one entry per run.
//! Each run (one session of one stream) gets a [`Verdict`](crate::event::Verdict) from the
//! evidence of its events, and a [`Key`], the digest of those events. Reports merge
//! ([`Report::merge`]) as a union keyed that way: associative, commutative and idempotent,
//! so runs can be summarized on many machines and combined in any grouping and order, and a
//! part counted twice still counts each run once.
//!
//! ```
//! use minicode_output::event::Verdict;
//! use minicode_output::summarize::{Report, Summarizer};
//!
//! let lines = [
//!     r#"{"schema":"minicode.output.v1","eventId":"s1:1:1","type":"turn.started","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1","turnId":1,"source":"agent","severity":"info","status":"started","visibility":["normal"],"rawRef":{"line":1},"payload":{}}"#,
//!     r#"{"schema":"minicode.output.v1","eventId":"s1:1:2","type":"turn.completed","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1","turnId":1,"source":"agent","severity":"info","status":"completed","visibility":["normal"],"rawRef":{"line":2},"payload":{}}"#,
//! ];
//! let mut s = Summarizer::new();
//! lines.iter().for_each(|l| s.line(l).unwrap());
//! let report = s.finish();
//! // The stream ended without normalize's summary record: the run may not have finished.
//! assert_eq!(report.verdict(), Verdict::Incomplete);
//! let mut merged = report.clone();
//! merged.merge(report.clone());
//! assert_eq!(merged, report);
//! assert_eq!(merged.runs().total, 1);
//! ```

mod clip;
mod collect;
mod document;
mod failure;
mod fast;
mod figures;
mod key;
mod markdown;
mod merge;
mod model;
mod tally;
mod text;
pub(crate) mod words;

pub use collect::Summarizer;
pub use document::{Totals, SCHEMA};
pub use figures::{Budget, ByKind, Context, Cost, Tokens};
pub use key::Key;
pub use markdown::{to_markdown, LIMIT as MARKDOWN_LIMIT};
pub use merge::Merger;
pub use model::{
    limits, Failure, Input, PlanState, Report, Runs, SessionReport, Shell, ShellLine, StreamInput, ToolLine,
};
pub use tally::{Files, Tally};
pub use text::to_text;

#[cfg(test)]
mod tests;
