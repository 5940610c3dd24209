//! OpenCode's sessions on disk: the `session`, `message` and `part` rows of its SQLite
//! database (`opencode.db`) and the documents `opencode export` prints. Both hold the same
//! JSON; their readers ([`db`], [`export`]) turn each into the same lines, one record per
//! line (`opencode-session`, `opencode-message`, `opencode-part`), which this dialect reads:
//! the parts through the stream parser's own mapping ([`OpenCode::part`]), so a session
//! file gives the events its live stream gives, and the user's prompts, which the stream
//! does not show, as its turns' prompts. A subagent's own session (a `task` call's child)
//! is read as Claude Code's subagent transcripts are: its events are the call's, in the
//! run's session, not a run or turns of its own.

pub(super) mod db;
pub(super) mod export;

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::opencode::{enter_session, run_error, start_session, OpenCode, Part, WireError, PROVIDER};
use super::{LineError, Parse};
use crate::engine::Engine;
use crate::event::SessionStarted;

/// The `type` of each record line, in the order a session's records come.
const SESSION: &str = "opencode-session";
const MESSAGE: &str = "opencode-message";
const PART: &str = "opencode-part";

/// The record line of a session (`info` is the session's JSON), a message or a part.
fn record(kind: &str, key: &str, json: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
    out.extend_from_slice(json.as_bytes());
    out.push(b'}');
}

/// A record line, by its `type`.
enum Record<'a> {
    Session { info: SessionInfo },
    Message { info: MessageInfo },
    Part { part: &'a RawValue },
}

#[derive(Deserialize)]
struct Info<T> {
    info: T,
}

#[derive(Deserialize)]
struct PartRecord<'a> {
    #[serde(borrow)]
    part: &'a RawValue,
}

impl<'a> Record<'a> {
    fn parse(line: &'a str) -> Result<Record<'a>, LineError> {
        let shape = |e| LineError::classify(line, e, &[SESSION, MESSAGE, PART]);
        Ok(match super::leading_type(line) {
            Some(SESSION) => Record::Session { info: serde_json::from_str::<Info<_>>(line).map_err(shape)?.info },
            Some(MESSAGE) => Record::Message { info: serde_json::from_str::<Info<_>>(line).map_err(shape)?.info },
            Some(PART) => Record::Part { part: serde_json::from_str::<PartRecord<'_>>(line).map_err(shape)?.part },
            _ => return Err(LineError::unknown_type_of(line)),
        })
    }
}

#[derive(Deserialize)]
struct SessionInfo {
    id: String,
    #[serde(rename = "parentID")]
    parent_id: Option<String>,
    directory: Option<String>,
    version: Option<String>,
    model: Option<Model>,
    time: Option<MessageTime>,
}

#[derive(Deserialize)]
struct Model {
    id: Option<String>,
}

#[derive(Deserialize)]
struct MessageInfo {
    #[serde(rename = "sessionID")]
    session_id: String,
    role: String,
    #[serde(default)]
    time: MessageTime,
    error: Option<WireError>,
}

#[derive(Deserialize, Default)]
struct MessageTime {
    created: Option<i64>,
    completed: Option<i64>,
}

/// What every part names besides its content.
#[derive(Deserialize)]
struct PartIds {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "type")]
    kind: Option<String>,
    text: Option<String>,
    #[serde(default)]
    synthetic: bool,
}

/// The reader of OpenCode's session records.
#[derive(Default)]
struct Sessions {
    /// The stream parser, which reads the parts.
    parts: OpenCode,
    /// Each subagent's session (a `task` call's child), read in the place of the session
    /// it ran under (its root's, for a child's child), as the stream shows it: not a run of
    /// its own, its parts the call's.
    children: HashMap<String, String>,
    /// The message being read.
    message: Message,
    /// The messages a subagent's session came in the middle of (the database gives it
    /// inside its `task` part), innermost last: each goes on when a record of its session
    /// comes again.
    outer: Vec<Message>,
    /// The prompt of the turn the user's message opens, once its text has been read, and
    /// when the user sent it.
    prompt: Option<String>,
    prompt_time: Option<i64>,
}

/// What is known of the message being read until its end.
#[derive(Default)]
struct Message {
    /// Its session.
    session: String,
    /// It is the user's: its text is the next turn's prompt.
    user: bool,
    /// It is a subagent's.
    child: bool,
    /// When it was created: the time of its parts that state none.
    created: Option<i64>,
    /// When an assistant's was completed, for its closing part.
    completed: Option<i64>,
    /// The error an assistant's ended with, said after its parts.
    error: Option<WireError>,
}

