//! `atif`: each session as one trajectory of the Agent Trajectory Interchange Format
//! ([`ATIF_VERSION`], Harbor's RFC 0001 `trajectory-format`), an indented JSON document. One
//! session gives one document; several give a JSON array of them, in order of appearance.
//!
//! Steps follow the run: a prompt is a `user` step; the agent's text, reasoning and tool calls
//! are `agent` steps, a new one beginning when the agent speaks again after tool results came
//! back; each tool's result is an observation in the step that called it, with the outcome,
//! exit code and error in its `extra` (ATIF has no status of its own); warnings, approvals,
//! compactions and turns that did not complete are `system` steps. A turn's usage is the
//! metrics of its last agent step, and `final_metrics` adds up the session. ATIF counts
//! cached tokens inside `prompt_tokens`; figures the input never gave stay absent.
//!
//! A child agent's events (`parentId`) make a trajectory of their own, embedded in the
//! session's `subagent_trajectories` and named by a `subagent_trajectory_ref` in the result
//! of the call that spawned it. A document is written when its session ends (another
//! session's events begin, or the input ends), so memory holds one session, each text
//! bounded like every field of the contract.

mod wire;

use std::collections::HashMap;
use std::io::{self, Write};
use std::ops::ControlFlow;

use super::{output_text, Flow, Projection};
use crate::bound::{bound, Keep};
use crate::engine::DEFAULT_FIELD_BOUND;
use crate::event::{Body, Event, Outcome, Role, ToolEnded, ToolStarted, Usage};
use wire::{
    arguments, final_metrics, Agent, CallExtra, ErrorExtra, Metrics, Observation, ObservationResult, ResultExtra, Step,
    SubagentExtra, SubagentRef, SystemExtra, ToolCall, Trajectory,
};

/// The ATIF version written (`schema_version`).
pub const ATIF_VERSION: &str = "ATIF-v1.8";

/// The ATIF projection.
#[derive(Debug, Default)]
pub struct Atif {
    current: Option<Session>,
    /// The first document, held until it is known whether another follows.
    first: Option<Trajectory>,
    written: usize,
}

/// One session being built.
#[derive(Debug, Default)]
struct Session {
    id: String,
    /// When the session's first event happened.
    began: Option<String>,
    provider: Option<String>,
    version: Option<String>,
    model: Option<String>,
    root: Builder,
    /// Child agents in order of appearance, by the call that spawned them.
    subagents: Vec<(String, Builder)>,
    /// Which trajectory holds each tool call (`None`: the root).
    owner: HashMap<String, Option<usize>>,
    usage: Usage,
}

/// The steps of one trajectory.
#[derive(Debug, Default)]
struct Builder {
    steps: Vec<Step>,
    /// The agent step taking text and calls, until tool results come back.
    open: Option<usize>,
    /// The step of each tool call.
    calls: HashMap<String, usize>,
    /// The current turn's usage, and its last agent step, which carries it as its metrics
    /// however the usage and the steps come in order.
    turn_usage: Usage,
    turn_agent: Option<usize>,
    usage: Usage,
}

/// Appends to a text held until its step is written, keeping it near the field bound.
fn append(text: &mut String, delta: &str) {
    text.push_str(delta);
    if text.len() > 2 * DEFAULT_FIELD_BOUND {
        bound(text, DEFAULT_FIELD_BOUND, Keep::HeadTail);
    }
}

/// An event's time as ATIF's ISO 8601 `timestamp`: absent when the canonical input's is not
/// a date (hand-made input), which the schema would refuse.
fn date(timestamp: &str) -> Option<String> {
    crate::engine::clock::parse_rfc3339(timestamp).map(|_| timestamp.to_owned())
}

impl Builder {
    fn push(&mut self, source: &'static str, ev: &Event, message: String, extra: Option<SystemExtra>) -> usize {
        self.open = None;
        self.steps.push(Step {
            step_id: self.steps.len() + 1,
            timestamp: date(&ev.timestamp),
            source,
            message,
            reasoning_content: None,
            tool_calls: None,
            observation: None,
            metrics: None,
            extra,
        });
        self.steps.len() - 1
    }

