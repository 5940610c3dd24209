//! What the session-transcript readers (`claude-session`, `qwen-session`) share: the
//! `uuid` / `parentUuid` chain their records form, which branch of it is kept, and the turns
//! their prompts open.
//!
//! Branches. Editing or retrying a message writes a record whose parent is an earlier
//! record: what followed that point is a branch left behind, and the branch kept is the
//! chain that ends at the last record. Only later records tell which branch that is, so a
//! [`Chain`] holds the records of the open turn (from its prompt on), as lines, until the
//! next prompt or the end of the file settles it: the kept records are then read, in order,
//! each citing its own line, and the others are counted (a `warning` at the end of the file
//! says how many). Memory is the open turn's records, at most [`HOLD_LINES`] of them and
//! [`HOLD_BYTES`]; past that, what is held is read as it is (a fork seen later into it is
//! counted, and what it left behind stays shown), as is a fork that goes back past the open
//! turn, into records already read. Records that say nothing (attachments, telemetry) are
//! held as links of the chain only. A tool result stays with its call when the call is
//! kept, whichever record it names as its parent (parallel results chain oddly).

use std::collections::HashMap;

use super::LineError;
use crate::engine::clock::{parse_rfc3339, Millis};
use crate::engine::Engine;
use crate::event::SessionStarted;
use crate::event::{ErrorCategory, ErrorInfo, Outcome};

/// At most this many records of the open turn are held…
const HOLD_LINES: usize = 4096;
/// …and at most this many bytes of them.
const HOLD_BYTES: usize = 16 * 1024 * 1024;

/// One record of a transcript, as the chain holds it.
#[derive(Debug, Default)]
pub(super) struct Record {
    /// Its input line.
    pub line: u64,
    /// The line, when the record says something; `None` for a link of the chain only.
    pub text: Option<String>,
    pub uuid: Option<String>,
    /// `parentUuid`, or, where a compaction restarted the chain, `logicalParentUuid`.
    pub parent: Option<String>,
    /// The record of the call a tool result answers (`sourceToolAssistantUUID`).
    pub anchor: Option<String>,
}

/// A dialect's reading of the records a [`Chain`] keeps.
pub(super) trait Reader {
    /// Reads one kept record; the engine's current line is the record's.
    fn read(&mut self, text: &str, engine: &mut Engine) -> Result<(), LineError>;
}

/// The records of the open turn, held until a later record settles which branch is kept.
#[derive(Debug, Default)]
pub(super) struct Chain {
    held: Vec<Record>,
    bytes: usize,
    /// The parent of the held turn's first record: a prompt with the same parent is an
    /// edit of the held one, which it replaces.
    base: Option<String>,
    /// The held turn's prompt has no parent (the conversation's first): another prompt
    /// without one replaces it.
    rooted: bool,
    /// The last record's uuid.
    last: Option<String>,
    /// Branches left behind, and the records on them not shown.
    forks: u64,
    abandoned: u64,
    /// Forks that reached records already read.
    late: u64,
}

impl Chain {
    /// A prompt (a record that opens a turn) arrives: what is held is settled by its
    /// parent, and it becomes the first record of the next held turn.
    pub fn prompt(&mut self, record: Record, reader: &mut impl Reader, engine: &mut Engine) {
        let parent = record.parent.clone();
        if parent.is_none() && self.rooted && self.held.iter().any(|r| r.text.is_some()) {
            // A second first prompt: the first one, edited.
            self.abandon();
        } else {
            self.settle(parent.as_deref(), reader, engine);
        }
        self.rooted = parent.is_none();
        self.base = parent;
        self.push(record, reader, engine);
    }

    /// Any other record of the chain.
    pub fn push(&mut self, record: Record, reader: &mut impl Reader, engine: &mut Engine) {
        if record.uuid.is_some() {
            self.last.clone_from(&record.uuid);
        }
        self.bytes += record.text.as_ref().map_or(0, String::len);
        self.held.push(record);
        if self.held.len() >= HOLD_LINES || self.bytes >= HOLD_BYTES {
            self.settle(None, reader, engine);
            self.base = None;
            self.rooted = false;
        }
    }

