//! Agent Client Protocol: JSON-RPC 2.0 traffic of any ACP agent, either the agent's stdout
//! alone or a transcript of both directions.
//!
//! `initialize` and `session/new` responses name the agent and the session; a
//! `session/prompt` request opens a turn and its response (`stopReason`, or a JSON-RPC
//! error) ends it. With stdout alone the requests are missing, so updates open a turn and
//! the response carrying `stopReason` ends it. `session/update` notifications carry text,
//! reasoning, plans and tool calls (modules `tool` and `output`);
//! `session/request_permission` and its answer are approvals, `elicitation/create` and its
//! answer questions (module `exchange`). Codex's adapter reports a failed model request only
//! as agent text after `_meta.codex.threadStatus: systemError`, and its prompt still ends
//! `end_turn`: that turn failed. Messages that carry no meaning (an `initialize` request,
//! `session/cancel`, mode changes, `_auth/status_update` unless it says the agent is logged
//! out) are accepted silently and referenced by the next event.

mod exchange;
mod output;
mod tool;
mod usage;
mod wire;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::{LineError, Parse};
use crate::engine::Engine;
use crate::event::{ErrorCategory, ErrorInfo, PlanEntry, PlanStatus, Piece, Role, SessionStarted};
use exchange::{Request, QUIET_NOTIFICATIONS};
use tool::Tools;
use usage::CostTally;
use wire::{AuthStatusParams, Envelope, Implementation, Meta, SessionUpdate, ToolCall, UpdateParams, UpdateTag};

/// The ACP parser.
#[derive(Debug, Default)]
pub struct Acp {
    agent: Option<Implementation>,
    dialect: Dialect,
    /// Requests still waiting for their response, oldest first.
    pending: Vec<Request>,
    /// A client→agent request or a client's answer was seen: the input is a transcript of
    /// both directions, so the agent's requests are answered in it.
    transcript: bool,
    tools: Tools,
    /// First, empty `tool_call` announcements (see `Tools::is_placeholder`), each held until
    /// its input comes or a line that is not about tool calls: at most [`HELD_CALLS`].
    held: Vec<(Option<String>, ToolCall)>,
    /// The agent's thread reported a system error in the current turn; the agent text that
    /// follows (bounded) says what failed.
    system_error: Option<String>,
    /// The session's cumulative cost (`usage_update.cost`), reported per turn.
    cost: CostTally,
    /// The agent said it is logged out before any session started: said once one starts.
    logged_out: Option<String>,
    /// The `messageId` of the last chunk of each stream of chunks (its session, the call of
    /// the subagent it is from, and whether it is thought): a chunk with another begins a new
    /// message ([`Piece::First`]). The most recent [`MESSAGES`].
    messages: Vec<(Chunks, String)>,
}

/// A stream of message chunks: its session, the call of the subagent it is from, and
/// whether it is thought.
type Chunks = (Option<String>, Option<String>, bool);

/// The most streams of chunks whose last message is remembered.
const MESSAGES: usize = 64;

/// How much of the agent's text after a system error is kept as the error's message.
const SYSTEM_ERROR_TEXT: usize = 2000;

/// Adapters whose `_meta` means something different from the others'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Dialect {
    /// Not known yet: `_meta` keys may still tell.
    #[default]
    Unknown,
    /// `@zed-industries/claude-code-acp` and its successor `claude-agent-acp`:
    /// `terminal_output` is a snapshot; refusals are `nonExecutionKind` or text.
    Claude,
    /// `codex-acp`: `terminal_output` is a delta.
    Codex,
    /// Any other agent.
    Other,
}

impl Dialect {
    fn of_agent(name: &str) -> Dialect {
        let name = name.to_ascii_lowercase();
        if name.contains("claude") {
            Dialect::Claude
        } else if name.contains("codex") {
            Dialect::Codex
        } else {
            Dialect::Other
        }
    }

    fn of_meta(meta: &Meta) -> Dialect {
        if meta.claude_code.is_some() {
            Dialect::Claude
        } else if meta.terminal_info.is_some() || meta.terminal_output_delta.is_some() {
            Dialect::Codex
        } else {
            Dialect::Unknown
        }
    }
}

