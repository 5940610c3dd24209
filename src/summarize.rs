//! `summarize`: the run report. Canonical events go in (one run, many concatenated runs,
//! or many files); one [`Report`] comes out, rendered as an indented JSON document, as text
//! for a terminal, or as Markdown for CI step summaries.
//!
//! A report keeps counters and bounded excerpts only, never event bodies, so memory stays
//! bounded however long the input. Reports merge ([`Report::merge`]): the merge is
//! associative, and merging the reports of two streams gives the report of the two streams
//! read one after the other, so runs can be summarized in parallel and combined.
//!
//! ```
//! use minicode_output::summarize::{Report, Summarizer};
//!
//! let line = r#"{"schema":"minicode.output.v1","eventId":"s1:0:1","type":"summary","sessionId":"s1","ok":true,"payload":{"turns":0,"tools":{"total":0,"completed":0,"failed":0,"denied":0,"cancelled":0,"timeout":0,"interrupted":0},"input":{"lines":1,"events":1,"raw":0,"unknownTypes":0}}}"#;
//! let mut s = Summarizer::new();
//! s.event(serde_json::from_str(line).unwrap());
//! let report = s.finish();
//! assert!(report.ok());
//! let mut merged = Report::default();
//! merged.merge(report.clone());
//! merged.merge(report);
//! assert_eq!(merged.runs.total, 2);
//! ```

mod clip;
mod collect;
mod document;
mod failure;
mod fast;
mod figures;
mod markdown;
mod merge;
mod model;
mod tally;
mod text;
mod words;

pub use collect::Summarizer;
pub use document::{Totals, SCHEMA};
pub use figures::{Budget, ByKind, Context, Cost, Tokens};
pub use markdown::to_markdown;
pub use merge::Merger;
pub use model::{limits, Failure, Input, PlanState, Report, Runs, SessionReport, Shell, ShellLine, ToolLine};
pub use tally::{Files, Tally};
pub use text::to_text;

#[cfg(test)]
mod tests;
