//! Claude Code `--output-format stream-json` (with or without `--include-partial-messages`).
//!
//! `system/init` starts the session and its turn; each content block of an assistant message
//! arrives as its own `assistant` line; tool results come back in `user` lines, with a
//! structured `tool_use_result` beside them; `result` ends the turn. Some facts are only in
//! text and are part of the dialect: `Exit code N` first in a failed Bash result, a blocked
//! or not-granted permission, and a rejected tool followed by `[Request interrupted by user…]`
//! (a cancellation, decided one line later).

mod wire;

use std::collections::HashMap;

use serde_json::Value;

use super::{LineError, Parse};
use crate::engine::clock::parse_rfc3339;
use crate::engine::{
    parse_exit_prefix, provider_error, Engine, ExitSource, Recent, ToolContext, ToolStatus, Update, UsageScope,
};
use crate::event::{
    ErrorCategory, ErrorInfo, FileChange, Outcome, PlanEntry, PlanStatus, Role, SessionStarted, Stream, ToolKind,
    ToolStarted, Usage,
};
use wire::{Block, Content, Delta, Message, Result as WireResult, StreamEvent, ToolUseResult, Wire};

/// The Claude Code parser.
#[derive(Debug)]
pub struct Claude {
    /// Recent messages whose text already arrived as partial deltas; their full blocks are
    /// skipped. The full message follows its deltas closely, so a few are enough.
    streamed: Recent,
    /// The message the current partial deltas belong to.
    streaming: Option<String>,
    /// A rejected tool whose meaning the next line decides: cancelled or denied.
    rejected: Option<String>,
    /// The user interrupted the run.
    interrupted: bool,
    /// File-editing tool calls still open, with the file they edit.
    edits: HashMap<String, String>,
}

impl Default for Claude {
    fn default() -> Claude {
        Claude { streamed: Recent::new(16), streaming: None, rejected: None, interrupted: false, edits: HashMap::new() }
    }
}

/// The name Claude Code's sessions give as their provider.
const PROVIDER: &str = "claude-code";
const REJECTED: &str = "The user doesn't want to proceed with this tool use";
const INTERRUPTED: &str = "[Request interrupted by user";

impl Parse for Claude {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let wire = Wire::parse(line)?;
        if let Some(ts) = wire.timestamp().and_then(parse_rfc3339) {
            engine.set_time(ts);
        }
        if let Some(id) = self.rejected.take() {
            let cancelled = matches!(&wire, Wire::User { message, .. } if message.content.texts().any(|t| t.starts_with(INTERRUPTED)));
            end_rejected(engine, &id, cancelled);
        }
        match wire {
            Wire::System(sys) => self.system(sys, engine)?,
            Wire::Assistant { message, parent_tool_use_id, session_id } => {
                if let Some(s) = session_id.as_deref() {
                    engine.use_session(s, PROVIDER);
                }
                engine.ensure_turn();
                self.assistant(message, parent_tool_use_id, engine);
            }
            Wire::User { message, parent_tool_use_id, tool_use_result, session_id, .. } => {
                if let Some(s) = session_id.as_deref() {
                    engine.use_session(s, PROVIDER);
                }
                engine.ensure_turn();
                self.user(message, parent_tool_use_id, tool_use_result, engine);
            }
            Wire::Result(r) => self.result(r, engine),
            Wire::StreamEvent { event, parent_tool_use_id } => self.stream_event(event, parent_tool_use_id, engine),
        }
        Ok(())
    }

    fn finish(&mut self, engine: &mut Engine) {
        if let Some(id) = self.rejected.take() {
            end_rejected(engine, &id, false);
        }
    }
}

/// A tool the user rejected: cancelled when the run was interrupted with it, else denied.
fn end_rejected(engine: &mut Engine, id: &str, cancelled: bool) {
    let (status, category, message) = if cancelled {
        (ToolStatus::Cancelled, ErrorCategory::Cancelled, "the user interrupted the run at this tool call")
    } else {
        (ToolStatus::Denied, ErrorCategory::PermissionDenied, "the user rejected this tool call")
    };
    let error = ErrorInfo {
        category,
        message: message.into(),
        action: Some("re-run and approve the tool if it should run".into()),
    };
    engine.tool_ended(id, status, Some(error));
}

