//! OpenCode `run --format json`: `step_start`, `text`, `reasoning`, `tool_use`,
//! `step_finish` and `error`, each with the run's `sessionID` and an epoch-ms `timestamp`.
//! One run is one turn of several steps; a tool call is reported once, when it has ended.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::tool_args::{target, ToolNames};
use super::{LineError, Parse};
use crate::provider::errors::{api_retry, output_limit, provider_error};
use crate::engine::{Engine, ExitSource, ToolContext, ToolStatus, Update, UsageScope};
use crate::event::{ErrorCategory, ErrorInfo, FileChange, Outcome, Piece, Role, SessionStarted, Stream, ToolKind, Usage};

/// The OpenCode parser (also its forks': Kilo Code).
#[derive(Debug)]
pub struct OpenCode {
    /// The provider its sessions are named after.
    provider: &'static str,
    /// The agent's name where an action names it (whose `permission` configuration).
    agent: &'static str,
    /// A permission was refused in the current step: OpenCode stops its loop after one.
    refused_in_step: bool,
    /// What the last `step_finish` left undecided, settled by the next line or the end.
    held: Option<Held>,
    /// The run's turn has ended; a late `error` is then reported, not a new turn.
    ended: bool,
    /// The last part read was text the model had finished writing.
    answered: bool,
}

impl Default for OpenCode {
    /// OpenCode's own parser.
    fn default() -> OpenCode {
        OpenCode::named(PROVIDER, "OpenCode")
    }
}

/// How a run may have ended without saying so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// The step asked for more tool calls, but a refusal stopped the loop.
    Refused,
    /// The step finished with reason `error`; an `error` event usually follows.
    StepError,
}

/// The name OpenCode's sessions give as their provider.
pub(super) const PROVIDER: &str = "opencode";

const NAMES: ToolNames = ToolNames {
    provider: "opencode",
    kinds: &[
        ("bash", ToolKind::Shell),
        ("edit", ToolKind::Edit),
        ("multiedit", ToolKind::Edit),
        ("write", ToolKind::Edit),
        ("patch", ToolKind::Edit),
        ("apply_patch", ToolKind::Edit),
        ("read", ToolKind::Read),
        ("grep", ToolKind::Search),
        ("glob", ToolKind::Search),
        ("list", ToolKind::Search),
        ("codesearch", ToolKind::Search),
        ("websearch", ToolKind::Search),
        ("webfetch", ToolKind::Fetch),
        ("task", ToolKind::Agent),
        ("todowrite", ToolKind::Other),
        ("todoread", ToolKind::Other),
        ("plan_enter", ToolKind::Other),
        ("plan_exit", ToolKind::Other),
    ],
    mcp_separator: "_",
};

#[derive(Deserialize)]
struct Envelope<'a> {
    timestamp: Option<i64>,
    #[serde(rename = "sessionID", borrow)]
    session_id: Option<Cow<'a, str>>,
    #[serde(flatten)]
    event: Wire,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Wire {
    StepStart {},
    Text {
        part: TextPart,
    },
    Reasoning {
        part: TextPart,
    },
    ToolUse {
        part: ToolPart,
    },
    StepFinish {
        part: FinishPart,
    },
    Error {
        error: Option<WireError>,
    },
    /// Newer versions end a run with `done` (`reason: idle`, the refused permissions).
    Done {
        #[serde(default)]
        rejected: Vec<Value>,
    },
    #[serde(other)]
    Unknown,
}

/// A part of an assistant message, by its own `type`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub(super) enum Part {
    StepStart {},
    Text(TextPart),
    Reasoning(TextPart),
    Tool(ToolPart),
    StepFinish(FinishPart),
    /// The context was compacted (`auto` when OpenCode chose to).
    Compaction {
        #[serde(default)]
        auto: bool,
    },
    /// OpenCode asked the provider again after a failed request.
    Retry { attempt: Option<u64> },
    /// Parts with no event of their own: the repository's state around a step, the files
    /// it changed (told by the tools that changed them), a file or agent the user attached,
    /// a subagent's task (told by its `task` call).
    Snapshot {},
    Patch {},
    File {},
    Agent {},
    Subtask {},
    /// A part of a type OpenCode did not define when this was written: a session file's
    /// reader keeps its record as a `raw` event.
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
pub(super) struct TextPart {
    #[serde(default)]
    text: String,
    #[serde(rename = "sessionID")]
    session_id: Option<String>,
    time: Option<Span>,
}

