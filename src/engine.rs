//! The lifecycle engine every provider parser drives (CONTRACT §2, §4, §6).
//!
//! A parser turns its dialect into calls such as [`Engine::tool_started`] or
//! [`Engine::turn_ended`]; the engine owns what is the same for every provider: sessions,
//! turns, tool and approval state, deterministic event ids, provenance (`rawRef`), exactly
//! one terminal per lifecycle, synthesized terminals at end of input, shell output
//! accumulation, and the summary record. Parsers never build envelopes themselves.

pub mod clock;
mod recent;
pub mod shell;
mod state;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use crate::event::*;
use clock::{format_rfc3339, Clock, Millis};
pub use recent::Recent;
pub use shell::{parse_exit_prefix, ExitSource, Update};
use state::{ApprovalState, SessionState, ToolState};

/// How many ended tool calls and settled approvals the engine remembers.
const RECENT: usize = 4096;

/// An id of session `i`, as the engine-wide [`Recent`] sets hold it.
fn scoped(i: usize, id: &str) -> String {
    format!("{i}/{id}")
}

/// The default bound of one output text field: 256 KiB.
pub const DEFAULT_FIELD_BOUND: usize = 256 * 1024;

/// How a provider reported the end of a tool call, before exit codes are weighed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    /// The provider said it completed; a known non-zero exit still makes it `failed`.
    Completed,
    /// The provider said it failed or errored.
    Failed,
    /// Permission was refused.
    Denied,
    /// Cancelled.
    Cancelled,
    /// Timed out.
    Timeout,
}

/// Whether a usage report is an increment or the session's running total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageScope {
    /// Added to what is known.
    Increment,
    /// Replaces what is known (a final or cumulative total).
    Total,
}

/// Extra facts about a new tool call beyond its payload.
#[derive(Debug, Clone, Default)]
pub struct ToolContext {
    /// The child agent's parent tool call.
    pub parent_id: Option<String>,
}

/// The lifecycle engine. Events it produces are collected until [`Engine::drain`].
#[derive(Debug)]
pub struct Engine {
    clock: Clock,
    bound: usize,
    line: u64,
    line_has_content: bool,
    line_referenced: bool,
    pending_since: Option<u64>,
    provider_time: Option<Millis>,
    read_time: Millis,
    sessions: Vec<SessionState>,
    current: Option<usize>,
    /// Recently ended tool calls and settled approvals of every session (keyed by
    /// [`scoped`]): a late update for one is absorbed, never a second terminal. Kept
    /// engine-wide so that memory stays bounded however many sessions a stream holds.
    closed_tools: Recent,
    settled_approvals: Recent,
    out: Vec<Event>,
    health: InputHealth,
    run_error: Option<ErrorInfo>,
    prompt: Option<String>,
    provider: Option<String>,
}

impl Engine {
    /// An engine with the given clock and output field bound.
    pub fn new(clock: Clock, bound: usize) -> Engine {
        Engine {
            clock,
            bound,
            line: 0,
            line_has_content: false,
            line_referenced: false,
            pending_since: None,
            provider_time: None,
            read_time: 0,
            sessions: Vec::new(),
            current: None,
            closed_tools: Recent::new(RECENT),
            settled_approvals: Recent::new(RECENT),
            out: Vec::new(),
            health: InputHealth::default(),
            run_error: None,
            prompt: None,
            provider: None,
        }
    }

    /// The field bound in bytes.
    pub fn bound(&self) -> usize {
        self.bound
    }

    // ----------------------------------------------------------------- lines ----

    /// Starts input line `n` (1-based). `blank` lines need no event.
    pub fn begin_line(&mut self, n: u64, blank: bool) {
        self.line = n;
        self.health.lines = n;
        self.line_has_content = !blank;
        self.line_referenced = false;
        self.provider_time = None;
        self.read_time = self.clock.now();
    }

    /// Ends the current line: a non-blank line no event referenced waits for the next one.
    pub fn end_line(&mut self) {
        if self.line_has_content && !self.line_referenced {
            self.pending_since.get_or_insert(self.line);
        }
    }

    /// The provider's own time for the current line.
    pub fn set_time(&mut self, ms: Millis) {
        self.provider_time = Some(ms);
    }

    /// Counts a line longer than the line limit.
    pub fn count_oversized(&mut self) {
        self.health.oversized += 1;
    }

