//! Claude Code's session transcripts (`~/.claude/projects/<cwd-slug>/<sessionId>.jsonl`, and
//! a subagent's `<sessionId>/subagents/agent-<agentId>.jsonl`).
//!
//! A transcript is the stream's messages in an envelope: every `user` / `assistant` line
//! carries the Anthropic message the stream carries (one content block a line), under
//! camelCase names (`sessionId`, `toolUseResult`), chained by `uuid` / `parentUuid`
//! ([`transcript`](super::transcript) keeps the branch that was kept), beside bookkeeping
//! the stream has not (`attachment`, `api-request*`, `cost-state`, …, skipped). Messages are
//! read by the stream's parser; this reader adds what the stream's `system/init` and
//! `result` said: the session (its cwd and version from the envelope, its model from the
//! first answer), the turns (each prompt opens one, which ends when the next prompt comes or
//! the file ends: completed when the agent answered), and the usage (on each line of a
//! message, counted once per message id). Every invocation of a resumed session appends to
//! the same file: one session, its turns in order. A subagent's transcript read after its
//! parent's is that call's child (its events take the call as their parent, in no turn of
//! their own); read alone, it is a session of its own.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::claude::{Claude, Entry, PROVIDER};
use super::transcript::{spawner, Chain, Notification, Opening, Place, Reader, Reading, Record, Turn};
use super::usage::AnthropicUsage;
use super::{Claim, Dialect, LineError, Parse, Probe};
use crate::engine::{Engine, Recent, UsageScope};
use crate::event::{SessionStarted, Usage};

/// Claude Code session transcripts.
pub(super) const DIALECT: Dialect = Dialect {
    name: "claude-session",
    about: "Claude Code session transcripts (~/.claude/projects/*/*.jsonl)",
    family: "claude-session",
    opens: &[],
    claim,
    parser: || Box::new(ClaudeSession::default()),
};

/// Records that carry the conversation.
const MESSAGES: [&str; 3] = ["user", "assistant", "system"];
/// Records of the chain that say nothing the canonical events hold.
const LINKS: [&str; 2] = ["attachment", "progress"];
/// Bookkeeping lines outside the chain.
const BOOKKEEPING: [&str; 14] = [
    QUEUED,
    "api-request",
    "api-request-shape",
    "api-request-blob",
    "tools-used",
    "last-prompt",
    "atis-latch",
    "mode",
    COST,
    "file-history-snapshot",
    "custom-title",
    "tag",
    "agent-name",
    "pr-link",
];
/// A prompt queued for the agent, and taken from the queue.
const QUEUED: &str = "queue-operation";
/// The session's running cost and duration, after each turn.
const COST: &str = "cost-state";
/// The user's interruption, as Claude Code records it.
const INTERRUPTED: &str = "[Request interrupted by user";
/// The reason a compaction summary gives when no boundary record said what triggered it.
const SUMMARY: &str = "summary";

/// Claude Code's transcript lines name their session `sessionId` (the stream's say
/// `session_id`) and carry none of Qwen's marks (`provenance`, `agentName`, `parts`); the
/// conversation's lines are links of the `uuid` / `parentUuid` chain.
fn claim(p: &Probe) -> Claim {
    let transcript = p.has("sessionId") && !p.has("session_id") && !super::qwen_session::is_qwens(p);
    let chained = p.has("uuid") && p.has("parentUuid");
    let yes = match p.kind() {
        Some("file-history-snapshot") => p.has("messageId") && p.has("snapshot"),
        Some("summary") => p.has("leafUuid"),
        Some(k) if MESSAGES.contains(&k) || LINKS.contains(&k) => transcript && chained,
        Some(k) if BOOKKEEPING.contains(&k) => transcript,
        Some(_) => transcript && chained && p.has("isSidechain"),
        None => false,
    };
    super::dialect::claim(yes, false)
}

/// The Claude Code transcript reader.
#[derive(Default)]
pub struct ClaudeSession {
    chain: Chain,
    reader: ClaudeReader,
    /// The prompts queued (`queue-operation` `enqueue`) in sessions not started when they
    /// were, with their session and time, once per session in a row. Input cut before a
    /// prompt's own record still says its session began.
    queued: Vec<(Option<String>, Option<String>)>,
    session: Reading,
}

impl ClaudeSession {
    /// Keeps a prompt `enqueue`d in a session not started yet (see `queued`).
    fn queue(&mut self, env: &Envelope<'_>, engine: &Engine) {
        if env.operation.as_deref() == Some("enqueue")
            && !env.session_id.as_deref().is_some_and(|id| engine.knows_session(id))
            && self.queued.last().is_none_or(|(session, _)| *session != env.session_id)
        {
            self.queued.push((env.session_id.clone(), env.timestamp.clone()));
        }
    }
}

