//! Codex rollouts: the session file Codex appends to
//! `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, one
//! `{timestamp, ordinal, type, payload}` line per record.
//!
//! A rollout holds what `exec --json` prints and more: `session_meta` (thread id, cwd, CLI
//! version, git), each invocation's `task_started` … `task_complete` (a turn), its
//! `turn_context` (model, cwd, approval and sandbox policy), the model-facing
//! `response_item`s (messages, `function_call`s and their `*_output`), the typed
//! `event_msg/item_completed` items (`CommandExecution` with its `exit_code` and whole
//! `aggregated_output`, `FileChange`), and per-response `token_usage_record`s. A resumed
//! thread appends to the same file: one session, one more turn.
//!
//! A tool starts at its `function_call` (or `custom_tool_call`) and ends at its typed item,
//! which carries the exit code; a call with no typed item ends at its output, whose exit
//! code is only text. Items are read with the `exec --json` parser's mapping (names, kinds,
//! statuses, file changes, usage), shared from [`super::codex`].

use serde::Deserialize;
use serde_json::{Map, Value};

use super::repeats::ReadOnce;
use super::codex::{call, change_of, end_of, ended, start, unwrap_shell, WireUsage};
use super::{Claim, Dialect, LineError, Parse, Probe};
use crate::engine::clock::parse_rfc3339;
use crate::engine::{parse_exit_in, Engine, ExitSource, ToolContext, ToolStatus, Update, UsageScope};
use crate::event::{Outcome, Piece, Role, SessionStarted, Stream, ToolKind, ToolStarted};
use crate::provider::errors::provider_error;

/// Codex rollouts under `~/.codex/sessions/`.
pub(super) const DIALECT: Dialect = Dialect {
    name: "codex-rollout",
    about: "Codex session rollouts (~/.codex/sessions/…/rollout-*.jsonl)",
    family: "codex-rollout",
    opens: &["session_meta"],
    claim,
    parser: || Box::new(ReadOnce::<Rollout>::default()),
};

/// The record types of a rollout.
const KNOWN: [&str; 7] =
    ["session_meta", "event_msg", "response_item", "turn_context", "world_state", "token_usage_record", "compacted"];

/// A rollout's alone: a `timestamp` and a `payload` object beside one of its record types
/// (the `exec --json` stream's types are dotted and carry no payload).
fn claim(p: &Probe) -> Claim {
    let envelope = p.str("timestamp").is_some() && p.get("payload").is_some_and(Value::is_object);
    super::dialect::claim(envelope && p.kind().is_some_and(|t| KNOWN.contains(&t)), false)
}

/// The provider name of the sessions, the same as the stream's.
const PROVIDER: &str = "codex";

/// The rollout parser.
#[derive(Debug, Default)]
pub struct Rollout {
    /// The session's start, held from `session_meta` until the first `turn_context` names
    /// the model (or something else needs the session).
    pending: Option<(Option<String>, SessionStarted)>,
    /// A `task_started` whose turn opens with its prompt, the next user message.
    turn_pending: bool,
    /// `token_usage_record`s were seen: the `token_count` totals repeat them.
    usage_records: bool,
}

#[derive(Deserialize)]
struct Envelope {
    timestamp: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    payload: Value,
}

#[derive(Deserialize)]
struct SessionMeta {
    id: Option<String>,
    session_id: Option<String>,
    cwd: Option<String>,
    cli_version: Option<String>,
    git: Option<GitInfo>,
}

#[derive(Deserialize)]
struct GitInfo {
    branch: Option<String>,
}