impl Parse for Acp {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let env: Envelope<'_> = match serde_json::from_str(line) {
            Ok(env) => env,
            Err(e) => {
                self.release_held(engine);
                return Err(LineError::from_json(e));
            }
        };
        if env.jsonrpc.is_none() {
            self.release_held(engine);
            return Err(LineError::unknown_type_of(line));
        }
        match (env.method.as_deref(), env.id) {
            (Some("session/update"), None) => self.session_update(env.params, engine),
            (Some(method), id) => {
                self.release_held(engine);
                match id {
                    Some(id) => self.request(method, id, env.params, engine),
                    None if method == "session/cancel" => {
                        self.tools.cancel_requested = true;
                        Ok(())
                    }
                    None if method == "_auth/status_update" => {
                        self.auth_status(env.params, engine);
                        Ok(())
                    }
                    None if QUIET_NOTIFICATIONS.contains(&method) => Ok(()),
                    None => Err(LineError::UnknownType(method.to_owned())),
                }
            }
            (None, _) if env.id.is_some() || env.result.is_some() || env.error.is_some() => {
                self.release_held(engine);
                self.response(env.id, env.result, env.error, engine);
                Ok(())
            }
            (None, _) => Err(LineError::UnknownType(String::new())),
        }
    }

    fn finish(&mut self, engine: &mut Engine) {
        self.release_held(engine);
    }
}

fn params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, LineError> {
    serde_json::from_str(params.map_or("null", RawValue::get)).map_err(LineError::from_json)
}

/// A JSON-RPC id as text: the string itself, or the number as written.
fn id_text(id: &RawValue) -> String {
    serde_json::from_str::<String>(id.get()).unwrap_or_else(|_| id.get().to_owned())
}

impl Acp {
    // ------------------------------------------------------------- sessions ----

    fn session_info(&self, cwd: Option<String>, model: Option<String>) -> SessionStarted {
        SessionStarted {
            provider: self.agent.as_ref().map_or_else(|| "acp".to_owned(), |a| a.name.clone()),
            provider_version: self.agent.as_ref().and_then(|a| a.version.clone()),
            model,
            cwd,
            git_branch: None,
            tools: None,
            ..Default::default()
        }
    }

    /// Where a chunk of `chunks` with `message_id` stands in its message: the first piece
    /// when the id is new to them. A chunk without one goes on, as chunks did before agents
    /// said which message they belong to.
    fn piece(&mut self, chunks: Chunks, message_id: Option<String>) -> Piece {
        let Some(id) = message_id else { return Piece::Next };
        match self.messages.iter().position(|(c, _)| *c == chunks) {
            Some(at) if self.messages[at].1 == id => return Piece::Next,
            Some(at) => {
                self.messages.remove(at);
            }
            None if self.messages.len() == MESSAGES => {
                self.messages.remove(0);
            }
            None => {}
        }
        self.messages.push((chunks, id));
        Piece::First
    }

    /// Makes `id` the current session, starting it on first sight.
    fn enter_session(&mut self, engine: &mut Engine, id: Option<&str>) {
        match id {
            Some(id) if engine.session_id() != Some(id) => {
                engine.session_started(Some(id), self.session_info(None, None))
            }
            None if engine.session_id().is_none() => engine.session_started(None, self.session_info(None, None)),
            _ => {}
        }
        self.say_logged_out(engine);
    }

    /// `_auth/status_update`: who the agent is logged in as. Only a known logged-out state
    /// (`kind: none`) matters to a run; it is a configuration warning of the session.
    fn auth_status(&mut self, raw: Option<&RawValue>, engine: &mut Engine) {
        let Ok(p) = params::<AuthStatusParams>(raw) else { return };
        if p.auth_status.kind != "none" {
            return;
        }
        let label = p.auth_status.label.filter(|l| !l.is_empty()).map_or_else(String::new, |l| format!(" ({l})"));
        self.logged_out = Some(format!("the agent reports that it is not logged in{label}"));
        if engine.session_id().is_some() {
            self.say_logged_out(engine);
        }
    }

