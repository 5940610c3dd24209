//! Factory droid sessions: `~/.factory/sessions/<cwd slug>/<session id>.jsonl`.
//!
//! A `session_start` (id, title, cwd), then `message` records holding Anthropic-style
//! content blocks (`text`, `tool_use` in assistant messages, `tool_result` in user ones),
//! each turn closed by an `agent_turn_outcome`. The first user message (id `context-…`) is
//! the context droid injects, not the user's prompt. Tool calls and results are read as the
//! stream's parser ([`Droid`]) reads them: the exit status is only in the result's text.
//!
//! The usage is not in this file but in the `<session id>.settings.json` beside it: read
//! with the file ([`settings`]), it comes as the session's last line, its total usage read
//! as the stream's `completion` gives it. A session read without its settings (from stdin,
//! or with none beside it) has no usage: unknown, not 0.

pub(super) mod settings;

use serde::Deserialize;
use serde_json::Value;

use super::droid::{Droid, PROVIDER};
use super::repeats::ReadOnce;
use super::usage::AnthropicUsage;
use super::{Claim, Dialect, LineError, Parse, Probe};
use crate::engine::clock::parse_rfc3339;
use crate::engine::{Engine, UsageScope};
use crate::event::{Outcome, Piece, Role, SessionStarted};

/// droid's session files.
pub(super) const DIALECT: Dialect = Dialect {
    name: "droid-session",
    about: "Factory droid sessions (~/.factory/sessions/<slug>/<id>.jsonl)",
    family: "droid-session",
    opens: &["session_start"],
    claim,
    parser: || Box::new(ReadOnce::<DroidSession>::default()),
};

/// The line [`settings`] adds for the session's settings file.
const SETTINGS: &str = "droid-settings";

/// The file's alone: its `session_start`, a `message` wrapping a content-block `message`
/// (the stream's messages are flat), and the `agent_turn_outcome` closing a turn; and the
/// line of its settings.
fn claim(p: &Probe) -> Claim {
    let own = match p.kind() {
        Some("session_start") => p.str("id").is_some() && p.has("owner") && p.has("cwd"),
        Some("message") => p.str("id").is_some() && p.at(&["message", "content"]).is_some_and(Value::is_array),
        Some("agent_turn_outcome") => p.str("turnId").is_some(),
        Some(SETTINGS) => p.str("file").is_some(),
        _ => false,
    };
    super::dialect::claim(own, false)
}

/// The session file parser.
#[derive(Debug, Default)]
pub struct DroidSession {
    tools: Droid,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Wire {
    SessionStart {
        id: String,
        cwd: Option<String>,
    },
    Message {
        id: String,
        timestamp: Option<String>,
        message: Message,
    },
    AgentTurnOutcome {
        reason: Option<String>,
    },
    /// The settings beside the file: the session's total usage, or why they were not read.
    #[serde(rename = "droid-settings")]
    Settings {
        file: String,
        #[serde(rename = "tokenUsage")]
        token_usage: Option<AnthropicUsage>,
        unread: Option<String>,
    },
}

#[derive(Deserialize)]
struct Message {
    role: String,
    #[serde(default)]
    content: Vec<Block>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Option<Value>,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(default)]
        is_error: bool,
        #[serde(default)]
        content: Value,
    },
    #[serde(other)]
    Other,
}

const TYPES: [&str; 4] = ["session_start", "message", "agent_turn_outcome", SETTINGS];

/// The id droid gives the context it injects before the prompt.
const CONTEXT: &str = "context-";

impl Parse for DroidSession {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let wire: Wire = serde_json::from_str(line).map_err(|e| LineError::classify(line, e, &TYPES))?;
        match wire {
            Wire::SessionStart { id, cwd } => {
                let info = SessionStarted { provider: PROVIDER.into(), cwd, ..Default::default() };
                engine.session_started(Some(&id), info);
            }
            Wire::Message { id, timestamp, message } => {
                if let Some(ms) = timestamp.as_deref().and_then(parse_rfc3339) {
                    engine.set_time(ms);
                }
                engine.enter_session(None, PROVIDER);
                if !id.starts_with(CONTEXT) {
                    self.message(message, engine);
                }
            }
            Wire::AgentTurnOutcome { reason } => {
                engine.enter_session(None, PROVIDER);
                match reason.as_deref() {
                    Some("completed") => engine.turn_ended(Outcome::Completed, None, None),
                    Some("cancelled" | "canceled" | "aborted" | "interrupted") => {
                        engine.turn_ended(Outcome::Cancelled, reason, None);
                    }
                    // Whatever else droid says, the turn did not complete.
                    _ => engine.turn_ended(Outcome::Failed, reason, None),
                }
            }
            Wire::Settings { file, token_usage, unread } => {
                engine.enter_session(None, PROVIDER);
                if let Some(usage) = token_usage {
                    engine.usage(usage.canonical(), UsageScope::Total);
                }
                if let Some(why) = unread {
                    engine.warning(format!("{file} was not read, so the session's usage is unknown: {why}"), None);
                }
            }
        }
        Ok(())
    }
}

impl DroidSession {
    fn message(&mut self, message: Message, engine: &mut Engine) {
        let user = message.role == "user";
        for block in message.content {
            match block {
                // The user's prompt opens a turn; results come back in user messages too.
                Block::Text { text } if user => engine.turn_started(Some(text)),
                Block::Text { text } => {
                    engine.ensure_turn();
                    engine.text(Role::Assistant, text, Piece::First, None);
                }
                Block::Thinking { thinking } => {
                    engine.ensure_turn();
                    engine.reasoning(thinking, Piece::First, None);
                }
                Block::ToolUse { id, name, input } => {
                    engine.ensure_turn();
                    self.tools.tool_call(engine, &id, &name, input);
                }
                Block::ToolResult { tool_use_id, is_error, content } => {
                    self.tools.tool_result(engine, &tool_use_id, is_error, result_text(content));
                }
                Block::Other => {}
            }
        }
    }
}

/// A result's content: a string, or text blocks.
fn result_text(content: Value) -> String {
    match content {
        Value::String(s) => s,
        Value::Array(blocks) => blocks.iter().filter_map(|b| b.get("text")?.as_str()).collect(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_records_are_claimed_and_the_streams_are_not() {
        let claim_of = |l: &str| claim(&Probe::parse(l).unwrap());
        let start = r#"{"type":"session_start","id":"s","title":"t","owner":"unknown","version":2,"cwd":"/w"}"#;
        assert_eq!(claim_of(start), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"message","id":"m","message":{"role":"user","content":[]}}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"message","role":"user","id":"m","text":"x","session_id":"s"}"#), Claim::No);
    }
}