    /// Takes the events produced so far.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Event> {
        self.out.drain(..)
    }

    /// The provider name of the run being read, once known.
    pub fn provider(&self) -> Option<&str> {
        self.provider.as_deref()
    }

    // -------------------------------------------------------------- sessions ----

    /// Starts (or switches to) the session `id`, emitting `session.started` the first time.
    /// Without an id the session is named `s1`, `s2`, … in order of appearance.
    pub fn session_started(&mut self, id: Option<&str>, info: SessionStarted) {
        let id = id.map(clean_id);
        let id = id.as_deref();
        if self.provider.is_none() {
            self.provider = Some(info.provider.clone());
        }
        if let Some(i) = id.and_then(|id| self.find_session(id)) {
            self.current = Some(i);
            return;
        }
        let id = id.map_or_else(|| self.anonymous_id(), str::to_owned);
        self.push_session(id, Some(info));
    }

    /// Switches to session `id`, starting it if it is new, named after the run's provider, or
    /// `provider` when the run has not said (its start is missing).
    pub fn use_session(&mut self, id: &str, provider: &str) {
        let id = &*clean_id(id);
        match self.find_session(id) {
            Some(i) => self.current = Some(i),
            None => {
                let provider = self.provider.get_or_insert_with(|| provider.to_owned()).clone();
                let info = SessionStarted { provider, ..Default::default() };
                self.push_session(id.to_owned(), Some(info));
            }
        }
    }

    /// The current session's id, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.current.map(|i| self.sessions[i].id.as_str())
    }

    fn find_session(&self, id: &str) -> Option<usize> {
        // Most lines name the session they continue: no walk through every session so far
        // (ids are unique, so the current one is the only match).
        match self.current {
            Some(i) if self.sessions[i].id == id => Some(i),
            _ => self.sessions.iter().position(|s| s.id == id),
        }
    }

    /// `s1`, `s2`, … by order of appearance, skipping a name a provider already gave.
    fn anonymous_id(&self) -> String {
        (self.sessions.len() + 1..)
            .map(|n| format!("s{n}"))
            .find(|id| !self.sessions.iter().any(|s| s.id == *id))
            .expect("an unused name")
    }

    fn push_session(&mut self, id: String, info: Option<SessionStarted>) {
        self.sessions.push(SessionState::new(id, info.as_ref().map(|i| i.provider.clone())));
        self.current = Some(self.sessions.len() - 1);
        if let Some(info) = info {
            self.emit(Body::SessionStarted(info), Meta::new(Visibility::DETAIL));
        }
    }

    /// The current session's index, starting an anonymous session when there is none.
    fn session_index(&mut self) -> usize {
        let i = match self.current {
            Some(i) => i,
            None => {
                let id = self.anonymous_id();
                self.sessions.push(SessionState::new(id, None));
                self.sessions.len() - 1
            }
        };
        self.current = Some(i);
        i
    }

    fn session(&mut self) -> &mut SessionState {
        let i = self.session_index();
        &mut self.sessions[i]
    }

    // ----------------------------------------------------------------- turns ----

    /// Starts a new turn; a turn still open is ended as completed first.
    pub fn turn_started(&mut self, prompt: Option<String>) {
        if self.session().turn_open {
            self.turn_ended(Outcome::Completed, None, None);
        }
        if self.prompt.is_none() {
            self.prompt.clone_from(&prompt);
        }
        let s = self.session();
        s.turn += 1;
        s.turn_open = true;
        s.turns += 1;
        let t = self.stamp();
        self.session().turn_start = Some(t);
        let corr = self.turn_correlation();
        self.emit(
            Body::TurnStarted(TurnStarted { prompt }),
            Meta::new(Visibility::ALL).status(Status::Started).correlation(Some(corr)),
        );
    }

    /// Opens a turn when none is open (for providers without explicit turn markers).
    pub fn ensure_turn(&mut self) {
        if !self.session().turn_open {
            self.turn_started(None);
        }
    }

    /// True when the current session has an open turn.
    pub fn turn_is_open(&self) -> bool {
        self.current.is_some_and(|i| self.sessions[i].turn_open)
    }

    /// Ends the open turn (if any) with `outcome`. Open tools end with it (cancelled,
    /// timed out or interrupted) and open approvals are settled with an unknown decision.
    pub fn turn_ended(&mut self, outcome: Outcome, stop_reason: Option<String>, error: Option<ErrorInfo>) {
        if !self.session().turn_open {
            if let Some(e) = error {
                self.record_error(outcome, e);
            }
            return;
        }
        let tool_outcome = match outcome {
            Outcome::Cancelled | Outcome::Timeout => outcome,
            _ => Outcome::Interrupted,
        };
        self.close_open(tool_outcome);
        let now = self.stamp();
        let duration = self.session().turn_start.and_then(|start| elapsed(start, now));
        let s = self.session();
        s.turn_open = false;
        // A stream of a thousand sessions keeps a thousand of them: past their turns, only
        // their figures, not the room their tool tables grew to.
        s.tools.shrink_to_fit();
        s.tool_order.shrink_to_fit();
        s.approvals.shrink_to_fit();
        let duration_ms = s.turn_duration.take().or(duration);
        let error = error.or_else(|| {
            outcome.default_category().map(|category| ErrorInfo {
                message: format!("the turn ended {}", outcome.as_str()),
                category,
                action: None,
            })
        });
        if let Some(e) = &error {
            self.record_error(outcome, e.clone());
        }
        let source = if outcome == Outcome::Interrupted { Source::Normalizer } else { Source::Agent };
        let corr = self.turn_correlation();
        self.emit(
            Body::TurnEnded(TurnEnded { outcome, stop_reason, duration_ms, error }),
            Meta::new(Visibility::ALL)
                .status(outcome.status())
                .source(source)
                .severity(severity_of(outcome))
                .correlation(Some(corr)),
        );
    }

    /// The provider's own duration for the current turn, used when it ends.
    pub fn set_turn_duration(&mut self, ms: u64) {
        self.session().turn_duration = Some(ms);
    }

    fn record_error(&mut self, outcome: Outcome, e: ErrorInfo) {
        let s = self.session();
        if s.outcome.is_none() || s.outcome == Some(Outcome::Completed) {
            s.outcome = Some(outcome);
            s.error = Some(e);
        }
    }

    fn turn_correlation(&mut self) -> String {
        let s = self.session();
        format!("turn-{}", s.turn)
    }

    /// A failure outside any turn (authentication, configuration, a crashed provider):
    /// emitted as an error `warning` and reported by the summary.
    pub fn run_error(&mut self, error: ErrorInfo) {
        let message = error.message.clone();
        let category = Some(error.category.as_str().to_owned());
        if self.run_error.is_none() {
            self.run_error = Some(error);
        }
        self.emit(Body::Warning(Warning { message, category }), Meta::new(Visibility::ALL).severity(Severity::Error));
    }

    // ----------------------------------------------------------------- tools ----

    /// Announces a tool call. A second announcement of the same id only refines what is
    /// known (command, input) and emits nothing; an id that already ended is ignored.
    pub fn tool_started(&mut self, mut started: ToolStarted, ctx: ToolContext) {
        if let Cow::Owned(id) = clean_id(&started.tool_call_id) {
            started.tool_call_id = id;
        }
        let t = self.stamp();
        let i = self.session_index();
        if self.closed_tools.contains(&scoped(i, &started.tool_call_id)) {
            return;
        }
        let s = &mut self.sessions[i];
        if let Some(tool) = s.tools.get_mut(&started.tool_call_id) {
            tool.refine(&started);
            return;
        }
        s.tools.insert(started.tool_call_id.clone(), ToolState::new(&started, ctx.parent_id.clone(), t));
        s.tool_order.push(started.tool_call_id.clone());
        let meta = Meta::new(Visibility::ALL)
            .status(Status::Started)
            .correlation(Some(started.tool_call_id.clone()))
            .parent(ctx.parent_id);
        self.emit(Body::ToolStarted(started), meta);
    }

    /// True when the tool call is open.
    pub fn tool_is_open(&self, id: &str) -> bool {
        let id = &*clean_id(id);
        self.current.is_some_and(|i| self.sessions[i].tools.contains_key(id))
    }

    /// True when the tool call was seen, open or ended, in the current session.
    pub fn tool_is_known(&self, id: &str) -> bool {
        let id = &*clean_id(id);
        self.current
            .is_some_and(|i| self.sessions[i].tools.contains_key(id) || self.closed_tools.contains(&scoped(i, id)))
    }

    /// The name a tool call was announced with.
    pub fn tool_name(&self, id: &str) -> Option<&str> {
        self.current.and_then(|i| self.sessions[i].tools.get(&*clean_id(id))).map(|t| t.name.as_str())
    }

    /// Applies output to an open tool; live text is emitted as `tool.output`.
    pub fn tool_output(&mut self, id: &str, stream: Stream, update: Update, text: &str) {
        let id = &*clean_id(id);
        let bound = self.bound;
        let Some(tool) = self.session().tools.get_mut(id) else { return };
        let parent = tool.parent_id.clone();
        let Some(new) = tool.shell.apply(stream, update, text, bound) else { return };
        let mut delta = new.to_owned();
        crate::bound::bound(&mut delta, bound, crate::bound::Keep::Tail);
        let body = Body::ToolOutput(ToolOutput { tool_call_id: id.to_owned(), stream, delta });
        let meta = Meta::new(Visibility::DETAIL)
            .status(Status::Running)
            .source(Source::Tool)
            .correlation(Some(id.to_owned()))
            .parent(parent);
        self.emit(body, meta);
    }

    /// Records an exit code for an open tool, weighed by its source's precedence.
    pub fn tool_exit(&mut self, id: &str, source: ExitSource, code: i64) {
        let id = &*clean_id(id);
        if let Some(tool) = self.session().tools.get_mut(id) {
            tool.shell.exit(source, code);
        }
    }

    /// Marks an open tool's output as shortened by the provider.
    pub fn tool_truncated(&mut self, id: &str) {
        let id = &*clean_id(id);
        if let Some(tool) = self.session().tools.get_mut(id) {
            tool.shell.mark_truncated();
        }
    }

    /// Ends a tool call. Unknown ids get a synthesized `tool.started` first; ids that already
    /// ended are ignored (a late update never makes a second terminal).
    pub fn tool_ended(&mut self, id: &str, status: ToolStatus, error: Option<ErrorInfo>) {
        let id = &*clean_id(id);
        let i = self.session_index();
        if self.closed_tools.contains(&scoped(i, id)) {
            return;
        }
        if !self.sessions[i].tools.contains_key(id) {
            let started = ToolStarted {
                tool_call_id: id.to_owned(),
                name: "unknown".into(),
                qualified: "unknown".into(),
                kind: ToolKind::Other,
                target: None,
                input: None,
                command: None,
                cwd: None,
            };
            self.tool_started(started, ToolContext::default());
        }
        let outcome = {
            let tool = &self.session().tools[id];
            match status {
                ToolStatus::Denied => Outcome::Denied,
                ToolStatus::Cancelled | ToolStatus::Failed if tool.rejected => Outcome::Denied,
                ToolStatus::Cancelled => Outcome::Cancelled,
                ToolStatus::Timeout => Outcome::Timeout,
                ToolStatus::Failed => Outcome::Failed,
                ToolStatus::Completed => match tool.shell.exit_code() {
                    Some(c) if c != 0 => Outcome::Failed,
                    _ => Outcome::Completed,
                },
            }
        };
        self.finish_tool(id, outcome, error, Source::Agent);
    }

    fn finish_tool(&mut self, id: &str, outcome: Outcome, error: Option<ErrorInfo>, source: Source) {
        let bound = self.bound;
        let now = self.stamp();
        let i = self.session_index();
        let s = &mut self.sessions[i];
        let Some(tool) = s.tools.remove(id) else { return };
        self.closed_tools.insert(&scoped(i, id));
        s.tool_order.retain(|t| t != id);
        if s.tools.is_empty() {
            // A finished session keeps only its figures: its tables' capacity would
            // otherwise stay allocated for every session of a long archive.
            s.tools = HashMap::new();
            s.tool_order = Vec::new();
        }
        s.counts.add(outcome);
        let output = tool.shell.finish(tool.command.as_deref(), bound);
        let error = error.or_else(|| {
            let category = outcome.default_category()?;
            let message = match (outcome, output.as_ref().and_then(|o| o.exit_code)) {
                (Outcome::Failed, Some(code)) => format!("{} exited with code {code}", tool.name),
                _ => format!("{} {}", tool.name, outcome.as_str()),
            };
            Some(ErrorInfo { category, message, action: None })
        });
        let duration_ms = elapsed(tool.started_at, now);
        let body = Body::ToolEnded(ToolEnded {
            outcome,
            tool_call_id: id.to_owned(),
            name: tool.name,
            kind: tool.kind,
            duration_ms,
            output,
            error,
        });
        let meta = Meta::new(Visibility::ALL)
            .status(outcome.status())
            .source(source)
            .severity(severity_of(outcome))
            .correlation(Some(id.to_owned()))
            .parent(tool.parent_id);
        self.emit(body, meta);
    }

    // ------------------------------------------------------------- approvals ----

    /// Emits `approval.requested` once per approval id.
    pub fn approval_requested(&mut self, approval_id: &str, tool_call_id: Option<&str>, title: Option<String>) {
        self.request_approval(approval_id, tool_call_id, title, None);
    }

    /// An agent's question to the user: an approval exchange of kind `question`, which its
    /// answer settles ([`Decision::Answered`], [`Decision::Declined`], …).
    pub fn question_asked(&mut self, approval_id: &str, tool_call_id: Option<&str>, title: Option<String>) {
        self.request_approval(approval_id, tool_call_id, title, Some(ApprovalKind::Question));
    }

    fn request_approval(
        &mut self,
        approval_id: &str,
        tool_call_id: Option<&str>,
        title: Option<String>,
        kind: Option<ApprovalKind>,
    ) {
        let approval_id = &*clean_id(approval_id);
        let tool_call_id = tool_call_id.map(clean_id);
        let tool_call_id = tool_call_id.as_deref();
        let i = self.session_index();
        if self.sessions[i].approvals.contains_key(approval_id)
            || self.settled_approvals.contains(&scoped(i, approval_id))
        {
            return;
        }
        self.sessions[i]
            .approvals
            .insert(approval_id.to_owned(), ApprovalState { tool_call_id: tool_call_id.map(str::to_owned), kind });
        let body = Body::ApprovalRequested(Approval {
            approval_id: approval_id.to_owned(),
            tool_call_id: tool_call_id.map(str::to_owned),
            title,
            kind,
            decision: None,
        });
        let meta = Meta::new(Visibility::ALL).status(Status::Started).correlation(Some(approval_id.to_owned()));
        self.emit(body, meta);
    }

    /// Settles an approval once; a rejection marks its tool so that its end is `tool.denied`.
    pub fn approval_settled(&mut self, approval_id: &str, decision: Decision) {
        self.settle(&clean_id(approval_id), decision, Source::Agent);
    }

    fn settle(&mut self, approval_id: &str, decision: Decision, source: Source) {
        let i = self.session_index();
        let s = &mut self.sessions[i];
        let Some(a) = s.approvals.remove(approval_id) else { return };
        self.settled_approvals.insert(&scoped(i, approval_id));
        let tool_call_id = a.tool_call_id;
        // An unanswered question refuses no tool; a refused permission does.
        if a.kind.is_none() && !decision.is_allowed() && decision != Decision::Unknown {
            if let Some(t) = tool_call_id.as_deref().and_then(|t| s.tools.get_mut(t)) {
                t.rejected = true;
            }
        }
        let status = if decision.is_yes() { Status::Completed } else { Status::Denied };
        let body = Body::ApprovalSettled(Approval {
            approval_id: approval_id.to_owned(),
            tool_call_id,
            title: None,
            kind: a.kind,
            decision: Some(decision),
        });
        let meta = Meta::new(Visibility::ALL).status(status).source(source).correlation(Some(approval_id.to_owned()));
        self.emit(body, meta);
    }

    // ------------------------------------------------------------ the rest ----

    /// Assistant or user text.
    pub fn text(&mut self, role: Role, delta: String, parent_id: Option<String>) {
        if delta.is_empty() {
            return;
        }
        let vis = if role == Role::Assistant { Visibility::ALL } else { Visibility::DETAIL };
        self.emit(Body::Text(Text { delta, role }), Meta::new(vis).parent(parent_id));
    }

    /// Thinking text.
    pub fn reasoning(&mut self, delta: String, parent_id: Option<String>) {
        if !delta.is_empty() {
            self.emit(Body::Reasoning(Reasoning { delta }), Meta::new(Visibility::DETAIL).parent(parent_id));
        }
    }

    /// A plan update.
    pub fn plan(&mut self, entries: Vec<PlanEntry>) {
        self.emit(Body::Plan(Plan { entries }), Meta::new(Visibility::ALL));
    }

    /// A file the agent changed.
    pub fn file_changed(&mut self, path: String, change: FileChange, tool_call_id: Option<String>) {
        let parent =
            tool_call_id.as_deref().and_then(|t| self.session().tools.get(t)).and_then(|t| t.parent_id.clone());
        self.emit(
            Body::FileChanged(FileChanged { path, change, tool_call_id }),
            Meta::new(Visibility::ALL).parent(parent),
        );
    }

    /// Token usage; emitted as a `usage` event and counted once into the session's totals.
    pub fn usage(&mut self, usage: Usage, scope: UsageScope) {
        if usage.is_empty() {
            return;
        }
        let s = self.session();
        match scope {
            UsageScope::Total => s.usage = usage,
            UsageScope::Increment => add_usage(&mut s.usage, &usage),
        }
        self.emit(Body::Usage(usage), Meta::new(Visibility::DETAIL));
    }

    /// The context window was compacted.
    pub fn compacted(&mut self, reason: String) {
        self.emit(Body::ContextCompacted(ContextCompacted { reason }), Meta::new(Visibility::DETAIL));
    }

    /// A warning worth showing.
    pub fn warning(&mut self, message: String, category: Option<String>) {
        self.emit(Body::Warning(Warning { message, category }), Meta::new(Visibility::ALL).severity(Severity::Warning));
    }

    /// Input that could not be understood, preserved as a `raw` event.
    pub fn raw(&mut self, line: &str, reason: RawReason) {
        self.health.raw += 1;
        if reason == RawReason::UnknownType {
            self.health.unknown_types += 1;
        }
        let mut line = line.to_owned();
        crate::bound::bound(&mut line, self.bound, crate::bound::Keep::HeadTail);
        self.emit(Body::Raw(Raw { line, reason }), Meta::new(Visibility::DEBUG_ONLY).severity(Severity::Warning));
    }

    /// A provider event this version does not model but that is worth keeping typed as
    /// unknown: counted as an unknown type and kept as a `raw` event.
    pub fn unknown(&mut self, line: &str) {
        self.raw(line, RawReason::UnknownType);
    }

    // ------------------------------------------------------------- the end ----

    /// Ends the input: closes whatever is open (`interrupted`, source `normalizer`) and
    /// emits the summary. `redactions` are the scrub stage's counts so far.
    pub fn finish(&mut self, redactions: BTreeMap<String, u64>) -> Event {
        let had_sessions = !self.sessions.is_empty();
        self.provider_time = None;
        self.read_time = self.clock.now();
        self.interrupt_open();
        self.health.redactions = redactions;
        let summary = self.summary(had_sessions);
        let severity = if summary.ok { Severity::Info } else { Severity::Error };
        let status = self.run_status(&summary);
        let meta = Meta::new(Visibility::ALL).source(Source::Normalizer).severity(severity).status(status);
        self.emit(Body::Summary(Box::new(summary)), meta);
        let mut ev = self.out.pop().expect("the summary was just emitted");
        if let Body::Summary(s) = &mut ev.body {
            s.figures.input.events = self.health.events;
        }
        ev
    }

    /// Ends the run being read, as the input changes to another agent's dialect: what it
    /// left open was interrupted, and what follows belongs to a session of its own.
    pub fn end_run(&mut self) {
        self.interrupt_open();
        self.current = None;
        self.provider = None;
    }

    /// Closes whatever is open in every session (`interrupted`, source `normalizer`).
    fn interrupt_open(&mut self) {
        for i in 0..self.sessions.len() {
            self.current = Some(i);
            if self.sessions[i].turn_open {
                self.turn_ended(Outcome::Interrupted, None, Some(interrupted_error()));
            } else if !self.sessions[i].tools.is_empty() || !self.sessions[i].approvals.is_empty() {
                self.close_open(Outcome::Interrupted);
                self.record_error(Outcome::Interrupted, interrupted_error());
            }
        }
    }

    fn run_status(&self, summary: &Summary) -> Status {
        if summary.ok {
            return Status::Completed;
        }
        match summary.error.as_ref().map(|e| &e.category) {
            Some(ErrorCategory::Cancelled) => Status::Cancelled,
            Some(ErrorCategory::Timeout) => Status::Timeout,
            Some(ErrorCategory::Interrupted) => Status::Interrupted,
            _ => Status::Failed,
        }
    }

    fn close_open(&mut self, outcome: Outcome) {
        let s = self.session();
        let open: Vec<String> = s.tool_order.clone();
        let mut approvals: Vec<String> = s.approvals.keys().cloned().collect();
        // A HashMap's order differs between runs; the same input must give the same output.
        approvals.sort();
        for a in approvals {
            self.settle(&a, Decision::Unknown, Source::Normalizer);
        }
        for id in open {
            // A call whose approval was refused never ran: it was denied, whatever ended the turn.
            let rejected = self.session().tools.get(&id).is_some_and(|t| t.rejected);
            let outcome = if rejected { Outcome::Denied } else { outcome };
            let error = match outcome {
                Outcome::Interrupted => Some(ErrorInfo {
                    category: ErrorCategory::Interrupted,
                    message: "the tool call had not finished when the input ended".into(),
                    action: Some("re-run the agent; the command may not have completed".into()),
                }),
                _ => None,
            };
            self.finish_tool(&id, outcome, error, Source::Normalizer);
        }
    }

    fn summary(&mut self, had_sessions: bool) -> Summary {
        let mut figures = SummaryFigures::default();
        let mut first_error: Option<(Outcome, ErrorInfo)> = None;
        for s in &self.sessions {
            figures.turns += s.turns;
            figures.tools.merge(&s.counts);
            add_usage(&mut figures.usage, &s.usage);
            if let (Some(o), Some(e)) = (s.outcome, &s.error) {
                if o != Outcome::Completed && first_error.is_none() {
                    first_error = Some((o, e.clone()));
                }
            }
        }
        if self.sessions.len() > 1 {
            figures.sessions = self.sessions.iter().map(SessionState::figures).collect();
        }
        figures.duration_ms = {
            let known: Vec<u64> = self.sessions.iter().filter_map(|s| s.duration_ms).collect();
            (!known.is_empty()).then(|| known.iter().sum())
        };
        figures.input = self.health.clone();
        let error = if let Some(e) = self.run_error.clone() {
            Some(e)
        } else if let Some((_, e)) = first_error {
            Some(e)
        } else if !had_sessions || self.sessions.iter().all(|s| s.turns == 0 && s.provider.is_none()) {
            Some(ErrorInfo {
                category: ErrorCategory::InputError,
                message: if self.health.lines == 0 {
                    "the input was empty".into()
                } else {
                    format!("no agent events were recognised in {} input line(s)", self.health.lines)
                },
                action: Some(
                    "pipe an agent's JSON output (e.g. claude -p … --output-format stream-json) into normalize".into(),
                ),
            })
        } else {
            None
        };
        figures.verdict = self.verdict(error.as_ref());
        Summary { ok: error.is_none(), error, prompt: self.prompt.clone(), figures }
    }

    /// The run's verdict, `success` exactly when it is ok: the worst of the sessions in
    /// which an agent run was recognised (a session of only unreadable lines beside a real
    /// one is not a run), and of the run's own error.
    fn verdict(&self, error: Option<&ErrorInfo>) -> Verdict {
        let Some(error) = error else { return Verdict::Success };
        let seen = self.sessions.iter().map(SessionState::verdict).filter(|v| *v != Verdict::Unknown);
        match Verdict::worst(seen.chain(self.run_error.as_ref().map(Verdict::of_error))) {
            Verdict::Success => Verdict::of_error(error),
            v => v,
        }
    }

    /// Records the session's wall time as the provider reported it.
    pub fn set_session_duration(&mut self, ms: u64) {
        self.session().duration_ms = Some(ms);
    }

    // ------------------------------------------------------------- emitting ----

    fn time(&self) -> Millis {
        self.stamp().0
    }

    /// The current time and whether the provider said it; durations are only measured
    /// between two instants of the same origin.
    fn stamp(&self) -> Stamp {
        match self.provider_time {
            Some(t) => (t, true),
            None => (self.read_time, false),
        }
    }

    fn emit(&mut self, body: Body, meta: Meta) {
        let line = self.line;
        let first = self.pending_since.take().unwrap_or(line);
        let raw_ref = RawRef::span(first.min(line), line);
        self.line_referenced = true;
        let timestamp = format_rfc3339(self.time());
        let s = self.session();
        s.seq += 1;
        let event = Event {
            event_id: event_id(&s.id, s.turn, s.seq),
            timestamp,
            session_id: s.id.clone(),
            turn_id: s.turn,
            correlation_id: meta.correlation,
            parent_id: meta.parent,
            source: meta.source,
            severity: meta.severity,
            status: meta.status,
            visibility: meta.visibility,
            raw_ref,
            body,
        };
        self.health.events += 1;
        self.out.push(event);
    }
}

