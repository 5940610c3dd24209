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

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::io::{self, Write};
use std::ops::ControlFlow;

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::{event_millis, output_text, prompt_tokens, Flow, Projection};
use crate::event::{Body, ErrorCategory, ErrorInfo, Event, Outcome, Role, Usage};

/// How AG-UI events are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum AgUiFormat {
    /// Server-sent events: `data: {json}` and a blank line.
    #[default]
    Sse,
    /// One JSON event per line.
    Jsonl,
}

/// One AG-UI event, every field any event type has, borrowed from the canonical event and
/// written straight to the output. Fields are declared in alphabetical order of their keys:
/// the order the format's goldens have always had, so output stays comparable across versions.
#[serde_with::skip_serializing_none]
#[derive(Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Frame<'a> {
    code: Option<&'a str>,
    content: Option<Cow<'a, str>>,
    delta: Option<Delta<'a>>,
    event: Option<Value>,
    message: Option<&'a str>,
    message_id: Option<&'a str>,
    metadata: Option<Metadata<'a>>,
    name: Option<&'a str>,
    outcome: Option<Ending>,
    parent_message_id: Option<&'a str>,
    parent_subagent_run_id: Option<&'a str>,
    parent_tool_call_id: Option<&'a str>,
    role: Option<&'a str>,
    run_id: Option<&'a str>,
    source: Option<&'static str>,
    #[serde(serialize_with = "step_name")]
    step_name: Option<u64>,
    subagent_run_id: Option<&'a str>,
    thread_id: Option<&'a str>,
    timestamp: Option<i64>,
    tool_call_id: Option<&'a str>,
    tool_call_name: Option<&'a str>,
    #[serde(rename = "type")]
    kind: &'static str,
    usage: Option<[RunUsage<'a>; 1]>,
}

/// A turn's step name, `turn N`, written without building the string.
fn step_name<S: Serializer>(turn: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match turn {
        Some(n) => s.collect_str(&format_args!("turn {n}")),
        None => s.serialize_none(),
    }
}

/// A `delta`: text as it is, or a tool's arguments as JSON text.
enum Delta<'a> {
    Text(&'a str),
    Input(&'a Value),
    Command(&'a str),
}

impl Serialize for Delta<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Delta::Text(t) => s.serialize_str(t),
            Delta::Input(v) => s.collect_str(v),
            Delta::Command(c) => s.collect_str(&CommandArgs(c)),
        }
    }
}

/// A shell command as the JSON object `{"command": …}`, for `TOOL_CALL_ARGS`.
struct CommandArgs<'a>(&'a str);

impl fmt::Display for CommandArgs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = serde_json::to_string(self.0).map_err(|_| fmt::Error)?;
        write!(f, "{{\"command\":{quoted}}}")
    }
}

/// A run's or subagent's outcome, `{"type": …}`.
#[derive(Serialize)]
struct Ending {
    #[serde(rename = "type")]
    kind: &'static str,
}

/// A tool result's `metadata`.
#[serde_with::skip_serializing_none]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Metadata<'a> {
    duration_ms: Option<u64>,
    error: Option<ErrorFields<'a>>,
    exit_code: Option<i64>,
    outcome: &'static str,
    truncated: Option<bool>,
}

/// A canonical error, its keys in alphabetical order.
#[serde_with::skip_serializing_none]
#[derive(Serialize)]
struct ErrorFields<'a> {
    action: Option<&'a str>,
    category: &'a ErrorCategory,
    message: &'a str,
}

impl<'a> ErrorFields<'a> {
    fn of(e: &'a ErrorInfo) -> ErrorFields<'a> {
        ErrorFields { action: e.action.as_deref(), category: &e.category, message: &e.message }
    }
}

/// `RUN_FINISHED`'s token usage.
#[serde_with::skip_serializing_none]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunUsage<'a> {
    cache_write_input_tokens: Option<u64>,
    cached_input_tokens: Option<u64>,
    input_tokens: Option<u64>,
    model: Option<&'a str>,
    output_tokens: Option<u64>,
    provider: Option<&'a str>,
}

