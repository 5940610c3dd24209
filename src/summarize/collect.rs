//! Building a report from canonical events, one at a time. Each run (a stream ended by its
//! `summary` record) is collected on its own and then merged into the total, so reading
//! two streams one after the other gives exactly the merge of their two reports.
//!
//! Within a run, figures the `summary` record states (usage counted once, durations, input
//! health, each session's outcome) replace what the events suggest; without a record the
//! events are counted.

use std::collections::HashMap;

use super::clip::{clip, clip_opt, clip_tail, tail_to_clip};
use super::failure::{bounded, nothing_recognised, status_for, status_named, unfinished_stream, unfinished_turn};
use super::figures::{add_cost, add_opt, tokens_of, Budget, Cost, Tokens};
use super::key::{line_digest, Key};
use super::merge::Merger;
use super::model::{limits, Failure, Input, PlanState, Report, SessionReport, Shell, ShellLine, StreamInput, ToolLine};
use crate::event::*;

/// Open tool calls remembered per session (for their command); more are not described.
const OPEN_TOOLS: usize = 1024;

/// Summarizes canonical events as they are read, keeping only counters and bounded excerpts.
#[derive(Debug, Default)]
pub struct Summarizer {
    done: Merger,
    run: Run,
}

/// The run being read: its sessions' figures and what is known only until its record.
#[derive(Debug, Default)]
struct Run {
    active: bool,
    /// The digest of the stream's lines so far.
    key: Key,
    report: Report,
    index: HashMap<String, usize>,
    live: Vec<Live>,
    counted: Input,
}

/// A session's state within one run.
#[derive(Debug, Default)]
struct Live {
    /// The digest of the session's lines so far.
    key: Key,
    open_tools: HashMap<String, Option<String>>,
    last_tool: Option<String>,
    turn_open: bool,
    last_usage: Option<(u64, Usage)>,
    tokens: Tokens,
    cost: Option<Cost>,
    turn_ms: Option<u64>,
    failure: Option<Failure>,
}

/// A stream's `summary` record, as `commit` needs it.
#[derive(Clone, Copy)]
struct Record<'a> {
    summary: &'a Summary,
    status: Option<Status>,
    session_id: &'a str,
}

impl Summarizer {
    /// An empty summarizer.
    pub fn new() -> Summarizer {
        Summarizer::default()
    }

    /// Takes one event into account (by value: its text is scanned in place, not copied).
    pub fn event(&mut self, mut ev: Event) {
        let digest = line_digest(serde_json::to_string(&ev).unwrap_or_default().as_bytes());
        let session = std::mem::take(&mut ev.session_id);
        self.take(&session, ev, None, &[], digest);
    }

    /// Takes an event of `session` into account (its own `session_id` is not read). `output`
    /// stands for the output of a tool terminal whose bodies were not read; `bodies` are the
    /// texts left out of `ev` (in the order [`Event::for_each_text_mut`] visits them, and all
    /// before the texts `ev` still holds), scanned for redaction markers with the rest.
    /// `digest` is the [`line_digest`] of the event's line.
    pub(super) fn take(
        &mut self,
        session: &str,
        mut ev: Event,
        output: Option<OutputFacts>,
        bodies: &[&str],
        digest: u128,
    ) {
        let run = &mut self.run;
        run.active = true;
        run.key = run.key.then(digest);
        if let Body::Summary(summary) = &ev.body {
            return self.commit(Some(Record { summary, status: ev.status, session_id: session }));
        }
        let redactions = &mut run.counted.redactions;
        bodies.iter().for_each(|s| redactions_in(s, redactions));
        ev.for_each_text_mut(|_, s| redactions_in(s, redactions));
        run.count(&ev);
        let i = run.session(session);
        run.live[i].key = run.live[i].key.then(digest);
        apply(&mut run.report.sessions[i], &mut run.live[i], &ev, output);
    }