/// An instant and whether the provider said it (else it is when the line was read).
type Stamp = (Millis, bool);

/// `{session}:{turn}:{seq}`, written with `itoa` rather than `format!` (one per event).
fn event_id(session: &str, turn: u64, seq: u64) -> String {
    let mut digits = itoa::Buffer::new();
    let mut id = String::with_capacity(session.len() + 2 * 20 + 2);
    id.push_str(session);
    for n in [turn, seq] {
        id.push(':');
        id.push_str(digits.format(n));
    }
    id
}

/// Milliseconds from `start` to `end` when both have the same origin and time moved.
fn elapsed(start: Stamp, end: Stamp) -> Option<u64> {
    (start.1 == end.1 && end.0 > start.0).then(|| (end.0 - start.0) as u64)
}

fn interrupted_error() -> ErrorInfo {
    ErrorInfo {
        category: ErrorCategory::Interrupted,
        message: "the input ended before the turn finished".into(),
        action: Some("check whether the agent was killed or its output was cut short".into()),
    }
}

fn severity_of(outcome: Outcome) -> Severity {
    match outcome {
        Outcome::Completed => Severity::Info,
        Outcome::Failed => Severity::Error,
        Outcome::Denied | Outcome::Cancelled | Outcome::Timeout | Outcome::Interrupted => Severity::Warning,
    }
}