#[derive(Deserialize)]
pub(super) struct ToolPart {
    tool: String,
    #[serde(rename = "callID")]
    call_id: String,
    state: ToolState,
    #[serde(rename = "sessionID")]
    session_id: Option<String>,
}

#[derive(Deserialize)]
struct ToolState {
    status: String,
    input: Option<Value>,
    output: Option<String>,
    error: Option<String>,
    #[serde(default)]
    metadata: Metadata,
    time: Option<Span>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    exit: Option<Value>,
    truncated: Option<bool>,
    interrupted: Option<bool>,
    exists: Option<bool>,
    session_id: Option<String>,
    files: Option<Vec<PatchFile>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PatchFile {
    file_path: String,
    #[serde(rename = "type")]
    kind: String,
    move_path: Option<String>,
}

#[derive(Deserialize)]
struct Span {
    start: Option<i64>,
    end: Option<i64>,
}

#[derive(Deserialize)]
pub(super) struct FinishPart {
    reason: Option<String>,
    tokens: Option<Tokens>,
    cost: Option<f64>,
}

impl FinishPart {
    fn usage(&self) -> Option<Usage> {
        let t = self.tokens.as_ref()?;
        // `input` leaves the cache out, as the canonical figure does; `output` leaves the
        // reasoning out, which the other dialects count in, so it is added back.
        Some(Usage {
            input_tokens: t.input,
            output_tokens: t.output.map(|o| o.saturating_add(t.reasoning.unwrap_or(0))),
            cache_read: t.cache.read,
            cache_write: t.cache.write,
            cost_usd: self.cost,
        })
    }
}

#[derive(Deserialize)]
struct Tokens {
    input: Option<u64>,
    output: Option<u64>,
    reasoning: Option<u64>,
    #[serde(default)]
    cache: Cache,
}

#[derive(Deserialize, Default)]
struct Cache {
    read: Option<u64>,
    write: Option<u64>,
}

/// An error as OpenCode names it (`{name, data: {message}}`), or a bare message: Kilo Code
/// says a run stopped after a refused permission so.
#[derive(Deserialize)]
#[serde(from = "ErrorShape")]
pub(super) struct WireError {
    name: Option<String>,
    data: ErrorData,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ErrorShape {
    Message(String),
    Named {
        name: Option<String>,
        #[serde(default)]
        data: ErrorData,
    },
}

impl From<ErrorShape> for WireError {
    fn from(e: ErrorShape) -> WireError {
        match e {
            ErrorShape::Message(message) => {
                WireError { name: None, data: ErrorData { message: Some(message), status_code: None } }
            }
            ErrorShape::Named { name, data } => WireError { name, data },
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ErrorData {
    message: Option<String>,
    status_code: Option<u16>,
}

impl Parse for OpenCode {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let env: Envelope<'_> = serde_json::from_str(line).map_err(LineError::from_json)?;
        if matches!(env.event, Wire::Unknown) {
            return Err(LineError::unknown_type_of(line));
        }
        if let Some(ms) = env.timestamp {
            engine.set_time(ms);
        }
        enter_session(engine, env.session_id.as_deref(), self.provider);
        let held = self.held.take();
        self.answered = false;
        match env.event {
            Wire::StepStart {} => self.part(engine, Part::StepStart {}),
            Wire::Text { part } => self.part(engine, Part::Text(part)),
            Wire::Reasoning { part } => self.part(engine, Part::Reasoning(part)),
            Wire::ToolUse { part } => {
                self.part(engine, Part::Tool(part));
                if let Some(ms) = env.timestamp {
                    engine.set_time(ms);
                }
            }
            Wire::StepFinish { part } => self.part(engine, Part::StepFinish(part)),
            // An unnamed error right after a step that stopped on a refusal says why the run
            // stopped (Kilo Code's "run ended with an auto-rejected permission").
            Wire::Error { error: Some(WireError { name: None, data }) } if held == Some(Held::Refused) => {
                let refused = refused_run(self.agent);
                let refused = ErrorInfo { message: data.message.unwrap_or(refused.message), ..refused };
                self.end_turn(engine, Outcome::Failed, None, Some(refused));
            }
            Wire::Error { error } => self.error(engine, error),
            Wire::Done { rejected } => {
                if held == Some(Held::Refused) || !rejected.is_empty() {
                    self.end_turn(engine, Outcome::Failed, None, Some(refused_run(self.agent)));
                } else {
                    self.end_turn(engine, Outcome::Completed, Some("idle".into()), None);
                }
            }
            Wire::Unknown => unreachable!("returned above"),
        }
        Ok(())
    }

    fn finish(&mut self, engine: &mut Engine) {
        match self.held.take() {
            Some(Held::Refused) => self.end_turn(engine, Outcome::Failed, None, Some(refused_run(self.agent))),
            Some(Held::StepError) => {
                let error = provider_error("the model's last step ended with an error", None);
                self.end_turn(engine, Outcome::Failed, Some("error".into()), Some(error));
            }
            // Some versions exit before printing the last `step_finish` (and print no
            // `done`): a run whose last part is the model's finished answer ended there.
            None if self.answered && engine.turn_is_open() => {
                engine.warning(
                    "the stream ended without OpenCode's closing step_finish, after the model's finished answer".into(),
                    None,
                );
                self.end_turn(engine, Outcome::Completed, None, None);
            }
            None => {}
        }
    }
}

impl OpenCode {
    /// A parser whose sessions are named after `provider`, an OpenCode fork called `agent`.
    /// One run is one turn: opened by its first event.
    pub fn named(provider: &'static str, agent: &'static str) -> OpenCode {
        OpenCode { provider, agent, refused_in_step: false, held: None, ended: false, answered: false }
    }

    /// One part of an assistant message, as the stream's lines and the session files (the
    /// database's `part` rows, `opencode export`) all hold it.
    pub(super) fn part(&mut self, engine: &mut Engine, part: Part) {
        self.answered = matches!(&part, Part::Text(t) if t.time.as_ref().is_some_and(|t| t.end.is_some()));
        match part {
            Part::StepStart {} => {
                self.refused_in_step = false;
                self.open_turn(engine);
            }
            Part::StepFinish(part) => self.step_finish(engine, part),
            part => {
                if matches!(part, Part::Text(_) | Part::Reasoning(_) | Part::Tool(_)) {
                    self.open_turn(engine);
                }
                self.content(engine, part);
            }
        }
    }

    /// A part of a subagent's session (a `task` call's child) read in its parent's session:
    /// its text, reasoning and tools are the call's children and its usage the run's, but its
    /// steps neither open nor end the parent's turn, nor decide how it ended.
    pub(super) fn child_part(&mut self, engine: &mut Engine, part: Part) {
        match part {
            Part::StepFinish(part) => {
                if let Some(usage) = part.usage() {
                    engine.usage(usage, UsageScope::Increment);
                }
            }
            part => {
                let refused = self.refused_in_step;
                self.content(engine, part);
                self.refused_in_step = refused;
            }
        }
    }

    /// What a part says besides the turn's steps.
    fn content(&mut self, engine: &mut Engine, part: Part) {
        match part {
            Part::Text(part) => {
                let parent = parent_of(engine, part.session_id.as_deref());
                engine.text(Role::Assistant, part.text, Piece::First, parent);
            }
            Part::Reasoning(part) => {
                let parent = parent_of(engine, part.session_id.as_deref());
                engine.reasoning(part.text, Piece::First, parent);
            }
            Part::Tool(part) => self.tool_use(engine, part),
            Part::Compaction { auto } => engine.compacted(if auto { "auto" } else { "manual" }.into()),
            Part::Retry { attempt } => {
                let (message, category) = api_retry(None, attempt, None);
                engine.warning(message, category);
            }
            Part::StepStart {}
            | Part::StepFinish(_)
            | Part::Snapshot {}
            | Part::Patch {}
            | Part::File {}
            | Part::Agent {}
            | Part::Subtask {}
            | Part::Unknown => {}
        }
    }

    /// The session being read has ended (a session file's next session begins): what it
    /// left undecided is settled as at the end of input. The `task` calls' links stay in
    /// the engine, as the sessions of their subagents come after.
    pub(super) fn end_session(&mut self, engine: &mut Engine) {
        self.finish(engine);
        self.refused_in_step = false;
        self.ended = false;
        self.answered = false;
    }

    fn open_turn(&mut self, engine: &mut Engine) {
        if !engine.turn_is_open() {
            self.ended = false;
            engine.ensure_turn();
        }
    }

    fn end_turn(
        &mut self,
        engine: &mut Engine,
        outcome: Outcome,
        stop_reason: Option<String>,
        error: Option<ErrorInfo>,
    ) {
        if engine.turn_is_open() {
            self.ended = true;
            engine.turn_ended(outcome, stop_reason, error);
        }
    }

    fn tool_use(&mut self, engine: &mut Engine, part: ToolPart) {
        let id = part.call_id;
        let st = part.state;
        let kind = NAMES.kind(&part.tool);
        if let Some(start) = st.time.as_ref().and_then(|t| t.start) {
            engine.set_time(start);
        }
        if !engine.tool_is_known(&id) {
            let parent_id = parent_of(engine, part.session_id.as_deref());
            engine.tool_started(NAMES.started(&id, &part.tool, st.input.clone()), ToolContext { parent_id });
        }
        let meta = &st.metadata;
        if let (ToolKind::Agent, Some(child)) = (kind, &meta.session_id) {
            // Named while it runs: the child's parts may come before the call's end.
            engine.spawned(child, &id);
        }
        if !matches!(st.status.as_str(), "completed" | "error") {
            return; // pending or running: its end is reported later
        }
        if let Some(end) = st.time.as_ref().and_then(|t| t.end) {
            engine.set_time(end);
        }
        if let Some(out) = &st.output {
            engine.tool_output(&id, Stream::Combined, Update::Final, out);
        }
        if let Some(code) = meta.exit.as_ref().and_then(Value::as_i64) {
            engine.tool_exit(&id, ExitSource::Structured, code);
        }
        if meta.truncated == Some(true) {
            engine.tool_truncated(&id);
        }
        let (status, error) = match (st.status.as_str(), st.error) {
            ("completed", _) => (ToolStatus::Completed, None),
            (_, message) => tool_error(message.unwrap_or_default(), meta, self.agent),
        };
        if status == ToolStatus::Completed && kind == ToolKind::Edit {
            for (path, change) in file_changes(&part.tool, st.input.as_ref(), meta) {
                engine.file_changed(path, change, Some(id.clone()));
            }
        }
        self.refused_in_step |= status == ToolStatus::Denied;
        engine.tool_ended(&id, status, error);
    }

    fn step_finish(&mut self, engine: &mut Engine, part: FinishPart) {
        self.open_turn(engine);
        if let Some(usage) = part.usage() {
            engine.usage(usage, UsageScope::Increment);
        }
        match part.reason.as_deref() {
            None => {}
            Some("tool-calls") if self.refused_in_step => self.held = Some(Held::Refused),
            Some("tool-calls") => {}
            Some("error") => self.held = Some(Held::StepError),
            Some("content-filter") => {
                let error = ErrorInfo {
                    category: ErrorCategory::Refused,
                    message: "the model's answer was stopped by a content filter".into(),
                    action: Some("rephrase the request".into()),
                };
                self.end_turn(engine, Outcome::Failed, Some("content-filter".into()), Some(error));
            }
            // The answer was cut at the output token limit, and OpenCode does not go on.
            Some("length") => {
                let error = output_limit("the model's answer was cut at its output token limit".into());
                self.end_turn(engine, Outcome::Failed, Some("length".into()), Some(error));
            }
            Some("stop") => self.end_turn(engine, Outcome::Completed, Some("stop".into()), None),
            // `other`, `unknown` (the AI SDK's names for a reason it could not map) or a new
            // name: how the answer ended is not known, so the run is not ok.
            Some(reason) => {
                let error = ErrorInfo {
                    category: ErrorCategory::ProviderError,
                    message: format!("the model's answer ended with finish reason {reason:?}, which does not say it was complete"),
                    action: Some("check the answer, and the provider's finish reason in its own logs".into()),
                };
                self.end_turn(engine, Outcome::Failed, Some(reason.to_owned()), Some(error));
            }
        }
    }

    /// An error that ended the run: the stream's `error` line, an assistant message's `error`.
    pub(super) fn error(&mut self, engine: &mut Engine, error: Option<WireError>) {
        let (outcome, info) = run_error(error);
        if self.ended && !engine.turn_is_open() {
            // The turn had already ended: the error still decides how the run went.
            engine.warning(info.message.clone(), Some(info.category.as_str().to_owned()));
            engine.turn_ended(outcome, None, Some(info));
        } else {
            self.open_turn(engine);
            self.end_turn(engine, outcome, None, Some(info));
        }
    }
}

/// How an error OpenCode reports ends what it ends, and why.
pub(super) fn run_error(error: Option<WireError>) -> (Outcome, ErrorInfo) {
    let (name, data) = error.map_or((None, ErrorData::default()), |e| (e.name, e.data));
    let message = data.message.or_else(|| name.clone()).unwrap_or_else(|| "OpenCode reported an error".into());
    match name.as_deref() {
        Some("MessageAbortedError") => {
            (Outcome::Cancelled, ErrorInfo { category: ErrorCategory::Cancelled, message, action: None })
        }
        Some("ProviderAuthError") => {
            let action = Some("check the provider's credentials (opencode auth login) and configuration".into());
            (Outcome::Failed, ErrorInfo { category: ErrorCategory::ConfigurationError, message, action })
        }
        _ => (Outcome::Failed, provider_error(&message, data.status_code)),
    }
}

/// Switches to the run's session, announcing it the first time.
pub(super) fn enter_session(engine: &mut Engine, id: Option<&str>, provider: &str) {
    let known = match id {
        Some(id) => engine.session_id() == Some(id),
        None => engine.session_id().is_some(),
    };
    if !known {
        start_session(engine, id, SessionStarted { provider: provider.into(), ..Default::default() });
    }
}

/// The `task` call whose child session wrote a part, when the part is a child's shown in its
/// parent's session (the stream); a child session read as its own is linked as a whole.
fn parent_of(engine: &Engine, part_session: Option<&str>) -> Option<String> {
    engine.spawner(part_session?)
}

/// Starts (or switches to) session `id`: a `task` call's child session, which names the
/// session it ran in, is that call's child (the engine's link table, as Claude Code's
/// subagent transcripts are linked), its start and turns included.
pub(super) fn start_session(engine: &mut Engine, id: Option<&str>, info: SessionStarted) {
    let spawner = id.and_then(|id| engine.take_spawner(id));
    engine.session_started_by(id, info, spawner);
}

/// A tool's `error` state: OpenCode says refusals and aborts only in its error text.
fn tool_error(message: String, meta: &Metadata, agent: &str) -> (ToolStatus, Option<ErrorInfo>) {
    const REFUSALS: [&str; 2] =
        ["The user rejected permission to use this", "The user has specified a rule which prevents you from using"];
    if REFUSALS.iter().any(|r| message.starts_with(r)) {
        let action = Some(format!("allow the tool in {agent}'s `permission` configuration, or answer its prompt"));
        return (ToolStatus::Denied, Some(ErrorInfo { category: ErrorCategory::PermissionDenied, message, action }));
    }
    if meta.interrupted == Some(true) || message == "Tool execution aborted" {
        return (ToolStatus::Cancelled, Some(ErrorInfo { category: ErrorCategory::Cancelled, message, action: None }));
    }
    (ToolStatus::Failed, Some(ErrorInfo { category: ErrorCategory::ToolError, message, action: None }))
}

/// The files an edit tool changed: `apply_patch` lists them, the others name one.
fn file_changes(tool: &str, input: Option<&Value>, meta: &Metadata) -> Vec<(String, FileChange)> {
    if let Some(files) = &meta.files {
        let mut out = Vec::new();
        for f in files {
            match (f.kind.as_str(), &f.move_path) {
                ("add", _) => out.push((f.file_path.clone(), FileChange::Add)),
                ("delete", _) => out.push((f.file_path.clone(), FileChange::Delete)),
                ("move", Some(to)) => {
                    out.push((f.file_path.clone(), FileChange::Delete));
                    out.push((to.clone(), FileChange::Add));
                }
                _ => out.push((f.file_path.clone(), FileChange::Update)),
            }
        }
        return out;
    }
    let change = if tool == "write" && meta.exists == Some(false) { FileChange::Add } else { FileChange::Update };
    target(input).map(|path| vec![(path, change)]).unwrap_or_default()
}

/// Why a run that stopped after a refused permission did not finish.
fn refused_run(agent: &str) -> ErrorInfo {
    ErrorInfo {
        category: ErrorCategory::PermissionDenied,
        message: "the run stopped because permission for a tool call was refused".into(),
        action: Some(format!("allow the tool in {agent}'s `permission` configuration and run it again")),
    }
}

/// OpenCode `run --format json`: every line carries the run's `sessionID`. Its forks print
/// the same shapes, so a line is only ever maybe OpenCode's.
pub(super) const DIALECT: super::Dialect = super::Dialect {
    name: "opencode",
    about: "OpenCode run --format json",
    family: "opencode",
    opens: &[],
    claim,
    parser: || Box::new(OpenCode::default()),
};

/// The `type`s OpenCode's run prints.
pub(super) const TYPES: [&str; 7] = ["step_start", "text", "reasoning", "tool_use", "step_finish", "error", "done"];

/// Maybe OpenCode's: one of its types, with a `sessionID`.
pub(super) fn claim(p: &super::Probe) -> super::Claim {
    let shaped = p.str("sessionID").is_some() && p.kind().is_some_and(|t| TYPES.contains(&t));
    super::dialect::claim(false, shaped)
}
