//! Gemini CLI sessions: `~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`.
//!
//! The file is a log of one JSON document: a header (`sessionId`, `projectHash`,
//! `startTime`, `kind`), message records (`user`, `gemini`), and `{"$set": …}` patches of
//! top-level fields. A record may be written again under the same `id`: a model message is
//! written first without, then with its `toolCalls` (each with its result and status). A
//! resumed invocation appends a second header with the same `sessionId`, then a `$set` of the
//! whole `messages` history, then its own records.
//!
//! Memory stays bounded by holding one record: Gemini rewrites only the message it is still
//! writing, so a record is final once a record with another id, a header or a patch of
//! `messages` follows, or the file ends; it is told then. The ids of the last records told
//! are kept (a bounded few) so that a late rewrite of one is not told twice. A `$set` of
//! `messages` repeats history (or sets the injected `<session_context>`): it is not told.
//!
//! The file keeps no turn outcome: a turn whose last model message asked for no tool has
//! completed; any other is left open, and ends interrupted with the input.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use super::gemini::NAMES;
use super::usage::cache_inclusive;
use super::{Claim, Dialect, LineError, Parse, Probe};
use crate::engine::clock::parse_rfc3339;
use crate::engine::{parse_exit_in, Engine, ExitSource, Recent, ToolContext, ToolStatus, Update, UsageScope};
use crate::event::{ErrorCategory, ErrorInfo, FileChange, Outcome, Piece, Role, SessionStarted, Stream};

/// Gemini CLI's session files.
pub(super) const DIALECT: Dialect = Dialect {
    name: "gemini-session",
    about: "Gemini CLI sessions (~/.gemini/tmp/<project>/chats/session-*.jsonl)",
    family: "gemini-session",
    opens: &[],
    claim,
    parser: || Box::new(GeminiSession::new()),
};

/// The file's alone: its header (`sessionId` with `projectHash` and `startTime`), its
/// patches (`$set`), and its records (`id`, `timestamp` and a `user` or `gemini` type, the
/// model's with `tokens` or `toolCalls`).
fn claim(p: &Probe) -> Claim {
    let header = p.str("sessionId").is_some() && p.has("projectHash") && p.has("startTime");
    let patch = p.get("$set").is_some_and(Value::is_object);
    let record = p.str("id").is_some()
        && p.str("timestamp").is_some()
        && match p.kind() {
            Some("gemini") => p.has("tokens") || p.has("toolCalls") || p.has("thoughts"),
            Some("user") => p.get("content").is_some_and(Value::is_array),
            _ => false,
        };
    super::dialect::claim(header || patch || record, false)
}

/// The provider name of the sessions, the same as the stream's.
const PROVIDER: &str = "gemini-cli";
/// How many told records' ids are remembered.
const TOLD: usize = 64;

/// The session file parser.
#[derive(Debug)]
pub struct GeminiSession {
    /// The last record, until it can no longer be rewritten: its id, and the line.
    held: Option<(String, Record)>,
    told: Recent,
    /// The last model message told asked for no tool: its turn is complete.
    answered: bool,
}

