//! Which canonical events a reader need not scrub again: those of a session whose
//! `session.started` says that this build's scrubbing ([`REVISION`]) scrubbed them, as
//! `normalize` stamps every session it writes. Scrubbing is idempotent, so scrubbing such
//! an event again would change nothing, at most of a projection's cost. The stamp is the
//! writer's word: a line that copies it is believed. Every other event is scrubbed as
//! before: another writer's, an older build's (whose rules found less), any whose session's
//! start is not among the recent ones before it, and any after its session was started
//! again unstamped or after the end of the output that stamped it (its `summary`, which
//! `normalize` writes last: outputs concatenated may reuse a session id, `s1` above all).
//!
//! The lines are told apart in input order, by the event id at the start of the line, as
//! `normalize` writes it, before they are parsed (on other threads); the parsed event then
//! has to agree ([`Vouch::covers`]), so a line written otherwise is scrubbed.

use std::collections::{HashSet, VecDeque};
use std::ops::Range;

use super::REVISION;
use crate::event::{Body, Event};

/// How many sessions are remembered: a session's events follow its start closely in what
/// `normalize` writes, and an event of one forgotten is only scrubbed again.
const RECENT: usize = 4096;

/// The longest session id remembered, so that memory stays small whatever the ids; the
/// agents' ids are UUIDs and the like, and a longer one is only scrubbed again.
const LONGEST_ID: usize = 256;

/// The start of a canonical line as `normalize` writes it, up to its event id.
const START: &str = r#"{"schema":"minicode.output.v1","eventId":""#;

/// What follows the event id of a session's start, as `normalize` writes it…
const STARTED: &str = r#"","type":"session.started""#;

/// …and of the summary, the last line it writes.
const SUMMARY: &str = r#"","type":"summary""#;

/// The recent sessions stamped with this build's revision, in the order their starts came.
#[derive(Debug, Default)]
pub struct Vouched {
    sessions: HashSet<String>,
    order: VecDeque<String>,
}

impl Vouched {
    /// Whether the event of `line`, the next line of the input, needs no scrubbing, if the
    /// parsed event agrees ([`Vouch::covers`]). A session's start is read with `read` (once
    /// it looks like one) to learn whether it is stamped.
    pub fn line(&mut self, line: &str, read: impl FnOnce(&str) -> Option<Event>) -> Option<Vouch> {
        let rest = line.strip_prefix(START)?;
        let end = crate::scan::string_end(rest.as_bytes(), 0)?;
        if rest[end..].starts_with(SUMMARY) {
            // Whatever its session's id: an escape in it stamps nothing, but ends as much.
            self.sessions.clear();
            self.order.clear();
            return None;
        }
        if memchr::memchr(b'\\', &rest.as_bytes()[..end]).is_some() {
            return None;
        }
        let session = session_of(&rest[..end])?;
        if rest[end..].starts_with(STARTED) {
            let stamped = read(line).is_some_and(|e| {
                e.session_id == session
                    && matches!(&e.body, Body::SessionStarted(s) if s.scrubbed_by.as_deref() == Some(REVISION))
            });
            match stamped {
                true => self.remember(session),
                false => self.forget(session),
            }
        }
        self.sessions.contains(session).then_some(Vouch(START.len()..START.len() + end))
    }

    fn remember(&mut self, session: &str) {
        if session.len() > LONGEST_ID || self.sessions.contains(session) {
            return;
        }
        if self.order.len() == RECENT {
            if let Some(old) = self.order.pop_front() {
                self.sessions.remove(&old);
            }
        }
        self.sessions.insert(session.to_owned());
        self.order.push_back(session.to_owned());
    }

    /// Its place in `order` stays: it is only given up earlier (and an id remembered again
    /// is forgotten at the first of its places), which costs at most a second scrub, where
    /// finding the place would cost a walk of `order` per start.
    fn forget(&mut self, session: &str) {
        self.sessions.remove(session);
    }
}

/// The session part of an event id, `{sessionId}:{turnId}:{seq}`.
fn session_of(event_id: &str) -> Option<&str> {
    let (rest, _seq) = event_id.rsplit_once(':')?;
    let (session, _turn) = rest.rsplit_once(':')?;
    Some(session)
}

/// A line vouched for: where its event id is in it, read unparsed.
#[derive(Debug, Clone)]
pub struct Vouch(Range<usize>);

