//! The run report's data: what `summarize` keeps of a run and of each session. Only
//! counters and bounded excerpts, never event bodies, so memory stays bounded however long
//! the input; every list and map here has a limit from [`limits`].

use serde::{Deserialize, Serialize};

use super::figures::{Budget, ByKind, Context, Cost, Tokens};
use super::key::Key;
use super::tally::{Files, Tally};
use crate::event::{ErrorInfo, PlanEntry, Status, ToolCounts, ToolKind, Verdict};
use crate::scrub::Scrubber;

/// The bounds of a report: list lengths and excerpt sizes, in items and bytes.
pub mod limits {
    /// Failing, denied, cancelled, timed-out or interrupted tool calls listed per session.
    pub const FAILING_TOOLS: usize = 20;
    /// Shell commands listed per session.
    pub const SHELL_COMMANDS: usize = 50;
    /// Changed files listed per session (the alphabetically first ones).
    pub const FILES: usize = 50;
    /// Plan entries listed.
    pub const PLAN_ENTRIES: usize = 20;
    /// Distinct keys of a tally (compaction reasons, redaction kinds).
    pub const TALLY_KEYS: usize = 32;
    /// Bytes of tool output kept as an excerpt (the end of the output).
    pub const EXCERPT: usize = 200;
    /// Bytes of a command, target, path, plan entry or tally key.
    pub const DETAIL: usize = 200;
    /// Bytes of a prompt or an error message.
    pub const MESSAGE: usize = 500;
}

/// A summary of one or more runs: the in-memory form of the JSON document. It is a set of
/// runs and a set of input streams, each known by its [`Key`], so merging two reports
/// ([`Report::merge`]) is their union: associative, commutative and idempotent (a run that
/// two parts both hold counts once).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// Every run (one session of one input stream), ordered by session id and key; no two
    /// share a key.
    pub sessions: Vec<SessionReport>,
    /// Every input stream's health, ordered by key; no two share a key.
    pub streams: Vec<StreamInput>,
}

impl Report {
    /// True when at least one run was summarized and every run succeeded.
    pub fn ok(&self) -> bool {
        self.verdict() == Verdict::Success
    }

    /// The verdict over every run: the worst of theirs; with no run, `unknown`.
    pub fn verdict(&self) -> Verdict {
        Verdict::worst(self.sessions.iter().map(|s| s.verdict))
    }

    /// The runs counted by verdict.
    pub fn runs(&self) -> Runs {
        let mut r = Runs::default();
        for s in &self.sessions {
            r.total += 1;
            *match s.verdict {
                Verdict::Success => &mut r.success,
                Verdict::Failed => &mut r.failed,
                Verdict::Incomplete => &mut r.incomplete,
                Verdict::Unknown => &mut r.unknown,
            } += 1;
        }
        r
    }

    /// Input health summed over the streams.
    pub fn input(&self) -> Input {
        let mut i = Input::default();
        self.streams.iter().for_each(|s| i.merge(&s.input));
        i
    }

    /// Redacts the secrets in every string a run shows (its prompt, errors, commands,
    /// excerpts, paths, ids, and the keys of its tallies: compaction reasons, redaction
    /// kinds), with terminal control bytes: events that did not come from `normalize` were
    /// never scrubbed, and a report is what is pasted into a CI page. What `normalize`
    /// scrubbed comes through unchanged (scrubbing twice is scrubbing once).
    pub fn scrub(&mut self, scrubber: &mut Scrubber) {
        self.sessions.iter_mut().for_each(|s| scrub_fields(s, scrubber));
        self.streams.iter_mut().for_each(|s| scrub_fields(s, scrubber));
    }
}

/// Scrubs every string of `item` as written, as `scrub` scrubs a JSON line: values, member
/// names (tally keys), and ids as ids. A run's key, a digest, is no text a rule finds.
fn scrub_fields<T: Serialize + serde::de::DeserializeOwned>(item: &mut T, scrubber: &mut Scrubber) {
    let Ok(json) = serde_json::to_string(&*item) else { return };
    let mut scrubbed = Vec::new();
    if scrubber.scrub_json_values(&json, &mut scrubbed) {
        if let Ok(scrubbed) = serde_json::from_slice(&scrubbed) {
            *item = scrubbed;
        }
    }
}

/// Runs counted by verdict. A run is one session of one normalized stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Runs {
    /// Runs summarized.
    pub total: u64,
    /// Runs whose verdict is `success`.
    pub success: u64,
    /// Runs that failed.
    pub failed: u64,
    /// Runs whose input ended before their terminal record.
    pub incomplete: u64,
    /// Runs of which nothing was recognised.
    pub unknown: u64,
}

/// One input stream's health, under the stream's key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamInput {
    /// The digest of the stream's lines (see [`Key`]).
    pub key: Key,
    /// What was read of it.
    #[serde(flatten)]
    pub input: Input,
}

/// Why a run or session is not ok.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Its final status (`failed`, `cancelled`, `timeout`, `interrupted`).
    pub status: Status,
    /// The error: category, message (what happened and why) and action (what to do next).
    pub error: Option<ErrorInfo>,
    /// What was being done when it happened (`turn 2, last tool shell: make test`).
    pub during: Option<String>,
}