impl GeminiSession {
    fn new() -> GeminiSession {
        GeminiSession { held: None, told: Recent::new(TOLD), answered: false }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Line {
    Header {
        #[serde(rename = "sessionId")]
        session_id: String,
        #[serde(rename = "startTime")]
        _start: IgnoredAny,
    },
    Patch {
        #[serde(rename = "$set")]
        set: Patch,
    },
    Record(Record),
}

#[derive(Deserialize)]
struct Patch {
    messages: Option<IgnoredAny>,
}

#[derive(Debug, Deserialize)]
struct Record {
    id: String,
    timestamp: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    thoughts: Vec<Thought>,
    tokens: Option<Tokens>,
    #[serde(rename = "toolCalls", default)]
    tool_calls: Vec<ToolCall>,
}

#[derive(Debug, Deserialize)]
struct Thought {
    #[serde(default)]
    subject: String,
    #[serde(default)]
    description: String,
}

#[derive(Debug, Deserialize)]
struct Tokens {
    input: Option<u64>,
    output: Option<u64>,
    cached: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolCall {
    id: String,
    name: String,
    args: Option<Value>,
    #[serde(default)]
    result: Vec<Value>,
    status: Option<String>,
    result_display: Option<Value>,
}

impl Parse for GeminiSession {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let parsed: Line = serde_json::from_str(line).map_err(LineError::from_json)?;
        match parsed {
            Line::Header { session_id, .. } => {
                self.release(engine);
                self.end_answered_turn(engine);
                engine.session_started(Some(&session_id), SessionStarted { provider: PROVIDER.into(), ..Default::default() });
            }
            Line::Patch { set } => {
                if set.messages.is_some() {
                    self.release(engine);
                }
            }
            Line::Record(r) => {
                if !matches!(r.kind.as_str(), "user" | "gemini" | "info" | "warning" | "error") {
                    return Err(LineError::UnknownType(r.kind));
                }
                if self.held.as_ref().is_some_and(|(id, _)| *id != r.id) {
                    self.release(engine);
                }
                if !self.told.contains(&r.id) {
                    self.held = Some((r.id.clone(), r));
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self, engine: &mut Engine) {
        self.release(engine);
        self.end_answered_turn(engine);
    }
}

impl GeminiSession {
    /// Tells the held record: it can no longer change.
    fn release(&mut self, engine: &mut Engine) {
        let Some((id, r)) = self.held.take() else { return };
        self.told.insert(&id);
        if let Some(ms) = r.timestamp.as_deref().and_then(parse_rfc3339) {
            engine.set_time(ms);
        }
        engine.enter_session(None, PROVIDER);
        match r.kind.as_str() {
            "user" => {
                // Tool results come back as user records; the model's record holds them too.
                let prompt = text_of(&r.content);
                if !prompt.is_empty() {
                    self.end_answered_turn(engine);
                    engine.turn_started(Some(prompt));
                }
            }
            "gemini" => self.model_message(r, engine),
            // `info`, `warning` and `error` are the CLI's notes to the user.
            kind => {
                let text = text_of(&r.content);
                let category = (kind == "error").then(|| ErrorCategory::ProviderError.as_str().to_owned());
                engine.warning(text, category);
            }
        }
    }

    fn model_message(&mut self, r: Record, engine: &mut Engine) {
        engine.ensure_turn();
        for t in r.thoughts {
            let text = if t.subject.is_empty() { t.description } else { format!("{}\n{}", t.subject, t.description) };
            engine.reasoning(text, Piece::First, None);
        }
        engine.text(Role::Assistant, text_of(&r.content), Piece::First, None);
        if let Some(t) = r.tokens {
            // The input count holds the cached tokens.
            engine.usage(cache_inclusive(t.input, t.output, t.cached, None), UsageScope::Increment);
        }
        self.answered = r.tool_calls.is_empty();
        for call in r.tool_calls {
            tool_call(call, engine);
        }
    }

    /// Ends the open turn as completed when the model's last message asked for no tool.
    fn end_answered_turn(&mut self, engine: &mut Engine) {
        if std::mem::take(&mut self.answered) && engine.turn_is_open() {
            engine.turn_ended(Outcome::Completed, None, None);
        }
    }
}

/// A call the model message holds, with its result.
fn tool_call(call: ToolCall, engine: &mut Engine) {
    let id = call.id.as_str();
    engine.tool_started(NAMES.started(id, &call.name, call.args), ToolContext::default());
    let response = call.result.iter().find_map(|r| r.pointer("/functionResponse/response")).cloned();
    let said = response.as_ref().and_then(|r| r.get("output").or_else(|| r.get("error"))).and_then(Value::as_str);
    if let Some(code) = said.and_then(parse_exit_in) {
        engine.tool_exit(id, ExitSource::ParsedText, code);
    }
    let display = call.result_display.as_ref();
    if let Some(text) = display.and_then(Value::as_str).or(said) {
        engine.tool_output(id, Stream::Combined, Update::Final, text);
    }
    let status = match call.status.as_deref() {
        Some("success") => ToolStatus::Completed,
        Some("cancelled") => ToolStatus::Cancelled,
        // Still running when the file was last written: the result is unknown.
        Some("executing" | "scheduled" | "validating" | "awaiting_approval") | None => return,
        Some(_) => ToolStatus::Failed,
    };
    let error = (status == ToolStatus::Failed).then(|| ErrorInfo {
        category: ErrorCategory::ToolError,
        message: said.unwrap_or("the tool failed").to_owned(),
        action: None,
    });
    if status == ToolStatus::Completed {
        if let Some(path) = display.and_then(|d| d.get("filePath")?.as_str()) {
            let new = display.and_then(|d| d.get("isNewFile")?.as_bool()) == Some(true);
            engine.file_changed(path.to_owned(), if new { FileChange::Add } else { FileChange::Update }, Some(call.id.clone()));
        }
    }
    engine.tool_ended(id, status, error);
}

/// The text of a record's content: a string, or the `text` of its parts.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p.get("text")?.as_str()).collect(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_lines_are_claimed_and_the_streams_are_not() {
        let claim_of = |l: &str| claim(&Probe::parse(l).unwrap());
        let header = r#"{"sessionId":"s","projectHash":"h","startTime":"t","lastUpdated":"t","kind":"main"}"#;
        assert_eq!(claim_of(header), Claim::Yes);
        assert_eq!(claim_of(r#"{"$set":{"lastUpdated":"t"}}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"id":"m","timestamp":"t","type":"user","content":[{"text":"x"}]}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"message","timestamp":"t","role":"user","content":"x"}"#), Claim::No);
        assert_eq!(claim_of(r#"{"type":"init","timestamp":"t","session_id":"s","model":"auto"}"#), Claim::No);
    }
}
