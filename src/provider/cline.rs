//! Cline CLI `--json`: `hook_event` lines (`agent_start`, `tool_call`, `tool_result`,
//! `agent_end`), `agent_event` lines wrapping the agent loop's events, and one closing
//! `run_result` with the run's figures.
//!
//! One run is one turn, from the root agent's `agent_start` to `run_result`; the loop's
//! `iteration_start` / `iteration_end` are model calls within it. Text streams as
//! `content_start` pieces (`text` new, `accumulated` so far) and comes whole in
//! `content_end`, shown only for what the pieces did not. A tool runs from its
//! `content_start` to its `content_end`, with live output in `content_update`. The exit code
//! is said only in the text: `[Command exited with code N]` opens a command's result (that
//! line is metadata). A tool refused for want of an interactive approval says so only in its
//! error text (`requires approval`).

use serde::Deserialize;
use serde_json::Value;

use super::tool_args::ToolNames;
use super::{Claim, Dialect, LineError, Parse, Probe};
use crate::engine::clock::parse_rfc3339;
use crate::engine::{parse_exit_in, Engine, ExitSource, ToolContext, ToolStatus, Update, UsageScope};
use crate::event::{ErrorCategory, ErrorInfo, Outcome, Piece, Role, SessionStarted, Stream, ToolKind, Usage};
use crate::provider::errors::provider_error;

/// Cline CLI `--json`.
pub(super) const DIALECT: Dialect = Dialect {
    name: "cline",
    about: "Cline CLI --json",
    family: "cline",
    opens: &["hook_event"],
    claim,
    parser: || Box::new(Cline::default()),
};

/// Cline's alone: its three line types with the field each always has.
fn claim(p: &Probe) -> Claim {
    let own = match p.kind() {
        Some("hook_event") => p.str("hookEventName").is_some(),
        Some("agent_event") => p.at(&["event", "type"]).is_some_and(Value::is_string),
        Some("run_result") => p.has("finishReason"),
        _ => false,
    };
    super::dialect::claim(own, false)
}

const PROVIDER: &str = "cline";

const NAMES: ToolNames = ToolNames {
    provider: "cline",
    kinds: &[
        ("run_commands", ToolKind::Shell),
        ("execute_command", ToolKind::Shell),
        ("read_files", ToolKind::Read),
        ("read_file", ToolKind::Read),
        ("write_to_file", ToolKind::Edit),
        ("replace_in_file", ToolKind::Edit),
        ("editor", ToolKind::Edit),
        ("apply_patch", ToolKind::Edit),
        ("search_files", ToolKind::Search),
        ("list_files", ToolKind::Search),
        ("fetch_web_content", ToolKind::Fetch),
        ("use_mcp_tool", ToolKind::Mcp),
    ],
    mcp_separator: "__",
};

/// What opens a command's result: the exit status, as text.
const EXITED: &str = "[Command exited with code ";

