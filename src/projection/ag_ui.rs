//! `ag-ui`: the run as AG-UI protocol events (the `ag-ui-protocol` 1.0 event set), written as
//! each canonical event arrives, as SSE `data:` frames (AG-UI's HTTP transport) or JSON lines.
//!
//! A session is a run (`RUN_STARTED`, then `RUN_FINISHED`, or `RUN_ERROR` when a turn failed,
//! timed out or was cut off); a turn is a step (`STEP_STARTED` / `STEP_FINISHED`); text and
//! reasoning are messages (`TEXT_MESSAGE_*`, `REASONING_*`), closed when something else
//! happens; a tool call is `TOOL_CALL_START`, `_ARGS`, `_END` when it starts and
//! `TOOL_CALL_RESULT` when it ends, with the outcome, exit code and error in `metadata`; a child
//! agent is a subagent run (`SUBAGENT_STARTED` at its first event, `SUBAGENT_FINISHED` or
//! `SUBAGENT_ERROR` when the call that spawned it ends) and its events carry `subagentRunId`.
//! What has no AG-UI meaning (usage, plans, approvals, warnings, raw input, live tool output,
//! unknown types) is a `RAW` event holding the canonical event. Timestamps are the events' own.

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::ops::ControlFlow;

use serde_json::{json, Map, Value};

use super::{event_millis, output_text, prompt_tokens, Flow, Projection};
use crate::event::{Body, ErrorInfo, Event, Outcome, Role, Usage};

/// How AG-UI events are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum AgUiFormat {
    /// Server-sent events: `data: {json}` and a blank line.
    #[default]
    Sse,
    /// One JSON event per line.
    Jsonl,
}

/// The AG-UI projection.
#[derive(Debug)]
pub struct AgUi {
    format: AgUiFormat,
    run: Option<Run>,
    /// Open tool calls of the current run: name and the call that spawned its agent.
    calls: HashMap<String, (String, Option<String>)>,
    /// Child agents of the current run whose `SUBAGENT_STARTED` was written.
    subagents: HashSet<String>,
}

/// The current run (one session).
#[derive(Debug)]
struct Run {
    session: String,
    provider: Option<String>,
    model: Option<String>,
    usage: Usage,
    failure: Option<(Outcome, Option<ErrorInfo>)>,
    cancelled: bool,
    step: Option<u64>,
    /// The open text or reasoning message: its id, whether it is reasoning, its subagent.
    message: Option<(String, bool, Option<String>)>,
    /// The last assistant message, the parent of the tool calls that follow it.
    last_text: Option<String>,
}

impl AgUi {
    /// An AG-UI projection writing `format`.
    pub fn new(format: AgUiFormat) -> AgUi {
        AgUi { format, run: None, calls: HashMap::new(), subagents: HashSet::new() }
    }

    fn emit(
        &self,
        out: &mut dyn Write,
        kind: &str,
        at: Option<i64>,
        sub: Option<&str>,
        fields: Value,
    ) -> io::Result<()> {
        let mut m = Map::new();
        m.insert("type".into(), kind.into());
        if let Some(ms) = at {
            m.insert("timestamp".into(), ms.into());
        }
        if let Value::Object(f) = fields {
            m.extend(f);
        }
        if let Some(s) = sub {
            m.insert("subagentRunId".into(), s.into());
        }
        if self.format == AgUiFormat::Sse {
            out.write_all(b"data: ")?;
        }
        serde_json::to_writer(&mut *out, &m)?;
        out.write_all(if self.format == AgUiFormat::Sse { b"\n\n" } else { b"\n" })
    }