impl Claude {
    fn system(&mut self, sys: wire::System, engine: &mut Engine) -> Result<(), LineError> {
        match sys.subtype.as_str() {
            "init" => {
                let info = SessionStarted {
                    provider: PROVIDER.into(),
                    provider_version: sys.claude_code_version,
                    model: sys.model,
                    cwd: sys.cwd,
                    tools: sys.tools,
                };
                engine.session_started(sys.session_id.as_deref(), info);
                engine.turn_started(None);
            }
            "api_retry" => {
                let status = sys.error_status.map_or_else(String::new, |s| format!(" after HTTP {s}"));
                let attempt = match (sys.attempt, sys.max_retries) {
                    (Some(a), Some(m)) => format!(" (attempt {a} of {m})"),
                    _ => String::new(),
                };
                engine.warning(format!("retrying the API request{status}{attempt}"), Some("PROVIDER_ERROR".into()));
            }
            "compact_boundary" => {
                let reason = sys.compact_metadata.and_then(|m| m.trigger).unwrap_or_else(|| "auto".into());
                engine.compacted(reason);
            }
            // Progress chatter: the tool events already tell the story.
            "status"
            | "task_started"
            | "task_progress"
            | "task_updated"
            | "task_notification"
            | "hook_started"
            | "hook_response"
            | "background_tasks_changed"
            | "thinking_tokens" => {}
            other => return Err(LineError::UnknownType(format!("system/{other}"))),
        }
        Ok(())
    }

    fn assistant(&mut self, message: Message, parent: Option<String>, engine: &mut Engine) {
        let streamed = message.id.as_ref().is_some_and(|id| self.streamed.contains(id));
        let synthetic = message.model.as_deref() == Some("<synthetic>");
        for block in message.content.into_blocks() {
            match block {
                // Claude Code reports API errors as a made-up assistant message; the
                // `result` that follows fails the turn, so this is a warning, not model text.
                Block::Text { text } if synthetic => engine.warning(text, Some("PROVIDER_ERROR".into())),
                Block::Text { text } if !streamed => engine.text(Role::Assistant, text, parent.clone()),
                Block::Thinking { thinking } if !streamed => engine.reasoning(thinking, parent.clone()),
                Block::ToolUse { id, name, input } => {
                    if let Some(path) = tool_use(engine, &id, name, input, parent.clone()) {
                        self.edits.insert(id, path);
                    }
                }
                _ => {}
            }
        }
    }

    fn user(&mut self, message: Message, parent: Option<String>, result: Option<ToolUseResult>, engine: &mut Engine) {
        let mut result = result;
        for block in message.content.into_blocks() {
            match block {
                Block::ToolResult { tool_use_id, content, is_error } => {
                    self.tool_result(engine, &tool_use_id, content, is_error, result.take());
                }
                Block::Text { text } => {
                    if text.starts_with(INTERRUPTED) {
                        self.interrupted = true;
                    }
                    engine.text(Role::User, text, parent.clone());
                }
                _ => {}
            }
        }
    }

