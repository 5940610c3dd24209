//! `otlp`: OpenTelemetry traces as OTLP/JSON, one `ExportTraceServiceRequest` per line (what
//! the Collector's `otlpjsonfile` receiver reads), following the GenAI semantic conventions of
//! [`SEMCONV`] (the last release that holds them before they moved to a repository of their
//! own), whose schema URL every request carries.
//!
//! One trace per session. Its root is an `invoke_agent` span for the session; each turn is an
//! `invoke_agent` span under it; each tool call an `execute_tool` span under its turn; a child
//! agent's events make an `invoke_agent` span under the tool call that spawned it (`parentId`),
//! and the child's tools hang under that span. Ids are derived from the session id and the
//! turn number or tool call id, so exporting the same run twice gives the same ids.
//!
//! A span is written when it ends (a tool or turn at its terminal event, a child agent with
//! its parent call, a session at the end of input), with the events' own timestamps: a span
//! ends at the later of its start and end events, nothing else is made up. Token usage and
//! the model are attributes as the conventions name them; the outcome is the span status
//! (error unless completed) and `minicode.outcome` keeps denied, cancelled, timeout and
//! interrupted apart. Prompt, assistant text and tool input and output are attributes only
//! with `--with-content` (and are scrubbed like everything `project` shows).

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::ops::ControlFlow;

use serde::Serialize;
use xxhash_rust::xxh3::{xxh3_128, xxh3_64};

use super::{event_millis, output_text, prompt_tokens, Flow, Projection};
use crate::bound::{bound, Keep};
use crate::engine::DEFAULT_FIELD_BOUND;
use crate::event::{Body, ErrorCategory, ErrorInfo, Event, Outcome, Role, ToolEnded, ToolKind, ToolStarted, Usage};

/// The semantic-conventions release these spans follow.
pub const SEMCONV: &str = "1.41.0";
/// Its schema URL, on every scope.
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.41.0";

/// OTLP `SpanKind` values (the protobuf enum numbers, as the JSON mapping writes them).
const KIND_INTERNAL: u8 = 1;
const KIND_CLIENT: u8 = 3;
/// OTLP `StatusCode.STATUS_CODE_ERROR`.
const STATUS_ERROR: u8 = 2;

/// The OTLP projection.
#[derive(Debug)]
pub struct Otlp {
    with_content: bool,
    sessions: HashMap<String, Session>,
    /// Session ids in order of appearance, so the end of input closes them in that order.
    order: Vec<String>,
}

/// What is known of a session's root span and its open children.
#[derive(Debug, Default)]
struct Session {
    trace: String,
    start: Option<i64>,
    end: Option<i64>,
    provider: Option<String>,
    version: Option<String>,
    model: Option<String>,
    usage: Usage,
    /// The last turn that did not complete, with its error.
    failure: Option<(Outcome, Option<ErrorInfo>)>,
    turns: HashMap<u64, Turn>,
    tools: HashMap<String, Tool>,
    /// Child agents, by the tool call that spawned them.
    agents: HashMap<String, Agent>,
    /// The child agents whose span was written with the call that spawned them: what they
    /// do after it (a background agent) is theirs, under that span.
    written_agents: HashSet<String>,
    /// The agent calls whose span was written (only those: a session's other calls are
    /// held while open, not after).
    ended_agent_calls: HashSet<String>,
}

#[derive(Debug, Default)]
struct Turn {
    start: Option<i64>,
    usage: Usage,
    prompt: Option<String>,
    text: String,
}

#[derive(Debug)]
struct Tool {
    started: ToolStarted,
    start: Option<i64>,
    parent: Option<String>,
    turn: u64,
}

#[derive(Debug)]
struct Agent {
    start: Option<i64>,
    end: Option<i64>,
}

/// One span of the OTLP/JSON mapping.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Span {
    trace_id: String,
    span_id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    parent_span_id: String,
    name: String,
    kind: u8,
    start_time_unix_nano: String,
    end_time_unix_nano: String,
    attributes: Vec<KeyValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<SpanStatus>,
}

#[derive(Serialize)]
struct SpanStatus {
    message: String,
    code: u8,
}

#[derive(Serialize)]
struct KeyValue {
    key: &'static str,
    value: AnyValue,
}