fn add_usage(total: &mut Usage, u: &Usage) {
    fn add(a: &mut Option<u64>, b: Option<u64>) {
        if let Some(b) = b {
            *a = Some(a.unwrap_or(0) + b);
        }
    }
    add(&mut total.input_tokens, u.input_tokens);
    add(&mut total.output_tokens, u.output_tokens);
    add(&mut total.cache_read, u.cache_read);
    add(&mut total.cache_write, u.cache_write);
    if let Some(c) = u.cost_usd {
        total.cost_usd = Some(total.cost_usd.unwrap_or(0.0) + c);
    }
}

/// Envelope fields an emitter chooses; the engine fills in the rest.
struct Meta {
    visibility: Visibility,
    source: Source,
    severity: Severity,
    status: Option<Status>,
    correlation: Option<String>,
    parent: Option<String>,
}

impl Meta {
    fn new(visibility: Visibility) -> Meta {
        Meta {
            visibility,
            source: Source::Agent,
            severity: Severity::Info,
            status: None,
            correlation: None,
            parent: None,
        }
    }
    fn status(mut self, s: Status) -> Meta {
        self.status = Some(s);
        self
    }
    fn source(mut self, s: Source) -> Meta {
        self.source = s;
        self
    }
    fn severity(mut self, s: Severity) -> Meta {
        self.severity = s;
        self
    }
    fn correlation(mut self, c: Option<String>) -> Meta {
        self.correlation = c;
        self
    }
    fn parent(mut self, p: Option<String>) -> Meta {
        self.parent = p;
        self
    }
}

