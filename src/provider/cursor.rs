//! Cursor agent `cursor-agent -p --output-format stream-json`, as its output-format
//! documentation describes it (<https://cursor.com/docs/cli/reference/output-format>; no
//! recording: the CLI needs Cursor's service). Claude-like `system/init`, `user` and
//! `assistant` lines (one line per assistant message), `tool_call` lines with `subtype`
//! `started` and `completed` whose `tool_call` object has one key naming the tool
//! (`readToolCall`, `writeToolCall`, `shellToolCall`, …, or `function` for others) holding
//! its `args` and, once completed, its `result` (`success`, `failure` or `rejected`), and a
//! closing `result`.
//!
//! A shell result's `exitCode`, `stdout` and `stderr` are fields of their own (their shape
//! as community parsers of the stream report it; the documentation shows the read and write
//! tools).

use serde::Deserialize;
use serde_json::{Map, Value};

use super::tool_args::ToolNames;
use super::{Claim, Dialect, LineError, Parse, Probe};
use crate::engine::{Engine, ExitSource, ToolContext, ToolStatus, Update};
use crate::event::{ErrorCategory, ErrorInfo, FileChange, Outcome, Piece, Role, SessionStarted, Stream, ToolKind};
use crate::provider::errors::provider_error;

/// Cursor agent `--output-format stream-json`.
pub(super) const DIALECT: Dialect = Dialect {
    name: "cursor",
    about: "Cursor agent -p --output-format stream-json",
    family: "cursor",
    opens: &["system"],
    claim,
    parser: || Box::new(Cursor),
};

/// Surely Cursor's: `tool_call` with its `started` / `completed` subtypes. Its init (no tool
/// list, an `apiKeySource`) and its Claude-shaped messages (no `parent_tool_use_id`) are
/// only maybe its.
fn claim(p: &Probe) -> Claim {
    let session = p.str("session_id").is_some();
    match p.kind() {
        Some("tool_call") => {
            let subtype = matches!(p.str("subtype"), Some("started" | "completed"));
            super::dialect::claim(session && subtype && p.get("tool_call").is_some_and(Value::is_object), false)
        }
        Some("system") => {
            let init = p.str("subtype") == Some("init") && p.has("apiKeySource") && !p.has("tools");
            super::dialect::claim(false, session && init)
        }
        Some("user" | "assistant") => super::dialect::claim(false, session && !p.has("parent_tool_use_id")),
        Some("result") => super::dialect::claim(false, session && !p.has("num_turns")),
        _ => Claim::No,
    }
}

const PROVIDER: &str = "cursor";

const NAMES: ToolNames = ToolNames {
    provider: "cursor",
    kinds: &[
        ("shell", ToolKind::Shell),
        ("read", ToolKind::Read),
        ("write", ToolKind::Edit),
        ("edit", ToolKind::Edit),
        ("delete", ToolKind::Edit),
        ("grep", ToolKind::Search),
        ("glob", ToolKind::Search),
        ("ls", ToolKind::Search),
        ("semSearch", ToolKind::Search),
        ("mcp", ToolKind::Mcp),
    ],
    mcp_separator: "__",
};

/// The Cursor agent parser.
#[derive(Debug, Default)]
pub struct Cursor;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Wire {
    System {
        subtype: String,
        session_id: Option<String>,
        cwd: Option<String>,
        model: Option<String>,
    },
    User {
        message: Message,
        session_id: Option<String>,
    },
    Assistant {
        message: Message,
        session_id: Option<String>,
    },
    ToolCall {
        subtype: String,
        call_id: String,
        tool_call: Map<String, Value>,
        session_id: Option<String>,
    },
    Result {
        #[serde(default)]
        is_error: bool,
        subtype: Option<String>,
        result: Option<String>,
        duration_ms: Option<u64>,
        session_id: Option<String>,
    },
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Vec<Block>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: String,
}

impl Message {
    fn text(self) -> String {
        self.content.into_iter().filter(|b| b.kind == "text").map(|b| b.text).collect()
    }
}

const TYPES: [&str; 5] = ["system", "user", "assistant", "tool_call", "result"];

