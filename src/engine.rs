//! The lifecycle engine every provider parser drives (docs/contract.md §2, §4, §6).
//!
//! A parser turns its dialect into calls such as [`Engine::tool_started`] or
//! [`Engine::turn_ended`]; the engine owns what is the same for every provider: sessions,
//! turns, tool and approval state, deterministic event ids, provenance (`rawRef`), exactly
//! one terminal per lifecycle, synthesized terminals at end of input, shell output
//! accumulation, and the summary record. Parsers never build envelopes themselves.

mod approvals;
pub mod clock;
mod emit;
mod recent;
pub mod shell;
mod state;
mod summary;
mod tools;

use std::borrow::Cow;
use std::collections::HashMap;

use crate::event::*;
use clock::{Clock, Millis};
use emit::{elapsed, severity_of, Meta};
pub use recent::Recent;
pub use shell::{parse_exit_in, parse_exit_prefix, ExitSource, Update};
use state::SessionState;

/// How many ended tool calls and settled approvals the engine remembers.
const RECENT: usize = 4096;
/// How many calls of a session may wait for their announcement; past that, the oldest is
/// reported as it is (a call never announced), so memory stays bounded.
const ORPHANS: usize = 1024;
/// Why a tool call still open when the input (or its turn, cut short) ended is interrupted.
const ENDED_OPEN: &str = "the tool call had not finished when the input ended";
/// How many raw lines may wait for their run's first session; past that, the run's raw
/// lines are a session of their own.
const EARLY_RAWS: usize = 16;

/// An id of session `i`, as the engine-wide [`Recent`] sets hold it.
fn scoped(i: usize, id: &str) -> String {
    format!("{i}/{id}")
}

/// The provider of a session of JSON lines no dialect claims.
pub const UNCLAIMED: &str = "unknown";

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
    /// The session's running total so far (Codex reports a thread's usage so on each
    /// `turn.completed`, a resumed thread's included): replaces what is known, and the
    /// `usage` event carries what it adds, so the events of a session still add up to it.
    Cumulative,
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
    /// The index in `sessions` of each session id, so finding one does not walk them all.
    session_ids: HashMap<String, usize>,
    current: Option<usize>,
    /// The sessions current at some time since the last run ended: only they can hold what
    /// is open, so ending a run looks at them, not at every session so far.
    entered: std::collections::BTreeSet<usize>,
    /// The session current when the last run ended: the summary's, when the runs after it
    /// entered none (files that held no event).
    ended_in: Option<usize>,
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
    /// Subagents spawned by a tool call, by the key their own transcript names them with
    /// (an agent id, or the child's own session id), to that call: a session file read after its parent's links its
    /// events to the call. Outlives a run (each input file is one), and holds one entry
    /// per spawned subagent until its transcript claims it.
    spawned: HashMap<String, String>,
    /// Raw lines read while no session is current, waiting for the next one to start.
    early: Vec<Early>,
    /// A record of the run was cut short: what the run's parser ends at its end, from
    /// what it read, is not known to have completed.
    cut: Option<ErrorInfo>,
    /// The name given to the blank session id (`""`): one session, as any id is, named as
    /// sessions without one are, for an id is never empty.
    blank: Option<String>,
}

/// A raw line read before any session of its run: it is emitted in the session that
/// starts next (after its start), so a line that precedes a session file's first record,
/// or an agent's notice before its first event, makes no session of its own.
#[derive(Debug)]
struct Early {
    line: u64,
    provider_time: Option<Millis>,
    read_time: Millis,
    raw: Raw,
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
            session_ids: HashMap::new(),
            current: None,
            entered: std::collections::BTreeSet::new(),
            ended_in: None,
            closed_tools: Recent::new(RECENT),
            settled_approvals: Recent::new(RECENT),
            out: Vec::new(),
            health: InputHealth::default(),
            run_error: None,
            prompt: None,
            provider: None,
            spawned: HashMap::new(),
            early: Vec::new(),
            cut: None,
            blank: None,
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