    /// The agent step taking what the agent says next.
    fn agent_step(&mut self, ev: &Event) -> &mut Step {
        let i = match self.open {
            Some(i) if self.steps[i].observation.is_none() => i,
            _ => {
                let i = self.push("agent", ev, String::new(), None);
                self.open = Some(i);
                i
            }
        };
        if self.turn_agent != Some(i) {
            if let Some(before) = self.turn_agent.replace(i) {
                self.steps[before].metrics = None;
            }
            self.steps[i].metrics = Metrics::of(&self.turn_usage);
        }
        &mut self.steps[i]
    }

    fn tool_started(&mut self, ev: &Event, t: &ToolStarted) {
        let step = self.agent_step(ev);
        let extra = CallExtra { kind: t.kind.as_str(), qualified: t.qualified.clone(), target: t.target.clone() };
        let call = ToolCall {
            tool_call_id: t.tool_call_id.clone(),
            function_name: t.name.clone(),
            arguments: arguments(t),
            extra: Some(extra),
        };
        step.tool_calls.get_or_insert_with(Vec::new).push(call);
        let i = self.open.expect("agent_step opened it");
        self.calls.insert(t.tool_call_id.clone(), i);
    }

    fn tool_ended(&mut self, ev: &Event, t: &ToolEnded) {
        let i = match self.calls.get(&t.tool_call_id) {
            Some(&i) => i,
            None => {
                // A result whose call the input never showed: the call is stated with it.
                let started = ToolStarted {
                    tool_call_id: t.tool_call_id.clone(),
                    name: t.name.clone(),
                    qualified: t.name.clone(),
                    kind: t.kind,
                    target: None,
                    input: None,
                    command: None,
                    cwd: None,
                };
                self.tool_started(ev, &started);
                self.calls[&t.tool_call_id]
            }
        };
        let mut extra =
            ResultExtra { outcome: t.outcome.as_str(), duration_ms: t.duration_ms, ..ResultExtra::default() };
        let mut content = None;
        if let Some(o) = &t.output {
            extra.exit_code = o.exit_code;
            extra.truncated = o.truncated.then_some(true);
            let mut text = output_text(o);
            bound(&mut text, DEFAULT_FIELD_BOUND, Keep::HeadTail);
            content = Some(text);
        }
        if let Some(e) = &t.error {
            extra.error = Some(ErrorExtra::of(e));
            content = content.filter(|c| !c.is_empty()).or_else(|| Some(e.message.clone()));
        }
        let result = ObservationResult {
            source_call_id: Some(t.tool_call_id.clone()),
            content,
            subagent_trajectory_ref: None,
            extra: Some(extra),
        };
        self.steps[i].observation.get_or_insert_with(|| Observation { results: Vec::new() }).results.push(result);
    }

    /// Names the trajectory of the agent spawned by `call` in the call's result.
    fn link(&mut self, ev_session: &str, call: &str, trajectory_id: String) {
        let reference = SubagentRef { trajectory_id, session_id: Some(ev_session.to_owned()) };
        let Some(&i) = self.calls.get(call) else { return };
        let obs = self.steps[i].observation.get_or_insert_with(|| Observation { results: Vec::new() });
        match obs.results.iter_mut().find(|r| r.source_call_id.as_deref() == Some(call)) {
            Some(r) => r.subagent_trajectory_ref.get_or_insert_with(Vec::new).push(reference),
            None => obs.results.push(ObservationResult {
                source_call_id: Some(call.to_owned()),
                content: None,
                subagent_trajectory_ref: Some(vec![reference]),
                extra: Some(ResultExtra { outcome: Outcome::Interrupted.as_str(), ..ResultExtra::default() }),
            }),
        }
    }