    fn tool_result(
        &mut self,
        engine: &mut Engine,
        id: &str,
        content: Option<Content>,
        is_error: bool,
        structured: Option<ToolUseResult>,
    ) {
        let text = content.map(Content::joined).unwrap_or_default();
        if is_error && text.starts_with(REJECTED) {
            self.rejected = Some(id.to_owned());
            return;
        }
        let mut body = text.as_str();
        if is_error {
            if let Some((code, rest)) = parse_exit_prefix(body) {
                engine.tool_exit(id, ExitSource::ParsedText, code);
                body = rest;
            }
        }
        let preview = body.starts_with("<persisted-output>");
        let edited = self.edits.remove(id);
        match structured {
            Some(ToolUseResult::File { kind, file_path }) if !is_error => {
                let change = if kind.as_deref() == Some("create") { FileChange::Add } else { FileChange::Update };
                engine.tool_output(id, Stream::Combined, Update::Final, body);
                engine.file_changed(edited.unwrap_or(file_path), change, Some(id.to_owned()));
            }
            Some(ToolUseResult::Shell { stdout, stderr, persisted_output_path, interrupted }) if !is_error => {
                engine.tool_output(id, Stream::Stdout, Update::Final, &stdout);
                if let Some(e) = stderr.filter(|e| !e.is_empty()) {
                    engine.tool_output(id, Stream::Stderr, Update::Final, &e);
                }
                if persisted_output_path.is_some() || preview {
                    engine.tool_truncated(id);
                }
                if interrupted {
                    engine.tool_ended(id, ToolStatus::Cancelled, None);
                    return;
                }
            }
            _ => {
                let update = if preview { Update::Preview } else { Update::Final };
                engine.tool_output(id, Stream::Combined, update, body);
            }
        }
        let status = if !is_error {
            ToolStatus::Completed
        } else if is_permission_denial(body) {
            ToolStatus::Denied
        } else {
            ToolStatus::Failed
        };
        let error = (status == ToolStatus::Denied).then(|| ErrorInfo {
            category: ErrorCategory::PermissionDenied,
            message: first_line(body).to_owned(),
            action: Some("allow the tool or directory in Claude Code's permission settings, then re-run".into()),
        });
        engine.tool_ended(id, status, error);
    }

    fn result(&mut self, r: WireResult, engine: &mut Engine) {
        if let Some(s) = r.session_id.as_deref() {
            engine.use_session(s, PROVIDER);
        }
        engine.ensure_turn();
        if let Some(u) = &r.usage {
            let usage = Usage {
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
                cache_read: u.cache_read_input_tokens,
                cache_write: u.cache_creation_input_tokens,
                cost_usd: r.total_cost_usd,
            };
            engine.usage(usage, UsageScope::Total);
        }
        for d in &r.permission_denials {
            engine.tool_ended(&d.tool_use_id, ToolStatus::Denied, None);
        }
        if let Some(ms) = r.duration_ms {
            engine.set_turn_duration(ms);
            engine.set_session_duration(ms);
        }
        let message = r.result.clone().unwrap_or_default();
        let (outcome, error) = match r.subtype.as_str() {
            _ if r.api_error_status.is_some() => (Outcome::Failed, Some(provider_error(&message, r.api_error_status))),
            "success" if !r.is_error => (Outcome::Completed, None),
            "error_during_execution" if self.interrupted => (Outcome::Cancelled, Some(cancelled())),
            "error_max_turns" => (
                Outcome::Failed,
                Some(limit(
                    ErrorCategory::MaxTurns,
                    "the agent reached its turn limit",
                    "raise --max-turns or split the task",
                )),
            ),
            "error_max_budget_usd" => (
                Outcome::Failed,
                Some(limit(
                    ErrorCategory::BudgetExceeded,
                    "the agent reached its budget",
                    "raise the budget or split the task",
                )),
            ),
            _ => {
                let msg = if message.is_empty() { format!("the run ended with {}", r.subtype) } else { message };
                (Outcome::Failed, Some(provider_error(&msg, None)))
            }
        };
        engine.turn_ended(outcome, r.stop_reason, error);
    }

    fn stream_event(&mut self, event: StreamEvent, parent: Option<String>, engine: &mut Engine) {
        match event {
            StreamEvent::MessageStart { message } => self.streaming = message.id,
            StreamEvent::ContentBlockDelta { delta } => {
                engine.ensure_turn();
                if let Some(id) = &self.streaming {
                    self.streamed.insert(id);
                }
                match delta {
                    Delta::Text { text } => engine.text(Role::Assistant, text, parent),
                    Delta::Thinking { thinking } => engine.reasoning(thinking, parent),
                    Delta::Other => {}
                }
            }
            StreamEvent::Other => {}
        }
    }
}