/// The Cline CLI parser.
#[derive(Debug, Default)]
pub struct Cline {
    /// Text of the current block shown so far, so its whole repeat adds only what is new.
    streamed: String,
    /// The last error the loop could not recover from: it explains a failed run.
    fatal: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Wire {
    HookEvent {
        ts: Option<String>,
        #[serde(rename = "hookEventName")]
        hook: String,
        #[serde(rename = "taskId")]
        task_id: Option<String>,
        #[serde(rename = "parentAgentId")]
        parent: Option<String>,
    },
    AgentEvent {
        ts: Option<String>,
        event: Value,
    },
    RunResult {
        ts: Option<String>,
        #[serde(rename = "finishReason")]
        finish_reason: String,
        #[serde(rename = "aggregateUsage")]
        aggregate: Option<RunUsage>,
        usage: Option<RunUsage>,
        #[serde(rename = "durationMs")]
        duration_ms: Option<u64>,
        model: Option<Model>,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
    total_cost: Option<f64>,
}

#[derive(Deserialize)]
struct Model {
    id: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    ContentStart(Content),
    ContentUpdate(Content),
    ContentEnd(Content),
    Error {
        error: Option<ErrorBody>,
        #[serde(default)]
        recoverable: bool,
    },
    IterationStart,
    IterationEnd,
    Usage,
    Done,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Content {
    content_type: String,
    text: Option<String>,
    tool_name: Option<String>,
    tool_call_id: Option<String>,
    input: Option<Value>,
    update: Option<OutputChunk>,
    output: Option<Value>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct OutputChunk {
    stream: Option<String>,
    #[serde(default)]
    chunk: String,
}

#[derive(Deserialize)]
struct ErrorBody {
    message: Option<String>,
}

impl Parse for Cline {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let wire: Wire =
            serde_json::from_str(line).map_err(|e| LineError::classify(line, e, &["hook_event", "agent_event", "run_result"]))?;
        let ts = match &wire {
            Wire::HookEvent { ts, .. } | Wire::AgentEvent { ts, .. } | Wire::RunResult { ts, .. } => ts.as_deref(),
        };
        if let Some(ms) = ts.and_then(parse_rfc3339) {
            engine.set_time(ms);
        }
        match wire {
            Wire::HookEvent { hook, task_id, parent, .. } => {
                // A child agent's hooks: its events are not told apart from the parent's.
                if hook == "agent_start" && parent.is_none() {
                    let info = SessionStarted { provider: PROVIDER.into(), ..Default::default() };
                    engine.session_started(task_id.as_deref(), info);
                    engine.turn_started(None);
                }
            }
            Wire::AgentEvent { event, .. } => {
                let kind = event.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
                let event: Event =
                    serde_json::from_value(event).map_err(|_| LineError::UnknownType(format!("agent_event/{kind}")))?;
                self.event(event, engine)?;
            }
            Wire::RunResult { finish_reason, aggregate, usage, duration_ms, model, .. } => {
                self.enter(engine, model.and_then(|m| m.id));
                if let Some(u) = aggregate.or(usage) {
                    let usage = Usage {
                        input_tokens: u.input_tokens,
                        output_tokens: u.output_tokens,
                        cache_read: u.cache_read_tokens,
                        cache_write: u.cache_write_tokens,
                        cost_usd: u.total_cost,
                    };
                    engine.usage(usage, UsageScope::Total);
                }
                if let Some(ms) = duration_ms {
                    engine.set_turn_duration(ms);
                    engine.set_session_duration(ms);
                }
                let (outcome, error) = self.outcome(&finish_reason);
                engine.turn_ended(outcome, Some(finish_reason), error);
            }
        }
        Ok(())
    }
}

impl Cline {
    /// Makes sure the session and a turn are open (their start may be missing).
    fn enter(&self, engine: &mut Engine, model: Option<String>) {
        if engine.session_id().is_none() {
            engine.session_started(None, SessionStarted { provider: PROVIDER.into(), model, ..Default::default() });
        }
        engine.ensure_turn();
    }

    fn event(&mut self, event: Event, engine: &mut Engine) -> Result<(), LineError> {
        match event {
            Event::ContentStart(c) if c.content_type == "text" => {
                self.enter(engine, None);
                let text = c.text.unwrap_or_default();
                // A block streams as several `content_start`s, then its `content_end`: the
                // first piece is the first that brings text.
                let piece = if self.streamed.is_empty() { Piece::First } else { Piece::Next };
                self.streamed.push_str(&text);
                engine.text(Role::Assistant, text, piece, None);
            }
            Event::ContentEnd(c) if c.content_type == "text" => {
                self.enter(engine, None);
                let whole = c.text.unwrap_or_default();
                let seen = std::mem::take(&mut self.streamed);
                let rest = whole.strip_prefix(seen.as_str()).unwrap_or(&whole);
                if !rest.is_empty() {
                    let piece = if seen.is_empty() { Piece::First } else { Piece::Next };
                    engine.text(Role::Assistant, rest.to_owned(), piece, None);
                }
            }
            Event::ContentStart(c) if c.content_type == "tool" => {
                self.enter(engine, None);
                let (Some(id), Some(name)) = (c.tool_call_id, c.tool_name) else {
                    return Err(LineError::UnknownType("agent_event/content_start".into()));
                };
                let commands = c.input.as_ref().and_then(|i| i.get("commands")).and_then(Value::as_array).map(|a| {
                    a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n")
                });
                let mut started = NAMES.started(&id, &name, c.input);
                if started.command.is_none() && started.kind == ToolKind::Shell {
                    started.command = commands;
                }
                engine.tool_started(started, ToolContext::default());
            }
            Event::ContentUpdate(c) if c.content_type == "tool" => {
                if let (Some(id), Some(update)) = (c.tool_call_id, c.update) {
                    let stream = if update.stream.as_deref() == Some("stderr") { Stream::Stderr } else { Stream::Stdout };
                    engine.tool_output(&id, stream, Update::Delta, &update.chunk);
                }
            }
            Event::ContentEnd(c) if c.content_type == "tool" => {
                let Some(id) = c.tool_call_id else {
                    return Err(LineError::UnknownType("agent_event/content_end".into()));
                };
                tool_end(engine, &id, c.output, c.error);
            }
            Event::ContentStart(c) | Event::ContentUpdate(c) | Event::ContentEnd(c) => {
                return Err(LineError::UnknownType(format!("agent_event/content {}", c.content_type)));
            }
            Event::Error { error, recoverable } => {
                let message = error.and_then(|e| e.message).unwrap_or_else(|| "the agent reported an error".into());
                if recoverable {
                    engine.warning(message, None);
                } else {
                    engine.warning(message.clone(), Some(ErrorCategory::ProviderError.as_str().to_owned()));
                    self.fatal = Some(message);
                }
            }
            // Model calls and their figures within the run: `run_result` gives the totals.
            Event::IterationStart | Event::IterationEnd | Event::Usage | Event::Done => {}
        }
        Ok(())
    }

    /// How a run that finished for `reason` ended.
    fn outcome(&mut self, reason: &str) -> (Outcome, Option<ErrorInfo>) {
        match reason {
            "completed" => (Outcome::Completed, None),
            "aborted" | "cancelled" | "canceled" => {
                let error = ErrorInfo { category: ErrorCategory::Cancelled, message: "the run was cancelled".into(), action: None };
                (Outcome::Cancelled, Some(error))
            }
            "max_iterations" => {
                let message = "the agent reached its iteration limit".into();
                let action = Some("raise the iteration limit or split the task".into());
                (Outcome::Failed, Some(ErrorInfo { category: ErrorCategory::MaxTurns, message, action }))
            }
            other => {
                let message = self.fatal.take().unwrap_or_else(|| format!("the run ended with {other}"));
                (Outcome::Failed, Some(provider_error(&message, None)))
            }
        }
    }
}

/// A tool's `content_end`: its commands' results (each opening with its exit status), or
/// its error.
fn tool_end(engine: &mut Engine, id: &str, output: Option<Value>, error: Option<String>) {
    let mut texts = Vec::new();
    match &output {
        Some(Value::Array(items)) => {
            for item in items {
                let result = item.get("result").and_then(Value::as_str).unwrap_or_default();
                texts.push(match result.strip_prefix(EXITED) {
                    Some(_) => {
                        let (status, rest) = result.split_once('\n').unwrap_or((result, ""));
                        if let Some(code) = parse_exit_in(status) {
                            engine.tool_exit(id, ExitSource::ParsedText, code);
                        }
                        rest
                    }
                    None => result,
                });
            }
        }
        Some(Value::String(s)) => texts.push(s),
        _ => {}
    }
    if !texts.is_empty() {
        engine.tool_output(id, Stream::Combined, Update::Final, &texts.concat());
    }
    let refusal = output.as_ref().and_then(|o| o.get("error")).and_then(Value::as_str).map(str::to_owned);
    let (status, error) = match refusal.or(error) {
        Some(message) if message.contains("requires approval") => {
            let action = Some("approve the tool in a TTY session, or run with --auto-approve".into());
            (ToolStatus::Denied, Some(ErrorInfo { category: ErrorCategory::PermissionDenied, message, action }))
        }
        // A command's own failure is its exit code, already known.
        Some(_) if !texts.is_empty() => (ToolStatus::Completed, None),
        Some(message) => (ToolStatus::Failed, Some(ErrorInfo { category: ErrorCategory::ToolError, message, action: None })),
        None => (ToolStatus::Completed, None),
    };
    engine.tool_ended(id, status, error);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_three_line_types_are_claimed_and_look_alikes_are_not() {
        let claim_of = |l: &str| claim(&Probe::parse(l).unwrap());
        assert_eq!(claim_of(r#"{"type":"hook_event","hookEventName":"agent_start"}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"agent_event","event":{"type":"done"}}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"run_result","finishReason":"completed"}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"agent_event","event":"x"}"#), Claim::No);
        assert_eq!(claim_of(r#"{"type":"result","subtype":"success"}"#), Claim::No);
    }
}