    /// Leaves every held record behind.
    fn abandon(&mut self) {
        self.abandoned += self.held.iter().filter(|r| r.text.is_some()).count() as u64;
        self.forks += 1;
        self.held.clear();
        self.bytes = 0;
    }

    /// End of the file: the chain that ends at the last record is kept. Says how many
    /// branches were left behind.
    pub fn finish(&mut self, reader: &mut impl Reader, engine: &mut Engine) {
        let last = self.last.take();
        self.settle(last.as_deref(), reader, engine);
        if self.forks > 0 {
            let late = match self.late {
                0 => String::new(),
                n => format!(" ({n} reached back to records already shown, which stay)"),
            };
            engine.warning(
                format!(
                    "the transcript branches: {} branch(es) left behind by edits or retries, {} record(s) on them not shown{late}",
                    self.forks, self.abandoned
                ),
                None,
            );
        }
    }

    /// Reads the held records on the chain that ends at `leaf` (`None`: all of them) and
    /// counts the others.
    fn settle(&mut self, leaf: Option<&str>, reader: &mut impl Reader, engine: &mut Engine) {
        let held = std::mem::take(&mut self.held);
        self.bytes = 0;
        if held.is_empty() {
            return;
        }
        let kept = self.kept(&held, leaf);
        let current = engine.line();
        let mut from = None;
        for (record, keep) in held.into_iter().zip(kept) {
            let Some(text) = record.text else { continue };
            if !keep {
                self.abandoned += 1;
                continue;
            }
            engine.replay_line(from.unwrap_or(record.line), record.line);
            if let Err(e) = reader.read(&text, engine) {
                engine.raw(&text, e.reason());
            }
            from = Some(record.line + 1);
        }
        if let Some(from) = from {
            engine.replay_line(from, current);
        }
    }

    /// Which held records are on the kept chain.
    fn kept(&mut self, held: &[Record], leaf: Option<&str>) -> Vec<bool> {
        let index: HashMap<&str, usize> =
            held.iter().enumerate().filter_map(|(i, r)| Some((r.uuid.as_deref()?, i))).collect();
        let Some(leaf) = leaf else { return vec![true; held.len()] };
        let mut kept = vec![false; held.len()];
        match index.get(leaf) {
            Some(&end) => {
                let mut i = end;
                loop {
                    kept[i] = true;
                    let record = &held[i];
                    // A record named its own parent has no link: it follows the record
                    // before it, as a record without a parent in the middle of a turn does.
                    let parent = record.parent.as_deref().filter(|p| Some(*p) != record.uuid.as_deref());
                    match parent.map(|p| index.get(p)) {
                        Some(Some(&j)) if j < i => i = j,
                        None if i > 0 => match held[..i].iter().rposition(|r| r.uuid.is_some()) {
                            Some(j) => i = j,
                            None => break,
                        },
                        _ => break,
                    }
                }
            }
            // A prompt beside the held one: an edit of it.
            None if self.base.as_deref() == Some(leaf) => {}
            None => {
                // The leaf is older than the held turn: a fork back into what was read.
                self.forks += 1;
                self.late += 1;
                return vec![true; held.len()];
            }
        }
        for (i, r) in held.iter().enumerate() {
            let answers_kept = r.anchor.as_deref().and_then(|a| index.get(a)).is_some_and(|&j| kept[j]);
            if r.uuid.is_none() || answers_kept {
                kept[i] = true;
            }
        }
        if held.iter().zip(&kept).any(|(r, k)| r.text.is_some() && !k) {
            self.forks += 1;
        }
        kept
    }
}

/// The session a transcript reader is reading. One input can hold several sessions'
/// transcripts (`cat` of a projects folder): a record of another session that starts a
/// conversation (a record without a parent: its first prompt), or that goes on with a
/// session read before, ends the one being read, as the end of its file would, and the
/// reader starts over (a session met again goes on, as a resumed one does). Any other
/// record of another session (bookkeeping, a record written into the wrong file) strays:
/// it is not read, so it can neither cut the open turn nor decide which branch is kept,
/// and a warning counts it.
#[derive(Debug, Default)]
pub(super) struct Reading {
    current: Option<String>,
    /// The sessions read so far (the current one too).
    read: std::collections::HashSet<String>,
    /// Records that strayed since the last warning.
    strays: u64,
}

