//! `acp`: JSON-RPC 2.0 notifications an ACP client understands. Text, reasoning, tool calls
//! and plans use ACP's own `session/update` kinds; what ACP has no update for (turns,
//! approvals, usage, warnings, the summary, …) goes whole as a `_minicode/<type>` extension
//! notification, and toolkit detail rides in `_meta.minicode`. Shell output uses the
//! `_meta.terminal_output_delta` / `_meta.terminal_exit` keys ACP agents already send.

use std::io::{self, Write};
use std::ops::ControlFlow;

use serde::Serialize;
use serde_json::Value;

use super::calls::{Call, Calls};
use super::{output_text, Flow, Projection};
use crate::event::{
    Body, ErrorInfo, Event, Outcome, PlanStatus, RawRef, ShellResult, Status, Stream, ToolEnded, ToolKind, ToolStarted,
    Visibility,
};

/// The ACP projection.
#[derive(Debug, Default)]
pub struct Acp {
    calls: Calls,
}

#[derive(Serialize)]
struct Notification<'a, P: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    params: P,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionNotification<'a> {
    session_id: &'a str,
    update: SessionUpdate<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Extension<'a> {
    session_id: &'a str,
    event: &'a Event,
}

#[derive(Serialize)]
#[serde(tag = "sessionUpdate", rename_all = "snake_case")]
enum SessionUpdate<'a> {
    UserMessageChunk(Chunk<'a>),
    AgentMessageChunk(Chunk<'a>),
    AgentThoughtChunk(Chunk<'a>),
    ToolCall(ToolCall<'a>),
    ToolCallUpdate(ToolCall<'a>),
    Plan(Plan<'a>),
}

#[derive(Serialize)]
struct Chunk<'a> {
    content: ContentBlock<'a>,
    #[serde(rename = "_meta")]
    meta: Meta<'a>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentBlock<'a> {
    Text { text: &'a str },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ToolCallContent<'a> {
    Content { content: ContentBlock<'a> },
}

/// Both `tool_call` and `tool_call_update`: everything but the id is optional in an update.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct ToolCall<'a> {
    tool_call_id: &'a str,
    title: Option<String>,
    kind: Option<&'static str>,
    status: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    content: Vec<ToolCallContent<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<Location<'a>>,
    raw_input: Option<RawInput<'a>>,
    raw_output: Option<&'a ShellResult>,
    #[serde(rename = "_meta")]
    meta: Meta<'a>,
}

#[serde_with::skip_serializing_none]
#[derive(Serialize)]
#[serde(untagged)]
enum RawInput<'a> {
    Given(&'a Value),
    Shell { command: &'a str, cwd: Option<&'a str> },
}

#[derive(Serialize)]
struct Location<'a> {
    path: &'a str,
}

#[derive(Serialize)]
struct Plan<'a> {
    entries: Vec<PlanEntry<'a>>,
    #[serde(rename = "_meta")]
    meta: Meta<'a>,
}

#[derive(Serialize)]
struct PlanEntry<'a> {
    content: &'a str,
    priority: &'static str,
    status: PlanStatus,
}

/// `_meta`: the toolkit's view of the event, plus the terminal keys ACP agents use.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Default)]
struct Meta<'a> {
    minicode: Option<Minicode<'a>>,
    terminal_info: Option<Terminal<'a>>,
    terminal_output_delta: Option<Terminal<'a>>,
    terminal_exit: Option<Terminal<'a>>,
}

#[serde_with::skip_serializing_none]
#[derive(Serialize, Default)]
struct Terminal<'a> {
    terminal_id: &'a str,
    cwd: Option<&'a str>,
    data: Option<&'a str>,
    exit_code: Option<i64>,
}

#[serde_with::skip_serializing_none]
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct Minicode<'a> {
    event_id: &'a str,
    #[serde(rename = "type")]
    type_name: &'a str,
    turn_id: u64,
    correlation_id: Option<&'a str>,
    parent_id: Option<&'a str>,
    status: Option<Status>,
    raw_ref: RawRef,
    name: Option<&'a str>,
    qualified: Option<&'a str>,
    kind: Option<ToolKind>,
    target: Option<&'a str>,
    outcome: Option<Outcome>,
    duration_ms: Option<u64>,
    error: Option<&'a ErrorInfo>,
    stream: Option<Stream>,
}

impl<'a> Minicode<'a> {
    fn of(ev: &'a Event) -> Minicode<'a> {
        Minicode {
            event_id: &ev.event_id,
            type_name: ev.type_name(),
            turn_id: ev.turn_id,
            correlation_id: ev.correlation_id.as_deref(),
            parent_id: ev.parent_id.as_deref(),
            status: ev.status,
            raw_ref: ev.raw_ref.clone(),
            ..Minicode::default()
        }
    }

    fn tool(mut self, s: &'a ToolStarted) -> Minicode<'a> {
        self.name = Some(&s.name);
        self.qualified = Some(&s.qualified);
        self.kind = Some(s.kind);
        self.target = s.target.as_deref();
        self
    }
}

fn meta(ev: &Event) -> Meta<'_> {
    Meta { minicode: Some(Minicode::of(ev)), ..Meta::default() }
}

/// ACP's tool kinds are a closed set; the toolkit's map onto them.
fn acp_kind(k: ToolKind) -> &'static str {
    match k {
        ToolKind::Shell => "execute",
        ToolKind::Edit => "edit",
        ToolKind::Read => "read",
        ToolKind::Search => "search",
        ToolKind::Fetch => "fetch",
        ToolKind::Mcp | ToolKind::Agent | ToolKind::Other => "other",
    }
}

fn title(s: &ToolStarted) -> String {
    match (&s.command, &s.target) {
        (Some(c), _) => c.clone(),
        (None, Some(t)) => format!("{} {t}", s.name),
        (None, None) => s.name.clone(),
    }
}

/// The `tool_call` that announces a call.
fn announce<'a>(ev: &'a Event, s: &'a ToolStarted) -> ToolCall<'a> {
    let raw_input = match (&s.input, &s.command) {
        (Some(v), _) => Some(RawInput::Given(v)),
        (None, Some(c)) => Some(RawInput::Shell { command: c, cwd: s.cwd.as_deref() }),
        (None, None) => None,
    };
    let located = matches!(s.kind, ToolKind::Read | ToolKind::Edit);
    let shell = s.kind == ToolKind::Shell;
    ToolCall {
        tool_call_id: &s.tool_call_id,
        title: Some(title(s)),
        kind: Some(acp_kind(s.kind)),
        status: Some("in_progress"),
        locations: s.target.as_deref().filter(|_| located).map(|path| Location { path }).into_iter().collect(),
        raw_input,
        meta: Meta {
            minicode: Some(Minicode::of(ev).tool(s)),
            terminal_info: shell.then(|| Terminal {
                terminal_id: &s.tool_call_id,
                cwd: s.cwd.as_deref(),
                ..Terminal::default()
            }),
            ..Meta::default()
        },
        ..ToolCall::default()
    }
}

/// The `tool_call_update` that ends a call (a full `tool_call` when it was never announced).
fn conclude<'a>(ev: &'a Event, t: &'a ToolEnded, call: Option<&Call>, text: &'a str) -> SessionUpdate<'a> {
    let exit = t.output.as_ref().and_then(|o| o.exit_code);
    let mut minicode = Minicode::of(ev);
    minicode.outcome = Some(t.outcome);
    minicode.duration_ms = t.duration_ms;
    minicode.error = t.error.as_ref();
    let update = ToolCall {
        tool_call_id: &t.tool_call_id,
        status: Some(if t.outcome == Outcome::Completed { "completed" } else { "failed" }),
        content: (!text.is_empty())
            .then_some(ToolCallContent::Content { content: ContentBlock::Text { text } })
            .into_iter()
            .collect(),
        raw_output: t.output.as_ref(),
        meta: Meta {
            minicode: Some(minicode),
            terminal_exit: exit.map(|code| Terminal {
                terminal_id: &t.tool_call_id,
                exit_code: Some(code),
                ..Terminal::default()
            }),
            ..Meta::default()
        },
        ..ToolCall::default()
    };
    match call {
        Some(_) => SessionUpdate::ToolCallUpdate(update),
        None => {
            SessionUpdate::ToolCall(ToolCall { title: Some(t.name.clone()), kind: Some(acp_kind(t.kind)), ..update })
        }
    }
}