    fn say_logged_out(&mut self, engine: &mut Engine) {
        if let Some(message) = self.logged_out.take() {
            engine.warning(message, Some(ErrorCategory::ConfigurationError.as_str().to_owned()));
        }
    }

    fn note_dialect(&mut self, call: &ToolCall) {
        if self.dialect == Dialect::Unknown {
            self.dialect = call.meta.as_ref().map_or(Dialect::Unknown, Dialect::of_meta);
        }
    }

    /// A failure outside any turn; it still belongs to a session.
    fn run_failed(&mut self, engine: &mut Engine, error: ErrorInfo) {
        self.enter_session(engine, None);
        engine.run_error(error);
    }

    // --------------------------------------------------------------- updates ----

    fn session_update(&mut self, raw: Option<&RawValue>, engine: &mut Engine) -> Result<(), LineError> {
        let p: UpdateParams = match params(raw) {
            Ok(p) => p,
            Err(e) => {
                self.release_held(engine);
                return Err(e);
            }
        };
        // The call's input, in a second announcement (claude-code-acp) or in an update
        // (claude-agent-acp's next line; Kilo's, after the other calls it makes in parallel
        // and their updates), completes the held empty one. Any other line starts them all.
        let mut held = None;
        let keep = match &p.update {
            SessionUpdate::ToolCall(c) => {
                self.held.retain(|(_, h)| h.tool_call_id != c.tool_call_id);
                true
            }
            SessionUpdate::ToolCallUpdate(c) => {
                if let Some(i) = self.held.iter().position(|(_, h)| h.tool_call_id == c.tool_call_id) {
                    let h = self.held.remove(i);
                    match Tools::has_input(c) {
                        true => held = Some(h.1),
                        // An update without the input: the call starts as announced first.
                        false => self.start_held(engine, h),
                    }
                }
                true
            }
            _ => false,
        };
        if !keep {
            self.release_held(engine);
        }
        if let SessionUpdate::Unknown = p.update {
            let kind = params::<UpdateTag>(raw).map(|t| t.update.kind).unwrap_or_default();
            return Err(LineError::UnknownType(format!("session/update {kind}")));
        }
        self.enter_session(engine, p.session_id.as_deref());
        match p.update {
            SessionUpdate::UserMessageChunk { content } => {
                if let Some(text) = content.text().filter(|t| !t.is_empty()) {
                    if engine.turn_is_open() {
                        engine.text(Role::User, text.to_owned(), Piece::Next, None);
                    } else {
                        engine.turn_started(Some(text.to_owned())); // a replayed or echoed prompt
                    }
                }
            }
            SessionUpdate::AgentMessageChunk { content, meta, message_id } => {
                if let Some(text) = content.text().filter(|t| !t.is_empty()) {
                    engine.ensure_turn();
                    if Meta::is_claude_warning(meta.as_ref()) {
                        let message = text.strip_prefix("**Warning:** ").unwrap_or(text);
                        engine.warning(message.to_owned(), None);
                        return Ok(());
                    }
                    if let Some(said) = self.system_error.as_mut() {
                        keep_said(said, text);
                    }
                    let parent = Meta::parent_tool_use_id(meta.as_ref());
                    let piece = self.piece((p.session_id.clone(), parent.clone(), false), message_id);
                    engine.text(Role::Assistant, text.to_owned(), piece, parent);
                }
            }
            SessionUpdate::AgentThoughtChunk { content, meta, message_id } => {
                if let Some(text) = content.text().filter(|t| !t.is_empty()) {
                    engine.ensure_turn();
                    let parent = Meta::parent_tool_use_id(meta.as_ref());
                    let piece = self.piece((p.session_id.clone(), parent.clone(), true), message_id);
                    engine.reasoning(text.to_owned(), piece, parent);
                }
            }
            SessionUpdate::ToolCall(call) => {
                self.note_dialect(&call);
                if Tools::is_placeholder(&call, engine) {
                    if self.held.len() == HELD_CALLS {
                        let oldest = self.held.remove(0);
                        self.start_held(engine, oldest);
                        self.enter_session(engine, p.session_id.as_deref());
                    }
                    self.held.push((p.session_id, call));
                } else {
                    self.tools.update(engine, self.dialect, call, true);
                }
            }
            SessionUpdate::ToolCallUpdate(call) => {
                self.note_dialect(&call);
                match held.take() {
                    Some(mut first) => {
                        first.absorb(call);
                        self.tools.update(engine, self.dialect, first, true);
                    }
                    None => self.tools.update(engine, self.dialect, call, false),
                }
            }
            SessionUpdate::Plan { entries } => {
                engine.ensure_turn();
                engine.plan(entries.into_iter().map(plan_entry).collect());
            }
            SessionUpdate::SessionInfoUpdate { meta } => {
                self.codex_thread(meta.and_then(|m| m.codex), engine);
            }
            SessionUpdate::UsageUpdate { cost } => self.cost.saw(cost),
            SessionUpdate::AvailableCommandsUpdate {}
            | SessionUpdate::CurrentModeUpdate {}
            | SessionUpdate::ConfigOptionUpdate {}
            | SessionUpdate::Unknown => {}
        }
        Ok(())
    }