#[derive(Deserialize)]
struct TurnContext {
    cwd: Option<String>,
    model: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum EventMsg {
    TaskStarted {},
    TaskComplete {
        duration_ms: Option<u64>,
    },
    TurnAborted {
        reason: Option<String>,
    },
    ItemCompleted {
        item: Map<String, Value>,
    },
    TokenCount {
        info: Option<TokenInfo>,
    },
    Error {
        message: String,
    },
    ContextCompacted {},
    /// Settings the `turn_context` beside it states too.
    ThreadSettingsApplied {},
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct TokenInfo {
    total_token_usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ResponseItem {
    FunctionCall {
        name: String,
        #[serde(default)]
        arguments: String,
        call_id: String,
    },
    CustomToolCall {
        name: String,
        #[serde(default)]
        input: String,
        call_id: String,
    },
    FunctionCallOutput {
        call_id: String,
        output: Value,
    },
    CustomToolCallOutput {
        call_id: String,
        output: Value,
    },
    /// Messages and reasoning: the typed items say the same, once.
    Message {},
    Reasoning {},
    #[serde(other)]
    Unknown,
}

/// A typed item of `event_msg/item_completed`.
#[derive(Deserialize)]
#[serde(tag = "type")]
enum Item {
    UserMessage {
        #[serde(default)]
        content: Vec<Content>,
    },
    AgentMessage {
        #[serde(default)]
        content: Vec<Content>,
    },
    Reasoning {
        #[serde(default)]
        content: Vec<Content>,
    },
    CommandExecution {
        id: String,
        #[serde(default)]
        command: Vec<String>,
        status: Option<String>,
        #[serde(default)]
        aggregated_output: String,
        exit_code: Option<i64>,
    },
    FileChange {
        id: String,
        #[serde(default)]
        changes: Map<String, Value>,
        status: Option<String>,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
struct TokenUsageRecord {
    usage: WireUsage,
}

#[derive(Deserialize)]
struct Compacted {
    trigger: Option<String>,
}

impl Parse for Rollout {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let env: Envelope = serde_json::from_str(line).map_err(|e| LineError::classify(line, e, &KNOWN))?;
        if let Some(ms) = env.timestamp.as_deref().and_then(parse_rfc3339) {
            engine.set_time(ms);
        }
        let shape = LineError::Shape;
        let body = env.payload;
        match env.kind.as_str() {
            "session_meta" => {
                let m: SessionMeta = serde_json::from_value(body).map_err(shape)?;
                let info = SessionStarted {
                    provider: PROVIDER.into(),
                    provider_version: m.cli_version,
                    cwd: m.cwd,
                    git_branch: m.git.and_then(|g| g.branch),
                    ..Default::default()
                };
                self.pending = Some((m.id.or(m.session_id), info));
            }
            "turn_context" => {
                let c: TurnContext = serde_json::from_value(body).map_err(shape)?;
                if let Some((_, info)) = &mut self.pending {
                    info.model = info.model.take().or(c.model);
                    info.cwd = info.cwd.take().or(c.cwd);
                }
                self.start_session(engine);
            }
            "event_msg" => {
                let m: EventMsg = serde_json::from_value(body).map_err(shape)?;
                return self.event(m, line, engine);
            }
            "response_item" => {
                let r: ResponseItem = serde_json::from_value(body).map_err(shape)?;
                return self.response_item(r, line, engine);
            }
            "token_usage_record" => {
                let r: TokenUsageRecord = serde_json::from_value(body).map_err(shape)?;
                self.usage_records = true;
                self.start_session(engine);
                engine.usage(r.usage.canonical(), UsageScope::Increment);
            }
            "compacted" => {
                let c: Compacted = serde_json::from_value(body).map_err(shape)?;
                self.enter(engine);
                engine.compacted(c.trigger.unwrap_or_else(|| "unspecified".into()));
            }
            // The environment snapshot: the turn context states what the model keeps of it.
            "world_state" => {}
            _ => return Err(LineError::unknown_type_of(line)),
        }
        Ok(())
    }

    /// A `task_started` whose prompt never came is a turn all the same, cut short; a
    /// `session_meta` with nothing after it is a session all the same, cut before its turn.
    fn finish(&mut self, engine: &mut Engine) {
        if self.turn_pending {
            self.enter(engine);
        } else if self.pending.is_some() {
            self.start_session(engine);
        }
    }
}

impl Rollout {
    fn event(&mut self, m: EventMsg, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        match m {
            EventMsg::TaskStarted {} => {
                // The session starts at the turn context, which names the model.
                if engine.turn_is_open() {
                    // The invocation before never said it completed.
                    engine.turn_ended(Outcome::Interrupted, None, None);
                }
                self.turn_pending = true;
            }
            EventMsg::TaskComplete { duration_ms } => {
                self.enter(engine);
                if let Some(ms) = duration_ms {
                    engine.set_turn_duration(ms);
                }
                engine.turn_ended(Outcome::Completed, None, None);
            }
            EventMsg::TurnAborted { reason } => {
                self.enter(engine);
                // `interrupted` is the user stopping the turn; the others (`replaced`,
                // `review_ended`) end it before it finished.
                let outcome = if reason.as_deref() == Some("interrupted") { Outcome::Cancelled } else { Outcome::Interrupted };
                engine.turn_ended(outcome, reason, None);
            }
            EventMsg::Error { message } => {
                self.enter(engine);
                engine.turn_ended(Outcome::Failed, None, Some(provider_error(&message, None)));
            }
            EventMsg::ItemCompleted { item } => {
                let item: Item = serde_json::from_value(Value::Object(item)).map_err(LineError::Shape)?;
                return self.item(item, line, engine);
            }
            EventMsg::TokenCount { info } => {
                // Older rollouts have no usage records: their running total is the usage.
                if let Some(total) = info.and_then(|i| i.total_token_usage).filter(|_| !self.usage_records) {
                    self.start_session(engine);
                    engine.usage(total.canonical(), UsageScope::Total);
                }
            }
            EventMsg::ContextCompacted {} => {
                self.enter(engine);
                engine.compacted("unspecified".into());
            }
            EventMsg::ThreadSettingsApplied {} => {}
            EventMsg::Unknown => return Err(LineError::UnknownType(format!("event_msg/{}", sub_type(line)))),
        }
        Ok(())
    }

    fn response_item(&mut self, r: ResponseItem, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        match r {
            ResponseItem::FunctionCall { name, arguments, call_id } => {
                self.enter(engine);
                let args: Option<Value> = serde_json::from_str(&arguments).ok();
                call_started(engine, &call_id, &name, args);
            }
            ResponseItem::CustomToolCall { name, input, call_id } => {
                self.enter(engine);
                call_started(engine, &call_id, &name, Some(Value::String(input)));
            }
            ResponseItem::FunctionCallOutput { call_id, output }
            | ResponseItem::CustomToolCallOutput { call_id, output } => {
                // A call its typed item ended is told; the rest end at what the model saw.
                if engine.tool_is_open(&call_id) {
                    let text = match output {
                        Value::String(s) => s,
                        other => other.get("content").and_then(Value::as_str).map_or_else(|| other.to_string(), str::to_owned),
                    };
                    if let Some(code) = parse_exit_in(&text) {
                        engine.tool_exit(&call_id, ExitSource::ParsedText, code);
                    }
                    engine.tool_output(&call_id, Stream::Combined, Update::Final, &text);
                    engine.tool_ended(&call_id, ToolStatus::Completed, None);
                }
            }
            ResponseItem::Message {} | ResponseItem::Reasoning {} => {}
            ResponseItem::Unknown => return Err(LineError::UnknownType(format!("response_item/{}", sub_type(line)))),
        }
        Ok(())
    }

    fn item(&mut self, item: Item, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        match item {
            Item::UserMessage { content } => {
                let text = joined(content);
                self.start_session(engine);
                if std::mem::take(&mut self.turn_pending) || !engine.turn_is_open() {
                    engine.turn_started(Some(text));
                } else {
                    engine.text(Role::User, text, Piece::First, None);
                }
            }
            Item::AgentMessage { content } => {
                self.enter(engine);
                engine.text(Role::Assistant, joined(content), Piece::First, None);
            }
            Item::Reasoning { content } => {
                self.enter(engine);
                engine.reasoning(joined(content), Piece::First, None);
            }
            Item::CommandExecution { id, command, status, aggregated_output, exit_code } => {
                self.enter(engine);
                let command = command.last().map(|c| unwrap_shell(c));
                start(engine, &id, "shell", ToolKind::Shell, None, command, None);
                engine.tool_output(&id, Stream::Combined, Update::Final, &aggregated_output);
                if let Some(code) = exit_code {
                    engine.tool_exit(&id, ExitSource::Structured, code);
                }
                ended(engine, &id, end_of(status.as_deref()));
            }
            Item::FileChange { id, changes, status } => {
                self.enter(engine);
                start(engine, &id, "apply_patch", ToolKind::Edit, changes.keys().next().cloned(), None, None);
                let end = end_of(status.as_deref());
                if end == Ok(ToolStatus::Completed) {
                    for (path, change) in changes {
                        let kind = change.get("type").and_then(Value::as_str).unwrap_or("update");
                        engine.file_changed(path, change_of(kind), Some(id.clone()));
                    }
                }
                ended(engine, &id, end);
            }
            Item::Unknown => return Err(LineError::UnknownType(format!("item_completed/{}", item_type(line)))),
        }
        Ok(())
    }

    /// Emits the session's start, if it is still held.
    fn start_session(&mut self, engine: &mut Engine) {
        match self.pending.take() {
            Some((id, info)) => engine.session_started(id.as_deref(), info),
            None => engine.enter_session(None, PROVIDER),
        }
    }

    /// Makes sure the session and a turn are open: a `task_started` whose prompt never came
    /// opens its turn without one.
    fn enter(&mut self, engine: &mut Engine) {
        self.start_session(engine);
        if std::mem::take(&mut self.turn_pending) {
            engine.turn_started(None);
        }
        engine.ensure_turn();
    }
}

/// Announces a model's call to tool `name`: Codex's shell takes its command as `cmd`, and is
/// named `shell` as `exec --json` names its command executions.
fn call_started(engine: &mut Engine, id: &str, name: &str, args: Option<Value>) {
    let (name, kind) = match name {
        "exec_command" | "shell" | "local_shell" | "container.exec" => ("shell", ToolKind::Shell),
        "write_stdin" => (name, ToolKind::Shell),
        "apply_patch" => (name, ToolKind::Edit),
        "view_image" => (name, ToolKind::Read),
        "web_search" | "tool_search" => (name, ToolKind::Search),
        n if n.starts_with("mcp__") => (name, ToolKind::Mcp),
        _ => (name, ToolKind::Other),
    };
    let command = match args.as_ref().and_then(|a| a.get("cmd").or_else(|| a.get("command"))) {
        Some(Value::String(s)) => Some(unwrap_shell(s)),
        Some(Value::Array(parts)) => parts.last().and_then(Value::as_str).map(unwrap_shell),
        _ => None,
    };
    let command = command.filter(|_| kind == ToolKind::Shell);
    let cwd = args.as_ref().and_then(|a| a.get("workdir")?.as_str()).map(str::to_owned);
    let target = if kind == ToolKind::Shell { None } else { super::tool_args::target(args.as_ref()) };
    let started = ToolStarted { target, input: args, command, cwd, ..call(id, name, kind) };
    engine.tool_started(started, ToolContext::default());
}

fn joined(content: Vec<Content>) -> String {
    content.into_iter().map(|c| c.text).collect()
}

/// The `payload.type` of a line, for naming what is unknown.
fn sub_type(line: &str) -> String {
    serde_json::from_str::<Value>(line)
        .ok()
        .and_then(|v| v.pointer("/payload/type")?.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The `payload.item.type` of an `item_completed` line.
fn item_type(line: &str) -> String {
    serde_json::from_str::<Value>(line)
        .ok()
        .and_then(|v| v.pointer("/payload/item/type")?.as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollout_records_are_claimed_and_the_stream_is_not() {
        let claim_of = |l: &str| claim(&Probe::parse(l).unwrap());
        assert_eq!(claim_of(r#"{"timestamp":"t","ordinal":0,"type":"session_meta","payload":{"id":"x"}}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"timestamp":"t","type":"event_msg","payload":{"type":"task_started"}}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"thread.started","thread_id":"x"}"#), Claim::No);
        assert_eq!(claim_of(r#"{"type":"event_msg","payload":"x","timestamp":"t"}"#), Claim::No);
    }
}
