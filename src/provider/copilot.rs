//! GitHub Copilot CLI `-p … --output-format json`: every event is an envelope
//! `{type, data, id, timestamp, parentId}` (`ephemeral` on live-only ones), and the run ends
//! with a bare `result` carrying the session id, the process's `exitCode` and its figures.
//!
//! One prompt (`user.message`) is one turn: the `assistant.turn_start` / `turn_end` pairs
//! inside it are model calls, not turns. Text streams as `assistant.message_delta` and comes
//! again whole in `assistant.message`, which is skipped once streamed. A tool runs from
//! `tool.execution_start` to `tool.execution_complete`; a shell's live output is
//! `tool.shell_output` deltas, its exit code `shellExecution.exitCode`, and its final text
//! ends with a `<shellId: N completed with exit code N>` trailer that is metadata, not
//! output. `error.code: "denied"` is a refused permission.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::Value;

use super::tool_args::ToolNames;
use super::{Claim, Dialect, LineError, Parse, Probe};
use crate::engine::clock::parse_rfc3339;
use crate::engine::{Engine, ExitSource, ToolContext, ToolStatus, Update};
use crate::event::{ErrorCategory, ErrorInfo, FileChange, Outcome, Piece, Role, SessionStarted, Stream, ToolKind};
use crate::provider::errors::provider_error;

/// GitHub Copilot CLI `--output-format json`.
pub(super) const DIALECT: Dialect = Dialect {
    name: "copilot",
    about: "GitHub Copilot CLI -p --output-format json",
    family: "copilot",
    opens: &[],
    claim,
    parser: || Box::new(Copilot::default()),
};

/// Copilot's `{type, data, id}` envelope with a dotted type. The session files Copilot keeps
/// hold the same envelopes: only the stream's live-only events (`ephemeral`, the start-up
/// reports) and its closing `result` (with `exitCode` and a camel-case `sessionId`) are the
/// stream's alone.
fn claim(p: &Probe) -> Claim {
    let result = p.kind() == Some("result") && p.has("exitCode") && p.str("sessionId").is_some();
    let live = p.get("ephemeral").is_some_and(|e| e == true) || p.kind().is_some_and(|t| LIVE_ONLY.contains(&t));
    super::dialect::claim(result || (is_envelope(p) && live), is_envelope(p))
}

/// Events the stream prints before its first prompt and the session file never keeps.
const LIVE_ONLY: [&str; 3] = ["session.skills_loaded", "session.mcp_servers_loaded", "session.tools_updated"];

/// A Copilot event envelope: a dotted `type`, a `data` object and an `id`.
pub(super) fn is_envelope(p: &Probe) -> bool {
    p.kind().is_some_and(|t| t.contains('.')) && p.get("data").is_some_and(Value::is_object) && p.str("id").is_some()
}

/// The provider name of Copilot's sessions.
const PROVIDER: &str = "copilot";

const NAMES: ToolNames = ToolNames {
    provider: "copilot",
    kinds: &[
        ("bash", ToolKind::Shell),
        ("write_bash", ToolKind::Shell),
        ("read_bash", ToolKind::Shell),
        ("edit", ToolKind::Edit),
        ("create", ToolKind::Edit),
        ("str_replace_editor", ToolKind::Edit),
        ("view", ToolKind::Read),
        ("grep", ToolKind::Search),
        ("glob", ToolKind::Search),
        ("web_fetch", ToolKind::Fetch),
        ("task", ToolKind::Agent),
    ],
    mcp_separator: "-",
};

/// The Copilot CLI parser.
#[derive(Debug, Default)]
pub struct Copilot {
    /// Messages whose text already arrived as deltas.
    streamed: HashSet<String>,
    /// The last message begun has brought no text yet: its first text is the first piece of
    /// its block.
    first_pending: bool,
    /// Calls whose live output arrived as `tool.shell_output`: their cumulative
    /// `partialOutput` repeats it.
    shell_streamed: HashSet<String>,
}

