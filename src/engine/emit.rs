//! Emitting events: the envelope fields an emitter chooses ([`Meta`]), and the rest the engine
//! fills in: deterministic ids, provenance (`rawRef`) and timestamps.

use super::clock::{format_rfc3339, Millis};
use super::Engine;
use crate::event::*;

/// An instant and whether the provider said it (else it is when the line was read).
pub(super) type Stamp = (Millis, bool);

impl Engine {
    pub(super) fn time(&self) -> Millis {
        self.stamp().0
    }

    /// The current time and whether the provider said it; durations are only measured
    /// between two instants of the same origin.
    pub(super) fn stamp(&self) -> Stamp {
        match self.provider_time {
            Some(t) => (t, true),
            None => (self.read_time, false),
        }
    }

    pub(super) fn emit(&mut self, body: Body, meta: Meta) {
        // Lines are 1-based: an event before any line (the summary of empty input) cites
        // the first.
        let line = self.line.max(1);
        let mut first = self.pending_since.take().unwrap_or(line).max(1);
        if let Some((_, (from, _))) = meta.held {
            first = first.min(from);
        }
        let raw_ref = RawRef::span(first.min(line), line);
        self.line_referenced = true;
        let timestamp = format_rfc3339(meta.held.map_or_else(|| self.time(), |((at, _), _)| at));
        let s = self.session();
        s.seq += 1;
        // A child session's events are its spawner's; the summary is the whole run's.
        let parent = match &body {
            Body::Summary(_) => meta.parent,
            _ => meta.parent.or_else(|| s.spawner.clone()),
        };
        let event = Event {
            event_id: event_id(&s.id, s.turn, s.seq),
            timestamp,
            session_id: s.id.clone(),
            turn_id: s.turn,
            correlation_id: meta.correlation,
            parent_id: parent,
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

/// `{session}:{turn}:{seq}`, written with `itoa` rather than `format!` (one per event).
pub(super) fn event_id(session: &str, turn: u64, seq: u64) -> String {
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
pub(super) fn elapsed(start: Stamp, end: Stamp) -> Option<u64> {
    (start.1 == end.1 && end.0 > start.0).then(|| (end.0 - start.0) as u64)
}

pub(super) fn severity_of(outcome: Outcome) -> Severity {
    match outcome {
        Outcome::Completed => Severity::Info,
        Outcome::Failed => Severity::Error,
        Outcome::Denied | Outcome::Cancelled | Outcome::Timeout | Outcome::Interrupted => Severity::Warning,
    }
}

/// Envelope fields an emitter chooses; the engine fills in the rest.
pub(super) struct Meta {
    /// The time and input lines of an event that arrived before the one it is emitted with.
    pub(super) held: Option<(Stamp, (u64, u64))>,
    pub(super) visibility: Visibility,
    pub(super) source: Source,
    pub(super) severity: Severity,
    pub(super) status: Option<Status>,
    pub(super) correlation: Option<String>,
    pub(super) parent: Option<String>,
}

impl Meta {
    pub(super) fn new(visibility: Visibility) -> Meta {
        Meta {
            held: None,
            visibility,
            source: Source::Agent,
            severity: Severity::Info,
            status: None,
            correlation: None,
            parent: None,
        }
    }
    pub(super) fn status(mut self, s: Status) -> Meta {
        self.status = Some(s);
        self
    }
    pub(super) fn source(mut self, s: Source) -> Meta {
        self.source = s;
        self
    }
    pub(super) fn severity(mut self, s: Severity) -> Meta {
        self.severity = s;
        self
    }
    pub(super) fn correlation(mut self, c: Option<String>) -> Meta {
        self.correlation = c;
        self
    }
    pub(super) fn parent(mut self, p: Option<String>) -> Meta {
        self.parent = p;
        self
    }
    pub(super) fn held(mut self, held: Option<(Stamp, (u64, u64))>) -> Meta {
        self.held = held;
        self
    }
}