/// The AG-UI projection.
#[derive(Debug)]
pub struct AgUi {
    format: AgUiFormat,
    run: Option<Run>,
    /// Open tool calls of the current run: name and the call that spawned its agent.
    calls: HashMap<String, (String, Option<String>)>,
    /// Child agents of the current run whose `SUBAGENT_STARTED` was written and not yet
    /// their end (in order, so a run that ends with some open ends them alike every time).
    subagents: BTreeSet<String>,
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
    /// The time of its latest event, when it ends: a run read from an archive, or followed
    /// by another, did not end when it was read.
    last: Option<i64>,
}

impl AgUi {
    /// An AG-UI projection writing `format`.
    pub fn new(format: AgUiFormat) -> AgUi {
        AgUi { format, run: None, calls: HashMap::new(), subagents: BTreeSet::new() }
    }

    fn emit<'a>(
        &self,
        out: &mut dyn Write,
        kind: &'static str,
        at: Option<i64>,
        sub: Option<&'a str>,
        mut frame: Frame<'a>,
    ) -> io::Result<()> {
        frame.kind = kind;
        frame.timestamp = at;
        if sub.is_some() {
            frame.subagent_run_id = sub;
        }
        if self.format == AgUiFormat::Sse {
            out.write_all(b"data: ")?;
        }
        serde_json::to_writer(&mut *out, &frame)?;
        out.write_all(if self.format == AgUiFormat::Sse { b"\n\n" } else { b"\n" })
    }

    /// Ends the open text or reasoning message.
    fn close_message(&mut self, out: &mut dyn Write, at: Option<i64>) -> io::Result<()> {
        let Some((id, reasoning, sub)) = self.run.as_mut().and_then(|r| r.message.take()) else {
            return Ok(());
        };
        let sub = sub.as_deref();
        let f = || Frame { message_id: Some(&id), ..Frame::default() };
        if reasoning {
            self.emit(out, "REASONING_MESSAGE_END", at, sub, f())?;
            self.emit(out, "REASONING_END", at, sub, f())
        } else {
            self.emit(out, "TEXT_MESSAGE_END", at, sub, f())
        }
    }

    fn close_step(&mut self, out: &mut dyn Write, at: Option<i64>) -> io::Result<()> {
        self.close_message(out, at)?;
        if let Some(n) = self.run.as_mut().and_then(|r| r.step.take()) {
            self.emit(out, "STEP_FINISHED", at, None, Frame { step_name: Some(n), ..Frame::default() })?;
        }
        Ok(())
    }

    /// Ends the current run, at its latest event (`at` when none had a time): `RUN_ERROR`
    /// when a turn failed, timed out or was cut off, else `RUN_FINISHED` (cancelled when a
    /// turn was).
    fn close_run(&mut self, out: &mut dyn Write, at: Option<i64>) -> io::Result<()> {
        let at = self.run.as_ref().and_then(|r| r.last).or(at);
        self.close_step(out, at)?;
        let Some(run) = self.run.take() else { return Ok(()) };
        self.calls.clear();
        // A child agent still working when its call ended (a background agent's events
        // come after it) ends with the run: no subagent outlives it.
        let ending = if run.cancelled { "cancelled" } else { "success" };
        let failure = run.failure.as_ref().map(|(outcome, error)| {
            let code = error.as_ref().map(|e| e.category.clone()).or_else(|| outcome.default_category());
            let message = error.as_ref().map_or_else(|| format!("the run {}", outcome.as_str()), |e| e.message.clone());
            (code, message)
        });
        for id in std::mem::take(&mut self.subagents) {
            let f = match &failure {
                Some((code, message)) => Frame {
                    subagent_run_id: Some(&id),
                    code: code.as_ref().map(|c| c.as_str()),
                    message: Some(message),
                    ..Frame::default()
                },
                None => {
                    Frame { subagent_run_id: Some(&id), outcome: Some(Ending { kind: ending }), ..Frame::default() }
                }
            };
            let kind = if failure.is_some() { "SUBAGENT_ERROR" } else { "SUBAGENT_FINISHED" };
            self.emit(out, kind, at, None, f)?;
        }
        if let Some((code, message)) = &failure {
            let f = Frame { code: code.as_ref().map(|c| c.as_str()), message: Some(message), ..Frame::default() };
            return self.emit(out, "RUN_ERROR", at, None, f);
        }
        let u = &run.usage;
        let usage = (!u.is_empty()).then(|| {
            [RunUsage {
                cache_write_input_tokens: u.cache_write,
                cached_input_tokens: u.cache_read,
                input_tokens: prompt_tokens(u),
                model: run.model.as_deref(),
                output_tokens: u.output_tokens,
                provider: run.provider.as_deref(),
            }]
        });
        let f = Frame {
            thread_id: Some(&run.session),
            run_id: Some(&run.session),
            outcome: Some(Ending { kind: ending }),
            usage,
            ..Frame::default()
        };
        self.emit(out, "RUN_FINISHED", at, None, f)
    }

    /// Writes `SUBAGENT_STARTED` for the child agent of call `parent` the first time it is seen.
    fn subagent(&mut self, out: &mut dyn Write, at: Option<i64>, parent: &str) -> io::Result<()> {
        if !self.subagents.insert(parent.to_owned()) {
            return Ok(());
        }
        let (name, grand) = match self.calls.get(parent) {
            Some((name, grand)) => (name.as_str(), grand.as_deref()),
            None => ("agent", None),
        };
        let f = Frame {
            subagent_run_id: Some(parent),
            name: Some(name),
            parent_tool_call_id: Some(parent),
            parent_subagent_run_id: grand,
            ..Frame::default()
        };
        self.emit(out, "SUBAGENT_STARTED", at, None, f)
    }

    fn raw(&self, out: &mut dyn Write, ev: &Event, at: Option<i64>) -> io::Result<()> {
        let f =
            Frame { event: Some(serde_json::to_value(ev)?), source: Some("minicode.output.v1"), ..Frame::default() };
        self.emit(out, "RAW", at, ev.parent_id.as_deref(), f)
    }

    /// Opens a text or reasoning message unless the same kind is open for the same agent.
    fn open_message(&mut self, out: &mut dyn Write, ev: &Event, at: Option<i64>, reasoning: bool) -> io::Result<()> {
        let sub = ev.parent_id.as_deref();
        if let Some((_, r, s)) = self.run.as_ref().and_then(|r| r.message.as_ref()) {
            if *r == reasoning && s.as_deref() == sub {
                return Ok(());
            }
        }
        self.close_message(out, at)?;
        let id = ev.event_id.as_str();
        let f = |role| Frame { message_id: Some(id), role, ..Frame::default() };
        if reasoning {
            self.emit(out, "REASONING_START", at, sub, f(None))?;
            self.emit(out, "REASONING_MESSAGE_START", at, sub, f(Some("reasoning")))?;
        } else {
            self.emit(out, "TEXT_MESSAGE_START", at, sub, f(Some("assistant")))?;
        }
        let run = self.run.as_mut().expect("a run is open");
        run.message = Some((id.to_owned(), reasoning, sub.map(str::to_owned)));
        if !reasoning {
            run.last_text = Some(id.to_owned());
        }
        Ok(())
    }

    /// The id of the open text or reasoning message.
    fn message_id(&self) -> Option<&str> {
        self.run.as_ref().and_then(|r| r.message.as_ref()).map(|m| m.0.as_str())
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
        let f = || Frame { message_id: Some(id), ..Frame::default() };
        self.emit(out, "TEXT_MESSAGE_START", at, sub, Frame { role: Some(role), ..f() })?;
        if !text.is_empty() {
            self.emit(out, "TEXT_MESSAGE_CONTENT", at, sub, Frame { delta: Some(Delta::Text(text)), ..f() })?;
        }
        self.emit(out, "TEXT_MESSAGE_END", at, sub, f())
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
                last: None,
            });
            let f = Frame { thread_id: Some(&ev.session_id), run_id: Some(&ev.session_id), ..Frame::default() };
            self.emit(out, "RUN_STARTED", at, None, f)?;
        }
        if !matches!(ev.body, Body::Summary(_)) {
            let run = self.run.as_mut().expect("a run is open");
            run.last = run.last.max(at);
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
                self.emit(out, "STEP_STARTED", at, None, Frame { step_name: Some(ev.turn_id), ..Frame::default() })?;
                if let Some(p) = &t.prompt {
                    self.whole_message(out, &ev.event_id, "user", p, at, None)?;
                }
            }
            Body::Text(t) if t.role == Role::Assistant => {
                if !t.delta.is_empty() {
                    self.open_message(out, ev, at, false)?;
                    let f =
                        Frame { message_id: self.message_id(), delta: Some(Delta::Text(&t.delta)), ..Frame::default() };
                    self.emit(out, "TEXT_MESSAGE_CONTENT", at, sub, f)?;
                }
            }
            Body::Text(t) => {
                self.close_message(out, at)?;
                let role = if t.role == Role::User { "user" } else { "system" };
                self.whole_message(out, &ev.event_id, role, &t.delta, at, sub)?;
            }
            Body::Reasoning(r) => {
                if !r.delta.is_empty() {
                    self.open_message(out, ev, at, true)?;
                    let f =
                        Frame { message_id: self.message_id(), delta: Some(Delta::Text(&r.delta)), ..Frame::default() };
                    self.emit(out, "REASONING_MESSAGE_CONTENT", at, sub, f)?;
                }
            }
            Body::ToolStarted(t) => {
                self.close_message(out, at)?;
                self.calls.insert(t.tool_call_id.clone(), (t.name.clone(), ev.parent_id.clone()));
                let id = Some(t.tool_call_id.as_str());
                let last_text = self.run.as_ref().and_then(|r| r.last_text.as_deref()).filter(|_| sub.is_none());
                let f = Frame {
                    tool_call_id: id,
                    tool_call_name: Some(&t.name),
                    parent_message_id: last_text,
                    ..Frame::default()
                };
                self.emit(out, "TOOL_CALL_START", at, sub, f)?;
                let args = match (&t.input, &t.command) {
                    (Some(i), _) => Some(Delta::Input(i)),
                    (None, Some(c)) => Some(Delta::Command(c)),
                    (None, None) => None,
                };
                if args.is_some() {
                    self.emit(
                        out,
                        "TOOL_CALL_ARGS",
                        at,
                        sub,
                        Frame { tool_call_id: id, delta: args, ..Frame::default() },
                    )?;
                }
                self.emit(out, "TOOL_CALL_END", at, sub, Frame { tool_call_id: id, ..Frame::default() })?;
            }
            Body::ToolEnded(t) => {
                self.close_message(out, at)?;
                let id = Some(t.tool_call_id.as_str());
                if self.subagents.remove(&t.tool_call_id) {
                    if t.outcome == Outcome::Completed {
                        let f = Frame {
                            subagent_run_id: id,
                            outcome: Some(Ending { kind: "success" }),
                            ..Frame::default()
                        };
                        self.emit(out, "SUBAGENT_FINISHED", at, None, f)?;
                    } else {
                        let message = t.error.as_ref().map_or(t.outcome.as_str(), |e| e.message.as_str());
                        let code =
                            t.error.as_ref().map(|e| e.category.clone()).or_else(|| t.outcome.default_category());
                        let f = Frame {
                            subagent_run_id: id,
                            message: Some(message),
                            code: code.as_ref().map(|c| c.as_str()),
                            ..Frame::default()
                        };
                        self.emit(out, "SUBAGENT_ERROR", at, None, f)?;
                    }
                }
                self.calls.remove(&t.tool_call_id);
                let mut content: Cow<'_, str> = Cow::Owned(t.output.as_ref().map(output_text).unwrap_or_default());
                if content.is_empty() {
                    if let Some(e) = &t.error {
                        content = Cow::Borrowed(e.message.as_str());
                    }
                }
                let meta = Metadata {
                    duration_ms: t.duration_ms,
                    error: t.error.as_ref().map(ErrorFields::of),
                    exit_code: t.output.as_ref().and_then(|o| o.exit_code),
                    outcome: t.outcome.as_str(),
                    truncated: t.output.as_ref().is_some_and(|o| o.truncated).then_some(true),
                };
                let f = Frame {
                    message_id: Some(&ev.event_id),
                    tool_call_id: id,
                    content: Some(content),
                    role: Some("tool"),
                    metadata: Some(meta),
                    ..Frame::default()
                };
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
