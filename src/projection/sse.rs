//! `sse`: agent-output/v1 server-sent-event frames (`delta`, `tool_call`, `tool_result`,
//! `status`, `done`, `error`, `raw`). Each frame has the id `{session}-{seq}` (seq counts
//! that session's frames from 1; a line break in the session shows as a space) and a JSON
//! `data` carrying `session_id` and `raw_ref`.
//! `--after ID` replays nothing up to and including frame ID, as `Last-Event-ID` does.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};
use std::ops::ControlFlow;

use serde::Serialize;
use serde_json::Value;

use super::{output_text, Flow, Projection};
use crate::event::{ApprovalKind, Body, Decision, ErrorInfo, Event, Outcome, RawRef, Role, Summary, Usage, Visibility};

/// The SSE projection.
#[derive(Debug)]
pub struct Sse {
    after: Option<String>,
    /// True while frames are being skipped for `--after`.
    skipping: bool,
    seq: HashMap<String, u64>,
    last_session: Option<String>,
    model: Option<String>,
    usage: Usage,
    errors_sent: Vec<String>,
    seen_events: bool,
    done: bool,
    problems: Vec<String>,
}

/// One frame's `data`: the frame's own fields, then `session_id`, `raw_ref`, `event_id`.
#[derive(Serialize)]
struct Data<'a> {
    #[serde(flatten)]
    body: Frame<'a>,
    session_id: &'a str,
    raw_ref: WireRef,
    #[serde(skip_serializing_if = "str::is_empty")]
    event_id: &'a str,
    /// A child agent's frames name the tool call that spawned it.
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_id: Option<&'a str>,
}

/// Where a frame comes from.
struct Origin<'a> {
    session: &'a str,
    raw_ref: RawRef,
    event_id: &'a str,
    parent_id: Option<&'a str>,
}