    /// Ends the open text or reasoning message.
    fn close_message(&mut self, out: &mut dyn Write, at: Option<i64>) -> io::Result<()> {
        let Some((id, reasoning, sub)) = self.run.as_mut().and_then(|r| r.message.take()) else {
            return Ok(());
        };
        let sub = sub.as_deref();
        if reasoning {
            self.emit(out, "REASONING_MESSAGE_END", at, sub, json!({ "messageId": id }))?;
            self.emit(out, "REASONING_END", at, sub, json!({ "messageId": id }))
        } else {
            self.emit(out, "TEXT_MESSAGE_END", at, sub, json!({ "messageId": id }))
        }
    }

    fn close_step(&mut self, out: &mut dyn Write, at: Option<i64>) -> io::Result<()> {
        self.close_message(out, at)?;
        if let Some(n) = self.run.as_mut().and_then(|r| r.step.take()) {
            self.emit(out, "STEP_FINISHED", at, None, json!({ "stepName": format!("turn {n}") }))?;
        }
        Ok(())
    }

    /// Ends the current run: `RUN_ERROR` when a turn failed, timed out or was cut off, else
    /// `RUN_FINISHED` (cancelled when a turn was).
    fn close_run(&mut self, out: &mut dyn Write, at: Option<i64>) -> io::Result<()> {
        self.close_step(out, at)?;
        let Some(run) = self.run.take() else { return Ok(()) };
        self.calls.clear();
        self.subagents.clear();
        if let Some((outcome, error)) = &run.failure {
            let code = error.as_ref().map(|e| e.category.clone()).or_else(|| outcome.default_category());
            let message = error.as_ref().map_or_else(|| format!("the run {}", outcome.as_str()), |e| e.message.clone());
            let mut f = json!({ "message": message });
            if let Some(c) = code {
                f["code"] = c.as_str().into();
            }
            return self.emit(out, "RUN_ERROR", at, None, f);
        }
        let mut f = json!({
            "threadId": run.session,
            "runId": run.session,
            "outcome": { "type": if run.cancelled { "cancelled" } else { "success" } },
        });
        if !run.usage.is_empty() {
            let u = &run.usage;
            let mut usage = Map::new();
            let mut put = |k: &str, v: Option<u64>| {
                if let Some(v) = v {
                    usage.insert(k.into(), v.into());
                }
            };
            put("inputTokens", prompt_tokens(u));
            put("outputTokens", u.output_tokens);
            put("cachedInputTokens", u.cache_read);
            put("cacheWriteInputTokens", u.cache_write);
            if let Some(p) = &run.provider {
                usage.insert("provider".into(), p.as_str().into());
            }
            if let Some(m) = &run.model {
                usage.insert("model".into(), m.as_str().into());
            }
            f["usage"] = json!([usage]);
        }
        self.emit(out, "RUN_FINISHED", at, None, f)
    }

    /// Writes `SUBAGENT_STARTED` for the child agent of call `parent` the first time it is seen.
    fn subagent(&mut self, out: &mut dyn Write, at: Option<i64>, parent: &str) -> io::Result<()> {
        if !self.subagents.insert(parent.to_owned()) {
            return Ok(());
        }
        let (name, grand) = self.calls.get(parent).cloned().unwrap_or_else(|| ("agent".to_owned(), None));
        let mut f = json!({ "subagentRunId": parent, "name": name, "parentToolCallId": parent });
        if let Some(g) = grand {
            f["parentSubagentRunId"] = g.into();
        }
        self.emit(out, "SUBAGENT_STARTED", at, None, f)
    }

    fn raw(&self, out: &mut dyn Write, ev: &Event, at: Option<i64>) -> io::Result<()> {
        let event = serde_json::to_value(ev)?;
        self.emit(out, "RAW", at, ev.parent_id.as_deref(), json!({ "event": event, "source": "minicode.output.v1" }))
    }