    /// Counts an input line that was not a canonical event (or a line over the limit, of
    /// which only `line`'s description is kept) in the stream being read.
    pub fn invalid(&mut self, line: &[u8]) {
        let run = &mut self.run;
        run.active = true;
        run.key = run.key.then(line_digest(line));
        run.counted.invalid += 1;
    }

    /// Counts an input file that could not be read (`what`: its name and why).
    pub fn unreadable(&mut self, what: &str) {
        self.done.count_unreadable(what);
    }

    /// The report; a stream that ended without a `summary` record is incomplete.
    pub fn finish(mut self) -> Report {
        if self.run.active {
            self.commit(None);
        }
        self.done.finish()
    }

    fn commit(&mut self, record: Option<Record<'_>>) {
        let run = std::mem::take(&mut self.run);
        let mut sessions = run.report.sessions;
        let summary = record.map(|r| r.summary);
        let lone = sessions.len() == 1 && summary.is_some_and(|r| r.figures.sessions.is_empty());
        // The record's figures by session, so that settling every session stays linear.
        let mut stated: HashMap<&str, &SessionFigures> = HashMap::new();
        for f in summary.iter().flat_map(|r| &r.figures.sessions) {
            // The first figures of an id count, should a record name it twice.
            stated.entry(f.session_id.as_str()).or_insert(f);
        }
        for (s, live) in sessions.iter_mut().zip(run.live) {
            s.key = live.key;
            let figures = stated.get(s.session_id.as_str()).copied();
            settle(s, live, figures, summary, lone);
            judge(s, record.is_some());
        }
        // A session of only unreadable lines beside a real one is not a run of its own.
        if sessions.iter().any(|s| s.verdict != Verdict::Unknown) {
            sessions.retain(|s| s.verdict != Verdict::Unknown);
        }
        if let Some(r) = record {
            if sessions.is_empty() {
                // Nothing but the record: the run is the stream itself.
                let mut s = SessionReport::new(r.session_id.to_owned());
                s.key = run.key;
                s.verdict = Verdict::Unknown;
                sessions.push(s);
            }
            let error = r.summary.error.as_ref().map(bounded);
            if !r.summary.ok && sessions.iter().all(|s| s.ok) {
                // The record is not ok for a reason of the run's own: its session says it.
                let i = sessions.iter().position(|s| s.session_id == r.session_id).unwrap_or(sessions.len() - 1);
                let status = r.status.filter(|s| s.is_terminal() && *s != Status::Completed);
                let s = &mut sessions[i];
                s.fail(Failure { status: status.unwrap_or_else(|| status_for(error.as_ref())), error, during: None });
                s.verdict = s.error.as_ref().map_or(Verdict::Failed, Verdict::of_error);
            }
        }
        judge_unrecognised(&mut sessions);
        let mut input = match summary {
            Some(r) => input_of(&r.figures.input),
            None => run.counted.clone(),
        };
        input.invalid = run.counted.invalid;
        self.done.add_stream(StreamInput { key: run.key, input });
        sessions.into_iter().for_each(|s| self.done.add_run(s));
    }
}

/// A run's verdict from its evidence: how it ended (its own failure, or the record's), and
/// whether its stream ended in a record at all.
fn judge(s: &mut SessionReport, recorded: bool) {
    let recognised = s.provider.is_some() || s.turns > 0;
    s.verdict = if !s.ok {
        match s.status {
            Status::Interrupted => Verdict::Incomplete,
            _ if s.error.as_ref().is_some_and(|e| e.category == ErrorCategory::InputError) => Verdict::Unknown,
            _ => Verdict::Failed,
        }
    } else if !recognised {
        Verdict::Unknown
    } else if !recorded {
        s.fail(unfinished_stream());
        Verdict::Incomplete
    } else {
        Verdict::Success
    };
}

/// Says why a run of which nothing was recognised is not a success.
fn judge_unrecognised(sessions: &mut [SessionReport]) {
    for s in sessions.iter_mut().filter(|s| s.verdict == Verdict::Unknown) {
        s.fail(nothing_recognised());
    }
}