impl Parse for ClaudeSession {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let env = Envelope::parse(line)?;
        let root = env.uuid.is_some() && env.parent.is_none() && env.logical_parent.is_none();
        let place = self.session.place(env.session_id.as_deref(), root, env.uuid.is_some());
        if place == Place::Switch {
            // Queued prompts wait for the end of the input: the session switched to was
            // queued just before its first record.
            let (session, queued) = (std::mem::take(&mut self.session), std::mem::take(&mut self.queued));
            self.finish(engine);
            // What is counted across sessions stays counted: running costs, and messages
            // whose usage was (a switch can fall between a message's lines).
            let (costs, counted) = (std::mem::take(&mut self.reader.costs), std::mem::replace(&mut self.reader.counted, Recent::new(0)));
            let reader = ClaudeReader { costs, counted, ..ClaudeReader::default() };
            *self = ClaudeSession { session, queued, reader, ..ClaudeSession::default() };
        }
        let kind = env.kind.as_ref();
        if place == Place::Stray {
            // A prompt queued in a session that never began is that session, cut.
            if kind == QUEUED {
                self.queue(&env, engine);
            } else {
                self.session.stray();
            }
            return Ok(());
        }
        let record = |text: Option<&str>| Record {
            line: engine.line(),
            text: text.map(str::to_owned),
            uuid: env.uuid.clone(),
            parent: env.parent.clone().or_else(|| env.logical_parent.clone()),
            anchor: env.anchor.clone(),
        };
        if MESSAGES.contains(&kind) || kind == "summary" || kind == COST {
            let record = record(Some(line));
            if env.prompt().is_some() {
                self.chain.prompt(record, &mut self.reader, engine);
            } else {
                self.chain.push(record, &mut self.reader, engine);
            }
            return Ok(());
        }
        if LINKS.contains(&kind) || BOOKKEEPING.contains(&kind) {
            if kind == QUEUED {
                self.queue(&env, engine);
            }
            if env.uuid.is_some() {
                let record = record(None);
                self.chain.push(record, &mut self.reader, engine);
            }
            return Ok(());
        }
        if env.uuid.is_some() {
            let record = record(None);
            self.chain.push(record, &mut self.reader, engine);
        }
        Err(LineError::UnknownType(kind.to_owned()))
    }

    fn finish(&mut self, engine: &mut Engine) {
        self.chain.finish(&mut self.reader, engine);
        self.session.finish(engine);
        let mut began = self.reader.started || self.reader.waiting.is_some();
        self.reader.finish(engine);
        for (session, at) in std::mem::take(&mut self.queued) {
            // A queue line without a session id can only be the session the input began.
            let started = match session.as_deref() {
                Some(id) => engine.knows_session(id),
                None => std::mem::replace(&mut began, true),
            };
            if !started {
                self.reader.turn.at(engine, at.as_deref());
                engine.session_started(session.as_deref(), SessionStarted { provider: PROVIDER.into(), ..Default::default() });
            }
        }
    }
}

/// Reads the records the chain keeps.
struct ClaudeReader {
    inner: Claude,
    turn: Turn,
    /// The session has started (or, for a linked subagent, been entered).
    started: bool,
    /// A prompt that arrived before any model was named: the session starts with the
    /// next record, which names it.
    waiting: Option<Opening>,
    /// A compaction summary came before the session started.
    summarized: bool,
    /// A `compact_boundary` was just read: the summary after it is that compaction's.
    boundary: bool,
    /// Messages whose usage was counted (every line of a message repeats it).
    counted: Recent,
    /// For a subagent's transcript: the call that spawned it, once asked.
    spawner: Option<Option<String>>,
    /// Each session's cost so far, as its last `cost-state` gave it (a running total
    /// across its invocations, so it outlives a switch to another session and back).
    costs: HashMap<String, f64>,
}

impl Default for ClaudeReader {
    fn default() -> ClaudeReader {
        ClaudeReader {
            inner: Claude::named(PROVIDER),
            turn: Turn::default(),
            started: false,
            waiting: None,
            summarized: false,
            boundary: false,
            counted: Recent::new(64),
            spawner: None,
            costs: HashMap::new(),
        }
    }
}