/// Where a record belongs, for [`Reading::place`].
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// To the session being read.
    Here,
    /// To another session, which the reader starts reading.
    Switch,
    /// To another session, not in the input: not read.
    Stray,
}

impl Reading {
    /// Where a record of session `id` belongs: it is the `root` of a conversation or not,
    /// and `chained` (it has a uuid) or not. A record that names no session is of the one
    /// being read.
    pub fn place(&mut self, id: Option<&str>, root: bool, chained: bool) -> Place {
        let Some(id) = id else { return Place::Here };
        // Ids that name one session in events name one here.
        let id = crate::engine::session_key(id);
        let id = id.as_ref();
        match &self.current {
            Some(current) if current == id => Place::Here,
            Some(_) if !(root || chained && self.read.contains(id)) => Place::Stray,
            current => {
                let place = if current.is_some() { Place::Switch } else { Place::Here };
                self.current = Some(id.to_owned());
                self.read.insert(id.to_owned());
                place
            }
        }
    }

    /// Counts a record that strayed and is not shown.
    pub fn stray(&mut self) {
        self.strays += 1;
    }

    /// Says how many records strayed since it was last said.
    pub fn finish(&mut self, engine: &mut Engine) {
        match std::mem::take(&mut self.strays) {
            0 => {}
            n => engine.warning(
                format!(
                    "{n} record(s) of another session are not shown: its transcript does not begin in this input \
                     (records written into another session's file, or a transcript cut before its first prompt)"
                ),
                None,
            ),
        }
    }
}

/// How the open turn of a transcript stands: transcripts have no `result` record, so the
/// reader ends each turn itself, from what its records said.
#[derive(Debug, Default)]
pub(super) struct Turn {
    /// The last assistant message gave the final answer (it asked for no tool), with the
    /// stop reason it gave.
    pub answered: Option<Option<String>>,
    /// The user interrupted it.
    pub interrupted: bool,
    /// The times of the last two records read: a turn ends at the time of its last
    /// record, which the next prompt (or the end of the file) only shows later.
    pub last: Option<Millis>,
    before: Option<Millis>,
}

impl Turn {
    /// Starts a turn with `prompt`, ending the open one first.
    pub fn start(&mut self, engine: &mut Engine, prompt: Option<String>) {
        if engine.turn_is_open() {
            if let Some(t) = self.before {
                engine.set_time(t);
            }
            self.end(engine);
            if let Some(t) = self.last {
                engine.set_time(t);
            }
        }
        engine.turn_started(prompt);
    }

    /// A record's time (`timestamp`), the provider's time of what it says.
    pub fn at(&mut self, engine: &mut Engine, timestamp: Option<&str>) {
        if let Some(t) = timestamp.and_then(parse_rfc3339) {
            engine.set_time(t);
            self.before = self.last.replace(t);
        }
    }

    /// The end of the file ends the open turn, at the time of its last record.
    pub fn finish(&mut self, engine: &mut Engine) {
        if let Some(t) = self.last {
            engine.set_time(t);
        }
        self.end(engine);
    }

    /// Ends the open turn as its records said: completed when the agent answered,
    /// cancelled when the user interrupted it, else interrupted (the file ends mid-turn).
    pub fn end(&mut self, engine: &mut Engine) {
        let (interrupted, answered) = (std::mem::take(&mut self.interrupted), self.answered.take());
        if !engine.turn_is_open() {
            return;
        }
        match (interrupted, answered) {
            (true, _) => engine.turn_ended(
                Outcome::Cancelled,
                None,
                Some(ErrorInfo {
                    category: ErrorCategory::Cancelled,
                    message: "the user interrupted the turn".into(),
                    action: Some("resume the session to continue".into()),
                }),
            ),
            (false, Some(stop)) => engine.turn_ended(Outcome::Completed, stop, None),
            (false, None) => engine.turn_ended(
                Outcome::Interrupted,
                None,
                Some(ErrorInfo {
                    category: ErrorCategory::Interrupted,
                    message: "the transcript ends this turn before the agent's answer".into(),
                    action: None,
                }),
            ),
        }
    }
}