/// `AnyValue`: 64-bit integers are strings in the JSON mapping.
#[derive(Serialize)]
enum AnyValue {
    #[serde(rename = "stringValue")]
    Str(String),
    #[serde(rename = "intValue")]
    Int(String),
    #[serde(rename = "doubleValue")]
    Double(f64),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Request<'a> {
    resource_spans: [ResourceSpans<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResourceSpans<'a> {
    resource: Resource,
    scope_spans: [ScopeSpans<'a>; 1],
    schema_url: &'static str,
}

#[derive(Serialize)]
struct Resource {
    attributes: Vec<KeyValue>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ScopeSpans<'a> {
    scope: Scope,
    spans: &'a [Span],
    schema_url: &'static str,
}

#[derive(Serialize)]
struct Scope {
    name: &'static str,
    version: &'static str,
}

/// Attributes under construction.
#[derive(Default)]
struct Attrs(Vec<KeyValue>);

impl Attrs {
    /// What a session's and a turn's `invoke_agent` spans say of the agent.
    fn agent(s: &Session, session: &str) -> Attrs {
        let mut a = Attrs::default();
        a.str("gen_ai.operation.name", "invoke_agent")
            .str("gen_ai.conversation.id", session)
            .opt("gen_ai.provider.name", s.provider.as_deref())
            .opt("gen_ai.agent.name", s.provider.as_deref())
            .opt("gen_ai.agent.version", s.version.as_deref())
            .opt("gen_ai.request.model", s.model.as_deref());
        a
    }

    fn str(&mut self, key: &'static str, v: impl Into<String>) -> &mut Self {
        self.0.push(KeyValue { key, value: AnyValue::Str(v.into()) });
        self
    }
    fn opt(&mut self, key: &'static str, v: Option<&str>) -> &mut Self {
        if let Some(v) = v {
            self.str(key, v);
        }
        self
    }
    fn int(&mut self, key: &'static str, v: Option<i64>) -> &mut Self {
        if let Some(v) = v {
            self.0.push(KeyValue { key, value: AnyValue::Int(v.to_string()) });
        }
        self
    }
    fn uint(&mut self, key: &'static str, v: Option<u64>) -> &mut Self {
        self.int(key, v.map(|v| i64::try_from(v).unwrap_or(i64::MAX)))
    }
    /// Usage as the conventions count it: input tokens include the cached ones.
    fn usage(&mut self, u: &Usage) -> &mut Self {
        self.uint("gen_ai.usage.input_tokens", prompt_tokens(u))
            .uint("gen_ai.usage.output_tokens", u.output_tokens)
            .uint("gen_ai.usage.cache_read.input_tokens", u.cache_read)
            .uint("gen_ai.usage.cache_creation.input_tokens", u.cache_write);
        if let Some(c) = u.cost_usd {
            self.0.push(KeyValue { key: "minicode.usage.cost_usd", value: AnyValue::Double(c) });
        }
        self
    }
    /// The outcome, and for anything but completed `error.type` and an error status.
    fn outcome(&mut self, outcome: Outcome, error: Option<&ErrorInfo>) -> Option<SpanStatus> {
        self.str("minicode.outcome", outcome.as_str());
        if outcome == Outcome::Completed {
            return None;
        }
        let category = error.map(|e| e.category.clone()).or_else(|| outcome.default_category());
        self.opt("error.type", category.as_ref().map(|c| c.as_str()));
        let message = error.map_or_else(|| outcome.as_str().to_owned(), |e| e.message.clone());
        Some(SpanStatus { message, code: STATUS_ERROR })
    }
}

/// A span id: the first 8 bytes of a hash of what identifies the span within its trace.
fn span_id(trace: &str, parts: &[&str]) -> String {
    let mut key = trace.as_bytes().to_vec();
    for p in parts {
        key.push(0);
        key.extend_from_slice(p.as_bytes());
    }
    // An all-zero id is invalid in OTLP.
    format!("{:016x}", xxh3_64(&key).max(1))
}

fn nanos(ms: Option<i64>) -> String {
    // Only 1970 to 2554 is representable (fixed64 nanoseconds): a time before reads as the
    // epoch, one after as the last instant.
    (ms.unwrap_or(0).max(0) as u64).saturating_mul(1_000_000).to_string()
}

/// JSON text for a content attribute the conventions type as `any`: the user's message.
fn input_messages(text: &str) -> String {
    serde_json::json!([{"role": "user", "parts": [{"type": "text", "content": text}]}]).to_string()
}

/// The agent's answer, with why it ended as the conventions' output messages require it.
fn output_messages(text: &str, outcome: Outcome, error: Option<&ErrorInfo>) -> String {
    let finish_reason = match (outcome, error.map(|e| &e.category)) {
        (Outcome::Completed, _) => "stop",
        (_, Some(ErrorCategory::BudgetExceeded)) => "length",
        (_, Some(ErrorCategory::Refused)) => "content_filter",
        _ => "error",
    };
    serde_json::json!([{"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": finish_reason}])
        .to_string()
}

impl Otlp {
    /// An OTLP projection; `with_content` adds prompt, text and tool input and output.
    pub fn new(with_content: bool) -> Otlp {
        Otlp { with_content, sessions: HashMap::new(), order: Vec::new() }
    }

    fn session(&mut self, id: &str) -> &mut Session {
        if !self.sessions.contains_key(id) {
            self.order.push(id.to_owned());
            let trace = format!("{:032x}", xxh3_128(id.as_bytes()).max(1));
            self.sessions.insert(id.to_owned(), Session { trace, ..Session::default() });
        }
        self.sessions.get_mut(id).expect("inserted above")
    }

    fn write(&self, out: &mut dyn Write, session: &Session, spans: &[Span]) -> io::Result<()> {
        let mut resource = Attrs::default();
        resource.str("service.name", session.provider.as_deref().unwrap_or("unknown_service"));
        resource.opt("service.version", session.version.as_deref());
        let request = Request {
            resource_spans: [ResourceSpans {
                resource: Resource { attributes: resource.0 },
                scope_spans: [ScopeSpans {
                    scope: Scope { name: "minicode-output", version: env!("CARGO_PKG_VERSION") },
                    spans,
                    schema_url: SCHEMA_URL,
                }],
                schema_url: SCHEMA_URL,
            }],
        };
        serde_json::to_writer(&mut *out, &request)?;
        out.write_all(b"\n")
    }

    /// The span of a child agent, ended with the call that spawned it, under that call's
    /// span (or the session's, for a call the input never showed, or that ended before and
    /// was no agent call). It is named by the call's target (the task the model wrote) only
    /// with content: without, by the tool.
    fn agent_span(&self, s: &Session, session: &str, parent: &str, agent: &Agent) -> Span {
        let mut a = Attrs::default();
        a.str("gen_ai.operation.name", "invoke_agent").str("gen_ai.conversation.id", session);
        let name = s.tools.get(parent).map(|t| {
            let target = t.started.target.clone().filter(|_| self.with_content);
            target.unwrap_or_else(|| t.started.name.clone())
        });
        a.opt("gen_ai.agent.name", name.as_deref()).opt("gen_ai.provider.name", s.provider.as_deref());
        a.str("minicode.parent_tool_call_id", parent);
        Span {
            trace_id: s.trace.clone(),
            span_id: span_id(&s.trace, &["agent", parent]),
            parent_span_id: match s.tools.contains_key(parent) || s.ended_agent_calls.contains(parent) {
                true => span_id(&s.trace, &["tool", parent]),
                false => span_id(&s.trace, &["session"]),
            },
            name: name.map_or_else(|| "invoke_agent".to_owned(), |n| format!("invoke_agent {n}")),
            kind: KIND_INTERNAL,
            start_time_unix_nano: nanos(agent.start),
            end_time_unix_nano: nanos(agent.end.max(agent.start)),
            attributes: a.0,
            status: None,
        }
    }

    fn tool_span(&self, s: &Session, session: &str, tool: &Tool, ended: Option<(&ToolEnded, Option<i64>)>) -> Span {
        let t = &tool.started;
        let mut a = Attrs::default();
        a.str("gen_ai.operation.name", "execute_tool")
            .str("gen_ai.tool.name", t.name.clone())
            .str("gen_ai.tool.call.id", t.tool_call_id.clone())
            .str("gen_ai.conversation.id", session)
            .str("minicode.tool.kind", t.kind.as_str())
            .str("minicode.tool.qualified", t.qualified.clone());
        let output = ended.and_then(|(e, _)| e.output.as_ref());
        a.int("process.exit.code", output.and_then(|o| o.exit_code));
        if self.with_content {
            if let Some(input) = t.input.as_ref() {
                a.str("gen_ai.tool.call.arguments", input.to_string());
            } else if let Some(c) = t.command.as_deref() {
                a.str("gen_ai.tool.call.arguments", serde_json::json!({ "command": c }).to_string());
            }
            if let Some(o) = output {
                a.str("gen_ai.tool.call.result", output_text(o));
            }
        }
        let (outcome, error, end) = match ended {
            Some((e, at)) => (e.outcome, e.error.as_ref(), at),
            None => (Outcome::Interrupted, None, s.end),
        };
        let status = a.outcome(outcome, error);
        let parent = match &tool.parent {
            Some(p) => span_id(&s.trace, &["agent", p]),
            None if tool.turn > 0 => span_id(&s.trace, &["turn", &tool.turn.to_string()]),
            None => span_id(&s.trace, &["session"]),
        };
        Span {
            trace_id: s.trace.clone(),
            span_id: span_id(&s.trace, &["tool", &t.tool_call_id]),
            parent_span_id: parent,
            name: format!("execute_tool {}", t.name),
            kind: KIND_INTERNAL,
            start_time_unix_nano: nanos(tool.start),
            end_time_unix_nano: nanos(end.max(tool.start)),
            attributes: a.0,
            status,
        }
    }

    fn turn_span(
        &self,
        s: &Session,
        session: &str,
        n: u64,
        turn: &Turn,
        ended: (Outcome, Option<&ErrorInfo>, Option<i64>),
    ) -> Span {
        let (outcome, error, end) = ended;
        let mut a = Attrs::agent(s, session);
        a.uint("minicode.turn.id", Some(n)).usage(&turn.usage);
        if self.with_content {
            if let Some(p) = turn.prompt.as_deref() {
                a.str("gen_ai.input.messages", input_messages(p));
            }
            if !turn.text.is_empty() {
                let mut text = turn.text.clone();
                bound(&mut text, DEFAULT_FIELD_BOUND, Keep::HeadTail);
                a.str("gen_ai.output.messages", output_messages(&text, outcome, error));
            }
        }
        let status = a.outcome(outcome, error);
        Span {
            trace_id: s.trace.clone(),
            span_id: span_id(&s.trace, &["turn", &n.to_string()]),
            parent_span_id: span_id(&s.trace, &["session"]),
            name: s.provider.as_deref().map_or_else(|| "invoke_agent".to_owned(), |p| format!("invoke_agent {p}")),
            kind: KIND_INTERNAL,
            start_time_unix_nano: nanos(turn.start),
            end_time_unix_nano: nanos(end.max(turn.start)),
            attributes: a.0,
            status,
        }
    }

    fn session_span(s: &Session, session: &str) -> Span {
        let mut a = Attrs::agent(s, session);
        a.usage(&s.usage);
        let (outcome, error) = s.failure.as_ref().map_or((Outcome::Completed, None), |(o, e)| (*o, e.as_ref()));
        let status = a.outcome(outcome, error);
        Span {
            trace_id: s.trace.clone(),
            span_id: span_id(&s.trace, &["session"]),
            parent_span_id: String::new(),
            name: s.provider.as_deref().map_or_else(|| "invoke_agent".to_owned(), |p| format!("invoke_agent {p}")),
            kind: KIND_CLIENT,
            start_time_unix_nano: nanos(s.start),
            end_time_unix_nano: nanos(s.end.max(s.start)),
            attributes: a.0,
            status,
        }
    }
}

impl Projection for Otlp {
    fn event(&mut self, ev: &Event, out: &mut dyn Write) -> Flow {
        if matches!(ev.body, Body::Summary(_)) {
            return Ok(ControlFlow::Continue(()));
        }
        let at = event_millis(ev);
        let with_content = self.with_content;
        let s = self.session(&ev.session_id);
        s.start = s.start.or(at);
        s.end = s.end.max(at);
        if let Some(p) = ev.parent_id.as_ref().filter(|p| !s.written_agents.contains(*p)) {
            if let Some(agent) = s.agents.get_mut(p) {
                agent.end = agent.end.max(at);
            } else {
                s.agents.insert(p.clone(), Agent { start: at, end: at });
            }
        }
        match &ev.body {
            Body::SessionStarted(st) => {
                s.provider = Some(st.provider.clone());
                s.version = st.provider_version.clone();
                s.model = st.model.clone().or(s.model.take());
            }
            Body::TurnStarted(t) => {
                let turn = s.turns.entry(ev.turn_id).or_default();
                turn.start = turn.start.or(at);
                turn.prompt = t.prompt.clone();
            }
            Body::Text(t) if with_content && t.role == Role::Assistant && ev.parent_id.is_none() => {
                let turn = s.turns.entry(ev.turn_id).or_default();
                turn.text.push_str(&t.delta);
                // Held until the turn ends: kept near the field bound, its newest text lost first.
                if turn.text.len() > 2 * DEFAULT_FIELD_BOUND {
                    bound(&mut turn.text, DEFAULT_FIELD_BOUND, Keep::Tail);
                }
            }
            Body::Usage(u) => {
                s.usage.add(u);
                s.turns.entry(ev.turn_id).or_default().usage.add(u);
            }
            Body::ToolStarted(t) => {
                let tool = Tool { started: t.clone(), start: at, parent: ev.parent_id.clone(), turn: ev.turn_id };
                s.tools.insert(t.tool_call_id.clone(), tool);
            }
            Body::ToolEnded(e) => {
                let session = ev.session_id.as_str();
                let s = &self.sessions[session];
                let mut spans = Vec::new();
                if let Some(agent) = s.agents.get(&e.tool_call_id) {
                    spans.push(self.agent_span(s, session, &e.tool_call_id, agent));
                }
                let announced = s.tools.get(&e.tool_call_id);
                let fallback;
                let tool = match announced {
                    Some(t) => t,
                    None => {
                        // A terminal without its start (input cut at the front): a span of no length.
                        let started = ToolStarted {
                            tool_call_id: e.tool_call_id.clone(),
                            name: e.name.clone(),
                            qualified: e.name.clone(),
                            kind: e.kind,
                            target: None,
                            input: None,
                            command: None,
                            cwd: None,
                        };
                        fallback = Tool { started, start: at, parent: ev.parent_id.clone(), turn: ev.turn_id };
                        &fallback
                    }
                };
                spans.push(self.tool_span(s, session, tool, Some((e, at))));
                self.write(out, s, &spans)?;
                let s = self.sessions.get_mut(session).expect("seen above");
                if s.agents.remove(&e.tool_call_id).is_some() {
                    s.written_agents.insert(e.tool_call_id.clone());
                }
                if e.kind == ToolKind::Agent {
                    s.ended_agent_calls.insert(e.tool_call_id.clone());
                }
                s.tools.remove(&e.tool_call_id);
            }
            Body::TurnEnded(t) => {
                let session = ev.session_id.as_str();
                let mut turn = s.turns.remove(&ev.turn_id).unwrap_or_default();
                turn.start = turn.start.or(at);
                if t.outcome != Outcome::Completed {
                    s.failure = Some((t.outcome, t.error.clone()));
                }
                let s = &self.sessions[session];
                let span = self.turn_span(s, session, ev.turn_id, &turn, (t.outcome, t.error.as_ref(), at));
                self.write(out, s, &[span])?;
            }
            _ => {}
        }
        Ok(ControlFlow::Continue(()))
    }

    fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        for id in std::mem::take(&mut self.order) {
            let s = &self.sessions[&id];
            let mut spans = Vec::new();
            let mut tools: Vec<&Tool> = s.tools.values().collect();
            tools.sort_by(|a, b| (a.start, &a.started.tool_call_id).cmp(&(b.start, &b.started.tool_call_id)));
            for tool in tools {
                if let Some(agent) = s.agents.get(&tool.started.tool_call_id) {
                    spans.push(self.agent_span(s, &id, &tool.started.tool_call_id, agent));
                }
                spans.push(self.tool_span(s, &id, tool, None));
            }
            // Child agents first seen after the call that spawned them had ended (its span
            // written then): theirs now, under it.
            let mut late: Vec<(&String, &Agent)> = s.agents.iter().filter(|(p, _)| !s.tools.contains_key(*p)).collect();
            late.sort_by(|a, b| (a.1.start, a.0).cmp(&(b.1.start, b.0)));
            spans.extend(late.into_iter().map(|(p, agent)| self.agent_span(s, &id, p, agent)));
            // A turn seen only through its usage or text (after it ended, or before any turn)
            // is no open turn.
            let mut turns: Vec<(&u64, &Turn)> = s.turns.iter().filter(|(_, t)| t.start.is_some()).collect();
            turns.sort_by_key(|(n, _)| **n);
            for (n, turn) in turns {
                spans.push(self.turn_span(s, &id, *n, turn, (Outcome::Interrupted, None, s.end)));
            }
            spans.push(Self::session_span(s, &id));
            self.write(out, s, &spans)?;
        }
        self.sessions.clear();
        Ok(())
    }

    fn shows_tool_output(&self) -> bool {
        self.with_content
    }
}
