//! The end of input: what is still open is closed, and the summary record assembled from
//! every session's figures, with the run's error and verdict.

use std::collections::BTreeMap;

use super::emit::Meta;
use super::state::SessionState;
use super::Engine;
use crate::event::*;

impl Engine {
    /// Ends the input: closes whatever is open (`interrupted`, source `normalizer`) and
    /// emits the summary. `redactions` are the scrub stage's counts so far.
    pub fn finish(&mut self, redactions: BTreeMap<String, u64>) -> Event {
        let had_sessions = !self.sessions.is_empty();
        self.provider_time = None;
        self.read_time = self.clock.now();
        let last = self.current;
        let entered = self.interrupt_open();
        self.end_cut(last);
        self.end_unrun(&entered);
        self.report_unrun();
        // The summary is the last run's session when the runs after it entered none (files
        // that held no event).
        if self.current.is_none() {
            self.current = self.ended_in.or(self.sessions.len().checked_sub(1));
        }
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
        let last = self.current;
        self.ended_in = last.or(self.ended_in);
        let entered = self.interrupt_open();
        self.end_cut(last);
        self.end_unrun(&entered);
        self.current = None;
        self.provider = None;
    }

    /// Says that line `line` (its file's own number) of the run ending is a record cut
    /// short: from here to the end of the run, a turn its parser would end `completed` ends
    /// `interrupted`, and the run's session is not `ok` however its turns ended.
    pub fn input_cut(&mut self, line: u64) {
        self.cut = Some(ErrorInfo {
            category: ErrorCategory::Interrupted,
            message: format!(
                "line {line} is a damaged record (cut short or written over), so what it said is not known"
            ),
            action: Some("check whether the file was still being written or was truncated".into()),
        });
    }

    /// The cut input's error, for the session its last line was read in (`last`).
    fn end_cut(&mut self, last: Option<usize>) {
        if let Some(error) = self.cut.take() {
            self.current = last.or(self.current);
            if self.current.is_some() {
                self.record_error(Outcome::Interrupted, error);
            }
        }
    }

    /// Closes whatever is open in every session (`interrupted`, source `normalizer`).
    fn interrupt_open(&mut self) -> Vec<usize> {
        if !self.early.is_empty() {
            // Raw lines and no session: they are one of their own.
            self.session_index();
        }
        let entered: Vec<usize> = std::mem::take(&mut self.entered).into_iter().collect();
        for &i in &entered {
            self.current = Some(i);
            self.release_orphans(i, false);
            if self.sessions[i].turn_open {
                self.turn_ended(Outcome::Interrupted, None, Some(interrupted_error()));
            }
            // Background work outlives its turn: what is still running when the input ends
            // was cut short too.
            if !self.sessions[i].tools.is_empty() || !self.sessions[i].approvals.is_empty() {
                self.close_open(Outcome::Interrupted, true, super::ENDED_OPEN);
                self.record_error(Outcome::Interrupted, interrupted_error());
            }
        }
        entered
    }

    /// An agent's session of the run ending (`entered`) that ended before its first turn,
    /// with nothing else to say how it went: its stream or file was cut after its header,
    /// so it is not `ok`, unless a later file goes on with it. Marked here, reported at the
    /// end of input ([`Engine::report_unrun`]).
    fn end_unrun(&mut self, entered: &[usize]) {
        if self.run_error.is_some() {
            return;
        }
        for &i in entered {
            if self.sessions[i].never_ran() {
                self.sessions[i].unrun = true;
            }
        }
    }

    /// The sessions still marked by [`Engine::end_unrun`] at the end of input, unless
    /// something later said how they went.
    fn report_unrun(&mut self) {
        for i in 0..self.sessions.len() {
            if std::mem::take(&mut self.sessions[i].unrun) && self.sessions[i].outcome.is_none() {
                self.current = Some(i);
                self.record_error(Outcome::Interrupted, before_first_turn());
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

    fn summary(&mut self, had_sessions: bool) -> Summary {
        let mut figures = SummaryFigures::default();
        let mut first_error: Option<(Outcome, ErrorInfo)> = None;
        for s in &self.sessions {
            figures.turns += s.turns;
            figures.tools.merge(&s.counts);
            figures.usage.add(&s.usage);
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
                message: if self.health.lines == 0 && self.health.skipped > 0 {
                    format!("no file read: the {} file(s) found are not of a format it reads", self.health.skipped)
                } else if self.health.lines == 0 {
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
}

fn before_first_turn() -> ErrorInfo {
    ErrorInfo {
        category: ErrorCategory::Interrupted,
        message: "the input ended before the agent's first turn".into(),
        action: Some("check whether the agent was killed or its output or session file was cut short".into()),
    }
}

fn interrupted_error() -> ErrorInfo {
    ErrorInfo {
        category: ErrorCategory::Interrupted,
        message: "the input ended before the turn finished".into(),
        action: Some("check whether the agent was killed or its output was cut short".into()),
    }
}