fn write_line(out: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")
}

impl Acp {
    fn update(&self, out: &mut dyn Write, ev: &Event, update: SessionUpdate<'_>) -> io::Result<()> {
        let params = SessionNotification { session_id: &ev.session_id, update };
        write_line(out, &Notification { jsonrpc: "2.0", method: "session/update", params })
    }

    fn extension(&self, out: &mut dyn Write, ev: &Event) -> io::Result<()> {
        let method = format!("_minicode/{}", ev.type_name());
        let params = Extension { session_id: &ev.session_id, event: ev };
        write_line(out, &Notification { jsonrpc: "2.0", method: &method, params })
    }
}

impl Projection for Acp {
    fn event(&mut self, ev: &Event, out: &mut dyn Write) -> Flow {
        let shown = ev.visibility.contains(Visibility::MACHINE);
        match &ev.body {
            // ACP cannot nest a child agent's words under its call; they would read as the
            // answer, so they travel as an extension.
            Body::Text(_) | Body::Reasoning(_) if shown && ev.parent_id.is_some() => self.extension(out, ev)?,
            Body::Text(t) if shown => {
                let chunk = Chunk { content: ContentBlock::Text { text: &t.delta }, meta: meta(ev) };
                let update = match t.role {
                    crate::event::Role::User => SessionUpdate::UserMessageChunk(chunk),
                    _ => SessionUpdate::AgentMessageChunk(chunk),
                };
                self.update(out, ev, update)?;
            }
            Body::Reasoning(r) if shown => {
                let chunk = Chunk { content: ContentBlock::Text { text: &r.delta }, meta: meta(ev) };
                self.update(out, ev, SessionUpdate::AgentThoughtChunk(chunk))?;
            }
            Body::TurnStarted(t) if shown => {
                if let Some(prompt) = &t.prompt {
                    let chunk = Chunk { content: ContentBlock::Text { text: prompt }, meta: meta(ev) };
                    self.update(out, ev, SessionUpdate::UserMessageChunk(chunk))?;
                }
                self.extension(out, ev)?;
            }
            Body::ToolStarted(s) => {
                self.calls.start(ev, s);
                if shown {
                    self.update(out, ev, SessionUpdate::ToolCall(announce(ev, s)))?;
                }
            }
            Body::ToolOutput(o) if shown => {
                let mut m = meta(ev);
                if let Some(mc) = m.minicode.as_mut() {
                    mc.stream = Some(o.stream);
                }
                m.terminal_output_delta =
                    Some(Terminal { terminal_id: &o.tool_call_id, data: Some(&o.delta), ..Terminal::default() });
                let update = ToolCall {
                    tool_call_id: &o.tool_call_id,
                    status: Some("in_progress"),
                    meta: m,
                    ..ToolCall::default()
                };
                self.update(out, ev, SessionUpdate::ToolCallUpdate(update))?;
            }
            Body::ToolEnded(t) => {
                let call = self.calls.end(&ev.session_id, &t.tool_call_id);
                if shown {
                    let mut text = t.output.as_ref().map(output_text).unwrap_or_default();
                    if text.is_empty() && t.outcome != Outcome::Completed {
                        text = t.error.as_ref().map(|e| e.message.clone()).unwrap_or_default();
                    }
                    self.update(out, ev, conclude(ev, t, call.as_ref(), &text))?;
                }
            }
            Body::Plan(p) if shown => {
                let entries = p
                    .entries
                    .iter()
                    .map(|e| PlanEntry { content: &e.content, priority: "medium", status: e.status })
                    .collect();
                self.update(out, ev, SessionUpdate::Plan(Plan { entries, meta: meta(ev) }))?;
            }
            _ if shown => self.extension(out, ev)?,
            _ => {}
        }
        Ok(ControlFlow::Continue(()))
    }
}
