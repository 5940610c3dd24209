//! The JSON document: one indented object for the whole input (never line-framed), which
//! is also what `summarize --merge` reads back. Its `ok`, `status`, `error` and `totals`
//! are derived from the runs and sessions, so a merged document is computed afresh, never
//! patched.

use std::io::Read;

use serde::{Deserialize, Serialize};

use super::clip::{clip, clip_opt, clip_tail};
use super::failure::bounded;
use super::figures::{add_cost, add_opt, add_tokens, Budget, ByKind, Context, Cost, Tokens};
use super::merge::Merger;
use super::model::{limits, Failure, Input, Report, Runs, SessionReport, Shell};
use crate::event::{ErrorCategory, ErrorInfo, Status, ToolCounts};

/// The schema name of the document.
pub const SCHEMA: &str = "minicode.summary.v1";

#[derive(Serialize)]
struct DocumentOut<'a> {
    schema: &'static str,
    ok: bool,
    status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    during: Option<&'a str>,
    runs: &'a Runs,
    totals: Totals,
    input: &'a Input,
    sessions: &'a [SessionReport],
}

#[derive(Deserialize)]
struct DocumentIn {
    schema: String,
    #[serde(default)]
    status: Option<Status>,
    #[serde(default)]
    error: Option<ErrorInfo>,
    #[serde(default)]
    during: Option<String>,
    #[serde(default)]
    runs: Runs,
    #[serde(default)]
    input: Input,
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
            t.turns += s.turns;
            add_opt(&mut t.duration_ms, s.duration_ms);
            t.tools.merge(&s.tools);
            t.tools_by_kind.merge(&s.tools_by_kind);
            t.shell.add_counts(&s.shell);
            t.files_changed += s.files.changes;
            add_tokens(&mut t.usage, &s.usage);
            t.sessions_without_usage += u64::from(s.usage.is_empty());
            add_cost(&mut t.cost, s.cost);
            t.context.reasons.merge(&s.context.reasons);
            t.budget = t.budget.max(s.budget);
            t.warnings += s.warnings;
        }
        t
    }

    /// The outcome the document states: `completed`, or the first failing run's failure;
    /// with no run at all, an input error.
    pub fn headline(&self) -> Option<Failure> {
        if self.runs.total == 0 {
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
        (!self.ok())
            .then(|| self.failure.clone().unwrap_or(Failure { status: Status::Failed, error: None, during: None }))
    }

    /// The indented JSON document, ending in a newline.
    pub fn to_json(&self) -> String {
        let head = self.headline();
        let doc = DocumentOut {
            schema: SCHEMA,
            ok: self.ok(),
            status: head.as_ref().map_or(Status::Completed, |f| f.status),
            error: head.as_ref().and_then(|f| f.error.clone()),
            during: head.as_ref().and_then(|f| f.during.as_deref()),
            runs: &self.runs,
            totals: self.totals(),
            input: &self.input,
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
        let failure = (d.runs.failed > 0).then(|| Failure {
            status: d.status.filter(|s| *s != Status::Completed).unwrap_or(Status::Failed),
            error: d.error.as_ref().map(bounded),
            during: clip_opt(d.during.as_deref(), limits::MESSAGE),
        });
        let mut m = Merger::new();
        m.add(Report { runs: d.runs, failure, input: d.input, sessions: Vec::new() });
        for mut s in d.sessions {
            bound_session(&mut s);
            m.add(Report { sessions: vec![s], ..Report::default() });
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
