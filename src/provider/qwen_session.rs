//! Qwen Code's session transcripts (`~/.qwen/projects/<cwd-slug>/chats/<sessionId>.jsonl`,
//! and a subagent's `subagents/<sessionId>/agent-<type>-<callId>.jsonl`).
//!
//! Claude-like envelopes (a `uuid` / `parentUuid` chain, `sessionId`, `cwd`, `version` on
//! every line, each marked with its `provenance`) around Gemini-style messages: `parts` of
//! text, thoughts, `functionCall`s and `functionResponse`s. Each message is handed to the
//! Claude-shaped stream parser as the content blocks Qwen's own stream prints for it, so
//! tools, results and file changes are read as the stream's are; the transcript adds the
//! exit code as a field (`toolCallResult.resultDisplay.exitCode`, where the stream has it only
//! in text). Sessions, turns and branches are read as in Claude Code's transcripts
//! ([`transcript`](super::transcript)); a background agent's notification ends its call and
//! stays in the turn that launched it, as in the stream. Telemetry and attribution records
//! are links of the chain only, but for a call a permission rule denied: the telemetry's
//! `qwen-code.tool_call` record is its only trace when the call never started, and it is
//! read as the stream's denied call (its announcement, then a result saying the rule's
//! refusal), the session's own or a subagent's (the memory extractor's, which no call
//! spawned, is a child of the subagent's id).

use serde::Deserialize;
use serde_json::{json, Value};

use super::claude::{is_permission_denial, Claude, Entry, QWEN};
use super::transcript::{spawner, Chain, Notification, Opening, Place, Reader, Reading, Record, Turn};
use super::{Claim, Dialect, LineError, Parse, Probe};
use crate::engine::{Engine, ExitSource, UsageScope};
use crate::event::{Piece, Role, SessionStarted, Usage};

/// Qwen Code session transcripts.
pub(super) const DIALECT: Dialect = Dialect {
    name: "qwen-session",
    about: "Qwen Code session transcripts (~/.qwen/projects/*/chats/*.jsonl)",
    family: "qwen-session",
    opens: &[],
    claim,
    parser: || Box::new(QwenSession::default()),
};

/// Every line of a Qwen transcript is a link of the chain, and says where it came from
/// (`provenance`) or, in a subagent's, whose it is (`agentName`); messages are `parts`.
fn claim(p: &Probe) -> Claim {
    let yes = p.has("uuid") && p.has("parentUuid") && p.has("sessionId") && is_qwens(p);
    super::dialect::claim(yes, false)
}

/// Marks of Qwen's transcripts that Claude Code's have not.
pub(super) fn is_qwens(p: &Probe) -> bool {
    p.str("provenance").is_some() || p.str("agentName").is_some() || p.at(&["message", "parts"]).is_some()
}

/// The Qwen Code transcript reader.
#[derive(Default)]
pub struct QwenSession {
    chain: Chain,
    reader: QwenReader,
    session: Reading,
}

impl Parse for QwenSession {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let env: Envelope = serde_json::from_str(line).map_err(LineError::from_json)?;
        let root = env.uuid.is_some() && env.parent.is_none();
        let place = self.session.place(env.session_id.as_deref(), root, env.uuid.is_some());
        if place == Place::Switch {
            self.finish(engine);
            let session = std::mem::take(&mut self.session);
            *self = QwenSession { session, ..QwenSession::default() };
        }
        if place == Place::Stray {
            self.session.stray();
            return Ok(());
        }
        let says = matches!(env.kind.as_str(), "user" | "assistant" | "tool_result") || env.denial().is_some();
        let record = Record {
            line: engine.line(),
            text: says.then(|| line.to_owned()),
            uuid: env.uuid.clone(),
            parent: env.parent.clone(),
            anchor: None,
        };
        if env.prompt().is_some() {
            self.chain.prompt(record, &mut self.reader, engine);
        } else {
            self.chain.push(record, &mut self.reader, engine);
        }
        match env.kind.as_str() {
            "user" | "assistant" | "tool_result" | "system" => Ok(()),
            other => Err(LineError::UnknownType(other.to_owned())),
        }
    }

    fn finish(&mut self, engine: &mut Engine) {
        self.chain.finish(&mut self.reader, engine);
        self.session.finish(engine);
        let reader = &mut self.reader;
        if let Some(opening) = reader.waiting.take() {
            opening.open(engine, None, &mut reader.turn);
            reader.started = true;
        }
        if !reader.started {
            return;
        }
        reader.turn.finish(engine);
        self.reader.inner.finish(engine);
    }
}