impl Vouch {
    /// True when `event`, parsed from `line`, has the id read from the line unparsed and is
    /// of the session that id names: then it needs no scrubbing.
    pub fn covers(&self, event: &Event, line: &str) -> bool {
        let id = &line[self.0.clone()];
        event.event_id == id && session_of(id) == Some(event.session_id.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(event_id: &str, session: &str, kind: &str, payload: &str) -> String {
        format!(
            r#"{{"schema":"minicode.output.v1","eventId":"{event_id}","type":"{kind}","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"{session}","turnId":0,"source":"agent","severity":"info","visibility":["machine"],"payload":{payload}}}"#
        )
    }

    fn read(line: &str) -> Option<Event> {
        Event::from_json(line, true).ok()
    }

    /// Whether `v` vouches for `line`, as a reader decides once it is parsed.
    fn vouched(v: &mut Vouched, line: &str) -> bool {
        v.line(line, read).is_some_and(|v| read(line).is_some_and(|e| v.covers(&e, line)))
    }

    fn stamped(session: &str, revision: &str) -> String {
        line(
            &format!("{session}:0:1"),
            session,
            "session.started",
            &format!(r#"{{"provider":"p","scrubbedBy":"{revision}"}}"#),
        )
    }

    #[test]
    fn a_session_stamped_with_this_revision_is_vouched_for_from_its_start() {
        let mut v = Vouched::default();
        let text = line("a:1:3", "a", "text", r#"{"delta":"hi","role":"assistant"}"#);
        assert!(!vouched(&mut v, &text), "before its start");
        assert!(vouched(&mut v, &stamped("a", REVISION)));
        assert!(vouched(&mut v, &text));
        assert!(!vouched(&mut v, &line("b:1:3", "b", "text", r#"{"delta":"hi","role":"assistant"}"#)));
    }

    #[test]
    fn another_revision_or_none_is_scrubbed() {
        let mut v = Vouched::default();
        let text = line("a:1:3", "a", "text", r#"{"delta":"hi","role":"assistant"}"#);
        assert!(!vouched(&mut v, &stamped("a", "minicode-output/scrub-0")));
        assert!(!vouched(&mut v, &line("a:0:1", "a", "session.started", r#"{"provider":"p"}"#)));
        assert!(!vouched(&mut v, &text));
    }

    #[test]
    fn a_line_written_otherwise_is_not_vouched_for() {
        let mut v = Vouched::default();
        vouched(&mut v, &stamped("a", REVISION));
        let text = |id: &str, session: &str| line(id, session, "text", r#"{"delta":"x","role":"assistant"}"#);
        // Another key order, an escape in the id, a session that is not the id's.
        let reordered = r#"{"eventId":"a:1:3","schema":"minicode.output.v1","type":"text","sessionId":"a","turnId":1,"payload":{"delta":"x","role":"assistant"}}"#;
        assert!(read(reordered).is_some() && !vouched(&mut v, reordered));
        assert!(!vouched(&mut v, &text(r"a\u0041:1:3", "aA")));
        assert!(!vouched(&mut v, &text("a:1:3", "b")));
        // The id read first is not the one the event has.
        let twice = text("a:1:3", "b").replacen(r#""eventId":"a:1:3""#, r#""eventId":"a:1:3","eventId":"b:1:3""#, 1);
        assert!(read(&twice).is_some_and(|e| e.event_id == "b:1:3") && !vouched(&mut v, &twice));
        // A start whose id names another session than its own stamps neither.
        let mut v = Vouched::default();
        let start = line("a:0:1", "b", "session.started", &format!(r#"{{"provider":"p","scrubbedBy":"{REVISION}"}}"#));
        assert!(!vouched(&mut v, &start));
        assert!(!vouched(&mut v, &text("b:0:2", "b")));
        assert!(!vouched(&mut v, &text("a:0:2", "a")));
    }

    #[test]
    fn a_session_started_again_unstamped_or_after_the_summary_is_scrubbed() {
        let text = line("a:1:3", "a", "text", r#"{"delta":"hi","role":"assistant"}"#);
        let summary = line("a:1:4", "a", "summary", r#"{"turns":1}"#);
        let mut v = Vouched::default();
        assert!(vouched(&mut v, &stamped("a", REVISION)) && vouched(&mut v, &text));
        assert!(!vouched(&mut v, &stamped("a", "minicode-output/scrub-0")));
        assert!(!vouched(&mut v, &text), "started again by an older build");
        assert!(vouched(&mut v, &stamped("a", REVISION)) && vouched(&mut v, &text));
        assert!(!vouched(&mut v, &line("a:0:1", "a", "session.started", r#"{"provider":"p"}"#)));
        assert!(!vouched(&mut v, &text), "started again unstamped");
        assert!(vouched(&mut v, &stamped("a", REVISION)));
        assert!(v.line(&summary, read).is_none(), "the summary is scrubbed");
        assert!(!vouched(&mut v, &text), "another output, which may reuse the id");
        // A summary ends them whatever its id (an escape in it stamps nothing).
        assert!(vouched(&mut v, &stamped("a", REVISION)));
        assert!(v.line(&line(r#"q\"z:1:4"#, r#"q\"z"#, "summary", r#"{"turns":1}"#), read).is_none());
        assert!(!vouched(&mut v, &text), "ended by a summary whose id holds an escape");
    }

    #[test]
    fn a_long_id_is_not_remembered() {
        let mut v = Vouched::default();
        let id = "x".repeat(LONGEST_ID + 1);
        assert!(!vouched(&mut v, &stamped(&id, REVISION)));
        assert!(!vouched(&mut v, &line(&format!("{id}:1:2"), &id, "text", r#"{"delta":"x","role":"assistant"}"#)));
    }

    #[test]
    fn only_the_recent_sessions_are_remembered() {
        let mut v = Vouched::default();
        for i in 0..=RECENT {
            vouched(&mut v, &stamped(&format!("s{i}"), REVISION));
        }
        let text = |s: &str| line(&format!("{s}:1:2"), s, "text", r#"{"delta":"x","role":"assistant"}"#);
        assert!(!vouched(&mut v, &text("s0")), "the oldest is forgotten, and scrubbed again");
        assert!(vouched(&mut v, &text("s1")));
        assert!(vouched(&mut v, &text(&format!("s{RECENT}"))));
    }
}
