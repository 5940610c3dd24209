//! Claude Code `--output-format stream-json` (with or without `--include-partial-messages`),
//! and the streams printed in its shape (Qwen Code, Amp).
//!
//! `system/init` starts the session and its turn; each content block of an assistant message
//! arrives as its own `assistant` line; tool results come back in `user` lines, with a
//! structured `tool_use_result` and (2.1.3xx) `tool_result_meta` beside them; `result` ends
//! the turn. Structured fields are read first: `system/permission_denied` and a `reject`
//! permission decision are denials, `non_execution_kind` says a call never ran. Some facts
//! are only in text and are part of the dialect, read when no field says them: `Exit code N`
//! first in a failed Bash result, a blocked or not-granted permission, a rejected tool followed
//! by `[Request interrupted by user…]` (a cancellation, decided one line later), Qwen's
//! `Exit Code: N` block and `[Operation Cancelled]`.
//!
//! Background work (module `tasks`) outlives its turn. A process that wakes for it prints a
//! second `system/init` and `result` (`result_index` 1): the init, arriving while a turn is
//! open, announces the turn that starts when the open one's result arrives; figures of a
//! `result` count from the process's start, so each result adds what is new since the last.

mod result;
mod tasks;
mod tools;
mod wire;

use std::collections::HashMap;

use super::{LineError, Parse};
use crate::engine::clock::parse_rfc3339;
use crate::engine::{
    parse_exit_prefix, Engine, ExitSource, Recent, ToolStatus, Update,
};
use crate::event::{Decision, ErrorCategory, ErrorInfo, FileChange, Piece, Role, SessionStarted, Stream};
use crate::provider::errors::api_retry;
use result::Reported;
use tasks::Tasks;
use tools::{shell_block, tool_use};
use wire::{
    AssistantLine, Block, Content, Delta, StreamEvent, StreamLine,
    ToolUseResult, UserLine, Wire,
};

/// The most content blocks begun and waiting for their first delta that are remembered.
const BEGUN: usize = 16;

/// The Claude Code parser (also Qwen Code's).
#[derive(Debug)]
pub struct Claude {
    /// The provider a run is named after when its init does not say (it is missing).
    provider: &'static str,
    /// Recent messages whose text already arrived as partial deltas; their full blocks are
    /// skipped. The full message follows its deltas closely, so a few are enough.
    streamed: Recent,
    /// The message the current partial deltas belong to.
    streaming: Option<String>,
    /// Text and thinking blocks begun (`content_block_start`) whose first delta has not come,
    /// by the call they belong to (`None`: the main agent) and whether they are thinking:
    /// that delta is the first piece of its block. A few: blocks stream one after another.
    begun: Vec<(Option<String>, bool)>,
    /// A rejected tool whose meaning the next line decides: cancelled or denied.
    rejected: Option<String>,
    /// The user interrupted the run.
    interrupted: bool,
    /// File-editing tool calls still open, with the file they edit.
    edits: HashMap<String, String>,
    /// Calls that asked to run in the background (`run_in_background`).
    background: HashMap<String, ()>,
    tasks: Tasks,
    /// An init arrived while a turn was open: the process woke for background work, and its
    /// next turn starts when the open one ends.
    reentry: bool,
    /// The process's figures as of its last `result`, so the next adds only what is new.
    reported: Reported,
    /// Why the subscription refused requests, when a rate limit said so.
    rate_limited: Option<String>,
}

impl Claude {
    /// A parser that names runs without an init after `provider`.
    pub fn named(provider: &'static str) -> Claude {
        Claude {
            provider,
            streamed: Recent::new(16),
            streaming: None,
            begun: Vec::new(),
            rejected: None,
            interrupted: false,
            edits: HashMap::new(),
            background: HashMap::new(),
            tasks: Tasks::default(),
            reentry: false,
            reported: Reported::default(),
            rate_limited: None,
        }
    }
}