/// One event (or the closing `result`).
#[derive(Deserialize)]
pub(super) struct Envelope {
    #[serde(rename = "type")]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) data: Value,
    pub(super) timestamp: Option<String>,
    #[serde(rename = "exitCode")]
    exit_code: Option<i64>,
    usage: Option<ResultUsage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultUsage {
    session_duration_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UserMessage {
    content: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Delta {
    message_id: Option<String>,
    delta_content: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    message_id: Option<String>,
    #[serde(default)]
    content: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Start {
    tool_call_id: String,
    tool_name: String,
    arguments: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ShellOutput {
    tool_call_id: String,
    stream: Option<String>,
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Partial {
    tool_call_id: String,
    #[serde(default)]
    partial_output: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Complete {
    tool_call_id: String,
    #[serde(default)]
    success: bool,
    shell_execution: Option<ShellExecution>,
    result: Option<ToolResult>,
    error: Option<ToolError>,
    #[serde(default)]
    file_edits: Vec<FileEdit>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ShellExecution {
    exit_code: Option<i64>,
}

#[derive(Deserialize)]
struct ToolResult {
    content: Option<String>,
}

#[derive(Deserialize)]
struct ToolError {
    message: Option<String>,
    code: Option<String>,
}

#[derive(Deserialize)]
struct FileEdit {
    path: String,
    kind: Option<String>,
}

#[derive(Deserialize)]
struct ToolsUpdated {
    model: Option<String>,
}

/// Types that only report progress the other events already tell (skills and servers
/// loaded, model calls, background-task bookkeeping, the tool-call argument stream).
const CHATTER: [&str; 12] = [
    "session.skills_loaded",
    "session.mcp_servers_loaded",
    "session.background_tasks_changed",
    "session.info",
    "assistant.turn_start",
    "assistant.turn_end",
    "assistant.message_start",
    "assistant.tool_call_delta",
    "assistant.idle",
    "model.call_start",
    "model.call_finished",
    "model.call_final_result",
];

impl Parse for Copilot {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let env: Envelope = serde_json::from_str(line).map_err(LineError::from_json)?;
        let shape = LineError::Shape;
        if let Some(ms) = env.timestamp.as_deref().and_then(parse_rfc3339) {
            engine.set_time(ms);
        }
        let body = env.data;
        match env.kind.as_str() {
            "session.tools_updated" => {
                let t: ToolsUpdated = serde_json::from_value(body).map_err(shape)?;
                start_session(engine, t.model);
            }
            "user.message" => {
                let m: UserMessage = serde_json::from_value(body).map_err(shape)?;
                start_session(engine, None);
                engine.turn_started(m.content);
            }
            "assistant.message_delta" => {
                let d: Delta = serde_json::from_value(body).map_err(shape)?;
                self.enter(engine);
                // A message's first delta that brings text begins its block: the message id
                // says which message a delta is of.
                self.first_pending |= d.message_id.is_some_and(|id| self.streamed.insert(id));
                let first = self.first_pending && !d.delta_content.is_empty();
                self.first_pending &= !first;
                let piece = if first { Piece::First } else { Piece::Next };
                engine.text(Role::Assistant, d.delta_content, piece, None);
            }
            "assistant.message" => {
                let m: Message = serde_json::from_value(body).map_err(shape)?;
                self.enter(engine);
                let streamed = m.message_id.as_ref().is_some_and(|id| self.streamed.remove(id));
                if !streamed && !m.content.is_empty() {
                    engine.text(Role::Assistant, m.content, Piece::First, None);
                }
            }
            "tool.execution_start" => {
                let s: Start = serde_json::from_value(body).map_err(shape)?;
                self.enter(engine);
                engine.tool_started(NAMES.started(&s.tool_call_id, &s.tool_name, s.arguments), ToolContext::default());
            }
            "tool.shell_output" => {
                let o: ShellOutput = serde_json::from_value(body).map_err(shape)?;
                let stream = if o.stream.as_deref() == Some("stderr") { Stream::Stderr } else { Stream::Stdout };
                self.shell_streamed.insert(o.tool_call_id.clone());
                engine.tool_output(&o.tool_call_id, stream, Update::Delta, &o.text);
            }
            "tool.execution_partial_result" => {
                let p: Partial = serde_json::from_value(body).map_err(shape)?;
                if !self.shell_streamed.contains(&p.tool_call_id) {
                    engine.tool_output(&p.tool_call_id, Stream::Combined, Update::Snapshot, &p.partial_output);
                }
            }
            "tool.execution_complete" => {
                let c: Complete = serde_json::from_value(body).map_err(shape)?;
                self.complete(engine, c);
            }
            "result" => {
                self.enter(engine);
                if let Some(ms) = env.usage.and_then(|u| u.session_duration_ms) {
                    engine.set_session_duration(ms);
                }
                match env.exit_code {
                    Some(0) | None => engine.turn_ended(Outcome::Completed, None, None),
                    Some(code) => {
                        let error = provider_error(&format!("Copilot CLI exited with code {code}"), None);
                        engine.turn_ended(Outcome::Failed, None, Some(error));
                    }
                }
            }
            kind if CHATTER.contains(&kind) => {}
            kind => return Err(LineError::UnknownType(kind.to_owned())),
        }
        Ok(())
    }
}

impl Copilot {
    /// Makes sure the session and a turn are open.
    fn enter(&self, engine: &mut Engine) {
        start_session(engine, None);
        engine.ensure_turn();
    }

    fn complete(&mut self, engine: &mut Engine, c: Complete) {
        let id = c.tool_call_id.as_str();
        self.shell_streamed.remove(id);
        if let Some(code) = c.shell_execution.and_then(|s| s.exit_code) {
            engine.tool_exit(id, ExitSource::Structured, code);
        }
        if let Some(text) = c.result.and_then(|r| r.content) {
            engine.tool_output(id, Stream::Combined, Update::Final, without_shell_trailer(&text));
        }
        let (status, error) = match c.error {
            Some(e) if e.code.as_deref() == Some("denied") => {
                let message = e.message.unwrap_or_else(|| "the permission was refused".into());
                let action = Some("allow the tool (--allow-tool, --allow-all-tools) or run interactively".into());
                (ToolStatus::Denied, Some(ErrorInfo { category: ErrorCategory::PermissionDenied, message, action }))
            }
            Some(e) => {
                let message = e.message.unwrap_or_else(|| "the tool failed".into());
                (ToolStatus::Failed, Some(ErrorInfo { category: ErrorCategory::ToolError, message, action: None }))
            }
            None if c.success => (ToolStatus::Completed, None),
            None => (ToolStatus::Failed, None),
        };
        if status == ToolStatus::Completed {
            for edit in c.file_edits {
                let change = if edit.kind.as_deref() == Some("create") { FileChange::Add } else { FileChange::Update };
                engine.file_changed(edit.path, change, Some(id.to_owned()));
            }
        }
        engine.tool_ended(id, status, error);
    }
}

/// Announces Copilot's session the first time (the id comes only with the closing `result`).
fn start_session(engine: &mut Engine, model: Option<String>) {
    if engine.session_id().is_none() {
        engine.session_started(None, SessionStarted { provider: PROVIDER.into(), model, ..Default::default() });
    }
}

/// A shell result without the `<shellId: N completed with exit code N>` line Copilot adds
/// for the model (its `--output-format json` and its ACP `rawOutput` alike): the exit code
/// is reported in a field of its own.
pub(super) fn without_shell_trailer(text: &str) -> &str {
    let body = text.trim_end_matches('\n');
    match body.rfind('\n').map_or((None, body), |i| (Some(i), &body[i + 1..])) {
        (at, last) if last.starts_with("<shellId: ") && last.ends_with('>') => match at {
            Some(i) => &text[..=i],
            None => "",
        },
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_trailer_is_removed_and_nothing_else() {
        assert_eq!(without_shell_trailer("line1\nline2\n<shellId: 0 completed with exit code 4>"), "line1\nline2\n");
        assert_eq!(without_shell_trailer("\n<shellId: 0 completed with exit code 0>"), "\n");
        assert_eq!(without_shell_trailer("<shellId: 3 completed with exit code 1>"), "");
        assert_eq!(without_shell_trailer("plain output\n"), "plain output\n");
        assert_eq!(without_shell_trailer("<shellId: 0> first\nthen more"), "<shellId: 0> first\nthen more");
    }

    #[test]
    fn the_envelope_and_the_closing_result_are_claimed() {
        let claim_of = |l: &str| claim(&Probe::parse(l).unwrap());
        assert_eq!(claim_of(r#"{"type":"assistant.idle","data":{},"id":"x","ephemeral":true}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"user.message","data":{},"id":"x","timestamp":"t"}"#), Claim::Maybe);
        assert_eq!(claim_of(r#"{"type":"result","sessionId":"s","exitCode":0}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"result","session_id":"s","subtype":"success"}"#), Claim::No);
        assert_eq!(claim_of(r#"{"type":"item.started","item":{},"id":"x"}"#), Claim::No);
    }
}
