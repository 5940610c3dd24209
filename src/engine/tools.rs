//! The tool calls of the engine's sessions: announcement, live output, exit codes, ends
//! (weighed against exit codes), calls that run in the background past their turn, and
//! results that arrive before their call (kept for it until it is announced).

use std::borrow::Cow;
use std::collections::HashMap;

use super::emit::{elapsed, severity_of, Meta, Stamp};
use super::shell::{ExitSource, ShellAccumulator, Update};
use super::state::{HeldEnd, Orphan, ToolState};
use super::{clean_id, scoped, Engine, ToolContext, ToolStatus, ORPHANS};
use crate::event::*;

impl Engine {
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
        s.tools
            .insert(started.tool_call_id.clone(), ToolState::new(s.tools_started, &started, ctx.parent_id.clone(), t));
        s.tools_started += 1;
        let orphan = s.orphans.remove(&started.tool_call_id);
        let id = started.tool_call_id.clone();
        let meta =
            Meta::new(Visibility::ALL).status(Status::Started).correlation(Some(id.clone())).parent(ctx.parent_id);
        self.emit(Body::ToolStarted(started), meta);
        if let Some(orphan) = orphan {
            self.adopt(i, &id, orphan);
        }
    }

    /// Gives a call just announced what arrived for it before: its output, and its end.
    fn adopt(&mut self, i: usize, id: &str, orphan: Orphan) {
        if let Some(tool) = self.sessions[i].tools.get_mut(id) {
            tool.shell = orphan.shell;
        }
        if let Some(end) = orphan.end {
            self.end_open_tool(id, end.status, end.error, Some((end.at, end.lines)));
        }
    }

    /// The output accumulator of call `id`: the open call's, or, for a call not announced
    /// yet, the one kept for it until it is; `None` for a call that has ended (a late update).
    fn shell_of(&mut self, id: &str) -> Option<&mut ShellAccumulator> {
        let i = self.session_index();
        if self.sessions[i].tools.contains_key(id) {
            return self.sessions[i].tools.get_mut(id).map(|t| &mut t.shell);
        }
        if self.closed_tools.contains(&scoped(i, id)) {
            return None;
        }
        Some(&mut self.orphan(i, id).shell)
    }

    /// The record kept for call `id`, not announced yet, in session `i`.
    fn orphan(&mut self, i: usize, id: &str) -> &mut Orphan {
        if !self.sessions[i].orphans.contains_key(id) && self.sessions[i].orphans.len() >= ORPHANS {
            self.release_oldest_orphan(i);
        }
        let line = self.line;
        self.sessions[i].orphans.entry(id.to_owned()).or_insert_with(|| Orphan { line, ..Orphan::default() })
    }

    fn release_oldest_orphan(&mut self, i: usize) {
        let oldest = self.sessions[i].orphans.iter().min_by_key(|(id, o)| (o.line, id.as_str())).map(|(id, _)| id);
        if let Some(id) = oldest.cloned() {
            let orphan = self.sessions[i].orphans.remove(&id).expect("found");
            self.release_orphan(i, &id, orphan);
        }
    }

    /// Releases what arrived for session `i`'s calls that were never announced, in the order
    /// it came: with `ended`, only the calls that ended (the turn they came in is ending, so
    /// no announcement will come), else all of them (the input is ending).
    pub(super) fn release_orphans(&mut self, i: usize, ended: bool) {
        let orphans = &mut self.sessions[i].orphans;
        if orphans.is_empty() {
            return;
        }
        let mut released: Vec<(String, Orphan)> = orphans.extract_if(|_, o| !ended || o.end.is_some()).collect();
        released.sort_by(|a, b| (a.1.line, &a.0).cmp(&(b.1.line, &b.0)));
        for (id, orphan) in released {
            self.release_orphan(i, &id, orphan);
        }
    }

    /// Reports what arrived for a call that was never announced: an ended call gets a
    /// synthesized start; output without an end is dropped, as for any unknown call.
    fn release_orphan(&mut self, i: usize, id: &str, orphan: Orphan) {
        if orphan.end.is_none() {
            return;
        }
        let current = self.current;
        self.current = Some(i);
        self.tool_started(unknown_tool(id), ToolContext::default());
        self.adopt(i, id, orphan);
        self.current = current;
    }

    /// Marks an open call as running in the background: the end of its turn leaves it open,
    /// for its own result or the end of input to settle.
    pub fn tool_backgrounded(&mut self, id: &str) {
        let id = &*clean_id(id);
        if let Some(tool) = self.session().tools.get_mut(id) {
            tool.background = true;
        }
    }

    /// True when the open call `id` runs in the background.
    pub fn tool_is_background(&self, id: &str) -> bool {
        let id = &*clean_id(id);
        self.current.and_then(|i| self.sessions[i].tools.get(id)).is_some_and(|t| t.background)
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

    /// Applies output to a tool; live text of an open one is emitted as `tool.output`.
    pub fn tool_output(&mut self, id: &str, stream: Stream, update: Update, text: &str) {
        let id = &*clean_id(id);
        let bound = self.bound;
        let i = self.session_index();
        let Some(tool) = self.sessions[i].tools.get_mut(id) else {
            if let Some(shell) = self.shell_of(id) {
                shell.apply(stream, update, text, bound);
            }
            return;
        };
        let parent = tool.parent_id.clone();
        let Some(new) = tool.shell.apply(stream, update, text, bound) else { return };
        let mut delta = new.to_owned();
        crate::bound::bound(&mut delta, crate::bound::before_scrub(bound), crate::bound::Keep::Tail);
        let body = Body::ToolOutput(ToolOutput { tool_call_id: id.to_owned(), stream, delta });
        let meta = Meta::new(Visibility::DETAIL)
            .status(Status::Running)
            .source(Source::Tool)
            .correlation(Some(id.to_owned()))
            .parent(parent);
        self.emit(body, meta);
    }

    /// Records an exit code for a tool, weighed by its source's precedence.
    pub fn tool_exit(&mut self, id: &str, source: ExitSource, code: i64) {
        if let Some(shell) = self.shell_of(&clean_id(id)) {
            shell.exit(source, code);
        }
    }

    /// Marks an open tool's output as shortened by the provider.
    pub fn tool_truncated(&mut self, id: &str) {
        if let Some(shell) = self.shell_of(&clean_id(id)) {
            shell.mark_truncated();
        }
    }

    /// Ends tool call `id`, whose provider gave a status word this version does not know
    /// (`status`): how it went is not known, so it ends failed, naming the word, and the run
    /// is not ok (a success is never taken on trust).
    pub fn tool_ended_unknown(&mut self, id: &str, status: &str) {
        let error = |category| ErrorInfo {
            category,
            message: format!("tool call {id} ended with status {status:?}, which this version does not know"),
            action: Some("report the new status; the call may not have succeeded".into()),
        };
        self.tool_ended(id, ToolStatus::Failed, Some(error(ErrorCategory::ProviderError)));
        self.run_error(error(ErrorCategory::InputError));
    }

    /// Ends a tool call; ids that already ended are ignored (a late update never makes a
    /// second terminal). The end of a call not announced yet (input out of order) is kept
    /// until it is, or reported at the end of input with a synthesized `tool.started`.
    pub fn tool_ended(&mut self, id: &str, status: ToolStatus, error: Option<ErrorInfo>) {
        let id = &*clean_id(id);
        let i = self.session_index();
        if self.closed_tools.contains(&scoped(i, id)) {
            return;
        }
        if self.sessions[i].tools.contains_key(id) {
            return self.end_open_tool(id, status, error, None);
        }
        let (at, line) = (self.stamp(), self.line);
        let orphan = self.orphan(i, id);
        if orphan.end.is_none() {
            orphan.end = Some(HeldEnd { status, error, at, lines: (orphan.line.min(line), line) });
        }
    }

    /// Ends an open call, weighing the provider's status against its exit code; `held` is
    /// an end that arrived before the call, with its own time and lines.
    fn end_open_tool(
        &mut self,
        id: &str,
        status: ToolStatus,
        error: Option<ErrorInfo>,
        held: Option<(Stamp, (u64, u64))>,
    ) {
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
        self.finish_tool(id, outcome, error, Source::Agent, held);
    }

    fn finish_tool(
        &mut self,
        id: &str,
        outcome: Outcome,
        mut error: Option<ErrorInfo>,
        source: Source,
        held: Option<(Stamp, (u64, u64))>,
    ) {
        let bound = self.bound;
        let now = held.map_or_else(|| self.stamp(), |(at, _)| at);
        let i = self.session_index();
        let s = &mut self.sessions[i];
        let Some(tool) = s.tools.remove(id) else { return };
        self.closed_tools.insert(&scoped(i, id));
        if s.tools.is_empty() {
            // A finished session keeps only its figures: its table's capacity would
            // otherwise stay allocated for every session of a long archive.
            s.tools = HashMap::new();
        }
        s.counts.add(outcome);
        let mut output = tool.shell.finish(tool.command.as_deref(), bound);
        if outcome == Outcome::Denied && tool.rejected {
            let why = refusal(&mut output);
            error = error.or(why);
        }
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
            .parent(tool.parent_id)
            .held(held);
        self.emit(body, meta);
    }

    /// Closes the open approvals and tool calls of the current session with `outcome`; calls
    /// running in the background only with `background`. An interrupted call's error says
    /// `why`. Returns how many calls ended interrupted.
    pub(super) fn close_open(&mut self, outcome: Outcome, background: bool, why: &str) -> u64 {
        let s = self.session();
        let mut open: Vec<(u64, String)> =
            s.tools.iter().filter(|(_, t)| background || !t.background).map(|(id, t)| (t.order, id.clone())).collect();
        open.sort_unstable();
        let mut approvals: Vec<String> = s.approvals.keys().cloned().collect();
        // A HashMap's order differs between runs; the same input must give the same output.
        approvals.sort();
        for a in approvals {
            self.settle(&a, Decision::Unknown, Source::Normalizer);
        }
        let mut interrupted = 0;
        for (_, id) in open {
            // A call whose approval was refused never ran: it was denied, whatever ended the turn.
            let rejected = self.session().tools.get(&id).is_some_and(|t| t.rejected);
            let outcome = if rejected { Outcome::Denied } else { outcome };
            let error = match outcome {
                Outcome::Interrupted => {
                    interrupted += 1;
                    Some(ErrorInfo {
                        category: ErrorCategory::Interrupted,
                        message: why.to_owned(),
                        action: Some("re-run the agent; the command may not have completed".into()),
                    })
                }
                _ => None,
            };
            self.finish_tool(&id, outcome, error, Source::Normalizer, None);
        }
        interrupted
    }
}

/// A call whose permission was refused never ran: what its result says (the agent's refusal
/// message, from both streams) is why it was denied, not output, unless it states an exit.
fn refusal(output: &mut Option<ShellResult>) -> Option<ErrorInfo> {
    if output.as_ref().is_none_or(|o| o.exit_code.is_some()) {
        return None;
    }
    let why = output.take().and_then(|o| match (o.stdout, o.stderr) {
        (Some(out), Some(err)) => Some(format!("{out}\n{err}")),
        (out, err) => out.or(err),
    })?;
    let message = why.trim().to_owned();
    (!message.is_empty()).then_some(ErrorInfo { category: ErrorCategory::PermissionDenied, message, action: None })
}

/// The start of a call whose announcement was never seen.
fn unknown_tool(id: &str) -> ToolStarted {
    ToolStarted {
        tool_call_id: id.to_owned(),
        name: "unknown".into(),
        qualified: "unknown".into(),
        kind: ToolKind::Other,
        target: None,
        input: None,
        command: None,
        cwd: None,
    }
}