/// The name Claude Code's sessions give as their provider.
pub(super) const PROVIDER: &str = "claude-code";
/// Qwen Code's.
pub(super) const QWEN: &str = "qwen-code";
const REJECTED: &str = "The user doesn't want to proceed with this tool use";
const INTERRUPTED: &str = "[Request interrupted by user";
/// Qwen Code's result for a call the user cancelled.
const QWEN_CANCELLED: &str = "[Operation Cancelled]";
/// Qwen Code reports API errors as assistant text starting so.
const QWEN_API_ERROR: &str = "[API Error: ";

impl Parse for Claude {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        self.read(line, engine, Entry::Stream)
    }

    fn finish(&mut self, engine: &mut Engine) {
        if let Some(id) = self.rejected.take() {
            end_rejected(engine, &id, false);
        }
        self.tasks.finish(engine);
    }
}

/// How a line reaches the parser.
#[derive(Debug, Clone, Copy)]
pub(super) enum Entry<'a> {
    /// A line of the stream: it names its session, and opens a turn when none is open.
    Stream,
    /// A line a session-file reader hands on in the stream's shape: the reader keeps the
    /// sessions and turns. A subagent's own transcript names the call that spawned it.
    Transcript { parent: Option<&'a str> },
}

impl Claude {
    /// Reads one line of the stream's shapes.
    pub(super) fn read(&mut self, line: &str, engine: &mut Engine, entry: Entry<'_>) -> Result<(), LineError> {
        let wire = Wire::parse(line)?;
        if let Some(ts) = wire.timestamp().and_then(parse_rfc3339) {
            engine.set_time(ts);
        }
        if let Some(id) = self.rejected.take() {
            let cancelled = matches!(&wire, Wire::User(l) if l.message.content.texts().any(|t| t.starts_with(INTERRUPTED)));
            end_rejected(engine, &id, cancelled);
        }
        match wire {
            Wire::System(sys) => self.system(sys, engine)?,
            Wire::Assistant(mut l) => {
                self.arrive(engine, l.session_id.as_deref(), &mut l.parent_tool_use_id, entry);
                self.assistant(l, engine);
            }
            Wire::User(mut l) => {
                self.arrive(engine, l.session_id.as_deref(), &mut l.parent_tool_use_id, entry);
                self.user(l, engine);
            }
            Wire::Result(r) => self.result(r, engine),
            Wire::StreamEvent(l) => self.stream_event(l, engine),
            Wire::RateLimit(l) => self.rate_limit(l, engine),
        }
        Ok(())
    }

