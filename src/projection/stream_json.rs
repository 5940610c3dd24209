//! `stream-json`: the run as Claude Code's `--output-format stream-json` would print it, so
//! a tool that reads Claude Code output can read any provider's run: `system/init` first,
//! `assistant` lines with text, thinking and `tool_use`, `user` lines with `tool_result`
//! (a failed shell command's result starts `Exit code N`, as Claude's does), a monotonic
//! `seq` on every line, and exactly one `result` last, even for empty input.

mod wire;

use std::collections::HashSet;
use std::io::{self, Write};
use std::ops::ControlFlow;

use self::wire::{
    claude_tool, Block, ClaudeUsage, Compact, Denial, Final, Inner, Kind, Line, Message, System, ToolUseResult,
};
use super::calls::{Call, Calls};
use super::{output_text, Flow, Projection};
use crate::event::{
    Body, ErrorCategory, ErrorInfo, Event, Outcome, Role, SessionStarted, Status, Summary, ToolEnded, Usage, Visibility,
};

/// Claude's words for a tool call the user rejected, and the line that follows it.
const REJECTED: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";
const INTERRUPTED: &str = "[Request interrupted by user for tool use]";
const INTERRUPTED_START: &str = "[Request interrupted by user";

/// The stream-json projection.
#[derive(Debug, Default)]
pub struct StreamJson {
    seq: u64,
    inited: HashSet<String>,
    calls: Calls,
    /// Number of the current assistant message, and whether the last line was one.
    message: u64,
    in_message: bool,
    model: Option<String>,
    /// The latest run of root assistant text: the run's `result`.
    answer: String,
    in_answer: bool,
    usage: Usage,
    turns: u64,
    denials: Vec<Denial>,
    last_session: Option<String>,
    last_error: Option<(Outcome, ErrorInfo)>,
    summary: Option<(Summary, Option<Status>, String)>,
    events: u64,
    interrupted: bool,
}

impl StreamJson {
    fn write(&mut self, out: &mut dyn Write, kind: Kind<'_>) -> io::Result<()> {
        self.seq += 1;
        self.in_message = matches!(kind, Kind::Assistant(_));
        serde_json::to_writer(&mut *out, &Line { kind, seq: self.seq })?;
        out.write_all(b"\n")
    }

    /// Writes `system/init` for a session the first time it is seen.
    fn init(&mut self, out: &mut dyn Write, session: &str, started: Option<&SessionStarted>) -> io::Result<()> {
        self.last_session = Some(session.to_owned());
        if !self.inited.insert(session.to_owned()) {
            return Ok(());
        }
        if let Some(m) = started.and_then(|s| s.model.clone()) {
            self.model = Some(m);
        }
        let tools = started.and_then(|s| s.tools.clone()).unwrap_or_default();
        let init = System::Init {
            session_id: session,
            cwd: started.and_then(|s| s.cwd.as_deref()),
            model: started.and_then(|s| s.model.as_deref()),
            tools: &tools,
            mcp_servers: [],
            provider: started.map(|s| s.provider.as_str()),
            provider_version: started.and_then(|s| s.provider_version.as_deref()),
        };
        self.write(out, Kind::System(init))
    }

    fn assistant(&mut self, out: &mut dyn Write, ev: &Event, block: Block<'_>) -> io::Result<()> {
        if !self.in_message {
            self.message += 1;
        }
        let model = self.model.clone();
        let inner = Inner {
            id: Some(format!("msg_{}", self.message)),
            kind: Some("message"),
            role: "assistant",
            model: model.as_deref(),
            content: vec![block],
        };
        self.write(out, Kind::Assistant(Message::new(ev, inner, None)))
    }

    fn user(
        &mut self,
        out: &mut dyn Write,
        ev: &Event,
        block: Block<'_>,
        side: Option<ToolUseResult>,
    ) -> io::Result<()> {
        let inner = Inner { id: None, kind: None, role: "user", model: None, content: vec![block] };
        self.write(out, Kind::User(Message::new(ev, inner, side)))
    }