/// Reads the records the chain keeps.
struct QwenReader {
    inner: Claude,
    turn: Turn,
    started: bool,
    /// The first prompt, until the next record names the model.
    waiting: Option<Opening>,
    /// The last usage counted: Qwen repeats a response's usage on each record it splits
    /// the response into.
    last_usage: Option<UsageMetadata>,
    /// For a subagent's transcript: the call that spawned it, once asked.
    spawner: Option<Option<String>>,
}

impl Default for QwenReader {
    fn default() -> QwenReader {
        QwenReader {
            inner: Claude::named(QWEN),
            turn: Turn::default(),
            started: false,
            waiting: None,
            last_usage: None,
            spawner: None,
        }
    }
}

impl Reader for QwenReader {
    fn read(&mut self, text: &str, engine: &mut Engine) -> Result<(), LineError> {
        let mut env: Envelope = serde_json::from_str(text).map_err(LineError::from_json)?;
        self.turn.at(engine, env.timestamp.as_deref());
        let parent = if env.is_sidechain { spawner(engine, env.agent_id.as_deref(), &mut self.spawner) } else { None };
        let parts = env.message.take().map(|m| m.parts).unwrap_or_default();
        let prompt = env.kind == "user" && env.subtype.is_none() && parent.is_none();
        if !self.started && self.waiting.is_none() && prompt {
            self.waiting = Some(Opening::new(Some(joined(&parts)), env.info(), env.session_id.clone(), &self.turn));
            return Ok(());
        }
        if !self.started {
            self.started = true;
            match (self.waiting.take(), &parent, env.session_id.as_deref()) {
                (Some(opening), ..) => opening.open(engine, env.model.clone(), &mut self.turn),
                (None, Some(_), Some(s)) => engine.use_session(s, QWEN),
                (None, ..) => engine.session_started(env.session_id.as_deref(), env.info()),
            }
        }
        let entry = Entry::Transcript { parent: parent.as_deref() };
        match env.kind.as_str() {
            "user" if env.subtype.as_deref() == Some("notification") => {
                let said = joined(&parts);
                if let Some(n) = Notification::parse(&said) {
                    // Qwen's stream shows the notification as the user's message too.
                    if let Some(summary) = n.summary {
                        engine.text(Role::User, summary.to_owned(), Piece::First, None);
                    }
                    n.link(engine);
                    self.inner.read(&n.as_stream_line(), engine, entry)?;
                }
            }
            "user" if parent.is_none() => self.turn.start(engine, Some(joined(&parts))),
            "user" => {}
            "system" => {
                if let Some(denied) = env.denial() {
                    self.denied(denied, engine)?;
                }
            }
            "assistant" => {
                if let Some(u) = env.usage.filter(|u| self.last_usage.as_ref() != Some(u)) {
                    engine.usage_of(u.usage(), UsageScope::Increment, parent.clone());
                    self.last_usage = Some(u);
                }
                let calls = parts.iter().any(|p| p.function_call.is_some());
                if parent.is_none() {
                    self.turn.answered = (!calls).then_some(None);
                }
                let content: Vec<Value> = parts.into_iter().filter_map(Part::block).collect();
                let line = json!({"type": "assistant", "message": {"model": env.model, "content": content}});
                self.inner.read(&line.to_string(), engine, entry)?;
            }
            "tool_result" => {
                let result = env.tool_call_result;
                let failed = result.as_ref().and_then(|r| r.status.as_deref()) == Some("error");
                let display = result.and_then(|r| r.result_display).unwrap_or_default();
                let mut content = Vec::new();
                for part in parts {
                    let Some(r) = part.function_response else { continue };
                    if let Some(code) = display.exit_code {
                        engine.tool_exit(&r.id, ExitSource::Structured, code);
                    }
                    if display.background {
                        // What the stream says with `task_started`: the result is a launch
                        // receipt, and the task's notification ends the call.
                        let started = json!({"type": "system", "subtype": "task_started", "tool_use_id": r.id});
                        self.inner.read(&started.to_string(), engine, entry)?;
                    }
                    let (said, error) = match (r.response.get("output"), r.response.get("error")) {
                        (_, Some(e)) if !e.is_null() => (e, true),
                        (Some(o), _) => (o, false),
                        _ => (&Value::Null, false),
                    };
                    let said = said.as_str().map_or_else(|| said.to_string(), str::to_owned);
                    content.push(json!({"type": "tool_result", "tool_use_id": r.id, "content": said, "is_error": error || failed}));
                }
                let line = json!({"type": "user", "message": {"content": content}});
                self.inner.read(&line.to_string(), engine, entry)?;
            }
            _ => {}
        }
        Ok(())
    }
}