    /// Codex's thread status and errors. `systemError` fails the turn whatever its stop
    /// reason (a later `active` is a retry that recovered); an error that will be retried
    /// is a warning.
    fn codex_thread(&mut self, codex: Option<wire::CodexMeta>, engine: &mut Engine) {
        let Some(codex) = codex else { return };
        match codex.thread_status.map(|s| s.kind).as_deref() {
            Some("systemError") => {
                engine.ensure_turn();
                self.system_error.get_or_insert_with(String::new);
            }
            Some("active") => self.system_error = None,
            _ => {}
        }
        if let Some(e) = codex.error.filter(|e| !e.message.is_empty()) {
            if e.will_retry {
                engine.warning(format!("retrying: {}", e.message), Some(ErrorCategory::ProviderError.as_str().to_owned()));
            } else {
                engine.ensure_turn();
                let said = self.system_error.get_or_insert_with(String::new);
                if said.is_empty() {
                    keep_said(said, &e.message);
                }
            }
        }
    }

    /// Starts the held announcements: the line after them did not announce them again.
    fn release_held(&mut self, engine: &mut Engine) {
        for held in std::mem::take(&mut self.held) {
            self.start_held(engine, held);
        }
    }

    /// Starts one held announcement, in its session.
    fn start_held(&mut self, engine: &mut Engine, (session, call): (Option<String>, ToolCall)) {
        self.enter_session(engine, session.as_deref());
        self.tools.update(engine, self.dialect, call, true);
    }
}

/// The most empty announcements held at once (calls announced in parallel).
const HELD_CALLS: usize = 16;

/// Appends what the agent said of a system error, up to [`SYSTEM_ERROR_TEXT`] bytes.
fn keep_said(said: &mut String, text: &str) {
    let room = SYSTEM_ERROR_TEXT.saturating_sub(said.len());
    said.push_str(&text[..crate::bound::floor_boundary(text, room)]);
}

fn plan_entry(e: wire::PlanEntry) -> PlanEntry {
    let status = match e.status.as_str() {
        "in_progress" => PlanStatus::InProgress,
        "completed" => PlanStatus::Completed,
        _ => PlanStatus::Pending,
    };
    PlanEntry { content: e.content, status }
}


/// Any ACP agent's JSON-RPC 2.0 traffic: a line with `jsonrpc` is nobody else's.
pub(super) const DIALECT: super::Dialect = super::Dialect {
    name: "acp",
    about: "JSON-RPC traffic of any ACP agent (its stdout, or both directions)",
    family: "acp",
    opens: &[],
    claim: |p| super::dialect::claim(p.has("jsonrpc"), false),
    parser: || Box::new(Acp::default()),
};

#[cfg(test)]
mod tests;
