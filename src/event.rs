//! The canonical `minicode.output.v1` event: the only vocabulary shared by providers,
//! stages, projections and the summary. It imports nothing else from the crate.
//!
//! The envelope is a typed struct and each event type is a variant of [`Body`] with its
//! own payload struct. Types this version does not know are kept whole in
//! [`Body::Other`], the one explicit escape hatch, so filters never drop them.
//!
//! The wire format is defined once: the envelope's fields in the table of `envelope.rs`, the
//! event types in the table of `catalog.rs`, beside their payloads ([`CATALOG`]); serialization, reading, the type
//! names and the JSON Schema follow from the two. The readers that know the format by heart
//! for speed (the tool output skim here, `summarize`'s fast way) are held to the tables by
//! tests that go through them.

// First: the `catalog!` macro that `catalog` expands.
#[macro_use]
mod table;
mod catalog;
mod envelope;
#[cfg(feature = "schema")]
pub mod schema;
mod serde_impl;
mod skim;
mod summary;
#[cfg(test)]
pub(crate) mod tests;
mod text;
mod vocab;

// Every payload of the catalog, and the catalog itself, at `event::`.
pub use catalog::*;
pub use envelope::{Event, RawRef, Severity, Source, Status, Visibility, ENVELOPE_KEYS};
pub(crate) use serde_impl::{EnvelopeVisitor, EventReader, Fields, Str};
pub use summary::{InputHealth, SessionFigures, Summary, SummaryFigures, ToolCounts, UsageTotals, Verdict};
pub use table::{EventType, Implied};
pub use text::{id_member, value_strings, CutLine, CutOutput, Label, OutputField, Relabel, TextField};
pub use vocab::{
    ApprovalKind, Decision, ErrorCategory, FileChange, Outcome, PlanStatus, RawReason, Role, Stream, ToolKind,
};

/// The schema name every event carries.
pub const SCHEMA: &str = "minicode.output.v1";

/// Why one line is not an event, for a person: serde's message with its column, without
/// the "line 1" serde counts in a line read alone (the caller cites the input's line).
pub fn line_error(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let at = format!(" at line {} column {}", e.line(), e.column());
    match message.strip_suffix(&at) {
        Some(m) if e.line() == 1 => format!("{m} (column {})", e.column()),
        _ => message,
    }
}