impl Reader for ClaudeReader {
    fn read(&mut self, text: &str, engine: &mut Engine) -> Result<(), LineError> {
        let env = Envelope::parse(text)?;
        self.turn.at(engine, env.timestamp.as_deref());
        match env.kind.as_ref() {
            "summary" => {
                self.summarized = true;
                return Ok(());
            }
            COST => {
                if self.started {
                    self.cost(&env, engine);
                }
                return Ok(());
            }
            _ => {}
        }
        let parent = if env.is_sidechain { spawner(engine, env.agent_id.as_deref(), &mut self.spawner) } else { None };
        let prompt = env.prompt();
        if !self.started && parent.is_none() && self.waiting.is_none() && prompt.is_some() {
            let prompt = prompt.as_deref().and_then(turn_prompt);
            self.waiting = Some(Opening::new(prompt, env.info(), env.session_id, &self.turn));
            return Ok(());
        }
        self.start(&env, parent.as_deref(), engine);
        let entry = Entry::Transcript { parent: parent.as_deref() };
        match env.kind.as_ref() {
            "user" if env.compact_summary => self.compaction_summary(engine),
            "user" if prompt.is_some() => {
                let prompt = prompt.as_deref().unwrap_or_default();
                if parent.is_none() {
                    self.turn.start(engine, turn_prompt(prompt));
                }
                if let Some(n) = Notification::parse(prompt) {
                    n.link(engine);
                    self.inner.read(&n.as_stream_line(), engine, entry)?;
                }
            }
            "user" if env.is_meta => {}
            "user" => {
                if text.contains(INTERRUPTED) {
                    self.turn.interrupted = true;
                }
                env.link_agent(engine);
                self.inner.read(text, engine, entry)?;
            }
            "assistant" => {
                if let Some(m) = &env.message {
                    self.usage(m, parent.clone(), engine);
                    if parent.is_none() {
                        match m.stop_reason.as_deref() {
                            Some("tool_use") => self.turn.answered = None,
                            Some(stop) => self.turn.answered = Some(Some(stop.to_owned())),
                            None => {}
                        }
                    }
                }
                self.inner.read(text, engine, entry)?;
            }
            "system" if env.subtype.as_deref() == Some("compact_boundary") => {
                self.boundary = true;
                self.inner.read(text, engine, entry)?;
            }
            // Notes of the harness (`turn_duration`, `local_command`, …): nothing the
            // canonical events hold.
            _ => {}
        }
        Ok(())
    }
}

impl ClaudeReader {
    /// Starts the session at its first record, or enters the parent's for a linked
    /// subagent's transcript.
    fn start(&mut self, env: &Envelope<'_>, parent: Option<&str>, engine: &mut Engine) {
        if self.started {
            return;
        }
        self.started = true;
        if parent.is_some() {
            if let Some(s) = env.session_id.as_deref() {
                engine.use_session(s, PROVIDER);
            }
            return;
        }
        match self.waiting.take() {
            Some(opening) => opening.open(engine, env.model(), &mut self.turn),
            None => engine.session_started(env.session_id.as_deref(), env.info()),
        }
        if std::mem::take(&mut self.summarized) {
            engine.compacted(SUMMARY.into());
        }
    }

    /// A compaction's summary: the compaction, unless its boundary record said it first.
    fn compaction_summary(&mut self, engine: &mut Engine) {
        if !std::mem::take(&mut self.boundary) {
            engine.compacted(SUMMARY.into());
        }
    }

    /// The session's cost and duration so far (`cost-state` counts from the session's
    /// start, across its invocations): the cost added since the last, and the duration.
    fn cost(&mut self, env: &Envelope<'_>, engine: &mut Engine) {
        if let Some(total) = env.total_cost_usd {
            let last = self.costs.entry(env.session_id.clone().unwrap_or_default()).or_insert(0.0);
            let new = (total - *last).max(0.0);
            *last = total;
            engine.usage(Usage { cost_usd: Some(new), ..Usage::default() }, UsageScope::Increment);
        }
        if let Some(ms) = env.total_duration {
            engine.set_session_duration(ms);
        }
    }

    /// Counts a message's usage once, on the first of its lines; a subagent's names the
    /// call that spawned it (`parent`).
    fn usage(&mut self, m: &EnvMessage, parent: Option<String>, engine: &mut Engine) {
        let (Some(id), Some(u)) = (m.id.as_deref(), &m.usage) else { return };
        if self.counted.insert(id) {
            engine.usage_of(u.canonical(), UsageScope::Increment, parent);
        }
    }

    fn finish(&mut self, engine: &mut Engine) {
        if let Some(opening) = self.waiting.take() {
            opening.open(engine, None, &mut self.turn);
        }
        self.turn.finish(engine);
        self.inner.finish(engine);
    }
}

