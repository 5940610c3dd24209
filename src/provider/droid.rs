//! Factory droid `exec -o stream-json`: a `system/init` in Claude Code's shape, then
//! `message` (the user's prompt, then each assistant message whole), `tool_call` /
//! `tool_result` pairs, and a closing `completion` with the run's figures, or an `error`
//! when the run stopped early. Timestamps are epoch milliseconds.
//!
//! A command's exit status is said only in its result text: `Error: Command failed (exit
//! code: N)` opens a failed one, `[Process exited with code N]` closes every one; both are
//! metadata and removed from the output. A call refused for want of autonomy says
//! `insufficient permission` in its error, and the run then ends with an `error` line.

use serde::Deserialize;
use serde_json::Value;

use super::tool_args::{target, ToolNames};
use super::usage::AnthropicUsage;
use super::{Claim, Dialect, LineError, Parse, Probe};
use crate::engine::{parse_exit_in, Engine, ExitSource, ToolContext, ToolStatus, Update, UsageScope};
use crate::event::{ErrorCategory, ErrorInfo, FileChange, Outcome, Piece, Role, SessionStarted, Stream, ToolKind};
use crate::provider::errors::provider_error;

/// Factory droid `exec --output-format stream-json`.
pub(super) const DIALECT: Dialect = Dialect {
    name: "droid",
    about: "Factory droid exec --output-format stream-json",
    family: "droid",
    opens: &["system"],
    claim,
    parser: || Box::new(Droid::default()),
};

/// Droid's alone: its init's `reasoning_effort`, and its own line types with their fields
/// (`toolId` on tool lines, a `role` and `text` on messages, `numTurns` on `completion`).
fn claim(p: &Probe) -> Claim {
    let session = p.str("session_id").is_some();
    let own = match p.kind() {
        Some("system") => p.str("subtype") == Some("init") && p.has("reasoning_effort"),
        Some("message") => p.str("role").is_some() && p.str("text").is_some(),
        Some("tool_call" | "tool_result") => p.has("toolId"),
        Some("completion") => p.has("finalText") || p.has("numTurns"),
        Some("error") => p.str("source").is_some() && p.str("message").is_some(),
        _ => false,
    };
    super::dialect::claim(session && own, false)
}

/// The provider name of droid's sessions.
pub(super) const PROVIDER: &str = "droid";

const NAMES: ToolNames = ToolNames {
    provider: "droid",
    kinds: &[
        ("Execute", ToolKind::Shell),
        ("Read", ToolKind::Read),
        ("LS", ToolKind::Search),
        ("Grep", ToolKind::Search),
        ("Glob", ToolKind::Search),
        ("WebSearch", ToolKind::Search),
        ("Edit", ToolKind::Edit),
        ("MultiEdit", ToolKind::Edit),
        ("Create", ToolKind::Edit),
        ("ApplyPatch", ToolKind::Edit),
        ("FetchUrl", ToolKind::Fetch),
        ("Task", ToolKind::Agent),
    ],
    mcp_separator: "___",
};

/// What closes every command result.
const EXITED: &str = "[Process exited with code ";
/// What opens a failed command's result.
const FAILED: &str = "Error: Command failed (exit code: ";

/// The droid parser.
#[derive(Debug, Default)]
pub struct Droid {
    /// Edit calls still open, with the file they change and whether they create it.
    edits: Vec<(String, String, FileChange)>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Wire {
    System {
        subtype: String,
        session_id: Option<String>,
        cwd: Option<String>,
        model: Option<String>,
        tools: Option<Vec<String>>,
    },
    Message {
        role: String,
        #[serde(default)]
        text: String,
        timestamp: Option<i64>,
        session_id: Option<String>,
    },
    ToolCall {
        id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
        parameters: Option<Value>,
        timestamp: Option<i64>,
        session_id: Option<String>,
    },
    ToolResult {
        id: String,
        #[serde(rename = "isError", default)]
        is_error: bool,
        value: Option<Value>,
        error: Option<WireError>,
        timestamp: Option<i64>,
        session_id: Option<String>,
    },
    Completion {
        #[serde(rename = "durationMs")]
        duration_ms: Option<u64>,
        usage: Option<AnthropicUsage>,
        timestamp: Option<i64>,
        session_id: Option<String>,
    },
    Error {
        message: String,
        timestamp: Option<i64>,
        session_id: Option<String>,
    },
}

#[derive(Deserialize)]
struct WireError {
    message: Option<String>,
}

const TYPES: [&str; 6] = ["system", "message", "tool_call", "tool_result", "completion", "error"];

impl Parse for Droid {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let wire: Wire = serde_json::from_str(line).map_err(|e| LineError::classify(line, e, &TYPES))?;
        match wire {
            Wire::System { subtype, session_id, cwd, model, tools } => {
                if subtype != "init" {
                    return Err(LineError::UnknownType(format!("system/{subtype}")));
                }
                let info = SessionStarted { provider: PROVIDER.into(), model, cwd, tools, ..Default::default() };
                engine.session_started(session_id.as_deref(), info);
            }
            Wire::Message { role, text, timestamp, session_id } => {
                enter(engine, session_id.as_deref(), timestamp);
                match role.as_str() {
                    "user" => engine.turn_started(Some(text)),
                    _ => {
                        engine.ensure_turn();
                        engine.text(Role::Assistant, text, Piece::First, None);
                    }
                }
            }
            Wire::ToolCall { id, tool_name, parameters, timestamp, session_id } => {
                enter(engine, session_id.as_deref(), timestamp);
                engine.ensure_turn();
                self.tool_call(engine, &id, &tool_name, parameters);
            }
            Wire::ToolResult { id, is_error, value, error, timestamp, session_id } => {
                enter(engine, session_id.as_deref(), timestamp);
                let text = match (&value, &error) {
                    (Some(Value::String(s)), _) => s.clone(),
                    (Some(v), _) if !v.is_null() => v.to_string(),
                    (_, Some(e)) => e.message.clone().unwrap_or_default(),
                    _ => String::new(),
                };
                self.tool_result(engine, &id, is_error, text);
            }
            Wire::Completion { duration_ms, usage, timestamp, session_id } => {
                enter(engine, session_id.as_deref(), timestamp);
                engine.ensure_turn();
                if let Some(u) = usage {
                    engine.usage(u.canonical(), UsageScope::Total);
                }
                if let Some(ms) = duration_ms {
                    engine.set_turn_duration(ms);
                    engine.set_session_duration(ms);
                }
                engine.turn_ended(Outcome::Completed, None, None);
            }
            Wire::Error { message, timestamp, session_id } => {
                enter(engine, session_id.as_deref(), timestamp);
                engine.ensure_turn();
                let error = if message.contains("insufficient permission") {
                    denial(message)
                } else {
                    provider_error(&message, None)
                };
                engine.turn_ended(Outcome::Failed, None, Some(error));
            }
        }
        Ok(())
    }
}

