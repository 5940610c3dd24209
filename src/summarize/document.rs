//! The JSON document: one indented object for the whole input (never line-framed), which
//! is also what `summarize --merge` reads back. Only its `streams` and `sessions` (the
//! runs) are read back; its `ok`, `verdict`, `status`, `error`, `runs`, `totals` and
//! `input` are derived from them, so a merged document is computed afresh, never patched.

use std::io::Read;

use serde::{Deserialize, Serialize};

use super::clip::{clip, clip_opt, clip_tail};
use super::failure::bounded;
use super::figures::{add_cost, add_opt, tokens_of, Budget, ByKind, Context, Cost, Tokens};
use super::merge::Merger;
use super::model::{limits, Failure, Input, Report, Runs, SessionReport, Shell, StreamInput};
use crate::event::{ErrorCategory, ErrorInfo, Status, ToolCounts, Verdict};

/// The schema name of the document. Version 2 keys every run and stream, so merges can
/// be repeated; a version 1 document (no keys) cannot be merged that way and is refused.
pub const SCHEMA: &str = "minicode.summary.v2";

#[derive(Serialize)]
struct DocumentOut<'a> {
    schema: &'static str,
    ok: bool,
    verdict: Verdict,
    status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    during: Option<&'a str>,
    runs: Runs,
    totals: Totals,
    input: Input,
    streams: &'a [StreamInput],
    sessions: &'a [SessionReport],
}

/// What a document is read back from: its runs and streams; every other figure is derived
/// from them, so it is computed afresh, never trusted.
#[derive(Deserialize)]
struct DocumentIn {
    schema: String,
    #[serde(default)]
    streams: Vec<StreamInput>,
    #[serde(default)]
    sessions: Vec<SessionReport>,
}

/// Figures over all sessions.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Sessions.
    pub sessions: u64,
    /// Sessions that were not ok.
    pub failed_sessions: u64,
    /// Turns started.
    pub turns: u64,
    /// Wall time, summed over the sessions that know theirs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Tool calls by outcome.
    pub tools: ToolCounts,
    /// Tool calls by kind and outcome.
    pub tools_by_kind: ByKind,
    /// Shell command counts.
    pub shell: Shell,
    /// `file.changed` events.
    pub files_changed: u64,
    /// Provider token usage over the sessions that report it; absent when none does.
    #[serde(skip_serializing_if = "Tokens::is_empty")]
    pub usage: Tokens,
    /// Sessions that reported no usage at all (so `usage` undercounts).
    #[serde(skip_serializing_if = "is_zero")]
    pub sessions_without_usage: u64,
    /// Estimated cost over the sessions that report one; absent when none does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
    /// Context window compactions.
    pub context: Context,
    /// Whether any budget ran out.
    pub budget: Budget,
    /// Warnings.
    pub warnings: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Report {
    /// Figures over all sessions.
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for s in &self.sessions {
            t.sessions += 1;
            t.failed_sessions += u64::from(!s.ok);
            t.turns = t.turns.saturating_add(s.turns);
            add_opt(&mut t.duration_ms, s.duration_ms);
            t.tools.merge(&s.tools);
            t.tools_by_kind.merge(&s.tools_by_kind);
            t.shell.add_counts(&s.shell);
            t.files_changed = t.files_changed.saturating_add(s.files.changes);
            t.usage.add(&tokens_of(&s.usage));
            t.sessions_without_usage += u64::from(s.usage.is_empty());
            add_cost(&mut t.cost, s.cost);
            t.context.reasons.merge(&s.context.reasons);
            t.budget = t.budget.max(s.budget);
            t.warnings = t.warnings.saturating_add(s.warnings);
        }
        t
    }

    /// The outcome the document states: `completed`, or the failure of the first run with
    /// the worst verdict; with no run at all, an input error.
    pub fn headline(&self) -> Option<Failure> {
        if self.sessions.is_empty() {
            return Some(Failure {
                status: Status::Failed,
                error: Some(ErrorInfo {
                    category: ErrorCategory::InputError,
                    message: "no canonical events were read, so there is no run to summarize".into(),
                    action: Some("pipe normalize's output into summarize (agent … | normalize | summarize)".into()),
                }),
                during: None,
            });
        }
        let worst = self.verdict();
        let s = self.sessions.iter().find(|s| s.verdict == worst && worst != Verdict::Success)?;
        Some(Failure { status: s.status, error: s.error.clone(), during: s.during.clone() })
    }

    /// The indented JSON document, ending in a newline.
    pub fn to_json(&self) -> String {
        let head = self.headline();
        let doc = DocumentOut {
            schema: SCHEMA,
            ok: self.ok(),
            verdict: self.verdict(),
            status: head.as_ref().map_or(Status::Completed, |f| f.status),
            error: head.as_ref().and_then(|f| f.error.clone()),
            during: head.as_ref().and_then(|f| f.during.as_deref()),
            runs: self.runs(),
            totals: self.totals(),
            input: self.input(),
            streams: &self.streams,
            sessions: &self.sessions,
        };
        // A document of plain maps, strings and numbers always serializes.
        let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Reads every document in `input` (documents may follow each other), calling `on` with
    /// each report or with why it is not one. A document that cannot be parsed ends the
    /// reading of `input`; only a failure to read is an error.
    pub fn read_documents(input: impl Read, mut on: impl FnMut(Result<Report, String>)) -> std::io::Result<()> {
        // serde_json reads a byte at a time.
        for doc in serde_json::Deserializer::from_reader(std::io::BufReader::new(input)).into_iter::<DocumentIn>() {
            match doc {
                Ok(d) => on(Report::try_from(d)),
                Err(e) if e.is_io() => return Err(e.into()),
                Err(e) => {
                    on(Err(format!("not a summarize JSON document: {e}")));
                    break;
                }
            }
        }
        Ok(())
    }
}

impl TryFrom<DocumentIn> for Report {
    type Error = String;

    fn try_from(d: DocumentIn) -> Result<Report, String> {
        if d.schema != SCHEMA {
            return Err(format!("schema {:?} is not {SCHEMA}", d.schema));
        }
        let mut m = Merger::new();
        d.streams.into_iter().for_each(|s| m.add_stream(s));
        for mut s in d.sessions {
            bound_session(&mut s);
            m.add_run(s);
        }
        Ok(m.finish())
    }
}

/// Holds a session read from a document to the bounds a collected one keeps.
fn bound_session(s: &mut SessionReport) {
    let m = limits::MESSAGE;
    s.prompt = clip_opt(s.prompt.as_deref(), m);
    s.during = clip_opt(s.during.as_deref(), m);
    s.error = s.error.as_ref().map(bounded);
    s.usage.cost_usd = None;
    s.failing_tools.truncate(limits::FAILING_TOOLS);
    for t in &mut s.failing_tools {
        t.command = clip_opt(t.command.as_deref(), limits::DETAIL);
        t.target = clip_opt(t.target.as_deref(), limits::DETAIL);
        t.error = t.error.as_ref().map(bounded);
        t.excerpt = t.excerpt.as_deref().map(|e| clip_tail(e, limits::EXCERPT));
    }
    s.shell.commands.truncate(limits::SHELL_COMMANDS);
    s.shell.commands.iter_mut().for_each(|c| c.command = clip_opt(c.command.as_deref(), limits::DETAIL));
    if let Some(p) = &mut s.plan {
        p.entries.truncate(limits::PLAN_ENTRIES);
        p.entries.iter_mut().for_each(|e| e.content = clip(&e.content, limits::DETAIL));
    }
}