    fn tool_ended(&mut self, out: &mut dyn Write, ev: &Event, t: &ToolEnded, call: Option<Call>) -> io::Result<()> {
        let (name, input) =
            call.as_ref().map_or_else(|| (t.name.clone(), serde_json::Value::Null), |c| claude_tool(&c.started));
        let shell = name == "Bash";
        let text = t.output.as_ref().map(output_text).unwrap_or_default();
        let why = t.error.as_ref().map(|e| e.message.as_str()).unwrap_or_default();
        let exit = t.output.as_ref().and_then(|o| o.exit_code);
        let (content, side) = match t.outcome {
            // Left unanswered, as Claude leaves a call the run never finished.
            Outcome::Interrupted => return Ok(()),
            Outcome::Completed => {
                let side = shell.then(|| {
                    let o = t.output.clone().unwrap_or_default();
                    ToolUseResult::Shell {
                        stdout: o.stdout.unwrap_or_default(),
                        stderr: o.stderr.unwrap_or_default(),
                        interrupted: false,
                    }
                });
                (text, side)
            }
            Outcome::Failed => {
                let body = if text.is_empty() { why.to_owned() } else { text };
                let content = match exit {
                    Some(code) => format!("Exit code {code}\n{body}"),
                    None => body,
                };
                let side = shell.then(|| ToolUseResult::Text(format!("Error: {content}")));
                (content, side)
            }
            Outcome::Denied => {
                self.denials.push(Denial {
                    tool_name: name.clone(),
                    tool_use_id: t.tool_call_id.clone(),
                    tool_input: input,
                });
                let claude_words = why.contains(" was blocked.") || why.contains("requested permissions to");
                let content = if claude_words {
                    why.to_owned()
                } else {
                    format!("This {name} call was blocked. {why}").trim_end().to_owned()
                };
                (content, None)
            }
            Outcome::Cancelled => (REJECTED.to_owned(), Some(ToolUseResult::Text("User rejected tool use".into()))),
            Outcome::Timeout => (format!("Command timed out. {why}").trim_end().to_owned(), None),
        };
        let is_error = t.outcome != Outcome::Completed;
        self.user(out, ev, Block::ToolResult { tool_use_id: &t.tool_call_id, content, is_error }, side)?;
        if t.outcome == Outcome::Cancelled {
            self.interrupt(out, ev)?;
        }
        Ok(())
    }

    /// Claude's `[Request interrupted by user…]` line, once.
    fn interrupt(&mut self, out: &mut dyn Write, ev: &Event) -> io::Result<()> {
        if !std::mem::replace(&mut self.interrupted, true) {
            self.user(out, ev, Block::Text { text: INTERRUPTED }, None)?;
        }
        Ok(())
    }

    /// The `result` line: from the summary when there was one, else from what was seen.
    fn result(&mut self) -> Final {
        let session = self.last_session.clone().unwrap_or_default();
        let (ok, status, error, turns, duration_ms, usage, session) = match self.summary.take() {
            Some((s, st, session)) => {
                let usage = if s.figures.usage.is_empty() { self.usage } else { s.figures.usage };
                let status = st.unwrap_or(if s.ok { Status::Completed } else { Status::Failed });
                (s.ok, status, s.error, s.figures.turns, s.figures.duration_ms, usage, session)
            }
            None => {
                let (status, error) = match self.last_error.take() {
                    Some((o, e)) => (o.status(), e),
                    None if self.events == 0 => (
                        Status::Failed,
                        ErrorInfo {
                            category: ErrorCategory::InputError,
                            message: "the input held no events".into(),
                            action: Some("check that the agent ran and its output was normalized".into()),
                        },
                    ),
                    None => (
                        Status::Interrupted,
                        ErrorInfo {
                            category: ErrorCategory::Interrupted,
                            message: "the input ended before the run's summary".into(),
                            action: Some("check whether the agent was killed or its output was cut short".into()),
                        },
                    ),
                };
                (false, status, Some(error), self.turns, None, self.usage, session)
            }
        };
        let category = error.as_ref().map(|e| &e.category);
        let subtype = match (ok, category, status) {
            (true, _, _) => "success",
            (false, Some(ErrorCategory::MaxTurns), _) => "error_max_turns",
            (false, Some(ErrorCategory::Refused), _) => "refused",
            // Claude says a run the user cancelled with this subtype and the interrupt line.
            (false, _, Status::Cancelled) => "error_during_execution",
            (false, _, Status::Interrupted) => "interrupted",
            (false, _, _) => "error_during_execution",
        };
        let result = match (&error, ok) {
            (Some(e), false) => e.message.clone(),
            _ => std::mem::take(&mut self.answer),
        };
        Final {
            subtype,
            is_error: !ok,
            duration_ms,
            num_turns: turns,
            result,
            session_id: session,
            total_cost_usd: usage.cost_usd,
            usage: (!usage.is_empty()).then_some(ClaudeUsage {
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                cache_read_input_tokens: usage.cache_read,
                cache_creation_input_tokens: usage.cache_write,
            }),
            permission_denials: std::mem::take(&mut self.denials),
            errors: error.iter().filter(|_| !ok).map(|e| e.message.clone()).collect(),
            status: status.as_str(),
            error: error.filter(|_| !ok),
        }
    }
}