impl QwenReader {
    /// A call a permission rule denied, as the stream tells it: announced, then refused.
    fn denied(&mut self, call: &UiEvent, engine: &mut Engine) -> Result<(), LineError> {
        let parent = call.agent().map(|a| engine.spawner(a).unwrap_or_else(|| a.to_owned()));
        let entry = Entry::Transcript { parent: parent.as_deref() };
        let id = &call.call_id;
        let tool_use = json!({"type": "tool_use", "id": id, "name": call.function_name, "input": call.function_args});
        self.inner.read(&json!({"type": "assistant", "message": {"content": [tool_use]}}).to_string(), engine, entry)?;
        let result = json!({"type": "tool_result", "tool_use_id": id, "content": call.error, "is_error": true});
        self.inner.read(&json!({"type": "user", "message": {"content": [result]}}).to_string(), engine, entry)
    }
}

/// The text parts of a message, joined.
fn joined(parts: &[Part]) -> String {
    parts.iter().filter(|p| p.thought != Some(true)).filter_map(|p| p.text.as_deref()).collect::<Vec<_>>().join("\n")
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "type")]
    kind: String,
    subtype: Option<String>,
    uuid: Option<String>,
    #[serde(rename = "parentUuid")]
    parent: Option<String>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    timestamp: Option<String>,
    cwd: Option<String>,
    #[serde(rename = "gitBranch")]
    git_branch: Option<String>,
    version: Option<String>,
    model: Option<String>,
    provenance: Option<String>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: bool,
    #[serde(rename = "agentId")]
    agent_id: Option<String>,
    message: Option<Message>,
    #[serde(rename = "usageMetadata")]
    usage: Option<UsageMetadata>,
    #[serde(rename = "toolCallResult")]
    tool_call_result: Option<ToolCallResult>,
    #[serde(rename = "systemPayload")]
    system_payload: Option<SystemPayload>,
}

impl Envelope {
    /// Some when the line is a prompt the user typed.
    fn prompt(&self) -> Option<()> {
        (self.kind == "user" && self.subtype.is_none() && self.provenance.as_deref() == Some("real_user")).then_some(())
    }

    /// The call a permission rule denied, when the record is telemetry of one.
    fn denial(&self) -> Option<&UiEvent> {
        let e = self.system_payload.as_ref()?.ui_event.as_ref()?;
        let never_ran = e.name.as_deref() == Some("qwen-code.tool_call")
            && e.execution_status.as_deref() == Some("not_started");
        (never_ran && e.error.as_deref().is_some_and(is_permission_denial)).then_some(e)
    }