impl Droid {
    /// The call `id` to `tool_name`; an edit's file is kept until its result says it worked.
    pub(super) fn tool_call(&mut self, engine: &mut Engine, id: &str, tool_name: &str, parameters: Option<Value>) {
        let change = match tool_name {
            "Create" => Some(FileChange::Add),
            name if NAMES.kind(name) == ToolKind::Edit => Some(FileChange::Update),
            _ => None,
        };
        if let (Some(change), Some(path)) = (change, target(parameters.as_ref())) {
            self.edits.push((id.to_owned(), path, change));
        }
        engine.tool_started(NAMES.started(id, tool_name, parameters), ToolContext::default());
    }

    /// The result of call `id`: its text, and whether droid marked it an error.
    pub(super) fn tool_result(&mut self, engine: &mut Engine, id: &str, is_error: bool, text: String) {
        let edit = self.edits.iter().position(|(call, ..)| call == id).map(|i| self.edits.swap_remove(i));
        if text.contains("insufficient permission") {
            return engine.tool_ended(id, ToolStatus::Denied, Some(denial(text)));
        }
        let output = command_output(&text);
        if let Some(code) = output.exit_code {
            engine.tool_exit(id, ExitSource::ParsedText, code);
        }
        engine.tool_output(id, Stream::Combined, Update::Final, output.text);
        if is_error {
            // A command that ran and failed is told by its exit code; anything else failed.
            let error = output.exit_code.is_none().then(|| ErrorInfo {
                category: ErrorCategory::ToolError,
                message: text.lines().next().unwrap_or_default().to_owned(),
                action: None,
            });
            return engine.tool_ended(id, ToolStatus::Failed, error);
        }
        if let Some((_, path, change)) = edit {
            engine.file_changed(path, change, Some(id.to_owned()));
        }
        engine.tool_ended(id, ToolStatus::Completed, None);
    }
}

/// Switches to the line's session (its start may be missing) and takes its time.
fn enter(engine: &mut Engine, session: Option<&str>, timestamp: Option<i64>) {
    if let Some(ms) = timestamp {
        engine.set_time(ms);
    }
    engine.enter_session(session, PROVIDER);
}

pub(super) fn denial(message: String) -> ErrorInfo {
    let action = Some("re-run with a higher --auto level, or allow the command in droid's settings".into());
    ErrorInfo { category: ErrorCategory::PermissionDenied, message, action }
}

/// A command result's output and exit status.
#[derive(Debug, PartialEq, Eq)]
struct CommandOutput<'a> {
    text: &'a str,
    exit_code: Option<i64>,
}

/// Splits droid's exit-status lines from a command result: the opening `Error: Command
/// failed (exit code: N)` and the closing `[Process exited with code N]` (and the blank
/// lines before it) are metadata.
fn command_output(text: &str) -> CommandOutput<'_> {
    let mut body = text;
    let mut exit_code = None;
    if let Some(i) = body.rfind(EXITED) {
        let status = &body[i..];
        if !status.trim_end().contains('\n') {
            exit_code = parse_exit_in(status);
            body = body[..i].trim_end_matches('\n');
        }
    }
    if body.starts_with(FAILED) {
        let (status, rest) = body.split_once('\n').unwrap_or((body, ""));
        exit_code = exit_code.or_else(|| parse_exit_in(status));
        body = rest;
    }
    CommandOutput { text: body, exit_code }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_status_lines_are_metadata() {
        let out = command_output("Error: Command failed (exit code: 4)\nline1\nline2\n\n\n[Process exited with code 4]");
        assert_eq!(out, CommandOutput { text: "line1\nline2", exit_code: Some(4) });
        let out = command_output("Command completed successfully\n\n[Process exited with code 0]");
        assert_eq!(out, CommandOutput { text: "Command completed successfully", exit_code: Some(0) });
        let out = command_output("no status here");
        assert_eq!(out, CommandOutput { text: "no status here", exit_code: None });
    }

    #[test]
    fn its_lines_are_claimed_and_claude_codes_are_not() {
        let claim_of = |l: &str| claim(&Probe::parse(l).unwrap());
        assert_eq!(claim_of(r#"{"type":"system","subtype":"init","session_id":"s","reasoning_effort":"none"}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"completion","finalText":"x","numTurns":1,"session_id":"s"}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2"}"#), Claim::No);
        assert_eq!(claim_of(r#"{"type":"message","role":"user","content":"x","timestamp":"t"}"#), Claim::No);
    }
}