impl Parse for Cursor {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let wire: Wire = serde_json::from_str(line).map_err(|e| LineError::classify(line, e, &TYPES))?;
        match wire {
            Wire::System { subtype, session_id, cwd, model } => {
                if subtype != "init" {
                    return Err(LineError::UnknownType(format!("system/{subtype}")));
                }
                let info = SessionStarted { provider: PROVIDER.into(), model, cwd, ..Default::default() };
                engine.session_started(session_id.as_deref(), info);
            }
            Wire::User { message, session_id } => {
                engine.enter_session(session_id.as_deref(), PROVIDER);
                engine.turn_started(Some(message.text()));
            }
            Wire::Assistant { message, session_id } => {
                engine.enter_session(session_id.as_deref(), PROVIDER);
                engine.ensure_turn();
                engine.text(Role::Assistant, message.text(), Piece::Next, None);
            }
            Wire::ToolCall { subtype, call_id, tool_call, session_id } => {
                engine.enter_session(session_id.as_deref(), PROVIDER);
                engine.ensure_turn();
                let Some((key, call)) = tool_call.into_iter().next() else {
                    return Err(LineError::UnknownType("tool_call".into()));
                };
                let (name, args) = match key.as_str() {
                    "function" => (
                        call.get("name").and_then(Value::as_str).unwrap_or("function").to_owned(),
                        call.get("arguments").cloned(),
                    ),
                    _ => (key.strip_suffix("ToolCall").unwrap_or(&key).to_owned(), call.get("args").cloned()),
                };
                match subtype.as_str() {
                    "started" => engine.tool_started(NAMES.started(&call_id, &name, args), ToolContext::default()),
                    "completed" => {
                        engine.tool_started(NAMES.started(&call_id, &name, args), ToolContext::default());
                        completed(engine, &call_id, &name, call.get("result"));
                    }
                    other => return Err(LineError::UnknownType(format!("tool_call/{other}"))),
                }
            }
            Wire::Result { is_error, subtype, result, duration_ms, session_id } => {
                engine.enter_session(session_id.as_deref(), PROVIDER);
                engine.ensure_turn();
                if let Some(ms) = duration_ms {
                    engine.set_turn_duration(ms);
                    engine.add_session_duration(ms);
                }
                if is_error || subtype.as_deref().is_some_and(|s| s != "success") {
                    let message = result.unwrap_or_else(|| "Cursor agent reported an error".into());
                    engine.turn_ended(Outcome::Failed, subtype, Some(provider_error(&message, None)));
                } else {
                    engine.turn_ended(Outcome::Completed, subtype, None);
                }
            }
        }
        Ok(())
    }
}


/// A completed call's `result`: `success`, `failure` (or `error`), or `rejected`.
fn completed(engine: &mut Engine, id: &str, name: &str, result: Option<&Value>) {
    let Some((outcome, body)) = result.and_then(Value::as_object).and_then(|r| r.iter().next()) else {
        return engine.tool_ended(id, ToolStatus::Completed, None);
    };
    let text = |k: &str| body.get(k).and_then(Value::as_str);
    if let Some(code) = body.get("exitCode").and_then(Value::as_i64) {
        engine.tool_exit(id, ExitSource::Structured, code);
    }
    for (key, stream) in [("stdout", Stream::Stdout), ("stderr", Stream::Stderr)] {
        if let Some(out) = text(key) {
            engine.tool_output(id, stream, Update::Final, out);
        }
    }
    if let Some(content) = text("content") {
        engine.tool_output(id, Stream::Combined, Update::Final, content);
    }
    let message = || text("error").or_else(|| text("reason")).or_else(|| body.as_str()).map(str::to_owned);
    match outcome.as_str() {
        "success" => {
            if NAMES.kind(name) == ToolKind::Edit {
                if let Some(path) = text("path") {
                    let change = match name {
                        "delete" => FileChange::Delete,
                        _ if body.get("linesCreated").is_some() => FileChange::Add,
                        _ => FileChange::Update,
                    };
                    engine.file_changed(path.to_owned(), change, Some(id.to_owned()));
                }
            }
            engine.tool_ended(id, ToolStatus::Completed, None);
        }
        "rejected" => {
            let message = message().unwrap_or_else(|| format!("{name} was rejected"));
            let action = Some("allow the tool in Cursor's CLI permissions, or run with --force".into());
            let error = ErrorInfo { category: ErrorCategory::PermissionDenied, message, action };
            engine.tool_ended(id, ToolStatus::Denied, Some(error));
        }
        _ => {
            let error = message().map(|message| ErrorInfo { category: ErrorCategory::ToolError, message, action: None });
            engine.tool_ended(id, ToolStatus::Failed, error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_calls_are_surely_cursors_and_claude_codes_lines_are_not_its() {
        let claim_of = |l: &str| claim(&Probe::parse(l).unwrap());
        let started = r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"readToolCall":{}},"session_id":"s"}"#;
        assert_eq!(claim_of(started), Claim::Yes);
        let init = r#"{"type":"system","subtype":"init","apiKeySource":"login","session_id":"s","model":"m"}"#;
        assert_eq!(claim_of(init), Claim::Maybe);
        let claude_init = r#"{"type":"system","subtype":"init","apiKeySource":"none","session_id":"s","tools":[]}"#;
        assert_eq!(claim_of(claude_init), Claim::No);
        let claude_text = r#"{"type":"assistant","message":{},"parent_tool_use_id":null,"session_id":"s"}"#;
        assert_eq!(claim_of(claude_text), Claim::No);
    }
}