impl Run {
    fn session(&mut self, id: &str) -> usize {
        if let Some(&i) = self.index.get(id) {
            return i;
        }
        self.index.insert(id.to_owned(), self.live.len());
        self.report.sessions.push(SessionReport::new(id.to_owned()));
        self.live.push(Live::default());
        self.live.len() - 1
    }

    /// Input health as the events show it, for a run without a record.
    fn count(&mut self, ev: &Event) {
        let c = &mut self.counted;
        c.events += 1;
        c.lines = c.lines.max(ev.raw_ref.last());
        if let Body::Raw(r) = &ev.body {
            c.raw += 1;
            c.unknown_types += u64::from(r.reason == RawReason::UnknownType);
            c.oversized += u64::from(r.reason == RawReason::Oversized);
        }
    }
}

fn apply(s: &mut SessionReport, live: &mut Live, ev: &Event, output: Option<OutputFacts>) {
    match &ev.body {
        Body::SessionStarted(p) => {
            if s.provider.is_none() && !p.provider.is_empty() {
                s.provider = Some(clip(&p.provider, limits::DETAIL));
            }
            if s.model.is_none() {
                s.model = clip_opt(p.model.as_deref(), limits::DETAIL);
            }
        }
        Body::TurnStarted(p) => {
            s.turns += 1;
            if s.prompt.is_none() {
                s.prompt = clip_opt(p.prompt.as_deref(), limits::MESSAGE);
            }
            live.turn_open = true;
            live.last_tool = None;
        }
        Body::ToolStarted(p) => {
            let detail = p.command.as_deref().or(p.target.as_deref()).map(|d| clip(d, limits::DETAIL));
            let name = clip(&p.name, limits::DETAIL);
            live.last_tool = Some(match &detail {
                Some(d) => format!("{name} `{d}`"),
                None => name,
            });
            if live.open_tools.len() < OPEN_TOOLS {
                live.open_tools.insert(p.tool_call_id.clone(), detail);
            }
        }
        Body::ToolEnded(p) => {
            let facts = output.unwrap_or_else(|| OutputFacts::of(p.output.as_ref(), p.outcome != Outcome::Completed));
            tool_ended(s, live, p, facts);
        }
        Body::Plan(p) => s.plan = Some(plan_state(&p.entries)),
        Body::FileChanged(p) => s.files.add(&p.path, p.change),
        // Providers repeat one usage report on several lines; count it once.
        Body::Usage(u) if live.last_usage != Some((ev.turn_id, *u)) => {
            live.last_usage = Some((ev.turn_id, *u));
            live.tokens.add(&tokens_of(u));
            add_cost(&mut live.cost, u.cost_usd.and_then(Cost::from_usd));
        }
        Body::ContextCompacted(c) => s.context.reasons.add(&c.reason, 1),
        Body::Warning(w) => {
            s.warnings += 1;
            if w.category.as_deref() == Some(ErrorCategory::BudgetExceeded.as_str()) {
                s.budget = Budget::Over;
            }
        }
        Body::TurnEnded(t) => {
            add_opt(&mut live.turn_ms, t.duration_ms);
            live.turn_open = false;
            note_budget(s, t.error.as_ref());
            if t.outcome != Outcome::Completed && live.failure.is_none() {
                let during = Some(match &live.last_tool {
                    Some(tool) => clip(&format!("turn {}, last tool: {tool}", ev.turn_id), limits::MESSAGE),
                    None => format!("turn {}", ev.turn_id),
                });
                live.failure =
                    Some(Failure { status: t.outcome.status(), error: t.error.as_ref().map(bounded), during });
            }
        }
        // Seen by `take` (redaction markers, a run's own summary) and `count` (raw lines)
        // only: nothing to add to a session's figures. A type added to the catalog is placed
        // here or above, so that the summary's silence about it is a decision.
        Body::Usage(_)
        | Body::Text(_)
        | Body::Reasoning(_)
        | Body::ToolOutput(_)
        | Body::ApprovalRequested(_)
        | Body::ApprovalSettled(_)
        | Body::Raw(_)
        | Body::Summary(_)
        | Body::Other(_) => {}
    }
}