/// Announces a tool call; returns the file it edits, for edit tools.
fn tool_use(engine: &mut Engine, id: &str, name: String, input: Value, parent: Option<String>) -> Option<String> {
    let field = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_owned);
    let (kind, target, command) = match name.as_str() {
        "Bash" | "BashOutput" => (ToolKind::Shell, None, field("command")),
        "Edit" | "Write" | "MultiEdit" => (ToolKind::Edit, field("file_path"), None),
        "NotebookEdit" => (ToolKind::Edit, field("notebook_path"), None),
        "Read" => (ToolKind::Read, field("file_path"), None),
        "Grep" | "Glob" | "LS" => (ToolKind::Search, field("pattern").or_else(|| field("path")), None),
        "WebSearch" => (ToolKind::Search, field("query"), None),
        "WebFetch" => (ToolKind::Fetch, field("url"), None),
        "Task" | "Agent" => (ToolKind::Agent, field("description"), None),
        n if n.starts_with("mcp__") => (ToolKind::Mcp, None, None),
        _ => (ToolKind::Other, None, None),
    };
    if name == "TodoWrite" {
        if let Some(todos) = input.get("todos").and_then(Value::as_array) {
            engine.plan(todos.iter().filter_map(plan_entry).collect());
        }
    }
    let short = name.rsplit("__").next().unwrap_or(&name).to_owned();
    let edits = (kind == ToolKind::Edit).then(|| target.clone()).flatten();
    let started = ToolStarted {
        tool_call_id: id.to_owned(),
        name: short,
        qualified: name,
        kind,
        target,
        input: Some(input),
        command,
        cwd: None,
    };
    engine.tool_started(started, ToolContext { parent_id: parent });
    edits
}

fn plan_entry(todo: &Value) -> Option<PlanEntry> {
    let content = todo.get("content")?.as_str()?.to_owned();
    let status = match todo.get("status").and_then(Value::as_str) {
        Some("completed") => PlanStatus::Completed,
        Some("in_progress") => PlanStatus::InProgress,
        _ => PlanStatus::Pending,
    };
    Some(PlanEntry { content, status })
}

fn is_permission_denial(text: &str) -> bool {
    text.contains(" was blocked. ")
        || (text.contains("requested permissions to") && text.contains("haven't granted it"))
        || text.starts_with("Permission to use ")
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

fn cancelled() -> ErrorInfo {
    ErrorInfo {
        category: ErrorCategory::Cancelled,
        message: "the user interrupted the run".into(),
        action: Some("re-run the prompt to continue".into()),
    }
}

fn limit(category: ErrorCategory, message: &str, action: &str) -> ErrorInfo {
    ErrorInfo { category, message: message.into(), action: Some(action.into()) }
}


/// Claude Code's stream-json. Its init names `claude_code_version`, and `stream_event`
/// (partial messages) is its own; other agents print the rest of its shapes too.
pub(super) const DIALECT: super::Dialect = super::Dialect {
    name: "claude",
    about: "Claude Code --output-format stream-json",
    family: "claude",
    opens: &["system"],
    claim,
    parser: || Box::new(Claude::default()),
};

/// How sure Claude Code's dialect is of a line: only its version field and its partial
/// messages are its alone.
pub(super) fn claim(p: &super::Probe) -> super::Claim {
    use super::Claim;
    match p.kind() {
        Some("stream_event") => Claim::Yes,
        Some("system") if p.str("subtype") == Some("init") => {
            super::dialect::claim(p.has("claude_code_version"), true)
        }
        Some("system" | "assistant" | "user" | "result") if p.has("session_id") || p.has("message") => Claim::Maybe,
        _ => Claim::No,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_texts_are_denials() {
        assert!(is_permission_denial("touch in '/x' was blocked. For security, Claude Code may only …"));
        assert!(is_permission_denial("Claude requested permissions to write to /x, but you haven't granted it yet."));
        assert!(!is_permission_denial("Exit code 1\ngrep: blocked: no such file"));
    }
}