    /// The current input line.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Reads line `n` again after later lines (a parser held it back until a later line
    /// decided whether it counts): its events cite the lines from `from` on, so the lines
    /// between held ones that carried nothing stay referenced.
    pub fn replay_line(&mut self, from: u64, n: u64) {
        let pending = self.pending_since;
        self.begin_line(n, false);
        self.pending_since = Some(pending.map_or(from, |p| p.min(from)).min(n));
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

    /// Counts an input file that could not be read.
    pub fn count_unreadable(&mut self) {
        self.health.unreadable += 1;
    }

    /// Counts a file found in a directory and not read.
    pub fn count_skipped(&mut self) {
        self.health.skipped += 1;
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
        self.session_started_by(id, info, None);
    }

    /// [`session_started`](Self::session_started) for the session of a child agent that tool
    /// call `spawner` spawned (as [`take_spawner`](Self::take_spawner) tells): every event of
    /// the session, its start, turns and usage included, names that call as its parent.
    /// A session already started is linked from here on.
    pub fn session_started_by(&mut self, id: Option<&str>, info: SessionStarted, spawner: Option<String>) {
        let id = id.map(|id| self.name(id));
        let id = id.as_deref();
        if self.provider.is_none() {
            self.provider = Some(info.provider.clone());
        }
        if let Some(i) = id.and_then(|id| self.find_session(id)) {
            self.enter(i);
            if spawner.is_some() {
                self.sessions[i].spawner = spawner;
            }
            // After the spawner: the raw lines that waited are the child's too.
            self.emit_early();
            return;
        }
        let id = id.map_or_else(|| self.anonymous_id(), str::to_owned);
        self.push_session(id, Some(info), spawner);
    }

    /// Switches to session `id`, starting it if it is new, named after the run's provider, or
    /// `provider` when the run has not said (its start is missing).
    pub fn use_session(&mut self, id: &str, provider: &str) {
        let id = self.name(id).into_owned();
        if !self.use_known_session(&id) {
            let provider = self.provider.get_or_insert_with(|| provider.to_owned()).clone();
            let info = SessionStarted { provider, ..Default::default() };
            self.push_session(id, Some(info), None);
        }
    }

    /// [`use_session`](Self::use_session) for a line that may name no session: it then
    /// continues the current one, or starts an unnamed one when there is none yet (its
    /// start is missing and no line names it).
    pub fn enter_session(&mut self, id: Option<&str>, provider: &str) {
        match id {
            Some(id) => self.use_session(id, provider),
            None if self.current.is_none() => {
                self.session_started(None, SessionStarted { provider: provider.into(), ..Default::default() });
            }
            None => {}
        }
    }

    /// Switches to session `id` if it has started, and says whether it had; a line naming a
    /// session not started yet (a hook's, before the run's init) stays in the current one.
    pub fn use_known_session(&mut self, id: &str) -> bool {
        let Some(i) = self.known(id) else { return false };
        self.enter(i);
        self.emit_early();
        true
    }

    /// Whether session `id` has started.
    pub fn knows_session(&self, id: &str) -> bool {
        self.known(id).is_some()
    }

    /// The index of session `id`, if it has started.
    fn known(&self, id: &str) -> Option<usize> {
        match session_key(id) {
            key if key.is_empty() => self.find_session(self.blank.as_deref()?),
            key => self.find_session(&key),
        }
    }

    /// The name of the session a line calls `id`, for a session that starts or goes on:
    /// its [`session_key`], or, for the blank id, the name given to it.
    fn name<'a>(&mut self, id: &'a str) -> Cow<'a, str> {
        let key = session_key(id);
        if !key.is_empty() {
            return key;
        }
        let name = match &self.blank {
            Some(name) => name.clone(),
            None => self.blank.insert(self.anonymous_id()).clone(),
        };
        Cow::Owned(name)
    }

    /// Makes session `i` the current one.
    fn enter(&mut self, i: usize) {
        if self.current != Some(i) {
            self.current = Some(i);
            self.entered.insert(i);
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
            _ => self.session_ids.get(id).copied(),
        }
    }

    /// `s1`, `s2`, … by order of appearance, skipping a name a provider already gave.
    fn anonymous_id(&self) -> String {
        (self.sessions.len() + 1..)
            .map(|n| format!("s{n}"))
            .find(|id| !self.session_ids.contains_key(id))
            .expect("an unused name")
    }

    fn push_session(&mut self, id: String, info: Option<SessionStarted>, spawner: Option<String>) {
        let mut s = SessionState::new(id, info.as_ref().map(|i| i.provider.clone()));
        s.spawner = spawner;
        self.add_session(s);
        if let Some(info) = info {
            self.emit(Body::SessionStarted(info), Meta::new(Visibility::DETAIL));
        }
        self.emit_early();
    }

    /// Adds a session and makes it the current one; returns its index.
    fn add_session(&mut self, s: SessionState) -> usize {
        let i = self.sessions.len();
        // Ids are unique: a session is only added when its id is not found.
        self.session_ids.insert(s.id.clone(), i);
        self.sessions.push(s);
        self.enter(i);
        i
    }

    /// The current session's index, starting an anonymous session when there is none.
    fn session_index(&mut self) -> usize {
        let i = match self.current {
            Some(i) => i,
            None => {
                let id = self.anonymous_id();
                let i = self.add_session(SessionState::new(id, None));
                self.emit_early();
                i
            }
        };
        self.current = Some(i);
        i
    }

    /// Emits the raw lines that waited for a session, in the one now current, each citing
    /// its own line at the time it was read.
    fn emit_early(&mut self) {
        if self.early.is_empty() {
            return;
        }
        let now = (self.line, self.pending_since.take(), self.provider_time, self.read_time, self.line_referenced);
        for early in std::mem::take(&mut self.early) {
            (self.line, self.provider_time, self.read_time) = (early.line, early.provider_time, early.read_time);
            self.emit(Body::Raw(early.raw), Meta::new(Visibility::DEBUG_ONLY).severity(Severity::Warning));
        }
        (self.line, self.pending_since, self.provider_time, self.read_time, self.line_referenced) = now;
    }

    fn session(&mut self) -> &mut SessionState {
        let i = self.session_index();
        &mut self.sessions[i]
    }

    /// Says that tool call `call` spawned the subagent `key` names, for its transcript.
    pub fn spawned(&mut self, key: &str, call: &str) {
        self.spawned.insert(key.to_owned(), call.to_owned());
    }

    /// The tool call that spawned the subagent `key` names, once: its transcript keeps it.
    pub fn take_spawner(&mut self, key: &str) -> Option<String> {
        self.spawned.remove(key)
    }

    /// The tool call that spawned the subagent `key` names, for a line of the subagent's that
    /// comes inside its parent's session (not claiming the link for a session of its own).
    pub fn spawner(&self, key: &str) -> Option<String> {
        self.spawned.get(key).cloned()
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
        s.unrun = false;
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

    /// Says that the current session ended as it should, as far as the agent tells: Copilot
    /// CLI's routine shutdown, an ACP session its client made and never prompted. One that
    /// had no turn then did nothing, rather than being cut before its first.
    pub fn session_closed(&mut self) {
        self.session().closed = true;
    }

    /// True when the current session has an open turn.
    pub fn turn_is_open(&self) -> bool {
        self.current.is_some_and(|i| self.sessions[i].turn_open)
    }

    /// Ends the open turn (if any) with `outcome`. Open tools end with it (cancelled,
    /// timed out or interrupted) and open approvals are settled with an unknown decision.
    /// At the end of a run whose input is cut ([`Engine::input_cut`]), `completed` is
    /// `interrupted`: the lost record may have said otherwise.
    pub fn turn_ended(&mut self, outcome: Outcome, stop_reason: Option<String>, error: Option<ErrorInfo>) {
        let (outcome, error) = match &self.cut {
            Some(cut) if outcome == Outcome::Completed => (Outcome::Interrupted, Some(cut.clone())),
            _ => (outcome, error),
        };
        if !self.session().turn_open {
            if let Some(e) = error {
                self.record_error(outcome, e);
            }
            return;
        }
        if let Some(i) = self.current {
            self.release_orphans(i, true);
        }
        let tool_outcome = match outcome {
            Outcome::Cancelled | Outcome::Timeout => outcome,
            _ => Outcome::Interrupted,
        };
        let why = if outcome == Outcome::Completed {
            "the turn ended before the tool call said how it ended"
        } else {
            ENDED_OPEN
        };
        let unsettled = self.close_open(tool_outcome, false, why);
        if unsettled > 0 && outcome == Outcome::Completed {
            // The agent says the turn is done, but not how these calls went: never ok.
            self.record_error(
                Outcome::Interrupted,
                ErrorInfo {
                    category: ErrorCategory::Interrupted,
                    message: format!("the turn ended with {unsettled} tool call(s) that never said how they ended"),
                    action: Some("check the agent's output for the missing tool results".into()),
                },
            );
        }
        let now = self.stamp();
        let duration = self.session().turn_start.and_then(|start| elapsed(start, now));
        let s = self.session();
        s.turn_open = false;
        // A stream of a thousand sessions keeps a thousand of them: past their turns, only
        // their figures, not the room their tool tables grew to.
        s.tools.shrink_to_fit();
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

    // ------------------------------------------------------------ the rest ----

    /// Assistant or user text, the first piece of a block or the next as `piece` says
    /// ([`Piece::First`] only where the provider says so).
    pub fn text(&mut self, role: Role, delta: String, piece: Piece, parent_id: Option<String>) {
        if delta.is_empty() {
            return;
        }
        let vis = if role == Role::Assistant { Visibility::ALL } else { Visibility::DETAIL };
        self.emit(Body::Text(Text { delta, role, piece }), Meta::new(vis).parent(parent_id));
    }

    /// Thinking text; `piece` as for [`Engine::text`].
    pub fn reasoning(&mut self, delta: String, piece: Piece, parent_id: Option<String>) {
        if !delta.is_empty() {
            self.emit(Body::Reasoning(Reasoning { delta, piece }), Meta::new(Visibility::DETAIL).parent(parent_id));
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
        self.usage_of(usage, scope, None);
    }

    /// [`Engine::usage`] of a subagent whose events share its parent's session (a
    /// transcript's sidechain): the event names `parent`, the call that spawned it, as the
    /// subagent's other events do; its tokens still count into the session's totals.
    pub fn usage_of(&mut self, usage: Usage, scope: UsageScope, parent: Option<String>) {
        if usage.is_empty() {
            return;
        }
        let s = self.session();
        let usage = match scope {
            UsageScope::Total => {
                s.usage = usage;
                usage
            }
            UsageScope::Increment => {
                s.usage.add(&usage);
                usage
            }
            UsageScope::Cumulative => {
                let added = usage.since(&s.usage);
                s.usage = usage;
                if added.is_nothing() {
                    // The running total did not grow: no event says so.
                    return;
                }
                added
            }
        };
        if !usage.is_empty() {
            self.emit(Body::Usage(usage), Meta::new(Visibility::DETAIL).parent(parent));
        }
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
        // Cut to its bound once it is scrubbed (`pipeline::Finish`), so that a cut never
        // parts a secret from what makes it one.
        crate::bound::head_tail_before_scrub(&mut line, self.bound);
        if self.current.is_none() && self.early.len() < EARLY_RAWS {
            self.line_referenced = true;
            let raw = Raw { line, reason };
            let (provider_time, read_time) = (self.provider_time, self.read_time);
            self.early.push(Early { line: self.line, provider_time, read_time, raw });
            return;
        }
        // A raw event cites its own line: the lines before it that carried nothing wait
        // for the next event they led to (a session file's preamble, before its first).
        let pending = self.pending_since.take();
        self.emit(Body::Raw(Raw { line, reason }), Meta::new(Visibility::DEBUG_ONLY).severity(Severity::Warning));
        self.pending_since = pending;
    }

    /// A provider event this version does not model but that is worth keeping typed as
    /// unknown: counted as an unknown type and kept as a `raw` event.
    pub fn unknown(&mut self, line: &str) {
        self.raw(line, RawReason::UnknownType);
    }

    /// Records the session's wall time as the provider reported it.
    pub fn set_session_duration(&mut self, ms: u64) {
        self.session().duration_ms = Some(ms);
    }

    /// Adds a stretch of the session's wall time the provider reported (one of several
    /// results of a session).
    pub fn add_session_duration(&mut self, ms: u64) {
        let s = self.session();
        s.duration_ms = Some(s.duration_ms.unwrap_or(0).saturating_add(ms));
    }

    /// How many turns the current session has had.
    pub fn turns(&self) -> u64 {
        self.current.map_or(0, |i| self.sessions[i].turns)
    }
}

#[cfg(test)]
mod tests;

/// `id` as it is written (without control bytes). Ids are keys here: two that differ only
/// by an ANSI sequence must be one call, as they are once written.
fn clean_id(id: &str) -> Cow<'_, str> {
    crate::scrub::without_controls(id)
}

/// Session id `id` as events name that session: without control bytes, and every id of
/// white space only the one blank id, `""` (which events name as an id-less session is).
pub(crate) fn session_key(id: &str) -> Cow<'_, str> {
    match clean_id(id) {
        id if id.trim().is_empty() => Cow::Borrowed(""),
        id => id,
    }
}