/// The prompt a turn shows: a task notification is the harness's, not the user's.
fn turn_prompt(text: &str) -> Option<String> {
    Notification::parse(text).is_none().then(|| text.to_owned())
}

/// What the reader needs of a transcript line besides the message the stream parser reads.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    subtype: Option<String>,
    uuid: Option<String>,
    #[serde(rename = "parentUuid")]
    parent: Option<String>,
    /// Where a compaction restarted the chain, the record it continues.
    #[serde(rename = "logicalParentUuid")]
    logical_parent: Option<String>,
    #[serde(rename = "sourceToolAssistantUUID")]
    anchor: Option<String>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    timestamp: Option<String>,
    /// `queue-operation`: `enqueue` or `dequeue`.
    operation: Option<Cow<'a, str>>,
    cwd: Option<String>,
    #[serde(rename = "gitBranch")]
    git_branch: Option<String>,
    version: Option<String>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: bool,
    #[serde(rename = "agentId")]
    agent_id: Option<String>,
    /// Put in the conversation by the harness (a reminder), not typed by the user.
    #[serde(rename = "isMeta", default)]
    is_meta: bool,
    #[serde(rename = "isCompactSummary", default)]
    compact_summary: bool,
    message: Option<EnvMessage>,
    #[serde(rename = "toolUseResult")]
    tool_use_result: Option<Box<RawValue>>,
    /// `cost-state`: the session's cost and duration so far.
    #[serde(rename = "totalCostUSD")]
    total_cost_usd: Option<f64>,
    #[serde(rename = "totalDuration")]
    total_duration: Option<u64>,
}

#[derive(Deserialize)]
struct EnvMessage {
    id: Option<String>,
    model: Option<String>,
    stop_reason: Option<String>,
    usage: Option<AnthropicUsage>,
    content: Option<Box<RawValue>>,
}

/// A user message's content, for the text of a prompt.
#[derive(Deserialize)]
#[serde(untagged)]
enum PromptContent {
    Text(String),
    Blocks(Vec<PromptBlock>),
}

#[derive(Deserialize)]
struct PromptBlock {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    tool_use_id: Option<String>,
}

impl<'a> Envelope<'a> {
    fn parse(line: &'a str) -> Result<Envelope<'a>, LineError> {
        serde_json::from_str(line).map_err(LineError::from_json)
    }

    /// The text of the prompt the line is, when it opens a turn: a user message of text
    /// (not a tool's result, a reminder, a compaction summary or an interruption).
    fn prompt(&self) -> Option<String> {
        if self.kind != "user" || self.is_meta || self.compact_summary || self.anchor.is_some() {
            return None;
        }
        if self.tool_use_result.is_some() {
            return None;
        }
        let raw = self.message.as_ref()?.content.as_deref()?.get();
        let text = match serde_json::from_str::<PromptContent>(raw).ok()? {
            PromptContent::Text(t) => t,
            PromptContent::Blocks(b) if !b.is_empty() && b.iter().all(|b| b.kind == "text") => {
                b.into_iter().filter_map(|b| b.text).collect::<Vec<_>>().join("\n")
            }
            PromptContent::Blocks(_) => return None,
        };
        (!text.starts_with(INTERRUPTED)).then_some(text)
    }

    /// The session facts the envelope states.
    fn info(&self) -> SessionStarted {
        SessionStarted {
            provider: PROVIDER.into(),
            provider_version: self.version.clone(),
            model: self.model(),
            cwd: self.cwd.clone(),
            git_branch: self.git_branch.clone(),
            tools: None,
            ..Default::default()
        }
    }

    fn model(&self) -> Option<String> {
        self.message.as_ref()?.model.clone().filter(|m| m != "<synthetic>")
    }

    /// A subagent's launch receipt names the agent whose transcript holds its work.
    fn link_agent(&self, engine: &mut Engine) {
        #[derive(Deserialize)]
        struct Launched {
            #[serde(rename = "agentId")]
            agent_id: Option<String>,
        }
        let Some(result) = self.tool_use_result.as_deref().map(RawValue::get) else { return };
        if !result.starts_with('{') {
            return;
        }
        let Some(agent) = serde_json::from_str::<Launched>(result).ok().and_then(|l| l.agent_id) else { return };
        let Some(raw) = self.message.as_ref().and_then(|m| m.content.as_deref()) else { return };
        if let Ok(PromptContent::Blocks(blocks)) = serde_json::from_str::<PromptContent>(raw.get()) {
            if let Some(call) = blocks.iter().find_map(|b| b.tool_use_id.as_deref()) {
                engine.spawned(&agent, call);
            }
        }
    }
}