/// Input health: what the producing `normalize` read and understood, plus what
/// `summarize` itself could not read.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Input {
    /// Provider lines read.
    pub lines: u64,
    /// Canonical events.
    pub events: u64,
    /// Lines kept as `raw` events.
    pub raw: u64,
    /// Lines of a type the provider parser did not know.
    pub unknown_types: u64,
    /// Lines over the line limit.
    pub oversized: u64,
    /// Secrets redacted, by kind.
    pub redactions: Tally,
    /// Lines (or documents, with `--merge`) `summarize` could not read.
    pub invalid: u64,
    /// Files that could not be read at all.
    pub unreadable: u64,
}

/// One session: its outcome, what it did and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionReport {
    /// The run's key: the digest of its events (see [`Key`]).
    pub key: Key,
    /// The session id.
    pub session_id: String,
    /// What the evidence says of the run.
    pub verdict: Verdict,
    /// The provider (`codex`, `claude-code`, …), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// True when its verdict is `success`.
    pub ok: bool,
    /// `completed`, or the first failure's status.
    pub status: Status,
    /// The first failure's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// What was being done when the first failure happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub during: Option<String>,
    /// The first prompt (scrubbed upstream), bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Turns started.
    #[serde(default)]
    pub turns: u64,
    /// Wall time, when the provider or the turn durations say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Tool calls by outcome.
    #[serde(default)]
    pub tools: ToolCounts,
    /// Tool calls by kind and outcome.
    #[serde(default)]
    pub tools_by_kind: ByKind,
    /// The first tool calls that did not complete, with exit codes and output excerpts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing_tools: Vec<ToolLine>,
    /// Shell commands: counts, and the first commands as summary projections.
    #[serde(default)]
    pub shell: Shell,
    /// Files changed.
    #[serde(default)]
    pub files: Files,
    /// The latest plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanState>,
    /// Provider token usage, counted once; absent when unknown.
    #[serde(default, skip_serializing_if = "Tokens::is_empty")]
    pub usage: Tokens,
    /// Estimated cost; absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
    /// Context window compactions.
    #[serde(default)]
    pub context: Context,
    /// Whether a budget ran out.
    #[serde(default)]
    pub budget: Budget,
    /// Warnings reported.
    #[serde(default)]
    pub warnings: u64,
}

impl SessionReport {
    /// An empty, ok session.
    pub fn new(session_id: String) -> SessionReport {
        SessionReport {
            key: Key::default(),
            session_id,
            verdict: Verdict::Success,
            provider: None,
            model: None,
            ok: true,
            status: Status::Completed,
            error: None,
            during: None,
            prompt: None,
            turns: 0,
            duration_ms: None,
            tools: ToolCounts::default(),
            tools_by_kind: ByKind::default(),
            failing_tools: Vec::new(),
            shell: Shell::default(),
            files: Files::default(),
            plan: None,
            usage: Tokens::default(),
            cost: None,
            context: Context::default(),
            budget: Budget::Unknown,
            warnings: 0,
        }
    }

    /// Records a failure, unless an earlier one is already recorded.
    pub fn fail(&mut self, f: Failure) {
        if self.ok {
            self.ok = false;
            self.status = f.status;
            self.error = f.error;
            self.during = f.during;
        }
    }
}

/// A tool call that did not complete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolLine {
    /// The provider's call id.
    pub tool_call_id: String,
    /// Tool name.
    pub name: String,
    /// What the tool does.
    pub kind: ToolKind,
    /// `failed`, `denied`, `cancelled`, `timeout` or `interrupted`.
    pub status: Status,
    /// Exit code; absent when unknown.
    #[serde(rename = "exit_code", default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// The command, for shell tools (bounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The path, URL or pattern, for other tools (bounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Why it did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// The end of its output (stderr when there is any, else stdout), bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
}

/// Shell commands: counts of all, and the first few as the summary projection of the
/// acp-shell-command-output seed (never the output bodies).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Shell {
    /// Shell commands run.
    pub count: u64,
    /// Commands with a known exit code 0.
    pub exit_zero: u64,
    /// Commands with a known non-zero exit code.
    pub exit_non_zero: u64,
    /// Commands whose exit code is unknown.
    pub exit_unknown: u64,
    /// Commands whose output was shortened.
    pub truncated: u64,
    /// Commands with retained output.
    pub with_output: u64,
    /// Retained stdout bytes, summed.
    pub stdout_bytes: u64,
    /// Retained stderr bytes, summed.
    pub stderr_bytes: u64,
    /// The first commands.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<ShellLine>,
}

/// One shell command's summary projection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellLine {
    /// The provider's call id.
    #[serde(rename = "toolCallId")]
    pub tool_call_id: String,
    /// The command (bounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// How it ended.
    pub status: Status,
    /// Exit code; absent means unknown, never 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// True when the output was shortened (by the provider or a bound).
    #[serde(default)]
    pub truncated: bool,
    /// True when retained stdout or stderr is non-empty.
    #[serde(default)]
    pub has_output: bool,
    /// UTF-8 bytes of retained stdout.
    #[serde(default)]
    pub stdout_bytes: u64,
    /// UTF-8 bytes of retained stderr.
    #[serde(default)]
    pub stderr_bytes: u64,
}

/// The latest plan: counts by state and the first entries.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PlanState {
    /// Entries in the plan.
    pub total: u64,
    /// Entries done.
    pub completed: u64,
    /// Entries under way.
    pub in_progress: u64,
    /// Entries not begun.
    pub pending: u64,
    /// The first entries, content bounded.
    pub entries: Vec<PlanEntry>,
}