    /// Opens a text or reasoning message unless the same kind is open for the same agent.
    fn open_message(
        &mut self,
        out: &mut dyn Write,
        ev: &Event,
        at: Option<i64>,
        reasoning: bool,
    ) -> io::Result<String> {
        let sub = ev.parent_id.clone();
        if let Some((id, r, s)) = self.run.as_ref().and_then(|r| r.message.as_ref()) {
            if *r == reasoning && *s == sub {
                return Ok(id.clone());
            }
        }
        self.close_message(out, at)?;
        let id = ev.event_id.clone();
        let s = sub.as_deref();
        if reasoning {
            self.emit(out, "REASONING_START", at, s, json!({ "messageId": id }))?;
            self.emit(out, "REASONING_MESSAGE_START", at, s, json!({ "messageId": id, "role": "reasoning" }))?;
        } else {
            self.emit(out, "TEXT_MESSAGE_START", at, s, json!({ "messageId": id, "role": "assistant" }))?;
        }
        let run = self.run.as_mut().expect("a run is open");
        run.message = Some((id.clone(), reasoning, sub));
        if !reasoning {
            run.last_text = Some(id.clone());
        }
        Ok(id)
    }

    /// A whole message of one piece (a prompt, a user or system note).
    fn whole_message(
        &self,
        out: &mut dyn Write,
        id: &str,
        role: &str,
        text: &str,
        at: Option<i64>,
        sub: Option<&str>,
    ) -> io::Result<()> {
        self.emit(out, "TEXT_MESSAGE_START", at, sub, json!({ "messageId": id, "role": role }))?;
        if !text.is_empty() {
            self.emit(out, "TEXT_MESSAGE_CONTENT", at, sub, json!({ "messageId": id, "delta": text }))?;
        }
        self.emit(out, "TEXT_MESSAGE_END", at, sub, json!({ "messageId": id }))
    }
}