    /// A message line arrives: the stream's enters its session and turn; a transcript's
    /// subagent line takes the call that spawned it as its parent.
    fn arrive(&self, engine: &mut Engine, session: Option<&str>, parent: &mut Option<String>, entry: Entry<'_>) {
        match entry {
            Entry::Stream => self.enter(engine, session),
            Entry::Transcript { parent: Some(p) } => *parent = Some(p.to_owned()),
            Entry::Transcript { parent: None } => {}
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
    /// Switches to the line's session and makes sure a turn is open.
    fn enter(&self, engine: &mut Engine, session: Option<&str>) {
        if let Some(s) = session {
            engine.use_session(s, self.provider);
        }
        engine.ensure_turn();
    }

    fn system(&mut self, sys: Box<wire::System>, engine: &mut Engine) -> Result<(), LineError> {
        // A line names its session: logs of several runs merged line by line stay apart.
        if let Some(s) = sys.session_id.as_deref().filter(|_| sys.subtype != "init") {
            engine.use_known_session(s);
        }
        match sys.subtype.as_str() {
            "init" => {
                let version = match sys.qwen_code_version {
                    Some(v) => {
                        self.provider = QWEN;
                        Some(v)
                    }
                    None if sys.claude_code_version.is_some() => {
                        self.provider = PROVIDER;
                        sys.claude_code_version
                    }
                    None => None,
                };
                let provider = self.provider;
                let info = SessionStarted {
                    provider: provider.into(),
                    provider_version: version,
                    model: sys.model,
                    cwd: sys.cwd,
                    git_branch: None,
                    tools: sys.tools,
                    ..Default::default()
                };
                engine.session_started(sys.session_id.as_deref(), info);
                // An init during a turn is the process waking for background work: the turn
                // it announces starts when the open one's result ends it.
                if engine.turn_is_open() {
                    self.reentry = true;
                } else {
                    engine.turn_started(None);
                }
            }
            "permission_denied" => {
                if let Some(id) = sys.task.tool_use_id.as_deref() {
                    let message = sys.message.unwrap_or_else(|| "a permission rule refused the tool call".into());
                    engine.tool_ended(id, ToolStatus::Denied, Some(denial(self.provider, message)));
                }
            }
            "api_retry" => {
                let (message, category) = api_retry(sys.error_status, sys.attempt, sys.max_retries);
                engine.warning(message, category);
            }
            // Qwen Code asks the model again, its last answer kept or dropped (it does so to go
            // on past an answer cut at the output limit, and after a failed stream).
            "retry" if self.provider == QWEN => engine.warning("the agent asked the model again".into(), None),
            "compact_boundary" => {
                let reason = sys.compact_metadata.and_then(|m| m.trigger).unwrap_or_else(|| "auto".into());
                engine.compacted(reason);
            }
            "task_started" => self.tasks.started(sys.task()),
            "task_updated" => self.tasks.updated(sys.task()),
            "task_notification" => self.tasks.notified(sys.task(), engine),
            // Progress chatter: the tool events already tell the story.
            "status" | "task_progress" | "hook_started" | "hook_response" | "background_tasks_changed"
            | "thinking_tokens" => {}
            other => return Err(LineError::UnknownType(format!("system/{other}"))),
        }
        Ok(())
    }

    fn assistant(&mut self, l: AssistantLine, engine: &mut Engine) {
        let message = l.message;
        let parent = l.parent_tool_use_id;
        let streamed = message.id.as_ref().is_some_and(|id| self.streamed.contains(id));
        let synthetic = message.model.as_deref() == Some("<synthetic>");
        let category = match wire::is_output_limit(l.api_error.as_ref()) {
            true => ErrorCategory::BudgetExceeded,
            false => ErrorCategory::ProviderError,
        };
        for block in message.content.into_blocks() {
            match block {
                // API errors come as a made-up assistant message (Claude Code's model is
                // `<synthetic>`, Qwen's text says so); the `result` that follows fails the
                // turn, so this is a warning, not model text.
                Block::Text { text } if synthetic || text.starts_with(QWEN_API_ERROR) => {
                    engine.warning(text, Some(category.as_str().to_owned()));
                }
                Block::Text { text } if !streamed => engine.text(Role::Assistant, text, Piece::First, parent.clone()),
                Block::Thinking { thinking } if !streamed => engine.reasoning(thinking, Piece::First, parent.clone()),
                Block::ToolUse { id, name, input } => {
                    if tools::runs_in_background(&input) {
                        self.background.insert(id.clone(), ());
                    }
                    if let Some(path) = tool_use(engine, &id, name, input, parent.clone()) {
                        self.edits.insert(id, path);
                    }
                }
                _ => {}
            }
        }
    }

    fn user(&mut self, l: UserLine, engine: &mut Engine) {
        let mut result = l.tool_use_result;
        // Harness-injected messages (a compaction summary, a hook's note) are not the user's.
        let role = if l.is_synthetic { Role::System } else { Role::User };
        for block in l.message.content.into_blocks() {
            match block {
                Block::ToolResult { tool_use_id, content, is_error } => {
                    let meta = l.tool_result_meta.iter().find(|m| m.id.as_deref() == Some(tool_use_id.as_str()));
                    let never_ran = meta.and_then(|m| m.non_execution_kind.as_deref()).is_some();
                    let refused = meta
                        .and_then(|m| m.permission_decision.as_ref())
                        .or(l.permission_decision.as_ref())
                        .is_some_and(|d| d.decision.as_deref() == Some("reject"));
                    let said = Said { is_error, never_ran, refused };
                    self.tool_result(engine, &tool_use_id, content, said, result.take());
                }
                Block::Text { text } => {
                    if text.starts_with(INTERRUPTED) {
                        self.interrupted = true;
                    }
                    engine.text(role, text, Piece::First, l.parent_tool_use_id.clone());
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
        said: Said,
        structured: Option<ToolUseResult>,
    ) {
        let text = content.map(Content::joined).unwrap_or_default();
        if engine.tool_name(id).is_some_and(|n| tools::QUESTIONS.contains(&n)) {
            // The answer settles the question; refused or unanswered, it was declined.
            engine.approval_settled(id, if said.is_error { Decision::Declined } else { Decision::Answered });
        }
        let edited = self.edits.remove(id);
        if said.refused {
            return engine.tool_ended(id, ToolStatus::Denied, Some(denial(self.provider, first_line(&text).to_owned())));
        }
        if said.is_error && (said.never_ran || text.starts_with(REJECTED)) {
            // Rejected at the prompt: a cancellation if the next line says the run was
            // interrupted with it, else a denial.
            self.rejected = Some(id.to_owned());
            return;
        }
        if said.is_error && text.starts_with(QWEN_CANCELLED) {
            let error = ErrorInfo { category: ErrorCategory::Cancelled, message: text, action: None };
            return engine.tool_ended(id, ToolStatus::Cancelled, Some(error));
        }
        let mut body = text.as_str();
        if said.is_error {
            if let Some((code, rest)) = parse_exit_prefix(body) {
                engine.tool_exit(id, ExitSource::ParsedText, code);
                body = rest;
            }
        }
        let preview = body.starts_with("<persisted-output>");
        let background = self.background.remove(id).is_some() || self.tasks.is_running(id);
        match structured {
            Some(ToolUseResult::File { kind, file_path }) if !said.is_error => {
                let change = if kind.as_deref() == Some("create") { FileChange::Add } else { FileChange::Update };
                engine.tool_output(id, Stream::Combined, Update::Final, body);
                engine.file_changed(edited.unwrap_or(file_path), change, Some(id.to_owned()));
            }
            Some(ToolUseResult::Shell { stdout, stderr, persisted_output_path, interrupted, background_task_id })
                if !said.is_error =>
            {
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
                if background || background_task_id.is_some() {
                    return to_background(engine, id, body);
                }
            }
            Some(ToolUseResult::Async) if !said.is_error => return to_background(engine, id, body),
            _ => {
                if let Some(block) = shell_block(body) {
                    engine.tool_output(id, Stream::Combined, Update::Final, block.output);
                    if let Some(e) = block.error {
                        engine.tool_output(id, Stream::Stderr, Update::Final, e);
                    }
                    if let Some(code) = block.exit_code {
                        engine.tool_exit(id, ExitSource::ParsedText, code);
                    }
                } else {
                    let update = if preview { Update::Preview } else { Update::Final };
                    engine.tool_output(id, Stream::Combined, update, body);
                }
                if !said.is_error {
                    if background {
                        return to_background(engine, id, body);
                    }
                    if let Some(path) = edited {
                        // No structured result (Qwen): the call's own file, as it says.
                        let created = body.starts_with("Successfully created");
                        let change = if created { FileChange::Add } else { FileChange::Update };
                        engine.file_changed(path, change, Some(id.to_owned()));
                    }
                }
            }
        }
        let status = if !said.is_error {
            ToolStatus::Completed
        } else if is_permission_denial(body) {
            ToolStatus::Denied
        } else {
            ToolStatus::Failed
        };
        let error = (status == ToolStatus::Denied).then(|| denial(self.provider, first_line(body).to_owned()));
        engine.tool_ended(id, status, error);
    }

    /// Where a partial delta of `parent`'s text (or thinking) stands in its block: the first
    /// piece when its block's start is waiting for it.
    fn piece(&mut self, parent: &Option<String>, thinking: bool) -> Piece {
        match self.begun.iter().position(|(p, t)| p == parent && *t == thinking) {
            Some(at) => {
                self.begun.remove(at);
                Piece::First
            }
            None => Piece::Next,
        }
    }

    fn stream_event(&mut self, l: StreamLine, engine: &mut Engine) {
        let parent = l.parent_tool_use_id;
        match l.event {
            StreamEvent::MessageStart { message } => self.streaming = message.id,
            StreamEvent::ContentBlockStart { thinking: Some(thinking) } => {
                let block = (parent, thinking);
                if !self.begun.contains(&block) {
                    if self.begun.len() == BEGUN {
                        self.begun.remove(0);
                    }
                    self.begun.push(block);
                }
            }
            StreamEvent::ContentBlockStart { thinking: None } => {}
            StreamEvent::ContentBlockDelta { delta } => {
                engine.ensure_turn();
                if let Some(id) = &self.streaming {
                    self.streamed.insert(id);
                }
                match delta {
                    Delta::Text { text } if !text.is_empty() => {
                        let piece = self.piece(&parent, false);
                        engine.text(Role::Assistant, text, piece, parent);
                    }
                    Delta::Thinking { thinking } if !thinking.is_empty() => {
                        let piece = self.piece(&parent, true);
                        engine.reasoning(thinking, piece, parent);
                    }
                    _ => {}
                }
            }
            StreamEvent::Other => {}
        }
    }
}

/// A call's result that is only a launch receipt: the call goes on in the background.
fn to_background(engine: &mut Engine, id: &str, receipt: &str) {
    engine.tool_output(id, Stream::Combined, Update::Final, receipt);
    engine.tool_backgrounded(id);
}

/// What a `user` line says of one tool result besides its text.
#[derive(Debug, Clone, Copy)]
struct Said {
    is_error: bool,
    /// `tool_result_meta` says the call never ran.
    never_ran: bool,
    /// `tool_result_meta` says a permission rule refused it.
    refused: bool,
}

/// A permission's refusal, with where the user of `provider` (one of the agents this parser
/// reads) allows the call.
fn denial(provider: &str, message: String) -> ErrorInfo {
    let agent = match provider {
        QWEN => "Qwen Code",
        super::amp::PROVIDER => "Amp",
        _ => "Claude Code",
    };
    ErrorInfo {
        category: ErrorCategory::PermissionDenied,
        message,
        action: Some(format!("allow the tool or directory in {agent}'s permission settings, then re-run")),
    }
}

/// A tool result that says a permission refused the call: Claude Code's wordings, and Qwen
/// Code's for a call a deny rule matched (its transcript's telemetry keeps the same text).
pub(super) fn is_permission_denial(text: &str) -> bool {
    text.contains(" was blocked. ")
        || (text.contains("requested permissions to") && text.contains("haven't granted it"))
        || text.starts_with("Permission to use ")
        || text.contains(" invocation was denied by permission rules")
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

/// Claude Code's stream-json. Its init names `claude_code_version`; other agents print the
/// rest of its shapes too.
pub(super) const DIALECT: super::Dialect = super::Dialect {
    name: "claude",
    about: "Claude Code --output-format stream-json",
    family: "claude",
    opens: &["system"],
    claim,
    parser: || Box::new(Claude::named(PROVIDER)),
};

/// How sure Claude Code's dialect is of a line: only its init's version field is its alone;
/// the rest of its shapes (partial messages too) other agents print.
pub(super) fn claim(p: &super::Probe) -> super::Claim {
    use super::Claim;
    match p.kind() {
        // Qwen Code prints partial messages too.
        Some("stream_event") => Claim::Maybe,
        // Every Claude Code init lists its tools; an init without them (Cursor's) is not its.
        Some("system") if p.str("subtype") == Some("init") => {
            super::dialect::claim(p.has("claude_code_version"), p.has("tools"))
        }
        Some("system" | "assistant" | "user" | "result" | "rate_limit_event")
            if p.has("session_id") || p.has("message") =>
        {
            Claim::Maybe
        }
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