/// A session's first prompt, held until the next record: a transcript names the model
/// only on the agent's answers, and `session.started` carries it (as the stream's init does).
#[derive(Debug)]
pub(super) struct Opening {
    prompt: Option<String>,
    info: SessionStarted,
    session: Option<String>,
    /// The prompt's time.
    at: Option<Millis>,
}

impl Opening {
    /// The prompt just read (its time is the turn's last).
    pub fn new(prompt: Option<String>, info: SessionStarted, session: Option<String>, turn: &Turn) -> Opening {
        Opening { prompt, info, session, at: turn.last }
    }

    /// Starts the session, with the model the next record names, and its first turn, at
    /// the prompt's time.
    pub fn open(self, engine: &mut Engine, model: Option<String>, turn: &mut Turn) {
        if let Some(t) = self.at {
            engine.set_time(t);
        }
        let info = SessionStarted { model: model.or(self.info.model), ..self.info };
        engine.session_started(self.session.as_deref(), info);
        turn.start(engine, self.prompt);
        if let Some(t) = turn.last {
            engine.set_time(t);
        }
    }
}

/// A `<task-notification>` a transcript records when background work (a subagent) ends.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Notification<'a> {
    pub task_id: Option<&'a str>,
    pub tool_use_id: &'a str,
    pub status: Option<&'a str>,
    pub summary: Option<&'a str>,
}

impl<'a> Notification<'a> {
    /// Reads one from a record's text; `None` when the text is not one.
    pub fn parse(text: &'a str) -> Option<Notification<'a>> {
        let body = text.trim_start().strip_prefix("<task-notification>")?;
        let tag = |name: &str| {
            let open = format!("<{name}>");
            let start = body.find(&open)? + open.len();
            let end = body[start..].find(&format!("</{name}>"))? + start;
            Some(body[start..end].trim())
        };
        Some(Notification {
            task_id: tag("task-id"),
            tool_use_id: tag("tool-use-id")?,
            status: tag("status"),
            summary: tag("summary"),
        })
    }

    /// The notification as the stream prints it (`system/task_notification`), for the
    /// stream parser to end the call with.
    pub fn as_stream_line(&self) -> String {
        serde_json::json!({
            "type": "system",
            "subtype": "task_notification",
            "task_id": self.task_id,
            "tool_use_id": self.tool_use_id,
            "status": self.status,
            "summary": self.summary,
        })
        .to_string()
    }

    /// Records which call spawned the task, for the subagent's own transcript.
    pub fn link(&self, engine: &mut Engine) {
        if let Some(task) = self.task_id {
            engine.spawned(task, self.tool_use_id);
        }
    }
}

/// The call that spawned the subagent whose transcript is being read, asked once (by its
/// first sidechain record's agent id) and kept: `None` when its parent was not read first.
pub(super) fn spawner(engine: &mut Engine, agent: Option<&str>, known: &mut Option<Option<String>>) -> Option<String> {
    known.get_or_insert_with(|| agent.and_then(|a| engine.take_spawner(a))).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_notification_gives_its_call_status_and_summary() {
        let text = "<task-notification>\n<task-id>a16</task-id>\n<tool-use-id>toolu_1</tool-use-id>\n<status>completed</status>\n<summary>Agent done</summary>\n</task-notification>";
        let n = Notification::parse(text).unwrap();
        assert_eq!(
            n,
            Notification {
                task_id: Some("a16"),
                tool_use_id: "toolu_1",
                status: Some("completed"),
                summary: Some("Agent done")
            }
        );
        assert!(Notification::parse("hello <task-notification>").is_none());
        assert!(Notification::parse("<task-notification><task-id>x</task-id>").is_none());
    }
}
