//! Per-session bookkeeping of the engine: open turns, tools and approvals, and the
//! counters the summary reports.

use std::collections::HashMap;

use super::clock::Millis;
use super::shell::ShellAccumulator;
use super::ToolStatus;
use crate::event::{
    ApprovalKind, ErrorInfo, Outcome, SessionFigures, ToolCounts, ToolKind, ToolStarted, Usage, Verdict,
};

#[derive(Debug)]
pub(super) struct SessionState {
    pub id: String,
    pub provider: Option<String>,
    /// The tool call that spawned this session's agent, when it is a child's: the parent of
    /// every event of the session that names none of its own.
    pub spawner: Option<String>,
    /// The agent said the session ended as it should ([`Engine::session_closed`]).
    pub closed: bool,
    pub seq: u64,
    pub turn: u64,
    pub turns: u64,
    pub turn_open: bool,
    pub turn_start: Option<(Millis, bool)>,
    pub turn_duration: Option<u64>,
    pub duration_ms: Option<u64>,
    /// Open tool calls, each with the place it started in ([`ToolState::order`]).
    pub tools: HashMap<String, ToolState>,
    /// How many tool calls have started: the next one's [`ToolState::order`].
    pub tools_started: u64,
    /// Open approvals.
    pub approvals: HashMap<String, ApprovalState>,
    /// Output and ends of calls not announced yet (input out of order): they settle the call
    /// when it is announced, or are reported as they are at the end of input.
    pub orphans: HashMap<String, Orphan>,
    pub counts: ToolCounts,
    pub usage: Usage,
    pub outcome: Option<Outcome>,
    pub error: Option<ErrorInfo>,
    /// Its run ended before its first turn: it is reported cut there at the end of input,
    /// unless a later file goes on with it (a turn starts) or says how it went.
    pub unrun: bool,
}

impl SessionState {
    pub fn new(id: String, provider: Option<String>) -> SessionState {
        SessionState {
            id,
            provider,
            spawner: None,
            closed: false,
            seq: 0,
            turn: 0,
            turns: 0,
            turn_open: false,
            turn_start: None,
            turn_duration: None,
            duration_ms: None,
            tools: HashMap::new(),
            tools_started: 0,
            approvals: HashMap::new(),
            orphans: HashMap::new(),
            counts: ToolCounts::default(),
            usage: Usage::default(),
            outcome: None,
            error: None,
            unrun: false,
        }
    }

    /// What the evidence says of the session: how it ended, and whether anything of an
    /// agent run (a provider, a turn) was seen at all.
    pub fn verdict(&self) -> Verdict {
        Verdict::of(self.outcome, self.turns > 0 || self.provider.is_some())
    }

    /// An agent's own session (not a child's, nor the lines no dialect claimed) that ended
    /// without a turn or an outcome, and without the agent's saying it was over.
    pub fn never_ran(&self) -> bool {
        let agent = self.provider.as_deref().is_some_and(|p| p != super::UNCLAIMED);
        agent && self.spawner.is_none() && !self.closed && self.turns == 0 && self.outcome.is_none()
    }

    pub fn figures(&self) -> SessionFigures {
        let failed = self.outcome.filter(|o| *o != Outcome::Completed);
        SessionFigures {
            session_id: self.id.clone(),
            provider: self.provider.clone(),
            ok: failed.is_none(),
            status: failed.unwrap_or(Outcome::Completed).as_str().to_owned(),
            error: failed.and(self.error.clone()),
            verdict: self.verdict(),
            turns: self.turns,
            tools: self.counts,
            usage: self.usage,
            duration_ms: self.duration_ms,
        }
    }
}

#[derive(Debug)]
pub(super) struct ToolState {
    /// Where it started among the session's calls, so synthesized terminals come in that
    /// order whatever the table's.
    pub order: u64,
    pub name: String,
    pub kind: ToolKind,
    pub command: Option<String>,
    pub parent_id: Option<String>,
    pub started_at: (Millis, bool),
    pub shell: ShellAccumulator,
    /// Its approval was rejected: a failed or cancelled end is a denial.
    pub rejected: bool,
    /// It runs in the background: it outlives the turn that started it.
    pub background: bool,
}

impl ToolState {
    pub fn new(order: u64, s: &ToolStarted, parent_id: Option<String>, started_at: (Millis, bool)) -> ToolState {
        ToolState {
            order,
            name: s.name.clone(),
            kind: s.kind,
            command: s.command.clone(),
            parent_id,
            started_at,
            shell: ShellAccumulator::default(),
            rejected: false,
            background: false,
        }
    }

    /// A second announcement fills in what the first one lacked.
    pub fn refine(&mut self, s: &ToolStarted) {
        if self.command.is_none() {
            self.command.clone_from(&s.command);
        }
        if self.name == "unknown" || self.name.is_empty() {
            self.name.clone_from(&s.name);
            self.kind = s.kind;
        }
    }
}

/// What arrived for a call before the call itself.
#[derive(Debug, Default)]
pub(super) struct Orphan {
    pub shell: ShellAccumulator,
    /// How it ended, when its end came too.
    pub end: Option<HeldEnd>,
    /// The first input line that spoke of it.
    pub line: u64,
}

/// A tool call's end, kept until the call is announced.
#[derive(Debug)]
pub(super) struct HeldEnd {
    pub status: ToolStatus,
    pub error: Option<ErrorInfo>,
    /// When it ended, and the lines it came from.
    pub at: (Millis, bool),
    pub lines: (u64, u64),
}

#[derive(Debug)]
pub(super) struct ApprovalState {
    pub tool_call_id: Option<String>,
    /// `None` for a permission request.
    pub kind: Option<ApprovalKind>,
}