    fn info(&self) -> SessionStarted {
        SessionStarted {
            provider: QWEN.into(),
            provider_version: self.version.clone(),
            model: None,
            cwd: self.cwd.clone(),
            git_branch: self.git_branch.clone(),
            tools: None,
            ..Default::default()
        }
    }
}

#[derive(Deserialize)]
struct SystemPayload {
    #[serde(rename = "uiEvent")]
    ui_event: Option<UiEvent>,
}

/// A telemetry event (`ui_telemetry`): of a tool call, what a denial needs.
#[derive(Deserialize)]
struct UiEvent {
    #[serde(rename = "event.name")]
    name: Option<String>,
    #[serde(default)]
    call_id: String,
    #[serde(default)]
    function_name: String,
    #[serde(default)]
    function_args: Value,
    execution_status: Option<String>,
    error: Option<String>,
    subagent_id: Option<String>,
    /// `<session>#<agent>#<n>`, the agent empty for the session's own prompts.
    prompt_id: Option<String>,
}

impl UiEvent {
    /// The subagent whose call it was; `None` for the session's own agent.
    fn agent(&self) -> Option<&str> {
        let from_prompt = || self.prompt_id.as_deref()?.split('#').nth(1).filter(|a| !a.is_empty());
        self.subagent_id.as_deref().or_else(from_prompt)
    }
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Deserialize)]
struct Part {
    text: Option<String>,
    thought: Option<bool>,
    #[serde(rename = "functionCall")]
    function_call: Option<FunctionCall>,
    #[serde(rename = "functionResponse")]
    function_response: Option<FunctionResponse>,
}

impl Part {
    /// The part as the content block Qwen's stream prints for it.
    fn block(self) -> Option<Value> {
        if let Some(c) = self.function_call {
            return Some(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.args}));
        }
        let text = self.text?;
        Some(if self.thought == Some(true) {
            json!({"type": "thinking", "thinking": text})
        } else {
            json!({"type": "text", "text": text})
        })
    }
}

#[derive(Deserialize)]
struct FunctionCall {
    id: String,
    name: String,
    #[serde(default)]
    args: Value,
}

#[derive(Deserialize)]
struct FunctionResponse {
    id: String,
    #[serde(default)]
    response: Value,
}

#[derive(Deserialize)]
struct ToolCallResult {
    status: Option<String>,
    #[serde(rename = "resultDisplay")]
    result_display: Option<ResultDisplay>,
}

/// `resultDisplay` is a string for some tools, an object for others: only a shell's
/// `exitCode` and an agent's `executionMode` are read.
#[derive(Default)]
struct ResultDisplay {
    exit_code: Option<i64>,
    /// An agent launched in the background.
    background: bool,
}

impl<'de> Deserialize<'de> for ResultDisplay {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ResultDisplay, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(ResultDisplay {
            exit_code: v.get("exitCode").and_then(Value::as_i64),
            background: v.get("executionMode").and_then(Value::as_str) == Some("background"),
        })
    }
}

#[derive(Deserialize, PartialEq, Eq, Clone, Copy)]
struct UsageMetadata {
    #[serde(rename = "promptTokenCount")]
    prompt: Option<u64>,
    #[serde(rename = "candidatesTokenCount")]
    candidates: Option<u64>,
    #[serde(rename = "cachedContentTokenCount")]
    cached: Option<u64>,
    #[serde(rename = "totalTokenCount")]
    total: Option<u64>,
}

impl UsageMetadata {
    /// Qwen's prompt count includes what was read from the cache; the canonical input
    /// does not.
    fn usage(self) -> Usage {
        Usage {
            input_tokens: self.prompt.map(|p| p.saturating_sub(self.cached.unwrap_or(0))),
            output_tokens: self.candidates,
            cache_read: self.cached,
            cache_write: None,
            cost_usd: None,
        }
    }
}