impl Parse for Sessions {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let record = Record::parse(line)?;
        let part = match &record {
            Record::Part { part } => {
                Some((serde_json::from_str::<PartIds>(part.get()).map_err(LineError::Shape)?, *part))
            }
            _ => None,
        };
        match record {
            Record::Session { info } => self.session(engine, info),
            Record::Message { info } => {
                self.resume(engine, &info.session_id);
                self.end_message(engine);
                let child = self.children.contains_key(&info.session_id);
                enter_session(engine, Some(self.session_of(&info.session_id)), PROVIDER);
                if let Some(ms) = info.time.created {
                    engine.set_time(ms);
                }
                self.message = Message {
                    user: info.role == "user",
                    child,
                    created: info.time.created,
                    completed: info.time.completed,
                    error: info.error,
                    session: info.session_id,
                };
            }
            Record::Part { .. } => {
                let (ids, raw) = part.expect("read above");
                self.resume(engine, &ids.session_id);
                enter_session(engine, Some(self.session_of(&ids.session_id)), PROVIDER);
                let m = &self.message;
                if m.user {
                    // A subagent's prompt is its call's input, not a turn's.
                    if ids.kind.as_deref() == Some("text") && !ids.synthetic && !m.child {
                        self.prompt_time = self.prompt_time.or(m.created);
                        let prompt = self.prompt.get_or_insert_with(String::new);
                        if !prompt.is_empty() {
                            prompt.push('\n');
                        }
                        prompt.push_str(&ids.text.unwrap_or_default());
                    }
                    return Ok(());
                }
                if !m.child {
                    self.start_turn(engine);
                }
                if let Some(ms) = self.message.created {
                    engine.set_time(ms);
                }
                let part: Part = serde_json::from_str(raw.get()).map_err(LineError::Shape)?;
                if let Part::Unknown = part {
                    return Err(LineError::UnknownType(format!("part {}", ids.kind.unwrap_or_default())));
                }
                if let (Part::StepFinish(_), Some(ms)) = (&part, self.message.completed) {
                    engine.set_time(ms);
                }
                if self.message.child {
                    self.parts.child_part(engine, part);
                } else {
                    self.parts.part(engine, part);
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self, engine: &mut Engine) {
        self.end_messages(engine);
        self.parts.finish(engine);
    }
}

impl Sessions {
    /// A session's record. A subagent's, once its parent's `task` call has named it, is read
    /// in the session it ran under: inside the call while the call is open (the database
    /// gives it there, in the middle of the call's message), after it otherwise (a separate
    /// export, read after its parent's).
    fn session(&mut self, engine: &mut Engine, info: SessionInfo) {
        let created = info.time.as_ref().and_then(|t| t.created);
        let call = engine.spawner(&info.id);
        if let (Some(parent), Some(call)) = (info.parent_id.filter(|_| call.is_some()), call) {
            if engine.tool_is_open(&call) {
                self.outer.push(std::mem::take(&mut self.message));
            } else {
                self.end_message(engine);
            }
            let root = self.children.get(&parent).cloned().unwrap_or(parent);
            enter_session(engine, Some(&root), PROVIDER);
            self.children.insert(info.id, root);
            return;
        }
        self.end_messages(engine);
        self.parts.end_session(engine);
        if let Some(ms) = created {
            engine.set_time(ms);
        }
        let started = SessionStarted {
            provider: PROVIDER.into(),
            provider_version: info.version,
            model: info.model.and_then(|m| m.id),
            cwd: info.directory,
            git_branch: None,
            tools: None,
            ..Default::default()
        };
        start_session(engine, Some(&info.id), started);
    }

    /// A record of session `id`: when a subagent's session came in the middle of one of
    /// its messages, that subagent's is over and the message goes on.
    fn resume(&mut self, engine: &mut Engine, id: &str) {
        if id == self.message.session || !self.outer.iter().any(|m| m.session == id) {
            return;
        }
        while let Some(message) = self.outer.pop() {
            self.end_message(engine);
            self.message = message;
            if self.message.session == id {
                break;
            }
        }
    }

    /// The session a record of session `id` is read in: its own, or a subagent's root's.
    fn session_of<'a>(&'a self, id: &'a str) -> &'a str {
        self.children.get(id).map_or(id, String::as_str)
    }

    /// The user's message has been read: its prompt opens a turn.
    fn start_turn(&mut self, engine: &mut Engine) {
        if let Some(prompt) = self.prompt.take() {
            if let Some(ms) = self.prompt_time.take() {
                engine.set_time(ms);
            }
            engine.turn_started(Some(prompt));
        }
    }

    /// The message being read has ended, and those it came in the middle of.
    fn end_messages(&mut self, engine: &mut Engine) {
        self.end_message(engine);
        while let Some(message) = self.outer.pop() {
            self.message = message;
            self.end_message(engine);
        }
    }

    /// The message being read has ended: a user's opens its turn, an assistant's error ends
    /// the run as the stream's `error` line does. A subagent's error is a warning: its
    /// call's end says how the subagent ended.
    fn end_message(&mut self, engine: &mut Engine) {
        self.start_turn(engine);
        let Some(error) = self.message.error.take() else { return };
        if let Some(ms) = self.message.completed.or(self.message.created) {
            engine.set_time(ms);
        }
        if self.message.child {
            let (_, info) = run_error(Some(error));
            engine.warning(info.message, Some(info.category.as_str().to_owned()));
        } else {
            self.parts.error(engine, Some(error));
        }
    }
}

/// OpenCode's session files, as their readers turn them into lines.
pub(super) const DIALECT: super::Dialect = super::Dialect {
    name: "opencode-session",
    about: "OpenCode's sessions on disk: opencode.db (SQLite) and `opencode export` documents",
    family: "opencode-session",
    opens: &[SESSION],
    claim,
    parser: || Box::new(Sessions::default()),
};

/// Its record lines are its alone.
fn claim(p: &super::Probe) -> super::Claim {
    super::dialect::claim(p.kind().is_some_and(|t| [SESSION, MESSAGE, PART].contains(&t)), false)
}