impl Projection for StreamJson {
    fn event(&mut self, ev: &Event, out: &mut dyn Write) -> Flow {
        self.events += 1;
        match &ev.body {
            Body::SessionStarted(s) => self.init(out, &ev.session_id, Some(s))?,
            Body::ToolStarted(s) => {
                self.calls.start(ev, s);
            }
            Body::TurnStarted(_) => self.turns += 1,
            Body::Usage(u) => self.usage.add(u),
            Body::TurnEnded(t) => {
                if let Some(e) = &t.error {
                    self.last_error = Some((t.outcome, e.clone()));
                }
            }
            Body::Summary(s) => self.summary = Some((s.as_ref().clone(), ev.status, ev.session_id.clone())),
            _ => {}
        }
        if !ev.visibility.contains(Visibility::MACHINE) {
            if let Body::ToolEnded(t) = &ev.body {
                self.calls.end(&ev.session_id, &t.tool_call_id);
            }
            return Ok(ControlFlow::Continue(()));
        }
        self.init(out, &ev.session_id, None)?;
        let before = self.seq;
        let answer = matches!(&ev.body, Body::Text(t) if t.role == Role::Assistant && ev.parent_id.is_none());
        if answer && !self.in_answer {
            self.answer.clear();
        }
        match &ev.body {
            Body::Text(t) if t.role == Role::User && t.delta.starts_with(INTERRUPTED_START) => {
                self.interrupt(out, ev)?
            }
            Body::Text(t) if t.role == Role::User => self.user(out, ev, Block::Text { text: &t.delta }, None)?,
            Body::Text(t) if t.role == Role::Assistant => {
                if answer {
                    self.answer.push_str(&t.delta);
                }
                self.assistant(out, ev, Block::Text { text: &t.delta })?;
            }
            Body::Reasoning(r) => self.assistant(out, ev, Block::Thinking { thinking: &r.delta, signature: "" })?,
            Body::ToolStarted(s) => {
                let (name, input) = claude_tool(s);
                self.assistant(out, ev, Block::ToolUse { id: &s.tool_call_id, name, input })?;
            }
            Body::ToolEnded(t) => {
                let call = self.calls.end(&ev.session_id, &t.tool_call_id);
                self.tool_ended(out, ev, t, call)?;
            }
            Body::TurnEnded(t) if t.outcome == Outcome::Cancelled => self.interrupt(out, ev)?,
            Body::Warning(w) => {
                let warning = System::Warning {
                    session_id: &ev.session_id,
                    message: &w.message,
                    category: w.category.as_deref(),
                };
                self.write(out, Kind::System(warning))?;
            }
            Body::ContextCompacted(c) => {
                let compact = System::CompactBoundary {
                    session_id: &ev.session_id,
                    compact_metadata: Compact { trigger: &c.reason },
                };
                self.write(out, Kind::System(compact))?;
            }
            _ => {}
        }
        if answer || self.seq != before {
            self.in_answer = answer;
        }
        Ok(ControlFlow::Continue(()))
    }

    fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        let session = self.last_session.clone().unwrap_or_default();
        self.init(out, &session, None)?;
        let result = self.result();
        self.write(out, Kind::Result(Box::new(result)))
    }
}