    fn event(&mut self, ev: &Event) {
        match &ev.body {
            Body::TurnStarted(t) => {
                (self.turn_usage, self.turn_agent) = (Usage::default(), None);
                if let Some(p) = &t.prompt {
                    self.push("user", ev, p.clone(), None);
                }
            }
            Body::Text(t) => match t.role {
                Role::Assistant => append(&mut self.agent_step(ev).message, &t.delta),
                Role::User => {
                    self.push("user", ev, t.delta.clone(), None);
                }
                Role::System => {
                    self.push("system", ev, t.delta.clone(), None);
                }
            },
            Body::Reasoning(r) => {
                append(self.agent_step(ev).reasoning_content.get_or_insert_with(String::new), &r.delta)
            }
            Body::ToolStarted(t) => self.tool_started(ev, t),
            Body::ToolEnded(t) => self.tool_ended(ev, t),
            Body::Usage(u) => {
                self.usage.add(u);
                self.turn_usage.add(u);
                if let Some(i) = self.turn_agent {
                    self.steps[i].metrics = Metrics::of(&self.turn_usage);
                }
            }
            Body::Warning(w) => {
                let extra = SystemExtra { minicode_type: "warning".into(), ..SystemExtra::default() };
                self.push("system", ev, w.message.clone(), Some(extra));
            }
            Body::ContextCompacted(c) => {
                let extra = SystemExtra {
                    minicode_type: "context.compacted".into(),
                    reason: Some(c.reason.clone()),
                    ..SystemExtra::default()
                };
                self.push("system", ev, format!("context compacted ({})", c.reason), Some(extra));
            }
            Body::ApprovalRequested(a) | Body::ApprovalSettled(a) => {
                let extra = serde_json::to_value(a).ok().map(|v| SystemExtra {
                    approval: Some(v),
                    minicode_type: ev.type_name().to_owned(),
                    ..SystemExtra::default()
                });
                let what = a.title.clone().unwrap_or_else(|| a.approval_id.clone());
                self.push("system", ev, format!("{}: {what}", ev.type_name()), extra);
            }
            Body::TurnEnded(t) if t.outcome != Outcome::Completed => {
                let message =
                    t.error.as_ref().map_or_else(|| format!("turn {}", t.outcome.as_str()), |e| e.message.clone());
                let extra = SystemExtra {
                    error: t.error.as_ref().map(ErrorExtra::of),
                    minicode_type: ev.type_name().to_owned(),
                    outcome: Some(t.outcome.as_str()),
                    ..SystemExtra::default()
                };
                self.push("system", ev, message, Some(extra));
            }
            _ => {}
        }
    }

    fn finish(mut self, began: Option<&String>) -> (Vec<Step>, Usage) {
        if self.steps.is_empty() {
            // ATIF requires a step; a session that said nothing still began.
            self.steps.push(Step {
                step_id: 1,
                timestamp: began.cloned(),
                source: "system",
                message: "session started".into(),
                reasoning_content: None,
                tool_calls: None,
                observation: None,
                metrics: None,
                extra: None,
            });
        }
        for s in &mut self.steps {
            bound(&mut s.message, DEFAULT_FIELD_BOUND, Keep::HeadTail);
            if let Some(r) = &mut s.reasoning_content {
                bound(r, DEFAULT_FIELD_BOUND, Keep::HeadTail);
            }
        }
        (self.steps, self.usage)
    }
}

impl Session {
    fn agent(&self) -> Agent {
        Agent {
            name: self.provider.clone().unwrap_or_else(|| "unknown".into()),
            version: self.version.clone().unwrap_or_else(|| "unknown".into()),
            model_name: self.model.clone(),
        }
    }

    fn trajectory_id(&self, call: &str) -> String {
        format!("{}/{call}", self.id)
    }

    fn event(&mut self, ev: &Event) {
        if let Body::SessionStarted(s) = &ev.body {
            self.provider = Some(s.provider.clone());
            self.version = s.provider_version.clone();
            self.model = s.model.clone();
        }
        if let Body::Usage(u) = &ev.body {
            self.usage.add(u);
        }
        let at = match &ev.parent_id {
            None => None,
            Some(p) => Some(match self.subagents.iter().position(|(c, _)| c == p) {
                Some(i) => i,
                None => {
                    self.subagents.push((p.clone(), Builder::default()));
                    self.subagents.len() - 1
                }
            }),
        };
        if let Body::ToolStarted(t) = &ev.body {
            self.owner.insert(t.tool_call_id.clone(), at);
        }
        match at {
            None => self.root.event(ev),
            Some(i) => self.subagents[i].1.event(ev),
        }
    }