impl<'a> Origin<'a> {
    fn of(ev: &'a Event) -> Origin<'a> {
        Origin {
            session: &ev.session_id,
            raw_ref: ev.raw_ref.clone(),
            event_id: &ev.event_id,
            parent_id: ev.parent_id.as_deref(),
        }
    }

    /// A frame the stream itself adds, after everything else of `session`.
    fn closing(session: &'a str) -> Origin<'a> {
        Origin { session, raw_ref: RawRef::default(), event_id: "", parent_id: None }
    }
}

#[serde_with::skip_serializing_none]
#[derive(Serialize)]
struct WireRef {
    line: u64,
    end_line: Option<u64>,
    file: Option<std::sync::Arc<str>>,
}

impl From<RawRef> for WireRef {
    fn from(r: RawRef) -> WireRef {
        WireRef { line: r.line, end_line: r.end_line, file: r.file }
    }
}

#[serde_with::skip_serializing_none]
#[derive(Serialize)]
#[serde(untagged)]
enum Frame<'a> {
    Delta {
        content: &'a str,
        role: &'static str,
        kind: &'static str,
    },
    ToolCall {
        role: &'static str,
        kind: &'static str,
        name: &'a str,
        tool_id: &'a str,
        input: Input<'a>,
        tool_kind: &'static str,
    },
    ToolResult {
        role: &'static str,
        kind: &'static str,
        tool_id: &'a str,
        status: &'static str,
        content: String,
        outcome: Outcome,
        exit_code: Option<i64>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        truncated: bool,
        duration_ms: Option<u64>,
        error: Option<&'a ErrorInfo>,
    },
    Status {
        role: &'static str,
        kind: &'static str,
        status: &'a str,
        content: String,
    },
    Done {
        role: &'static str,
        kind: &'static str,
        finish_reason: &'static str,
        #[serialize_always]
        model: Option<&'a str>,
        #[serde(skip_serializing_if = "Usage::is_empty")]
        usage: Usage,
        total_cost_usd: Option<f64>,
        content: Option<&'a str>,
        ok: bool,
        status: &'a str,
    },
    Error {
        error: &'a str,
        code: &'a str,
        action: Option<&'a str>,
    },
    Raw {
        role: &'static str,
        kind: &'static str,
        content: String,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum Input<'a> {
    Given(&'a Value),
    Command { command: &'a str },
    None {},
}

impl Frame<'_> {
    fn event_name(&self) -> &'static str {
        match self {
            Frame::Delta { .. } => "delta",
            Frame::ToolCall { .. } => "tool_call",
            Frame::ToolResult { .. } => "tool_result",
            Frame::Status { .. } => "status",
            Frame::Done { .. } => "done",
            Frame::Error { .. } => "error",
            Frame::Raw { .. } => "raw",
        }
    }
}

fn status<'a>(status: &'a str, kind: &'static str, content: String) -> Frame<'a> {
    Frame::Status { role: "system", kind, status, content }
}

impl Sse {
    /// Frames from the start, or after the frame `after`.
    pub fn new(after: Option<String>) -> Sse {
        Sse {
            skipping: after.is_some(),
            after,
            seq: HashMap::new(),
            last_session: None,
            model: None,
            usage: Usage::default(),
            errors_sent: Vec::new(),
            seen_events: false,
            done: false,
            problems: Vec::new(),
        }
    }

    fn write(&mut self, out: &mut dyn Write, origin: Origin<'_>, body: Frame<'_>) -> io::Result<()> {
        let session = origin.session;
        let id_session = one_line(session);
        // Looked up before inserting, so only a session's first frame copies its id.
        let seq = match self.seq.get_mut(&*id_session) {
            Some(n) => {
                *n += 1;
                *n
            }
            None => {
                self.seq.insert(id_session.to_string(), 1);
                1
            }
        };
        let id = format!("{id_session}-{seq}");
        if self.skipping {
            self.skipping = self.after.as_deref() != Some(id.as_str());
            return Ok(());
        }
        let event = body.event_name();
        let data = Data {
            body,
            session_id: session,
            raw_ref: origin.raw_ref.into(),
            event_id: origin.event_id,
            parent_id: origin.parent_id,
        };
        let data = serde_json::to_string(&data)?;
        write!(out, "id: {id}\nevent: {event}\ndata: {data}\n\n")
    }

    fn frame(&mut self, out: &mut dyn Write, ev: &Event, body: Frame<'_>) -> io::Result<()> {
        self.write(out, Origin::of(ev), body)
    }

    fn error(&mut self, out: &mut dyn Write, ev: &Event, e: &ErrorInfo) -> io::Result<()> {
        self.errors_sent.push(e.message.clone());
        let body = Frame::Error { error: &e.message, code: e.category.as_str(), action: e.action.as_deref() };
        self.frame(out, ev, body)
    }

    fn summary(&mut self, out: &mut dyn Write, ev: &Event, s: &Summary) -> io::Result<()> {
        if let Some(e) = s.error.as_ref().filter(|e| !s.ok && !self.errors_sent.contains(&e.message)) {
            self.error(out, ev, e)?;
        }
        let usage = if s.figures.usage.is_empty() { self.usage } else { s.figures.usage };
        let word = ev.status.map_or(if s.ok { "completed" } else { "failed" }, |st| st.as_str());
        let finish_reason = match (s.ok, word) {
            (true, _) => "stop",
            (false, "cancelled") => "cancelled",
            (false, _) => "error",
        };
        let model = self.model.clone();
        let body = Frame::Done {
            role: "status",
            kind: "usage",
            finish_reason,
            model: model.as_deref(),
            total_cost_usd: usage.cost_usd,
            usage,
            content: s.error.as_ref().map(|e| e.message.as_str()),
            ok: s.ok,
            status: word,
        };
        self.done = true;
        self.frame(out, ev, body)
    }
}

impl Projection for Sse {
    fn event(&mut self, ev: &Event, out: &mut dyn Write) -> Flow {
        self.seen_events = true;
        self.last_session = Some(ev.session_id.clone());
        if !ev.visibility.contains(Visibility::MACHINE) {
            return Ok(ControlFlow::Continue(()));
        }
        match &ev.body {
            Body::SessionStarted(s) => {
                self.model = s.model.clone().or(self.model.take());
                let text = format!("{} session started", s.provider);
                self.frame(out, ev, status("started", "session", text))?;
            }
            Body::TurnStarted(t) => {
                let text = t.prompt.clone().unwrap_or_else(|| format!("turn {} started", ev.turn_id));
                self.frame(out, ev, status("running", "turn", text))?;
            }
            // Only the root agent's own words are the answer; the rest go as status.
            Body::Text(t) => match (t.role, ev.parent_id.is_some()) {
                (Role::Assistant, false) => {
                    self.frame(out, ev, Frame::Delta { content: &t.delta, role: "assistant", kind: "message" })?
                }
                (Role::Assistant, true) => {
                    self.frame(out, ev, status("running", "subagent_message", t.delta.clone()))?
                }
                (Role::User, _) => self.frame(out, ev, status("prompt", "user_message", t.delta.clone()))?,
                (Role::System, _) => self.frame(out, ev, status("system", "message", t.delta.clone()))?,
            },
            Body::Reasoning(r) => self.frame(out, ev, status("thinking", "reasoning", r.delta.clone()))?,
            Body::ToolStarted(s) => {
                let input = match (&s.input, &s.command) {
                    (Some(v), _) => Input::Given(v),
                    (None, Some(c)) => Input::Command { command: c },
                    (None, None) => Input::None {},
                };
                let body = Frame::ToolCall {
                    role: "assistant",
                    kind: "tool_call",
                    name: &s.name,
                    tool_id: &s.tool_call_id,
                    input,
                    tool_kind: s.kind.as_str(),
                };
                self.frame(out, ev, body)?;
            }
            // The chat projection carries a tool's final output, not its live stream.
            Body::ToolOutput(_) => {}
            Body::ToolEnded(t) => {
                let output = t.output.as_ref();
                let mut content = output.map(output_text).unwrap_or_default();
                if content.is_empty() {
                    content = t.error.as_ref().map(|e| e.message.clone()).unwrap_or_default();
                }
                let body = Frame::ToolResult {
                    role: "tool",
                    kind: "tool_result",
                    tool_id: &t.tool_call_id,
                    status: if t.outcome == Outcome::Completed { "ok" } else { "error" },
                    content,
                    outcome: t.outcome,
                    exit_code: output.and_then(|o| o.exit_code),
                    truncated: output.is_some_and(|o| o.truncated),
                    duration_ms: t.duration_ms,
                    error: t.error.as_ref(),
                };
                self.frame(out, ev, body)?;
            }
            Body::ApprovalRequested(a) => {
                let (word, kind, text) = match a.kind {
                    Some(ApprovalKind::Question) => ("question_asked", "question", "question asked"),
                    _ => ("approval_requested", "approval", "approval requested"),
                };
                let text = a.title.clone().unwrap_or_else(|| text.into());
                self.frame(out, ev, status(word, kind, text))?;
            }
            Body::ApprovalSettled(a) => {
                let word = match a.decision {
                    Some(d) if d.is_allowed() => "approved",
                    Some(Decision::Answered) => "answered",
                    Some(Decision::Declined) => "declined",
                    Some(Decision::Cancelled) => "cancelled",
                    Some(Decision::Unknown) | None => "unanswered",
                    Some(_) => "rejected",
                };
                let kind = if a.kind == Some(ApprovalKind::Question) { "question" } else { "approval" };
                self.frame(out, ev, status(word, kind, a.title.clone().unwrap_or_default()))?;
            }
            Body::Plan(p) => {
                let text =
                    p.entries.iter().map(|e| format!("[{}] {}", plan_box(e.status), e.content)).collect::<Vec<_>>();
                self.frame(out, ev, status("plan", "plan", text.join("\n")))?;
            }
            Body::FileChanged(f) => {
                let word =
                    serde_json::to_value(f.change).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
                self.frame(out, ev, status(&word, "file_change", f.path.clone()))?;
            }
            Body::Usage(u) => self.usage.add(u),
            Body::ContextCompacted(c) => self.frame(out, ev, status("compacted", "context", c.reason.clone()))?,
            Body::Warning(w) => self.frame(out, ev, status("warning", "message", w.message.clone()))?,
            Body::Raw(r) => self.frame(out, ev, Frame::Raw { role: "system", kind: "raw", content: r.line.clone() })?,
            Body::TurnEnded(t) => match (t.outcome, &t.error) {
                (Outcome::Completed, _) => {
                    self.frame(out, ev, status("completed", "turn", format!("turn {} completed", ev.turn_id)))?
                }
                (Outcome::Cancelled, e) => {
                    let text = e.as_ref().map_or_else(|| "cancelled".to_owned(), |e| e.message.clone());
                    self.frame(out, ev, status("cancelled", "turn", text))?;
                }
                (_, Some(e)) => self.error(out, ev, e)?,
                (o, None) => {
                    self.frame(out, ev, status(o.as_str(), "turn", format!("turn {} {}", ev.turn_id, o.as_str())))?
                }
            },
            Body::Summary(s) => self.summary(out, ev, s)?,
            _ => {
                let line = serde_json::to_string(ev)?;
                self.frame(out, ev, Frame::Raw { role: "system", kind: "raw", content: line })?;
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        let session = self.last_session.clone().unwrap_or_else(|| "stream".to_owned());
        let msg = if self.skipping {
            let after = self.after.clone().unwrap_or_default();
            self.problems.push(format!("--after {after}: no such frame id in the input"));
            self.skipping = false;
            format!("no frame {after} to resume after")
        } else if self.seen_events && !self.done {
            "the input ended before the run's summary".to_owned()
        } else {
            return Ok(());
        };
        let body = Frame::Error { error: &msg, code: "STREAM_INTERRUPTED", action: None };
        self.write(out, Origin::closing(&session), body)
    }

    fn take_problems(&mut self) -> Vec<String> {
        std::mem::take(&mut self.problems)
    }
}

/// A session id as a frame id holds it: SSE ends a field at CR or LF, so an id that held one
/// would end early and its rest pass for other fields. Line breaks become spaces; sessions
/// that then look alike share one frame count, so that ids stay unique.
fn one_line(session: &str) -> Cow<'_, str> {
    match session.contains(['\r', '\n']) {
        true => Cow::Owned(session.replace(['\r', '\n'], " ")),
        false => Cow::Borrowed(session),
    }
}

fn plan_box(s: crate::event::PlanStatus) -> char {
    match s {
        crate::event::PlanStatus::Completed => 'x',
        crate::event::PlanStatus::InProgress => '~',
        crate::event::PlanStatus::Pending => ' ',
    }
}
