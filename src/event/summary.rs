//! The `summary` record (docs/contract.md §6): the last line of every normalized stream.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::text::{error_strings, opt_label, Label, Relabel};
use super::{ErrorCategory, ErrorInfo, Outcome, TextField, Usage};

/// The summary body: `ok`, `error` and `prompt` sit at the event's top level, the figures
/// in its payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// True when every turn of every session completed.
    pub ok: bool,
    /// Why the run is not ok.
    pub error: Option<ErrorInfo>,
    /// The first prompt, scrubbed.
    pub prompt: Option<String>,
    /// The figures.
    pub figures: SummaryFigures,
}

impl Summary {
    pub(super) fn for_each_text_mut(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        error_strings(f, &mut self.error);
        if let Some(p) = &mut self.prompt {
            f(TextField::Text, p);
        }
        for s in &mut self.figures.sessions {
            error_strings(f, &mut s.error);
        }
    }

    pub(super) fn relabel(&mut self, r: &mut dyn Relabel) {
        for s in &mut self.figures.sessions {
            r.label(Label::Id, &mut s.session_id);
            opt_label(r, Label::Name, &mut s.provider);
        }
    }
}

/// The summary's payload.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct SummaryFigures {
    /// Turns started, over all sessions.
    pub turns: u64,
    /// Tool calls by outcome.
    pub tools: ToolCounts,
    /// Provider token usage, counted once; absent when unknown.
    #[serde(default, skip_serializing_if = "Usage::is_empty")]
    pub usage: UsageTotals,
    /// Wall time of the run, when the provider or the timestamps say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The verdict over every session: the worst of theirs.
    #[serde(default)]
    pub verdict: Verdict,
    /// How healthy the input was.
    pub input: InputHealth,
    /// One entry per session, when the input holds more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<SessionFigures>,
}

/// Token totals use the same fields as a `usage` event.
pub type UsageTotals = Usage;

/// Tool calls counted by outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct ToolCounts {
    /// All tool calls.
    pub total: u64,
    /// Completed.
    pub completed: u64,
    /// Failed.
    pub failed: u64,
    /// Denied.
    pub denied: u64,
    /// Cancelled.
    pub cancelled: u64,
    /// Timed out.
    pub timeout: u64,
    /// Cut off by the end of input.
    pub interrupted: u64,
}

impl ToolCounts {
    /// Counts one tool call that ended with `outcome`.
    pub fn add(&mut self, outcome: Outcome) {
        self.total += 1;
        *self.slot(outcome) += 1;
    }

    /// The count for one outcome.
    pub fn get(&self, outcome: Outcome) -> u64 {
        match outcome {
            Outcome::Completed => self.completed,
            Outcome::Failed => self.failed,
            Outcome::Denied => self.denied,
            Outcome::Cancelled => self.cancelled,
            Outcome::Timeout => self.timeout,
            Outcome::Interrupted => self.interrupted,
        }
    }

    fn slot(&mut self, outcome: Outcome) -> &mut u64 {
        match outcome {
            Outcome::Completed => &mut self.completed,
            Outcome::Failed => &mut self.failed,
            Outcome::Denied => &mut self.denied,
            Outcome::Cancelled => &mut self.cancelled,
            Outcome::Timeout => &mut self.timeout,
            Outcome::Interrupted => &mut self.interrupted,
        }
    }

    /// Adds another set of counts.
    pub fn merge(&mut self, other: &ToolCounts) {
        self.total += other.total;
        for o in Outcome::ALL {
            *self.slot(o) += other.get(o);
        }
    }
}

/// Input health: what was read and how much of it was understood.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct InputHealth {
    /// Input lines read.
    pub lines: u64,
    /// Events written, the summary included.
    pub events: u64,
    /// Lines kept as `raw` events.
    pub raw: u64,
    /// Lines of an unknown event type.
    pub unknown_types: u64,
    /// Lines longer than the line limit.
    #[serde(default)]
    pub oversized: u64,
    /// Secrets redacted, by kind.
    #[serde(default)]
    pub redactions: BTreeMap<String, u64>,
    /// Input files that could not be read (or not to their end); the others were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreadable: u64,
    /// Files found in a directory operand and not read: not of a format the filter reads
    /// (configuration, caches, locks, binaries).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One session's figures, in a summary that covers several.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct SessionFigures {
    /// The session.
    pub session_id: String,
    /// The provider, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// True when every turn completed.
    pub ok: bool,
    /// The session's final status.
    #[cfg_attr(feature = "schema", schemars(with = "Outcome"))]
    pub status: String,
    /// Why it is not ok.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// What the evidence says of the run.
    #[serde(default)]
    pub verdict: Verdict,
    /// Turns started.
    pub turns: u64,
    /// Tool calls by outcome.
    pub tools: ToolCounts,
    /// Token usage.
    #[serde(default, skip_serializing_if = "Usage::is_empty")]
    pub usage: UsageTotals,
    /// Wall time, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// What the evidence says of a run, for those who keep many (CI gates, archives): the
/// outcome reconstructed from its events, kept apart from a broken measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every turn the agent ended, it ended well.
    Success,
    /// Nothing of an agent run was recognised.
    #[default]
    Unknown,
    /// The input ended before the run's terminal record: the normalizer closed it as
    /// `interrupted`.
    Incomplete,
    /// The agent or a required step failed, was denied, cancelled or timed out, or the
    /// agent's own result contradicts itself (`subtype: success` with `is_error: true`).
    Failed,
}

impl Verdict {
    /// Every verdict, best first (the order of `Ord`, in which [`Verdict::worst`] ranks them).
    pub const ALL: [Verdict; 4] = [Verdict::Success, Verdict::Unknown, Verdict::Incomplete, Verdict::Failed];

    /// The lowercase wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Success => "success",
            Verdict::Unknown => "unknown",
            Verdict::Incomplete => "incomplete",
            Verdict::Failed => "failed",
        }
    }

    /// The verdict of a run that ended with `outcome` (`None`: it never said), where
    /// `recognised` says whether anything of an agent run (a provider, a turn) was seen.
    pub fn of(outcome: Option<Outcome>, recognised: bool) -> Verdict {
        match outcome {
            Some(Outcome::Interrupted) => Verdict::Incomplete,
            Some(o) if o != Outcome::Completed => Verdict::Failed,
            _ if recognised => Verdict::Success,
            _ => Verdict::Unknown,
        }
    }

    /// The verdict of a run that failed with this error and nothing more is known.
    pub fn of_error(e: &ErrorInfo) -> Verdict {
        match e.category {
            ErrorCategory::Interrupted => Verdict::Incomplete,
            ErrorCategory::InputError => Verdict::Unknown,
            _ => Verdict::Failed,
        }
    }

    /// The verdict of several runs: the worst of them; of none, `unknown`.
    pub fn worst(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        verdicts.into_iter().max().unwrap_or(Verdict::Unknown)
    }
}