    fn finish(mut self) -> Trajectory {
        let links: Vec<(String, String)> =
            self.subagents.iter().map(|(call, _)| (call.clone(), self.trajectory_id(call))).collect();
        for (call, id) in links {
            match self.owner.get(&call).copied().flatten() {
                Some(i) => self.subagents[i].1.link(&self.id, &call, id),
                None => self.root.link(&self.id, &call, id),
            }
        }
        let agent = self.agent();
        let subagents: Vec<Trajectory> = std::mem::take(&mut self.subagents)
            .into_iter()
            .map(|(call, b)| {
                let (steps, usage) = b.finish(self.began.as_ref());
                let id = self.trajectory_id(&call);
                Trajectory {
                    schema_version: ATIF_VERSION,
                    session_id: Some(self.id.clone()),
                    trajectory_id: Some(id),
                    agent: self.agent(),
                    final_metrics: Some(final_metrics(&usage, steps.len())),
                    steps,
                    extra: Some(SubagentExtra { parent_tool_call_id: call }),
                    subagent_trajectories: None,
                }
            })
            .collect();
        let (steps, _) = self.root.finish(self.began.as_ref());
        Trajectory {
            schema_version: ATIF_VERSION,
            session_id: Some(self.id.clone()),
            trajectory_id: None,
            agent,
            final_metrics: Some(final_metrics(&self.usage, steps.len())),
            steps,
            extra: None,
            subagent_trajectories: (!subagents.is_empty()).then_some(subagents),
        }
    }
}

impl Atif {
    /// Writes the finished session's document, or holds it if it is the first.
    fn close(&mut self, out: &mut dyn Write) -> io::Result<()> {
        let Some(session) = self.current.take() else { return Ok(()) };
        let doc = session.finish();
        self.written += 1;
        match self.written {
            1 => {
                self.first = Some(doc);
                return Ok(());
            }
            2 => {
                out.write_all(b"[\n")?;
                if let Some(held) = self.first.take() {
                    serde_json::to_writer_pretty(&mut *out, &held)?;
                }
                out.write_all(b",\n")?;
            }
            _ => out.write_all(b",\n")?,
        }
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        Ok(())
    }
}

impl Projection for Atif {
    fn event(&mut self, ev: &Event, out: &mut dyn Write) -> Flow {
        if let Body::Summary(summary) = &ev.body {
            // A run known only by its summary (an agent that failed before it said anything
            // of its session): its failure is its trajectory, not an empty array.
            if let (None, 0, Some(error)) = (&self.current, self.written, &summary.error) {
                let mut session =
                    Session { id: ev.session_id.clone(), began: date(&ev.timestamp), ..Session::default() };
                let extra = SystemExtra {
                    error: Some(ErrorExtra::of(error)),
                    minicode_type: ev.type_name().to_owned(),
                    ..SystemExtra::default()
                };
                session.root.push("system", ev, error.message.clone(), Some(extra));
                self.current = Some(session);
            }
            return Ok(ControlFlow::Continue(()));
        }
        if self.current.as_ref().is_some_and(|s| s.id != ev.session_id) {
            self.close(out)?;
        }
        let new = || Session { id: ev.session_id.clone(), began: date(&ev.timestamp), ..Session::default() };
        self.current.get_or_insert_with(new).event(ev);
        Ok(ControlFlow::Continue(()))
    }

    fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.close(out)?;
        match self.written {
            0 => out.write_all(b"[]\n"),
            1 => {
                if let Some(doc) = self.first.take() {
                    serde_json::to_writer_pretty(&mut *out, &doc)?;
                }
                out.write_all(b"\n")
            }
            _ => out.write_all(b"\n]\n"),
        }
    }
}