impl Projection for AgUi {
    fn event(&mut self, ev: &Event, out: &mut dyn Write) -> Flow {
        let at = event_millis(ev);
        if self.run.as_ref().is_some_and(|r| r.session != ev.session_id) {
            self.close_run(out, at)?;
        }
        if self.run.is_none() {
            if matches!(ev.body, Body::Summary(_)) {
                return Ok(ControlFlow::Continue(()));
            }
            self.run = Some(Run {
                session: ev.session_id.clone(),
                provider: None,
                model: None,
                usage: Usage::default(),
                failure: None,
                cancelled: false,
                step: None,
                message: None,
                last_text: None,
            });
            let f = json!({ "threadId": ev.session_id, "runId": ev.session_id });
            self.emit(out, "RUN_STARTED", at, None, f)?;
        }
        let sub = ev.parent_id.as_deref();
        if let Some(p) = sub {
            self.subagent(out, at, p)?;
        }
        match &ev.body {
            Body::SessionStarted(s) => {
                let run = self.run.as_mut().expect("a run is open");
                run.provider = Some(s.provider.clone());
                run.model = s.model.clone();
                self.raw(out, ev, at)?;
            }
            Body::TurnStarted(t) => {
                self.close_step(out, at)?;
                self.run.as_mut().expect("a run is open").step = Some(ev.turn_id);
                self.emit(out, "STEP_STARTED", at, None, json!({ "stepName": format!("turn {}", ev.turn_id) }))?;
                if let Some(p) = &t.prompt {
                    self.whole_message(out, &ev.event_id, "user", p, at, None)?;
                }
            }
            Body::Text(t) if t.role == Role::Assistant => {
                if !t.delta.is_empty() {
                    let id = self.open_message(out, ev, at, false)?;
                    self.emit(out, "TEXT_MESSAGE_CONTENT", at, sub, json!({ "messageId": id, "delta": t.delta }))?;
                }
            }
            Body::Text(t) => {
                self.close_message(out, at)?;
                let role = if t.role == Role::User { "user" } else { "system" };
                self.whole_message(out, &ev.event_id, role, &t.delta, at, sub)?;
            }
            Body::Reasoning(r) => {
                if !r.delta.is_empty() {
                    let id = self.open_message(out, ev, at, true)?;
                    let f = json!({ "messageId": id, "delta": r.delta });
                    self.emit(out, "REASONING_MESSAGE_CONTENT", at, sub, f)?;
                }
            }
            Body::ToolStarted(t) => {
                self.close_message(out, at)?;
                self.calls.insert(t.tool_call_id.clone(), (t.name.clone(), ev.parent_id.clone()));
                let mut f = json!({ "toolCallId": t.tool_call_id, "toolCallName": t.name });
                let last_text = self.run.as_ref().and_then(|r| r.last_text.clone());
                if let Some(m) = last_text.filter(|_| sub.is_none()) {
                    f["parentMessageId"] = m.into();
                }
                self.emit(out, "TOOL_CALL_START", at, sub, f)?;
                let args = match (&t.input, &t.command) {
                    (Some(i), _) => Some(i.to_string()),
                    (None, Some(c)) => Some(json!({ "command": c }).to_string()),
                    (None, None) => None,
                };
                if let Some(a) = args {
                    self.emit(out, "TOOL_CALL_ARGS", at, sub, json!({ "toolCallId": t.tool_call_id, "delta": a }))?;
                }
                self.emit(out, "TOOL_CALL_END", at, sub, json!({ "toolCallId": t.tool_call_id }))?;
            }
            Body::ToolEnded(t) => {
                self.close_message(out, at)?;
                if self.subagents.remove(&t.tool_call_id) {
                    let id = &t.tool_call_id;
                    if t.outcome == Outcome::Completed {
                        let f = json!({ "subagentRunId": id, "outcome": { "type": "success" } });
                        self.emit(out, "SUBAGENT_FINISHED", at, None, f)?;
                    } else {
                        let message = t.error.as_ref().map_or(t.outcome.as_str(), |e| e.message.as_str());
                        let mut f = json!({ "subagentRunId": id, "message": message });
                        if let Some(c) =
                            t.error.as_ref().map(|e| e.category.clone()).or_else(|| t.outcome.default_category())
                        {
                            f["code"] = c.as_str().into();
                        }
                        self.emit(out, "SUBAGENT_ERROR", at, None, f)?;
                    }
                }
                self.calls.remove(&t.tool_call_id);
                let mut content = t.output.as_ref().map(output_text).unwrap_or_default();
                if content.is_empty() {
                    if let Some(e) = &t.error {
                        content = e.message.clone();
                    }
                }
                let mut meta = json!({ "outcome": t.outcome.as_str() });
                if let Some(code) = t.output.as_ref().and_then(|o| o.exit_code) {
                    meta["exitCode"] = code.into();
                }
                if t.output.as_ref().is_some_and(|o| o.truncated) {
                    meta["truncated"] = true.into();
                }
                if let Some(d) = t.duration_ms {
                    meta["durationMs"] = d.into();
                }
                if let Some(e) = &t.error {
                    meta["error"] = serde_json::to_value(e)?;
                }
                let f = json!({
                    "messageId": ev.event_id,
                    "toolCallId": t.tool_call_id,
                    "content": content,
                    "role": "tool",
                    "metadata": meta,
                });
                self.emit(out, "TOOL_CALL_RESULT", at, sub, f)?;
            }
            Body::TurnEnded(t) => {
                let run = self.run.as_mut().expect("a run is open");
                match t.outcome {
                    Outcome::Completed => {}
                    Outcome::Cancelled => run.cancelled = true,
                    o => run.failure = Some((o, t.error.clone())),
                }
                self.close_step(out, at)?;
            }
            Body::Summary(_) => {
                self.close_message(out, at)?;
                self.raw(out, ev, at)?;
                self.close_run(out, at)?;
            }
            Body::Usage(u) => {
                self.run.as_mut().expect("a run is open").usage.add(u);
                self.raw(out, ev, at)?;
            }
            _ => self.raw(out, ev, at)?,
        }
        Ok(ControlFlow::Continue(()))
    }

    fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.close_run(out, None)
    }
}
