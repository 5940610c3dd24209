//! Agent Client Protocol: JSON-RPC 2.0 traffic of any ACP agent, either the agent's stdout
//! alone or a transcript of both directions.
//!
//! `initialize` and `session/new` responses name the agent and the session; a
//! `session/prompt` request opens a turn and its response (`stopReason`, or a JSON-RPC
//! error) ends it. With stdout alone the requests are missing, so updates open a turn and
//! the response carrying `stopReason` ends it. `session/update` notifications carry text,
//! reasoning, plans and tool calls (modules `tool` and `output`);
//! `session/request_permission` and its answer are approvals (module `exchange`). Messages
//! that carry no meaning (an `initialize` request, `session/cancel`, mode changes) are
//! accepted silently and referenced by the next event.

mod exchange;
mod output;
mod tool;
mod wire;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::{LineError, Parse};
use crate::engine::Engine;
use crate::event::{ErrorInfo, PlanEntry, PlanStatus, Role, SessionStarted};
use exchange::{Request, QUIET_NOTIFICATIONS};
use tool::Tools;
use wire::{Envelope, Implementation, Meta, SessionUpdate, ToolCall, UpdateParams, UpdateTag};

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
    /// A first, empty `tool_call` announcement held for one line (see `Tools::is_placeholder`).
    held: Option<(Option<String>, ToolCall)>,
}

/// Adapters whose `_meta` means something different from the others'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Dialect {
    /// Not known yet: `_meta` keys may still tell.
    #[default]
    Unknown,
    /// `@zed-industries/claude-code-acp`: `terminal_output` is a snapshot; refusals are text.
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
            tools: None,
        }
    }

    /// Makes `id` the current session, starting it on first sight.
    fn enter_session(&self, engine: &mut Engine, id: Option<&str>) {
        match id {
            Some(id) if engine.session_id() != Some(id) => {
                engine.session_started(Some(id), self.session_info(None, None))
            }
            None if engine.session_id().is_none() => engine.session_started(None, self.session_info(None, None)),
            _ => {}
        }
    }

    fn note_dialect(&mut self, call: &ToolCall) {
        if self.dialect == Dialect::Unknown {
            self.dialect = call.meta.as_ref().map_or(Dialect::Unknown, Dialect::of_meta);
        }
    }

    /// A failure outside any turn; it still belongs to a session.
    fn run_failed(&self, engine: &mut Engine, error: ErrorInfo) {
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
        let again = matches!((&self.held, &p.update), (Some((_, h)), SessionUpdate::ToolCall(c)) if h.tool_call_id == c.tool_call_id);
        if again {
            self.held = None; // the second announcement supersedes the first
        } else {
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
                        engine.text(Role::User, text.to_owned(), None);
                    } else {
                        engine.turn_started(Some(text.to_owned())); // a replayed or echoed prompt
                    }
                }
            }
            SessionUpdate::AgentMessageChunk { content } => {
                if let Some(text) = content.text().filter(|t| !t.is_empty()) {
                    engine.ensure_turn();
                    engine.text(Role::Assistant, text.to_owned(), None);
                }
            }
            SessionUpdate::AgentThoughtChunk { content } => {
                if let Some(text) = content.text().filter(|t| !t.is_empty()) {
                    engine.ensure_turn();
                    engine.reasoning(text.to_owned(), None);
                }
            }
            SessionUpdate::ToolCall(call) => {
                self.note_dialect(&call);
                if Tools::is_placeholder(&call, engine) {
                    self.held = Some((p.session_id, call));
                } else {
                    self.tools.update(engine, self.dialect, call, true);
                }
            }
            SessionUpdate::ToolCallUpdate(call) => {
                self.note_dialect(&call);
                self.tools.update(engine, self.dialect, call, false);
            }
            SessionUpdate::Plan { entries } => {
                engine.ensure_turn();
                engine.plan(entries.into_iter().map(plan_entry).collect());
            }
            SessionUpdate::AvailableCommandsUpdate {}
            | SessionUpdate::CurrentModeUpdate {}
            | SessionUpdate::ConfigOptionUpdate {}
            | SessionUpdate::SessionInfoUpdate {}
            | SessionUpdate::UsageUpdate {}
            | SessionUpdate::Unknown => {}
        }
        Ok(())
    }

    /// Starts a held announcement: the line after it did not announce the call again.
    fn release_held(&mut self, engine: &mut Engine) {
        if let Some((session, call)) = self.held.take() {
            self.enter_session(engine, session.as_deref());
            self.tools.update(engine, self.dialect, call, true);
        }
    }
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