fn tool_ended(s: &mut SessionReport, live: &mut Live, p: &ToolEnded, out: OutputFacts) {
    s.tools.add(p.outcome);
    s.tools_by_kind.get_mut(p.kind).add(p.outcome);
    note_budget(s, p.error.as_ref());
    let detail = live.open_tools.remove(&p.tool_call_id).flatten();
    let exit_code = p.output.as_ref().and_then(|o| o.exit_code);
    if p.kind == ToolKind::Shell {
        s.shell.merge(shell_of(ShellLine {
            tool_call_id: p.tool_call_id.clone(),
            command: detail.clone(),
            status: p.outcome.status(),
            exit_code,
            truncated: p.output.as_ref().is_some_and(|o| o.truncated),
            has_output: out.stdout_bytes > 0 || out.stderr_bytes > 0,
            stdout_bytes: out.stdout_bytes,
            stderr_bytes: out.stderr_bytes,
        }));
    }
    if p.outcome == Outcome::Completed {
        return;
    }
    if p.outcome == Outcome::Interrupted && !live.turn_open && live.failure.is_none() {
        let during = Some(clip(&format!("outside a turn, tool {}", p.name), limits::MESSAGE));
        live.failure = Some(Failure { status: Status::Interrupted, error: p.error.as_ref().map(bounded), during });
    }
    if s.failing_tools.len() >= limits::FAILING_TOOLS {
        return;
    }
    let (command, target) = if p.kind == ToolKind::Shell { (detail, None) } else { (None, detail) };
    s.failing_tools.push(ToolLine {
        tool_call_id: p.tool_call_id.clone(),
        name: clip(&p.name, limits::DETAIL),
        kind: p.kind,
        status: p.outcome.status(),
        exit_code,
        command,
        target,
        error: p.error.as_ref().map(bounded),
        // A denial's output is often its message again; saying it twice tells nothing more.
        excerpt: out
            .excerpt
            .map(|x| clip_tail(&x, limits::EXCERPT))
            .filter(|x| p.error.as_ref().is_none_or(|e| e.message.trim() != x.as_str())),
    });
}

/// A session's figures at the end of its run: the record's where it states them.
fn settle(s: &mut SessionReport, live: Live, stated: Option<&SessionFigures>, record: Option<&Summary>, lone: bool) {
    let (usage, duration) = match (stated, record) {
        (Some(f), _) => (Some(&f.usage), f.duration_ms),
        (None, Some(r)) if lone => (Some(&r.figures.usage), r.figures.duration_ms),
        _ => (None, None),
    };
    match usage {
        Some(u) => {
            s.usage = tokens_of(u);
            s.cost = u.cost_usd.and_then(Cost::from_usd);
        }
        None => {
            s.usage = live.tokens;
            s.cost = live.cost;
        }
    }
    s.duration_ms = duration.or(live.turn_ms);
    let (during, seen) = live.failure.as_ref().map_or((None, None), |f| (f.during.clone(), f.error.clone()));
    let failure = match (stated, record) {
        // The record says whether the session failed; the events may say more about why.
        (Some(f), _) => (!f.ok).then(|| Failure {
            status: status_named(&f.status).filter(|s| *s != Status::Completed).unwrap_or(Status::Failed),
            error: f.error.as_ref().map(bounded).or(seen),
            during,
        }),
        (None, Some(r)) if lone && r.ok => None,
        (None, Some(r)) if lone => live.failure.or_else(|| {
            let error = r.error.as_ref().map(bounded);
            Some(Failure { status: status_for(error.as_ref()), error, during: None })
        }),
        (None, Some(_)) => live.failure,
        (None, None) => live.failure.or_else(|| live.turn_open.then(unfinished_turn)),
    };
    if let Some(f) = failure {
        s.fail(f);
    }
}