#[cfg(test)]
mod tests;

/// `id` as it is written (without control bytes). Ids are keys here: two that differ only
/// by an ANSI sequence must be one call, as they are once written.
fn clean_id(id: &str) -> Cow<'_, str> {
    crate::scrub::control::clean(id)
}

/// An error the model provider reported, classified from its message and HTTP status:
/// authentication and configuration problems are the user's to fix, the rest are the
/// provider's. Every parser uses this, so the same words mean the same category.
pub fn provider_error(message: &str, http_status: Option<u16>) -> ErrorInfo {
    let lower = message.to_ascii_lowercase();
    let config = matches!(http_status, Some(401 | 403 | 404))
        || [
            "authentication",
            "unauthorized",
            "api key",
            "api_key",
            "no auth",
            "not logged in",
            "model metadata",
            "invalid model",
            "permission denied",
        ]
        .iter()
        .any(|w| lower.contains(w));
    let (category, action) = if config {
        (ErrorCategory::ConfigurationError, "check the agent's credentials, model name and configuration")
    } else if matches!(http_status, Some(429))
        || lower.contains("429")
        || lower.contains("rate limit")
        || lower.contains("rate_limit")
    {
        (ErrorCategory::ProviderError, "the provider is rate limiting; wait and retry, or lower the request rate")
    } else if matches!(http_status, Some(400)) || lower.contains("400") || lower.contains("invalid_request") {
        (ErrorCategory::ProviderError, "the provider rejected the request; check the prompt, model and parameters")
    } else {
        (ErrorCategory::ProviderError, "the model provider failed; retry later or check its status page")
    };
    ErrorInfo { category, message: message.to_owned(), action: Some(action.to_owned()) }
}