fn shell_of(line: ShellLine) -> Shell {
    Shell {
        count: 1,
        exit_zero: u64::from(line.exit_code == Some(0)),
        exit_non_zero: u64::from(line.exit_code.is_some_and(|c| c != 0)),
        exit_unknown: u64::from(line.exit_code.is_none()),
        truncated: u64::from(line.truncated),
        with_output: u64::from(line.has_output),
        stdout_bytes: line.stdout_bytes,
        stderr_bytes: line.stderr_bytes,
        commands: vec![line],
    }
}

fn plan_state(entries: &[PlanEntry]) -> PlanState {
    let count = |st: PlanStatus| entries.iter().filter(|e| e.status == st).count() as u64;
    PlanState {
        total: entries.len() as u64,
        completed: count(PlanStatus::Completed),
        in_progress: count(PlanStatus::InProgress),
        pending: count(PlanStatus::Pending),
        entries: entries
            .iter()
            .take(limits::PLAN_ENTRIES)
            .map(|e| PlanEntry { content: clip(&e.content, limits::DETAIL), status: e.status })
            .collect(),
    }
}

/// The end of a tool's output: stderr when it has any, else stdout.
fn excerpt(out: &ShellResult) -> Option<String> {
    let text = [out.stderr.as_deref(), out.stdout.as_deref()]
        .into_iter()
        .flatten()
        .map(str::trim_end)
        .find(|t| !t.is_empty())?;
    Some(tail_to_clip(text, limits::EXCERPT))
}

/// What a report keeps of a tool's output: its sizes and, for a call that did not
/// complete, the end of it; never the body.
#[derive(Debug, Default)]
pub(super) struct OutputFacts {
    /// UTF-8 bytes of retained stdout.
    pub stdout_bytes: u64,
    /// UTF-8 bytes of retained stderr.
    pub stderr_bytes: u64,
    /// The end of the output, to be clipped ([`tail_to_clip`]).
    pub excerpt: Option<String>,
}

impl OutputFacts {
    /// The facts of an output that was read whole.
    pub fn of(out: Option<&ShellResult>, with_excerpt: bool) -> OutputFacts {
        let len = |s: &Option<String>| s.as_deref().map_or(0, |s| s.len() as u64);
        out.map_or_else(OutputFacts::default, |o| OutputFacts {
            stdout_bytes: len(&o.stdout),
            stderr_bytes: len(&o.stderr),
            excerpt: if with_excerpt { excerpt(o) } else { None },
        })
    }
}

fn note_budget(s: &mut SessionReport, e: Option<&ErrorInfo>) {
    if e.is_some_and(|e| e.category == ErrorCategory::BudgetExceeded) {
        s.budget = Budget::Over;
    }
}

fn input_of(h: &InputHealth) -> Input {
    let mut input = Input {
        lines: h.lines,
        events: h.events,
        raw: h.raw,
        unknown_types: h.unknown_types,
        oversized: h.oversized,
        unreadable: h.unreadable,
        ..Input::default()
    };
    h.redactions.iter().for_each(|(k, v)| input.redactions.add(k, *v));
    input
}

/// Counts the scrub stage's markers (`[REDACTED:kind]`) in `s`.
fn redactions_in(s: &str, tally: &mut super::tally::Tally) {
    const MARK: &[u8] = crate::scrub::MARK.as_bytes();
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(MARK));
    if s.len() < MARK.len() {
        return;
    }
    for at in FINDER.find_iter(s.as_bytes()) {
        let rest = &s.as_bytes()[at + MARK.len()..];
        // A kind is 1-64 bytes, so its `]` is among the next 65.
        let Some(end) = rest[..rest.len().min(65)].iter().position(|&b| b == b']') else { continue };
        let kind = &rest[..end];
        if !kind.is_empty() && kind.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_') {
            // Only ASCII was accepted, so these bytes are a str.
            tally.add(std::str::from_utf8(kind).unwrap_or_default(), 1);
        }
    }
}
